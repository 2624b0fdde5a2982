// tests/engine/logits-compare.h — comparing two runs' logits in the engine tests.
//
//   EXPECT_LE(logits_max_rel(got, want), 1e-5);
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

// Largest |a - b| over the largest |b| (the sizes must match).
inline double logits_max_rel(const std::vector<float> & a, const std::vector<float> & b) {
    EXPECT_EQ(a.size(), b.size());
    double m = 0, scale = 0;
    for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
        m = std::max(m, std::fabs(double(a[i]) - b[i]));
        scale = std::max(scale, std::fabs(double(b[i])));
    }
    return m / std::max(scale, 1e-30);
}
