// ggml/cpu/vec-math-avx512.h — exp and tanh on 16 floats with AVX-512 (internal).
//
// Usage (only in files compiled with the AVX-512 flags, *-avx512.cpp):
//   const __m512 e = vec_math_exp_avx512(x);
//   const __m512 t = vec_math_tanh_avx512(x);
//
// Everything here is in an anonymous namespace: each including file gets its own copy, so no
// AVX-512 code can be linked into a caller that runs on a CPU without it. The steps and
// constants are those of vec-math-avx2.h; the final scaling of exp by 2^n uses vscalefps,
// which rounds once and handles overflow (inf) and subnormal results.
#pragma once

// GCC 12 warns about _mm512_undefined_ps() inside its own AVX-512 headers (GCC bug 105593,
// a false positive, fixed in GCC 13); the pragmas keep the build clean with -Wall -Wextra.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop

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

// n (as float) and t = e^r - 1 for x in the clamped range (see vec-math-avx2.h).
inline __m512 vec_math_expm1_reduced_avx512(__m512 x, __m512 * nf) {
    const __m512 xl = _mm512_mul_ps(x, _mm512_set1_ps(vec_math_log2e));
    *nf = _mm512_roundscale_ps(xl, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 r = _mm512_fnmadd_ps(*nf, _mm512_set1_ps(vec_math_ln2_c1), x);
    r = _mm512_fnmadd_ps(*nf, _mm512_set1_ps(vec_math_ln2_c2), r);
    __m512 q = _mm512_fmadd_ps(_mm512_set1_ps(vec_math_exp_p6), r, _mm512_set1_ps(vec_math_exp_p5));
    q = _mm512_fmadd_ps(q, r, _mm512_set1_ps(vec_math_exp_p4));
    q = _mm512_fmadd_ps(q, r, _mm512_set1_ps(vec_math_exp_p3));
    q = _mm512_fmadd_ps(q, r, _mm512_set1_ps(vec_math_exp_p2));
    return _mm512_fmadd_ps(q, _mm512_mul_ps(r, r), r);
}

inline __m512 vec_math_exp_avx512(__m512 x) {
    x = _mm512_min_ps(_mm512_set1_ps(vec_math_exp_hi), x);  // NaN in x: x is returned
    x = _mm512_max_ps(_mm512_set1_ps(vec_math_exp_lo), x);
    __m512 nf;
    const __m512 p = _mm512_add_ps(vec_math_expm1_reduced_avx512(x, &nf), _mm512_set1_ps(1.0f));
    return _mm512_scalef_ps(p, nf);
}

// sign(x) * m / (m + 2), m = expm1(2|x|) = 2^n * t + (2^n - 1) (see vec-math-avx2.h).
inline __m512 vec_math_tanh_avx512(__m512 x) {
    const __m512i sign = _mm512_set1_epi32(int(0x80000000u));
    const __m512 ax = _mm512_castsi512_ps(_mm512_andnot_si512(sign, _mm512_castps_si512(x)));
    const __m512 a = _mm512_min_ps(_mm512_set1_ps(40.0f), _mm512_add_ps(ax, ax));  // NaN: a is NaN
    __m512 nf;
    const __m512 t = vec_math_expm1_reduced_avx512(a, &nf);
    const __m512 s = _mm512_scalef_ps(_mm512_set1_ps(1.0f), nf);  // 2^n, 0 <= n <= 58
    const __m512 m = _mm512_fmadd_ps(s, t, _mm512_sub_ps(s, _mm512_set1_ps(1.0f)));
    const __m512 y = _mm512_div_ps(m, _mm512_add_ps(m, _mm512_set1_ps(2.0f)));
    const __m512i xs = _mm512_and_si512(sign, _mm512_castps_si512(x));
    return _mm512_castsi512_ps(_mm512_or_si512(_mm512_castps_si512(y), xs));
}

}  // namespace
