// The scheduler across two deferred mock devices and the CPU with events and asynchronous copies:
// results equal the CPU alone, consecutive splits on devices are ordered by events (the host
// waits only where it must: a CPU split that reads a device's result, compute()'s end, a copy
// slot's reuse), copies between devices go through cpy_tensor_async, and the number of host
// synchronizations per graph is lower than with devices that have no events.
#include "scheduler/mock-backend.h"
#include "scheduler/sched-test-graphs.h"
#include "scheduler/scheduler.h"

#include "ggml/backend.h"
#include "ggml/ggml.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace {

// x (CPU input) -> W0 x (MOCK) -> W1 . (MOCK1) -> W0 . (MOCK) -> W1 . (MOCK1) [-> norm (CPU)].
// Every product reads the previous one through a copy on another device.
void build_relay(test_graph & g, uint32_t seed, bool cpu_tail) {
    ggml_context * c = g.ops.get();
    ggml_tensor * w0 = g.leaf_on(1, 16, 16, 40, "w0");
    ggml_tensor * w1 = g.leaf_on(2, 16, 16, 41, "w1");
    ggml_tensor * h = g.leaf_on(0, 16, 4, seed, "x");
    const char * names[] = {"h0", "h1", "h2", "h3"};
    for (int i = 0; i < 4; ++i) h = ggml_set_name(ggml_mul_mat(c, i % 2 == 0 ? w0 : w1, h), names[i]);
    g.output(cpu_tail ? ggml_set_name(ggml_norm(c, h, 1e-5f), "out") : h);
}

std::vector<std::vector<uint8_t>> relay_reference(uint32_t seed, bool cpu_tail) {
    return cpu_reference([seed, cpu_tail](test_graph & t) { build_relay(t, seed, cpu_tail); });
}

struct two_device_env {
    std::vector<std::string> log;
    mock_device dev0{"MOCK"}, dev1{"MOCK1"};
    ggml_backend_ptr mock0, mock1, cpu = make_cpu();

    explicit two_device_env(bool events) {
        for (mock_device * d : {&dev0, &dev1}) {
            d->set_deferred(true);
            d->set_events(events);
            d->set_unsupported({GGML_OP_NORM});
            d->set_log(&log);
        }
        mock0 = dev0.init_backend();
        mock1 = dev1.init_backend();
    }
    ggml_sched_params params(int n_copies = 1) const {
        ggml_sched_params p;
        p.backends = {{mock0.get(), nullptr}, {mock1.get(), nullptr}, {cpu.get(), nullptr}};
        p.n_copies = n_copies;
        return p;
    }
    std::unique_ptr<test_graph> relay(uint32_t seed, bool cpu_tail) {
        auto g = std::make_unique<test_graph>();
        build_relay(*g, seed, cpu_tail);
        g->finish(dev0, &dev1);
        return g;
    }
    int64_t host_syncs() const { return dev0.count().host_syncs + dev1.count().host_syncs; }
    int64_t foreign_reads() const { return dev0.count().foreign_reads + dev1.count().foreign_reads; }
};

// Runs n relay graphs with compute() and returns the host synchronizations per graph (every
// graph the same count).
int64_t relay_host_syncs_per_graph(bool events, int n) {
    two_device_env env(events);
    ggml_scheduler sched(env.params());
    int64_t per_graph = -1;
    for (int i = 0; i < n; ++i) {
        auto g = env.relay(uint32_t(7 + i), true);
        const int64_t before = env.host_syncs();
        EXPECT_EQ(sched.compute(g->gf), GGML_STATUS_SUCCESS);
        const int64_t used = env.host_syncs() - before;
        if (per_graph >= 0) {
            EXPECT_EQ(used, per_graph) << "graph " << i;
        }
        per_graph = used;
        EXPECT_EQ(sched.n_splits(), 5);
        EXPECT_EQ(g->read_outputs(), relay_reference(uint32_t(7 + i), true)) << "graph " << i;
    }
    EXPECT_EQ(env.foreign_reads(), 0);
    return per_graph;
}

TEST(SchedEvents, TwoDevicesAndTheCpuGiveTheCpuResult) {
    two_device_env env(true);
    ggml_scheduler sched(env.params());
    auto g = env.relay(3, true);
    ASSERT_EQ(sched.compute(g->gf), GGML_STATUS_SUCCESS);
    ASSERT_EQ(sched.n_splits(), 5);
    EXPECT_EQ(sched.tensor_backend(g->node("h0")), env.mock0.get());
    EXPECT_EQ(sched.tensor_backend(g->node("h1")), env.mock1.get());
    EXPECT_EQ(sched.tensor_backend(g->node("out")), env.cpu.get());
    EXPECT_EQ(g->read_outputs(), relay_reference(3, true));
    // Each device ran after the split before it, in graph order.
    EXPECT_EQ(env.log, (std::vector<std::string>{"MOCK:h0", "MOCK1:h1", "MOCK:h2", "MOCK1:h3"}));
    // h0, h1, h2 went device to device on the queues; h3 to the CPU synchronously.
    EXPECT_EQ(env.dev0.count().async_copies + env.dev1.count().async_copies, 3);
    EXPECT_EQ(env.dev1.count().event_waits + env.dev0.count().event_waits, 3);
    EXPECT_EQ(env.foreign_reads(), 0);
}

// With events the host waits once inside the graph (the CPU split reads MOCK1's result) and once
// per device in compute()'s final synchronize; without, after every device split as well.
TEST(SchedEvents, HostSynchronizationsPerGraphDrop) {
    const int64_t with_events = relay_host_syncs_per_graph(true, 3);
    const int64_t without = relay_host_syncs_per_graph(false, 3);
    EXPECT_EQ(with_events, 1 + 2);
    EXPECT_EQ(without, 4 + 2);
    EXPECT_LT(with_events, without);
}

// One device: a split cut by max_split_inputs into consecutive splits on the same device needs
// no wait between them (it is one queue).
TEST(SchedEvents, ConsecutiveSplitsOnOneDeviceNeedNoWait) {
    for (bool events : {true, false}) {
        SCOPED_TRACE(events ? "events" : "no events");
        sched_env env;
        env.dev.set_deferred(true);
        env.dev.set_events(events);
        ggml_sched_params p = env.params();
        p.max_split_inputs = 1;
        ggml_scheduler sched(p);
        auto build = [](test_graph & t) {
            ggml_context * c = t.ops.get();
            ggml_tensor * w = t.leaf(true, 16, 16, 5, "w");
            ggml_tensor * a = ggml_mul_mat(c, w, t.leaf(false, 16, 3, 6, "x0"));
            ggml_tensor * b = ggml_set_name(ggml_add(c, a, t.leaf(false, 16, 3, 7, "x1")), "b");
            t.output(ggml_set_name(ggml_mul(c, b, t.leaf(false, 16, 3, 8, "x2")), "out"));
        };
        test_graph g;
        build(g);
        g.finish(env.dev);
        sched.set_tensor_backend(g.node("b"), env.mock.get());  // x1, x2 would pull them to the CPU
        sched.set_tensor_backend(g.node("out"), env.mock.get());
        ASSERT_EQ(sched.compute(g.gf), GGML_STATUS_SUCCESS);
        EXPECT_EQ(sched.n_splits(), 3);
        EXPECT_EQ(env.dev.count().host_syncs, 1);  // compute()'s own synchronize
        EXPECT_EQ(g.read_outputs(), cpu_reference(build));
    }
}

// Two streams of one device share its memory: one writes rows of a cache (set_rows), the other
// reads the cache directly (no copy). The reader's stream comes first in the scheduler, so its
// queue runs first at synchronize: only the event wait between the splits makes it read the new
// rows. The same with the CPU as the reader (a copy, after the host waited).
TEST(SchedEvents, AStreamReadsWhatAnotherStreamOfTheDeviceWrote) {
    for (bool cpu_reader : {false, true}) {
        SCOPED_TRACE(cpu_reader ? "CPU reads" : "stream reads");
        mock_device dev;
        dev.set_deferred(true);
        ggml_backend_ptr reader = dev.init_backend(), writer = dev.init_backend(), cpu = make_cpu();
        ggml_sched_params p;
        p.backends = {{reader.get(), nullptr}, {writer.get(), nullptr}, {cpu.get(), nullptr}};
        ggml_scheduler sched(p);

        ggml_context_ptr leafs = make_ctx(8), ops = make_ctx(32);
        ggml_tensor * cache = ggml_new_tensor_2d(leafs.get(), GGML_TYPE_F32, 8, 4);
        ggml_tensor * rows = ggml_new_tensor_2d(leafs.get(), GGML_TYPE_F32, 8, 2);
        ggml_tensor * idx = ggml_new_tensor_1d(leafs.get(), GGML_TYPE_I64, 2);
        ggml_backend_buffer_ptr buf = ggml_backend_alloc_ctx_tensors(leafs.get(), dev.buffer_type());
        ASSERT_NE(buf, nullptr);
        ggml_backend_tensor_memset(cache, 0, 0, ggml_nbytes(cache));
        std::vector<float> r(16);
        for (size_t i = 0; i < r.size(); ++i) r[i] = float(i + 1);
        ggml_backend_tensor_set(rows, r.data(), 0, ggml_nbytes(rows));
        const int64_t cells[2] = {3, 1};
        ggml_backend_tensor_set(idx, cells, 0, sizeof(cells));

        ggml_tensor * w = ggml_set_rows(ops.get(), cache, rows, idx);
        ggml_tensor * view = ggml_view_2d(ops.get(), cache, 8, 4, cache->nb[1], 0);
        ggml_tensor * out = ggml_set_name(ggml_scale(ops.get(), view, 2.0f), "out");
        ggml_set_output(out);
        ggml_cgraph * gf = ggml_new_graph(ops.get());
        ggml_build_forward_expand(gf, w);
        ggml_build_forward_expand(gf, out);
        sched.set_tensor_backend(w, writer.get());
        sched.set_tensor_backend(out, cpu_reader ? cpu.get() : reader.get());
        ASSERT_EQ(sched.compute(gf), GGML_STATUS_SUCCESS);
        EXPECT_EQ(sched.n_splits(), cpu_reader ? 3 : 2);  // the CPU reads through a view on the device

        std::vector<float> got(32), want(32, 0.0f);
        ggml_backend_tensor_get(out, got.data(), 0, ggml_nbytes(out));
        for (int i = 0; i < 8; ++i) {
            want[size_t(3 * 8 + i)] = 2.0f * r[size_t(i)];
            want[size_t(1 * 8 + i)] = 2.0f * r[size_t(8 + i)];
        }
        EXPECT_EQ(got, want);
        EXPECT_EQ(dev.count().foreign_reads, 0);
    }
}

// Pipelining across two devices: graphs computed back to back with two copy slots, results read
// on MOCK1's queue, inputs scribbled at once. Reusing a slot waits for that slot's graph only:
// the graph in between still sits in the queues.
TEST(SchedEvents, CopySlotsPipelineAcrossTwoDevices) {
    two_device_env env(true);
    ggml_scheduler sched(env.params(2));
    std::vector<std::unique_ptr<test_graph>> graphs;
    std::vector<std::vector<float>> results(6);
    for (int i = 0; i < 6; ++i) {
        graphs.push_back(env.relay(uint32_t(20 + i), false));
        test_graph & g = *graphs.back();
        ASSERT_EQ(sched.compute_async(g.gf), GGML_STATUS_SUCCESS) << "graph " << i;
        ASSERT_EQ(sched.n_splits(), 4);
        const ggml_tensor * out = g.outputs[0];
        results[size_t(i)].resize(size_t(ggml_nelements(out)));
        env.mock1->get_tensor_async(out, results[size_t(i)].data(), 0, ggml_nbytes(out));
        for (auto & [t, v] : g.data) {
            if (std::string(ggml_get_name(t)) != "x") continue;
            const std::vector<float> garbage(v.size(), 1e6f);
            ggml_backend_tensor_set(t, garbage.data(), 0, ggml_nbytes(t));
        }
        if (i >= 2) {
            // graph i-2 (the slot's last user) ran; graph i-1 did not yet
            EXPECT_EQ(env.dev1.count().graphs_computed, 2 * (i - 1)) << "graph " << i;
        }
    }
    sched.synchronize();
    EXPECT_EQ(env.foreign_reads(), 0);
    for (int i = 0; i < 6; ++i) {
        const auto ref = relay_reference(uint32_t(20 + i), false);
        std::vector<uint8_t> got(ref[0].size());
        std::memcpy(got.data(), results[size_t(i)].data(), got.size());
        EXPECT_EQ(got, ref[0]) << "graph " << i;
    }
}

// Random graphs over one deferred mock with events and the CPU, n_copies 1 and 2: the results of
// the CPU alone, bit for bit.
TEST(SchedEvents, RandomGraphsWithEventsMatchTheCpu) {
    for (int n_copies : {1, 2}) {
        sched_env env;
        env.dev.set_deferred(true);
        ggml_sched_params p = env.params();
        p.n_copies = n_copies;
        ggml_scheduler sched(p);
        for (uint32_t seed = 500; seed < 530; ++seed) {
            env.dev.set_unsupported(random_unsupported(seed));
            const random_recipe r = make_recipe(seed);
            test_graph g;
            build_random(g, r);
            g.finish(env.dev);
            ASSERT_EQ(sched.compute(g.gf), GGML_STATUS_SUCCESS) << "seed " << seed;
            EXPECT_EQ(g.read_outputs(), cpu_reference([&r](test_graph & t) { build_random(t, r); })) << "seed " << seed;
            sched.reset();
        }
        EXPECT_EQ(env.dev.count().foreign_reads, 0);
    }
}

}  // namespace
