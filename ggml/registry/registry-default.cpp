// The backends compiled into this build, registered in priority order of discovery: the CPU
// first (always there), then the GPU families the build has (CUDA when INFERD_HAVE_CUDA); and
// what to say about them (--list-devices).
#include "ggml/backend.h"
#include "ggml/cpu.h"
#ifdef INFERD_HAVE_CUDA
#include "ggml/cuda.h"
#endif

#include <cstdio>
#include <string>

ggml_backend_registry ggml_backend_registry_default() {
    ggml_backend_registry reg;
    reg.add(ggml_backend_cpu_reg());
#ifdef INFERD_HAVE_CUDA
    reg.add(ggml_backend_cuda_reg());
#endif
    return reg;
}

std::string ggml_backend_registry_gpu_status(const ggml_backend_registry & reg) {
    if (reg.device_by_type(ggml_backend_dev_type::gpu) != nullptr) return "";
#ifdef INFERD_HAVE_CUDA
    const std::string why = ggml_backend_cuda_status();
    return why.empty() ? "the CUDA backend found no device" : why;
#else
    return "this build has no GPU backend (configured without CUDA)";
#endif
}

std::string ggml_backend_registry_describe(const ggml_backend_registry & reg) {
    std::string out;
    const std::vector<ggml_backend_device_info> devs = reg.devices();
    for (size_t i = 0; i < devs.size(); ++i) {
        const ggml_backend_device_info & d = devs[i];
        char memory[96];
        std::snprintf(memory, sizeof(memory), ", %.1f GiB free of %.1f GiB\n", double(d.memory_free) / double(1u << 30),
                      double(d.memory_total) / double(1u << 30));
        out += std::to_string(i) + ": " + d.name + " (" + ggml_backend_dev_type_name(d.type) + ") " + d.description + memory;
    }
    const std::string why = ggml_backend_registry_gpu_status(reg);
    if (!why.empty()) out += "no GPU device: " + why + "\n";
    return out;
}
