// The CUDA backend: its registry entry (everywhere: no device and a reason on machines without a
// usable GPU), what its devices claim to support and how its buffer type sizes tensors (host-side
// logic, tested on a device object made by hand), and on a GPU: buffers, copies, events, CUDA
// graph capture and replay, data errors. The ops themselves: test-cuda-ops.cpp. GPU tests skip
// with the runtime's reason where there is no usable GPU.
#include "test-cuda-common.h"

#include "cuda/backend-cuda.h"

#include <cstdlib>
#include <cstring>
#include <numeric>

namespace {

using namespace cuda_test;

// A device object made by hand: no CUDA call is needed for what these tests ask of it.
ggml_cuda_device & fake_device() {
    static ggml_cuda_device dev([] {
        ggml_cuda_device_info info;
        info.index = 0;
        info.description = "test device";
        info.cc = 90;
        info.sm_count = 4;
        return info;
    }());
    return dev;
}

TEST(cuda_registry, devices_or_a_reason) {
    ggml_backend_reg_i & reg = cuda_reg();
    EXPECT_STREQ(reg.name(), "CUDA");
    if (reg.device_count() == 0) {
        EXPECT_FALSE(ggml_backend_cuda_status().empty());
        std::printf("no CUDA device: %s\n", ggml_backend_cuda_status().c_str());
        EXPECT_EQ(reg.device(0), nullptr);
        return;
    }
    EXPECT_TRUE(ggml_backend_cuda_status().empty());
    for (size_t i = 0; i < reg.device_count(); ++i) {
        ggml_backend_device_i * d = reg.device(i);
        EXPECT_EQ(std::string(d->name()), "CUDA" + std::to_string(i));
        EXPECT_EQ(d->type(), ggml_backend_dev_type::gpu);
        EXPECT_GT(std::string(d->description()).size(), 0u);
        size_t free = 0, total = 0;
        d->memory(&free, &total);
        EXPECT_GT(total, 0u);
        EXPECT_LE(free, total);
        EXPECT_TRUE(d->supports_buft(d->buffer_type()));
        EXPECT_FALSE(d->supports_buft(d->host_buffer_type()));
        EXPECT_TRUE(d->host_buffer_type()->is_host());
    }
}

TEST(cuda_registry, default_registry_has_the_cuda_entry) {
    const ggml_backend_registry reg = ggml_backend_registry_default();
    bool found = false;
    for (size_t i = 0; i < reg.reg_count(); ++i) found = found || std::string(reg.reg(i)->name()) == "CUDA";
    EXPECT_TRUE(found);
    EXPECT_NE(reg.device_by_type(ggml_backend_dev_type::cpu), nullptr);
}

TEST(cuda_device_host_side, quantized_tensors_are_padded_to_whole_rows) {
    ggml_backend_buffer_type_i * buft = fake_device().buffer_type();
    EXPECT_EQ(buft->alignment(), 256u);
    EXPECT_FALSE(buft->is_host());
    ggml_context_ptr ctx = new_ctx();
    ggml_tensor * f = ggml_new_tensor_2d(ctx.get(), GGML_TYPE_F32, 100, 3);
    EXPECT_EQ(buft->alloc_size(f), ggml_nbytes(f));
    ggml_tensor * q = ggml_new_tensor_2d(ctx.get(), GGML_TYPE_Q4_0, 4096 + 64, 3);
    EXPECT_EQ(buft->alloc_size(q), ggml_nbytes(q) + ggml_row_size(GGML_TYPE_Q4_0, 512 - 64));
    ggml_tensor * q2 = ggml_new_tensor_2d(ctx.get(), GGML_TYPE_Q6_K, 1024, 2);
    EXPECT_EQ(buft->alloc_size(q2), ggml_nbytes(q2));
}

TEST(cuda_device_host_side, supports_op_answers_per_op_and_type) {
    const ggml_cuda_device & dev = fake_device();
    ggml_context_ptr ctx = new_ctx(128);
    ggml_context * c = ctx.get();
    ggml_tensor * a = ggml_new_tensor_3d(c, GGML_TYPE_F32, 64, 8, 4);
    ggml_tensor * a16 = ggml_new_tensor_3d(c, GGML_TYPE_F16, 64, 8, 4);
    ggml_tensor * pos = ggml_new_tensor_1d(c, GGML_TYPE_I32, 4);
    ggml_rope_params rp;
    rp.n_dims = 32;
    EXPECT_TRUE(dev.supports_op(ggml_add(c, a, a16)));
    EXPECT_TRUE(dev.supports_op(ggml_silu(c, a16)));
    EXPECT_TRUE(dev.supports_op(ggml_rms_norm(c, a, 1e-6f)));
    EXPECT_TRUE(dev.supports_op(ggml_rope(c, a, pos, rp)));
    EXPECT_TRUE(dev.supports_op(ggml_soft_max_ext(c, a, ggml_new_tensor_2d(c, GGML_TYPE_F16, 64, 8), 0.1f)));
    EXPECT_TRUE(dev.supports_op(ggml_cpy(c, a, a16)));
    EXPECT_TRUE(dev.supports_op(ggml_cont(c, ggml_transpose(c, a))));
    EXPECT_TRUE(dev.supports_op(ggml_top_k(c, a, 8)));
    EXPECT_TRUE(dev.supports_op(ggml_argmax(c, ggml_new_tensor_2d(c, GGML_TYPE_F32, 64, 8))));
    EXPECT_TRUE(dev.supports_op(ggml_view_2d(c, a, 4, 4, a->nb[1], 0)));  // metadata

    ggml_tensor * cache = ggml_new_tensor_2d(c, GGML_TYPE_Q8_0, 64, 16);
    ggml_tensor * rows = ggml_new_tensor_2d(c, GGML_TYPE_F32, 64, 2);
    ggml_tensor * idx = ggml_new_tensor_1d(c, GGML_TYPE_I64, 2);
    EXPECT_TRUE(dev.supports_op(ggml_set_rows(c, cache, rows, idx)));
    ggml_tensor * cache4 = ggml_new_tensor_2d(c, GGML_TYPE_Q4_0, 64, 16);
    EXPECT_FALSE(dev.supports_op(ggml_set_rows(c, cache4, rows, idx)));  // only F32/F16/BF16/Q8_0 rows
    ggml_tensor * emb = ggml_new_tensor_2d(c, GGML_TYPE_Q4_K, 256, 10);
    EXPECT_TRUE(dev.supports_op(ggml_get_rows(c, emb, ggml_new_tensor_1d(c, GGML_TYPE_I32, 3))));

    ggml_tensor * big = ggml_new_tensor_2d(c, GGML_TYPE_F32, 4096, 2);
    EXPECT_FALSE(dev.supports_op(ggml_top_k(c, big, 2000)));  // k up to 1024
    ggml_tensor * rope_ff = ggml_rope_ff(c, a, pos, ggml_new_tensor_1d(c, GGML_TYPE_F32, 16), rp);
    EXPECT_TRUE(dev.supports_op(rope_ff));
    rope_ff->src[2] = ggml_new_tensor_1d(c, GGML_TYPE_F16, 16);
    EXPECT_FALSE(dev.supports_op(rope_ff));
}

TEST(cuda_device_host_side, offload_only_large_batches_of_matrix_products) {
    const ggml_cuda_device & dev = fake_device();
    ggml_context_ptr ctx = new_ctx();
    ggml_tensor * w = ggml_new_tensor_2d(ctx.get(), GGML_TYPE_F16, 64, 128);
    EXPECT_FALSE(dev.offload_op(ggml_mul_mat(ctx.get(), w, ggml_new_tensor_2d(ctx.get(), GGML_TYPE_F32, 64, 31))));
    EXPECT_TRUE(dev.offload_op(ggml_mul_mat(ctx.get(), w, ggml_new_tensor_2d(ctx.get(), GGML_TYPE_F32, 64, 32))));
    ggml_tensor * x = ggml_new_tensor_2d(ctx.get(), GGML_TYPE_F32, 64, 512);
    EXPECT_FALSE(dev.offload_op(ggml_add(ctx.get(), x, x)));
}

// ---- on a GPU ----

// Restores an environment variable at the end of a test.
struct env_guard {
    std::string name, old;
    bool had = false;
    explicit env_guard(const char * n, const char * value) : name(n) {
        const char * v = std::getenv(n);
        had = v != nullptr;
        if (had) old = v;
        setenv(n, value, 1);
    }
    ~env_guard() {
        if (had) {
            setenv(name.c_str(), old.c_str(), 1);
        } else {
            unsetenv(name.c_str());
        }
    }
};

std::vector<float> iota_floats(size_t n, float start) {
    std::vector<float> v(n);
    std::iota(v.begin(), v.end(), start);
    return v;
}

TEST(cuda_buffers, set_get_memset_clear_and_copy) {
    SKIP_WITHOUT_GPU();
    ggml_context_ptr ctx = new_ctx();
    ggml_tensor * a = ggml_new_tensor_1d(ctx.get(), GGML_TYPE_F32, 1000);
    ggml_tensor * q = ggml_new_tensor_2d(ctx.get(), GGML_TYPE_Q4_0, 4096 + 64, 2);
    ggml_backend_buffer_ptr buf = ggml_backend_alloc_ctx_tensors(ctx.get(), gpu()->buffer_type());
    ASSERT_TRUE(buf);
    EXPECT_FALSE(buf->is_host());
    const std::vector<float> x = iota_floats(1000, 1.0f);
    ggml_backend_tensor_set(a, x.data(), 0, x.size() * 4);
    std::vector<float> y(1000);
    ggml_backend_tensor_get(a, y.data(), 0, y.size() * 4);
    EXPECT_EQ(x, y);
    ggml_backend_tensor_memset(a, 0, 40, 80);
    ggml_backend_tensor_get(a, y.data(), 0, y.size() * 4);
    for (size_t i = 0; i < 1000; ++i) EXPECT_EQ(y[i], i >= 10 && i < 30 ? 0.0f : x[i]) << i;
    std::vector<uint8_t> qb(ggml_nbytes(q), 0x5a), qr(ggml_nbytes(q));
    ggml_backend_tensor_set(q, qb.data(), 0, qb.size());
    ggml_backend_tensor_get(q, qr.data(), 0, qr.size());
    EXPECT_EQ(qb, qr);

    ggml_context_ptr ctx2 = new_ctx();
    ggml_tensor * b = ggml_new_tensor_1d(ctx2.get(), GGML_TYPE_F32, 1000);
    ggml_backend_buffer_ptr buf2 = ggml_backend_alloc_ctx_tensors(ctx2.get(), gpu()->buffer_type());
    ASSERT_TRUE(buf2);
    ggml_backend_tensor_set(a, x.data(), 0, x.size() * 4);
    ggml_backend_tensor_copy(a, b);  // device to device (cpy_tensor)
    ggml_backend_tensor_get(b, y.data(), 0, y.size() * 4);
    EXPECT_EQ(x, y);
    buf2->clear(0);
    ggml_backend_tensor_get(b, y.data(), 0, y.size() * 4);
    EXPECT_EQ(y, std::vector<float>(1000, 0.0f));
}

TEST(cuda_buffers, pinned_host_memory) {
    SKIP_WITHOUT_GPU();
    ggml_context_ptr ctx = new_ctx();
    ggml_tensor * a = ggml_new_tensor_1d(ctx.get(), GGML_TYPE_F32, 256);
    ggml_backend_buffer_ptr buf = ggml_backend_alloc_ctx_tensors(ctx.get(), gpu()->host_buffer_type());
    ASSERT_TRUE(buf);
    EXPECT_TRUE(buf->is_host());
    const std::vector<float> x = iota_floats(256, -5.0f);
    ggml_backend_tensor_set(a, x.data(), 0, 1024);
    EXPECT_EQ(std::memcmp(a->data, x.data(), 1024), 0);  // plain host memory
}

TEST(cuda_backend, async_copies_events_and_streams) {
    SKIP_WITHOUT_GPU();
    ggml_backend_ptr be1 = gpu()->init_backend(), be2 = gpu()->init_backend();
    ASSERT_TRUE(be1 && be2);
    EXPECT_STREQ(be1->name(), "CUDA0");
    ggml_context_ptr ctx = new_ctx(), hctx = new_ctx();
    ggml_tensor * d1 = ggml_new_tensor_1d(ctx.get(), GGML_TYPE_F32, 4096);
    ggml_tensor * d2 = ggml_new_tensor_1d(ctx.get(), GGML_TYPE_F32, 4096);
    ggml_tensor * h = ggml_new_tensor_1d(hctx.get(), GGML_TYPE_F32, 4096);
    ggml_backend_buffer_ptr dbuf = ggml_backend_alloc_ctx_tensors(ctx.get(), gpu()->buffer_type());
    ggml_backend_buffer_ptr hbuf = ggml_backend_alloc_ctx_tensors(hctx.get(), gpu()->host_buffer_type());
    ASSERT_TRUE(dbuf && hbuf);
    const std::vector<float> x = iota_floats(4096, 0.5f);
    std::memcpy(h->data, x.data(), 4096 * 4);

    ASSERT_TRUE(be1->cpy_tensor_async(&cpu_backend(), h, d1));  // pinned host -> device
    ggml_backend_event_ptr ev = gpu()->event_new();
    ASSERT_TRUE(ev);
    ev->record(be1.get());
    be2->event_wait(ev.get());
    ASSERT_TRUE(be2->cpy_tensor_async(be1.get(), d1, d2));  // stream 1 -> stream 2, ordered by events
    std::vector<float> y(4096, -1.0f);
    be2->get_tensor_async(d2, y.data(), 0, 4096 * 4);
    be2->synchronize();
    EXPECT_EQ(x, y);

    const std::vector<float> z = iota_floats(4096, 100.0f);
    be1->set_tensor_async(d1, z.data(), 0, 4096 * 4);
    ev->record(be1.get());
    ev->synchronize();
    ggml_backend_tensor_get(d1, y.data(), 0, 4096 * 4);
    EXPECT_EQ(z, y);
}

// A decode-like step: norm, scale by a weight, RoPE, KV rows written through an index tensor
// (SET_ROWS into F16: the graph checks data), the cache converted to F32, scaled, softmax.
ggml_tensor * decode_step(case_inputs & in) {
    ggml_context * c = in.ctx;
    ggml_tensor * x = in.random(GGML_TYPE_F32, {64, 4, 1, 1});
    ggml_tensor * w = in.random(GGML_TYPE_F32, {64, 1, 1, 1});
    ggml_tensor * pos = in.values(GGML_TYPE_I32, {1, 1, 1, 1}, {7});
    ggml_tensor * cache = in.random(GGML_TYPE_F16, {256, 8, 1, 1});
    ggml_tensor * idx = in.values(GGML_TYPE_I64, {1, 1, 1, 1}, {3});
    ggml_rope_params rp;
    rp.n_dims = 64;
    ggml_tensor * h = ggml_mul(c, ggml_rms_norm(c, x, 1e-6f), w);             // [64, 4]
    ggml_tensor * r = ggml_rope(c, ggml_reshape_3d(c, h, 64, 4, 1), pos, rp);  // [64, 4, 1]
    ggml_tensor * row = ggml_reshape_2d(c, r, 256, 1);
    ggml_tensor * kv = ggml_set_rows(c, cache, row, idx);                     // cache row 3
    ggml_tensor * kv32 = ggml_cpy(c, kv, in.random(GGML_TYPE_F32, {256, 8, 1, 1}));
    return ggml_soft_max_ext(c, ggml_scale(c, kv32, 0.125f), nullptr, 1.0f);
}

ggml_cuda_backend & as_cuda(ggml_backend_i * be) { return *dynamic_cast<ggml_cuda_backend *>(be); }

TEST(cuda_graphs, captured_on_second_run_then_replayed_with_new_data) {
    SKIP_WITHOUT_GPU();
    env_guard env("INFERD_CUDA_GRAPH_CACHE", "12");
    ggml_backend_ptr be = gpu()->init_backend();
    ASSERT_TRUE(be);
    graph_run g = build_graph(decode_step, gpu()->buffer_type(), 1);
    ASSERT_TRUE(g.buf);
    for (int step = 0; step < 4; ++step) {
        // new input values every step, as a decode loop writes its inputs
        graph_run fresh = build_graph(decode_step, ggml_backend_cpu_buffer_type(), 10 + step);
        for (size_t i = 0; i < g.in.list.size(); ++i) g.in.list[i] = {g.in.list[i].t, fresh.in.list[i].values, {}};
        g.in.upload();
        ASSERT_EQ(cpu_backend().graph_compute(fresh.gf), GGML_STATUS_SUCCESS);
        ASSERT_EQ(be->graph_compute(g.gf), GGML_STATUS_SUCCESS) << step;
        be->synchronize();
        const dt want = bops::read_tensor(fresh.out), got = bops::read_tensor(g.out);
        for (int64_t i = 0; i < want.size(); ++i) ASSERT_NEAR(got.v[size_t(i)], want.v[size_t(i)], 1e-5) << step;
    }
    EXPECT_EQ(as_cuda(be.get()).graphs_captured(), 1u);
    EXPECT_EQ(as_cuda(be.get()).graphs_replayed(), 2u);
}

TEST(cuda_graphs, cache_size_zero_disables_capture) {
    SKIP_WITHOUT_GPU();
    env_guard env("INFERD_CUDA_GRAPH_CACHE", "0");
    ggml_backend_ptr be = gpu()->init_backend();
    ASSERT_TRUE(be);
    graph_run g = build_graph(decode_step, gpu()->buffer_type(), 1);
    for (int step = 0; step < 3; ++step) ASSERT_EQ(be->graph_compute(g.gf), GGML_STATUS_SUCCESS);
    be->synchronize();
    EXPECT_EQ(as_cuda(be.get()).graphs_captured(), 0u);
    EXPECT_EQ(as_cuda(be.get()).graphs_replayed(), 0u);
}

// SET_ROWS with an index out of range fails the graph without writing out of bounds, plain and
// replayed, and the next good run succeeds.
TEST(cuda_graphs, index_out_of_range_fails_and_recovers) {
    SKIP_WITHOUT_GPU();
    env_guard env("INFERD_CUDA_GRAPH_CACHE", "12");
    ggml_backend_ptr be = gpu()->init_backend();
    ASSERT_TRUE(be);
    auto build = [](case_inputs & in) {
        ggml_tensor * cache = in.values(GGML_TYPE_F32, {4, 6, 1, 1}, std::vector<double>(24, 9.0));
        ggml_tensor * rows = in.values(GGML_TYPE_F32, {4, 2, 1, 1}, {1, 2, 3, 4, 5, 6, 7, 8});
        ggml_tensor * idx = in.values(GGML_TYPE_I32, {2, 1, 1, 1}, {1, 4});
        return ggml_set_rows(in.ctx, cache, rows, idx);
    };
    graph_run g = build_graph(build, gpu()->buffer_type(), 1);
    ggml_tensor * idx = g.in.list[2].t;
    auto set_idx = [&](int32_t second) {
        const int32_t v[2] = {1, second};
        ggml_backend_tensor_set(idx, v, 0, sizeof(v));
    };
    set_idx(6);
    EXPECT_EQ(be->graph_compute(g.gf), GGML_STATUS_FAILED);  // the plain run of this key
    set_idx(4);
    for (int i = 0; i < 3; ++i) EXPECT_EQ(be->graph_compute(g.gf), GGML_STATUS_SUCCESS);  // capture, replay x2
    EXPECT_EQ(as_cuda(be.get()).graphs_captured(), 1u);
    EXPECT_EQ(as_cuda(be.get()).graphs_replayed(), 2u);
    set_idx(-1);
    EXPECT_EQ(be->graph_compute(g.gf), GGML_STATUS_FAILED);  // replayed
    set_idx(5);
    EXPECT_EQ(be->graph_compute(g.gf), GGML_STATUS_SUCCESS);
    const dt out = bops::read_tensor(g.out);
    for (int64_t r = 0; r < 6; ++r) {
        for (int64_t i = 0; i < 4; ++i) {
            const double want = r == 1 ? 1 + i : (r == 4 || r == 5) ? 5 + i : 9.0;
            EXPECT_EQ(out.at(i, r), want) << r << "," << i;
        }
    }
}

TEST(cuda_graphs, nodes_in_host_memory_are_refused) {
    SKIP_WITHOUT_GPU();
    auto build = [](case_inputs & in) { return ggml_silu(in.ctx, in.random(GGML_TYPE_F32, {8, 2, 1, 1})); };
    graph_run g = build_graph(build, ggml_backend_cpu_buffer_type(), 1);
    EXPECT_EQ(gpu_backend().graph_compute(g.gf), GGML_STATUS_FAILED);
}

}  // namespace
