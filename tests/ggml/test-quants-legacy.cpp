// The 32-element quantized formats (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q8_1) and ggml_quantize_chunk:
// hand-built blocks, round trips with error bounds, the quality quantizer against the reference
// one, edge values, chunk offsets, and bit-exactness / quality against files written by
// llama.cpp (../shared/testdata).
#include "ggml/gguf.h"
#include "ggml/quants.h"
#include "testdata.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace {

// ---- the types under test, untyped ----

struct legacy_case {
    const char * name;
    ggml_type type;
    size_t block_bytes;
    void (*dequantize)(const void * x, float * y, int64_t k);
    void (*quantize_ref)(const float * x, void * y, int64_t k);
    size_t (*quantize)(const float * src, void * dst, int64_t n_rows, int64_t n_per_row, const float * imatrix);
    int zero;      // level of 0 (symmetric types), 0 for the _1 types
    int top;       // highest level, relative to zero
    bool has_min;  // the block holds an fp16 offset after d
};

#define LEGACY_CASE(T, blk, fn, zero, top, has_min)                                                      \
    legacy_case {                                                                                       \
        #fn, GGML_TYPE_##T, sizeof(blk),                                                                \
            [](const void * x, float * y, int64_t k) { ggml_dequantize_row_##fn(static_cast<const blk *>(x), y, k); }, \
            [](const float * x, void * y, int64_t k) { ggml_quantize_row_##fn##_ref(x, static_cast<blk *>(y), k); }, \
            nullptr, zero, top, has_min                                                                 \
    }

std::vector<legacy_case> legacy_cases() {
    std::vector<legacy_case> c = {
        LEGACY_CASE(Q4_0, block_q4_0, q4_0, 8, 7, false),   LEGACY_CASE(Q4_1, block_q4_1, q4_1, 0, 15, true),
        LEGACY_CASE(Q5_0, block_q5_0, q5_0, 16, 15, false), LEGACY_CASE(Q5_1, block_q5_1, q5_1, 0, 31, true),
        LEGACY_CASE(Q8_0, block_q8_0, q8_0, 0, 127, false), LEGACY_CASE(Q8_1, block_q8_1, q8_1, 0, 127, false),
    };
    c[0].quantize = ggml_quantize_q4_0;
    c[1].quantize = ggml_quantize_q4_1;
    c[2].quantize = ggml_quantize_q5_0;
    c[3].quantize = ggml_quantize_q5_1;
    c[4].quantize = ggml_quantize_q8_0;
    return c;  // Q8_1 (activations only) has no quality quantizer
}

// The stored scale and offset of block b (every legacy block starts with fp16 d, the _1 types
// follow it with fp16 m).
float block_d(const legacy_case & t, const std::vector<uint8_t> & q, size_t b) {
    ggml_fp16_t h;
    std::memcpy(&h, q.data() + b * t.block_bytes, 2);
    return ggml_fp16_to_fp32(h);
}
float block_m(const legacy_case & t, const std::vector<uint8_t> & q, size_t b) {
    if (!t.has_min) return 0.0f;
    ggml_fp16_t h;
    std::memcpy(&h, q.data() + b * t.block_bytes + 2, 2);
    return ggml_fp16_to_fp32(h);
}

std::vector<uint8_t> quantize_ref(const legacy_case & t, const std::vector<float> & x) {
    std::vector<uint8_t> q(x.size() / 32 * t.block_bytes);
    t.quantize_ref(x.data(), q.data(), int64_t(x.size()));
    return q;
}

std::vector<uint8_t> quantize_quality(const legacy_case & t, const std::vector<float> & x, int64_t n_per_row,
                                      const float * imatrix = nullptr) {
    std::vector<uint8_t> q(x.size() / 32 * t.block_bytes);
    const int64_t n_rows = int64_t(x.size()) / n_per_row;
    EXPECT_EQ(t.quantize(x.data(), q.data(), n_rows, n_per_row, imatrix), q.size());
    return q;
}

std::vector<float> dequantize(const legacy_case & t, const std::vector<uint8_t> & q) {
    std::vector<float> y(q.size() / t.block_bytes * 32);
    t.dequantize(q.data(), y.data(), int64_t(y.size()));
    return y;
}

double sum_sq_error(const float * x, const float * y, size_t n, const float * w = nullptr) {
    double s = 0;
    for (size_t i = 0; i < n; ++i) {
        const double e = double(x[i]) - double(y[i]);
        s += (w ? double(w[i % 32]) : 1.0) * e * e;
    }
    return s;
}

double rmse(const std::vector<float> & x, const std::vector<float> & y) {
    return std::sqrt(sum_sq_error(x.data(), y.data(), x.size()) / double(x.size()));
}

enum class dist { uniform, gaussian, laplace, outliers };

std::vector<float> random_values(dist d, size_t n, float scale, uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    std::normal_distribution<float> g(0.0f, 1.0f);
    std::exponential_distribution<float> e(1.0f);
    std::vector<float> x(n);
    for (float & v : x) {
        switch (d) {
            case dist::uniform: v = u(rng); break;
            case dist::gaussian: v = g(rng); break;
            case dist::laplace: v = e(rng) * (u(rng) < 0 ? -1.0f : 1.0f); break;
            case dist::outliers: v = g(rng) * (u(rng) > 0.96f ? 10.0f : 1.0f); break;
        }
        v *= scale;
    }
    return x;
}

bool all_finite(const std::vector<float> & y) {
    for (float v : y) {
        if (!std::isfinite(v)) return false;
    }
    return true;
}

// ---- hand-built blocks ----

TEST(QuantsLegacy, DequantizeHandBuiltBlocks) {
    block_q4_0 b40{};
    b40.d = ggml_fp32_to_fp16(0.5f);
    for (int j = 0; j < 16; ++j) b40.qs[j] = uint8_t(j | (15 - j) << 4);
    float y[32];
    ggml_dequantize_row_q4_0(&b40, y, 32);
    for (int j = 0; j < 16; ++j) {
        EXPECT_EQ(y[j], float(j - 8) * 0.5f) << j;
        EXPECT_EQ(y[j + 16], float(7 - j) * 0.5f) << j;
    }

    block_q4_1 b41{};
    b41.d = ggml_fp32_to_fp16(0.25f);
    b41.m = ggml_fp32_to_fp16(-3.0f);
    for (int j = 0; j < 16; ++j) b41.qs[j] = uint8_t((15 - j) | j << 4);
    ggml_dequantize_row_q4_1(&b41, y, 32);
    for (int j = 0; j < 16; ++j) {
        EXPECT_EQ(y[j], float(15 - j) * 0.25f - 3.0f) << j;
        EXPECT_EQ(y[j + 16], float(j) * 0.25f - 3.0f) << j;
    }

    // Q5: bit 4 of element j is bit j of the little-endian qh
    block_q5_0 b50{};
    b50.d = ggml_fp32_to_fp16(2.0f);
    const uint32_t qh = 0xA5C3F00Fu;
    for (int b = 0; b < 4; ++b) b50.qh[b] = uint8_t(qh >> (8 * b));
    for (int j = 0; j < 16; ++j) b50.qs[j] = uint8_t(j | (j ^ 5) << 4);
    ggml_dequantize_row_q5_0(&b50, y, 32);
    for (int j = 0; j < 16; ++j) {
        EXPECT_EQ(y[j], float(int(j | ((qh >> j) & 1) << 4) - 16) * 2.0f) << j;
        EXPECT_EQ(y[j + 16], float(int((j ^ 5) | ((qh >> (j + 16)) & 1) << 4) - 16) * 2.0f) << j;
    }

    block_q5_1 b51{};
    b51.d = ggml_fp32_to_fp16(0.125f);
    b51.m = ggml_fp32_to_fp16(1.5f);
    std::memcpy(b51.qh, b50.qh, 4);
    std::memcpy(b51.qs, b50.qs, 16);
    ggml_dequantize_row_q5_1(&b51, y, 32);
    for (int j = 0; j < 16; ++j) {
        EXPECT_EQ(y[j], float(j | ((qh >> j) & 1) << 4) * 0.125f + 1.5f) << j;
        EXPECT_EQ(y[j + 16], float((j ^ 5) | ((qh >> (j + 16)) & 1) << 4) * 0.125f + 1.5f) << j;
    }

    block_q8_0 b80{};
    block_q8_1 b81{};
    b80.d = b81.d = ggml_fp32_to_fp16(-0.75f);
    for (int j = 0; j < 32; ++j) b80.qs[j] = b81.qs[j] = int8_t(j * 8 - 128);
    float y1[32];
    ggml_dequantize_row_q8_0(&b80, y, 32);
    ggml_dequantize_row_q8_1(&b81, y1, 32);
    for (int j = 0; j < 32; ++j) {
        EXPECT_EQ(y[j], float(j * 8 - 128) * -0.75f) << j;
        EXPECT_EQ(y1[j], y[j]) << j;
    }
}

TEST(QuantsLegacy, ReferenceQuantizersExactOnRepresentableBlocks) {
    // values on the grid of each format, the extreme on the level the reference picks
    std::vector<float> x40(32), x41(32), x50(32), x51(32), x80(32);
    for (int j = 0; j < 32; ++j) {
        x40[j] = 0.5f * float(j % 16 - 8);   // max |x| = -4 on level -8: d = 0.5
        x41[j] = 0.25f * float(j % 16) + 1;  // min 1, max 4.75: d = 0.25
        x50[j] = 0.5f * float(j - 16);       // -8 on level -16: d = 0.5
        x51[j] = 0.125f * float(31 - j) - 2;  // min -2, max 1.875: d = 0.125
        x80[j] = 0.5f * float(j * 8 - 127);   // -63.5 .. 60.5, |max| = 127 * 0.5
    }
    const std::vector<legacy_case> cases = legacy_cases();
    const std::vector<float> * inputs[] = {&x40, &x41, &x50, &x51, &x80, &x80};
    const float expected_d[] = {0.5f, 0.25f, 0.5f, 0.125f, 0.5f, 0.5f};
    for (size_t i = 0; i < cases.size(); ++i) {
        const legacy_case & t = cases[i];
        SCOPED_TRACE(t.name);
        const std::vector<uint8_t> q = quantize_ref(t, *inputs[i]);
        EXPECT_EQ(std::fabs(block_d(t, q, 0)), expected_d[i]);
        const std::vector<float> y = dequantize(t, q);
        for (int j = 0; j < 32; ++j) EXPECT_EQ(y[j], (*inputs[i])[j]) << j;
        if (t.quantize) {  // exact stays exact
            EXPECT_EQ(dequantize(t, quantize_quality(t, *inputs[i], 32)), y);
        }
    }
}

TEST(QuantsLegacy, ReferenceQuantizerPacking) {
    // element j -> low nibble of qs[j], element j + 16 -> high nibble; Q5 bit 4 -> qh bit j
    std::vector<float> x(32);
    for (int j = 0; j < 32; ++j) x[j] = float(16 - j);  // Q5_0: max |x| = 16 on level 0: d = -1, level j
    block_q5_0 b;
    ggml_quantize_row_q5_0_ref(x.data(), &b, 32);
    EXPECT_EQ(ggml_fp16_to_fp32(b.d), -1.0f);
    uint32_t qh = 0;
    for (int k = 0; k < 4; ++k) qh |= uint32_t(b.qh[k]) << (8 * k);
    for (int j = 0; j < 32; ++j) {
        const int nibble = j < 16 ? (b.qs[j] & 0x0F) : (b.qs[j - 16] >> 4);
        EXPECT_EQ(nibble | int((qh >> j) & 1) << 4, j) << j;
    }
    // Q8_1: s = d * sum(q)
    std::vector<float> x8(32);
    for (int j = 0; j < 32; ++j) x8[j] = float(j) * 0.25f;  // amax 7.75: d = 7.75 / 127
    block_q8_1 b8;
    ggml_quantize_row_q8_1_ref(x8.data(), &b8, 32);
    int sum = 0;
    for (int j = 0; j < 32; ++j) {
        EXPECT_EQ(b8.qs[j], int8_t(std::round(x8[j] / (7.75f / 127.0f)))) << j;
        sum += b8.qs[j];
    }
    EXPECT_EQ(b8.qs[31], 127);
    EXPECT_EQ(b8.d, ggml_fp32_to_fp16(7.75f / 127.0f));
    EXPECT_EQ(b8.s, ggml_fp32_to_fp16(float(sum) * (7.75f / 127.0f)));
}

// ---- round trips ----

// Reference quantizer: every element within half a step of its value (plus the fp16 rounding
// of d and m); the symmetric 4/5-bit types may clip an element opposite to the largest one to
// the top level (one step).
void expect_reference_error_bounds(const legacy_case & t, const std::vector<float> & x) {
    const std::vector<uint8_t> q = quantize_ref(t, x);
    const std::vector<float> y = dequantize(t, q);
    ASSERT_TRUE(all_finite(y));
    const float span = float(t.has_min ? t.top : t.zero ? t.zero : t.top) + 0.5f;
    for (size_t i = 0; i < x.size(); ++i) {
        const float d = std::fabs(block_d(t, q, i / 32)), m = std::fabs(block_m(t, q, i / 32));
        // fp16 rounding: relative 2^-11, absolute 2^-25 in the subnormal range
        const float rounding_d = d * 0x1p-11f + 0x1p-25f, rounding_m = m * 0x1p-11f + 0x1p-25f;
        const float bound = 0.5f * d + span * rounding_d + rounding_m + std::fabs(x[i]) * 1e-6f;
        const float err = std::fabs(y[i] - x[i]);
        const bool clipped_at_top = t.zero != 0 && y[i] == float(t.top) * block_d(t, q, i / 32);
        if (clipped_at_top) {
            ASSERT_LE(err, d + span * rounding_d) << i;
        } else {
            ASSERT_LE(err, bound) << i << " x " << x[i] << " y " << y[i];
        }
    }
}

TEST(QuantsLegacy, RoundTripErrorBounds) {
    // RMSE / sigma of the quality quantizer on N(0, 1) (measured 0.081, 0.069, 0.040, 0.033,
    // 0.0047; the reference quantizer gives 0.086, 0.078, 0.043, 0.038, 0.0054)
    const double gaussian_bound[] = {0.083, 0.071, 0.041, 0.034, 0.0048};
    const std::vector<legacy_case> cases = legacy_cases();
    for (size_t i = 0; i < cases.size(); ++i) {
        const legacy_case & t = cases[i];
        SCOPED_TRACE(t.name);
        for (dist d : {dist::uniform, dist::gaussian, dist::laplace, dist::outliers}) {
            for (float scale : {1.0f, 1e-3f, 300.0f}) {
                const std::vector<float> x = random_values(d, 32 * 256, scale, 7 + int(d));
                expect_reference_error_bounds(t, x);
                if (!t.quantize) continue;
                const std::vector<float> y = dequantize(t, quantize_quality(t, x, 32 * 64));
                ASSERT_TRUE(all_finite(y));
                if (d == dist::gaussian && scale == 1.0f) {
                    EXPECT_LT(rmse(x, y), gaussian_bound[i]);
                }
            }
        }
    }
}

// The quality quantizer is never worse than the reference one on any block, and clearly better
// over a tensor of random data (by 3-13% measured, outliers aside).
TEST(QuantsLegacy, QualityNeverWorseThanReference) {
    for (const legacy_case & t : legacy_cases()) {
        if (!t.quantize) continue;
        SCOPED_TRACE(t.name);
        for (dist d : {dist::uniform, dist::gaussian, dist::laplace, dist::outliers}) {
            const std::vector<float> x = random_values(d, 32 * 512, 0.02f, 100 + int(d));
            const std::vector<float> y_ref = dequantize(t, quantize_ref(t, x));
            const std::vector<float> y_q = dequantize(t, quantize_quality(t, x, 32 * 8));
            for (size_t b = 0; b < x.size() / 32; ++b) {
                ASSERT_LE(sum_sq_error(&x[b * 32], &y_q[b * 32], 32), sum_sq_error(&x[b * 32], &y_ref[b * 32], 32))
                    << "block " << b;
            }
            // a few large outliers dominate the error of the blocks they are in: less to gain there
            const double gain = d == dist::outliers ? 0.999 : 0.97;
            EXPECT_LT(rmse(x, y_q), gain * rmse(x, y_ref)) << "distribution " << int(d);
        }
    }
}

TEST(QuantsLegacy, ImportanceMatrixWeightsTheError) {
    std::vector<float> imatrix(32 * 4);
    for (size_t j = 0; j < imatrix.size(); ++j) imatrix[j] = (j % 7 == 0) ? 50.0f : 0.5f;
    for (const legacy_case & t : legacy_cases()) {
        if (!t.quantize) continue;
        SCOPED_TRACE(t.name);
        const std::vector<float> x = random_values(dist::gaussian, imatrix.size() * 64, 1.0f, 5);
        const std::vector<float> y_plain = dequantize(t, quantize_quality(t, x, int64_t(imatrix.size())));
        const std::vector<float> y_weighted =
            dequantize(t, quantize_quality(t, x, int64_t(imatrix.size()), imatrix.data()));
        const std::vector<float> y_ref = dequantize(t, quantize_ref(t, x));
        double e_plain = 0, e_weighted = 0, e_ref = 0;
        for (size_t r = 0; r < x.size() / imatrix.size(); ++r) {
            for (size_t j = 0; j < imatrix.size(); ++j) {
                const size_t i = r * imatrix.size() + j;
                e_plain += imatrix[j] * double(x[i] - y_plain[i]) * double(x[i] - y_plain[i]);
                e_weighted += imatrix[j] * double(x[i] - y_weighted[i]) * double(x[i] - y_weighted[i]);
                e_ref += imatrix[j] * double(x[i] - y_ref[i]) * double(x[i] - y_ref[i]);
            }
        }
        EXPECT_LT(e_weighted, e_plain);
        EXPECT_LE(e_weighted, e_ref);
        // an unusable importance matrix (zeros, NaN) is ignored: the same as none
        std::vector<float> unusable(imatrix.size(), 0.0f);
        unusable[3] = std::numeric_limits<float>::quiet_NaN();
        EXPECT_EQ(quantize_quality(t, x, int64_t(imatrix.size()), unusable.data()),
                  quantize_quality(t, x, int64_t(imatrix.size())));
    }
}

// ---- edge values ----

TEST(QuantsLegacy, ZeroAndHugeBlocksStayFinite) {
    const float inf = std::numeric_limits<float>::infinity();
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const float fmax = std::numeric_limits<float>::max();
    std::vector<std::vector<float>> blocks;
    blocks.push_back(std::vector<float>(32, 0.0f));
    blocks.push_back(std::vector<float>(32, -0.0f));
    blocks.push_back(std::vector<float>(32, 1e30f));
    blocks.push_back(std::vector<float>(32, 7.0f));  // constant block
    std::vector<float> mixed(32);
    for (int j = 0; j < 32; ++j) mixed[j] = (j % 2 ? 1.0f : -1.0f) * float(j) * 1e37f;
    blocks.push_back(mixed);
    std::vector<float> extremes = {fmax, -fmax, 1e-45f, -1e-40f, 3e5f, -1e6f};
    extremes.resize(32, 1.0f);
    blocks.push_back(extremes);
    std::vector<float> tiny(32);
    for (int j = 0; j < 32; ++j) tiny[j] = float(j - 16) * 1e-39f;  // subnormal: 1/d overflows
    blocks.push_back(tiny);
    std::vector<float> non_finite = {inf, -inf, nan, 1.0f, -2.0f};
    non_finite.resize(32, 0.5f);
    blocks.push_back(non_finite);

    for (const legacy_case & t : legacy_cases()) {
        SCOPED_TRACE(t.name);
        for (size_t k = 0; k < blocks.size(); ++k) {
            const std::vector<uint8_t> q_ref = quantize_ref(t, blocks[k]);
            EXPECT_TRUE(all_finite(dequantize(t, q_ref))) << "block set " << k;
            if (t.type == GGML_TYPE_Q8_1) {
                block_q8_1 b;
                std::memcpy(&b, q_ref.data(), sizeof(b));
                EXPECT_TRUE(std::isfinite(ggml_fp16_to_fp32(b.s))) << "block set " << k;
            }
            if (t.quantize) {
                EXPECT_TRUE(all_finite(dequantize(t, quantize_quality(t, blocks[k], 32)))) << k;
            }
        }
        EXPECT_EQ(dequantize(t, quantize_ref(t, blocks[0])), blocks[0]);  // zeros stay zeros
        const std::vector<float> c = dequantize(t, quantize_ref(t, blocks[3]));
        if (t.has_min || t.zero != 0) {  // 7 = m, or -zero * (7 / -zero) exactly
            EXPECT_EQ(c, blocks[3]);
        }
        for (float v : c) EXPECT_NEAR(v, 7.0f, 7.0f * 0x1p-10f);
        const std::vector<float> h = dequantize(t, quantize_ref(t, blocks[2]));
        for (float v : h) EXPECT_GT(v, 65000.0f);  // clamped to the largest scale, keeps the sign
    }
}

// ---- shapes ----

TEST(QuantsLegacy, OddBlockCountsAndRowsStayInBounds) {
    for (const legacy_case & t : legacy_cases()) {
        SCOPED_TRACE(t.name);
        for (int64_t blocks_per_row : {1, 3, 7}) {
            const int64_t n_per_row = 32 * blocks_per_row, n_rows = 5;
            const std::vector<float> x = random_values(dist::gaussian, size_t(n_per_row * n_rows), 1.0f, 11);
            const size_t bytes = size_t(n_rows * blocks_per_row) * t.block_bytes;
            for (int quality = 0; quality < (t.quantize ? 2 : 1); ++quality) {
                std::vector<uint8_t> q(bytes + 64, 0xAB);
                if (quality) {
                    ASSERT_EQ(t.quantize(x.data(), q.data(), n_rows, n_per_row, nullptr), bytes);
                } else {
                    t.quantize_ref(x.data(), q.data(), n_per_row * n_rows);
                }
                for (size_t i = bytes; i < q.size(); ++i) ASSERT_EQ(q[i], 0xAB) << "wrote past the end at " << i;
                std::vector<float> y(x.size() + 16, 12345.0f);
                t.dequantize(q.data(), y.data(), int64_t(x.size()));
                for (size_t i = x.size(); i < y.size(); ++i) ASSERT_EQ(y[i], 12345.0f);
                y.resize(x.size());
                // row by row dequantization gives the same values (blocks are independent)
                std::vector<float> row(static_cast<size_t>(n_per_row));
                for (int64_t r = 0; r < n_rows; ++r) {
                    t.dequantize(q.data() + size_t(r * blocks_per_row) * t.block_bytes, row.data(), n_per_row);
                    ASSERT_EQ(0, std::memcmp(row.data(), &y[size_t(r * n_per_row)], row.size() * 4));
                }
            }
        }
        if (t.quantize) {  // not a whole number of blocks: refused, nothing written
            std::vector<uint8_t> q(64, 0xAB);
            const std::vector<float> x(48, 1.0f);
            EXPECT_EQ(t.quantize(x.data(), q.data(), 1, 48, nullptr), 0u);
            EXPECT_EQ(q, std::vector<uint8_t>(64, 0xAB));
        }
    }
}

// ---- ggml_quantize_chunk ----

// What the chunk should hold for each type: the per-type function on the same rows.
std::vector<uint8_t> expected_rows(ggml_type type, const std::vector<float> & x, int64_t n_rows, int64_t n_per_row) {
    std::vector<uint8_t> out(ggml_row_size(type, n_per_row) * size_t(n_rows));
    switch (type) {
        case GGML_TYPE_F32: std::memcpy(out.data(), x.data(), out.size()); break;
        case GGML_TYPE_F16:
            ggml_fp32_to_fp16_row(x.data(), reinterpret_cast<ggml_fp16_t *>(out.data()), int64_t(x.size()));
            break;
        case GGML_TYPE_BF16:
            ggml_fp32_to_bf16_row(x.data(), reinterpret_cast<ggml_bf16_t *>(out.data()), int64_t(x.size()));
            break;
        case GGML_TYPE_Q4_0: ggml_quantize_q4_0(x.data(), out.data(), n_rows, n_per_row, nullptr); break;
        case GGML_TYPE_Q4_1: ggml_quantize_q4_1(x.data(), out.data(), n_rows, n_per_row, nullptr); break;
        case GGML_TYPE_Q5_0: ggml_quantize_q5_0(x.data(), out.data(), n_rows, n_per_row, nullptr); break;
        case GGML_TYPE_Q5_1: ggml_quantize_q5_1(x.data(), out.data(), n_rows, n_per_row, nullptr); break;
        case GGML_TYPE_Q8_0: ggml_quantize_q8_0(x.data(), out.data(), n_rows, n_per_row, nullptr); break;
        case GGML_TYPE_Q8_1:
            ggml_quantize_row_q8_1_ref(x.data(), reinterpret_cast<block_q8_1 *>(out.data()), int64_t(x.size()));
            break;
        case GGML_TYPE_Q2_K: ggml_quantize_q2_K(x.data(), out.data(), n_rows, n_per_row, nullptr); break;
        case GGML_TYPE_Q3_K: ggml_quantize_q3_K(x.data(), out.data(), n_rows, n_per_row, nullptr); break;
        case GGML_TYPE_Q4_K: ggml_quantize_q4_K(x.data(), out.data(), n_rows, n_per_row, nullptr); break;
        case GGML_TYPE_Q5_K: ggml_quantize_q5_K(x.data(), out.data(), n_rows, n_per_row, nullptr); break;
        case GGML_TYPE_Q6_K: ggml_quantize_q6_K(x.data(), out.data(), n_rows, n_per_row, nullptr); break;
        case GGML_TYPE_Q8_K:
            ggml_quantize_row_q8_K_ref(x.data(), reinterpret_cast<block_q8_K *>(out.data()), int64_t(x.size()));
            break;
        default: ADD_FAILURE() << "no expectation for " << ggml_type_name(type);
    }
    return out;
}

TEST(QuantsLegacy, QuantizeChunkWritesRowsAtTheirOffset) {
    const ggml_type types[] = {GGML_TYPE_F32,  GGML_TYPE_F16,  GGML_TYPE_BF16, GGML_TYPE_Q4_0, GGML_TYPE_Q4_1,
                               GGML_TYPE_Q5_0, GGML_TYPE_Q5_1, GGML_TYPE_Q8_0, GGML_TYPE_Q8_1, GGML_TYPE_Q2_K,
                               GGML_TYPE_Q3_K, GGML_TYPE_Q4_K, GGML_TYPE_Q5_K, GGML_TYPE_Q6_K, GGML_TYPE_Q8_K};
    const int64_t n_per_row = 512, start_row = 3, n_rows = 2, total_rows = 7;
    const std::vector<float> x = random_values(dist::gaussian, size_t(n_per_row * n_rows), 0.1f, 21);
    for (ggml_type type : types) {
        SCOPED_TRACE(ggml_type_name(type));
        const size_t row_size = ggml_row_size(type, n_per_row);
        ASSERT_GT(row_size, 0u);
        std::vector<uint8_t> dst(row_size * total_rows, 0xCD);
        const size_t written = ggml_quantize_chunk(type, x.data(), dst.data(), start_row, n_rows, n_per_row, nullptr);
        ASSERT_EQ(written, row_size * n_rows);
        const size_t begin = row_size * start_row, end = begin + written;
        for (size_t i = 0; i < dst.size(); ++i) {
            if (i < begin || i >= end) {
                ASSERT_EQ(dst[i], 0xCD) << "byte " << i << " outside the chunk";
            }
        }
        const std::vector<uint8_t> expected = expected_rows(type, x, n_rows, n_per_row);
        EXPECT_EQ(0, std::memcmp(dst.data() + begin, expected.data(), written));
    }
}

TEST(QuantsLegacy, QuantizeChunkRefusesBadArguments) {
    std::vector<uint8_t> dst(4096, 0xCD);
    const std::vector<float> x(1024, 1.0f);
    EXPECT_EQ(ggml_quantize_chunk(GGML_TYPE_Q4_0, x.data(), dst.data(), 0, 1, 48, nullptr), 0u);   // not whole blocks
    EXPECT_EQ(ggml_quantize_chunk(GGML_TYPE_Q4_K, x.data(), dst.data(), 0, 1, 512 + 32, nullptr), 0u);
    EXPECT_EQ(ggml_quantize_chunk(GGML_TYPE_I32, x.data(), dst.data(), 0, 1, 32, nullptr), 0u);    // not a float type
    EXPECT_EQ(ggml_quantize_chunk(ggml_type(5), x.data(), dst.data(), 0, 1, 32, nullptr), 0u);     // unused id
    EXPECT_EQ(ggml_quantize_chunk(GGML_TYPE_Q8_0, x.data(), dst.data(), -1, 1, 32, nullptr), 0u);  // negative row
    EXPECT_EQ(ggml_quantize_chunk(GGML_TYPE_Q8_0, x.data(), dst.data(), 0, 0, 32, nullptr), 0u);   // nothing to do
    EXPECT_EQ(dst, std::vector<uint8_t>(4096, 0xCD));
}

// ---- files written by llama.cpp ----

std::vector<float> read_f32_file(const std::string & path) {
    std::ifstream f(path, std::ios::binary);
    std::vector<char> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    std::vector<float> v(bytes.size() / 4);
    std::memcpy(v.data(), bytes.data(), v.size() * 4);
    return v;
}

std::unique_ptr<gguf_file> open_model(const std::string & path) {
    std::unique_ptr<gguf_file> f;
    const gguf_result r = gguf_file::open(path, gguf_open_options{}, &f);
    EXPECT_TRUE(r) << path << ": " << r.message;
    return f;
}

const legacy_case * case_of(const std::vector<legacy_case> & cases, ggml_type type) {
    for (const legacy_case & t : cases) {
        if (t.type == type) return &t;
    }
    return nullptr;
}

TEST(QuantsLegacyFiles, DequantizationMatchesReferenceBitForBit) {
    INFERD_REQUIRE_TESTDATA(dir);
    const std::vector<legacy_case> cases = legacy_cases();
    struct ref_row_set {
        const char * file;
        const char * tensor;
        ggml_type type;
    };
    for (const ref_row_set & s : {ref_row_set{"tiny-llama-q4_0.gguf", "token_embd.weight", GGML_TYPE_Q4_0},
                                  ref_row_set{"tiny-llama-q8_0.gguf", "output.weight", GGML_TYPE_Q8_0}}) {
        SCOPED_TRACE(s.file);
        const std::unique_ptr<gguf_file> f = open_model(dir + "/models/" + s.file);
        ASSERT_TRUE(f);
        const gguf_tensor_info * info = f->find_tensor(s.tensor);
        ASSERT_NE(info, nullptr);
        ASSERT_EQ(info->type, s.type);
        const std::vector<float> expected =
            read_f32_file(dir + "/reference/dequant/" + s.file + "." + s.tensor + ".f32");
        ASSERT_EQ(expected.size(), size_t(4 * info->ne[0]));
        const legacy_case & t = *case_of(cases, s.type);
        std::vector<float> y(expected.size());
        t.dequantize(f->tensor_data(*info), y.data(), int64_t(y.size()));
        for (size_t i = 0; i < y.size(); ++i) {
            uint32_t a, b;
            std::memcpy(&a, &y[i], 4);
            std::memcpy(&b, &expected[i], 4);
            ASSERT_EQ(a, b) << "element " << i << ": " << y[i] << " vs " << expected[i];
        }
    }
}

// Against llama.cpp's quantization of the same F32 weights: the reference quantizer writes the
// very same bytes, and the quality quantizer has a lower RMSE.
TEST(QuantsLegacyFiles, QuantizersAgainstShippedFiles) {
    INFERD_REQUIRE_TESTDATA(dir);
    const std::vector<legacy_case> cases = legacy_cases();
    const std::unique_ptr<gguf_file> f32 = open_model(dir + "/models/tiny-llama-f32.gguf");
    ASSERT_TRUE(f32);
    for (const char * file : {"tiny-llama-q4_0.gguf", "tiny-llama-q8_0.gguf"}) {
        const std::unique_ptr<gguf_file> shipped = open_model(dir + "/models/" + file);
        ASSERT_TRUE(shipped);
        for (const char * name : {"token_embd.weight", "blk.0.attn_v.weight", "blk.3.ffn_down.weight"}) {
            SCOPED_TRACE(std::string(file) + " " + name);
            const gguf_tensor_info * src = f32->find_tensor(name);
            const gguf_tensor_info * ship = shipped->find_tensor(name);
            ASSERT_TRUE(src && ship);
            ASSERT_EQ(src->type, GGML_TYPE_F32);
            const legacy_case * t = case_of(cases, ship->type);
            ASSERT_NE(t, nullptr) << "unexpected type " << ggml_type_name(ship->type);
            const float * p = static_cast<const float *>(f32->tensor_data(*src));
            const std::vector<float> x(p, p + src->n_elements);
            const std::vector<uint8_t> ref = quantize_ref(*t, x);
            ASSERT_EQ(ref.size(), ship->size);
            EXPECT_EQ(0, std::memcmp(ref.data(), shipped->tensor_data(*ship), ref.size()));
            const double rmse_shipped = rmse(x, dequantize(*t, ref));
            const double rmse_ours = rmse(x, dequantize(*t, quantize_quality(*t, x, src->ne[0])));
            EXPECT_LT(rmse_ours, rmse_shipped);
            std::printf("%-22s %-24s rmse shipped %.6g ours %.6g ratio %.4f\n", file, name, rmse_shipped, rmse_ours,
                        rmse_ours / rmse_shipped);
        }
    }
}

}  // namespace
