// The interleaved weight layout of repack.h: sizes, and the conversions original rows <->
// groups of 16 rows. Each format goes through its codes: a block's codes are decoded into one
// byte per element (and its scales into plain integers), then written in the other layout.
#include "repack.h"

#include "ggml/quants.h"

static_assert(sizeof(block_iq4_nl) == sizeof(block_q4_0), "IQ4_NL repacks as Q4_0's bytes");

#include <cstring>
#include <type_traits>

namespace {

int64_t n_groups(int64_t m) { return (m + GGML_REPACK_ROWS - 1) / GGML_REPACK_ROWS; }

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

struct q4_K_codes {
    ggml_fp16_t d = 0, dmin = 0;
    uint8_t sc[8] = {}, mn[8] = {};
    uint8_t q[QK_K] = {};   // 0..15
};

struct q5_K_codes {
    q4_K_codes lo;            // scales, mins and the low 4 bits of each code
    uint8_t hi[QK_K] = {};    // the fifth bit
};

struct iq4_xs_codes {
    ggml_fp16_t d = 0;
    int8_t sc[8] = {};      // ls - 32, -32..31
    uint8_t q[QK_K] = {};   // 0..15, codebook indices
};

struct q2_K_codes {
    ggml_fp16_t d = 0, dmin = 0;
    uint8_t sm[16] = {};    // scale | min << 4 per 16 elements
    uint8_t q[QK_K] = {};   // 0..3
};

struct q3_K_codes {
    ggml_fp16_t d = 0;
    int8_t sc[16] = {};     // -32..31
    uint8_t q[QK_K] = {};   // 0..7 (value + 4)
};

struct q6_K_codes {
    ggml_fp16_t d = 0;
    int8_t sc[16] = {};
    uint8_t q[QK_K] = {};   // 0..63 (value + 32)
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

void q4_K_decode(const block_q4_K & b, q4_K_codes & c) {
    c.d = b.d;
    c.dmin = b.dmin;
    for (int j = 0; j < 8; ++j) {
        if (j < 4) {
            c.sc[j] = b.scales[j] & 63;
            c.mn[j] = b.scales[j + 4] & 63;
        } else {
            c.sc[j] = uint8_t((b.scales[j + 4] & 0xF) | ((b.scales[j - 4] >> 6) << 4));
            c.mn[j] = uint8_t((b.scales[j + 4] >> 4) | ((b.scales[j] >> 6) << 4));
        }
    }
    for (int t = 0; t < 4; ++t) {
        for (int l = 0; l < 32; ++l) {
            c.q[64 * t + l] = b.qs[32 * t + l] & 0xF;
            c.q[64 * t + 32 + l] = b.qs[32 * t + l] >> 4;
        }
    }
}

void q4_K_encode(const q4_K_codes & c, block_q4_K & b) {
    b.d = c.d;
    b.dmin = c.dmin;
    std::memset(b.scales, 0, sizeof b.scales);
    for (int j = 0; j < 8; ++j) {
        if (j < 4) {
            b.scales[j] |= c.sc[j] & 63;
            b.scales[j + 4] |= c.mn[j] & 63;
        } else {
            b.scales[j + 4] = uint8_t((c.sc[j] & 0xF) | ((c.mn[j] & 0xF) << 4));
            b.scales[j - 4] |= uint8_t((c.sc[j] >> 4) << 6);
            b.scales[j] |= uint8_t((c.mn[j] >> 4) << 6);
        }
    }
    for (int t = 0; t < 4; ++t) {
        for (int l = 0; l < 32; ++l) b.qs[32 * t + l] = uint8_t(c.q[64 * t + l] | (c.q[64 * t + 32 + l] << 4));
    }
}

// The low 4 bits and scales of Q5_K share Q4_K's layout and decoding.
void q5_K_decode(const block_q5_K & b, q5_K_codes & c) {
    block_q4_K low;
    low.d = b.d;
    low.dmin = b.dmin;
    std::memcpy(low.scales, b.scales, sizeof low.scales);
    std::memcpy(low.qs, b.qs, sizeof low.qs);
    q4_K_decode(low, c.lo);
    for (int t = 0; t < 4; ++t)
        for (int l = 0; l < 32; ++l) {
            c.hi[64 * t + l] = (b.qh[l] >> (2 * t)) & 1;
            c.hi[64 * t + 32 + l] = (b.qh[l] >> (2 * t + 1)) & 1;
        }
}

void q5_K_encode(const q5_K_codes & c, block_q5_K & b) {
    block_q4_K low;
    q4_K_encode(c.lo, low);
    b.d = low.d;
    b.dmin = low.dmin;
    std::memcpy(b.scales, low.scales, sizeof b.scales);
    std::memcpy(b.qs, low.qs, sizeof b.qs);
    std::memset(b.qh, 0, sizeof b.qh);
    for (int t = 0; t < 4; ++t)
        for (int l = 0; l < 32; ++l) {
            b.qh[l] |= uint8_t(c.hi[64 * t + l] << (2 * t));
            b.qh[l] |= uint8_t(c.hi[64 * t + 32 + l] << (2 * t + 1));
        }
}

void iq4_xs_decode(const block_iq4_xs & b, iq4_xs_codes & c) {
    c.d = b.d;
    for (int ib = 0; ib < 8; ++ib) {
        const int lo = (b.scales_l[ib / 2] >> (4 * (ib % 2))) & 0xF;
        const int hi = (b.scales_h >> (2 * ib)) & 3;
        c.sc[ib] = int8_t((lo | (hi << 4)) - 32);
        for (int l = 0; l < 16; ++l) {
            c.q[32 * ib + l] = b.qs[16 * ib + l] & 0xF;
            c.q[32 * ib + 16 + l] = b.qs[16 * ib + l] >> 4;
        }
    }
}

void iq4_xs_encode(const iq4_xs_codes & c, block_iq4_xs & b) {
    b.d = c.d;
    b.scales_h = 0;
    std::memset(b.scales_l, 0, sizeof b.scales_l);
    for (int ib = 0; ib < 8; ++ib) {
        const int ls = c.sc[ib] + 32;
        b.scales_l[ib / 2] |= uint8_t((ls & 0xF) << (4 * (ib % 2)));
        b.scales_h = uint16_t(b.scales_h | ((ls >> 4) << (2 * ib)));
        for (int l = 0; l < 16; ++l) b.qs[16 * ib + l] = uint8_t(c.q[32 * ib + l] | (c.q[32 * ib + 16 + l] << 4));
    }
}

void q2_K_decode(const block_q2_K & b, q2_K_codes & c) {
    c.d = b.d;
    c.dmin = b.dmin;
    std::memcpy(c.sm, b.scales, sizeof c.sm);
    for (int e = 0; e < QK_K; ++e) c.q[e] = uint8_t((b.qs[32 * (e / 128) + e % 32] >> (2 * ((e % 128) / 32))) & 3);
}

void q2_K_encode(const q2_K_codes & c, block_q2_K & b) {
    b.d = c.d;
    b.dmin = c.dmin;
    std::memcpy(b.scales, c.sm, sizeof b.scales);
    std::memset(b.qs, 0, sizeof b.qs);
    for (int e = 0; e < QK_K; ++e) b.qs[32 * (e / 128) + e % 32] |= uint8_t(c.q[e] << (2 * ((e % 128) / 32)));
}

void q3_K_decode(const block_q3_K & b, q3_K_codes & c) {
    c.d = b.d;
    for (int j = 0; j < 16; ++j) {
        const int lo = j < 8 ? (b.scales[j] & 0xF) : (b.scales[j - 8] >> 4);
        const int hi = (b.scales[8 + j % 4] >> (2 * (j / 4))) & 3;
        c.sc[j] = int8_t((lo | (hi << 4)) - 32);
    }
    for (int e = 0; e < QK_K; ++e) {
        const int lo = (b.qs[32 * (e / 128) + e % 32] >> (2 * ((e % 128) / 32))) & 3;
        const int hi = (b.hmask[e % 32] >> (e / 32)) & 1;
        c.q[e] = uint8_t(lo | (hi << 2));
    }
}

void q3_K_encode(const q3_K_codes & c, block_q3_K & b) {
    b.d = c.d;
    std::memset(b.scales, 0, sizeof b.scales);
    std::memset(b.qs, 0, sizeof b.qs);
    std::memset(b.hmask, 0, sizeof b.hmask);
    for (int j = 0; j < 16; ++j) {
        const int v = c.sc[j] + 32;
        b.scales[j % 8] |= uint8_t((v & 0xF) << (j < 8 ? 0 : 4));
        b.scales[8 + j % 4] |= uint8_t((v >> 4) << (2 * (j / 4)));
    }
    for (int e = 0; e < QK_K; ++e) {
        b.qs[32 * (e / 128) + e % 32] |= uint8_t((c.q[e] & 3) << (2 * ((e % 128) / 32)));
        b.hmask[e % 32] |= uint8_t((c.q[e] >> 2) << (e / 32));
    }
}

void q6_K_decode(const block_q6_K & b, q6_K_codes & c) {
    c.d = b.d;
    for (int j = 0; j < 16; ++j) c.sc[j] = b.scales[j];
    for (int h = 0; h < 2; ++h) {
        const uint8_t * ql = b.ql + 64 * h;
        const uint8_t * qh = b.qh + 32 * h;
        uint8_t * q = c.q + 128 * h;
        for (int l = 0; l < 32; ++l) {
            q[l] = uint8_t((ql[l] & 0xF) | (((qh[l] >> 0) & 3) << 4));
            q[l + 32] = uint8_t((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4));
            q[l + 64] = uint8_t((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4));
            q[l + 96] = uint8_t((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4));
        }
    }
}

void q6_K_encode(const q6_K_codes & c, block_q6_K & b) {
    b.d = c.d;
    for (int j = 0; j < 16; ++j) b.scales[j] = c.sc[j];
    for (int h = 0; h < 2; ++h) {
        uint8_t * ql = b.ql + 64 * h;
        uint8_t * qh = b.qh + 32 * h;
        const uint8_t * q = c.q + 128 * h;
        for (int l = 0; l < 32; ++l) {
            ql[l] = uint8_t((q[l] & 0xF) | ((q[l + 64] & 0xF) << 4));
            ql[l + 32] = uint8_t((q[l + 32] & 0xF) | ((q[l + 96] & 0xF) << 4));
            qh[l] = uint8_t((q[l] >> 4) | ((q[l + 32] >> 4) << 2) | ((q[l + 64] >> 4) << 4) | ((q[l + 96] >> 4) << 6));
        }
    }
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

// The 256 codes (0..15) of row r into the nibble vectors at qs: byte b of lane r of vector
// (t, s) holds element 64 t + 4 s + b (low nibble) and element 64 t + 32 + 4 s + b (high).
void q4_K_nibbles_put(const uint8_t * q, uint8_t * qs, int r) {
    for (int t = 0; t < 4; ++t)
        for (int s = 0; s < 8; ++s)
            for (int b = 0; b < 4; ++b) {
                const int e = 64 * t + 4 * s + b;
                qs[512 * t + 64 * s + 4 * r + b] = uint8_t(q[e] | (q[e + 32] << 4));
            }
}

void q4_K_nibbles_get(const uint8_t * qs, int r, uint8_t * q) {
    for (int t = 0; t < 4; ++t)
        for (int s = 0; s < 8; ++s)
            for (int b = 0; b < 4; ++b) {
                const int e = 64 * t + 4 * s + b;
                const uint8_t v = qs[512 * t + 64 * s + 4 * r + b];
                q[e] = v & 0xF;
                q[e + 32] = v >> 4;
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

void q4_K_put(const q4_K_codes * c, uint8_t * g) {
    for (int r = 0; r < 16; ++r) {
        std::memcpy(g + 2 * r, &c[r].d, 2);
        std::memcpy(g + ggml_repack_q4_K_dmin + 2 * r, &c[r].dmin, 2);
        for (int j = 0; j < 8; ++j) g[ggml_repack_q4_K_sc + 16 * j + r] = c[r].sc[j];
        for (int j = 0; j < 8; ++j) g[ggml_repack_q4_K_mn + 32 * (j / 2) + 2 * r + j % 2] = c[r].mn[j];
        q4_K_nibbles_put(c[r].q, g + ggml_repack_q4_K_qs, r);
    }
}

void q4_K_get(const uint8_t * g, q4_K_codes * c) {
    for (int r = 0; r < 16; ++r) {
        std::memcpy(&c[r].d, g + 2 * r, 2);
        std::memcpy(&c[r].dmin, g + ggml_repack_q4_K_dmin + 2 * r, 2);
        for (int j = 0; j < 8; ++j) c[r].sc[j] = g[ggml_repack_q4_K_sc + 16 * j + r];
        for (int j = 0; j < 8; ++j) c[r].mn[j] = g[ggml_repack_q4_K_mn + 32 * (j / 2) + 2 * r + j % 2];
        q4_K_nibbles_get(g + ggml_repack_q4_K_qs, r, c[r].q);
    }
}

// Q5_K: Q4_K's group block, then the fifth bits: byte b of lane r of vector (t, half), bit s,
// is the fifth bit of element 64 t + 32 half + 4 s + b.
void q5_K_put(const q5_K_codes * c, uint8_t * g) {
    q4_K_codes lo[16];
    for (int r = 0; r < 16; ++r) lo[r] = c[r].lo;
    q4_K_put(lo, g);
    std::memset(g + ggml_repack_q5_K_qh, 0, 512);
    for (int r = 0; r < 16; ++r)
        for (int t = 0; t < 4; ++t)
            for (int half = 0; half < 2; ++half)
                for (int s = 0; s < 8; ++s)
                    for (int b = 0; b < 4; ++b) {
                        const int e = 64 * t + 32 * half + 4 * s + b;
                        g[ggml_repack_q5_K_qh + 128 * t + 64 * half + 4 * r + b] |= uint8_t(c[r].hi[e] << s);
                    }
}

void q5_K_get(const uint8_t * g, q5_K_codes * c) {
    q4_K_codes lo[16];
    q4_K_get(g, lo);
    for (int r = 0; r < 16; ++r) {
        c[r].lo = lo[r];
        for (int t = 0; t < 4; ++t)
            for (int half = 0; half < 2; ++half)
                for (int s = 0; s < 8; ++s)
                    for (int b = 0; b < 4; ++b) {
                        const int e = 64 * t + 32 * half + 4 * s + b;
                        c[r].hi[e] = (g[ggml_repack_q5_K_qh + 128 * t + 64 * half + 4 * r + b] >> s) & 1;
                    }
    }
}

void iq4_xs_put(const iq4_xs_codes * c, uint8_t * g) {
    std::memset(g, 0, ggml_repack_iq4_xs_qs);
    for (int r = 0; r < 16; ++r) {
        std::memcpy(g + 2 * r, &c[r].d, 2);
        for (int j = 0; j < 8; ++j) g[ggml_repack_iq4_xs_sc + 16 * j + r] = uint8_t(c[r].sc[j]);
        q4_K_nibbles_put(c[r].q, g + ggml_repack_iq4_xs_qs, r);
    }
}

void iq4_xs_get(const uint8_t * g, iq4_xs_codes * c) {
    for (int r = 0; r < 16; ++r) {
        std::memcpy(&c[r].d, g + 2 * r, 2);
        for (int j = 0; j < 8; ++j) c[r].sc[j] = int8_t(g[ggml_repack_iq4_xs_sc + 16 * j + r]);
        q4_K_nibbles_get(g + ggml_repack_iq4_xs_qs, r, c[r].q);
    }
}

// Q2_K: per 64-element unit t, byte b of lane r of vector s holds codes (u, s, b) at bits 2u.
void q2_K_put(const q2_K_codes * c, uint8_t * g) {
    std::memset(g, 0, ggml_repack_q2_K_group_bytes);
    for (int r = 0; r < 16; ++r) {
        std::memcpy(g + 2 * r, &c[r].d, 2);
        std::memcpy(g + ggml_repack_q2_K_dmin + 2 * r, &c[r].dmin, 2);
        for (int j = 0; j < 16; ++j) g[ggml_repack_q2_K_sm + 32 * (j / 2) + 2 * r + j % 2] = c[r].sm[j];
        for (int t = 0; t < 4; ++t)
            for (int u = 0; u < 4; ++u)
                for (int s = 0; s < 4; ++s)
                    for (int b = 0; b < 4; ++b) {
                        const uint8_t q = c[r].q[64 * t + 16 * u + 4 * s + b];
                        g[ggml_repack_q2_K_qs + 256 * t + 64 * s + 4 * r + b] |= uint8_t(q << (2 * u));
                    }
    }
}

void q2_K_get(const uint8_t * g, q2_K_codes * c) {
    for (int r = 0; r < 16; ++r) {
        std::memcpy(&c[r].d, g + 2 * r, 2);
        std::memcpy(&c[r].dmin, g + ggml_repack_q2_K_dmin + 2 * r, 2);
        for (int j = 0; j < 16; ++j) c[r].sm[j] = g[ggml_repack_q2_K_sm + 32 * (j / 2) + 2 * r + j % 2];
        for (int t = 0; t < 4; ++t)
            for (int u = 0; u < 4; ++u)
                for (int s = 0; s < 4; ++s)
                    for (int b = 0; b < 4; ++b) {
                        const uint8_t v = g[ggml_repack_q2_K_qs + 256 * t + 64 * s + 4 * r + b];
                        c[r].q[64 * t + 16 * u + 4 * s + b] = uint8_t((v >> (2 * u)) & 3);
                    }
    }
}

// Q3_K: per 64-element unit t, byte b of lane r of low vector s holds the low 2 bits of the
// codes (u, s, b) at bits 2u; bit 4 (u % 2) + s of high vector u / 2 is bit 2 of code (u, s, b).
void q3_K_put(const q3_K_codes * c, uint8_t * g) {
    std::memset(g, 0, ggml_repack_q3_K_group_bytes);
    for (int r = 0; r < 16; ++r) {
        std::memcpy(g + 2 * r, &c[r].d, 2);
        for (int j = 0; j < 16; ++j) g[ggml_repack_q3_K_sc + 32 * (j / 2) + 2 * r + j % 2] = uint8_t(c[r].sc[j]);
        for (int t = 0; t < 4; ++t) {
            uint8_t * unit = g + ggml_repack_q3_K_qs + ggml_repack_q3_K_unit * t;
            for (int u = 0; u < 4; ++u)
                for (int s = 0; s < 4; ++s)
                    for (int b = 0; b < 4; ++b) {
                        const uint8_t q = c[r].q[64 * t + 16 * u + 4 * s + b];
                        unit[64 * s + 4 * r + b] |= uint8_t((q & 3) << (2 * u));
                        unit[256 + 64 * (u / 2) + 4 * r + b] |= uint8_t((q >> 2) << (4 * (u % 2) + s));
                    }
        }
    }
}

void q3_K_get(const uint8_t * g, q3_K_codes * c) {
    for (int r = 0; r < 16; ++r) {
        std::memcpy(&c[r].d, g + 2 * r, 2);
        for (int j = 0; j < 16; ++j) c[r].sc[j] = int8_t(g[ggml_repack_q3_K_sc + 32 * (j / 2) + 2 * r + j % 2]);
        for (int t = 0; t < 4; ++t) {
            const uint8_t * unit = g + ggml_repack_q3_K_qs + ggml_repack_q3_K_unit * t;
            for (int u = 0; u < 4; ++u)
                for (int s = 0; s < 4; ++s)
                    for (int b = 0; b < 4; ++b) {
                        const int lo = (unit[64 * s + 4 * r + b] >> (2 * u)) & 3;
                        const int hi = (unit[256 + 64 * (u / 2) + 4 * r + b] >> (4 * (u % 2) + s)) & 1;
                        c[r].q[64 * t + 16 * u + 4 * s + b] = uint8_t(lo | (hi << 2));
                    }
        }
    }
}

// Byte offsets of the low-nibble vector (v, s) and the high-bits vector s of a Q6_K unit.
size_t q6_K_lo(int v, int s) { return size_t(64 * (4 * v + s)); }
size_t q6_K_hi(int s) { return size_t(512 + 64 * s); }

void q6_K_put(const q6_K_codes * c, uint8_t * g) {
    std::memset(g, 0, ggml_repack_q6_K_group_bytes);
    for (int r = 0; r < 16; ++r) {
        std::memcpy(g + 2 * r, &c[r].d, 2);
        for (int j = 0; j < 16; ++j) g[ggml_repack_q6_K_sc + 32 * (j / 2) + 2 * r + j % 2] = uint8_t(c[r].sc[j]);
        for (int t = 0; t < 4; ++t) {
            uint8_t * unit = g + ggml_repack_q6_K_qs + ggml_repack_q6_K_unit * t;
            for (int u = 0; u < 4; ++u)
                for (int s = 0; s < 4; ++s)
                    for (int b = 0; b < 4; ++b) {
                        const uint8_t q = c[r].q[64 * t + 16 * u + 4 * s + b];
                        unit[q6_K_lo(u % 2, s) + 4 * r + b] |= uint8_t((q & 0xF) << (u < 2 ? 0 : 4));
                        unit[q6_K_hi(s) + 4 * r + b] |= uint8_t((q >> 4) << (2 * u));
                    }
        }
    }
}

void q6_K_get(const uint8_t * g, q6_K_codes * c) {
    for (int r = 0; r < 16; ++r) {
        std::memcpy(&c[r].d, g + 2 * r, 2);
        for (int j = 0; j < 16; ++j) c[r].sc[j] = int8_t(g[ggml_repack_q6_K_sc + 32 * (j / 2) + 2 * r + j % 2]);
        for (int t = 0; t < 4; ++t) {
            const uint8_t * unit = g + ggml_repack_q6_K_qs + ggml_repack_q6_K_unit * t;
            for (int u = 0; u < 4; ++u)
                for (int s = 0; s < 4; ++s)
                    for (int b = 0; b < 4; ++b) {
                        const uint8_t lo = uint8_t(unit[q6_K_lo(u % 2, s) + 4 * r + b] >> (u < 2 ? 0 : 4)) & 0xF;
                        const uint8_t hi = uint8_t(unit[q6_K_hi(s) + 4 * r + b] >> (2 * u)) & 3;
                        c[r].q[64 * t + 16 * u + 4 * s + b] = uint8_t(lo | (hi << 4));
                    }
        }
    }
}

// ---- whole matrices ----

// Per format: its block struct, codes struct and the four conversions.
template <typename Block, typename Codes, void (*decode)(const Block &, Codes &), void (*encode)(const Codes &, Block &),
          void (*put)(const Codes *, uint8_t *), void (*get)(const uint8_t *, Codes *), size_t group_bytes, int blck>
struct repack_format {
    static void pack(int64_t k, int64_t m, const void * src, size_t lds, void * dst) {
        const int64_t nb = k / blck;
        Codes c[GGML_REPACK_ROWS];
        uint8_t * out = static_cast<uint8_t *>(dst);
        for (int64_t gi = 0; gi < n_groups(m); ++gi) {
            for (int64_t b = 0; b < nb; ++b) {
                for (int r = 0; r < GGML_REPACK_ROWS; ++r) {
                    const int64_t row = gi * GGML_REPACK_ROWS + r;
                    c[r] = Codes{};
                    if (row < m) {
                        const Block * blocks = reinterpret_cast<const Block *>(static_cast<const uint8_t *>(src) + size_t(row) * lds);
                        decode(blocks[b], c[r]);
                    } else if constexpr (std::is_same_v<Codes, q8_0_codes>) {
                        std::memset(c[r].q, 0x80, sizeof c[r].q);  // code 0
                    }
                }
                put(c, out + (size_t(gi) * size_t(nb) + size_t(b)) * group_bytes);
            }
        }
    }
    static void unpack(int64_t k, int64_t m, const void * src, void * dst, size_t ldd) {
        const int64_t nb = k / blck;
        Codes c[GGML_REPACK_ROWS];
        const uint8_t * in = static_cast<const uint8_t *>(src);
        for (int64_t gi = 0; gi < n_groups(m); ++gi) {
            for (int64_t b = 0; b < nb; ++b) {
                get(in + (size_t(gi) * size_t(nb) + size_t(b)) * group_bytes, c);
                for (int r = 0; r < GGML_REPACK_ROWS; ++r) {
                    const int64_t row = gi * GGML_REPACK_ROWS + r;
                    if (row >= m) break;
                    Block * blocks = reinterpret_cast<Block *>(static_cast<uint8_t *>(dst) + size_t(row) * ldd);
                    encode(c[r], blocks[b]);
                }
            }
        }
    }
};

using fmt_q8_0 = repack_format<block_q8_0, q8_0_codes, q8_0_decode, q8_0_encode, q8_0_put, q8_0_get,
                               ggml_repack_q8_0_group_bytes, QK8_0>;
using fmt_q4_0 = repack_format<block_q4_0, q4_0_codes, q4_0_decode, q4_0_encode, q4_0_put, q4_0_get,
                               ggml_repack_q4_0_group_bytes, QK4_0>;
using fmt_q5_0 = repack_format<block_q5_0, q5_0_codes, q5_0_decode, q5_0_encode, q5_0_put, q5_0_get,
                               ggml_repack_q5_0_group_bytes, QK5_0>;
using fmt_q4_1 = repack_format<block_q4_1, q4_1_codes, q4_1_decode, q4_1_encode, q4_1_put, q4_1_get,
                               ggml_repack_q4_1_group_bytes, QK4_1>;
using fmt_mxfp4 = repack_format<block_mxfp4, mxfp4_codes, mxfp4_decode, mxfp4_encode, mxfp4_put, mxfp4_get,
                                ggml_repack_mxfp4_group_bytes, QK_MXFP4>;
using fmt_q4_K = repack_format<block_q4_K, q4_K_codes, q4_K_decode, q4_K_encode, q4_K_put, q4_K_get,
                               ggml_repack_q4_K_group_bytes, QK_K>;
using fmt_q5_K = repack_format<block_q5_K, q5_K_codes, q5_K_decode, q5_K_encode, q5_K_put, q5_K_get,
                               ggml_repack_q5_K_group_bytes, QK_K>;
using fmt_iq4_xs = repack_format<block_iq4_xs, iq4_xs_codes, iq4_xs_decode, iq4_xs_encode, iq4_xs_put, iq4_xs_get,
                                 ggml_repack_iq4_xs_group_bytes, QK_K>;
using fmt_q2_K = repack_format<block_q2_K, q2_K_codes, q2_K_decode, q2_K_encode, q2_K_put, q2_K_get,
                               ggml_repack_q2_K_group_bytes, QK_K>;
using fmt_q3_K = repack_format<block_q3_K, q3_K_codes, q3_K_decode, q3_K_encode, q3_K_put, q3_K_get,
                               ggml_repack_q3_K_group_bytes, QK_K>;
using fmt_q6_K = repack_format<block_q6_K, q6_K_codes, q6_K_decode, q6_K_encode, q6_K_put, q6_K_get,
                               ggml_repack_q6_K_group_bytes, QK_K>;

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
    return ggml_repack_row_bytes(t, k) * size_t(n_groups(m) * GGML_REPACK_ROWS);
}

void ggml_repack_pack(ggml_type t, int64_t k, int64_t m, const void * src, size_t lds, void * dst) {
    switch (t) {
        case GGML_TYPE_Q8_0: fmt_q8_0::pack(k, m, src, lds, dst); break;
        case GGML_TYPE_Q4_0:
        case GGML_TYPE_IQ4_NL: fmt_q4_0::pack(k, m, src, lds, dst); break;  // the same block bytes
        case GGML_TYPE_Q4_K: fmt_q4_K::pack(k, m, src, lds, dst); break;
        case GGML_TYPE_Q5_K: fmt_q5_K::pack(k, m, src, lds, dst); break;
        case GGML_TYPE_Q6_K: fmt_q6_K::pack(k, m, src, lds, dst); break;
        case GGML_TYPE_IQ4_XS: fmt_iq4_xs::pack(k, m, src, lds, dst); break;
        case GGML_TYPE_Q5_0: fmt_q5_0::pack(k, m, src, lds, dst); break;
        case GGML_TYPE_Q4_1: fmt_q4_1::pack(k, m, src, lds, dst); break;
        case GGML_TYPE_MXFP4: fmt_mxfp4::pack(k, m, src, lds, dst); break;
        case GGML_TYPE_Q3_K: fmt_q3_K::pack(k, m, src, lds, dst); break;
        case GGML_TYPE_Q2_K: fmt_q2_K::pack(k, m, src, lds, dst); break;
        default: GGML_ASSERT(false && "type without a repacked layout");
    }
}

void ggml_repack_unpack(ggml_type t, int64_t k, int64_t m, const void * src, void * dst, size_t ldd) {
    switch (t) {
        case GGML_TYPE_Q8_0: fmt_q8_0::unpack(k, m, src, dst, ldd); break;
        case GGML_TYPE_Q4_0:
        case GGML_TYPE_IQ4_NL: fmt_q4_0::unpack(k, m, src, dst, ldd); break;
        case GGML_TYPE_Q4_K: fmt_q4_K::unpack(k, m, src, dst, ldd); break;
        case GGML_TYPE_Q5_K: fmt_q5_K::unpack(k, m, src, dst, ldd); break;
        case GGML_TYPE_Q6_K: fmt_q6_K::unpack(k, m, src, dst, ldd); break;
        case GGML_TYPE_IQ4_XS: fmt_iq4_xs::unpack(k, m, src, dst, ldd); break;
        case GGML_TYPE_Q5_0: fmt_q5_0::unpack(k, m, src, dst, ldd); break;
        case GGML_TYPE_Q4_1: fmt_q4_1::unpack(k, m, src, dst, ldd); break;
        case GGML_TYPE_MXFP4: fmt_mxfp4::unpack(k, m, src, dst, ldd); break;
        case GGML_TYPE_Q3_K: fmt_q3_K::unpack(k, m, src, dst, ldd); break;
        case GGML_TYPE_Q2_K: fmt_q2_K::unpack(k, m, src, dst, ldd); break;
        default: GGML_ASSERT(false && "type without a repacked layout");
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

const ggml_repack_kernels & ggml_repack_kernels_for(ggml_cpu_isa isa) {
    switch (isa) {
        case ggml_cpu_isa::avx512: return ggml_repack_kernels_avx512;
        case ggml_cpu_isa::avx2: return ggml_repack_kernels_avx2;
        default: return ggml_repack_kernels_scalar;
    }
}
