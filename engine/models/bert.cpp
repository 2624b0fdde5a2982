// bert (BERT, BGE and similar encoders; cross-encoder rerankers with a classification head):
// token + learned position + token-type embeddings (type 0 for every token), LayerNorm, then
// post-norm blocks — attention with biased Q/K/V/O and no RoPE, residual, LayerNorm; GELU
// feed-forward with biases, residual, LayerNorm. Attention is non-causal by default
// (bert.attention.causal). No output matrix: an encoder yields embeddings only.
#include "models/arch.h"
#include "models/graph-builder.h"

namespace {

void bert_load_hparams(const hparams_reader & r, model_hparams & hp) {
    llm_load_common_hparams(r, hp, "attention.layer_norm_epsilon");
    hp.use_rope = false;
    hp.n_rot = 0;
    hp.causal_attn = false;
    if (hp.n_embd_head_k * hp.n_head != hp.n_embd || hp.n_embd_head_v * hp.n_head != hp.n_embd) {
        throw model_load_error("bert: n_head * head size must equal embedding_length");
    }
}

void bert_create_layer(tensor_creator & c, const model_hparams & hp, model_layer & l, int il) {
    const int64_t n_embd = hp.n_embd, n_ff = hp.n_ff, n_kv = hp.n_embd_k_gqa(), n_v = hp.n_embd_v_gqa();
    auto t = [&](const char * suffix, std::initializer_list<int64_t> ne) { return c.create(llm_tensor_name(il, suffix), ne, il); };
    l.wq = t("attn_q.weight", {n_embd, n_embd});
    l.bq = t("attn_q.bias", {n_embd});
    l.wk = t("attn_k.weight", {n_embd, n_kv});
    l.bk = t("attn_k.bias", {n_kv});
    l.wv = t("attn_v.weight", {n_embd, n_v});
    l.bv = t("attn_v.bias", {n_v});
    l.wo = t("attn_output.weight", {n_embd, n_embd});
    l.bo = t("attn_output.bias", {n_embd});
    l.attn_out_norm = t("attn_output_norm.weight", {n_embd});
    l.attn_out_norm_b = t("attn_output_norm.bias", {n_embd});
    l.ffn_up = t("ffn_up.weight", {n_embd, n_ff});
    l.ffn_up_b = t("ffn_up.bias", {n_ff});
    l.ffn_down = t("ffn_down.weight", {n_ff, n_embd});
    l.ffn_down_b = t("ffn_down.bias", {n_embd});
    l.layer_out_norm = t("layer_output_norm.weight", {n_embd});
    l.layer_out_norm_b = t("layer_output_norm.bias", {n_embd});
}

// The classification head of rerankers: cls (dense, then tanh) and cls.output (the scores);
// cls.output's rows (the number of scores) come from the file.
void bert_create_cls_head(tensor_creator & c, const model_hparams & hp, model_weights & w) {
    const int64_t n_embd = hp.n_embd;
    w.cls = c.create_optional("cls.weight", {n_embd, n_embd}, -2);
    if (w.cls) w.cls_b = c.create("cls.bias", {n_embd}, -2);
    const int64_t n_out = c.file_ne("cls.output.weight", 1);
    if (n_out <= 0) return;
    w.cls_out = c.create("cls.output.weight", {n_embd, n_out}, -2);
    w.cls_out_b = c.create_optional("cls.output.bias", {n_out}, -2);
}

void bert_create_tensors(tensor_creator & c, const model_hparams & hp, model_weights & w) {
    const int64_t n_embd = hp.n_embd;
    w.tok_embd = c.create("token_embd.weight", {n_embd, int64_t(hp.n_vocab)}, -1);
    w.pos_embd = c.create("position_embd.weight", {n_embd, int64_t(hp.n_ctx_train)}, -1);
    const int64_t n_types = c.file_ne("token_types.weight", 1);
    if (n_types > 0) w.type_embd = c.create("token_types.weight", {n_embd, n_types}, -1);
    w.tok_norm = c.create("token_embd_norm.weight", {n_embd}, -1);
    w.tok_norm_b = c.create("token_embd_norm.bias", {n_embd}, -1);
    bert_create_cls_head(c, hp, w);
    w.layers.resize(hp.n_layer);
    for (uint32_t il = 0; il < hp.n_layer; ++il) bert_create_layer(c, hp, w.layers[il], int(il));
}

graph_result bert_build_graph(graph_builder & b) {
    const model_hparams & hp = b.hp;
    const model_weights & w = b.w;
    ggml_context * ctx = b.ctx();
    const int64_t n_tokens = b.shape.n_tokens;
    ggml_tensor * x = ggml_add(ctx, b.build_inp_embd(w.tok_embd), b.build_inp_pos_embd(w.pos_embd));
    if (w.type_embd) x = ggml_add(ctx, x, ggml_view_1d(ctx, w.type_embd, hp.n_embd, 0));  // token type 0
    x = b.build_norm(x, w.tok_norm, w.tok_norm_b, norm_kind::layer);  // [n_embd, n_tokens]
    for (uint32_t il = 0; il < hp.n_layer; ++il) {
        const model_layer & l = w.layers[il];
        ggml_tensor * q = ggml_reshape_3d(ctx, b.build_linear(x, l.wq, l.bq), hp.n_embd_head_k, hp.n_head, n_tokens);
        ggml_tensor * k = ggml_reshape_3d(ctx, b.build_linear(x, l.wk, l.bk), hp.n_embd_head_k, hp.n_head_kv, n_tokens);
        ggml_tensor * v = ggml_reshape_3d(ctx, b.build_linear(x, l.wv, l.bv), hp.n_embd_head_v, hp.n_head_kv, n_tokens);
        x = ggml_add(ctx, x, b.build_attn(int(il), q, k, v, l.wo, l.bo));
        x = b.build_norm(x, l.attn_out_norm, l.attn_out_norm_b, norm_kind::layer);
        x = ggml_add(ctx, x, b.build_ffn_gelu(x, l));
        x = b.build_norm(x, l.layer_out_norm, l.layer_out_norm_b, norm_kind::layer);
        ggml_format_name(x, "l_out-%u", il);
    }
    return b.build_embd_result(x);
}

}  // namespace

const llm_arch_def llm_arch_bert = {llm_arch::bert, "bert", bert_load_hparams, bert_create_tensors, bert_build_graph};
