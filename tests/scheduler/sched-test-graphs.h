// tests/scheduler/sched-test-graphs.h — graphs and helpers shared by the scheduler tests on CPU
// + mock devices (mock-backend.h): test graphs with leafs in mock or CPU memory, the CPU-only
// reference, the textbook and weights graphs, and random graphs with random unsupported ops.
//
// Usage:
//   sched_env env;                         // MOCK first, CPU last
//   ggml_scheduler sched(env.params());
//   test_graph g; build_textbook(g); g.finish(env.dev);
//   sched.compute(g.gf);
//   EXPECT_EQ(g.read_outputs(), cpu_reference(build_textbook));
#pragma once

#include "scheduler/mock-backend.h"
#include "scheduler/scheduler.h"

#include "ggml/alloc.h"
#include "ggml/backend.h"
#include "ggml/cpu.h"
#include "ggml/ggml.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <set>
#include <utility>
#include <vector>

inline constexpr int k_threads = 2;

inline ggml_context_ptr make_ctx(int n_tensors) {
    ggml_init_params ip;
    ip.mem_size = size_t(n_tensors) * ggml_tensor_overhead() + ggml_graph_overhead();
    ip.mem_buffer = nullptr;
    ip.no_alloc = true;
    return ggml_context_ptr(ggml_init(ip));
}

inline ggml_backend_ptr make_cpu() {
    ggml_cpu_backend_options opt;
    opt.n_threads = k_threads;
    return ggml_backend_cpu_init(opt);
}

// One graph with its leafs (weights and inputs, with data) in MOCK, second mock or CPU buffers.
struct test_graph {
    ggml_context_ptr mock_leafs = make_ctx(64);
    ggml_context_ptr mock2_leafs = make_ctx(64);
    ggml_context_ptr cpu_leafs = make_ctx(64);
    ggml_context_ptr ops = make_ctx(1024);
    ggml_backend_buffer_ptr mock_buf, mock2_buf, cpu_buf;
    std::vector<std::pair<ggml_tensor *, std::vector<float>>> data;
    std::vector<ggml_tensor *> outputs;
    ggml_cgraph * gf = nullptr;
    bool all_on_cpu = false;  // the reference: every leaf in CPU memory
    bool only_last_output = false;  // flag only the last output: compute memory gets reused

    ggml_tensor * leaf(bool on_mock, int64_t ne0, int64_t ne1, uint32_t seed, const char * name) {
        return leaf_on(on_mock ? 1 : 0, ne0, ne1, seed, name);
    }
    // device: 0 the CPU, 1 the mock of finish(), 2 the second mock of finish().
    ggml_tensor * leaf_on(int device, int64_t ne0, int64_t ne1, uint32_t seed, const char * name) {
        ggml_context * c = all_on_cpu || device == 0 ? cpu_leafs.get() : device == 1 ? mock_leafs.get() : mock2_leafs.get();
        ggml_tensor * t = ggml_new_tensor_2d(c, GGML_TYPE_F32, ne0, ne1);
        ggml_set_name(t, name);
        ggml_set_input(t);
        std::mt19937 rng(seed);
        std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
        std::vector<float> v(size_t(ne0 * ne1));
        for (float & x : v) x = dist(rng);
        data.emplace_back(t, std::move(v));
        return t;
    }
    void output(ggml_tensor * t) {
        if (!only_last_output) ggml_set_output(t);
        outputs.push_back(t);
    }
    // Builds the graph of every output, allocates the leafs and uploads their data.
    void finish(mock_device & dev, mock_device * dev2 = nullptr) {
        gf = ggml_new_graph(ops.get());
        for (ggml_tensor * t : outputs) ggml_build_forward_expand(gf, t);
        if (only_last_output) {
            ggml_set_output(outputs.back());
            outputs = {outputs.back()};
        }
        mock_buf = ggml_backend_alloc_ctx_tensors(mock_leafs.get(), dev.buffer_type());
        if (dev2) mock2_buf = ggml_backend_alloc_ctx_tensors(mock2_leafs.get(), dev2->buffer_type());
        cpu_buf = ggml_backend_alloc_ctx_tensors(cpu_leafs.get(), ggml_backend_cpu_buffer_type());
        for (auto & [t, v] : data) ggml_backend_tensor_set(t, v.data(), 0, ggml_nbytes(t));
    }
    std::vector<std::vector<uint8_t>> read_outputs() const {
        std::vector<std::vector<uint8_t>> r;
        for (ggml_tensor * t : outputs) {
            r.emplace_back(ggml_nbytes(t));
            ggml_backend_tensor_get(t, r.back().data(), 0, ggml_nbytes(t));
        }
        return r;
    }
    ggml_tensor * node(const char * name) const {
        for (int i = 0; i < gf->n_nodes; ++i) {
            if (std::strcmp(ggml_get_name(gf->nodes[i]), name) == 0) return gf->nodes[i];
        }
        return nullptr;
    }
};

using graph_fn = std::function<void(test_graph &)>;

// The outputs of build computed on the CPU backend alone, without the scheduler.
inline std::vector<std::vector<uint8_t>> cpu_reference(const graph_fn & build) {
    mock_device unused;
    test_graph g;
    g.all_on_cpu = true;
    build(g);
    g.finish(unused);
    ggml_gallocr galloc(ggml_backend_cpu_buffer_type());
    EXPECT_TRUE(galloc.alloc_graph(g.gf));
    ggml_backend_ptr cpu = make_cpu();
    EXPECT_EQ(cpu->graph_compute(g.gf), GGML_STATUS_SUCCESS);
    return g.read_outputs();
}

// The scheduler over MOCK (first) and CPU (last).
struct sched_env {
    mock_device dev;
    ggml_backend_ptr mock = dev.init_backend();
    ggml_backend_ptr cpu = make_cpu();
    ggml_sched_params params() const {
        ggml_sched_params p;
        p.backends = {{mock.get(), nullptr}, {cpu.get(), nullptr}};
        return p;
    }
};

// 1 + the number of backend changes along the node order.
inline int count_backend_runs(const ggml_scheduler & sched, const ggml_cgraph * gf) {
    int runs = 0;
    const ggml_backend_i * prev = nullptr;
    for (int i = 0; i < gf->n_nodes; ++i) {
        const ggml_backend_i * b = sched.tensor_backend(gf->nodes[i]);
        if (b != prev) ++runs;
        prev = b;
    }
    return runs;
}


// add -> scale -> mul -> concat -> norm, inputs on the mock.
inline void build_textbook(test_graph & g) {
    ggml_context * c = g.ops.get();
    ggml_tensor * x = g.leaf(true, 16, 4, 1, "x");
    ggml_tensor * y = g.leaf(true, 16, 4, 2, "y");
    ggml_tensor * z = g.leaf(true, 16, 4, 3, "z");
    ggml_tensor * a = ggml_set_name(ggml_add(c, x, y), "a");
    ggml_tensor * b = ggml_set_name(ggml_scale(c, a, 0.5f), "b");
    ggml_tensor * m = ggml_set_name(ggml_mul(c, b, z), "m");
    ggml_tensor * d = ggml_set_name(ggml_concat(c, m, a, 1), "d");
    g.output(ggml_set_name(ggml_norm(c, d, 1e-5f), "e"));
}

// y = W x; out = scale(y) + y: W on the mock or on the CPU, x in CPU memory.
inline void build_weights(test_graph & g, bool w_on_mock, int64_t batch) {
    ggml_context * c = g.ops.get();
    ggml_tensor * w = g.leaf(w_on_mock, 16, 8, 10, "w");
    ggml_tensor * x = g.leaf(false, 16, batch, 11, "x");
    ggml_tensor * y = ggml_set_name(ggml_mul_mat(c, w, x), "y");
    ggml_tensor * s = ggml_set_name(ggml_scale(c, y, 2.0f), "s");
    g.output(ggml_set_name(ggml_add(c, s, y), "out"));
}

// ---- random graphs ----

struct random_recipe {
    uint32_t seed = 0;
    bool leaf_on_mock[5] = {};
    struct step { int op; int a; int b; };
    std::vector<step> steps;
};

inline constexpr int k_random_ops = 12;
inline constexpr int64_t k_ne0 = 16, k_ne1 = 6;

inline random_recipe make_recipe(uint32_t seed) {
    std::mt19937 rng(seed);
    random_recipe r;
    r.seed = seed;
    for (bool & m : r.leaf_on_mock) m = rng() % 2 == 0;
    const int n = 8 + int(rng() % 13);
    for (int i = 0; i < n; ++i) {
        const int pool = 2 + i;  // two inputs, then every result so far
        r.steps.push_back({int(rng() % k_random_ops), int(rng() % unsigned(pool)), int(rng() % unsigned(pool))});
    }
    return r;
}

// Every tensor of the pool is [16, 6] F32; weights are [16, 16].
inline void build_random(test_graph & g, const random_recipe & r) {
    ggml_context * c = g.ops.get();
    std::vector<ggml_tensor *> pool = {g.leaf(r.leaf_on_mock[0], k_ne0, k_ne1, r.seed * 7 + 1, "in0"),
                                       g.leaf(r.leaf_on_mock[1], k_ne0, k_ne1, r.seed * 7 + 2, "in1")};
    ggml_tensor * w[3];
    for (int i = 0; i < 3; ++i) {
        char name[16];
        std::snprintf(name, sizeof(name), "w%d", i);
        w[i] = g.leaf(r.leaf_on_mock[2 + i], k_ne0, k_ne0, r.seed * 7 + 3 + uint32_t(i), name);
    }
    for (size_t i = 0; i < r.steps.size(); ++i) {
        const random_recipe::step & s = r.steps[i];
        ggml_tensor * a = pool[size_t(s.a)];
        ggml_tensor * b = pool[size_t(s.b)];
        ggml_tensor * t = nullptr;
        switch (s.op) {
        case 0: t = ggml_add(c, a, b); break;
        case 1: t = ggml_mul(c, a, b); break;
        case 2: t = ggml_scale(c, a, 0.75f); break;
        case 3: t = ggml_silu(c, a); break;
        case 4: t = ggml_gelu(c, a); break;
        case 5: t = ggml_rms_norm(c, a, 1e-6f); break;
        case 6: t = ggml_norm(c, a, 1e-5f); break;
        case 7: t = ggml_soft_max(c, a); break;
        case 8: t = ggml_mul_mat(c, w[size_t(s.b) % 3], a); break;
        case 9: t = ggml_reshape_2d(c, ggml_cont(c, ggml_transpose(c, a)), k_ne0, k_ne1); break;
        case 10: {
            ggml_tensor * top = ggml_view_2d(c, a, k_ne0, k_ne1 / 2, a->nb[1], 0);
            ggml_tensor * bottom = ggml_view_2d(c, b, k_ne0, k_ne1 / 2, b->nb[1], b->nb[1] * size_t(k_ne1 / 2));
            t = ggml_concat(c, top, bottom, 1);
            break;
        }
        default: t = ggml_swiglu(c, a, b); break;
        }
        ggml_format_name(t, "r%zu", i);
        pool.push_back(t);
        g.output(t);
    }
}

inline std::set<ggml_op> random_unsupported(uint32_t seed) {
    static const ggml_op candidates[] = {GGML_OP_ADD, GGML_OP_MUL, GGML_OP_SCALE, GGML_OP_SILU,
                                         GGML_OP_GELU, GGML_OP_RMS_NORM, GGML_OP_NORM, GGML_OP_SOFT_MAX,
                                         GGML_OP_MUL_MAT, GGML_OP_CONT, GGML_OP_CONCAT, GGML_OP_SWIGLU};
    std::mt19937 rng(seed ^ 0x5bd1e995u);
    std::set<ggml_op> ops;
    for (ggml_op op : candidates) {
        if (rng() % 3 == 0) ops.insert(op);
    }
    return ops;
}
