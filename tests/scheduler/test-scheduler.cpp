// The scheduler on CPU + the mock device (mock-backend.h): assignment passes and their causes,
// splits and copies, execution (async inputs, eval callback), reserve, debug output. Every
// result is compared bit for bit with the same graph computed on the CPU backend alone (the
// mock runs the same CPU kernels).
#include "scheduler/mock-backend.h"
#include "scheduler/scheduler.h"

#include "ggml/alloc.h"
#include "ggml/backend.h"
#include "ggml/cpu.h"
#include "ggml/ggml.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

constexpr int k_threads = 2;

ggml_context_ptr make_ctx(int n_tensors) {
    ggml_init_params ip;
    ip.mem_size = size_t(n_tensors) * ggml_tensor_overhead() + ggml_graph_overhead();
    ip.mem_buffer = nullptr;
    ip.no_alloc = true;
    return ggml_context_ptr(ggml_init(ip));
}

ggml_backend_ptr make_cpu() {
    ggml_cpu_backend_options opt;
    opt.n_threads = k_threads;
    return ggml_backend_cpu_init(opt);
}

// One graph with its leafs (weights and inputs, with data) in MOCK or CPU buffers.
struct test_graph {
    ggml_context_ptr mock_leafs = make_ctx(64);
    ggml_context_ptr cpu_leafs = make_ctx(64);
    ggml_context_ptr ops = make_ctx(1024);
    ggml_backend_buffer_ptr mock_buf, cpu_buf;
    std::vector<std::pair<ggml_tensor *, std::vector<float>>> data;
    std::vector<ggml_tensor *> outputs;
    ggml_cgraph * gf = nullptr;
    bool all_on_cpu = false;  // the reference: every leaf in CPU memory
    bool only_last_output = false;  // flag only the last output: compute memory gets reused

    ggml_tensor * leaf(bool on_mock, int64_t ne0, int64_t ne1, uint32_t seed, const char * name) {
        ggml_context * c = (on_mock && !all_on_cpu) ? mock_leafs.get() : cpu_leafs.get();
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
    void finish(mock_device & dev) {
        gf = ggml_new_graph(ops.get());
        for (ggml_tensor * t : outputs) ggml_build_forward_expand(gf, t);
        if (only_last_output) {
            ggml_set_output(outputs.back());
            outputs = {outputs.back()};
        }
        mock_buf = ggml_backend_alloc_ctx_tensors(mock_leafs.get(), dev.buffer_type());
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
std::vector<std::vector<uint8_t>> cpu_reference(const graph_fn & build) {
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
int count_backend_runs(const ggml_scheduler & sched, const ggml_cgraph * gf) {
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
void build_textbook(test_graph & g) {
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

TEST(Scheduler, TextbookCaseGivesTwoSplitsAndOneCopyBack) {
    sched_env env;
    env.dev.set_unsupported({GGML_OP_NORM});
    ggml_scheduler sched(env.params());
    test_graph g;
    build_textbook(g);
    g.finish(env.dev);
    const mock_counters before = env.dev.count();
    ASSERT_EQ(sched.compute(g.gf), GGML_STATUS_SUCCESS);
    EXPECT_EQ(sched.n_splits(), 2);
    EXPECT_EQ(sched.n_copies(), 1);
    for (const char * n : {"a", "b", "m", "d"}) EXPECT_EQ(sched.tensor_backend(g.node(n)), env.mock.get()) << n;
    EXPECT_EQ(sched.tensor_backend(g.node("e")), env.cpu.get());
    // The one copy: d read back from the mock.
    EXPECT_EQ(env.dev.count().get_calls - before.get_calls, 1);
    EXPECT_EQ(env.dev.count().get_bytes - before.get_bytes, int64_t(ggml_nbytes(g.node("d"))));
    EXPECT_EQ(env.dev.count().set_calls, before.set_calls);  // nothing to upload
    EXPECT_EQ(env.dev.count().graphs_computed - before.graphs_computed, 1);
    EXPECT_EQ(env.dev.count().foreign_reads, 0);
    EXPECT_EQ(g.read_outputs(), cpu_reference(build_textbook));
}

// y = W x; out = scale(y) + y: W on the mock or on the CPU, x in CPU memory.
void build_weights(test_graph & g, bool w_on_mock, int64_t batch) {
    ggml_context * c = g.ops.get();
    ggml_tensor * w = g.leaf(w_on_mock, 16, 8, 10, "w");
    ggml_tensor * x = g.leaf(false, 16, batch, 11, "x");
    ggml_tensor * y = ggml_set_name(ggml_mul_mat(c, w, x), "y");
    ggml_tensor * s = ggml_set_name(ggml_scale(c, y, 2.0f), "s");
    g.output(ggml_set_name(ggml_add(c, s, y), "out"));
}

TEST(Scheduler, WeightsOnTheMockPullTheirConsumers) {
    sched_env env;
    ggml_scheduler sched(env.params());
    test_graph g;
    auto build = [](test_graph & t) { build_weights(t, true, 4); };
    build(g);
    g.finish(env.dev);
    ASSERT_EQ(sched.compute(g.gf), GGML_STATUS_SUCCESS);
    EXPECT_EQ(sched.tensor_backend(g.node("y")), env.mock.get());
    EXPECT_EQ(sched.tensor_cause(g.node("y")), ggml_sched_cause::weights);
    EXPECT_EQ(sched.tensor_backend(g.node("s")), env.mock.get());
    EXPECT_EQ(sched.tensor_backend(g.node("out")), env.mock.get());
    EXPECT_EQ(sched.n_splits(), 1);
    EXPECT_EQ(sched.n_copies(), 1);  // x uploaded
    EXPECT_EQ(env.dev.count().foreign_reads, 0);
    EXPECT_EQ(g.read_outputs(), cpu_reference(build));
}

TEST(Scheduler, WeightsOnTheCpuKeepTheirConsumers) {
    sched_env env;
    ggml_scheduler sched(env.params());
    test_graph g;
    auto build = [](test_graph & t) { build_weights(t, false, 4); };
    build(g);
    g.finish(env.dev);
    const mock_counters before = env.dev.count();
    ASSERT_EQ(sched.compute(g.gf), GGML_STATUS_SUCCESS);
    for (const char * n : {"y", "s", "out"}) EXPECT_EQ(sched.tensor_backend(g.node(n)), env.cpu.get()) << n;
    EXPECT_EQ(sched.tensor_cause(g.node("y")), ggml_sched_cause::weights);
    EXPECT_EQ(sched.n_splits(), 1);
    EXPECT_EQ(sched.n_copies(), 0);
    EXPECT_EQ(env.dev.count().graphs_computed, before.graphs_computed);
    EXPECT_EQ(g.read_outputs(), cpu_reference(build));
}

// With op_offload, a large batch runs on the mock although its weights are in host memory.
void check_offload(bool op_offload, int64_t batch, bool expect_mock) {
    sched_env env;
    env.dev.set_offload_min_batch(32);
    ggml_sched_params p = env.params();
    p.op_offload = op_offload;
    ggml_scheduler sched(p);
    test_graph g;
    auto build = [batch](test_graph & t) { build_weights(t, false, batch); };
    build(g);
    g.finish(env.dev);
    ASSERT_EQ(sched.compute(g.gf), GGML_STATUS_SUCCESS);
    ggml_backend_i * want = expect_mock ? env.mock.get() : env.cpu.get();
    EXPECT_EQ(sched.tensor_backend(g.node("y")), want);
    if (expect_mock) {
        EXPECT_EQ(sched.tensor_cause(g.node("y")), ggml_sched_cause::offload);
    }
    EXPECT_EQ(env.dev.count().foreign_reads, 0);
    EXPECT_EQ(g.read_outputs(), cpu_reference(build));
}

TEST(Scheduler, OffloadRunsLargeBatchesOnTheDevice) { check_offload(true, 32, true); }
TEST(Scheduler, OffloadNotForSmallBatches) { check_offload(true, 4, false); }
TEST(Scheduler, OffloadOnlyWhenEnabled) { check_offload(false, 32, false); }

// Views of a mock tensor (reshape, permute, view) stay on the mock; norm runs on the CPU.
void build_views(test_graph & g) {
    ggml_context * c = g.ops.get();
    ggml_tensor * x = g.leaf(true, 16, 4, 20, "x");
    ggml_tensor * v = ggml_set_name(ggml_view_2d(c, x, 16, 2, x->nb[1], x->nb[1]), "v");
    ggml_tensor * a = ggml_set_name(ggml_add(c, x, x), "a");
    ggml_tensor * r = ggml_set_name(ggml_reshape_2d(c, a, 8, 8), "r");
    ggml_tensor * p = ggml_set_name(ggml_permute(c, r, 1, 0, 2, 3), "p");
    ggml_tensor * k = ggml_set_name(ggml_cont(c, p), "k");
    ggml_tensor * n = ggml_set_name(ggml_norm(c, k, 1e-5f), "n");
    g.output(ggml_set_name(ggml_scale(c, v, 3.0f), "vs"));
    g.output(n);
}

TEST(Scheduler, ViewsInheritTheirSourcesBackend) {
    sched_env env;
    env.dev.set_unsupported({GGML_OP_NORM});
    ggml_scheduler sched(env.params());
    test_graph g;
    build_views(g);
    g.finish(env.dev);
    ASSERT_EQ(sched.compute(g.gf), GGML_STATUS_SUCCESS);
    for (const char * n : {"v", "a", "r", "p", "k", "vs"}) {
        EXPECT_EQ(sched.tensor_backend(g.node(n)), env.mock.get()) << n;
    }
    EXPECT_EQ(sched.tensor_backend(g.node("n")), env.cpu.get());
    EXPECT_EQ(env.dev.count().foreign_reads, 0);
    EXPECT_EQ(g.read_outputs(), cpu_reference(build_views));
}

TEST(Scheduler, PinsAreHonouredWithCausePinned) {
    sched_env env;
    ggml_scheduler sched(env.params());
    test_graph g;
    auto build = [](test_graph & t) { build_weights(t, true, 4); };
    build(g);
    g.finish(env.dev);
    // s would follow y onto the mock; out would follow s.
    sched.set_tensor_backend(g.node("s"), env.cpu.get());
    ASSERT_EQ(sched.compute(g.gf), GGML_STATUS_SUCCESS);
    EXPECT_EQ(sched.tensor_backend(g.node("y")), env.mock.get());
    EXPECT_EQ(sched.tensor_backend(g.node("s")), env.cpu.get());
    EXPECT_EQ(sched.tensor_cause(g.node("s")), ggml_sched_cause::pinned);
    EXPECT_GE(sched.n_splits(), 2);
    EXPECT_EQ(sched.n_splits(), count_backend_runs(sched, g.gf));
    EXPECT_EQ(env.dev.count().foreign_reads, 0);
    EXPECT_EQ(g.read_outputs(), cpu_reference(build));

    // A pin to the mock for a graph whose data is all in CPU memory.
    ggml_scheduler sched2(env.params());
    test_graph h;
    auto build_cpu = [](test_graph & t) { build_weights(t, false, 4); };
    build_cpu(h);
    h.finish(env.dev);
    sched2.set_tensor_backend(h.node("s"), env.mock.get());
    ASSERT_EQ(sched2.compute(h.gf), GGML_STATUS_SUCCESS);
    EXPECT_EQ(sched2.tensor_backend(h.node("s")), env.mock.get());
    EXPECT_EQ(sched2.tensor_cause(h.node("s")), ggml_sched_cause::pinned);
    EXPECT_EQ(sched2.tensor_backend(h.node("y")), env.cpu.get());
    EXPECT_EQ(env.dev.count().foreign_reads, 0);
    EXPECT_EQ(h.read_outputs(), cpu_reference(build_cpu));
}

TEST(Scheduler, ResetForgetsPins) {
    sched_env env;
    ggml_scheduler sched(env.params());
    test_graph g;
    build_weights(g, true, 4);
    g.finish(env.dev);
    sched.set_tensor_backend(g.node("s"), env.cpu.get());
    ASSERT_EQ(sched.compute(g.gf), GGML_STATUS_SUCCESS);
    EXPECT_EQ(sched.tensor_cause(g.node("s")), ggml_sched_cause::pinned);
    sched.reset();
    ASSERT_EQ(sched.compute(g.gf), GGML_STATUS_SUCCESS);
    EXPECT_EQ(sched.tensor_backend(g.node("s")), env.mock.get());
    EXPECT_NE(sched.tensor_cause(g.node("s")), ggml_sched_cause::pinned);
}

// ---- random graphs ----

struct random_recipe {
    uint32_t seed = 0;
    bool leaf_on_mock[5] = {};
    struct step { int op; int a; int b; };
    std::vector<step> steps;
};

constexpr int k_random_ops = 12;
constexpr int64_t k_ne0 = 16, k_ne1 = 6;

random_recipe make_recipe(uint32_t seed) {
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
void build_random(test_graph & g, const random_recipe & r) {
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

std::set<ggml_op> random_unsupported(uint32_t seed) {
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

TEST(Scheduler, RandomGraphsMatchTheCpuBitForBit) {
    int multi_split = 0, with_copies = 0, cpu_nodes_checked = 0;
    for (uint32_t seed = 1; seed <= 40; ++seed) {
        SCOPED_TRACE("seed " + std::to_string(seed));
        const random_recipe r = make_recipe(seed);
        sched_env env;
        env.dev.set_unsupported(random_unsupported(seed));
        ggml_sched_params p = env.params();
        p.max_split_inputs = 64;  // splits are then cut only where the backend changes
        ggml_scheduler sched(p);
        // The mirror of the mock's own check: a node on the CPU never reads MOCK memory.
        int cpu_reads_mock = 0;
        sched.set_eval_callback([&](ggml_tensor * t, bool ask) {
            if (ask && sched.tensor_backend(t) == env.cpu.get()) {
                ++cpu_nodes_checked;
                for (const ggml_tensor * s : t->src) {
                    if (s && mock_is_buffer_of(mock_buffer_of(s), env.dev.buffer_type())) ++cpu_reads_mock;
                }
            }
            return false;  // look only, no need to observe results
        });
        test_graph g;
        build_random(g, r);
        g.finish(env.dev);
        ASSERT_EQ(sched.compute(g.gf), GGML_STATUS_SUCCESS);
        EXPECT_EQ(cpu_reads_mock, 0);
        for (int i = 0; i < g.gf->n_nodes; ++i) {
            const ggml_tensor * n = g.gf->nodes[i];
            const ggml_backend_i * b = sched.tensor_backend(n);
            ASSERT_TRUE(b == env.mock.get() || b == env.cpu.get()) << ggml_get_name(n);
            EXPECT_NE(sched.tensor_cause(n), ggml_sched_cause::none) << ggml_get_name(n);
            if (b == env.mock.get() && !ggml_op_is_metadata(n->op)) {
                EXPECT_EQ(env.dev.unsupported().count(n->op), 0u) << ggml_get_name(n);
            }
        }
        EXPECT_EQ(sched.n_splits(), count_backend_runs(sched, g.gf));
        EXPECT_EQ(env.dev.count().foreign_reads, 0);
        const random_recipe rr = r;
        EXPECT_EQ(g.read_outputs(), cpu_reference([&rr](test_graph & t) { build_random(t, rr); }));
        multi_split += sched.n_splits() > 1;
        with_copies += sched.n_copies() > 0;
    }
    // The seeds exercise what the test is about: graphs cut across both backends, with copies.
    EXPECT_GE(multi_split, 20);
    EXPECT_GE(with_copies, 20);
    EXPECT_GT(cpu_nodes_checked, 100);
}

// As above, but only the final result is an OUTPUT: intermediate tensors die after their last
// consumer and their compute memory is reused, also when another backend still has to copy
// them; and splits are cut by max_split_inputs too.
TEST(Scheduler, RandomGraphsWithMemoryReuseMatchTheCpu) {
    for (uint32_t seed = 101; seed <= 180; ++seed) {
        SCOPED_TRACE("seed " + std::to_string(seed));
        const random_recipe r = make_recipe(seed);
        sched_env env;
        env.dev.set_unsupported(random_unsupported(seed));
        ggml_sched_params p = env.params();
        p.max_split_inputs = 1 + int(seed % 5);
        ggml_scheduler sched(p);
        test_graph g;
        g.only_last_output = true;
        build_random(g, r);
        g.finish(env.dev);
        ASSERT_EQ(sched.compute(g.gf), GGML_STATUS_SUCCESS);
        EXPECT_EQ(env.dev.count().foreign_reads, 0);
        const random_recipe rr = r;
        const auto ref = cpu_reference([&rr](test_graph & t) { build_random(t, rr); });
        ASSERT_EQ(g.read_outputs().size(), 1u);
        EXPECT_EQ(g.read_outputs()[0], ref.back());
    }
}

TEST(Scheduler, ReserveThenComputeAllocatesNothingNew) {
    sched_env env;
    env.dev.set_unsupported({GGML_OP_NORM});
    ggml_scheduler sched(env.params());
    test_graph worst;
    build_textbook(worst);
    worst.finish(env.dev);
    ASSERT_TRUE(sched.reserve(worst.gf));
    EXPECT_EQ(worst.node("e")->data, nullptr);  // reserve leaves the graph unallocated
    EXPECT_GT(sched.buffer_size(env.mock.get()), 0u);
    EXPECT_GT(sched.buffer_size(env.cpu.get()), 0u);
    const int allocs = sched.n_buffer_allocs();
    const int64_t mock_buffers = env.dev.count().buffers_allocated;
    for (int round = 0; round < 2; ++round) {
        test_graph g;  // built again: same shapes, new tensors
        build_textbook(g);
        g.finish(env.dev);
        const int64_t leaf_buffers = g.mock_buf ? 1 : 0;
        ASSERT_EQ(sched.compute(g.gf), GGML_STATUS_SUCCESS);
        EXPECT_EQ(sched.n_buffer_allocs(), allocs);
        EXPECT_EQ(env.dev.count().buffers_allocated, mock_buffers + leaf_buffers * (round + 1));
        EXPECT_EQ(g.read_outputs(), cpu_reference(build_textbook));
    }
}

TEST(Scheduler, InputsAreCopiedBeforeComputeAsyncReturns) {
    sched_env env;
    env.dev.set_deferred(true);  // the mock runs its queue only at synchronize()
    ggml_scheduler sched(env.params());
    test_graph g;
    auto build = [](test_graph & t) { build_weights(t, true, 4); };
    build(g);
    g.finish(env.dev);
    ASSERT_EQ(sched.compute_async(g.gf), GGML_STATUS_SUCCESS);
    ggml_tensor * x = g.cpu_leafs ? ggml_get_tensor(g.cpu_leafs.get(), "x") : nullptr;
    ASSERT_NE(x, nullptr);
    const std::vector<float> garbage(size_t(ggml_nelements(x)), 1e6f);
    ggml_backend_tensor_set(x, garbage.data(), 0, ggml_nbytes(x));  // the caller reuses its memory
    sched.synchronize();
    EXPECT_EQ(static_cast<mock_backend *>(env.mock.get())->last_deferred_status(), GGML_STATUS_SUCCESS);
    EXPECT_EQ(env.dev.count().foreign_reads, 0);
    EXPECT_EQ(g.read_outputs(), cpu_reference(build));
}

TEST(Scheduler, DeferredDeviceAcrossSplitsGivesTheCpuResult) {
    sched_env env;
    env.dev.set_deferred(true);
    env.dev.set_unsupported({GGML_OP_NORM});
    ggml_scheduler sched(env.params());
    test_graph g;
    build_textbook(g);
    g.finish(env.dev);
    ASSERT_EQ(sched.compute(g.gf), GGML_STATUS_SUCCESS);
    EXPECT_EQ(sched.n_splits(), 2);
    EXPECT_EQ(g.read_outputs(), cpu_reference(build_textbook));
}

TEST(Scheduler, EvalCallbackSeesNodesInOrderAndCanStop) {
    sched_env env;
    env.dev.set_unsupported({GGML_OP_NORM});
    ggml_scheduler sched(env.params());
    test_graph g;
    build_textbook(g);
    g.finish(env.dev);
    std::vector<std::string> asked, seen;
    sched.set_eval_callback([&](ggml_tensor * t, bool ask) {
        (ask ? asked : seen).push_back(ggml_get_name(t));
        return true;
    });
    ASSERT_EQ(sched.compute(g.gf), GGML_STATUS_SUCCESS);
    const std::vector<std::string> order = {"a", "b", "m", "d", "e"};
    EXPECT_EQ(asked, order);
    EXPECT_EQ(seen, order);
    EXPECT_EQ(g.read_outputs(), cpu_reference(build_textbook));

    // Stop after m: compute reports it, and nothing after m runs.
    test_graph h;
    build_textbook(h);
    h.finish(env.dev);
    asked.clear();
    seen.clear();
    std::vector<float> m_data;
    sched.reset();
    sched.set_eval_callback([&](ggml_tensor * t, bool ask) {
        if (ask) return true;
        seen.push_back(ggml_get_name(t));
        if (std::strcmp(ggml_get_name(t), "m") != 0) return true;
        m_data.resize(size_t(ggml_nelements(t)));
        ggml_backend_tensor_get(t, m_data.data(), 0, ggml_nbytes(t));  // readable when observed
        return false;
    });
    EXPECT_EQ(sched.compute(h.gf), GGML_STATUS_ABORTED);
    EXPECT_EQ(seen, std::vector<std::string>({"a", "b", "m"}));
    EXPECT_EQ(m_data.size(), size_t(16 * 4));
}

TEST(Scheduler, DebugPrintsOneLinePerNodeWithBackendAndCause) {
    sched_env env;
    env.dev.set_unsupported({GGML_OP_NORM});
    setenv("INFERD_SCHED_DEBUG", "1", 1);
    ggml_scheduler sched(env.params());
    test_graph g;
    build_textbook(g);
    g.finish(env.dev);
    testing::internal::CaptureStderr();
    const ggml_status st = sched.compute(g.gf);
    const std::string err = testing::internal::GetCapturedStderr();
    unsetenv("INFERD_SCHED_DEBUG");
    ASSERT_EQ(st, GGML_STATUS_SUCCESS);
    std::vector<std::string> lines;
    std::istringstream in(err);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    auto has_prefix = [&](const std::string & p) {
        for (const std::string & l : lines) {
            if (l.rfind(p, 0) == 0) return true;
        }
        return false;
    };
    for (int i = 0; i < g.gf->n_nodes; ++i) {
        const ggml_tensor * n = g.gf->nodes[i];
        const std::string want = "node " + std::to_string(i) + " " + ggml_op_name(n->op) + " " + ggml_get_name(n) +
                                 " -> " + sched.tensor_backend(n)->name() + " (" +
                                 ggml_sched_cause_name(sched.tensor_cause(n)) + ")";
        EXPECT_TRUE(has_prefix(want)) << "missing: " << want << "\nstderr:\n" << err;
    }
    EXPECT_TRUE(has_prefix("split 0 on MOCK: nodes 0..3, 0 input copies")) << err;
    EXPECT_TRUE(has_prefix("split 1 on CPU: nodes 4..4, 1 input copies")) << err;
}

TEST(Scheduler, CauseNamesAreDistinct) {
    std::set<std::string> names;
    const ggml_sched_cause all[] = {
        ggml_sched_cause::none,         ggml_sched_cause::pinned,      ggml_sched_cause::weights,
        ggml_sched_cause::self_buffer,  ggml_sched_cause::expand_down, ggml_sched_cause::expand_up,
        ggml_sched_cause::upgrade,      ggml_sched_cause::most_inputs, ggml_sched_cause::offload,
        ggml_sched_cause::inherit_view, ggml_sched_cause::inherit_source};
    for (ggml_sched_cause c : all) {
        ASSERT_NE(ggml_sched_cause_name(c), nullptr);
        names.insert(ggml_sched_cause_name(c));
    }
    EXPECT_EQ(names.size(), std::size(all));
}

}  // namespace
