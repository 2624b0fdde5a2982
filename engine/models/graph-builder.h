// engine/models/graph-builder.h — the pieces every architecture's graph is made of (internal).
//
// A graph_builder describes one ubatch: n_tokens tokens, n_outputs of which want logits, and
// attention over the first n_kv cells of the KV cache (and the first n_kv_swa cells of the
// sliding-window cache, for models with sliding-window layers). It creates the graph inputs
// (token ids, positions, KV cell indices for set_rows, the attention masks, output row ids) and
// offers the shared blocks: embeddings, norms, RoPE, attention through the KV cache,
// feed-forward (dense or mixture of experts), output. An architecture's build_graph
// (engine/models/*.cpp) strings them together and returns its graph_result (arch.h): the logits
// [n_vocab, n_outputs].
//
// Embeddings graphs (shape.embd; graph-embd.cpp) have no KV cache: the ubatch holds whole
// sequences, each attending to itself only, and build_output returns the normed hidden states
// (pooling none) or their pooling per sequence instead of logits.
#pragma once

#include "engine/kv-cache.h"
#include "engine/model.h"
#include "ggml/ggml.h"
#include "models/arch.h"

#include <cstdint>

struct graph_shape {
    int32_t n_tokens = 0;
    int32_t n_outputs = 0;
    uint32_t n_kv = 0;        // cells attention covers in the full cache (a multiple of the padding)
    uint32_t n_kv_swa = 0;    // the same in the sliding-window cache (0 when there is none)
    bool flash_attn = false;  // the fused attention op instead of mul_mat + softmax + mul_mat
    // Embeddings graphs: n_seqs whole sequences, consecutive in the ubatch, each in position
    // order; attention runs per sequence over attn_len slots (the longest sequence's length) —
    // with attn_gather (some sequence is shorter) the rows are gathered into the slots and back,
    // the unused slots masked. n_outputs: the rows kept with pooling none (0 otherwise).
    bool embd = false;
    pooling_type pooling = pooling_type::none;
    int32_t n_seqs = 0;
    int32_t attn_len = 0;
    bool attn_gather = false;
    bool operator==(const graph_shape &) const = default;
};

struct graph_inputs {
    ggml_tensor * tokens = nullptr;      // I32 [n_tokens]
    ggml_tensor * pos = nullptr;         // I32 [n_tokens]
    ggml_tensor * kv_idx = nullptr;      // I64 [n_tokens]: the cell each token's K/V row goes to
    ggml_tensor * mask = nullptr;        // F32 [n_kv, n_tokens]
    ggml_tensor * kv_idx_swa = nullptr;  // the same for the sliding-window cache (or nullptr)
    ggml_tensor * mask_swa = nullptr;    // F32 [n_kv_swa, n_tokens]
    ggml_tensor * out_ids = nullptr;     // I32 [n_outputs]: rows that want logits (nullptr: all)
    // embeddings graphs
    ggml_tensor * attn_mask = nullptr;      // F32 [attn_len, attn_len, 1, n_seqs]: per sequence
    ggml_tensor * attn_mask_swa = nullptr;  // the same within the sliding window (models with one)
    ggml_tensor * attn_rows = nullptr;      // I32 [attn_len * n_seqs]: the row of each slot (attn_gather)
    ggml_tensor * attn_slots = nullptr;     // I32 [n_tokens]: the slot of each row (attn_gather)
    ggml_tensor * pool_mean = nullptr;      // F32 [n_tokens, n_seqs]: 1 / length where a row is the sequence's
    ggml_tensor * pool_rows = nullptr;      // I32 [n_seqs]: the row cls, last and rank pooling take
};

// The KV caches a graph writes and attends over: the full one (layers that see every cell) and
// the sliding-window one; either may be nullptr when no layer uses it. n_ctx: the context size
// (chooses LongRoPE's long or short factors).
struct graph_caches {
    const kv_cache * full = nullptr;
    const kv_cache * swa = nullptr;
    uint32_t n_ctx = 0;
};

enum class norm_kind { rms, layer };

class graph_builder {
public:
    graph_builder(const model & m, const graph_caches & caches, ggml_context * ctx, ggml_cgraph * gf,
                  const graph_shape & shape);

    const model_hparams & hp;
    const model_weights & w;
    const graph_shape shape;
    graph_inputs in;

    ggml_context * ctx() const { return ctx_; }
    ggml_cgraph * graph() const { return gf_; }

    // Token embeddings [n_embd, n_tokens] (F32, whatever the table's type), times hp.embd_scale
    // when set.
    ggml_tensor * build_inp_embd(ggml_tensor * table);
    // Rows of a table at the ubatch positions (learned position embeddings).
    ggml_tensor * build_inp_pos_embd(ggml_tensor * table);
    // x * w (+ b); rms: RMSNorm, layer: LayerNorm. w and b may be nullptr.
    ggml_tensor * build_norm(ggml_tensor * x, ggml_tensor * nw, ggml_tensor * nb, norm_kind kind);
    // x @ w (+ b); b may be nullptr.
    ggml_tensor * build_linear(ggml_tensor * x, ggml_tensor * wt, ggml_tensor * b);
    // RoPE of x [head_dim, n_heads, n_tokens] at the ubatch positions with layer il's settings
    // (the sliding-window layers' base and scale; frequency factors).
    ggml_tensor * build_rope(ggml_tensor * x, uint32_t il);
    // Q, K, V of layer il from separate projections (biases when present), each [head_dim,
    // heads, n_tokens]; per-head RMSNorm of Q and K when the layer has attn_q_norm / attn_k_norm;
    // RoPE on Q and K.
    struct qkv { ggml_tensor * q, * k, * v; };
    qkv build_qkv(uint32_t il, ggml_tensor * x, const model_layer & l);
    // Attention of layer il: writes k and v [head_dim, n_head_kv, n_tokens] (any strides) into
    // the layer's KV cache (the sliding-window one for a sliding-window layer), attends q
    // [head_dim, n_head, n_tokens] over its cells with the layer's mask, scaled by hp.kq_scale()
    // and soft-capped by hp.attn_softcap, and projects with wo (+ bo). Result [n_embd, n_tokens].
    ggml_tensor * build_attn(int il, ggml_tensor * q, ggml_tensor * k, ggml_tensor * v, ggml_tensor * wo,
                             ggml_tensor * bo);
    // SwiGLU feed-forward: down(silu(gate x) * up x).
    ggml_tensor * build_ffn_swiglu(ggml_tensor * x, const model_layer & l);
    // GELU-gated feed-forward: down(gelu(gate x) * up x).
    ggml_tensor * build_ffn_geglu(ggml_tensor * x, const model_layer & l);
    // GELU feed-forward with biases: down(gelu(up x + up_b)) + down_b.
    ggml_tensor * build_ffn_gelu(ggml_tensor * x, const model_layer & l);
    // Mixture of experts: softmax over the router's scores, the n_expert_used best experts
    // (SwiGLU each), their outputs summed with the chosen weights renormalized to sum 1.
    ggml_tensor * build_ffn_moe(ggml_tensor * x, const model_layer & l);
    // Keeps the rows that want logits, applies the output norm and the output matrix (and the
    // final soft-cap): logits [n_vocab, n_outputs] (marked as a graph output). Embeddings
    // graphs: the output norm, then build_embd_result.
    graph_result build_output(ggml_tensor * x, norm_kind kind);
    // Embeddings graphs, from the final hidden states h [n_embd, n_tokens] (after the final
    // norm): the kept rows [n_embd, n_outputs] (pooling none) or the pooled vectors
    // [n_embd_out, n_seqs] (mean: a matmul with pool_mean; cls, last: the rows of pool_rows;
    // rank: the cls row through the classification head), marked as a graph output.
    graph_result build_embd_result(ggml_tensor * h);

private:
    // graph-embd.cpp: the embeddings inputs; q, k or v as per-sequence slots; attention of
    // each sequence over itself.
    void create_embd_inputs();
    ggml_tensor * build_seq_slots(ggml_tensor * t, int64_t head_dim, int64_t n_heads);
    ggml_tensor * build_attn_seqs(int il, ggml_tensor * q, ggml_tensor * k, ggml_tensor * v);

    // softmax(scale * kq + mask), soft-capped first when the model caps its scores.
    ggml_tensor * build_soft_max(ggml_tensor * kq, ggml_tensor * mask);
    ggml_tensor * build_attn_scores(ggml_tensor * q, ggml_tensor * k_cache_view, ggml_tensor * v_cache_view,
                                    ggml_tensor * mask);
    ggml_tensor * soft_cap(ggml_tensor * x, float cap);
    graph_caches caches_;
    ggml_context * ctx_;
    ggml_cgraph * gf_;
};

// The RoPE settings of layer il (base, scaling, YaRN; the sliding-window layers' own base).
ggml_rope_params llm_rope_params(const model_hparams & hp, uint32_t il);
// The frequency factors of the model for a context of n_ctx cells: rope_freqs, else LongRoPE's
// long factors beyond the original training context and its short ones within it; nullptr
// when the model has none.
ggml_tensor * llm_rope_factors(const model_hparams & hp, const model_weights & w, uint32_t n_ctx);

// Decoder blocks of the llama family (llama, Mixtral, qwen2, qwen3, qwen3moe): RMSNorm, Q/K/V
// (optional biases and per-head norms), RoPE, attention, SwiGLU or experts.
graph_result llm_build_llama_like(graph_builder & b);
