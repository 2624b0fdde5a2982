// MUL_MAT reference kernels in portable C++ (no GEMM: every column count takes the dot path).
// F16 and BF16 weights are widened to F32 a chunk at a time; the activations stay F32.
#include "mul-mat.h"

#include <cstddef>
#include <cstdint>

namespace {

constexpr int64_t k_chunk = 256;  // elements of a weight row widened at a time

// Eight partial sums so the compiler can keep several multiply-adds in flight.
float dot_f32(const float * x, const float * y, int64_t n) {
    float s[8] = {};
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        for (int l = 0; l < 8; ++l) s[l] += x[i + l] * y[i + l];
    }
    float t = 0.0f;
    for (; i < n; ++i) t += x[i] * y[i];
    return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7])) + t;
}

void widen_f32(const void * src, float * dst, int64_t n) {
    const float * s = static_cast<const float *>(src);
    for (int64_t i = 0; i < n; ++i) dst[i] = s[i];
}
void widen_f16(const void * src, float * dst, int64_t n) {
    ggml_fp16_to_fp32_row(static_cast<const ggml_fp16_t *>(src), dst, n);
}
void widen_bf16(const void * src, float * dst, int64_t n) {
    ggml_bf16_to_fp32_row(static_cast<const ggml_bf16_t *>(src), dst, n);
}

template <void (*Widen)(const void *, float *, int64_t), size_t Size>
void dot_rows(int64_t k, const void * a, size_t lda, int64_t nr, const void * b, size_t ldb, int64_t nc, float * y,
              int64_t ldy) {
    float buf[k_chunk];
    const char * pa = static_cast<const char *>(a);
    const char * pb = static_cast<const char *>(b);
    for (int64_t r = 0; r < nr; ++r) {
        for (int64_t c = 0; c < nc; ++c) y[c * ldy + r] = 0.0f;
        for (int64_t k0 = 0; k0 < k; k0 += k_chunk) {
            const int64_t kn = k - k0 < k_chunk ? k - k0 : k_chunk;
            Widen(pa + r * lda + size_t(k0) * Size, buf, kn);
            for (int64_t c = 0; c < nc; ++c) {
                y[c * ldy + r] += dot_f32(buf, reinterpret_cast<const float *>(pb + c * ldb) + k0, kn);
            }
        }
    }
}

// Every weight type takes the dot kernels (no GEMM); the quantized activations come from the
// reference quantizers of the type traits.
constexpr ggml_mul_mat_kernels make_kernels() {
    ggml_mul_mat_kernels t;
    t.name = "scalar";
    t.set(GGML_TYPE_F32, {.dot = dot_rows<widen_f32, 4>});
    t.set(GGML_TYPE_F16, {.dot = dot_rows<widen_f16, 2>});
    t.set(GGML_TYPE_BF16, {.dot = dot_rows<widen_bf16, 2>});
    ggml_mul_mat_set_quant(t, {
        .q4_0 = ggml_dot_q4_0_q8_0_scalar,
        .q4_1 = ggml_dot_q4_1_q8_1_scalar,
        .q5_0 = ggml_dot_q5_0_q8_0_scalar,
        .q5_1 = ggml_dot_q5_1_q8_1_scalar,
        .q8_0 = ggml_dot_q8_0_q8_0_scalar,
        .q2_K = ggml_dot_q2_K_q8_K_scalar,
        .q3_K = ggml_dot_q3_K_q8_K_scalar,
        .q4_K = ggml_dot_q4_K_q8_K_scalar,
        .q5_K = ggml_dot_q5_K_q8_K_scalar,
        .q6_K = ggml_dot_q6_K_q8_K_scalar,
        .iq4_nl = ggml_dot_iq4_nl_q8_0_scalar,
        .iq4_xs = ggml_dot_iq4_xs_q8_K_scalar,
        .mxfp4 = ggml_dot_mxfp4_q8_0_scalar,
    });
    return t;
}

}  // namespace

constinit const ggml_mul_mat_kernels ggml_mul_mat_kernels_scalar = make_kernels();
