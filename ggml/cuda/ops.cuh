// ggml/cuda/ops.cuh — the CUDA op launchers and their capability checks (internal).
//
// For each op: ggml_cuda_op_<op>(ctx, dst) queues the op on ctx.stream (sources and dst in
// device memory of ctx.device; op parameters read through the typed getters of ggml.h) and
// ggml_cuda_<op>_supported(dst) says whether it handles these types, shapes and strides — the
// device's supports_op answers with it, honestly: an op it says yes to must run correctly.
// The dispatch on dst->op is ggml_cuda_compute_forward (ops-dispatch.cpp).
#pragma once

#include "cuda-common.cuh"

// Queues dst's op; false when the op is not supported (nothing queued). Failures of the calls
// it makes set ctx.failed.
bool ggml_cuda_compute_forward(ggml_cuda_context & ctx, ggml_tensor * dst);
// Whether ggml_cuda_compute_forward handles dst (metadata ops: true, nothing to do).
bool ggml_cuda_supports_op(const ggml_tensor * dst);
// Whether dst's op can find a data error on the device (an index out of range, an invalid RoPE
// frequency factor) and so sets *ctx.error_flag: graph_compute reads the flag back after such
// graphs (see cuda-common.cuh).
bool ggml_cuda_op_checks_data(const ggml_tensor * dst);

// ---- matrix products and attention (mul-mat*.cu, flash-attn.cu) ----
// MUL_MAT: quantized mat-vec kernels for few columns (every weight type; dequantized in
// registers), cuBLAS GEMM (F16/BF16 inputs, F32 accumulation) on dequantized tiles for many.
void ggml_cuda_op_mul_mat(ggml_cuda_context & ctx, ggml_tensor * dst);
bool ggml_cuda_mul_mat_supported(const ggml_tensor * dst);
// MUL_MAT_ID: the tokens of a batch grouped by expert, each expert as one product; an id out of
// range sets *ctx.error_flag (cuda-common.cuh).
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
// Data errors (GET_ROWS / SET_ROWS index out of range, ROPE frequency factor not finite and > 0)
// set *ctx.error_flag: GET_ROWS writes zeros for such a row, SET_ROWS skips it, ROPE writes
// nothing. Sources and dst may have any strides unless a _supported function says otherwise.
void ggml_cuda_op_get_rows(ggml_cuda_context & ctx, ggml_tensor * dst);  // ops-rows.cu
bool ggml_cuda_get_rows_supported(const ggml_tensor * dst);
void ggml_cuda_op_set_rows(ggml_cuda_context & ctx, ggml_tensor * dst);  // ops-rows.cu
bool ggml_cuda_set_rows_supported(const ggml_tensor * dst);
void ggml_cuda_op_cpy(ggml_cuda_context & ctx, ggml_tensor * dst);  // CPY and CONT (ops-copy.cu)
bool ggml_cuda_cpy_supported(const ggml_tensor * dst);
void ggml_cuda_op_binary(ggml_cuda_context & ctx, ggml_tensor * dst);  // ADD, MUL, DIV (ops-elementwise.cu)
bool ggml_cuda_binary_supported(const ggml_tensor * dst);
void ggml_cuda_op_unary(ggml_cuda_context & ctx, ggml_tensor * dst);   // SCALE, SILU, GELU, TANH, SWIGLU
bool ggml_cuda_unary_supported(const ggml_tensor * dst);
void ggml_cuda_op_norm(ggml_cuda_context & ctx, ggml_tensor * dst);    // RMS_NORM, NORM (ops-norm.cu)
bool ggml_cuda_norm_supported(const ggml_tensor * dst);
void ggml_cuda_op_rope(ggml_cuda_context & ctx, ggml_tensor * dst);    // ops-rope.cu
bool ggml_cuda_rope_supported(const ggml_tensor * dst);
void ggml_cuda_op_soft_max(ggml_cuda_context & ctx, ggml_tensor * dst);  // ops-softmax.cu
bool ggml_cuda_soft_max_supported(const ggml_tensor * dst);
void ggml_cuda_op_concat(ggml_cuda_context & ctx, ggml_tensor * dst);  // ops-copy.cu
bool ggml_cuda_concat_supported(const ggml_tensor * dst);
void ggml_cuda_op_argmax(ggml_cuda_context & ctx, ggml_tensor * dst);  // ops-softmax.cu
bool ggml_cuda_argmax_supported(const ggml_tensor * dst);
void ggml_cuda_op_top_k(ggml_cuda_context & ctx, ggml_tensor * dst);   // ops-top-k.cu
bool ggml_cuda_top_k_supported(const ggml_tensor * dst);
void ggml_cuda_op_sum_rows(ggml_cuda_context & ctx, ggml_tensor * dst);  // ops-norm.cu
bool ggml_cuda_sum_rows_supported(const ggml_tensor * dst);
