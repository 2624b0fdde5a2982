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
//
// This file and quant-dot-k-avx512.cpp are two algorithms, not one at two widths, so they are
// kept apart: here 32-code vectors through VPMADDUBSW and one VPMADDWD by the scales; there
// 64-code vectors through VPDPBUSD (VNNI), packed to 16 bits and scaled by VPMADDWD / VPDPWSSD,
// with the sub-block scales gathered by VPERMW.
#include "quant-dot.h"
#include "thread-scratch.h"

#include "ggml/quants.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
// GCC 12's intrinsic headers self-initialise undefined vectors, which -Wuninitialized reports
// wherever they are inlined; silence it for them only.
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

// ---- mat-mat over 8-row groups (nc >= k_gemm_min_cols) ----
//
// The 8 rows of a group are unpacked once per job into an interleaved copy (per-thread
// scratch), per super-block:
//   codes  64 vectors: vector g holds, in 32-bit lane r, the codes of elements 4 g .. 4 g + 3
//          of row r, so one VPMADDUBSW against a broadcast dword of activation codes works on
//          8 rows x 4 products at once (two quads summed in 16 bits: |sum| <= 4 * 63 * 128);
//   scale  16 vectors: lane r = the scale of sub-block j (16 elements) of row r, in both 16-bit
//          halves, so VPMADDWD applies it while widening to 32 bits (exact integer sums);
//   bias   8 vectors of 16-bit pairs: the coefficients of the bsums of sub-blocks 2 p, 2 p + 1
//          (kq_block::bs), and two float vectors: d_r and the bias factor (-dmin_r or d_r).
// A tile of 8 rows x up to 4 columns keeps one 32-bit accumulator per column over a
// super-block, then converts once. The old 1 x 4 tiles stay in use below k_gemm_min_cols.
constexpr int64_t k_gemm_min_cols = 9;
constexpr int k_gemm_rows = 8;
constexpr int k_gemm_cols = 4;
// vectors per super-block: 64 codes, 16 scales, 8 bias pairs, d, bias factor
constexpr int k_gemm_sc = 64, k_gemm_bias = 80, k_gemm_d = 88, k_gemm_bias_f = 89;
constexpr size_t k_gemm_block_bytes = 90 * 32;

// In place: v[i] lane j <- v[j] lane i (an 8 x 8 transpose of 32-bit lanes).
inline void transpose8(__m256i * v) {
    __m256i t[8], u[8];
    for (int i = 0; i < 8; i += 2) {
        t[i] = _mm256_unpacklo_epi32(v[i], v[i + 1]);
        t[i + 1] = _mm256_unpackhi_epi32(v[i], v[i + 1]);
    }
    // per 4-row group G: u[4 G + j] holds, in 128-bit half H, column 4 H + j of rows 4 G .. 4 G + 3
    for (int g = 0; g < 8; g += 4) {
        u[g] = _mm256_unpacklo_epi64(t[g], t[g + 2]);
        u[g + 1] = _mm256_unpackhi_epi64(t[g], t[g + 2]);
        u[g + 2] = _mm256_unpacklo_epi64(t[g + 1], t[g + 3]);
        u[g + 3] = _mm256_unpackhi_epi64(t[g + 1], t[g + 3]);
    }
    for (int j = 0; j < 4; ++j) {
        v[j] = _mm256_permute2x128_si256(u[j], u[4 + j], 0x20);
        v[4 + j] = _mm256_permute2x128_si256(u[j], u[4 + j], 0x31);
    }
}

// Super-block i of the 8 rows at a (lda apart) into dst (k_gemm_block_bytes).
template <class U>
void gemm_pack_block(const char * a, size_t lda, int64_t i, char * dst) {
    using block = typename U::block;
    alignas(32) uint8_t codes[8][256];
    alignas(32) int16_t sc16[8][8][16];
    alignas(32) float d[8], bias_f[8];
    __m256i bias[8];
    for (int r = 0; r < k_gemm_rows; ++r) {
        const block & x = reinterpret_cast<const block *>(a + size_t(r) * lda)[i];
        prefetch_bytes(reinterpret_cast<const char *>(&x) + 2 * sizeof(block), sizeof(block));
        kq_block u;
        U::unpack(x, u);
        for (int q = 0; q < 8; ++q) {
            _mm256_store_si256(reinterpret_cast<__m256i *>(codes[r] + 32 * q), u.q[q]);
            _mm256_store_si256(reinterpret_cast<__m256i *>(sc16[r][q]), u.sc[q]);
        }
        bias[r] = u.bs;  // 8 dwords of coefficient pairs
        d[r] = u.d;
        bias_f[r] = U::has_min ? -u.dmin : u.d;
    }
    __m256i * out = reinterpret_cast<__m256i *>(dst);
    for (int q = 0; q < 8; ++q) {
        __m256i v[8];
        for (int r = 0; r < 8; ++r) v[r] = _mm256_load_si256(reinterpret_cast<const __m256i *>(codes[r] + 32 * q));
        transpose8(v);
        for (int e = 0; e < 8; ++e) _mm256_store_si256(out + 8 * q + e, v[e]);
    }
    // u.sc[q] lane l scales elements 32 q + 2 l, + 1: sub-block j = 2 q + l / 8
    for (int j = 0; j < 16; ++j) {
        alignas(32) uint32_t lanes[8];
        for (int r = 0; r < 8; ++r) lanes[r] = uint16_t(sc16[r][j / 2][8 * (j % 2)]) * 0x10001u;
        _mm256_store_si256(out + k_gemm_sc + j, _mm256_load_si256(reinterpret_cast<const __m256i *>(lanes)));
    }
    transpose8(bias);
    for (int p = 0; p < 8; ++p) _mm256_store_si256(out + k_gemm_bias + p, bias[p]);
    _mm256_store_si256(out + k_gemm_d, _mm256_castps_si256(_mm256_load_ps(d)));
    _mm256_store_si256(out + k_gemm_bias_f, _mm256_castps_si256(_mm256_load_ps(bias_f)));
}

inline __m256i bcast_dword(const void * p) {
    int32_t v;
    std::memcpy(&v, p, sizeof v);
    return _mm256_set1_epi32(v);
}

// 8 packed rows (nb super-blocks at w) against C columns of Q8_K blocks: y[c * ldy + 0..7].
template <int C>
void gemm_tile(int64_t nb, const char * w, const char * b, size_t ldb, float * y, int64_t ldy) {
    __m256 acc[C];
    for (int c = 0; c < C; ++c) acc[c] = _mm256_setzero_ps();
    for (int64_t i = 0; i < nb; ++i) {
        const __m256i * wb = reinterpret_cast<const __m256i *>(w + size_t(i) * k_gemm_block_bytes);
        const block_q8_K * yb[C];
        __m256i s[C], bi[C];
        for (int c = 0; c < C; ++c) {
            yb[c] = reinterpret_cast<const block_q8_K *>(b + size_t(c) * ldb) + i;
            s[c] = _mm256_setzero_si256();
            bi[c] = _mm256_setzero_si256();
        }
        for (int j = 0; j < 16; ++j) {
            const __m256i w0 = _mm256_load_si256(wb + 4 * j), w1 = _mm256_load_si256(wb + 4 * j + 1);
            const __m256i w2 = _mm256_load_si256(wb + 4 * j + 2), w3 = _mm256_load_si256(wb + 4 * j + 3);
            const __m256i sj = _mm256_load_si256(wb + k_gemm_sc + j);
            for (int c = 0; c < C; ++c) {
                const int8_t * q = yb[c]->qs + 16 * j;
                const __m256i p01 = _mm256_add_epi16(_mm256_maddubs_epi16(w0, bcast_dword(q)),
                                                     _mm256_maddubs_epi16(w1, bcast_dword(q + 4)));
                const __m256i p23 = _mm256_add_epi16(_mm256_maddubs_epi16(w2, bcast_dword(q + 8)),
                                                     _mm256_maddubs_epi16(w3, bcast_dword(q + 12)));
                s[c] = _mm256_add_epi32(s[c], _mm256_madd_epi16(p01, sj));
                s[c] = _mm256_add_epi32(s[c], _mm256_madd_epi16(p23, sj));
            }
        }
        for (int p = 0; p < 8; ++p) {
            const __m256i cp = _mm256_load_si256(wb + k_gemm_bias + p);
            for (int c = 0; c < C; ++c) bi[c] = _mm256_add_epi32(bi[c], _mm256_madd_epi16(cp, bcast_dword(yb[c]->bsums + 2 * p)));
        }
        const __m256 dv = _mm256_castsi256_ps(_mm256_load_si256(wb + k_gemm_d));
        const __m256 bf = _mm256_castsi256_ps(_mm256_load_si256(wb + k_gemm_bias_f));
        for (int c = 0; c < C; ++c) {
            const __m256 t = _mm256_fmadd_ps(_mm256_cvtepi32_ps(bi[c]), bf, _mm256_mul_ps(_mm256_cvtepi32_ps(s[c]), dv));
            acc[c] = _mm256_fmadd_ps(t, _mm256_set1_ps(yb[c]->d), acc[c]);
        }
    }
    for (int c = 0; c < C; ++c) _mm256_storeu_ps(y + c * ldy, acc[c]);
}

// Rows in groups of 8 (nr8 of them) against nc columns; false when no scratch could be had.
template <class U>
bool kq_gemm(int64_t nb, const char * a, size_t lda, int64_t nr8, const char * b, size_t ldb, int64_t nc, float * y,
             int64_t ldy) {
    char * w = static_cast<char *>(ggml_cpu_thread_scratch(size_t(nb) * k_gemm_block_bytes));
    if (!w) return false;
    for (int64_t g = 0; g < nr8; g += k_gemm_rows) {
        const char * ag = a + size_t(g) * lda;
        for (int64_t i = 0; i < nb; ++i) gemm_pack_block<U>(ag, lda, i, w + size_t(i) * k_gemm_block_bytes);
        int64_t c = 0;
        for (; c + k_gemm_cols <= nc; c += k_gemm_cols) gemm_tile<k_gemm_cols>(nb, w, b + c * ldb, ldb, y + c * ldy + g, ldy);
        const char * bc = b + c * ldb;
        float * yc = y + c * ldy + g;
        switch (nc - c) {
            case 0: break;
            case 1: gemm_tile<1>(nb, w, bc, ldb, yc, ldy); break;
            case 2: gemm_tile<2>(nb, w, bc, ldb, yc, ldy); break;
            default: gemm_tile<3>(nb, w, bc, ldb, yc, ldy); break;
        }
    }
    return true;
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
    if (nc >= k_gemm_min_cols) {
        const int64_t nr8 = nr / k_gemm_rows * k_gemm_rows;
        if (nr8 > 0 && kq_gemm<U>(nb, ac, lda, nr8, bc, ldb, nc, y, ldy)) {
            if (nr8 < nr) kq_rows_cols<U>(nb, ac, lda, nr8, nr, bc, ldb, nc, y, ldy);
            return;
        }
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
