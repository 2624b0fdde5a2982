// The shared graph blocks: inputs, embeddings, norms, RoPE, attention through the KV cache,
// feed-forward, output.
#include "models/graph-builder.h"

#include <cmath>

graph_builder::graph_builder(const model & m, const kv_cache & kv, ggml_context * ctx, ggml_cgraph * gf,
                             const graph_shape & s)
    : hp(m.hparams()), w(m.weights()), shape(s), kv_(kv), ctx_(ctx), gf_(gf) {
    in.tokens = ggml_new_tensor_1d(ctx_, GGML_TYPE_I32, shape.n_tokens);
    ggml_set_name(in.tokens, "inp_tokens");
    ggml_set_input(in.tokens);
    in.pos = ggml_new_tensor_1d(ctx_, GGML_TYPE_I32, shape.n_tokens);
    ggml_set_name(in.pos, "inp_pos");
    ggml_set_input(in.pos);
    in.kv_idx = ggml_new_tensor_1d(ctx_, GGML_TYPE_I64, shape.n_tokens);
    ggml_set_name(in.kv_idx, "inp_kv_idx");
    ggml_set_input(in.kv_idx);
    in.mask = ggml_new_tensor_2d(ctx_, GGML_TYPE_F32, shape.n_kv, shape.n_tokens);
    ggml_set_name(in.mask, "inp_kq_mask");
    ggml_set_input(in.mask);
    if (shape.n_outputs != shape.n_tokens) {
        in.out_ids = ggml_new_tensor_1d(ctx_, GGML_TYPE_I32, shape.n_outputs);
        ggml_set_name(in.out_ids, "inp_out_ids");
        ggml_set_input(in.out_ids);
    }
}

ggml_tensor * graph_builder::build_inp_embd(ggml_tensor * table) {
    ggml_tensor * x = ggml_get_rows(ctx_, table, in.tokens);  // [n_embd, n_tokens]
    ggml_set_name(x, "inp_embd");
    return x;
}

ggml_tensor * graph_builder::build_inp_pos_embd(ggml_tensor * table) {
    return ggml_get_rows(ctx_, table, in.pos);  // [n_embd, n_tokens]
}

ggml_tensor * graph_builder::build_norm(ggml_tensor * x, ggml_tensor * nw, ggml_tensor * nb, norm_kind kind) {
    x = kind == norm_kind::rms ? ggml_rms_norm(ctx_, x, hp.norm_eps) : ggml_norm(ctx_, x, hp.norm_eps);
    if (nw) x = ggml_mul(ctx_, x, nw);
    if (nb) x = ggml_add(ctx_, x, nb);
    return x;
}

ggml_tensor * graph_builder::build_linear(ggml_tensor * x, ggml_tensor * wt, ggml_tensor * b) {
    x = ggml_mul_mat(ctx_, wt, x);
    if (b) x = ggml_add(ctx_, x, b);
    return x;
}

ggml_rope_params llm_rope_params(const model_hparams & hp) {
    ggml_rope_params p;
    p.n_dims = int(hp.n_rot);
    p.mode = hp.rope_mode;
    p.n_ctx_orig = int(hp.rope_n_ctx_orig);
    p.freq_base = hp.rope_freq_base;
    p.freq_scale = hp.rope_freq_scale;
    p.ext_factor = hp.yarn_ext_factor;
    p.attn_factor = hp.yarn_attn_factor;
    p.beta_fast = hp.yarn_beta_fast;
    p.beta_slow = hp.yarn_beta_slow;
    return p;
}

ggml_tensor * graph_builder::build_rope(ggml_tensor * x) {
    return ggml_rope_ff(ctx_, x, in.pos, w.rope_freqs, llm_rope_params(hp));
}

ggml_tensor * graph_builder::build_attn_scores(ggml_tensor * q, ggml_tensor * kview, ggml_tensor * vview) {
    const float scale = 1.0f / std::sqrt(float(hp.n_embd_head_k));
    const int64_t n_tokens = shape.n_tokens;
    ggml_tensor * qp = ggml_permute(ctx_, q, 0, 2, 1, 3);  // [head_k, n_tokens, n_head]
    if (shape.flash_attn) {
        ggml_tensor * o = ggml_flash_attn_ext(ctx_, qp, kview, vview, in.mask, scale);  // [head_v, n_head, n_tokens]
        return ggml_reshape_2d(ctx_, o, int64_t(hp.n_embd_head_v) * hp.n_head, n_tokens);
    }
    ggml_tensor * kq = ggml_mul_mat(ctx_, kview, qp);  // [n_kv, n_tokens, n_head]
    kq = ggml_soft_max_ext(ctx_, kq, in.mask, scale);
    if (vview->type == GGML_TYPE_F16) {
        // The weights meet an F16 V in F16 precision (products accumulated in F32), as the
        // reference engines' attention does.
        ggml_tensor * p16 = ggml_cpy(ctx_, kq, ggml_new_tensor(ctx_, GGML_TYPE_F16, 4, kq->ne));
        kq = ggml_cpy(ctx_, p16, ggml_new_tensor(ctx_, GGML_TYPE_F32, 4, kq->ne));
    }
    ggml_tensor * vt = ggml_cont(ctx_, ggml_transpose(ctx_, vview));  // [n_kv, head_v, n_head_kv]
    ggml_tensor * kqv = ggml_mul_mat(ctx_, vt, kq);                   // [head_v, n_tokens, n_head]
    ggml_tensor * o = ggml_permute(ctx_, kqv, 0, 2, 1, 3);            // [head_v, n_head, n_tokens]
    return ggml_cont_2d(ctx_, o, int64_t(hp.n_embd_head_v) * hp.n_head, n_tokens);
}

ggml_tensor * graph_builder::build_attn(int il, ggml_tensor * q, ggml_tensor * k, ggml_tensor * v,
                                        ggml_tensor * wo, ggml_tensor * bo) {
    const int64_t n_tokens = shape.n_tokens;
    ggml_tensor * kc = kv_.k(uint32_t(il));  // [n_embd_k_gqa, n_ctx]
    ggml_tensor * vc = kv_.v(uint32_t(il));  // [n_embd_v_gqa, n_ctx]
    // New rows into the cache cells of this ubatch.
    ggml_tensor * k2 = ggml_cont_2d(ctx_, k, hp.n_embd_k_gqa(), n_tokens);
    ggml_tensor * v2 = ggml_cont_2d(ctx_, v, hp.n_embd_v_gqa(), n_tokens);
    ggml_tensor * kset = ggml_set_rows(ctx_, kc, k2, in.kv_idx);
    ggml_tensor * vset = ggml_set_rows(ctx_, vc, v2, in.kv_idx);
    ggml_build_forward_expand(gf_, kset);
    ggml_build_forward_expand(gf_, vset);
    // Views of the first n_kv cells, one head per dim-2 slice; built on the set_rows results
    // so that they run after the writes.
    ggml_tensor * kview = ggml_view_3d(ctx_, kset, hp.n_embd_head_k, shape.n_kv, hp.n_head_kv, kc->nb[1],
                                       ggml_row_size(kc->type, hp.n_embd_head_k), 0);
    ggml_tensor * vview = ggml_view_3d(ctx_, vset, hp.n_embd_head_v, shape.n_kv, hp.n_head_kv, vc->nb[1],
                                       ggml_row_size(vc->type, hp.n_embd_head_v), 0);
    ggml_tensor * o = build_attn_scores(q, kview, vview);  // [n_head * head_v, n_tokens]
    ggml_format_name(o, "attn_out-%d", il);
    return build_linear(o, wo, bo);
}

ggml_tensor * graph_builder::build_ffn_swiglu(ggml_tensor * x, const model_layer & l) {
    ggml_tensor * gate = ggml_mul_mat(ctx_, l.ffn_gate, x);  // [n_ff, n_tokens]
    ggml_tensor * up = ggml_mul_mat(ctx_, l.ffn_up, x);
    return ggml_mul_mat(ctx_, l.ffn_down, ggml_swiglu(ctx_, gate, up));
}

ggml_tensor * graph_builder::build_ffn_gelu(ggml_tensor * x, const model_layer & l) {
    ggml_tensor * up = ggml_gelu(ctx_, build_linear(x, l.ffn_up, l.ffn_up_b));
    return build_linear(up, l.ffn_down, l.ffn_down_b);
}

ggml_tensor * graph_builder::build_output(ggml_tensor * x, norm_kind kind) {
    if (in.out_ids) x = ggml_get_rows(ctx_, x, in.out_ids);  // [n_embd, n_outputs]
    x = build_norm(x, w.output_norm, w.output_norm_b, kind);
    ggml_tensor * logits = ggml_mul_mat(ctx_, w.output, x);  // [n_vocab, n_outputs]
    ggml_set_name(logits, "logits");
    ggml_set_output(logits);
    return logits;
}

ggml_tensor * llm_build_llama_like(graph_builder & b) {
    const model_hparams & hp = b.hp;
    ggml_context * ctx = b.ctx();
    const int64_t n_tokens = b.shape.n_tokens;
    ggml_tensor * x = b.build_inp_embd(b.w.tok_embd);  // [n_embd, n_tokens]
    for (uint32_t il = 0; il < hp.n_layer; ++il) {
        const model_layer & l = b.w.layers[il];
        ggml_tensor * h = b.build_norm(x, l.attn_norm, nullptr, norm_kind::rms);
        ggml_tensor * q = b.build_linear(h, l.wq, l.bq);
        ggml_tensor * k = b.build_linear(h, l.wk, l.bk);
        ggml_tensor * v = b.build_linear(h, l.wv, l.bv);
        q = b.build_rope(ggml_reshape_3d(ctx, q, hp.n_embd_head_k, hp.n_head, n_tokens));
        k = b.build_rope(ggml_reshape_3d(ctx, k, hp.n_embd_head_k, hp.n_head_kv, n_tokens));
        v = ggml_reshape_3d(ctx, v, hp.n_embd_head_v, hp.n_head_kv, n_tokens);
        h = b.build_attn(int(il), q, k, v, l.wo, l.bo);
        x = ggml_add(ctx, x, h);
        h = b.build_norm(x, l.ffn_norm, nullptr, norm_kind::rms);
        x = ggml_add(ctx, x, b.build_ffn_swiglu(h, l));
        ggml_format_name(x, "l_out-%u", il);
    }
    return b.build_output(x, norm_kind::rms);
}
