// engine/kv-cache.h — the unified KV cache: one K and one V tensor per layer shared by all
// sequences, and the bookkeeping of its cells.
//
// Usage:
//   kv_cache_params p; p.n_ctx = 4096; p.n_layer = 22; p.n_embd_k_gqa = p.n_embd_v_gqa = 256;
//   kv_cache kv(p, ggml_backend_cpu_buffer_type());        // throws std::runtime_error on bad params
//   std::vector<int64_t> cells;
//   if (kv.find_slot(n_tokens, cells) == kv_cache_status::no_space) return 1;  // decode status 1
//   kv.apply_slot(cells, pos, seq_id);                     // cells now hold the ubatch's tokens
//   // graph: ggml_set_rows(ctx, kv.k(il), k_cur, idx) with idx an I64 [n_tokens] = cells
//   kv.build_mask(pos, seq_id, n_tokens, kv.n_kv(), n_tokens_pad, mask_f32);
//
// Cells: each holds a position (-1 when empty) and a set of sequence ids (bit s of a 64-bit
// mask, s < n_seq_max <= 64). Tensors: k(il) and v(il) are [n_embd_*_gqa, n_ctx] of type_k /
// type_v (F16 default, F32 or Q8_0), row c belongs to cell c; they live in backend buffers of
// the buffer type given to the constructor, or of each layer's own (params.layer_buft: a
// layer's K and V on its device). A cache may hold only some of the model's layers
// (params.layers; k(il) and v(il) take the model's layer index).
//
// Sliding window (n_swa > 0): the cache serves layers on which a token at position p sees only
// cells of its sequence with p - n_swa < pos <= p. Such a cache can be much smaller than the
// context: prune_swa() empties the cells no later token of a sequence can see, and
// seq_resumable() tells whether a sequence can go on from a position (its window's cells are
// still there).
//
// Return codes: find_slot gives kv_cache_status::ok, ::no_space (nothing changed; the decode
// status 1) or ::invalid (n_tokens <= 0). Sequence operations return false for a sequence id
// out of range and change nothing then.
#pragma once

#include "ggml/backend.h"
#include "ggml/ggml.h"

#include <cstdint>
#include <vector>

struct kv_cache_params {
    uint32_t n_ctx = 0;           // number of cells
    uint32_t n_layer = 0;
    int64_t n_embd_k_gqa = 0;     // elements of one K row (head_dim_k * n_head_kv)
    int64_t n_embd_v_gqa = 0;     // elements of one V row
    ggml_type type_k = GGML_TYPE_F16;  // F16, F32 or Q8_0
    ggml_type type_v = GGML_TYPE_F16;
    uint32_t n_seq_max = 1;       // 1..kv_cache_max_seq
    std::vector<uint32_t> layers; // model layer indices held here (empty: 0..n_layer-1)
    uint32_t n_swa = 0;           // sliding window of the layers held here (0: none)
    // Per model layer, the buffer type its K and V live in (the device of the layer's weights);
    // empty or nullptr entries: the constructor's buffer type.
    std::vector<ggml_backend_buffer_type_i *> layer_buft;
};

constexpr uint32_t kv_cache_max_seq = 64;

enum class kv_cache_status : int { ok = 0, no_space = 1, invalid = -1 };

struct kv_cache_cell {
    int32_t pos = -1;       // -1: empty
    int32_t shift = 0;      // accumulated position delta not yet applied to the K row (RoPE shift)
    uint64_t seq = 0;       // bit s: sequence s uses this cell
    bool empty() const { return pos < 0; }
    bool has_seq(int32_t s) const { return (seq >> s) & 1u; }
};

class kv_cache {
public:
    kv_cache(const kv_cache_params & params, ggml_backend_buffer_type_i * buft);
    kv_cache(const kv_cache &) = delete;
    kv_cache & operator=(const kv_cache &) = delete;

    const kv_cache_params & params() const { return params_; }
    uint32_t size() const { return params_.n_ctx; }
    // K and V of model layer il (nullptr when this cache does not hold it): [n_embd_*_gqa, n_ctx]
    ggml_tensor * k(uint32_t il) const { return il < slot_.size() && slot_[il] >= 0 ? k_[size_t(slot_[il])] : nullptr; }
    ggml_tensor * v(uint32_t il) const { return il < slot_.size() && slot_[il] >= 0 ? v_[size_t(slot_[il])] : nullptr; }
    // The model layer indices held, in order.
    const std::vector<uint32_t> & layers() const { return layers_; }
    uint32_t n_swa() const { return params_.n_swa; }
    // The buffers holding K and V: one per distinct buffer type (the first: the constructor's,
    // when some layer uses it).
    ggml_backend_buffer_i * buffer() const { return bufs_.empty() ? nullptr : bufs_.front().get(); }
    const std::vector<ggml_backend_buffer_ptr> & buffers() const { return bufs_; }
    // Bytes of K and V held in buffers of buft (all of them for nullptr).
    size_t bytes(const ggml_backend_buffer_type_i * buft = nullptr) const;
    const kv_cache_cell & cell(uint32_t i) const { return cells_.at(i); }

    // Empties every cell (positions -1, no sequences, no pending shift); tensor data is kept.
    void clear();

    // Chooses n_tokens free cells for the next ubatch without changing any state: a contiguous
    // run starting at or after the cell following the last one placed (wrapping around), else
    // the first free cells from there on. Cell indices go to cells (the set_rows index vector).
    kv_cache_status find_slot(int32_t n_tokens, std::vector<int64_t> & cells) const;
    // Marks cells[i] as holding position pos[i] of sequence seq_id[i]; moves the search head.
    // Returns false (nothing changed) when sizes differ, a cell is out of range or not empty,
    // a position is negative or a sequence id out of range.
    bool apply_slot(const std::vector<int64_t> & cells, const int32_t * pos, const int32_t * seq_id);
    // Same for tokens that belong to several sequences at once: bit s of seq_mask[i] for
    // sequence s (a prompt shared by several sequences). A mask must be non-zero and name only
    // sequences below n_seq_max.
    bool apply_slot_multi(const std::vector<int64_t> & cells, const int32_t * pos, const uint64_t * seq_mask);

    // One past the highest non-empty cell: the number of cells attention must cover.
    uint32_t n_kv() const;

    // Attention mask [n_kv, n_tokens_pad] row-major by token (row t has n_kv floats):
    // 0 where cell c holds token t's sequence at a position <= pos[t] (and, with a sliding
    // window, > pos[t] - n_swa), -INFINITY elsewhere, for empty cells, and in the padding rows
    // t >= n_tokens. Returns false when
    // n_kv > size() or n_tokens > n_tokens_pad or a sequence id is out of range.
    bool build_mask(const int32_t * pos, const int32_t * seq_id, int32_t n_tokens,
                    uint32_t n_kv, int32_t n_tokens_pad, float * out) const;
    // Same, as F16 (for flash attention kernels that want an F16 mask).
    bool build_mask_f16(const int32_t * pos, const int32_t * seq_id, int32_t n_tokens,
                        uint32_t n_kv, int32_t n_tokens_pad, ggml_fp16_t * out) const;

    // ---- sliding window ----
    // Before a ubatch: for each sequence of the ubatch, empties its cells at positions no token
    // of the ubatch (nor any later one) can see: pos <= (its lowest position in the ubatch) -
    // n_swa. With all_sequences, also every other sequence's cells that its next token could not
    // see: pos <= (its highest position) - n_swa. No-op without a window.
    void prune_swa(const int32_t * pos, const int32_t * seq_id, int32_t n_tokens, bool all_sequences);
    // Whether seq can be decoded on from position p: every position of its window before p
    // (max(0, p - n_swa + 1) .. p - 1) has a cell. Always true without a window.
    bool seq_resumable(int32_t seq, int32_t p) const;

    // ---- sequence operations; ranges are [p0, p1), p0 < 0 means 0, p1 < 0 means infinity ----
    // Removes seq (or all sequences with seq = -1) from the cells in range; cells left without a
    // sequence become empty.
    bool seq_rm(int32_t seq, int32_t p0, int32_t p1);
    // Adds seq_dst to the cells of seq_src in range (prefix sharing, no recomputation).
    bool seq_cp(int32_t seq_src, int32_t seq_dst, int32_t p0, int32_t p1);
    // Drops every sequence but seq; cells left without a sequence become empty.
    bool seq_keep(int32_t seq);
    // Adds delta to the positions of seq's cells in range and records the delta for the RoPE
    // shift of their K rows; cells whose position becomes negative are emptied.
    // A cell shared with another sequence is shifted for all of them (as one K row serves all).
    bool seq_add(int32_t seq, int32_t p0, int32_t p1, int32_t delta);

    // Pending RoPE shift: true when some cell has a non-zero recorded delta.
    bool has_shift() const { return has_shift_; }
    // Per-cell deltas [n_ctx] (I32, the positions input of the K-shift rope), 0 for the rest.
    std::vector<int32_t> shift_deltas() const;
    // Call after the K rows were re-roped: forgets the recorded deltas.
    void shift_applied();

    // ---- usage statistics ----
    uint32_t used() const { return used_; }             // non-empty cells
    int32_t seq_pos_min(int32_t seq) const;            // -1 when seq has no cell
    int32_t seq_pos_max(int32_t seq) const;            // -1 when seq has no cell

private:
    bool seq_valid(int32_t seq) const { return seq >= 0 && uint32_t(seq) < params_.n_seq_max; }
    void cell_set_seq(kv_cache_cell & c, uint64_t seq);
    template <typename T, typename F>
    bool build_mask_t(const int32_t * pos, const int32_t * seq_id, int32_t n_tokens, uint32_t n_kv,
                      int32_t n_tokens_pad, T * out, F convert) const;

    kv_cache_params params_;
    std::vector<kv_cache_cell> cells_;
    uint32_t head_ = 0;   // where the next slot search starts
    uint32_t used_ = 0;
    bool has_shift_ = false;
    std::vector<ggml_context_ptr> ctxs_;  // one per buffer type
    std::vector<ggml_backend_buffer_ptr> bufs_;
    std::vector<ggml_tensor *> k_, v_;  // per held layer
    std::vector<uint32_t> layers_;
    std::vector<int32_t> slot_;          // model layer -> index in k_ / v_, -1 when not held
};
