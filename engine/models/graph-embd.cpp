// Embeddings graphs: attention of each sequence over itself without a KV cache, pooling, and
// the inputs of a ubatch (graph-embd.h).
//
// Layout: the ubatch's rows are its sequences one after the other. Attention runs on slots
// [attn_len, n_seqs]: slot j of sequence s is its row start_s + j (j < len_s); Q, K and V
// become [head_dim, attn_len, heads, n_seqs] — views of the rows themselves when every sequence
// has the same length, else gathered (get_rows) into the slots, the unused slots masked and the
// results gathered back to the rows. The cost stays per sequence (n_seqs * attn_len^2 scores),
// never n_tokens^2, and the matmuls around attention see every row of the ubatch at once.
#include "models/graph-embd.h"

#include <algorithm>
#include <cmath>

namespace {

ggml_tensor * embd_input(ggml_context * ctx, ggml_type type, int64_t ne0, int64_t ne1, int64_t ne3, const char * name) {
    ggml_tensor * t = ggml_new_tensor_4d(ctx, type, ne0, ne1, 1, ne3);
    ggml_set_name(t, name);
    ggml_set_input(t);
    return t;
}

// Inputs that no node of the graph reads (the full mask when every layer has a window) have no
// memory: they are skipped.
void embd_input_set(ggml_tensor * t, const void * data, size_t bytes) {
    if (t && t->buffer) ggml_backend_tensor_set(t, data, 0, bytes);
}

}  // namespace

// ---- the graph ----

void graph_builder::create_embd_inputs() {
    const int64_t len = shape.attn_len, n_seqs = shape.n_seqs, n_tokens = shape.n_tokens;
    in.attn_mask = embd_input(ctx_, GGML_TYPE_F32, len, len, n_seqs, "inp_attn_mask");
    if (hp.has_swa()) in.attn_mask_swa = embd_input(ctx_, GGML_TYPE_F32, len, len, n_seqs, "inp_attn_mask_swa");
    if (shape.attn_gather) {
        in.attn_rows = embd_input(ctx_, GGML_TYPE_I32, len * n_seqs, 1, 1, "inp_attn_rows");
        in.attn_slots = embd_input(ctx_, GGML_TYPE_I32, n_tokens, 1, 1, "inp_attn_slots");
    }
    switch (shape.pooling) {
        case pooling_type::mean: in.pool_mean = embd_input(ctx_, GGML_TYPE_F32, n_tokens, n_seqs, 1, "inp_pool_mean"); break;
        case pooling_type::cls:
        case pooling_type::last:
        case pooling_type::rank: in.pool_rows = embd_input(ctx_, GGML_TYPE_I32, n_seqs, 1, 1, "inp_pool_rows"); break;
        case pooling_type::none:
        case pooling_type::unspecified: break;
    }
}

// t [head_dim, n_heads, n_tokens] (rows of whole heads, any strides) as slots
// [head_dim, attn_len, n_heads, n_seqs] (a permuted view).
ggml_tensor * graph_builder::build_seq_slots(ggml_tensor * t, int64_t head_dim, int64_t n_heads) {
    const int64_t n_tokens = shape.n_tokens;
    ggml_tensor * rows = ggml_is_contiguous(t) ? ggml_reshape_2d(ctx_, t, head_dim * n_heads, n_tokens)
                                               : ggml_cont_2d(ctx_, t, head_dim * n_heads, n_tokens);
    if (in.attn_rows) rows = ggml_get_rows(ctx_, rows, in.attn_rows);  // [head_dim * n_heads, attn_len * n_seqs]
    ggml_tensor * slots = ggml_reshape_4d(ctx_, rows, head_dim, n_heads, shape.attn_len, shape.n_seqs);
    return ggml_permute(ctx_, slots, 0, 2, 1, 3);
}

// Attention of each sequence over its own tokens (q [head_k, n_head, n_tokens], k and v
// [head, n_head_kv, n_tokens]); the layer's mask decides causality and the window. Result
// [n_head * head_v, n_tokens].
ggml_tensor * graph_builder::build_attn_seqs(int il, ggml_tensor * q, ggml_tensor * k, ggml_tensor * v) {
    const int64_t head_v = hp.n_embd_head_v, n_slots = int64_t(shape.attn_len) * shape.n_seqs;
    ggml_tensor * mask = hp.is_swa(uint32_t(il)) ? in.attn_mask_swa : in.attn_mask;
    ggml_tensor * qs = build_seq_slots(q, hp.n_embd_head_k, hp.n_head);     // [head_k, len, n_head, n_seqs]
    ggml_tensor * ks = build_seq_slots(k, hp.n_embd_head_k, hp.n_head_kv);  // [head_k, len, n_head_kv, n_seqs]
    ggml_tensor * vs = build_seq_slots(v, head_v, hp.n_head_kv);            // [head_v, len, n_head_kv, n_seqs]
    ggml_tensor * o = nullptr;                                               // [head_v, n_head, len, n_seqs]
    if (shape.flash_attn) {
        o = ggml_flash_attn_ext(ctx_, qs, ks, vs, mask, hp.kq_scale(), hp.attn_softcap);
    } else {
        ggml_tensor * kq = build_soft_max(ggml_mul_mat(ctx_, ks, qs), mask);  // [len, len, n_head, n_seqs]
        ggml_tensor * vt = ggml_cont(ctx_, ggml_transpose(ctx_, vs));          // [len, head_v, n_head_kv, n_seqs]
        ggml_tensor * kqv = ggml_mul_mat(ctx_, vt, kq);                        // [head_v, len, n_head, n_seqs]
        o = ggml_cont(ctx_, ggml_permute(ctx_, kqv, 0, 2, 1, 3));
    }
    o = ggml_reshape_2d(ctx_, o, head_v * hp.n_head, n_slots);
    if (in.attn_slots) o = ggml_get_rows(ctx_, o, in.attn_slots);  // back to the rows
    return o;
}

graph_result graph_builder::build_embd_result(ggml_tensor * h) {
    graph_result r;
    if (shape.pooling == pooling_type::none) {
        if (in.out_ids) h = ggml_get_rows(ctx_, h, in.out_ids);  // [n_embd, n_outputs]
        ggml_set_name(h, "embd");
        ggml_set_output(h);
        r.embd = h;
        return r;
    }
    ggml_tensor * p = nullptr;  // [n_embd, n_seqs]
    if (shape.pooling == pooling_type::mean) {
        p = ggml_mul_mat(ctx_, ggml_cont(ctx_, ggml_transpose(ctx_, h)), in.pool_mean);
    } else {
        p = ggml_get_rows(ctx_, h, in.pool_rows);
    }
    if (shape.pooling == pooling_type::rank) {  // the classification head on the first token's row
        if (w.cls) p = ggml_tanh(ctx_, build_linear(p, w.cls, w.cls_b));
        p = build_linear(p, w.cls_out, w.cls_out_b);  // [n_cls_out, n_seqs]
    }
    ggml_set_name(p, "embd_pooled");
    ggml_set_output(p);
    r.embd_pooled = p;
    return r;
}

// ---- the ubatch ----

int32_t embd_ubatch::max_len() const {
    return seq_len.empty() ? 0 : *std::max_element(seq_len.begin(), seq_len.end());
}

void embd_ubatch::clear() {
    for (auto * v : {&tokens, &pos, &batch_idx, &out_ids, &seq_id, &seq_start, &seq_len}) v->clear();
}

void embd_ubatch::add_seq(int32_t seq, int32_t len) {
    seq_id.push_back(seq);
    seq_start.push_back(n_tokens());
    seq_len.push_back(len);
}

void embd_ubatch::add_row(int32_t token, int32_t p, int32_t batch_index, bool keep) {
    if (keep) out_ids.push_back(n_tokens());
    tokens.push_back(token);
    pos.push_back(p);
    batch_idx.push_back(batch_index);
}

graph_shape embd_ubatch_shape(const embd_ubatch & ub, pooling_type pooling, bool flash_attn) {
    graph_shape s;
    s.embd = true;
    s.pooling = pooling;
    s.flash_attn = flash_attn;
    s.n_tokens = ub.n_tokens();
    s.n_outputs = pooling == pooling_type::none ? int32_t(ub.out_ids.size()) : 0;
    s.n_seqs = ub.n_seqs();
    s.attn_len = ub.max_len();
    s.attn_gather = int64_t(s.attn_len) * s.n_seqs != s.n_tokens;
    return s;
}

namespace {

// Mask rows of sequence s: row i of its slots sees the contiguous range of slots [lo, hi]
// (positions increase along the sequence); rows of unused slots see the whole sequence.
void embd_fill_mask(const embd_ubatch & ub, int32_t s, int32_t len_slots, const embd_mask_rules & rules, bool window,
                    float * out) {
    const int32_t start = ub.seq_start[size_t(s)], len = ub.seq_len[size_t(s)];
    const int32_t * p = ub.pos.data() + start;
    for (int32_t i = 0; i < len_slots; ++i) {
        int32_t lo = 0, hi = len - 1;
        if (i < len) {
            if (rules.causal) hi = i;
            if (window) {
                const int64_t w = int64_t(rules.n_swa);
                lo = int32_t(std::upper_bound(p, p + len, int64_t(p[i]) - w, [](int64_t x, int32_t y) { return x < y; }) - p);
                if (!rules.causal) {
                    hi = int32_t(std::lower_bound(p, p + len, int64_t(p[i]) + w, [](int32_t y, int64_t x) { return y < x; }) - p) - 1;
                }
            }
        }
        float * row = out + size_t(i) * size_t(len_slots);
        std::fill(row, row + lo, -INFINITY);
        std::fill(row + lo, row + hi + 1, 0.0f);
        std::fill(row + hi + 1, row + len_slots, -INFINITY);
    }
}

void embd_set_mask(ggml_tensor * t, const embd_ubatch & ub, int32_t len_slots, const embd_mask_rules & rules,
                   bool window, std::vector<float> & buf) {
    const size_t per_seq = size_t(len_slots) * size_t(len_slots);
    buf.resize(per_seq * size_t(ub.n_seqs()));
    for (int32_t s = 0; s < ub.n_seqs(); ++s) embd_fill_mask(ub, s, len_slots, rules, window, buf.data() + per_seq * size_t(s));
    embd_input_set(t, buf.data(), buf.size() * sizeof(float));
}

// Which row each slot reads (an unused slot: the sequence's last row) and the slot of each row.
void embd_set_slots(const graph_inputs & in, const embd_ubatch & ub, int32_t len_slots, embd_input_scratch & sc) {
    sc.rows.resize(size_t(len_slots) * size_t(ub.n_seqs()));
    sc.slots.resize(size_t(ub.n_tokens()));
    for (int32_t s = 0; s < ub.n_seqs(); ++s) {
        const int32_t start = ub.seq_start[size_t(s)], len = ub.seq_len[size_t(s)];
        for (int32_t j = 0; j < len_slots; ++j) sc.rows[size_t(s * len_slots + j)] = start + std::min(j, len - 1);
        for (int32_t j = 0; j < len; ++j) sc.slots[size_t(start + j)] = s * len_slots + j;
    }
    embd_input_set(in.attn_rows, sc.rows.data(), sc.rows.size() * sizeof(int32_t));
    embd_input_set(in.attn_slots, sc.slots.data(), sc.slots.size() * sizeof(int32_t));
}

void embd_set_pooling(const graph_inputs & in, const graph_shape & shape, const embd_ubatch & ub,
                      embd_input_scratch & sc) {
    if (in.pool_mean) {
        const size_t n_tokens = size_t(ub.n_tokens());
        sc.mean.assign(n_tokens * size_t(ub.n_seqs()), 0.0f);
        for (int32_t s = 0; s < ub.n_seqs(); ++s) {
            float * col = sc.mean.data() + size_t(s) * n_tokens + size_t(ub.seq_start[size_t(s)]);
            std::fill(col, col + ub.seq_len[size_t(s)], 1.0f / float(ub.seq_len[size_t(s)]));
        }
        embd_input_set(in.pool_mean, sc.mean.data(), sc.mean.size() * sizeof(float));
    }
    if (in.pool_rows) {
        sc.pool_rows.resize(size_t(ub.n_seqs()));
        for (int32_t s = 0; s < ub.n_seqs(); ++s) {
            const int32_t last = shape.pooling == pooling_type::last ? ub.seq_len[size_t(s)] - 1 : 0;
            sc.pool_rows[size_t(s)] = ub.seq_start[size_t(s)] + last;
        }
        embd_input_set(in.pool_rows, sc.pool_rows.data(), sc.pool_rows.size() * sizeof(int32_t));
    }
}

}  // namespace

void embd_ubatch_set_inputs(const graph_inputs & in, const graph_shape & shape, const embd_ubatch & ub,
                            const embd_mask_rules & rules, embd_input_scratch & scratch) {
    const size_t n_tokens = size_t(ub.n_tokens());
    embd_input_set(in.tokens, ub.tokens.data(), n_tokens * sizeof(int32_t));
    embd_input_set(in.pos, ub.pos.data(), n_tokens * sizeof(int32_t));
    embd_input_set(in.out_ids, ub.out_ids.data(), ub.out_ids.size() * sizeof(int32_t));
    embd_set_mask(in.attn_mask, ub, shape.attn_len, rules, false, scratch.mask);
    if (in.attn_mask_swa) embd_set_mask(in.attn_mask_swa, ub, shape.attn_len, rules, true, scratch.mask_swa);
    if (in.attn_rows) embd_set_slots(in, ub, shape.attn_len, scratch);
    embd_set_pooling(in, shape, ub, scratch);
}
