// The shared graph blocks: inputs, embeddings, norms, RoPE, attention through the KV caches,
// feed-forward (dense and mixture of experts), output.
#include "models/graph-builder.h"

#include <cmath>

namespace {

ggml_tensor * new_input(ggml_context * ctx, ggml_type type, int64_t ne0, int64_t ne1, const char * name) {
    ggml_tensor * t = ne1 > 0 ? ggml_new_tensor_2d(ctx, type, ne0, ne1) : ggml_new_tensor_1d(ctx, type, ne0);
    ggml_set_name(t, name);
    ggml_set_input(t);
    return t;
}

}  // namespace

graph_builder::graph_builder(const model & m, const graph_caches & caches, ggml_context * ctx, ggml_cgraph * gf,
                             const graph_shape & s)
    : hp(m.hparams()), w(m.weights()), shape(s), caches_(caches), ctx_(ctx), gf_(gf) {
    in.tokens = new_input(ctx_, GGML_TYPE_I32, shape.n_tokens, 0, "inp_tokens");
    in.pos = new_input(ctx_, GGML_TYPE_I32, shape.n_tokens, 0, "inp_pos");
    if (caches_.full) {
        in.kv_idx = new_input(ctx_, GGML_TYPE_I64, shape.n_tokens, 0, "inp_kv_idx");
        in.mask = new_input(ctx_, GGML_TYPE_F32, shape.n_kv, shape.n_tokens, "inp_kq_mask");
    }
    if (caches_.swa) {
        in.kv_idx_swa = new_input(ctx_, GGML_TYPE_I64, shape.n_tokens, 0, "inp_kv_idx_swa");
        in.mask_swa = new_input(ctx_, GGML_TYPE_F32, shape.n_kv_swa, shape.n_tokens, "inp_kq_mask_swa");
    }
    if (shape.embd) create_embd_inputs();
    const bool rows_out = !shape.embd || shape.pooling == pooling_type::none;
    if (rows_out && shape.n_outputs != shape.n_tokens) {
        in.out_ids = new_input(ctx_, GGML_TYPE_I32, shape.n_outputs, 0, "inp_out_ids");
    }
}

ggml_tensor * graph_builder::build_inp_embd(ggml_tensor * table) {
    ggml_tensor * x = ggml_get_rows(ctx_, table, in.tokens);  // [n_embd, n_tokens]
    if (hp.embd_scale > 0.0f) x = ggml_scale(ctx_, x, hp.embd_scale);
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

ggml_rope_params llm_rope_params(const model_hparams & hp, uint32_t il) {
    ggml_rope_params p;
    p.n_dims = int(hp.n_rot);
    p.mode = hp.rope_mode;
    p.n_ctx_orig = int(hp.rope_n_ctx_orig);
    p.freq_base = hp.is_swa(il) ? hp.rope_freq_base_swa : hp.rope_freq_base;
    p.freq_scale = hp.is_swa(il) ? hp.rope_freq_scale_swa : hp.rope_freq_scale;
    p.ext_factor = hp.yarn_ext_factor;
    p.attn_factor = hp.yarn_attn_factor;
    p.beta_fast = hp.yarn_beta_fast;
    p.beta_slow = hp.yarn_beta_slow;
    return p;
}

ggml_tensor * llm_rope_factors(const model_hparams & hp, const model_weights & w, uint32_t n_ctx) {
    if (w.rope_freqs) return w.rope_freqs;
    if (w.rope_long && n_ctx > hp.rope_n_ctx_orig) return w.rope_long;
    return w.rope_short;
}

ggml_tensor * graph_builder::build_rope(ggml_tensor * x, uint32_t il) {
    return ggml_rope_ff(ctx_, x, in.pos, llm_rope_factors(hp, w, caches_.n_ctx), llm_rope_params(hp, il));
}

graph_builder::qkv graph_builder::build_qkv(uint32_t il, ggml_tensor * x, const model_layer & l) {
    const int64_t n_tokens = shape.n_tokens;
    ggml_tensor * q = build_linear(x, l.wq, l.bq);
    ggml_tensor * k = build_linear(x, l.wk, l.bk);
    ggml_tensor * v = build_linear(x, l.wv, l.bv);
    q = ggml_reshape_3d(ctx_, q, hp.n_embd_head_k, hp.n_head, n_tokens);
    k = ggml_reshape_3d(ctx_, k, hp.n_embd_head_k, hp.n_head_kv, n_tokens);
    v = ggml_reshape_3d(ctx_, v, hp.n_embd_head_v, hp.n_head_kv, n_tokens);
    if (l.attn_q_norm) q = build_norm(q, l.attn_q_norm, nullptr, norm_kind::rms);
    if (l.attn_k_norm) k = build_norm(k, l.attn_k_norm, nullptr, norm_kind::rms);
    return {build_rope(q, il), build_rope(k, il), v};
}

ggml_tensor * graph_builder::soft_cap(ggml_tensor * x, float cap) {
    return ggml_scale(ctx_, ggml_tanh(ctx_, ggml_scale(ctx_, x, 1.0f / cap)), cap);
}

// softmax(scale * kq + mask) with the scores soft-capped first when the model caps them.
ggml_tensor * graph_builder::build_soft_max(ggml_tensor * kq, ggml_tensor * mask) {
    const float scale = hp.kq_scale();
    if (hp.attn_softcap > 0.0f) {
        kq = soft_cap(ggml_scale(ctx_, kq, scale), hp.attn_softcap);
        return ggml_soft_max_ext(ctx_, kq, mask, 1.0f);
    }
    return ggml_soft_max_ext(ctx_, kq, mask, scale);
}

ggml_tensor * graph_builder::build_attn_scores(ggml_tensor * q, ggml_tensor * kview, ggml_tensor * vview,
                                               ggml_tensor * mask) {
    const float scale = hp.kq_scale();
    const int64_t n_tokens = shape.n_tokens;
    ggml_tensor * qp = ggml_permute(ctx_, q, 0, 2, 1, 3);  // [head_k, n_tokens, n_head]
    if (shape.flash_attn) {
        ggml_tensor * o = ggml_flash_attn_ext(ctx_, qp, kview, vview, mask, scale, hp.attn_softcap);
        return ggml_reshape_2d(ctx_, o, int64_t(hp.n_embd_head_v) * hp.n_head, n_tokens);  // [head_v * n_head, n_tokens]
    }
    ggml_tensor * kq = build_soft_max(ggml_mul_mat(ctx_, kview, qp), mask);  // [n_kv, n_tokens, n_head]
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
    if (shape.embd) {  // no KV cache: each sequence of the ubatch attends to itself
        ggml_tensor * o = build_attn_seqs(il, q, k, v);  // [n_head * head_v, n_tokens]
        ggml_format_name(o, "attn_out-%d", il);
        return build_linear(o, wo, bo);
    }
    const int64_t n_tokens = shape.n_tokens;
    const bool swa = hp.is_swa(uint32_t(il));
    const kv_cache & kv = swa ? *caches_.swa : *caches_.full;
    ggml_tensor * idx = swa ? in.kv_idx_swa : in.kv_idx;
    const uint32_t n_kv = swa ? shape.n_kv_swa : shape.n_kv;
    ggml_tensor * kc = kv.k(uint32_t(il));  // [n_embd_k_gqa, cells]
    ggml_tensor * vc = kv.v(uint32_t(il));  // [n_embd_v_gqa, cells]
    // New rows into the cache cells of this ubatch.
    ggml_tensor * k2 = ggml_cont_2d(ctx_, k, hp.n_embd_k_gqa(), n_tokens);
    ggml_tensor * v2 = ggml_cont_2d(ctx_, v, hp.n_embd_v_gqa(), n_tokens);
    ggml_tensor * kset = ggml_set_rows(ctx_, kc, k2, idx);
    ggml_tensor * vset = ggml_set_rows(ctx_, vc, v2, idx);
    ggml_build_forward_expand(gf_, kset);
    ggml_build_forward_expand(gf_, vset);
    // Views of the first n_kv cells, one head per dim-2 slice; built on the set_rows results
    // so that they run after the writes.
    ggml_tensor * kview = ggml_view_3d(ctx_, kset, hp.n_embd_head_k, n_kv, hp.n_head_kv, kc->nb[1],
                                       ggml_row_size(kc->type, hp.n_embd_head_k), 0);
    ggml_tensor * vview = ggml_view_3d(ctx_, vset, hp.n_embd_head_v, n_kv, hp.n_head_kv, vc->nb[1],
                                       ggml_row_size(vc->type, hp.n_embd_head_v), 0);
    ggml_tensor * o = build_attn_scores(q, kview, vview, swa ? in.mask_swa : in.mask);  // [n_head * head_v, n_tokens]
    ggml_format_name(o, "attn_out-%d", il);
    return build_linear(o, wo, bo);
}

ggml_tensor * graph_builder::build_ffn_swiglu(ggml_tensor * x, const model_layer & l) {
    ggml_tensor * gate = ggml_mul_mat(ctx_, l.ffn_gate, x);  // [n_ff, n_tokens]
    ggml_tensor * up = ggml_mul_mat(ctx_, l.ffn_up, x);
    return ggml_mul_mat(ctx_, l.ffn_down, ggml_swiglu(ctx_, gate, up));
}

ggml_tensor * graph_builder::build_ffn_geglu(ggml_tensor * x, const model_layer & l) {
    ggml_tensor * gate = ggml_gelu(ctx_, ggml_mul_mat(ctx_, l.ffn_gate, x));  // [n_ff, n_tokens]
    ggml_tensor * up = ggml_mul_mat(ctx_, l.ffn_up, x);
    return ggml_mul_mat(ctx_, l.ffn_down, ggml_mul(ctx_, gate, up));
}

ggml_tensor * graph_builder::build_ffn_gelu(ggml_tensor * x, const model_layer & l) {
    ggml_tensor * up = ggml_gelu(ctx_, build_linear(x, l.ffn_up, l.ffn_up_b));
    return build_linear(up, l.ffn_down, l.ffn_down_b);
}

ggml_tensor * graph_builder::build_ffn_moe(ggml_tensor * x, const model_layer & l) {
    const int64_t n_embd = x->ne[0], n_tokens = x->ne[1];
    const int64_t n_expert = hp.n_expert, n_used = hp.n_expert_used;
    ggml_tensor * probs = ggml_soft_max(ctx_, ggml_mul_mat(ctx_, l.ffn_gate_inp, x));  // [n_expert, n_tokens]
    ggml_tensor * ids = ggml_top_k(ctx_, probs, int(n_used));                         // I32 [n_used, n_tokens]
    ggml_tensor * weights = ggml_get_rows(ctx_, ggml_reshape_3d(ctx_, probs, 1, n_expert, n_tokens), ids);
    weights = ggml_reshape_2d(ctx_, weights, n_used, n_tokens);
    weights = ggml_div(ctx_, weights, ggml_sum_rows(ctx_, weights));  // renormalized over the chosen
    weights = ggml_reshape_3d(ctx_, weights, 1, n_used, n_tokens);

    ggml_tensor * xe = ggml_reshape_3d(ctx_, x, n_embd, 1, n_tokens);
    ggml_tensor * gate = ggml_mul_mat_id(ctx_, l.ffn_gate_exps, xe, ids);  // [n_ff_exp, n_used, n_tokens]
    ggml_tensor * up = ggml_mul_mat_id(ctx_, l.ffn_up_exps, xe, ids);
    ggml_tensor * down = ggml_mul_mat_id(ctx_, l.ffn_down_exps, ggml_swiglu(ctx_, gate, up), ids);  // [n_embd, n_used, n_tokens]
    down = ggml_mul(ctx_, down, weights);
    ggml_tensor * out = nullptr;
    for (int64_t e = 0; e < n_used; ++e) {
        ggml_tensor * de = ggml_view_2d(ctx_, down, n_embd, n_tokens, down->nb[2], size_t(e) * down->nb[1]);
        out = out ? ggml_add(ctx_, out, de) : de;
    }
    return out;  // [n_embd, n_tokens]
}

graph_result graph_builder::build_output(ggml_tensor * x, norm_kind kind) {
    if (shape.embd) return build_embd_result(build_norm(x, w.output_norm, w.output_norm_b, kind));
    if (in.out_ids) x = ggml_get_rows(ctx_, x, in.out_ids);  // [n_embd, n_outputs]
    x = build_norm(x, w.output_norm, w.output_norm_b, kind);
    ggml_tensor * logits = ggml_mul_mat(ctx_, w.output, x);  // [n_vocab, n_outputs]
    if (hp.final_softcap > 0.0f) logits = soft_cap(logits, hp.final_softcap);
    ggml_set_name(logits, "logits");
    ggml_set_output(logits);
    graph_result r;
    r.logits = logits;
    return r;
}

graph_result llm_build_llama_like(graph_builder & b) {
    const model_hparams & hp = b.hp;
    ggml_context * ctx = b.ctx();
    ggml_tensor * x = b.build_inp_embd(b.w.tok_embd);  // [n_embd, n_tokens]
    for (uint32_t il = 0; il < hp.n_layer; ++il) {
        const model_layer & l = b.w.layers[il];
        ggml_tensor * h = b.build_norm(x, l.attn_norm, nullptr, norm_kind::rms);
        const graph_builder::qkv a = b.build_qkv(il, h, l);
        h = b.build_attn(int(il), a.q, a.k, a.v, l.wo, l.bo);
        x = ggml_add(ctx, x, h);
        h = b.build_norm(x, l.ffn_norm, nullptr, norm_kind::rms);
        h = l.ffn_gate_inp ? b.build_ffn_moe(h, l) : b.build_ffn_swiglu(h, l);
        x = ggml_add(ctx, x, h);
        ggml_format_name(x, "l_out-%u", il);
    }
    return b.build_output(x, norm_kind::rms);
}
