// decode(): batch validation, ubatches, KV slots, graph building and reuse, logits, K-shift.
#include "context-impl.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace {

uint32_t padded_n_kv(uint32_t used_end, uint32_t pad, uint32_t n_ctx) {
    const uint32_t n = std::max<uint32_t>(used_end, 1);
    return std::min(n_ctx, (n + pad - 1) / pad * pad);
}

}  // namespace

bool context::impl::build_graph(const graph_shape & shape) {
    if (graph.valid && graph.shape == shape) return true;
    sched->reset();
    graph = context_graph{};
    ggml_init_params ip;
    ip.mem_size = ggml_tensor_overhead() * graph_size + ggml_graph_overhead_custom(graph_size);
    ip.no_alloc = true;
    graph.ctx.reset(ggml_init(ip));
    if (!graph.ctx) return false;
    graph.gf = ggml_new_graph_custom(graph.ctx.get(), graph_size);
    graph_builder b(m, caches(), graph.ctx.get(), graph.gf, shape);
    graph.out = arch->build_graph(b);
    for (ggml_tensor * t : {graph.out.logits, graph.out.embd, graph.out.embd_pooled}) {
        if (t) ggml_build_forward_expand(graph.gf, t);
    }
    graph.in = b.in;
    graph.shape = shape;
    graph.valid = true;
    ++n_builds;
    return true;
}

void context::impl::reserve_worst_case() {
    graph_shape worst;
    worst.n_tokens = int32_t(params.n_ubatch);
    worst.n_outputs = worst.n_tokens;
    worst.n_kv = kv ? kv->size() : 0;
    worst.n_kv_swa = kv_swa ? kv_swa->size() : 0;
    worst.flash_attn = params.flash_attn;
    if (params.embeddings) worst = embd_worst_shape();
    if (!build_graph(worst) || !sched->reserve(graph.gf)) {
        throw std::runtime_error("context: cannot reserve compute buffers for n_ubatch " +
                                 std::to_string(params.n_ubatch) + " and n_ctx " + std::to_string(params.n_ctx));
    }
    graph = context_graph{};  // the next decode builds its own shape
}

bool context::impl::validate(const llm_batch & b) {
    const size_t n = b.tokens.size();
    if (n == 0) return fail(decode_invalid, "decode: empty batch"), false;
    if (b.pos.size() != n || b.seq_id.size() != n || b.logits.size() != n) {
        return fail(decode_invalid, "decode: batch arrays differ in length"), false;
    }
    if (n > params.n_batch) {
        return fail(decode_invalid, "decode: " + std::to_string(n) + " tokens exceed n_batch " +
                                        std::to_string(params.n_batch)), false;
    }
    const int32_t n_vocab = m.hparams().n_vocab;
    const bool learned_pos = !m.hparams().use_rope;
    for (size_t i = 0; i < n; ++i) {
        const std::string at = " at batch index " + std::to_string(i);
        if (b.tokens[i] < 0 || b.tokens[i] >= n_vocab) {
            return fail(decode_invalid, "decode: token " + std::to_string(b.tokens[i]) + at +
                                            " is outside the vocabulary (0.." + std::to_string(n_vocab - 1) + ")"), false;
        }
        if (b.seq_id[i] < 0 || uint32_t(b.seq_id[i]) >= params.n_seq_max) {
            return fail(decode_invalid, "decode: sequence id " + std::to_string(b.seq_id[i]) + at +
                                            " is not below n_seq_max " + std::to_string(params.n_seq_max)), false;
        }
        if (b.pos[i] < 0 || (learned_pos && uint32_t(b.pos[i]) >= m.hparams().n_ctx_train)) {
            return fail(decode_invalid, "decode: position " + std::to_string(b.pos[i]) + at + " is out of range"), false;
        }
    }
    return true;
}

bool context::impl::kv_shift_pending() const {
    return (kv && kv->has_shift()) || (kv_swa && kv_swa->has_shift());
}

// Re-rotates the cached keys of every layer of one cache by their cells' recorded deltas.
bool context::impl::apply_kv_shift_of(kv_cache & c) {
    const model_hparams & hp = m.hparams();
    const uint32_t n_cells = c.size();
    sched->reset();
    graph = context_graph{};
    ggml_init_params ip;
    ip.mem_size = ggml_tensor_overhead() * graph_size + ggml_graph_overhead_custom(graph_size);
    ip.no_alloc = true;
    ggml_context_ptr ctx(ggml_init(ip));
    ggml_cgraph * gf = ggml_new_graph_custom(ctx.get(), graph_size);
    ggml_tensor * rows = ggml_new_tensor_1d(ctx.get(), GGML_TYPE_I32, n_cells);
    ggml_tensor * rows64 = ggml_new_tensor_1d(ctx.get(), GGML_TYPE_I64, n_cells);
    ggml_tensor * delta = ggml_new_tensor_1d(ctx.get(), GGML_TYPE_I32, n_cells);
    for (ggml_tensor * t : {rows, rows64, delta}) ggml_set_input(t);
    ggml_tensor * factors = llm_rope_factors(hp, m.weights(), params.n_ctx);
    for (uint32_t il : c.layers()) {
        ggml_rope_params p = llm_rope_params(hp, il);
        p.attn_factor = 1.0f;  // the magnitude was scaled when the key was first rotated
        // Every row of K as F32, rotated by its cell's delta, written back in the cache's type.
        ggml_tensor * k = ggml_get_rows(ctx.get(), c.k(il), rows);  // [n_embd_k_gqa, n_cells]
        k = ggml_reshape_3d(ctx.get(), k, hp.n_embd_head_k, hp.n_head_kv, n_cells);
        k = ggml_rope_ff(ctx.get(), k, delta, factors, p);
        k = ggml_reshape_2d(ctx.get(), k, hp.n_embd_k_gqa(), n_cells);
        ggml_build_forward_expand(gf, ggml_set_rows(ctx.get(), c.k(il), k, rows64));
    }
    if (!sched->alloc_graph(gf)) return false;
    std::vector<int32_t> r32(n_cells);
    std::vector<int64_t> r64(n_cells);
    for (uint32_t i = 0; i < n_cells; ++i) r32[i] = int32_t(i), r64[i] = int64_t(i);
    const std::vector<int32_t> d = c.shift_deltas();
    ggml_backend_tensor_set(rows, r32.data(), 0, ggml_nbytes(rows));
    ggml_backend_tensor_set(rows64, r64.data(), 0, ggml_nbytes(rows64));
    ggml_backend_tensor_set(delta, d.data(), 0, ggml_nbytes(delta));
    const ggml_status st = sched->compute(gf);
    sched->reset();
    if (st != GGML_STATUS_SUCCESS) return false;
    c.shift_applied();
    return true;
}

bool context::impl::apply_kv_shift() {
    if (!m.hparams().use_rope) {  // learned positions: nothing cached depends on the position value
        each_cache([](kv_cache & c) { c.shift_applied(); });
        return true;
    }
    if (kv && kv->has_shift() && !apply_kv_shift_of(*kv)) return false;
    return !(kv_swa && kv_swa->has_shift()) || apply_kv_shift_of(*kv_swa);
}

// Cells for the ubatch's tokens in each cache (the sliding-window cache first drops what no
// window can see any more); decode_no_kv_space when a cache has no room.
int context::impl::place_ubatch(const llm_batch & b, size_t begin, size_t end) {
    const int32_t n_tokens = int32_t(end - begin);
    const int32_t * pos = b.pos.data() + begin;
    const int32_t * seq = b.seq_id.data() + begin;
    if (kv && kv->find_slot(n_tokens, cells) != kv_cache_status::ok) return decode_no_kv_space;
    if (kv_swa) {
        kv_swa->prune_swa(pos, seq, n_tokens, /*all_sequences=*/false);
        if (kv_swa->size() - kv_swa->used() < uint32_t(n_tokens)) kv_swa->prune_swa(pos, seq, n_tokens, true);
        if (kv_swa->find_slot(n_tokens, cells_swa) != kv_cache_status::ok) return decode_no_kv_space;
    }
    if ((kv && !kv->apply_slot(cells, pos, seq)) || (kv_swa && !kv_swa->apply_slot(cells_swa, pos, seq))) {
        return fail(decode_invalid, "decode: the KV cache rejected the ubatch's cells");
    }
    return decode_ok;
}

int context::impl::decode_ubatch(const llm_batch & b, size_t begin, size_t end, int32_t & next_row) {
    const int32_t n_tokens = int32_t(end - begin);
    if (const int st = place_ubatch(b, begin, end); st != decode_ok) return st;
    out_ids.clear();
    for (size_t i = begin; i < end; ++i) {
        if (b.logits[i]) out_ids.push_back(int32_t(i - begin));
    }
    graph_shape shape;
    shape.n_tokens = n_tokens;
    shape.n_outputs = int32_t(out_ids.size());
    shape.n_kv = kv ? padded_n_kv(kv->n_kv(), params.kv_pad, kv->size()) : 0;
    shape.n_kv_swa = kv_swa ? padded_n_kv(kv_swa->n_kv(), params.kv_pad, kv_swa->size()) : 0;
    shape.flash_attn = params.flash_attn;
    if (shape.n_outputs == 0) {
        // The graph still ends in logits: compute one row and drop it.
        shape.n_outputs = 1;
        out_ids.push_back(n_tokens - 1);
    }
    if (!build_graph(shape)) return fail(decode_compute_failed, "decode: cannot build the graph");
    if (!sched->alloc_graph(graph.gf)) return fail(decode_compute_failed, "decode: out of memory for the graph");
    set_cache_inputs(b, begin, n_tokens);
    ggml_backend_tensor_set(graph.in.tokens, b.tokens.data() + begin, 0, size_t(n_tokens) * sizeof(int32_t));
    ggml_backend_tensor_set(graph.in.pos, b.pos.data() + begin, 0, size_t(n_tokens) * sizeof(int32_t));
    if (graph.in.out_ids) {
        ggml_backend_tensor_set(graph.in.out_ids, out_ids.data(), 0, out_ids.size() * sizeof(int32_t));
    }
    if (sched->compute(graph.gf) != GGML_STATUS_SUCCESS) {
        return fail(decode_compute_failed, "decode: a backend failed to compute the graph");
    }
    ++n_computes;
    const size_t n_vocab = size_t(m.hparams().n_vocab);
    for (size_t j = 0; j < out_ids.size(); ++j) {
        const size_t i = begin + size_t(out_ids[j]);
        if (!b.logits[i]) continue;
        const size_t row = size_t(next_row++);
        ggml_backend_tensor_get(graph.out.logits, logits.data() + row * n_vocab, j * n_vocab * sizeof(float),
                                n_vocab * sizeof(float));
        output_row[i] = int32_t(row);
    }
    return decode_ok;
}

// The cell indices and masks of each cache for the ubatch's tokens.
void context::impl::set_cache_inputs(const llm_batch & b, size_t begin, int32_t n_tokens) {
    const int32_t * pos = b.pos.data() + begin;
    const int32_t * seq = b.seq_id.data() + begin;
    if (kv) {
        mask.resize(size_t(graph.shape.n_kv) * size_t(n_tokens));
        kv->build_mask(pos, seq, n_tokens, graph.shape.n_kv, n_tokens, mask.data());
        ggml_backend_tensor_set(graph.in.kv_idx, cells.data(), 0, size_t(n_tokens) * sizeof(int64_t));
        ggml_backend_tensor_set(graph.in.mask, mask.data(), 0, mask.size() * sizeof(float));
    }
    if (kv_swa) {
        mask_swa.resize(size_t(graph.shape.n_kv_swa) * size_t(n_tokens));
        kv_swa->build_mask(pos, seq, n_tokens, graph.shape.n_kv_swa, n_tokens, mask_swa.data());
        ggml_backend_tensor_set(graph.in.kv_idx_swa, cells_swa.data(), 0, size_t(n_tokens) * sizeof(int64_t));
        ggml_backend_tensor_set(graph.in.mask_swa, mask_swa.data(), 0, mask_swa.size() * sizeof(float));
    }
}

int context::decode(const llm_batch & b) {
    impl & s = *impl_;
    s.error.clear();
    if (s.params.embeddings) return s.decode_embd(b);
    if (!s.validate(b)) return decode_invalid;
    const size_t n = b.size();
    if (s.kv && size_t(s.kv->size() - s.kv->used()) < n) {
        return s.fail(decode_no_kv_space, "decode: the KV cache has " + std::to_string(s.kv->size() - s.kv->used()) +
                                              " free cells, the batch needs " + std::to_string(n));
    }
    if (s.kv_shift_pending() && !s.apply_kv_shift()) {
        return s.fail(decode_compute_failed, "decode: the RoPE shift of the KV cache failed");
    }
    size_t n_out = 0;
    for (int8_t f : b.logits) n_out += f ? 1 : 0;
    s.logits.resize(n_out * size_t(n_vocab()));
    s.output_row.assign(n, -1);
    int32_t next_row = 0;
    for (size_t begin = 0; begin < n; begin += s.params.n_ubatch) {
        const size_t end = std::min(n, begin + s.params.n_ubatch);
        const int st = s.decode_ubatch(b, begin, end, next_row);
        if (st != decode_ok) {
            // Undo: the cells this batch took (its sequences at its positions).
            for (size_t i = 0; i < end; ++i) {
                s.each_cache([&](kv_cache & c) { c.seq_rm(b.seq_id[i], b.pos[i], b.pos[i] + 1); });
            }
            s.output_row.assign(n, -1);
            if (st == decode_no_kv_space && s.error.empty()) s.error = "decode: no KV cache slot";
            return st;
        }
    }
    return decode_ok;
}
