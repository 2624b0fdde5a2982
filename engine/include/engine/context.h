// engine/context.h — decoding: batches of tokens in, logits (or embeddings) out, through the KV
// cache and the backend scheduler.
//
// Usage:
//   context_params cp; cp.n_ctx = 2048; cp.n_threads = 2;
//   context ctx(*m, cp);                                // throws std::runtime_error on bad params
//   llm_batch b;
//   for (size_t i = 0; i < ids.size(); ++i) b.add(ids[i], int32_t(i), /*seq=*/0, i + 1 == ids.size());
//   int st = ctx.decode(b);                             // 0 ok, 1 no KV space, < 0 invalid
//   const float * row = ctx.logits(int32_t(ids.size()) - 1);   // n_vocab floats
//
//   // Embeddings: several texts as sequences of one decode, one pooled vector each.
//   context_params ep; ep.embeddings = true; ep.n_seq_max = 32; ep.n_batch = ep.n_ubatch = 4096;
//   context emb(*m, ep);                                // pooling: the model's (bert: cls)
//   for (int32_t s = 0; s < n_texts; ++s)
//       for (size_t i = 0; i < text_ids[s].size(); ++i) b.add(text_ids[s][i], int32_t(i), s, true);
//   if (emb.decode(b) == 0) { const float * v = emb.embeddings_seq(0); /* n_embd_out() floats */ }
//
// decode() validates the batch (status -1, last_error() says why: empty, larger than n_batch,
// token id outside the vocabulary, sequence id >= n_seq_max, negative position, a position past
// what the model can represent), checks that the KV cache has room for every token (status 1,
// nothing changed), applies a pending RoPE shift, then splits the batch into ubatches of at most
// n_ubatch consecutive tokens. Each ubatch gets KV cells (set_rows indices), a mask (causal and
// per-sequence), and runs one graph; logits are kept only for the tokens whose flag asks for
// them. A graph is rebuilt only when its shape changes (token count, output count, KV cells
// covered, padded to kv_pad cells); otherwise the same graph, with the same addresses, runs
// again with new inputs. Status -2: a backend failed to compute (the cells of the failed batch
// are removed again).
//
// Sequence operations (seq_rm, seq_cp, seq_keep, seq_add) act on the KV cache; a position shift
// (seq_add) re-rotates the cached keys at the next decode. Not thread-safe: one thread drives a
// context (the server's batch loop).
//
// Models with sliding-window layers (gemma2, gemma3, phi3 with a window) keep those layers in a
// second, window-sized cache (every sequence's window plus one ubatch): before each ubatch the
// cells that no later token of a sequence can see are dropped, so a sequence can only be resumed
// from the last positions it decoded (seq_resumable).
#pragma once

#include "engine/kv-cache.h"
#include "engine/model.h"
#include "ggml/backend.h"
#include "ggml/ggml.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

struct context_params {
    uint32_t n_ctx = 0;        // KV cells; 0: the model's training context, at most 4096
    uint32_t n_batch = 2048;   // most tokens one decode() accepts
    uint32_t n_ubatch = 512;   // most tokens one graph computes
    uint32_t n_seq_max = 1;    // sequence ids 0..n_seq_max-1 (at most 64)
    int n_threads = 0;         // CPU threads; 0: the number of cores
    ggml_type type_k = GGML_TYPE_F16;  // KV cache types: F16, F32 or Q8_0
    ggml_type type_v = GGML_TYPE_F16;
    // Attention: false = mul_mat + soft_max_ext + mul_mat with the probabilities meeting an F16 V
    // in F16 (the reference engine's arithmetic: reproduces its greedy continuations through
    // near-ties); true = the fused op, all F32, never materialising the [n_kv, n_tokens, n_head]
    // scores (less memory and faster at long context; a quantized V cache requires it).
    bool flash_attn = false;
    bool op_offload = true;    // large batches may run on a GPU for CPU-resident weights
    uint32_t kv_pad = 256;     // attention covers the used cells rounded up to this

    // Embeddings instead of logits: the last hidden states (after the final norm), pooled per
    // sequence as `pooling` says (unspecified: the model's pooling_type, none when the file has
    // none; rank needs the model's classification head, else the constructor throws). Such a
    // context has no KV cache: each decode() computes its sequences on their own — a sequence's
    // tokens are all in that one call, in increasing position order, and go into one ubatch
    // (decode_invalid, saying why, for a sequence longer than n_ubatch or n_ctx or one whose
    // positions do not increase), attending only to tokens of the same sequence (causal or not as
    // `causal` says; unspecified: the model's, i.e. non-causal for encoders such as bert, causal
    // for decoders). Sequences go into ubatches longest first, as many as fit n_ubatch attention
    // slots of the longest one's length (32 sequences of 128 tokens: one ubatch of 4096 with
    // n_ubatch 4096); attention costs per sequence, never across the ubatch. n_ctx bounds a
    // sequence's length only (with learned positions a larger n_ctx is lowered to the model's).
    // The sequence operations do nothing there, kv() reports an empty one-cell cache and
    // logits() gives nullptr. A model without an output layer (bert) needs embeddings = true.
    bool embeddings = false;
    pooling_type pooling = pooling_type::unspecified;
    int8_t causal = -1;        // -1: the model's; 0: every token sees its whole sequence; 1: causal
};

// One decode call's tokens. seq_id: one sequence per token (share a prefix with seq_cp).
struct llm_batch {
    std::vector<int32_t> tokens;
    std::vector<int32_t> pos;
    std::vector<int32_t> seq_id;
    std::vector<int8_t> logits;  // non-zero: keep this token's logits
    void add(int32_t token, int32_t p, int32_t seq, bool want_logits) {
        tokens.push_back(token);
        pos.push_back(p);
        seq_id.push_back(seq);
        logits.push_back(want_logits ? 1 : 0);
    }
    void clear() { tokens.clear(); pos.clear(); seq_id.clear(); logits.clear(); }
    size_t size() const { return tokens.size(); }
};

// Scales v to unit L2 norm, as embeddings are usually served (a zero vector stays zero).
void embd_l2_normalize(std::vector<float> & v);

enum decode_status : int { decode_ok = 0, decode_no_kv_space = 1, decode_invalid = -1, decode_compute_failed = -2 };

class context {
public:
    context(const model & m, const context_params & params);
    ~context();
    context(const context &) = delete;
    context & operator=(const context &) = delete;

    int decode(const llm_batch & batch);
    const std::string & last_error() const;

    // Logits of batch token i of the last decode (n_vocab floats); nullptr when it did not ask.
    const float * logits(int32_t i) const;
    // Embeddings contexts. Pooling none: the hidden state of batch token i of the last decode
    // (n_embd floats) when its output flag was set, else nullptr. Other poolings: the pooled
    // vector of sequence seq of the last decode (n_embd_out() floats; rank: the scores), nullptr
    // when seq was not in it (pooling ignores the output flags: every token of the sequence
    // counts). Both nullptr for the other kind of pooling, for logits contexts and after a
    // failed decode. Raw vectors: not normalized.
    const float * embeddings(int32_t i) const;
    const float * embeddings_seq(int32_t seq) const;
    // Length of a pooled vector: n_embd, or the classification head's outputs for rank.
    int32_t n_embd_out() const;
    // The pooling in effect (the model's when params said unspecified); none for logits contexts.
    pooling_type pooling() const;
    int32_t n_vocab() const;
    uint32_t n_ctx() const;
    const context_params & params() const;
    const model & get_model() const;

    // ---- sequence operations (see kv-cache.h); ranges [p0, p1), negative = open ----
    bool seq_rm(int32_t seq, int32_t p0, int32_t p1);
    bool seq_cp(int32_t seq_src, int32_t seq_dst, int32_t p0, int32_t p1);
    bool seq_keep(int32_t seq);
    bool seq_add(int32_t seq, int32_t p0, int32_t p1, int32_t delta);
    int32_t seq_pos_max(int32_t seq) const;  // -1 when empty
    // Whether seq can go on from position p keeping its cells before p: false when the model
    // has sliding-window layers and cells of the window before p were already dropped (the
    // sequence must then be recomputed from its start). Always true without such layers.
    bool seq_resumable(int32_t seq, int32_t p) const;
    void clear();                            // empties the KV cache
    // The KV cache of the layers that attend to every cell (the sliding-window cache when every
    // layer uses a window), and the sliding-window cache (nullptr when no layer has a window).
    const kv_cache & kv() const;
    const kv_cache * kv_swa() const;

    // Statistics: graphs built (a new shape) and graphs computed since creation.
    uint64_t n_graph_builds() const;
    uint64_t n_graph_computes() const;
    // Names of the backends in priority order ("CPU" last).
    std::vector<std::string> backend_names() const;
    // Debugging: called for every node computed (see scheduler.h).
    void set_eval_callback(std::function<bool(ggml_tensor *, bool)> cb);

private:
    struct impl;
    std::unique_ptr<impl> impl_;
};
