// The mock device alone: buffers and their counters, supported ops, offload, compute, deferred
// mode, events and asynchronous copies. The scheduler's tests rely on every rule checked here.
#include "scheduler/mock-backend.h"

#include "ggml/alloc.h"
#include "ggml/backend.h"
#include "ggml/cpu.h"
#include "ggml/ggml.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

ggml_context_ptr make_ctx(int n_tensors) {
    ggml_init_params ip;
    ip.mem_size = size_t(n_tensors) * ggml_tensor_overhead() + ggml_graph_overhead();
    ip.mem_buffer = nullptr;
    ip.no_alloc = true;
    return ggml_context_ptr(ggml_init(ip));
}

std::vector<float> iota_data(size_t n, float start) {
    std::vector<float> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = start + 0.25f * float(i % 17) - 0.5f * float(i % 5);
    return v;
}

TEST(MockBuffer, IsSeparateMemoryCountedAndNotHost) {
    mock_device dev;
    ggml_backend_buffer_type_i * buft = dev.buffer_type();
    EXPECT_STREQ(buft->name(), "MOCK");
    EXPECT_FALSE(buft->is_host());
    EXPECT_EQ(buft->device(), &dev);

    ggml_context_ptr ctx = make_ctx(4);
    ggml_tensor * a = ggml_new_tensor_1d(ctx.get(), GGML_TYPE_F32, 64);
    ggml_tensor * b = ggml_new_tensor_1d(ctx.get(), GGML_TYPE_F32, 64);
    ggml_backend_buffer_ptr buf = ggml_backend_alloc_ctx_tensors(ctx.get(), buft);
    ASSERT_NE(buf, nullptr);
    EXPECT_FALSE(buf->is_host());
    EXPECT_EQ(dev.count().buffers_allocated, 1);
    EXPECT_EQ(a->buffer, buf.get());

    const std::vector<float> in = iota_data(64, 1.0f);
    ggml_backend_tensor_set(a, in.data(), 0, ggml_nbytes(a));
    EXPECT_EQ(dev.count().set_calls, 1);
    EXPECT_EQ(dev.count().set_bytes, int64_t(ggml_nbytes(a)));

    // Device to device: the buffer copies directly and counts it.
    ggml_backend_tensor_copy(a, b);
    EXPECT_EQ(dev.count().cpy_calls, 1);
    EXPECT_EQ(dev.count().cpy_bytes, int64_t(ggml_nbytes(a)));

    std::vector<float> out(64, 0.0f);
    ggml_backend_tensor_get(b, out.data(), 0, ggml_nbytes(b));
    EXPECT_EQ(out, in);
    EXPECT_EQ(dev.count().get_calls, 1);
    EXPECT_EQ(dev.count().get_bytes, int64_t(ggml_nbytes(b)));

    ggml_backend_tensor_memset(b, 0, 0, ggml_nbytes(b));
    EXPECT_EQ(dev.count().memset_calls, 1);
    ggml_backend_tensor_get(b, out.data(), 0, 16);
    EXPECT_EQ(out[0], 0.0f);
    EXPECT_EQ(out[3], 0.0f);
}

TEST(MockBuffer, CopiesFromHostGoThroughSetAndGet) {
    mock_device dev;
    ggml_context_ptr host_ctx = make_ctx(2), mock_ctx = make_ctx(2);
    ggml_tensor * h = ggml_new_tensor_1d(host_ctx.get(), GGML_TYPE_F32, 32);
    ggml_tensor * m = ggml_new_tensor_1d(mock_ctx.get(), GGML_TYPE_F32, 32);
    ggml_backend_buffer_ptr hb = ggml_backend_alloc_ctx_tensors(host_ctx.get(), ggml_backend_cpu_buffer_type());
    ggml_backend_buffer_ptr mb = ggml_backend_alloc_ctx_tensors(mock_ctx.get(), dev.buffer_type());
    ASSERT_NE(hb, nullptr);
    ASSERT_NE(mb, nullptr);

    // A host source is not copied by the mock buffer itself.
    EXPECT_FALSE(mb->cpy_tensor(h, m));
    const std::vector<float> in = iota_data(32, -3.0f);
    ggml_backend_tensor_set(h, in.data(), 0, ggml_nbytes(h));
    ggml_backend_tensor_copy(h, m);  // host -> mock: set_tensor
    EXPECT_EQ(dev.count().set_calls, 1);
    EXPECT_EQ(dev.count().cpy_calls, 0);
    std::vector<float> zero(32, 0.0f), out(32, 1.0f);
    ggml_backend_tensor_set(h, zero.data(), 0, ggml_nbytes(h));
    ggml_backend_tensor_copy(m, h);  // mock -> host: get_tensor
    EXPECT_EQ(dev.count().get_calls, 1);
    ggml_backend_tensor_get(h, out.data(), 0, ggml_nbytes(h));
    EXPECT_EQ(out, in);
}

TEST(MockDevice, SupportsOnlyItsBufferTypeAndConfiguredOps) {
    mock_device dev;
    EXPECT_STREQ(dev.name(), "MOCK");
    EXPECT_EQ(dev.type(), ggml_backend_dev_type::gpu);
    EXPECT_TRUE(dev.supports_buft(dev.buffer_type()));
    EXPECT_FALSE(dev.supports_buft(ggml_backend_cpu_buffer_type()));
    mock_device other;
    EXPECT_FALSE(dev.supports_buft(other.buffer_type()));

    ggml_context_ptr ctx = make_ctx(8);
    ggml_tensor * x = ggml_new_tensor_2d(ctx.get(), GGML_TYPE_F32, 16, 4);
    ggml_tensor * n = ggml_norm(ctx.get(), x, 1e-5f);
    ggml_tensor * s = ggml_scale(ctx.get(), x, 2.0f);
    EXPECT_TRUE(dev.supports_op(n));
    EXPECT_TRUE(dev.supports_op(s));
    dev.set_unsupported({GGML_OP_NORM});
    EXPECT_FALSE(dev.supports_op(n));
    EXPECT_TRUE(dev.supports_op(s));
}

TEST(MockDevice, SourceBufferDecidesSupport) {
    mock_device dev, other;
    ggml_context_ptr own_ctx = make_ctx(2), other_ctx = make_ctx(2), host_ctx = make_ctx(2), ops = make_ctx(8);
    ggml_tensor * own = ggml_new_tensor_1d(own_ctx.get(), GGML_TYPE_F32, 16);
    ggml_tensor * foreign = ggml_new_tensor_1d(other_ctx.get(), GGML_TYPE_F32, 16);
    ggml_tensor * host = ggml_new_tensor_1d(host_ctx.get(), GGML_TYPE_F32, 16);
    ggml_backend_buffer_ptr b1 = ggml_backend_alloc_ctx_tensors(own_ctx.get(), dev.buffer_type());
    ggml_backend_buffer_ptr b2 = ggml_backend_alloc_ctx_tensors(other_ctx.get(), other.buffer_type());
    ggml_backend_buffer_ptr b3 = ggml_backend_alloc_ctx_tensors(host_ctx.get(), ggml_backend_cpu_buffer_type());
    ASSERT_TRUE(b1 && b2 && b3);
    EXPECT_TRUE(dev.supports_op(ggml_add(ops.get(), own, own)));
    EXPECT_TRUE(dev.supports_op(ggml_add(ops.get(), own, host)));      // the scheduler copies host data in
    EXPECT_FALSE(dev.supports_op(ggml_add(ops.get(), own, foreign)));  // another device's memory
    // Views resolve to their source's buffer.
    EXPECT_FALSE(dev.supports_op(ggml_scale(ops.get(), ggml_view_1d(ops.get(), foreign, 8, 0), 1.0f)));
}

TEST(MockDevice, OffloadsLargeMatrixProducts) {
    mock_device dev;
    ggml_context_ptr ctx = make_ctx(8);
    ggml_tensor * w = ggml_new_tensor_2d(ctx.get(), GGML_TYPE_F32, 16, 8);
    ggml_tensor * small = ggml_mul_mat(ctx.get(), w, ggml_new_tensor_2d(ctx.get(), GGML_TYPE_F32, 16, 4));
    ggml_tensor * large = ggml_mul_mat(ctx.get(), w, ggml_new_tensor_2d(ctx.get(), GGML_TYPE_F32, 16, 32));
    EXPECT_FALSE(dev.offload_op(large));  // off by default
    dev.set_offload_min_batch(32);
    EXPECT_FALSE(dev.offload_op(small));
    EXPECT_TRUE(dev.offload_op(large));
    EXPECT_FALSE(dev.offload_op(ggml_scale(ctx.get(), large, 1.0f)));
}

struct small_graph {
    ggml_context_ptr ctx = make_ctx(16);
    ggml_tensor * x = nullptr;
    ggml_tensor * w = nullptr;
    ggml_tensor * y = nullptr;
    ggml_cgraph * gf = nullptr;
    small_graph() {
        x = ggml_new_tensor_2d(ctx.get(), GGML_TYPE_F32, 16, 3);
        w = ggml_new_tensor_2d(ctx.get(), GGML_TYPE_F32, 16, 8);
        ggml_set_input(x);
        ggml_tensor * h = ggml_mul_mat(ctx.get(), w, x);
        y = ggml_soft_max(ctx.get(), ggml_scale(ctx.get(), ggml_add(ctx.get(), h, h), 0.5f));
        ggml_set_output(y);
        gf = ggml_new_graph(ctx.get());
        ggml_build_forward_expand(gf, y);
    }
};

// Allocates every tensor of a small graph in one buffer of buft and computes it on backend.
std::vector<float> run_small_graph(ggml_backend_i * backend, ggml_backend_buffer_type_i * buft, ggml_status * st) {
    small_graph g;
    ggml_backend_buffer_ptr buf = ggml_backend_alloc_ctx_tensors(g.ctx.get(), buft);
    EXPECT_NE(buf, nullptr);
    const std::vector<float> xv = iota_data(size_t(ggml_nelements(g.x)), 0.5f);
    const std::vector<float> wv = iota_data(size_t(ggml_nelements(g.w)), -1.0f);
    ggml_backend_tensor_set(g.x, xv.data(), 0, ggml_nbytes(g.x));
    ggml_backend_tensor_set(g.w, wv.data(), 0, ggml_nbytes(g.w));
    *st = backend->graph_compute(g.gf);
    backend->synchronize();
    std::vector<float> out(size_t(ggml_nelements(g.y)));
    ggml_backend_tensor_get(g.y, out.data(), 0, ggml_nbytes(g.y));
    return out;
}

TEST(MockBackend, ComputesLikeTheCpu) {
    mock_device dev;
    ggml_backend_ptr mock_be = dev.init_backend();
    EXPECT_STREQ(mock_be->name(), "MOCK");
    EXPECT_EQ(mock_be->device(), &dev);
    ggml_cpu_backend_options opt;
    opt.n_threads = 2;
    ggml_backend_ptr cpu = ggml_backend_cpu_init(opt);

    ggml_status st_cpu = GGML_STATUS_FAILED, st_mock = GGML_STATUS_FAILED;
    const std::vector<float> ref = run_small_graph(cpu.get(), ggml_backend_cpu_buffer_type(), &st_cpu);
    const std::vector<float> got = run_small_graph(mock_be.get(), dev.buffer_type(), &st_mock);
    ASSERT_EQ(st_cpu, GGML_STATUS_SUCCESS);
    ASSERT_EQ(st_mock, GGML_STATUS_SUCCESS);
    EXPECT_EQ(got, ref);  // the same kernels: bit for bit
    EXPECT_EQ(dev.count().graphs_computed, 1);
    EXPECT_GT(dev.count().nodes_computed, 0);
    EXPECT_EQ(dev.count().foreign_reads, 0);
}

TEST(MockBackend, RefusesGraphsReadingHostMemory) {
    mock_device dev;
    ggml_backend_ptr mock_be = dev.init_backend();
    ggml_status st = GGML_STATUS_SUCCESS;
    run_small_graph(mock_be.get(), ggml_backend_cpu_buffer_type(), &st);
    EXPECT_EQ(st, GGML_STATUS_FAILED);
    EXPECT_GT(dev.count().foreign_reads, 0);
    EXPECT_EQ(dev.count().graphs_computed, 0);
}

TEST(MockBackend, DeferredModeRunsAtSynchronize) {
    mock_device dev;
    dev.set_deferred(true);
    ggml_backend_ptr be = dev.init_backend();
    ggml_context_ptr ctx = make_ctx(8);
    ggml_tensor * x = ggml_new_tensor_1d(ctx.get(), GGML_TYPE_F32, 8);
    ggml_tensor * y = ggml_scale(ctx.get(), x, 3.0f);
    ggml_cgraph * gf = ggml_new_graph(ctx.get());
    ggml_build_forward_expand(gf, y);
    ggml_backend_buffer_ptr buf = ggml_backend_alloc_ctx_tensors(ctx.get(), dev.buffer_type());
    ASSERT_NE(buf, nullptr);

    std::vector<float> in(8, 1.0f), out(8, -1.0f);
    be->set_tensor_async(x, in.data(), 0, ggml_nbytes(x));
    EXPECT_EQ(dev.count().set_calls, 0);
    in.assign(8, 2.0f);  // what is read is what the caller holds at synchronize()
    EXPECT_EQ(be->graph_compute(gf), GGML_STATUS_SUCCESS);
    EXPECT_EQ(dev.count().graphs_computed, 0);
    be->get_tensor_async(y, out.data(), 0, ggml_nbytes(y));
    EXPECT_EQ(out[0], -1.0f);
    be->synchronize();
    EXPECT_EQ(dev.count().deferred_ops, 3);
    EXPECT_EQ(dev.count().graphs_computed, 1);
    EXPECT_EQ(static_cast<mock_backend *>(be.get())->last_deferred_status(), GGML_STATUS_SUCCESS);
    EXPECT_EQ(out, std::vector<float>(8, 6.0f));
}

// x (in dev's memory) -> scale(x, s), named; the graph and its buffer.
struct scale_graph {
    ggml_context_ptr ctx = make_ctx(8);
    ggml_tensor * x = nullptr;
    ggml_tensor * y = nullptr;
    ggml_cgraph * gf = nullptr;
    ggml_backend_buffer_ptr buf;
    scale_graph(mock_device & dev, float s, const char * name) {
        x = ggml_new_tensor_1d(ctx.get(), GGML_TYPE_F32, 8);
        y = ggml_set_name(ggml_scale(ctx.get(), x, s), name);
        gf = ggml_new_graph(ctx.get());
        ggml_build_forward_expand(gf, y);
        buf = ggml_backend_alloc_ctx_tensors(ctx.get(), dev.buffer_type());
        const std::vector<float> ones(8, 1.0f);
        ggml_backend_tensor_set(x, ones.data(), 0, ggml_nbytes(x));
    }
    float first() const {
        float v = 0.0f;
        ggml_backend_tensor_get(y, &v, 0, sizeof(v));
        return v;
    }
};

TEST(MockEvents, SynchronizeRunsTheQueueUpToTheRecordedPosition) {
    mock_device dev;
    dev.set_deferred(true);
    ggml_backend_ptr be = dev.init_backend();
    scale_graph a(dev, 2.0f, "a"), b(dev, 3.0f, "b");
    ggml_backend_event_ptr ev = dev.event_new();
    ASSERT_NE(ev, nullptr);
    EXPECT_EQ(ev->device(), &dev);
    ev->synchronize();  // never recorded: reached
    ASSERT_EQ(be->graph_compute(a.gf), GGML_STATUS_SUCCESS);
    ev->record(be.get());
    ASSERT_EQ(be->graph_compute(b.gf), GGML_STATUS_SUCCESS);
    EXPECT_EQ(dev.count().graphs_computed, 0);
    ev->synchronize();
    EXPECT_EQ(dev.count().graphs_computed, 1);  // a, not b
    EXPECT_EQ(a.first(), 2.0f);
    be->synchronize();
    EXPECT_EQ(dev.count().graphs_computed, 2);
    EXPECT_EQ(b.first(), 3.0f);
    EXPECT_EQ(dev.count().events_recorded, 1);
    EXPECT_EQ(dev.count().host_syncs, 3);
}

TEST(MockEvents, DevicesWithoutEventsGiveNone) {
    mock_device dev;
    dev.set_events(false);
    EXPECT_EQ(dev.event_new(), nullptr);
}

// A waits for nothing; B waits for A's event: running B's queue runs A's first, up to the event.
TEST(MockEvents, EventWaitOrdersOneDevicesQueueAfterAnothers) {
    std::vector<std::string> log;
    mock_device da("MOCK"), db("MOCK1");
    for (mock_device * d : {&da, &db}) {
        d->set_deferred(true);
        d->set_log(&log);
    }
    ggml_backend_ptr a = da.init_backend(), b = db.init_backend();
    scale_graph ga(da, 2.0f, "a1"), ga2(da, 5.0f, "a2"), gb(db, 3.0f, "b1");
    ggml_backend_event_ptr ev = da.event_new();
    ASSERT_EQ(a->graph_compute(ga.gf), GGML_STATUS_SUCCESS);
    ev->record(a.get());
    ASSERT_EQ(a->graph_compute(ga2.gf), GGML_STATUS_SUCCESS);
    b->event_wait(ev.get());
    ASSERT_EQ(b->graph_compute(gb.gf), GGML_STATUS_SUCCESS);
    EXPECT_TRUE(log.empty());
    b->synchronize();
    EXPECT_EQ(log, (std::vector<std::string>{"MOCK:a1", "MOCK1:b1"}));  // a2 is after the event
    EXPECT_EQ(db.count().event_waits, 1);
    a->synchronize();
    EXPECT_EQ(log.back(), "MOCK:a2");
    // The same backend waiting on its own event: in order anyway, nothing queued.
    ev->record(a.get());
    a->event_wait(ev.get());
    EXPECT_EQ(da.count().event_waits, 0);
}

// The CPU has no events: its event_wait (the interface's default) blocks the host until the
// mock's queue has reached the event.
TEST(MockEvents, CpuWaitsForAMockEventOnTheHost) {
    mock_device dev;
    dev.set_deferred(true);
    ggml_backend_ptr be = dev.init_backend();
    ggml_cpu_backend_options opt;
    opt.n_threads = 1;
    ggml_backend_ptr cpu = ggml_backend_cpu_init(opt);
    EXPECT_EQ(cpu->device()->event_new(), nullptr);
    scale_graph g(dev, 4.0f, "g");
    ASSERT_EQ(be->graph_compute(g.gf), GGML_STATUS_SUCCESS);
    ggml_backend_event_ptr ev = dev.event_new();
    ev->record(be.get());
    cpu->event_wait(ev.get());
    EXPECT_EQ(dev.count().graphs_computed, 1);
    EXPECT_EQ(dev.count().host_syncs, 1);
    EXPECT_EQ(g.first(), 4.0f);
}

// Device to device: queued on the source's queue after its work, the destination's later work
// after the copy; host memory or another device's tensor as destination: refused.
TEST(MockEvents, AsyncCopyBetweenDevicesIsQueuedAndOrdered) {
    mock_device da("MOCK"), db("MOCK1");
    da.set_deferred(true);
    db.set_deferred(true);
    ggml_backend_ptr a = da.init_backend(), b = db.init_backend();
    scale_graph ga(da, 2.0f, "a");  // y = 2 once a runs
    ggml_context_ptr ctx = make_ctx(8);
    ggml_tensor * dst = ggml_new_tensor_1d(ctx.get(), GGML_TYPE_F32, 8);
    ggml_tensor * out = ggml_set_name(ggml_scale(ctx.get(), dst, 10.0f), "out");
    ggml_cgraph * gf = ggml_new_graph(ctx.get());
    ggml_build_forward_expand(gf, out);
    ggml_backend_buffer_ptr buf = ggml_backend_alloc_ctx_tensors(ctx.get(), db.buffer_type());
    ASSERT_EQ(a->graph_compute(ga.gf), GGML_STATUS_SUCCESS);
    ASSERT_TRUE(b->cpy_tensor_async(a.get(), ga.y, dst));
    ASSERT_EQ(b->graph_compute(gf), GGML_STATUS_SUCCESS);
    EXPECT_EQ(da.count().graphs_computed + db.count().graphs_computed, 0);
    b->synchronize();  // runs a's queue up to the copy first
    float v = 0.0f;
    ggml_backend_tensor_get(out, &v, 0, sizeof(v));
    EXPECT_EQ(v, 20.0f);
    EXPECT_EQ(db.count().async_copies, 1);
    EXPECT_EQ(da.count().host_syncs, 0);

    ggml_context_ptr host_ctx = make_ctx(2);
    ggml_tensor * h = ggml_new_tensor_1d(host_ctx.get(), GGML_TYPE_F32, 8);
    ggml_backend_buffer_ptr hb = ggml_backend_alloc_ctx_tensors(host_ctx.get(), ggml_backend_cpu_buffer_type());
    ggml_cpu_backend_options opt;
    opt.n_threads = 1;
    ggml_backend_ptr cpu = ggml_backend_cpu_init(opt);
    EXPECT_FALSE(b->cpy_tensor_async(cpu.get(), h, dst));    // from host memory
    EXPECT_FALSE(b->cpy_tensor_async(a.get(), dst, ga.y));   // into another device's memory
    EXPECT_FALSE(cpu->cpy_tensor_async(b.get(), dst, h));    // the CPU offers none
    EXPECT_EQ(db.count().async_copies, 1);
}

}  // namespace
