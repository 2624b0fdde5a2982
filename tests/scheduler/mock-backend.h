// tests/scheduler/mock-backend.h — a test-only second backend ("mock device") for the scheduler.
//
// Usage:
//   mock_device dev;                                   // device "MOCK", type gpu
//   dev.set_unsupported({GGML_OP_NORM});               // ops the device refuses
//   dev.set_offload_min_batch(32);                     // offload_op: MUL_MAT with ne[1] >= 32
//   ggml_backend_ptr mock = dev.init_backend();        // computes with the CPU backend's kernels
//   ggml_backend_buffer_ptr w = ggml_backend_alloc_ctx_tensors(ctx, dev.buffer_type());
//   ... dev.count().set_calls, .get_bytes, .graphs_computed ...
//
// Rules (what the scheduler sees):
// - Buffer type "MOCK": separate host memory (std::aligned_alloc) that reports is_host() ==
//   false, so by the scheduler's rules the CPU cannot read it and copies are needed. set / get /
//   memset go through memcpy / memset and are counted (calls and bytes); cpy_tensor copies
//   directly only from a buffer of the same device (device to device, counted) and returns false
//   otherwise (ggml_backend_tensor_copy then goes through set_tensor / get_tensor).
// - Device "MOCK", type gpu. supports_op: false for the configured unsupported ops, false for
//   ops the CPU kernels cannot run, false when a source lives in a buffer that is neither this
//   device's nor host memory (another device's, another mock's included); true otherwise — a
//   source in host memory is accepted because the scheduler copies it into a MOCK buffer first
//   (supports_buft is true only for the MOCK buffer type). offload_op: MUL_MAT with
//   ne[1] >= offload_min_batch (0: never).
// - Backend "MOCK": graph_compute first checks that every node and every source of every node
//   lives in a buffer of its device (a node or source elsewhere means the scheduler forgot a
//   copy: counted in count().foreign_reads, and the graph fails with GGML_STATUS_FAILED), then
//   runs the graph with a CPU backend created inside (the MOCK memory is real host memory).
// - Deferred mode (set_deferred(true)): the backend behaves like a real asynchronous stream:
//   set_tensor_async / get_tensor_async keep the caller's pointer and graph_compute keeps the
//   graph, and all of them run, in order, only at synchronize(). A scheduler that lets the
//   caller reuse input memory before synchronizing, or that reads a result before
//   synchronizing the backend that computes it, then gives wrong results.
#pragma once

#include "ggml/backend.h"
#include "ggml/cpu.h"
#include "ggml/ggml.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <set>
#include <vector>

// Everything the mock device counts (plain ints: tests are single-threaded around it).
struct mock_counters {
    int64_t buffers_allocated = 0;
    int64_t set_calls = 0, set_bytes = 0;
    int64_t get_calls = 0, get_bytes = 0;
    int64_t cpy_calls = 0, cpy_bytes = 0;
    int64_t memset_calls = 0;
    int64_t graphs_computed = 0, nodes_computed = 0;
    int64_t foreign_reads = 0;  // nodes / sources found outside MOCK memory in graph_compute
    int64_t deferred_ops = 0;   // operations queued in deferred mode
};

constexpr size_t mock_alignment = 64;

class mock_device;

class mock_buffer_type final : public ggml_backend_buffer_type_i {
public:
    explicit mock_buffer_type(mock_device * dev) : dev_(dev) {}
    const char * name() const override { return "MOCK"; }
    ggml_backend_buffer_ptr alloc_buffer(size_t size) override;
    size_t alignment() const override { return mock_alignment; }
    bool is_host() const override { return false; }
    ggml_backend_device_i * device() const override;
    mock_counters & count() const;

private:
    mock_device * dev_;
};

inline const ggml_backend_buffer_i * mock_buffer_of(const ggml_tensor * t) {
    return t->view_src ? t->view_src->buffer : t->buffer;
}

// Whether b is a buffer of buft (the MOCK buffer type of one device: another mock device's
// memory counts as foreign).
inline bool mock_is_buffer_of(const ggml_backend_buffer_i * b, const ggml_backend_buffer_type_i * buft) {
    return b && b->buffer_type() == buft;
}

class mock_buffer final : public ggml_backend_buffer_i {
public:
    mock_buffer(mock_buffer_type * buft, void * mem, size_t size) : buft_(buft), mem_(mem), size_(size) {}
    ~mock_buffer() override { std::free(mem_); }
    ggml_backend_buffer_type_i * buffer_type() const override { return buft_; }
    void * base() override { return mem_; }
    size_t size() const override { return size_; }
    void set_tensor(ggml_tensor * t, const void * data, size_t offset, size_t size) override {
        std::memcpy(static_cast<uint8_t *>(t->data) + offset, data, size);
        buft_->count().set_calls++;
        buft_->count().set_bytes += int64_t(size);
    }
    void get_tensor(const ggml_tensor * t, void * data, size_t offset, size_t size) override {
        std::memcpy(data, static_cast<const uint8_t *>(t->data) + offset, size);
        buft_->count().get_calls++;
        buft_->count().get_bytes += int64_t(size);
    }
    void memset_tensor(ggml_tensor * t, uint8_t value, size_t offset, size_t size) override {
        std::memset(static_cast<uint8_t *>(t->data) + offset, value, size);
        buft_->count().memset_calls++;
    }
    bool cpy_tensor(const ggml_tensor * src, ggml_tensor * dst) override {
        if (!mock_is_buffer_of(mock_buffer_of(src), buft_)) return false;
        const size_t n = ggml_nbytes(src);
        std::memcpy(dst->data, src->data, n);
        buft_->count().cpy_calls++;
        buft_->count().cpy_bytes += int64_t(n);
        return true;
    }
    void clear(uint8_t value) override { std::memset(mem_, value, size_); }

private:
    mock_buffer_type * buft_;
    void * mem_;
    size_t size_;
};

class mock_device final : public ggml_backend_device_i {
public:
    mock_device() : buft_(this) {}
    const char * name() const override { return "MOCK"; }
    const char * description() const override { return "test-only mock device (host memory, CPU kernels)"; }
    void memory(size_t * free, size_t * total) const override {
        *total = size_t(1) << 30;
        *free = *total;
    }
    ggml_backend_dev_type type() const override { return ggml_backend_dev_type::gpu; }
    ggml_backend_ptr init_backend() override;
    ggml_backend_buffer_type_i * buffer_type() override { return &buft_; }
    bool supports_op(const ggml_tensor * op) const override {
        if (unsupported_.count(op->op)) return false;
        for (const ggml_tensor * s : op->src) {
            if (!s) continue;
            const ggml_backend_buffer_i * b = mock_buffer_of(s);
            if (b && !b->is_host() && !mock_is_buffer_of(b, &buft_)) return false;
        }
        return cpu_kernels_support(op);
    }
    bool supports_buft(const ggml_backend_buffer_type_i * buft) const override { return buft == &buft_; }
    bool offload_op(const ggml_tensor * op) const override {
        return offload_min_batch_ > 0 && op->op == GGML_OP_MUL_MAT && op->ne[1] >= offload_min_batch_;
    }

    void set_unsupported(std::set<ggml_op> ops) { unsupported_ = std::move(ops); }
    const std::set<ggml_op> & unsupported() const { return unsupported_; }
    void set_offload_min_batch(int64_t n) { offload_min_batch_ = n; }
    void set_deferred(bool on) { deferred_ = on; }
    bool deferred() const { return deferred_; }
    mock_counters & count() { return counters_; }
    const mock_counters & count() const { return counters_; }

private:
    // The CPU device refuses ops whose sources are not host memory; MOCK memory is host memory
    // in truth, so ask it with the sources' buffers hidden (copies of the metadata only).
    bool cpu_kernels_support(const ggml_tensor * op) const {
        ggml_tensor probe = *op;
        ggml_tensor srcs[GGML_MAX_SRC];
        for (int i = 0; i < GGML_MAX_SRC; ++i) {
            if (!op->src[i]) continue;
            srcs[i] = *op->src[i];
            srcs[i].buffer = nullptr;
            srcs[i].view_src = nullptr;
            probe.src[i] = &srcs[i];
        }
        return cpu_dev_->supports_op(&probe);
    }

    mock_buffer_type buft_;
    std::unique_ptr<ggml_backend_reg_i> cpu_reg_ = ggml_backend_cpu_reg();
    ggml_backend_device_i * cpu_dev_ = cpu_reg_->device(0);
    std::set<ggml_op> unsupported_;
    int64_t offload_min_batch_ = 0;
    bool deferred_ = false;
    mock_counters counters_;
};

inline ggml_backend_device_i * mock_buffer_type::device() const { return dev_; }
inline mock_counters & mock_buffer_type::count() const { return dev_->count(); }

inline ggml_backend_buffer_ptr mock_buffer_type::alloc_buffer(size_t size) {
    const size_t bytes = ((size ? size : 1) + mock_alignment - 1) / mock_alignment * mock_alignment;
    void * mem = std::aligned_alloc(mock_alignment, bytes);
    if (!mem) return nullptr;
    dev_->count().buffers_allocated++;
    return std::make_unique<mock_buffer>(this, mem, size);
}

class mock_backend final : public ggml_backend_i {
public:
    explicit mock_backend(mock_device * dev, int n_threads = 2) : dev_(dev) {
        ggml_cpu_backend_options opt;
        opt.n_threads = n_threads;
        cpu_ = ggml_backend_cpu_init(opt);
    }
    // Work still queued at destruction is dropped: what it points to may be gone already.
    ~mock_backend() override = default;
    const char * name() const override { return "MOCK"; }
    ggml_backend_device_i * device() const override { return dev_; }

    void set_tensor_async(ggml_tensor * t, const void * data, size_t offset, size_t size) override {
        if (!dev_->deferred()) return ggml_backend_tensor_set(t, data, offset, size);
        queue([t, data, offset, size] { ggml_backend_tensor_set(t, data, offset, size); });
    }
    void get_tensor_async(const ggml_tensor * t, void * data, size_t offset, size_t size) override {
        if (!dev_->deferred()) return ggml_backend_tensor_get(t, data, offset, size);
        queue([t, data, offset, size] { ggml_backend_tensor_get(t, data, offset, size); });
    }
    void synchronize() override {
        std::vector<std::function<void()>> work;
        work.swap(queue_);
        for (auto & w : work) w();
    }
    ggml_status graph_compute(ggml_cgraph * gf) override {
        if (!all_in_mock_memory(gf)) return GGML_STATUS_FAILED;
        if (!dev_->deferred()) return run(gf);
        queue([this, gf] { last_status_ = run(gf); });
        return GGML_STATUS_SUCCESS;
    }
    // Status of the last graph run at synchronize() in deferred mode.
    ggml_status last_deferred_status() const { return last_status_; }

private:
    void queue(std::function<void()> f) {
        dev_->count().deferred_ops++;
        queue_.push_back(std::move(f));
    }
    ggml_status run(ggml_cgraph * gf) {
        dev_->count().graphs_computed++;
        dev_->count().nodes_computed += gf->n_nodes;
        return cpu_->graph_compute(gf);
    }
    // Every node and every source must live in MOCK memory: anything else is a missing copy.
    bool all_in_mock_memory(const ggml_cgraph * gf) {
        int64_t bad = 0;
        for (int i = 0; i < gf->n_nodes; ++i) {
            const ggml_tensor * n = gf->nodes[i];
            if (!mock_is_buffer_of(mock_buffer_of(n), dev_->buffer_type())) ++bad;
            for (const ggml_tensor * s : n->src) {
                if (s && !mock_is_buffer_of(mock_buffer_of(s), dev_->buffer_type())) ++bad;
            }
        }
        dev_->count().foreign_reads += bad;
        return bad == 0;
    }

    mock_device * dev_;
    ggml_backend_ptr cpu_;
    std::vector<std::function<void()>> queue_;
    ggml_status last_status_ = GGML_STATUS_SUCCESS;
};

inline ggml_backend_ptr mock_device::init_backend() { return std::make_unique<mock_backend>(this); }

