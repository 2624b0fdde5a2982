// tests/ggml/backend-ops-cases-rows.h — cases of the row reductions sum_rows and top_k.
//
// Usage:
//   bops::check_cases(bops::cases_top_k());
//
// top_k is exact (indices): random rows, rows with many ties (the lower index first), rows with
// infinities, signed zeros and NaN (NaN last), k from 1 to the whole row, views and transposed
// rows. sum_rows: NMSE 1e-10 (float accumulation in several partial sums).
#pragma once

#include "backend-ops-cases-math.h"

#include <limits>

namespace bops {

inline std::vector<op_case> cases_sum_rows() {
    std::vector<op_case> cases;
    uint64_t seed = 2600;
    auto ref = [](const ref_args & r) { return ref_sum_rows(r.src[0]); };
    for (const shape4 & s : {shape4{1, 1, 1, 1}, shape4{7, 3, 2, 1}, shape4{129, 5, 2, 3}, shape4{4096, 3, 1, 1},
                             shape4{67, 513, 1, 1}}) {
        cases.push_back(math_case("sum_rows f32" + sh(s),
            [=](case_inputs & in) { return ggml_sum_rows(in.ctx, in.uniform(GGML_TYPE_F32, s, -1, 1)); }, ref, 1e-10,
            false, seed++));
    }
    cases.push_back(math_case("sum_rows f32[33,4] view of [40,4]",
        [](case_inputs & in) {
            ggml_tensor * base = in.uniform(GGML_TYPE_F32, {40, 4, 1, 1});
            return ggml_sum_rows(in.ctx, ggml_view_2d(in.ctx, base, 33, 4, base->nb[1], 5 * base->nb[0]));
        }, ref, 1e-10, false, seed++));
    cases.push_back(math_case("sum_rows f32[33,5] transposed",
        [](case_inputs & in) {
            return ggml_sum_rows(in.ctx, ggml_transpose(in.ctx, in.uniform(GGML_TYPE_F32, {5, 33, 1, 1})));
        },
        ref, 1e-10, false, seed++));
    return cases;
}

// Rows of n values from {-2, .., 2} (many ties).
inline std::vector<double> tied_values(uint64_t seed, int64_t n) {
    rng r(seed);
    std::vector<double> v(static_cast<size_t>(n));
    for (double & x : v) x = static_cast<double>(r.below(5)) - 2.0;
    return v;
}

inline std::vector<op_case> cases_top_k() {
    std::vector<op_case> cases;
    uint64_t seed = 2700;
    struct tk { shape4 a; int k; };
    const tk list[] = {{{1, 3, 1, 1}, 1},    {{7, 5, 1, 1}, 3},     {{64, 9, 1, 1}, 8},       {{8, 13, 2, 1}, 2},
                       {{129, 3, 2, 1}, 129}, {{1000, 2, 1, 1}, 40}, {{4099, 1, 1, 1}, 1},     {{64, 513, 1, 1}, 8},
                       {{128, 33, 1, 1}, 128}};
    for (const tk & t : list) {
        const shape4 s = t.a;
        const int k = t.k;
        auto ref = [k](const ref_args & r) { return ref_top_k(r.src[0], k); };
        cases.push_back(exact_case("top_k f32" + sh(s) + " k=" + std::to_string(k),
            [=](case_inputs & in) { return ggml_top_k(in.ctx, in.uniform(GGML_TYPE_F32, s, -3, 3), k); }, ref, seed++));
        const std::vector<double> v = tied_values(seed, s[0] * s[1] * s[2] * s[3]);
        cases.push_back(exact_case("top_k f32" + sh(s) + " k=" + std::to_string(k) + " with ties",
            [=](case_inputs & in) { return ggml_top_k(in.ctx, in.values(GGML_TYPE_F32, s, v), k); }, ref, seed++));
    }
    const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
    const std::vector<double> special = {1.0, nan, -inf, 0.0, -0.0, inf, nan, 2.0, -1.0, inf, -0.0, -inf};
    for (int k : {3, 6, 12}) {
        auto ref = [k](const ref_args & r) { return ref_top_k(r.src[0], k); };
        op_case c = exact_case("top_k f32[12] k=" + std::to_string(k) + " with infinities, signed zeros and NaN",
            [=](case_inputs & in) { return ggml_top_k(in.ctx, in.values(GGML_TYPE_F32, {12, 1, 1, 1}, special), k); },
            ref, seed++);
        cases.push_back(c);
    }
    auto ref5 = [](const ref_args & r) { return ref_top_k(r.src[0], 5); };
    cases.push_back(exact_case("top_k f32[33,4] view of [40,4] k=5",
        [](case_inputs & in) {
            ggml_tensor * base = in.uniform(GGML_TYPE_F32, {40, 4, 1, 1});
            return ggml_top_k(in.ctx, ggml_view_2d(in.ctx, base, 33, 4, base->nb[1], 3 * base->nb[0]), 5);
        }, ref5, seed++));
    cases.push_back(exact_case("top_k f32[33,7] transposed k=5",
        [](case_inputs & in) {
            return ggml_top_k(in.ctx, ggml_transpose(in.ctx, in.uniform(GGML_TYPE_F32, {7, 33, 1, 1})), 5);
        },
        ref5, seed++));
    return cases;
}

}  // namespace bops
