// ggml/cuda/quants-decode.cuh — per-type block decoders of the CUDA backend (internal).
//
// For every quantized weight type T, qd_block<T> gives its block size (qk elements, bytes) and
// run(b, s, w): the s-th run of 32 consecutive weights (s = 0 .. qk / 32 - 1) of the block at b
// as int8 values with their scales (qd_wq, see quants-common.cuh). Every kernel builds on it: the
// mat-vec kernels take the int8 values into dp4a dot products, the dequantization kernels turn
// them into floats with the operations of ggml's dequantization (qd_wq_to_f32: bit-exact), the
// expert GEMM into F16 tiles. __host__ __device__, so that the host tests run the same code.
//
// Usage:
//   qd_wq w;
//   qd_block<GGML_TYPE_Q4_K>::run(block_bytes, s, w);    // weights 32 s .. 32 s + 31
//   float y[32];
//   qd_wq_to_f32<qd_block<GGML_TYPE_Q4_K>::has_m>(w, y);  // == ggml_dequantize_row_q4_K's values
//
// Layouts (ggml/quants.h): offsets below are bytes from the block start; blocks may sit at any
// address (qd_u32 reads unaligned words).
#pragma once

#include "quants-common.cuh"

template <ggml_type T> struct qd_block;

// ---- 32-element formats ----

// x = d * (q - 8); d @0, qs @2 (element j low nibble of qs[j], j + 16 high nibble).
template <> struct qd_block<GGML_TYPE_Q4_0> {
    static constexpr ggml_type type = GGML_TYPE_Q4_0;
    static constexpr int qk = QK4_0, bytes = sizeof(block_q4_0);
    static constexpr bool sub16 = false, has_m = false;
    QD_HD static void run(const uint8_t * b, int, qd_wq & w) {
        const float d = qd_fp16_to_f32(qd_u16(b));
QD_UNROLL
        for (int i = 0; i < 4; ++i) {
            const uint32_t v = qd_u32(b + 2 + 4 * i);
            w.q[i] = int(qd_vsub4(v & 0x0F0F0F0Fu, 0x08080808u));
            w.q[4 + i] = int(qd_vsub4((v >> 4) & 0x0F0F0F0Fu, 0x08080808u));
        }
        w.d[0] = w.d[1] = d;
        w.m[0] = w.m[1] = 0.0f;
    }
};

// x = d * q + m; d @0, m @2, qs @4.
template <> struct qd_block<GGML_TYPE_Q4_1> {
    static constexpr ggml_type type = GGML_TYPE_Q4_1;
    static constexpr int qk = QK4_1, bytes = sizeof(block_q4_1);
    static constexpr bool sub16 = false, has_m = true;
    QD_HD static void run(const uint8_t * b, int, qd_wq & w) {
        const float d = qd_fp16_to_f32(qd_u16(b));
        const float m = qd_fp16_to_f32(qd_u16(b + 2));
QD_UNROLL
        for (int i = 0; i < 4; ++i) {
            const uint32_t v = qd_u32(b + 4 + 4 * i);
            w.q[i] = int(v & 0x0F0F0F0Fu);
            w.q[4 + i] = int((v >> 4) & 0x0F0F0F0Fu);
        }
        w.d[0] = w.d[1] = d;
        w.m[0] = w.m[1] = m;
    }
};

// x = d * (q - 16); d @0, qh @2 (bit j: fifth bit of element j), qs @6.
template <> struct qd_block<GGML_TYPE_Q5_0> {
    static constexpr ggml_type type = GGML_TYPE_Q5_0;
    static constexpr int qk = QK5_0, bytes = sizeof(block_q5_0);
    static constexpr bool sub16 = false, has_m = false;
    QD_HD static void run(const uint8_t * b, int, qd_wq & w) {
        const float d = qd_fp16_to_f32(qd_u16(b));
        const uint32_t qh = qd_u32(b + 2);
QD_UNROLL
        for (int i = 0; i < 4; ++i) {
            const uint32_t v = qd_u32(b + 6 + 4 * i);
            const uint32_t lo = (v & 0x0F0F0F0Fu) | qd_spread4_bit4(qh >> (4 * i));
            const uint32_t hi = ((v >> 4) & 0x0F0F0F0Fu) | qd_spread4_bit4(qh >> (16 + 4 * i));
            w.q[i] = int(qd_vsub4(lo, 0x10101010u));
            w.q[4 + i] = int(qd_vsub4(hi, 0x10101010u));
        }
        w.d[0] = w.d[1] = d;
        w.m[0] = w.m[1] = 0.0f;
    }
};

// x = d * q + m; d @0, m @2, qh @4, qs @8.
template <> struct qd_block<GGML_TYPE_Q5_1> {
    static constexpr ggml_type type = GGML_TYPE_Q5_1;
    static constexpr int qk = QK5_1, bytes = sizeof(block_q5_1);
    static constexpr bool sub16 = false, has_m = true;
    QD_HD static void run(const uint8_t * b, int, qd_wq & w) {
        const float d = qd_fp16_to_f32(qd_u16(b));
        const float m = qd_fp16_to_f32(qd_u16(b + 2));
        const uint32_t qh = qd_u32(b + 4);
QD_UNROLL
        for (int i = 0; i < 4; ++i) {
            const uint32_t v = qd_u32(b + 8 + 4 * i);
            w.q[i] = int((v & 0x0F0F0F0Fu) | qd_spread4_bit4(qh >> (4 * i)));
            w.q[4 + i] = int(((v >> 4) & 0x0F0F0F0Fu) | qd_spread4_bit4(qh >> (16 + 4 * i)));
        }
        w.d[0] = w.d[1] = d;
        w.m[0] = w.m[1] = m;
    }
};

// x = d * q; d @0, qs @2 (int8).
template <> struct qd_block<GGML_TYPE_Q8_0> {
    static constexpr ggml_type type = GGML_TYPE_Q8_0;
    static constexpr int qk = QK8_0, bytes = sizeof(block_q8_0);
    static constexpr bool sub16 = false, has_m = false;
    QD_HD static void run(const uint8_t * b, int, qd_wq & w) {
        const float d = qd_fp16_to_f32(qd_u16(b));
QD_UNROLL
        for (int i = 0; i < 8; ++i) w.q[i] = int(qd_u32(b + 2 + 4 * i));
        w.d[0] = w.d[1] = d;
        w.m[0] = w.m[1] = 0.0f;
    }
};

// x = d * codebook[q]; d @0, qs @2 (nibbles as Q4_0).
template <> struct qd_block<GGML_TYPE_IQ4_NL> {
    static constexpr ggml_type type = GGML_TYPE_IQ4_NL;
    static constexpr int qk = QK4_NL, bytes = sizeof(block_iq4_nl);
    static constexpr bool sub16 = false, has_m = false;
    QD_HD static void run(const uint8_t * b, int, qd_wq & w) {
        const uint32_t t[4] = {qd_iq4nl_w0, qd_iq4nl_w1, qd_iq4nl_w2, qd_iq4nl_w3};
        const float d = qd_fp16_to_f32(qd_u16(b));
QD_UNROLL
        for (int i = 0; i < 4; ++i) {
            const uint32_t v = qd_u32(b + 2 + 4 * i);
            w.q[i] = int(qd_lut16(v & 0x0F0F0F0Fu, t));
            w.q[4 + i] = int(qd_lut16((v >> 4) & 0x0F0F0F0Fu, t));
        }
        w.d[0] = w.d[1] = d;
        w.m[0] = w.m[1] = 0.0f;
    }
};

// x = codebook2[q] * 2^(e - 128) (the doubled E2M1 table, the halved E8M0 scale); e @0, qs @1.
template <> struct qd_block<GGML_TYPE_MXFP4> {
    static constexpr ggml_type type = GGML_TYPE_MXFP4;
    static constexpr int qk = QK_MXFP4, bytes = sizeof(block_mxfp4);
    static constexpr bool sub16 = false, has_m = false;
    QD_HD static void run(const uint8_t * b, int, qd_wq & w) {
        const uint32_t t[4] = {qd_mxfp4_w0, qd_mxfp4_w1, qd_mxfp4_w2, qd_mxfp4_w3};
        const float d = qd_e8m0_half(b[0]);
QD_UNROLL
        for (int i = 0; i < 4; ++i) {
            const uint32_t v = qd_u32(b + 1 + 4 * i);
            w.q[i] = int(qd_lut16(v & 0x0F0F0F0Fu, t));
            w.q[4 + i] = int(qd_lut16((v >> 4) & 0x0F0F0F0Fu, t));
        }
        w.d[0] = w.d[1] = d;
        w.m[0] = w.m[1] = 0.0f;
    }
};

// ---- K-quants (super-blocks of 256: runs s = 0..7) ----

// x = (d * sc) * q - dmin * mn per 16; scales @0 (sc low nibble, mn high), qs @16, d @80,
// dmin @82. Run s: 2-bit quants at bits 2 (s % 4) of qs[32 (s / 4) + l], scales 2 s, 2 s + 1.
template <> struct qd_block<GGML_TYPE_Q2_K> {
    static constexpr ggml_type type = GGML_TYPE_Q2_K;
    static constexpr int qk = QK_K, bytes = sizeof(block_q2_K);
    static constexpr bool sub16 = true, has_m = true;
    QD_HD static void run(const uint8_t * b, int s, qd_wq & w) {
        const float d = qd_fp16_to_f32(qd_u16(b + 80));
        const float dmin = qd_fp16_to_f32(qd_u16(b + 82));
        const uint8_t * qs = b + 16 + 32 * (s / 4);
        const int shift = 2 * (s % 4);
QD_UNROLL
        for (int i = 0; i < 8; ++i) w.q[i] = int((qd_u32(qs + 4 * i) >> shift) & 0x03030303u);
QD_UNROLL
        for (int h = 0; h < 2; ++h) {
            const uint32_t sc = b[2 * s + h];
            w.d[h] = qd_mul(d, float(sc & 0xF));
            w.m[h] = -qd_mul(dmin, float(sc >> 4));
        }
    }
};

// x = (d * (sc - 32)) * q, q = low2 + 4 * hbit - 4; hmask @0, qs @32, scales @96 (16 packed
// 6-bit), d @108. Run s: low bits as Q2_K, high bit s of hmask[l].
template <> struct qd_block<GGML_TYPE_Q3_K> {
    static constexpr ggml_type type = GGML_TYPE_Q3_K;
    static constexpr int qk = QK_K, bytes = sizeof(block_q3_K);
    static constexpr bool sub16 = true, has_m = false;
    QD_HD static int scale(const uint8_t * sc, int j) {
        const int lo = j < 8 ? (sc[j] & 0xF) : (sc[j - 8] >> 4);
        const int hi = (sc[8 + j % 4] >> (2 * (j / 4))) & 3;
        return (lo | hi << 4) - 32;
    }
    QD_HD static void run(const uint8_t * b, int s, qd_wq & w) {
        const float d = qd_fp16_to_f32(qd_u16(b + 108));
        const uint8_t * qs = b + 32 + 32 * (s / 4);
        const int shift = 2 * (s % 4);
QD_UNROLL
        for (int i = 0; i < 8; ++i) {
            const uint32_t lo = (qd_u32(qs + 4 * i) >> shift) & 0x03030303u;
            const uint32_t hb = ((qd_u32(b + 4 * i) >> s) & 0x01010101u) << 2;
            w.q[i] = int(qd_vsub4(lo | hb, 0x04040404u));
        }
QD_UNROLL
        for (int h = 0; h < 2; ++h) {
            w.d[h] = qd_mul(d, float(scale(b + 96, 2 * s + h)));
            w.m[h] = 0.0f;
        }
    }
};

// Q4_K / Q5_K: 8 6-bit scales and mins packed in 12 bytes at sc.
QD_HD void qd_k_scale_min(const uint8_t * sc, int j, int & scale, int & min) {
    if (j < 4) {
        scale = sc[j] & 63;
        min = sc[j + 4] & 63;
    } else {
        scale = (sc[j + 4] & 0xF) | ((sc[j - 4] >> 6) << 4);
        min = (sc[j + 4] >> 4) | ((sc[j] >> 6) << 4);
    }
}

// x = (d * sc) * q - dmin * mn per 32; d @0, dmin @2, scales @4, qs @16. Run s: the low (s even)
// or high nibbles of qs[32 (s / 2) + l].
template <> struct qd_block<GGML_TYPE_Q4_K> {
    static constexpr ggml_type type = GGML_TYPE_Q4_K;
    static constexpr int qk = QK_K, bytes = sizeof(block_q4_K);
    static constexpr bool sub16 = false, has_m = true;
    QD_HD static void run(const uint8_t * b, int s, qd_wq & w) {
        const float d = qd_fp16_to_f32(qd_u16(b));
        const float dmin = qd_fp16_to_f32(qd_u16(b + 2));
        const uint8_t * qs = b + 16 + 32 * (s / 2);
        const int shift = 4 * (s % 2);
QD_UNROLL
        for (int i = 0; i < 8; ++i) w.q[i] = int((qd_u32(qs + 4 * i) >> shift) & 0x0F0F0F0Fu);
        int sc, mn;
        qd_k_scale_min(b + 4, s, sc, mn);
        w.d[0] = w.d[1] = qd_mul(d, float(sc));
        w.m[0] = w.m[1] = -qd_mul(dmin, float(mn));
    }
};

// As Q4_K with a fifth bit (bit s of qh[l], worth 16); d @0, dmin @2, scales @4, qh @16, qs @48.
template <> struct qd_block<GGML_TYPE_Q5_K> {
    static constexpr ggml_type type = GGML_TYPE_Q5_K;
    static constexpr int qk = QK_K, bytes = sizeof(block_q5_K);
    static constexpr bool sub16 = false, has_m = true;
    QD_HD static void run(const uint8_t * b, int s, qd_wq & w) {
        const float d = qd_fp16_to_f32(qd_u16(b));
        const float dmin = qd_fp16_to_f32(qd_u16(b + 2));
        const uint8_t * qs = b + 48 + 32 * (s / 2);
        const int shift = 4 * (s % 2);
QD_UNROLL
        for (int i = 0; i < 8; ++i) {
            const uint32_t lo = (qd_u32(qs + 4 * i) >> shift) & 0x0F0F0F0Fu;
            const uint32_t hb = ((qd_u32(b + 16 + 4 * i) >> s) & 0x01010101u) << 4;
            w.q[i] = int(lo | hb);
        }
        int sc, mn;
        qd_k_scale_min(b + 4, s, sc, mn);
        w.d[0] = w.d[1] = qd_mul(d, float(sc));
        w.m[0] = w.m[1] = -qd_mul(dmin, float(mn));
    }
};

// x = (d * sc) * (q - 32) per 16; ql @0, qh @128, scales @192 (int8), d @208. Run s (t = s % 4
// within its half s / 4): low 4 bits in the low (t < 2) or high nibbles of
// ql[64 (s / 4) + 32 (t % 2) + l], high 2 bits at bits 2 t of qh[32 (s / 4) + l].
template <> struct qd_block<GGML_TYPE_Q6_K> {
    static constexpr ggml_type type = GGML_TYPE_Q6_K;
    static constexpr int qk = QK_K, bytes = sizeof(block_q6_K);
    static constexpr bool sub16 = true, has_m = false;
    QD_HD static void run(const uint8_t * b, int s, qd_wq & w) {
        const float d = qd_fp16_to_f32(qd_u16(b + 208));
        const int half = s / 4, t = s % 4;
        const uint8_t * ql = b + 64 * half + 32 * (t % 2);
        const uint8_t * qh = b + 128 + 32 * half;
        const int lshift = 4 * (t / 2), hshift = 2 * t;
QD_UNROLL
        for (int i = 0; i < 8; ++i) {
            const uint32_t lo = (qd_u32(ql + 4 * i) >> lshift) & 0x0F0F0F0Fu;
            const uint32_t hi = ((qd_u32(qh + 4 * i) >> hshift) & 0x03030303u) << 4;
            w.q[i] = int(qd_vsub4(lo | hi, 0x20202020u));
        }
QD_UNROLL
        for (int h = 0; h < 2; ++h) {
            w.d[h] = qd_mul(d, float(int8_t(b[192 + 2 * s + h])));
            w.m[h] = 0.0f;
        }
    }
};

// x = (d * (ls - 32)) * codebook[q] per 32; d @0, scales_h @2, scales_l @4, qs @8 (run s in
// qs[16 s .. 16 s + 15], nibbles as Q4_0).
template <> struct qd_block<GGML_TYPE_IQ4_XS> {
    static constexpr ggml_type type = GGML_TYPE_IQ4_XS;
    static constexpr int qk = QK_K, bytes = sizeof(block_iq4_xs);
    static constexpr bool sub16 = false, has_m = false;
    QD_HD static void run(const uint8_t * b, int s, qd_wq & w) {
        const uint32_t t[4] = {qd_iq4nl_w0, qd_iq4nl_w1, qd_iq4nl_w2, qd_iq4nl_w3};
        const float d = qd_fp16_to_f32(qd_u16(b));
        const int ls = ((b[4 + s / 2] >> (4 * (s % 2))) & 0xF) | (((qd_u16(b + 2) >> (2 * s)) & 3) << 4);
        const uint8_t * qs = b + 8 + 16 * s;
QD_UNROLL
        for (int i = 0; i < 4; ++i) {
            const uint32_t v = qd_u32(qs + 4 * i);
            w.q[i] = int(qd_lut16(v & 0x0F0F0F0Fu, t));
            w.q[4 + i] = int(qd_lut16((v >> 4) & 0x0F0F0F0Fu, t));
        }
        w.d[0] = w.d[1] = qd_mul(d, float(ls - 32));
        w.m[0] = w.m[1] = 0.0f;
    }
};

// ---- dispatch helpers ----

// Calls f(qd_block<T>{}) for the quantized weight type t; returns false for any other type.
template <typename F> bool qd_dispatch_quant(ggml_type t, F && f) {
    switch (t) {
        case GGML_TYPE_Q4_0: f(qd_block<GGML_TYPE_Q4_0>{}); return true;
        case GGML_TYPE_Q4_1: f(qd_block<GGML_TYPE_Q4_1>{}); return true;
        case GGML_TYPE_Q5_0: f(qd_block<GGML_TYPE_Q5_0>{}); return true;
        case GGML_TYPE_Q5_1: f(qd_block<GGML_TYPE_Q5_1>{}); return true;
        case GGML_TYPE_Q8_0: f(qd_block<GGML_TYPE_Q8_0>{}); return true;
        case GGML_TYPE_Q2_K: f(qd_block<GGML_TYPE_Q2_K>{}); return true;
        case GGML_TYPE_Q3_K: f(qd_block<GGML_TYPE_Q3_K>{}); return true;
        case GGML_TYPE_Q4_K: f(qd_block<GGML_TYPE_Q4_K>{}); return true;
        case GGML_TYPE_Q5_K: f(qd_block<GGML_TYPE_Q5_K>{}); return true;
        case GGML_TYPE_Q6_K: f(qd_block<GGML_TYPE_Q6_K>{}); return true;
        case GGML_TYPE_IQ4_NL: f(qd_block<GGML_TYPE_IQ4_NL>{}); return true;
        case GGML_TYPE_IQ4_XS: f(qd_block<GGML_TYPE_IQ4_XS>{}); return true;
        case GGML_TYPE_MXFP4: f(qd_block<GGML_TYPE_MXFP4>{}); return true;
        default: return false;
    }
}

// Run s of the block at b as 32 floats, bit-exact with ggml's dequantization.
template <typename B> QD_HD void qd_run_to_f32(const uint8_t * b, int s, float * y) {
    qd_wq w;
    B::run(b, s, w);
    qd_wq_to_f32<B::has_m>(w, y);
}
