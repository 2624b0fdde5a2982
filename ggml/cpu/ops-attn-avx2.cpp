// ggml/cpu/ops-attn-avx2.cpp — AVX2+FMA inner loops of FLASH_ATTN_EXT (see ops-attn.h).
//
// Compiled with the AVX2 flags and only reached after a CPUID check: nothing but the exported
// table getter has external linkage, and no std templates are used.
//
// Scores come from group_tile (no row-by-row scores on this path: nullptr in the table).
// accumulate (merging the chunks of a chunked plan): 32 output floats (four registers) at a
// time over every cell of the tile, two cells per step, then the last 16 (dvp % 16 == 0).
// group_tile: ops-attn-tile.h on 8-float vectors (traits below); K for it in pairs of elements
// (rows_f16_to_f32_t straight from F16 rows, transpose from F32 rows): small transposes in
// registers. mask_bits: 16 F16 (8 F32) mask values per compare.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "cpu/ops-attn.h"
#include "cpu/vec-math-avx2.h"
#include "ggml/quants.h"

namespace {

// 32 output floats per block, two cells per step into two sets of accumulators (eight
// independent FMA chains), added together at the end of the block; dvp % 16 == 0, so a last
// block of 16 floats may remain.
static void attn_accumulate_avx2(float * acc, const float * v, int64_t dvp, const float * w, int64_t n) {
    for (int64_t d = 0; d < dvp; d += 32) {
        const bool half = d + 32 > dvp;  // only 16 floats left
        __m256 a0 = _mm256_loadu_ps(acc + d), a1 = _mm256_loadu_ps(acc + d + 8);
        __m256 a2 = half ? _mm256_setzero_ps() : _mm256_loadu_ps(acc + d + 16);
        __m256 a3 = half ? _mm256_setzero_ps() : _mm256_loadu_ps(acc + d + 24);
        __m256 b0 = _mm256_setzero_ps(), b1 = _mm256_setzero_ps(), b2 = _mm256_setzero_ps(), b3 = _mm256_setzero_ps();
        int64_t t = 0;
        if (!half) {
            for (; t + 2 <= n; t += 2) {
                const __m256 wa = _mm256_set1_ps(w[t]), wb = _mm256_set1_ps(w[t + 1]);
                const float * va = v + t * dvp + d;
                const float * vb = va + dvp;
                a0 = _mm256_fmadd_ps(wa, _mm256_loadu_ps(va), a0);
                a1 = _mm256_fmadd_ps(wa, _mm256_loadu_ps(va + 8), a1);
                a2 = _mm256_fmadd_ps(wa, _mm256_loadu_ps(va + 16), a2);
                a3 = _mm256_fmadd_ps(wa, _mm256_loadu_ps(va + 24), a3);
                b0 = _mm256_fmadd_ps(wb, _mm256_loadu_ps(vb), b0);
                b1 = _mm256_fmadd_ps(wb, _mm256_loadu_ps(vb + 8), b1);
                b2 = _mm256_fmadd_ps(wb, _mm256_loadu_ps(vb + 16), b2);
                b3 = _mm256_fmadd_ps(wb, _mm256_loadu_ps(vb + 24), b3);
            }
            for (; t < n; ++t) {
                const __m256 wa = _mm256_set1_ps(w[t]);
                const float * va = v + t * dvp + d;
                a0 = _mm256_fmadd_ps(wa, _mm256_loadu_ps(va), a0);
                a1 = _mm256_fmadd_ps(wa, _mm256_loadu_ps(va + 8), a1);
                a2 = _mm256_fmadd_ps(wa, _mm256_loadu_ps(va + 16), a2);
                a3 = _mm256_fmadd_ps(wa, _mm256_loadu_ps(va + 24), a3);
            }
            _mm256_storeu_ps(acc + d + 16, _mm256_add_ps(a2, b2));
            _mm256_storeu_ps(acc + d + 24, _mm256_add_ps(a3, b3));
        } else {
            for (; t + 2 <= n; t += 2) {
                const __m256 wa = _mm256_set1_ps(w[t]), wb = _mm256_set1_ps(w[t + 1]);
                const float * va = v + t * dvp + d;
                const float * vb = va + dvp;
                a0 = _mm256_fmadd_ps(wa, _mm256_loadu_ps(va), a0);
                a1 = _mm256_fmadd_ps(wa, _mm256_loadu_ps(va + 8), a1);
                b0 = _mm256_fmadd_ps(wb, _mm256_loadu_ps(vb), b0);
                b1 = _mm256_fmadd_ps(wb, _mm256_loadu_ps(vb + 8), b1);
            }
            for (; t < n; ++t) {
                const __m256 wa = _mm256_set1_ps(w[t]);
                a0 = _mm256_fmadd_ps(wa, _mm256_loadu_ps(v + t * dvp + d), a0);
                a1 = _mm256_fmadd_ps(wa, _mm256_loadu_ps(v + t * dvp + d + 8), a1);
            }
        }
        _mm256_storeu_ps(acc + d, _mm256_add_ps(a0, b0));
        _mm256_storeu_ps(acc + d + 8, _mm256_add_ps(a1, b1));
    }
}

static void attn_rows_f16_to_f32_avx2(const uint8_t * base, size_t stride, const int64_t * cells, int64_t n,
                                      int64_t d, float * y, int64_t dp) {
    for (int64_t t = 0; t < n; ++t) {
        const uint16_t * x = reinterpret_cast<const uint16_t *>(base + size_t(cells[t]) * stride);
        float * yr = y + t * dp;
        int64_t e = 0;
        for (; e + 8 <= d; e += 8) {
            _mm256_storeu_ps(yr + e, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i *>(x + e))));
        }
        if (e < d) {  // fewer than 8 left: through a zeroed buffer, nothing read past d
            uint16_t buf[8] = {0, 0, 0, 0, 0, 0, 0, 0};
            std::memcpy(buf, x + e, size_t(d - e) * sizeof(uint16_t));
            _mm256_storeu_ps(yr + e, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i *>(buf))));
            e += 8;
        }
        for (; e < dp; e += 8) _mm256_storeu_ps(yr + e, _mm256_setzero_ps());
    }
}

// Q8_0 blocks: x = d * q, as float(q) * float(d) (one rounding, as in the scalar code).
static void attn_rows_q8_0_to_f32_avx2(const uint8_t * base, size_t stride, const int64_t * cells, int64_t n,
                                       int64_t d, float * y, int64_t dp) {
    for (int64_t t = 0; t < n; ++t) {
        const block_q8_0 * x = reinterpret_cast<const block_q8_0 *>(base + size_t(cells[t]) * stride);
        float * yr = y + t * dp;
        for (int64_t b = 0; b < d / QK8_0; ++b, yr += QK8_0) {
            const __m256 vd = _mm256_set1_ps(_cvtsh_ss(x[b].d));
            for (int k = 0; k < QK8_0; k += 8) {
                const __m128i q = _mm_loadl_epi64(reinterpret_cast<const __m128i *>(x[b].qs + k));
                _mm256_storeu_ps(yr + k, _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(q)), vd));
            }
        }
    }
}

// ---- the group step (ops-attn-tile.h) on 8-float vectors ----

struct vt256 {
    using V = __m256;
    static constexpr int W = 8;
    static constexpr int RS = 4;  // 4 rows x 2 vectors: 8 accumulators, 2 K vectors
    static constexpr int RA = 4;  // 4 rows x 2 vectors of dv: 8 accumulators, 2 V vectors
    static constexpr int DA = 2;
    static V load(const float * p) { return _mm256_loadu_ps(p); }
    static void store(float * p, V x) { _mm256_storeu_ps(p, x); }
    static V zero() { return _mm256_setzero_ps(); }
    static V set1(float x) { return _mm256_set1_ps(x); }
    static V add(V a, V b) { return _mm256_add_ps(a, b); }
    static V sub(V a, V b) { return _mm256_sub_ps(a, b); }
    static V mul(V a, V b) { return _mm256_mul_ps(a, b); }
    static V fmadd(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
    static V max(V a, V b) { return _mm256_max_ps(a, b); }
    static V exp(V x) { return vec_math_exp_avx2(x); }
    static V tanh(V x) { return vec_math_tanh_avx2(x); }
    static float reduce_add(V x) {
        __m128 h = _mm_add_ps(_mm256_castps256_ps128(x), _mm256_extractf128_ps(x, 1));
        h = _mm_add_ps(h, _mm_movehl_ps(h, h));
        return _mm_cvtss_f32(_mm_add_ss(h, _mm_movehdup_ps(h)));
    }
    static float reduce_max(V x) {
        __m128 h = _mm_max_ps(_mm256_castps256_ps128(x), _mm256_extractf128_ps(x, 1));
        h = _mm_max_ps(h, _mm_movehl_ps(h, h));
        return _mm_cvtss_f32(_mm_max_ss(h, _mm_movehdup_ps(h)));
    }
    static __m256i below(int64_t k) {
        const int left = k >= 8 ? 8 : int(k);
        return _mm256_cmpgt_epi32(_mm256_set1_epi32(left), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    }
    static V load_below(const float * p, int64_t k) { return _mm256_maskload_ps(p, below(k)); }
    static void store_below(float * p, V x, int64_t k) { _mm256_maskstore_ps(p, below(k), x); }
    static V set1_pair(const float * p) {
        double d;
        __builtin_memcpy(&d, p, sizeof d);
        return _mm256_castpd_ps(_mm256_set1_pd(d));
    }
    static V pair_sum(V a, V b) {  // hadd: per 128-bit half a01 a23 b01 b23; then halves reordered
        return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_hadd_ps(a, b)), 0xd8));
    }
    static V lanes_below(V x, int64_t k, V fill) { return _mm256_blendv_ps(fill, x, _mm256_castsi256_ps(below(k))); }
};

#include "cpu/ops-attn-tile.h"

static void attn_group_tile_avx2(const ggml_cpu_attn_group & g) {
    attn_tile_group<vt256>(g);
}

// 4 x 4 block of 64-bit elements (pairs of floats) in r, transposed in place.
static inline void transpose4x64_avx2(__m256 * r) {
    const __m256d t0 = _mm256_unpacklo_pd(_mm256_castps_pd(r[0]), _mm256_castps_pd(r[1]));  // pairs 0, 2 of rows 0, 1
    const __m256d t1 = _mm256_unpackhi_pd(_mm256_castps_pd(r[0]), _mm256_castps_pd(r[1]));  // pairs 1, 3
    const __m256d t2 = _mm256_unpacklo_pd(_mm256_castps_pd(r[2]), _mm256_castps_pd(r[3]));
    const __m256d t3 = _mm256_unpackhi_pd(_mm256_castps_pd(r[2]), _mm256_castps_pd(r[3]));
    r[0] = _mm256_castpd_ps(_mm256_permute2f128_pd(t0, t2, 0x20));
    r[1] = _mm256_castpd_ps(_mm256_permute2f128_pd(t1, t3, 0x20));
    r[2] = _mm256_castpd_ps(_mm256_permute2f128_pd(t0, t2, 0x31));
    r[3] = _mm256_castpd_ps(_mm256_permute2f128_pd(t1, t3, 0x31));
}

// F32 rows into the pair layout: blocks of 4 cells x 8 elements (4 pairs).
static void attn_transpose_avx2(const float * k, int64_t dp, int64_t n16, float * kt, int64_t ks) {
    __m256 r[4];
    for (int64_t t0 = 0; t0 < n16; t0 += 4) {
        for (int64_t e0 = 0; e0 < dp; e0 += 8) {
#pragma GCC unroll 4
            for (int i = 0; i < 4; ++i) r[i] = _mm256_loadu_ps(k + (t0 + i) * dp + e0);
            transpose4x64_avx2(r);
#pragma GCC unroll 4
            for (int j = 0; j < 4; ++j) _mm256_storeu_ps(kt + (e0 / 2 + j) * ks + 2 * t0, r[j]);
        }
    }
}

// F16 rows straight into the pair layout: blocks of 4 cells x 8 elements converted, then
// transposed as pairs (cells past n up to a multiple of 16 and elements past d give zeros; a
// part-block at d goes through a zeroed buffer, nothing is read past d).
static void attn_rows_f16_to_f32_t_avx2(const uint8_t * base, size_t stride, const int64_t * cells, int64_t n,
                                        int64_t d, float * kt, int64_t ks) {
    const int64_t dp = (d + 15) / 16 * 16;
    const int64_t n16 = (n + 15) / 16 * 16;
    __m256 r[4];
    for (int64_t t0 = 0; t0 < n16; t0 += 4) {
        for (int64_t e0 = 0; e0 < dp; e0 += 8) {
#pragma GCC unroll 4
            for (int i = 0; i < 4; ++i) {
                if (t0 + i >= n || e0 >= d) {
                    r[i] = _mm256_setzero_ps();
                    continue;
                }
                const uint16_t * x = reinterpret_cast<const uint16_t *>(base + size_t(cells[t0 + i]) * stride) + e0;
                uint16_t buf[8] = {0, 0, 0, 0, 0, 0, 0, 0};
                if (d - e0 < 8) {
                    std::memcpy(buf, x, size_t(d - e0) * sizeof(uint16_t));
                    x = buf;
                }
                r[i] = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i *>(x)));
            }
            transpose4x64_avx2(r);
#pragma GCC unroll 4
            for (int j = 0; j < 4; ++j) _mm256_storeu_ps(kt + (e0 / 2 + j) * ks + 2 * t0, r[j]);
        }
    }
}

// 16 F16 values (or 8 F32) per compare; F16 -inf is the one pattern 0xfc00. A tail of fewer
// goes through a buffer padded with -inf (nothing read past n).
static void attn_mask_bits_avx2(const void * row, bool f16, int64_t n, uint64_t * bits) {
    const int64_t step = f16 ? 16 : 8;
    for (int64_t w = 0; w * 64 < n; ++w) {
        uint64_t word = 0;
        for (int64_t j = w * 64; j < n && j < w * 64 + 64; j += step) {
            const int64_t left = n - j;
            uint64_t b;
            if (f16) {
                uint16_t buf[16];
                const uint16_t * x = static_cast<const uint16_t *>(row) + j;
                if (left < 16) {
                    for (int i = 0; i < 16; ++i) buf[i] = i < left ? x[i] : uint16_t(0xfc00);
                    x = buf;
                }
                const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(x));
                const __m256i eq = _mm256_cmpeq_epi16(v, _mm256_set1_epi16(short(0xfc00)));
                const __m128i packed = _mm_packs_epi16(_mm256_castsi256_si128(eq), _mm256_extracti128_si256(eq, 1));
                b = ~uint64_t(uint32_t(_mm_movemask_epi8(packed))) & 0xffffu;
            } else {
                const __m256 v = _mm256_maskload_ps(static_cast<const float *>(row) + j, vt256::below(left));
                const __m256 c = _mm256_cmp_ps(v, _mm256_set1_ps(-__builtin_inff()), _CMP_NEQ_UQ);
                b = uint64_t(uint32_t(_mm256_movemask_ps(c))) & ((1u << (left >= 8 ? 8 : left)) - 1u);
            }
            word |= b << (j - w * 64);
        }
        bits[w] = word;
    }
}

const ggml_cpu_attn_fns attn_fns_avx2 = {
    "avx2",
    nullptr,
    nullptr,
    attn_accumulate_avx2,
    attn_rows_f16_to_f32_avx2,
    attn_rows_q8_0_to_f32_avx2,
    attn_mask_bits_avx2,
    attn_group_tile_avx2,
    attn_transpose_avx2,
    attn_rows_f16_to_f32_t_avx2,
};

}  // namespace

const ggml_cpu_attn_fns & ggml_cpu_attn_fns_avx2() {
    return attn_fns_avx2;
}
