// phi3 (Phi-3, Phi-3.5, Phi-4-mini): RMSNorm, a fused QKV projection (attn_qkv rows: Q, K, V),
// NEOX RoPE with LongRoPE frequency factors (rope_factors_long beyond the original training
// context, rope_factors_short within it) and the file's attention factor, a fused gate+up
// projection (ffn_up rows: gate, then up; silu(gate) * up), untied or tied output. A file that
// sets attention.sliding_window gets sliding-window attention on every layer.
#include "models/arch.h"
#include "models/graph-builder.h"

namespace {

void phi3_load_hparams(const hparams_reader & r, model_hparams & hp) {
    llm_load_common_hparams(r, hp, "attention.layer_norm_rms_epsilon");
    llm_load_rope_hparams(r, hp);
    llm_load_swa_hparams(r, hp, /*default_period=*/0);
    hp.rope_mode = GGML_ROPE_TYPE_NEOX;
    // LongRoPE's magnitude correction, applied at every context length.
    hp.yarn_attn_factor = r.f32_or("rope.scaling.attn_factor", hp.yarn_attn_factor);
    if (!(hp.yarn_attn_factor > 0.0f)) throw model_load_error("rope.scaling.attn_factor must be positive");
}

void phi3_create_tensors(tensor_creator & c, const model_hparams & hp, model_weights & w) {
    const int64_t n_embd = hp.n_embd, n_vocab = hp.n_vocab, n_ff = hp.n_ff;
    const int64_t n_q = int64_t(hp.n_embd_head_k) * hp.n_head;
    const int64_t n_out = int64_t(hp.n_embd_head_v) * hp.n_head;
    w.tok_embd = c.create("token_embd.weight", {n_embd, n_vocab}, -1);
    w.output_norm = c.create("output_norm.weight", {n_embd}, -2);
    w.output = c.create_optional("output.weight", {n_embd, n_vocab}, -2);
    if (!w.output) w.output = c.create_tied_output(w.tok_embd);
    w.rope_long = c.create_optional("rope_factors_long.weight", {int64_t(hp.n_rot / 2)}, -1);
    w.rope_short = c.create_optional("rope_factors_short.weight", {int64_t(hp.n_rot / 2)}, -1);
    w.layers.resize(hp.n_layer);
    for (uint32_t i = 0; i < hp.n_layer; ++i) {
        model_layer & l = w.layers[i];
        const int il = int(i);
        l.attn_norm = c.create(llm_tensor_name(il, "attn_norm.weight"), {n_embd}, il);
        l.wqkv = c.create_optional(llm_tensor_name(il, "attn_qkv.weight"),
                                   {n_embd, n_q + int64_t(hp.n_embd_k_gqa()) + int64_t(hp.n_embd_v_gqa())}, il);
        if (!l.wqkv) {  // some conversions keep the projections apart
            l.wq = c.create(llm_tensor_name(il, "attn_q.weight"), {n_embd, n_q}, il);
            l.wk = c.create(llm_tensor_name(il, "attn_k.weight"), {n_embd, hp.n_embd_k_gqa()}, il);
            l.wv = c.create(llm_tensor_name(il, "attn_v.weight"), {n_embd, hp.n_embd_v_gqa()}, il);
        }
        l.wo = c.create(llm_tensor_name(il, "attn_output.weight"), {n_out, n_embd}, il);
        l.ffn_norm = c.create(llm_tensor_name(il, "ffn_norm.weight"), {n_embd}, il);
        l.ffn_up = c.create(llm_tensor_name(il, "ffn_up.weight"), {n_embd, 2 * n_ff}, il);
        l.ffn_down = c.create(llm_tensor_name(il, "ffn_down.weight"), {n_ff, n_embd}, il);
    }
}

// Q, K, V of the fused projection as strided views: [head_dim, heads, n_tokens] each, roped.
graph_builder::qkv phi3_build_qkv(graph_builder & b, uint32_t il, ggml_tensor * h, const model_layer & l) {
    const model_hparams & hp = b.hp;
    if (!l.wqkv) return b.build_qkv(il, h, l);
    ggml_context * ctx = b.ctx();
    const int64_t n_tokens = b.shape.n_tokens;
    const size_t es = sizeof(float);
    const int64_t hk = hp.n_embd_head_k, hv = hp.n_embd_head_v;
    const int64_t n_q = hk * hp.n_head, n_k = hp.n_embd_k_gqa();
    ggml_tensor * qkv = b.build_linear(h, l.wqkv, nullptr);  // [n_q + n_k + n_v, n_tokens]
    ggml_tensor * q = ggml_view_3d(ctx, qkv, hk, hp.n_head, n_tokens, hk * es, qkv->nb[1], 0);
    ggml_tensor * k = ggml_view_3d(ctx, qkv, hk, hp.n_head_kv, n_tokens, hk * es, qkv->nb[1], n_q * es);
    ggml_tensor * v = ggml_view_3d(ctx, qkv, hv, hp.n_head_kv, n_tokens, hv * es, qkv->nb[1], (n_q + n_k) * es);
    return {b.build_rope(q, il), b.build_rope(k, il), v};
}

graph_result phi3_build_graph(graph_builder & b) {
    const model_hparams & hp = b.hp;
    ggml_context * ctx = b.ctx();
    const int64_t n_tokens = b.shape.n_tokens, n_ff = hp.n_ff;
    ggml_tensor * x = b.build_inp_embd(b.w.tok_embd);  // [n_embd, n_tokens]
    for (uint32_t il = 0; il < hp.n_layer; ++il) {
        const model_layer & l = b.w.layers[il];
        ggml_tensor * h = b.build_norm(x, l.attn_norm, nullptr, norm_kind::rms);
        const graph_builder::qkv a = phi3_build_qkv(b, il, h, l);
        x = ggml_add(ctx, x, b.build_attn(int(il), a.q, a.k, a.v, l.wo, nullptr));
        h = b.build_norm(x, l.ffn_norm, nullptr, norm_kind::rms);
        ggml_tensor * gu = ggml_mul_mat(ctx, l.ffn_up, h);  // [2 * n_ff, n_tokens]: gate rows, then up rows
        ggml_tensor * gate = ggml_view_2d(ctx, gu, n_ff, n_tokens, gu->nb[1], 0);
        ggml_tensor * up = ggml_view_2d(ctx, gu, n_ff, n_tokens, gu->nb[1], size_t(n_ff) * sizeof(float));
        x = ggml_add(ctx, x, ggml_mul_mat(ctx, l.ffn_down, ggml_swiglu(ctx, gate, up)));
        ggml_format_name(x, "l_out-%u", il);
    }
    return b.build_output(x, norm_kind::rms);
}

}  // namespace

const llm_arch_def llm_arch_phi3 = {llm_arch::phi3, "phi3", phi3_load_hparams, phi3_create_tensors, phi3_build_graph};
