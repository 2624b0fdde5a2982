// ggml/cuda/mul-mat.cuh — what MUL_MAT and MUL_MAT_ID share (internal): the activation
// preparation kernels and the checks of weight types and layouts.
//
// Usage:
//   const mm_rows_src s = mm_rows_src_of(b);              // b's rows (dims 1..3) in order
//   int8_t * q = …; float2 * meta = …;                    // s.n_rows * k bytes, n_rows * k / 32 float2
//   mm_quantize_q8(s, q, meta, stream);                   // Q8 rows for the quantized mat-vec kernels
//   mm_convert_rows(s, static_cast<__half *>(x), stream); // dense F16 rows for a GEMM
#pragma once

#include "cuda-common.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

// The rows of an F32 tensor (any strides) in the order of dims 1, 2, 3: row r is
// (r % ne1, r / ne1 % ne2, r / (ne1 ne2)).
struct mm_rows_src {
    const char * data = nullptr;
    int64_t k = 0, ne1 = 1, ne2 = 1, n_rows = 0;
    size_t nb0 = 4, nb1 = 0, nb2 = 0, nb3 = 0;
};
mm_rows_src mm_rows_src_of(const ggml_tensor * t);

// Q8 rows: per 32 elements d = max |x| / 127, q = round(x / d), meta {d, d * sum(q)}; q holds
// n_rows rows of k bytes, meta n_rows rows of k / 32 (k % 32 == 0).
bool mm_quantize_q8(const mm_rows_src & s, int8_t * q, float2 * meta, cudaStream_t stream);
// Dense rows of k elements. F16 saturates at +-65504 (NaN stays NaN), so that large
// activations do not become infinities in the GEMM.
bool mm_convert_rows(const mm_rows_src & s, float * out, cudaStream_t stream);
bool mm_convert_rows(const mm_rows_src & s, __half * out, cudaStream_t stream);
bool mm_convert_rows(const mm_rows_src & s, __nv_bfloat16 * out, cudaStream_t stream);

// Bytes of Q8 activations for n_rows rows of k (int8 part rounded up to 16 bytes, then the meta).
inline size_t mm_q8_bytes(int64_t n_rows, int64_t k) {
    return (size_t(n_rows * k) + 15) / 16 * 16 + size_t(n_rows * (k / 32)) * sizeof(float2);
}
inline float2 * mm_q8_meta(int8_t * q, int64_t n_rows, int64_t k) {
    return reinterpret_cast<float2 *>(q + (size_t(n_rows * k) + 15) / 16 * 16);
}

// b's rows can be read in place as F32 rows at stride nb1 in mm_rows_src order.
bool mm_rows_dense_f32(const ggml_tensor * b);

// Weight tensor checks shared by MUL_MAT and MUL_MAT_ID: a type the kernels take, rows of whole
// blocks, elements (blocks) adjacent in a row, strides multiples of the element size.
bool mm_weights_supported(const ggml_tensor * a);

// Every row of a (all batches) starts 16-byte aligned.
bool mm_weights_aligned16(const ggml_tensor * a);

// The data of a, b and dst are aligned to their elements (float weights to their element size,
// F32 activations and results to 4 bytes): a misaligned access would fault on the device, so
// launchers check before queueing anything (ggml_cuda_fail otherwise).
bool mm_data_aligned(const ggml_tensor * a, const ggml_tensor * b, const ggml_tensor * dst);

// The activations of a mat-vec launch over weights a with n_cols columns per pass: b's rows
// as Q8 rows (quantized a; in place, quantized by the kernel, for one column of dense aligned
// rows) or F32 rows (in place when dense) in scratch slot 0; sets p's act_* fields, p.q8_fused
// and p.aligned16.
struct mmv_params;
bool mm_mat_vec_activations(ggml_cuda_context & ctx, const ggml_tensor * a, const ggml_tensor * b, mmv_params & p,
                            int64_t n_cols);

#if defined(__CUDACC__)
__device__ __forceinline__ const float * mm_rows_elem(const mm_rows_src & s, int64_t row, int64_t e) {
    const int64_t i1 = row % s.ne1, i2 = row / s.ne1 % s.ne2, i3 = row / (s.ne1 * s.ne2);
    return reinterpret_cast<const float *>(s.data + i1 * s.nb1 + i2 * s.nb2 + i3 * s.nb3 + e * s.nb0);
}
// F32 to F16, saturating at +-65504 (NaN stays NaN).
__device__ __forceinline__ __half mm_half_sat(float v) {
    return __float2half_rn(v != v ? v : fminf(fmaxf(v, -65504.0f), 65504.0f));
}
#endif
