// The unified KV cache bookkeeping: tensors, slot search, attention masks, sequence operations,
// and set_rows through the slot indices on the CPU backend.
#include "engine/kv-cache.h"
#include "ggml/backend.h"
#include "ggml/cpu.h"
#include "ggml/ggml.h"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <vector>

namespace {

kv_cache_params small_params(uint32_t n_ctx, uint32_t n_seq_max = 4, ggml_type type = GGML_TYPE_F32) {
    kv_cache_params p;
    p.n_ctx = n_ctx;
    p.n_layer = 2;
    p.n_embd_k_gqa = 32;
    p.n_embd_v_gqa = 64;
    p.type_k = p.type_v = type;
    p.n_seq_max = n_seq_max;
    return p;
}

// Finds a slot for tokens (pos[i], seq) and applies it; returns the cells.
std::vector<int64_t> place(kv_cache & kv, const std::vector<int32_t> & pos, const std::vector<int32_t> & seq) {
    std::vector<int64_t> cells;
    EXPECT_EQ(kv.find_slot(int32_t(pos.size()), cells), kv_cache_status::ok);
    EXPECT_TRUE(kv.apply_slot(cells, pos.data(), seq.data()));
    return cells;
}

std::vector<int32_t> iota_pos(int32_t p0, int32_t n) {
    std::vector<int32_t> v(static_cast<size_t>(n));
    for (int32_t i = 0; i < n; ++i) v[size_t(i)] = p0 + i;
    return v;
}

struct cell_snapshot { int32_t pos; uint64_t seq; };
std::vector<cell_snapshot> snapshot(const kv_cache & kv) {
    std::vector<cell_snapshot> s;
    for (uint32_t i = 0; i < kv.size(); ++i) s.push_back({kv.cell(i).pos, kv.cell(i).seq});
    return s;
}

}  // namespace

TEST(kv_cache, tensors_have_types_and_shapes) {
    for (ggml_type type : {GGML_TYPE_F16, GGML_TYPE_F32, GGML_TYPE_Q8_0}) {
        kv_cache kv(small_params(24, 2, type), ggml_backend_cpu_buffer_type());
        ASSERT_NE(kv.buffer(), nullptr);
        for (uint32_t il = 0; il < 2; ++il) {
            ASSERT_NE(kv.k(il), nullptr);
            EXPECT_EQ(kv.k(il)->type, type);
            EXPECT_EQ(kv.k(il)->ne[0], 32);
            EXPECT_EQ(kv.k(il)->ne[1], 24);
            EXPECT_EQ(kv.v(il)->type, type);
            EXPECT_EQ(kv.v(il)->ne[0], 64);
            EXPECT_EQ(kv.v(il)->ne[1], 24);
            EXPECT_EQ(ggml_nbytes(kv.k(il)), ggml_row_size(type, 32) * 24);
            EXPECT_NE(kv.k(il)->data, nullptr);
            EXPECT_NE(kv.k(il)->data, kv.v(il)->data);
        }
        EXPECT_EQ(kv.k(2), nullptr);  // a layer this cache does not hold
        EXPECT_EQ(kv.used(), 0u);
        EXPECT_EQ(kv.n_kv(), 0u);
    }
    EXPECT_EQ(kv_cache_params{}.type_k, GGML_TYPE_F16);
}

TEST(kv_cache, bad_params_are_reported) {
    ggml_backend_buffer_type_i * buft = ggml_backend_cpu_buffer_type();
    kv_cache_params p = small_params(8);
    p.n_ctx = 0;
    EXPECT_THROW(kv_cache(p, buft), std::runtime_error);
    p = small_params(8, 65);
    EXPECT_THROW(kv_cache(p, buft), std::runtime_error);
    p = small_params(8, 0);
    EXPECT_THROW(kv_cache(p, buft), std::runtime_error);
    p = small_params(8, 1, GGML_TYPE_Q8_0);
    p.n_embd_v_gqa = 40;  // not a multiple of the Q8_0 block
    EXPECT_THROW(kv_cache(p, buft), std::runtime_error);
    p = small_params(8, 1, GGML_TYPE_Q4_0);
    EXPECT_THROW(kv_cache(p, buft), std::runtime_error);
    p = small_params(8);
    EXPECT_THROW(kv_cache(p, nullptr), std::runtime_error);
}

TEST(kv_cache, slot_search_fills_contiguous_runs) {
    kv_cache kv(small_params(16), ggml_backend_cpu_buffer_type());
    EXPECT_EQ(place(kv, iota_pos(0, 4), {0, 0, 0, 0}), (std::vector<int64_t>{0, 1, 2, 3}));
    EXPECT_EQ(place(kv, iota_pos(4, 3), {0, 0, 0}), (std::vector<int64_t>{4, 5, 6}));
    EXPECT_EQ(place(kv, {7}, {0}), (std::vector<int64_t>{7}));
    EXPECT_EQ(kv.used(), 8u);
    EXPECT_EQ(kv.n_kv(), 8u);
    for (uint32_t i = 0; i < 8; ++i) {
        EXPECT_EQ(kv.cell(i).pos, int32_t(i));
        EXPECT_EQ(kv.cell(i).seq, 1u);
    }
    EXPECT_TRUE(kv.cell(8).empty());
    std::vector<int64_t> cells{99};
    EXPECT_EQ(kv.find_slot(0, cells), kv_cache_status::invalid);
    EXPECT_TRUE(cells.empty());
}

TEST(kv_cache, slot_search_reuses_freed_cells) {
    kv_cache kv(small_params(16), ggml_backend_cpu_buffer_type());
    place(kv, iota_pos(0, 16), std::vector<int32_t>(16, 0));
    EXPECT_EQ(kv.used(), 16u);
    EXPECT_TRUE(kv.seq_rm(0, 4, 8));
    EXPECT_EQ(kv.used(), 12u);
    EXPECT_EQ(place(kv, iota_pos(20, 4), {1, 1, 1, 1}), (std::vector<int64_t>{4, 5, 6, 7}));
    // Scattered holes: cells 1, 10 and 11 (positions 1, 10, 11 of sequence 0).
    EXPECT_TRUE(kv.seq_rm(0, 1, 2));
    EXPECT_TRUE(kv.seq_rm(0, 10, 12));
    EXPECT_EQ(place(kv, {30, 31, 32}, {2, 2, 2}), (std::vector<int64_t>{1, 10, 11}));
    EXPECT_EQ(kv.used(), 16u);
    EXPECT_EQ(kv.cell(10).pos, 31);
    EXPECT_TRUE(kv.cell(10).has_seq(2));
}

TEST(kv_cache, no_space_leaves_state_unchanged) {
    kv_cache kv(small_params(8), ggml_backend_cpu_buffer_type());
    place(kv, iota_pos(0, 6), std::vector<int32_t>(6, 0));
    const std::vector<cell_snapshot> before = snapshot(kv);
    std::vector<int64_t> cells;
    EXPECT_EQ(kv.find_slot(3, cells), kv_cache_status::no_space);
    EXPECT_EQ(static_cast<int>(kv_cache_status::no_space), 1);
    EXPECT_TRUE(cells.empty());
    EXPECT_EQ(kv.used(), 6u);
    const std::vector<cell_snapshot> after = snapshot(kv);
    ASSERT_EQ(after.size(), before.size());
    for (size_t i = 0; i < after.size(); ++i) {
        EXPECT_EQ(after[i].pos, before[i].pos);
        EXPECT_EQ(after[i].seq, before[i].seq);
    }
    // The remaining two cells are still usable.
    EXPECT_EQ(place(kv, {6, 7}, {0, 0}), (std::vector<int64_t>{6, 7}));
    EXPECT_EQ(kv.find_slot(1, cells), kv_cache_status::no_space);
}

TEST(kv_cache, apply_slot_rejects_bad_input) {
    kv_cache kv(small_params(8, 2), ggml_backend_cpu_buffer_type());
    place(kv, {0}, {0});
    const int32_t pos[2] = {1, 2}, seq[2] = {0, 0}, bad_seq[2] = {0, 2}, bad_pos[2] = {1, -1};
    EXPECT_FALSE(kv.apply_slot({0, 1}, pos, seq));   // cell 0 is taken
    EXPECT_FALSE(kv.apply_slot({1, 8}, pos, seq));   // out of range
    EXPECT_FALSE(kv.apply_slot({1, 1}, pos, seq));   // twice the same cell
    EXPECT_FALSE(kv.apply_slot({1, 2}, pos, bad_seq));
    EXPECT_FALSE(kv.apply_slot({1, 2}, bad_pos, seq));
    EXPECT_EQ(kv.used(), 1u);
    EXPECT_TRUE(kv.cell(1).empty());
    EXPECT_TRUE(kv.apply_slot({1, 2}, pos, seq));
    EXPECT_EQ(kv.used(), 3u);
    const uint64_t zero_mask[1] = {0}, wide_mask[1] = {4};
    EXPECT_FALSE(kv.apply_slot_multi({3}, pos, zero_mask));
    EXPECT_FALSE(kv.apply_slot_multi({3}, pos, wide_mask));
    EXPECT_EQ(kv.used(), 3u);
}

TEST(kv_cache, tokens_of_several_sequences_share_cells) {
    kv_cache kv(small_params(8, 3), ggml_backend_cpu_buffer_type());
    // A prompt of two tokens shared by sequences 0 and 2, then one token of sequence 2 alone.
    std::vector<int64_t> cells;
    ASSERT_EQ(kv.find_slot(3, cells), kv_cache_status::ok);
    const int32_t pos[3] = {0, 1, 2};
    const uint64_t masks[3] = {5, 5, 4};
    ASSERT_TRUE(kv.apply_slot_multi(cells, pos, masks));
    EXPECT_EQ(kv.used(), 3u);
    EXPECT_EQ(kv.seq_pos_max(0), 1);
    EXPECT_EQ(kv.seq_pos_max(2), 2);
    const int32_t qpos[2] = {2, 3}, qseq[2] = {0, 2};
    std::vector<float> m(2 * 3);
    ASSERT_TRUE(kv.build_mask(qpos, qseq, 2, 3, 2, m.data()));
    EXPECT_EQ(m, (std::vector<float>{0, 0, -INFINITY, 0, 0, 0}));
    EXPECT_TRUE(kv.seq_rm(0, -1, -1));
    EXPECT_EQ(kv.used(), 3u);  // sequence 2 still holds all three
    EXPECT_TRUE(kv.seq_rm(2, 1, -1));
    EXPECT_EQ(kv.used(), 1u);
}

TEST(kv_cache, mask_for_two_interleaved_sequences) {
    kv_cache kv(small_params(8, 2), ggml_backend_cpu_buffer_type());
    // Tokens (seq, pos): (0,0) (1,0) (0,1) (1,1) (0,2) (1,2) -> cell c holds seq c % 2, pos c / 2.
    const std::vector<int32_t> pos{0, 0, 1, 1, 2, 2}, seq{0, 1, 0, 1, 0, 1};
    EXPECT_EQ(place(kv, pos, seq), (std::vector<int64_t>{0, 1, 2, 3, 4, 5}));
    const uint32_t n_kv = 8;  // covers the two empty cells too
    const int32_t n_pad = 8;
    std::vector<float> mask(n_kv * n_pad, 123.0f);
    ASSERT_TRUE(kv.build_mask(pos.data(), seq.data(), 6, n_kv, n_pad, mask.data()));
    // Written out by hand: row t lists the visible cells.
    const std::vector<std::vector<int>> visible{{0}, {1}, {0, 2}, {1, 3}, {0, 2, 4}, {1, 3, 5}, {}, {}};
    for (int32_t t = 0; t < n_pad; ++t) {
        for (uint32_t c = 0; c < n_kv; ++c) {
            bool vis = false;
            for (int v : visible[size_t(t)]) vis = vis || v == int(c);
            const float m = mask[size_t(t) * n_kv + c];
            if (vis) EXPECT_EQ(m, 0.0f) << "t=" << t << " c=" << c;
            else EXPECT_TRUE(std::isinf(m) && m < 0) << "t=" << t << " c=" << c;
        }
    }
    std::vector<ggml_fp16_t> mask16(n_kv * n_pad);
    ASSERT_TRUE(kv.build_mask_f16(pos.data(), seq.data(), 6, n_kv, n_pad, mask16.data()));
    for (size_t i = 0; i < mask.size(); ++i) EXPECT_EQ(ggml_fp16_to_fp32(mask16[i]), mask[i]);
    // Next step: one token per sequence at pos 3 sees its own history only.
    const int32_t pos2[2] = {3, 3}, seq2[2] = {1, 0};
    std::vector<float> m2(6 * 2);
    ASSERT_TRUE(kv.build_mask(pos2, seq2, 2, 6, 2, m2.data()));
    for (uint32_t c = 0; c < 6; ++c) {
        EXPECT_EQ(m2[c] == 0.0f, c % 2 == 1);
        EXPECT_EQ(m2[6 + c] == 0.0f, c % 2 == 0);
    }
    const int32_t bad_seq[1] = {2};
    EXPECT_FALSE(kv.build_mask(pos2, bad_seq, 1, 6, 1, m2.data()));
    EXPECT_FALSE(kv.build_mask(pos2, seq2, 2, 9, 2, m2.data()));
    EXPECT_FALSE(kv.build_mask(pos2, seq2, 2, 6, 1, m2.data()));
}

TEST(kv_cache, seq_cp_and_keep_share_and_drop_cells) {
    kv_cache kv(small_params(8, 3), ggml_backend_cpu_buffer_type());
    place(kv, iota_pos(0, 5), std::vector<int32_t>(5, 0));
    EXPECT_TRUE(kv.seq_cp(0, 1, 0, 3));
    for (uint32_t i = 0; i < 5; ++i) {
        EXPECT_TRUE(kv.cell(i).has_seq(0));
        EXPECT_EQ(kv.cell(i).has_seq(1), i < 3) << i;
        EXPECT_FALSE(kv.cell(i).has_seq(2));
    }
    EXPECT_EQ(kv.used(), 5u);
    EXPECT_EQ(kv.seq_pos_min(1), 0);
    EXPECT_EQ(kv.seq_pos_max(1), 2);
    EXPECT_EQ(kv.seq_pos_max(0), 4);
    EXPECT_EQ(kv.seq_pos_max(2), -1);
    // Sequence 1 continues from its shared prefix.
    EXPECT_EQ(place(kv, {3}, {1}), (std::vector<int64_t>{5}));
    EXPECT_TRUE(kv.seq_keep(1));
    EXPECT_EQ(kv.used(), 4u);
    for (uint32_t i : {0u, 1u, 2u, 5u}) EXPECT_EQ(kv.cell(i).seq, uint64_t(2)) << i;
    EXPECT_TRUE(kv.cell(3).empty());
    EXPECT_TRUE(kv.cell(4).empty());
    EXPECT_EQ(kv.seq_pos_max(0), -1);
    EXPECT_FALSE(kv.seq_cp(0, 3, 0, -1));
    EXPECT_FALSE(kv.seq_keep(-1));
}

TEST(kv_cache, seq_rm_ranges_and_all_sequences) {
    kv_cache kv(small_params(8, 2), ggml_backend_cpu_buffer_type());
    place(kv, iota_pos(0, 4), {0, 0, 0, 0});
    EXPECT_TRUE(kv.seq_cp(0, 1, -1, -1));
    EXPECT_TRUE(kv.seq_rm(1, 2, -1));  // seq 1 loses pos 2, 3; cells stay for seq 0
    EXPECT_EQ(kv.used(), 4u);
    EXPECT_EQ(kv.cell(2).seq, 1u);
    EXPECT_EQ(kv.cell(1).seq, 3u);
    EXPECT_TRUE(kv.seq_rm(-1, 1, 3));  // every sequence loses pos 1, 2
    EXPECT_EQ(kv.used(), 2u);
    EXPECT_TRUE(kv.cell(1).empty());
    EXPECT_TRUE(kv.cell(2).empty());
    EXPECT_EQ(kv.cell(0).seq, 3u);
    EXPECT_EQ(kv.cell(3).seq, 1u);
    EXPECT_FALSE(kv.seq_rm(2, 0, -1));
    EXPECT_FALSE(kv.seq_rm(-2, 0, -1));
    EXPECT_TRUE(kv.seq_rm(-1, -1, -1));
    EXPECT_EQ(kv.used(), 0u);
    EXPECT_EQ(kv.n_kv(), 0u);
}

TEST(kv_cache, seq_add_shifts_positions_and_records_rope_shift) {
    kv_cache kv(small_params(8, 2), ggml_backend_cpu_buffer_type());
    place(kv, iota_pos(0, 5), std::vector<int32_t>(5, 0));
    place(kv, {0}, {1});  // cell 5, another sequence
    EXPECT_FALSE(kv.has_shift());
    EXPECT_TRUE(kv.seq_add(0, 2, -1, 3));
    const std::vector<int32_t> want_pos{0, 1, 5, 6, 7, 0};
    for (uint32_t i = 0; i < 6; ++i) EXPECT_EQ(kv.cell(i).pos, want_pos[i]) << i;
    EXPECT_TRUE(kv.has_shift());
    EXPECT_EQ(kv.shift_deltas(), (std::vector<int32_t>{0, 0, 3, 3, 3, 0, 0, 0}));
    EXPECT_EQ(kv.seq_pos_max(0), 7);
    // Negative delta over [0, 6): pos 0 falls off (cell freed), 1 -> 0, 5 -> 4; deltas accumulate.
    EXPECT_TRUE(kv.seq_add(0, 0, 6, -1));
    EXPECT_TRUE(kv.cell(0).empty());
    EXPECT_EQ(kv.cell(1).pos, 0);
    EXPECT_EQ(kv.cell(2).pos, 4);
    EXPECT_EQ(kv.cell(3).pos, 6);
    EXPECT_EQ(kv.used(), 5u);
    EXPECT_EQ(kv.shift_deltas(), (std::vector<int32_t>{0, -1, 2, 3, 3, 0, 0, 0}));  // pos 6, 7 out of range
    kv.shift_applied();
    EXPECT_FALSE(kv.has_shift());
    EXPECT_EQ(kv.shift_deltas(), std::vector<int32_t>(8, 0));
    EXPECT_EQ(kv.cell(4).pos, 7);
    EXPECT_FALSE(kv.seq_add(2, 0, -1, 1));
    // Freed cell 0 is found first by the next slot search.
    EXPECT_EQ(place(kv, {8}, {0}), (std::vector<int64_t>{0}));
    kv.clear();
    EXPECT_EQ(kv.used(), 0u);
    EXPECT_TRUE(kv.cell(4).empty());
}

// A set_rows graph built once writes new K rows into exactly the cells of each slot.
TEST(kv_cache, set_rows_writes_into_slot_cells) {
    for (ggml_type type : {GGML_TYPE_F32, GGML_TYPE_F16}) {
        kv_cache kv(small_params(12, 2, type), ggml_backend_cpu_buffer_type());
        const int64_t n_embd = kv.params().n_embd_k_gqa, n_tok = 3;
        ggml_context_ptr ctx(ggml_init({8 * ggml_tensor_overhead() + ggml_graph_overhead(), nullptr, true}));
        ggml_tensor * cur = ggml_new_tensor_2d(ctx.get(), GGML_TYPE_F32, n_embd, n_tok);  // [n_embd, n_tokens]
        ggml_tensor * idx = ggml_new_tensor_1d(ctx.get(), GGML_TYPE_I64, n_tok);
        ggml_cgraph * gf = ggml_new_graph(ctx.get());
        ggml_build_forward_expand(gf, ggml_set_rows(ctx.get(), kv.k(1), cur, idx));
        ggml_backend_buffer_ptr buf = ggml_backend_alloc_ctx_tensors(ctx.get(), ggml_backend_cpu_buffer_type());
        ASSERT_NE(buf, nullptr);
        ggml_backend_ptr be = ggml_backend_cpu_init(ggml_cpu_backend_options{1});
        // Sentinel rows everywhere, so untouched cells can be told apart.
        std::vector<float> sentinel(size_t(n_embd * kv.size()), -7.0f);
        std::vector<uint8_t> raw(ggml_nbytes(kv.k(1)));
        ggml_get_type_traits(type).from_float(sentinel.data(), raw.data(), int64_t(sentinel.size()));
        ggml_backend_tensor_set(kv.k(1), raw.data(), 0, raw.size());
        std::vector<float> expect = sentinel;

        // Step 1 fills cells 0..2; removing pos 1 and adding another sequence makes step 2 scattered.
        for (int step = 0; step < 2; ++step) {
            if (step == 1) { kv.seq_rm(0, 1, 2); place(kv, iota_pos(0, 7), std::vector<int32_t>(7, 1)); }
            std::vector<int64_t> cells;
            ASSERT_EQ(kv.find_slot(int32_t(n_tok), cells), kv_cache_status::ok);
            const std::vector<int32_t> pos = iota_pos(10 * step, int32_t(n_tok));
            ASSERT_TRUE(kv.apply_slot(cells, pos.data(), std::vector<int32_t>(3, 0).data()));
            // Step 2: cells 3..9 hold sequence 1, so the free cells are 10, 11 and (wrapping) 1.
            EXPECT_EQ(cells, step == 0 ? (std::vector<int64_t>{0, 1, 2}) : (std::vector<int64_t>{10, 11, 1}));
            std::vector<float> rows(size_t(n_embd * n_tok));
            for (size_t i = 0; i < rows.size(); ++i) rows[i] = float(step * 100 + int(i % 61)) * 0.5f;
            ggml_backend_tensor_set(cur, rows.data(), 0, rows.size() * sizeof(float));
            ggml_backend_tensor_set(idx, cells.data(), 0, cells.size() * sizeof(int64_t));
            ASSERT_EQ(be->graph_compute(gf), GGML_STATUS_SUCCESS);
            for (int64_t t = 0; t < n_tok; ++t)
                for (int64_t e = 0; e < n_embd; ++e)
                    expect[size_t(cells[size_t(t)] * n_embd + e)] = rows[size_t(t * n_embd + e)];
            ggml_backend_tensor_get(kv.k(1), raw.data(), 0, raw.size());
            std::vector<float> got(expect.size());
            ggml_get_type_traits(type).to_float(raw.data(), got.data(), int64_t(got.size()));
            EXPECT_EQ(got, expect) << ggml_type_name(type) << " step " << step;
        }
    }
}
