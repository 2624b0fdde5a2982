// The interleaved weight layout of repack.h: sizes, and the conversions original rows <->
// groups of 16 rows (the 256-element formats in repack-layout-k.cpp). Each format goes through
// its codes: a block's codes are decoded into one byte per element (and its scales into plain
// integers), then written in the other layout.
#include "repack-format.h"

#include "ggml/quants.h"

static_assert(sizeof(block_iq4_nl) == sizeof(block_q4_0), "IQ4_NL repacks as Q4_0's bytes");

#include <cstring>

namespace {

// ---- one block's codes and scales, independent of either layout ----

struct q8_0_codes {
    ggml_fp16_t d = 0;
    uint8_t q[QK8_0] = {};  // code + 128
};

struct q4_0_codes {
    ggml_fp16_t d = 0;
    uint8_t q[QK4_0] = {};  // 0..15
};

struct q5_0_codes {
    ggml_fp16_t d = 0;
    uint8_t q[QK5_0] = {};  // 0..31
};

// Q4_1: the codes (0..15) and d of Q4_0, and the min.
struct q4_1_codes {
    ggml_fp16_t m = 0;
    q4_0_codes c;
};

struct mxfp4_codes {
    uint8_t e = 0;
    uint8_t q[QK_MXFP4] = {};  // 0..15
};

void q8_0_decode(const block_q8_0 & b, q8_0_codes & c) {
    c.d = b.d;
    for (int i = 0; i < QK8_0; ++i) c.q[i] = uint8_t(b.qs[i]) ^ 0x80;
}

void q8_0_encode(const q8_0_codes & c, block_q8_0 & b) {
    b.d = c.d;
    for (int i = 0; i < QK8_0; ++i) b.qs[i] = int8_t(c.q[i] ^ 0x80);
}

void q4_0_decode(const block_q4_0 & b, q4_0_codes & c) {
    c.d = b.d;
    for (int i = 0; i < QK4_0 / 2; ++i) {
        c.q[i] = b.qs[i] & 0xF;
        c.q[i + QK4_0 / 2] = b.qs[i] >> 4;
    }
}

void q4_0_encode(const q4_0_codes & c, block_q4_0 & b) {
    b.d = c.d;
    for (int i = 0; i < QK4_0 / 2; ++i) b.qs[i] = uint8_t(c.q[i] | (c.q[i + QK4_0 / 2] << 4));
}

void q5_0_decode(const block_q5_0 & b, q5_0_codes & c) {
    c.d = b.d;
    uint32_t h;
    std::memcpy(&h, b.qh, sizeof h);
    for (int i = 0; i < QK5_0 / 2; ++i) {
        c.q[i] = uint8_t((b.qs[i] & 0xF) | (((h >> i) & 1) << 4));
        c.q[i + QK5_0 / 2] = uint8_t((b.qs[i] >> 4) | (((h >> (i + QK5_0 / 2)) & 1) << 4));
    }
}

void q5_0_encode(const q5_0_codes & c, block_q5_0 & b) {
    b.d = c.d;
    uint32_t h = 0;
    for (int i = 0; i < QK5_0 / 2; ++i) {
        b.qs[i] = uint8_t((c.q[i] & 0xF) | ((c.q[i + QK5_0 / 2] & 0xF) << 4));
        h |= uint32_t(c.q[i] >> 4) << i;
        h |= uint32_t(c.q[i + QK5_0 / 2] >> 4) << (i + QK5_0 / 2);
    }
    std::memcpy(b.qh, &h, sizeof h);
}

void q4_1_decode(const block_q4_1 & b, q4_1_codes & c) {
    block_q4_0 x;
    x.d = b.d;
    std::memcpy(x.qs, b.qs, sizeof x.qs);
    q4_0_decode(x, c.c);
    c.m = b.m;
}

void q4_1_encode(const q4_1_codes & c, block_q4_1 & b) {
    block_q4_0 x;
    q4_0_encode(c.c, x);
    b.d = x.d;
    b.m = c.m;
    std::memcpy(b.qs, x.qs, sizeof b.qs);
}

void mxfp4_decode(const block_mxfp4 & b, mxfp4_codes & c) {
    c.e = b.e;
    for (int i = 0; i < QK_MXFP4 / 2; ++i) {
        c.q[i] = b.qs[i] & 0xF;
        c.q[i + QK_MXFP4 / 2] = b.qs[i] >> 4;
    }
}

void mxfp4_encode(const mxfp4_codes & c, block_mxfp4 & b) {
    b.e = c.e;
    for (int i = 0; i < QK_MXFP4 / 2; ++i) b.qs[i] = uint8_t(c.q[i] | (c.q[i + QK_MXFP4 / 2] << 4));
}

// ---- group blocks: 16 rows' codes <-> the interleaved bytes ----

void q8_0_put(const q8_0_codes * c, uint8_t * g) {
    for (int r = 0; r < 16; ++r) std::memcpy(g + 2 * r, &c[r].d, 2);
    for (int s = 0; s < 8; ++s)
        for (int r = 0; r < 16; ++r) std::memcpy(g + ggml_repack_q8_0_qs + 64 * s + 4 * r, c[r].q + 4 * s, 4);
}

void q8_0_get(const uint8_t * g, q8_0_codes * c) {
    for (int r = 0; r < 16; ++r) std::memcpy(&c[r].d, g + 2 * r, 2);
    for (int s = 0; s < 8; ++s)
        for (int r = 0; r < 16; ++r) std::memcpy(c[r].q + 4 * s, g + ggml_repack_q8_0_qs + 64 * s + 4 * r, 4);
}

void q4_0_put(const q4_0_codes * c, uint8_t * g) {
    for (int r = 0; r < 16; ++r) {
        std::memcpy(g + 2 * r, &c[r].d, 2);
        for (int s = 0; s < 4; ++s)
            for (int b = 0; b < 4; ++b) {
                g[ggml_repack_q4_0_qs + 64 * s + 4 * r + b] = uint8_t(c[r].q[4 * s + b] | (c[r].q[16 + 4 * s + b] << 4));
            }
    }
}

void q4_0_get(const uint8_t * g, q4_0_codes * c) {
    for (int r = 0; r < 16; ++r) {
        std::memcpy(&c[r].d, g + 2 * r, 2);
        for (int s = 0; s < 4; ++s)
            for (int b = 0; b < 4; ++b) {
                const uint8_t v = g[ggml_repack_q4_0_qs + 64 * s + 4 * r + b];
                c[r].q[4 * s + b] = v & 0xF;
                c[r].q[16 + 4 * s + b] = v >> 4;
            }
    }
}

// Q5_0: Q4_0's group block of the low 4 bits, then one vector of fifth bits: bit s of byte b
// of lane r is the fifth bit of element 4 s + b.
void q5_0_put(const q5_0_codes * c, uint8_t * g) {
    q4_0_codes lo[16];
    for (int r = 0; r < 16; ++r) {
        lo[r].d = c[r].d;
        for (int e = 0; e < QK5_0; ++e) lo[r].q[e] = c[r].q[e] & 0xF;
    }
    q4_0_put(lo, g);
    std::memset(g + ggml_repack_q5_0_qh, 0, 64);
    for (int r = 0; r < 16; ++r)
        for (int e = 0; e < QK5_0; ++e) g[ggml_repack_q5_0_qh + 4 * r + e % 4] |= uint8_t((c[r].q[e] >> 4) << (e / 4));
}

void q5_0_get(const uint8_t * g, q5_0_codes * c) {
    q4_0_codes lo[16];
    q4_0_get(g, lo);
    for (int r = 0; r < 16; ++r) {
        c[r].d = lo[r].d;
        for (int e = 0; e < QK5_0; ++e) {
            const int hi = (g[ggml_repack_q5_0_qh + 4 * r + e % 4] >> (e / 4)) & 1;
            c[r].q[e] = uint8_t(lo[r].q[e] | (hi << 4));
        }
    }
}

// Q4_1: the 16 mins, then Q4_0's group block.
void q4_1_put(const q4_1_codes * c, uint8_t * g) {
    q4_0_codes inner[16];
    for (int r = 0; r < 16; ++r) {
        std::memcpy(g + 2 * r, &c[r].m, 2);
        inner[r] = c[r].c;
    }
    q4_0_put(inner, g + ggml_repack_q4_1_inner);
}

void q4_1_get(const uint8_t * g, q4_1_codes * c) {
    q4_0_codes inner[16];
    q4_0_get(g + ggml_repack_q4_1_inner, inner);
    for (int r = 0; r < 16; ++r) {
        std::memcpy(&c[r].m, g + 2 * r, 2);
        c[r].c = inner[r];
    }
}

// MXFP4: the 16 exponents, then the nibbles as in Q4_0's group block.
void mxfp4_put(const mxfp4_codes * c, uint8_t * g) {
    for (int r = 0; r < 16; ++r) {
        g[r] = c[r].e;
        for (int s = 0; s < 4; ++s)
            for (int b = 0; b < 4; ++b) {
                g[ggml_repack_mxfp4_qs + 64 * s + 4 * r + b] = uint8_t(c[r].q[4 * s + b] | (c[r].q[16 + 4 * s + b] << 4));
            }
    }
}

void mxfp4_get(const uint8_t * g, mxfp4_codes * c) {
    for (int r = 0; r < 16; ++r) {
        c[r].e = g[r];
        for (int s = 0; s < 4; ++s)
            for (int b = 0; b < 4; ++b) {
                const uint8_t v = g[ggml_repack_mxfp4_qs + 64 * s + 4 * r + b];
                c[r].q[4 * s + b] = v & 0xF;
                c[r].q[16 + 4 * s + b] = v >> 4;
            }
    }
}

// ---- whole matrices ----

using fmt_q8_0 = ggml_repack_format<block_q8_0, q8_0_codes, q8_0_decode, q8_0_encode, q8_0_put, q8_0_get,
                                    ggml_repack_q8_0_group_bytes, QK8_0, 0x80>;
using fmt_q4_0 = ggml_repack_format<block_q4_0, q4_0_codes, q4_0_decode, q4_0_encode, q4_0_put, q4_0_get,
                               ggml_repack_q4_0_group_bytes, QK4_0>;
using fmt_q5_0 = ggml_repack_format<block_q5_0, q5_0_codes, q5_0_decode, q5_0_encode, q5_0_put, q5_0_get,
                               ggml_repack_q5_0_group_bytes, QK5_0>;
using fmt_q4_1 = ggml_repack_format<block_q4_1, q4_1_codes, q4_1_decode, q4_1_encode, q4_1_put, q4_1_get,
                               ggml_repack_q4_1_group_bytes, QK4_1>;
using fmt_mxfp4 = ggml_repack_format<block_mxfp4, mxfp4_codes, mxfp4_decode, mxfp4_encode, mxfp4_put, mxfp4_get,
                                ggml_repack_mxfp4_group_bytes, QK_MXFP4>;
size_t group_bytes_of(ggml_type t) {
    switch (t) {
        case GGML_TYPE_Q8_0: return ggml_repack_q8_0_group_bytes;
        case GGML_TYPE_Q4_0:
        case GGML_TYPE_IQ4_NL: return ggml_repack_q4_0_group_bytes;
        case GGML_TYPE_Q4_K: return ggml_repack_q4_K_group_bytes;
        case GGML_TYPE_Q5_K: return ggml_repack_q5_K_group_bytes;
        case GGML_TYPE_Q6_K: return ggml_repack_q6_K_group_bytes;
        case GGML_TYPE_IQ4_XS: return ggml_repack_iq4_xs_group_bytes;
        case GGML_TYPE_Q5_0: return ggml_repack_q5_0_group_bytes;
        case GGML_TYPE_Q4_1: return ggml_repack_q4_1_group_bytes;
        case GGML_TYPE_MXFP4: return ggml_repack_mxfp4_group_bytes;
        case GGML_TYPE_Q3_K: return ggml_repack_q3_K_group_bytes;
        case GGML_TYPE_Q2_K: return ggml_repack_q2_K_group_bytes;
        default: return 0;
    }
}

}  // namespace

bool ggml_repack_type_supported(ggml_type t) { return group_bytes_of(t) != 0; }

size_t ggml_repack_row_bytes(ggml_type t, int64_t k) {
    return group_bytes_of(t) / GGML_REPACK_ROWS * size_t(k / ggml_blck_size(t));
}

size_t ggml_repack_size(ggml_type t, int64_t k, int64_t m) {
    return ggml_repack_row_bytes(t, k) * size_t(ggml_repack_n_groups(m) * GGML_REPACK_ROWS);
}

void ggml_repack_pack(ggml_type t, int64_t k, int64_t m, const void * src, size_t lds, void * dst) {
    switch (t) {
        case GGML_TYPE_Q8_0: fmt_q8_0::pack(k, m, src, lds, dst); break;
        case GGML_TYPE_Q4_0:
        case GGML_TYPE_IQ4_NL: fmt_q4_0::pack(k, m, src, lds, dst); break;  // the same block bytes
        case GGML_TYPE_Q5_0: fmt_q5_0::pack(k, m, src, lds, dst); break;
        case GGML_TYPE_Q4_1: fmt_q4_1::pack(k, m, src, lds, dst); break;
        case GGML_TYPE_MXFP4: fmt_mxfp4::pack(k, m, src, lds, dst); break;
        default:
            if (!ggml_repack_k_pack(t, k, m, src, lds, dst)) GGML_ABORT("type without a repacked layout");
    }
}

void ggml_repack_unpack(ggml_type t, int64_t k, int64_t m, const void * src, void * dst, size_t ldd) {
    switch (t) {
        case GGML_TYPE_Q8_0: fmt_q8_0::unpack(k, m, src, dst, ldd); break;
        case GGML_TYPE_Q4_0:
        case GGML_TYPE_IQ4_NL: fmt_q4_0::unpack(k, m, src, dst, ldd); break;
        case GGML_TYPE_Q5_0: fmt_q5_0::unpack(k, m, src, dst, ldd); break;
        case GGML_TYPE_Q4_1: fmt_q4_1::unpack(k, m, src, dst, ldd); break;
        case GGML_TYPE_MXFP4: fmt_mxfp4::unpack(k, m, src, dst, ldd); break;
        default:
            if (!ggml_repack_k_unpack(t, k, m, src, dst, ldd)) GGML_ABORT("type without a repacked layout");
    }
}

ggml_type ggml_repack_act_type(ggml_type t) {
    switch (t) {
        case GGML_TYPE_Q8_0:
        case GGML_TYPE_Q4_0:
        case GGML_TYPE_Q5_0:
        case GGML_TYPE_MXFP4:
        case GGML_TYPE_IQ4_NL: return GGML_TYPE_Q8_0;
        case GGML_TYPE_Q4_1: return GGML_TYPE_Q8_1;
        default: return GGML_TYPE_Q8_K;
    }
}

size_t ggml_repack_act_row_bytes(ggml_type t, int64_t k) {
    const ggml_type at = ggml_repack_act_type(t);
    size_t bytes = ggml_row_size(at, k);
    if (at == GGML_TYPE_Q8_0) bytes += size_t(k / QK8_0) * sizeof(int32_t);
    return bytes;
}

void ggml_repack_q8_0_sums(void * row, int64_t k) {
    const int64_t nb = k / QK8_0;
    const block_q8_0 * blocks = static_cast<const block_q8_0 *>(row);
    uint8_t * sums = static_cast<uint8_t *>(row) + size_t(nb) * sizeof(block_q8_0);
    for (int64_t b = 0; b < nb; ++b) {
        int32_t s = 0;
        for (int i = 0; i < QK8_0; ++i) s += blocks[b].qs[i];
        s *= -128;
        std::memcpy(sums + size_t(b) * sizeof(int32_t), &s, sizeof s);
    }
}

void ggml_repack_q8_K_pair_sums(void * row, int64_t k) {
    block_q8_K * blocks = static_cast<block_q8_K *>(row);
    for (int64_t b = 0; b < k / QK_K; ++b) {
        int16_t * s = blocks[b].bsums;
        for (int j = 0; j < QK_K / 32; ++j) s[j] = int16_t(s[2 * j] + s[2 * j + 1]);  // |sum| <= 32 * 128
        for (int j = QK_K / 32; j < QK_K / 16; ++j) s[j] = 0;
    }
}

const ggml_repack_kernels & ggml_repack_kernels_for(ggml_cpu_isa isa) {
    switch (isa) {
        case ggml_cpu_isa::amx:
        case ggml_cpu_isa::avx512: return ggml_repack_kernels_avx512;
        case ggml_cpu_isa::avx2: return ggml_repack_kernels_avx2;
        default: return ggml_repack_kernels_scalar;
    }
}
