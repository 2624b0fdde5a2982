// tests/ggml/alloc-test-graphs.h — graphs for the allocator tests (test-alloc.cpp): a
// llama-style transformer block, random DAGs, and a buffer type with coarse alignment.
#pragma once

#include "ggml/backend.h"
#include "ggml/cpu.h"
#include "ggml/ggml.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

namespace alloc_test {

inline ggml_context_ptr make_context(size_t n_tensors) {
    ggml_init_params ip;
    ip.mem_size = n_tensors * ggml_tensor_overhead() + ggml_graph_overhead();
    ip.no_alloc = true;
    ggml_context_ptr ctx(ggml_init(ip));
    EXPECT_NE(ctx, nullptr);
    return ctx;
}

// Weights and other tensors that live in a buffer of their own before the graph is allocated.
struct weights {
    ggml_context_ptr ctx = make_context(64);
    ggml_backend_buffer_ptr buffer;

    ggml_tensor * add(ggml_type type, int64_t ne0, int64_t ne1, const char * name) {
        return ggml_set_name(ggml_new_tensor_2d(ctx.get(), type, ne0, ne1), name);
    }
    void allocate() {
        buffer = ggml_backend_alloc_ctx_tensors(ctx.get(), ggml_backend_cpu_buffer_type());
        ASSERT_NE(buffer, nullptr);
    }
};

// A llama-style transformer block over n_tokens tokens; K goes into a cache that has data.
struct transformer_block {
    static constexpr int64_t n_embd = 64, n_head = 4, head_dim = 16, n_ff = 96, n_ctx = 32;
    weights w;
    ggml_tensor *attn_norm, *wq, *wk, *wv, *wo, *ffn_norm, *wg, *wu, *wd, *k_cache;

    transformer_block() {
        attn_norm = w.add(GGML_TYPE_F32, n_embd, 1, "attn_norm");
        wq = w.add(GGML_TYPE_F16, n_embd, n_embd, "wq");
        wk = w.add(GGML_TYPE_F16, n_embd, n_embd, "wk");
        wv = w.add(GGML_TYPE_F16, n_embd, n_embd, "wv");
        wo = w.add(GGML_TYPE_F16, n_embd, n_embd, "wo");
        ffn_norm = w.add(GGML_TYPE_F32, n_embd, 1, "ffn_norm");
        wg = w.add(GGML_TYPE_F16, n_embd, n_ff, "wg");
        wu = w.add(GGML_TYPE_F16, n_embd, n_ff, "wu");
        wd = w.add(GGML_TYPE_F16, n_ff, n_embd, "wd");
        k_cache = w.add(GGML_TYPE_F16, n_embd, n_ctx, "k_cache");
        w.allocate();
    }

    ggml_tensor * attention(ggml_context * ctx, ggml_cgraph * gf, ggml_tensor * cur, int64_t n_tokens) {
        ggml_tensor * pos = ggml_set_name(ggml_new_tensor_1d(ctx, GGML_TYPE_I32, n_tokens), "pos");
        ggml_tensor * mask = ggml_set_name(ggml_new_tensor_2d(ctx, GGML_TYPE_F32, n_tokens, n_tokens), "mask");
        ggml_set_input(pos);
        ggml_set_input(mask);
        ggml_rope_params rp;
        rp.n_dims = int(head_dim);
        ggml_tensor * q = ggml_reshape_3d(ctx, ggml_mul_mat(ctx, wq, cur), head_dim, n_head, n_tokens);
        ggml_tensor * k = ggml_reshape_3d(ctx, ggml_mul_mat(ctx, wk, cur), head_dim, n_head, n_tokens);
        q = ggml_set_name(ggml_rope(ctx, q, pos, rp), "q_rope");
        k = ggml_set_name(ggml_rope(ctx, k, pos, rp), "k_rope");
        ggml_tensor * k_dst = ggml_view_2d(ctx, k_cache, n_embd, n_tokens, k_cache->nb[1], 0);
        ggml_build_forward_expand(gf, ggml_cpy(ctx, ggml_reshape_2d(ctx, k, n_embd, n_tokens), k_dst));
        ggml_tensor * v = ggml_reshape_3d(ctx, ggml_mul_mat(ctx, wv, cur), head_dim, n_head, n_tokens);
        ggml_tensor * kq = ggml_mul_mat(ctx, ggml_permute(ctx, k, 0, 2, 1, 3), ggml_permute(ctx, q, 0, 2, 1, 3));
        kq = ggml_set_name(ggml_soft_max_ext(ctx, kq, mask, 0.25f), "kq_soft_max");  // [n_kv, n_tokens, n_head]
        ggml_tensor * vt = ggml_cont(ctx, ggml_permute(ctx, v, 1, 2, 0, 3));  // [n_tokens, head_dim, n_head]
        ggml_tensor * kqv = ggml_permute(ctx, ggml_mul_mat(ctx, vt, kq), 0, 2, 1, 3);
        return ggml_mul_mat(ctx, wo, ggml_cont_2d(ctx, kqv, n_embd, n_tokens));
    }

    // Builds the graph in ctx (y, flagged OUTPUT, is its last node).
    ggml_cgraph * build(ggml_context * ctx, int64_t n_tokens) {
        ggml_cgraph * gf = ggml_new_graph(ctx);
        ggml_tensor * x = ggml_set_name(ggml_new_tensor_2d(ctx, GGML_TYPE_F32, n_embd, n_tokens), "x");
        ggml_set_input(x);
        ggml_tensor * cur = ggml_mul(ctx, ggml_rms_norm(ctx, x, 1e-5f), attn_norm);
        ggml_tensor * x1 = ggml_set_name(ggml_add(ctx, attention(ctx, gf, cur, n_tokens), x), "x1");
        cur = ggml_mul(ctx, ggml_rms_norm(ctx, x1, 1e-5f), ffn_norm);
        ggml_tensor * g = ggml_set_name(ggml_mul_mat(ctx, wg, cur), "gate");
        ggml_tensor * h = ggml_set_name(ggml_swiglu(ctx, g, ggml_mul_mat(ctx, wu, cur)), "swiglu");
        ggml_tensor * y = ggml_set_name(ggml_add(ctx, ggml_mul_mat(ctx, wd, h), x1), "y");
        ggml_set_output(y);
        ggml_build_forward_expand(gf, y);
        return gf;
    }
};

// Random DAGs of element-wise ops, mul_mat, views, reshapes, permutes, copies and concats.
class random_graph_builder {
public:
    explicit random_graph_builder(unsigned seed) : rng_(seed) {
        d_ = 8 * int64_t(1 + rng_() % 3);
        r_ = int64_t(2 + rng_() % 4);
        w_dd_ = w_.add(GGML_TYPE_F32, d_, d_, "w_dd");
        w_d2d_ = w_.add(GGML_TYPE_F16, d_, 2 * d_, "w_d2d");
        w_2dd_ = w_.add(GGML_TYPE_BF16, 2 * d_, d_, "w_2dd");
        bias_ = w_.add(GGML_TYPE_F32, d_, 1, "bias");
        cache_ = w_.add(GGML_TYPE_F16, 4 * d_, 4 * r_, "cache");
        w_.allocate();
    }

    ggml_cgraph * build(ggml_context * ctx, int n_ops) {
        ctx_ = ctx;
        pool_.clear();
        for (int i = 0; i < 3; ++i) {
            ggml_tensor * in = ggml_format_name(ggml_new_tensor_2d(ctx, GGML_TYPE_F32, d_, r_), "in%d", i);
            if (rng_() % 2) ggml_set_input(in);
            pool_.push_back(in);
        }
        pool_.push_back(ggml_set_name(ggml_new_tensor_2d(ctx, GGML_TYPE_F32, d_, 1), "row"));
        pool_.push_back(bias_);
        for (int i = 0; i < n_ops; ++i) {
            ggml_tensor * t = step();
            if (rng_() % 10 == 0) ggml_set_output(t);
            ggml_format_name(t, "t%d_%s", i, ggml_op_name(t->op));
            pool_.push_back(t);
        }
        ggml_cgraph * gf = ggml_new_graph(ctx);
        for (ggml_tensor * t : pool_) ggml_build_forward_expand(gf, t);
        return gf;
    }

private:
    ggml_tensor * pick() {
        const size_t n = pool_.size();
        const size_t recent = std::min<size_t>(n, 6);
        return rng_() % 10 < 7 ? pool_[n - 1 - rng_() % recent] : pool_[rng_() % n];
    }
    ggml_tensor * pick_where(bool (*ok)(const ggml_tensor *, const ggml_tensor *), const ggml_tensor * a) {
        std::vector<ggml_tensor *> c;
        for (ggml_tensor * t : pool_) {
            if (ok(t, a)) c.push_back(t);
        }
        return c.empty() ? nullptr : c[rng_() % c.size()];
    }
    bool is_2d(const ggml_tensor * t) const { return t->ne[2] == 1 && t->ne[3] == 1; }

    ggml_tensor * unary(ggml_tensor * a) {
        if (a->type != GGML_TYPE_F32) return rng_() % 2 ? ggml_silu(ctx_, a) : ggml_scale(ctx_, a, 0.5f);
        switch (rng_() % 6) {
            case 0: return ggml_silu(ctx_, a);
            case 1: return ggml_gelu(ctx_, a);
            case 2: return ggml_scale(ctx_, a, 2.0f);
            case 3: return ggml_rms_norm(ctx_, a, 1e-5f);
            case 4: return ggml_norm(ctx_, a, 1e-5f);
            default: return ggml_soft_max(ctx_, a);
        }
    }
    ggml_tensor * binary(ggml_tensor * a) {
        ggml_tensor * b = pick_where([](const ggml_tensor * t, const ggml_tensor * x) { return ggml_can_repeat(t, x); }, a);
        if (b == nullptr) b = a;
        switch (rng_() % 3) {
            case 0: return ggml_add(ctx_, a, b);
            case 1: return ggml_mul(ctx_, a, b);
            default:
                return ggml_are_same_shape(a, b) ? ggml_swiglu(ctx_, a, b) : ggml_add(ctx_, a, b);
        }
    }
    ggml_tensor * mul_mat(ggml_tensor * b) {
        if (b->type != GGML_TYPE_F32) return nullptr;
        if (b->ne[0] == d_) return ggml_mul_mat(ctx_, rng_() % 2 ? w_dd_ : w_d2d_, b);
        if (b->ne[0] == 2 * d_) return ggml_mul_mat(ctx_, w_2dd_, b);
        ggml_tensor * a = pick_where([](const ggml_tensor * t, const ggml_tensor * x) {
            return t->ne[0] == x->ne[0] && x->ne[2] % t->ne[2] == 0 && x->ne[3] % t->ne[3] == 0 &&
                   ggml_is_contiguous_rows(t) && !ggml_is_transposed(t);
        }, b);
        return a == nullptr ? nullptr : ggml_mul_mat(ctx_, a, b);
    }
    ggml_tensor * view(ggml_tensor * a) {
        if (!ggml_is_contiguous(a) || ggml_nelements(a) < 2) return ggml_cont(ctx_, a);
        if (is_2d(a) && a->ne[1] >= 2) {
            const int64_t rows = a->ne[1] / 2;
            return ggml_view_2d(ctx_, a, a->ne[0], rows, a->nb[1], rng_() % 2 ? rows * a->nb[1] : 0);
        }
        return ggml_view_1d(ctx_, a, ggml_nelements(a) / 2, 0);
    }
    ggml_tensor * reshape_or_permute(ggml_tensor * a) {
        if (ggml_is_contiguous(a) && a->ne[0] % 2 == 0 && rng_() % 2) {
            return ggml_reshape_3d(ctx_, a, a->ne[0] / 2, 2, a->ne[1] * a->ne[2] * a->ne[3]);
        }
        return is_2d(a) ? ggml_transpose(ctx_, a) : ggml_permute(ctx_, a, 0, 2, 1, 3);
    }
    ggml_tensor * copy(ggml_tensor * a) {
        const int64_t n = ggml_nelements(a);
        if (rng_() % 2 && n <= ggml_nelements(cache_)) {
            return ggml_cpy(ctx_, a, ggml_view_1d(ctx_, cache_, n, 0));  // into memory with data
        }
        ggml_tensor * dst = ggml_new_tensor(ctx_, rng_() % 2 ? GGML_TYPE_F16 : GGML_TYPE_F32, 4, a->ne);
        return ggml_cpy(ctx_, a, ggml_set_name(dst, "cpy_dst"));
    }
    ggml_tensor * concat(ggml_tensor * a) {
        ggml_tensor * b = pick_where([](const ggml_tensor * t, const ggml_tensor * x) {
            return t->type == x->type && t->ne[0] == x->ne[0] && t->ne[2] == x->ne[2] && t->ne[3] == x->ne[3];
        }, a);
        return ggml_concat(ctx_, a, b, 1);
    }
    ggml_tensor * step() {
        ggml_tensor * a = pick();
        ggml_tensor * r = nullptr;
        switch (rng_() % 9) {
            case 0: case 1: r = unary(a); break;
            case 2: case 3: r = binary(a); break;
            case 4: r = mul_mat(a); break;
            case 5: r = view(a); break;
            case 6: r = reshape_or_permute(a); break;
            case 7: r = copy(a); break;
            default: r = concat(a); break;
        }
        return r != nullptr ? r : ggml_cont(ctx_, a);
    }

    std::mt19937 rng_;
    weights w_;
    int64_t d_ = 0, r_ = 0;
    ggml_tensor *w_dd_, *w_d2d_, *w_2dd_, *bias_, *cache_;
    ggml_context * ctx_ = nullptr;
    std::vector<ggml_tensor *> pool_;
};

// A buffer type like the CPU's but with a coarser alignment and padded tensors.
class padded_buffer_type final : public ggml_backend_buffer_type_i {
public:
    const char * name() const override { return "padded"; }
    ggml_backend_buffer_ptr alloc_buffer(size_t size) override { return cpu()->alloc_buffer(size); }
    size_t alignment() const override { return 256; }
    size_t alloc_size(const ggml_tensor * t) const override { return ggml_nbytes(t) + 40; }
    bool is_host() const override { return true; }
    ggml_backend_device_i * device() const override { return cpu()->device(); }

private:
    static ggml_backend_buffer_type_i * cpu() { return ggml_backend_cpu_buffer_type(); }
};

}  // namespace alloc_test
