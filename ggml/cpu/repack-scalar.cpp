// Repacked-weight dot kernels, plain C++: read the interleaved layout of repack.h one row and
// one column at a time (the reference for the SIMD paths, and the scalar ISA path).
#include "repack.h"

#include "ggml/quants.h"

#include <algorithm>
#include <cstring>

namespace {

float f16_at(const uint8_t * p, int r) {
    ggml_fp16_t h;
    std::memcpy(&h, p + 2 * r, 2);
    return ggml_fp16_to_fp32(h);
}

// One group of 16 rows (nr of them written) against nc columns; row_fn(gb, r, col) gives
// the dot product of row r of the group with one activation column.
template <typename RowFn>
void repack_scalar_run(int64_t nr, size_t lda, const void * a, const void * b, size_t ldb, int64_t nc, float * y,
                       int64_t ldy, RowFn row_fn) {
    for (int64_t r0 = 0; r0 < nr; r0 += GGML_REPACK_ROWS) {
        const uint8_t * gb = static_cast<const uint8_t *>(a) + size_t(r0) * lda;
        const int64_t rows = std::min<int64_t>(GGML_REPACK_ROWS, nr - r0);
        for (int64_t c = 0; c < nc; ++c) {
            const uint8_t * col = static_cast<const uint8_t *>(b) + size_t(c) * ldb;
            for (int64_t r = 0; r < rows; ++r) y[c * ldy + r0 + r] = row_fn(gb, int(r), col);
        }
    }
}

void dot_q8_0_scalar(int64_t k, const void * a, size_t lda, int64_t nr, const void * b, size_t ldb, int64_t nc,
                     float * y, int64_t ldy) {
    const int64_t nb = k / QK8_0;
    repack_scalar_run(nr, lda, a, b, ldb, nc, y, ldy, [nb](const uint8_t * gb, int r, const uint8_t * col) {
        const block_q8_0 * act = reinterpret_cast<const block_q8_0 *>(col);
        const uint8_t * sums = col + size_t(nb) * sizeof(block_q8_0);
        float sum = 0.0f;
        for (int64_t i = 0; i < nb; ++i) {
            const uint8_t * g = gb + size_t(i) * ggml_repack_q8_0_group_bytes;
            int32_t acc;
            std::memcpy(&acc, sums + size_t(i) * sizeof(int32_t), sizeof acc);
            for (int s = 0; s < 8; ++s)
                for (int e = 0; e < 4; ++e) acc += int32_t(g[ggml_repack_q8_0_qs + 64 * s + 4 * r + e]) * act[i].qs[4 * s + e];
            sum += f16_at(g, r) * ggml_fp16_to_fp32(act[i].d) * float(acc);
        }
        return sum;
    });
}

// Q4_0 (codes q + 8), IQ4_NL (NL: the nibbles index the codebook) and Q5_0 (HI: codes q + 16,
// their fifth bits in the vector after Q4_0's).
template <bool NL, bool HI = false>
void dot_q4_0_like_scalar(int64_t k, const void * a, size_t lda, int64_t nr, const void * b, size_t ldb, int64_t nc,
                          float * y, int64_t ldy) {
    constexpr size_t group_bytes = HI ? ggml_repack_q5_0_group_bytes : ggml_repack_q4_0_group_bytes;
    const int64_t nb = k / QK4_0;
    repack_scalar_run(nr, lda, a, b, ldb, nc, y, ldy, [nb](const uint8_t * gb, int r, const uint8_t * col) {
        const block_q8_0 * act = reinterpret_cast<const block_q8_0 *>(col);
        const uint8_t * sums = col + size_t(nb) * sizeof(block_q8_0);
        float sum = 0.0f;
        for (int64_t i = 0; i < nb; ++i) {
            const uint8_t * g = gb + size_t(i) * group_bytes;
            int32_t acc;
            std::memcpy(&acc, sums + size_t(i) * sizeof(int32_t), sizeof acc);
            acc = NL ? 0 : HI ? acc / 8 : acc / 16;  // -16 or -8 * sum of the activations
            for (int s = 0; s < 4; ++s)
                for (int e = 0; e < 4; ++e) {
                    const uint8_t v = g[ggml_repack_q4_0_qs + 64 * s + 4 * r + e];
                    int32_t lo = NL ? ggml_iq4nl_codebook[v & 0xF] : v & 0xF;
                    int32_t hi = NL ? ggml_iq4nl_codebook[v >> 4] : v >> 4;
                    if (HI) {
                        const uint8_t h = g[ggml_repack_q5_0_qh + 4 * r + e];
                        lo |= ((h >> s) & 1) << 4;
                        hi |= ((h >> (s + 4)) & 1) << 4;
                    }
                    acc += lo * act[i].qs[4 * s + e] + hi * act[i].qs[16 + 4 * s + e];
                }
            sum += f16_at(g, r) * ggml_fp16_to_fp32(act[i].d) * float(acc);
        }
        return sum;
    });
}

// Q4_1: Q4_0's group block after the mins, against Q8_1 activations: (d * d_b) * sum q * b +
// m * s_b per block, as the plain kernel.
void dot_q4_1_scalar(int64_t k, const void * a, size_t lda, int64_t nr, const void * b, size_t ldb, int64_t nc,
                     float * y, int64_t ldy) {
    const int64_t nb = k / QK4_1;
    repack_scalar_run(nr, lda, a, b, ldb, nc, y, ldy, [nb](const uint8_t * gb, int r, const uint8_t * col) {
        const block_q8_1 * act = reinterpret_cast<const block_q8_1 *>(col);
        float sum = 0.0f;
        for (int64_t i = 0; i < nb; ++i) {
            const uint8_t * g = gb + size_t(i) * ggml_repack_q4_1_group_bytes;
            const uint8_t * in = g + ggml_repack_q4_1_inner;
            int32_t acc = 0;
            for (int s = 0; s < 4; ++s)
                for (int e = 0; e < 4; ++e) {
                    const uint8_t v = in[ggml_repack_q4_0_qs + 64 * s + 4 * r + e];
                    acc += (v & 0xF) * act[i].qs[4 * s + e] + (v >> 4) * act[i].qs[16 + 4 * s + e];
                }
            sum += (f16_at(in, r) * ggml_fp16_to_fp32(act[i].d)) * float(acc) + f16_at(g, r) * ggml_fp16_to_fp32(act[i].s);
        }
        return sum;
    });
}

// MXFP4: the doubled E2M1 codebook against Q8_0, (d_b * sum) * 2^(e - 128) per block as the
// plain kernel.
void dot_mxfp4_scalar(int64_t k, const void * a, size_t lda, int64_t nr, const void * b, size_t ldb, int64_t nc,
                      float * y, int64_t ldy) {
    const int64_t nb = k / QK_MXFP4;
    repack_scalar_run(nr, lda, a, b, ldb, nc, y, ldy, [nb](const uint8_t * gb, int r, const uint8_t * col) {
        const block_q8_0 * act = reinterpret_cast<const block_q8_0 *>(col);
        float sum = 0.0f;
        for (int64_t i = 0; i < nb; ++i) {
            const uint8_t * g = gb + size_t(i) * ggml_repack_mxfp4_group_bytes;
            int32_t acc = 0;
            for (int s = 0; s < 4; ++s)
                for (int e = 0; e < 4; ++e) {
                    const uint8_t v = g[ggml_repack_mxfp4_qs + 64 * s + 4 * r + e];
                    acc += ggml_mxfp4_codebook[v & 0xF] * act[i].qs[4 * s + e] +
                           ggml_mxfp4_codebook[v >> 4] * act[i].qs[16 + 4 * s + e];
                }
            sum += (ggml_fp16_to_fp32(act[i].d) * float(acc)) * ggml_e8m0_to_fp32_half(g[r]);
        }
        return sum;
    });
}

void dot_q4_0_scalar(int64_t k, const void * a, size_t lda, int64_t nr, const void * b, size_t ldb, int64_t nc,
                     float * y, int64_t ldy) {
    dot_q4_0_like_scalar<false>(k, a, lda, nr, b, ldb, nc, y, ldy);
}

void dot_q5_0_scalar(int64_t k, const void * a, size_t lda, int64_t nr, const void * b, size_t ldb, int64_t nc,
                     float * y, int64_t ldy) {
    dot_q4_0_like_scalar<false, true>(k, a, lda, nr, b, ldb, nc, y, ldy);
}

void dot_iq4_nl_scalar(int64_t k, const void * a, size_t lda, int64_t nr, const void * b, size_t ldb, int64_t nc,
                       float * y, int64_t ldy) {
    dot_q4_0_like_scalar<true>(k, a, lda, nr, b, ldb, nc, y, ldy);
}

// Q4_K, and Q5_K (HI: the fifth bit of each code after Q4_K's group block).
template <bool HI>
void dot_q4_K_like_scalar(int64_t k, const void * a, size_t lda, int64_t nr, const void * b, size_t ldb, int64_t nc,
                          float * y, int64_t ldy) {
    constexpr size_t group_bytes = HI ? ggml_repack_q5_K_group_bytes : ggml_repack_q4_K_group_bytes;
    const int64_t nb = k / QK_K;
    repack_scalar_run(nr, lda, a, b, ldb, nc, y, ldy, [nb](const uint8_t * gb, int r, const uint8_t * col) {
        const block_q8_K * act = reinterpret_cast<const block_q8_K *>(col);
        float sum = 0.0f;
        for (int64_t i = 0; i < nb; ++i) {
            const uint8_t * g = gb + size_t(i) * group_bytes;
            int32_t isum = 0, msum = 0;
            for (int j = 0; j < 8; ++j) {
                const int t = j / 2, shift = 4 * (j % 2);
                int32_t dot = 0;
                for (int s = 0; s < 8; ++s)
                    for (int e = 0; e < 4; ++e) {
                        int q = (g[ggml_repack_q4_K_qs + 512 * t + 64 * s + 4 * r + e] >> shift) & 0xF;
                        if (HI) q |= ((g[ggml_repack_q5_K_qh + 128 * t + 64 * (j % 2) + 4 * r + e] >> s) & 1) << 4;
                        dot += q * act[i].qs[32 * j + 4 * s + e];
                    }
                isum += int32_t(g[ggml_repack_q4_K_sc + 16 * j + r]) * dot;
                const int32_t bsum = act[i].bsums[2 * j] + act[i].bsums[2 * j + 1];
                msum += int32_t(g[ggml_repack_q4_K_mn + 32 * (j / 2) + 2 * r + j % 2]) * bsum;
            }
            sum += act[i].d * (f16_at(g, r) * float(isum) - f16_at(g + ggml_repack_q4_K_dmin, r) * float(msum));
        }
        return sum;
    });
}

void dot_q4_K_scalar(int64_t k, const void * a, size_t lda, int64_t nr, const void * b, size_t ldb, int64_t nc,
                     float * y, int64_t ldy) {
    dot_q4_K_like_scalar<false>(k, a, lda, nr, b, ldb, nc, y, ldy);
}

void dot_q5_K_scalar(int64_t k, const void * a, size_t lda, int64_t nr, const void * b, size_t ldb, int64_t nc,
                     float * y, int64_t ldy) {
    dot_q4_K_like_scalar<true>(k, a, lda, nr, b, ldb, nc, y, ldy);
}

void dot_q6_K_scalar(int64_t k, const void * a, size_t lda, int64_t nr, const void * b, size_t ldb, int64_t nc,
                     float * y, int64_t ldy) {
    const int64_t nb = k / QK_K;
    repack_scalar_run(nr, lda, a, b, ldb, nc, y, ldy, [nb](const uint8_t * gb, int r, const uint8_t * col) {
        const block_q8_K * act = reinterpret_cast<const block_q8_K *>(col);
        float sum = 0.0f;
        for (int64_t i = 0; i < nb; ++i) {
            const uint8_t * g = gb + size_t(i) * ggml_repack_q6_K_group_bytes;
            int32_t isum = 0;
            for (int t = 0; t < 4; ++t) {
                const uint8_t * unit = g + ggml_repack_q6_K_qs + ggml_repack_q6_K_unit * t;
                for (int u = 0; u < 4; ++u) {
                    const int j = 4 * t + u;
                    int32_t dot = 0;
                    for (int s = 0; s < 4; ++s)
                        for (int e = 0; e < 4; ++e) {
                            const int lo = (unit[64 * (4 * (u % 2) + s) + 4 * r + e] >> (u < 2 ? 0 : 4)) & 0xF;
                            const int hi = (unit[512 + 64 * s + 4 * r + e] >> (2 * u)) & 3;
                            dot += (lo | (hi << 4)) * act[i].qs[16 * j + 4 * s + e];
                        }
                    const int32_t sc = int8_t(g[ggml_repack_q6_K_sc + 32 * (j / 2) + 2 * r + j % 2]);
                    isum += sc * (dot - 32 * act[i].bsums[j]);
                }
            }
            sum += act[i].d * f16_at(g, r) * float(isum);
        }
        return sum;
    });
}

// IQ4_XS: per sub-block the codebook values against the activations, weighted by ls - 32.
void dot_iq4_xs_scalar(int64_t k, const void * a, size_t lda, int64_t nr, const void * b, size_t ldb, int64_t nc,
                       float * y, int64_t ldy) {
    const int64_t nb = k / QK_K;
    repack_scalar_run(nr, lda, a, b, ldb, nc, y, ldy, [nb](const uint8_t * gb, int r, const uint8_t * col) {
        const block_q8_K * act = reinterpret_cast<const block_q8_K *>(col);
        float sum = 0.0f;
        for (int64_t i = 0; i < nb; ++i) {
            const uint8_t * g = gb + size_t(i) * ggml_repack_iq4_xs_group_bytes;
            int32_t isum = 0;
            for (int j = 0; j < 8; ++j) {
                const int t = j / 2, shift = 4 * (j % 2);
                int32_t dot = 0;
                for (int s = 0; s < 8; ++s)
                    for (int e = 0; e < 4; ++e) {
                        const int q = (g[ggml_repack_iq4_xs_qs + 512 * t + 64 * s + 4 * r + e] >> shift) & 0xF;
                        dot += ggml_iq4nl_codebook[q] * act[i].qs[32 * j + 4 * s + e];
                    }
                isum += int32_t(int8_t(g[ggml_repack_iq4_xs_sc + 16 * j + r])) * dot;
            }
            sum += (act[i].d * f16_at(g, r)) * float(isum);
        }
        return sum;
    });
}

// Q3_K: codes q + 4 per 16-element sub-block, weighted by the scales; 4 * sum_j sc_j * bsums[j]
// taken off the integer sum, as the plain kernel's sum of sc_j * q * b.
void dot_q3_K_scalar(int64_t k, const void * a, size_t lda, int64_t nr, const void * b, size_t ldb, int64_t nc,
                     float * y, int64_t ldy) {
    const int64_t nb = k / QK_K;
    repack_scalar_run(nr, lda, a, b, ldb, nc, y, ldy, [nb](const uint8_t * gb, int r, const uint8_t * col) {
        const block_q8_K * act = reinterpret_cast<const block_q8_K *>(col);
        float sum = 0.0f;
        for (int64_t i = 0; i < nb; ++i) {
            const uint8_t * g = gb + size_t(i) * ggml_repack_q3_K_group_bytes;
            int32_t isum = 0;
            for (int t = 0; t < 4; ++t) {
                const uint8_t * unit = g + ggml_repack_q3_K_qs + ggml_repack_q3_K_unit * t;
                for (int u = 0; u < 4; ++u) {
                    const int j = 4 * t + u;
                    int32_t dot = 0;
                    for (int s = 0; s < 4; ++s)
                        for (int e = 0; e < 4; ++e) {
                            const int lo = (unit[64 * s + 4 * r + e] >> (2 * u)) & 3;
                            const int hi = (unit[256 + 64 * (u / 2) + 4 * r + e] >> (4 * (u % 2) + s)) & 1;
                            dot += (lo | (hi << 2)) * act[i].qs[16 * j + 4 * s + e];
                        }
                    const int32_t sc = int8_t(g[ggml_repack_q3_K_sc + 32 * (j / 2) + 2 * r + j % 2]);
                    isum += sc * (dot - 4 * act[i].bsums[j]);
                }
            }
            sum += act[i].d * f16_at(g, r) * float(isum);
        }
        return sum;
    });
}

// Q2_K: codes 0..3 per 16-element sub-block, y.d * (d * sum_j sc_j * dot_j - dmin * sum_j
// m_j * bsums[j]) per block, as the plain kernel.
void dot_q2_K_scalar(int64_t k, const void * a, size_t lda, int64_t nr, const void * b, size_t ldb, int64_t nc,
                     float * y, int64_t ldy) {
    const int64_t nb = k / QK_K;
    repack_scalar_run(nr, lda, a, b, ldb, nc, y, ldy, [nb](const uint8_t * gb, int r, const uint8_t * col) {
        const block_q8_K * act = reinterpret_cast<const block_q8_K *>(col);
        float sum = 0.0f;
        for (int64_t i = 0; i < nb; ++i) {
            const uint8_t * g = gb + size_t(i) * ggml_repack_q2_K_group_bytes;
            int32_t isum = 0, imin = 0;
            for (int j = 0; j < 16; ++j) {
                const int t = j / 4, u = j % 4;
                int32_t dot = 0;
                for (int s = 0; s < 4; ++s)
                    for (int e = 0; e < 4; ++e) {
                        const int q = (g[ggml_repack_q2_K_qs + 256 * t + 64 * s + 4 * r + e] >> (2 * u)) & 3;
                        dot += q * act[i].qs[16 * j + 4 * s + e];
                    }
                const uint8_t sm = g[ggml_repack_q2_K_sm + 32 * (j / 2) + 2 * r + j % 2];
                isum += (sm & 0xF) * dot;
                imin += (sm >> 4) * act[i].bsums[j];
            }
            sum += act[i].d * f16_at(g, r) * float(isum) - act[i].d * f16_at(g + ggml_repack_q2_K_dmin, r) * float(imin);
        }
        return sum;
    });
}

void act_q8_0_scalar(const float * x, void * y, int64_t k) {
    ggml_quantize_row_q8_0_ref(x, static_cast<block_q8_0 *>(y), k);
    ggml_repack_q8_0_sums(y, k);
}

void act_q8_1_scalar(const float * x, void * y, int64_t k) {
    ggml_quantize_row_q8_1_ref(x, static_cast<block_q8_1 *>(y), k);
}

void act_q8_K_scalar(const float * x, void * y, int64_t k) {
    ggml_quantize_row_q8_K_ref(x, static_cast<block_q8_K *>(y), k);
}

}  // namespace

constinit const ggml_repack_kernels ggml_repack_kernels_scalar = ggml_repack_make_kernels({
    ggml_repack_entry{GGML_TYPE_Q4_0, dot_q4_0_scalar, act_q8_0_scalar},
    ggml_repack_entry{GGML_TYPE_Q8_0, dot_q8_0_scalar, act_q8_0_scalar},
    ggml_repack_entry{GGML_TYPE_IQ4_NL, dot_iq4_nl_scalar, act_q8_0_scalar},
    ggml_repack_entry{GGML_TYPE_Q4_K, dot_q4_K_scalar, act_q8_K_scalar},
    ggml_repack_entry{GGML_TYPE_Q5_K, dot_q5_K_scalar, act_q8_K_scalar},
    ggml_repack_entry{GGML_TYPE_Q6_K, dot_q6_K_scalar, act_q8_K_scalar},
    ggml_repack_entry{GGML_TYPE_IQ4_XS, dot_iq4_xs_scalar, act_q8_K_scalar},
    ggml_repack_entry{GGML_TYPE_Q5_0, dot_q5_0_scalar, act_q8_0_scalar},
    ggml_repack_entry{GGML_TYPE_Q4_1, dot_q4_1_scalar, act_q8_1_scalar},
    ggml_repack_entry{GGML_TYPE_MXFP4, dot_mxfp4_scalar, act_q8_0_scalar},
    ggml_repack_entry{GGML_TYPE_Q3_K, dot_q3_K_scalar, act_q8_K_scalar},
    ggml_repack_entry{GGML_TYPE_Q2_K, dot_q2_K_scalar, act_q8_K_scalar},
});
