// Internal helpers of the K-quant formats (Q2_K … Q6_K, Q8_K), shared by the dequantizers
// (quants-k-dequant.cpp), the scale searches (quants-k-search*.cpp) and the quantizers
// (quants-k-quantize.cpp).
//
// Usage:
//   quants_k_affine_fit fit;                                    // Q2_K, Q4_K, Q5_K
//   quants_k_fit_affine_superblock(x, w, quants_k_spec_q4_K, quants_k_effort::quality, &fit);
//   // fit.d, fit.dmin (fp16 bits), fit.sc[j], fit.m[j] (codes), fit.q[e] (levels 0..q_max)
//   quants_k_symmetric_fit sfit;                                // Q3_K, Q6_K
//   quants_k_fit_symmetric_superblock(x, w, quants_k_spec_q6_K, quants_k_effort::ref, &sfit);
//   // sfit.d (fp16 bits, may be negative), sfit.sc[j] (signed codes), sfit.q[e] (signed levels)
//
// The fits reproduce the decoder's float arithmetic when they measure the error, so the error
// they minimise is the error of the stored block.
#pragma once

#include <cstdint>

// Nearest integer to v (ties to even), clamped to [lo, hi]; NaN gives lo. No float-to-int
// conversion of out-of-range values (works for any v).
int quants_k_round_clamp(float v, int lo, int hi);
// The same as a float, branch-free so that loops over it vectorize (|lo|, |hi| < 2^22):
// adding 1.5 * 2^23 leaves the value rounded to an integer (ties to even), subtracting it
// gives that integer back exactly.
inline float quants_k_round_clamp_f(float v, float lo, float hi) {
    v = v > lo ? v : lo;  // NaN -> lo
    v = v < hi ? v : hi;
    return (v + 12582912.0f) - 12582912.0f;
}

// Sums in k_lanes independent accumulators (acc[i % k_lanes]), so that loops over 16 or 32
// values vectorize without reassociating a float sum.
inline constexpr int quants_k_lanes = 8;
inline float quants_k_lanes_sum(const float * acc) {
    float s = 0;
    for (int l = 0; l < quants_k_lanes; ++l) s += acc[l];
    return s;
}
// v as stored in an F16 super-block scale: clamped to the finite range (NaN gives 0), then
// rounded; returns the F16 bits and sets *decoded to the float the decoder will see.
uint16_t quants_k_to_fp16(float v, float * decoded);

// Q4_K / Q5_K: 12 bytes <-> 8 6-bit scales and 8 6-bit mins.
void quants_k_unpack_scale_min(const uint8_t * packed, uint8_t * sc, uint8_t * m);
void quants_k_pack_scale_min(const uint8_t * sc, const uint8_t * m, uint8_t * packed);
// Q3_K: 12 bytes <-> 16 signed 6-bit scales (-32..31).
void quants_k_unpack_q3_scales(const uint8_t * packed, int8_t * sc);
void quants_k_pack_q3_scales(const int8_t * sc, uint8_t * packed);

enum class quants_k_effort {
    ref,      // one search per sub-block, scales rounded to their codes, levels re-fitted
    quality,  // plus code search around the rounded codes and least-squares re-fits of d / dmin
};

// x[e] ~ (d * sc[e / sub_size]) * q[e] - dmin * m[e / sub_size], q in 0..q_max, codes 0..code_max.
struct quants_k_affine_spec {
    int sub_size;   // 16 (Q2_K) or 32 (Q4_K, Q5_K)
    int q_max;      // 3, 15, 31
    int code_max;   // 15 (Q2_K) or 63
    int n_grid;     // candidate inverse scales per sub-block search
    float grid_lo;  // first candidate: (q_max + grid_lo) / range, then steps of grid_step
    float grid_step;
};
struct quants_k_affine_fit {
    uint16_t d = 0, dmin = 0;
    uint8_t sc[16] = {}, m[16] = {};
    uint8_t q[256] = {};
    float err = 0;  // weighted squared error of the stored block
};

// x[e] ~ (d * sc[e / 16]) * q[e], q in q_min..q_max, codes code_min..code_max.
struct quants_k_symmetric_spec {
    int q_min, q_max;        // -4..3 (Q3_K), -32..31 (Q6_K)
    int code_min, code_max;  // -32..31 (Q3_K), -128..127 (Q6_K)
    int n_grid;              // candidate inverse scales on each side of the central one
    float grid_step;
};
struct quants_k_symmetric_fit {
    uint16_t d = 0;
    int8_t sc[16] = {};
    int8_t q[256] = {};
    float err = 0;  // weighted squared error of the stored block
};

extern const quants_k_affine_spec quants_k_spec_q2_K;
extern const quants_k_affine_spec quants_k_spec_q4_K;
extern const quants_k_affine_spec quants_k_spec_q5_K;
extern const quants_k_symmetric_spec quants_k_spec_q3_K;
extern const quants_k_symmetric_spec quants_k_spec_q6_K;

// Fits one super-block of 256 values; w: 256 non-negative error weights.
void quants_k_fit_affine_superblock(const float * x, const float * w, const quants_k_affine_spec & spec,
                                    quants_k_effort effort, quants_k_affine_fit * out);
void quants_k_fit_symmetric_superblock(const float * x, const float * w, const quants_k_symmetric_spec & spec,
                                       quants_k_effort effort, quants_k_symmetric_fit * out);
