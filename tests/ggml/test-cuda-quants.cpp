// The CUDA backend's block decoders (ggml/cuda/quants-decode.cuh), run on the host: the same
// __host__ __device__ code the kernels run, with the device instructions (dp4a, vsub4, prmt,
// funnel shift) emulated bit for bit. Checks, for every quantized weight type:
//   - every run of 32 weights decoded to floats equals ggml's dequantization bit for bit, on
//     blocks from the quality quantizer and on blocks of random bytes, at every byte alignment
//     (blocks may sit at any address in the staged tiles);
//   - the dp4a dot product of a run with Q8-quantized activations equals the float dot product
//     of the dequantized weights with the dequantized activations (to float rounding);
//   - the emulated instructions against their definitions.
#include "cuda/quants-decode.cuh"

#include "ggml/quants.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

namespace {

constexpr ggml_type k_quant_types[] = {GGML_TYPE_Q4_0, GGML_TYPE_Q4_1, GGML_TYPE_Q5_0,  GGML_TYPE_Q5_1,  GGML_TYPE_Q8_0,
                                       GGML_TYPE_Q2_K, GGML_TYPE_Q3_K, GGML_TYPE_Q4_K,  GGML_TYPE_Q5_K,  GGML_TYPE_Q6_K,
                                       GGML_TYPE_IQ4_NL, GGML_TYPE_IQ4_XS, GGML_TYPE_MXFP4};

uint32_t f32_bits(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
}

bool same_float(float a, float b) { return (std::isnan(a) && std::isnan(b)) || f32_bits(a) == f32_bits(b); }

// n_blocks blocks of type t: quantized from Gaussian values (with a few large ones).
std::vector<uint8_t> quantized_blocks(ggml_type t, int64_t n_blocks, std::mt19937 & rng) {
    const int64_t n = n_blocks * ggml_blck_size(t);
    std::normal_distribution<float> nd(0.0f, 1.0f);
    std::vector<float> x(static_cast<size_t>(n));
    for (auto & v : x) v = nd(rng);
    for (int64_t i = 0; i < n; i += 97) x[size_t(i)] *= 8.0f;
    std::vector<uint8_t> q(size_t(n_blocks) * ggml_type_size(t));
    EXPECT_GT(ggml_quantize_chunk(t, x.data(), q.data(), 0, 1, n, nullptr), 0u);
    return q;
}

// n_blocks blocks of random bytes (every bit pattern of quants and scales, fp16 scales included).
std::vector<uint8_t> random_blocks(ggml_type t, int64_t n_blocks, std::mt19937 & rng) {
    std::vector<uint8_t> q(size_t(n_blocks) * ggml_type_size(t));
    for (auto & b : q) b = uint8_t(rng());
    return q;
}

// Decodes the row at src (n_blocks blocks) run by run with the CUDA decoder of t.
void decode_row(ggml_type t, const uint8_t * src, int64_t n_blocks, float * y) {
    const bool ok = qd_dispatch_quant(t, [&](auto blk) {
        using B = decltype(blk);
        for (int64_t i = 0; i < n_blocks; ++i) {
            for (int s = 0; s < B::qk / 32; ++s) qd_run_to_f32<B>(src + i * B::bytes, s, y + i * B::qk + 32 * s);
        }
    });
    ASSERT_TRUE(ok);
}

void expect_decodes_like_ggml(ggml_type t, const std::vector<uint8_t> & blocks, const char * what) {
    const int64_t n_blocks = int64_t(blocks.size() / ggml_type_size(t));
    const int64_t n = n_blocks * ggml_blck_size(t);
    std::vector<float> ref(static_cast<size_t>(n)), got(static_cast<size_t>(n));
    ggml_get_type_traits(t).to_float(blocks.data(), ref.data(), n);
    // every alignment of the row start (the decoders read unaligned words)
    std::vector<uint8_t> shifted(blocks.size() + 32);
    for (int align = 0; align < 16; ++align) {
        uint8_t * base = shifted.data() + (16 - reinterpret_cast<uintptr_t>(shifted.data()) % 16) % 16 + align;
        std::memcpy(base, blocks.data(), blocks.size());
        decode_row(t, base, n_blocks, got.data());
        int64_t bad = 0;
        for (int64_t i = 0; i < n; ++i) {
            if (!same_float(ref[size_t(i)], got[size_t(i)]) && bad++ < 4) {
                ADD_FAILURE() << ggml_type_name(t) << " " << what << " align " << align << " element " << i
                              << ": ggml " << ref[size_t(i)] << " cuda decoder " << got[size_t(i)];
            }
        }
        ASSERT_EQ(bad, 0) << ggml_type_name(t) << " " << what;
    }
}

TEST(CudaQuants, DecodersMatchGgmlOnQuantizedBlocks) {
    std::mt19937 rng(1234);
    for (ggml_type t : k_quant_types) expect_decodes_like_ggml(t, quantized_blocks(t, 64, rng), "quantized");
}

TEST(CudaQuants, DecodersMatchGgmlOnRandomBytes) {
    std::mt19937 rng(99);
    for (ggml_type t : k_quant_types) expect_decodes_like_ggml(t, random_blocks(t, 256, rng), "random bytes");
}

// Activations as the kernels quantize them: per 32, d = amax / 127, q = round(x / d).
struct q8_row {
    std::vector<int8_t> q;
    std::vector<float> d, s;
};

q8_row quantize_q8(const std::vector<float> & x) {
    q8_row r;
    const size_t nb = x.size() / 32;
    r.q.resize(x.size());
    r.d.resize(nb);
    r.s.resize(nb);
    for (size_t b = 0; b < nb; ++b) {
        float amax = 0.0f;
        for (int j = 0; j < 32; ++j) amax = std::fmax(amax, std::fabs(x[32 * b + j]));
        const float d = amax / 127.0f;
        const float id = d > 0.0f ? 1.0f / d : 0.0f;
        int sum = 0;
        for (int j = 0; j < 32; ++j) {
            r.q[32 * b + j] = int8_t(std::lround(x[32 * b + j] * id));
            sum += r.q[32 * b + j];
        }
        r.d[b] = d;
        r.s[b] = d * float(sum);
    }
    return r;
}

TEST(CudaQuants, RunDotProductsMatchFloatDots) {
    std::mt19937 rng(7);
    std::normal_distribution<float> nd(0.0f, 1.0f);
    for (ggml_type t : k_quant_types) {
        const int64_t n_blocks = 16;
        const int64_t n = n_blocks * ggml_blck_size(t);
        const std::vector<uint8_t> w = quantized_blocks(t, n_blocks, rng);
        std::vector<float> wf(static_cast<size_t>(n)), x(static_cast<size_t>(n));
        ggml_get_type_traits(t).to_float(w.data(), wf.data(), n);
        for (auto & v : x) v = nd(rng);
        const q8_row a = quantize_q8(x);
        double ref = 0.0, mag = 0.0;
        for (int64_t i = 0; i < n; ++i) {
            const double xa = double(a.d[size_t(i / 32)]) * a.q[size_t(i)];
            ref += double(wf[size_t(i)]) * xa;
            mag += std::fabs(double(wf[size_t(i)]) * xa);
        }
        double got = 0.0;
        qd_dispatch_quant(t, [&](auto blk) {
            using B = decltype(blk);
            for (int64_t r = 0; r < n / 32; ++r) {
                const int64_t blk_i = r / (B::qk / 32), s = r % (B::qk / 32);
                qd_wq wq;
                B::run(w.data() + blk_i * B::bytes, int(s), wq);
                int aw[8];
                std::memcpy(aw, a.q.data() + 32 * r, 32);
                got += qd_dot_run<B::sub16, B::has_m>(wq, aw, a.d[size_t(r)], a.s[size_t(r)]);
            }
        });
        EXPECT_NEAR(got, ref, 1e-5 * mag + 1e-6) << ggml_type_name(t);
    }
}

TEST(CudaQuants, EmulatedInstructions) {
    EXPECT_EQ(qd_dp4a(int(0x80FF017Fu), int(0x7F0102FFu), 5), 5 + (-128 * 127) + (-1 * 1) + (1 * 2) + (127 * -1));
    EXPECT_EQ(qd_vsub4(0x00107F08u, 0x01200008u), 0xFFF07F00u);
    EXPECT_EQ(qd_byte_perm(0x03020100u, 0x07060504u, 0x7531u), 0x07050301u);
    EXPECT_EQ(qd_funnel_r(0x89ABCDEFu, 0x01234567u, 8), 0x6789ABCDu);
    for (int x : {0, 1, -1, 4194303, -4194303, 123456, -98765}) EXPECT_EQ(qd_i2f_exact(x), float(x));
    const uint32_t t[4] = {qd_iq4nl_w0, qd_iq4nl_w1, qd_iq4nl_w2, qd_iq4nl_w3};
    for (uint32_t i = 0; i < 16; ++i) {
        const uint32_t idx = i | ((15 - i) << 8) | (((i + 5) % 16) << 16) | (((i * 7) % 16) << 24);
        const uint32_t v = qd_lut16(idx, t);
        EXPECT_EQ(int8_t(v), ggml_iq4nl_codebook[i]);
        EXPECT_EQ(int8_t(v >> 8), ggml_iq4nl_codebook[15 - i]);
        EXPECT_EQ(int8_t(v >> 16), ggml_iq4nl_codebook[(i + 5) % 16]);
        EXPECT_EQ(int8_t(v >> 24), ggml_iq4nl_codebook[(i * 7) % 16]);
    }
    alignas(16) const uint8_t bytes[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
    for (int a = 0; a < 8; ++a) {
        uint32_t ref;
        std::memcpy(&ref, bytes + a, 4);
        EXPECT_EQ(qd_u32(bytes + a), ref);
    }
}

}  // namespace
