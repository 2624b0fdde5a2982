// ggml/cuda/backend-cuda.h — the CUDA backend's classes (internal; plain C++ with the CUDA
// runtime API, no kernels).
//
//   backend-cuda.cpp         registry, devices, ggml_backend_cuda_status
//   buffer-cuda.cpp          device buffers (cudaMalloc) and pinned host buffers (cudaMallocHost)
//   backend-cuda-stream.cpp  the backend: stream, cuBLAS handle, events, asynchronous copies
//   backend-cuda-graph.cpp   graph_compute: checks, plain runs, CUDA graph capture and replay
//   cuda-common.cpp          error checks, the scratch pool
//
// Devices are created once per process (like the CPU device) and never change; backends and
// buffers keep a pointer to theirs.
#pragma once

#include "cuda-common.cuh"
#include "graph-cache.h"

#include "ggml/backend.h"
#include "ggml/cuda.h"

#include <memory>
#include <string>

class ggml_cuda_device;

// Makes `device` the calling thread's current device (only calls the runtime when it differs).
bool ggml_cuda_set_device(int device);

// While alive, ggml_cuda_check marks ctx failed for failures on this thread (graph_compute).
class ggml_cuda_context_scope {
public:
    explicit ggml_cuda_context_scope(ggml_cuda_context & ctx);
    ~ggml_cuda_context_scope();
    ggml_cuda_context_scope(const ggml_cuda_context_scope &) = delete;
    ggml_cuda_context_scope & operator=(const ggml_cuda_context_scope &) = delete;

private:
    ggml_cuda_context * prev_;
};

// Frees the scratch slots of ctx (its stream must be idle).
void ggml_cuda_scratch_free(ggml_cuda_context & ctx);

// ---- buffer types (buffer-cuda.cpp) ----

// Device memory of one GPU. Alignment 256; quantized tensors are padded (ggml_cuda_row_padding).
class ggml_cuda_buffer_type final : public ggml_backend_buffer_type_i {
public:
    ggml_cuda_buffer_type(ggml_cuda_device * dev, std::string name);
    const char * name() const override { return name_.c_str(); }
    ggml_backend_buffer_ptr alloc_buffer(size_t size) override;
    size_t alignment() const override { return 256; }
    size_t alloc_size(const ggml_tensor * t) const override;
    bool is_host() const override { return false; }
    ggml_backend_device_i * device() const override;
    int device_index() const;

private:
    ggml_cuda_device * dev_;
    std::string name_;
};

// Pinned (page-locked) host memory: host tensors that copy fast to and from the GPUs.
class ggml_cuda_host_buffer_type final : public ggml_backend_buffer_type_i {
public:
    explicit ggml_cuda_host_buffer_type(ggml_cuda_device * dev);
    const char * name() const override { return "CUDA_Host"; }
    ggml_backend_buffer_ptr alloc_buffer(size_t size) override;
    size_t alignment() const override { return 64; }
    bool is_host() const override { return true; }
    ggml_backend_device_i * device() const override;

private:
    ggml_cuda_device * dev_;
};

// The device index of buf when it is a CUDA device buffer, -1 otherwise (host, other backends).
int ggml_cuda_buffer_device(const ggml_backend_buffer_i * buf);
// Whether buf is pinned host memory from ggml_cuda_host_buffer_type.
bool ggml_cuda_buffer_is_pinned(const ggml_backend_buffer_i * buf);
// The buffer t's data lives in (views resolved), or nullptr.
const ggml_backend_buffer_i * ggml_cuda_tensor_buffer(const ggml_tensor * t);

// ---- device (backend-cuda.cpp) ----

struct ggml_cuda_device_info {
    int index = 0;
    std::string description;  // the device's name
    int cc = 0;               // major * 10 + minor
    int sm_count = 0;
};

class ggml_cuda_device final : public ggml_backend_device_i {
public:
    explicit ggml_cuda_device(const ggml_cuda_device_info & info);
    const char * name() const override { return name_.c_str(); }
    const char * description() const override { return info_.description.c_str(); }
    void memory(size_t * free, size_t * total) const override;
    ggml_backend_dev_type type() const override { return ggml_backend_dev_type::gpu; }
    ggml_backend_ptr init_backend() override;
    ggml_backend_buffer_type_i * buffer_type() override { return &buft_; }
    ggml_backend_buffer_type_i * host_buffer_type() override { return &host_buft_; }
    bool supports_op(const ggml_tensor * op) const override;
    bool supports_buft(const ggml_backend_buffer_type_i * buft) const override;
    bool offload_op(const ggml_tensor * op) const override;
    ggml_backend_event_ptr event_new() override;
    double measure_read_gbps(size_t bytes, int passes) override;  // bandwidth-probe.cu

    const ggml_cuda_device_info & info() const { return info_; }
    int index() const { return info_.index; }

private:
    ggml_cuda_device_info info_;
    std::string name_;
    ggml_cuda_buffer_type buft_;
    ggml_cuda_host_buffer_type host_buft_;
};

// ---- events and the backend (backend-cuda-stream.cpp, backend-cuda-graph.cpp) ----

class ggml_cuda_event final : public ggml_backend_event_i {
public:
    ggml_cuda_event(ggml_cuda_device * dev, cudaEvent_t ev) : dev_(dev), ev_(ev) {}
    ~ggml_cuda_event() override;
    ggml_backend_device_i * device() const override { return dev_; }
    void record(ggml_backend_i * backend) override;
    void synchronize() override;
    cudaEvent_t handle() const { return ev_; }

private:
    ggml_cuda_device * dev_;
    cudaEvent_t ev_;
};

class ggml_cuda_backend final : public ggml_backend_i {
public:
    explicit ggml_cuda_backend(ggml_cuda_device * dev);  // check ok() afterwards
    ~ggml_cuda_backend() override;
    bool ok() const { return ok_; }

    const char * name() const override { return dev_->name(); }
    ggml_backend_device_i * device() const override { return dev_; }
    void set_tensor_async(ggml_tensor * t, const void * data, size_t offset, size_t size) override;
    void get_tensor_async(const ggml_tensor * t, void * data, size_t offset, size_t size) override;
    void synchronize() override;
    void event_wait(ggml_backend_event_i * event) override;
    bool cpy_tensor_async(ggml_backend_i * src_backend, const ggml_tensor * src, ggml_tensor * dst) override;
    ggml_status graph_compute(ggml_cgraph * gf) override;

    ggml_cuda_context & context() { return ctx_; }
    // Number of graph_compute calls that replayed / captured a CUDA graph (for tests).
    uint64_t graphs_replayed() const { return n_replayed_; }
    uint64_t graphs_captured() const { return n_captured_; }

private:
    bool init();
    bool owns(const ggml_tensor * t) const;  // t's data is in a device buffer of this device
    ggml_status check_graph(const ggml_cgraph * gf, bool & checks_data, int & n_compute) const;
    bool run_nodes(ggml_cgraph * gf, bool checks_data);
    bool capture_and_launch(ggml_cgraph * gf, const ggml_cuda_graph_key & key, bool checks_data);
    ggml_status finish(bool checks_data);

    ggml_cuda_device * dev_;
    ggml_cuda_context ctx_;
    bool ok_ = false;
    int * host_error_flag_ = nullptr;  // pinned: the device flag copied back after a graph
    void * cublas_workspace_ = nullptr;
    cudaEvent_t copy_event_ = nullptr;  // orders cpy_tensor_async after a source backend's work
    std::unique_ptr<ggml_cuda_graph_cache> graphs_;
    uint64_t graphs_generation_ = 0;  // ctx_.scratch_generation when the cache was last valid
    uint64_t n_replayed_ = 0, n_captured_ = 0;
};
