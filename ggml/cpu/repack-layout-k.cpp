// The interleaved layouts of repack.h of the 256-element formats (Q2_K … Q6_K, IQ4_XS): each
// block's codes decoded into one byte per element and its scales into plain integers, then
// written in the other layout.
#include "repack-format.h"

#include "ggml/quants.h"

#include <cstring>

namespace {

// ---- one block's codes and scales, independent of either layout ----

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

using fmt_q4_K = ggml_repack_format<block_q4_K, q4_K_codes, q4_K_decode, q4_K_encode, q4_K_put, q4_K_get,
                               ggml_repack_q4_K_group_bytes, QK_K>;
using fmt_q5_K = ggml_repack_format<block_q5_K, q5_K_codes, q5_K_decode, q5_K_encode, q5_K_put, q5_K_get,
                               ggml_repack_q5_K_group_bytes, QK_K>;
using fmt_iq4_xs = ggml_repack_format<block_iq4_xs, iq4_xs_codes, iq4_xs_decode, iq4_xs_encode, iq4_xs_put, iq4_xs_get,
                                 ggml_repack_iq4_xs_group_bytes, QK_K>;
using fmt_q2_K = ggml_repack_format<block_q2_K, q2_K_codes, q2_K_decode, q2_K_encode, q2_K_put, q2_K_get,
                               ggml_repack_q2_K_group_bytes, QK_K>;
using fmt_q3_K = ggml_repack_format<block_q3_K, q3_K_codes, q3_K_decode, q3_K_encode, q3_K_put, q3_K_get,
                               ggml_repack_q3_K_group_bytes, QK_K>;
using fmt_q6_K = ggml_repack_format<block_q6_K, q6_K_codes, q6_K_decode, q6_K_encode, q6_K_put, q6_K_get,
                               ggml_repack_q6_K_group_bytes, QK_K>;

}  // namespace

bool ggml_repack_k_pack(ggml_type t, int64_t k, int64_t m, const void * src, size_t lds, void * dst) {
    switch (t) {
        case GGML_TYPE_Q2_K: fmt_q2_K::pack(k, m, src, lds, dst); return true;
        case GGML_TYPE_Q3_K: fmt_q3_K::pack(k, m, src, lds, dst); return true;
        case GGML_TYPE_Q4_K: fmt_q4_K::pack(k, m, src, lds, dst); return true;
        case GGML_TYPE_Q5_K: fmt_q5_K::pack(k, m, src, lds, dst); return true;
        case GGML_TYPE_Q6_K: fmt_q6_K::pack(k, m, src, lds, dst); return true;
        case GGML_TYPE_IQ4_XS: fmt_iq4_xs::pack(k, m, src, lds, dst); return true;
        default: return false;
    }
}

bool ggml_repack_k_unpack(ggml_type t, int64_t k, int64_t m, const void * src, void * dst, size_t ldd) {
    switch (t) {
        case GGML_TYPE_Q2_K: fmt_q2_K::unpack(k, m, src, dst, ldd); return true;
        case GGML_TYPE_Q3_K: fmt_q3_K::unpack(k, m, src, dst, ldd); return true;
        case GGML_TYPE_Q4_K: fmt_q4_K::unpack(k, m, src, dst, ldd); return true;
        case GGML_TYPE_Q5_K: fmt_q5_K::unpack(k, m, src, dst, ldd); return true;
        case GGML_TYPE_Q6_K: fmt_q6_K::unpack(k, m, src, dst, ldd); return true;
        case GGML_TYPE_IQ4_XS: fmt_iq4_xs::unpack(k, m, src, dst, ldd); return true;
        default: return false;
    }
}
