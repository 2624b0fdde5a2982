// ggml/cpu/ops-attn-avx2.cpp — AVX2+FMA inner loops of FLASH_ATTN_EXT (see ops-attn.h).
//
// Compiled with the AVX2 flags and only reached after a CPUID check: nothing but the exported
// table getter has external linkage, and no std templates are used.
//
// scores: 8 cells at a time, one accumulator per cell (q loaded once per 8-float chunk and used
// by all 8), then the accumulators are summed lane-wise with two levels of hadd and one
// exchange of 128-bit halves: lane t of the result is cell t's dot product. The soft-capped
// variant applies cap * tanh(.) to those (vec-math-avx2.h) in the same loop, compiled
// separately so that the plain one is unchanged.
// accumulate: 32 output floats (four registers) at a time over every cell of the tile, two
// cells per step, then the last 16 (dvp is a multiple of 16).
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

// Lane t of the result = the sum of c[t]'s 8 lanes.
static inline __m256 sum8(const __m256 * c) {
    const __m256 h0123 = _mm256_hadd_ps(_mm256_hadd_ps(c[0], c[1]), _mm256_hadd_ps(c[2], c[3]));
    const __m256 h4567 = _mm256_hadd_ps(_mm256_hadd_ps(c[4], c[5]), _mm256_hadd_ps(c[6], c[7]));
    // each 128-bit half of h0123 holds partial sums of cells 0..3 (low half: elements 0-3 of
    // each cell, high half: elements 4-7); add the halves, cells 4..7 go to the high half.
    return _mm256_add_ps(_mm256_permute2f128_ps(h0123, h4567, 0x20), _mm256_permute2f128_ps(h0123, h4567, 0x31));
}

template <bool Cap>
static inline float attn_scores_impl_avx2(const float * q, const float * k, int64_t dp, int64_t n, float scale,
                                          float cap, const float * mask, float * s) {
    const __m256 vscale = _mm256_set1_ps(scale);
    const __m256 vcap = _mm256_set1_ps(cap);
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    __m256 vmax = _mm256_set1_ps(-__builtin_inff());
    for (int64_t t0 = 0; t0 < n; t0 += 8) {
        const float * kt = k + t0 * dp;
        __m256 c[8];
#pragma GCC unroll 8
        for (int j = 0; j < 8; ++j) c[j] = _mm256_setzero_ps();
        for (int64_t d = 0; d < dp; d += 8) {
            const __m256 qv = _mm256_loadu_ps(q + d);
#pragma GCC unroll 8
            for (int j = 0; j < 8; ++j) c[j] = _mm256_fmadd_ps(qv, _mm256_loadu_ps(kt + j * dp + d), c[j]);
        }
        const int left = n - t0 >= 8 ? 8 : int(n - t0);
        const __m256i valid = _mm256_cmpgt_epi32(_mm256_set1_epi32(left), lane);  // lanes < left
        const __m256 m = mask ? _mm256_maskload_ps(mask + t0, valid) : _mm256_setzero_ps();
        __m256 st;
        if constexpr (Cap) {
            st = _mm256_fmadd_ps(vec_math_tanh_avx2(_mm256_mul_ps(sum8(c), vscale)), vcap, m);
        } else {
            st = _mm256_fmadd_ps(sum8(c), vscale, m);
        }
        _mm256_storeu_ps(s + t0, st);
        // invalid lanes -inf; max(st, vmax) keeps vmax where st is NaN
        const __m256 sv = _mm256_blendv_ps(_mm256_set1_ps(-__builtin_inff()), st, _mm256_castsi256_ps(valid));
        vmax = _mm256_max_ps(sv, vmax);
    }
    __m128 h = _mm_max_ps(_mm256_castps256_ps128(vmax), _mm256_extractf128_ps(vmax, 1));
    h = _mm_max_ps(h, _mm_movehl_ps(h, h));
    h = _mm_max_ss(h, _mm_shuffle_ps(h, h, 1));
    return _mm_cvtss_f32(h);
}

static float attn_scores_avx2(const float * q, const float * k, int64_t dp, int64_t n, float scale,
                              const float * mask, float * s) {
    return attn_scores_impl_avx2<false>(q, k, dp, n, scale, 0.0f, mask, s);
}

static float attn_scores_softcap_avx2(const float * q, const float * k, int64_t dp, int64_t n, float scale,
                                      float cap, const float * mask, float * s) {
    return attn_scores_impl_avx2<true>(q, k, dp, n, scale, cap, mask, s);
}

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

const ggml_cpu_attn_fns attn_fns_avx2 = {
    "avx2",
    attn_scores_avx2,
    attn_scores_softcap_avx2,
    attn_accumulate_avx2,
    attn_rows_f16_to_f32_avx2,
    attn_rows_q8_0_to_f32_avx2,
};

}  // namespace

const ggml_cpu_attn_fns & ggml_cpu_attn_fns_avx2() {
    return attn_fns_avx2;
}
