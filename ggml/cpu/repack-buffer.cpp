// The CPU's repack buffer type (ggml/cpu.h): weights stored in the interleaved layout of
// repack.h. set_tensor repacks a whole tensor, get_tensor gives the original bytes back, so
// copies to other backends and reads through the backend API see the file's layout.
#include "repack.h"

#include "ggml/backend.h"
#include "ggml/cpu.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

namespace {

constexpr size_t k_repack_alignment = 64;

class cpu_repack_buffer final : public ggml_backend_buffer_i {
public:
    cpu_repack_buffer(ggml_backend_buffer_type_i * buft, void * mem, size_t size) : buft_(buft), mem_(mem), size_(size) {}
    ~cpu_repack_buffer() override { std::free(mem_); }
    ggml_backend_buffer_type_i * buffer_type() const override { return buft_; }
    void * base() override { return mem_; }
    size_t size() const override { return size_; }

    void set_tensor(ggml_tensor * t, const void * data, size_t offset, size_t size) override {
        if (!ggml_backend_cpu_tensor_is_repacked(t)) {
            std::memcpy(static_cast<uint8_t *>(t->data) + offset, data, size);
            return;
        }
        if (offset == 0 && size == ggml_nbytes(t)) {
            ggml_repack_pack(t->type, t->ne[0], t->ne[1], data, t->nb[1], t->data);
            return;
        }
        std::vector<uint8_t> whole = original(t);
        std::memcpy(whole.data() + offset, data, size);
        ggml_repack_pack(t->type, t->ne[0], t->ne[1], whole.data(), t->nb[1], t->data);
    }
    void get_tensor(const ggml_tensor * t, void * data, size_t offset, size_t size) override {
        if (!ggml_backend_cpu_tensor_is_repacked(t)) {
            std::memcpy(data, static_cast<const uint8_t *>(t->data) + offset, size);
            return;
        }
        if (offset == 0 && size == ggml_nbytes(t)) {
            ggml_repack_unpack(t->type, t->ne[0], t->ne[1], t->data, data, t->nb[1]);
            return;
        }
        const std::vector<uint8_t> whole = original(t);
        std::memcpy(data, whole.data() + offset, size);
    }
    void memset_tensor(ggml_tensor * t, uint8_t value, size_t offset, size_t size) override {
        if (!ggml_backend_cpu_tensor_is_repacked(t)) {
            std::memset(static_cast<uint8_t *>(t->data) + offset, value, size);
            return;
        }
        std::vector<uint8_t> whole = original(t);
        std::memset(whole.data() + offset, value, size);
        ggml_repack_pack(t->type, t->ne[0], t->ne[1], whole.data(), t->nb[1], t->data);
    }
    void clear(uint8_t value) override { std::memset(mem_, value, size_); }

private:
    static std::vector<uint8_t> original(const ggml_tensor * t) {
        std::vector<uint8_t> bytes(ggml_nbytes(t));
        ggml_repack_unpack(t->type, t->ne[0], t->ne[1], t->data, bytes.data(), t->nb[1]);
        return bytes;
    }

    ggml_backend_buffer_type_i * buft_;
    void * mem_;
    size_t size_;
};

class cpu_repack_buffer_type final : public ggml_backend_buffer_type_i {
public:
    const char * name() const override { return "CPU_REPACK"; }
    ggml_backend_buffer_ptr alloc_buffer(size_t size) override {
        const size_t bytes = ((size ? size : 1) + k_repack_alignment - 1) / k_repack_alignment * k_repack_alignment;
        void * mem = std::aligned_alloc(k_repack_alignment, bytes);
        if (!mem) return nullptr;
        return std::make_unique<cpu_repack_buffer>(this, mem, size);
    }
    size_t alignment() const override { return k_repack_alignment; }
    size_t alloc_size(const ggml_tensor * t) const override {
        if (!ggml_backend_cpu_repack_supported(t)) return ggml_nbytes(t);
        return std::max(ggml_nbytes(t), ggml_repack_size(t->type, t->ne[0], t->ne[1]));
    }
    bool is_host() const override { return false; }
    ggml_backend_device_i * device() const override { return ggml_backend_cpu_buffer_type()->device(); }
};

}  // namespace

ggml_backend_buffer_type_i * ggml_backend_cpu_repack_buffer_type() {
    static cpu_repack_buffer_type buft;  // stateless
    return &buft;
}

bool ggml_backend_cpu_repack_supported(const ggml_tensor * t) {
    if (!t || t->view_src || !ggml_repack_type_supported(t->type)) return false;
    if (t->ne[2] != 1 || t->ne[3] != 1 || t->ne[0] % ggml_blck_size(t->type) != 0) return false;
    return ggml_is_contiguous(t);
}

bool ggml_backend_cpu_tensor_is_repacked(const ggml_tensor * t) {
    return t && t->buffer && t->buffer->buffer_type() == ggml_backend_cpu_repack_buffer_type() &&
           ggml_backend_cpu_repack_supported(t);
}
