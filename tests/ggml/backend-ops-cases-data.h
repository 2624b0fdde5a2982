// tests/ggml/backend-ops-cases-data.h — cases of the data-movement ops (exact results):
// get_rows, set_rows, cpy, cont, concat, argmax, and the index-out-of-range errors.
//
// Usage:
//   bops::check_cases(bops::cases_get_rows());
#pragma once

#include "backend-ops-harness.h"
#include "backend-ops-reference.h"

#include <initializer_list>
#include <numeric>

namespace bops {

inline const ggml_type float_types[] = {GGML_TYPE_F32, GGML_TYPE_F16, GGML_TYPE_BF16};

inline std::string sh(const shape4 & ne) { return shape_str(ne.data()); }
inline std::string tn(ggml_type t) { return ggml_type_name(t); }

// n random row indices in [0, n_rows) for each of the slices (with repeats).
inline std::vector<double> random_indices(uint64_t seed, int64_t n, int64_t n_slices, int64_t n_rows) {
    rng r(seed);
    std::vector<double> v(static_cast<size_t>(n * n_slices));
    for (double & x : v) x = static_cast<double>(r.below(n_rows));
    return v;
}

// n distinct row indices in [0, n_rows) for each slice (a shuffled prefix per slice).
inline std::vector<double> distinct_indices(uint64_t seed, int64_t n, int64_t n_slices, int64_t n_rows) {
    rng r(seed);
    std::vector<double> v;
    for (int64_t s = 0; s < n_slices; ++s) {
        std::vector<int64_t> rows(static_cast<size_t>(n_rows));
        std::iota(rows.begin(), rows.end(), 0);
        for (int64_t i = n_rows - 1; i > 0; --i) std::swap(rows[i], rows[r.below(i + 1)]);
        for (int64_t i = 0; i < n; ++i) v.push_back(static_cast<double>(rows[i]));
    }
    return v;
}

inline op_case exact_case(std::string name, std::function<ggml_tensor *(case_inputs &)> build,
                          std::function<dt(const ref_args &)> ref, uint64_t seed) {
    op_case c;
    c.name = std::move(name);
    c.build = std::move(build);
    c.ref = std::move(ref);
    c.exact = true;
    c.seed = seed;
    return c;
}

inline dt ref_get_rows_args(const ref_args & r) { return ref_get_rows(r.src[0], r.src[1]); }

inline std::vector<op_case> cases_get_rows() {
    std::vector<op_case> cases;
    struct shape_n { shape4 a; int64_t n; };
    const shape_n shapes[] = {{{7, 11, 1, 1}, 5}, {{33, 9, 3, 2}, 4}, {{129, 5, 1, 1}, 1}, {{1, 4, 1, 1}, 7}, {{67, 3, 2, 1}, 9},
                              {{257, 40, 1, 1}, 33}};  // the last is big enough for several threads
    uint64_t seed = 100;
    for (ggml_type t : float_types) {
        for (const shape_n & s : shapes) {
            const std::vector<double> idx = random_indices(seed, s.n, s.a[2] * s.a[3], s.a[1]);
            const shape4 a = s.a;
            const shape4 ine = {s.n, a[2], a[3], 1};
            cases.push_back(exact_case("get_rows a=" + tn(t) + sh(a) + " idx=i32" + sh(ine),
                [=](case_inputs & in) { return ggml_get_rows(in.ctx, in.uniform(t, a, -4, 4), in.values(GGML_TYPE_I32, ine, idx)); },
                ref_get_rows_args, seed++));
        }
        // a: rows strided (view of wider rows); indices: a strided view
        const std::vector<double> idx = random_indices(seed, 8 * 2, 1, 11);
        cases.push_back(exact_case("get_rows a=" + tn(t) + "[33,11,2,1] view of [40,11,2,1], idx=i32[6,2] view of [8,2]",
            [=](case_inputs & in) {
                ggml_tensor * base = in.uniform(t, {40, 11, 2, 1}, -4, 4);
                ggml_tensor * a = ggml_view_3d(in.ctx, base, 33, 11, 2, base->nb[1], base->nb[2], 3 * base->nb[0]);
                ggml_tensor * ib = in.values(GGML_TYPE_I32, {8, 2, 1, 1}, idx);
                ggml_tensor * i = ggml_view_2d(in.ctx, ib, 6, 2, ib->nb[1], ib->nb[0]);
                return ggml_get_rows(in.ctx, a, i);
            }, ref_get_rows_args, seed++));
        // a transposed: elements of a row are strided
        const std::vector<double> idx_t = random_indices(seed, 6, 1, 11);
        cases.push_back(exact_case("get_rows a=" + tn(t) + "[7,11] transposed, idx=i32[6]",
            [=](case_inputs & in) {
                ggml_tensor * a = ggml_transpose(in.ctx, in.uniform(t, {11, 7, 1, 1}, -4, 4));
                return ggml_get_rows(in.ctx, a, in.values(GGML_TYPE_I32, {6, 1, 1, 1}, idx_t));
            }, ref_get_rows_args, seed++));
    }
    return cases;
}

inline dt ref_set_rows_args(const ref_args & r) { return ref_set_rows(r.out_before, r.src[0], r.src[1]); }

inline std::vector<op_case> cases_set_rows() {
    std::vector<op_case> cases;
    struct shape_c { shape4 a; int64_t n; int64_t c1, c2; };
    const shape_c shapes[] = {{{7, 10, 1, 1}, 4, 1, 1}, {{33, 12, 3, 2}, 5, 3, 2}, {{33, 12, 3, 2}, 5, 1, 2},
                              {{33, 12, 3, 2}, 5, 3, 1}, {{33, 12, 3, 2}, 5, 1, 1}, {{129, 3, 1, 1}, 1, 1, 1},
                              {{257, 40, 1, 1}, 20, 1, 1}};  // the last is big enough for several threads
    uint64_t seed = 200;
    for (ggml_type t : float_types) {
        for (ggml_type it : {GGML_TYPE_I32, GGML_TYPE_I64}) {
            for (const shape_c & s : shapes) {
                const shape4 a = s.a, b = {a[0], s.n, a[2], a[3]}, c = {s.n, s.c1, s.c2, 1};
                const std::vector<double> idx = distinct_indices(seed, s.n, s.c1 * s.c2, a[1]);
                cases.push_back(exact_case("set_rows a=" + tn(t) + sh(a) + " b=f32" + sh(b) + " idx=" + tn(it) + sh(c),
                    [=](case_inputs & in) {
                        ggml_tensor * at = in.uniform(t, a, -4, 4);
                        return ggml_set_rows(in.ctx, at, in.uniform(GGML_TYPE_F32, b, -4, 4), in.values(it, c, idx));
                    }, ref_set_rows_args, seed++));
            }
            // destination: a view with wider rows; rows b: a view with wider rows
            const std::vector<double> idx = distinct_indices(seed, 4, 1, 9);
            cases.push_back(exact_case("set_rows a=" + tn(t) + "[33,9] view of [38,9] b=f32[33,4] view of [35,4] idx=" + tn(it) + "[4]",
                [=](case_inputs & in) {
                    ggml_tensor * abase = in.uniform(t, {38, 9, 1, 1}, -4, 4);
                    ggml_tensor * at = ggml_view_2d(in.ctx, abase, 33, 9, abase->nb[1], 2 * abase->nb[0]);
                    ggml_tensor * bbase = in.uniform(GGML_TYPE_F32, {35, 4, 1, 1}, -4, 4);
                    ggml_tensor * bt = ggml_view_2d(in.ctx, bbase, 33, 4, bbase->nb[1], bbase->nb[0]);
                    return ggml_set_rows(in.ctx, at, bt, in.values(it, {4, 1, 1, 1}, idx));
                }, ref_set_rows_args, seed++));
        }
    }
    return cases;
}

inline dt ref_cpy_args(const ref_args & r) { return ref_reorder(r.src[0], shape_of(r.out)); }

// Values that exercise rounding, overflow and subnormals of the F32 -> F16/BF16 conversions.
inline std::vector<double> cpy_special_values() {
    const double t16 = std::ldexp(1.0, -11), t8 = std::ldexp(1.0, -8);
    std::vector<double> v = {0.0, -0.0, 1e-8, -6e-8, 3e-5, 65504.0, 65519.99, 65520.0, 1e5, -1e5,
                             INFINITY, -INFINITY, NAN, 1.0 + t16, 1.0 + 3 * t16, -(1.0 + t16), 1.0 + t8,
                             1.0 + 3 * t8, 3.0e38, -3.3e38, 1e-40, 0.1, 1.0 / 3.0, 2049.0, 2051.0,
                             std::ldexp(1.0, -24), std::ldexp(1.5, -25), std::ldexp(1.0, -25), 255.5, 257.0};
    for (double & x : v) x = static_cast<float>(x);
    while (v.size() % 8) v.push_back(static_cast<float>(v.size()) * 0.37f);
    return v;
}

inline std::vector<op_case> cases_cpy() {
    std::vector<op_case> cases;
    uint64_t seed = 300;
    for (ggml_type ta : float_types) {
        for (ggml_type tb : float_types) {
            const std::string pair = tn(ta) + "->" + tn(tb);
            for (const shape4 & s : {shape4{7, 3, 1, 1}, shape4{129, 5, 2, 1}, shape4{1, 1, 1, 1}, shape4{129, 67, 1, 1}}) {
                cases.push_back(exact_case("cpy " + pair + " " + sh(s),
                    [=](case_inputs & in) { return ggml_cpy(in.ctx, in.uniform(ta, s, -4, 4), in.uniform(tb, s)); },
                    ref_cpy_args, seed++));
            }
            cases.push_back(exact_case("cpy " + pair + " [33,5] into a view of [37,5]",
                [=](case_inputs & in) {
                    ggml_tensor * base = in.uniform(tb, {37, 5, 1, 1});
                    ggml_tensor * b = ggml_view_2d(in.ctx, base, 33, 5, base->nb[1], 2 * base->nb[0]);
                    return ggml_cpy(in.ctx, in.uniform(ta, {33, 5, 1, 1}, -4, 4), b);
                }, ref_cpy_args, seed++));
            cases.push_back(exact_case("cpy " + pair + " [7,9] into a transposed view",
                [=](case_inputs & in) {
                    ggml_tensor * b = ggml_transpose(in.ctx, in.uniform(tb, {9, 7, 1, 1}));
                    return ggml_cpy(in.ctx, in.uniform(ta, {7, 9, 1, 1}, -4, 4), b);
                }, ref_cpy_args, seed++));
            cases.push_back(exact_case("cpy " + pair + " permuted [3,4,5] source -> [12,5]",
                [=](case_inputs & in) {
                    ggml_tensor * a = ggml_permute(in.ctx, in.uniform(ta, {5, 3, 4, 1}, -4, 4), 2, 0, 1, 3);
                    return ggml_cpy(in.ctx, a, in.uniform(tb, {12, 5, 1, 1}));
                }, ref_cpy_args, seed++));
            cases.push_back(exact_case("cpy " + pair + " [6,4,3] -> [8,9] (reshaping)",
                [=](case_inputs & in) { return ggml_cpy(in.ctx, in.uniform(ta, {6, 4, 3, 1}, -4, 4), in.uniform(tb, {8, 9, 1, 1})); },
                ref_cpy_args, seed++));
            const std::vector<double> sv = cpy_special_values();
            const int64_t n = static_cast<int64_t>(sv.size());
            op_case special = exact_case("cpy " + pair + " special values (overflow, subnormal, ties, inf, NaN)",
                [=](case_inputs & in) { return ggml_cpy(in.ctx, in.values(ta, {n, 1, 1, 1}, sv), in.uniform(tb, {n, 1, 1, 1})); },
                ref_cpy_args, seed++);
            special.allow_nonfinite = true;
            cases.push_back(special);
        }
    }
    return cases;
}

inline std::vector<op_case> cases_cont() {
    std::vector<op_case> cases;
    uint64_t seed = 400;
    for (ggml_type t : float_types) {
        const std::string n = tn(t);
        cases.push_back(exact_case("cont " + n + " permute(2,0,1,3) of [5,3,4,2]",
            [=](case_inputs & in) { return ggml_cont(in.ctx, ggml_permute(in.ctx, in.uniform(t, {5, 3, 4, 2}), 2, 0, 1, 3)); },
            ref_cpy_args, seed++));
        cases.push_back(exact_case("cont " + n + " permute(0,2,1,3) of [33,4,3,1]",
            [=](case_inputs & in) { return ggml_cont(in.ctx, ggml_permute(in.ctx, in.uniform(t, {33, 4, 3, 1}), 0, 2, 1, 3)); },
            ref_cpy_args, seed++));
        cases.push_back(exact_case("cont " + n + " transpose of [7,5]",
            [=](case_inputs & in) { return ggml_cont(in.ctx, ggml_transpose(in.ctx, in.uniform(t, {7, 5, 1, 1}))); },
            ref_cpy_args, seed++));
        cases.push_back(exact_case("cont " + n + " transpose of [129,67]",
            [=](case_inputs & in) { return ggml_cont(in.ctx, ggml_transpose(in.ctx, in.uniform(t, {129, 67, 1, 1}))); },
            ref_cpy_args, seed++));
        cases.push_back(exact_case("cont " + n + " transpose of [33,70,3,2]",
            [=](case_inputs & in) { return ggml_cont(in.ctx, ggml_transpose(in.ctx, in.uniform(t, {33, 70, 3, 2}))); },
            ref_cpy_args, seed++));
        // attention's V^T: heads of a [3 x 20, 37] cache as [20, 37, 3] slices, transposed
        cases.push_back(exact_case("cont " + n + " transpose of a [20,37,3] head view of [60,37]",
            [=](case_inputs & in) {
                ggml_tensor * cache = in.uniform(t, {60, 37, 1, 1});
                ggml_tensor * heads = ggml_view_3d(in.ctx, cache, 20, 37, 3, cache->nb[1], 20 * cache->nb[0], 0);
                return ggml_cont(in.ctx, ggml_transpose(in.ctx, heads));
            }, ref_cpy_args, seed++));
        cases.push_back(exact_case("cont_2d " + n + " transpose of [7,5] -> [35,1]",
            [=](case_inputs & in) { return ggml_cont_2d(in.ctx, ggml_transpose(in.ctx, in.uniform(t, {7, 5, 1, 1})), 35, 1); },
            ref_cpy_args, seed++));
        cases.push_back(exact_case("cont_4d " + n + " permute(1,3,0,2) of [3,4,5,2] -> [6,2,5,2]",
            [=](case_inputs & in) {
                ggml_tensor * p = ggml_permute(in.ctx, in.uniform(t, {3, 4, 5, 2}), 1, 3, 0, 2);
                return ggml_cont_4d(in.ctx, p, 6, 2, 5, 2);
            }, ref_cpy_args, seed++));
        cases.push_back(exact_case("cont " + n + " [33,3] view of [40,3]",
            [=](case_inputs & in) {
                ggml_tensor * base = in.uniform(t, {40, 3, 1, 1});
                return ggml_cont(in.ctx, ggml_view_2d(in.ctx, base, 33, 3, base->nb[1], 5 * base->nb[0]));
            }, ref_cpy_args, seed++));
    }
    return cases;
}

inline std::vector<op_case> cases_concat() {
    std::vector<op_case> cases;
    uint64_t seed = 500;
    const shape4 a = {7, 3, 2, 2};
    for (ggml_type t : float_types) {
        for (int dim = 0; dim < 4; ++dim) {
            const int64_t b_len[4] = {5, 4, 1, 3};
            shape4 b = a;
            b[dim] = b_len[dim];
            auto ref = [dim](const ref_args & r) { return ref_concat(r.src[0], r.src[1], dim); };
            cases.push_back(exact_case("concat " + tn(t) + " dim " + std::to_string(dim) + " " + sh(a) + " + " + sh(b),
                [=](case_inputs & in) { return ggml_concat(in.ctx, in.uniform(t, a), in.uniform(t, b), dim); }, ref, seed++));
            // non-contiguous: a transposed, b a view with wider rows
            shape4 at = {a[1], a[0], a[2], a[3]};
            cases.push_back(exact_case("concat " + tn(t) + " dim " + std::to_string(dim) + " transposed a, b view of wider rows",
                [=](case_inputs & in) {
                    ggml_tensor * ta = ggml_permute(in.ctx, in.uniform(t, at), 1, 0, 2, 3);
                    ggml_tensor * bb = in.uniform(t, {b[0] + 3, b[1], b[2], b[3]});
                    ggml_tensor * tb = ggml_view_4d(in.ctx, bb, b[0], b[1], b[2], b[3], bb->nb[1], bb->nb[2], bb->nb[3], bb->nb[0]);
                    return ggml_concat(in.ctx, ta, tb, dim);
                }, ref, seed++));
        }
        auto ref1 = [](const ref_args & r) { return ref_concat(r.src[0], r.src[1], 1); };
        cases.push_back(exact_case("concat " + tn(t) + " dim 1 [67,31,3,1] + [67,20,3,1]",
            [=](case_inputs & in) { return ggml_concat(in.ctx, in.uniform(t, {67, 31, 3, 1}), in.uniform(t, {67, 20, 3, 1}), 1); },
            ref1, seed++));
    }
    return cases;
}

inline std::vector<op_case> cases_argmax() {
    std::vector<op_case> cases;
    uint64_t seed = 600;
    auto ref = [](const ref_args & r) { return ref_argmax(r.src[0]); };
    for (const shape4 & s : {shape4{1, 3, 1, 1}, shape4{7, 5, 1, 1}, shape4{33, 4, 1, 1}, shape4{129, 3, 1, 1},
                             shape4{1000, 2, 1, 1}, shape4{4099, 1, 1, 1},
                             shape4{513, 17, 1, 1}}) {
        cases.push_back(exact_case("argmax f32" + sh(s),
            [=](case_inputs & in) { return ggml_argmax(in.ctx, in.uniform(GGML_TYPE_F32, s, -3, 3)); }, ref, seed++));
        // few distinct values: many ties, the first maximum must win
        rng r(seed);
        std::vector<double> v(static_cast<size_t>(s[0] * s[1]));
        for (double & x : v) x = static_cast<double>(r.below(5)) - 2.0;
        cases.push_back(exact_case("argmax f32" + sh(s) + " with ties",
            [=](case_inputs & in) { return ggml_argmax(in.ctx, in.values(GGML_TYPE_F32, s, v)); }, ref, seed++));
    }
    // the maximum in the last element, equal rows, very negative values
    std::vector<double> v;
    for (int64_t i = 0; i < 67; ++i) v.push_back(static_cast<double>(i) * 0.5);
    for (int64_t i = 0; i < 67; ++i) v.push_back(1.25);
    for (int64_t i = 0; i < 67; ++i) v.push_back(-1e30 - static_cast<double>(i) * 1e24);
    cases.push_back(exact_case("argmax f32[67,3] last, all-equal and very negative rows",
        [=](case_inputs & in) { return ggml_argmax(in.ctx, in.values(GGML_TYPE_F32, {67, 3, 1, 1}, v)); }, ref, seed++));
    cases.push_back(exact_case("argmax f32[33,4] view of [40,4]",
        [=](case_inputs & in) {
            ggml_tensor * base = in.uniform(GGML_TYPE_F32, {40, 4, 1, 1});
            return ggml_argmax(in.ctx, ggml_view_2d(in.ctx, base, 33, 4, base->nb[1], 4 * base->nb[0]));
        }, ref, seed++));
    return cases;
}

// Data errors: an index out of range makes graph_compute fail without writing out of bounds.
// Guard tensors around the operands must come back unchanged (the harness checks every input).
inline std::vector<op_case> cases_index_errors() {
    std::vector<op_case> cases;
    uint64_t seed = 700;
    auto no_ref = [](const ref_args &) -> dt { GGML_ABORT("no reference for an error case"); };
    for (double bad : {9.0, -1.0, 1e6}) {
        op_case c = exact_case("get_rows f32[16,9] index " + std::to_string(static_cast<int64_t>(bad)),
            [=](case_inputs & in) {
                in.uniform(GGML_TYPE_F32, {64, 1, 1, 1});  // guard
                ggml_tensor * a = in.uniform(GGML_TYPE_F32, {16, 9, 1, 1});
                ggml_tensor * i = in.values(GGML_TYPE_I32, {4, 1, 1, 1}, {0.0, bad, 3.0, 8.0});
                in.uniform(GGML_TYPE_F32, {64, 1, 1, 1});  // guard
                return ggml_get_rows(in.ctx, a, i);
            }, no_ref, seed++);
        c.expect_failure = true;
        cases.push_back(c);
    }
    const double i64_bad[] = {9.0, -1.0, 4294967297.0 /* 2^32 + 1: 1 if truncated to 32 bits */, -4294967296.0};
    for (ggml_type it : {GGML_TYPE_I32, GGML_TYPE_I64}) {
        for (double bad : i64_bad) {
            if (it == GGML_TYPE_I32 && std::fabs(bad) > 1e9) continue;
            op_case c = exact_case("set_rows f16[16,9] idx " + tn(it) + " " + std::to_string(static_cast<int64_t>(bad)),
                [=](case_inputs & in) {
                    in.uniform(GGML_TYPE_F16, {64, 1, 1, 1});  // guard
                    ggml_tensor * a = in.uniform(GGML_TYPE_F16, {16, 9, 1, 1});
                    in.uniform(GGML_TYPE_F16, {64, 1, 1, 1});  // guard
                    ggml_tensor * b = in.uniform(GGML_TYPE_F32, {16, 3, 1, 1});
                    return ggml_set_rows(in.ctx, a, b, in.values(it, {3, 1, 1, 1}, {2.0, bad, 5.0}));
                }, no_ref, seed++);
            c.expect_failure = true;
            cases.push_back(c);
        }
    }
    return cases;
}

}  // namespace bops
