// The mock device alone: buffers and their counters, supported ops, offload, compute, deferred
// mode. The scheduler's tests (test-scheduler.cpp) rely on every rule checked here.
#include "scheduler/mock-backend.h"

#include "ggml/alloc.h"
#include "ggml/backend.h"
#include "ggml/cpu.h"
#include "ggml/ggml.h"

#include <gtest/gtest.h>

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

}  // namespace
