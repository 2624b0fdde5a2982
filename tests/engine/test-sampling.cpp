// The sampling chain: greedy, seeded draws, each filter alone on hand-made logits, penalties,
// logit bias, the drawn distribution, log-probabilities and parameter validation.
#include "engine/sampling.h"
#include "engine/src/sampling-math.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

// Parameters with every filter and penalty off, temperature 1.
sampling_params plain_params(uint64_t seed = 1) {
    sampling_params p;
    p.temperature = 1.0f;
    p.top_k = 0;
    p.top_p = 1.0f;
    p.min_p = 0.0f;
    p.seed = seed;
    return p;
}

std::vector<int32_t> ids_of(const std::vector<sampling_candidate> & c) {
    std::vector<int32_t> ids;
    for (const auto & x : c) ids.push_back(x.id);
    return ids;
}

// Softmax in double of logits[ids] at temperature t.
std::vector<double> softmax_of(const std::vector<float> & logits, const std::vector<int32_t> & ids, double t = 1.0) {
    double m = -INFINITY;
    for (int32_t i : ids) m = std::max(m, double(logits[size_t(i)]));
    std::vector<double> p;
    double z = 0.0;
    for (int32_t i : ids) {
        p.push_back(std::exp((logits[size_t(i)] - m) / t));
        z += p.back();
    }
    for (double & x : p) x /= z;
    return p;
}

void expect_probs(const std::vector<sampling_candidate> & c, const std::vector<double> & want) {
    ASSERT_EQ(c.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(c[i].p, want[i], 1e-6) << "candidate " << i;
}

std::vector<float> random_logits(size_t n, uint64_t seed, float scale = 4.0f) {
    std::mt19937_64 g(seed);
    std::vector<float> v(n);
    for (auto & x : v) x = scale * (static_cast<float>(g() >> 40) / float(1 << 24) - 0.5f);
    return v;
}

}  // namespace

TEST(sampling, greedy_picks_argmax_ties_lowest_id) {
    sampling_params p = plain_params();
    p.temperature = 0.0f;
    sampler s(p, 6);
    const std::vector<float> logits = {0.5f, 3.0f, -1.0f, 3.0f, 2.9f, 3.0f};
    for (int i = 0; i < 3; ++i) EXPECT_EQ(s.sample(logits.data()).id, 1);
    const std::vector<float> with_bad = {NAN, 1.0f, INFINITY, 2.0f, -INFINITY, 0.0f};
    EXPECT_EQ(s.sample(with_bad.data()).id, 3);  // non-finite logits are never picked
    const auto & d = s.distribution(logits.data());
    ASSERT_EQ(d.size(), 1u);
    EXPECT_EQ(d[0].id, 1);
    EXPECT_EQ(d[0].p, 1.0f);
}

TEST(sampling, same_seed_same_tokens_different_seed_differs) {
    const std::vector<float> logits = random_logits(500, 7, 2.0f);
    auto run = [&](uint64_t seed) {
        sampling_params p = plain_params(seed);
        p.top_k = 100;
        sampler s(p, 500);
        std::vector<int32_t> out;
        for (int i = 0; i < 64; ++i) out.push_back(s.sample(logits.data()).id);
        return out;
    };
    EXPECT_EQ(run(42), run(42));
    EXPECT_NE(run(42), run(43));

    sampling_params p = plain_params(9);
    sampler s(p, 500);
    std::vector<int32_t> first, again;
    for (int i = 0; i < 32; ++i) first.push_back(s.sample(logits.data()).id);
    s.reset();
    for (int i = 0; i < 32; ++i) again.push_back(s.sample(logits.data()).id);
    EXPECT_EQ(first, again);  // reset reseeds
}

// The documented draw rule, re-implemented: u = (x >> 11) * 2^-53 from mt19937_64(seed), the
// first candidate (token id order without filters) whose running probability exceeds u.
TEST(sampling, draw_follows_the_documented_rule) {
    const std::vector<float> logits = {0.1f, 1.2f, -0.3f, 0.8f, 0.0f, 2.0f, -1.0f};
    const std::vector<int32_t> all = {0, 1, 2, 3, 4, 5, 6};
    const std::vector<double> prob = softmax_of(logits, all);
    sampler s(plain_params(12345), 7);
    std::mt19937_64 g(12345);
    int exact = 0;
    for (int i = 0; i < 2000; ++i) {
        const double u = double(g() >> 11) * 0x1.0p-53;
        double cum = 0.0;
        int32_t want = 6;
        for (size_t j = 0; j < prob.size(); ++j) {
            cum += prob[j];
            if (cum > u) {
                want = int32_t(j);
                break;
            }
        }
        const int32_t got = s.sample(logits.data()).id;
        const double margin = 1e-6;  // float probabilities: a draw right at a boundary may differ
        double lo = 0.0;
        for (int32_t j = 0; j < want; ++j) lo += prob[size_t(j)];
        if (u - lo > margin && lo + prob[size_t(want)] - u > margin) {
            EXPECT_EQ(got, want) << "draw " << i;
            ++exact;
        }
    }
    EXPECT_GT(exact, 1900);
}

// With filters the survivors are still walked in token id order: top-k keeps {1, 3, 2} (best
// first), the draw takes the first of 1, 2, 3 whose running probability exceeds u.
TEST(sampling, filtered_draws_walk_the_survivors_in_id_order) {
    const std::vector<float> logits = {0.5f, 2.0f, 1.0f, 1.5f, -3.0f};
    const std::vector<int32_t> kept = {1, 2, 3};
    const std::vector<double> prob = softmax_of(logits, kept);
    sampling_params p = plain_params(99);
    p.top_k = 3;
    sampler s(p, 5);
    std::mt19937_64 g(99);
    int exact = 0;
    for (int i = 0; i < 2000; ++i) {
        const double u = double(g() >> 11) * 0x1.0p-53;
        double cum = 0.0, lo = 0.0;
        size_t want = kept.size() - 1;
        for (size_t j = 0; j < kept.size(); ++j) {
            if (cum + prob[j] > u) {
                want = j;
                lo = cum;
                break;
            }
            cum += prob[j];
        }
        const int32_t got = s.sample(logits.data()).id;
        if (u - lo > 1e-6 && lo + prob[want] - u > 1e-6) {
            EXPECT_EQ(got, kept[want]) << "draw " << i;
            ++exact;
        }
    }
    EXPECT_GT(exact, 1900);
}

// Two candidates of nearly equal logits that change places (as another batch split or kernel may
// round them) give the same tokens for the same seed, except for a draw right at a boundary.
TEST(sampling, nearly_equal_candidates_changing_places_keep_the_tokens) {
    std::vector<float> a = random_logits(64, 5);
    a[10] = 1.25f;
    a[40] = 1.25f + 2e-6f;
    std::vector<float> b = a;
    std::swap(b[10], b[40]);
    for (int filters = 0; filters < 2; ++filters) {
        sampling_params p = plain_params(3);
        if (filters) {
            p.top_k = 20;
            p.top_p = 0.95f;
            p.min_p = 0.01f;
        }
        sampler sa(p, 64), sb(p, 64);
        int differ = 0;
        for (int i = 0; i < 2000; ++i) differ += sa.sample(a.data()).id != sb.sample(b.data()).id;
        EXPECT_LE(differ, 2) << (filters ? "with filters" : "without");
    }
}

TEST(sampling, top_k_keeps_k_best) {
    sampling_params p = plain_params();
    p.top_k = 2;
    sampler s(p, 5);
    const std::vector<float> logits = {1.0f, 5.0f, 3.0f, 4.0f, 2.0f};
    const auto & d = s.distribution(logits.data());
    EXPECT_EQ(ids_of(d), (std::vector<int32_t>{1, 3}));
    expect_probs(d, softmax_of(logits, {1, 3}));

    const std::vector<float> ties = {2.0f, 2.0f, 2.0f, 2.0f, 1.0f};
    EXPECT_EQ(ids_of(s.distribution(ties.data())), (std::vector<int32_t>{0, 1}));

    p.top_k = 10;  // more than the vocabulary: nothing cut, token id order
    sampler all(p, 5);
    EXPECT_EQ(ids_of(all.distribution(logits.data())), (std::vector<int32_t>{0, 1, 2, 3, 4}));
}

TEST(sampling, top_k_outside_tokens_never_drawn) {
    sampling_params p = plain_params(3);
    p.top_k = 2;
    sampler s(p, 5);
    const std::vector<float> logits = {1.0f, 1.3f, 0.9f, 1.2f, 1.1f};
    std::map<int32_t, int> seen;
    for (int i = 0; i < 20000; ++i) ++seen[s.sample(logits.data()).id];
    EXPECT_EQ(seen.size(), 2u);
    EXPECT_GT(seen[1], 0);
    EXPECT_GT(seen[3], 0);
}

TEST(sampling, top_p_boundaries) {
    const std::vector<float> equal = {0.0f, 0.0f, 0.0f, 0.0f};  // 0.25 each, exact in binary
    auto kept = [&](float top_p, const std::vector<float> & logits) {
        sampling_params p = plain_params();
        p.top_p = top_p;
        sampler s(p, int32_t(logits.size()));
        return ids_of(s.distribution(logits.data()));
    };
    EXPECT_EQ(kept(0.5f, equal), (std::vector<int32_t>{0, 1}));  // mass 0.5 reaches 0.5 exactly
    EXPECT_EQ(kept(0.5001f, equal), (std::vector<int32_t>{0, 1, 2}));
    EXPECT_EQ(kept(0.25f, equal), (std::vector<int32_t>{0}));
    EXPECT_EQ(kept(1e-6f, equal), (std::vector<int32_t>{0}));  // always at least one
    EXPECT_EQ(kept(0.9999f, equal), (std::vector<int32_t>{0, 1, 2, 3}));

    const std::vector<float> skew = {std::log(0.2f), std::log(0.5f), std::log(0.3f)};
    EXPECT_EQ(kept(0.49f, skew), (std::vector<int32_t>{1}));
    EXPECT_EQ(kept(0.79f, skew), (std::vector<int32_t>{1, 2}));
    EXPECT_EQ(kept(0.81f, skew), (std::vector<int32_t>{1, 2, 0}));

    sampling_params p = plain_params();
    p.top_p = 0.79f;
    sampler s(p, 3);
    expect_probs(s.distribution(skew.data()), softmax_of(skew, {1, 2}));  // renormalised
}

// A large vocabulary exercises the chunked partial sort; compared with a full sort.
TEST(sampling, top_p_large_vocabulary_matches_full_sort) {
    const size_t n = 20000;
    const std::vector<float> logits = random_logits(n, 11, 12.0f);
    std::vector<int32_t> order(n);
    for (size_t i = 0; i < n; ++i) order[i] = int32_t(i);
    std::sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
        return logits[size_t(a)] > logits[size_t(b)] || (logits[size_t(a)] == logits[size_t(b)] && a < b);
    });
    const std::vector<double> prob = softmax_of(logits, order);
    for (float top_p : {0.3f, 0.9f, 0.999f}) {
        double cum = 0.0;
        size_t keep = 0;
        while (keep < n) {
            cum += prob[keep++];
            if (cum >= top_p) break;
        }
        sampling_params p = plain_params();
        p.top_p = top_p;
        sampler s(p, int32_t(n));
        const auto got = ids_of(s.distribution(logits.data()));
        // float accumulation may move the cut by one token at most
        ASSERT_LE(std::max(got.size(), keep) - std::min(got.size(), keep), 1u) << top_p;
        const size_t common = std::min(got.size(), keep);
        EXPECT_TRUE(std::equal(got.begin(), got.begin() + std::ptrdiff_t(common), order.begin())) << top_p;
        EXPECT_GT(keep, 1u);
    }
}

TEST(sampling, min_p_keeps_relative_to_best) {
    sampling_params p = plain_params();
    p.min_p = std::exp(-1.5f);  // keeps logits >= max - 1.5
    sampler s(p, 5);
    const std::vector<float> logits = {-1.0f, 0.0f, -3.0f, -1.4f, -1.6f};
    const auto & d = s.distribution(logits.data());
    EXPECT_EQ(ids_of(d), (std::vector<int32_t>{1, 0, 3}));
    expect_probs(d, softmax_of(logits, {1, 0, 3}));

    p.min_p = 1.0f;  // only the maxima
    sampler only_max(p, 5);
    const std::vector<float> tie = {1.0f, 2.0f, 2.0f, 0.0f, 1.99f};
    EXPECT_EQ(ids_of(only_max.distribution(tie.data())), (std::vector<int32_t>{1, 2}));
}

// Chain order: top-p measures mass over what top-k left, min-p is then relative to the best.
TEST(sampling, filters_compose_in_chain_order) {
    const std::vector<float> logits = {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, -0.5f, -0.5f};
    sampling_params p = plain_params();
    p.top_k = 4;      // ids 0..3, 0.25 each
    p.top_p = 0.75f;  // reaches 0.75 after three
    sampler s(p, 8);
    EXPECT_EQ(ids_of(s.distribution(logits.data())), (std::vector<int32_t>{0, 1, 2}));

    const std::vector<float> slope = {0.0f, -0.1f, -0.2f, -3.0f, -0.3f, -5.0f};
    p.top_k = 0;
    p.top_p = 0.6f;
    p.min_p = std::exp(-0.15f);  // min-p alone would keep 0, 1; top-p alone 0, 1, 2
    sampler both(p, 6);
    EXPECT_EQ(ids_of(both.distribution(slope.data())), (std::vector<int32_t>{0, 1}));
    p.min_p = std::exp(-0.35f);  // min-p alone keeps 0, 1, 2, 4: top-p decides
    sampler top_p_cuts(p, 6);
    const auto got = ids_of(top_p_cuts.distribution(slope.data()));
    const std::vector<double> full = softmax_of(slope, {0, 1, 2, 4, 3, 5});
    ASSERT_LT(full[0] + full[1], 0.6);
    ASSERT_GE(full[0] + full[1] + full[2], 0.6);
    EXPECT_EQ(got, (std::vector<int32_t>{0, 1, 2}));
}

TEST(sampling, temperature_sharpens_and_flattens) {
    const std::vector<float> logits = {0.0f, 1.0f, 2.0f};
    const std::vector<int32_t> ids = {0, 1, 2};
    double prev_max = 1.0;
    for (float t : {0.25f, 0.5f, 1.0f, 2.0f, 8.0f}) {
        sampling_params p = plain_params();
        p.temperature = t;
        sampler s(p, 3);
        const auto & d = s.distribution(logits.data());
        expect_probs(d, softmax_of(logits, ids, t));
        EXPECT_LT(d[2].p, prev_max) << t;  // higher temperature, flatter
        prev_max = d[2].p;
    }
}

TEST(sampling, repeat_penalty_rule) {
    sampling_params p = plain_params();
    p.repeat_penalty = 2.0f;
    sampler s(p, 5);
    EXPECT_TRUE(s.accept(0));
    EXPECT_TRUE(s.accept(1));
    EXPECT_TRUE(s.accept(1));
    const std::vector<float> logits = {2.0f, -2.0f, 1.0f, 0.0f, 3.0f};
    const auto & d = s.distribution(logits.data());
    ASSERT_EQ(d.size(), 5u);
    EXPECT_EQ(d[0].logit, 1.0f);   // positive: divided
    EXPECT_EQ(d[1].logit, -4.0f);  // negative: multiplied, once whatever the count
    EXPECT_EQ(d[2].logit, 1.0f);
    EXPECT_EQ(d[4].logit, 3.0f);
}

TEST(sampling, presence_and_frequency_penalties_use_counts) {
    sampling_params p = plain_params();
    p.presence_penalty = 0.5f;
    p.frequency_penalty = 0.25f;
    sampler s(p, 4);
    for (int32_t t : {2, 2, 2, 1}) s.accept(t);
    EXPECT_EQ(s.history_count(2), 3);
    const std::vector<float> logits = {1.0f, 1.0f, 1.0f, 1.0f};
    const auto & d = s.distribution(logits.data());
    EXPECT_EQ(d[0].logit, 1.0f);
    EXPECT_EQ(d[1].logit, 1.0f - 0.5f - 0.25f);
    EXPECT_EQ(d[2].logit, 1.0f - 0.5f - 0.75f);
    EXPECT_EQ(d[3].logit, 1.0f);
}

TEST(sampling, penalty_window_last_n) {
    sampling_params p = plain_params();
    p.frequency_penalty = 1.0f;
    p.penalty_last_n = 3;
    sampler s(p, 4);
    for (int32_t t : {0, 0, 1, 2, 1}) s.accept(t);  // window: 1, 2, 1
    EXPECT_EQ(s.history_count(0), 0);
    EXPECT_EQ(s.history_count(1), 2);
    const std::vector<float> logits = {0.0f, 0.0f, 0.0f, 0.0f};
    const auto & d = s.distribution(logits.data());
    EXPECT_EQ(d[0].logit, 0.0f);
    EXPECT_EQ(d[1].logit, -2.0f);
    EXPECT_EQ(d[2].logit, -1.0f);

    p.penalty_last_n = -1;  // everything
    sampler all(p, 4);
    for (int i = 0; i < 100; ++i) all.accept(3);
    EXPECT_EQ(all.distribution(logits.data())[3].logit, -100.0f);

    p.penalty_last_n = 0;  // nothing
    sampler none(p, 4);
    none.accept(3);
    EXPECT_EQ(none.distribution(logits.data())[3].logit, 0.0f);

    s.reset();
    EXPECT_EQ(s.history_count(1), 0);
    EXPECT_EQ(s.distribution(logits.data())[1].logit, 0.0f);
    EXPECT_FALSE(s.accept(4));
    EXPECT_FALSE(s.accept(-1));
}

TEST(sampling, penalties_do_not_change_history_or_logprobs) {
    sampling_params p = plain_params();
    p.temperature = 0.0f;
    p.repeat_penalty = 10.0f;
    sampler s(p, 3);
    s.accept(0);
    const std::vector<float> logits = {2.0f, 1.0f, 0.0f};
    const sampled_token a = s.sample(logits.data());
    EXPECT_EQ(a.id, 1);  // 2 / 10 < 1
    EXPECT_EQ(s.sample(logits.data()).id, 1);  // sample() did not add to the history
    EXPECT_EQ(s.history_count(1), 0);
    const double lse = std::log(std::exp(2.0) + std::exp(1.0) + 1.0);
    EXPECT_NEAR(a.logprob, 1.0 - lse, 1e-6);  // raw row, not the penalised one
}

TEST(sampling, logit_bias_adds_and_bans) {
    sampling_params p = plain_params();
    p.temperature = 0.0f;
    p.logit_bias = {{0, -INFINITY}, {2, 1.5f}, {2, 0.25f}};
    sampler s(p, 4);
    const std::vector<float> logits = {9.0f, 1.0f, 0.5f, 2.0f};
    EXPECT_EQ(s.sample(logits.data()).id, 2);  // 0 banned, 0.5 + 1.75 > 2

    p.temperature = 1.0f;
    sampler draw(p, 4);
    const auto & d = draw.distribution(logits.data());
    EXPECT_EQ(ids_of(d), (std::vector<int32_t>{1, 2, 3}));
    EXPECT_EQ(d[1].logit, 2.25f);
    for (int i = 0; i < 2000; ++i) EXPECT_NE(draw.sample(logits.data()).id, 0);

    p.logit_bias = {{0, -INFINITY}, {1, -INFINITY}};
    sampler none(p, 2);
    const sampled_token t = none.sample(logits.data());
    EXPECT_EQ(t.id, -1);  // nothing drawable
    EXPECT_TRUE(std::isinf(t.logprob) && t.logprob < 0);
    EXPECT_TRUE(none.distribution(logits.data()).empty());
}

TEST(sampling, draws_match_softmax_chi_square) {
    const std::vector<float> logits = {0.0f, 0.5f, 1.0f, 1.5f, -1.0f};
    const std::vector<double> prob = softmax_of(logits, {0, 1, 2, 3, 4});
    sampler s(plain_params(2024), 5);
    const int n = 200000;
    std::vector<int> count(5, 0);
    for (int i = 0; i < n; ++i) {
        const int32_t id = s.sample(logits.data()).id;
        ASSERT_TRUE(id >= 0 && id < 5);
        ++count[size_t(id)];
    }
    double chi2 = 0.0;
    for (size_t i = 0; i < 5; ++i) {
        const double e = prob[i] * n;
        chi2 += (count[i] - e) * (count[i] - e) / e;
    }
    EXPECT_LT(chi2, 18.467);  // 4 degrees of freedom, p = 0.001
}

TEST(sampling, draws_match_truncated_distribution) {
    // top_k = 3 at temperature 0.5: the three best, softmax of 2 * logit among them.
    const std::vector<float> logits = {0.2f, 1.0f, -0.5f, 0.7f, 0.1f, 0.9f};
    sampling_params p = plain_params(77);
    p.top_k = 3;
    p.temperature = 0.5f;
    sampler s(p, 6);
    const std::vector<int32_t> kept = {1, 5, 3};
    const std::vector<double> prob = softmax_of(logits, kept, 0.5);
    const int n = 100000;
    std::map<int32_t, int> count;
    for (int i = 0; i < n; ++i) ++count[s.sample(logits.data()).id];
    ASSERT_EQ(count.size(), 3u);
    double chi2 = 0.0;
    for (size_t i = 0; i < 3; ++i) {
        const double e = prob[i] * n;
        chi2 += (count[kept[i]] - e) * (count[kept[i]] - e) / e;
    }
    EXPECT_LT(chi2, 13.816);  // 2 degrees of freedom, p = 0.001
}

TEST(sampling, logprobs_are_raw_log_softmax_and_top_sorted) {
    const size_t n = 3000;
    std::vector<float> logits = random_logits(n, 5, 10.0f);
    logits[17] = logits[18] = 7.5f;  // a tie among the best: lower id first
    logits[40] = -INFINITY;
    logits[41] = NAN;
    sampling_params p;  // defaults: temperature 0.8, top_k 40, top_p 0.95, min_p 0.05
    p.n_probs = 20;
    p.repeat_penalty = 1.3f;
    p.logit_bias = {{5, 3.0f}};
    sampler s(p, int32_t(n));
    for (int32_t t : {17, 3, 9}) s.accept(t);

    double m = -INFINITY;
    for (float l : logits)
        if (std::isfinite(l)) m = std::max(m, double(l));
    double z = 0.0;
    for (float l : logits)
        if (std::isfinite(l)) z += std::exp(double(l) - m);
    const double lse = m + std::log(z);
    std::vector<int32_t> order;
    for (size_t i = 0; i < n; ++i)
        if (std::isfinite(logits[i])) order.push_back(int32_t(i));
    std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return logits[size_t(a)] > logits[size_t(b)]; });

    for (int round = 0; round < 20; ++round) {
        const sampled_token t = s.sample(logits.data());
        ASSERT_GE(t.id, 0);
        EXPECT_NEAR(t.logprob, logits[size_t(t.id)] - lse, 1e-5);
        ASSERT_EQ(t.top.size(), 20u);
        for (size_t j = 0; j < 20; ++j) {
            EXPECT_EQ(t.top[j].first, order[j]) << j;
            EXPECT_NEAR(t.top[j].second, logits[size_t(order[j])] - lse, 1e-5) << j;
            if (j > 0) {
                EXPECT_GE(t.top[j - 1].second, t.top[j].second);
            }
        }
    }
    EXPECT_EQ(order[0], 17);
    EXPECT_EQ(order[1], 18);

    p.n_probs = 0;
    sampler quiet(p, int32_t(n));
    EXPECT_TRUE(quiet.sample(logits.data()).top.empty());
}

TEST(sampling, logprob_can_be_skipped) {
    sampling_params p = plain_params();
    p.logprob = false;
    sampler s(p, 3);
    const std::vector<float> logits = {0.0f, 1.0f, 2.0f};
    const sampled_token t = s.sample(logits.data());
    EXPECT_GE(t.id, 0);
    EXPECT_TRUE(std::isnan(t.logprob));
    EXPECT_TRUE(t.top.empty());
    p.n_probs = 2;  // asking for the top list computes them anyway
    sampler with_top(p, 3);
    const sampled_token u = with_top.sample(logits.data());
    EXPECT_FALSE(std::isnan(u.logprob));
    ASSERT_EQ(u.top.size(), 2u);
    EXPECT_EQ(u.top[0].first, 2);
    EXPECT_EQ(u.top[1].first, 1);
}

TEST(sampling, top_k_large_vocabulary_matches_full_sort) {
    const size_t n = 50000;
    std::vector<float> logits = random_logits(n, 21, 20.0f);
    for (size_t i = 0; i < n; i += 7) logits[i] = std::round(logits[i]);  // many ties
    std::vector<int32_t> order(n);
    for (size_t i = 0; i < n; ++i) order[i] = int32_t(i);
    std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return logits[size_t(a)] > logits[size_t(b)]; });
    for (int32_t k : {1, 40, 1000, 49999}) {
        sampling_params p = plain_params();
        p.top_k = k;
        sampler s(p, int32_t(n));
        const auto got = ids_of(s.distribution(logits.data()));
        ASSERT_EQ(got.size(), size_t(k));
        EXPECT_TRUE(std::equal(got.begin(), got.end(), order.begin())) << k;
    }
}

// The vectorized row passes against scalar references, tails and non-finite entries included.
TEST(sampling, math_row_passes) {
    for (float x = -90.0f; x <= 0.0f; x += 0.01f) {
        const double want = std::exp(double(x));
        const double got = sampling_exp(x);
        if (x >= -87.0f) {
            ASSERT_NEAR(got, want, want * 3e-7) << x;
        } else {
            ASSERT_EQ(sampling_exp(x), sampling_exp(-87.0f)) << x;
        }
    }
    for (int32_t n : {1, 7, 8, 9, 1023, 1024, 1025, 5000}) {
        std::vector<float> row = random_logits(size_t(n), uint64_t(n), 30.0f);
        if (n > 3) {
            row[1] = NAN;
            row[2] = -INFINITY;
            row[size_t(n - 1)] = INFINITY;
        }
        float m = -INFINITY;
        for (float l : row)
            if (std::isfinite(l)) m = std::max(m, l);
        EXPECT_EQ(sampling_row_max(row.data(), n), m) << n;
        for (float floor : {-INFINITY, m - 3.0f}) {
            double want = 0.0;
            for (float l : row)
                if (std::isfinite(l) && l >= floor) want += sampling_exp(l - m);
            EXPECT_NEAR(sampling_row_exp_sum(row.data(), n, m, 1.0f, floor), want, want * 1e-6) << n;
        }
        std::vector<sampling_candidate> c;
        for (int32_t i = 0; i < n; ++i)
            if (std::isfinite(row[size_t(i)])) c.push_back({i, row[size_t(i)], 0.0f});
        sampling_candidates_exp(c.data(), c.size(), m, 0.5f);
        for (const auto & x : c) ASSERT_EQ(x.p, sampling_exp((x.logit - m) * 0.5f)) << n;  // same bits
    }
    const std::vector<float> none = {NAN, -INFINITY, INFINITY};
    EXPECT_EQ(sampling_row_max(none.data(), 3), -INFINITY);
}

TEST(sampling, nan_and_inf_logits_never_drawn) {
    sampler s(plain_params(5), 5);
    const std::vector<float> logits = {NAN, 0.0f, INFINITY, -INFINITY, 0.0f};
    for (int i = 0; i < 1000; ++i) {
        const int32_t id = s.sample(logits.data()).id;
        EXPECT_TRUE(id == 1 || id == 4) << id;
    }
}

TEST(sampling, validation_names_the_field) {
    auto message = [](auto change, int32_t n_vocab = 10) {
        sampling_params p;
        change(p);
        return sampling_params_validate(p, n_vocab);
    };
    EXPECT_EQ(message([](sampling_params &) {}), "");
    EXPECT_NE(message([](sampling_params & p) { p.temperature = -0.1f; }).find("temperature"), std::string::npos);
    EXPECT_NE(message([](sampling_params & p) { p.temperature = NAN; }).find("temperature"), std::string::npos);
    EXPECT_NE(message([](sampling_params & p) { p.top_p = 1.5f; }).find("top_p"), std::string::npos);
    EXPECT_NE(message([](sampling_params & p) { p.top_p = 0.0f; }).find("top_p"), std::string::npos);
    EXPECT_NE(message([](sampling_params & p) { p.min_p = -0.1f; }).find("min_p"), std::string::npos);
    EXPECT_NE(message([](sampling_params & p) { p.min_p = 1.1f; }).find("min_p"), std::string::npos);
    EXPECT_NE(message([](sampling_params & p) { p.repeat_penalty = 0.0f; }).find("repeat_penalty"), std::string::npos);
    EXPECT_NE(message([](sampling_params & p) { p.presence_penalty = INFINITY; }).find("presence_penalty"), std::string::npos);
    EXPECT_NE(message([](sampling_params & p) { p.frequency_penalty = NAN; }).find("frequency_penalty"), std::string::npos);
    EXPECT_NE(message([](sampling_params & p) { p.penalty_last_n = -2; }).find("penalty_last_n"), std::string::npos);
    EXPECT_NE(message([](sampling_params & p) { p.n_probs = 21; }).find("n_probs"), std::string::npos);
    EXPECT_NE(message([](sampling_params & p) { p.n_probs = -1; }).find("n_probs"), std::string::npos);
    EXPECT_NE(message([](sampling_params & p) { p.logit_bias = {{10, 1.0f}}; }).find("logit_bias"), std::string::npos);
    EXPECT_NE(message([](sampling_params & p) { p.logit_bias = {{-1, 1.0f}}; }).find("logit_bias"), std::string::npos);
    EXPECT_NE(message([](sampling_params & p) { p.logit_bias = {{1, NAN}}; }).find("logit_bias"), std::string::npos);
    EXPECT_NE(message([](sampling_params & p) { p.logit_bias = {{1, INFINITY}}; }).find("logit_bias"), std::string::npos);
    EXPECT_EQ(message([](sampling_params & p) { p.logit_bias = {{9, -INFINITY}}; }), "");
    EXPECT_EQ(message([](sampling_params & p) { p.temperature = 0.0f; p.top_k = -5; p.penalty_last_n = -1; }), "");
    EXPECT_NE(message([](sampling_params &) {}, 0).find("n_vocab"), std::string::npos);

    sampling_params bad;
    bad.top_p = 2.0f;
    try {
        sampler s(bad, 10);
        FAIL() << "no exception";
    } catch (const std::invalid_argument & e) {
        EXPECT_NE(std::string(e.what()).find("top_p"), std::string::npos);
    }
}

namespace {

// A stage that forbids a set of tokens and refuses to accept them; records what it accepted.
class ban_stage final : public sampler_stage_i {
public:
    explicit ban_stage(std::vector<int32_t> banned) : banned_(std::move(banned)) {}
    const char * name() const override { return "ban"; }
    void apply(float * logits, int32_t n_vocab) override {
        ++applied;
        for (int32_t t : banned_) {
            if (t < n_vocab) logits[t] = -INFINITY;
        }
    }
    bool accept(int32_t id) override {
        if (std::find(banned_.begin(), banned_.end(), id) != banned_.end()) return false;
        accepted.push_back(id);
        return true;
    }
    void reset() override { accepted.clear(); }
    std::unique_ptr<sampler_stage_i> clone() const override { return std::make_unique<ban_stage>(*this); }

    std::vector<int32_t> accepted;
    int applied = 0;

private:
    std::vector<int32_t> banned_;
};

}  // namespace

TEST(sampling_stages, a_stage_forbids_tokens_before_the_filters) {
    const std::vector<float> logits = {0.0f, 5.0f, 4.0f, 3.0f, 1.0f};
    sampling_params p;
    p.temperature = 0.0f;
    sampler greedy(p, 5);
    greedy.add_stage(std::make_unique<ban_stage>(std::vector<int32_t>{1}));
    EXPECT_EQ(greedy.sample(logits.data()).id, 2) << "the best token is banned: the next best";
    // top-k 1 after the stage: the survivor is the best allowed token, not nothing
    p.temperature = 1.0f;
    p.top_k = 1;
    p.top_p = 1.0f;
    p.min_p = 0.0f;
    sampler topk(p, 5);
    topk.add_stage(std::make_unique<ban_stage>(std::vector<int32_t>{1, 2}));
    const auto & d = topk.distribution(logits.data());
    ASSERT_EQ(d.size(), 1u);
    EXPECT_EQ(d[0].id, 3);
    // every token banned: nothing drawable
    sampler none(p, 5);
    none.add_stage(std::make_unique<ban_stage>(std::vector<int32_t>{0, 1, 2, 3, 4}));
    EXPECT_EQ(none.sample(logits.data()).id, -1);
    // log-probabilities stay those of the raw row
    sampler lp(p, 5);
    lp.add_stage(std::make_unique<ban_stage>(std::vector<int32_t>{1}));
    const sampled_token t = lp.sample(logits.data());
    EXPECT_FLOAT_EQ(t.logprob, sampling_logprobs(logits.data(), 5, t.id, 0).logprob);
}

TEST(sampling_stages, accept_reset_and_copies) {
    sampling_params p;
    p.temperature = 0.9f;
    p.seed = 7;
    sampler s(p, 5);
    auto stage = std::make_unique<ban_stage>(std::vector<int32_t>{4});
    ban_stage * st = stage.get();
    s.add_stage(std::move(stage));
    EXPECT_EQ(s.n_stages(), 1u);
    EXPECT_TRUE(s.accept_history(3)) << "prompt tokens go to the penalties only";
    EXPECT_TRUE(st->accepted.empty());
    EXPECT_TRUE(s.accept(1));
    EXPECT_TRUE(s.accept(2));
    EXPECT_EQ(st->accepted, (std::vector<int32_t>{1, 2}));
    EXPECT_EQ(s.history_count(3), 1);
    EXPECT_FALSE(s.accept(4)) << "the stage refuses a token it forbids";
    EXPECT_FALSE(s.accept(9)) << "out of range";
    // a copy: same state, independent from then on, same draws
    sampler c(s);
    const std::vector<float> logits = {1.0f, 1.5f, 0.5f, 2.0f, 0.0f};
    for (int i = 0; i < 20; ++i) EXPECT_EQ(c.sample(logits.data()).id, s.sample(logits.data()).id);
    EXPECT_TRUE(c.accept(0));
    EXPECT_EQ(st->accepted, (std::vector<int32_t>{1, 2})) << "the copy's stage is its own";
    EXPECT_EQ(c.history_count(0), 1);
    EXPECT_EQ(s.history_count(0), 0);
    s.reset();
    EXPECT_TRUE(st->accepted.empty());
    EXPECT_EQ(s.history_count(1), 0);
}
