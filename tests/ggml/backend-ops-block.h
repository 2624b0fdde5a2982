// tests/ggml/backend-ops-block.h — a mini transformer block (rms_norm → q/k/v → rope →
// kq → causal soft_max → kqv → output + residual → rms_norm → swiglu FFN + residual) as a
// ggml graph and as a double-precision reference.
//
// Usage:
//   bops::block_model m;                          // weights in their own CPU buffer
//   ggml_tensor * y = bops::block_build(ctx, m, &x, &pos, &mask);   // y [n_embd, n_tokens]
//   bops::dt ref = bops::block_reference(m, x_values, pos_values, mask_values);
#pragma once

#include "backend-ops-cases-matmul.h"

#include <cmath>

namespace bops {

struct block_dims {
    static constexpr int64_t n_embd = 64, n_head = 4, n_head_kv = 2, head_dim = 16, n_tokens = 11, n_ff = 96;
    static constexpr float eps = 1e-5f;
};

inline ggml_rope_params block_rope() { return rope_params(block_dims::head_dim, GGML_ROPE_TYPE_NEOX); }

// Weights of the block in one CPU buffer (F16 attention, F32 output, BF16 gate/up, F16 down).
struct block_model {
    ggml_context_ptr ctx;
    ggml_backend_buffer_ptr buffer;
    ggml_tensor *attn_norm, *wq, *wk, *wv, *wo, *ffn_norm, *w_gate, *w_up, *w_down;

    // Weights in a buffer of buft (the same values on every device).
    explicit block_model(ggml_backend_buffer_type_i * buft = ggml_backend_cpu_buffer_type()) {
        using d = block_dims;
        ggml_init_params ip;
        ip.mem_size = 16 * ggml_tensor_overhead();
        ip.no_alloc = true;
        ctx.reset(ggml_init(ip));
        ggml_context * c = ctx.get();
        attn_norm = ggml_new_tensor_1d(c, GGML_TYPE_F32, d::n_embd);
        wq = ggml_new_tensor_2d(c, GGML_TYPE_F16, d::n_embd, d::n_embd);
        wk = ggml_new_tensor_2d(c, GGML_TYPE_F16, d::n_embd, d::n_head_kv * d::head_dim);
        wv = ggml_new_tensor_2d(c, GGML_TYPE_F16, d::n_embd, d::n_head_kv * d::head_dim);
        wo = ggml_new_tensor_2d(c, GGML_TYPE_F32, d::n_embd, d::n_embd);
        ffn_norm = ggml_new_tensor_1d(c, GGML_TYPE_F32, d::n_embd);
        w_gate = ggml_new_tensor_2d(c, GGML_TYPE_BF16, d::n_embd, d::n_ff);
        w_up = ggml_new_tensor_2d(c, GGML_TYPE_BF16, d::n_embd, d::n_ff);
        w_down = ggml_new_tensor_2d(c, GGML_TYPE_F16, d::n_ff, d::n_embd);
        buffer = ggml_backend_alloc_ctx_tensors(c, buft);
        GGML_ASSERT(buffer);
        uint64_t seed = 9000;
        for (ggml_tensor * t = ggml_get_first_tensor(c); t; t = ggml_get_next_tensor(c, t)) {
            ggml_set_param(t);
            rng r(seed++);
            const bool is_norm = t == attn_norm || t == ffn_norm;
            std::vector<double> v(static_cast<size_t>(ggml_nelements(t)));
            for (double & x : v) x = is_norm ? r.uniform(0.5, 1.5) : r.uniform(-0.2, 0.2);
            write_tensor(t, v);
        }
    }
};

struct block_io {
    ggml_tensor *x = nullptr, *pos = nullptr, *mask = nullptr, *out = nullptr;
};

inline block_io block_build(ggml_context * ctx, const block_model & m) {
    using d = block_dims;
    block_io io;
    io.x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, d::n_embd, d::n_tokens);       // [n_embd, T]
    io.pos = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, d::n_tokens);                 // [T]
    io.mask = ggml_new_tensor_2d(ctx, GGML_TYPE_F16, d::n_tokens, d::n_tokens);   // [T_k, T_q]
    for (ggml_tensor * t : {io.x, io.pos, io.mask}) ggml_set_input(t);
    const ggml_rope_params rp = block_rope();

    ggml_tensor * xn = ggml_mul(ctx, ggml_rms_norm(ctx, io.x, d::eps), m.attn_norm);
    ggml_tensor * q = ggml_reshape_3d(ctx, ggml_mul_mat(ctx, m.wq, xn), d::head_dim, d::n_head, d::n_tokens);
    ggml_tensor * k = ggml_reshape_3d(ctx, ggml_mul_mat(ctx, m.wk, xn), d::head_dim, d::n_head_kv, d::n_tokens);
    ggml_tensor * v = ggml_reshape_3d(ctx, ggml_mul_mat(ctx, m.wv, xn), d::head_dim, d::n_head_kv, d::n_tokens);
    q = ggml_rope(ctx, q, io.pos, rp);
    k = ggml_rope(ctx, k, io.pos, rp);
    ggml_tensor * qp = ggml_permute(ctx, q, 0, 2, 1, 3);                           // [hd, T, n_head]
    ggml_tensor * kp = ggml_permute(ctx, k, 0, 2, 1, 3);                           // [hd, T, n_head_kv]
    ggml_tensor * kq = ggml_mul_mat(ctx, kp, qp);                                  // [T_k, T_q, n_head]
    kq = ggml_soft_max_ext(ctx, kq, io.mask, 1.0f / std::sqrt(static_cast<float>(d::head_dim)));
    ggml_tensor * vt = ggml_cont(ctx, ggml_permute(ctx, v, 1, 2, 0, 3));          // [T, hd, n_head_kv]
    ggml_tensor * kqv = ggml_mul_mat(ctx, vt, kq);                                 // [hd, T_q, n_head]
    ggml_tensor * o = ggml_cont_2d(ctx, ggml_permute(ctx, kqv, 0, 2, 1, 3), d::n_embd, d::n_tokens);
    ggml_tensor * h = ggml_add(ctx, io.x, ggml_mul_mat(ctx, m.wo, o));            // [n_embd, T]
    ggml_tensor * hn = ggml_mul(ctx, ggml_rms_norm(ctx, h, d::eps), m.ffn_norm);
    ggml_tensor * s = ggml_swiglu(ctx, ggml_mul_mat(ctx, m.w_gate, hn), ggml_mul_mat(ctx, m.w_up, hn)); // [n_ff, T]
    io.out = ggml_add(ctx, h, ggml_mul_mat(ctx, m.w_down, s));
    ggml_set_output(io.out);
    return io;
}

// Scaled dot-product attention of one block in double: q [hd, n_head, T], k/v [hd, n_kv, T],
// mask [T_k, T_q] → [n_embd, T].
inline dt block_attention(const dt & q, const dt & k, const dt & v, const dt & mask) {
    using d = block_dims;
    const int64_t group = d::n_head / d::n_head_kv;
    const double scale = static_cast<float>(1.0f / std::sqrt(static_cast<float>(d::head_dim)));
    dt out({d::n_embd, d::n_tokens, 1, 1});
    for (int64_t h = 0; h < d::n_head; ++h) {
        dt scores({d::n_tokens, d::n_tokens, 1, 1});  // [T_k, T_q]
        for (int64_t i = 0; i < d::n_tokens; ++i)
            for (int64_t j = 0; j < d::n_tokens; ++j) {
                double s = 0.0;
                for (int64_t e = 0; e < d::head_dim; ++e) s += k.at(e, h / group, j) * q.at(e, h, i);
                scores.at(j, i) = s;
            }
        const dt p = ref_soft_max(scores, &mask, scale);
        for (int64_t i = 0; i < d::n_tokens; ++i)
            for (int64_t e = 0; e < d::head_dim; ++e) {
                double s = 0.0;
                for (int64_t j = 0; j < d::n_tokens; ++j) s += v.at(e, h / group, j) * p.at(j, i);
                out.at(e + d::head_dim * h, i) = s;
            }
    }
    return out;
}

inline dt block_reference(const block_model & m, const dt & x, const dt & pos, const dt & mask) {
    using d = block_dims;
    auto times = [](double a, double b) { return a * b; };
    auto plus = [](double a, double b) { return a + b; };
    const dt xn = ref_binary(ref_norm(x, d::eps, true), read_tensor(m.attn_norm), times);
    dt q = ref_mul_mat(read_tensor(m.wq), xn), k = ref_mul_mat(read_tensor(m.wk), xn), v = ref_mul_mat(read_tensor(m.wv), xn);
    q.ne = {d::head_dim, d::n_head, d::n_tokens, 1};
    k.ne = {d::head_dim, d::n_head_kv, d::n_tokens, 1};
    v.ne = {d::head_dim, d::n_head_kv, d::n_tokens, 1};
    q = ref_rope(q, pos, block_rope());
    k = ref_rope(k, pos, block_rope());
    const dt attn = block_attention(q, k, v, mask);
    const dt h = ref_binary(x, ref_mul_mat(read_tensor(m.wo), attn), plus);
    const dt hn = ref_binary(ref_norm(h, d::eps, true), read_tensor(m.ffn_norm), times);
    const dt g = ref_mul_mat(read_tensor(m.w_gate), hn), u = ref_mul_mat(read_tensor(m.w_up), hn);
    const dt s = ref_binary(g, u, [](double a, double b) { return ref_silu(a) * b; });
    return ref_binary(h, ref_mul_mat(read_tensor(m.w_down), s), plus);
}

// Input values of the block: x uniform in [-1, 1], positions 5.., causal mask.
struct block_inputs {
    std::vector<double> x, pos, mask;
    block_inputs() {
        using d = block_dims;
        rng r(9100);
        for (int64_t i = 0; i < d::n_embd * d::n_tokens; ++i) x.push_back(r.uniform(-1.0, 1.0));
        for (int64_t i = 0; i < d::n_tokens; ++i) pos.push_back(static_cast<double>(5 + i));
        mask = causal_mask(d::n_tokens, 0);
    }
    void set(const block_io & io) const {
        write_tensor(io.x, x);
        write_tensor(io.pos, pos);
        write_tensor(io.mask, mask);
    }
};

}  // namespace bops
