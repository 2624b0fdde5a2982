// The CUDA registry entry and its devices (ggml/cuda.h).
//
// The devices are enumerated once per process with cudaGetDeviceCount; any error there (no
// driver, a driver too old for this runtime, no device) gives a registry entry with no device
// and the runtime's message in ggml_backend_cuda_status().
#include "backend-cuda.h"
#include "ops.cuh"

#include <string>
#include <vector>

namespace {

// A batch of at least this many tokens makes a matrix product worth running on the GPU even
// when its weights live in host memory (they are copied over for it).
constexpr int64_t k_offload_min_batch = 32;

struct cuda_devices {
    std::vector<std::unique_ptr<ggml_cuda_device>> list;
    std::string status;
};

std::string runtime_message(const char * what, cudaError_t err) {
    return std::string(what) + ": " + cudaGetErrorString(err) + " (" + cudaGetErrorName(err) + ")";
}

cuda_devices enumerate_devices() {
    cuda_devices d;
    int n = 0;
    const cudaError_t err = cudaGetDeviceCount(&n);
    if (err != cudaSuccess) {
        (void) cudaGetLastError();
        d.status = runtime_message("cudaGetDeviceCount", err);
        return d;
    }
    if (n <= 0) {
        d.status = "no CUDA device found";
        return d;
    }
    for (int i = 0; i < n; ++i) {
        cudaDeviceProp prop{};
        const cudaError_t e = cudaGetDeviceProperties(&prop, i);
        if (e != cudaSuccess) {
            (void) cudaGetLastError();
            d.status += (d.status.empty() ? "" : "; ") + runtime_message(("device " + std::to_string(i)).c_str(), e);
            continue;
        }
        ggml_cuda_device_info info;
        info.index = i;
        info.description = prop.name;
        info.cc = prop.major * 10 + prop.minor;
        info.sm_count = prop.multiProcessorCount;
        d.list.push_back(std::make_unique<ggml_cuda_device>(info));
    }
    if (!d.list.empty()) d.status.clear();
    return d;
}

// The devices of this process: made on first use, never changed afterwards.
const cuda_devices & the_cuda_devices() {
    static const cuda_devices devices = enumerate_devices();
    return devices;
}

class cuda_reg final : public ggml_backend_reg_i {
public:
    const char * name() const override { return "CUDA"; }
    size_t device_count() const override { return the_cuda_devices().list.size(); }
    ggml_backend_device_i * device(size_t i) override {
        const auto & list = the_cuda_devices().list;
        return i < list.size() ? list[i].get() : nullptr;
    }
};

// Tokens of a batch for the ops that offload_op considers, 0 for the others.
int64_t offload_batch(const ggml_tensor * op) {
    switch (op->op) {
        case GGML_OP_MUL_MAT: return op->ne[1] * op->ne[2] * op->ne[3];
        case GGML_OP_MUL_MAT_ID: return op->ne[2];
        default: return 0;
    }
}

}  // namespace

ggml_cuda_device::ggml_cuda_device(const ggml_cuda_device_info & info)
    : info_(info), name_("CUDA" + std::to_string(info.index)), buft_(this, name_), host_buft_(this) {}

void ggml_cuda_device::memory(size_t * free, size_t * total) const {
    *free = 0;
    *total = 0;
    if (!ggml_cuda_set_device(info_.index)) return;
    size_t f = 0, t = 0;
    if (GGML_CUDA_CHECK(cudaMemGetInfo(&f, &t))) {
        *free = f;
        *total = t;
    }
}

ggml_backend_ptr ggml_cuda_device::init_backend() {
    auto backend = std::make_unique<ggml_cuda_backend>(this);
    if (!backend->ok()) return nullptr;
    return backend;
}

bool ggml_cuda_device::supports_op(const ggml_tensor * op) const { return ggml_cuda_supports_op(op); }

// Only this device's memory: kernels could read pinned host memory, but over the bus at every
// use, so the scheduler copies such inputs to the device instead.
bool ggml_cuda_device::supports_buft(const ggml_backend_buffer_type_i * buft) const { return buft == &buft_; }

bool ggml_cuda_device::offload_op(const ggml_tensor * op) const {
    return offload_batch(op) >= k_offload_min_batch;
}

ggml_backend_event_ptr ggml_cuda_device::event_new() {
    if (!ggml_cuda_set_device(info_.index)) return nullptr;
    cudaEvent_t ev = nullptr;
    if (!GGML_CUDA_CHECK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming))) return nullptr;
    return std::make_unique<ggml_cuda_event>(this, ev);
}

std::unique_ptr<ggml_backend_reg_i> ggml_backend_cuda_reg() { return std::make_unique<cuda_reg>(); }

std::string ggml_backend_cuda_status() { return the_cuda_devices().status; }
