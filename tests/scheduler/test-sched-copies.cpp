// Copy slots (ggml_sched_params::n_copies): consecutive graphs computed with compute_async back
// to back on the deferred mock device (its work runs only when the host waits) give, each, the
// result of the same graph computed alone on the CPU, with and without device events; the slots
// rotate; a slot is not overwritten while the graph that used it may still read it; reserve
// sizes the buffers for every slot.
#include "scheduler/mock-backend.h"
#include "scheduler/sched-test-graphs.h"
#include "scheduler/scheduler.h"

#include "ggml/backend.h"
#include "ggml/ggml.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

// x -> norm (CPU: unsupported on the mock) -> W n (mock: W lives there) -> scale -> + bias
// (pinned to the mock; bias is a CPU input). Two splits; the second, on the mock, reads two
// copies: n (computed on the CPU) and bias (a graph input).
void build_pipe(test_graph & g, uint32_t seed, int64_t batch) {
    ggml_context * c = g.ops.get();
    ggml_tensor * w = g.leaf(true, 16, 8, 10, "w");
    ggml_tensor * x = g.leaf(false, 16, batch, seed * 2 + 1, "x");
    ggml_tensor * bias = g.leaf(false, 8, batch, seed * 2 + 2, "bias");
    ggml_tensor * n = ggml_set_name(ggml_norm(c, x, 1e-5f), "n");
    ggml_tensor * y = ggml_set_name(ggml_mul_mat(c, w, n), "y");
    ggml_tensor * s = ggml_set_name(ggml_scale(c, y, 0.5f), "s");
    g.output(ggml_set_name(ggml_add(c, s, bias), "out"));
}

std::vector<std::vector<uint8_t>> pipe_reference(uint32_t seed, int64_t batch) {
    return cpu_reference([seed, batch](test_graph & t) { build_pipe(t, seed, batch); });
}

struct copies_env : sched_env {
    explicit copies_env(int n_copies, bool events = true) {
        dev.set_deferred(true);
        dev.set_events(events);  // without: the device is synchronized where it would record
        dev.set_unsupported({GGML_OP_NORM});
        ggml_sched_params p = params();
        p.n_copies = n_copies;
        sched = std::make_unique<ggml_scheduler>(p);
    }
    std::unique_ptr<ggml_scheduler> sched;

    mock_backend * mock_be() { return static_cast<mock_backend *>(mock.get()); }

    std::unique_ptr<test_graph> make_pipe(uint32_t seed, int64_t batch) {
        auto g = std::make_unique<test_graph>();
        build_pipe(*g, seed, batch);
        g->finish(dev);
        sched->set_tensor_backend(g->node("out"), mock.get());
        return g;
    }

    // Queues the reads of g's outputs right after its compute_async, on the backend whose memory
    // holds each (the mock's in order on its queue, before the next graph's work; the CPU's at
    // once). out must not be resized until synchronize.
    void queue_output_reads(const test_graph & g, std::vector<std::vector<uint8_t>> & out) {
        out.clear();
        for (const ggml_tensor * t : g.outputs) out.emplace_back(ggml_nbytes(t));
        for (size_t i = 0; i < g.outputs.size(); ++i) {
            const ggml_tensor * t = g.outputs[i];
            const bool on_mock = mock_is_buffer_of(mock_buffer_of(t), dev.buffer_type());
            (on_mock ? mock.get() : cpu.get())->get_tensor_async(t, out[i].data(), 0, ggml_nbytes(t));
        }
    }
};

// The caller reuses its input memory at once: garbage in x and bias after compute_async.
void scribble_inputs(test_graph & g) {
    for (auto & [t, v] : g.data) {
        if (std::string(ggml_get_name(t)) == "w") continue;
        const std::vector<float> garbage(v.size(), 1e6f);
        ggml_backend_tensor_set(t, garbage.data(), 0, ggml_nbytes(t));
    }
}

// n_graphs pipe graphs with distinct inputs, compute_async back to back, synchronize every
// sync_every graphs (0: only at the end); each graph's output is its own CPU result.
void check_pipeline(int n_copies, int n_graphs, int sync_every, bool events = true) {
    SCOPED_TRACE("n_copies " + std::to_string(n_copies) + ", sync every " + std::to_string(sync_every) +
                 (events ? "" : ", no events"));
    copies_env env(n_copies, events);
    std::vector<std::unique_ptr<test_graph>> graphs;
    std::vector<std::vector<std::vector<uint8_t>>> results(static_cast<size_t>(n_graphs));
    int max_queued = 0;
    for (int i = 0; i < n_graphs; ++i) {
        graphs.push_back(env.make_pipe(uint32_t(100 + i), 4));
        test_graph & g = *graphs.back();
        EXPECT_EQ(env.sched->cur_copy(), i % n_copies);
        ASSERT_EQ(env.sched->compute_async(g.gf), GGML_STATUS_SUCCESS);
        ASSERT_EQ(env.sched->n_splits(), 2);
        ASSERT_EQ(env.sched->tensor_backend(g.node("n")), env.cpu.get());
        ASSERT_EQ(env.sched->tensor_backend(g.node("y")), env.mock.get());
        env.queue_output_reads(g, results[size_t(i)]);
        scribble_inputs(g);
        // Graphs submitted to the mock and not yet run there: up to one per slot.
        max_queued = std::max(max_queued, i + 1 - int(env.dev.count().graphs_computed));
        if (sync_every > 0 && (i + 1) % sync_every == 0) env.sched->synchronize();
    }
    // Pipelining happened (with one slot each graph first waits for the one before), and never
    // deeper than the slots.
    EXPECT_EQ(max_queued, sync_every == 0 || sync_every >= n_copies ? n_copies : sync_every);
    env.sched->synchronize();
    EXPECT_EQ(env.mock_be()->last_deferred_status(), GGML_STATUS_SUCCESS);
    EXPECT_EQ(env.dev.count().foreign_reads, 0);
    EXPECT_EQ(env.dev.count().graphs_computed, n_graphs);
    for (int i = 0; i < n_graphs; ++i) {
        EXPECT_EQ(results[size_t(i)], pipe_reference(uint32_t(100 + i), 4)) << "graph " << i;
    }
}

TEST(SchedCopies, TwoSlotsPipelineGraphsBackToBack) {
    check_pipeline(2, 7, 0);
    check_pipeline(2, 7, 3);
}

TEST(SchedCopies, ThreeSlotsPipelineGraphsBackToBack) {
    check_pipeline(3, 8, 0);
    check_pipeline(3, 8, 2);
}

TEST(SchedCopies, OneSlotStillGivesEveryGraphItsResult) { check_pipeline(1, 4, 0); }

TEST(SchedCopies, DevicesWithoutEventsPipelineToo) {
    check_pipeline(2, 7, 0, false);
    check_pipeline(3, 8, 2, false);
    check_pipeline(1, 4, 0, false);
}

// While a graph is in flight its nodes read the copies of its slot: distinct addresses for
// distinct slots, the same again once the slots wrap around, the originals after synchronize.
TEST(SchedCopies, SlotsRotateThroughDistinctCopies) {
    copies_env env(3);
    std::vector<std::unique_ptr<test_graph>> graphs;
    std::vector<const void *> n_copy, bias_copy;
    for (int i = 0; i < 4; ++i) {
        graphs.push_back(env.make_pipe(uint32_t(7 + i), 4));
        test_graph & g = *graphs.back();
        ASSERT_EQ(env.sched->compute_async(g.gf), GGML_STATUS_SUCCESS);
        const ggml_tensor * n_src = g.node("y")->src[1];
        const ggml_tensor * bias_src = g.node("out")->src[1];
        ASSERT_NE(n_src, g.node("n"));
        EXPECT_EQ(std::string(ggml_get_name(n_src)), "n#MOCK#" + std::to_string(i % 3));
        EXPECT_EQ(std::string(ggml_get_name(bias_src)), "bias#MOCK#" + std::to_string(i % 3));
        EXPECT_TRUE(mock_is_buffer_of(mock_buffer_of(n_src), env.dev.buffer_type()));
        n_copy.push_back(n_src->data);
        bias_copy.push_back(bias_src->data);
        EXPECT_EQ(env.sched->n_copies(), 2);  // per slot
        EXPECT_EQ(env.sched->cur_copy(), (i + 1) % 3);
    }
    EXPECT_EQ(std::set<const void *>(n_copy.begin(), n_copy.begin() + 3).size(), 3u);
    EXPECT_EQ(std::set<const void *>(bias_copy.begin(), bias_copy.begin() + 3).size(), 3u);
    EXPECT_EQ(n_copy[3], n_copy[0]);
    EXPECT_EQ(bias_copy[3], bias_copy[0]);
    const std::set<const void *> all = {n_copy[0], n_copy[1], n_copy[2], bias_copy[0], bias_copy[1], bias_copy[2]};
    EXPECT_EQ(all.size(), 6u);
    env.sched->synchronize();
    for (const auto & g : graphs) {
        EXPECT_EQ(g->node("y")->src[1], g->node("n"));
        EXPECT_EQ(std::string(ggml_get_name(g->node("out")->src[1])), "bias");
    }
    EXPECT_EQ(env.dev.count().foreign_reads, 0);
}

// The same graph again while it is in flight: it waits for itself (its nodes hold one result),
// and both computations give their own inputs' results.
TEST(SchedCopies, SameGraphAgainWaitsForItself) {
    copies_env env(2);
    auto g = env.make_pipe(21, 4);
    auto other = env.make_pipe(22, 4);  // only for its input data
    std::vector<std::vector<uint8_t>> first, second;
    ASSERT_EQ(env.sched->compute_async(g->gf), GGML_STATUS_SUCCESS);
    env.queue_output_reads(*g, first);
    for (size_t i = 0; i < g->data.size(); ++i) {
        const auto & v = other->data[i].second;
        ggml_backend_tensor_set(g->data[i].first, v.data(), 0, v.size() * sizeof(float));
    }
    ASSERT_EQ(env.sched->compute_async(g->gf), GGML_STATUS_SUCCESS);
    env.queue_output_reads(*g, second);
    env.sched->synchronize();
    EXPECT_EQ(first, pipe_reference(21, 4));
    EXPECT_EQ(second, pipe_reference(22, 4));
    EXPECT_EQ(env.dev.count().foreign_reads, 0);
}

// Graphs of other shapes in between: where their copies cannot lie beside the graphs in flight
// (or the buffers must grow) the scheduler waits; every result stays right.
TEST(SchedCopies, ChangingShapesInThePipelineStayCorrect) {
    copies_env env(2);
    const int64_t batches[] = {4, 7, 4, 2, 2, 9, 4, 4};
    std::vector<std::unique_ptr<test_graph>> graphs;
    std::vector<std::vector<std::vector<uint8_t>>> results(std::size(batches));
    for (size_t i = 0; i < std::size(batches); ++i) {
        graphs.push_back(env.make_pipe(uint32_t(50 + i), batches[i]));
        ASSERT_EQ(env.sched->compute_async(graphs.back()->gf), GGML_STATUS_SUCCESS);
        env.queue_output_reads(*graphs.back(), results[i]);
    }
    env.sched->synchronize();
    EXPECT_EQ(env.dev.count().foreign_reads, 0);
    for (size_t i = 0; i < std::size(batches); ++i) {
        EXPECT_EQ(results[i], pipe_reference(uint32_t(50 + i), batches[i])) << "graph " << i;
    }
}

// Random graphs (random shapes of splits and copies), each built twice as distinct graphs of the
// same shape, all computed back to back with two slots.
TEST(SchedCopies, RandomGraphsPipelinedMatchTheCpu) {
    sched_env env;
    env.dev.set_deferred(true);
    env.dev.set_unsupported({GGML_OP_NORM, GGML_OP_SOFT_MAX, GGML_OP_CONCAT, GGML_OP_SILU});
    ggml_sched_params p = env.params();
    p.n_copies = 2;
    ggml_scheduler sched(p);
    std::vector<std::unique_ptr<test_graph>> graphs;
    std::vector<uint32_t> seeds;
    std::vector<std::vector<std::vector<uint8_t>>> results(40);
    int with_copies = 0;
    for (uint32_t k = 0; k < 40; ++k) {
        const uint32_t seed = 300 + k / 2;
        graphs.push_back(std::make_unique<test_graph>());
        test_graph & g = *graphs.back();
        build_random(g, make_recipe(seed));
        g.finish(env.dev);
        seeds.push_back(seed);
        ASSERT_EQ(sched.compute_async(g.gf), GGML_STATUS_SUCCESS) << "graph " << k;
        with_copies += sched.n_copies() > 0;
        results[k].clear();
        for (const ggml_tensor * t : g.outputs) results[k].emplace_back(ggml_nbytes(t));
        for (size_t i = 0; i < g.outputs.size(); ++i) {
            const ggml_tensor * t = g.outputs[i];
            const bool on_mock = mock_is_buffer_of(mock_buffer_of(t), env.dev.buffer_type());
            (on_mock ? env.mock.get() : env.cpu.get())->get_tensor_async(t, results[k][i].data(), 0, ggml_nbytes(t));
        }
    }
    sched.synchronize();
    EXPECT_EQ(env.dev.count().foreign_reads, 0);
    EXPECT_GE(with_copies, 20);
    for (size_t k = 0; k < graphs.size(); ++k) {
        const random_recipe r = make_recipe(seeds[k]);
        EXPECT_EQ(results[k], cpu_reference([&r](test_graph & t) { build_random(t, r); })) << "graph " << k;
    }
}

// reserve sizes the buffers for every slot: graphs of the same shape computed back to back
// allocate nothing new, and the mock's buffer holds one more set of copies than with one slot.
TEST(SchedCopies, ReserveThenPipelineAllocatesNothingNew) {
    size_t one_slot_size = 0;
    for (int n_copies : {1, 2}) {
        copies_env env(n_copies);
        auto worst = env.make_pipe(1, 4);
        ASSERT_TRUE(env.sched->reserve(worst->gf));
        const int allocs = env.sched->n_buffer_allocs();
        const size_t mock_size = env.sched->buffer_size(env.mock.get());
        if (n_copies == 1) {
            one_slot_size = mock_size;
        } else {
            const size_t copies = ggml_nbytes(worst->node("n")) + ggml_nbytes(worst->node("out"));  // n and bias
            EXPECT_GE(mock_size, one_slot_size + copies);
        }
        std::vector<std::unique_ptr<test_graph>> graphs;
        std::vector<std::vector<std::vector<uint8_t>>> results(5);
        for (int i = 0; i < 5; ++i) {
            graphs.push_back(env.make_pipe(uint32_t(60 + i), 4));
            ASSERT_EQ(env.sched->compute_async(graphs.back()->gf), GGML_STATUS_SUCCESS);
            env.queue_output_reads(*graphs.back(), results[size_t(i)]);
            EXPECT_EQ(env.sched->n_buffer_allocs(), allocs);
        }
        env.sched->synchronize();
        for (int i = 0; i < 5; ++i) EXPECT_EQ(results[size_t(i)], pipe_reference(uint32_t(60 + i), 4));
    }
}

TEST(SchedCopies, DebugShowsTheSlotInUse) {
    setenv("INFERD_SCHED_DEBUG", "1", 1);
    copies_env env(2);
    auto a = env.make_pipe(1, 4);
    auto b = env.make_pipe(2, 4);
    testing::internal::CaptureStderr();
    const ggml_status sa = env.sched->compute_async(a->gf);
    const ggml_status sb = env.sched->compute_async(b->gf);
    env.sched->synchronize();
    const std::string err = testing::internal::GetCapturedStderr();
    unsetenv("INFERD_SCHED_DEBUG");
    ASSERT_EQ(sa, GGML_STATUS_SUCCESS);
    ASSERT_EQ(sb, GGML_STATUS_SUCCESS);
    std::vector<std::string> lines;
    std::istringstream in(err);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    auto has = [&](const std::string & want) {
        for (const std::string & l : lines) {
            if (l == want) return true;
        }
        return false;
    };
    EXPECT_TRUE(has("compute with copy slot 0 of 2")) << err;
    EXPECT_TRUE(has("split 1 reads n#MOCK#0 bias#MOCK#0")) << err;
    EXPECT_TRUE(has("compute with copy slot 1 of 2")) << err;
    EXPECT_TRUE(has("split 1 reads n#MOCK#1 bias#MOCK#1")) << err;
}

}  // namespace
