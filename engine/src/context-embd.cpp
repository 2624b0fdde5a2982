// Embeddings contexts (context_params::embeddings): no KV cache; each decode() computes its
// sequences on their own — whole sequences per ubatch, longest first, packed while their
// attention slots (sequences x the longest length) stay within n_ubatch — and keeps the last
// hidden states (pooling none) or one pooled vector per sequence.
#include "context-impl.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

void context::impl::init_embd() {
    const model_hparams & hp = m.hparams();
    pooling = params.pooling != pooling_type::unspecified ? params.pooling : hp.pooling;
    if (pooling == pooling_type::unspecified) pooling = pooling_type::none;
    if (pooling == pooling_type::rank && !m.weights().cls_out) {
        std::string msg = "context: rank pooling needs a classification head (cls.output.weight), which this ";
        msg.append(llm_arch_name(hp.arch)).append(" model lacks");
        throw std::runtime_error(msg);
    }
    mask_rules.causal = params.causal < 0 ? hp.causal_attn : params.causal == 1;
    mask_rules.n_swa = hp.has_swa() ? hp.n_swa : 0;
    // kv() reports on a cache: an empty one of one cell, which no decode touches.
    kv_cache_params kp;
    kp.n_ctx = 1;
    kp.n_layer = 1;
    kp.n_embd_k_gqa = kp.n_embd_v_gqa = 32;
    kp.type_k = kp.type_v = GGML_TYPE_F32;
    kp.n_seq_max = params.n_seq_max;
    kv_empty = std::make_unique<kv_cache>(kp, cpu->device()->buffer_type());
    seq_done.assign(params.n_seq_max, 0);
    embd_seq.assign(size_t(params.n_seq_max) * size_t(n_embd_out()), 0.0f);
}

int32_t context::impl::n_embd_out() const {
    if (params.embeddings && pooling == pooling_type::rank) return int32_t(m.hparams().n_cls_out);
    return int32_t(m.hparams().n_embd);
}

// The longest sequence a decode accepts: one ubatch, and at most n_ctx tokens.
uint32_t context::impl::embd_max_seq_len() const { return std::min(params.n_ubatch, params.n_ctx); }

// The largest attention slots a ubatch can have: the longest sequence, as many of them as fit.
graph_shape context::impl::embd_worst_shape() const {
    embd_ubatch ub;
    const int32_t len = int32_t(embd_max_seq_len());
    const uint32_t n_seqs = std::clamp<uint32_t>(params.n_ubatch / uint32_t(len), 1, params.n_seq_max);
    for (uint32_t s = 0; s < n_seqs; ++s) {
        ub.add_seq(int32_t(s), len);
        for (int32_t j = 0; j < len; ++j) ub.add_row(0, j, 0, true);
    }
    graph_shape shape = embd_ubatch_shape(ub, pooling, params.flash_attn);
    shape.attn_gather = n_seqs > 1;  // room for the gathers too
    return shape;
}

// Splits a validated batch into ubatches of whole sequences (ubatches). False (error set) when a
// sequence's positions do not increase or a sequence is longer than one ubatch.
bool context::impl::embd_plan(const llm_batch & b) {
    std::vector<std::vector<int32_t>> rows(params.n_seq_max);  // batch indices of each sequence
    for (size_t i = 0; i < b.size(); ++i) {
        std::vector<int32_t> & r = rows[size_t(b.seq_id[i])];
        if (!r.empty() && b.pos[i] <= b.pos[size_t(r.back())]) {
            return fail(decode_invalid, "decode: the tokens of sequence " + std::to_string(b.seq_id[i]) +
                                            " are not in increasing position order (batch index " + std::to_string(i) + ")"), false;
        }
        r.push_back(int32_t(i));
    }
    std::vector<int32_t> order;  // sequences present, longest first (then by first appearance)
    for (size_t s = 0; s < rows.size(); ++s) {
        if (rows[s].empty()) continue;
        if (rows[s].size() > embd_max_seq_len()) {
            return fail(decode_invalid, "decode: sequence " + std::to_string(s) + " has " + std::to_string(rows[s].size()) +
                                            " tokens, more than an embeddings context computes at once (n_ubatch " +
                                            std::to_string(params.n_ubatch) + ", n_ctx " + std::to_string(params.n_ctx) + ")"), false;
        }
        order.push_back(int32_t(s));
    }
    std::stable_sort(order.begin(), order.end(), [&](int32_t x, int32_t y) {
        const size_t nx = rows[size_t(x)].size(), ny = rows[size_t(y)].size();
        return nx != ny ? nx > ny : rows[size_t(x)].front() < rows[size_t(y)].front();
    });
    ubatches.clear();
    for (int32_t s : order) {
        const std::vector<int32_t> & r = rows[size_t(s)];
        // slots = sequences x the first (longest) sequence's length
        if (ubatches.empty() || uint64_t(ubatches.back().n_seqs() + 1) * uint64_t(ubatches.back().seq_len[0]) > params.n_ubatch) {
            ubatches.emplace_back();
        }
        embd_ubatch & ub = ubatches.back();
        ub.add_seq(s, int32_t(r.size()));
        for (int32_t i : r) ub.add_row(b.tokens[size_t(i)], b.pos[size_t(i)], i, b.logits[size_t(i)] != 0);
    }
    return true;
}

int context::impl::decode_embd_ubatch(const embd_ubatch & ub, int32_t & next_row) {
    const graph_shape shape = embd_ubatch_shape(ub, pooling, params.flash_attn);
    if (pooling == pooling_type::none && shape.n_outputs == 0) return decode_ok;  // nothing to keep
    if (!build_graph(shape)) return fail(decode_compute_failed, "decode: cannot build the graph");
    if (!sched->alloc_graph(graph.gf)) return fail(decode_compute_failed, "decode: out of memory for the graph");
    embd_ubatch_set_inputs(graph.in, shape, ub, mask_rules, embd_scratch);
    if (sched->compute(graph.gf) != GGML_STATUS_SUCCESS) {
        return fail(decode_compute_failed, "decode: a backend failed to compute the graph");
    }
    ++n_computes;
    if (pooling == pooling_type::none) {
        const size_t n_embd = m.hparams().n_embd, n_out = size_t(shape.n_outputs);
        ggml_backend_tensor_get(graph.out.embd, embd.data() + size_t(next_row) * n_embd, 0, n_out * n_embd * sizeof(float));
        for (size_t j = 0; j < n_out; ++j) output_row[size_t(ub.batch_idx[size_t(ub.out_ids[j])])] = next_row + int32_t(j);
        next_row += int32_t(n_out);
        return decode_ok;
    }
    const size_t n = size_t(n_embd_out());
    for (int32_t s = 0; s < ub.n_seqs(); ++s) {
        const size_t seq = size_t(ub.seq_id[size_t(s)]);
        ggml_backend_tensor_get(graph.out.embd_pooled, embd_seq.data() + seq * n, size_t(s) * n * sizeof(float),
                                n * sizeof(float));
        seq_done[seq] = 1;
    }
    return decode_ok;
}

int context::impl::decode_embd(const llm_batch & b) {
    const size_t n = b.size();
    output_row.assign(n, -1);
    std::fill(seq_done.begin(), seq_done.end(), 0);
    if (!validate(b) || !embd_plan(b)) return decode_invalid;
    size_t n_out = 0;
    for (int8_t f : b.logits) n_out += f ? 1 : 0;
    if (pooling == pooling_type::none) embd.resize(n_out * size_t(m.hparams().n_embd));
    int32_t next_row = 0;
    for (const embd_ubatch & ub : ubatches) {
        const int st = decode_embd_ubatch(ub, next_row);
        if (st != decode_ok) {
            output_row.assign(n, -1);
            std::fill(seq_done.begin(), seq_done.end(), 0);
            return st;
        }
    }
    return decode_ok;
}

// ---- accessors ----

const float * context::embeddings(int32_t i) const {
    const impl & s = *impl_;
    if (!s.params.embeddings || s.pooling != pooling_type::none) return nullptr;
    if (i < 0 || size_t(i) >= s.output_row.size() || s.output_row[size_t(i)] < 0) return nullptr;
    return s.embd.data() + size_t(s.output_row[size_t(i)]) * size_t(s.m.hparams().n_embd);
}

const float * context::embeddings_seq(int32_t seq) const {
    const impl & s = *impl_;
    if (!s.params.embeddings || s.pooling == pooling_type::none) return nullptr;
    if (seq < 0 || size_t(seq) >= s.seq_done.size() || !s.seq_done[size_t(seq)]) return nullptr;
    return s.embd_seq.data() + size_t(seq) * size_t(s.n_embd_out());
}

int32_t context::n_embd_out() const { return impl_->n_embd_out(); }

pooling_type context::pooling() const { return impl_->params.embeddings ? impl_->pooling : pooling_type::none; }

void embd_l2_normalize(std::vector<float> & v) {
    double sum = 0.0;
    for (float x : v) sum += double(x) * double(x);
    if (sum <= 0.0) return;
    const float inv = float(1.0 / std::sqrt(sum));
    for (float & x : v) x *= inv;
}
