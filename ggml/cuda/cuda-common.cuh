// ggml/cuda/cuda-common.cuh — what every CUDA file of the backend shares (internal).
//
// Usage (an op's launcher):
//   void ggml_cuda_op_scale(ggml_cuda_context & ctx, ggml_tensor * dst) {
//       float * tmp = static_cast<float *>(ggml_cuda_scratch(ctx, n * sizeof(float), 0));
//       if (!tmp) return;                         // ctx.failed is set
//       my_kernel<<<blocks, threads, 0, ctx.stream>>>(…, ctx.error_flag);
//       GGML_CUDA_CHECK(cudaGetLastError());   // a failure marks ctx.failed; the graph fails
//   }
//
// Errors: every CUDA runtime and cuBLAS call goes through GGML_CUDA_CHECK / GGML_CUBLAS_CHECK,
// which print the call, file, line and message once and return false on failure; inside
// graph_compute a failure also sets ctx.failed (of the context whose graph_compute runs on
// this thread), and graph_compute then returns GGML_STATUS_FAILED. Nothing aborts the process.
// While a graph is being captured (ctx.capturing) failures are not printed: the capture is
// dropped and the graph runs again without capture, where a real error shows.
//
// Data errors (an index out of range) are found on the device: a kernel that meets one sets
// *ctx.error_flag to non-zero (and never writes out of bounds); graph_compute reads the flag
// back after graphs that contain GET_ROWS, SET_ROWS, MUL_MAT_ID or ROPE with frequency factors
// (ggml_cuda_op_checks_data) and then fails.
//
// CUDA graph capture: launchers must queue work on ctx.stream only, never synchronize the host
// with it, never allocate device memory themselves (use ggml_cuda_scratch), and never call
// cublasSetStream / cublasSetWorkspace (the backend binds ctx.cublas to ctx.stream and gives it
// a fixed workspace once). Launch parameters may depend only on the tensors' types, shapes,
// strides, op parameters and data addresses (the key of a captured graph) and on ctx.
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

constexpr int ggml_cuda_scratch_slots = 4;

// One backend (stream) on one device. Ops run in order on `stream`.
struct ggml_cuda_context {
    int device = 0;
    cudaStream_t stream = nullptr;
    cublasHandle_t cublas = nullptr;  // bound to stream
    int cc = 0;                       // compute capability, major * 10 + minor (90: sm_90)
    bool failed = false;              // a call failed during the current graph_compute
    int sm_count = 0;                 // streaming multiprocessors of the device
    int * error_flag = nullptr;       // device int: kernels set it non-zero on a data error
    bool capturing = false;           // ops are being captured into a CUDA graph

    // The scratch pool (ggml_cuda_scratch). generation counts reallocations: captured graphs
    // that hold an older address are dropped when it changes.
    void * scratch_ptr[ggml_cuda_scratch_slots] = {};
    size_t scratch_size[ggml_cuda_scratch_slots] = {};
    uint64_t scratch_generation = 0;
};

// Device scratch memory of at least `bytes`, valid until the op that asked returns (ops on one
// stream run one after another, so the next op may reuse it) or asks the same slot for more.
// `slot` 0..3 gives independent regions for an op that needs several at once. nullptr (and
// ctx.failed) when it cannot be had.
// The memory of a slot only grows, and never while a CUDA graph is being captured (the first,
// uncaptured run of a graph sizes it), so captured graphs keep valid addresses.
void * ggml_cuda_scratch(ggml_cuda_context & ctx, size_t bytes, int slot);

// Marks the context failed and returns false (for launchers that meet an unsupported case).
bool ggml_cuda_fail(ggml_cuda_context & ctx, const char * why);

// Elements of a quantized tensor a kernel may read past the end of its last row: the device
// buffer type pads every quantized tensor's allocation so that the row holding its last element
// can be read as if it had a multiple of this many elements (the padding is zeroed).
constexpr int64_t ggml_cuda_row_padding = 512;

constexpr int ggml_cuda_warp_size = 32;
inline int64_t ggml_cuda_ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
