// tests/ggml/backend-ops-cases-matmul.h — cases of mul_mat and rope.
//
// Usage:
//   bops::check_cases(bops::cases_mul_mat());
//
// mul_mat bounds (NMSE) by the type of a: F32 1e-8, F16 1e-6, BF16 5e-5 (b may be rounded to
// a's type for the dot products). rope: the angle pos*theta is computed in float by the
// kernel, so its absolute error grows with the position (~pos * 2^-24 per ulp); the bound is
// 1e-10 + (max_pos * 1e-6)^2, far below what a wrong angle, pairing or YaRN ramp gives.
// rope with frequency factors (ggml_rope_ff): random factors in [0.5, 8) or Llama 3.1's
// profile; cases_rope_freq_factor_errors: factors <= 0 or not finite fail the compute.
#pragma once

#include "backend-ops-cases-math.h"
#include "backend-ops-rope.h"

#include <limits>

namespace bops {

inline double bound_mul_mat(ggml_type a) { return a == GGML_TYPE_F32 ? 1e-8 : a == GGML_TYPE_F16 ? 1e-6 : 5e-5; }

inline dt ref_mul_mat_args(const ref_args & r) { return ref_mul_mat(r.src[0], r.src[1]); }

inline std::vector<op_case> cases_mul_mat() {
    struct mm { int64_t K, M, N, a2, a3, b2, b3; };
    const mm shapes[] = {
        {1, 1, 1, 1, 1, 1, 1}, {3, 7, 5, 1, 1, 1, 1}, {7, 3, 1, 1, 1, 1, 1}, {33, 67, 7, 1, 1, 1, 1},
        {67, 33, 3, 1, 1, 1, 1}, {129, 5, 33, 1, 1, 1, 1}, {16, 16, 16, 1, 1, 1, 1}, {64, 17, 9, 1, 1, 1, 1},
        {33, 9, 5, 2, 1, 6, 2}, {32, 8, 4, 2, 3, 2, 3}, {17, 5, 3, 1, 1, 3, 2},  // batched, a broadcast
        {7, 3, 9, 1, 1, 1, 1}, {1, 5, 8, 1, 1, 1, 1}, {33, 4, 8, 1, 1, 1, 1},   // smallest GEMM-sized
        {256, 96, 67, 1, 1, 1, 1}, {1024, 64, 1, 1, 1, 1, 1}, {512, 129, 16, 1, 1, 1, 1}, {4096, 16, 4, 1, 1, 1, 1},
        {2048, 64, 64, 1, 1, 1, 1}, {128, 33, 40, 4, 1, 8, 1},  // a prompt batch; attention-like GQA
    };
    std::vector<op_case> cases;
    uint64_t seed = 2000;
    for (ggml_type t : float_types) {
        const double bound = bound_mul_mat(t);
        for (const mm & s : shapes) {
            const shape4 a = {s.K, s.M, s.a2, s.a3}, b = {s.K, s.N, s.b2, s.b3};
            cases.push_back(math_case("mul_mat a=" + tn(t) + sh(a) + " b=f32" + sh(b),
                [=](case_inputs & in) { return ggml_mul_mat(in.ctx, in.uniform(t, a), in.uniform(GGML_TYPE_F32, b)); },
                ref_mul_mat_args, bound, false, seed++));
        }
        cases.push_back(math_case("mul_mat a=" + tn(t) + "[67,13] b=f32[67,9] transposed",
            [=](case_inputs & in) {
                ggml_tensor * b = ggml_transpose(in.ctx, in.uniform(GGML_TYPE_F32, {9, 67, 1, 1}));
                return ggml_mul_mat(in.ctx, in.uniform(t, {67, 13, 1, 1}), b);
            }, ref_mul_mat_args, bound, false, seed++));
        cases.push_back(math_case("mul_mat a=" + tn(t) + "[64,11,2] permuted (k of attention) b=f32[64,7,6] permuted (q)",
            [=](case_inputs & in) {
                ggml_tensor * a = ggml_permute(in.ctx, in.uniform(t, {64, 2, 11, 1}), 0, 2, 1, 3);
                ggml_tensor * b = ggml_permute(in.ctx, in.uniform(GGML_TYPE_F32, {64, 6, 7, 1}), 0, 2, 1, 3);
                return ggml_mul_mat(in.ctx, a, b);
            }, ref_mul_mat_args, bound, false, seed++));
        cases.push_back(math_case("mul_mat a=" + tn(t) + "[129,21] view of [136,21] b=f32[129,5] view of [130,5]",
            [=](case_inputs & in) {
                ggml_tensor * ab = in.uniform(t, {136, 21, 1, 1});
                ggml_tensor * a = ggml_view_2d(in.ctx, ab, 129, 21, ab->nb[1], 0);
                ggml_tensor * bb = in.uniform(GGML_TYPE_F32, {130, 5, 1, 1});
                return ggml_mul_mat(in.ctx, a, ggml_view_2d(in.ctx, bb, 129, 5, bb->nb[1], bb->nb[0]));
            }, ref_mul_mat_args, bound, false, seed++));
    }
    return cases;
}

enum class rope_ff { none, random, llama3 };

struct rope_case {
    int64_t head_dim, n_head, n_tokens;
    ggml_rope_params p;
    int64_t max_pos;
    rope_ff ff = rope_ff::none;
};

// The frequency factors of a case (empty for none); llama3: Llama 3.1's rope_scaling
// (factor 8, low 1, high 4, original context 8192).
inline std::vector<double> rope_case_factors(const rope_case & r, uint64_t seed) {
    if (r.ff == rope_ff::llama3) return rope_llama3_freq_factors(r.p.n_dims, r.p.freq_base, 8.0, 1.0, 4.0, 8192.0);
    std::vector<double> ff;
    if (r.ff == rope_ff::random) {
        rng g(seed * 7919u + 1);
        for (int i = 0; i < r.p.n_dims / 2; ++i) ff.push_back(g.uniform(0.5, 8.0));
    }
    return ff;
}

inline ggml_rope_params rope_params(int n_dims, int mode, float base = 10000.0f, float freq_scale = 1.0f) {
    ggml_rope_params p;
    p.n_dims = n_dims;
    p.mode = mode;
    p.freq_base = base;
    p.freq_scale = freq_scale;
    return p;
}

inline ggml_rope_params rope_yarn(int n_dims, int mode, int n_ctx_orig, float freq_scale, float ext_factor,
                                  float attn_factor, float beta_fast, float beta_slow) {
    ggml_rope_params p = rope_params(n_dims, mode, 10000.0f, freq_scale);
    p.n_ctx_orig = n_ctx_orig;
    p.ext_factor = ext_factor;
    p.attn_factor = attn_factor;
    p.beta_fast = beta_fast;
    p.beta_slow = beta_slow;
    return p;
}

inline std::string rope_name(const rope_case & r) {
    const ggml_rope_params & p = r.p;
    std::string s = std::string("rope ") + (p.mode == GGML_ROPE_TYPE_NEOX ? "neox" : "normal") + " a=f32[" +
                    std::to_string(r.head_dim) + "," + std::to_string(r.n_head) + "," + std::to_string(r.n_tokens) +
                    "] n_dims=" + std::to_string(p.n_dims) + " base=" + std::to_string(p.freq_base) +
                    " freq_scale=" + std::to_string(p.freq_scale) + " pos<" + std::to_string(r.max_pos);
    if (p.ext_factor != 0.0f)
        s += " yarn(ext=" + std::to_string(p.ext_factor) + " attn=" + std::to_string(p.attn_factor) + " n_ctx_orig=" +
             std::to_string(p.n_ctx_orig) + " beta=" + std::to_string(p.beta_fast) + "/" + std::to_string(p.beta_slow) + ")";
    if (r.ff != rope_ff::none) s += r.ff == rope_ff::random ? " ff=random" : " ff=llama3";
    return s;
}

inline std::vector<op_case> cases_rope() {
    const int N = GGML_ROPE_TYPE_NORMAL, X = GGML_ROPE_TYPE_NEOX;
    const rope_case list[] = {
        {16, 3, 5, rope_params(16, N), 64},
        {16, 3, 5, rope_params(16, X), 64},
        {16, 2, 4, rope_params(8, N), 64},
        {24, 2, 3, rope_params(16, X), 64},
        {7, 3, 2, rope_params(6, N), 64},
        {9, 2, 3, rope_params(4, X), 64},
        {64, 2, 7, rope_params(64, N, 500000.0f, 0.5f), 100},
        {64, 2, 7, rope_params(64, X, 1000000.0f, 0.25f), 100},
        {128, 4, 1, rope_params(128, X), 1000},
        {32, 2, 6, rope_yarn(32, N, 4096, 0.25f, 1.0f, 1.0f, 32.0f, 1.0f), 300},
        {64, 2, 5, rope_yarn(48, X, 2048, 0.125f, 0.5f, 0.9f, 16.0f, 2.0f), 300},
        {32, 3, 4, rope_yarn(32, X, 512, 0.5f, 1.0f, 1.0f, 32.0f, 1.0f), 2000},
        {64, 8, 12, rope_params(64, X), 100},  // big enough for several threads
        {64, 8, 12, rope_yarn(64, N, 4096, 0.25f, 1.0f, 1.0f, 32.0f, 1.0f), 300},
        // frequency factors: both modes, n_dims < head_dim, YaRN off and on, several threads
        {16, 3, 5, rope_params(16, N), 64, rope_ff::random},
        {16, 3, 5, rope_params(16, X), 64, rope_ff::random},
        {16, 2, 4, rope_params(8, N), 64, rope_ff::random},
        {24, 2, 3, rope_params(16, X), 64, rope_ff::random},
        {9, 2, 3, rope_params(4, X), 64, rope_ff::random},
        {64, 2, 7, rope_params(64, N, 500000.0f, 0.5f), 100, rope_ff::random},
        {32, 2, 6, rope_yarn(32, N, 4096, 0.25f, 1.0f, 1.0f, 32.0f, 1.0f), 300, rope_ff::random},
        {64, 2, 5, rope_yarn(48, X, 2048, 0.125f, 0.5f, 0.9f, 16.0f, 2.0f), 300, rope_ff::random},
        {64, 8, 12, rope_yarn(64, X, 4096, 0.25f, 1.0f, 1.0f, 32.0f, 1.0f), 300, rope_ff::random},
        {128, 8, 6, rope_params(128, N, 500000.0f), 1000, rope_ff::llama3},
        {128, 4, 3, rope_params(96, X, 500000.0f), 1000, rope_ff::llama3},
    };
    std::vector<op_case> cases;
    uint64_t seed = 2100;
    for (const rope_case & r : list) {
        rng g(seed);
        std::vector<double> pos(static_cast<size_t>(r.n_tokens));
        for (double & x : pos) x = static_cast<double>(g.below(r.max_pos));
        const double bound = 1e-10 + (static_cast<double>(r.max_pos) * 1e-6) * (static_cast<double>(r.max_pos) * 1e-6);
        const ggml_rope_params p = r.p;
        const std::vector<double> ff = rope_case_factors(r, seed);
        // the factors as the backend holds them (F32), read back by the harness as src[2]
        auto ref = [p](const ref_args & a) { return ref_rope(a.src[0], a.src[1], p, a.src[2].v); };
        const shape4 a = {r.head_dim, r.n_head, r.n_tokens, 1};
        auto factors = [ff](case_inputs & in) {
            return ff.empty() ? nullptr : in.values(GGML_TYPE_F32, {static_cast<int64_t>(ff.size()), 1, 1, 1}, ff);
        };
        cases.push_back(math_case(rope_name(r),
            [=](case_inputs & in) {
                ggml_tensor * x = in.uniform(GGML_TYPE_F32, a);
                ggml_tensor * pt = in.values(GGML_TYPE_I32, {a[2], 1, 1, 1}, pos);
                return ggml_rope_ff(in.ctx, x, pt, factors(in), p);
            }, ref, bound, true, seed++));
        // the same on the k part of a fused qkv tensor [3 * head_dim * n_head, n_tokens]
        cases.push_back(math_case(rope_name(r) + " as a view of fused qkv",
            [=](case_inputs & in) {
                ggml_tensor * qkv = in.uniform(GGML_TYPE_F32, {3 * a[0] * a[1], a[2], 1, 1});
                ggml_tensor * k = ggml_view_3d(in.ctx, qkv, a[0], a[1], a[2], a[0] * qkv->nb[0], qkv->nb[1],
                                               a[0] * a[1] * qkv->nb[0]);
                ggml_tensor * pt = in.values(GGML_TYPE_I32, {a[2], 1, 1, 1}, pos);
                return ggml_rope_ff(in.ctx, k, pt, factors(in), p);
            }, ref, bound, false, seed++));
    }
    return cases;
}

// Frequency factors on head_dim 4 (n_dims 4, base 100: base^(-2/4) = 0.1), factors {2, 0.25}:
// pair 0 turns by pos / 2, pair 1 by pos * 0.1 / 0.25 = 0.4 pos (then * freq_scale). Positions
// {5, 2}: angles {2.5, 2.0} and {1.0, 0.8}. The expected outputs are written out by hand.
inline std::vector<op_case> cases_rope_freq_factors_by_hand() {
    struct hand {
        const char * name;
        int mode;
        float freq_scale;
        std::vector<double> x, y;  // [4, 1, 2] input and expected output, token by token
    };
    using std::cos, std::sin;
    const hand list[] = {
        {"normal", GGML_ROPE_TYPE_NORMAL, 1.0f, {1, 0, 1, 0, 0, 1, 0, 2},
         {cos(2.5), sin(2.5), cos(2.0), sin(2.0), -sin(1.0), cos(1.0), -2 * sin(0.8), 2 * cos(0.8)}},
        {"neox", GGML_ROPE_TYPE_NEOX, 1.0f, {1, 1, 0, 0, 0, 0, 1, 2},
         {cos(2.5), cos(2.0), sin(2.5), sin(2.0), -sin(1.0), -2 * sin(0.8), cos(1.0), 2 * cos(0.8)}},
        {"normal freq_scale=0.5", GGML_ROPE_TYPE_NORMAL, 0.5f, {1, 0, 1, 0, 0, 1, 0, 2},
         {cos(1.25), sin(1.25), cos(1.0), sin(1.0), -sin(0.5), cos(0.5), -2 * sin(0.4), 2 * cos(0.4)}},
    };
    std::vector<op_case> cases;
    uint64_t seed = 2400;
    for (const hand & h : list) {
        op_case c;
        c.name = std::string("rope by hand ") + h.name + " a=f32[4,1,2] n_dims=4 base=100 ff={2,0.25} pos={5,2}";
        ggml_rope_params p = rope_params(4, h.mode, 100.0f, h.freq_scale);
        const std::vector<double> x = h.x, y = h.y;
        c.build = [p, x](case_inputs & in) {
            ggml_tensor * a = in.values(GGML_TYPE_F32, {4, 1, 2, 1}, x);
            ggml_tensor * pos = in.values(GGML_TYPE_I32, {2, 1, 1, 1}, {5, 2});
            return ggml_rope_ff(in.ctx, a, pos, in.values(GGML_TYPE_F32, {2, 1, 1, 1}, {2.0, 0.25}), p);
        };
        c.ref = [y](const ref_args &) {
            dt out({4, 1, 2, 1});
            out.v = y;
            return out;
        };
        c.max_nmse = 1e-13;
        c.in_place = true;
        c.seed = seed++;
        cases.push_back(std::move(c));
    }
    return cases;
}

// Frequency factors that are not finite and > 0: graph_compute reports GGML_STATUS_FAILED.
inline std::vector<op_case> cases_rope_freq_factor_errors() {
    const double bad[] = {0.0, -1.0, std::numeric_limits<double>::infinity(), std::numeric_limits<double>::quiet_NaN()};
    std::vector<op_case> cases;
    uint64_t seed = 2300;
    for (int mode : {GGML_ROPE_TYPE_NORMAL, GGML_ROPE_TYPE_NEOX}) {
        for (double b : bad) {
            op_case c;
            c.name = std::string("rope ") + (mode == GGML_ROPE_TYPE_NEOX ? "neox" : "normal") +
                     " a=f32[8,2,3] n_dims=8 freq factor[2]=" + std::to_string(b);
            const ggml_rope_params p = rope_params(8, mode);
            c.build = [p, b](case_inputs & in) {
                ggml_tensor * x = in.uniform(GGML_TYPE_F32, {8, 2, 3, 1});
                ggml_tensor * pos = in.values(GGML_TYPE_I32, {3, 1, 1, 1}, {0, 5, 9});
                return ggml_rope_ff(in.ctx, x, pos, in.values(GGML_TYPE_F32, {4, 1, 1, 1}, {1.0, 2.0, b, 4.0}), p);
            };
            c.ref = [](const ref_args & a) { return a.src[0]; };
            c.expect_failure = true;
            c.seed = seed++;
            cases.push_back(std::move(c));
        }
    }
    return cases;
}

}  // namespace bops
