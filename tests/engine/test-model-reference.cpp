// Every reference of ../shared/testdata/reference: logits at each position within the README's
// tolerance, top-1 agreement where the reference is not a near-tie, and the greedy
// continuation up to the first near-tie; with the plain attention path and the fused one.
// INFERD_TEST_N_GPU_LAYERS=all|half|N runs the same with layers on a GPU (make gpu-check).
#include "engine/context.h"
#include "engine/model.h"
#include "engine/reference-data.h"
#include "ggml/gguf.h"
#include "testdata.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <set>

namespace {

std::string reference_model_arch(const std::string & path, uint64_t * n_layer = nullptr) {
    std::unique_ptr<gguf_file> f;
    gguf_open_options oo;
    oo.load_tensor_data = false;
    std::string arch;
    if (gguf_file::open(path, oo, &f)) {
        f->metadata().get_string("general.architecture", &arch);
        if (n_layer) f->metadata().get_uint(arch + ".block_count", n_layer);
    }
    return arch;
}

// Layers on a GPU, from INFERD_TEST_N_GPU_LAYERS (make gpu-check): "all", "half" or a number;
// 0 (the CPU) when unset.
int32_t test_n_gpu_layers(const std::string & path) {
    const char * v = std::getenv("INFERD_TEST_N_GPU_LAYERS");
    if (!v || !*v) return 0;
    const std::string s(v);
    if (s == "all") return -1;
    uint64_t n_layer = 0;
    reference_model_arch(path, &n_layer);
    if (s == "half") return int32_t(n_layer / 2);
    return std::atoi(v);
}

struct run_config {
    bool flash_attn;
};

// Decodes the prompt (logits for the rows the reference has), compares them, then continues
// greedily and compares the continuation.
void check_reference(const std::string & dir, const std::string & name, const std::string & prompt,
                     const run_config & rc) {
    reference_case ref;
    std::string err;
    ASSERT_TRUE(reference_load(dir, name, prompt, &ref, &err)) << err;
    const reference_tolerance tol = reference_tolerance_for(name);
    const std::string path = dir + "/models/" + name + ".gguf";
    model_params mp;
    mp.n_gpu_layers = test_n_gpu_layers(path);
    std::unique_ptr<model> m = model::load(path, mp);
    ASSERT_EQ(m->hparams().n_vocab, ref.n_vocab);
    if (mp.n_gpu_layers != 0) {
        ASSERT_FALSE(m->gpu_devices().empty()) << "INFERD_TEST_N_GPU_LAYERS is set but no GPU device holds layers";
    }
    context_params cp;
    cp.n_ctx = 512;
    cp.n_threads = 2;
    cp.flash_attn = rc.flash_attn;
    context ctx(*m, cp);
    const size_t n_prompt = ref.prompt_tokens.size();
    llm_batch b;
    for (size_t i = 0; i < n_prompt; ++i) {
        b.add(ref.prompt_tokens[i], int32_t(i), 0, ref.n_rows == n_prompt || i + 1 == n_prompt);
    }
    ASSERT_EQ(ctx.decode(b), 0) << ctx.last_error();
    const size_t nv = size_t(ref.n_vocab);
    double worst = 0;
    for (size_t r = 0; r < ref.n_rows; ++r) {
        const size_t i = ref.n_rows == 1 ? n_prompt - 1 : r;
        const float * ours = ctx.logits(int32_t(i));
        ASSERT_NE(ours, nullptr);
        const float * want = ref.logits.data() + r * nv;
        const double e = reference_rel_rms(ours, want, nv);
        worst = std::max(worst, e);
        if (std::getenv("INFERD_TEST_VERBOSE")) std::printf("  position %zu: rel rms %.3e\n", i, e);
        EXPECT_LE(e, tol.rel_rms) << name << "." << prompt << " position " << i;
        if (reference_top2_gap(want, nv) >= tol.top2_gap) {
            EXPECT_EQ(reference_argmax(ours, nv), reference_argmax(want, nv)) << name << "." << prompt << " position " << i;
        }
    }
    // Greedy continuation up to the first near-tie.
    int32_t tok = reference_argmax(ctx.logits(int32_t(n_prompt - 1)), nv);
    size_t matched = 0;
    for (size_t j = 0; j < ref.greedy_tokens.size(); ++j) {
        if (ref.greedy_top2_gap[j] < tol.top2_gap) {
            if (std::getenv("INFERD_TEST_VERBOSE")) {
                std::printf("  near-tie at step %zu (gap %.4f); ours %d ref %d\n", j, ref.greedy_top2_gap[j], tok,
                            ref.greedy_tokens[j]);
            }
            break;
        }
        ASSERT_EQ(tok, ref.greedy_tokens[j]) << name << "." << prompt << " greedy step " << j;
        ++matched;
        b.clear();
        b.add(tok, int32_t(n_prompt + j), 0, true);
        ASSERT_EQ(ctx.decode(b), 0) << ctx.last_error();
        tok = reference_argmax(ctx.logits(0), nv);
    }
    if (std::getenv("INFERD_TEST_VERBOSE")) {  // how far the continuation goes on past near-ties
        size_t j = matched;
        for (; j < ref.greedy_tokens.size() && tok == ref.greedy_tokens[j]; ++j) {
            b.clear();
            b.add(tok, int32_t(n_prompt + j), 0, true);
            if (ctx.decode(b) != 0) break;
            tok = reference_argmax(ctx.logits(0), nv);
        }
        std::printf("  identical prefix of the continuation: %zu/%zu\n", j, ref.greedy_tokens.size());
    }
    std::printf("%-22s %s %s: worst rel rms %.2e (tol %.1e), greedy matched %zu/%zu\n", name.c_str(),
                prompt.c_str(), rc.flash_attn ? "fused" : "plain", worst, tol.rel_rms, matched, ref.greedy_tokens.size());
}

// The architectures of the shipped reference models (their general.architecture values).
const std::set<std::string> k_reference_archs = {"llama", "qwen2", "gpt2", "qwen3", "qwen3moe", "gemma2", "gemma3", "phi3"};

void check_all(const run_config & rc) {
    INFERD_REQUIRE_TESTDATA(dir);
    const std::vector<std::string> models = reference_models(dir);
    ASSERT_EQ(models.size(), 26u) << "expected the 26 shipped model files with logit references";
    const char * only = std::getenv("INFERD_TEST_MODELS");  // comma-separated names, for debugging
    for (const std::string & name : models) {
        if (only != nullptr) {
            const std::string list = std::string(",") + only + ",";
            if (list.find("," + name + ",") == std::string::npos) continue;
        }
        const std::string arch = reference_model_arch(dir + "/models/" + name + ".gguf");
        if (!k_reference_archs.count(arch)) {
            std::printf("%-22s skipped: architecture '%s' is not supported\n", name.c_str(), arch.c_str());
            continue;
        }
        for (const char * p : {"p1", "p2"}) {
            SCOPED_TRACE(name + "." + p);
            check_reference(dir, name, p, rc);
        }
    }
}

}  // namespace

TEST(model_reference, plain_attention) { check_all({false}); }
TEST(model_reference, fused_attention) { check_all({true}); }
