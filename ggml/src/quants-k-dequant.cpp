// Dequantization of the K-quant formats (super-blocks of QK_K = 256 elements): Q2_K, Q3_K,
// Q4_K, Q5_K, Q6_K and the activation format Q8_K.
//
// Bit-exact with the readers of other engines: the float expressions keep the same shape
// (the sub-block scale is one float product d * sc, then times q, minus dmin * m; no fused
// multiply-add: the build is ISO C++, so the compiler does not contract).
//
// Element order of a super-block (e = 0..255); every format takes its sub-block scale from
// index e / 16 (Q2_K, Q3_K, Q6_K) or e / 32 (Q4_K, Q5_K):
//   Q2_K / Q3_K low 2 bits: byte qs[32 * (e / 128) + e % 32], bits 2 * ((e % 128) / 32) .. +1
//   Q3_K high bit:          bit e / 32 of hmask[e % 32] (set means q, clear means q - 4)
//   Q4_K / Q5_K low 4 bits: qs[32 * (e / 64) + e % 32], low nibble when (e % 64) < 32 else high
//   Q5_K high bit:          bit e / 32 of qh[e % 32]
//   Q6_K:                   low 4 bits in ql[64 * (e / 128) + e % 64], low nibble for
//                           (e % 128) < 64 else high; high 2 bits in qh[32 * (e / 128) + e % 32],
//                           bits 2 * ((e % 128) / 32) .. +1; value q - 32
#include "ggml/quants.h"
#include "quants-k-impl.h"

namespace {

// Q2_K: x = (d * sc) * q - dmin * m, 16 sub-blocks of 16 with 4-bit sc (low) and m (high).
void dequant_block_q2_K(const block_q2_K & b, float * y) {
    const float d = ggml_fp16_to_fp32(b.d);
    const float dmin = ggml_fp16_to_fp32(b.dmin);
    for (int half = 0; half < 2; ++half) {
        const uint8_t * q = b.qs + 32 * half;
        for (int j = 0; j < 4; ++j) {
            const int shift = 2 * j;
            for (int s = 0; s < 2; ++s) {
                const uint8_t sc = b.scales[8 * half + 2 * j + s];
                const float dl = d * float(sc & 0xF);
                const float ml = dmin * float(sc >> 4);
                for (int l = 0; l < 16; ++l) *y++ = dl * float((q[16 * s + l] >> shift) & 3) - ml;
            }
        }
    }
}

// Q3_K: x = (d * (sc - 32)) * q, q in -4..3, 16 sub-blocks of 16 with 6-bit scales.
void dequant_block_q3_K(const block_q3_K & b, float * y) {
    const float d = ggml_fp16_to_fp32(b.d);
    int8_t sc[16];
    quants_k_unpack_q3_scales(b.scales, sc);
    for (int half = 0; half < 2; ++half) {
        const uint8_t * q = b.qs + 32 * half;
        for (int j = 0; j < 4; ++j) {
            const int shift = 2 * j;
            const int hbit = 4 * half + j;
            for (int s = 0; s < 2; ++s) {
                const float dl = d * float(sc[8 * half + 2 * j + s]);
                for (int l = 16 * s; l < 16 * s + 16; ++l) {
                    const int lo = (q[l] >> shift) & 3;
                    const int hi = (b.hmask[l] >> hbit) & 1;
                    *y++ = dl * float(lo - (hi ? 0 : 4));
                }
            }
        }
    }
}

// Q4_K: x = (d * sc) * q - dmin * m, 8 sub-blocks of 32 with 6-bit sc and m.
void dequant_block_q4_K(const block_q4_K & b, float * y) {
    const float d = ggml_fp16_to_fp32(b.d);
    const float dmin = ggml_fp16_to_fp32(b.dmin);
    uint8_t sc[8], m[8];
    quants_k_unpack_scale_min(b.scales, sc, m);
    for (int c = 0; c < 4; ++c) {
        const uint8_t * q = b.qs + 32 * c;
        const float d1 = d * float(sc[2 * c]), m1 = dmin * float(m[2 * c]);
        const float d2 = d * float(sc[2 * c + 1]), m2 = dmin * float(m[2 * c + 1]);
        for (int l = 0; l < 32; ++l) *y++ = d1 * float(q[l] & 0xF) - m1;
        for (int l = 0; l < 32; ++l) *y++ = d2 * float(q[l] >> 4) - m2;
    }
}

// Q5_K: as Q4_K with a fifth bit (bit e / 32 of qh[e % 32]) worth 16.
void dequant_block_q5_K(const block_q5_K & b, float * y) {
    const float d = ggml_fp16_to_fp32(b.d);
    const float dmin = ggml_fp16_to_fp32(b.dmin);
    uint8_t sc[8], m[8];
    quants_k_unpack_scale_min(b.scales, sc, m);
    for (int c = 0; c < 4; ++c) {
        const uint8_t * q = b.qs + 32 * c;
        const float d1 = d * float(sc[2 * c]), m1 = dmin * float(m[2 * c]);
        const float d2 = d * float(sc[2 * c + 1]), m2 = dmin * float(m[2 * c + 1]);
        const int b1 = 2 * c, b2 = 2 * c + 1;
        for (int l = 0; l < 32; ++l) *y++ = d1 * float((q[l] & 0xF) + (((b.qh[l] >> b1) & 1) << 4)) - m1;
        for (int l = 0; l < 32; ++l) *y++ = d2 * float((q[l] >> 4) + (((b.qh[l] >> b2) & 1) << 4)) - m2;
    }
}

// Q6_K: x = (d * sc) * (q - 32), 16 sub-blocks of 16 with signed 8-bit scales.
void dequant_block_q6_K(const block_q6_K & b, float * y) {
    const float d = ggml_fp16_to_fp32(b.d);
    for (int half = 0; half < 2; ++half) {
        const uint8_t * ql = b.ql + 64 * half;
        const uint8_t * qh = b.qh + 32 * half;
        const int8_t * sc = b.scales + 8 * half;
        for (int l = 0; l < 32; ++l) {
            const int s = l / 16;
            const int q1 = int((ql[l] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32;
            const int q2 = int((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32;
            const int q3 = int((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
            const int q4 = int((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
            y[l] = d * float(sc[s]) * float(q1);
            y[l + 32] = d * float(sc[s + 2]) * float(q2);
            y[l + 64] = d * float(sc[s + 4]) * float(q3);
            y[l + 96] = d * float(sc[s + 6]) * float(q4);
        }
        y += 128;
    }
}

}  // namespace

void quants_k_unpack_scale_min(const uint8_t * packed, uint8_t * sc, uint8_t * m) {
    for (int j = 0; j < 4; ++j) {
        sc[j] = packed[j] & 63;
        m[j] = packed[j + 4] & 63;
    }
    for (int j = 4; j < 8; ++j) {
        sc[j] = uint8_t((packed[j + 4] & 0xF) | ((packed[j - 4] >> 6) << 4));
        m[j] = uint8_t((packed[j + 4] >> 4) | ((packed[j] >> 6) << 4));
    }
}

void quants_k_unpack_q3_scales(const uint8_t * packed, int8_t * sc) {
    for (int j = 0; j < 16; ++j) {
        const int lo = j < 8 ? (packed[j] & 0xF) : (packed[j - 8] >> 4);
        const int hi = (packed[8 + j % 4] >> (2 * (j / 4))) & 3;
        sc[j] = int8_t((lo | (hi << 4)) - 32);
    }
}

void ggml_dequantize_row_q2_K(const block_q2_K * x, float * y, int64_t k) {
    for (int64_t i = 0; i < k / QK_K; ++i) dequant_block_q2_K(x[i], y + i * QK_K);
}

void ggml_dequantize_row_q3_K(const block_q3_K * x, float * y, int64_t k) {
    for (int64_t i = 0; i < k / QK_K; ++i) dequant_block_q3_K(x[i], y + i * QK_K);
}

void ggml_dequantize_row_q4_K(const block_q4_K * x, float * y, int64_t k) {
    for (int64_t i = 0; i < k / QK_K; ++i) dequant_block_q4_K(x[i], y + i * QK_K);
}

void ggml_dequantize_row_q5_K(const block_q5_K * x, float * y, int64_t k) {
    for (int64_t i = 0; i < k / QK_K; ++i) dequant_block_q5_K(x[i], y + i * QK_K);
}

void ggml_dequantize_row_q6_K(const block_q6_K * x, float * y, int64_t k) {
    for (int64_t i = 0; i < k / QK_K; ++i) dequant_block_q6_K(x[i], y + i * QK_K);
}

void ggml_dequantize_row_q8_K(const block_q8_K * x, float * y, int64_t k) {
    for (int64_t i = 0; i < k / QK_K; ++i) {
        const float d = x[i].d;
        for (int j = 0; j < QK_K; ++j) y[i * QK_K + j] = d * float(x[i].qs[j]);
    }
}
