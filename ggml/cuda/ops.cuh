// ggml/cuda/ops.cuh — the CUDA op launchers and their capability checks (internal).
//
// For each op: ggml_cuda_op_<op>(ctx, dst) queues the op on ctx.stream (sources and dst in
// device memory of ctx.device; op parameters read through the typed getters of ggml.h) and
// ggml_cuda_<op>_supported(dst) says whether it handles these types, shapes and strides — the
// device's supports_op answers with it, honestly: an op it says yes to must run correctly.
// The dispatch on dst->op is ggml_cuda_compute_forward (backend-cuda.cu).
#pragma once

#include "cuda-common.cuh"

bool ggml_cuda_compute_forward(ggml_cuda_context & ctx, ggml_tensor * dst);
bool ggml_cuda_supports_op(const ggml_tensor * dst);

// ---- matrix products and attention (mul-mat*.cu, flash-attn.cu) ----
// MUL_MAT: quantized mat-vec kernels for few columns (every weight type; dequantized in
// registers), cuBLAS GEMM (F16/BF16 inputs, F32 accumulation) on dequantized tiles for many.
void ggml_cuda_op_mul_mat(ggml_cuda_context & ctx, ggml_tensor * dst);
bool ggml_cuda_mul_mat_supported(const ggml_tensor * dst);
// MUL_MAT_ID: the tokens of a batch grouped by expert, each expert as one product.
void ggml_cuda_op_mul_mat_id(ggml_cuda_context & ctx, ggml_tensor * dst);
bool ggml_cuda_mul_mat_id_supported(const ggml_tensor * dst);
// FLASH_ATTN_EXT: fused attention (online softmax, no score matrix), soft-cap, masks.
void ggml_cuda_op_flash_attn_ext(ggml_cuda_context & ctx, ggml_tensor * dst);
bool ggml_cuda_flash_attn_supported(const ggml_tensor * dst);
// Dequantize n elements of a row of `type` at src (device memory) into F16 at dst, on stream;
// for the GEMM path and get_rows. Every weight type of the CPU backend.
bool ggml_cuda_dequantize_to_f16(ggml_type type, const void * src, __half * dst, int64_t n_rows, int64_t n_per_row,
                                 size_t src_row_stride, cudaStream_t stream);
bool ggml_cuda_dequantize_to_f32(ggml_type type, const void * src, float * dst, int64_t n_rows, int64_t n_per_row,
                                 size_t src_row_stride, cudaStream_t stream);

// ---- everything else (ops-*.cu) ----
void ggml_cuda_op_get_rows(ggml_cuda_context & ctx, ggml_tensor * dst);
void ggml_cuda_op_set_rows(ggml_cuda_context & ctx, ggml_tensor * dst);
void ggml_cuda_op_cpy(ggml_cuda_context & ctx, ggml_tensor * dst);  // CPY and CONT
void ggml_cuda_op_binary(ggml_cuda_context & ctx, ggml_tensor * dst);  // ADD, MUL, DIV
void ggml_cuda_op_unary(ggml_cuda_context & ctx, ggml_tensor * dst);   // SCALE, SILU, GELU, TANH, SWIGLU
void ggml_cuda_op_norm(ggml_cuda_context & ctx, ggml_tensor * dst);    // RMS_NORM, NORM
void ggml_cuda_op_rope(ggml_cuda_context & ctx, ggml_tensor * dst);
void ggml_cuda_op_soft_max(ggml_cuda_context & ctx, ggml_tensor * dst);
void ggml_cuda_op_concat(ggml_cuda_context & ctx, ggml_tensor * dst);
void ggml_cuda_op_argmax(ggml_cuda_context & ctx, ggml_tensor * dst);
void ggml_cuda_op_top_k(ggml_cuda_context & ctx, ggml_tensor * dst);
void ggml_cuda_op_sum_rows(ggml_cuda_context & ctx, ggml_tensor * dst);
