// ggml/cuda/cuda-common.cuh — what every CUDA file of the backend shares (internal).
//
// Usage (an op's launcher):
//   void ggml_cuda_op_scale(ggml_cuda_context & ctx, ggml_tensor * dst) {
//       float * tmp = static_cast<float *>(ggml_cuda_scratch(ctx, n * sizeof(float), 0));
//       my_kernel<<<blocks, threads, 0, ctx.stream>>>(…);
//       GGML_CUDA_CHECK(cudaGetLastError());   // a failure marks ctx.failed; the graph fails
//   }
//
// Errors: every CUDA runtime and cuBLAS call goes through GGML_CUDA_CHECK / GGML_CUBLAS_CHECK,
// which print the call, file, line and message once and return false on failure; inside
// graph_compute a failure also sets ctx.failed, and graph_compute then returns
// GGML_STATUS_FAILED. Nothing aborts the process.
#pragma once

#include "ggml/ggml.h"

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

bool ggml_cuda_check(cudaError_t err, const char * call, const char * file, int line);
bool ggml_cuda_check_cublas(cublasStatus_t st, const char * call, const char * file, int line);
#define GGML_CUDA_CHECK(call) ggml_cuda_check((call), #call, __FILE__, __LINE__)
#define GGML_CUBLAS_CHECK(call) ggml_cuda_check_cublas((call), #call, __FILE__, __LINE__)

// One backend (stream) on one device. Ops run in order on `stream`.
struct ggml_cuda_context {
    int device = 0;
    cudaStream_t stream = nullptr;
    cublasHandle_t cublas = nullptr;  // bound to stream
    int cc = 0;                       // compute capability, major * 10 + minor (90: sm_90)
    bool failed = false;              // a call failed during the current graph_compute
};

// Device scratch memory of at least `bytes`, valid until the op that asked returns (ops on one
// stream run one after another, so the next op may reuse it). `slot` 0..3 gives independent
// regions for an op that needs several at once. nullptr (and ctx.failed) when it cannot be had.
// The memory of a slot only grows, and never while a CUDA graph is being captured (the first,
// uncaptured run of a graph sizes it), so captured graphs keep valid addresses.
void * ggml_cuda_scratch(ggml_cuda_context & ctx, size_t bytes, int slot);

// Marks the context failed and returns false (for launchers that meet an unsupported case).
bool ggml_cuda_fail(ggml_cuda_context & ctx, const char * why);

constexpr int ggml_cuda_warp_size = 32;
inline int64_t ggml_cuda_ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
