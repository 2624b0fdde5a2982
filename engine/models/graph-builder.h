// engine/models/graph-builder.h — the pieces every architecture's graph is made of (internal).
//
// A graph_builder describes one ubatch: n_tokens tokens, n_outputs of which want logits, and
// attention over the first n_kv cells of the KV cache. It creates the graph inputs (token ids,
// positions, KV cell indices for set_rows, the attention mask, output row ids) and offers the
// shared blocks: embeddings, norms, RoPE, attention through the KV cache, feed-forward, output.
// An architecture's build_graph (engine/models/*.cpp) strings them together and returns the
// logits [n_vocab, n_outputs].
#pragma once

#include "engine/kv-cache.h"
#include "engine/model.h"
#include "ggml/ggml.h"

#include <cstdint>

struct graph_shape {
    int32_t n_tokens = 0;
    int32_t n_outputs = 0;
    uint32_t n_kv = 0;        // cells attention covers (a multiple of the padding, <= n_ctx)
    bool flash_attn = false;  // the fused attention op instead of mul_mat + softmax + mul_mat
    bool operator==(const graph_shape &) const = default;
};

struct graph_inputs {
    ggml_tensor * tokens = nullptr;   // I32 [n_tokens]
    ggml_tensor * pos = nullptr;      // I32 [n_tokens]
    ggml_tensor * kv_idx = nullptr;   // I64 [n_tokens]: the cell each token's K/V row goes to
    ggml_tensor * mask = nullptr;     // F32 [n_kv, n_tokens]
    ggml_tensor * out_ids = nullptr;  // I32 [n_outputs]: rows that want logits (nullptr: all)
};

enum class norm_kind { rms, layer };

class graph_builder {
public:
    graph_builder(const model & m, const kv_cache & kv, ggml_context * ctx, ggml_cgraph * gf,
                  const graph_shape & shape);

    const model_hparams & hp;
    const model_weights & w;
    const graph_shape shape;
    graph_inputs in;

    ggml_context * ctx() const { return ctx_; }
    ggml_cgraph * graph() const { return gf_; }

    // Token embeddings [n_embd, n_tokens] (F32, whatever the table's type).
    ggml_tensor * build_inp_embd(ggml_tensor * table);
    // Rows of a table at the ubatch positions (learned position embeddings).
    ggml_tensor * build_inp_pos_embd(ggml_tensor * table);
    // x * w (+ b); rms: RMSNorm, layer: LayerNorm. w and b may be nullptr.
    ggml_tensor * build_norm(ggml_tensor * x, ggml_tensor * nw, ggml_tensor * nb, norm_kind kind);
    // x @ w (+ b); b may be nullptr.
    ggml_tensor * build_linear(ggml_tensor * x, ggml_tensor * wt, ggml_tensor * b);
    // RoPE of x [head_dim, n_heads, n_tokens] at the ubatch positions.
    ggml_tensor * build_rope(ggml_tensor * x);
    // Attention of layer il: writes k and v [head_dim, n_head_kv, n_tokens] (any strides) into the
    // KV cache, attends q [head_dim, n_head, n_tokens] over the first n_kv cells with the mask,
    // and projects with wo (+ bo). Result [n_embd, n_tokens].
    ggml_tensor * build_attn(int il, ggml_tensor * q, ggml_tensor * k, ggml_tensor * v, ggml_tensor * wo,
                             ggml_tensor * bo);
    // SwiGLU feed-forward: down(silu(gate x) * up x).
    ggml_tensor * build_ffn_swiglu(ggml_tensor * x, const model_layer & l);
    // GELU feed-forward with biases: down(gelu(up x + up_b)) + down_b.
    ggml_tensor * build_ffn_gelu(ggml_tensor * x, const model_layer & l);
    // Keeps the rows that want logits, applies the output norm and the output matrix:
    // logits [n_vocab, n_outputs] (marked as a graph output).
    ggml_tensor * build_output(ggml_tensor * x, norm_kind kind);

private:
    ggml_tensor * build_attn_scores(ggml_tensor * q, ggml_tensor * k_cache_view, ggml_tensor * v_cache_view);
    const kv_cache & kv_;
    ggml_context * ctx_;
    ggml_cgraph * gf_;
};

// The RoPE settings of a model (base, scaling, YaRN).
ggml_rope_params llm_rope_params(const model_hparams & hp);

// Decoder blocks of the llama family (llama, qwen2): RMSNorm, Q/K/V (with optional biases),
// RoPE, attention, SwiGLU. Returns logits.
ggml_tensor * llm_build_llama_like(graph_builder & b);
