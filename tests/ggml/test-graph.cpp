// Contexts, tensors, views, graphs, the backend registry and tensor data access.
#include "ggml/alloc.h"
#include "ggml/backend.h"
#include "ggml/cpu.h"
#include "ggml/ggml.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <vector>

namespace {

ggml_context_ptr make_ctx(bool no_alloc, size_t n_tensors = 256, size_t data = 0) {
    return ggml_context_ptr(ggml_init({n_tensors * ggml_tensor_overhead() + ggml_graph_overhead() + data, nullptr, no_alloc}));
}

int index_of(const ggml_cgraph * gf, const ggml_tensor * t) {
    for (int i = 0; i < gf->n_nodes; ++i) {
        if (gf->nodes[i] == t) return i;
    }
    return -1;
}

}  // namespace

TEST(context, tensors_strides_and_iteration) {
    auto ctx = make_ctx(true);
    ggml_tensor * a = ggml_new_tensor_3d(ctx.get(), GGML_TYPE_F16, 5, 3, 2);
    ggml_tensor * b = ggml_new_tensor_1d(ctx.get(), GGML_TYPE_F32, 7);
    ggml_set_name(a, "a");
    ggml_format_name(b, "b%d", 1);
    EXPECT_EQ(a->nb[0], 2u);
    EXPECT_EQ(a->nb[1], 10u);
    EXPECT_EQ(a->nb[2], 30u);
    EXPECT_EQ(a->nb[3], 60u);
    EXPECT_EQ(ggml_nbytes(a), 60u);
    EXPECT_EQ(ggml_nelements(a), 30);
    EXPECT_EQ(ggml_nrows(a), 6);
    EXPECT_EQ(ggml_n_dims(a), 3);
    EXPECT_EQ(a->data, nullptr);  // no_alloc
    EXPECT_EQ(ggml_get_first_tensor(ctx.get()), a);
    EXPECT_EQ(ggml_get_next_tensor(ctx.get(), a), b);
    EXPECT_EQ(ggml_get_next_tensor(ctx.get(), b), nullptr);
    EXPECT_EQ(ggml_get_tensor(ctx.get(), "b1"), b);
    EXPECT_EQ(ggml_get_tensor(ctx.get(), "nope"), nullptr);
    EXPECT_GT(ggml_used_mem(ctx.get()), 2 * sizeof(ggml_tensor));
}

TEST(context, allocating_context_gives_aligned_data) {
    auto ctx = make_ctx(false, 16, 4096);
    ggml_tensor * a = ggml_new_tensor_2d(ctx.get(), GGML_TYPE_F32, 3, 3);
    ggml_tensor * b = ggml_new_tensor_2d(ctx.get(), GGML_TYPE_F32, 5, 5);
    ASSERT_NE(a->data, nullptr);
    ASSERT_NE(b->data, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(a->data) % GGML_MEM_ALIGN, 0u);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(b->data) % GGML_MEM_ALIGN, 0u);
    EXPECT_GE(static_cast<char *>(b->data), static_cast<char *>(a->data) + ggml_nbytes(a));
    EXPECT_EQ(ggml_get_next_tensor(ctx.get(), a), b);  // data objects are not tensors
}

TEST(views, view_permute_transpose_reshape) {
    auto ctx = make_ctx(true);
    ggml_tensor * a = ggml_new_tensor_4d(ctx.get(), GGML_TYPE_F32, 4, 3, 2, 5);
    ggml_tensor * p = ggml_permute(ctx.get(), a, 2, 0, 1, 3);  // dim0 -> 2, dim1 -> 0, dim2 -> 1
    EXPECT_EQ(p->ne[0], 3);
    EXPECT_EQ(p->ne[1], 2);
    EXPECT_EQ(p->ne[2], 4);
    EXPECT_EQ(p->nb[2], a->nb[0]);
    EXPECT_EQ(p->view_src, a);
    EXPECT_TRUE(ggml_is_permuted(p));
    EXPECT_FALSE(ggml_is_contiguous(p));

    ggml_tensor * t = ggml_transpose(ctx.get(), a);
    EXPECT_EQ(t->ne[0], 3);
    EXPECT_EQ(t->ne[1], 4);
    EXPECT_TRUE(ggml_is_transposed(t));

    ggml_tensor * r = ggml_reshape_2d(ctx.get(), a, 12, 10);
    EXPECT_TRUE(ggml_is_contiguous(r));
    EXPECT_EQ(r->view_src, a);

    ggml_tensor * v = ggml_view_2d(ctx.get(), a, 2, 3, a->nb[1], a->nb[0]);
    ggml_tensor * vv = ggml_view_1d(ctx.get(), v, 1, a->nb[0]);  // a view of a view resolves to a
    EXPECT_EQ(vv->view_src, a);
    EXPECT_EQ(vv->view_offs, 2 * a->nb[0]);
    EXPECT_EQ(ggml_nbytes(v), a->nb[1] * 2 + 2 * sizeof(float));
    EXPECT_TRUE(ggml_is_contiguous_rows(v));
    EXPECT_FALSE(ggml_is_contiguous(v));
}

TEST(graph, topological_order_and_leafs) {
    auto ctx = make_ctx(true);
    ggml_tensor * x = ggml_new_tensor_2d(ctx.get(), GGML_TYPE_F32, 8, 4);
    ggml_tensor * w = ggml_new_tensor_2d(ctx.get(), GGML_TYPE_F16, 8, 6);
    ggml_tensor * n = ggml_rms_norm(ctx.get(), x, 1e-5f);
    ggml_tensor * y = ggml_mul_mat(ctx.get(), w, n);
    ggml_tensor * s = ggml_silu(ctx.get(), y);
    ggml_tensor * t = ggml_cont(ctx.get(), ggml_transpose(ctx.get(), s));  // [4, 6]
    ggml_tensor * z = ggml_add(ctx.get(), ggml_transpose(ctx.get(), t), s);
    ggml_cgraph * gf = ggml_new_graph(ctx.get());
    ggml_build_forward_expand(gf, z);
    ggml_build_forward_expand(gf, z);  // adding again changes nothing
    EXPECT_EQ(gf->n_leafs, 2);
    EXPECT_EQ(gf->n_nodes, 7);  // norm, mul_mat, silu, transpose, cont, transpose, add (views are nodes)
    for (int i = 0; i < gf->n_nodes; ++i) {
        for (const ggml_tensor * src : gf->nodes[i]->src) {
            if (!src || src->op == GGML_OP_NONE) continue;
            EXPECT_LT(index_of(gf, src), i) << ggml_op_name(gf->nodes[i]->op);
        }
    }
    EXPECT_EQ(ggml_graph_node(gf, -1), z);
    EXPECT_TRUE(ggml_graph_contains(gf, w));
    EXPECT_FALSE(ggml_graph_contains(gf, ggml_new_tensor_1d(ctx.get(), GGML_TYPE_F32, 1)));
}

TEST(graph, deep_chain_does_not_recurse) {
    auto ctx = make_ctx(true, 20100, ggml_graph_overhead_custom(20001));
    ggml_tensor * t = ggml_new_tensor_1d(ctx.get(), GGML_TYPE_F32, 4);
    ggml_tensor * first = t;
    for (int i = 0; i < 20000; ++i) t = ggml_scale(ctx.get(), t, 1.0f);
    ggml_cgraph * gf = ggml_new_graph_custom(ctx.get(), 20001);
    ggml_build_forward_expand(gf, t);
    EXPECT_EQ(gf->n_nodes, 20000);
    EXPECT_EQ(gf->leafs[0], first);
}

TEST(backend, registry_and_cpu_device) {
    ggml_backend_registry reg = ggml_backend_registry_default();
    ASSERT_GE(reg.device_count(), 1u);
    ggml_backend_device_i * cpu = reg.device_by_type(ggml_backend_dev_type::cpu);
    ASSERT_NE(cpu, nullptr);
    EXPECT_EQ(reg.device_by_name("CPU"), cpu);
    EXPECT_EQ(reg.device_by_name("no such device"), nullptr);
    size_t free = 0, total = 0;
    cpu->memory(&free, &total);
    EXPECT_GT(total, 0u);
    EXPECT_TRUE(cpu->supports_buft(cpu->buffer_type()));
    EXPECT_TRUE(cpu->buffer_type()->is_host());
    EXPECT_EQ(cpu->buffer_type()->device(), cpu);
    ggml_backend_ptr be = cpu->init_backend();
    ASSERT_NE(be, nullptr);
    EXPECT_TRUE(ggml_backend_is_cpu(be.get()));
    EXPECT_EQ(be->device(), cpu);
}

TEST(backend, tensor_set_get_copy_and_views) {
    auto ctx = make_ctx(true);
    ggml_tensor * a = ggml_new_tensor_2d(ctx.get(), GGML_TYPE_F32, 6, 4);
    ggml_tensor * b = ggml_new_tensor_2d(ctx.get(), GGML_TYPE_F32, 6, 4);
    ggml_tensor * row2 = ggml_view_1d(ctx.get(), a, 6, 2 * a->nb[1]);
    ggml_backend_buffer_ptr buf = ggml_backend_alloc_ctx_tensors(ctx.get(), ggml_backend_cpu_buffer_type());
    ASSERT_NE(buf, nullptr);
    EXPECT_EQ(a->buffer, buf.get());
    EXPECT_EQ(row2->data, static_cast<char *>(a->data) + 2 * a->nb[1]);
    std::vector<float> v(24);
    std::iota(v.begin(), v.end(), 0.0f);
    ggml_backend_tensor_set(a, v.data(), 0, ggml_nbytes(a));
    std::vector<float> r(6);
    ggml_backend_tensor_get(row2, r.data(), 0, ggml_nbytes(row2));
    EXPECT_EQ(r[0], 12.0f);
    EXPECT_EQ(r[5], 17.0f);
    ggml_backend_tensor_copy(a, b);
    std::vector<float> out(24);
    ggml_backend_tensor_get(b, out.data(), 0, ggml_nbytes(b));
    EXPECT_EQ(out, v);
    ggml_backend_tensor_memset(b, 0, 4, 8);
    ggml_backend_tensor_get(b, out.data(), 0, ggml_nbytes(b));
    EXPECT_EQ(out[1], 0.0f);
    EXPECT_EQ(out[3], 3.0f);
}

TEST(backend, cpu_graph_compute_small_graph) {
    auto ctx = make_ctx(true);
    ggml_tensor * a = ggml_new_tensor_2d(ctx.get(), GGML_TYPE_F32, 3, 2);
    ggml_tensor * b = ggml_new_tensor_2d(ctx.get(), GGML_TYPE_F32, 3, 1);
    ggml_tensor * y = ggml_scale(ctx.get(), ggml_add(ctx.get(), a, b), 2.0f);
    ggml_cgraph * gf = ggml_new_graph(ctx.get());
    ggml_build_forward_expand(gf, y);
    ggml_backend_buffer_ptr buf = ggml_backend_alloc_ctx_tensors(ctx.get(), ggml_backend_cpu_buffer_type());
    ASSERT_NE(buf, nullptr);
    const float av[6] = {1, 2, 3, 4, 5, 6}, bv[3] = {10, 20, 30};
    ggml_backend_tensor_set(a, av, 0, sizeof(av));
    ggml_backend_tensor_set(b, bv, 0, sizeof(bv));
    for (int threads : {1, 2, 4}) {
        ggml_cpu_backend_options opt;
        opt.n_threads = threads;
        ggml_backend_ptr be = ggml_backend_cpu_init(opt);
        ASSERT_EQ(be->graph_compute(gf), GGML_STATUS_SUCCESS);
        float out[6];
        ggml_backend_tensor_get(y, out, 0, sizeof(out));
        const float expect[6] = {22, 44, 66, 28, 50, 72};
        for (int i = 0; i < 6; ++i) EXPECT_EQ(out[i], expect[i]) << threads;
    }
}

TEST(backend, unallocated_graph_fails_cleanly) {
    auto ctx = make_ctx(true);
    ggml_tensor * a = ggml_new_tensor_1d(ctx.get(), GGML_TYPE_F32, 8);
    ggml_tensor * y = ggml_silu(ctx.get(), a);
    ggml_cgraph * gf = ggml_new_graph(ctx.get());
    ggml_build_forward_expand(gf, y);
    ggml_backend_ptr be = ggml_backend_cpu_init({});
    EXPECT_EQ(be->graph_compute(gf), GGML_STATUS_FAILED);
}
