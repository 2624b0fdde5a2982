// tests/ggml/test-cuda-common.h — helpers of the CUDA backend's tests: the registry entry, a
// skip without a usable GPU, and graphs run on the CPU and on the GPU and compared.
//
// Usage:
//   TEST(x, y) {
//       SKIP_WITHOUT_GPU();
//       expect_same_as_cpu("silu f16", [](cuda_test::case_inputs & in) {
//           return ggml_silu(in.ctx, in.random(GGML_TYPE_F16, {33, 5, 1, 1}));
//       }, 1e-6);
//   }
#pragma once

#include "backend-ops-values.h"
#include "test-devices.h"

#include "ggml/cpu.h"
#include "ggml/cuda.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace cuda_test {

using bops::dt;
using bops::shape4;

inline ggml_backend_reg_i & cuda_reg() {
    static std::unique_ptr<ggml_backend_reg_i> reg = ggml_backend_cuda_reg();
    return *reg;
}

inline ggml_backend_device_i * gpu() { return cuda_reg().device_count() ? cuda_reg().device(0) : nullptr; }

inline ggml_context_ptr new_ctx(size_t n_tensors = 64) {
    ggml_init_params ip;
    ip.mem_size = n_tensors * ggml_tensor_overhead() + ggml_graph_overhead();
    ip.no_alloc = true;
    return ggml_context_ptr(ggml_init(ip));
}

// The inputs of one graph; values depend only on the seed and the order of creation, so a graph
// built twice (for the CPU and for the GPU) gets the same inputs.
struct case_inputs {
    ggml_context * ctx = nullptr;
    uint64_t seed = 1;
    struct input {
        ggml_tensor * t;
        std::vector<double> values;  // F32/F16/BF16/I32/I64
        std::vector<uint8_t> raw;    // quantized types
    };
    std::vector<input> list;

    ggml_tensor * random(ggml_type type, const shape4 & ne, double lo = -1.0, double hi = 1.0) {
        ggml_tensor * t = ggml_new_tensor(ctx, type, 4, ne.data());
        ggml_set_input(t);
        bops::rng r(seed * 7919 + list.size());
        std::vector<double> v(size_t(ggml_nelements(t)));
        for (double & x : v) x = r.uniform(lo, hi);
        input in{t, {}, {}};
        if (ggml_get_type_traits(type).is_quantized) {
            std::vector<float> f(v.begin(), v.end());
            in.raw.resize(ggml_nbytes(t));
            ggml_get_type_traits(type).from_float(f.data(), in.raw.data(), ggml_nelements(t));
        } else {
            in.values = std::move(v);
        }
        list.push_back(std::move(in));
        return t;
    }
    ggml_tensor * values(ggml_type type, const shape4 & ne, std::vector<double> v) {
        ggml_tensor * t = ggml_new_tensor(ctx, type, 4, ne.data());
        ggml_set_input(t);
        list.push_back({t, std::move(v), {}});
        return t;
    }
    void upload() const {
        for (const input & in : list) {
            if (in.raw.empty()) {
                bops::write_tensor(in.t, in.values);
            } else {
                ggml_backend_tensor_set(in.t, in.raw.data(), 0, in.raw.size());
            }
        }
    }
};

using graph_fn = std::function<ggml_tensor *(case_inputs &)>;

struct graph_run {
    ggml_context_ptr ctx;
    case_inputs in;
    ggml_tensor * out = nullptr;
    ggml_cgraph * gf = nullptr;
    ggml_backend_buffer_ptr buf;
    ggml_status status = GGML_STATUS_FAILED;
};

inline graph_run build_graph(const graph_fn & build, ggml_backend_buffer_type_i * buft, uint64_t seed) {
    graph_run r;
    r.ctx = new_ctx(256);
    r.in.ctx = r.ctx.get();
    r.in.seed = seed;
    r.out = build(r.in);
    ggml_set_output(r.out);
    r.gf = ggml_new_graph(r.ctx.get());
    ggml_build_forward_expand(r.gf, r.out);
    r.buf = ggml_backend_alloc_ctx_tensors(r.ctx.get(), buft);
    EXPECT_TRUE(r.buf);
    if (r.buf) r.in.upload();
    return r;
}

inline graph_run run_graph(const graph_fn & build, ggml_backend_i * be, ggml_backend_buffer_type_i * buft,
                           uint64_t seed) {
    graph_run r = build_graph(build, buft, seed);
    if (!r.buf) return r;
    r.status = be->graph_compute(r.gf);
    be->synchronize();
    return r;
}

inline ggml_backend_i & cpu_backend() {
    static ggml_backend_ptr be = ggml_backend_cpu_init({});
    return *be;
}

inline ggml_backend_i & gpu_backend() {
    static ggml_backend_ptr be = gpu()->init_backend();
    return *be;
}

// Runs the graph on the CPU and on the GPU and compares the results: bytes for quantized
// results, else the normalized mean squared error (0: equal values).
inline void expect_same_as_cpu(const std::string & name, const graph_fn & build, double max_nmse, uint64_t seed = 1) {
    SCOPED_TRACE(name);
    ASSERT_TRUE(gpu()->supports_op(build_graph(build, ggml_backend_cpu_buffer_type(), seed).out)) << "not supported";
    graph_run c = run_graph(build, &cpu_backend(), ggml_backend_cpu_buffer_type(), seed);
    graph_run g = run_graph(build, &gpu_backend(), gpu()->buffer_type(), seed);
    ASSERT_EQ(c.status, GGML_STATUS_SUCCESS);
    ASSERT_EQ(g.status, GGML_STATUS_SUCCESS);
    if (ggml_get_type_traits(c.out->type).is_quantized) {
        EXPECT_EQ(bops::read_bytes(c.out), bops::read_bytes(g.out));
        return;
    }
    const dt rc = bops::read_tensor(c.out), rg = bops::read_tensor(g.out);
    double num = 0.0, den = 0.0;
    int64_t mismatched_nonfinite = 0;
    for (int64_t i = 0; i < rc.size(); ++i) {
        const double x = rc.v[size_t(i)], y = rg.v[size_t(i)];
        if (std::isfinite(x) != std::isfinite(y) || (std::isnan(x) != std::isnan(y))) ++mismatched_nonfinite;
        if (std::isfinite(x) && std::isfinite(y)) {
            num += (x - y) * (x - y);
            den += x * x;
        }
    }
    EXPECT_EQ(mismatched_nonfinite, 0);
    const double nmse = den > 0.0 ? num / den : num;
    EXPECT_LE(nmse, max_nmse);
}

}  // namespace cuda_test

// Skips the test, with the runtime's reason, where there is no usable GPU; fails instead when
// INFERD_REQUIRE_GPU=1 (make gpu-check: a GPU machine must run every GPU test).
#define SKIP_WITHOUT_GPU()                                                                         \
    do {                                                                                           \
        if (!cuda_test::gpu()) {                                                                   \
            if (test_devices::gpu_required()) FAIL() << "INFERD_REQUIRE_GPU=1 but no usable CUDA device: " << ggml_backend_cuda_status(); \
            GTEST_SKIP() << "no usable CUDA device: " << ggml_backend_cuda_status();              \
        }                                                                                          \
    } while (0)
