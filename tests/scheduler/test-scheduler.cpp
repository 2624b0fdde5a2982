// The scheduler on CPU + the mock device (mock-backend.h): assignment passes and their causes,
// splits and copies, execution (async inputs, eval callback), reserve, debug output. Every
// result is compared bit for bit with the same graph computed on the CPU backend alone (the
// mock runs the same CPU kernels).
#include "scheduler/mock-backend.h"
#include "scheduler/sched-test-graphs.h"
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


// n_copies: the copy slots (every split input then has that many copies, each compute uses the
// next slot).
void check_random_graphs(int n_copies) {
    int multi_split = 0, with_copies = 0, cpu_nodes_checked = 0;
    for (uint32_t seed = 1; seed <= 40; ++seed) {
        SCOPED_TRACE("seed " + std::to_string(seed));
        const random_recipe r = make_recipe(seed);
        sched_env env;
        env.dev.set_unsupported(random_unsupported(seed));
        ggml_sched_params p = env.params();
        p.max_split_inputs = 64;  // splits are then cut only where the backend changes
        p.n_copies = n_copies;
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
        if (n_copies > 1) {  // once more with the copies of the next slot
            EXPECT_EQ(sched.cur_copy(), 1);
            ASSERT_EQ(sched.compute(g.gf), GGML_STATUS_SUCCESS);
        }
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

TEST(Scheduler, RandomGraphsMatchTheCpuBitForBit) { check_random_graphs(1); }
TEST(Scheduler, RandomGraphsWithTwoCopySlotsMatchTheCpuBitForBit) { check_random_graphs(2); }

// As above, but only the final result is an OUTPUT: intermediate tensors die after their last
// consumer and their compute memory is reused, also when another backend still has to copy
// them; and splits are cut by max_split_inputs too.
void check_random_graphs_with_reuse(int n_copies) {
    for (uint32_t seed = 101; seed <= 180; ++seed) {
        SCOPED_TRACE("seed " + std::to_string(seed));
        const random_recipe r = make_recipe(seed);
        sched_env env;
        env.dev.set_unsupported(random_unsupported(seed));
        ggml_sched_params p = env.params();
        p.max_split_inputs = 1 + int(seed % 5);
        p.n_copies = n_copies;
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

TEST(Scheduler, RandomGraphsWithMemoryReuseMatchTheCpu) { check_random_graphs_with_reuse(1); }
TEST(Scheduler, RandomGraphsWithMemoryReuseAndTwoCopySlotsMatchTheCpu) { check_random_graphs_with_reuse(2); }

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
