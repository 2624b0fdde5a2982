// Speculative decoding keeps the target's sampling distribution: with temperature 1 (no top-k,
// top-p or min-p) and a few hundred seeds, the tokens drawn with a draft model are the same per
// seed as the target's alone (verification draws with the request's own sampler), and the first
// token's empirical frequencies fit the target's softmax under a chi-square test whose bound is
// computed for a false-alarm probability below 1e-6.
#include "batch-loop-spec-util.h"
#include "engine/context.h"
#include "engine/model.h"
#include "testdata.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <vector>

namespace {

// The sanitizer build (about 10x slower) draws fewer seeds; the chi-square bound follows the count.
#if defined(__SANITIZE_ADDRESS__)
constexpr size_t k_seeds = 100;
#else
constexpr size_t k_seeds = 400;
#endif
constexpr int32_t k_tokens = 5;  // tokens drawn per seed

sampling_params plain_softmax(uint64_t seed) {
    sampling_params sp;
    sp.temperature = 1.0f;
    sp.top_k = 0;
    sp.top_p = 1.0f;
    sp.min_p = 0.0f;
    sp.seed = seed;
    return sp;
}

// The target's next-token probabilities after prompt (softmax of the last logits row).
std::vector<double> next_token_probs(const model & m, const std::vector<int32_t> & prompt) {
    context_params cp;
    cp.n_ctx = 128;
    cp.n_threads = 2;
    context ctx(m, cp);
    llm_batch b;
    for (size_t i = 0; i < prompt.size(); ++i) b.add(prompt[i], int32_t(i), 0, i + 1 == prompt.size());
    EXPECT_EQ(ctx.decode(b), 0) << ctx.last_error();
    const float * row = ctx.logits(int32_t(prompt.size() - 1));
    const size_t n = size_t(m.hparams().n_vocab);
    const double mx = *std::max_element(row, row + n);
    std::vector<double> p(n);
    double sum = 0;
    for (size_t i = 0; i < n; ++i) sum += p[i] = std::exp(double(row[i]) - mx);
    for (double & v : p) v /= sum;
    return p;
}

// Upper quantile of the chi-square distribution with df degrees of freedom at the standard
// normal quantile z (Wilson-Hilferty: (X/df)^(1/3) is close to normal with mean 1 - 2/(9 df)
// and variance 2/(9 df)).
double chi_square_quantile(double df, double z) {
    const double v = 2.0 / (9.0 * df);
    const double c = 1.0 - v + z * std::sqrt(v);
    return df * c * c * c;
}

struct chi_square_result {
    double statistic = 0;
    size_t bins = 0;
};

// Pearson's statistic of the counts against n draws from p: every token whose expected count is
// at least 5 is a bin of its own, the rest share one bin (merged into the smallest bin when its
// own expectation is below 5).
chi_square_result chi_square(const std::map<int32_t, size_t> & counts, const std::vector<double> & p, size_t n) {
    std::vector<double> expected, observed;
    double rest_e = 0, rest_o = 0;
    for (size_t id = 0; id < p.size(); ++id) {
        const auto it = counts.find(int32_t(id));
        const double o = it == counts.end() ? 0.0 : double(it->second);
        if (p[id] * double(n) >= 5.0) {
            expected.push_back(p[id] * double(n));
            observed.push_back(o);
        } else {
            rest_e += p[id] * double(n);
            rest_o += o;
        }
    }
    if (rest_e >= 5.0 || expected.empty()) {
        expected.push_back(rest_e);
        observed.push_back(rest_o);
    } else {
        const size_t k = size_t(std::min_element(expected.begin(), expected.end()) - expected.begin());
        expected[k] += rest_e;
        observed[k] += rest_o;
    }
    chi_square_result r;
    r.bins = expected.size();
    for (size_t i = 0; i < expected.size(); ++i) {
        const double d = observed[i] - expected[i];
        r.statistic += d * d / expected[i];
    }
    return r;
}

}  // namespace

TEST(batch_loop_spec_dist, draft_model_sampling_matches_the_target_distribution) {
    INFERD_REQUIRE_TESTDATA(dir);
    auto target = model::load(dir + "/models/stories260K-f32.gguf", model_params{});
    auto draft = model::load(dir + "/models/stories260K-f16.gguf", model_params{});
    const std::vector<int32_t> prompt = prompts_for_test(3)[2];
    std::vector<spec_req> reqs(k_seeds);
    for (size_t i = 0; i < reqs.size(); ++i) {
        reqs[i].prompt = prompt;
        reqs[i].max_tokens = k_tokens;
        reqs[i].sampling = plain_softmax(1000 + i);
    }
    batch_loop_params p = loop_params(4);
    p.max_queue = uint32_t(k_seeds);  // every seed queued at once
    const spec_run plain = run_requests(*target, p, reqs);
    p.spec.draft = draft.get();
    p.spec.n_max = 4;
    p.spec.p_min = 0.0f;
    const spec_run spec = run_requests(*target, p, reqs);
    expect_same_outputs(plain, spec);  // per seed: the same tokens
    EXPECT_GT(spec.stats.draft_accepted, 0u);
    EXPECT_LT(spec.stats.draft_accepted, spec.stats.draft_tokens);  // rejections were drawn too

    std::map<int32_t, size_t> first_spec, first_plain;
    for (size_t i = 0; i < reqs.size(); ++i) {
        ASSERT_FALSE(spec.results[i].tokens.empty());
        ASSERT_FALSE(plain.results[i].tokens.empty());
        ++first_spec[spec.results[i].tokens[0]];
        ++first_plain[plain.results[i].tokens[0]];
    }
    EXPECT_EQ(first_spec, first_plain);
    const std::vector<double> probs = next_token_probs(*target, prompt);
    const chi_square_result c = chi_square(first_spec, probs, k_seeds);
    ASSERT_GE(c.bins, 2u) << "the prompt's next token is nearly certain: nothing to test";
    const double bound = chi_square_quantile(double(c.bins - 1), 5.0);  // P(exceed) ~ 3e-7
    std::printf("first token: %zu bins, chi-square %.2f (bound %.2f); drafted %llu accepted %llu\n", c.bins,
                c.statistic, bound, (unsigned long long)spec.stats.draft_tokens,
                (unsigned long long)spec.stats.draft_accepted);
    EXPECT_LT(c.statistic, bound);
}
