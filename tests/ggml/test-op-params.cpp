// The typed op-parameter getters of ggml.h: every builder's parameters read back exactly as
// given, and a getter asked about a tensor of another op aborts (a programming error).
#include "ggml/ggml.h"

#include <gtest/gtest.h>

#include <cmath>

namespace {

struct op_params_fixture : ::testing::Test {
    ggml_context_ptr ctx;
    ggml_tensor * a = nullptr;
    void SetUp() override {
        ggml_init_params ip;
        ip.mem_size = 64 * ggml_tensor_overhead();
        ip.no_alloc = true;
        ctx.reset(ggml_init(ip));
        ASSERT_TRUE(ctx);
        a = ggml_new_tensor_3d(ctx.get(), GGML_TYPE_F32, 16, 4, 3);
    }
};

TEST_F(op_params_fixture, scale_and_bias) {
    ggml_tensor * s = ggml_scale(ctx.get(), a, 0.125f);
    EXPECT_EQ(ggml_get_scale(s), 0.125f);
    EXPECT_EQ(ggml_get_scale_bias(s), 0.0f);
    ggml_tensor * sb = ggml_scale_bias(ctx.get(), a, -3.5f, 1e-3f);
    EXPECT_EQ(ggml_get_scale(sb), -3.5f);
    EXPECT_EQ(ggml_get_scale_bias(sb), 1e-3f);
}

TEST_F(op_params_fixture, norm_eps) {
    EXPECT_EQ(ggml_get_norm_eps(ggml_rms_norm(ctx.get(), a, 1e-6f)), 1e-6f);
    EXPECT_EQ(ggml_get_norm_eps(ggml_norm(ctx.get(), a, 1e-5f)), 1e-5f);
}

TEST_F(op_params_fixture, rope_params_round_trip) {
    ggml_tensor * pos = ggml_new_tensor_1d(ctx.get(), GGML_TYPE_I32, 3);
    ggml_rope_params p;
    p.n_dims = 12;
    p.mode = GGML_ROPE_TYPE_NEOX;
    p.n_ctx_orig = 4096;
    p.freq_base = 500000.0f;
    p.freq_scale = 0.25f;
    p.ext_factor = 1.0f;
    p.attn_factor = 0.75f;
    p.beta_fast = 16.0f;
    p.beta_slow = 2.0f;
    ggml_tensor * ff = ggml_new_tensor_1d(ctx.get(), GGML_TYPE_F32, 6);
    for (ggml_tensor * r : {ggml_rope(ctx.get(), a, pos, p), ggml_rope_ff(ctx.get(), a, pos, ff, p)}) {
        const ggml_rope_params g = ggml_get_rope_params(r);
        EXPECT_EQ(g.n_dims, p.n_dims);
        EXPECT_EQ(g.mode, p.mode);
        EXPECT_EQ(g.n_ctx_orig, p.n_ctx_orig);
        EXPECT_EQ(g.freq_base, p.freq_base);
        EXPECT_EQ(g.freq_scale, p.freq_scale);
        EXPECT_EQ(g.ext_factor, p.ext_factor);
        EXPECT_EQ(g.attn_factor, p.attn_factor);
        EXPECT_EQ(g.beta_fast, p.beta_fast);
        EXPECT_EQ(g.beta_slow, p.beta_slow);
    }
    const ggml_rope_params d = ggml_get_rope_params(ggml_rope(ctx.get(), a, pos, ggml_rope_params{16}));
    EXPECT_EQ(d.mode, GGML_ROPE_TYPE_NORMAL);
    EXPECT_EQ(d.freq_base, 10000.0f);
    EXPECT_EQ(d.attn_factor, 1.0f);
}

TEST_F(op_params_fixture, soft_max_scale) {
    EXPECT_EQ(ggml_get_soft_max_scale(ggml_soft_max(ctx.get(), a)), 1.0f);
    EXPECT_EQ(ggml_get_soft_max_scale(ggml_soft_max_ext(ctx.get(), a, nullptr, 0.0625f)), 0.0625f);
}

TEST_F(op_params_fixture, concat_dim_and_top_k) {
    for (int dim = 0; dim < 3; ++dim) EXPECT_EQ(ggml_get_concat_dim(ggml_concat(ctx.get(), a, a, dim)), dim);
    ggml_tensor * t = ggml_top_k(ctx.get(), a, 5);
    EXPECT_EQ(ggml_get_top_k(t), 5);
    EXPECT_EQ(t->ne[0], 5);
}

TEST_F(op_params_fixture, flash_attn_scale_and_softcap) {
    ggml_tensor * q = ggml_new_tensor_3d(ctx.get(), GGML_TYPE_F32, 16, 2, 4);
    ggml_tensor * k = ggml_new_tensor_3d(ctx.get(), GGML_TYPE_F16, 16, 8, 2);
    ggml_tensor * v = ggml_new_tensor_3d(ctx.get(), GGML_TYPE_F16, 16, 8, 2);
    ggml_tensor * r = ggml_flash_attn_ext(ctx.get(), q, k, v, nullptr, 0.25f);
    EXPECT_EQ(ggml_get_flash_attn_scale(r), 0.25f);
    EXPECT_EQ(ggml_get_flash_attn_softcap(r), 0.0f);
    r = ggml_flash_attn_ext(ctx.get(), q, k, v, nullptr, 0.25f, 50.0f);
    EXPECT_EQ(ggml_get_flash_attn_softcap(r), 50.0f);
}

using op_params_death = op_params_fixture;

TEST_F(op_params_death, getter_of_another_op_aborts) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    ggml_tensor * s = ggml_scale(ctx.get(), a, 2.0f);
    ggml_tensor * n = ggml_norm(ctx.get(), a, 1e-5f);
    EXPECT_DEATH(ggml_get_norm_eps(s), "SCALE");
    EXPECT_DEATH(ggml_get_scale(n), "NORM");
    EXPECT_DEATH(ggml_get_rope_params(s), "ROPE");
    EXPECT_DEATH(ggml_get_top_k(a), "TOP_K");
}

}  // namespace
