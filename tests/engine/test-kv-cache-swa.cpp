// Sliding-window attention: the window in the masks, pruning of the window-sized cache, resuming,
// and models with sliding-window layers (tiny-gemma3, tiny-gemma2) decoded through a cache far
// smaller than their context, against the reference logits and against a cache that never
// prunes: in small ubatches, with several sequences, a shared prefix and a position shift.
#include "engine/logits-compare.h"
#include "engine/context.h"
#include "engine/kv-cache.h"
#include "engine/model.h"
#include "engine/reference-data.h"
#include "ggml/cpu.h"
#include "testdata.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <string>

namespace {

kv_cache_params swa_params(uint32_t n_ctx, uint32_t n_swa, uint32_t n_seq = 2) {
    kv_cache_params p;
    p.n_ctx = n_ctx;
    p.n_layer = 3;
    p.layers = {0, 2};
    p.n_embd_k_gqa = p.n_embd_v_gqa = 32;
    p.n_seq_max = n_seq;
    p.n_swa = n_swa;
    return p;
}

void place(kv_cache & kv, std::vector<int32_t> pos, int32_t seq) {
    std::vector<int64_t> cells;
    ASSERT_EQ(kv.find_slot(int32_t(pos.size()), cells), kv_cache_status::ok);
    std::vector<int32_t> seqs(pos.size(), seq);
    ASSERT_TRUE(kv.apply_slot(cells, pos.data(), seqs.data()));
}

std::vector<int32_t> range(int32_t a, int32_t b) {
    std::vector<int32_t> v;
    for (int32_t i = a; i < b; ++i) v.push_back(i);
    return v;
}

}  // namespace

TEST(kv_cache_swa, holds_only_its_layers) {
    kv_cache kv(swa_params(16, 4), ggml_backend_cpu_buffer_type());
    EXPECT_NE(kv.k(0), nullptr);
    EXPECT_EQ(kv.k(1), nullptr);
    EXPECT_NE(kv.v(2), nullptr);
    EXPECT_EQ(kv.k(3), nullptr);
    EXPECT_EQ(kv.layers(), (std::vector<uint32_t>{0, 2}));
    kv_cache_params bad = swa_params(16, 4);
    bad.layers = {0, 0};
    EXPECT_THROW(kv_cache(bad, ggml_backend_cpu_buffer_type()), std::runtime_error);
    bad.layers = {3};
    EXPECT_THROW(kv_cache(bad, ggml_backend_cpu_buffer_type()), std::runtime_error);
}

TEST(kv_cache_swa, mask_sees_the_window_only) {
    kv_cache kv(swa_params(16, 4), ggml_backend_cpu_buffer_type());
    place(kv, range(0, 10), 0);
    const int32_t pos[] = {9, 5}, seq[] = {0, 0};
    std::vector<float> mask(16 * 2);
    ASSERT_TRUE(kv.build_mask(pos, seq, 2, 16, 2, mask.data()));
    for (int32_t c = 0; c < 16; ++c) {
        // cell c holds position c (placed in order): visible when p - 4 < c <= p
        EXPECT_EQ(mask[size_t(c)] == 0.0f, c > 5 && c <= 9) << "cell " << c;
        EXPECT_EQ(mask[16 + size_t(c)] == 0.0f, c > 1 && c <= 5) << "cell " << c;
    }
}

TEST(kv_cache_swa, prune_drops_what_no_later_token_sees) {
    kv_cache kv(swa_params(32, 4), ggml_backend_cpu_buffer_type());
    place(kv, range(0, 10), 0);
    place(kv, range(0, 6), 1);
    ASSERT_TRUE(kv.seq_cp(1, 0, 0, 2));  // cells of seq 1 at positions 0, 1 shared with seq 0
    // A ubatch of seq 0 from position 10: positions <= 6 are out of its window for good.
    const int32_t pos[] = {10, 11}, seq[] = {0, 0};
    kv.prune_swa(pos, seq, 2, false);
    EXPECT_EQ(kv.seq_pos_min(0), 7);
    EXPECT_EQ(kv.seq_pos_max(0), 9);
    EXPECT_EQ(kv.seq_pos_min(1), 0);  // seq 1 untouched, shared cells kept for it
    EXPECT_EQ(kv.used(), 3u + 6u);
    // All sequences: seq 1 keeps the window of its last position (2..5: its next token sees
    // 3..5, and position 5 can still be decoded again).
    kv.prune_swa(pos, seq, 2, true);
    EXPECT_EQ(kv.seq_pos_min(1), 2);
    EXPECT_EQ(kv.used(), 3u + 4u);
}

TEST(kv_cache_swa, resumable_needs_the_window_before_the_position) {
    kv_cache kv(swa_params(32, 4), ggml_backend_cpu_buffer_type());
    EXPECT_TRUE(kv.seq_resumable(0, 0));
    place(kv, range(0, 10), 0);
    EXPECT_TRUE(kv.seq_resumable(0, 10));
    EXPECT_TRUE(kv.seq_resumable(0, 3));
    const int32_t pos[] = {10}, seq[] = {0};
    kv.prune_swa(pos, seq, 1, false);  // keeps 7, 8, 9
    EXPECT_TRUE(kv.seq_resumable(0, 10));   // needs 7..9
    EXPECT_FALSE(kv.seq_resumable(0, 9));   // needs 6..8
    EXPECT_FALSE(kv.seq_resumable(1, 5));   // nothing there
    EXPECT_TRUE(kv.seq_resumable(1, 0));
    kv_cache full(swa_params(32, 0), ggml_backend_cpu_buffer_type());
    EXPECT_TRUE(full.seq_resumable(0, 100));
}

namespace {

std::unique_ptr<model> load(const std::string & dir, const std::string & name) {
    return model::load(dir + "/models/" + name + ".gguf", model_params{});
}

// tiny-gemma3 has a window of 16: with a ubatch of 16 and kv_pad 16 the sliding-window cache has
// 16 * n_seq + 16 cells, while a 256-cell padding makes it as large as the context (no pruning
// for lack of room; the window masks alone).
context_params params(uint32_t kv_pad, uint32_t n_ubatch, uint32_t n_seq = 1, bool flash = false) {
    context_params cp;
    cp.n_ctx = 512;
    cp.n_threads = 2;
    cp.n_ubatch = n_ubatch;
    cp.n_seq_max = n_seq;
    cp.kv_pad = kv_pad;
    cp.flash_attn = flash;
    return cp;
}

// Caps the CPU kernel path at AVX-512 while it lives. The tests that compare two caches split
// the same tokens into different ubatches; on the amx path a ubatch of 16 or more columns
// multiplies F16 weights on AMX tiles (BF16 hi / lo parts, ~1e-5 relative per product) and a
// smaller one with the F32 dot kernels, a difference of arithmetic, not of the caches. On the
// AVX-512 path both are F32 products, so the comparison sees only what the caches hold.
struct f32_products_only {
    std::string saved;
    bool had = false;
    f32_products_only() {
        if (const char * v = std::getenv("INFERD_CPU_ISA")) {
            had = true;
            saved = v;
        }
        if (!had || saved == "amx") setenv("INFERD_CPU_ISA", "avx512", 1);
    }
    ~f32_products_only() {
        if (had) setenv("INFERD_CPU_ISA", saved.c_str(), 1);
        else unsetenv("INFERD_CPU_ISA");
    }
};

// Decodes toks of seq at positions pos0.. (logits for all), in batches of at most n_batch.
std::vector<float> decode_seq(context & ctx, const std::vector<int32_t> & toks, int32_t pos0, int32_t seq) {
    std::vector<float> out;
    const size_t nv = size_t(ctx.n_vocab());
    for (size_t i = 0; i < toks.size(); i += ctx.params().n_batch) {
        llm_batch b;
        const size_t end = std::min(toks.size(), i + ctx.params().n_batch);
        for (size_t j = i; j < end; ++j) b.add(toks[j], pos0 + int32_t(j), seq, true);
        EXPECT_EQ(ctx.decode(b), 0) << ctx.last_error();
        for (size_t j = 0; j < end - i; ++j) {
            const float * r = ctx.logits(int32_t(j));
            if (!r) return {};
            out.insert(out.end(), r, r + nv);
        }
    }
    return out;
}

// The prompt, then a greedy continuation of n steps; returns the logits of the last prompt
// token and of every step.
std::vector<float> prompt_and_greedy(context & ctx, const std::vector<int32_t> & prompt, int n, int32_t seq = 0) {
    const size_t nv = size_t(ctx.n_vocab());
    std::vector<float> all = decode_seq(ctx, prompt, 0, seq);
    std::vector<float> out(all.end() - long(nv), all.end());
    for (int i = 0; i < n; ++i) {
        const int32_t tok = reference_argmax(out.data() + out.size() - nv, nv);
        const std::vector<float> r = decode_seq(ctx, {tok}, int32_t(prompt.size()) + i, seq);
        out.insert(out.end(), r.begin(), r.end());
    }
    return out;
}

}  // namespace

TEST(context_swa, small_window_cache_matches_the_reference) {
    INFERD_REQUIRE_TESTDATA(dir);
    for (const char * name : {"tiny-gemma3-f16", "tiny-gemma2-f16"}) {
        for (bool flash : {false, true}) {
            SCOPED_TRACE(std::string(name) + (flash ? " fused" : " plain"));
            reference_case ref;
            std::string err;
            ASSERT_TRUE(reference_load(dir, name, "p2", &ref, &err)) << err;
            std::unique_ptr<model> m = load(dir, name);
            context small(*m, params(16, 16, 1, flash));
            ASSERT_NE(small.kv_swa(), nullptr);
            EXPECT_LE(small.kv_swa()->size(), 32u);  // the window and one ubatch
            EXPECT_EQ(small.kv().size(), 512u);
            const std::vector<float> got = decode_seq(small, ref.prompt_tokens, 0, 0);
            ASSERT_FALSE(got.empty());
            const size_t nv = size_t(ref.n_vocab);
            const float * last = got.data() + got.size() - nv;
            EXPECT_LE(reference_rel_rms(last, ref.logits.data(), nv), 1.5e-2);
            // the greedy continuation up to the first near-tie, through the small cache
            int32_t tok = reference_argmax(last, nv);
            for (size_t j = 0; j < ref.greedy_tokens.size() && ref.greedy_top2_gap[j] >= 5e-2; ++j) {
                ASSERT_EQ(tok, ref.greedy_tokens[j]) << "step " << j;
                const std::vector<float> r = decode_seq(small, {tok}, int32_t(ref.prompt_tokens.size() + j), 0);
                tok = reference_argmax(r.data(), nv);
            }
            EXPECT_LE(small.kv_swa()->used(), 16u);  // only the window is left
        }
    }
}

TEST(context_swa, pruned_cache_equals_an_unpruned_one) {
    INFERD_REQUIRE_TESTDATA(dir);
    const f32_products_only same_arithmetic;
    std::unique_ptr<model> m = load(dir, "tiny-gemma3-f16");
    reference_case ref;
    std::string err;
    ASSERT_TRUE(reference_load(dir, "tiny-gemma3-f16", "p2", &ref, &err)) << err;
    const std::vector<int32_t> prompt(ref.prompt_tokens.begin(), ref.prompt_tokens.begin() + 60);
    context big(*m, params(256, 512));
    context small(*m, params(16, 16));
    EXPECT_EQ(big.kv_swa()->size(), 512u);
    const std::vector<float> a = prompt_and_greedy(big, prompt, 24);
    const std::vector<float> b = prompt_and_greedy(small, prompt, 24);
    EXPECT_LE(logits_max_rel(b, a), 1e-4);
}

TEST(context_swa, sequences_shared_prefix_and_resuming) {
    INFERD_REQUIRE_TESTDATA(dir);
    const f32_products_only same_arithmetic;
    std::unique_ptr<model> m = load(dir, "tiny-gemma3-f16");
    reference_case ref;
    std::string err;
    ASSERT_TRUE(reference_load(dir, "tiny-gemma3-f16", "p2", &ref, &err)) << err;
    const std::vector<int32_t> a(ref.prompt_tokens.begin(), ref.prompt_tokens.begin() + 40);
    std::vector<int32_t> b(a.begin(), a.begin() + 30);
    b.insert(b.end(), ref.prompt_tokens.begin() + 100, ref.prompt_tokens.begin() + 120);
    // Each alone, in a cache without pressure.
    context solo(*m, params(256, 512, 2));
    const std::vector<float> ra = prompt_and_greedy(solo, a, 20, 0);
    solo.clear();
    const std::vector<float> rb = prompt_and_greedy(solo, b, 20, 0);
    // Sequence 1 shares a's first 30 positions (copied while they are still in the window
    // cache), then both go on in the small cache, interleaved step by step.
    context small(*m, params(16, 16, 2));
    const size_t nv = size_t(m->hparams().n_vocab);
    decode_seq(small, std::vector<int32_t>(a.begin(), a.begin() + 30), 0, 0);
    ASSERT_TRUE(small.seq_resumable(0, 30));
    ASSERT_TRUE(small.seq_cp(0, 1, -1, -1));
    ASSERT_TRUE(small.seq_resumable(1, 30));
    std::vector<float> la = decode_seq(small, std::vector<int32_t>(a.begin() + 30, a.end()), 30, 0);
    std::vector<float> lb = decode_seq(small, std::vector<int32_t>(b.begin() + 30, b.end()), 30, 1);
    std::vector<float> ga(la.end() - long(nv), la.end()), gb(lb.end() - long(nv), lb.end());
    for (int i = 0; i < 20; ++i) {
        const int32_t ta = reference_argmax(ga.data() + ga.size() - nv, nv);
        const int32_t tb = reference_argmax(gb.data() + gb.size() - nv, nv);
        llm_batch batch;
        batch.add(ta, int32_t(a.size()) + i, 0, true);
        batch.add(tb, int32_t(b.size()) + i, 1, true);
        ASSERT_EQ(small.decode(batch), 0) << small.last_error();
        ga.insert(ga.end(), small.logits(0), small.logits(0) + nv);
        gb.insert(gb.end(), small.logits(1), small.logits(1) + nv);
    }
    EXPECT_LE(logits_max_rel(ga, ra), 1e-4);
    EXPECT_LE(logits_max_rel(gb, rb), 1e-4);
    // Sequence 0 can go on from its last positions, not from the shared prefix any more.
    const int32_t end_a = int32_t(a.size()) + 20;
    EXPECT_TRUE(small.seq_resumable(0, end_a));
    EXPECT_TRUE(small.seq_resumable(0, end_a - 1));
    EXPECT_FALSE(small.seq_resumable(0, 30));
}

TEST(context_swa, position_shift_matches_recomputation) {
    INFERD_REQUIRE_TESTDATA(dir);
    std::unique_ptr<model> m = load(dir, "tiny-gemma3-f16");
    reference_case ref;
    std::string err;
    ASSERT_TRUE(reference_load(dir, "tiny-gemma3-f16", "p2", &ref, &err)) << err;
    const std::vector<int32_t> toks(ref.prompt_tokens.begin(), ref.prompt_tokens.begin() + 40);
    const std::vector<int32_t> head(toks.begin(), toks.end() - 1);
    // Decoded at positions 9.., shifted to 0.. (local and global layers rotate with their own
    // bases), then the last token at its unshifted position.
    context_params cp = params(16, 16);
    cp.type_k = cp.type_v = GGML_TYPE_F32;
    context shifted(*m, cp);
    decode_seq(shifted, head, 9, 0);
    ASSERT_TRUE(shifted.seq_add(0, -1, -1, -9));
    const std::vector<float> got = decode_seq(shifted, {toks.back()}, int32_t(head.size()), 0);
    context direct(*m, cp);
    decode_seq(direct, head, 0, 0);
    const std::vector<float> want = decode_seq(direct, {toks.back()}, int32_t(head.size()), 0);
    EXPECT_LE(logits_max_rel(got, want), 2e-3);
}
