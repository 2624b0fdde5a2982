// llama (Llama 2/3, Mistral, TinyLlama, Mixtral): RMSNorm, grouped-query attention, normal RoPE
// (freq_base, linear and YaRN scaling), SwiGLU, tied or untied output; with expert_count > 0 the
// feed-forward is a mixture of experts (Mixtral).
#include "models/arch.h"
#include "models/graph-builder.h"

namespace {

void llama_load_hparams(const hparams_reader & r, model_hparams & hp) {
    llm_load_common_hparams(r, hp, "attention.layer_norm_rms_epsilon");
    llm_load_rope_hparams(r, hp);
    llm_load_moe_hparams(r, hp);
    hp.rope_mode = GGML_ROPE_TYPE_NORMAL;
}

}  // namespace

void llm_create_llama_like_tensors(tensor_creator & c, const model_hparams & hp, model_weights & w, bool with_bias,
                                   bool with_qk_norm) {
    const int64_t n_embd = hp.n_embd, n_vocab = hp.n_vocab, n_ff = hp.n_ff;
    const int64_t n_q = int64_t(hp.n_embd_head_k) * hp.n_head;
    const int64_t n_out = int64_t(hp.n_embd_head_v) * hp.n_head;
    const int64_t hd = hp.n_embd_head_k;
    w.tok_embd = c.create("token_embd.weight", {n_embd, n_vocab}, -1);
    w.output_norm = c.create("output_norm.weight", {n_embd}, -2);
    w.output = c.create_optional("output.weight", {n_embd, n_vocab}, -2);
    if (!w.output) w.output = c.create_tied_output(w.tok_embd);
    // Llama 3.1+ long-context RoPE: per-dimension frequency factors (the scaling lives in them).
    w.rope_freqs = c.create_optional("rope_freqs.weight", {int64_t(hp.n_rot / 2)}, -1);
    w.layers.resize(hp.n_layer);
    for (uint32_t i = 0; i < hp.n_layer; ++i) {
        model_layer & l = w.layers[i];
        const int il = int(i);
        auto opt = [&](const char * name, std::initializer_list<int64_t> ne, bool required) {
            return required ? c.create(llm_tensor_name(il, name), ne, il) : c.create_optional(llm_tensor_name(il, name), ne, il);
        };
        l.attn_norm = c.create(llm_tensor_name(il, "attn_norm.weight"), {n_embd}, il);
        l.wq = c.create(llm_tensor_name(il, "attn_q.weight"), {n_embd, n_q}, il);
        l.wk = c.create(llm_tensor_name(il, "attn_k.weight"), {n_embd, hp.n_embd_k_gqa()}, il);
        l.wv = c.create(llm_tensor_name(il, "attn_v.weight"), {n_embd, hp.n_embd_v_gqa()}, il);
        l.wo = c.create(llm_tensor_name(il, "attn_output.weight"), {n_out, n_embd}, il);
        // some llama-family files carry biases where the architecture has none
        l.bq = opt("attn_q.bias", {n_q}, with_bias);
        l.bk = opt("attn_k.bias", {hp.n_embd_k_gqa()}, with_bias);
        l.bv = opt("attn_v.bias", {hp.n_embd_v_gqa()}, with_bias);
        l.bo = c.create_optional(llm_tensor_name(il, "attn_output.bias"), {n_embd}, il);
        l.attn_q_norm = opt("attn_q_norm.weight", {hd}, with_qk_norm);
        l.attn_k_norm = opt("attn_k_norm.weight", {hd}, with_qk_norm);
        l.ffn_norm = c.create(llm_tensor_name(il, "ffn_norm.weight"), {n_embd}, il);
        if (hp.n_expert > 0) {
            llm_create_moe_tensors(c, hp, l, il);
        } else {
            l.ffn_gate = c.create(llm_tensor_name(il, "ffn_gate.weight"), {n_embd, n_ff}, il);
            l.ffn_up = c.create(llm_tensor_name(il, "ffn_up.weight"), {n_embd, n_ff}, il);
            l.ffn_down = c.create(llm_tensor_name(il, "ffn_down.weight"), {n_ff, n_embd}, il);
        }
    }
}

namespace {

void llama_create_tensors(tensor_creator & c, const model_hparams & hp, model_weights & w) {
    llm_create_llama_like_tensors(c, hp, w, /*with_bias=*/false, /*with_qk_norm=*/false);
}

}  // namespace

const llm_arch_def llm_arch_llama = {llm_arch::llama, "llama", llama_load_hparams, llama_create_tensors,
                                     llm_build_llama_like};
