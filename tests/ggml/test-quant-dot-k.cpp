// Tests of the K-quant dot kernels (Q2_K … Q6_K x Q8_K) and the Q8_K activation quantizers of
// ggml/cpu/quant-dot.h: every kernel of every path this CPU supports against a double-precision
// dot product of the decoded blocks (decoded here, and also through the library's
// dequantizers), the SIMD kernels against the scalar ones, odd block counts, nr / nc of
// 1, 2, 3, 5, 17 with padded strides (nothing written outside the result), random and extreme
// codes and scales; the SIMD quantizers against ggml_quantize_row_q8_K_ref byte for byte.
#include "cpu/quant-dot.h"

#include "ggml/quants.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace {

using dot_fn = void (*)(int64_t, const void *, size_t, int64_t, const void *, size_t, int64_t, float *, int64_t);
using quantize_fn = void (*)(const float *, void *, int64_t);

bool avx2_supported() {
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c");
}
bool avx512_supported() {
    return avx2_supported() && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
           __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
           __builtin_cpu_supports("avx512vnni");
}

// ---- the test's own decoding: element e of a block as w[e] - z[e] (z: the min term) ----

double f16(ggml_fp16_t h) { return double(ggml_fp16_to_fp32(h)); }

void decode_q2_K(const void * p, double * w, double * z) {
    const block_q2_K & b = *static_cast<const block_q2_K *>(p);
    for (int e = 0; e < QK_K; ++e) {
        const int q = (b.qs[32 * (e / 128) + e % 32] >> (2 * ((e / 32) % 4))) & 3;
        const int sc = b.scales[e / 16] & 15, m = b.scales[e / 16] >> 4;
        w[e] = f16(b.d) * sc * q;
        z[e] = f16(b.dmin) * m;
    }
}

// Q3_K scale j: low 4 bits in nibble j / 8 of byte j % 8, high 2 bits at 2 (j / 4) in byte 8 + j % 4.
int q3_scale(const uint8_t * s, int j) {
    const int lo = (s[j % 8] >> (4 * (j / 8))) & 15;
    const int hi = (s[8 + j % 4] >> (2 * (j / 4))) & 3;
    return (lo | (hi << 4)) - 32;
}

void decode_q3_K(const void * p, double * w, double * z) {
    const block_q3_K & b = *static_cast<const block_q3_K *>(p);
    for (int e = 0; e < QK_K; ++e) {
        const int lo = (b.qs[32 * (e / 128) + e % 32] >> (2 * ((e / 32) % 4))) & 3;
        const int hbit = (b.hmask[e % 32] >> (e / 32)) & 1;
        w[e] = f16(b.d) * q3_scale(b.scales, e / 16) * (lo + 4 * hbit - 4);
        z[e] = 0.0;
    }
}

// Q4_K / Q5_K sub-block j (0..7): 6-bit scale and min.
void k4_scale_min(const uint8_t * s, int j, int & sc, int & m) {
    if (j < 4) {
        sc = s[j] & 63;
        m = s[j + 4] & 63;
    } else {
        sc = (s[j + 4] & 15) | ((s[j - 4] >> 6) << 4);
        m = (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
    }
}

void decode_q4_K(const void * p, double * w, double * z) {
    const block_q4_K & b = *static_cast<const block_q4_K *>(p);
    for (int e = 0; e < QK_K; ++e) {
        int sc, m;
        k4_scale_min(b.scales, e / 32, sc, m);
        const int q = (b.qs[32 * (e / 64) + e % 32] >> (4 * ((e / 32) % 2))) & 15;
        w[e] = f16(b.d) * sc * q;
        z[e] = f16(b.dmin) * m;
    }
}

void decode_q5_K(const void * p, double * w, double * z) {
    const block_q5_K & b = *static_cast<const block_q5_K *>(p);
    for (int e = 0; e < QK_K; ++e) {
        int sc, m;
        k4_scale_min(b.scales, e / 32, sc, m);
        const int q = ((b.qs[32 * (e / 64) + e % 32] >> (4 * ((e / 32) % 2))) & 15) + 16 * ((b.qh[e % 32] >> (e / 32)) & 1);
        w[e] = f16(b.d) * sc * q;
        z[e] = f16(b.dmin) * m;
    }
}

void decode_q6_K(const void * p, double * w, double * z) {
    const block_q6_K & b = *static_cast<const block_q6_K *>(p);
    for (int e = 0; e < QK_K; ++e) {
        const int lo = (b.ql[64 * (e / 128) + e % 64] >> (4 * ((e / 64) % 2))) & 15;
        const int hi = (b.qh[32 * (e / 128) + e % 32] >> (2 * ((e / 32) % 4))) & 3;
        w[e] = f16(b.d) * b.scales[e / 16] * ((lo | (hi << 4)) - 32);
        z[e] = 0.0;
    }
}

// ---- random blocks ----

// A random F16 factor: mostly moderate, sometimes extreme (largest finite, subnormal, zero).
ggml_fp16_t random_factor(std::mt19937 & rng) {
    const int pick = int(rng() % 16);
    const float sign = (rng() & 1) ? -1.0f : 1.0f;
    if (pick == 0) return ggml_fp32_to_fp16(sign * 65504.0f);
    if (pick == 1) return ggml_fp16_t(0x0001 | ((rng() & 1) << 15));  // smallest subnormal
    if (pick == 2) return 0;
    std::uniform_real_distribution<float> u(1e-3f, 1.0f);
    return ggml_fp32_to_fp16(sign * u(rng));
}

// Pattern 0: random bits; 1: every bit set (largest codes and scales); 2: every bit clear;
// 3: random bits with scale bytes all-ones or all-zeros. The F16 factors are random_factor.
template <class B>
void random_block(std::mt19937 & rng, int pattern, void * dst) {
    B b;
    uint8_t * bytes = reinterpret_cast<uint8_t *>(&b);
    for (size_t i = 0; i < sizeof b; ++i) bytes[i] = pattern == 1 ? 0xff : pattern == 2 ? 0 : uint8_t(rng());
    if (pattern == 3) std::memset(b.scales, (rng() & 1) ? 0xff : 0x00, sizeof b.scales);
    b.d = random_factor(rng);
    if constexpr (requires { b.dmin; }) b.dmin = random_factor(rng);
    std::memcpy(dst, &b, sizeof b);
}

// A Q8_K block: codes random, all -128, all 127 or alternating extremes; bsums consistent.
block_q8_K random_q8_K(std::mt19937 & rng) {
    block_q8_K y;
    const int pattern = int(rng() % 8);
    for (int i = 0; i < QK_K; ++i) {
        int v = int(rng() % 256) - 128;
        if (pattern == 1) v = -128;
        if (pattern == 2) v = 127;
        if (pattern == 3) v = (i % 2) ? 127 : -128;
        y.qs[i] = int8_t(v);
    }
    for (int g = 0; g < QK_K / 16; ++g) {
        int s = 0;
        for (int l = 0; l < 16; ++l) s += y.qs[16 * g + l];
        y.bsums[g] = int16_t(s);
    }
    std::uniform_real_distribution<float> u(1e-3f, 1.0f);
    y.d = ((rng() & 1) ? -1.0f : 1.0f) * u(rng);
    return y;
}

// ---- the types ----

struct kq_type {
    const char * name;
    size_t block_bytes;
    void (*random)(std::mt19937 &, int, void *);
    void (*decode)(const void *, double *, double *);
    void (*dequant)(const void *, float *);  // the library's dequantizer, one block
    dot_fn kernels[3];                        // scalar, avx2, avx512
};

template <class B, void (*F)(const B *, float *, int64_t)>
void dequant_block(const void * p, float * out) {
    F(static_cast<const B *>(p), out, QK_K);
}

const kq_type kq_types[] = {
    {"q2_K", sizeof(block_q2_K), random_block<block_q2_K>, decode_q2_K,
     dequant_block<block_q2_K, ggml_dequantize_row_q2_K>,
     {ggml_dot_q2_K_q8_K_scalar, ggml_dot_q2_K_q8_K_avx2, ggml_dot_q2_K_q8_K_avx512}},
    {"q3_K", sizeof(block_q3_K), random_block<block_q3_K>, decode_q3_K,
     dequant_block<block_q3_K, ggml_dequantize_row_q3_K>,
     {ggml_dot_q3_K_q8_K_scalar, ggml_dot_q3_K_q8_K_avx2, ggml_dot_q3_K_q8_K_avx512}},
    {"q4_K", sizeof(block_q4_K), random_block<block_q4_K>, decode_q4_K,
     dequant_block<block_q4_K, ggml_dequantize_row_q4_K>,
     {ggml_dot_q4_K_q8_K_scalar, ggml_dot_q4_K_q8_K_avx2, ggml_dot_q4_K_q8_K_avx512}},
    {"q5_K", sizeof(block_q5_K), random_block<block_q5_K>, decode_q5_K,
     dequant_block<block_q5_K, ggml_dequantize_row_q5_K>,
     {ggml_dot_q5_K_q8_K_scalar, ggml_dot_q5_K_q8_K_avx2, ggml_dot_q5_K_q8_K_avx512}},
    {"q6_K", sizeof(block_q6_K), random_block<block_q6_K>, decode_q6_K,
     dequant_block<block_q6_K, ggml_dequantize_row_q6_K>,
     {ggml_dot_q6_K_q8_K_scalar, ggml_dot_q6_K_q8_K_avx2, ggml_dot_q6_K_q8_K_avx512}},
};

const char * isa_names[3] = {"scalar", "avx2", "avx512"};
bool isa_supported(int isa) { return isa == 0 || (isa == 1 ? avx2_supported() : avx512_supported()); }

// ---- dot-product problems ----

// nr rows of nb random weight blocks (row stride padded by one block) against nc columns of
// Q8_K blocks (padded likewise); the exact results and a magnitude for the rounding bound.
struct kq_problem {
    int64_t nb = 0, nr = 0, nc = 0, ldy = 0;
    size_t lda = 0, ldb = 0;
    std::vector<uint8_t> a;
    std::vector<block_q8_K> b;
    std::vector<double> ref, ref_lib, mag;  // [c * nr + r]
};

kq_problem make_problem(const kq_type & t, int64_t nb, int64_t nr, int64_t nc, uint32_t seed) {
    std::mt19937 rng(seed);
    kq_problem p;
    p.nb = nb;
    p.nr = nr;
    p.nc = nc;
    p.ldy = nr + 3;
    p.lda = size_t(nb + 1) * t.block_bytes;
    p.ldb = size_t(nb + 1) * sizeof(block_q8_K);
    p.a.resize(p.lda * size_t(nr));
    for (size_t o = 0; o < p.a.size(); o += t.block_bytes) t.random(rng, int(rng() % 4), p.a.data() + o);
    p.b.resize(size_t(nb + 1) * size_t(nc));
    for (block_q8_K & y : p.b) y = random_q8_K(rng);
    p.ref.assign(size_t(nr * nc), 0.0);
    p.ref_lib = p.ref;
    p.mag = p.ref;
    double w[QK_K], z[QK_K];
    float deq[QK_K];
    for (int64_t r = 0; r < nr; ++r) {
        for (int64_t i = 0; i < nb; ++i) {
            const uint8_t * blk = p.a.data() + size_t(r) * p.lda + size_t(i) * t.block_bytes;
            t.decode(blk, w, z);
            t.dequant(blk, deq);
            for (int64_t c = 0; c < nc; ++c) {
                const block_q8_K & y = p.b[size_t(c * (nb + 1) + i)];
                double s = 0, sl = 0, m = 0;
                for (int e = 0; e < QK_K; ++e) {
                    const double ye = double(y.d) * y.qs[e];
                    s += (w[e] - z[e]) * ye;
                    sl += double(deq[e]) * ye;
                    m += (std::fabs(w[e]) + std::fabs(z[e])) * std::fabs(ye);
                }
                p.ref[size_t(c * nr + r)] += s;
                p.ref_lib[size_t(c * nr + r)] += sl;
                p.mag[size_t(c * nr + r)] += m;
            }
        }
    }
    return p;
}

constexpr uint32_t sentinel_bits = 0x7fc0dead;  // a NaN no kernel produces

float sentinel() {
    float f;
    std::memcpy(&f, &sentinel_bits, sizeof f);
    return f;
}

bool is_sentinel(float f) {
    uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    return u == sentinel_bits;
}

// Runs a kernel on a problem: the results [c * nr + r]; fails when anything outside them is written.
std::vector<float> run_kernel(dot_fn fn, const kq_problem & p) {
    std::vector<float> y(size_t(p.ldy * p.nc + 5), sentinel());
    fn(p.nb * QK_K, p.a.data(), p.lda, p.nr, p.b.data(), p.ldb, p.nc, y.data(), p.ldy);
    std::vector<float> out(size_t(p.nr * p.nc));
    for (int64_t c = 0; c < p.nc; ++c) {
        for (int64_t r = 0; r < p.ldy; ++r) {
            const float v = y[size_t(c * p.ldy + r)];
            if (r < p.nr) {
                out[size_t(c * p.nr + r)] = v;
            } else {
                EXPECT_TRUE(is_sentinel(v)) << "written outside the result: column " << c << " row " << r;
            }
        }
    }
    for (size_t i = size_t(p.ldy * p.nc); i < y.size(); ++i) EXPECT_TRUE(is_sentinel(y[i])) << "written past the end";
    return out;
}

// Float rounding of the kernels (and of the dequantizer) relative to the magnitude of the terms.
constexpr double rel_tol = 1e-5;

class quant_dot_k : public ::testing::TestWithParam<int> {};

TEST_P(quant_dot_k, kernels_match_reference) {
    const kq_type & t = kq_types[GetParam()];
    const int64_t sizes[] = {1, 2, 3, 5, 17};
    uint32_t seed = 1234u + uint32_t(GetParam()) * 1000u;
    for (int64_t nb : {1, 3, 5}) {
        for (int64_t nr : sizes) {
            for (int64_t nc : sizes) {
                const kq_problem p = make_problem(t, nb, nr, nc, seed++);
                const std::vector<float> scalar = run_kernel(t.kernels[0], p);
                for (int isa = 0; isa < 3; ++isa) {
                    if (!isa_supported(isa)) continue;
                    const std::vector<float> got = isa == 0 ? scalar : run_kernel(t.kernels[isa], p);
                    for (size_t i = 0; i < got.size(); ++i) {
                        const double tol = rel_tol * p.mag[i] + 1e-30;
                        SCOPED_TRACE(::testing::Message() << t.name << " " << isa_names[isa] << " nb " << nb
                                                          << " nr " << nr << " nc " << nc << " result " << i);
                        ASSERT_NEAR(got[i], p.ref[i], tol);
                        ASSERT_NEAR(got[i], p.ref_lib[i], tol);
                        ASSERT_NEAR(got[i], scalar[i], tol);
                    }
                }
            }
        }
    }
}

// Enough rows that the tiled path (nc > 1) works through several row chunks (a chunk holds
// 192 KiB of weights in the SIMD kernels), with a partial column tile at the end.
TEST_P(quant_dot_k, many_rows_several_chunks) {
    const kq_type & t = kq_types[GetParam()];
    const kq_problem p = make_problem(t, 9, 530, 6, 777u + uint32_t(GetParam()));
    ASSERT_GT(p.nb * int64_t(t.block_bytes) * p.nr, 2 * 192 * 1024);
    const std::vector<float> scalar = run_kernel(t.kernels[0], p);
    for (int isa = 0; isa < 3; ++isa) {
        if (!isa_supported(isa)) continue;
        const std::vector<float> got = isa == 0 ? scalar : run_kernel(t.kernels[isa], p);
        for (size_t i = 0; i < got.size(); ++i) {
            const double tol = rel_tol * p.mag[i] + 1e-30;
            ASSERT_NEAR(got[i], p.ref[i], tol) << t.name << " " << isa_names[isa] << " result " << i;
            ASSERT_NEAR(got[i], scalar[i], tol) << t.name << " " << isa_names[isa] << " result " << i;
        }
    }
}

// From 9 columns on, the AVX-512 kernels unpack 16 rows at a time into an interleaved copy and
// run 16 x 8 register tiles: every column remainder (0 … 7) and a row remainder.
TEST_P(quant_dot_k, interleaved_row_groups_every_column_remainder) {
    const kq_type & t = kq_types[GetParam()];
    uint32_t seed = 4242u + uint32_t(GetParam()) * 100u;
    for (int64_t nc = 9; nc <= 17; ++nc) {
        const kq_problem p = make_problem(t, 2, 35, nc, seed++);
        const std::vector<float> scalar = run_kernel(t.kernels[0], p);
        for (int isa = 1; isa < 3; ++isa) {
            if (!isa_supported(isa)) continue;
            const std::vector<float> got = run_kernel(t.kernels[isa], p);
            for (size_t i = 0; i < got.size(); ++i) {
                const double tol = rel_tol * p.mag[i] + 1e-30;
                ASSERT_NEAR(got[i], p.ref[i], tol) << t.name << " " << isa_names[isa] << " nc " << nc << " result " << i;
                ASSERT_NEAR(got[i], scalar[i], tol) << t.name << " " << isa_names[isa] << " nc " << nc << " result " << i;
            }
        }
    }
}

TEST_P(quant_dot_k, zero_length_gives_zeros) {
    const kq_type & t = kq_types[GetParam()];
    const block_q8_K y{};
    const uint8_t a[8] = {};
    for (int isa = 0; isa < 3; ++isa) {
        if (!isa_supported(isa)) continue;
        float out[6];
        for (float & v : out) v = sentinel();
        t.kernels[isa](0, a, 0, 3, &y, 0, 2, out, 3);
        for (float v : out) EXPECT_EQ(v, 0.0f) << t.name << " " << isa_names[isa];
    }
}

// Activations quantized by each path's quantizer and dotted by its kernel: within the rounding
// of Q8_K (at most d_y per element, clamping included) of the float dot product.
TEST_P(quant_dot_k, quantized_activations_end_to_end) {
    const kq_type & t = kq_types[GetParam()];
    const quantize_fn quantizers[3] = {
        [](const float * x, void * y, int64_t k) { ggml_quantize_row_q8_K_ref(x, static_cast<block_q8_K *>(y), k); },
        ggml_quantize_row_q8_K_avx2, ggml_quantize_row_q8_K_avx512};
    std::mt19937 rng(99u + uint32_t(GetParam()));
    const int64_t nb = 4, nr = 5, k = nb * QK_K;
    std::vector<uint8_t> a(size_t(nb * nr) * t.block_bytes);
    for (size_t o = 0; o < a.size(); o += t.block_bytes) t.random(rng, 0, a.data() + o);
    std::normal_distribution<float> nd(0.0f, 1.0f);
    std::vector<float> x(static_cast<size_t>(k));
    for (float & v : x) v = nd(rng);
    for (int isa = 0; isa < 3; ++isa) {
        if (!isa_supported(isa)) continue;
        std::vector<block_q8_K> yq(static_cast<size_t>(nb));
        quantizers[isa](x.data(), yq.data(), k);
        std::vector<float> out(static_cast<size_t>(nr));
        t.kernels[isa](k, a.data(), size_t(nb) * t.block_bytes, nr, yq.data(), 0, 1, out.data(), 1);
        for (int64_t r = 0; r < nr; ++r) {
            double exact = 0, bound = 0;
            for (int64_t i = 0; i < nb; ++i) {
                const uint8_t * blk = a.data() + size_t(r * nb + i) * t.block_bytes;
                float deq[QK_K];
                double w[QK_K], z[QK_K];
                t.dequant(blk, deq);
                t.decode(blk, w, z);
                for (int e = 0; e < QK_K; ++e) {
                    const double xe = x[size_t(i * QK_K + e)];
                    exact += double(deq[e]) * xe;
                    bound += (std::fabs(w[e]) + std::fabs(z[e])) * (std::fabs(double(yq[size_t(i)].d)) + rel_tol * std::fabs(xe));
                }
            }
            EXPECT_NEAR(out[size_t(r)], exact, bound) << t.name << " " << isa_names[isa] << " row " << r;
        }
    }
}

INSTANTIATE_TEST_SUITE_P(types, quant_dot_k, ::testing::Range(0, int(std::size(kq_types))),
                         [](const ::testing::TestParamInfo<int> & info) { return std::string(kq_types[info.param].name); });

// ---- the Q8_K activation quantizers ----

// Rows that exercise the reference's rules: ties of the rounding, the first of equal
// magnitudes deciding the sign, zeros, NaN, infinities, a maximum too small for iscale.
std::vector<float> q8_K_test_row(std::mt19937 & rng, int kind) {
    std::vector<float> x(QK_K);
    std::normal_distribution<float> nd(0.0f, 1.0f);
    for (float & v : x) v = nd(rng) * (kind == 1 ? 1e-3f : 3.0f);
    switch (kind) {
        case 2:  // exact ties: max -128 maps iscale to 1, halves everywhere
            for (int i = 0; i < QK_K; ++i) x[size_t(i)] = float(i % 64) * 0.5f - 16.0f;
            x[7] = -128.0f;
            break;
        case 3:  // equal magnitudes, positive first
            x[10] = 5.0f;
            x[20] = -5.0f;
            for (float & v : x) v = std::fmod(v, 4.0f);
            x[10] = 5.0f;
            x[20] = -5.0f;
            break;
        case 4:  // equal magnitudes, negative first
            for (float & v : x) v = std::fmod(v, 4.0f);
            x[30] = -5.0f;
            x[200] = 5.0f;
            break;
        case 5: std::fill(x.begin(), x.end(), 0.0f); break;
        case 6: x[17] = std::numeric_limits<float>::quiet_NaN(); break;
        case 7: x[99] = -std::numeric_limits<float>::infinity(); break;
        case 8:
            for (float & v : x) v = 1e-39f * (v > 0 ? 1.0f : -1.0f);  // subnormal: iscale overflows
            break;
        case 9: std::fill(x.begin(), x.end(), -0.0f); break;
        default: break;
    }
    return x;
}

TEST(quant_act_k, simd_quantizers_match_reference) {
    const quantize_fn paths[2] = {ggml_quantize_row_q8_K_avx2, ggml_quantize_row_q8_K_avx512};
    std::mt19937 rng(4242);
    std::vector<float> x;
    for (int rep = 0; rep < 4; ++rep) {
        for (int kind = 0; kind < 10; ++kind) {
            const std::vector<float> row = q8_K_test_row(rng, kind);
            x.insert(x.end(), row.begin(), row.end());
        }
    }
    const int64_t k = int64_t(x.size()), nb = k / QK_K;
    std::vector<block_q8_K> ref(static_cast<size_t>(nb));
    ggml_quantize_row_q8_K_ref(x.data(), ref.data(), k);
    for (int p = 0; p < 2; ++p) {
        if (!isa_supported(p + 1)) continue;
        std::vector<block_q8_K> got(static_cast<size_t>(nb));
        std::memset(got.data(), 0x5a, got.size() * sizeof(block_q8_K));
        paths[p](x.data(), got.data(), k);
        for (int64_t i = 0; i < nb; ++i) {
            EXPECT_EQ(std::memcmp(&got[size_t(i)], &ref[size_t(i)], sizeof(block_q8_K)), 0)
                << isa_names[p + 1] << " block " << i << " (row kind " << i % 10 << ")";
        }
    }
}

}  // namespace
