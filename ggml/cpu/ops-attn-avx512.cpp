// ggml/cpu/ops-attn-avx512.cpp — AVX-512 inner loops of FLASH_ATTN_EXT (see ops-attn.h).
//
// Compiled with the AVX-512 flags and only reached after a CPUID check: nothing but the
// exported table getter has external linkage, and no std templates are used.
//
// Scores come from group_tile (no row-by-row scores on this path: nullptr in the table).
// accumulate (merging the chunks of a chunked plan): 64 output floats (four registers) at a
// time over every cell of the tile, two cells per step, then single 16-float chunks.
// group_tile: ops-attn-tile.h on 16-float vectors (traits below); K for it in pairs of elements
// (rows_f16_to_f32_t straight from F16 rows, transpose from F32 rows): small transposes in
// registers. mask_bits: 32 F16 (16 F32) mask values per compare.
#include "cpu/vec-math-avx512.h"

#include <cstddef>
#include <cstdint>

#include "cpu/ops-attn.h"
#include "ggml/quants.h"

namespace {

// Two cells per step into two sets of accumulators (eight independent FMA chains for a
// 64-float block), added together at the end of the block.
static void attn_accumulate_avx512(float * acc, const float * v, int64_t dvp, const float * w, int64_t n) {
    int64_t d = 0;
    for (; d + 64 <= dvp; d += 64) {
        __m512 a0 = _mm512_loadu_ps(acc + d), a1 = _mm512_loadu_ps(acc + d + 16);
        __m512 a2 = _mm512_loadu_ps(acc + d + 32), a3 = _mm512_loadu_ps(acc + d + 48);
        __m512 b0 = _mm512_setzero_ps(), b1 = _mm512_setzero_ps(), b2 = _mm512_setzero_ps(), b3 = _mm512_setzero_ps();
        int64_t t = 0;
        for (; t + 2 <= n; t += 2) {
            const __m512 wa = _mm512_set1_ps(w[t]), wb = _mm512_set1_ps(w[t + 1]);
            const float * va = v + t * dvp + d;
            const float * vb = va + dvp;
            a0 = _mm512_fmadd_ps(wa, _mm512_loadu_ps(va), a0);
            a1 = _mm512_fmadd_ps(wa, _mm512_loadu_ps(va + 16), a1);
            a2 = _mm512_fmadd_ps(wa, _mm512_loadu_ps(va + 32), a2);
            a3 = _mm512_fmadd_ps(wa, _mm512_loadu_ps(va + 48), a3);
            b0 = _mm512_fmadd_ps(wb, _mm512_loadu_ps(vb), b0);
            b1 = _mm512_fmadd_ps(wb, _mm512_loadu_ps(vb + 16), b1);
            b2 = _mm512_fmadd_ps(wb, _mm512_loadu_ps(vb + 32), b2);
            b3 = _mm512_fmadd_ps(wb, _mm512_loadu_ps(vb + 48), b3);
        }
        if (t < n) {
            const __m512 wa = _mm512_set1_ps(w[t]);
            const float * va = v + t * dvp + d;
            a0 = _mm512_fmadd_ps(wa, _mm512_loadu_ps(va), a0);
            a1 = _mm512_fmadd_ps(wa, _mm512_loadu_ps(va + 16), a1);
            a2 = _mm512_fmadd_ps(wa, _mm512_loadu_ps(va + 32), a2);
            a3 = _mm512_fmadd_ps(wa, _mm512_loadu_ps(va + 48), a3);
        }
        _mm512_storeu_ps(acc + d, _mm512_add_ps(a0, b0));
        _mm512_storeu_ps(acc + d + 16, _mm512_add_ps(a1, b1));
        _mm512_storeu_ps(acc + d + 32, _mm512_add_ps(a2, b2));
        _mm512_storeu_ps(acc + d + 48, _mm512_add_ps(a3, b3));
    }
    for (; d < dvp; d += 16) {
        __m512 a = _mm512_loadu_ps(acc + d), b = _mm512_setzero_ps();
        int64_t t = 0;
        for (; t + 2 <= n; t += 2) {
            a = _mm512_fmadd_ps(_mm512_set1_ps(w[t]), _mm512_loadu_ps(v + t * dvp + d), a);
            b = _mm512_fmadd_ps(_mm512_set1_ps(w[t + 1]), _mm512_loadu_ps(v + (t + 1) * dvp + d), b);
        }
        if (t < n) a = _mm512_fmadd_ps(_mm512_set1_ps(w[t]), _mm512_loadu_ps(v + t * dvp + d), a);
        _mm512_storeu_ps(acc + d, _mm512_add_ps(a, b));
    }
}

static void attn_rows_f16_to_f32_avx512(const uint8_t * base, size_t stride, const int64_t * cells, int64_t n,
                                        int64_t d, float * y, int64_t dp) {
    const __mmask16 tail = (__mmask16)((1u << (d % 16)) - 1u);
    for (int64_t t = 0; t < n; ++t) {
        const uint16_t * x = reinterpret_cast<const uint16_t *>(base + size_t(cells[t]) * stride);
        float * yr = y + t * dp;
        int64_t e = 0;
        for (; e + 16 <= d; e += 16) {
            _mm512_storeu_ps(yr + e, _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i *>(x + e))));
        }
        if (e < dp) _mm512_storeu_ps(yr + e, _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(tail, x + e)));  // zeros past d
    }
}

// Q8_0 blocks: x = d * q, as float(q) * float(d) (one rounding, as in the scalar code).
static void attn_rows_q8_0_to_f32_avx512(const uint8_t * base, size_t stride, const int64_t * cells, int64_t n,
                                         int64_t d, float * y, int64_t dp) {
    for (int64_t t = 0; t < n; ++t) {
        const block_q8_0 * x = reinterpret_cast<const block_q8_0 *>(base + size_t(cells[t]) * stride);
        float * yr = y + t * dp;
        for (int64_t b = 0; b < d / QK8_0; ++b, yr += QK8_0) {
            const __m512 vd = _mm512_set1_ps(_cvtsh_ss(x[b].d));
            const __m128i q0 = _mm_loadu_si128(reinterpret_cast<const __m128i *>(x[b].qs));
            const __m128i q1 = _mm_loadu_si128(reinterpret_cast<const __m128i *>(x[b].qs + 16));
            _mm512_storeu_ps(yr, _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(q0)), vd));
            _mm512_storeu_ps(yr + 16, _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(q1)), vd));
        }
    }
}

// ---- the group step (ops-attn-tile.h) on 16-float vectors ----

struct vt512 {
    using V = __m512;
    static constexpr int W = 16;
    static constexpr int RS = 8;  // 8 rows x 2 vectors: 16 accumulators, 2 K vectors
    static constexpr int RA = 8;  // 8 rows x 2 vectors of dv: 16 accumulators, 2 V vectors
    static constexpr int DA = 2;
    static V load(const float * p) { return _mm512_loadu_ps(p); }
    static void store(float * p, V x) { _mm512_storeu_ps(p, x); }
    static V zero() { return _mm512_setzero_ps(); }
    static V set1(float x) { return _mm512_set1_ps(x); }
    static V add(V a, V b) { return _mm512_add_ps(a, b); }
    static V sub(V a, V b) { return _mm512_sub_ps(a, b); }
    static V mul(V a, V b) { return _mm512_mul_ps(a, b); }
    static V fmadd(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
    static V max(V a, V b) { return _mm512_max_ps(a, b); }
    static V exp(V x) { return vec_math_exp_avx512(x); }
    static V tanh(V x) { return vec_math_tanh_avx512(x); }
    static float reduce_add(V x) { return _mm512_reduce_add_ps(x); }
    static float reduce_max(V x) { return _mm512_reduce_max_ps(x); }
    static __mmask16 below(int64_t k) { return k >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << k) - 1u); }
    static V load_below(const float * p, int64_t k) { return _mm512_maskz_loadu_ps(below(k), p); }
    static void store_below(float * p, V x, int64_t k) { _mm512_mask_storeu_ps(p, below(k), x); }
    static V set1_pair(const float * p) {
        double d;
        __builtin_memcpy(&d, p, sizeof d);
        return _mm512_castpd_ps(_mm512_set1_pd(d));
    }
    static V pair_sum(V a, V b) {
        const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
        const __m512i odd = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
        return _mm512_add_ps(_mm512_permutex2var_ps(a, even, b), _mm512_permutex2var_ps(a, odd, b));
    }
    static V lanes_below(V x, int64_t k, V fill) { return _mm512_mask_mov_ps(fill, below(k), x); }
};

#include "cpu/ops-attn-tile.h"

static void attn_group_tile_avx512(const ggml_cpu_attn_group & g) {
    attn_tile_group<vt512>(g);
}

// 16 x 16 block of 32-bit elements in r, transposed in place (r[e] = column e). Four levels of
// interleaving: pairs of rows, quads (64-bit pairs), then 128-bit lanes twice.
static inline void transpose16_avx512(__m512 * r) {
    __m512 t[16];
#pragma GCC unroll 8
    for (int i = 0; i < 16; i += 2) {
        t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
        t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
    }
    // t[4 q + j]: rows 4q..4q+3 of columns j, j + 4, j + 8, j + 12 (one per 128-bit lane)
#pragma GCC unroll 4
    for (int q = 0; q < 16; q += 4) {
        const __m512d a = _mm512_castps_pd(t[q]), b = _mm512_castps_pd(t[q + 1]);
        const __m512d c = _mm512_castps_pd(t[q + 2]), d = _mm512_castps_pd(t[q + 3]);
        t[q] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, c));
        t[q + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, c));
        t[q + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(b, d));
        t[q + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(b, d));
    }
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) {
        const __m512 v0 = _mm512_shuffle_f32x4(t[j], t[4 + j], 0x88);  // columns j, j + 8
        const __m512 v1 = _mm512_shuffle_f32x4(t[j], t[4 + j], 0xdd);  // columns j + 4, j + 12
        const __m512 v2 = _mm512_shuffle_f32x4(t[8 + j], t[12 + j], 0x88);
        const __m512 v3 = _mm512_shuffle_f32x4(t[8 + j], t[12 + j], 0xdd);
        r[j] = _mm512_shuffle_f32x4(v0, v2, 0x88);
        r[j + 8] = _mm512_shuffle_f32x4(v0, v2, 0xdd);
        r[j + 4] = _mm512_shuffle_f32x4(v1, v3, 0x88);
        r[j + 12] = _mm512_shuffle_f32x4(v1, v3, 0xdd);
    }
}

// 8 x 8 block of 64-bit elements (pairs of floats) in r, transposed in place.
static inline void transpose8x64_avx512(__m512 * r) {
    __m512d t[8], u[8];
#pragma GCC unroll 4
    for (int i = 0; i < 8; i += 2) {
        t[i] = _mm512_unpacklo_pd(_mm512_castps_pd(r[i]), _mm512_castps_pd(r[i + 1]));      // pairs 0, 2, 4, 6
        t[i + 1] = _mm512_unpackhi_pd(_mm512_castps_pd(r[i]), _mm512_castps_pd(r[i + 1]));  // pairs 1, 3, 5, 7
    }
    // u[4 h + j] (h: rows 0-3 or 4-7): pairs j and j + 4 (j = 0, 2 from t even; 1, 3 from t odd)
#pragma GCC unroll 2
    for (int h = 0; h < 2; ++h) {
        const int i = 4 * h;
        u[i] = _mm512_shuffle_f64x2(t[i], t[i + 2], 0x88);      // pairs 0, 4
        u[i + 1] = _mm512_shuffle_f64x2(t[i + 1], t[i + 3], 0x88);  // pairs 1, 5
        u[i + 2] = _mm512_shuffle_f64x2(t[i], t[i + 2], 0xdd);  // pairs 2, 6
        u[i + 3] = _mm512_shuffle_f64x2(t[i + 1], t[i + 3], 0xdd);  // pairs 3, 7
    }
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) {
        r[j] = _mm512_castpd_ps(_mm512_shuffle_f64x2(u[j], u[4 + j], 0x88));
        r[j + 4] = _mm512_castpd_ps(_mm512_shuffle_f64x2(u[j], u[4 + j], 0xdd));
    }
}

// F32 rows into the pair layout: blocks of 8 cells x 16 elements (8 pairs).
static void attn_transpose_avx512(const float * k, int64_t dp, int64_t n16, float * kt, int64_t ks) {
    __m512 r[8];
    for (int64_t t0 = 0; t0 < n16; t0 += 8) {
        for (int64_t e0 = 0; e0 < dp; e0 += 16) {
#pragma GCC unroll 8
            for (int i = 0; i < 8; ++i) r[i] = _mm512_loadu_ps(k + (t0 + i) * dp + e0);
            transpose8x64_avx512(r);
#pragma GCC unroll 8
            for (int j = 0; j < 8; ++j) _mm512_storeu_ps(kt + (e0 / 2 + j) * ks + 2 * t0, r[j]);
        }
    }
}

// F16 rows straight into the pair layout: 16 cells x 32 elements at a time, the pairs of F16
// values transposed as 32-bit elements, then converted (8 cells per vector); cells past n and
// elements past d give zeros.
static void attn_rows_f16_to_f32_t_avx512(const uint8_t * base, size_t stride, const int64_t * cells, int64_t n,
                                          int64_t d, float * kt, int64_t ks) {
    const int64_t dp = (d + 15) / 16 * 16;
    __m512 r[16];
    for (int64_t t0 = 0; t0 < n; t0 += 16) {
        for (int64_t e0 = 0; e0 < dp; e0 += 32) {
            const int64_t left = d - e0;
            const __mmask32 m = left >= 32 ? (__mmask32)0xffffffffu : (__mmask32)((1u << left) - 1u);
#pragma GCC unroll 16
            for (int i = 0; i < 16; ++i) {
                if (t0 + i < n) {
                    const uint16_t * x = reinterpret_cast<const uint16_t *>(base + size_t(cells[t0 + i]) * stride);
                    r[i] = _mm512_castsi512_ps(_mm512_maskz_loadu_epi16(m, x + e0));
                } else {
                    r[i] = _mm512_setzero_ps();
                }
            }
            transpose16_avx512(r);  // r[j]: the pair (e0 + 2j, e0 + 2j + 1) of the 16 cells, as F16
            const int64_t np = dp - e0 >= 32 ? 16 : (dp - e0) / 2;
            for (int64_t j = 0; j < np; ++j) {
                float * y = kt + (e0 / 2 + j) * ks + 2 * t0;
                const __m512i h = _mm512_castps_si512(r[j]);
                _mm512_storeu_ps(y, _mm512_cvtph_ps(_mm512_castsi512_si256(h)));
                _mm512_storeu_ps(y + 16, _mm512_cvtph_ps(_mm512_extracti64x4_epi64(h, 1)));
            }
        }
    }
}

// 32 F16 values (or 16 F32) per compare; F16 -inf is the one pattern 0xfc00.
static void attn_mask_bits_avx512(const void * row, bool f16, int64_t n, uint64_t * bits) {
    for (int64_t w = 0; w * 64 < n; ++w) {
        uint64_t word = 0;
        for (int64_t j = w * 64; j < n && j < w * 64 + 64; j += f16 ? 32 : 16) {
            const int64_t left = n - j;
            uint64_t b;
            if (f16) {
                const __mmask32 m = left >= 32 ? (__mmask32)0xffffffffu : (__mmask32)((1u << left) - 1u);
                const __m512i x = _mm512_maskz_loadu_epi16(m, static_cast<const uint16_t *>(row) + j);
                b = _mm512_mask_cmpneq_epi16_mask(m, x, _mm512_set1_epi16(short(0xfc00)));
            } else {
                const __mmask16 m = left >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << left) - 1u);
                const __m512 x = _mm512_maskz_loadu_ps(m, static_cast<const float *>(row) + j);
                b = _mm512_mask_cmp_ps_mask(m, x, _mm512_set1_ps(-__builtin_inff()), _CMP_NEQ_UQ);
            }
            word |= b << (j - w * 64);
        }
        bits[w] = word;
    }
}

const ggml_cpu_attn_fns attn_fns_avx512 = {
    "avx512",
    nullptr,
    nullptr,
    attn_accumulate_avx512,
    attn_rows_f16_to_f32_avx512,
    attn_rows_q8_0_to_f32_avx512,
    attn_mask_bits_avx512,
    attn_group_tile_avx512,
    attn_transpose_avx512,
    attn_rows_f16_to_f32_t_avx512,
};

}  // namespace

const ggml_cpu_attn_fns & ggml_cpu_attn_fns_avx512() {
    return attn_fns_avx512;
}
