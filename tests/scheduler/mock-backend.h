// tests/scheduler/mock-backend.h — a test-only second backend ("mock device") for the scheduler.
//
// Usage:
//   mock_device dev;                                   // device "MOCK", type gpu
//   mock_device dev1("MOCK1");                         // a second device (its own memory)
//   dev.set_unsupported({GGML_OP_NORM});               // ops the device refuses
//   dev.set_offload_min_batch(32);                     // offload_op: MUL_MAT with ne[1] >= 32
//   dev.set_deferred(true);                            // a queue that runs only when waited for
//   ggml_backend_ptr mock = dev.init_backend();        // computes with the CPU backend's kernels
//   ggml_backend_buffer_ptr w = ggml_backend_alloc_ctx_tensors(ctx, dev.buffer_type());
//   ... dev.count().set_calls, .get_bytes, .graphs_computed, .host_syncs ...
//
// Rules (what the scheduler sees):
// - Buffer type (named as the device): separate host memory (std::aligned_alloc) that reports
//   is_host() == false, so by the scheduler's rules the CPU cannot read it and copies are needed.
//   set / get / memset go through memcpy / memset and are counted (calls and bytes); cpy_tensor
//   copies directly only from a buffer of the same device (device to device, counted) and returns
//   false otherwise (ggml_backend_tensor_copy then goes through set_tensor / get_tensor).
// - Device (default name "MOCK"), type gpu. supports_op: false for the configured unsupported
//   ops, false for ops the CPU kernels cannot run, false when a source lives in a buffer that is
//   neither this device's nor host memory (another device's, another mock's included); true
//   otherwise — a source in host memory is accepted because the scheduler copies it into this
//   device's memory first (supports_buft is true only for its own buffer type). offload_op:
//   MUL_MAT with ne[1] >= offload_min_batch (0: never). event_new: a mock event (nullptr after
//   set_events(false): a device without events).
// - Backend (named as the device; a device may have several, like streams): graph_compute first
//   checks that every node and every source of every node lives in a buffer of its device (a
//   node or source elsewhere means the scheduler forgot a copy: counted in count().foreign_reads,
//   and the graph fails with GGML_STATUS_FAILED), then runs the graph with a CPU backend created
//   inside (the mock memory is real host memory).
// - Deferred mode (set_deferred(true)): the backend behaves like an asynchronous stream. Its work
//   (set_tensor_async, get_tensor_async, graph_compute, cpy_tensor_async, event waits) is queued
//   and runs, in order, only when the host waits: synchronize() runs the whole queue, an event's
//   synchronize() runs it up to the recorded position. A scheduler that lets the caller reuse
//   input memory before its copy ran, or reads a result before the host waited for the backend
//   that computes it, then gives wrong results. Without deferred mode everything runs at once.
// - Events: record() marks the recording backend's queue position; event_wait(e) on another mock
//   backend queues "wait until e's backend has run up to that position" (it runs that queue first
//   when it gets there), on the same backend it is a no-op (in order anyway); an event of another
//   kind is synchronized on the host. Every host wait (backend synchronize, event synchronize —
//   including the CPU's default event_wait, which synchronizes the event) counts in host_syncs.
// - cpy_tensor_async(src_backend, src, dst): only from the memory of another mock backend's
//   device into this one's (false otherwise: host memory, foreign buffers). Like a device-to-
//   device copy on real GPUs it runs on the source's queue after the work queued on both, and the
//   destination's later work waits for it.
// - A log (set_log) receives "<device>:<node name>" for every node each backend of the device
//   runs, in the order they run, shared between devices to check the order across them.
#pragma once

#include "ggml/backend.h"
#include "ggml/cpu.h"
#include "ggml/ggml.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

// Everything the mock device counts (plain ints: tests are single-threaded around it).
struct mock_counters {
    int64_t buffers_allocated = 0;
    int64_t bytes_allocated = 0;  // sizes asked of alloc_buffer, over every buffer ever made
    int64_t set_calls = 0, set_bytes = 0;
    int64_t get_calls = 0, get_bytes = 0;
    int64_t cpy_calls = 0, cpy_bytes = 0;
    int64_t memset_calls = 0;
    int64_t graphs_computed = 0, nodes_computed = 0;
    int64_t foreign_reads = 0;  // nodes / sources found outside this device's memory in graph_compute
    int64_t deferred_ops = 0;   // operations queued in deferred mode
    int64_t host_syncs = 0;     // the host waited: backend synchronize() or event synchronize()
    int64_t events_recorded = 0;
    int64_t event_waits = 0;    // event_wait calls that ordered this device's queue after another's
    int64_t async_copies = 0;   // cpy_tensor_async calls that this device accepted
};

constexpr size_t mock_alignment = 64;

class mock_device;
class mock_backend;

class mock_buffer_type final : public ggml_backend_buffer_type_i {
public:
    explicit mock_buffer_type(mock_device * dev) : dev_(dev) {}
    const char * name() const override;
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

// Whether b is a buffer of buft (the buffer type of one mock device: another mock device's
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
    explicit mock_device(std::string name = "MOCK") : name_(std::move(name)), buft_(this) {}
    const char * name() const override { return name_.c_str(); }
    const char * description() const override { return "test-only mock device (host memory, CPU kernels)"; }
    void memory(size_t * free, size_t * total) const override {
        *total = memory_total_;
        *free = memory_free_;
    }
    // What memory() reports (default 1 GiB free of 1 GiB); the memory itself is not limited.
    void set_memory(size_t free, size_t total) {
        memory_free_ = free;
        memory_total_ = total;
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
    ggml_backend_event_ptr event_new() override;

    void set_unsupported(std::set<ggml_op> ops) { unsupported_ = std::move(ops); }
    const std::set<ggml_op> & unsupported() const { return unsupported_; }
    void set_offload_min_batch(int64_t n) { offload_min_batch_ = n; }
    void set_deferred(bool on) { deferred_ = on; }
    bool deferred() const { return deferred_; }
    void set_events(bool on) { events_ = on; }
    void set_log(std::vector<std::string> * log) { log_ = log; }
    std::vector<std::string> * log() const { return log_; }
    mock_counters & count() { return counters_; }
    const mock_counters & count() const { return counters_; }

private:
    // The CPU device refuses ops whose sources are not host memory; mock memory is host memory
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

    std::string name_;
    mock_buffer_type buft_;
    std::unique_ptr<ggml_backend_reg_i> cpu_reg_ = ggml_backend_cpu_reg();
    ggml_backend_device_i * cpu_dev_ = cpu_reg_->device(0);
    std::set<ggml_op> unsupported_;
    int64_t offload_min_batch_ = 0;
    size_t memory_free_ = size_t(1) << 30, memory_total_ = size_t(1) << 30;
    bool deferred_ = false;
    bool events_ = true;
    std::vector<std::string> * log_ = nullptr;
    mock_counters counters_;
};

inline const char * mock_buffer_type::name() const { return dev_->name(); }
inline ggml_backend_device_i * mock_buffer_type::device() const { return dev_; }
inline mock_counters & mock_buffer_type::count() const { return dev_->count(); }

inline ggml_backend_buffer_ptr mock_buffer_type::alloc_buffer(size_t size) {
    const size_t bytes = ((size ? size : 1) + mock_alignment - 1) / mock_alignment * mock_alignment;
    void * mem = std::aligned_alloc(mock_alignment, bytes);
    if (!mem) return nullptr;
    dev_->count().buffers_allocated++;
    dev_->count().bytes_allocated += int64_t(size);
    return std::make_unique<mock_buffer>(this, mem, size);
}

// A point in one mock backend's queue (its position when recorded).
class mock_event final : public ggml_backend_event_i {
public:
    explicit mock_event(mock_device * dev) : dev_(dev) {}
    ggml_backend_device_i * device() const override { return dev_; }
    void record(ggml_backend_i * backend) override;
    void synchronize() override;
    mock_backend * backend() const { return backend_; }
    uint64_t position() const { return position_; }

private:
    mock_device * dev_;
    mock_backend * backend_ = nullptr;  // nullptr: never recorded (counts as reached)
    uint64_t position_ = 0;
};

inline ggml_backend_event_ptr mock_device::event_new() {
    if (!events_) return nullptr;
    return std::make_unique<mock_event>(this);
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
    const char * name() const override { return dev_->name(); }
    ggml_backend_device_i * device() const override { return dev_; }

    void set_tensor_async(ggml_tensor * t, const void * data, size_t offset, size_t size) override {
        enqueue([t, data, offset, size] { ggml_backend_tensor_set(t, data, offset, size); });
    }
    void get_tensor_async(const ggml_tensor * t, void * data, size_t offset, size_t size) override {
        enqueue([t, data, offset, size] { ggml_backend_tensor_get(t, data, offset, size); });
    }
    void synchronize() override {
        dev_->count().host_syncs++;
        run_until(queued_);
    }
    void event_wait(ggml_backend_event_i * event) override {
        auto * e = dynamic_cast<mock_event *>(event);
        if (e == nullptr) return event->synchronize();
        if (e->backend() == nullptr || e->backend() == this) return;  // never recorded / in order anyway
        dev_->count().event_waits++;
        wait_for(e->backend(), e->position());
    }
    bool cpy_tensor_async(ggml_backend_i * src_backend, const ggml_tensor * src, ggml_tensor * dst) override {
        auto * from = dynamic_cast<mock_backend *>(src_backend);
        if (from == nullptr || !mock_is_buffer_of(mock_buffer_of(dst), dev_->buffer_type()) ||
            !mock_is_buffer_of(mock_buffer_of(src), from->dev_->buffer_type())) {
            return false;
        }
        dev_->count().async_copies++;
        if (from != this) from->wait_for(this, queued_);  // after the work queued here
        from->enqueue([src, dst] { std::memcpy(dst->data, src->data, ggml_nbytes(src)); });
        if (from != this) wait_for(from, from->queued_);   // later work here after the copy
        return true;
    }
    ggml_status graph_compute(ggml_cgraph * gf) override {
        if (!all_in_mock_memory(gf)) return GGML_STATUS_FAILED;
        if (!dev_->deferred()) return run(gf);
        enqueue([this, gf] { last_status_ = run(gf); });
        return GGML_STATUS_SUCCESS;
    }
    // Status of the last graph run from the queue in deferred mode.
    ggml_status last_deferred_status() const { return last_status_; }

    uint64_t queued() const { return queued_; }
    uint64_t done() const { return done_; }
    // Runs the queued work up to position pos (what was queued before it), in order. A wait that
    // would need this queue to run past the item it is running is a cycle: no device could ever
    // finish it.
    void run_until(uint64_t pos) {
        if (done_ >= pos) return;
        if (running_) GGML_ABORT("mock backend %s: circular wait between queues", dev_->name());
        running_ = true;
        while (done_ < pos && !queue_.empty()) {
            std::function<void()> f = std::move(queue_.front());
            queue_.pop_front();
            f();
            ++done_;
        }
        running_ = false;
    }

private:
    // Deferred: queue f (it runs when the host waits); otherwise run it now.
    void enqueue(std::function<void()> f) {
        if (!dev_->deferred()) {
            f();
            ++queued_;
            ++done_;
            return;
        }
        dev_->count().deferred_ops++;
        queue_.push_back(std::move(f));
        ++queued_;
    }
    // Work queued here from now on starts after `other` has run up to pos.
    void wait_for(mock_backend * other, uint64_t pos) {
        enqueue([other, pos] { other->run_until(pos); });
    }
    ggml_status run(ggml_cgraph * gf) {
        dev_->count().graphs_computed++;
        dev_->count().nodes_computed += gf->n_nodes;
        if (std::vector<std::string> * log = dev_->log()) {
            for (int i = 0; i < gf->n_nodes; ++i) log->push_back(std::string(dev_->name()) + ":" + gf->nodes[i]->name);
        }
        return cpu_->graph_compute(gf);
    }
    // Every node and every source must live in this device's memory: anything else is a missing copy.
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
    std::deque<std::function<void()>> queue_;
    uint64_t queued_ = 0;  // items ever queued (a queue position)
    uint64_t done_ = 0;    // items ever run
    bool running_ = false;
    ggml_status last_status_ = GGML_STATUS_SUCCESS;
};

inline ggml_backend_ptr mock_device::init_backend() { return std::make_unique<mock_backend>(this); }

inline void mock_event::record(ggml_backend_i * backend) {
    GGML_ASSERT(backend->device() == dev_ && "an event records a backend of its own device");
    backend_ = static_cast<mock_backend *>(backend);
    position_ = backend_->queued();
    dev_->count().events_recorded++;
}

inline void mock_event::synchronize() {
    dev_->count().host_syncs++;
    if (backend_ != nullptr) backend_->run_until(position_);
}
