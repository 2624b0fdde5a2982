// Error checks, the current context of a thread's graph_compute, and the scratch pool
// (cuda-common.cuh, backend-cuda.h).
#include "backend-cuda.h"

#include <cstdio>

namespace {

// The context whose graph_compute runs on this thread (nullptr outside one). Thread-local and
// set only by ggml_cuda_context_scope, so two backends on two threads never see each other's.
thread_local ggml_cuda_context * t_current_ctx = nullptr;

// Marks the current context failed; true when the failure should be printed (not while capturing:
// a failed capture is dropped and the graph runs again without it).
bool note_failure() {
    if (!t_current_ctx) return true;
    t_current_ctx->failed = true;
    return !t_current_ctx->capturing;
}

size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

}  // namespace

bool ggml_cuda_check(cudaError_t err, const char * call, const char * file, int line) {
    if (err == cudaSuccess) return true;
    // At process exit the runtime may be gone before the last buffers and backends: nothing to say.
    if (err == cudaErrorCudartUnloading) return false;
    if (note_failure()) {
        std::fprintf(stderr, "inferd: CUDA error %s (%s) in %s at %s:%d\n", cudaGetErrorName(err),
                     cudaGetErrorString(err), call, file, line);
    }
    return false;
}

bool ggml_cuda_check_cublas(cublasStatus_t st, const char * call, const char * file, int line) {
    if (st == CUBLAS_STATUS_SUCCESS) return true;
    if (note_failure()) {
        std::fprintf(stderr, "inferd: cuBLAS error %s (%s) in %s at %s:%d\n", cublasGetStatusName(st),
                     cublasGetStatusString(st), call, file, line);
    }
    return false;
}

bool ggml_cuda_fail(ggml_cuda_context & ctx, const char * why) {
    ctx.failed = true;
    if (!ctx.capturing) std::fprintf(stderr, "inferd: CUDA%d: %s\n", ctx.device, why);
    return false;
}

ggml_cuda_context_scope::ggml_cuda_context_scope(ggml_cuda_context & ctx) : prev_(t_current_ctx) {
    t_current_ctx = &ctx;
}

ggml_cuda_context_scope::~ggml_cuda_context_scope() { t_current_ctx = prev_; }

bool ggml_cuda_set_device(int device) {
    int current = -1;
    if (cudaGetDevice(&current) == cudaSuccess && current == device) return true;
    return GGML_CUDA_CHECK(cudaSetDevice(device));
}

void * ggml_cuda_scratch(ggml_cuda_context & ctx, size_t bytes, int slot) {
    if (slot < 0 || slot >= ggml_cuda_scratch_slots) {
        ggml_cuda_fail(ctx, "scratch slot out of range");
        return nullptr;
    }
    if (bytes == 0) bytes = 1;
    if (bytes <= ctx.scratch_size[slot]) return ctx.scratch_ptr[slot];
    if (ctx.capturing) {
        // The uncaptured run of this graph did not need as much: the capture is dropped.
        ctx.failed = true;
        return nullptr;
    }
    // Work queued earlier may still use the old memory; captured graphs that hold its address
    // are dropped before their next replay (scratch_generation).
    if (!GGML_CUDA_CHECK(cudaStreamSynchronize(ctx.stream))) return nullptr;
    if (ctx.scratch_ptr[slot]) GGML_CUDA_CHECK(cudaFree(ctx.scratch_ptr[slot]));
    ctx.scratch_ptr[slot] = nullptr;
    ctx.scratch_size[slot] = 0;
    ++ctx.scratch_generation;
    // A quarter more than asked, in 2 MiB steps: a graph whose sizes creep up grows it rarely.
    const size_t size = round_up(bytes + bytes / 4, size_t(2) << 20);
    void * p = nullptr;
    if (!GGML_CUDA_CHECK(cudaMalloc(&p, size))) {
        ctx.failed = true;
        return nullptr;
    }
    ctx.scratch_ptr[slot] = p;
    ctx.scratch_size[slot] = size;
    return p;
}

void ggml_cuda_scratch_free(ggml_cuda_context & ctx) {
    for (int i = 0; i < ggml_cuda_scratch_slots; ++i) {
        if (ctx.scratch_ptr[i]) GGML_CUDA_CHECK(cudaFree(ctx.scratch_ptr[i]));
        ctx.scratch_ptr[i] = nullptr;
        ctx.scratch_size[i] = 0;
    }
}
