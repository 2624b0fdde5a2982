// Type traits and F16/BF16 conversions: scalar conversions against exact arithmetic, and every
// SIMD path of the CPU backend against the scalar one.
#include "cpu/convert.h"
#include "ggml/cpu.h"
#include "ggml/types.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

namespace {

uint32_t bits(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
}

float from_bits(uint32_t u) {
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}

// The F16 value closest to x (ties to even), by search over all finite F16 values: a
// reference that shares no code with the conversion under test.
ggml_fp16_t nearest_f16(float x, const std::vector<double> & values) {
    if (std::isnan(x)) return 0x7e00;
    const double ax = std::fabs(double(x));
    const uint16_t sign = std::signbit(x) ? 0x8000 : 0;
    if (ax >= 65520.0) return uint16_t(sign | 0x7c00);
    size_t lo = 0, hi = 0x7bff;  // values[] ascending over 0..0x7bff
    while (lo < hi) {
        const size_t mid = (lo + hi + 1) / 2;
        if (values[mid] <= ax) lo = mid; else hi = mid - 1;
    }
    size_t best = lo;
    if (lo < 0x7bff) {
        const double d_lo = ax - values[lo], d_hi = values[lo + 1] - ax;
        if (d_hi < d_lo || (d_hi == d_lo && (lo & 1))) best = lo + 1;
    }
    return uint16_t(sign | best);
}

std::vector<ggml_cpu_isa> available_isas() {
    std::vector<ggml_cpu_isa> isas = {ggml_cpu_isa::scalar};
    const ggml_cpu_isa best = ggml_cpu_detect_features().best_isa();
    if (int(best) >= int(ggml_cpu_isa::avx2)) isas.push_back(ggml_cpu_isa::avx2);
    if (int(best) >= int(ggml_cpu_isa::avx512)) isas.push_back(ggml_cpu_isa::avx512);
    return isas;
}

std::vector<float> edge_and_random_floats(size_t n_random) {
    std::vector<float> v = {0.0f, -0.0f, 1.0f, -1.0f, 65504.0f, 65519.99f, 65520.0f, 1e6f, -1e6f,
                            std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                            std::numeric_limits<float>::quiet_NaN(), 6.1035156e-05f, 5.9604645e-08f,
                            2.9802322e-08f, 2.9802326e-08f, 1e-10f, 3.4028235e38f, 1.17549435e-38f, 1e-40f};
    std::mt19937 rng(1);
    std::uniform_int_distribution<uint32_t> any;
    std::uniform_real_distribution<float> small(-8.0f, 8.0f);
    for (size_t i = 0; i < n_random; ++i) v.push_back(i % 2 ? from_bits(any(rng)) : small(rng));
    return v;
}

}  // namespace

TEST(types, traits_table) {
    EXPECT_STREQ(ggml_type_name(GGML_TYPE_F32), "f32");
    EXPECT_EQ(ggml_type_size(GGML_TYPE_F16), 2u);
    EXPECT_EQ(ggml_type_size(GGML_TYPE_BF16), 2u);
    EXPECT_EQ(ggml_row_size(GGML_TYPE_F16, 4096), 8192u);
    EXPECT_EQ(ggml_get_type_traits(GGML_TYPE_F16).vec_dot_type, GGML_TYPE_F16);
    EXPECT_TRUE(ggml_type_is_supported(GGML_TYPE_BF16));
    // quantized types: GGUF block geometry, conversions, dot partner types
    EXPECT_TRUE(ggml_type_is_valid(GGML_TYPE_Q4_0));
    EXPECT_EQ(ggml_blck_size(GGML_TYPE_Q4_K), 256);
    EXPECT_EQ(ggml_type_size(GGML_TYPE_Q8_0), 34u);
    EXPECT_EQ(ggml_row_size(GGML_TYPE_Q4_K, 4096), 16u * 144u);
    const ggml_type quantized[] = {GGML_TYPE_Q4_0, GGML_TYPE_Q4_1, GGML_TYPE_Q5_0, GGML_TYPE_Q5_1, GGML_TYPE_Q8_0,
                                   GGML_TYPE_Q8_1, GGML_TYPE_Q2_K, GGML_TYPE_Q3_K, GGML_TYPE_Q4_K, GGML_TYPE_Q5_K,
                                   GGML_TYPE_Q6_K, GGML_TYPE_Q8_K};
    for (ggml_type t : quantized) {
        const ggml_type_traits & tt = ggml_get_type_traits(t);
        EXPECT_TRUE(ggml_type_is_supported(t)) << ggml_type_name(t);
        EXPECT_TRUE(tt.is_quantized && tt.to_float && tt.from_float) << ggml_type_name(t);
    }
    EXPECT_EQ(ggml_get_type_traits(GGML_TYPE_Q4_0).vec_dot_type, GGML_TYPE_Q8_0);
    EXPECT_EQ(ggml_get_type_traits(GGML_TYPE_Q4_1).vec_dot_type, GGML_TYPE_Q8_1);
    EXPECT_EQ(ggml_get_type_traits(GGML_TYPE_Q6_K).vec_dot_type, GGML_TYPE_Q8_K);
    EXPECT_FALSE(ggml_type_is_valid(4));  // ids 4 and 5 were removed from the format
    EXPECT_FALSE(ggml_type_is_valid(GGML_TYPE_COUNT));
    EXPECT_STREQ(ggml_type_name(ggml_type(99)), "invalid");
}

TEST(types, f16_to_f32_exhaustive) {
    for (uint32_t h = 0; h < 0x10000; ++h) {
        const float f = ggml_fp16_to_fp32(ggml_fp16_t(h));
        const uint32_t e = (h >> 10) & 0x1f, m = h & 0x3ff;
        const double sign = (h & 0x8000) ? -1.0 : 1.0;
        if (e == 0x1f) {
            if (m) {
                EXPECT_TRUE(std::isnan(f)) << h;
            } else {
                EXPECT_EQ(f, float(sign * INFINITY)) << h;
            }
            continue;
        }
        const double expect = e ? sign * std::ldexp(1.0 + m / 1024.0, int(e) - 15) : sign * std::ldexp(double(m), -24);
        EXPECT_EQ(double(f), expect) << h;
        EXPECT_EQ(std::signbit(f), bool(h & 0x8000)) << h;
    }
}

TEST(types, f32_to_f16_rounds_to_nearest_even) {
    std::vector<double> values(0x7c00);
    for (uint32_t h = 0; h < 0x7c00; ++h) values[h] = double(ggml_fp16_to_fp32(ggml_fp16_t(h)));
    for (float x : edge_and_random_floats(200000)) {
        const ggml_fp16_t got = ggml_fp32_to_fp16(x);
        if (std::isnan(x)) {
            EXPECT_TRUE(std::isnan(ggml_fp16_to_fp32(got)));
            continue;
        }
        EXPECT_EQ(got, nearest_f16(x, values)) << "x=" << x << " bits=" << bits(x);
    }
    // every F16 value survives the round trip
    for (uint32_t h = 0; h < 0x10000; ++h) {
        const float f = ggml_fp16_to_fp32(ggml_fp16_t(h));
        if (std::isnan(f)) continue;
        EXPECT_EQ(ggml_fp32_to_fp16(f), h);
    }
}

TEST(types, bf16_rounds_to_nearest_even) {
    EXPECT_EQ(ggml_fp32_to_bf16(1.0f), 0x3f80);
    EXPECT_EQ(ggml_bf16_to_fp32(0x3f80), 1.0f);
    EXPECT_EQ(ggml_fp32_to_bf16(from_bits(0x3f808000)), 0x3f80);  // tie, even stays
    EXPECT_EQ(ggml_fp32_to_bf16(from_bits(0x3f818000)), 0x3f82);  // tie, odd rounds up
    EXPECT_EQ(ggml_fp32_to_bf16(from_bits(0x3f808001)), 0x3f81);
    EXPECT_TRUE(std::isnan(ggml_bf16_to_fp32(ggml_fp32_to_bf16(from_bits(0x7f800001)))));  // NaN stays NaN
    EXPECT_EQ(ggml_fp32_to_bf16(from_bits(0x7f7fffff)), 0x7f80);  // max float rounds to inf
    for (float x : edge_and_random_floats(100000)) {
        if (std::isnan(x)) continue;
        const float r = ggml_bf16_to_fp32(ggml_fp32_to_bf16(x));
        const float up = ggml_bf16_to_fp32(uint16_t(ggml_fp32_to_bf16(x) + 1));
        const float down = ggml_bf16_to_fp32(uint16_t(ggml_fp32_to_bf16(x) - 1));
        if (!std::isfinite(r) || !std::isfinite(up) || !std::isfinite(down)) continue;
        EXPECT_LE(std::fabs(double(r) - x), std::fabs(double(up) - x)) << x;
        EXPECT_LE(std::fabs(double(r) - x), std::fabs(double(down) - x)) << x;
    }
}

TEST(types, simd_conversions_match_scalar) {
    const std::vector<float> f = edge_and_random_floats(5000);
    std::vector<uint16_t> all(0x10000);
    for (uint32_t h = 0; h < 0x10000; ++h) all[h] = uint16_t(h);
    for (ggml_cpu_isa isa : available_isas()) {
        const ggml_cpu_convert_fns & cv = ggml_cpu_convert_for(isa);
        for (size_t n : {size_t(1), size_t(7), size_t(15), size_t(17), size_t(33), f.size()}) {
            for (size_t off : {size_t(0), size_t(1)}) {  // misaligned starts
                if (off + n > f.size()) continue;
                std::vector<uint16_t> h(n), h_ref(n), b(n), b_ref(n);
                cv.f32_to_f16(f.data() + off, h.data(), int64_t(n));
                ggml_fp32_to_fp16_row(f.data() + off, h_ref.data(), int64_t(n));
                cv.f32_to_bf16(f.data() + off, b.data(), int64_t(n));
                ggml_fp32_to_bf16_row(f.data() + off, b_ref.data(), int64_t(n));
                for (size_t i = 0; i < n; ++i) {
                    if (std::isnan(f[off + i])) continue;
                    ASSERT_EQ(h[i], h_ref[i]) << ggml_cpu_isa_name(isa) << " f16 of " << f[off + i];
                    ASSERT_EQ(b[i], b_ref[i]) << ggml_cpu_isa_name(isa) << " bf16 of " << f[off + i];
                }
            }
        }
        std::vector<float> y(all.size()), y_ref(all.size());
        cv.f16_to_f32(all.data() + 1, y.data(), int64_t(all.size() - 1));
        ggml_fp16_to_fp32_row(all.data() + 1, y_ref.data(), int64_t(all.size() - 1));
        EXPECT_EQ(std::memcmp(y.data(), y_ref.data(), (all.size() - 1) * 4), 0) << ggml_cpu_isa_name(isa);
        cv.bf16_to_f32(all.data() + 3, y.data(), int64_t(all.size() - 3));
        ggml_bf16_to_fp32_row(all.data() + 3, y_ref.data(), int64_t(all.size() - 3));
        EXPECT_EQ(std::memcmp(y.data(), y_ref.data(), (all.size() - 3) * 4), 0) << ggml_cpu_isa_name(isa);
        EXPECT_NE(cv.row_to_f32(GGML_TYPE_BF16), nullptr);
        EXPECT_EQ(cv.row_from_f32(GGML_TYPE_I32), nullptr);
    }
}
