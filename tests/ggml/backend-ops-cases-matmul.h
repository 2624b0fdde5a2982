// tests/ggml/backend-ops-cases-matmul.h — cases of mul_mat and rope.
//
// Usage:
//   bops::check_cases(bops::cases_mul_mat());
//
// mul_mat bounds (NMSE) by the type of a: F32 1e-8, F16 1e-6, BF16 5e-5 (b may be rounded to
// a's type for the dot products). rope: the angle pos*theta is computed in float by the
// kernel, so its absolute error grows with the position (~pos * 2^-24 per ulp); the bound is
// 1e-10 + (max_pos * 1e-6)^2, far below what a wrong angle, pairing or YaRN ramp gives.
#pragma once

#include "backend-ops-cases-math.h"
#include "backend-ops-rope.h"

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

struct rope_case {
    int64_t head_dim, n_head, n_tokens;
    ggml_rope_params p;
    int64_t max_pos;
};

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
    };
    std::vector<op_case> cases;
    uint64_t seed = 2100;
    for (const rope_case & r : list) {
        rng g(seed);
        std::vector<double> pos(static_cast<size_t>(r.n_tokens));
        for (double & x : pos) x = static_cast<double>(g.below(r.max_pos));
        const double bound = 1e-10 + (static_cast<double>(r.max_pos) * 1e-6) * (static_cast<double>(r.max_pos) * 1e-6);
        const ggml_rope_params p = r.p;
        auto ref = [p](const ref_args & a) { return ref_rope(a.src[0], a.src[1], p); };
        const shape4 a = {r.head_dim, r.n_head, r.n_tokens, 1};
        cases.push_back(math_case(rope_name(r),
            [=](case_inputs & in) {
                return ggml_rope(in.ctx, in.uniform(GGML_TYPE_F32, a), in.values(GGML_TYPE_I32, {a[2], 1, 1, 1}, pos), p);
            }, ref, bound, true, seed++));
        // the same on the k part of a fused qkv tensor [3 * head_dim * n_head, n_tokens]
        cases.push_back(math_case(rope_name(r) + " as a view of fused qkv",
            [=](case_inputs & in) {
                ggml_tensor * qkv = in.uniform(GGML_TYPE_F32, {3 * a[0] * a[1], a[2], 1, 1});
                ggml_tensor * k = ggml_view_3d(in.ctx, qkv, a[0], a[1], a[2], a[0] * qkv->nb[0], qkv->nb[1],
                                               a[0] * a[1] * qkv->nb[0]);
                return ggml_rope(in.ctx, k, in.values(GGML_TYPE_I32, {a[2], 1, 1, 1}, pos), p);
            }, ref, bound, false, seed++));
    }
    return cases;
}

}  // namespace bops
