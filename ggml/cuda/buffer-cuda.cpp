// Device buffers (cudaMalloc, never managed memory) and pinned host buffers (cudaMallocHost).
//
// The device buffer's set/get/memset copy through the calling thread's default stream and wait
// for it, so they are done when they return; they do not wait for backends' queued work (the
// caller synchronizes a backend before it reads what that backend wrote).
#include "backend-cuda.h"

#include <cstdio>
#include <cstring>

namespace {

class cuda_buffer final : public ggml_backend_buffer_i {
public:
    cuda_buffer(ggml_cuda_buffer_type * buft, int device, void * mem, size_t size)
        : buft_(buft), device_(device), mem_(mem), size_(size) {}
    ~cuda_buffer() override {
        ggml_cuda_set_device(device_);
        GGML_CUDA_CHECK(cudaFree(mem_));
    }
    ggml_backend_buffer_type_i * buffer_type() const override { return buft_; }
    void * base() override { return mem_; }
    size_t size() const override { return size_; }
    ggml_status init_tensor(ggml_tensor * t) override;
    void set_tensor(ggml_tensor * t, const void * data, size_t offset, size_t size) override {
        copy(static_cast<char *>(t->data) + offset, data, size, cudaMemcpyHostToDevice);
    }
    void get_tensor(const ggml_tensor * t, void * data, size_t offset, size_t size) override {
        copy(data, static_cast<const char *>(t->data) + offset, size, cudaMemcpyDeviceToHost);
    }
    void memset_tensor(ggml_tensor * t, uint8_t value, size_t offset, size_t size) override {
        ggml_cuda_set_device(device_);
        if (GGML_CUDA_CHECK(cudaMemsetAsync(static_cast<char *>(t->data) + offset, value, size, cudaStreamPerThread))) {
            GGML_CUDA_CHECK(cudaStreamSynchronize(cudaStreamPerThread));
        }
    }
    bool cpy_tensor(const ggml_tensor * src, ggml_tensor * dst) override;
    void clear(uint8_t value) override {
        ggml_cuda_set_device(device_);
        if (GGML_CUDA_CHECK(cudaMemsetAsync(mem_, value, size_, cudaStreamPerThread))) {
            GGML_CUDA_CHECK(cudaStreamSynchronize(cudaStreamPerThread));
        }
    }

private:
    void copy(void * dst, const void * src, size_t size, cudaMemcpyKind kind) {
        if (size == 0) return;
        ggml_cuda_set_device(device_);
        if (GGML_CUDA_CHECK(cudaMemcpyAsync(dst, src, size, kind, cudaStreamPerThread))) {
            GGML_CUDA_CHECK(cudaStreamSynchronize(cudaStreamPerThread));
        }
    }

    ggml_cuda_buffer_type * buft_;
    int device_;
    void * mem_;
    size_t size_;
};

// Zeroes the padding past a quantized tensor's data (alloc_size) so that kernels reading whole
// padded rows see zeros, not stale bytes.
ggml_status cuda_buffer::init_tensor(ggml_tensor * t) {
    if (t->view_src != nullptr || !ggml_get_type_traits(t->type).is_quantized) return GGML_STATUS_SUCCESS;
    const size_t nbytes = ggml_nbytes(t);
    const size_t padded = buft_->alloc_size(t);
    if (padded > nbytes) {
        ggml_cuda_set_device(device_);
        char * end = static_cast<char *>(t->data) + nbytes;
        if (!GGML_CUDA_CHECK(cudaMemsetAsync(end, 0, padded - nbytes, cudaStreamPerThread)) ||
            !GGML_CUDA_CHECK(cudaStreamSynchronize(cudaStreamPerThread))) {
            return GGML_STATUS_FAILED;
        }
    }
    return GGML_STATUS_SUCCESS;
}

bool cuda_buffer::cpy_tensor(const ggml_tensor * src, ggml_tensor * dst) {
    const int src_device = ggml_cuda_buffer_device(ggml_cuda_tensor_buffer(src));
    if (src_device < 0) return false;
    const size_t n = ggml_nbytes(src);
    ggml_cuda_set_device(device_);
    cudaError_t err;
    if (src_device == device_) {
        err = cudaMemcpyAsync(dst->data, src->data, n, cudaMemcpyDeviceToDevice, cudaStreamPerThread);
    } else {
        err = cudaMemcpyPeerAsync(dst->data, device_, src->data, src_device, n, cudaStreamPerThread);
    }
    return GGML_CUDA_CHECK(err) && GGML_CUDA_CHECK(cudaStreamSynchronize(cudaStreamPerThread));
}

class cuda_host_buffer final : public ggml_backend_buffer_i {
public:
    cuda_host_buffer(ggml_cuda_host_buffer_type * buft, void * mem, size_t size)
        : buft_(buft), mem_(mem), size_(size) {}
    ~cuda_host_buffer() override { GGML_CUDA_CHECK(cudaFreeHost(mem_)); }
    ggml_backend_buffer_type_i * buffer_type() const override { return buft_; }
    void * base() override { return mem_; }
    size_t size() const override { return size_; }
    void set_tensor(ggml_tensor * t, const void * data, size_t offset, size_t size) override {
        std::memcpy(static_cast<char *>(t->data) + offset, data, size);
    }
    void get_tensor(const ggml_tensor * t, void * data, size_t offset, size_t size) override {
        std::memcpy(data, static_cast<const char *>(t->data) + offset, size);
    }
    void memset_tensor(ggml_tensor * t, uint8_t value, size_t offset, size_t size) override {
        std::memset(static_cast<char *>(t->data) + offset, value, size);
    }
    bool cpy_tensor(const ggml_tensor * src, ggml_tensor * dst) override {
        const ggml_backend_buffer_i * sb = ggml_cuda_tensor_buffer(src);
        if (!sb || !sb->is_host()) return false;
        std::memcpy(dst->data, src->data, ggml_nbytes(src));
        return true;
    }
    void clear(uint8_t value) override { std::memset(mem_, value, size_); }

private:
    ggml_cuda_host_buffer_type * buft_;
    void * mem_;
    size_t size_;
};

}  // namespace

ggml_cuda_buffer_type::ggml_cuda_buffer_type(ggml_cuda_device * dev, std::string name)
    : dev_(dev), name_(std::move(name)) {}

ggml_backend_device_i * ggml_cuda_buffer_type::device() const { return dev_; }

int ggml_cuda_buffer_type::device_index() const { return dev_->index(); }

ggml_backend_buffer_ptr ggml_cuda_buffer_type::alloc_buffer(size_t size) {
    const int device = dev_->index();
    if (!ggml_cuda_set_device(device)) return nullptr;
    void * mem = nullptr;
    const cudaError_t err = cudaMalloc(&mem, size ? size : 1);
    if (err != cudaSuccess) {
        (void) cudaGetLastError();  // out of memory is not sticky: clear it
        std::fprintf(stderr, "inferd: %s: cannot allocate %.1f MiB of device memory: %s\n", dev_->name(),
                     double(size) / (1024.0 * 1024.0), cudaGetErrorString(err));
        return nullptr;
    }
    return std::make_unique<cuda_buffer>(this, device, mem, size);
}

size_t ggml_cuda_buffer_type::alloc_size(const ggml_tensor * t) const {
    size_t size = ggml_nbytes(t);
    const int64_t ne0 = t->ne[0];
    if (ggml_get_type_traits(t->type).is_quantized && ne0 % ggml_cuda_row_padding != 0) {
        size += ggml_row_size(t->type, ggml_cuda_row_padding - ne0 % ggml_cuda_row_padding);
    }
    return size;
}

ggml_cuda_host_buffer_type::ggml_cuda_host_buffer_type(ggml_cuda_device * dev) : dev_(dev) {}

ggml_backend_device_i * ggml_cuda_host_buffer_type::device() const { return dev_; }

ggml_backend_buffer_ptr ggml_cuda_host_buffer_type::alloc_buffer(size_t size) {
    void * mem = nullptr;
    const cudaError_t err = cudaMallocHost(&mem, size ? size : 1);
    if (err != cudaSuccess) {
        (void) cudaGetLastError();
        std::fprintf(stderr, "inferd: cannot allocate %.1f MiB of pinned host memory: %s\n",
                     double(size) / (1024.0 * 1024.0), cudaGetErrorString(err));
        return nullptr;
    }
    return std::make_unique<cuda_host_buffer>(this, mem, size);
}

int ggml_cuda_buffer_device(const ggml_backend_buffer_i * buf) {
    if (!buf) return -1;
    const auto * bt = dynamic_cast<const ggml_cuda_buffer_type *>(buf->buffer_type());
    return bt ? bt->device_index() : -1;
}

bool ggml_cuda_buffer_is_pinned(const ggml_backend_buffer_i * buf) {
    return buf && dynamic_cast<const ggml_cuda_host_buffer_type *>(buf->buffer_type()) != nullptr;
}

const ggml_backend_buffer_i * ggml_cuda_tensor_buffer(const ggml_tensor * t) {
    return t->view_src ? t->view_src->buffer : t->buffer;
}
