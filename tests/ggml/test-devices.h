// tests/ggml/test-devices.h — the devices an op test runs on: every CPU kernel path this CPU has
// (scalar, avx2, avx512, amx) with the test's thread counts, then every non-CPU device of
// ggml_backend_registry_default() (a CUDA GPU in a CUDA build on a machine that has one).
//
// Usage:
//   std::vector<test_devices::entry> & backends() {
//       static std::vector<test_devices::entry> list = test_devices::make_list({1, 3});
//       return list;
//   }
//   for (test_devices::entry & be : backends()) {
//       if (!be.is_cpu()) buf = test_devices::move_ctx_tensors(ctx, be.buffer_type());  // into its memory
//       if (!be.supports_graph(gf)) continue;            // a device may lack an op (never the CPU)
//       ASSERT_EQ(be.compute(gf), GGML_STATUS_SUCCESS);  // graph_compute, then synchronize
//   }
//
// A GPU computes in its own memory: a test allocates its tensors in be.buffer_type() (or moves
// them there with move_ctx_tensors) and reads results with ggml_backend_tensor_get as usual.
// When the registry has no non-CPU device, make_list prints once per program
// "no GPU device: <reason>" (the CUDA backend's status in a CUDA build, else that the build has
// no GPU backend) and the list holds the CPU paths only. make_entry turns any device into an
// entry (the scheduler tests' mock device checks the non-CPU path this way).
#pragma once

#include "ggml/backend.h"
#include "ggml/cpu.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

namespace test_devices {

struct entry {
    ggml_backend_device_i * device = nullptr;
    ggml_backend_ptr backend;
    std::string label;                        // "isa=avx2 threads=3", or the device's name
    ggml_cpu_isa isa = ggml_cpu_isa::scalar;  // CPU entries
    int n_threads = 0;                        // CPU entries

    bool is_cpu() const { return device->type() == ggml_backend_dev_type::cpu; }
    ggml_backend_buffer_type_i * buffer_type() const { return device->buffer_type(); }
    // Whether the device computes every node of gf (metadata ops need nothing).
    bool supports_graph(const ggml_cgraph * gf) const {
        for (int i = 0; i < gf->n_nodes; ++i) {
            if (!ggml_op_is_metadata(gf->nodes[i]->op) && !device->supports_op(gf->nodes[i])) return false;
        }
        return true;
    }
    // graph_compute, then synchronize: the results are readable when it returns.
    ggml_status compute(ggml_cgraph * gf) const {
        const ggml_status st = backend->graph_compute(gf);
        backend->synchronize();
        return st;
    }
};

// The build's registry, for the whole program (its devices live as long as it does).
inline ggml_backend_registry & registry() {
    static ggml_backend_registry reg = ggml_backend_registry_default();
    return reg;
}

// Every non-CPU device of the registry.
inline std::vector<ggml_backend_device_i *> gpu_devices() {
    std::vector<ggml_backend_device_i *> out;
    for (size_t i = 0; i < registry().device_count(); ++i) {
        ggml_backend_device_i * d = registry().device(i);
        if (d->type() != ggml_backend_dev_type::cpu) out.push_back(d);
    }
    return out;
}

// Why the registry has no non-CPU device.
inline std::string no_gpu_reason() { return ggml_backend_registry_gpu_status(registry()); }

// Whether INFERD_REQUIRE_GPU=1 is set (make gpu-check): then a missing GPU is an error.
inline bool gpu_required() {
    const char * v = std::getenv("INFERD_REQUIRE_GPU");
    return v != nullptr && std::string(v) == "1";
}

// Prints "no GPU device: <reason>" the first time it is called in a program without one; with
// INFERD_REQUIRE_GPU=1 the program exits with status 1 instead.
inline void note_no_gpu_once() {
    static const bool printed = [] {
        if (!gpu_devices().empty()) return false;
        std::printf("no GPU device: %s\n", no_gpu_reason().c_str());
        std::fflush(stdout);
        if (gpu_required()) {
            std::fprintf(stderr, "INFERD_REQUIRE_GPU=1: a GPU device is required\n");
            std::exit(1);
        }
        return true;
    }();
    (void) printed;
}

// An entry computing on dev with one new backend (stream) of it.
inline entry make_entry(ggml_backend_device_i * dev) {
    entry e;
    e.device = dev;
    e.backend = dev->init_backend();
    e.label = dev->name();
    GGML_ASSERT(e.backend != nullptr);
    return e;
}

// Every (ISA path this CPU has) x cpu_threads CPU backend, then every non-CPU device.
inline std::vector<entry> make_list(std::initializer_list<int> cpu_threads) {
    std::vector<entry> list;
    const ggml_cpu_isa best = ggml_cpu_detect_features().best_isa();
    for (ggml_cpu_isa isa : {ggml_cpu_isa::scalar, ggml_cpu_isa::avx2, ggml_cpu_isa::avx512, ggml_cpu_isa::amx}) {
        if (static_cast<int>(isa) > static_cast<int>(best)) continue;
        for (int n_threads : cpu_threads) {
            ggml_cpu_backend_options opt;
            opt.n_threads = n_threads;
            opt.isa = isa;
            entry e;
            e.backend = ggml_backend_cpu_init(opt);
            e.device = e.backend->device();
            e.isa = isa;
            e.n_threads = n_threads;
            e.label = std::string("isa=") + ggml_cpu_isa_name(isa) + " threads=" + std::to_string(n_threads);
            list.push_back(std::move(e));
        }
    }
    for (ggml_backend_device_i * d : gpu_devices()) list.push_back(make_entry(d));
    note_no_gpu_once();
    return list;
}

// Places every tensor of ctx anew in one new buffer of buft, keeping the contents of those that
// have data (read back, written again; views point into their moved sources). Returns the new
// buffer; the old one no longer holds any tensor of ctx.
inline ggml_backend_buffer_ptr move_ctx_tensors(ggml_context * ctx, ggml_backend_buffer_type_i * buft) {
    std::vector<std::pair<ggml_tensor *, std::vector<uint8_t>>> saved;
    for (ggml_tensor * t = ggml_get_first_tensor(ctx); t; t = ggml_get_next_tensor(ctx, t)) {
        if (t->data == nullptr || t->view_src != nullptr) continue;
        std::vector<uint8_t> bytes(ggml_nbytes(t));
        ggml_backend_tensor_get(t, bytes.data(), 0, bytes.size());
        saved.emplace_back(t, std::move(bytes));
    }
    for (ggml_tensor * t = ggml_get_first_tensor(ctx); t; t = ggml_get_next_tensor(ctx, t)) {
        t->data = nullptr;
        t->buffer = nullptr;
    }
    ggml_backend_buffer_ptr buf = ggml_backend_alloc_ctx_tensors(ctx, buft);
    GGML_ASSERT(buf != nullptr && "move_ctx_tensors: out of memory");
    for (auto & [t, bytes] : saved) ggml_backend_tensor_set(t, bytes.data(), 0, bytes.size());
    return buf;
}

}  // namespace test_devices
