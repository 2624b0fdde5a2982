// The codebook formats IQ4_NL, IQ4_XS and MXFP4: traits, dequantization (hand-built blocks
// against the layouts written out independently here, and the reference engine's rows of
// ../shared/testdata bit for bit), the reference quantizers (exact on representable blocks,
// per-element error bounds), the quality quantizers (never worse than the reference on any
// block, better over random data, importance-weighted), edge values, shapes and
// ggml_quantize_chunk.
#include "ggml/quants.h"
#include "testdata.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace {

const int k_cb[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};
const int k_mx[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};

// ---- the types under test, untyped ----

struct iq_case {
    const char * name;
    ggml_type type;
    int64_t blck;
    size_t block_bytes;
    size_t (*quantize)(const float * src, void * dst, int64_t n_rows, int64_t n_per_row, const float * imatrix);
};

const iq_case k_cases[] = {
    {"iq4_nl", GGML_TYPE_IQ4_NL, 32, sizeof(block_iq4_nl), ggml_quantize_iq4_nl},
    {"iq4_xs", GGML_TYPE_IQ4_XS, 256, sizeof(block_iq4_xs), ggml_quantize_iq4_xs},
    {"mxfp4", GGML_TYPE_MXFP4, 32, sizeof(block_mxfp4), nullptr},  // reference quantizer only
};

std::vector<uint8_t> quantize_ref(const iq_case & t, const std::vector<float> & x) {
    std::vector<uint8_t> q(x.size() / size_t(t.blck) * t.block_bytes);
    ggml_get_type_traits(t.type).from_float(x.data(), q.data(), int64_t(x.size()));
    return q;
}

std::vector<uint8_t> quantize_quality(const iq_case & t, const std::vector<float> & x, int64_t n_per_row,
                                      const float * imatrix = nullptr) {
    std::vector<uint8_t> q(x.size() / size_t(t.blck) * t.block_bytes);
    EXPECT_EQ(t.quantize(x.data(), q.data(), int64_t(x.size()) / n_per_row, n_per_row, imatrix), q.size());
    return q;
}

std::vector<float> dequantize(const iq_case & t, const std::vector<uint8_t> & q) {
    std::vector<float> y(q.size() / t.block_bytes * size_t(t.blck));
    ggml_get_type_traits(t.type).to_float(q.data(), y.data(), int64_t(y.size()));
    return y;
}

double sum_sq_error(const float * x, const float * y, size_t n, const float * w = nullptr) {
    double s = 0;
    for (size_t i = 0; i < n; ++i) {
        const double e = double(x[i]) - double(y[i]);
        s += (w ? double(w[i]) : 1.0) * e * e;
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

// ---- layouts written out independently: element e of a block from its bytes ----

uint16_t read_u16(const uint8_t * p) { return uint16_t(p[0] | p[1] << 8); }

// Index (nibble) of element e (0..31) of 16 bytes of nibbles in the Q4_0 layout.
int nibble(const uint8_t * qs, int e) { return e < 16 ? qs[e] & 0xF : qs[e - 16] >> 4; }

double expected_value(ggml_type t, const uint8_t * b, int e) {
    switch (t) {
        case GGML_TYPE_IQ4_NL: return double(ggml_fp16_to_fp32(read_u16(b))) * k_cb[nibble(b + 2, e)];
        case GGML_TYPE_IQ4_XS: {
            const int ib = e / 32;
            const int lo = (b[4 + ib / 2] >> (4 * (ib % 2))) & 0xF;
            const int hi = (read_u16(b + 2) >> (2 * ib)) & 3;
            return double(ggml_fp16_to_fp32(read_u16(b))) * ((lo | hi << 4) - 32) * k_cb[nibble(b + 8 + 16 * ib, e % 32)];
        }
        case GGML_TYPE_MXFP4: return std::ldexp(double(k_mx[nibble(b + 1, e)]) / 2.0, int(b[0]) - 127);
        default: return NAN;
    }
}

}  // namespace

// ---- traits ----

TEST(QuantsIq, Traits) {
    EXPECT_EQ(int(GGML_TYPE_IQ4_NL), 20);
    EXPECT_EQ(int(GGML_TYPE_IQ4_XS), 23);
    EXPECT_EQ(int(GGML_TYPE_MXFP4), 39);
    EXPECT_GT(int(GGML_TYPE_COUNT), 39);
    EXPECT_STREQ(ggml_type_name(GGML_TYPE_IQ4_NL), "iq4_nl");
    EXPECT_STREQ(ggml_type_name(GGML_TYPE_IQ4_XS), "iq4_xs");
    EXPECT_STREQ(ggml_type_name(GGML_TYPE_MXFP4), "mxfp4");
    EXPECT_EQ(ggml_row_size(GGML_TYPE_IQ4_NL, 256), 8u * 18u);
    EXPECT_EQ(ggml_row_size(GGML_TYPE_IQ4_XS, 256), 136u);
    EXPECT_EQ(ggml_row_size(GGML_TYPE_MXFP4, 256), 8u * 17u);
    EXPECT_EQ(ggml_get_type_traits(GGML_TYPE_IQ4_NL).vec_dot_type, GGML_TYPE_Q8_0);
    EXPECT_EQ(ggml_get_type_traits(GGML_TYPE_IQ4_XS).vec_dot_type, GGML_TYPE_Q8_K);
    EXPECT_EQ(ggml_get_type_traits(GGML_TYPE_MXFP4).vec_dot_type, GGML_TYPE_Q8_0);
    for (const iq_case & t : k_cases) {
        const ggml_type_traits & tt = ggml_get_type_traits(t.type);
        EXPECT_TRUE(ggml_type_is_valid(t.type)) << t.name;
        EXPECT_TRUE(ggml_type_is_supported(t.type)) << t.name;
        EXPECT_TRUE(tt.is_quantized && !tt.is_float && tt.to_float && tt.from_float) << t.name;
        EXPECT_EQ(tt.blck_size, t.blck) << t.name;
        EXPECT_EQ(tt.type_size, t.block_bytes) << t.name;
    }
    // ids of formats not implemented stay invalid
    for (int id : {4, 5, 16, 17, 18, 19, 21, 22, 29, 31, 34, 38}) EXPECT_FALSE(ggml_type_is_valid(id)) << id;
    EXPECT_FALSE(ggml_type_is_valid(GGML_TYPE_COUNT));
}

TEST(QuantsIq, E8M0HalfIsTwoToTheEMinus128) {
    for (int e = 0; e < 256; ++e) {
        EXPECT_EQ(ggml_e8m0_to_fp32_half(uint8_t(e)), std::ldexp(1.0f, e - 128)) << e;
    }
}

// ---- dequantization ----

TEST(QuantsIq, DequantizeHandBuiltBlocks) {
    std::mt19937 rng(3);
    for (const iq_case & t : k_cases) {
        SCOPED_TRACE(t.name);
        std::vector<uint8_t> q(64 * t.block_bytes);
        for (auto & c : q) c = uint8_t(rng());
        for (size_t b = 0; b < 64; ++b) {
            uint8_t * p = q.data() + b * t.block_bytes;
            if (t.type == GGML_TYPE_MXFP4) {
                p[0] = uint8_t(b < 4 ? b : b == 5 ? 254 : 100 + rng() % 50);  // subnormal scales too
            } else {  // a finite fp16 scale of either sign, sometimes 0 or subnormal
                const uint16_t h = b == 0 ? 0 : b == 1 ? 0x0003 : uint16_t((rng() & 0x83FF) | (rng() % 30) << 10);
                p[0] = uint8_t(h);
                p[1] = uint8_t(h >> 8);
            }
        }
        const std::vector<float> y = dequantize(t, q);
        for (size_t i = 0; i < y.size(); ++i) {
            const uint8_t * p = q.data() + i / size_t(t.blck) * t.block_bytes;
            // every value is exact in float (an 11-bit scale times at most 13 more bits)
            ASSERT_EQ(y[i], float(expected_value(t.type, p, int(i % size_t(t.blck))))) << "element " << i;
        }
    }
    // e = 255 (2^127 / 2): codes of magnitude >= 2 overflow to infinity, as in the reference engine
    block_mxfp4 b{};
    b.e = 255;
    b.qs[0] = 0x71;  // element 0: code 1 (0.5), element 16: code 7 (6)
    float y[32];
    ggml_dequantize_row_mxfp4(&b, y, 32);
    EXPECT_EQ(y[0], std::ldexp(1.0f, 127));
    EXPECT_TRUE(std::isinf(y[16]));
}

TEST(QuantsIq, DequantizationMatchesReferenceBitForBit) {
    INFERD_REQUIRE_TESTDATA(dir);
    struct raw_case {
        const char * file;
        ggml_type type;
        int64_t row_length, rows;
        size_t bytes_per_row;
    };
    // raw.json: row length 256, 4 rows of each
    for (const raw_case & c : {raw_case{"IQ4_NL", GGML_TYPE_IQ4_NL, 256, 4, 144},
                               raw_case{"IQ4_XS", GGML_TYPE_IQ4_XS, 256, 4, 136},
                               raw_case{"MXFP4", GGML_TYPE_MXFP4, 256, 4, 136}}) {
        SCOPED_TRACE(c.file);
        const std::string base = dir + "/reference/dequant/raw/" + c.file;
        std::ifstream fb(base + ".rows.bin", std::ios::binary), ff(base + ".rows.f32", std::ios::binary);
        ASSERT_TRUE(fb && ff);
        const std::vector<char> bytes((std::istreambuf_iterator<char>(fb)), std::istreambuf_iterator<char>());
        const std::vector<char> fbytes((std::istreambuf_iterator<char>(ff)), std::istreambuf_iterator<char>());
        ASSERT_EQ(ggml_row_size(c.type, c.row_length), c.bytes_per_row);
        ASSERT_EQ(bytes.size(), c.bytes_per_row * size_t(c.rows));
        ASSERT_EQ(fbytes.size(), size_t(c.row_length * c.rows) * 4);
        std::vector<float> y(size_t(c.row_length * c.rows));
        // row by row, as a reader of the tensor would
        for (int64_t r = 0; r < c.rows; ++r) {
            ggml_get_type_traits(c.type).to_float(bytes.data() + size_t(r) * c.bytes_per_row, y.data() + r * c.row_length,
                                                  c.row_length);
        }
        for (size_t i = 0; i < y.size(); ++i) {
            uint32_t a, b;
            std::memcpy(&a, &y[i], 4);
            std::memcpy(&b, fbytes.data() + 4 * i, 4);
            ASSERT_EQ(a, b) << "element " << i;
        }
    }
}

// ---- reference quantizers ----

// Blocks whose values are exactly representable (the largest magnitude on the codebook's -127,
// or on the E2M1 top of its exponent) come back unchanged.
TEST(QuantsIq, ReferenceExactOnRepresentableBlocks) {
    std::mt19937 rng(9);
    for (const iq_case & t : k_cases) {
        SCOPED_TRACE(t.name);
        for (int rep = 0; rep < 50; ++rep) {
            std::vector<float> x(size_t(t.blck) * 2);
            for (size_t b = 0; b < x.size() / size_t(t.blck); ++b) {
                float * xb = x.data() + b * size_t(t.blck);
                if (t.type == GGML_TYPE_MXFP4) {
                    const int e = 100 + int(rng() % 50);
                    for (int j = 0; j < 32; ++j) xb[j] = std::ldexp(float(k_mx[rng() % 16]), e - 128);
                    xb[rng() % 32] = std::ldexp(float(rng() % 2 ? 12 : -8), e - 128);
                    continue;
                }
                const double d_wanted = std::ldexp(1.0 + (rng() % 1024) / 1024.0, -int(rng() % 8));
                const float d = ggml_fp16_to_fp32(ggml_fp32_to_fp16(float(d_wanted)));
                const int n_sub = int(t.blck / 32);
                const int big = int(rng() % unsigned(n_sub));
                for (int ib = 0; ib < n_sub; ++ib) {
                    // IQ4_XS: one sub-block at the largest scale (ls = 0), the others anywhere
                    const float dl = n_sub == 1 ? d : d * float(ib == big ? -32 : int(rng() % 64) - 32);
                    for (int j = 0; j < 32; ++j) xb[32 * ib + j] = dl * float(k_cb[rng() % 16]);
                    xb[32 * ib + int(rng() % 32)] = dl * float(k_cb[0]);
                }
            }
            EXPECT_EQ(dequantize(t, quantize_ref(t, x)), x) << "repetition " << rep;
        }
    }
}

// |scale| of the sub-block holding element e of an IQ4 block: d, or d * (ls - 32).
double iq4_sub_scale(ggml_type t, const uint8_t * b, int e) {
    const double d = std::fabs(double(ggml_fp16_to_fp32(read_u16(b))));
    if (t == GGML_TYPE_IQ4_NL) return d;
    const int ib = e / 32;
    const int ls = ((b[4 + ib / 2] >> (4 * (ib % 2))) & 0xF) | ((read_u16(b + 2) >> (2 * ib)) & 3) << 4;
    return d * std::abs(ls - 32);
}

// Every element lands within half the largest codebook gap of its value (IQ4: 12 units of the
// sub-block scale, 14 at the clipped top end 113..127, plus, for IQ4_XS, what the rounding of
// the sub-block scale to its 6-bit code moves the block's largest value: at most 63.5 d;
// MXFP4: 2 units of 2^(e - 128), 4 where the block's largest values saturate at 12).
TEST(QuantsIq, ReferenceErrorBounds) {
    for (const iq_case & t : k_cases) {
        SCOPED_TRACE(t.name);
        for (dist d : {dist::uniform, dist::gaussian, dist::laplace, dist::outliers}) {
            for (float scale : {1.0f, 1e-3f, 300.0f}) {
                const std::vector<float> x = random_values(d, 256 * 64, scale, 7 + int(d));
                const std::vector<uint8_t> q = quantize_ref(t, x);
                const std::vector<float> y = dequantize(t, q);
                for (size_t i = 0; i < x.size(); ++i) {
                    const uint8_t * b = q.data() + i / size_t(t.blck) * t.block_bytes;
                    const int e = int(i % size_t(t.blck));
                    double bound = 0;
                    if (t.type == GGML_TYPE_MXFP4) {
                        bound = 4.0 * ggml_e8m0_to_fp32_half(b[0]);
                    } else {
                        const double unit = iq4_sub_scale(t.type, b, e);
                        const double d = std::fabs(double(ggml_fp16_to_fp32(read_u16(b))));
                        // the stored scale is rounded to fp16 (subnormal below 6.1e-5): values
                        // may sit just past 127 units
                        bound = 14.0 * unit + 127.0 * std::max(unit * 0x1p-11, 0x1p-25) * 32.0;
                        if (t.type == GGML_TYPE_IQ4_XS) bound += 64.0 * d;
                    }
                    ASSERT_LE(std::fabs(double(y[i]) - x[i]), bound) << i << " x " << x[i] << " y " << y[i];
                }
            }
        }
    }
}

// ---- quality quantizers ----

TEST(QuantsIq, QualityNeverWorseThanReferenceAndBetterOverall) {
    for (const iq_case & t : k_cases) {
        if (!t.quantize) continue;
        SCOPED_TRACE(t.name);
        for (dist d : {dist::uniform, dist::gaussian, dist::laplace, dist::outliers}) {
            const std::vector<float> x = random_values(d, 256 * 128, 0.02f, 100 + int(d));
            const std::vector<float> y_ref = dequantize(t, quantize_ref(t, x));
            const std::vector<float> y_q = dequantize(t, quantize_quality(t, x, 256 * 4));
            const size_t bs = size_t(t.blck);
            for (size_t b = 0; b < x.size() / bs; ++b) {
                ASSERT_LE(sum_sq_error(&x[b * bs], &y_q[b * bs], bs), sum_sq_error(&x[b * bs], &y_ref[b * bs], bs))
                    << "block " << b;
            }
            // measured 0.90-0.94; a few large outliers dominate the error of their blocks: 0.97
            const double ratio = rmse(x, y_q) / rmse(x, y_ref);
            std::printf("%s distribution %d: rmse quality / reference %.4f\n", t.name, int(d), ratio);
            EXPECT_LT(ratio, d == dist::outliers ? 0.985 : 0.96) << "distribution " << int(d);
        }
    }
}

// RMSE / sigma on N(0, 1) (measured 0.0734 IQ4_NL, 0.0738 IQ4_XS, 0.1145 MXFP4; for scale: the
// quality quantizers of Q4_0 and Q4_K give 0.081 and 0.07).
TEST(QuantsIq, GaussianRoundTripError) {
    const std::vector<float> x = random_values(dist::gaussian, 256 * 256, 1.0f, 5);
    const double bound[] = {0.075, 0.075};  // IQ4_NL, IQ4_XS
    for (int i = 0; i < 2; ++i) {
        const double e = rmse(x, dequantize(k_cases[i], quantize_quality(k_cases[i], x, 4096)));
        std::printf("%s rmse / sigma %.4f\n", k_cases[i].name, e);
        EXPECT_LT(e, bound[i]) << k_cases[i].name;
    }
    const double e_mx = rmse(x, dequantize(k_cases[2], quantize_ref(k_cases[2], x)));
    std::printf("mxfp4 rmse / sigma %.4f\n", e_mx);
    EXPECT_LT(e_mx, 0.15);
}

TEST(QuantsIq, ImportanceMatrixWeightsTheError) {
    std::vector<float> imatrix(512);
    for (size_t j = 0; j < imatrix.size(); ++j) imatrix[j] = (j % 7 == 0) ? 50.0f : 0.5f;
    for (const iq_case & t : k_cases) {
        if (!t.quantize) continue;
        SCOPED_TRACE(t.name);
        const int64_t n = int64_t(imatrix.size());
        const std::vector<float> x = random_values(dist::gaussian, imatrix.size() * 32, 1.0f, 5);
        const std::vector<float> y_plain = dequantize(t, quantize_quality(t, x, n));
        const std::vector<float> y_weighted = dequantize(t, quantize_quality(t, x, n, imatrix.data()));
        const std::vector<float> y_ref = dequantize(t, quantize_ref(t, x));
        double e_plain = 0, e_weighted = 0, e_ref = 0;
        for (size_t r = 0; r < x.size() / imatrix.size(); ++r) {
            const size_t o = r * imatrix.size();
            e_plain += sum_sq_error(&x[o], &y_plain[o], imatrix.size(), imatrix.data());
            e_weighted += sum_sq_error(&x[o], &y_weighted[o], imatrix.size(), imatrix.data());
            e_ref += sum_sq_error(&x[o], &y_ref[o], imatrix.size(), imatrix.data());
        }
        EXPECT_LT(e_weighted, e_plain);
        EXPECT_LE(e_weighted, e_ref);
        // an unusable importance matrix (zeros, NaN) is ignored: the same as none
        std::vector<float> unusable(imatrix.size(), 0.0f);
        unusable[3] = std::numeric_limits<float>::quiet_NaN();
        EXPECT_EQ(quantize_quality(t, x, n, unusable.data()), quantize_quality(t, x, n));
    }
}

// ---- edge values ----

TEST(QuantsIq, ZeroHugeTinyAndNonFiniteBlocks) {
    const float inf = std::numeric_limits<float>::infinity();
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const float fmax = std::numeric_limits<float>::max();
    std::vector<std::vector<float>> sets;
    sets.push_back(std::vector<float>(256, 0.0f));
    sets.push_back(std::vector<float>(256, -0.0f));
    sets.push_back(std::vector<float>(256, 1e30f));
    sets.push_back(std::vector<float>(256, 7.0f));
    std::vector<float> mixed(256);
    for (int j = 0; j < 256; ++j) mixed[j] = (j % 2 ? 1.0f : -1.0f) * float(j % 32) * 1e37f;
    sets.push_back(mixed);
    std::vector<float> extremes = {fmax, -fmax, 1e-45f, -1e-40f, 3e5f, -1e6f};
    extremes.resize(256, 1.0f);
    sets.push_back(extremes);
    std::vector<float> tiny(256);
    for (int j = 0; j < 256; ++j) tiny[j] = float(j % 32 - 16) * 1e-39f;
    sets.push_back(tiny);
    std::vector<float> non_finite = {inf, -inf, nan, 1.0f, -2.0f};
    non_finite.resize(256, 0.5f);
    sets.push_back(non_finite);
    for (const iq_case & t : k_cases) {
        SCOPED_TRACE(t.name);
        for (size_t k = 0; k < sets.size(); ++k) {
            const std::vector<float> y = dequantize(t, quantize_ref(t, sets[k]));
            EXPECT_TRUE(all_finite(y)) << "set " << k;
            if (t.quantize) {
                EXPECT_TRUE(all_finite(dequantize(t, quantize_quality(t, sets[k], 256)))) << "set " << k;
            }
        }
        EXPECT_EQ(dequantize(t, quantize_ref(t, sets[0])), sets[0]);  // zeros stay zeros
        // a constant block: exact up to the fp16 scale; MXFP4 saturates 7 = 1.75 * 2^2 at 1.5 * 2^2
        for (float v : dequantize(t, quantize_ref(t, sets[3]))) {
            EXPECT_NEAR(v, t.type == GGML_TYPE_MXFP4 ? 6.0f : 7.0f, 7.0f * 0x1p-9f);
        }
        // keeps the sign; the IQ4 scales saturate at the largest fp16 value (65504 * 127)
        for (float v : dequantize(t, quantize_ref(t, sets[2]))) EXPECT_GT(v, t.type == GGML_TYPE_MXFP4 ? 1e29f : 8e6f);
    }
}

// ---- shapes and ggml_quantize_chunk ----

TEST(QuantsIq, OddBlockCountsStayInBoundsAndPartialBlocksAreRefused) {
    for (const iq_case & t : k_cases) {
        SCOPED_TRACE(t.name);
        for (int64_t blocks_per_row : {1, 3, 7}) {
            const int64_t n_per_row = t.blck * blocks_per_row, n_rows = 5;
            const std::vector<float> x = random_values(dist::gaussian, size_t(n_per_row * n_rows), 1.0f, 11);
            const size_t bytes = size_t(n_rows * blocks_per_row) * t.block_bytes;
            std::vector<uint8_t> q(bytes + 64, 0xAB);
            ASSERT_EQ(ggml_quantize_chunk(t.type, x.data(), q.data(), 0, n_rows, n_per_row, nullptr), bytes);
            for (size_t i = bytes; i < q.size(); ++i) ASSERT_EQ(q[i], 0xAB) << "wrote past the end at " << i;
            std::vector<float> y(x.size() + 16, 12345.0f);
            ggml_get_type_traits(t.type).to_float(q.data(), y.data(), int64_t(x.size()));
            for (size_t i = x.size(); i < y.size(); ++i) ASSERT_EQ(y[i], 12345.0f);
        }
        std::vector<uint8_t> q(1024, 0xAB);
        const std::vector<float> x(t.blck + 16, 1.0f);
        EXPECT_EQ(ggml_quantize_chunk(t.type, x.data(), q.data(), 0, 1, t.blck + 16, nullptr), 0u);
        if (t.quantize) {
            EXPECT_EQ(t.quantize(x.data(), q.data(), 1, t.blck + 16, nullptr), 0u);
        }
        EXPECT_EQ(q, std::vector<uint8_t>(1024, 0xAB));
    }
}

TEST(QuantsIq, QuantizeChunkWritesRowsAtTheirOffset) {
    const int64_t n_per_row = 512, start_row = 3, n_rows = 2, total_rows = 7;
    const std::vector<float> x = random_values(dist::gaussian, size_t(n_per_row * n_rows), 0.1f, 21);
    for (const iq_case & t : k_cases) {
        SCOPED_TRACE(t.name);
        const size_t row = ggml_row_size(t.type, n_per_row);
        std::vector<uint8_t> out(row * size_t(total_rows), 0xCD);
        ASSERT_EQ(ggml_quantize_chunk(t.type, x.data(), out.data(), start_row, n_rows, n_per_row, nullptr),
                  row * size_t(n_rows));
        std::vector<uint8_t> expect(row * size_t(n_rows));
        if (t.quantize) {
            t.quantize(x.data(), expect.data(), n_rows, n_per_row, nullptr);
        } else {
            ggml_get_type_traits(t.type).from_float(x.data(), expect.data(), n_per_row * n_rows);
        }
        EXPECT_EQ(0, std::memcmp(out.data() + row * size_t(start_row), expect.data(), expect.size()));
        for (size_t i = 0; i < out.size(); ++i) {
            const bool inside = i >= row * size_t(start_row) && i < row * size_t(start_row + n_rows);
            if (!inside) {
                ASSERT_EQ(out[i], 0xCD) << i;
            }
        }
    }
}
