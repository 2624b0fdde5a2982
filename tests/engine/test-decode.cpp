// decode(): batch and ubatch invariance, KV sequence operations against recomputation, graph
// reuse, status codes, placement on a second (mock) device through the scheduler.
#include "engine/logits-compare.h"
#include "engine/context.h"
#include "engine/model.h"
#include "engine/reference-data.h"
#include "scheduler/mock-backend.h"
#include "testdata.h"

#include <gtest/gtest.h>

#include <cmath>

namespace {

std::unique_ptr<model> load(const std::string & dir, const char * name, model_params mp = {}) {
    return model::load(dir + "/models/" + name + ".gguf", mp);
}

context_params f32_params(uint32_t n_ubatch = 512, uint32_t n_seq = 1) {
    context_params cp;
    cp.n_ctx = 512;
    cp.n_threads = 2;
    cp.n_ubatch = n_ubatch;
    cp.n_seq_max = n_seq;
    cp.type_k = cp.type_v = GGML_TYPE_F32;
    return cp;
}

// Logits of every token of seq 0 decoded from position 0 in one batch.
std::vector<float> decode_all(context & ctx, const std::vector<int32_t> & toks, int32_t pos0 = 0, int32_t seq = 0) {
    llm_batch b;
    for (size_t i = 0; i < toks.size(); ++i) b.add(toks[i], pos0 + int32_t(i), seq, true);
    EXPECT_EQ(ctx.decode(b), 0) << ctx.last_error();
    std::vector<float> out;
    const size_t nv = size_t(ctx.n_vocab());
    for (size_t i = 0; i < toks.size(); ++i) {
        const float * r = ctx.logits(int32_t(i));
        if (!r) return {};
        out.insert(out.end(), r, r + nv);
    }
    return out;
}

std::vector<int32_t> prompt_of(const std::string & dir, const char * model, const char * p) {
    reference_case rc;
    std::string err;
    EXPECT_TRUE(reference_load(dir, model, p, &rc, &err)) << err;
    return rc.prompt_tokens;
}

}  // namespace

TEST(decode, ubatch_invariance) {
    INFERD_REQUIRE_TESTDATA(dir);
    auto m = load(dir, "tiny-llama-f32");
    const std::vector<int32_t> toks = prompt_of(dir, "tiny-llama-f32", "p2");
    context c512(*m, f32_params(512));
    const std::vector<float> ref = decode_all(c512, toks);
    for (uint32_t ub : {1u, 7u, 64u}) {
        context c(*m, f32_params(ub));
        EXPECT_LE(logits_max_rel(decode_all(c, toks), ref), 1e-5) << "n_ubatch " << ub;
    }
}

TEST(decode, batch_invariance) {
    INFERD_REQUIRE_TESTDATA(dir);
    auto m = load(dir, "tiny-llama-f32");
    const std::vector<int32_t> a = prompt_of(dir, "tiny-llama-f32", "p1");
    context alone(*m, f32_params(512, 4));
    const std::vector<float> ref = decode_all(alone, a);
    // The same sequence as seq 2 of a batch with three other sequences interleaved.
    context together(*m, f32_params(512, 4));
    llm_batch b;
    std::vector<int32_t> index_of_a;
    for (size_t i = 0; i < a.size(); ++i) {
        for (int32_t s = 0; s < 4; ++s) {
            const int32_t tok = s == 2 ? a[i] : int32_t((a[i] * (s + 3) + 17 * int32_t(i)) % 4000);
            if (s == 2) index_of_a.push_back(int32_t(b.size()));
            b.add(tok, int32_t(i), s, s == 2);
        }
    }
    ASSERT_EQ(together.decode(b), 0) << together.last_error();
    std::vector<float> got;
    for (int32_t i : index_of_a) {
        const float * r = together.logits(i);
        ASSERT_NE(r, nullptr);
        got.insert(got.end(), r, r + together.n_vocab());
    }
    EXPECT_LE(logits_max_rel(got, ref), 1e-5);
}

TEST(decode, remove_then_redecode_equals_original) {
    INFERD_REQUIRE_TESTDATA(dir);
    auto m = load(dir, "tiny-llama-f32");
    const std::vector<int32_t> toks = prompt_of(dir, "tiny-llama-f32", "p1");
    context c(*m, f32_params());
    const std::vector<float> ref = decode_all(c, toks);
    const size_t keep = 7, nv = size_t(c.n_vocab());
    ASSERT_TRUE(c.seq_rm(0, int32_t(keep), -1));
    EXPECT_EQ(c.seq_pos_max(0), int32_t(keep) - 1);
    const std::vector<int32_t> tail(toks.begin() + keep, toks.end());
    const std::vector<float> again = decode_all(c, tail, int32_t(keep));
    const std::vector<float> ref_tail(ref.begin() + long(keep * nv), ref.end());
    EXPECT_LE(logits_max_rel(again, ref_tail), 1e-5);
}

TEST(decode, copied_prefix_continues_like_recomputation) {
    INFERD_REQUIRE_TESTDATA(dir);
    auto m = load(dir, "tiny-llama-f32");
    const std::vector<int32_t> toks = prompt_of(dir, "tiny-llama-f32", "p1");
    const size_t split = 9, nv = size_t(m->hparams().n_vocab);
    context c(*m, f32_params(512, 2));
    const std::vector<int32_t> prefix(toks.begin(), toks.begin() + split), suffix(toks.begin() + split, toks.end());
    decode_all(c, prefix, 0, 0);
    const uint32_t used = c.kv().used();
    ASSERT_TRUE(c.seq_cp(0, 1, -1, -1));
    EXPECT_EQ(c.kv().used(), used) << "a copied prefix shares cells, it is not recomputed";
    const std::vector<float> via_copy = decode_all(c, suffix, int32_t(split), 1);
    context fresh(*m, f32_params(512, 2));
    const std::vector<float> full = decode_all(fresh, toks, 0, 1);
    EXPECT_LE(logits_max_rel(via_copy, std::vector<float>(full.begin() + long(split * nv), full.end())), 1e-5);
}

TEST(decode, position_shift_matches_recomputation) {
    INFERD_REQUIRE_TESTDATA(dir);
    auto m = load(dir, "tiny-llama-f32");
    const std::vector<int32_t> toks = prompt_of(dir, "tiny-llama-f32", "p1");
    // The prompt (but its last token) decoded at positions 9.., shifted to 0.., then the last
    // token at its own position: attention depends on relative positions only, so this equals
    // decoding the whole prompt from 0 once the cached keys are re-rotated.
    context c(*m, f32_params());
    const std::vector<int32_t> head(toks.begin(), toks.end() - 1);
    decode_all(c, head, 9);
    ASSERT_TRUE(c.seq_add(0, -1, -1, -9));
    EXPECT_TRUE(c.kv().has_shift());
    EXPECT_EQ(c.seq_pos_max(0), int32_t(head.size()) - 1);
    const std::vector<float> last = decode_all(c, {toks.back()}, int32_t(toks.size()) - 1);
    EXPECT_FALSE(c.kv().has_shift());
    context fresh(*m, f32_params());
    const std::vector<float> full = decode_all(fresh, toks);
    const size_t nv = size_t(c.n_vocab());
    EXPECT_LE(logits_max_rel(last, std::vector<float>(full.end() - long(nv), full.end())), 1e-4);
    // (Had the keys not been re-rotated, they would sit 9 positions away from the query's frame.)
    // Relative-position invariance itself: the same prompt decoded at 9.. throughout.
    context unshifted(*m, f32_params());
    decode_all(unshifted, head, 9);
    const std::vector<float> off = decode_all(unshifted, {toks.back()}, int32_t(toks.size()) + 8);
    EXPECT_LE(logits_max_rel(off, std::vector<float>(full.end() - long(nv), full.end())), 1e-4)
        << "decoding at offset positions throughout is the same computation";
}

TEST(decode, graph_reused_while_shape_is_unchanged) {
    INFERD_REQUIRE_TESTDATA(dir);
    auto m = load(dir, "tiny-llama-f16");
    context_params cp;
    cp.n_ctx = 512;
    cp.n_threads = 2;
    cp.kv_pad = 256;
    context c(*m, cp);
    decode_all(c, {1, 450, 4996 % 4096});
    const uint64_t builds = c.n_graph_builds();
    for (int32_t p = 3; p < 40; ++p) {
        llm_batch b;
        b.add(100 + p, p, 0, true);
        ASSERT_EQ(c.decode(b), 0);
    }
    // One build for the first one-token step; every later step reuses it.
    EXPECT_EQ(c.n_graph_builds(), builds + 1);
    EXPECT_EQ(c.n_graph_computes(), 38u);
}

TEST(decode, status_codes) {
    INFERD_REQUIRE_TESTDATA(dir);
    auto m = load(dir, "tiny-llama-f16");
    context_params cp;
    cp.n_ctx = 16;
    cp.n_threads = 1;
    cp.n_seq_max = 2;
    context c(*m, cp);
    llm_batch b;
    EXPECT_EQ(c.decode(b), decode_invalid);
    EXPECT_NE(c.last_error().find("empty"), std::string::npos);
    b.add(99999, 0, 0, true);
    EXPECT_EQ(c.decode(b), decode_invalid);
    EXPECT_NE(c.last_error().find("vocabulary"), std::string::npos);
    b.clear();
    b.add(5, 0, 2, true);
    EXPECT_EQ(c.decode(b), decode_invalid);
    EXPECT_NE(c.last_error().find("n_seq_max"), std::string::npos);
    b.clear();
    b.add(5, -1, 0, true);
    EXPECT_EQ(c.decode(b), decode_invalid);
    b.clear();
    for (int32_t i = 0; i < 17; ++i) b.add(5, i, 0, i == 16);
    EXPECT_EQ(c.decode(b), decode_no_kv_space);
    EXPECT_EQ(c.kv().used(), 0u) << "a batch that does not fit changes nothing";
    b.clear();
    for (int32_t i = 0; i < 16; ++i) b.add(5, i, 0, i == 15);
    EXPECT_EQ(c.decode(b), decode_ok);
    EXPECT_EQ(c.logits(0), nullptr);
    EXPECT_NE(c.logits(15), nullptr);
}

TEST(decode, layers_on_a_second_device_give_the_same_logits) {
    INFERD_REQUIRE_TESTDATA(dir);
    const std::vector<int32_t> toks = prompt_of(dir, "tiny-llama-f32", "p1");
    auto cpu_model = load(dir, "tiny-llama-f32");
    context cpu_ctx(*cpu_model, f32_params());
    const std::vector<float> ref = decode_all(cpu_ctx, toks);
    mock_device dev;
    for (int ngl : {2, -1}) {
        model_params mp;
        mp.n_gpu_layers = ngl;
        mp.devices = {&dev};
        auto m = load(dir, "tiny-llama-f32", mp);
        EXPECT_EQ(m->layer_device(0), ngl < 0 ? &dev : nullptr);
        EXPECT_EQ(m->layer_device(3), &dev);
        EXPECT_EQ(m->output_device(), ngl < 0 ? &dev : nullptr);
        context c(*m, f32_params());
        EXPECT_EQ(c.backend_names().size(), 2u);
        EXPECT_LE(logits_max_rel(decode_all(c, toks), ref), 1e-5) << "n_gpu_layers " << ngl;
    }
}

TEST(decode, gpu_layers_without_a_gpu_say_so_and_run_on_the_cpu) {
    INFERD_REQUIRE_TESTDATA(dir);
    model_params mp;
    mp.n_gpu_layers = 99;
    auto m = load(dir, "tiny-llama-f16", mp);
    bool said = false;
    for (const std::string & w : m->warnings()) said |= w.find("no GPU backend is available") != std::string::npos;
    EXPECT_TRUE(said);
    EXPECT_EQ(m->layer_device(0), nullptr);
    context_params cp;
    cp.n_ctx = 64;
    context c(*m, cp);
    EXPECT_EQ(c.backend_names(), std::vector<std::string>{"CPU"});
    EXPECT_EQ(decode_all(c, {1, 2, 3}).size(), size_t(3 * m->hparams().n_vocab));
}

TEST(decode, kv_cache_types) {
    INFERD_REQUIRE_TESTDATA(dir);
    auto m = load(dir, "tiny-llama-f32");
    const std::vector<int32_t> toks = prompt_of(dir, "tiny-llama-f32", "p1");
    context ref_ctx(*m, f32_params());
    const std::vector<float> ref = decode_all(ref_ctx, toks);
    const size_t nv = size_t(m->hparams().n_vocab);
    struct kv_case {
        ggml_type k, v;
        bool flash;
        double tol;
    };
    for (const kv_case & kc : {kv_case{GGML_TYPE_F16, GGML_TYPE_F16, false, 5e-3}, kv_case{GGML_TYPE_F16, GGML_TYPE_F16, true, 5e-3},
                               kv_case{GGML_TYPE_Q8_0, GGML_TYPE_F16, false, 3e-2},
                               kv_case{GGML_TYPE_Q8_0, GGML_TYPE_Q8_0, true, 3e-2}}) {
        context_params cp = f32_params();
        cp.type_k = kc.k;
        cp.type_v = kc.v;
        cp.flash_attn = kc.flash;
        context c(*m, cp);
        const std::vector<float> got = decode_all(c, toks);
        ASSERT_EQ(got.size(), ref.size());
        for (size_t p = 0; p < toks.size(); ++p) {
            EXPECT_LE(reference_rel_rms(got.data() + p * nv, ref.data() + p * nv, nv), kc.tol)
                << ggml_type_name(kc.k) << "/" << ggml_type_name(kc.v) << (kc.flash ? " fused" : " plain") << " position " << p;
        }
    }
    context_params bad = f32_params();
    bad.type_v = GGML_TYPE_Q8_0;
    bad.flash_attn = false;
    EXPECT_THROW(context(*m, bad), std::runtime_error);
    bad.type_v = GGML_TYPE_Q4_0;
    bad.flash_attn = true;
    EXPECT_THROW(context(*m, bad), std::runtime_error);
}
