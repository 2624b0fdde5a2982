// gpt2: LayerNorm with bias, learned position embeddings, fused QKV projection with bias, GELU
// feed-forward with biases, output projection (or the embeddings when tied).
#include "models/arch.h"
#include "models/graph-builder.h"

namespace {

void gpt2_load_hparams(const hparams_reader & r, model_hparams & hp) {
    llm_load_common_hparams(r, hp, "attention.layer_norm_epsilon");
    hp.use_rope = false;
    hp.n_rot = 0;
    if (hp.n_embd_head_k * hp.n_head != hp.n_embd || hp.n_head_kv != hp.n_head) {
        throw model_load_error("gpt2: the fused QKV layout needs n_head * head size == embedding_length "
                               "and no grouped-query attention");
    }
}

void gpt2_create_tensors(tensor_creator & c, const model_hparams & hp, model_weights & w) {
    const int64_t n_embd = hp.n_embd, n_vocab = hp.n_vocab, n_ff = hp.n_ff;
    w.tok_embd = c.create("token_embd.weight", {n_embd, n_vocab}, -1);
    w.pos_embd = c.create("position_embd.weight", {n_embd, int64_t(hp.n_ctx_train)}, -1);
    w.output_norm = c.create("output_norm.weight", {n_embd}, -2);
    w.output_norm_b = c.create("output_norm.bias", {n_embd}, -2);
    w.output = c.create_optional("output.weight", {n_embd, n_vocab}, -2);
    if (!w.output) w.output = c.create_tied_output(w.tok_embd);
    w.layers.resize(hp.n_layer);
    for (uint32_t i = 0; i < hp.n_layer; ++i) {
        model_layer & l = w.layers[i];
        const int il = int(i);
        l.attn_norm = c.create(llm_tensor_name(il, "attn_norm.weight"), {n_embd}, il);
        l.attn_norm_b = c.create(llm_tensor_name(il, "attn_norm.bias"), {n_embd}, il);
        l.wqkv = c.create(llm_tensor_name(il, "attn_qkv.weight"), {n_embd, 3 * n_embd}, il);
        l.bqkv = c.create(llm_tensor_name(il, "attn_qkv.bias"), {3 * n_embd}, il);
        l.wo = c.create(llm_tensor_name(il, "attn_output.weight"), {n_embd, n_embd}, il);
        l.bo = c.create(llm_tensor_name(il, "attn_output.bias"), {n_embd}, il);
        l.ffn_norm = c.create(llm_tensor_name(il, "ffn_norm.weight"), {n_embd}, il);
        l.ffn_norm_b = c.create(llm_tensor_name(il, "ffn_norm.bias"), {n_embd}, il);
        l.ffn_up = c.create(llm_tensor_name(il, "ffn_up.weight"), {n_embd, n_ff}, il);
        l.ffn_up_b = c.create(llm_tensor_name(il, "ffn_up.bias"), {n_ff}, il);
        l.ffn_down = c.create(llm_tensor_name(il, "ffn_down.weight"), {n_ff, n_embd}, il);
        l.ffn_down_b = c.create(llm_tensor_name(il, "ffn_down.bias"), {n_embd}, il);
    }
}

graph_result gpt2_build_graph(graph_builder & b) {
    const model_hparams & hp = b.hp;
    ggml_context * ctx = b.ctx();
    const int64_t n_tokens = b.shape.n_tokens;
    const int64_t hd = hp.n_embd_head_k;
    ggml_tensor * x = ggml_add(ctx, b.build_inp_embd(b.w.tok_embd), b.build_inp_pos_embd(b.w.pos_embd));
    for (uint32_t il = 0; il < hp.n_layer; ++il) {
        const model_layer & l = b.w.layers[il];
        ggml_tensor * h = b.build_norm(x, l.attn_norm, l.attn_norm_b, norm_kind::layer);
        ggml_tensor * qkv = b.build_linear(h, l.wqkv, l.bqkv);  // [3 * n_embd, n_tokens]
        const size_t es = sizeof(float);
        // Heads of Q, K, V as strided views of the fused result: [hd, n_head, n_tokens].
        ggml_tensor * q = ggml_view_3d(ctx, qkv, hd, hp.n_head, n_tokens, hd * es, qkv->nb[1], 0);
        ggml_tensor * k = ggml_view_3d(ctx, qkv, hd, hp.n_head, n_tokens, hd * es, qkv->nb[1], hp.n_embd * es);
        ggml_tensor * v = ggml_view_3d(ctx, qkv, hd, hp.n_head, n_tokens, hd * es, qkv->nb[1], 2 * hp.n_embd * es);
        h = b.build_attn(int(il), q, k, v, l.wo, l.bo);
        x = ggml_add(ctx, x, h);
        h = b.build_norm(x, l.ffn_norm, l.ffn_norm_b, norm_kind::layer);
        x = ggml_add(ctx, x, b.build_ffn_gelu(h, l));
        ggml_format_name(x, "l_out-%u", il);
    }
    return b.build_output(x, norm_kind::layer);
}

}  // namespace

const llm_arch_def llm_arch_gpt2 = {llm_arch::gpt2, "gpt2", gpt2_load_hparams, gpt2_create_tensors, gpt2_build_graph};
