// The CPU backend: host buffers, the CPU device and registry entry, and the graph executor.
#include "ggml/cpu.h"
#include "ops.h"
#include "threadpool.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

namespace {

constexpr size_t k_cpu_alignment = 64;

class cpu_buffer final : public ggml_backend_buffer_i {
public:
    // owned: the memory came from aligned_alloc and is freed with the buffer; otherwise it is
    // borrowed (ggml_backend_cpu_buffer_from_ptr) and outlives the buffer.
    cpu_buffer(ggml_backend_buffer_type_i * buft, void * mem, size_t size, bool owned = true)
        : buft_(buft), mem_(mem), size_(size), owned_(owned) {}
    ~cpu_buffer() override {
        if (owned_) std::free(mem_);
    }
    ggml_backend_buffer_type_i * buffer_type() const override { return buft_; }
    void * base() override { return mem_; }
    size_t size() const override { return size_; }
    void set_tensor(ggml_tensor * t, const void * data, size_t offset, size_t size) override {
        std::memcpy(static_cast<uint8_t *>(t->data) + offset, data, size);
    }
    void get_tensor(const ggml_tensor * t, void * data, size_t offset, size_t size) override {
        std::memcpy(data, static_cast<const uint8_t *>(t->data) + offset, size);
    }
    void memset_tensor(ggml_tensor * t, uint8_t value, size_t offset, size_t size) override {
        std::memset(static_cast<uint8_t *>(t->data) + offset, value, size);
    }
    bool cpy_tensor(const ggml_tensor * src, ggml_tensor * dst) override {
        const ggml_backend_buffer_i * sb = src->view_src ? src->view_src->buffer : src->buffer;
        if (!sb || !sb->is_host()) return false;
        std::memcpy(dst->data, src->data, ggml_nbytes(src));
        return true;
    }
    void clear(uint8_t value) override { std::memset(mem_, value, size_); }

private:
    ggml_backend_buffer_type_i * buft_;
    void * mem_;
    size_t size_;
    bool owned_;
};

class cpu_device;

class cpu_buffer_type final : public ggml_backend_buffer_type_i {
public:
    explicit cpu_buffer_type(cpu_device * dev) : dev_(dev) {}
    const char * name() const override { return "CPU"; }
    ggml_backend_buffer_ptr alloc_buffer(size_t size) override {
        const size_t bytes = ((size ? size : 1) + k_cpu_alignment - 1) / k_cpu_alignment * k_cpu_alignment;
        void * mem = std::aligned_alloc(k_cpu_alignment, bytes);
        if (!mem) return nullptr;
        return std::make_unique<cpu_buffer>(this, mem, size);
    }
    size_t alignment() const override { return k_cpu_alignment; }
    bool is_host() const override { return true; }
    ggml_backend_device_i * device() const override;

private:
    cpu_device * dev_;
};

// MemAvailable and MemTotal of /proc/meminfo in bytes (false when unreadable): what a new
// allocation can get without swapping, and the RAM installed.
bool read_meminfo(size_t * available, size_t * total) {
    std::ifstream in("/proc/meminfo");
    std::string line;
    size_t avail_kib = 0, total_kib = 0;
    bool have_avail = false, have_total = false;
    while (std::getline(in, line)) {
        const auto field = [&line](const char * key, size_t * kib) {
            if (line.rfind(key, 0) != 0) return false;
            *kib = size_t(std::strtoull(line.c_str() + std::strlen(key), nullptr, 10));
            return true;
        };
        have_avail = have_avail || field("MemAvailable:", &avail_kib);
        have_total = have_total || field("MemTotal:", &total_kib);
    }
    if (!have_avail || !have_total || total_kib == 0) return false;
    *available = std::min(avail_kib, total_kib) * 1024;
    *total = total_kib * 1024;
    return true;
}

// Nothing but MUL_MAT reads the repacked layout, and only as its first operand; no view of a
// repacked tensor is read at all.
bool cpu_repacked_sources_ok(const ggml_tensor * op) {
    for (const ggml_tensor * s : op->src) {
        if (!s) continue;
        if (ggml_backend_cpu_tensor_is_repacked(s) && !(op->op == GGML_OP_MUL_MAT && s == op->src[0])) return false;
        if (s->view_src && ggml_backend_cpu_tensor_is_repacked(s->view_src)) return false;
    }
    return true;
}

class cpu_device final : public ggml_backend_device_i {
public:
    cpu_device() : buft_(this), description_(ggml_cpu_model_name()) {}
    const char * name() const override { return "CPU"; }
    const char * description() const override { return description_.c_str(); }
    // free: MemAvailable (page cache that can be dropped counts as free), total: MemTotal;
    // sysconf's page counts where /proc/meminfo cannot be read.
    void memory(size_t * free, size_t * total) const override {
        if (read_meminfo(free, total)) return;
        const size_t page = size_t(sysconf(_SC_PAGESIZE));
        *total = size_t(sysconf(_SC_PHYS_PAGES)) * page;
        *free = size_t(sysconf(_SC_AVPHYS_PAGES)) * page;
    }
    ggml_backend_dev_type type() const override { return ggml_backend_dev_type::cpu; }
    ggml_backend_ptr init_backend() override { return ggml_backend_cpu_init({}); }
    ggml_backend_buffer_type_i * buffer_type() override { return &buft_; }
    // Sources in host memory, and repacked weights as the first operand of MUL_MAT.
    bool supports_op(const ggml_tensor * op) const override {
        for (const ggml_tensor * s : op->src) {
            if (!s) continue;
            const ggml_backend_buffer_i * b = s->view_src ? s->view_src->buffer : s->buffer;
            if (b && !b->is_host() && b->buffer_type() != ggml_backend_cpu_repack_buffer_type()) return false;
        }
        return cpu_repacked_sources_ok(op) && ggml_cpu_supports_op(op);
    }
    bool supports_buft(const ggml_backend_buffer_type_i * buft) const override {
        return buft->is_host() || buft == ggml_backend_cpu_repack_buffer_type();
    }

private:
    cpu_buffer_type buft_;
    std::string description_;
};

ggml_backend_device_i * cpu_buffer_type::device() const { return dev_; }

// The one CPU device of the process: immutable once made.
cpu_device & the_cpu_device() {
    static cpu_device dev;
    return dev;
}

class cpu_reg final : public ggml_backend_reg_i {
public:
    const char * name() const override { return "CPU"; }
    size_t device_count() const override { return 1; }
    ggml_backend_device_i * device(size_t i) override { return i == 0 ? &the_cpu_device() : nullptr; }
};

int default_n_threads() {
    const unsigned n = std::thread::hardware_concurrency();
    return n ? int(n) : 1;
}

ggml_cpu_isa isa_from_env(ggml_cpu_isa fallback) {
    const char * v = std::getenv("INFERD_CPU_ISA");
    ggml_cpu_isa isa = fallback;
    return v && ggml_cpu_isa_from_name(v, &isa) ? isa : fallback;
}

struct aligned_free {
    void operator()(void * p) const { std::free(p); }
};

class cpu_backend final : public ggml_backend_i {
public:
    explicit cpu_backend(const ggml_cpu_backend_options & opt);
    const char * name() const override { return "CPU"; }
    ggml_backend_device_i * device() const override { return &the_cpu_device(); }
    ggml_status graph_compute(ggml_cgraph * gf) override;

    void set_n_threads(int n);
    ggml_cpu_isa isa() const { return isa_; }
    ggml_cpu_isa mul_mat_isa(ggml_type t, int64_t n_cols) const {
        return calibrated_ ? calibration_.choose(t, n_cols, isa_) : isa_;
    }

private:
    bool ensure_work(size_t bytes);
    void compute_nodes(ggml_cgraph * gf, const std::vector<int> & n_tasks, int ith, int nth);

    ggml_cpu_features features_;
    ggml_cpu_isa isa_;
    ggml_cpu_calibration calibration_;
    bool calibrated_ = false;
    int n_threads_;
    int spin_us_;
    std::unique_ptr<ggml_cpu_threadpool> pool_;
    std::unique_ptr<void, aligned_free> work_;
    size_t work_size_ = 0;
    std::vector<std::atomic<int64_t>> counters_;
    std::atomic<int> error_{0};
};

cpu_backend::cpu_backend(const ggml_cpu_backend_options & opt)
    : features_(ggml_cpu_detect_features()),
      n_threads_(opt.n_threads > 0 ? opt.n_threads : default_n_threads()),
      spin_us_(opt.spin_us) {
    const ggml_cpu_isa best = features_.best_isa();
    ggml_cpu_isa want = opt.isa == ggml_cpu_isa::best ? isa_from_env(best) : opt.isa;
    isa_ = int(want) < int(best) ? want : best;
    const ggml_cpu_calibration * c = opt.calibration;
    if (!c && opt.isa == ggml_cpu_isa::best) c = ggml_cpu_calibration_default();
    if (c) {
        calibration_ = *c;
        calibrated_ = true;
    }
    pool_ = std::make_unique<ggml_cpu_threadpool>(n_threads_, spin_us_);
}

void cpu_backend::set_n_threads(int n) {
    if (n <= 0) n = default_n_threads();
    if (n == n_threads_) return;
    n_threads_ = n;
    pool_ = std::make_unique<ggml_cpu_threadpool>(n_threads_, spin_us_);
}

bool cpu_backend::ensure_work(size_t bytes) {
    if (bytes <= work_size_) return true;
    const size_t size = (bytes + 4095) / 4096 * 4096;
    void * mem = std::aligned_alloc(k_cpu_alignment, size);
    if (!mem) return false;
    work_.reset(mem);
    work_size_ = size;
    return true;
}

void cpu_backend::compute_nodes(ggml_cgraph * gf, const std::vector<int> & n_tasks, int ith, int nth) {
    ggml_compute_params p;
    p.wdata = work_.get();
    p.wsize = work_size_;
    p.isa = isa_;
    p.calibration = calibrated_ ? &calibration_ : nullptr;
    p.features = &features_;
    p.pool = pool_.get();
    p.error = &error_;
    for (int i = 0; i < gf->n_nodes; ++i) {
        if (n_tasks[size_t(i)] == 0) continue;  // nothing to compute
        ggml_tensor * node = gf->nodes[i];
        p.counters = &counters_[size_t(i) * GGML_CPU_N_COUNTERS];
        p.nth = n_tasks[size_t(i)];
        p.ith = ith;
        if (ith < p.nth) ggml_cpu_compute_forward(p, node);
        if (nth > 1) pool_->barrier(nth);
    }
}

ggml_status cpu_backend::graph_compute(ggml_cgraph * gf) {
    const int nth = n_threads_;
    std::vector<int> n_tasks(size_t(gf->n_nodes), 0);
    size_t work = 0;
    for (int i = 0; i < gf->n_nodes; ++i) {
        ggml_tensor * node = gf->nodes[i];
        if (ggml_op_is_metadata(node->op) || ggml_nelements(node) == 0) continue;
        if (!node->data) return GGML_STATUS_FAILED;  // not allocated
        if (!ggml_cpu_supports_op(node) || !cpu_repacked_sources_ok(node)) return GGML_STATUS_FAILED;
        // A node runs on one thread or on all of them: a kernel's p.barrier() is then either a
        // no-op or the run's own barrier, never a barrier of a subset (which would mix with
        // the end-of-node barrier of the threads that skip the node).
        const int nt = ggml_cpu_op_n_tasks(node, nth) <= 1 ? 1 : nth;
        n_tasks[size_t(i)] = nt;
        work = std::max(work, ggml_cpu_op_work_size(node, nt));
    }
    if (!ensure_work(work ? work : 64)) return GGML_STATUS_ALLOC_FAILED;
    const size_t n_counters = size_t(gf->n_nodes) * GGML_CPU_N_COUNTERS;
    if (counters_.size() < n_counters) counters_ = std::vector<std::atomic<int64_t>>(n_counters);
    for (size_t i = 0; i < n_counters; ++i) counters_[i].store(0, std::memory_order_relaxed);
    error_.store(0, std::memory_order_relaxed);

    pool_->run(nth, [&](int ith, int n) { compute_nodes(gf, n_tasks, ith, n); });
    return error_.load(std::memory_order_relaxed) ? GGML_STATUS_FAILED : GGML_STATUS_SUCCESS;
}

}  // namespace

void ggml_compute_params::barrier() const {
    if (nth > 1) pool->barrier(nth);
}

ggml_backend_ptr ggml_backend_cpu_init(const ggml_cpu_backend_options & opt) {
    return std::make_unique<cpu_backend>(opt);
}

std::unique_ptr<ggml_backend_reg_i> ggml_backend_cpu_reg() { return std::make_unique<cpu_reg>(); }

ggml_backend_buffer_type_i * ggml_backend_cpu_buffer_type() { return the_cpu_device().buffer_type(); }

ggml_backend_buffer_ptr ggml_backend_cpu_buffer_from_ptr(void * ptr, size_t size) {
    if (!ptr) return nullptr;
    return std::make_unique<cpu_buffer>(ggml_backend_cpu_buffer_type(), ptr, size, /*owned=*/false);
}

bool ggml_backend_is_cpu(const ggml_backend_i * backend) {
    return backend && dynamic_cast<const cpu_backend *>(backend) != nullptr;
}

void ggml_backend_cpu_set_n_threads(ggml_backend_i * backend, int n_threads) {
    if (auto * cpu = dynamic_cast<cpu_backend *>(backend)) cpu->set_n_threads(n_threads);
}

ggml_cpu_isa ggml_backend_cpu_get_isa(const ggml_backend_i * backend) {
    const auto * cpu = dynamic_cast<const cpu_backend *>(backend);
    return cpu ? cpu->isa() : ggml_cpu_isa::scalar;
}

ggml_cpu_isa ggml_backend_cpu_mul_mat_isa(const ggml_backend_i * backend, ggml_type t, int64_t n_cols) {
    const auto * cpu = dynamic_cast<const cpu_backend *>(backend);
    return cpu ? cpu->mul_mat_isa(t, n_cols) : ggml_cpu_isa::scalar;
}
