// sampling_logprobs(): the log-softmax of a raw row at a given token and the best alternatives,
// against a double-precision reference, and identical to what sampler::sample() reports.
#include "engine/sampling.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace {

std::vector<float> random_row(int32_t n, uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::normal_distribution<float> d(0.0f, 3.0f);
    std::vector<float> row(static_cast<size_t>(n));
    for (float & x : row) x = d(rng);
    return row;
}

// log(sum exp(row)) over the finite entries, in double.
double reference_lse(const std::vector<float> & row) {
    double m = -INFINITY;
    for (float x : row) {
        if (std::isfinite(x)) m = std::max(m, double(x));
    }
    double z = 0.0;
    for (float x : row) {
        if (std::isfinite(x)) z += std::exp(double(x) - m);
    }
    return m + std::log(z);
}

}  // namespace

TEST(sampling_logprobs, matches_a_double_log_softmax) {
    std::vector<float> row = random_row(1000, 7);
    row[3] = NAN;
    row[4] = -INFINITY;
    row[5] = INFINITY;
    const double lse = reference_lse(row);
    for (int32_t id : {0, 17, 999}) {
        const sampled_token t = sampling_logprobs(row.data(), 1000, id, 0);
        EXPECT_EQ(t.id, id);
        EXPECT_NEAR(t.logprob, double(row[size_t(id)]) - lse, 1e-4) << id;
        EXPECT_TRUE(t.top.empty());
    }
    for (int32_t id : {3, 4, 5, -1, 1000}) {
        EXPECT_EQ(sampling_logprobs(row.data(), 1000, id, 0).logprob, -INFINITY) << id;
    }
}

TEST(sampling_logprobs, top_list_is_sorted_with_ties_to_the_lower_id) {
    std::vector<float> row = random_row(300, 11);
    row[40] = row[20] = 50.0f;  // a tie at the top
    row[41] = NAN;
    const sampled_token t = sampling_logprobs(row.data(), 300, 40, 5);
    ASSERT_EQ(t.top.size(), 5u);
    EXPECT_EQ(t.top[0].first, 20);
    EXPECT_EQ(t.top[1].first, 40);
    EXPECT_FLOAT_EQ(t.top[1].second, t.logprob);
    for (size_t i = 1; i < t.top.size(); ++i) EXPECT_GE(t.top[i - 1].second, t.top[i].second);
    // The alternatives are the best of the row: nothing outside the list beats the last one.
    const float last = t.top.back().second;
    const double lse = reference_lse(row);
    for (int32_t i = 0; i < 300; ++i) {
        bool listed = false;
        for (const auto & [id, lp] : t.top) listed = listed || id == i;
        if (!listed && std::isfinite(row[size_t(i)])) {
            EXPECT_LE(double(row[size_t(i)]) - lse, double(last) + 1e-4) << i;
        }
    }
    // n_top is clamped to sampling_max_n_probs.
    EXPECT_EQ(sampling_logprobs(row.data(), 300, 0, 1000).top.size(), size_t(sampling_max_n_probs));
    EXPECT_TRUE(sampling_logprobs(row.data(), 300, 0, -3).top.empty());
}

TEST(sampling_logprobs, equals_what_the_sampler_reports) {
    const std::vector<float> row = random_row(5000, 3);
    sampling_params p;
    p.temperature = 0.0f;
    p.n_probs = 4;
    sampler smp(p, 5000);
    const sampled_token s = smp.sample(row.data());
    const sampled_token t = sampling_logprobs(row.data(), 5000, s.id, 4);
    EXPECT_EQ(s.logprob, t.logprob);
    EXPECT_EQ(s.top, t.top);
    ASSERT_FALSE(t.top.empty());
    EXPECT_EQ(t.top[0].first, s.id) << "greedy draws the best token";
}
