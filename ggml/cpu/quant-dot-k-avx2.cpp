// AVX2 dot kernels of the K-quants against Q8_K activations (see quant-dot.h).
//
// A weight super-block is unpacked into 8 vectors of 32 unsigned codes in element order
// (Q2_K 0..3, Q3_K 0..7, Q4_K 0..15, Q5_K 0..31, Q6_K 0..63) and 8 vectors of 16-bit scales;
// then, per activation column:
//   s = sum_i madd(maddubs(codes_i, y.qs[32 i ..]), scale_i)   (pair sums stay below 2^15)
//   b = madd(y.bsums, coef)   the min term (Q2_K, Q4_K, Q5_K: scaled by dmin) or the code
//                             offset -4 (Q3_K) / -32 (Q6_K) times the scale (folded into s)
// and the float accumulator takes s * d * y.d (and b * -dmin * y.d).
// Mat-vec (nc == 1) streams one row at a time with a software prefetch 8 KiB ahead; with more
// columns a row's unpacked block is reused over 4 columns (1 x 4 tiles), rows in L2-sized chunks.
// Sixteen vector registers do not hold a whole unpacked block: the compiler interleaves
// unpacking and use in mat-vec, and keeps the block in L1 for the tiles.
#include "quant-dot.h"

#include "ggml/quants.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
// GCC 12's intrinsic headers self-initialise undefined vectors, which -Wuninitialized reports
// wherever they are inlined (GCC bug 105593); silence it for them only.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop

namespace {

constexpr int64_t k_prefetch = 8192;           // bytes ahead in the weight stream
constexpr int64_t k_chunk_bytes = 192 * 1024;  // weight bytes per row chunk (mat-mat)
constexpr int k_cols = 4;                      // columns per tile (mat-mat)

// One weight super-block, unpacked.
struct kq_block {
    __m256i q[8];   // unsigned codes of elements 32 i .. 32 i + 31
    __m256i sc[8];  // 16-bit lane l: scale of elements 32 i + 2 l, 32 i + 2 l + 1
    __m256i bs;     // per Q8_K bsum (16 elements): its 16-bit coefficient
    float d;        // factor of the scaled sum
    float dmin;     // factor of the bsum term (formats with mins)
};

inline __m256i load256(const void * p) { return _mm256_loadu_si256(static_cast<const __m256i *>(p)); }

// Bytes (2 a, 2 a + 1) in the lower 128 bits and (2 b, 2 b + 1) in the upper: a pshufb control
// that spreads 16-bit element a of the lower and b of the upper half over all 8 lanes of each.
inline __m256i spread16(int a, int b) {
    const short ca = short((2 * a) | ((2 * a + 1) << 8)), cb = short((2 * b) | ((2 * b + 1) << 8));
    return _mm256_setr_epi16(ca, ca, ca, ca, ca, ca, ca, ca, cb, cb, cb, cb, cb, cb, cb, cb);
}

// Scale vectors of 16 sub-blocks of 16 from 16 signed 16-bit scales.
inline void scales_sub16(__m256i s16, kq_block & u) {
    const __m256i lo = _mm256_permute2x128_si256(s16, s16, 0x00);  // scales 0..7 in both halves
    const __m256i hi = _mm256_permute2x128_si256(s16, s16, 0x11);  // scales 8..15
    for (int i = 0; i < 4; ++i) {
        u.sc[i] = _mm256_shuffle_epi8(lo, spread16(2 * i, 2 * i + 1));
        u.sc[i + 4] = _mm256_shuffle_epi8(hi, spread16(2 * i, 2 * i + 1));
    }
}

// Scale vectors of 8 sub-blocks of 32 from 8 unsigned 8-bit scales.
inline void scales_sub32(__m128i s8, kq_block & u) {
    const __m128i s16 = _mm_cvtepu8_epi16(s8);
    const __m256i both = _mm256_broadcastsi128_si256(s16);
    for (int i = 0; i < 8; ++i) u.sc[i] = _mm256_shuffle_epi8(both, spread16(i, i));
}

// Codes of Q2_K (elements 128 n + 32 j + l in bits 2 j of qs[32 n + l]).
inline void codes_q2(const uint8_t * qs, kq_block & u) {
    const __m256i m2 = _mm256_set1_epi8(3);
    for (int n = 0; n < 2; ++n) {
        const __m256i b = load256(qs + 32 * n);
        u.q[4 * n + 0] = _mm256_and_si256(b, m2);
        u.q[4 * n + 1] = _mm256_and_si256(_mm256_srli_epi16(b, 2), m2);
        u.q[4 * n + 2] = _mm256_and_si256(_mm256_srli_epi16(b, 4), m2);
        u.q[4 * n + 3] = _mm256_and_si256(_mm256_srli_epi16(b, 6), m2);
    }
}

// Bits from .. from + w - 1 of each byte of h moved to bits to .. to + w - 1 (the others cleared;
// mask holds the target bits). Shifting 16-bit lanes is safe: the kept bits never cross a byte.
inline __m256i move_bits(__m256i h, int from, int to, int mask) {
    const __m256i m = _mm256_set1_epi8(char(mask));
    if (from == to) return _mm256_and_si256(h, m);
    if (from < to) return _mm256_and_si256(_mm256_sll_epi16(h, _mm_cvtsi32_si128(to - from)), m);
    return _mm256_and_si256(_mm256_srl_epi16(h, _mm_cvtsi32_si128(from - to)), m);
}

// Q4_K / Q5_K scales: 12 packed bytes -> bytes 0..7 the 6-bit scales, 8..15 the 6-bit mins.
// The 16-byte load reads 4 bytes of the block past the scales (unused).
inline __m128i unpack_scales_k4(const uint8_t * p) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i *>(p));
    const __m128i a = _mm_shuffle_epi32(v, _MM_SHUFFLE(2, 1, 2, 0));  // w0 w2 w1 w2
    const __m128i b = _mm_shuffle_epi32(v, _MM_SHUFFLE(1, 1, 0, 0));  // w0 w0 w1 w1
    const __m128i lo = _mm_and_si128(_mm_srlv_epi32(a, _mm_setr_epi32(0, 0, 0, 4)),
                                     _mm_setr_epi32(0x3f3f3f3f, 0x0f0f0f0f, 0x3f3f3f3f, 0x0f0f0f0f));
    // bits 6..7 of w0 / w1 become bits 4..5 of scales / mins 4..7
    const __m128i hi = _mm_and_si128(_mm_srli_epi32(b, 2), _mm_setr_epi32(0, 0x30303030, 0, 0x30303030));
    return _mm_or_si128(lo, hi);
}

inline void scales_k4(const uint8_t * packed, kq_block & u) {
    const __m128i sm = unpack_scales_k4(packed);
    scales_sub32(sm, u);
    const __m128i dup = _mm_setr_epi8(8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13, 14, 14, 15, 15);
    u.bs = _mm256_cvtepu8_epi16(_mm_shuffle_epi8(sm, dup));
}

// Codes of Q4_K (elements 64 p + l: low nibble of qs[32 p + l], 64 p + 32 + l: high nibble).
inline void codes_q4(const uint8_t * qs, kq_block & u) {
    const __m256i m4 = _mm256_set1_epi8(0x0f);
    for (int p = 0; p < 4; ++p) {
        const __m256i b = load256(qs + 32 * p);
        u.q[2 * p] = _mm256_and_si256(b, m4);
        u.q[2 * p + 1] = _mm256_and_si256(_mm256_srli_epi16(b, 4), m4);
    }
}

struct unpack_q2_K {
    using block = block_q2_K;
    static constexpr bool has_min = true;
    static void unpack(const block_q2_K & x, kq_block & u) {
        u.d = _cvtsh_ss(x.d);
        u.dmin = _cvtsh_ss(x.dmin);
        const __m128i s = _mm_loadu_si128(reinterpret_cast<const __m128i *>(x.scales));
        const __m128i m4 = _mm_set1_epi8(0x0f);
        scales_sub16(_mm256_cvtepu8_epi16(_mm_and_si128(s, m4)), u);
        u.bs = _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(s, 4), m4));
        codes_q2(x.qs, u);
    }
};

struct unpack_q3_K {
    using block = block_q3_K;
    static constexpr bool has_min = false;
    // 16 6-bit scales: low 4 bits in the nibbles of bytes 0..7, high 2 bits in bytes 8..11.
    // The 12 bytes are followed by d and the end of the block: load the 16 bytes that end
    // there (from 2 bytes before the scales) and shift (a copy through memory would stall
    // store forwarding).
    static __m128i scales(const uint8_t * p) {
        const __m128i v = _mm_srli_si128(_mm_loadu_si128(reinterpret_cast<const __m128i *>(p - 2)), 2);
        const __m128i a = _mm_shuffle_epi32(v, _MM_SHUFFLE(1, 0, 1, 0));
        const __m128i lo = _mm_and_si128(_mm_srlv_epi32(a, _mm_setr_epi32(0, 0, 4, 4)), _mm_set1_epi8(0x0f));
        const __m128i w2 = _mm_shuffle_epi32(v, _MM_SHUFFLE(2, 2, 2, 2));
        // bits 2 j .. 2 j + 1 of each byte of w2 to bits 4..5 (shift counts of 32 give 0)
        const __m128i hi = _mm_or_si128(_mm_sllv_epi32(w2, _mm_setr_epi32(4, 2, 0, 32)),
                                        _mm_srlv_epi32(w2, _mm_setr_epi32(32, 32, 32, 2)));
        return _mm_sub_epi8(_mm_or_si128(lo, _mm_and_si128(hi, _mm_set1_epi8(0x30))), _mm_set1_epi8(32));
    }
    static void unpack(const block_q3_K & x, kq_block & u) {
        u.d = _cvtsh_ss(x.d);
        u.dmin = 0.0f;
        const __m256i s16 = _mm256_cvtepi8_epi16(scales(x.scales));
        scales_sub16(s16, u);
        u.bs = _mm256_sub_epi16(_mm256_setzero_si256(), _mm256_slli_epi16(s16, 2));  // -4 * scale
        codes_q2(x.qs, u);
        // high bit of element 32 j + l: bit j of hmask[l]; set adds 4
        const __m256i h = load256(x.hmask);
        for (int j = 0; j < 8; ++j) u.q[j] = _mm256_or_si256(u.q[j], move_bits(h, j, 2, 0x04));
    }
};

struct unpack_q4_K {
    using block = block_q4_K;
    static constexpr bool has_min = true;
    static void unpack(const block_q4_K & x, kq_block & u) {
        u.d = _cvtsh_ss(x.d);
        u.dmin = _cvtsh_ss(x.dmin);
        scales_k4(x.scales, u);
        codes_q4(x.qs, u);
    }
};

struct unpack_q5_K {
    using block = block_q5_K;
    static constexpr bool has_min = true;
    static void unpack(const block_q5_K & x, kq_block & u) {
        u.d = _cvtsh_ss(x.d);
        u.dmin = _cvtsh_ss(x.dmin);
        scales_k4(x.scales, u);
        codes_q4(x.qs, u);
        // fifth bit of element 32 j + l: bit j of qh[l]; set adds 16
        const __m256i h = load256(x.qh);
        for (int j = 0; j < 8; ++j) u.q[j] = _mm256_or_si256(u.q[j], move_bits(h, j, 4, 0x10));
    }
};

struct unpack_q6_K {
    using block = block_q6_K;
    static constexpr bool has_min = false;
    static void unpack(const block_q6_K & x, kq_block & u) {
        u.d = _cvtsh_ss(x.d);
        u.dmin = 0.0f;
        const __m256i s16 = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i *>(x.scales)));
        scales_sub16(s16, u);
        u.bs = _mm256_sub_epi16(_mm256_setzero_si256(), _mm256_slli_epi16(s16, 5));  // -32 * scale
        const __m256i m4 = _mm256_set1_epi8(0x0f);
        for (int n = 0; n < 2; ++n) {
            // element 128 n + 32 g + l: nibble of ql[64 n + 32 (g % 2) + l] (low for g < 2),
            // high 2 bits from bits 2 g of qh[32 n + l]
            const __m256i l0 = load256(x.ql + 64 * n), l1 = load256(x.ql + 64 * n + 32);
            const __m256i h = load256(x.qh + 32 * n);
            const __m256i nib[4] = {_mm256_and_si256(l0, m4), _mm256_and_si256(l1, m4),
                                    _mm256_and_si256(_mm256_srli_epi16(l0, 4), m4),
                                    _mm256_and_si256(_mm256_srli_epi16(l1, 4), m4)};
            for (int g = 0; g < 4; ++g) {
                u.q[4 * n + g] = _mm256_or_si256(nib[g], move_bits(h, 2 * g, 4, 0x30));
            }
        }
    }
};

// acc += the dot product of an unpacked block with one Q8_K block.
template <bool has_min>
inline void kq_accumulate(const kq_block & u, const block_q8_K & y, __m256 & acc) {
    __m256i s = _mm256_setzero_si256();
    for (int i = 0; i < 8; ++i) {
        const __m256i p = _mm256_maddubs_epi16(u.q[i], load256(y.qs + 32 * i));
        s = _mm256_add_epi32(s, _mm256_madd_epi16(p, u.sc[i]));
    }
    const __m256i b = _mm256_madd_epi16(load256(y.bsums), u.bs);
    if constexpr (has_min) {
        acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(s), _mm256_set1_ps(u.d * y.d), acc);
        acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(b), _mm256_set1_ps(-u.dmin * y.d), acc);
    } else {
        acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(_mm256_add_epi32(s, b)), _mm256_set1_ps(u.d * y.d), acc);
    }
}

inline float hsum(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

inline void prefetch_bytes(const char * p, size_t n) {
    for (size_t o = 0; o < n; o += 64) _mm_prefetch(p + o, _MM_HINT_T0);
}

// One weight row (nb blocks at a) against C columns (b + c * ldb): y[c * ldy].
template <class U, int C>
void kq_tile(int64_t nb, const char * a, const char * b, size_t ldb, float * y, int64_t ldy) {
    using block = typename U::block;
    __m256 acc[C];
    for (int c = 0; c < C; ++c) acc[c] = _mm256_setzero_ps();
    for (int64_t i = 0; i < nb; ++i) {
        const char * xb = a + i * sizeof(block);
        prefetch_bytes(xb + k_prefetch, sizeof(block));
        kq_block u;
        U::unpack(*reinterpret_cast<const block *>(xb), u);
        for (int c = 0; c < C; ++c) {
            const block_q8_K & yb = reinterpret_cast<const block_q8_K *>(b + c * ldb)[i];
            kq_accumulate<U::has_min>(u, yb, acc[c]);
        }
    }
    for (int c = 0; c < C; ++c) y[c * ldy] = hsum(acc[c]);
}

// Rows r0 .. r1 against all columns, in tiles of k_cols columns and one of the rest.
template <class U>
void kq_rows_cols(int64_t nb, const char * a, size_t lda, int64_t r0, int64_t r1, const char * b, size_t ldb,
                  int64_t nc, float * y, int64_t ldy) {
    int64_t c = 0;
    for (; c + k_cols <= nc; c += k_cols) {
        for (int64_t r = r0; r < r1; ++r) kq_tile<U, k_cols>(nb, a + r * lda, b + c * ldb, ldb, y + c * ldy + r, ldy);
    }
    const int64_t rest = nc - c;
    for (int64_t r = r0; r < r1 && rest > 0; ++r) {
        const char * ar = a + r * lda;
        const char * bc = b + c * ldb;
        float * yr = y + c * ldy + r;
        switch (rest) {
            case 1: kq_tile<U, 1>(nb, ar, bc, ldb, yr, ldy); break;
            case 2: kq_tile<U, 2>(nb, ar, bc, ldb, yr, ldy); break;
            default: kq_tile<U, 3>(nb, ar, bc, ldb, yr, ldy); break;
        }
    }
}

template <class U>
void kq_dot(int64_t k, const void * a, size_t lda, int64_t nr, const void * b, size_t ldb, int64_t nc, float * y,
            int64_t ldy) {
    const int64_t nb = k / QK_K;
    const char * ac = static_cast<const char *>(a);
    const char * bc = static_cast<const char *>(b);
    if (nc == 1) {
        for (int64_t r = 0; r < nr; ++r) kq_tile<U, 1>(nb, ac + r * lda, bc, ldb, y + r, ldy);
        return;
    }
    const int64_t row_bytes = nb * int64_t(sizeof(typename U::block));
    const int64_t chunk = row_bytes > 0 && row_bytes < k_chunk_bytes ? k_chunk_bytes / row_bytes : 1;
    for (int64_t r0 = 0; r0 < nr; r0 += chunk) {
        const int64_t r1 = r0 + chunk < nr ? r0 + chunk : nr;
        kq_rows_cols<U>(nb, ac, lda, r0, r1, bc, ldb, nc, y, ldy);
    }
}

}  // namespace

void ggml_dot_q2_K_q8_K_avx2(int64_t k, const void * a, size_t lda, int64_t nr, const void * b, size_t ldb,
                             int64_t nc, float * y, int64_t ldy) {
    kq_dot<unpack_q2_K>(k, a, lda, nr, b, ldb, nc, y, ldy);
}

void ggml_dot_q3_K_q8_K_avx2(int64_t k, const void * a, size_t lda, int64_t nr, const void * b, size_t ldb,
                             int64_t nc, float * y, int64_t ldy) {
    kq_dot<unpack_q3_K>(k, a, lda, nr, b, ldb, nc, y, ldy);
}

void ggml_dot_q4_K_q8_K_avx2(int64_t k, const void * a, size_t lda, int64_t nr, const void * b, size_t ldb,
                             int64_t nc, float * y, int64_t ldy) {
    kq_dot<unpack_q4_K>(k, a, lda, nr, b, ldb, nc, y, ldy);
}

void ggml_dot_q5_K_q8_K_avx2(int64_t k, const void * a, size_t lda, int64_t nr, const void * b, size_t ldb,
                             int64_t nc, float * y, int64_t ldy) {
    kq_dot<unpack_q5_K>(k, a, lda, nr, b, ldb, nc, y, ldy);
}

void ggml_dot_q6_K_q8_K_avx2(int64_t k, const void * a, size_t lda, int64_t nr, const void * b, size_t ldb,
                             int64_t nc, float * y, int64_t ldy) {
    kq_dot<unpack_q6_K>(k, a, lda, nr, b, ldb, nc, y, ldy);
}
