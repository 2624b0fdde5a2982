// ggml/cpu/quant-act-simd.h — the activation quantizers Q8_0 / Q8_1 written once over the vector
// width (internal; instantiated by quant-act-avx2.cpp and quant-act-avx512.cpp with the traits of
// simd-traits.h).
//
// They give the same blocks, bit for bit, as ggml_quantize_row_q8_0_ref / _q8_1_ref
// (ggml/src/quants-legacy.cpp) on every input:
//   d = amax / 127 (amax ignores NaN; d clamped to the fp16 range), id = 1 / d (0 when d is 0
//   or 1 / d overflows), q = round-half-away(clamp(x * id, -127, 127)) with NaN -> -127,
//   Q8_1: s = fp16(clamp(sum(q) * d)).
// Rounding half away from zero is done exactly: trunc(v), plus the sign of v where the
// (exact) remainder v - trunc(v) has magnitude >= 0.5.
#pragma once

#include "simd-traits.h"

#include "ggml/quants.h"

#include <cstdint>

namespace {

namespace quant_act {

constexpr int k_qk = 32;
constexpr float k_fp16_max = 65504.0f;

inline float clamp_fp16_range(float v) {
    if (v != v) return 0.0f;
    if (v > k_fp16_max) return k_fp16_max;
    if (v < -k_fp16_max) return -k_fp16_max;
    return v;
}

inline float inverse_or_zero(float d) {
    if (d == 0.0f) return 0.0f;
    const float id = 1.0f / d;
    return id - id == 0.0f ? id : 0.0f;  // finite
}

inline ggml_fp16_t to_fp16(float f) {
    return ggml_fp16_t(_cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}

// round-half-away(clamp(v, -127, 127)) as int32 lanes; NaN gives -127.
template <typename S>
typename S::vi round_code(typename S::vf v) {
    v = S::min(S::max(v, S::set1(-127.0f)), S::set1(127.0f));  // max(NaN, x) = x
    const typename S::vf t = S::trunc(v);
    const typename S::vf frac = S::abs(S::sub(v, t));
    return S::cvt_trunc(S::add_where_ge(t, S::sign_or_one(v), frac, S::set1(0.5f)));
}

// One block: codes into q, d returned (float, before fp16 rounding), sum of the codes in sum.
// Inlined into each row quantizer, so that Q8_0 drops the sum.
template <typename S>
inline __attribute__((always_inline)) float quantize_block(const float * x, int8_t * q, int & sum) {
    constexpr int n = k_qk / S::lanes;
    typename S::vf v[n];
    // max(|x|, acc) returns acc when |x| is NaN: NaN elements are ignored, as fmax does
    typename S::vf amax = S::zero();
#pragma GCC unroll 4
    for (int i = 0; i < n; ++i) {
        v[i] = S::load(x + S::lanes * i);
        amax = S::max(S::abs(v[i]), amax);
    }
    const float d = clamp_fp16_range(S::reduce_max(amax) / 127.0f);
    const typename S::vf id = S::set1(inverse_or_zero(d));
    typename S::vi c[n];
#pragma GCC unroll 4
    for (int i = 0; i < n; ++i) c[i] = round_code<S>(S::mul(v[i], id));
    typename S::vi s = c[0];
#pragma GCC unroll 4
    for (int i = 1; i < n; ++i) s = S::add_i32(s, c[i]);
    sum = S::reduce_add_i32(s);
    S::store_codes32(q, c);
    return d;
}

template <typename S>
void quantize_row_q8_0(const float * x, void * vy, int64_t k) {
    block_q8_0 * y = static_cast<block_q8_0 *>(vy);
    for (int64_t i = 0; i < k / k_qk; ++i) {
        int sum;
        const float d = quantize_block<S>(x + i * k_qk, y[i].qs, sum);
        y[i].d = to_fp16(d);
    }
}

template <typename S>
void quantize_row_q8_1(const float * x, void * vy, int64_t k) {
    block_q8_1 * y = static_cast<block_q8_1 *>(vy);
    for (int64_t i = 0; i < k / k_qk; ++i) {
        int sum;
        const float d = quantize_block<S>(x + i * k_qk, y[i].qs, sum);
        y[i].d = to_fp16(d);
        y[i].s = to_fp16(clamp_fp16_range(float(sum) * d));
    }
}

}  // namespace quant_act

}  // namespace
