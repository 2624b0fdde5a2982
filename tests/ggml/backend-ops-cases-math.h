// tests/ggml/backend-ops-cases-math.h — cases of the element-wise and row ops: add, mul, div,
// scale, rms_norm, norm, silu, gelu, tanh, swiglu, soft_max_ext.
//
// Usage:
//   bops::check_cases(bops::cases_binary(GGML_OP_ADD));
//
// Bounds (NMSE): results stored as F32 get the bound of the op's float arithmetic; results
// stored as F16 / BF16 get the bound of their rounding (relative error 2^-11 / 2^-8:
// NMSE <= ~2.4e-7 / ~1.5e-5), i.e. 1e-6 / 5e-5.
#pragma once

#include "backend-ops-cases-data.h"

namespace bops {

inline double bound_for(ggml_type out, double f32_bound) {
    switch (out) {
        case GGML_TYPE_F16: return 1e-6;
        case GGML_TYPE_BF16: return 5e-5;
        default: return f32_bound;
    }
}

inline op_case math_case(std::string name, std::function<ggml_tensor *(case_inputs &)> build,
                         std::function<dt(const ref_args &)> ref, double max_nmse, bool in_place, uint64_t seed) {
    op_case c;
    c.name = std::move(name);
    c.build = std::move(build);
    c.ref = std::move(ref);
    c.max_nmse = max_nmse;
    c.in_place = in_place;
    c.seed = seed;
    return c;
}

// ADD, MUL or DIV: every type pair on a broadcasting shape, more shapes for same-type pairs,
// non-contiguous a and b. DIV's divisors lie in [0.5, 2].
inline std::vector<op_case> cases_binary(ggml_op op) {
    const bool is_add = op == GGML_OP_ADD, is_div = op == GGML_OP_DIV;
    const std::string on = is_add ? "add " : is_div ? "div " : "mul ";
    const double lim = is_add ? 1.0 : 2.0;
    const double b_lo = is_div ? 0.5 : -lim, b_hi = is_div ? 2.0 : lim;
    auto build_op = [op](ggml_context * ctx, ggml_tensor * a, ggml_tensor * b) {
        return op == GGML_OP_ADD ? ggml_add(ctx, a, b) : op == GGML_OP_DIV ? ggml_div(ctx, a, b) : ggml_mul(ctx, a, b);
    };
    auto ref = [op](const ref_args & r) {
        return ref_binary(r.src[0], r.src[1], [op](double x, double y) {
            return op == GGML_OP_ADD ? x + y : op == GGML_OP_DIV ? x / y : x * y;
        });
    };
    struct shapes { shape4 a, b; };
    const shapes same_type_shapes[] = {
        {{1, 1, 1, 1}, {1, 1, 1, 1}}, {{7, 3, 2, 1}, {7, 3, 2, 1}}, {{33, 5, 3, 2}, {1, 5, 1, 2}},
        {{129, 3, 1, 1}, {1, 1, 1, 1}}, {{67, 4, 2, 3}, {67, 4, 2, 3}}, {{1000, 2, 1, 1}, {1000, 1, 1, 1}},
        {{67, 31, 3, 1}, {67, 1, 3, 1}}};
    std::vector<op_case> cases;
    uint64_t seed = is_add ? 1000 : is_div ? 1150 : 1100;
    auto add_case = [&](ggml_type ta, ggml_type tb, const shape4 & a, const shape4 & b) {
        cases.push_back(math_case(on + tn(ta) + sh(a) + " " + tn(tb) + sh(b),
            [=](case_inputs & in) { return build_op(in.ctx, in.uniform(ta, a, -lim, lim), in.uniform(tb, b, b_lo, b_hi)); },
            ref, bound_for(ta, 1e-12), true, seed++));
    };
    for (ggml_type ta : float_types)
        for (ggml_type tb : float_types) add_case(ta, tb, {33, 5, 3, 2}, {33, 1, 3, 1});
    for (ggml_type t : float_types) {
        for (const shapes & s : same_type_shapes) add_case(t, t, s.a, s.b);
        cases.push_back(math_case(on + tn(t) + "[33,5] transposed, b " + tn(t) + "[33,5] view of [40,5]",
            [=](case_inputs & in) {
                ggml_tensor * a = ggml_transpose(in.ctx, in.uniform(t, {5, 33, 1, 1}, -lim, lim));
                ggml_tensor * bb = in.uniform(t, {40, 5, 1, 1}, b_lo, b_hi);
                return build_op(in.ctx, a, ggml_view_2d(in.ctx, bb, 33, 5, bb->nb[1], 4 * bb->nb[0]));
            }, ref, bound_for(t, 1e-12), false, seed++));
        cases.push_back(math_case(on + tn(t) + "[8,3,5] permuted, b f32[8,1,5] permuted view",
            [=](case_inputs & in) {
                ggml_tensor * a = ggml_permute(in.ctx, in.uniform(t, {8, 5, 3, 1}, -lim, lim), 0, 2, 1, 3);
                ggml_tensor * b = ggml_permute(in.ctx, in.uniform(GGML_TYPE_F32, {8, 5, 1, 1}, b_lo, b_hi), 0, 2, 1, 3);
                return build_op(in.ctx, a, b);
            }, ref, bound_for(t, 1e-12), false, seed++));
    }
    return cases;
}

inline std::vector<op_case> cases_scale() {
    std::vector<op_case> cases;
    uint64_t seed = 1200;
    const float params[][2] = {{0.75f, 0.0f}, {-1.5f, 0.25f}};
    for (ggml_type t : float_types) {
        for (const auto & sb : params) {
            const float s = sb[0], b = sb[1];
            auto build_op = [s, b](ggml_context * ctx, ggml_tensor * a) {
                return b == 0.0f ? ggml_scale(ctx, a, s) : ggml_scale_bias(ctx, a, s, b);
            };
            auto ref = [s, b](const ref_args & r) {
                return ref_unary(r.src[0], [s, b](double x) { return x * static_cast<double>(s) + static_cast<double>(b); });
            };
            const std::string n = "scale " + tn(t) + " s=" + std::to_string(s) + " b=" + std::to_string(b) + " ";
            for (const shape4 & sh4 : {shape4{1, 1, 1, 1}, shape4{7, 3, 1, 1}, shape4{129, 5, 2, 1}, shape4{67, 31, 3, 1}}) {
                cases.push_back(math_case(n + sh(sh4),
                    [=](case_inputs & in) { return build_op(in.ctx, in.uniform(t, sh4, -2, 2)); },
                    ref, bound_for(t, 1e-12), true, seed++));
            }
            cases.push_back(math_case(n + "[33,7] transposed",
                [=](case_inputs & in) { return build_op(in.ctx, ggml_transpose(in.ctx, in.uniform(t, {7, 33, 1, 1}, -2, 2))); },
                ref, bound_for(t, 1e-12), false, seed++));
        }
    }
    return cases;
}

// RMS_NORM (rms = true) or NORM over odd row lengths, strided and transposed rows.
inline std::vector<op_case> cases_norm(bool rms) {
    std::vector<op_case> cases;
    uint64_t seed = rms ? 1300 : 1400;
    const float eps = rms ? 1e-6f : 1e-5f;
    const std::string on = std::string(rms ? "rms_norm" : "norm") + " f32";
    auto build_op = [rms, eps](ggml_context * ctx, ggml_tensor * a) { return rms ? ggml_rms_norm(ctx, a, eps) : ggml_norm(ctx, a, eps); };
    auto ref = [rms, eps](const ref_args & r) { return ref_norm(r.src[0], static_cast<double>(eps), rms); };
    for (int64_t n : {1, 3, 7, 33, 67, 129, 1000, 4096}) {
        const shape4 s = {n, 3, 2, 1};
        cases.push_back(math_case(on + sh(s),
            [=](case_inputs & in) { return build_op(in.ctx, in.uniform(GGML_TYPE_F32, s, -1, 1)); }, ref, 1e-10, true, seed++));
    }
    // rows with a large mean relative to their spread (cancellation in the variance)
    cases.push_back(math_case(on + "[257,4] values in [9,11]",
        [=](case_inputs & in) { return build_op(in.ctx, in.uniform(GGML_TYPE_F32, {257, 4, 1, 1}, 9, 11)); }, ref, 1e-10, true, seed++));
    cases.push_back(math_case(on + "[33,3,2] view of [37,3,2]",
        [=](case_inputs & in) {
            ggml_tensor * base = in.uniform(GGML_TYPE_F32, {37, 3, 2, 1}, -1, 1);
            return build_op(in.ctx, ggml_view_3d(in.ctx, base, 33, 3, 2, base->nb[1], base->nb[2], 2 * base->nb[0]));
        }, ref, 1e-10, false, seed++));
    cases.push_back(math_case(on + "[33,5] transposed",
        [=](case_inputs & in) { return build_op(in.ctx, ggml_transpose(in.ctx, in.uniform(GGML_TYPE_F32, {5, 33, 1, 1}, -1, 1))); },
        ref, 1e-10, false, seed++));
    cases.push_back(math_case(on + "[67,129] (many rows)",
        [=](case_inputs & in) { return build_op(in.ctx, in.uniform(GGML_TYPE_F32, {67, 129, 1, 1}, -1, 1)); }, ref, 1e-10, true, seed++));
    return cases;
}

// SILU, GELU or TANH (unary), or SWIGLU.
inline std::vector<op_case> cases_activation(ggml_op op) {
    std::vector<op_case> cases;
    uint64_t seed = 1500 + 100 * static_cast<uint64_t>(op == GGML_OP_GELU) + 200 * static_cast<uint64_t>(op == GGML_OP_SWIGLU) +
                    250 * static_cast<uint64_t>(op == GGML_OP_TANH);
    const std::string on = op == GGML_OP_SILU ? "silu " : op == GGML_OP_GELU ? "gelu " : op == GGML_OP_TANH ? "tanh " : "swiglu ";
    auto build_op = [op](ggml_context * ctx, ggml_tensor * a, ggml_tensor * b) {
        switch (op) {
            case GGML_OP_SILU: return ggml_silu(ctx, a);
            case GGML_OP_GELU: return ggml_gelu(ctx, a);
            case GGML_OP_TANH: return ggml_tanh(ctx, a);
            default: return ggml_swiglu(ctx, a, b);
        }
    };
    auto ref = [op](const ref_args & r) {
        if (op == GGML_OP_SWIGLU) return ref_binary(r.src[0], r.src[1], [](double x, double y) { return ref_silu(x) * y; });
        if (op == GGML_OP_TANH) return ref_unary(r.src[0], [](double x) { return std::tanh(x); });
        return ref_unary(r.src[0], op == GGML_OP_SILU ? ref_silu : ref_gelu);
    };
    const bool two = op == GGML_OP_SWIGLU;
    for (ggml_type t : float_types) {
        const double bound = bound_for(t, 1e-10);
        for (const shape4 & s : {shape4{1, 1, 1, 1}, shape4{7, 3, 1, 1}, shape4{129, 5, 2, 1}, shape4{1000, 3, 1, 1},
                                  shape4{67, 31, 3, 1}}) {
            cases.push_back(math_case(on + tn(t) + sh(s),
                [=](case_inputs & in) {
                    ggml_tensor * a = in.uniform(t, s, -8, 8);
                    return build_op(in.ctx, a, two ? in.uniform(t, s, -2, 2) : nullptr);
                }, ref, bound, true, seed++));
        }
        cases.push_back(math_case(on + tn(t) + "[33,7] transposed",
            [=](case_inputs & in) {
                ggml_tensor * a = ggml_transpose(in.ctx, in.uniform(t, {7, 33, 1, 1}, -8, 8));
                return build_op(in.ctx, a, two ? ggml_transpose(in.ctx, in.uniform(t, {7, 33, 1, 1}, -2, 2)) : nullptr);
            }, ref, bound, false, seed++));
        cases.push_back(math_case(on + tn(t) + "[67,5] halves of a fused [134,5] tensor",
            [=](case_inputs & in) {
                ggml_tensor * base = in.uniform(t, {134, 5, 1, 1}, -6, 6);
                ggml_tensor * a = ggml_view_2d(in.ctx, base, 67, 5, base->nb[1], 0);
                ggml_tensor * b = ggml_view_2d(in.ctx, base, 67, 5, base->nb[1], 67 * base->nb[0]);
                return build_op(in.ctx, a, two ? b : nullptr);
            }, ref, bound, false, seed++));
    }
    return cases;
}

// A mask [n0, n1, m2, m3]: random values in [-2, 2], -inf with probability p_inf, and rows
// (i1 < n_masked_rows) entirely -inf.
inline std::vector<double> soft_max_mask(uint64_t seed, const shape4 & ne, double p_inf, int64_t n_masked_rows) {
    rng r(seed);
    dt m(ne);
    for_each_index(ne, [&](int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
        const double u = r.uniform(0.0, 1.0);
        m.at(i0, i1, i2, i3) = i1 < n_masked_rows || u < p_inf ? -INFINITY : r.uniform(-2.0, 2.0);
    });
    return m.v;
}

// A causal mask [n, n]: key j visible to query i when j <= i - shift (rows i < shift: none).
inline std::vector<double> causal_mask(int64_t n, int64_t shift) {
    dt m({n, n, 1, 1});
    for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < n; ++j) m.at(j, i) = j <= i - shift ? 0.0 : -INFINITY;
    return m.v;
}

inline std::vector<op_case> cases_soft_max() {
    std::vector<op_case> cases;
    uint64_t seed = 1800;
    struct sm { shape4 a; float scale; ggml_type mt; shape4 m; double p_inf; int64_t masked_rows; double lim; };
    const ggml_type none = GGML_TYPE_COUNT;
    const sm list[] = {
        {{7, 3, 1, 1}, 1.0f, none, {}, 0, 0, 4},
        {{129, 4, 2, 1}, 0.125f, none, {}, 0, 0, 4},
        {{1, 5, 1, 1}, 1.0f, none, {}, 0, 0, 4},
        {{129, 3, 1, 1}, 1.0f, none, {}, 0, 0, 100},  // exp would overflow without the row maximum
        {{33, 5, 3, 2}, 0.5f, GGML_TYPE_F32, {33, 8, 1, 1}, 0.2, 0, 4},
        {{33, 5, 3, 2}, 1.0f, GGML_TYPE_F16, {33, 5, 3, 1}, 0.2, 0, 4},
        {{67, 7, 4, 2}, 0.3f, GGML_TYPE_F16, {67, 7, 1, 2}, 0.1, 2, 4},
        {{67, 7, 4, 2}, 2.0f, GGML_TYPE_F32, {67, 9, 2, 1}, 0.1, 3, 4},
        {{1000, 2, 1, 1}, 1.0f, GGML_TYPE_F16, {1000, 2, 1, 1}, 0.05, 0, 8},
        {{4096, 1, 1, 1}, 1.0f, GGML_TYPE_F32, {4096, 1, 1, 1}, 0.5, 0, 8},
        {{67, 33, 4, 1}, 0.7f, GGML_TYPE_F16, {67, 33, 1, 1}, 0.1, 3, 4},
    };
    for (const sm & s : list) {
        const std::vector<double> mv = s.mt == none ? std::vector<double>() : soft_max_mask(seed, s.m, s.p_inf, s.masked_rows);
        const float scale = s.scale;
        auto ref_s = [scale](const ref_args & r) {
            return ref_soft_max(r.src[0], r.src[1].v.empty() ? nullptr : &r.src[1], static_cast<double>(scale));
        };
        std::string name = "soft_max_ext f32" + sh(s.a) + " scale=" + std::to_string(scale) + " range=" + std::to_string(s.lim);
        if (s.mt != none) name += " mask " + tn(s.mt) + sh(s.m) + (s.masked_rows ? " with fully masked rows" : "");
        op_case c = math_case(name,
            [=](case_inputs & in) {
                ggml_tensor * a = in.uniform(GGML_TYPE_F32, s.a, -s.lim, s.lim);
                return ggml_soft_max_ext(in.ctx, a, s.mt == none ? nullptr : in.values(s.mt, s.m, mv), scale);
            }, ref_s, 1e-10, true, seed++);
        c.zeros_exact = true;
        cases.push_back(c);
    }
    for (ggml_type mt : {GGML_TYPE_F32, GGML_TYPE_F16}) {
        const std::vector<double> mv = causal_mask(16, 2);
        op_case c = math_case("soft_max_ext f32[16,16,2,1] causal mask " + tn(mt) + "[16,16] (rows 0-1 fully masked)",
            [=](case_inputs & in) {
                return ggml_soft_max_ext(in.ctx, in.uniform(GGML_TYPE_F32, {16, 16, 2, 1}, -4, 4), in.values(mt, {16, 16, 1, 1}, mv), 0.25f);
            }, [](const ref_args & r) { return ref_soft_max(r.src[0], &r.src[1], 0.25); }, 1e-10, true, seed++);
        c.zeros_exact = true;
        cases.push_back(c);
    }
    const std::vector<double> mv = soft_max_mask(seed, {33, 5, 1, 1}, 0.2, 1);
    op_case c = math_case("soft_max_ext f32[33,5] view of [40,5], mask f32[33,5]",
        [=](case_inputs & in) {
            ggml_tensor * base = in.uniform(GGML_TYPE_F32, {40, 5, 1, 1}, -4, 4);
            ggml_tensor * a = ggml_view_2d(in.ctx, base, 33, 5, base->nb[1], 3 * base->nb[0]);
            return ggml_soft_max_ext(in.ctx, a, in.values(GGML_TYPE_F32, {33, 5, 1, 1}, mv), 1.0f);
        }, [](const ref_args & r) { return ref_soft_max(r.src[0], &r.src[1], 1.0); }, 1e-10, false, seed++);
    c.zeros_exact = true;
    cases.push_back(c);
    cases.push_back(math_case("soft_max f32[67,3] (no mask, scale 1)",
        [](case_inputs & in) { return ggml_soft_max(in.ctx, in.uniform(GGML_TYPE_F32, {67, 3, 1, 1}, -4, 4)); },
        [](const ref_args & r) { return ref_soft_max(r.src[0], nullptr, 1.0); }, 1e-10, true, seed++));
    return cases;
}

}  // namespace bops
