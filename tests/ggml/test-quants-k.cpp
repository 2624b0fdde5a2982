// K-quant formats (Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, Q8_K): dequantization bit for bit against the
// reference rows of an established engine (Q4_K, Q6_K) and against per-element decoders written
// from the documented element order (every format, random blocks); scale packing round trips;
// quantize -> dequantize error bounds on several distributions; zero, constant, huge, tiny and
// non-finite inputs; the quality quantizer against the reference one and against the quantized
// files shipped with the test data (per-tensor RMSE against their F32 source).
#include "ggml/gguf.h"
#include "ggml/quants.h"
#include "src/quants-k-impl.h"
#include "testdata.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace {

constexpr ggml_type k_weight_types[] = {GGML_TYPE_Q2_K, GGML_TYPE_Q3_K, GGML_TYPE_Q4_K, GGML_TYPE_Q5_K,
                                        GGML_TYPE_Q6_K};

size_t block_bytes(ggml_type t) {
    switch (t) {
        case GGML_TYPE_Q2_K: return sizeof(block_q2_K);
        case GGML_TYPE_Q3_K: return sizeof(block_q3_K);
        case GGML_TYPE_Q4_K: return sizeof(block_q4_K);
        case GGML_TYPE_Q5_K: return sizeof(block_q5_K);
        case GGML_TYPE_Q6_K: return sizeof(block_q6_K);
        case GGML_TYPE_Q8_K: return sizeof(block_q8_K);
        default: return 0;
    }
}

const char * name_of(ggml_type t) {
    switch (t) {
        case GGML_TYPE_Q2_K: return "q2_K";
        case GGML_TYPE_Q3_K: return "q3_K";
        case GGML_TYPE_Q4_K: return "q4_K";
        case GGML_TYPE_Q5_K: return "q5_K";
        case GGML_TYPE_Q6_K: return "q6_K";
        case GGML_TYPE_Q8_K: return "q8_K";
        default: return "?";
    }
}

void dequantize(ggml_type t, const void * src, float * dst, int64_t n) {
    switch (t) {
        case GGML_TYPE_Q2_K: ggml_dequantize_row_q2_K(static_cast<const block_q2_K *>(src), dst, n); break;
        case GGML_TYPE_Q3_K: ggml_dequantize_row_q3_K(static_cast<const block_q3_K *>(src), dst, n); break;
        case GGML_TYPE_Q4_K: ggml_dequantize_row_q4_K(static_cast<const block_q4_K *>(src), dst, n); break;
        case GGML_TYPE_Q5_K: ggml_dequantize_row_q5_K(static_cast<const block_q5_K *>(src), dst, n); break;
        case GGML_TYPE_Q6_K: ggml_dequantize_row_q6_K(static_cast<const block_q6_K *>(src), dst, n); break;
        case GGML_TYPE_Q8_K: ggml_dequantize_row_q8_K(static_cast<const block_q8_K *>(src), dst, n); break;
        default: FAIL() << "not a K-quant type";
    }
}

void quantize_ref(ggml_type t, const float * src, void * dst, int64_t n) {
    switch (t) {
        case GGML_TYPE_Q2_K: ggml_quantize_row_q2_K_ref(src, static_cast<block_q2_K *>(dst), n); break;
        case GGML_TYPE_Q3_K: ggml_quantize_row_q3_K_ref(src, static_cast<block_q3_K *>(dst), n); break;
        case GGML_TYPE_Q4_K: ggml_quantize_row_q4_K_ref(src, static_cast<block_q4_K *>(dst), n); break;
        case GGML_TYPE_Q5_K: ggml_quantize_row_q5_K_ref(src, static_cast<block_q5_K *>(dst), n); break;
        case GGML_TYPE_Q6_K: ggml_quantize_row_q6_K_ref(src, static_cast<block_q6_K *>(dst), n); break;
        case GGML_TYPE_Q8_K: ggml_quantize_row_q8_K_ref(src, static_cast<block_q8_K *>(dst), n); break;
        default: FAIL() << "not a K-quant type";
    }
}

size_t quantize_quality(ggml_type t, const float * src, void * dst, int64_t n_rows, int64_t n_per_row,
                        const float * imatrix) {
    switch (t) {
        case GGML_TYPE_Q2_K: return ggml_quantize_q2_K(src, dst, n_rows, n_per_row, imatrix);
        case GGML_TYPE_Q3_K: return ggml_quantize_q3_K(src, dst, n_rows, n_per_row, imatrix);
        case GGML_TYPE_Q4_K: return ggml_quantize_q4_K(src, dst, n_rows, n_per_row, imatrix);
        case GGML_TYPE_Q5_K: return ggml_quantize_q5_K(src, dst, n_rows, n_per_row, imatrix);
        case GGML_TYPE_Q6_K: return ggml_quantize_q6_K(src, dst, n_rows, n_per_row, imatrix);
        default: ADD_FAILURE() << "not a K-quant weight type"; return 0;
    }
}

enum class quantizer { ref, quality };

// Quantizes x (a multiple of 256 values, one row) and returns the dequantized values.
std::vector<float> round_trip(ggml_type t, const std::vector<float> & x, quantizer which,
                              const float * imatrix = nullptr) {
    const int64_t n = int64_t(x.size());
    std::vector<uint8_t> q(size_t(n / QK_K) * block_bytes(t));
    if (which == quantizer::ref) {
        quantize_ref(t, x.data(), q.data(), n);
    } else {
        EXPECT_EQ(quantize_quality(t, x.data(), q.data(), 1, n, imatrix), q.size());
    }
    std::vector<float> y(x.size());
    dequantize(t, q.data(), y.data(), n);
    return y;
}

double sum_sq_diff(const std::vector<float> & a, const std::vector<float> & b) {
    double s = 0;
    for (size_t i = 0; i < a.size(); ++i) {
        const double e = double(a[i]) - double(b[i]);
        s += e * e;
    }
    return s;
}

double rms(const std::vector<float> & a) {
    double s = 0;
    for (float v : a) s += double(v) * v;
    return std::sqrt(s / double(a.size()));
}

bool all_finite(const std::vector<float> & a) {
    for (float v : a) {
        if (!std::isfinite(v)) return false;
    }
    return true;
}

float fp16(ggml_fp16_t h) { return ggml_fp16_to_fp32(h); }

// ---------------------------------------------------------------- test distributions

enum class dist { gaussian, uniform, heavy_tail, outliers, positive, shifted };
constexpr dist k_dists[] = {dist::gaussian, dist::uniform, dist::heavy_tail, dist::outliers, dist::positive,
                            dist::shifted};
const char * dist_name(dist d) {
    switch (d) {
        case dist::gaussian: return "gaussian";
        case dist::uniform: return "uniform";
        case dist::heavy_tail: return "heavy_tail";
        case dist::outliers: return "outliers";
        case dist::positive: return "positive";
        case dist::shifted: return "shifted";
    }
    return "?";
}

std::vector<float> make_values(dist d, size_t n, uint32_t seed, float scale = 1.0f) {
    std::mt19937 gen(seed);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::uniform_real_distribution<float> uni(-1.0f, 1.0f);
    std::vector<float> x(n);
    for (size_t i = 0; i < n; ++i) {
        float v = 0;
        switch (d) {
            case dist::gaussian: v = normal(gen); break;
            case dist::uniform: v = uni(gen); break;
            case dist::heavy_tail: v = normal(gen) * std::exp(0.75f * normal(gen)); break;
            case dist::outliers: v = normal(gen) * (uni(gen) > 0.98f ? 20.0f : 1.0f); break;
            case dist::positive: v = 0.5f * (uni(gen) + 1.0f); break;
            case dist::shifted: v = 3.0f + normal(gen); break;
        }
        x[i] = v * scale;
    }
    return x;
}

// Relative RMSE (rmse / rms(x)) the quality quantizer must stay under, per type and
// distribution: 1.15 times what it measured (16 super-blocks, the seeds of the test below).
// Symmetric formats (Q3_K, Q6_K) spend levels on [-max, max], so offset data costs them more.
double relative_rmse_bound(ggml_type t, dist d) {
    //                              gaussian uniform heavy_tail outliers positive shifted
    static const double q2_K[] = {0.305, 0.248, 0.335, 0.242, 0.154, 0.140};
    static const double q3_K[] = {0.170, 0.137, 0.219, 0.181, 0.120, 0.107};
    static const double q4_K[] = {0.082, 0.061, 0.105, 0.117, 0.0335, 0.0313};
    static const double q5_K[] = {0.041, 0.031, 0.053, 0.058, 0.0165, 0.0153};
    static const double q6_K[] = {0.020, 0.0143, 0.0296, 0.0362, 0.0145, 0.0132};
    const size_t i = size_t(d);
    switch (t) {
        case GGML_TYPE_Q2_K: return q2_K[i];
        case GGML_TYPE_Q3_K: return q3_K[i];
        case GGML_TYPE_Q4_K: return q4_K[i];
        case GGML_TYPE_Q5_K: return q5_K[i];
        case GGML_TYPE_Q6_K: return q6_K[i];
        default: return 0;
    }
}

}  // namespace

// ---------------------------------------------------------------- bit-exact dequantization

TEST(QuantsK, DequantizeMatchesReferenceRows) {
    INFERD_REQUIRE_TESTDATA(dir);
    struct reference_case {
        const char * file;
        const char * tensor;
        ggml_type type;
    };
    const reference_case cases[] = {
        {"tiny-llama-q4_k_m.gguf", "token_embd.weight", GGML_TYPE_Q4_K},
        {"tiny-llama-q4_k_m.gguf", "output.weight", GGML_TYPE_Q6_K},
        {"tiny-llama-q6_k.gguf", "output.weight", GGML_TYPE_Q6_K},
        {"tiny-llama-q4_0.gguf", "output.weight", GGML_TYPE_Q6_K},
    };
    constexpr int64_t n_rows = 4, n_per_row = 256;  // as listed in reference/dequant/dequant.json
    for (const reference_case & c : cases) {
        SCOPED_TRACE(std::string(c.file) + " " + c.tensor);
        std::unique_ptr<gguf_file> f;
        gguf_open_options opts;
        opts.mode = gguf_load_mode::read;
        const gguf_result r = gguf_file::open(dir + "/models/" + c.file, opts, &f);
        ASSERT_TRUE(r) << r.message;
        const gguf_tensor_info * t = f->find_tensor(c.tensor);
        ASSERT_NE(t, nullptr);
        ASSERT_EQ(t->type, c.type);
        ASSERT_EQ(t->ne[0], n_per_row);
        ASSERT_GE(t->n_rows(), n_rows);

        std::vector<float> expected(size_t(n_rows * n_per_row));
        const std::string ref_path = dir + "/reference/dequant/" + c.file + "." + c.tensor + ".f32";
        FILE * fp = std::fopen(ref_path.c_str(), "rb");
        ASSERT_NE(fp, nullptr) << ref_path;
        const size_t got = std::fread(expected.data(), sizeof(float), expected.size(), fp);
        std::fclose(fp);
        ASSERT_EQ(got, expected.size());

        std::vector<float> y(expected.size());
        dequantize(c.type, f->tensor_data(*t), y.data(), n_rows * n_per_row);
        int mismatches = 0;
        for (size_t i = 0; i < y.size(); ++i) {
            if (std::memcmp(&y[i], &expected[i], sizeof(float)) != 0 && ++mismatches <= 5) {
                ADD_FAILURE() << "element " << i << ": " << y[i] << " != " << expected[i];
            }
        }
        EXPECT_EQ(mismatches, 0);
    }
}

namespace {

// Per-element decoders written from the documented element order (e = 0..255 in a super-block),
// with the decoder's float expression shapes.
float element_q2_K(const block_q2_K & b, int e) {
    const int q = (b.qs[32 * (e / 128) + e % 32] >> (2 * ((e % 128) / 32))) & 3;
    const int sc = b.scales[e / 16] & 0xF, m = b.scales[e / 16] >> 4;
    const float dl = fp16(b.d) * float(sc), ml = fp16(b.dmin) * float(m);
    return dl * float(q) - ml;
}

int q3_scale(const block_q3_K & b, int j) {
    const int lo = (b.scales[j % 8] >> (4 * (j / 8))) & 0xF;
    const int hi = (b.scales[8 + j % 4] >> (2 * (j / 4))) & 3;
    return (lo | (hi << 4)) - 32;
}

float element_q3_K(const block_q3_K & b, int e) {
    const int lo = (b.qs[32 * (e / 128) + e % 32] >> (2 * ((e % 128) / 32))) & 3;
    const int hi = (b.hmask[e % 32] >> (e / 32)) & 1;
    const float dl = fp16(b.d) * float(q3_scale(b, e / 16));
    return dl * float(lo + 4 * hi - 4);
}

void scale_min_k4(const uint8_t * s, int j, int * sc, int * m) {
    if (j < 4) {
        *sc = s[j] & 63;
        *m = s[j + 4] & 63;
    } else {
        *sc = (s[j + 4] & 0xF) | ((s[j - 4] >> 6) << 4);
        *m = (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
    }
}

float element_q4_K(const block_q4_K & b, int e) {
    const int q = (b.qs[32 * (e / 64) + e % 32] >> (4 * ((e % 64) / 32))) & 0xF;
    int sc, m;
    scale_min_k4(b.scales, e / 32, &sc, &m);
    const float dl = fp16(b.d) * float(sc), ml = fp16(b.dmin) * float(m);
    return dl * float(q) - ml;
}

float element_q5_K(const block_q5_K & b, int e) {
    const int lo = (b.qs[32 * (e / 64) + e % 32] >> (4 * ((e % 64) / 32))) & 0xF;
    const int hi = (b.qh[e % 32] >> (e / 32)) & 1;
    int sc, m;
    scale_min_k4(b.scales, e / 32, &sc, &m);
    const float dl = fp16(b.d) * float(sc), ml = fp16(b.dmin) * float(m);
    return dl * float(lo + 16 * hi) - ml;
}

float element_q6_K(const block_q6_K & b, int e) {
    const int lo = (b.ql[64 * (e / 128) + e % 64] >> (4 * ((e % 128) / 64))) & 0xF;
    const int hi = (b.qh[32 * (e / 128) + e % 32] >> (2 * ((e % 128) / 32))) & 3;
    const float dl = fp16(b.d) * float(b.scales[e / 16]);
    return dl * float((lo | (hi << 4)) - 32);
}

// Random bytes, with finite F16 scales (exponent field never all ones).
template <typename Block>
std::vector<Block> random_blocks(size_t n, uint32_t seed) {
    std::mt19937 gen(seed);
    std::vector<Block> blocks(n);
    auto * bytes = reinterpret_cast<uint8_t *>(blocks.data());
    for (size_t i = 0; i < n * sizeof(Block); ++i) bytes[i] = uint8_t(gen());
    return blocks;
}

ggml_fp16_t finite_fp16(ggml_fp16_t h) { return ((h >> 10) & 0x1f) == 0x1f ? ggml_fp16_t(h & 0xbfff) : h; }

template <typename Block>
void expect_elements(const std::vector<Block> & blocks, const std::vector<float> & y,
                     float (*element)(const Block &, int)) {
    int mismatches = 0;
    for (size_t i = 0; i < blocks.size(); ++i) {
        for (int e = 0; e < QK_K; ++e) {
            const float want = element(blocks[i], e);
            const float got = y[i * QK_K + size_t(e)];
            if (std::memcmp(&want, &got, sizeof(float)) != 0 && ++mismatches <= 5) {
                ADD_FAILURE() << "block " << i << " element " << e << ": " << got << " != " << want;
            }
        }
    }
    EXPECT_EQ(mismatches, 0);
}

}  // namespace

TEST(QuantsK, DequantizeFollowsElementOrder) {
    constexpr size_t n = 64;
    std::vector<float> y(n * QK_K);
    {
        auto b = random_blocks<block_q2_K>(n, 1);
        for (auto & x : b) x.d = finite_fp16(x.d), x.dmin = finite_fp16(x.dmin);
        ggml_dequantize_row_q2_K(b.data(), y.data(), int64_t(y.size()));
        expect_elements(b, y, element_q2_K);
    }
    {
        auto b = random_blocks<block_q3_K>(n, 2);
        for (auto & x : b) x.d = finite_fp16(x.d);
        ggml_dequantize_row_q3_K(b.data(), y.data(), int64_t(y.size()));
        expect_elements(b, y, element_q3_K);
    }
    {
        auto b = random_blocks<block_q4_K>(n, 3);
        for (auto & x : b) x.d = finite_fp16(x.d), x.dmin = finite_fp16(x.dmin);
        ggml_dequantize_row_q4_K(b.data(), y.data(), int64_t(y.size()));
        expect_elements(b, y, element_q4_K);
    }
    {
        auto b = random_blocks<block_q5_K>(n, 4);
        for (auto & x : b) x.d = finite_fp16(x.d), x.dmin = finite_fp16(x.dmin);
        ggml_dequantize_row_q5_K(b.data(), y.data(), int64_t(y.size()));
        expect_elements(b, y, element_q5_K);
    }
    {
        auto b = random_blocks<block_q6_K>(n, 5);
        for (auto & x : b) x.d = finite_fp16(x.d);
        ggml_dequantize_row_q6_K(b.data(), y.data(), int64_t(y.size()));
        expect_elements(b, y, element_q6_K);
    }
}

// Hand-built blocks with known values: pins the bit positions independently of the per-element
// decoders above.
TEST(QuantsK, DequantizeHandBuiltBlocks) {
    float y[QK_K];
    {
        // Q3_K: scale 15 (code 47) for sub-block 5 only: low nibble in byte 5, high bits (0b10)
        // in bits 2..3 of byte 8 + 5 % 4 = 9. Element 80 (sub-block 5): qs[80 % 32 = 16],
        // bits 2 * (80 / 32) = 4..5 hold 3; hmask[16] bit 80 / 32 = 2 set -> level 3.
        block_q3_K b{};
        std::memset(b.scales, 0x00, sizeof b.scales);  // every other code 0 -> scale -32
        b.scales[5] = 47 & 0xF;
        b.scales[9] = uint8_t((47 >> 4) << 2);
        b.qs[16] = 3 << 4;
        b.hmask[16] = 1 << 2;
        b.d = ggml_fp32_to_fp16(0.5f);
        ggml_dequantize_row_q3_K(&b, y, QK_K);
        EXPECT_EQ(y[80], 0.5f * 15.0f * 3.0f);
        EXPECT_EQ(y[81], 0.5f * 15.0f * -4.0f);  // level 0, high bit clear: -4
        EXPECT_EQ(y[0], 0.5f * -32.0f * -4.0f);
    }
    {
        // Q6_K: element 200 = half 1, (200 % 128) = 72: high nibble of ql[64 + 8], bits 4..5
        // of qh[32 + 8]; level 63 - 32 = 31 with scale scales[12].
        block_q6_K b{};
        b.ql[72] = 0xF0;
        b.qh[40] = 0x30;
        b.scales[12] = -3;
        b.d = ggml_fp32_to_fp16(0.25f);
        ggml_dequantize_row_q6_K(&b, y, QK_K);
        EXPECT_EQ(y[200], 0.25f * -3.0f * 31.0f);
        EXPECT_EQ(y[201], 0.25f * -3.0f * -32.0f);  // same sub-block, level 0 - 32
        EXPECT_EQ(y[0], 0.0f);                     // scale 0
    }
    {
        // Q5_K: sub-block 6 (elements 192..223) reads scale code 9 and min code 5 from the
        // upper packing (byte 10: low nibble scale, high nibble min; bits 6..7 of bytes 2 and 6
        // zero); element 200: low nibble of qs[96 + 8] = 7, qh[8] bit 6 set -> level 23.
        block_q5_K b{};
        b.scales[10] = uint8_t(9 | (5 << 4));
        b.qs[104] = 7;
        b.qh[8] = 1 << 6;
        b.d = ggml_fp32_to_fp16(2.0f);
        b.dmin = ggml_fp32_to_fp16(1.0f);
        ggml_dequantize_row_q5_K(&b, y, QK_K);
        EXPECT_EQ(y[200], 2.0f * 9.0f * 23.0f - 5.0f);
        EXPECT_EQ(y[0], 0.0f);
    }
    {
        // Q2_K: elements 150 and 214 (half 1, position 22) share qs[32 + 22]: bits 0..1 for
        // 150 (level 2), bits 4..5 for 214 (level 1); scales[150 / 16 = 9], scales[13].
        block_q2_K b{};
        b.qs[54] = uint8_t(2 | (1 << 4));
        b.scales[9] = uint8_t(7 | (3 << 4));
        b.scales[13] = uint8_t(1 | (1 << 4));
        b.d = ggml_fp32_to_fp16(0.5f);
        b.dmin = ggml_fp32_to_fp16(0.25f);
        ggml_dequantize_row_q2_K(&b, y, QK_K);
        EXPECT_EQ(y[150], 0.5f * 7.0f * 2.0f - 0.25f * 3.0f);
        EXPECT_EQ(y[214], 0.5f * 1.0f * 1.0f - 0.25f * 1.0f);
        EXPECT_EQ(y[182], 0.0f);  // bits 2..3 of the same byte, scale and min 0
    }
}

TEST(QuantsK, ScalePackingRoundTrips) {
    std::mt19937 gen(7);
    for (int trial = 0; trial < 200; ++trial) {
        uint8_t sc[8], m[8], packed[12], sc2[8], m2[8];
        for (int j = 0; j < 8; ++j) sc[j] = uint8_t(gen() % 64), m[j] = uint8_t(gen() % 64);
        quants_k_pack_scale_min(sc, m, packed);
        quants_k_unpack_scale_min(packed, sc2, m2);
        for (int j = 0; j < 8; ++j) {
            ASSERT_EQ(sc2[j], sc[j]);
            ASSERT_EQ(m2[j], m[j]);
            int s_ref, m_ref;
            scale_min_k4(packed, j, &s_ref, &m_ref);
            ASSERT_EQ(s_ref, sc[j]);
            ASSERT_EQ(m_ref, m[j]);
        }
        int8_t s3[16], s3b[16];
        uint8_t p3[12];
        for (int j = 0; j < 16; ++j) s3[j] = int8_t(int(gen() % 64) - 32);
        quants_k_pack_q3_scales(s3, p3);
        quants_k_unpack_q3_scales(p3, s3b);
        block_q3_K b{};
        std::memcpy(b.scales, p3, 12);
        for (int j = 0; j < 16; ++j) {
            ASSERT_EQ(s3b[j], s3[j]);
            ASSERT_EQ(q3_scale(b, j), s3[j]);
        }
    }
}

TEST(QuantsK, RoundClampIsNearestEvenAndSafe) {
    EXPECT_EQ(quants_k_round_clamp(2.5f, -10, 10), 2);
    EXPECT_EQ(quants_k_round_clamp(3.5f, -10, 10), 4);
    EXPECT_EQ(quants_k_round_clamp(-2.5f, -10, 10), -2);
    EXPECT_EQ(quants_k_round_clamp(-2.6f, -10, 10), -3);
    EXPECT_EQ(quants_k_round_clamp(1e30f, -10, 10), 10);
    EXPECT_EQ(quants_k_round_clamp(-1e30f, -10, 10), -10);
    EXPECT_EQ(quants_k_round_clamp(std::numeric_limits<float>::quiet_NaN(), -3, 4), -3);
    EXPECT_EQ(quants_k_round_clamp(std::numeric_limits<float>::infinity(), 0, 63), 63);
}

// ---------------------------------------------------------------- quantization quality

TEST(QuantsK, RoundTripErrorWithinBounds) {
    constexpr size_t n = 16 * QK_K;
    for (ggml_type t : k_weight_types) {
        for (dist d : k_dists) {
            SCOPED_TRACE(std::string(name_of(t)) + " " + dist_name(d));
            const std::vector<float> x = make_values(d, n, 100 + uint32_t(d));
            const std::vector<float> y = round_trip(t, x, quantizer::quality);
            ASSERT_TRUE(all_finite(y));
            const double rel = std::sqrt(sum_sq_diff(x, y) / double(n)) / rms(x);
            EXPECT_LE(rel, relative_rmse_bound(t, d));
            EXPECT_GT(rel, 0.0);  // not a copy: these formats cannot hold arbitrary floats
        }
    }
}

// The quality quantizer never does worse than the reference one, and both beat a plain
// min/max quantizer with levels rounded to nearest (what a format without a search gets).
TEST(QuantsK, QualityQuantizerBeatsReference) {
    constexpr size_t n = 32 * QK_K;
    for (ggml_type t : k_weight_types) {
        double err_quality = 0, err_ref = 0;
        for (dist d : k_dists) {
            const std::vector<float> x = make_values(d, n, 200 + uint32_t(d));
            const double eq = sum_sq_diff(x, round_trip(t, x, quantizer::quality));
            const double er = sum_sq_diff(x, round_trip(t, x, quantizer::ref));
            EXPECT_LE(eq, er) << name_of(t) << " " << dist_name(d);
            err_quality += eq;
            err_ref += er;
        }
        // Over all distributions the extra search must buy a visible improvement (measured:
        // Q2_K 0.92, Q3_K 0.99, Q4_K 0.95, Q5_K 0.91, Q6_K 0.97 of the reference's squared
        // error; Q3_K's 8 levels leave little room once each sub-block has its best scale).
        double bound = 0;
        switch (t) {
            case GGML_TYPE_Q2_K: bound = 0.95; break;
            case GGML_TYPE_Q3_K: bound = 0.997; break;
            case GGML_TYPE_Q4_K: bound = 0.97; break;
            case GGML_TYPE_Q5_K: bound = 0.95; break;
            default: bound = 0.985; break;
        }
        EXPECT_LT(err_quality, bound * err_ref) << name_of(t);
        std::printf("  %s: quality / reference squared error %.4f\n", name_of(t), err_quality / err_ref);
    }
}

namespace {

// Relative RMSE of a plain quantizer: per sub-block of 16 / 32 values, levels from min (or
// -amax) to max in equal steps, scales kept as exact floats (no 6-bit codes).
double plain_quantizer_error(ggml_type t, const std::vector<float> & x) {
    const bool symmetric = t == GGML_TYPE_Q3_K || t == GGML_TYPE_Q6_K;
    const int sub = (t == GGML_TYPE_Q4_K || t == GGML_TYPE_Q5_K) ? 32 : 16;
    const int levels = t == GGML_TYPE_Q2_K   ? 4
                       : t == GGML_TYPE_Q3_K ? 8
                       : t == GGML_TYPE_Q4_K ? 16
                       : t == GGML_TYPE_Q5_K ? 32
                                             : 64;
    double err = 0;
    for (size_t s = 0; s < x.size(); s += size_t(sub)) {
        float lo = x[s], hi = x[s];
        for (int i = 1; i < sub; ++i) lo = std::fmin(lo, x[s + size_t(i)]), hi = std::fmax(hi, x[s + size_t(i)]);
        if (symmetric) {
            hi = std::fmax(std::fabs(lo), std::fabs(hi));
            lo = -hi;
        } else {
            lo = std::fmin(lo, 0.0f);
        }
        const double step = (double(hi) - lo) / (levels - 1);
        for (int i = 0; i < sub; ++i) {
            const double v = x[s + size_t(i)];
            const double q = step > 0 ? std::nearbyint((v - lo) / step) : 0;
            const double e = lo + q * step - v;
            err += e * e;
        }
    }
    return err;
}

}  // namespace

TEST(QuantsK, ReferenceQuantizerBeatsPlainRounding) {
    constexpr size_t n = 32 * QK_K;
    for (ggml_type t : k_weight_types) {
        for (dist d : {dist::gaussian, dist::heavy_tail}) {
            const std::vector<float> x = make_values(d, n, 300 + uint32_t(d));
            const double er = sum_sq_diff(x, round_trip(t, x, quantizer::ref));
            EXPECT_LT(er, plain_quantizer_error(t, x)) << name_of(t) << " " << dist_name(d);
        }
    }
}

// Importance weights: the weighted error the quantizer sees must not grow when it is told
// about the weights.
TEST(QuantsK, ImportanceMatrixLowersWeightedError) {
    constexpr int64_t n = 8 * QK_K;
    std::vector<float> imatrix(n);
    for (int64_t i = 0; i < n; ++i) imatrix[size_t(i)] = (i % 16) < 4 ? 50.0f : 1.0f;
    const std::vector<float> x = make_values(dist::gaussian, size_t(n), 400);
    for (ggml_type t : k_weight_types) {
        const std::vector<float> plain = round_trip(t, x, quantizer::quality);
        const std::vector<float> weighted = round_trip(t, x, quantizer::quality, imatrix.data());
        double e_plain = 0, e_weighted = 0;
        for (size_t i = 0; i < x.size(); ++i) {
            e_plain += imatrix[i] * (double(x[i]) - plain[i]) * (double(x[i]) - plain[i]);
            e_weighted += imatrix[i] * (double(x[i]) - weighted[i]) * (double(x[i]) - weighted[i]);
        }
        EXPECT_LT(e_weighted, e_plain) << name_of(t);
    }
}

TEST(QuantsK, QuantizeRowsReturnsBytesAndRejectsPartialBlocks) {
    const std::vector<float> x = make_values(dist::gaussian, 3 * 2 * QK_K, 500);
    for (ggml_type t : k_weight_types) {
        std::vector<uint8_t> q(6 * block_bytes(t), 0xAB);
        EXPECT_EQ(quantize_quality(t, x.data(), q.data(), 3, 2 * QK_K, nullptr), 6 * block_bytes(t)) << name_of(t);
        // Row by row the same as all rows at once.
        std::vector<uint8_t> row(2 * block_bytes(t));
        EXPECT_EQ(quantize_quality(t, x.data() + 2 * QK_K, row.data(), 1, 2 * QK_K, nullptr), row.size());
        EXPECT_EQ(std::memcmp(row.data(), q.data() + row.size(), row.size()), 0) << name_of(t);
        std::vector<uint8_t> untouched(q);
        EXPECT_EQ(quantize_quality(t, x.data(), q.data(), 1, QK_K + 32, nullptr), 0u) << name_of(t);
        EXPECT_EQ(q, untouched);
    }
}

// ---------------------------------------------------------------- edge inputs

TEST(QuantsK, ZeroAndConstantBlocks) {
    for (ggml_type t : k_weight_types) {
        for (float c : {0.0f, 1.0f, -1.0f, 0.37f, -1234.5f}) {
            SCOPED_TRACE(std::string(name_of(t)) + " constant " + std::to_string(c));
            const std::vector<float> x(2 * QK_K, c);
            for (quantizer which : {quantizer::ref, quantizer::quality}) {
                const std::vector<float> y = round_trip(t, x, which);
                ASSERT_TRUE(all_finite(y));
                for (float v : y) {
                    if (c == 0.0f) {
                        ASSERT_EQ(v, 0.0f);
                    } else {
                        // One F16 scale and a small integer code: within 1% of the constant.
                        ASSERT_NEAR(v, c, 0.01 * std::fabs(c));
                    }
                }
            }
        }
    }
}

TEST(QuantsK, HugeAndTinyMagnitudes) {
    for (ggml_type t : k_weight_types) {
        // Wide but representable: relative error as for unit values.
        for (float scale : {1e3f, 1e-3f}) {
            SCOPED_TRACE(std::string(name_of(t)) + " scale " + std::to_string(scale));
            const std::vector<float> x = make_values(dist::gaussian, 4 * QK_K, 600, scale);
            const std::vector<float> y = round_trip(t, x, quantizer::quality);
            ASSERT_TRUE(all_finite(y));
            const double rel = std::sqrt(sum_sq_diff(x, y) / double(x.size())) / rms(x);
            EXPECT_LE(rel, relative_rmse_bound(t, dist::gaussian));
        }
        // Beyond what an F16 super-block scale reaches: saturated or flushed, never inf / NaN.
        for (float scale : {1e30f, 1e-30f, 3e38f}) {
            SCOPED_TRACE(std::string(name_of(t)) + " scale " + std::to_string(scale));
            const std::vector<float> x = make_values(dist::gaussian, 2 * QK_K, 700, scale);
            for (quantizer which : {quantizer::ref, quantizer::quality}) {
                const std::vector<float> y = round_trip(t, x, which);
                ASSERT_TRUE(all_finite(y));
                if (scale < 1.0f) {
                    for (size_t i = 0; i < y.size(); ++i) ASSERT_LE(std::fabs(y[i]), 1e-6f);
                }
            }
        }
    }
}

TEST(QuantsK, NonFiniteInputsGiveFiniteBlocks) {
    std::vector<float> x = make_values(dist::gaussian, 2 * QK_K, 800);
    x[0] = std::numeric_limits<float>::quiet_NaN();
    x[3] = std::numeric_limits<float>::quiet_NaN();
    x[100] = std::numeric_limits<float>::infinity();
    x[300] = -std::numeric_limits<float>::infinity();
    for (ggml_type t : k_weight_types) {
        for (quantizer which : {quantizer::ref, quantizer::quality}) {
            EXPECT_TRUE(all_finite(round_trip(t, x, which))) << name_of(t);
        }
    }
    std::vector<block_q8_K> q8(2);
    std::vector<float> y(x.size());
    ggml_quantize_row_q8_K_ref(x.data(), q8.data(), int64_t(x.size()));
    ggml_dequantize_row_q8_K(q8.data(), y.data(), int64_t(y.size()));
    EXPECT_TRUE(all_finite(y));
}

// ---------------------------------------------------------------- Q8_K

TEST(QuantsK, Q8KQuantizesActivations) {
    for (dist d : k_dists) {
        SCOPED_TRACE(dist_name(d));
        const std::vector<float> x = make_values(d, 4 * QK_K, 900 + uint32_t(d));
        std::vector<block_q8_K> q(4);
        ggml_quantize_row_q8_K_ref(x.data(), q.data(), int64_t(x.size()));
        std::vector<float> y(x.size());
        ggml_dequantize_row_q8_K(q.data(), y.data(), int64_t(y.size()));
        for (size_t b = 0; b < q.size(); ++b) {
            float amax = 0, max = 0;
            size_t at = 0;
            for (size_t i = 0; i < QK_K; ++i) {
                if (std::fabs(x[b * QK_K + i]) > amax) amax = std::fabs(x[b * QK_K + i]), max = x[b * QK_K + i], at = i;
            }
            EXPECT_FLOAT_EQ(q[b].d, -max / 128.0f);
            EXPECT_EQ(q[b].qs[at], -128);  // the largest magnitude takes the end of the range
            for (int g = 0; g < QK_K / 16; ++g) {
                int sum = 0;
                for (int l = 0; l < 16; ++l) sum += q[b].qs[16 * g + l];
                EXPECT_EQ(q[b].bsums[g], sum);
            }
            for (size_t i = 0; i < QK_K; ++i) {
                const size_t k = b * QK_K + i;
                // Round to nearest: half a step, except where the opposite end clamps at 127.
                const double tol = std::fabs(q[b].d) * (q[b].qs[i] == 127 ? 1.0001 : 0.5001);
                ASSERT_NEAR(y[k], x[k], tol);
                ASSERT_EQ(y[k], q[b].d * float(q[b].qs[i]));
            }
        }
    }
    std::vector<float> zeros(QK_K, 0.0f), y(QK_K, 1.0f);
    block_q8_K z;
    ggml_quantize_row_q8_K_ref(zeros.data(), &z, QK_K);
    EXPECT_EQ(z.d, 0.0f);
    ggml_dequantize_row_q8_K(&z, y.data(), QK_K);
    for (float v : y) EXPECT_EQ(v, 0.0f);
}

// ---------------------------------------------------------------- against shipped files

// Per-tensor RMSE against the F32 source: ours must be no worse than that of the files
// quantized by an established quantizer (ours is lower, so any regression shows).
TEST(QuantsK, QualityMatchesShippedFiles) {
    INFERD_REQUIRE_TESTDATA(dir);
    gguf_open_options opts;
    opts.mode = gguf_load_mode::read;
    std::unique_ptr<gguf_file> src;
    gguf_result r = gguf_file::open(dir + "/models/tiny-llama-f32.gguf", opts, &src);
    ASSERT_TRUE(r) << r.message;
    struct shipped_case {
        const char * file;
        const char * tensor;
        ggml_type type;
    };
    const shipped_case cases[] = {
        {"tiny-llama-q4_k_m.gguf", "blk.0.attn_q.weight", GGML_TYPE_Q4_K},
        {"tiny-llama-q4_k_m.gguf", "blk.1.ffn_up.weight", GGML_TYPE_Q4_K},
        {"tiny-llama-q4_k_m.gguf", "blk.3.ffn_down.weight", GGML_TYPE_Q6_K},
        {"tiny-llama-q6_k.gguf", "blk.0.attn_k.weight", GGML_TYPE_Q6_K},
        {"tiny-llama-q6_k.gguf", "blk.2.ffn_gate.weight", GGML_TYPE_Q6_K},
    };
    for (const shipped_case & c : cases) {
        SCOPED_TRACE(std::string(c.file) + " " + c.tensor);
        std::unique_ptr<gguf_file> f;
        r = gguf_file::open(dir + "/models/" + c.file, opts, &f);
        ASSERT_TRUE(r) << r.message;
        const gguf_tensor_info * tq = f->find_tensor(c.tensor);
        const gguf_tensor_info * ts = src->find_tensor(c.tensor);
        ASSERT_NE(tq, nullptr);
        ASSERT_NE(ts, nullptr);
        ASSERT_EQ(tq->type, c.type);
        ASSERT_EQ(ts->type, GGML_TYPE_F32);
        ASSERT_EQ(tq->n_elements, ts->n_elements);
        ASSERT_EQ(tq->ne[0] % QK_K, 0);
        const size_t n = size_t(ts->n_elements);
        std::vector<float> x(n), shipped(n), ours(n);
        std::memcpy(x.data(), src->tensor_data(*ts), n * sizeof(float));
        dequantize(c.type, f->tensor_data(*tq), shipped.data(), int64_t(n));
        std::vector<uint8_t> q(tq->size);
        ASSERT_EQ(quantize_quality(c.type, x.data(), q.data(), tq->n_rows(), tq->ne[0], nullptr), q.size());
        dequantize(c.type, q.data(), ours.data(), int64_t(n));
        const double ratio = std::sqrt(sum_sq_diff(x, ours) / sum_sq_diff(x, shipped));
        std::printf("  %s %s (%s): RMSE ratio ours / shipped = %.4f\n", c.file, c.tensor, name_of(c.type), ratio);
        EXPECT_LE(ratio, 1.0);
    }
}
