// AVX-512 VNNI dot kernels of the K-quants against Q8_K activations (see quant-dot.h).
//
// A weight super-block is unpacked once into 4 vectors of 64 unsigned codes in element order
// (Q2_K 0..3, Q3_K 0..7, Q4_K 0..15, Q5_K 0..31, Q6_K 0..63) plus two vectors of 16-bit
// sub-block scales (gathered with vpermw); then, per activation column:
//   p_i = dpbusd(0, codes_i, y.qs[64 i ..])   16 lanes, each the exact sum of 4 products (|p| < 2^15)
//   s   = madd(packs(p_0, p_1), scales_01) + dpwssd(packs(p_2, p_3), scales_23)
//                                              each 16-bit p times the scale of its sub-block
//   b   = madd(y.bsums, coef)                  the min term (Q2_K, Q4_K, Q5_K: scaled by dmin) or
//                                              the code offset -4 (Q3_K) / -32 (Q6_K) times the scale
// and the float accumulator takes s * d * y.d (and b * -dmin * y.d, or b folded into s).
// Mat-vec (nc == 1) streams one row at a time with a software prefetch (one sequential stream
// per thread; 2 of the 3 prefetches per block are for lines the hardware prefetcher would
// also fetch, but 8 KiB ahead they beat both no prefetch and 1 KiB by ~10-20% here); with more
// columns a row's unpacked block is reused over 4 columns in registers (1 x 4 tiles: 8 columns
// measured no faster), rows in L2-sized chunks so that a chunk stays cached while every
// column group passes over it.
//
// Kept apart from quant-dot-k-avx2.cpp: the VNNI products (VPDPBUSD, VPDPWSSD) and the VPERMW
// scale gathers have no counterpart there (VPMADDUBSW on 32-code vectors).
#include "quant-dot.h"
#include "simd-traits.h"
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
constexpr int k_cols = 4;                      // columns per register tile (mat-mat)

// One weight super-block, unpacked.
struct kq_block {
    __m512i q[4];   // unsigned codes of elements 64 i .. 64 i + 63
    __m512i sc[2];  // 16-bit scales for packs(p_0, p_1) and packs(p_2, p_3) (see idx_tables)
    __m256i bs;     // per Q8_K bsum (16 elements): its 16-bit coefficient
    __m128 f;       // lane 0: factor d of the scaled sum; lane 1: factor dmin of the bsum term
};

// The F16 factors d and dmin (adjacent, d first) of a block as floats.
inline __m128 factors(const void * block, size_t offset_d) {
    uint32_t bits;
    std::memcpy(&bits, static_cast<const char *>(block) + offset_d, sizeof bits);
    return _mm_cvtph_ps(_mm_cvtsi32_si128(int(bits)));
}
static_assert(offsetof(block_q2_K, dmin) == offsetof(block_q2_K, d) + 2, "Q2_K: dmin follows d");
static_assert(offsetof(block_q4_K, dmin) == offsetof(block_q4_K, d) + 2, "Q4_K: dmin follows d");
static_assert(offsetof(block_q5_K, dmin) == offsetof(block_q5_K, d) + 2, "Q5_K: dmin follows d");

// Lane indices into 16 16-bit scales for the packed dot products: 16-bit lane L of
// packs(p_a, p_b) (a = 2 h, b = 2 h + 1) holds, in 128-bit group g = L / 8, dword 4 g + L % 4 of
// p_a (L % 8 < 4) or of p_b; dword d of p_i covers elements 64 i + 4 d .. + 3, so its sub-block
// is 4 i + g (sub-blocks of 16) or 2 i + g / 2 (sub-blocks of 32).
struct idx_tables {
    int16_t sub16[2][32];
    int16_t sub32[2][32];
    int16_t mins[16];  // Q4_K / Q5_K: bsum b takes min b / 2 (lane 8 + b / 2 of the scales)
};

constexpr idx_tables make_idx_tables() {
    idx_tables t{};
    for (int h = 0; h < 2; ++h) {
        for (int l = 0; l < 32; ++l) {
            const int g = l / 8, second = l % 8 >= 4 ? 1 : 0;
            t.sub16[h][l] = int16_t(4 * (2 * h + second) + g);
            t.sub32[h][l] = int16_t(2 * (2 * h + second) + g / 2);
        }
    }
    for (int b = 0; b < 16; ++b) t.mins[b] = int16_t(8 + b / 2);
    return t;
}

alignas(64) constexpr idx_tables k_idx = make_idx_tables();

inline __m512i load_idx(const int16_t * idx) { return _mm512_load_si512(idx); }

// A vector whose lower 256 bits hold a and upper 256 bits b (16-bit or 8-bit lanes).
inline __m512i halves16(short a, short b) { return _mm512_inserti64x4(_mm512_set1_epi16(a), _mm256_set1_epi16(b), 1); }
inline __m512i halves8(char a, char b) { return _mm512_inserti64x4(_mm512_set1_epi8(a), _mm256_set1_epi8(b), 1); }

// 32 bytes at p in both halves.
inline __m512i bcast256(const uint8_t * p) {
    return _mm512_broadcast_i64x4(_mm256_loadu_si256(reinterpret_cast<const __m256i *>(p)));
}

// Scale vectors of 16 sub-blocks of 16 from 16 signed 16-bit scales.
inline void scales_sub16(__m256i s16, kq_block & u) {
    const __m512i s = _mm512_zextsi256_si512(s16);
    for (int h = 0; h < 2; ++h) u.sc[h] = _mm512_permutexvar_epi16(load_idx(k_idx.sub16[h]), s);
}

// Codes of Q2_K (2 bits: elements 128 n + 32 j + l in bits 2 j of qs[32 n + l]).
inline void codes_q2(const uint8_t * qs, kq_block & u) {
    const __m512i m2 = _mm512_set1_epi8(3);
    for (int n = 0; n < 2; ++n) {
        const __m512i b = bcast256(qs + 32 * n);
        u.q[2 * n] = _mm512_and_si512(_mm512_srlv_epi16(b, halves16(0, 2)), m2);
        u.q[2 * n + 1] = _mm512_and_si512(_mm512_srlv_epi16(b, halves16(4, 6)), m2);
    }
}

// Q4_K / Q5_K scales: 12 packed bytes (at p, followed by more bytes of the block) -> 16-bit
// lanes 0..7 the 6-bit scales, 8..15 the 6-bit mins. Lane L gathers its low byte (and, for
// L % 8 >= 4, in its high byte the byte holding its top 2 bits, at bits 6..7):
//   L < 4: p[L] & 63            4 <= L < 8:  (p[L + 4] & 15) | (p[L - 4] >> 6) << 4
//   8 <= L < 12: p[L - 4] & 63  12 <= L:     (p[L - 4] >> 4) | (p[L - 8] >> 6) << 4
alignas(32) const int8_t k4_gather[32] = {0, -1, 1, -1, 2, -1, 3, -1, 8, 0, 9, 1, 10, 2, 11, 3,
                                          4, -1, 5, -1, 6, -1, 7, -1, 8, 4, 9, 5, 10, 6, 11, 7};
inline __m256i unpack_scales_k4(const uint8_t * p) {
    const __m256i b = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i *>(p)));
    const __m256i x = _mm256_shuffle_epi8(b, _mm256_load_si256(reinterpret_cast<const __m256i *>(k4_gather)));
    const __m256i lo = _mm256_and_si256(
        _mm256_srlv_epi16(x, _mm256_setr_epi16(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 4, 4, 4)),
        _mm256_setr_epi16(63, 63, 63, 63, 15, 15, 15, 15, 63, 63, 63, 63, 15, 15, 15, 15));
    const __m256i hi = _mm256_srli_epi16(x, 10);  // bits 6..7 of the high byte to bits 4..5
    const __m256i m_hi = _mm256_setr_epi16(0, 0, 0, 0, 48, 48, 48, 48, 0, 0, 0, 0, 48, 48, 48, 48);
    return _mm256_ternarylogic_epi32(lo, hi, m_hi, 0xf8);  // lo | (hi & m_hi)
}

inline void scales_k4(const uint8_t * packed, kq_block & u) {
    const __m256i s16 = unpack_scales_k4(packed);  // 8 scales, 8 mins
    const __m512i s = _mm512_zextsi256_si512(s16);
    for (int h = 0; h < 2; ++h) u.sc[h] = _mm512_permutexvar_epi16(load_idx(k_idx.sub32[h]), s);
    u.bs = _mm256_permutexvar_epi16(_mm256_load_si256(reinterpret_cast<const __m256i *>(k_idx.mins)), s16);
}

// Codes of Q4_K (elements 64 p + l: low nibble of qs[32 p + l], 64 p + 32 + l: high nibble).
inline void codes_q4(const uint8_t * qs, kq_block & u) {
    const __m512i m4 = _mm512_set1_epi8(0x0f);
    const __m512i shift = halves16(0, 4);
    for (int p = 0; p < 4; ++p) u.q[p] = _mm512_and_si512(_mm512_srlv_epi16(bcast256(qs + 32 * p), shift), m4);
}

struct unpack_q2_K {
    using block = block_q2_K;
    static constexpr bool has_min = true;
    static __m256i scales16(const block_q2_K & x) {
        return _mm256_cvtepu8_epi16(_mm_and_si128(_mm_loadu_si128(reinterpret_cast<const __m128i *>(x.scales)),
                                                  _mm_set1_epi8(0x0f)));
    }
    static void unpack(const block_q2_K & x, kq_block & u) {
        u.f = factors(&x, offsetof(block, d));
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
    static __m128i scales(const uint8_t * p) {
        const __m128i w = _mm_maskz_loadu_epi8(0x0fff, p);  // 12 bytes: no read past the block
        const __m128i a = _mm_shuffle_epi32(w, _MM_SHUFFLE(1, 0, 1, 0));
        const __m128i lo = _mm_and_si128(_mm_srlv_epi32(a, _mm_setr_epi32(0, 0, 4, 4)), _mm_set1_epi8(0x0f));
        const __m128i w2 = _mm_shuffle_epi32(w, _MM_SHUFFLE(2, 2, 2, 2));
        // bits 2 j .. 2 j + 1 of each byte of w2 to bits 4..5 (shift counts of 32 give 0)
        const __m128i hi = _mm_or_si128(_mm_sllv_epi32(w2, _mm_setr_epi32(4, 2, 0, 32)),
                                        _mm_srlv_epi32(w2, _mm_setr_epi32(32, 32, 32, 2)));
        return _mm_sub_epi8(_mm_or_si128(lo, _mm_and_si128(hi, _mm_set1_epi8(0x30))), _mm_set1_epi8(32));
    }
    static __m256i scales16(const block_q3_K & x) { return _mm256_cvtepi8_epi16(scales(x.scales)); }
    static void unpack(const block_q3_K & x, kq_block & u) {
        u.f = _mm_set_ss(_cvtsh_ss(x.d));
        const __m256i s16 = _mm256_cvtepi8_epi16(scales(x.scales));
        scales_sub16(s16, u);
        u.bs = _mm256_sub_epi16(_mm256_setzero_si256(), _mm256_slli_epi16(s16, 2));  // -4 * scale
        codes_q2(x.qs, u);
        // high bit of element 32 j + l (j = 0..7): bit j of hmask[l]; set adds 4
        const __m512i h = bcast256(x.hmask);
        const __m512i four = _mm512_set1_epi8(4);
        for (int i = 0; i < 4; ++i) {
            const __mmask64 k = _mm512_test_epi8_mask(h, halves8(char(1 << (2 * i)), char(1 << (2 * i + 1))));
            u.q[i] = _mm512_mask_add_epi8(u.q[i], k, u.q[i], four);
        }
    }
};

// The 8 scales of 32-element sub-blocks (lanes 0..7 of unpack_scales_k4) per 16-element half.
alignas(32) const int16_t k_pairs_idx[16] = {0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7};
inline __m256i scales16_k4(const uint8_t * packed) {
    return _mm256_permutexvar_epi16(_mm256_load_si256(reinterpret_cast<const __m256i *>(k_pairs_idx)),
                                    unpack_scales_k4(packed));
}

struct unpack_q4_K {
    using block = block_q4_K;
    static constexpr bool has_min = true;
    static __m256i scales16(const block_q4_K & x) { return scales16_k4(x.scales); }
    static void unpack(const block_q4_K & x, kq_block & u) {
        u.f = factors(&x, offsetof(block, d));
        scales_k4(x.scales, u);
        codes_q4(x.qs, u);
    }
};

struct unpack_q5_K {
    using block = block_q5_K;
    static constexpr bool has_min = true;
    static __m256i scales16(const block_q5_K & x) { return scales16_k4(x.scales); }
    static void unpack(const block_q5_K & x, kq_block & u) {
        u.f = factors(&x, offsetof(block, d));
        scales_k4(x.scales, u);
        codes_q4(x.qs, u);
        // fifth bit of element 32 j + l: bit j of qh[l]; set adds 16
        const __m512i h = bcast256(x.qh);
        const __m512i sixteen = _mm512_set1_epi8(16);
        for (int p = 0; p < 4; ++p) {
            const __mmask64 k = _mm512_test_epi8_mask(h, halves8(char(1 << (2 * p)), char(1 << (2 * p + 1))));
            u.q[p] = _mm512_mask_add_epi8(u.q[p], k, u.q[p], sixteen);
        }
    }
};

struct unpack_q6_K {
    using block = block_q6_K;
    static constexpr bool has_min = false;
    static __m256i scales16(const block_q6_K & x) {
        return _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i *>(x.scales)));
    }
    static void unpack(const block_q6_K & x, kq_block & u) {
        u.f = _mm_set_ss(_cvtsh_ss(x.d));
        const __m256i s16 = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i *>(x.scales)));
        scales_sub16(s16, u);
        u.bs = _mm256_sub_epi16(_mm256_setzero_si256(), _mm256_slli_epi16(s16, 5));  // -32 * scale
        const __m512i m4 = _mm512_set1_epi8(0x0f), m6 = _mm512_set1_epi8(0x30);
        for (int n = 0; n < 2; ++n) {
            // elements 128 n + 0..63: low nibbles of ql[64 n ..], high bits 0..1 / 2..3 of qh[32 n + l]
            const __m512i l = _mm512_loadu_si512(x.ql + 64 * n);
            const __m512i h = bcast256(x.qh + 32 * n);
            const __m512i h01 = _mm512_and_si512(_mm512_sllv_epi16(h, halves16(4, 2)), m6);
            const __m512i h23 = _mm512_and_si512(_mm512_srlv_epi16(h, halves16(0, 2)), m6);
            u.q[2 * n] = _mm512_or_si512(_mm512_and_si512(l, m4), h01);
            u.q[2 * n + 1] = _mm512_or_si512(_mm512_and_si512(_mm512_srli_epi16(l, 4), m4), h23);
        }
    }
};

// The integer sums of an unpacked block with one Q8_K block: s (16 lanes, times d) and b
// (8 lanes: the bsum term, times -dmin; folded into s for formats without mins).
template <bool has_min>
inline void kq_sums(const kq_block & u, const block_q8_K & y, __m512i & s, __m256i & b) {
    const __m512i zero = _mm512_setzero_si512();
    __m512i p[4];
    for (int i = 0; i < 4; ++i) p[i] = _mm512_dpbusd_epi32(zero, u.q[i], _mm512_loadu_si512(y.qs + 64 * i));
    // |p| <= 4 * 63 * 128 < 2^15: packing to 16 bits is exact
    s = _mm512_madd_epi16(_mm512_packs_epi32(p[0], p[1]), u.sc[0]);
    s = _mm512_dpwssd_epi32(s, _mm512_packs_epi32(p[2], p[3]), u.sc[1]);
    b = _mm256_madd_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i *>(y.bsums)), u.bs);
    if constexpr (!has_min) s = _mm512_add_epi32(s, _mm512_zextsi256_si512(b));
}

// Mat-vec: acc += the dot product, the factors times y.d computed once.
template <bool has_min>
inline void kq_accumulate_1(const kq_block & u, const block_q8_K & y, __m512 & acc) {
    __m512i s;
    __m256i b;
    kq_sums<has_min>(u, y, s, b);
    const __m128 fy = _mm_mul_ps(u.f, _mm_set1_ps(y.d));  // d * y.d, dmin * y.d
    acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(s), _mm512_broadcastss_ps(fy), acc);
    if constexpr (has_min) {
        const __m512 bf = _mm512_zextps256_ps512(_mm256_cvtepi32_ps(b));  // 8 lanes, the rest 0 (masked)
        acc = _mm512_mask3_fnmadd_ps(bf, _mm512_broadcastss_ps(_mm_movehdup_ps(fy)), acc, 0x00ff);
    }
}

// Tiles: the factors of a block as vectors (d, -dmin), shared by the columns.
struct kq_factors {
    __m512 d, dmin;
};

template <bool has_min>
inline kq_factors kq_factor_vectors(const kq_block & u) {
    kq_factors f;
    f.d = _mm512_broadcastss_ps(u.f);
    if constexpr (has_min) f.dmin = _mm512_broadcastss_ps(_mm_sub_ps(_mm_setzero_ps(), _mm_movehdup_ps(u.f)));
    else f.dmin = _mm512_setzero_ps();
    return f;
}

template <bool has_min>
inline void kq_accumulate(const kq_block & u, const kq_factors & f, const block_q8_K & y, __m512 & acc) {
    __m512i s;
    __m256i b;
    kq_sums<has_min>(u, y, s, b);
    const __m512 yd = _mm512_set1_ps(y.d);
    acc = _mm512_fmadd_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(s), f.d), yd, acc);
    if constexpr (has_min) {
        const __m512 bf = _mm512_zextps256_ps512(_mm256_cvtepi32_ps(b));  // 8 lanes, the rest 0 (masked)
        acc = _mm512_mask3_fmadd_ps(_mm512_mul_ps(bf, f.dmin), yd, acc, 0x00ff);
    }
}

inline void prefetch_bytes(const char * p, size_t n) {
    for (size_t o = 0; o < n; o += 64) _mm_prefetch(p + o, _MM_HINT_T0);
}

// One weight row (nb blocks at a) against C columns (b + c * ldb): y[c * ldy].
template <class U, int C>
void kq_tile(int64_t nb, const char * a, const char * b, size_t ldb, float * y, int64_t ldy) {
    using block = typename U::block;
    __m512 acc[C];
    for (int c = 0; c < C; ++c) acc[c] = _mm512_setzero_ps();
    for (int64_t i = 0; i < nb; ++i) {
        const char * xb = a + i * sizeof(block);
        prefetch_bytes(xb + k_prefetch, sizeof(block));
        kq_block u;
        U::unpack(*reinterpret_cast<const block *>(xb), u);
        if constexpr (C == 1) {
            kq_accumulate_1<U::has_min>(u, reinterpret_cast<const block_q8_K *>(b)[i], acc[0]);
        } else {
            const kq_factors f = kq_factor_vectors<U::has_min>(u);
            for (int c = 0; c < C; ++c) {
                const block_q8_K & yb = reinterpret_cast<const block_q8_K *>(b + c * ldb)[i];
                kq_accumulate<U::has_min>(u, f, yb, acc[c]);
            }
        }
    }
    for (int c = 0; c < C; ++c) y[c * ldy] = _mm512_reduce_add_ps(acc[c]);
}

// Rows r0 .. r1 against columns c0 .. nc, in tiles of k_cols columns and one of the rest.
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


// ---- mat-mat over 16-row groups (nc >= k_gemm_min_cols) ----
//
// The 16 rows of a group are unpacked once per job into an interleaved copy (per-thread
// scratch), per super-block:
//   codes  64 vectors: vector g holds, in 32-bit lane r, the 4 codes of elements 4 g .. 4 g + 3
//          of row r, so one VPDPBUSD against a broadcast dword of activation codes gives 16 rows
//          x 4 products at once;
//   dsc    16 float vectors: lane r = d_r * scale of sub-block j (16 elements) of row r;
//   bias   8 vectors of 16-bit pairs: lane r = the integer coefficients of the activation sums
//          (bsums) of sub-blocks 2 p and 2 p + 1 of row r (kq_block::bs: the min, or the scale
//          times the code offset -4 / -32), and one float vector of their factor (-dmin_r or d_r).
// Then a register tile of 16 rows x up to 8 columns runs over the super-blocks: per
// sub-block 4 VPDPBUSD (exact integer sums), one conversion and one FMA by dsc per column;
// per super-block 8 VPDPWSSD for the bias terms (exact), one FMA by its factor and one by the
// column's y.d. The unpacking cost is shared by all the job's columns instead of 4.
constexpr int64_t k_gemm_min_cols = 9;  // below, the 1 x 4 tiles are as fast (measured)
constexpr int k_gemm_rows = 16;
constexpr int k_gemm_cols = 8;
// vectors per super-block: 64 codes, 16 dsc, 8 bias pairs, 1 bias factor
constexpr int k_gemm_dsc = 64, k_gemm_bias = 80, k_gemm_bias_f = 88;
constexpr size_t k_gemm_block_bytes = 89 * 64;

// Super-block i of the 16 rows at a (lda apart) into dst (k_gemm_block_bytes).
template <class U>
void gemm_pack_block(const char * a, size_t lda, int64_t i, char * dst) {
    using block = typename U::block;
    alignas(64) uint8_t codes[16][256];
    alignas(64) float bias_f[16];
    __m512i dsc[16], bias[16];
    for (int r = 0; r < k_gemm_rows; ++r) {
        const block & x = reinterpret_cast<const block *>(a + size_t(r) * lda)[i];
        prefetch_bytes(reinterpret_cast<const char *>(&x) + 2 * sizeof(block), sizeof(block));
        kq_block u;
        U::unpack(x, u);
        for (int p = 0; p < 4; ++p) _mm512_store_si512(codes[r] + 64 * p, u.q[p]);
        const __m512 sc = _mm512_cvtepi32_ps(_mm512_cvtepi16_epi32(U::scales16(x)));
        const float d = _mm_cvtss_f32(u.f);
        dsc[r] = _mm512_castps_si512(_mm512_mul_ps(sc, _mm512_set1_ps(d)));
        bias[r] = _mm512_zextsi256_si512(u.bs);  // 8 dwords of coefficient pairs
        bias_f[r] = U::has_min ? -_mm_cvtss_f32(_mm_movehdup_ps(u.f)) : d;
    }
    __m512i * out = reinterpret_cast<__m512i *>(dst);
    for (int p = 0; p < 4; ++p) {
        __m512i v[16];
        for (int r = 0; r < 16; ++r) v[r] = _mm512_load_si512(codes[r] + 64 * p);
        simd_transpose16x16(v);
        for (int d = 0; d < 16; ++d) _mm512_store_si512(out + 16 * p + d, v[d]);
    }
    simd_transpose16x16(dsc);
    simd_transpose16x16(bias);
    for (int j = 0; j < 16; ++j) _mm512_store_si512(out + k_gemm_dsc + j, dsc[j]);
    for (int p = 0; p < 8; ++p) _mm512_store_si512(out + k_gemm_bias + p, bias[p]);
    _mm512_store_si512(out + k_gemm_bias_f, _mm512_castps_si512(_mm512_load_ps(bias_f)));
}

inline __m512i bcast_dword(const int8_t * p) {
    int32_t v;
    std::memcpy(&v, p, sizeof v);
    return _mm512_set1_epi32(v);
}

// 16 packed rows (nb super-blocks at w) against C columns of Q8_K blocks: y[c * ldy + 0..15].
template <int C>
void gemm_tile(int64_t nb, const char * w, const char * b, size_t ldb, float * y, int64_t ldy) {
    __m512 acc[C];
    for (int c = 0; c < C; ++c) acc[c] = _mm512_setzero_ps();
    for (int64_t i = 0; i < nb; ++i) {
        const __m512i * wb = reinterpret_cast<const __m512i *>(w + size_t(i) * k_gemm_block_bytes);
        const block_q8_K * yb[C];
        for (int c = 0; c < C; ++c) yb[c] = reinterpret_cast<const block_q8_K *>(b + size_t(c) * ldb) + i;
        __m512 t[C];
        for (int c = 0; c < C; ++c) t[c] = _mm512_setzero_ps();
        for (int j = 0; j < 16; ++j) {
            const __m512i w0 = _mm512_load_si512(wb + 4 * j), w1 = _mm512_load_si512(wb + 4 * j + 1);
            const __m512i w2 = _mm512_load_si512(wb + 4 * j + 2), w3 = _mm512_load_si512(wb + 4 * j + 3);
            const __m512 dj = _mm512_castsi512_ps(_mm512_load_si512(wb + k_gemm_dsc + j));
            for (int c = 0; c < C; ++c) {
                const int8_t * q = yb[c]->qs + 16 * j;
                __m512i s = _mm512_dpbusd_epi32(_mm512_setzero_si512(), w0, bcast_dword(q));
                s = _mm512_dpbusd_epi32(s, w1, bcast_dword(q + 4));
                s = _mm512_dpbusd_epi32(s, w2, bcast_dword(q + 8));
                s = _mm512_dpbusd_epi32(s, w3, bcast_dword(q + 12));
                t[c] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(s), dj, t[c]);
            }
        }
        // the bias terms: t += factor * sum_j coefficient_j * bsum_j, then everything times y.d
        __m512i bi[C];
        for (int c = 0; c < C; ++c) bi[c] = _mm512_setzero_si512();
        for (int p = 0; p < 8; ++p) {
            const __m512i cp = _mm512_load_si512(wb + k_gemm_bias + p);
            for (int c = 0; c < C; ++c) {
                bi[c] = _mm512_dpwssd_epi32(bi[c], cp, bcast_dword(reinterpret_cast<const int8_t *>(yb[c]->bsums + 2 * p)));
            }
        }
        const __m512 bf = _mm512_castsi512_ps(_mm512_load_si512(wb + k_gemm_bias_f));
        for (int c = 0; c < C; ++c) {
            t[c] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(bi[c]), bf, t[c]);
            acc[c] = _mm512_fmadd_ps(t[c], _mm512_set1_ps(yb[c]->d), acc[c]);
        }
    }
    for (int c = 0; c < C; ++c) _mm512_storeu_ps(y + c * ldy, acc[c]);
}

// Rows in groups of 16 (nr16 of them) against nc columns; false when no scratch could be had.
template <class U>
bool kq_gemm(int64_t nb, const char * a, size_t lda, int64_t nr16, const char * b, size_t ldb, int64_t nc, float * y,
             int64_t ldy) {
    char * w = static_cast<char *>(ggml_cpu_thread_scratch(size_t(nb) * k_gemm_block_bytes));
    if (!w) return false;
    for (int64_t g = 0; g < nr16; g += k_gemm_rows) {
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
            case 3: gemm_tile<3>(nb, w, bc, ldb, yc, ldy); break;
            case 4: gemm_tile<4>(nb, w, bc, ldb, yc, ldy); break;
            case 5: gemm_tile<5>(nb, w, bc, ldb, yc, ldy); break;
            case 6: gemm_tile<6>(nb, w, bc, ldb, yc, ldy); break;
            default: gemm_tile<7>(nb, w, bc, ldb, yc, ldy); break;
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
        const int64_t nr16 = nr / k_gemm_rows * k_gemm_rows;
        if (nr16 > 0 && kq_gemm<U>(nb, ac, lda, nr16, bc, ldb, nc, y, ldy)) {
            if (nr16 < nr) kq_rows_cols<U>(nb, ac, lda, nr16, nr, bc, ldb, nc, y, ldy);
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

void ggml_dot_q2_K_q8_K_avx512(int64_t k, const void * a, size_t lda, int64_t nr, const void * b, size_t ldb,
                               int64_t nc, float * y, int64_t ldy) {
    kq_dot<unpack_q2_K>(k, a, lda, nr, b, ldb, nc, y, ldy);
}

void ggml_dot_q3_K_q8_K_avx512(int64_t k, const void * a, size_t lda, int64_t nr, const void * b, size_t ldb,
                               int64_t nc, float * y, int64_t ldy) {
    kq_dot<unpack_q3_K>(k, a, lda, nr, b, ldb, nc, y, ldy);
}

void ggml_dot_q4_K_q8_K_avx512(int64_t k, const void * a, size_t lda, int64_t nr, const void * b, size_t ldb,
                               int64_t nc, float * y, int64_t ldy) {
    kq_dot<unpack_q4_K>(k, a, lda, nr, b, ldb, nc, y, ldy);
}

void ggml_dot_q5_K_q8_K_avx512(int64_t k, const void * a, size_t lda, int64_t nr, const void * b, size_t ldb,
                               int64_t nc, float * y, int64_t ldy) {
    kq_dot<unpack_q5_K>(k, a, lda, nr, b, ldb, nc, y, ldy);
}

void ggml_dot_q6_K_q8_K_avx512(int64_t k, const void * a, size_t lda, int64_t nr, const void * b, size_t ldb,
                               int64_t nc, float * y, int64_t ldy) {
    kq_dot<unpack_q6_K>(k, a, lda, nr, b, ldb, nc, y, ldy);
}
