// The CUDA backend: one stream on one device with a cuBLAS handle bound to it, events, and the
// asynchronous copies (graph_compute is in backend-cuda-graph.cpp).
#include "backend-cuda.h"

#include <cstdio>

namespace {

// cuBLAS workspace: fixed for the backend's life so that cuBLAS calls can be captured into CUDA
// graphs (cuBLAS would otherwise allocate during capture). Hopper wants 32 MiB, others 4 MiB.
size_t cublas_workspace_bytes(int cc) { return cc >= 90 ? (size_t(32) << 20) : (size_t(4) << 20); }

void destroy_graph_exec(void * handle) {
    if (handle) GGML_CUDA_CHECK(cudaGraphExecDestroy(static_cast<cudaGraphExec_t>(handle)));
}

}  // namespace

// ---- events ----

ggml_cuda_event::~ggml_cuda_event() {
    ggml_cuda_set_device(dev_->index());
    GGML_CUDA_CHECK(cudaEventDestroy(ev_));
}

void ggml_cuda_event::record(ggml_backend_i * backend) {
    ggml_cuda_set_device(dev_->index());
    if (auto * cb = dynamic_cast<ggml_cuda_backend *>(backend); cb && cb->device() == dev_) {
        GGML_CUDA_CHECK(cudaEventRecord(ev_, cb->context().stream));
        return;
    }
    // Not a stream of this device: wait for it on the host; the event is then reached at once.
    backend->synchronize();
    GGML_CUDA_CHECK(cudaEventRecord(ev_, cudaStreamPerThread));
}

void ggml_cuda_event::synchronize() {
    ggml_cuda_set_device(dev_->index());
    GGML_CUDA_CHECK(cudaEventSynchronize(ev_));
}

// ---- backend ----

ggml_cuda_backend::ggml_cuda_backend(ggml_cuda_device * dev) : dev_(dev) {
    ctx_.device = dev->index();
    ctx_.cc = dev->info().cc;
    ctx_.sm_count = dev->info().sm_count;
    ok_ = init();
    if (!ok_) std::fprintf(stderr, "inferd: %s: cannot create a CUDA backend\n", dev->name());
}

bool ggml_cuda_backend::init() {
    if (!ggml_cuda_set_device(ctx_.device)) return false;
    if (!GGML_CUDA_CHECK(cudaStreamCreateWithFlags(&ctx_.stream, cudaStreamNonBlocking))) return false;
    if (!GGML_CUBLAS_CHECK(cublasCreate(&ctx_.cublas))) return false;
    // cublasSetStream resets the workspace: bind the stream first, then the workspace.
    if (!GGML_CUBLAS_CHECK(cublasSetStream(ctx_.cublas, ctx_.stream))) return false;
    const size_t ws = cublas_workspace_bytes(ctx_.cc);
    if (!GGML_CUDA_CHECK(cudaMalloc(&cublas_workspace_, ws))) return false;
    if (!GGML_CUBLAS_CHECK(cublasSetWorkspace(ctx_.cublas, cublas_workspace_, ws))) return false;
    if (!GGML_CUDA_CHECK(cudaMalloc(&ctx_.error_flag, sizeof(int)))) return false;
    if (!GGML_CUDA_CHECK(cudaMemset(ctx_.error_flag, 0, sizeof(int)))) return false;
    if (!GGML_CUDA_CHECK(cudaMallocHost(&host_error_flag_, sizeof(int)))) return false;
    *host_error_flag_ = 0;
    if (!GGML_CUDA_CHECK(cudaEventCreateWithFlags(&copy_event_, cudaEventDisableTiming))) return false;
    graphs_ = std::make_unique<ggml_cuda_graph_cache>(ggml_cuda_graph_cache_capacity_from_env(), destroy_graph_exec);
    return GGML_CUDA_CHECK(cudaDeviceSynchronize());
}

ggml_cuda_backend::~ggml_cuda_backend() {
    ggml_cuda_set_device(ctx_.device);
    if (ctx_.stream) GGML_CUDA_CHECK(cudaStreamSynchronize(ctx_.stream));
    graphs_.reset();
    ggml_cuda_scratch_free(ctx_);
    if (copy_event_) GGML_CUDA_CHECK(cudaEventDestroy(copy_event_));
    if (host_error_flag_) GGML_CUDA_CHECK(cudaFreeHost(host_error_flag_));
    if (ctx_.error_flag) GGML_CUDA_CHECK(cudaFree(ctx_.error_flag));
    if (ctx_.cublas) GGML_CUBLAS_CHECK(cublasDestroy(ctx_.cublas));
    if (cublas_workspace_) GGML_CUDA_CHECK(cudaFree(cublas_workspace_));
    if (ctx_.stream) GGML_CUDA_CHECK(cudaStreamDestroy(ctx_.stream));
}

bool ggml_cuda_backend::owns(const ggml_tensor * t) const {
    return ggml_cuda_buffer_device(ggml_cuda_tensor_buffer(t)) == ctx_.device;
}

void ggml_cuda_backend::set_tensor_async(ggml_tensor * t, const void * data, size_t offset, size_t size) {
    if (size == 0) return;
    if (!owns(t)) {
        ggml_backend_i::set_tensor_async(t, data, offset, size);
        return;
    }
    GGML_ASSERT(offset + size <= ggml_nbytes(t));
    ggml_cuda_set_device(ctx_.device);
    GGML_CUDA_CHECK(cudaMemcpyAsync(static_cast<char *>(t->data) + offset, data, size, cudaMemcpyHostToDevice,
                                    ctx_.stream));
}

void ggml_cuda_backend::get_tensor_async(const ggml_tensor * t, void * data, size_t offset, size_t size) {
    if (size == 0) return;
    if (!owns(t)) {
        ggml_backend_i::get_tensor_async(t, data, offset, size);
        return;
    }
    GGML_ASSERT(offset + size <= ggml_nbytes(t));
    ggml_cuda_set_device(ctx_.device);
    GGML_CUDA_CHECK(cudaMemcpyAsync(data, static_cast<const char *>(t->data) + offset, size, cudaMemcpyDeviceToHost,
                                    ctx_.stream));
}

void ggml_cuda_backend::synchronize() {
    ggml_cuda_set_device(ctx_.device);
    GGML_CUDA_CHECK(cudaStreamSynchronize(ctx_.stream));
}

void ggml_cuda_backend::event_wait(ggml_backend_event_i * event) {
    auto * ev = dynamic_cast<ggml_cuda_event *>(event);
    if (!ev) {
        event->synchronize();
        return;
    }
    ggml_cuda_set_device(ctx_.device);
    GGML_CUDA_CHECK(cudaStreamWaitEvent(ctx_.stream, ev->handle(), 0));
}

// dst in this device's memory; src in a CUDA device buffer (any device) or in host memory.
// Ordered after the work queued so far on both backends; later work on both is ordered after
// the copy (backend.h).
bool ggml_cuda_backend::cpy_tensor_async(ggml_backend_i * src_backend, const ggml_tensor * src, ggml_tensor * dst) {
    if (!owns(dst) || !ggml_are_same_layout(src, dst)) return false;
    const ggml_backend_buffer_i * sb = ggml_cuda_tensor_buffer(src);
    const int src_device = ggml_cuda_buffer_device(sb);
    if (src_device < 0 && !(sb && sb->is_host())) return false;
    const size_t n = ggml_nbytes(src);
    auto * src_cuda = dynamic_cast<ggml_cuda_backend *>(src_backend);
    if (src_cuda && src_cuda != this) {
        // Order the copy after the work queued on the source's stream, without blocking the host.
        ggml_cuda_set_device(src_cuda->ctx_.device);
        if (!GGML_CUDA_CHECK(cudaEventRecord(src_cuda->copy_event_, src_cuda->ctx_.stream))) return false;
        ggml_cuda_set_device(ctx_.device);
        if (!GGML_CUDA_CHECK(cudaStreamWaitEvent(ctx_.stream, src_cuda->copy_event_, 0))) return false;
    } else if (!src_cuda && src_backend) {
        src_backend->synchronize();  // another kind of backend: its work is done once this returns
    }
    ggml_cuda_set_device(ctx_.device);
    cudaError_t err;
    if (src_device >= 0 && src_device != ctx_.device) {
        err = cudaMemcpyPeerAsync(dst->data, ctx_.device, src->data, src_device, n, ctx_.stream);
    } else {
        const cudaMemcpyKind kind = src_device >= 0 ? cudaMemcpyDeviceToDevice : cudaMemcpyHostToDevice;
        err = cudaMemcpyAsync(dst->data, src->data, n, kind, ctx_.stream);
    }
    if (!GGML_CUDA_CHECK(err)) return false;
    // The source backend's later work must not overwrite src before the copy has read it: a CUDA
    // stream waits for the copy on the device; any other backend runs on the host, so the copy
    // is waited for here.
    if (src_cuda == this) return true;
    if (!GGML_CUDA_CHECK(cudaEventRecord(copy_event_, ctx_.stream))) return false;
    if (!src_cuda) return GGML_CUDA_CHECK(cudaEventSynchronize(copy_event_));
    ggml_cuda_set_device(src_cuda->ctx_.device);
    return GGML_CUDA_CHECK(cudaStreamWaitEvent(src_cuda->ctx_.stream, copy_event_, 0));
}
