// ggml/cpu/quant-act-k-simd.h — the activation quantizer Q8_K written once over the vector width
// (internal; instantiated by quant-act-k-avx2.cpp and quant-act-k-avx512.cpp with the traits of
// simd-traits.h).
//
// Gives exactly the blocks of ggml_quantize_row_q8_K_ref (no tie exceptions): the scale comes
// from the first element of largest magnitude (NaNs skipped), iscale = -128 / that element,
// codes are round-to-nearest-even of iscale * x (vcvtps2dq under the default rounding mode, the
// same as the reference's rounding) clamped to [-128, 127] (NaN gives -128 in both), bsums
// are the sums of 16 stored codes, d = 1 / iscale. A block whose largest magnitude is zero or
// not finite, or whose iscale overflows, is all zero.
#pragma once

#include "simd-traits.h"

#include "ggml/quants.h"

#include <cstdint>
#include <cstring>

namespace {

namespace quant_act_k {

constexpr float k_flt_max = 3.40282346638528859811704183484516925e+38f;

inline bool is_finite(float v) { return v >= -k_flt_max && v <= k_flt_max; }

inline void zero_block(block_q8_K & y) {
    y.d = 0.0f;
    std::memset(y.qs, 0, sizeof y.qs);
    std::memset(y.bsums, 0, sizeof y.bsums);
}

// The first element of largest magnitude (NaNs skipped); 0 when every element is 0 or NaN.
template <typename S>
float first_max(const float * x, float & amax) {
    typename S::vf m = S::zero();
    for (int j = 0; j < QK_K; j += S::lanes) m = S::max(S::abs(S::load(x + j)), m);  // NaN keeps m
    amax = S::reduce_max(m);
    if (!(amax > 0.0f)) return 0.0f;
    const typename S::vf va = S::set1(amax);
    for (int j = 0; j < QK_K; j += S::lanes) {
        const unsigned hit = S::eq_bits(S::abs(S::load(x + j)), va);
        if (hit) return x[j + __builtin_ctz(hit)];
    }
    return 0.0f;  // not reached: amax is one of the magnitudes
}

template <typename S>
void quantize_block(const float * x, block_q8_K & y) {
    constexpr int n = 32 / S::lanes;   // vectors per 32 codes
    constexpr int n16 = 16 / S::lanes; // vectors per bsum
    float amax = 0.0f;
    const float max = first_max<S>(x, amax);
    if (!(amax > 0.0f) || !is_finite(amax)) return zero_block(y);
    const float iscale = -128.0f / max;
    if (!is_finite(iscale)) return zero_block(y);
    const typename S::vf vs = S::set1(iscale);
    const typename S::vi lo = S::set1_i32(-128), hi = S::set1_i32(127);
    for (int j = 0; j < QK_K; j += 32) {
        typename S::vi c[n];
#pragma GCC unroll 4
        for (int i = 0; i < n; ++i) {
            // NaN converts to INT_MIN, clamped to -128
            c[i] = S::clamp_i32(S::cvt_round(S::mul(S::load(x + j + S::lanes * i), vs)), lo, hi);
        }
#pragma GCC unroll 2
        for (int h = 0; h < 2; ++h) {
            typename S::vi s = c[h * n16];
#pragma GCC unroll 2
            for (int i = 1; i < n16; ++i) s = S::add_i32(s, c[h * n16 + i]);
            y.bsums[j / 16 + h] = int16_t(S::reduce_add_i32(s));
        }
        S::store_codes32(y.qs + j, c);
    }
    y.d = 1.0f / iscale;
}

template <typename S>
void quantize_row_q8_K(const float * x, void * y, int64_t k) {
    block_q8_K * yb = static_cast<block_q8_K *>(y);
    for (int64_t i = 0; i < k / QK_K; ++i) quantize_block<S>(x + i * QK_K, yb[i]);
}

}  // namespace quant_act_k

}  // namespace
