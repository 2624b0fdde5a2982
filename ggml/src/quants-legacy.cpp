// The 32-element quantized formats Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q8_1: dequantization
// (bit-exact with the readers of the established engines) and the round-to-nearest reference
// quantizers (the same blocks as the established reference quantizers on finite inputs).
//
// Formula shapes matter for bit-exactness: y = float(q - zero) * d for the symmetric types and
// y = float(q) * d + m (a multiply, then an add; the build does not contract to FMA) for the
// _1 types, d and m widened from fp16 first.
//
// Inputs that cannot be represented (values beyond the fp16 range of the scale, inf, NaN) give
// finite blocks: scales are clamped to +-65504 and NaN elements quantize to the lowest level.
#include "quants-legacy-impl.h"

#include "ggml/quants.h"

#include <cmath>

namespace {

constexpr int k_block = quants_legacy_block;

uint32_t load_u32_le(const uint8_t * p) {
    return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
}

// 1/d, or 0 when d is 0 or so small that 1/d overflows.
float inverse_or_zero(float d) {
    if (d == 0.0f) return 0.0f;
    const float id = 1.0f / d;
    return std::isfinite(id) ? id : 0.0f;
}

// Clamps v into [lo, hi]; NaN gives lo.
float clamp_level(float v, float lo, float hi) {
    if (!(v >= lo)) return lo;
    return v > hi ? hi : v;
}

// The element of largest magnitude, with its sign (the first one on ties).
float signed_absmax(const float * x) {
    float amax = 0.0f;
    float max = 0.0f;
    for (int j = 0; j < k_block; ++j) {
        const float a = std::fabs(x[j]);
        if (amax < a) {
            amax = a;
            max = x[j];
        }
    }
    return max;
}

float absmax(const float * x) {
    float amax = 0.0f;
    for (int j = 0; j < k_block; ++j) {
        const float a = std::fabs(x[j]);
        amax = a > amax ? a : amax;  // NaN never compares greater: ignored
    }
    return amax;
}

void min_max(const float * x, float & min, float & max) {
    min = INFINITY;
    max = -INFINITY;
    for (int j = 0; j < k_block; ++j) {
        min = x[j] < min ? x[j] : min;  // NaN ignored
        max = x[j] > max ? x[j] : max;
    }
    if (min > max) min = max = 0.0f;  // all NaN
}

// Symmetric types: d = max / -zero (the largest magnitude maps to level 0), levels
// trunc(x / d + zero + 0.5) clamped to 0..2*zero-1.
void quantize_block_symmetric_ref(const float * x, int zero, ggml_fp16_t & d_out, uint8_t * q) {
    const float d = quants_legacy_clamp_fp16_range(signed_absmax(x) / float(-zero));
    const float id = inverse_or_zero(d);
    d_out = ggml_fp32_to_fp16(d);
    const float top = float(2 * zero - 1);
    for (int j = 0; j < k_block; ++j) q[j] = uint8_t(clamp_level(x[j] * id + (float(zero) + 0.5f), 0.0f, top));
}

// Types with an offset: m = min, d = (max - min) / nmax, levels trunc((x - m) / d + 0.5).
void quantize_block_offset_ref(const float * x, int nmax, ggml_fp16_t & d_out, ggml_fp16_t & m_out, uint8_t * q) {
    float min, max;
    min_max(x, min, max);
    min = quants_legacy_clamp_fp16_range(min);
    const float d = quants_legacy_clamp_fp16_range((max - min) / float(nmax));
    const float id = inverse_or_zero(d);
    d_out = ggml_fp32_to_fp16(d);
    m_out = ggml_fp32_to_fp16(min);
    for (int j = 0; j < k_block; ++j) q[j] = uint8_t(clamp_level((x[j] - min) * id + 0.5f, 0.0f, float(nmax)));
}

// Q8_0 / Q8_1: d = amax / 127, q = round(x / d) (half away from zero). Returns the float d.
float quantize_block_q8_ref(const float * x, ggml_fp16_t & d_out, int8_t * q, int & sum) {
    const float d = quants_legacy_clamp_fp16_range(absmax(x) / 127.0f);
    const float id = inverse_or_zero(d);
    d_out = ggml_fp32_to_fp16(d);
    sum = 0;
    for (int j = 0; j < k_block; ++j) {
        q[j] = int8_t(std::round(clamp_level(x[j] * id, -127.0f, 127.0f)));
        sum += q[j];
    }
    return d;
}

}  // namespace

void quants_legacy_pack_nibbles(const uint8_t * q, uint8_t * qs) {
    for (int j = 0; j < k_block / 2; ++j) qs[j] = uint8_t((q[j] & 0x0F) | (q[j + k_block / 2] & 0x0F) << 4);
}

void quants_legacy_pack_high_bits(const uint8_t * q, uint8_t * qh) {
    uint32_t h = 0;
    for (int j = 0; j < k_block; ++j) h |= uint32_t((q[j] >> 4) & 1u) << j;
    for (int b = 0; b < 4; ++b) qh[b] = uint8_t(h >> (8 * b));
}

float quants_legacy_clamp_fp16_range(float v) {
    if (std::isnan(v)) return 0.0f;
    if (v > quants_legacy_fp16_max) return quants_legacy_fp16_max;
    if (v < -quants_legacy_fp16_max) return -quants_legacy_fp16_max;
    return v;
}

// ---- dequantization ----

void ggml_dequantize_row_q4_0(const block_q4_0 * x, float * y, int64_t k) {
    for (int64_t i = 0; i < k / QK4_0; ++i, y += QK4_0) {
        const float d = ggml_fp16_to_fp32(x[i].d);
        for (int j = 0; j < QK4_0 / 2; ++j) {
            y[j] = float(int(x[i].qs[j] & 0x0F) - 8) * d;
            y[j + QK4_0 / 2] = float(int(x[i].qs[j] >> 4) - 8) * d;
        }
    }
}

void ggml_dequantize_row_q4_1(const block_q4_1 * x, float * y, int64_t k) {
    for (int64_t i = 0; i < k / QK4_1; ++i, y += QK4_1) {
        const float d = ggml_fp16_to_fp32(x[i].d);
        const float m = ggml_fp16_to_fp32(x[i].m);
        for (int j = 0; j < QK4_1 / 2; ++j) {
            y[j] = float(x[i].qs[j] & 0x0F) * d + m;
            y[j + QK4_1 / 2] = float(x[i].qs[j] >> 4) * d + m;
        }
    }
}

void ggml_dequantize_row_q5_0(const block_q5_0 * x, float * y, int64_t k) {
    for (int64_t i = 0; i < k / QK5_0; ++i, y += QK5_0) {
        const float d = ggml_fp16_to_fp32(x[i].d);
        const uint32_t qh = load_u32_le(x[i].qh);
        for (int j = 0; j < QK5_0 / 2; ++j) {
            const int lo = int((x[i].qs[j] & 0x0F) | ((qh >> j) & 1u) << 4);
            const int hi = int((x[i].qs[j] >> 4) | ((qh >> (j + QK5_0 / 2)) & 1u) << 4);
            y[j] = float(lo - 16) * d;
            y[j + QK5_0 / 2] = float(hi - 16) * d;
        }
    }
}

void ggml_dequantize_row_q5_1(const block_q5_1 * x, float * y, int64_t k) {
    for (int64_t i = 0; i < k / QK5_1; ++i, y += QK5_1) {
        const float d = ggml_fp16_to_fp32(x[i].d);
        const float m = ggml_fp16_to_fp32(x[i].m);
        const uint32_t qh = load_u32_le(x[i].qh);
        for (int j = 0; j < QK5_1 / 2; ++j) {
            const uint32_t lo = (x[i].qs[j] & 0x0Fu) | ((qh >> j) & 1u) << 4;
            const uint32_t hi = (x[i].qs[j] >> 4) | ((qh >> (j + QK5_1 / 2)) & 1u) << 4;
            y[j] = float(lo) * d + m;
            y[j + QK5_1 / 2] = float(hi) * d + m;
        }
    }
}

void ggml_dequantize_row_q8_0(const block_q8_0 * x, float * y, int64_t k) {
    for (int64_t i = 0; i < k / QK8_0; ++i, y += QK8_0) {
        const float d = ggml_fp16_to_fp32(x[i].d);
        for (int j = 0; j < QK8_0; ++j) y[j] = float(x[i].qs[j]) * d;
    }
}

void ggml_dequantize_row_q8_1(const block_q8_1 * x, float * y, int64_t k) {
    for (int64_t i = 0; i < k / QK8_1; ++i, y += QK8_1) {
        const float d = ggml_fp16_to_fp32(x[i].d);
        for (int j = 0; j < QK8_1; ++j) y[j] = float(x[i].qs[j]) * d;
    }
}

// ---- reference quantization ----

void ggml_quantize_row_q4_0_ref(const float * x, block_q4_0 * y, int64_t k) {
    uint8_t q[k_block];
    for (int64_t i = 0; i < k / QK4_0; ++i, x += QK4_0) {
        quantize_block_symmetric_ref(x, 8, y[i].d, q);
        quants_legacy_pack_nibbles(q, y[i].qs);
    }
}

void ggml_quantize_row_q4_1_ref(const float * x, block_q4_1 * y, int64_t k) {
    uint8_t q[k_block];
    for (int64_t i = 0; i < k / QK4_1; ++i, x += QK4_1) {
        quantize_block_offset_ref(x, 15, y[i].d, y[i].m, q);
        quants_legacy_pack_nibbles(q, y[i].qs);
    }
}

void ggml_quantize_row_q5_0_ref(const float * x, block_q5_0 * y, int64_t k) {
    uint8_t q[k_block];
    for (int64_t i = 0; i < k / QK5_0; ++i, x += QK5_0) {
        quantize_block_symmetric_ref(x, 16, y[i].d, q);
        quants_legacy_pack_nibbles(q, y[i].qs);
        quants_legacy_pack_high_bits(q, y[i].qh);
    }
}

void ggml_quantize_row_q5_1_ref(const float * x, block_q5_1 * y, int64_t k) {
    uint8_t q[k_block];
    for (int64_t i = 0; i < k / QK5_1; ++i, x += QK5_1) {
        quantize_block_offset_ref(x, 31, y[i].d, y[i].m, q);
        quants_legacy_pack_nibbles(q, y[i].qs);
        quants_legacy_pack_high_bits(q, y[i].qh);
    }
}

void ggml_quantize_row_q8_0_ref(const float * x, block_q8_0 * y, int64_t k) {
    int sum = 0;
    for (int64_t i = 0; i < k / QK8_0; ++i, x += QK8_0) quantize_block_q8_ref(x, y[i].d, y[i].qs, sum);
}

void ggml_quantize_row_q8_1_ref(const float * x, block_q8_1 * y, int64_t k) {
    int sum = 0;
    for (int64_t i = 0; i < k / QK8_1; ++i, x += QK8_1) {
        const float d = quantize_block_q8_ref(x, y[i].d, y[i].qs, sum);
        y[i].s = ggml_fp32_to_fp16(quants_legacy_clamp_fp16_range(float(sum) * d));
    }
}
