// ggml/cpu/ops-attn-scalar.cpp — the scalar inner loops of FLASH_ATTN_EXT (see ops-attn.h): the
// reference path, with dot products in double. It scores row by row (no group_tile), so its K
// tiles stay rows and it needs no transposed layout.
#include "cpu/ops-attn.h"
#include "ggml/ggml.h"
#include "ggml/quants.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace {

float attn_scores_scalar(const float * q, const float * k, int64_t dp, int64_t n, float scale, const float * mask,
                         float * s) {
    float mx = -INFINITY;
    for (int64_t t = 0; t < n; ++t) {
        const float * kr = k + t * dp;
        double sum = 0.0;
        for (int64_t d = 0; d < dp; ++d) sum += double(q[d]) * double(kr[d]);
        s[t] = float(sum) * scale + (mask ? mask[t] : 0.0f);
        mx = s[t] > mx ? s[t] : mx;
    }
    return mx;
}

float attn_scores_softcap_scalar(const float * q, const float * k, int64_t dp, int64_t n, float scale, float cap,
                                 const float * mask, float * s) {
    float mx = -INFINITY;
    for (int64_t t = 0; t < n; ++t) {
        const float * kr = k + t * dp;
        double sum = 0.0;
        for (int64_t d = 0; d < dp; ++d) sum += double(q[d]) * double(kr[d]);
        s[t] = float(double(cap) * std::tanh(double(float(sum) * scale))) + (mask ? mask[t] : 0.0f);
        mx = s[t] > mx ? s[t] : mx;
    }
    return mx;
}

void attn_accumulate_scalar(float * acc, const float * v, int64_t dvp, const float * w, int64_t n) {
    for (int64_t t = 0; t < n; ++t) {
        if (w[t] == 0.0f) continue;
        const float * vr = v + t * dvp;
        for (int64_t d = 0; d < dvp; ++d) acc[d] += w[t] * vr[d];
    }
}

void attn_rows_f16_to_f32_scalar(const uint8_t * base, size_t stride, const int64_t * cells, int64_t n, int64_t d,
                                 float * y, int64_t dp) {
    for (int64_t t = 0; t < n; ++t) {
        ggml_fp16_to_fp32_row(reinterpret_cast<const ggml_fp16_t *>(base + size_t(cells[t]) * stride), y + t * dp, d);
        std::fill(y + t * dp + d, y + (t + 1) * dp, 0.0f);
    }
}

void attn_rows_q8_0_to_f32_scalar(const uint8_t * base, size_t stride, const int64_t * cells, int64_t n, int64_t d,
                                  float * y, int64_t dp) {
    for (int64_t t = 0; t < n; ++t) {
        ggml_dequantize_row_q8_0(reinterpret_cast<const block_q8_0 *>(base + size_t(cells[t]) * stride), y + t * dp, d);
    }
}

void attn_mask_bits_scalar(const void * row, bool f16, int64_t n, uint64_t * bits) {
    for (int64_t w = 0; w * 64 < n; ++w) bits[w] = 0;
    for (int64_t j = 0; j < n; ++j) {
        bool visible;
        if (f16) {
            uint16_t h;
            std::memcpy(&h, static_cast<const char *>(row) + size_t(j) * 2, 2);
            visible = h != 0xfc00;
        } else {
            float x;
            std::memcpy(&x, static_cast<const char *>(row) + size_t(j) * 4, 4);
            visible = x != -INFINITY;
        }
        if (visible) bits[j / 64] |= uint64_t(1) << (j % 64);
    }
}

const ggml_cpu_attn_fns attn_fns_scalar = {"scalar",
                                           attn_scores_scalar,
                                           attn_scores_softcap_scalar,
                                           attn_accumulate_scalar,
                                           attn_rows_f16_to_f32_scalar,
                                           attn_rows_q8_0_to_f32_scalar,
                                           attn_mask_bits_scalar,
                                           nullptr,
                                           nullptr,
                                           nullptr};

}  // namespace

const ggml_cpu_attn_fns & ggml_cpu_attn_fns_scalar() { return attn_fns_scalar; }
