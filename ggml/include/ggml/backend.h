// ggml/backend.h — backend interfaces: buffer type, buffer, device, backend (a stream), registry.
//
// Usage:
//   ggml_backend_registry reg = ggml_backend_registry_default();   // CPU (+ GPUs when built)
//   ggml_backend_device_i * dev = reg.device_by_type(ggml_backend_dev_type::cpu);
//   ggml_backend_ptr backend = dev->init_backend();
//   ggml_backend_buffer_ptr weights = ggml_backend_alloc_ctx_tensors(ctx, dev->buffer_type());
//   ggml_backend_tensor_set(x, host_data, 0, ggml_nbytes(x));
//   ggml_status st = backend->graph_compute(gf);                    // GGML_STATUS_SUCCESS
//   ggml_backend_tensor_get(y, out, 0, ggml_nbytes(y));
//   for (const ggml_backend_device_info & d : reg.devices()) { /* d.name, d.type, d.memory_free */ }
//   std::fputs(ggml_backend_registry_describe(reg).c_str(), stdout);     // --list-devices
//
// Ownership: buffers and backends are returned as unique_ptrs; buffer types and devices belong
// to their registry entry and live as long as it does. There is no global registry: the
// program builds one and passes it where it is needed.
#pragma once

#include "ggml/ggml.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

class ggml_backend_device_i;

enum class ggml_backend_buffer_usage { any, weights, compute };
enum class ggml_backend_dev_type { cpu, gpu, accel };
const char * ggml_backend_dev_type_name(ggml_backend_dev_type type);  // "cpu", "gpu", "accel"

class ggml_backend_buffer_i;
using ggml_backend_buffer_ptr = std::unique_ptr<ggml_backend_buffer_i>;

// Where memory comes from (host memory, one GPU's memory, pinned host memory, …).
class ggml_backend_buffer_type_i {
public:
    virtual ~ggml_backend_buffer_type_i() = default;
    virtual const char * name() const = 0;
    // nullptr when the memory cannot be had.
    virtual ggml_backend_buffer_ptr alloc_buffer(size_t size) = 0;
    virtual size_t alignment() const = 0;
    virtual size_t max_size() const { return SIZE_MAX; }
    // Bytes a tensor takes in a buffer of this type (may exceed ggml_nbytes, e.g. padding).
    virtual size_t alloc_size(const ggml_tensor * t) const;
    // True when tensors in such buffers are addressable as plain host memory.
    virtual bool is_host() const = 0;
    virtual ggml_backend_device_i * device() const = 0;
};

// A block of memory of one buffer type that holds tensors.
class ggml_backend_buffer_i {
public:
    virtual ~ggml_backend_buffer_i() = default;
    virtual ggml_backend_buffer_type_i * buffer_type() const = 0;
    // Start address of the buffer. For host buffers a real pointer; for device buffers an
    // address in the device's space (tensor->data = base() + offset either way).
    virtual void * base() = 0;
    virtual size_t size() const = 0;
    // Called once a tensor's data points into this buffer (views included).
    virtual ggml_status init_tensor(ggml_tensor * t) { (void) t; return GGML_STATUS_SUCCESS; }
    // Copy size bytes at byte offset of t's data from/to host memory.
    virtual void set_tensor(ggml_tensor * t, const void * data, size_t offset, size_t size) = 0;
    virtual void get_tensor(const ggml_tensor * t, void * data, size_t offset, size_t size) = 0;
    virtual void memset_tensor(ggml_tensor * t, uint8_t value, size_t offset, size_t size) = 0;
    // Copy src (any buffer) into dst (this buffer) if this buffer can do it directly; false otherwise.
    virtual bool cpy_tensor(const ggml_tensor * src, ggml_tensor * dst) { (void) src; (void) dst; return false; }
    virtual void clear(uint8_t value) = 0;

    bool is_host() const { return buffer_type()->is_host(); }
    ggml_backend_buffer_usage usage() const { return usage_; }
    void set_usage(ggml_backend_buffer_usage u) { usage_ = u; }

private:
    ggml_backend_buffer_usage usage_ = ggml_backend_buffer_usage::any;
};

class ggml_backend_i;
using ggml_backend_ptr = std::unique_ptr<ggml_backend_i>;

// A point in one device's stream of work. record() marks how far a backend's queue has got;
// synchronize() blocks the host until that point is reached; another backend can wait for it
// without blocking the host (ggml_backend_i::event_wait). A fresh event counts as reached.
class ggml_backend_event_i {
public:
    virtual ~ggml_backend_event_i() = default;
    virtual ggml_backend_device_i * device() const = 0;
    // backend must run on device().
    virtual void record(ggml_backend_i * backend) = 0;
    virtual void synchronize() = 0;
};
using ggml_backend_event_ptr = std::unique_ptr<ggml_backend_event_i>;

// One device (a CPU, one GPU). Answers what it can do; creates backends (streams) on itself.
class ggml_backend_device_i {
public:
    virtual ~ggml_backend_device_i() = default;
    virtual const char * name() const = 0;
    virtual const char * description() const = 0;
    virtual void memory(size_t * free, size_t * total) const = 0;
    virtual ggml_backend_dev_type type() const = 0;
    virtual ggml_backend_ptr init_backend() = 0;
    virtual ggml_backend_buffer_type_i * buffer_type() = 0;
    // Host buffer type that transfers fast to this device (pinned memory), or nullptr.
    virtual ggml_backend_buffer_type_i * host_buffer_type() { return nullptr; }
    // Whether this device can compute op (types, shapes and the buffers of its sources).
    virtual bool supports_op(const ggml_tensor * op) const = 0;
    // Whether this device's backends can read and write tensors in buffers of buft.
    virtual bool supports_buft(const ggml_backend_buffer_type_i * buft) const = 0;
    // Whether op is worth running here even when its weights live in host memory (large batches).
    virtual bool offload_op(const ggml_tensor * op) const { (void) op; return false; }
    // A new event on this device; nullptr when its backends complete work before returning
    // (synchronous devices such as the CPU need none).
    virtual ggml_backend_event_ptr event_new() { return nullptr; }
    // This device's memory read bandwidth in GB/s (1e9 bytes/s), measured now over a buffer of
    // about `bytes` bytes (median of `passes` passes); 0 when the device cannot measure it (the
    // CPU's is measured by tools/common/mem-bandwidth.h with a thread count).
    virtual double measure_read_gbps(size_t bytes, int passes) { (void) bytes; (void) passes; return 0.0; }
};

// A stream of work on one device.
class ggml_backend_i {
public:
    virtual ~ggml_backend_i() = default;
    virtual const char * name() const = 0;
    virtual ggml_backend_device_i * device() const = 0;
    // Asynchronous variants may return before the copy is done; synchronize() waits.
    virtual void set_tensor_async(ggml_tensor * t, const void * data, size_t offset, size_t size);
    virtual void get_tensor_async(const ggml_tensor * t, void * data, size_t offset, size_t size);
    virtual void synchronize() {}
    // Makes the work queued on this backend from now on wait until event is reached, without
    // blocking the host when the devices allow it (the default blocks the host).
    virtual void event_wait(ggml_backend_event_i * event) { event->synchronize(); }
    // Queues a copy of src (a tensor in memory of src_backend's device, or host memory) into dst
    // (memory of this backend's device), ordered after the work queued on both so far; work
    // queued later on either backend is ordered after the copy (src_backend's next work may
    // overwrite src, this backend's next work may read dst). The host must not change src or dst
    // before both backends are synchronized. False when this backend cannot do it (the caller
    // then copies with ggml_backend_tensor_copy after synchronizing). The scheduler asks for it
    // only where src lives in device memory (not is_host()).
    virtual bool cpy_tensor_async(ggml_backend_i * src_backend, const ggml_tensor * src, ggml_tensor * dst) {
        (void) src_backend;
        (void) src;
        (void) dst;
        return false;
    }
    // Computes every node of gf whose data lives where this backend can reach it. May return
    // before the work is done (asynchronous backends): synchronize() waits for it.
    virtual ggml_status graph_compute(ggml_cgraph * gf) = 0;
};

// A family of devices (all CPUs of this process, all CUDA GPUs, …).
class ggml_backend_reg_i {
public:
    virtual ~ggml_backend_reg_i() = default;
    virtual const char * name() const = 0;
    virtual size_t device_count() const = 0;
    virtual ggml_backend_device_i * device(size_t i) = 0;
};

// One device as a registry lists it (a snapshot: memory() at the time of the call).
struct ggml_backend_device_info {
    ggml_backend_device_i * device = nullptr;
    std::string name;
    std::string description;
    ggml_backend_dev_type type = ggml_backend_dev_type::cpu;
    size_t memory_free = 0;   // bytes
    size_t memory_total = 0;  // bytes
};

// The set of backend families a program uses. Not global: create it, pass it on.
class ggml_backend_registry {
public:
    void add(std::unique_ptr<ggml_backend_reg_i> reg);
    size_t reg_count() const { return regs_.size(); }
    ggml_backend_reg_i * reg(size_t i) const { return regs_.at(i).get(); }
    size_t device_count() const;
    ggml_backend_device_i * device(size_t i) const;            // over all families, in order added
    ggml_backend_device_i * device_by_name(const std::string & name) const;  // nullptr if none
    ggml_backend_device_i * device_by_type(ggml_backend_dev_type type) const; // first of that type
    // Every device over all families, in order, with name, type, description and memory.
    std::vector<ggml_backend_device_info> devices() const;

private:
    std::vector<std::unique_ptr<ggml_backend_reg_i>> regs_;
};

// A registry with every backend family compiled into this build (the CPU at least).
ggml_backend_registry ggml_backend_registry_default();
// Why reg has no GPU device: "" when it has one; in a build with CUDA the CUDA backend's status
// (no driver, no device, …); otherwise that the build has no GPU backend.
std::string ggml_backend_registry_gpu_status(const ggml_backend_registry & reg);
// reg's devices as text for people, one line each:
//   <index>: <name> (<type>) <description>, <free> GiB free of <total> GiB
// then "no GPU device: <reason>" when reg has no GPU device.
std::string ggml_backend_registry_describe(const ggml_backend_registry & reg);

// ---- tensor data access through the tensor's buffer (views resolved) ----
void ggml_backend_tensor_set(ggml_tensor * t, const void * data, size_t offset, size_t size);
void ggml_backend_tensor_get(const ggml_tensor * t, void * data, size_t offset, size_t size);
void ggml_backend_tensor_memset(ggml_tensor * t, uint8_t value, size_t offset, size_t size);
// Copy between tensors of the same layout, across buffers of any kind.
void ggml_backend_tensor_copy(const ggml_tensor * src, ggml_tensor * dst);

// Place tensor t at address addr inside buffer (addr within [base, base + size)).
ggml_status ggml_backend_tensor_alloc(ggml_backend_buffer_i * buffer, ggml_tensor * t, void * addr);
// Point a view at its view_src's memory (view_src must be allocated).
ggml_status ggml_backend_view_init(ggml_tensor * t);
// Allocate every tensor of ctx that has no data yet in one new buffer of buft (nullptr if
// there is none to allocate or the memory cannot be had).
ggml_backend_buffer_ptr ggml_backend_alloc_ctx_tensors(ggml_context * ctx, ggml_backend_buffer_type_i * buft);
