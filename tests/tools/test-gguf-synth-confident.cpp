// Tests of inferd-gguf synth --confident: each token predicts its successor (synth_bigram_next)
// with nearly all the probability, through the layers and at any position, a Q4_0 copy predicts
// the same, and the option is refused where it cannot work.
#include "engine/context.h"
#include "engine/model.h"
#include "gguf-inspect.h"
#include "gguf-synth-impl.h"
#include "gguf-synth.h"
#include "quantize-model.h"
#include "tools-test-util.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>

namespace {

synth_params confident_params(const std::string & out) {
    synth_params p;
    p.arch = "llama";
    p.n_embd = 256;
    p.n_layer = 2;
    p.n_head = 4;
    p.n_head_kv = 2;
    p.n_ff = 512;
    p.n_vocab = 1000;
    p.n_ctx = 256;
    p.seed = 3;
    p.confident = true;
    p.out_path = out;
    p.n_threads = 2;
    return p;
}

// The predicted token after token t (the range synth_confident_apply uses).
int32_t successor(const synth_params & p, int32_t t) {
    return int32_t(synth_bigram_next(t, 256, p.n_vocab - synth_min_vocab(p.chat_template)));
}

// Greedy continuation of prompt, n tokens; *min_p the smallest top probability seen.
std::vector<int32_t> greedy(const model & m, const std::vector<int32_t> & prompt, int n, double * min_p) {
    context_params cp;
    cp.n_ctx = 128;
    cp.n_threads = 2;
    context ctx(m, cp);
    llm_batch b;
    for (size_t i = 0; i < prompt.size(); ++i) b.add(prompt[i], int32_t(i), 0, i + 1 == prompt.size());
    std::vector<int32_t> out;
    *min_p = 1.0;
    for (int k = 0; k < n; ++k) {
        EXPECT_EQ(ctx.decode(b), decode_ok) << ctx.last_error();
        const float * row = ctx.logits(int32_t(b.size()) - 1);
        const int32_t nv = ctx.n_vocab();
        const int32_t best = int32_t(std::max_element(row, row + nv) - row);
        double sum = 0;
        for (int32_t v = 0; v < nv; ++v) sum += std::exp(double(row[v]) - double(row[best]));
        *min_p = std::min(*min_p, 1.0 / sum);
        out.push_back(best);
        b.clear();
        b.add(best, int32_t(prompt.size()) + k, 0, true);
    }
    return out;
}

}  // namespace

TEST(gguf_synth_confident, each_token_predicts_its_successor) {
    tools_scratch_dir dir;
    synth_params p = confident_params(dir.file("c.gguf"));
    std::vector<std::string> warnings;
    std::string err;
    ASSERT_TRUE(synth_params_check(&p, &warnings, &err)) << err;
    ASSERT_TRUE(synth_model_write(p, nullptr, &err)) << err;
    std::unique_ptr<model> m = model::load(p.out_path, model_params{});
    EXPECT_NE(m->weights().output, m->weights().tok_embd);
    const std::vector<int32_t> prompt = {5, 700, 301, 42, 999, 260};
    double min_p = 0;
    const std::vector<int32_t> got = greedy(*m, prompt, 24, &min_p);
    std::vector<int32_t> want;
    int32_t t = prompt.back();
    std::set<int32_t> distinct;
    for (int k = 0; k < 24; ++k) {
        t = successor(p, t);
        want.push_back(t);
        distinct.insert(t);
        EXPECT_GE(t, 256);  // a merged token: no byte or special token is predicted
        EXPECT_LT(t, p.n_vocab - (synth_min_vocab(p.chat_template) - 256));
    }
    EXPECT_EQ(got, want);
    EXPECT_GT(min_p, 0.9);
    EXPECT_GT(distinct.size(), 20u);  // a long cycle, not a fixed point

    // A Q4_0 copy (as a draft model would be) continues the same way.
    quantize_model_params q;
    q.input_path = p.out_path;
    q.output_path = dir.file("q4_0.gguf");
    q.mix = quantize_mix_find("Q4_0");
    q.n_threads = 2;
    quantize_model_stats st;
    ASSERT_TRUE(quantize_model(q, &st, &err)) << err;
    std::unique_ptr<model> mq = model::load(q.output_path, model_params{});
    double min_pq = 0;
    EXPECT_EQ(greedy(*mq, prompt, 24, &min_pq), want);
    EXPECT_GT(min_pq, 0.9);
}

TEST(gguf_synth_confident, successor_map_covers_the_range) {
    for (int64_t count : {1, 2, 7, 743, 12345, 31739}) {
        std::set<int64_t> seen;
        int64_t t = 256;
        for (int64_t k = 0; k < count; ++k) {
            seen.insert(t);
            t = synth_bigram_next(t, 256, count);
        }
        EXPECT_EQ(t, 256) << count;                       // back at the start after count steps
        EXPECT_EQ(int64_t(seen.size()), count) << count;  // one cycle through the whole range
        EXPECT_EQ(*seen.rbegin(), 256 + count - 1);
        for (int64_t b = 0; b < 256; ++b) {               // byte tokens lead into the range
            const int64_t n = synth_bigram_next(b, 256, count);
            EXPECT_TRUE(n >= 256 && n < 256 + count) << b;
        }
    }
}

TEST(gguf_synth_confident, refused_where_it_cannot_work) {
    tools_scratch_dir dir;
    const std::string out = dir.file("m.gguf");
    auto check = [&](synth_params p, const char * expect) {
        std::vector<std::string> warnings;
        std::string err;
        EXPECT_FALSE(synth_params_check(&p, &warnings, &err)) << expect;
        EXPECT_NE(err.find(expect), std::string::npos) << err;
    };
    synth_params tied = confident_params(out);
    tied.arch = "qwen2";
    check(tied, "untied output");
    synth_params gpt2 = confident_params(out);
    gpt2.arch = "gpt2";
    gpt2.n_head_kv = 4;
    check(gpt2, "untied output");
    synth_params small = confident_params(out);
    small.n_vocab = synth_min_vocab("");
    check(small, "--n-vocab");
    synth_params untied = confident_params(out);
    untied.arch = "qwen2";
    untied.untied_output = true;
    std::vector<std::string> warnings;
    std::string err;
    EXPECT_TRUE(synth_params_check(&untied, &warnings, &err)) << err;
    // The command line takes the flag and says so in its summary.
    tools_capture o, e;
    const int rc = gguf_tool_main({"synth", "--arch", "llama", "--n-embd", "64", "--n-layer", "1", "--n-head", "4",
                                   "--n-ff", "128", "--n-vocab", "400", "--confident", "-t", "2", out},
                                  o.get(), e.get());
    EXPECT_EQ(rc, 0) << e.text();
    EXPECT_NE(o.text().find("confident"), std::string::npos) << o.text();
}
