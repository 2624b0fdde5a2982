// engine/src/sampling-math.h — the sampler's arithmetic over a row of logits: a float exp of
// its own (the same bits on every platform and libm, and written so the compiler can vectorize
// the row loops), the finite maximum of a row, and masked sums of exponentials.
//
//   float m = sampling_row_max(row, n);                       // -inf when no entry is finite
//   double z = sampling_row_exp_sum(row, n, m, 1.0f, -INFINITY);  // sum of exp(row - m)
//
// The row functions (sampling-math.cpp) work on eight lanes and, built by GCC for x86-64 (not
// under AddressSanitizer), exist twice, for AVX2 and for the baseline, chosen when the program
// starts; every lane computes exactly what the scalar sampling_exp computes, so both give the
// same bits.
// Internal to the engine (not installed).
#pragma once

#include "engine/sampling.h"

#include <cfloat>
#include <cstddef>
#include <cmath>
#include <cstdint>
#include <cstring>

// exp(x) for x <= 0 within 2 ulp (range reduction by ln 2 in two parts, degree-6 polynomial);
// arguments below -87 give exp(-87) (~1.6e-38) — negligible next to the maximum's 1.
inline float sampling_exp(float x) {
    x = x < -87.0f ? -87.0f : x;
    x = x > 88.0f ? 88.0f : x;
    const float shifter = 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer
    const float n = (x * 1.44269504088896341f + shifter) - shifter;
    const float r = (x - n * 0.693359375f) + n * 2.12194440e-4f;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * r * r + r + 1.0f;
    const int32_t bits = (static_cast<int32_t>(n) + 127) << 23;
    float scale;
    std::memcpy(&scale, &bits, sizeof scale);
    return p * scale;
}

inline bool sampling_finite(float x) { return x >= -FLT_MAX && x <= FLT_MAX; }  // false for NaN

// The largest finite entry of row[0, n), -INFINITY when there is none.
float sampling_row_max(const float * row, int32_t n);

// Sum of exp((row[i] - m) * scale) over the finite entries with row[i] >= floor (in float
// within blocks of 1024 entries, in double across blocks).
double sampling_row_exp_sum(const float * row, int32_t n, float m, float scale, float floor);

// Sets c[i].p = exp((c[i].logit - m) * scale) for finite logits <= m; returns their sum (summed
// like sampling_row_exp_sum).
double sampling_candidates_exp(sampling_candidate * c, size_t n, float m, float scale);
