// engine/models/graph-embd.h — the ubatches of an embeddings context and the graph inputs they
// fill (internal; the graph side is in graph-embd.cpp, the decode side in context-embd.cpp).
//
// Usage (context-embd.cpp):
//   embd_ubatch ub;                                   // whole sequences, each in position order
//   ub.add_seq(seq, len); … ub.add_row(token, pos, batch_index, keep); …
//   graph_shape shape = embd_ubatch_shape(ub, pooling, flash_attn);
//   graph_builder b(…, shape);  …  allocate the graph …
//   embd_ubatch_set_inputs(b.in, shape, ub, mask_rules, scratch);
#pragma once

#include "models/graph-builder.h"

#include <cstdint>
#include <vector>

// One ubatch of an embeddings context: n_seqs whole sequences, consecutive, each in position
// order (row r of the ubatch is token r).
struct embd_ubatch {
    std::vector<int32_t> tokens;     // [n_tokens]
    std::vector<int32_t> pos;        // [n_tokens]
    std::vector<int32_t> batch_idx;  // [n_tokens]: the row's index in the decoded batch
    std::vector<int32_t> out_ids;    // rows whose hidden state is kept (pooling none)
    std::vector<int32_t> seq_id;     // [n_seqs]
    std::vector<int32_t> seq_start;  // [n_seqs]: first row
    std::vector<int32_t> seq_len;    // [n_seqs]

    int32_t n_tokens() const { return int32_t(tokens.size()); }
    int32_t n_seqs() const { return int32_t(seq_id.size()); }
    int32_t max_len() const;
    void clear();
    // A new sequence; its rows follow with add_row.
    void add_seq(int32_t seq, int32_t len);
    void add_row(int32_t token, int32_t p, int32_t batch_index, bool keep);
};

// Which tokens of a sequence a token attends to.
struct embd_mask_rules {
    bool causal = false;  // only positions <= its own
    uint32_t n_swa = 0;   // sliding-window layers (0: none): p - n_swa < q_pos (<= p when
                          // causal), and q_pos < p + n_swa when not causal
};

// The graph shape of a ubatch (n_outputs: the kept rows with pooling none, else 0).
graph_shape embd_ubatch_shape(const embd_ubatch & ub, pooling_type pooling, bool flash_attn);

// Scratch vectors reused from ubatch to ubatch.
struct embd_input_scratch {
    std::vector<float> mask, mask_swa, mean;
    std::vector<int32_t> rows, slots, pool_rows;
};

// Writes every input of an allocated embeddings graph from the ubatch: token ids, positions,
// the per-sequence masks, the slot gathers and the pooling inputs.
void embd_ubatch_set_inputs(const graph_inputs & in, const graph_shape & shape, const embd_ubatch & ub,
                            const embd_mask_rules & rules, embd_input_scratch & scratch);
