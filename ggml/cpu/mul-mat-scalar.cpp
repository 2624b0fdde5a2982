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

}  // namespace

extern const ggml_mul_mat_kernels ggml_mul_mat_kernels_scalar = {
    /*name*/ "scalar",
    /*dot_vec_type*/ {GGML_TYPE_F32, GGML_TYPE_F32, GGML_TYPE_F32, GGML_MUL_MAT_QUANT_VEC_TYPES},
    /*dot*/ {dot_rows<widen_f32, 4>, dot_rows<widen_f16, 2>, dot_rows<widen_bf16, 2>,
            GGML_MUL_MAT_LEGACY_DOTS(scalar), GGML_MUL_MAT_K_DOTS(scalar), GGML_MUL_MAT_IQ_DOTS(scalar)},
    /*dot_vec_from_f32*/ {nullptr, nullptr, nullptr, GGML_MUL_MAT_QUANT_ACT(nullptr, nullptr, nullptr)},
    /*gemm_vec_type*/ {GGML_TYPE_F32, GGML_TYPE_F32, GGML_TYPE_F32, GGML_MUL_MAT_QUANT_F32},
    /*gemm_kpair*/ {1, 1, 1, GGML_MUL_MAT_QUANT_ZERO},
    /*gemm*/ {nullptr, nullptr, nullptr, GGML_MUL_MAT_QUANT_NONE},
    /*gemm_pack*/ nullptr,
    /*gemm_nr*/ 1,
    /*gemm_mc*/ 1,
    /*gemm_scratch*/ 0,
    /*gemm_min_n*/ INT64_MAX,
};
