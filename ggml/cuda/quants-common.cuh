// ggml/cuda/quants-common.cuh — the primitives of the CUDA dequantization code (internal).
//
// Everything here is __host__ __device__: compiled by nvcc it runs in the kernels, compiled by
// the host compiler (the tests include it from plain C++) it runs on the CPU with the same bit
// manipulation, so a host test checks the decoders bit for bit against ggml's dequantization.
// On the device the integer helpers map to single instructions (dp4a, vsub4, prmt, shf); the
// host versions emulate those instructions exactly.
//
// Usage:
//   uint32_t w = qd_u32(p);                 // 4 bytes at any address (little-endian)
//   int s = qd_dp4a(a, b, 0);               // sum of the 4 signed byte products
//   float f = qd_i2f_exact(s);              // int -> float, exact for |s| < 2^22
//   float x = qd_mul(d, f);                 // a product never fused into an FMA
#pragma once

#include "ggml/quants.h"
#include "ggml/types.h"

#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define QD_HD __host__ __device__ __forceinline__
#include <cuda_fp16.h>
#else
#define QD_HD inline
#endif
#if defined(__CUDA_ARCH__)
#define QD_UNROLL _Pragma("unroll")
#else
#define QD_UNROLL
#endif

// ---- loads (any alignment, little-endian) ----

QD_HD uint32_t qd_u16(const uint8_t * p) { return uint32_t(p[0]) | uint32_t(p[1]) << 8; }

// (hi:lo) >> shift, low 32 bits (shift 0..31): the funnel shift of the device.
QD_HD uint32_t qd_funnel_r(uint32_t lo, uint32_t hi, int shift) {
#if defined(__CUDA_ARCH__)
    return __funnelshift_r(lo, hi, shift);
#else
    return uint32_t(((uint64_t(hi) << 32) | lo) >> shift);
#endif
}

// 4 bytes at p, p of any alignment: the aligned words holding them, funnel-shifted. Reads only
// the aligned words that hold some of the 4 bytes (never a word past the last one).
QD_HD uint32_t qd_u32(const uint8_t * p) {
    const uintptr_t a = reinterpret_cast<uintptr_t>(p);
    const uint32_t * w = reinterpret_cast<const uint32_t *>(a & ~uintptr_t(3));
    const int shift = int(a & 3) * 8;
#if defined(__CUDA_ARCH__)
    const uint32_t lo = w[0];
    return shift == 0 ? lo : qd_funnel_r(lo, w[1], shift);
#else
    uint32_t lo, hi = 0;
    std::memcpy(&lo, w, 4);
    if (shift == 0) return lo;
    std::memcpy(&hi, w + 1, 4);
    return qd_funnel_r(lo, hi, shift);
#endif
}

// ---- float conversions ----

QD_HD float qd_bits_f32(uint32_t u) {
#if defined(__CUDA_ARCH__)
    return __uint_as_float(u);
#else
    float f;
    std::memcpy(&f, &u, 4);
    return f;
#endif
}

QD_HD float qd_fp16_to_f32(uint32_t h) {
#if defined(__CUDA_ARCH__)
    return __half2float(__ushort_as_half(static_cast<unsigned short>(h)));
#else
    return ggml_fp16_to_fp32(static_cast<ggml_fp16_t>(h));
#endif
}

QD_HD float qd_bf16_to_f32(uint32_t h) { return qd_bits_f32(h << 16); }

// 2^(e - 128) (half the E8M0 value e stands for; subnormal for e = 0, 1).
QD_HD float qd_e8m0_half(uint32_t e) { return qd_bits_f32(e < 2 ? 0x00200000u << e : (e - 1) << 23); }

// Exact int -> float for |x| < 2^22 with an add and a float subtract (full-rate instructions on
// the device, where int -> float conversion runs at a quarter of the rate).
QD_HD float qd_i2f_exact(int x) { return qd_bits_f32(uint32_t(0x4B400000 + x)) - 12582912.0f; }

// Products and sums that must keep their own rounding (the dequantization formulas of ggml):
// the device compiler fuses a * b + c into an FMA unless told not to.
QD_HD float qd_mul(float a, float b) {
#if defined(__CUDA_ARCH__)
    return __fmul_rn(a, b);
#else
    return a * b;
#endif
}
QD_HD float qd_add(float a, float b) {
#if defined(__CUDA_ARCH__)
    return __fadd_rn(a, b);
#else
    return a + b;
#endif
}

// ---- byte-wise integer instructions ----

// Sum of the four signed byte products of a and b, plus c.
QD_HD int qd_dp4a(int a, int b, int c) {
#if defined(__CUDA_ARCH__)
    return __dp4a(a, b, c);
#else
    for (int i = 0; i < 4; ++i) c += int(int8_t(uint32_t(a) >> (8 * i))) * int(int8_t(uint32_t(b) >> (8 * i)));
    return c;
#endif
}

// Byte-wise a - b modulo 256.
QD_HD uint32_t qd_vsub4(uint32_t a, uint32_t b) {
#if defined(__CUDA_ARCH__)
    return __vsub4(a, b);
#else
    uint32_t r = 0;
    for (int i = 0; i < 4; ++i) r |= ((((a >> (8 * i)) & 0xFF) - ((b >> (8 * i)) & 0xFF)) & 0xFF) << (8 * i);
    return r;
#endif
}

// Byte n of the result is byte (s >> 4n) & 7 of the 8 bytes {y:x} (x the low word).
QD_HD uint32_t qd_byte_perm(uint32_t x, uint32_t y, uint32_t s) {
#if defined(__CUDA_ARCH__)
    return __byte_perm(x, y, s);
#else
    const uint64_t v = uint64_t(y) << 32 | x;
    uint32_t r = 0;
    for (int n = 0; n < 4; ++n) r |= uint32_t((v >> (8 * ((s >> (4 * n)) & 7))) & 0xFF) << (8 * n);
    return r;
#endif
}

// A 16-entry table of bytes (t[0] holds entries 0..3, …, t[3] entries 12..15) looked up with
// 4 indices (the bytes of idx, each 0..15): byte n of the result is table[byte n of idx].
QD_HD uint32_t qd_lut16(uint32_t idx, const uint32_t t[4]) {
    const uint32_t low3 = idx & 0x07070707u;
    const uint32_t packed = low3 | (low3 >> 4);                       // bytes 0, 2: two selectors each
    const uint32_t sel = (packed & 0xFFu) | ((packed >> 8) & 0xFF00u);  // 4 selector nibbles
    const uint32_t lo = qd_byte_perm(t[0], t[1], sel);
    const uint32_t hi = qd_byte_perm(t[2], t[3], sel);
    const uint32_t high = ((idx >> 3) & 0x01010101u) * 0xFFu;          // 0xFF where the index is >= 8
    return (hi & high) | (lo & ~high);
}

// Bits 0..3 of x moved to bit 4 of bytes 0..3 (the fifth bit of four 5-bit quants).
QD_HD uint32_t qd_spread4_bit4(uint32_t x) {
    return ((x & 1u) << 4) | ((x & 2u) << 11) | ((x & 4u) << 18) | ((x & 8u) << 25);
}

// The int8 codebooks of IQ4_NL / IQ4_XS and MXFP4 as 4 little-endian words each.
constexpr uint32_t qd_pack4(const int8_t * c) {
    return uint32_t(uint8_t(c[0])) | uint32_t(uint8_t(c[1])) << 8 | uint32_t(uint8_t(c[2])) << 16 |
           uint32_t(uint8_t(c[3])) << 24;
}
constexpr uint32_t qd_iq4nl_w0 = qd_pack4(ggml_iq4nl_codebook + 0), qd_iq4nl_w1 = qd_pack4(ggml_iq4nl_codebook + 4),
                   qd_iq4nl_w2 = qd_pack4(ggml_iq4nl_codebook + 8), qd_iq4nl_w3 = qd_pack4(ggml_iq4nl_codebook + 12);
constexpr uint32_t qd_mxfp4_w0 = qd_pack4(ggml_mxfp4_codebook + 0), qd_mxfp4_w1 = qd_pack4(ggml_mxfp4_codebook + 4),
                   qd_mxfp4_w2 = qd_pack4(ggml_mxfp4_codebook + 8), qd_mxfp4_w3 = qd_pack4(ggml_mxfp4_codebook + 12);

// ---- the unit every decoder produces: 32 consecutive weights as int8 ----

// Weights e = 0..31 of a 32-aligned run: x_e = d[e / 16] * q_e + m[e / 16], q_e the signed byte
// e % 4 of q[e / 4]. has_m types add m; the others leave it 0 and never add it (so that -0.0
// stays -0.0 as in ggml's formulas).
struct qd_wq {
    int q[8];
    float d[2];
    float m[2];
};

// Signed byte e of the run.
QD_HD int qd_wq_byte(const qd_wq & w, int e) { return int(int8_t(uint32_t(w.q[e / 4]) >> (8 * (e % 4)))); }

// The run as floats, with exactly the float operations of ggml's dequantization.
template <bool HAS_M>
QD_HD void qd_wq_to_f32(const qd_wq & w, float * y) {
QD_UNROLL
    for (int e = 0; e < 32; ++e) {
        const float v = qd_mul(w.d[e / 16], float(qd_wq_byte(w, e)));
        y[e] = HAS_M ? qd_add(v, w.m[e / 16]) : v;
    }
}

// Dot product of a decoded run with 32 activations quantized as int8 (a: 8 words, 4 per word,
// element order as the run), da the activations' scale and sa = da * (sum of their 32 int8).
// SUB16: the run has two scales (16-element sub-blocks).
template <bool SUB16, bool HAS_M>
QD_HD float qd_dot_run(const qd_wq & w, const int * a, float da, float sa) {
    if constexpr (SUB16) {
        int s0 = 0, s1 = 0;
QD_UNROLL
        for (int i = 0; i < 4; ++i) {
            s0 = qd_dp4a(w.q[i], a[i], s0);
            s1 = qd_dp4a(w.q[4 + i], a[4 + i], s1);
        }
        float r = w.d[0] * qd_i2f_exact(s0) + w.d[1] * qd_i2f_exact(s1);
        if constexpr (HAS_M) {
            int t0 = 0, t1 = 0;
QD_UNROLL
            for (int i = 0; i < 4; ++i) {
                t0 = qd_dp4a(0x01010101, a[i], t0);
                t1 = qd_dp4a(0x01010101, a[4 + i], t1);
            }
            r += w.m[0] * qd_i2f_exact(t0) + w.m[1] * qd_i2f_exact(t1);
        }
        return r * da;
    } else {
        int s = 0;
QD_UNROLL
        for (int i = 0; i < 8; ++i) s = qd_dp4a(w.q[i], a[i], s);
        float r = w.d[0] * qd_i2f_exact(s) * da;
        if constexpr (HAS_M) r += w.m[0] * sa;
        return r;
    }
}
