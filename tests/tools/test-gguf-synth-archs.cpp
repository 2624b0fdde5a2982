// Tests of inferd-gguf synth's newer architectures (qwen3, qwen3moe, llama with experts, gemma2,
// gemma3, phi3): written with the shapes of the tiny testdata models, a file has exactly their
// metadata keys (and values) and their tensor table; the bytes depend on the seed only; routers
// route; the engine loads every one and decodes finite, input-dependent logits; the benchmark
// shapes are accepted; bad shapes are usage errors naming the flag.
#include "engine/context.h"
#include "engine/model.h"
#include "gguf-synth-impl.h"
#include "gguf-synth.h"
#include "gguf-inspect.h"
#include "testdata.h"
#include "gguf-synth-test-util.h"
#include "tools-test-util.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>

namespace {

struct arch_case {
    const char * model;                // tiny-MODEL-f16.gguf in the testdata
    std::vector<std::string> args;     // the shape, from the testdata README's model table
};

// The shapes of the tiny models (their vocabulary comes from --vocab: the model file itself).
const std::vector<arch_case> & arch_cases() {
    static const std::vector<arch_case> cases = {
        {"qwen3", {"--arch", "qwen3", "--n-embd", "256", "--n-layer", "2", "--n-head", "4", "--n-head-kv", "2",
                   "--n-ff", "512", "--head-dim", "128", "--n-ctx", "2048"}},
        {"qwen3moe", {"--arch", "qwen3moe", "--n-embd", "256", "--n-layer", "2", "--n-head", "8", "--n-head-kv", "2",
                      "--n-ff", "768", "--head-dim", "64", "--n-expert", "8", "--n-expert-used", "2", "--n-ff-exp",
                      "256", "--n-ctx", "2048"}},
        {"mixtral", {"--arch", "llama", "--n-embd", "256", "--n-layer", "2", "--n-head", "8", "--n-head-kv", "4",
                     "--n-ff", "256", "--n-expert", "4", "--n-expert-used", "2", "--rope-base", "1e6", "--n-ctx",
                     "2048"}},
        {"gemma2", {"--arch", "gemma2", "--n-embd", "256", "--n-layer", "3", "--n-head", "4", "--n-head-kv", "2",
                    "--n-ff", "512", "--head-dim", "64", "--sliding-window", "16", "--attn-softcap", "10",
                    "--final-softcap", "30"}},
        {"gemma3", {"--arch", "gemma3", "--n-embd", "256", "--n-layer", "6", "--n-head", "4", "--n-head-kv", "1",
                    "--n-ff", "256", "--head-dim", "64", "--sliding-window", "16"}},
        {"phi3", {"--arch", "phi3", "--n-embd", "256", "--n-layer", "2", "--n-head", "8", "--n-head-kv", "8",
                  "--n-ff", "256"}},
    };
    return cases;
}

int run_tool(const std::vector<std::string> & args, std::string * out_text = nullptr, std::string * err_text = nullptr) {
    tools_capture out, err;
    const int rc = gguf_tool_main(args, out.get(), err.get());
    if (out_text) *out_text = out.text();
    if (err_text) *err_text = err.text();
    return rc;
}

// The shape of a tiny qwen3moe-like model with the built-in vocabulary, for quick writes.
std::vector<std::string> small_moe_shape() {
    return {"--arch", "qwen3moe", "--n-embd", "64", "--n-layer", "2", "--n-head", "4", "--n-head-kv", "2",
            "--head-dim", "32", "--n-expert", "8", "--n-expert-used", "2", "--n-ff-exp", "32", "--n-vocab", "300"};
}

std::vector<std::string> small_gemma3_shape() {
    return {"--arch", "gemma3", "--n-embd", "64", "--n-layer", "3", "--n-head", "4", "--n-head-kv", "1",
            "--head-dim", "32", "--n-ff", "128", "--n-vocab", "300", "--sliding-window", "8"};
}

// Small shapes of every newer architecture with the built-in vocabulary (300 tokens).
std::vector<std::vector<std::string>> small_shapes() {
    const std::vector<std::string> common = {"--n-layer", "3", "--n-vocab", "300", "--n-ctx", "256"};
    std::vector<std::vector<std::string>> shapes = {
        {"--arch", "qwen3", "--n-embd", "64", "--n-head", "4", "--n-head-kv", "2", "--head-dim", "32", "--n-ff", "128"},
        {"--arch", "qwen3moe", "--n-embd", "64", "--n-head", "4", "--n-head-kv", "2", "--head-dim", "32",
         "--n-expert", "8", "--n-expert-used", "2", "--n-ff-exp", "32"},
        {"--arch", "llama", "--n-embd", "64", "--n-head", "4", "--n-head-kv", "2", "--n-ff", "32", "--n-expert", "4",
         "--n-expert-used", "2"},
        {"--arch", "gemma2", "--n-embd", "64", "--n-head", "4", "--n-head-kv", "2", "--head-dim", "32", "--n-ff",
         "128", "--sliding-window", "4"},
        {"--arch", "gemma3", "--n-embd", "64", "--n-head", "4", "--n-head-kv", "1", "--head-dim", "32", "--n-ff",
         "128", "--sliding-window", "4"},
        {"--arch", "phi3", "--n-embd", "64", "--n-head", "4", "--n-head-kv", "2", "--n-ff", "128"},
    };
    for (std::vector<std::string> & s : shapes) s.insert(s.end(), common.begin(), common.end());
    return shapes;
}

// Decodes the tokens one at a time: every logit finite, not all equal, and the rows depend on
// the input.
void expect_decodes(const model & m, const std::vector<int32_t> & ids) {
    context_params cp;
    cp.n_ctx = 64;
    cp.n_threads = 2;
    context ctx(m, cp);
    std::vector<std::vector<float>> rows;
    for (size_t i = 0; i < ids.size(); ++i) {
        llm_batch b;
        b.add(ids[i], int32_t(i), 0, true);
        ASSERT_EQ(ctx.decode(b), decode_ok) << ctx.last_error();
        const float * row = ctx.logits(0);
        ASSERT_NE(row, nullptr);
        float lo = row[0], hi = row[0];
        for (int32_t v = 0; v < ctx.n_vocab(); ++v) {
            ASSERT_TRUE(std::isfinite(row[v])) << "token " << i << " logit " << v;
            lo = std::min(lo, row[v]);
            hi = std::max(hi, row[v]);
        }
        EXPECT_GT(hi - lo, 1e-2f) << "token " << i << ": all logits (nearly) equal";
        rows.emplace_back(row, row + ctx.n_vocab());
    }
    for (size_t i = 1; i < rows.size(); ++i) EXPECT_NE(rows[i], rows[i - 1]) << "logits ignore the input";
}

}  // namespace

TEST(gguf_synth_archs, the_engine_loads_and_decodes_every_arch) {
    tools_scratch_dir dir;
    for (const std::vector<std::string> & shape : small_shapes()) {
        SCOPED_TRACE(shape[1] + (shape[1] == "llama" ? " with experts" : ""));
        const std::string out = dir.file(shape[1] + ".gguf");
        std::string err_text;
        ASSERT_EQ(run_tool(synth_args(shape, {}, out), nullptr, &err_text), 0) << err_text;
        std::unique_ptr<model> m = model::load(out, model_params{});
        EXPECT_EQ(std::string(llm_arch_name(m->hparams().arch)), shape[1]);
        EXPECT_EQ(m->hparams().n_layer, 3u);
        EXPECT_EQ(m->hparams().n_vocab, 300);
        // More tokens than the sliding window (4) of the Gemma shapes.
        expect_decodes(*m, {5, 260, 17, 299, 42, 7, 100, 3});
    }
}

TEST(gguf_synth_archs, keys_and_tensors_match_the_testdata_models) {
    INFERD_REQUIRE_TESTDATA(data);
    tools_scratch_dir dir;
    for (const arch_case & c : arch_cases()) {
        SCOPED_TRACE(c.model);
        const std::string ref_path = data + "/models/tiny-" + c.model + "-f16.gguf";
        const std::string out = dir.file(std::string(c.model) + ".gguf");
        std::string err_text;
        ASSERT_EQ(run_tool(synth_args(c.args, {"--vocab", ref_path}, out), nullptr, &err_text), 0) << err_text;
        std::unique_ptr<gguf_file> ref = open_gguf(ref_path);
        std::unique_ptr<gguf_file> ours = open_gguf(out);
        ASSERT_TRUE(ref && ours);
        // Every key (general.name aside) with the same type and value, and no other key.
        std::set<std::string> ref_keys, our_keys;
        for (const gguf_kv & kv : ref->metadata().kvs()) {
            if (kv.key == "general.name") continue;
            ref_keys.insert(kv.key);
            const gguf_value * v = ours->metadata().find(kv.key);
            ASSERT_NE(v, nullptr) << "missing key " << kv.key;
            EXPECT_TRUE(*v == kv.value) << kv.key << ": " << v->to_string() << " vs " << kv.value.to_string();
        }
        for (const gguf_kv & kv : ours->metadata().kvs()) {
            if (kv.key != "general.name") our_keys.insert(kv.key);
        }
        EXPECT_EQ(our_keys, ref_keys);
        EXPECT_EQ(tensor_table(*ours), tensor_table(*ref));
    }
}

TEST(gguf_synth_archs, same_seed_same_bytes) {
    tools_scratch_dir dir;
    for (const std::vector<std::string> & shape : {small_moe_shape(), small_gemma3_shape()}) {
        SCOPED_TRACE(shape[1]);
        std::string err_text;
        ASSERT_EQ(run_tool(synth_args(shape, {"--seed", "5"}, dir.file("a.gguf")), nullptr, &err_text), 0) << err_text;
        std::vector<std::string> one_thread = synth_args(shape, {"--seed", "5"}, dir.file("b.gguf"));
        one_thread[one_thread.size() - 2] = "1";  // -t 1
        ASSERT_EQ(run_tool(one_thread, nullptr, &err_text), 0) << err_text;
        ASSERT_EQ(run_tool(synth_args(shape, {"--seed", "6"}, dir.file("c.gguf")), nullptr, &err_text), 0) << err_text;
        const std::vector<char> a = tools_read_file(dir.file("a.gguf"));
        EXPECT_FALSE(a.empty());
        EXPECT_EQ(a, tools_read_file(dir.file("b.gguf")));
        const std::vector<char> c = tools_read_file(dir.file("c.gguf"));
        ASSERT_EQ(a.size(), c.size());
        EXPECT_NE(a, c);
    }
}

// Tokens pick different experts: the top-k of router · rms_norm(embedding row) over many tokens
// covers most experts, and no expert takes every token.
TEST(gguf_synth_archs, routers_spread_tokens_over_experts) {
    tools_scratch_dir dir;
    const std::string out = dir.file("moe.gguf");
    std::vector<std::string> shape = small_moe_shape();
    ASSERT_EQ(run_tool(synth_args(shape, {"--type", "f32"}, out)), 0);
    std::unique_ptr<gguf_file> f = open_gguf(out);
    ASSERT_TRUE(f);
    const gguf_tensor_info * router = f->find_tensor("blk.0.ffn_gate_inp.weight");
    const gguf_tensor_info * embd = f->find_tensor("token_embd.weight");
    ASSERT_TRUE(router && embd);
    ASSERT_EQ(router->type, GGML_TYPE_F32);
    const int64_t n_embd = router->ne[0], n_expert = router->ne[1], n_tokens = embd->ne[1];
    const float * w = static_cast<const float *>(f->tensor_data(*router));
    const float * x = static_cast<const float *>(f->tensor_data(*embd));
    double sum2 = 0;
    for (int64_t i = 0; i < n_embd * n_expert; ++i) sum2 += double(w[i]) * w[i];
    EXPECT_NEAR(std::sqrt(sum2 / double(n_embd * n_expert)), 1.0 / std::sqrt(double(n_embd)), 0.02);
    std::vector<int> picked(size_t(n_expert), 0);
    for (int64_t t = 0; t < n_tokens; ++t) {
        const float * row = x + t * n_embd;
        double ss = 0;
        for (int64_t i = 0; i < n_embd; ++i) ss += double(row[i]) * row[i];
        const double inv_rms = 1.0 / std::sqrt(ss / double(n_embd) + 1e-6);
        std::vector<std::pair<double, int>> logits;
        for (int64_t e = 0; e < n_expert; ++e) {
            double l = 0;
            for (int64_t i = 0; i < n_embd; ++i) l += double(w[e * n_embd + i]) * row[i] * inv_rms;
            logits.emplace_back(l, int(e));
        }
        std::sort(logits.rbegin(), logits.rend());
        EXPECT_GT(logits[0].first - logits.back().first, 0.5) << "token " << t << ": flat router logits";
        for (int k = 0; k < 2; ++k) picked[size_t(logits[size_t(k)].second)]++;
    }
    for (int64_t e = 0; e < n_expert; ++e) {
        EXPECT_GT(picked[size_t(e)], 0) << "expert " << e << " is never used";
        EXPECT_LT(picked[size_t(e)], n_tokens) << "expert " << e << " takes every token";
    }
}

TEST(gguf_synth_archs, defaults_and_options) {
    tools_scratch_dir dir;
    // gemma3: the defaults of Gemma 3 1B (window 512, local RoPE base 1e4), the gemma template.
    std::vector<std::string> g3 = small_gemma3_shape();
    g3.erase(g3.end() - 2, g3.end());  // no --sliding-window
    ASSERT_EQ(run_tool(synth_args(g3, {}, dir.file("g3.gguf"))), 0);
    std::unique_ptr<gguf_file> f = open_gguf(dir.file("g3.gguf"));
    ASSERT_TRUE(f);
    uint64_t u = 0;
    double d = 0;
    ASSERT_TRUE(f->metadata().get_uint("gemma3.attention.sliding_window", &u));
    EXPECT_EQ(u, 512u);
    ASSERT_TRUE(f->metadata().get_float("gemma3.rope.freq_base_swa", &d));
    EXPECT_EQ(d, 1e4);
    ASSERT_TRUE(f->metadata().get_float("gemma3.rope.freq_base", &d));
    EXPECT_EQ(d, 1e6);
    std::string tmpl;
    ASSERT_TRUE(f->metadata().get_string("tokenizer.chat_template", &tmpl));
    EXPECT_NE(tmpl.find("<start_of_turn>"), std::string::npos);
    EXPECT_EQ(f->find_tensor("output.weight"), nullptr);
    // The query is n_head * head_dim wide, independent of n_embd.
    ASSERT_NE(f->find_tensor("blk.2.attn_q.weight"), nullptr);
    EXPECT_EQ(f->find_tensor("blk.2.attn_q.weight")->ne[1], 4 * 32);
    EXPECT_EQ(f->find_tensor("blk.2.attn_output.weight")->ne[0], 4 * 32);
    // qwen3moe: n_ff defaults to n_ff_exp * n_expert_used; --untied-output adds output.weight.
    ASSERT_EQ(run_tool(synth_args(small_moe_shape(), {"--untied-output"}, dir.file("moe.gguf"))), 0);
    f = open_gguf(dir.file("moe.gguf"));
    ASSERT_TRUE(f);
    ASSERT_TRUE(f->metadata().get_uint("qwen3moe.feed_forward_length", &u));
    EXPECT_EQ(u, 64u);
    EXPECT_NE(f->find_tensor("output.weight"), nullptr);
    // gemma2 records a RoPE base only when one is given (Gemma 2 files carry none).
    const std::vector<std::string> g2 = {"--arch", "gemma2", "--n-embd", "64", "--n-layer", "2", "--n-head", "2",
                                         "--head-dim", "32", "--n-ff", "128", "--n-vocab", "300"};
    ASSERT_EQ(run_tool(synth_args(g2, {}, dir.file("g2.gguf"))), 0);
    f = open_gguf(dir.file("g2.gguf"));
    ASSERT_TRUE(f);
    EXPECT_FALSE(f->metadata().contains("gemma2.rope.freq_base"));
    ASSERT_TRUE(f->metadata().get_float("gemma2.attn_logit_softcapping", &d));
    EXPECT_EQ(d, 50.0);
    ASSERT_EQ(run_tool(synth_args(g2, {"--rope-base", "20000"}, dir.file("g2r.gguf"))), 0);
    f = open_gguf(dir.file("g2r.gguf"));
    ASSERT_TRUE(f);
    ASSERT_TRUE(f->metadata().get_float("gemma2.rope.freq_base", &d));
    EXPECT_EQ(d, 20000.0);
}

// The benchmark shapes are accepted and have the expected sizes (nothing is written).
TEST(gguf_synth_archs, benchmark_shapes) {
    synth_params moe;
    moe.arch = "qwen3moe";
    moe.n_embd = 2048, moe.n_layer = 16, moe.n_head = 32, moe.n_head_kv = 4, moe.head_dim = 128;
    moe.n_expert = 64, moe.n_expert_used = 8, moe.n_ff_exp = 768, moe.n_vocab = 32000;
    moe.out_path = "unused.gguf";
    std::vector<std::string> warnings;
    std::string err;
    ASSERT_TRUE(synth_params_check(&moe, &warnings, &err)) << err;
    EXPECT_TRUE(warnings.empty());
    uint64_t n = 0;
    for (const synth_tensor & t : synth_tensor_list(moe)) n += uint64_t(t.n_elements());
    // Per layer: norms, Q/O 2048 x 4096, K/V 2048 x 512, q/k norms, router, 3 experts' matrices.
    const uint64_t moe_layer = 2 * 2048 + 2 * 2048 * 4096 + 2 * 2048 * 512 + 2 * 128 + 2048 * 64 +
                               3ull * 2048 * 768 * 64;
    EXPECT_EQ(n, 2048ull * 32000 + 2048 + 16 * moe_layer);  // about 5.2 B, tied output

    synth_params g;
    g.arch = "gemma3";
    g.n_embd = 1152, g.n_layer = 26, g.n_head = 4, g.n_head_kv = 1, g.head_dim = 256, g.n_ff = 6912;
    g.n_vocab = 32000, g.sliding_window = 512, g.out_path = "unused.gguf";
    ASSERT_TRUE(synth_params_check(&g, &warnings, &err)) << err;
    n = 0;
    for (const synth_tensor & t : synth_tensor_list(g)) n += uint64_t(t.n_elements());
    const uint64_t g_layer = 4 * 1152 + 2 * 1152 * 1024 + 2 * 1152 * 256 + 2 * 256 + 3 * 1152 * 6912;
    EXPECT_EQ(n, 1152ull * 32000 + 1152 + 26 * g_layer);  // about 0.73 B
}

TEST(gguf_synth_archs, usage_errors_name_the_flag) {
    tools_scratch_dir dir;
    const std::string out = dir.file("m.gguf");
    auto with = [&](std::vector<std::string> shape, const std::string & flag, const std::string & value) {
        auto it = std::find(shape.begin(), shape.end(), flag);
        if (it != shape.end()) {
            if (value.empty()) {
                shape.erase(it, it + 2);
            } else {
                *(it + 1) = value;
            }
        } else {
            shape.insert(shape.end(), {flag, value});
        }
        return synth_args(shape, {}, out);
    };
    const std::vector<std::string> moe = small_moe_shape(), g3 = small_gemma3_shape();
    std::vector<std::string> llama = {"--arch", "llama", "--n-embd", "64", "--n-layer", "1", "--n-head", "4",
                                      "--n-ff", "128", "--n-vocab", "300"};
    std::vector<std::string> g3_no_head_dim = g3;
    g3_no_head_dim.erase(std::find(g3_no_head_dim.begin(), g3_no_head_dim.end(), "--head-dim"),
                         std::find(g3_no_head_dim.begin(), g3_no_head_dim.end(), "--head-dim") + 2);
    std::vector<std::string> untied_gemma = synth_args(g3, {"--untied-output"}, out);
    struct bad_case {
        std::vector<std::string> args;
        const char * expect;
    };
    const std::vector<bad_case> cases = {
        {with(moe, "--n-expert", ""), "--n-expert is required"},
        {with(moe, "--n-expert-used", ""), "--n-expert-used is required"},
        {with(moe, "--n-ff-exp", ""), "--n-ff-exp"},
        {with(moe, "--n-expert-used", "9"), "--n-expert-used 9 exceeds --n-expert 8"},
        {with(moe, "--n-expert", "0"), "--n-expert"},
        {with(moe, "--n-expert", "many"), "--n-expert"},
        {with(moe, "--n-head-kv", "3"), "--n-head-kv"},
        {with(moe, "--head-dim", "31"), "even"},
        {with(moe, "--sliding-window", "16"), "--sliding-window is not an option of qwen3moe"},
        {with(g3_no_head_dim, "--n-head", "3"), "(or give --head-dim)"},
        {with(g3, "--n-expert", "4"), "--n-expert is not an option of gemma3"},
        {with(g3, "--attn-softcap", "50"), "--attn-softcap is not an option of gemma3"},
        {with(g3, "--rope-base-swa", "-1"), "--rope-base-swa"},
        {with(g3, "--rope-base", "inf"), "--rope-base"},
        {untied_gemma, "--untied-output"},
        {with(llama, "--n-expert-used", "2"), "--n-expert-used wants --n-expert"},
        {with(llama, "--n-ff-exp", "64"), "--n-ff-exp is not an option of llama"},
        {with(llama, "--head-dim", "32"), "--head-dim is not an option of llama"},
        {with(llama, "--n-expert", "4"), "--n-expert-used is required"},
        {synth_args({"--arch", "gpt2", "--n-embd", "64", "--n-layer", "1", "--n-head", "4", "--n-ff", "128",
                     "--n-vocab", "300", "--rope-base", "1e4"},
                    {}, out),
         "--rope-base is not an option of gpt2"},
        {synth_args({"--arch", "qwen3", "--n-embd", "96", "--n-layer", "1", "--n-head", "5", "--n-ff", "128",
                     "--n-vocab", "300"},
                    {}, out),
         "--head-dim"},
    };
    for (size_t i = 0; i < cases.size(); ++i) {
        SCOPED_TRACE(i);
        std::string err_text;
        EXPECT_EQ(run_tool(cases[i].args, nullptr, &err_text), 2) << err_text;
        EXPECT_NE(err_text.find(cases[i].expect), std::string::npos) << err_text;
    }
    EXPECT_FALSE(std::filesystem::exists(out));
}
