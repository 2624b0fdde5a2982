// gemma2: embeddings scaled by sqrt(n_embd); RMSNorm before and after attention and the
// feed-forward (post_attention_norm, post_ffw_norm; the files store Gemma's 1 + w as the
// multiplier); sliding-window attention on alternating layers (every 2nd layer global unless the
// file says otherwise); attention-logit and final-logit soft-capping c * tanh(x / c); GELU-gated
// feed-forward; NEOX RoPE; output tied to the embeddings.
//
// llm_build_gemma is shared with gemma3 (which adds per-head Q/K norms and has no soft-caps).
#include "models/arch.h"
#include "models/graph-builder.h"

#include <cmath>

namespace {

void gemma2_load_hparams(const hparams_reader & r, model_hparams & hp) {
    llm_load_common_hparams(r, hp, "attention.layer_norm_rms_epsilon");
    llm_load_rope_hparams(r, hp);
    llm_load_swa_hparams(r, hp, /*default_period=*/2);
    hp.rope_mode = GGML_ROPE_TYPE_NEOX;
    hp.attn_softcap = r.f32_or("attn_logit_softcapping", 0.0f);
    hp.final_softcap = r.f32_or("final_logit_softcapping", 0.0f);
    if (hp.attn_softcap < 0.0f || hp.final_softcap < 0.0f) throw model_load_error("soft-caps must not be negative");
    llm_load_gemma_scales(r, hp, /*n_layer_27b=*/46);
}

void gemma2_create_tensors(tensor_creator & c, const model_hparams & hp, model_weights & w) {
    llm_create_gemma_tensors(c, hp, w, /*with_qk_norm=*/false);
}

}  // namespace

void llm_load_gemma_scales(const hparams_reader & r, model_hparams & hp, uint32_t n_layer_27b) {
    hp.embd_scale = std::sqrt(float(hp.n_embd));
    // Queries are scaled by 1/sqrt(query_pre_attn_scalar): the head size, except in the 27B
    // models, whose scalar is n_embd / n_head (files do not store it; attention.scale when they do).
    if (r.has("attention.scale")) {
        hp.attn_scale = r.f32("attention.scale");
        if (!(hp.attn_scale > 0.0f)) throw model_load_error("attention.scale must be positive");
    } else if (hp.n_layer == n_layer_27b) {
        hp.attn_scale = 1.0f / std::sqrt(float(hp.n_embd / hp.n_head));
    }
}

void llm_create_gemma_tensors(tensor_creator & c, const model_hparams & hp, model_weights & w, bool with_qk_norm) {
    const int64_t n_embd = hp.n_embd, n_vocab = hp.n_vocab, n_ff = hp.n_ff;
    const int64_t n_q = int64_t(hp.n_embd_head_k) * hp.n_head;
    const int64_t n_out = int64_t(hp.n_embd_head_v) * hp.n_head;
    w.tok_embd = c.create("token_embd.weight", {n_embd, n_vocab}, -1);
    w.output_norm = c.create("output_norm.weight", {n_embd}, -2);
    w.output = c.create_optional("output.weight", {n_embd, n_vocab}, -2);
    if (!w.output) w.output = c.create_tied_output(w.tok_embd);
    w.layers.resize(hp.n_layer);
    for (uint32_t i = 0; i < hp.n_layer; ++i) {
        model_layer & l = w.layers[i];
        const int il = int(i);
        l.attn_norm = c.create(llm_tensor_name(il, "attn_norm.weight"), {n_embd}, il);
        l.wq = c.create(llm_tensor_name(il, "attn_q.weight"), {n_embd, n_q}, il);
        l.wk = c.create(llm_tensor_name(il, "attn_k.weight"), {n_embd, hp.n_embd_k_gqa()}, il);
        l.wv = c.create(llm_tensor_name(il, "attn_v.weight"), {n_embd, hp.n_embd_v_gqa()}, il);
        l.wo = c.create(llm_tensor_name(il, "attn_output.weight"), {n_out, n_embd}, il);
        if (with_qk_norm) {
            l.attn_q_norm = c.create(llm_tensor_name(il, "attn_q_norm.weight"), {int64_t(hp.n_embd_head_k)}, il);
            l.attn_k_norm = c.create(llm_tensor_name(il, "attn_k_norm.weight"), {int64_t(hp.n_embd_head_k)}, il);
        }
        l.attn_post_norm = c.create(llm_tensor_name(il, "post_attention_norm.weight"), {n_embd}, il);
        l.ffn_norm = c.create(llm_tensor_name(il, "ffn_norm.weight"), {n_embd}, il);
        l.ffn_gate = c.create(llm_tensor_name(il, "ffn_gate.weight"), {n_embd, n_ff}, il);
        l.ffn_up = c.create(llm_tensor_name(il, "ffn_up.weight"), {n_embd, n_ff}, il);
        l.ffn_down = c.create(llm_tensor_name(il, "ffn_down.weight"), {n_ff, n_embd}, il);
        l.ffn_post_norm = c.create(llm_tensor_name(il, "post_ffw_norm.weight"), {n_embd}, il);
    }
}

graph_result llm_build_gemma(graph_builder & b) {
    const model_hparams & hp = b.hp;
    ggml_context * ctx = b.ctx();
    ggml_tensor * x = b.build_inp_embd(b.w.tok_embd);  // [n_embd, n_tokens], times sqrt(n_embd)
    for (uint32_t il = 0; il < hp.n_layer; ++il) {
        const model_layer & l = b.w.layers[il];
        ggml_tensor * h = b.build_norm(x, l.attn_norm, nullptr, norm_kind::rms);
        const graph_builder::qkv a = b.build_qkv(il, h, l);
        h = b.build_attn(int(il), a.q, a.k, a.v, l.wo, nullptr);
        h = b.build_norm(h, l.attn_post_norm, nullptr, norm_kind::rms);
        x = ggml_add(ctx, x, h);
        h = b.build_norm(x, l.ffn_norm, nullptr, norm_kind::rms);
        h = b.build_norm(b.build_ffn_geglu(h, l), l.ffn_post_norm, nullptr, norm_kind::rms);
        x = ggml_add(ctx, x, h);
        ggml_format_name(x, "l_out-%u", il);
    }
    return b.build_output(x, norm_kind::rms);
}

const llm_arch_def llm_arch_gemma2 = {llm_arch::gemma2, "gemma2", gemma2_load_hparams, gemma2_create_tensors,
                                      llm_build_gemma};
