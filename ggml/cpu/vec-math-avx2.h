// ggml/cpu/vec-math-avx2.h — exp and tanh on 8 floats with AVX2 + FMA (internal).
//
// Usage (only in files compiled with the AVX2 flags, *-avx2.cpp):
//   const __m256 e = vec_math_exp_avx2(x);
//   const __m256 t = vec_math_tanh_avx2(x);
//
// Everything here is in an anonymous namespace: each including file gets its own copy, so no
// AVX2 code can be linked into a caller that runs on a CPU without AVX2.
//
// exp(x), shared with the AVX-512 header (same constants, same steps):
//   1. clamp x to [-110, 89]: beyond those ends the result is 0 or inf anyway, and the clamp
//      keeps the steps below finite (NaN passes through the clamp and stays NaN);
//   2. n = round(x * log2(e)), r = x - n*ln2 with ln2 split into C1 + C2 (Cody and Waite):
//      C1 = 0.693359375 has 9 significant bits, so x - n*C1 is exact; |r| <= ~0.347;
//   3. e^r = 1 + r + r^2 * (c2 + c3 r + c4 r^2 + c5 r^3 + c6 r^4), coefficients fitted by us
//      for minimal relative error on [-0.354, 0.354] (approximation error 3.5e-9; what is
//      left is float rounding, ~1 ulp);
//   4. e^x = e^r * 2^n, applied as (e^r * 2^n1) * 2^n2 with n1 = floor(n/2), n2 = n - n1 so
//      each factor is a normal float; the last product rounds once, which gives correctly
//      rounded subnormal results and inf on overflow.
//
// tanh(x) = sign(x) * m / (m + 2) with m = expm1(2|x|), which has no cancellation anywhere:
// expm1(a) = 2^n * t + (2^n - 1) with t = r + r^2 * (c2 + ...) = e^r - 1 from steps 2 and 3
// (accurate to a few ulp even for tiny r, where e^r - 1 would cancel), one fused multiply-add;
// 2|x| is clamped to 40 (tanh(20) is 1 in float), NaN stays NaN. Error within 2 ulp of the
// double tanh over a dense sweep (test-ops-vec.cpp).
#pragma once

#include <immintrin.h>

namespace {

constexpr float vec_math_exp_lo = -110.0f;
constexpr float vec_math_exp_hi = 89.0f;
constexpr float vec_math_log2e = 1.44269504088896341f;
constexpr float vec_math_ln2_c1 = 0.693359375f;
constexpr float vec_math_ln2_c2 = -2.12194440e-4f;
constexpr float vec_math_exp_p2 = 4.999999404e-01f;
constexpr float vec_math_exp_p3 = 1.666650921e-01f;
constexpr float vec_math_exp_p4 = 4.166853055e-02f;
constexpr float vec_math_exp_p5 = 8.370140567e-03f;
constexpr float vec_math_exp_p6 = 1.381165115e-03f;

inline __m256 vec_math_pow2_avx2(__m256i n) {
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n, _mm256_set1_epi32(127)), 23));
}

// Steps 2 and 3: n (as float) and t = e^r - 1 for x in the clamped range.
inline __m256 vec_math_expm1_reduced_avx2(__m256 x, __m256 * nf) {
    const __m256 xl = _mm256_mul_ps(x, _mm256_set1_ps(vec_math_log2e));
    *nf = _mm256_round_ps(xl, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 r = _mm256_fnmadd_ps(*nf, _mm256_set1_ps(vec_math_ln2_c1), x);
    r = _mm256_fnmadd_ps(*nf, _mm256_set1_ps(vec_math_ln2_c2), r);
    __m256 q = _mm256_fmadd_ps(_mm256_set1_ps(vec_math_exp_p6), r, _mm256_set1_ps(vec_math_exp_p5));
    q = _mm256_fmadd_ps(q, r, _mm256_set1_ps(vec_math_exp_p4));
    q = _mm256_fmadd_ps(q, r, _mm256_set1_ps(vec_math_exp_p3));
    q = _mm256_fmadd_ps(q, r, _mm256_set1_ps(vec_math_exp_p2));
    return _mm256_fmadd_ps(q, _mm256_mul_ps(r, r), r);
}

inline __m256 vec_math_exp_avx2(__m256 x) {
    x = _mm256_min_ps(_mm256_set1_ps(vec_math_exp_hi), x);  // NaN in x: x is returned
    x = _mm256_max_ps(_mm256_set1_ps(vec_math_exp_lo), x);
    __m256 nf;
    const __m256 p = _mm256_add_ps(vec_math_expm1_reduced_avx2(x, &nf), _mm256_set1_ps(1.0f));
    const __m256i n = _mm256_cvtps_epi32(nf);
    const __m256i n1 = _mm256_srai_epi32(n, 1);
    const __m256i n2 = _mm256_sub_epi32(n, n1);
    return _mm256_mul_ps(_mm256_mul_ps(p, vec_math_pow2_avx2(n1)), vec_math_pow2_avx2(n2));
}

inline __m256 vec_math_tanh_avx2(__m256 x) {
    const __m256 sign = _mm256_set1_ps(-0.0f);
    const __m256 ax = _mm256_andnot_ps(sign, x);
    const __m256 a = _mm256_min_ps(_mm256_set1_ps(40.0f), _mm256_add_ps(ax, ax));  // NaN: a is NaN
    __m256 nf;
    const __m256 t = vec_math_expm1_reduced_avx2(a, &nf);
    const __m256 s = vec_math_pow2_avx2(_mm256_cvtps_epi32(nf));  // 2^n, 0 <= n <= 58
    const __m256 m = _mm256_fmadd_ps(s, t, _mm256_sub_ps(s, _mm256_set1_ps(1.0f)));
    const __m256 y = _mm256_div_ps(m, _mm256_add_ps(m, _mm256_set1_ps(2.0f)));
    return _mm256_or_ps(y, _mm256_and_ps(sign, x));
}

}  // namespace
