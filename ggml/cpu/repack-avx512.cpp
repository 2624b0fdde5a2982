// Repacked-weight dot kernels, AVX-512 (F + BW + VNNI): one zmm lane per row of a 16-row group.
// Each 64-byte code vector of repack.h is unpacked once and multiplied with up to 10 activation
// columns (VPDPBUSD, the activation dword broadcast), so a weight load serves every column of
// the tile (10 rather than 8: the unpacking and the per-sub-block scaling spread over more
// products; Q4_K's 4096 x 4096 x 512 product 364 -> 416 GFLOP/s on one thread); per column the
// tile keeps an integer accumulator of the current sub-block, the scaled sum of the current
// block and the running sum over blocks.
#include "repack.h"

#include "quant-dot.h"

#include "ggml/quants.h"

#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <type_traits>

namespace {

constexpr int k_max_cols = 10;

inline int32_t load_i32(const void * p) {
    int32_t v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

inline __m512 load_f16x16(const uint8_t * p) {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i *>(p)));
}

inline __m512i load_v(const uint8_t * p) { return _mm512_loadu_si512(p); }

// acc + dpbusd(w, the dword at p in every lane), the dword read by the multiply-add itself
// (embedded broadcast): one fused instruction where the compiler would emit a broadcast load
// and the multiply-add, so a tile's front end issues half as many instructions.
inline __m512i dpbusd_bcst(__m512i acc, __m512i w, const void * p) {
    asm("vpdpbusd %2%{1to16%}, %1, %0" : "+v"(acc) : "v"(w), "m"(*reinterpret_cast<const int32_t *>(p)));
    return acc;
}

// acc + dpwssd(w, the dword at p in every lane), as dpbusd_bcst.
inline __m512i dpwssd_bcst(__m512i acc, __m512i w, const void * p) {
    asm("vpdpwssd %2%{1to16%}, %1, %0" : "+v"(acc) : "v"(w), "m"(*reinterpret_cast<const int32_t *>(p)));
    return acc;
}

inline __mmask16 row_mask(int rows) { return rows >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << rows) - 1); }

// Independent accumulators per column and sub-block: VPDPBUSD's latency covered by other
// columns' work with several columns, by splitting the steps with few.
template <int NC>
constexpr int n_split = NC >= 4 ? 1 : NC >= 2 ? 2 : 4;

template <int NC, int A>
inline void acc_zero(__m512i (&acc)[NC][A]) {
#pragma GCC unroll 16
    for (int c = 0; c < NC; ++c)
#pragma GCC unroll 16
        for (int x = 0; x < A; ++x) acc[c][x] = _mm512_setzero_si512();
}

// acc[c][0] = sum over x of acc[c][x].
template <int NC, int A>
inline void acc_fold(__m512i (&acc)[NC][A]) {
#pragma GCC unroll 16
    for (int c = 0; c < NC; ++c)
#pragma GCC unroll 16
        for (int x = 1; x < A; ++x) acc[c][0] = _mm512_add_epi32(acc[c][0], acc[c][x]);
}

template <int NC>
void store_tile(const __m512 * sum, float * y, int64_t ldy, int rows) {
    const __mmask16 m = row_mask(rows);
#pragma GCC unroll 16
    for (int c = 0; c < NC; ++c) _mm512_mask_storeu_ps(y + c * ldy, m, sum[c]);
}

template <int NC>
void store_tile_mem(const float (*sum)[16], float * y, int64_t ldy, int rows) {
    const __mmask16 m = row_mask(rows);
    for (int c = 0; c < NC; ++c) _mm512_mask_storeu_ps(y + c * ldy, m, _mm512_load_ps(sum[c]));
}

// ---- 32-element formats against Q8_0 activations: Q8_0 (codes + 128), Q4_0 (codes 0..15) and
// Q5_0 (0..31); the per-block activation sum (-128, -8 or -16 * sum a) starts the accumulator ----

struct fmt_q8_0 {
    static constexpr size_t bytes = ggml_repack_q8_0_group_bytes;
    static __m512i step(const uint8_t * g, int s) { return load_v(g + ggml_repack_q8_0_qs + 64 * s); }
    static int32_t offset(int32_t neg128_sum) { return neg128_sum; }
};

struct fmt_q4_0 {
    static constexpr size_t bytes = ggml_repack_q4_0_group_bytes;
    static __m512i step(const uint8_t * g, int s) {
        const __m512i v = load_v(g + ggml_repack_q4_0_qs + 64 * (s % 4));
        return _mm512_and_si512(s < 4 ? v : _mm512_srli_epi16(v, 4), _mm512_set1_epi8(0x0F));
    }
    static int32_t offset(int32_t neg128_sum) { return neg128_sum / 16; }  // exact: -8 * sum a
};

// Q5_0: Q4_0's nibbles with the fifth bits (bit s of each byte for step s) as bit 4.
struct fmt_q5_0 {
    static constexpr size_t bytes = ggml_repack_q5_0_group_bytes;
    static __m512i step(const uint8_t * g, int s) {
        const __m512i v = load_v(g + ggml_repack_q4_0_qs + 64 * (s % 4));
        const __m512i hv = load_v(g + ggml_repack_q5_0_qh);
        const __m512i hb = s < 4 ? _mm512_slli_epi16(hv, 4 - s) : _mm512_srli_epi16(hv, s - 4);
        const __m512i hb16 = _mm512_and_si512(hb, _mm512_set1_epi8(0x10));
        return _mm512_ternarylogic_epi32(s < 4 ? v : _mm512_srli_epi16(v, 4), hb16, _mm512_set1_epi8(0x0F), 0xEC);
    }
    static int32_t offset(int32_t neg128_sum) { return neg128_sum / 8; }  // exact: -16 * sum a
};

// IQ4_NL: the nibbles through the codebook + 128 (u8), so the -128 * sum a offset of Q8_0.
struct fmt_iq4_nl {
    static constexpr size_t bytes = ggml_repack_q4_0_group_bytes;
    static __m512i step(const uint8_t * g, int s) {
        const __m128i cb = _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i *>(ggml_iq4nl_codebook)),
                                         _mm_set1_epi8(char(0x80)));
        return _mm512_shuffle_epi8(_mm512_broadcast_i32x4(cb), fmt_q4_0::step(g, s));
    }
    static int32_t offset(int32_t neg128_sum) { return neg128_sum; }
};

// MXFP4: the nibbles through the doubled E2M1 codebook + 128 (u8); scale 2^(e - 128) per row.
struct fmt_mxfp4 {
    static constexpr size_t bytes = ggml_repack_mxfp4_group_bytes;
    static __m512i step(const uint8_t * g, int s) {
        const __m128i cb = _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i *>(ggml_mxfp4_codebook)),
                                         _mm_set1_epi8(char(0x80)));
        const __m512i v = load_v(g + ggml_repack_mxfp4_qs + 64 * (s % 4));
        const __m512i idx = _mm512_and_si512(s < 4 ? v : _mm512_srli_epi16(v, 4), _mm512_set1_epi8(0x0F));
        return _mm512_shuffle_epi8(_mm512_broadcast_i32x4(cb), idx);
    }
    static int32_t offset(int32_t neg128_sum) { return neg128_sum; }
    // 2^(e - 128): subnormal for e = 0, 1 (bit 21 + e), else the exponent field e - 1
    static __m512 scale(const uint8_t * g) {
        const __m512i e = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i *>(g)));
        const __m512i normal = _mm512_slli_epi32(_mm512_sub_epi32(e, _mm512_set1_epi32(1)), 23);
        const __m512i sub = _mm512_sllv_epi32(_mm512_set1_epi32(0x00200000), e);
        const __mmask16 small = _mm512_cmplt_epu32_mask(e, _mm512_set1_epi32(2));
        return _mm512_castsi512_ps(_mm512_mask_blend_epi32(small, normal, sub));
    }
};

// The row scales of a 32-element format: f16 d, or MXFP4's exponents.
template <typename F>
inline __m512 row_scales(const uint8_t * g) {
    if constexpr (std::is_same_v<F, fmt_mxfp4>) {
        return F::scale(g);
    } else {
        return load_f16x16(g);
    }
}

template <typename F, int NC>
void tile_32(int64_t nb, const uint8_t * gb, const uint8_t * col, size_t ldb, float * y, int64_t ldy, int rows) {
    __m512 sum[NC];
    const block_q8_0 * act[NC];
    const uint8_t * sums[NC];
#pragma GCC unroll 16
    for (int c = 0; c < NC; ++c) {
        sum[c] = _mm512_setzero_ps();
        act[c] = reinterpret_cast<const block_q8_0 *>(col + size_t(c) * ldb);
        sums[c] = col + size_t(c) * ldb + size_t(nb) * sizeof(block_q8_0);
    }
    for (int64_t i = 0; i < nb; ++i) {
        const uint8_t * g = gb + size_t(i) * F::bytes;
        constexpr int A = n_split<NC>;
        __m512i acc[NC][A];
        acc_zero(acc);
#pragma GCC unroll 16
        for (int c = 0; c < NC; ++c) acc[c][0] = _mm512_set1_epi32(F::offset(load_i32(sums[c] + 4 * i)));
#pragma GCC unroll 16
        for (int s = 0; s < 8; ++s) {
            ggml_repack_prefetch_part<8>(g, F::bytes, s);
            const __m512i w = F::step(g, s);
#pragma GCC unroll 16
            for (int c = 0; c < NC; ++c) {
                acc[c][s % A] = dpbusd_bcst(acc[c][s % A], w, act[c][i].qs + 4 * s);
            }
        }
        acc_fold(acc);
        const __m512 d = row_scales<F>(g);
#pragma GCC unroll 16
        for (int c = 0; c < NC; ++c) {
            const __m512 db = _mm512_set1_ps(_cvtsh_ss(act[c][i].d));
            if constexpr (std::is_same_v<F, fmt_mxfp4>) {
                // (d_b * sum) * 2^(e - 128) as the plain kernel: no subnormal product of the scales
                sum[c] = _mm512_fmadd_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(acc[c][0]), db), d, sum[c]);
            } else {
                sum[c] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(acc[c][0]), _mm512_mul_ps(d, db), sum[c]);
            }
        }
    }
    store_tile<NC>(sum, y, ldy, rows);
}

template <int NC>
void tile_mxfp4(int64_t nb, const uint8_t * gb, const uint8_t * col, size_t ldb, float * y, int64_t ldy, int rows) {
    tile_32<fmt_mxfp4, NC>(nb, gb, col, ldb, y, ldy, rows);
}

template <int NC>
void tile_q8_0(int64_t nb, const uint8_t * gb, const uint8_t * col, size_t ldb, float * y, int64_t ldy, int rows) {
    tile_32<fmt_q8_0, NC>(nb, gb, col, ldb, y, ldy, rows);
}

template <int NC>
void tile_q4_0(int64_t nb, const uint8_t * gb, const uint8_t * col, size_t ldb, float * y, int64_t ldy, int rows) {
    tile_32<fmt_q4_0, NC>(nb, gb, col, ldb, y, ldy, rows);
}

template <int NC>
void tile_q5_0(int64_t nb, const uint8_t * gb, const uint8_t * col, size_t ldb, float * y, int64_t ldy, int rows) {
    tile_32<fmt_q5_0, NC>(nb, gb, col, ldb, y, ldy, rows);
}

template <int NC>
void tile_iq4_nl(int64_t nb, const uint8_t * gb, const uint8_t * col, size_t ldb, float * y, int64_t ldy, int rows) {
    tile_32<fmt_iq4_nl, NC>(nb, gb, col, ldb, y, ldy, rows);
}

// ---- Q4_1 against Q8_1 activations: the mins, then a Q4_0 group block; per block
// (d * d_b) * sum q * b + m * s_b ----

template <int NC>
void tile_q4_1(int64_t nb, const uint8_t * gb, const uint8_t * col, size_t ldb, float * y, int64_t ldy, int rows) {
    __m512 sum[NC];
    const block_q8_1 * act[NC];
#pragma GCC unroll 16
    for (int c = 0; c < NC; ++c) {
        sum[c] = _mm512_setzero_ps();
        act[c] = reinterpret_cast<const block_q8_1 *>(col + size_t(c) * ldb);
    }
    for (int64_t i = 0; i < nb; ++i) {
        const uint8_t * g = gb + size_t(i) * ggml_repack_q4_1_group_bytes;
        const uint8_t * in = g + ggml_repack_q4_1_inner;
        constexpr int A = n_split<NC>;
        __m512i acc[NC][A];
        acc_zero(acc);
#pragma GCC unroll 16
        for (int s = 0; s < 8; ++s) {
            ggml_repack_prefetch_part<8>(g, ggml_repack_q4_1_group_bytes, s);
            const __m512i w = fmt_q4_0::step(in, s);
#pragma GCC unroll 16
            for (int c = 0; c < NC; ++c) {
                acc[c][s % A] = dpbusd_bcst(acc[c][s % A], w, act[c][i].qs + 4 * s);
            }
        }
        acc_fold(acc);
        const __m512 d = load_f16x16(in);
        const __m512 m = load_f16x16(g);
#pragma GCC unroll 16
        for (int c = 0; c < NC; ++c) {
            const __m512 dd = _mm512_mul_ps(d, _mm512_set1_ps(_cvtsh_ss(act[c][i].d)));
            sum[c] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(acc[c][0]), dd, sum[c]);
            sum[c] = _mm512_fmadd_ps(m, _mm512_set1_ps(_cvtsh_ss(act[c][i].s)), sum[c]);
        }
    }
    store_tile<NC>(sum, y, ldy, rows);
}

// ---- Q4_K ----

// The mins of one block: sum_j mn_j * B_j per row, for every column, B_j the sum of sub-block
// j's 32 activation codes (ggml_repack_q8_K_pair_sums leaves it in bsums[j]).
template <int NC>
void q4_K_mins(const uint8_t * g, const block_q8_K * const * act, int64_t i, __m512i * macc) {
#pragma GCC unroll 16
    for (int c = 0; c < NC; ++c) macc[c] = _mm512_setzero_si512();
#pragma GCC unroll 16
    for (int p = 0; p < 4; ++p) {
        const __m512i mn = _mm512_cvtepu8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i *>(g + ggml_repack_q4_K_mn + 32 * p)));
#pragma GCC unroll 16
        for (int c = 0; c < NC; ++c) macc[c] = dpwssd_bcst(macc[c], mn, act[c][i].bsums + 2 * p);
    }
}

// Q4_K, and with HI Q5_K: the fifth bits (bit s of each byte for step s) merged in as bit 4.
template <int NC, bool HI = false>
void tile_q4_K(int64_t nb, const uint8_t * gb, const uint8_t * col, size_t ldb, float * y, int64_t ldy, int rows) {
    constexpr size_t group_bytes = HI ? ggml_repack_q5_K_group_bytes : ggml_repack_q4_K_group_bytes;
    const __m512i low4 = _mm512_set1_epi8(0x0F);
    const __m512i high4 = _mm512_set1_epi8(char(0xF0));
    // the running sums over blocks stay in memory (one update per block), which leaves the
    // registers to the per-block accumulators
    alignas(64) float sum[NC][16] = {};
    const block_q8_K * act[NC];
#pragma GCC unroll 16
    for (int c = 0; c < NC; ++c) {
        act[c] = reinterpret_cast<const block_q8_K *>(col + size_t(c) * ldb);
    }
    for (int64_t i = 0; i < nb; ++i) {
        const uint8_t * g = gb + size_t(i) * group_bytes;
        __m512 part[NC];
#pragma GCC unroll 16
        for (int c = 0; c < NC; ++c) part[c] = _mm512_setzero_ps();
        for (int t = 0; t < 4; ++t)
#pragma GCC unroll 2
        for (int h = 0; h < 2; ++h) {
            const int j = 2 * t + h;  // sub-block
            ggml_repack_prefetch_part<8>(g, group_bytes, j);
            const uint8_t * qs = g + ggml_repack_q4_K_qs + 512 * t;
            constexpr int A = n_split<NC>;
            __m512i acc[NC][A];
            acc_zero(acc);
#pragma GCC unroll 16
            for (int s = 0; s < 8; ++s) {
                __m512i w = load_v(qs + 64 * s);
                if constexpr (HI) {
                    const __m512i hv = load_v(g + ggml_repack_q5_K_qh + 128 * t + 64 * h);
                    const __m512i hb = _mm512_and_si512(s < 4 ? _mm512_slli_epi16(hv, 4 - s) : _mm512_srli_epi16(hv, s - 4),
                                                        _mm512_set1_epi8(0x10));
                    w = _mm512_ternarylogic_epi32(h ? _mm512_srli_epi16(w, 4) : w, hb, low4, 0xEC);  // (a & c) | b
                } else {
                    // the high nibbles stay in place (16 x the code); the sub-block's scale
                    // takes the 1/16
                    w = _mm512_and_si512(w, h ? high4 : low4);
                }
#pragma GCC unroll 16
                for (int c = 0; c < NC; ++c) {
                    acc[c][s % A] = dpbusd_bcst(acc[c][s % A], w, act[c][i].qs + 32 * j + 4 * s);
                }
            }
            acc_fold(acc);
            const __m512i sc = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i *>(g + ggml_repack_q4_K_sc + 16 * j)));
            __m512 dsc = _mm512_mul_ps(load_f16x16(g), _mm512_cvtepi32_ps(sc));
            if (!HI && h) dsc = _mm512_mul_ps(dsc, _mm512_set1_ps(1.0f / 16));
#pragma GCC unroll 16
            for (int c = 0; c < NC; ++c) part[c] = _mm512_fmadd_ps(dsc, _mm512_cvtepi32_ps(acc[c][0]), part[c]);
        }
        __m512i macc[NC];
        q4_K_mins<NC>(g, act, i, macc);
        const __m512 dmin = load_f16x16(g + ggml_repack_q4_K_dmin);
#pragma GCC unroll 16
        for (int c = 0; c < NC; ++c) {
            const __m512 t = _mm512_fnmadd_ps(dmin, _mm512_cvtepi32_ps(macc[c]), part[c]);
            _mm512_store_ps(sum[c], _mm512_fmadd_ps(t, _mm512_set1_ps(act[c][i].d), _mm512_load_ps(sum[c])));
        }
    }
    store_tile_mem<NC>(sum, y, ldy, rows);
}

// ---- Q6_K, Q3_K and Q2_K: 16-element sub-blocks, their scales in pairs ----

// Codes of sub-block u, step s of a 64-element unit: low 4 bits | high 2 bits << 4.
inline __m512i q6_K_codes(const uint8_t * unit, int u, int s) {
    const __m512i lo_v = load_v(unit + 64 * (4 * (u % 2) + s));
    const __m512i hi_v = load_v(unit + 512 + 64 * s);
    const __m512i lo = _mm512_and_si512(u < 2 ? lo_v : _mm512_srli_epi16(lo_v, 4), _mm512_set1_epi8(0x0F));
    __m512i hi;
    switch (u) {
        case 0: hi = _mm512_slli_epi16(hi_v, 4); break;
        case 1: hi = _mm512_slli_epi16(hi_v, 2); break;
        case 2: hi = hi_v; break;
        default: hi = _mm512_srli_epi16(hi_v, 2); break;
    }
    return _mm512_ternarylogic_epi32(lo, hi, _mm512_set1_epi8(0x30), 0xF8);  // a | (b & c)
}

// Q3_K: low 2 bits at bits 2u of low vector s | bit 4 (u % 2) + s of high vector u / 2 as bit 2.
inline __m512i q3_K_codes(const uint8_t * unit, int u, int s) {
    const __m512i lo_v = load_v(unit + 64 * s);
    const __m512i hi_v = load_v(unit + 256 + 64 * (u / 2));
    const int hs = 4 * (u % 2) + s - 2;  // high bit's position - 2
    const __m512i hi = hs >= 0 ? _mm512_srli_epi16(hi_v, unsigned(hs)) : _mm512_slli_epi16(hi_v, unsigned(-hs));
    const __m512i lo = _mm512_srli_epi16(lo_v, unsigned(2 * u));
    return _mm512_or_si512(_mm512_and_si512(lo, _mm512_set1_epi8(3)), _mm512_and_si512(hi, _mm512_set1_epi8(4)));
}

// Scales 2p, 2p+1 of every row as int16 pairs.
inline __m512i q6_K_scale_pairs(const uint8_t * g, int p) {
    return _mm512_cvtepi8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i *>(g + ggml_repack_q6_K_sc + 32 * p)));
}

// Per format: the codes of (unit, u, s), the scale pairs of sub-blocks 2p, 2p+1, the pairs that
// weight the activation sums (bsums) and the factor of that sum (subtracted per block).
struct fmt_q6_K {
    static constexpr size_t bytes = ggml_repack_q6_K_group_bytes, qs = ggml_repack_q6_K_qs, unit = ggml_repack_q6_K_unit;
    static __m512i codes(const uint8_t * u8, int u, int s) { return q6_K_codes(u8, u, s); }
    static __m512i scale_pairs(const uint8_t * g, int p) { return q6_K_scale_pairs(g, p); }
    static __m512i sum_pairs(const uint8_t * g, int p) { return q6_K_scale_pairs(g, p); }
    static __m512 sum_factor(const uint8_t * g) { return _mm512_mul_ps(load_f16x16(g), _mm512_set1_ps(32.0f)); }
};

static_assert(ggml_repack_q3_K_sc == ggml_repack_q6_K_sc, "Q3_K's scale pairs sit where Q6_K's do");

struct fmt_q3_K {
    static constexpr size_t bytes = ggml_repack_q3_K_group_bytes, qs = ggml_repack_q3_K_qs, unit = ggml_repack_q3_K_unit;
    static __m512i codes(const uint8_t * u8, int u, int s) { return q3_K_codes(u8, u, s); }
    static __m512i scale_pairs(const uint8_t * g, int p) { return q6_K_scale_pairs(g, p); }
    static __m512i sum_pairs(const uint8_t * g, int p) { return q6_K_scale_pairs(g, p); }
    static __m512 sum_factor(const uint8_t * g) { return _mm512_mul_ps(load_f16x16(g), _mm512_set1_ps(4.0f)); }
};

// Q2_K: codes at bits 2u of vector s; scale | min << 4 bytes, the mins weighted by dmin.
struct fmt_q2_K {
    static constexpr size_t bytes = ggml_repack_q2_K_group_bytes, qs = ggml_repack_q2_K_qs, unit = 256;
    static __m512i codes(const uint8_t * u8, int u, int s) {
        return _mm512_and_si512(_mm512_srli_epi16(load_v(u8 + 64 * s), unsigned(2 * u)), _mm512_set1_epi8(3));
    }
    static __m512i sm_pairs(const uint8_t * g, int p) {
        return _mm512_cvtepu8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i *>(g + ggml_repack_q2_K_sm + 32 * p)));
    }
    static __m512i scale_pairs(const uint8_t * g, int p) { return _mm512_and_si512(sm_pairs(g, p), _mm512_set1_epi16(0x0F)); }
    static __m512i sum_pairs(const uint8_t * g, int p) { return _mm512_srli_epi16(sm_pairs(g, p), 4); }
    static __m512 sum_factor(const uint8_t * g) { return load_f16x16(g + ggml_repack_q2_K_dmin); }
};

template <typename F, int NC>
void tile_k16(int64_t nb, const uint8_t * gb, const uint8_t * col, size_t ldb, float * y, int64_t ldy, int rows) {
    // the running sums over blocks stay in memory (one update per block), which leaves the
    // registers to the per-block accumulators
    alignas(64) float sum[NC][16] = {};
    const block_q8_K * act[NC];
#pragma GCC unroll 16
    for (int c = 0; c < NC; ++c) {
        act[c] = reinterpret_cast<const block_q8_K *>(col + size_t(c) * ldb);
    }
    for (int64_t i = 0; i < nb; ++i) {
        const uint8_t * g = gb + size_t(i) * F::bytes;
        const __m512 d = load_f16x16(g);
        __m512 part[NC];
#pragma GCC unroll 16
        for (int c = 0; c < NC; ++c) part[c] = _mm512_setzero_ps();
        for (int t = 0; t < 4; ++t)
#pragma GCC unroll 4
        for (int u = 0; u < 4; ++u) {
            const int j = 4 * t + u;  // sub-block
            ggml_repack_prefetch_part<16>(g, F::bytes, j);
            const uint8_t * unit = g + F::qs + F::unit * t;
            constexpr int A = n_split<NC>;
            __m512i acc[NC][A];
            acc_zero(acc);
#pragma GCC unroll 16
            for (int s = 0; s < 4; ++s) {
                const __m512i w = F::codes(unit, u, s);
#pragma GCC unroll 16
                for (int c = 0; c < NC; ++c) {
                    acc[c][s % A] = dpbusd_bcst(acc[c][s % A], w, act[c][i].qs + 16 * j + 4 * s);
                }
            }
            acc_fold(acc);
            const __m512i scp = F::scale_pairs(g, j / 2);
            const __m512i sc = u % 2 ? _mm512_srai_epi32(scp, 16) : _mm512_srai_epi32(_mm512_slli_epi32(scp, 16), 16);
            const __m512 dsc = _mm512_mul_ps(d, _mm512_cvtepi32_ps(sc));
#pragma GCC unroll 16
            for (int c = 0; c < NC; ++c) part[c] = _mm512_fmadd_ps(dsc, _mm512_cvtepi32_ps(acc[c][0]), part[c]);
        }
        // subtract the factor times sum_j pair_j * bsums[j] (Q6_K, Q3_K: codes q + offset,
        // offset * d * sc_j; Q2_K: dmin * m_j)
        __m512i macc[NC];
#pragma GCC unroll 16
        for (int c = 0; c < NC; ++c) macc[c] = _mm512_setzero_si512();
#pragma GCC unroll 16
        for (int p = 0; p < 8; ++p) {
            const __m512i scp = F::sum_pairs(g, p);
#pragma GCC unroll 16
            for (int c = 0; c < NC; ++c) {
                macc[c] = _mm512_dpwssd_epi32(macc[c], scp, _mm512_set1_epi32(load_i32(act[c][i].bsums + 2 * p)));
            }
        }
        const __m512 d32 = F::sum_factor(g);
#pragma GCC unroll 16
        for (int c = 0; c < NC; ++c) {
            const __m512 t = _mm512_fnmadd_ps(d32, _mm512_cvtepi32_ps(macc[c]), part[c]);
            _mm512_store_ps(sum[c], _mm512_fmadd_ps(t, _mm512_set1_ps(act[c][i].d), _mm512_load_ps(sum[c])));
        }
    }
    store_tile_mem<NC>(sum, y, ldy, rows);
}

// ---- IQ4_XS ----

// Codebook + 128 (u8) of the nibbles (low for h = 0) of the code vector at p.
inline __m512i iq4_codes_u8(const uint8_t * p, int h) {
    const __m128i cb = _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i *>(ggml_iq4nl_codebook)),
                                     _mm_set1_epi8(char(0x80)));
    const __m512i v = load_v(p);
    return _mm512_shuffle_epi8(_mm512_broadcast_i32x4(cb), _mm512_and_si512(h ? _mm512_srli_epi16(v, 4) : v, _mm512_set1_epi8(0x0F)));
}

// Per sub-block j the exact sum of codebook values x activations (the accumulator starts at
// -128 * the sub-block's activation sum), weighted by ls - 32 in int32: the integer sum of the
// plain kernel, scaled once per block.
template <int NC>
void tile_iq4_xs(int64_t nb, const uint8_t * gb, const uint8_t * col, size_t ldb, float * y, int64_t ldy, int rows) {
    alignas(64) float sum[NC][16] = {};
    const block_q8_K * act[NC];
#pragma GCC unroll 16
    for (int c = 0; c < NC; ++c) act[c] = reinterpret_cast<const block_q8_K *>(col + size_t(c) * ldb);
    for (int64_t i = 0; i < nb; ++i) {
        const uint8_t * g = gb + size_t(i) * ggml_repack_iq4_xs_group_bytes;
        __m512i isum[NC];
#pragma GCC unroll 16
        for (int c = 0; c < NC; ++c) isum[c] = _mm512_setzero_si512();
        for (int t = 0; t < 4; ++t)
#pragma GCC unroll 2
        for (int h = 0; h < 2; ++h) {
            const int j = 2 * t + h;  // sub-block
            ggml_repack_prefetch_part<8>(g, ggml_repack_iq4_xs_group_bytes, j);
            const uint8_t * qs = g + ggml_repack_iq4_xs_qs + 512 * t;
            constexpr int A = n_split<NC>;
            __m512i acc[NC][A];
            acc_zero(acc);
#pragma GCC unroll 16
            for (int c = 0; c < NC; ++c) {
                acc[c][0] = _mm512_set1_epi32(-128 * (int32_t(act[c][i].bsums[2 * j]) + act[c][i].bsums[2 * j + 1]));
            }
#pragma GCC unroll 16
            for (int s = 0; s < 8; ++s) {
                const __m512i w = iq4_codes_u8(qs + 64 * s, h);
#pragma GCC unroll 16
                for (int c = 0; c < NC; ++c) {
                    acc[c][s % A] = dpbusd_bcst(acc[c][s % A], w, act[c][i].qs + 32 * j + 4 * s);
                }
            }
            acc_fold(acc);
            const __m512i sc = _mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i *>(g + ggml_repack_iq4_xs_sc + 16 * j)));
#pragma GCC unroll 16
            for (int c = 0; c < NC; ++c) isum[c] = _mm512_add_epi32(isum[c], _mm512_mullo_epi32(acc[c][0], sc));
        }
        const __m512 d = load_f16x16(g);
#pragma GCC unroll 16
        for (int c = 0; c < NC; ++c) {
            const __m512 dd = _mm512_mul_ps(d, _mm512_set1_ps(act[c][i].d));
            _mm512_store_ps(sum[c], _mm512_fmadd_ps(_mm512_cvtepi32_ps(isum[c]), dd, _mm512_load_ps(sum[c])));
        }
    }
    store_tile_mem<NC>(sum, y, ldy, rows);
}

// ---- drivers: groups of 16 rows x tiles of up to 10 columns ----

using tile_fn = void (*)(int64_t, const uint8_t *, const uint8_t *, size_t, float *, int64_t, int);

template <tile_fn F1, tile_fn F2, tile_fn F3, tile_fn F4, tile_fn F5, tile_fn F6, tile_fn F7, tile_fn F8, tile_fn F9,
          tile_fn F10>
void run_tiles(int64_t nb, const void * a, size_t lda, int64_t nr, const void * b, size_t ldb, int64_t nc, float * y,
               int64_t ldy) {
    static constexpr tile_fn tiles[k_max_cols] = {F1, F2, F3, F4, F5, F6, F7, F8, F9, F10};
    // the columns cut into as few tiles as fit, of widths that differ by at most one (64
    // columns: 4 x 9 + 3 x 10 rather than 6 x 10 + 4)
    const int64_t n_tiles = (nc + k_max_cols - 1) / k_max_cols;
    const int64_t width = nc / n_tiles, wider = nc % n_tiles;  // the first `wider` tiles: width + 1
    for (int64_t r0 = 0; r0 < nr; r0 += GGML_REPACK_ROWS) {
        const uint8_t * gb = static_cast<const uint8_t *>(a) + size_t(r0) * lda;
        const int rows = int(std::min<int64_t>(GGML_REPACK_ROWS, nr - r0));
        for (int64_t t = 0, c0 = 0; t < n_tiles; ++t) {
            const int n = int(width + (t < wider));
            tiles[n - 1](nb, gb, static_cast<const uint8_t *>(b) + size_t(c0) * ldb, ldb, y + c0 * ldy + r0, ldy, rows);
            c0 += n;
        }
    }
}

#define REPACK_TILES(name) name<1>, name<2>, name<3>, name<4>, name<5>, name<6>, name<7>, name<8>, name<9>, name<10>

void dot_q8_0_avx512(int64_t k, const void * a, size_t lda, int64_t nr, const void * b, size_t ldb, int64_t nc,
                     float * y, int64_t ldy) {
    run_tiles<REPACK_TILES(tile_q8_0)>(k / QK8_0, a, lda, nr, b, ldb, nc, y, ldy);
}

void dot_q4_0_avx512(int64_t k, const void * a, size_t lda, int64_t nr, const void * b, size_t ldb, int64_t nc,
                     float * y, int64_t ldy) {
    run_tiles<REPACK_TILES(tile_q4_0)>(k / QK4_0, a, lda, nr, b, ldb, nc, y, ldy);
}

void dot_q5_0_avx512(int64_t k, const void * a, size_t lda, int64_t nr, const void * b, size_t ldb, int64_t nc,
                     float * y, int64_t ldy) {
    run_tiles<REPACK_TILES(tile_q5_0)>(k / QK5_0, a, lda, nr, b, ldb, nc, y, ldy);
}

void dot_q4_1_avx512(int64_t k, const void * a, size_t lda, int64_t nr, const void * b, size_t ldb, int64_t nc,
                     float * y, int64_t ldy) {
    run_tiles<REPACK_TILES(tile_q4_1)>(k / QK4_1, a, lda, nr, b, ldb, nc, y, ldy);
}

void dot_mxfp4_avx512(int64_t k, const void * a, size_t lda, int64_t nr, const void * b, size_t ldb, int64_t nc,
                      float * y, int64_t ldy) {
    run_tiles<REPACK_TILES(tile_mxfp4)>(k / QK_MXFP4, a, lda, nr, b, ldb, nc, y, ldy);
}

void dot_iq4_nl_avx512(int64_t k, const void * a, size_t lda, int64_t nr, const void * b, size_t ldb, int64_t nc,
                       float * y, int64_t ldy) {
    run_tiles<REPACK_TILES(tile_iq4_nl)>(k / QK4_NL, a, lda, nr, b, ldb, nc, y, ldy);
}

void dot_q4_K_avx512(int64_t k, const void * a, size_t lda, int64_t nr, const void * b, size_t ldb, int64_t nc,
                     float * y, int64_t ldy) {
    run_tiles<REPACK_TILES(tile_q4_K)>(k / QK_K, a, lda, nr, b, ldb, nc, y, ldy);
}

template <int NC>
void tile_q5_K(int64_t nb, const uint8_t * gb, const uint8_t * col, size_t ldb, float * y, int64_t ldy, int rows) {
    tile_q4_K<NC, true>(nb, gb, col, ldb, y, ldy, rows);
}

void dot_q5_K_avx512(int64_t k, const void * a, size_t lda, int64_t nr, const void * b, size_t ldb, int64_t nc,
                     float * y, int64_t ldy) {
    run_tiles<REPACK_TILES(tile_q5_K)>(k / QK_K, a, lda, nr, b, ldb, nc, y, ldy);
}

template <int NC>
void tile_q6_K(int64_t nb, const uint8_t * gb, const uint8_t * col, size_t ldb, float * y, int64_t ldy, int rows) {
    tile_k16<fmt_q6_K, NC>(nb, gb, col, ldb, y, ldy, rows);
}

template <int NC>
void tile_q2_K(int64_t nb, const uint8_t * gb, const uint8_t * col, size_t ldb, float * y, int64_t ldy, int rows) {
    tile_k16<fmt_q2_K, NC>(nb, gb, col, ldb, y, ldy, rows);
}

void dot_q2_K_avx512(int64_t k, const void * a, size_t lda, int64_t nr, const void * b, size_t ldb, int64_t nc,
                     float * y, int64_t ldy) {
    run_tiles<REPACK_TILES(tile_q2_K)>(k / QK_K, a, lda, nr, b, ldb, nc, y, ldy);
}

void dot_q6_K_avx512(int64_t k, const void * a, size_t lda, int64_t nr, const void * b, size_t ldb, int64_t nc,
                     float * y, int64_t ldy) {
    run_tiles<REPACK_TILES(tile_q6_K)>(k / QK_K, a, lda, nr, b, ldb, nc, y, ldy);
}

template <int NC>
void tile_q3_K(int64_t nb, const uint8_t * gb, const uint8_t * col, size_t ldb, float * y, int64_t ldy, int rows) {
    tile_k16<fmt_q3_K, NC>(nb, gb, col, ldb, y, ldy, rows);
}

void dot_q3_K_avx512(int64_t k, const void * a, size_t lda, int64_t nr, const void * b, size_t ldb, int64_t nc,
                     float * y, int64_t ldy) {
    run_tiles<REPACK_TILES(tile_q3_K)>(k / QK_K, a, lda, nr, b, ldb, nc, y, ldy);
}

void dot_iq4_xs_avx512(int64_t k, const void * a, size_t lda, int64_t nr, const void * b, size_t ldb, int64_t nc,
                       float * y, int64_t ldy) {
    run_tiles<REPACK_TILES(tile_iq4_xs)>(k / QK_K, a, lda, nr, b, ldb, nc, y, ldy);
}

// Q8_K activations of the Q4_K and Q5_K tiles with the sub-blocks' code sums
// (ggml_repack_q8_K_pair_sums), added once per column instead of in every tile.
void act_q8_K_pairs_avx512(const float * x, void * y, int64_t k) {
    ggml_quantize_row_q8_K_avx512(x, y, k);
    ggml_repack_q8_K_pair_sums(y, k);
}

void act_q8_0_avx512(const float * x, void * y, int64_t k) {
    ggml_quantize_row_q8_0_avx512(x, y, k);
    ggml_repack_q8_0_sums(y, k);
}

}  // namespace

constinit const ggml_repack_kernels ggml_repack_kernels_avx512 = ggml_repack_make_kernels({
    ggml_repack_entry{GGML_TYPE_Q4_0, dot_q4_0_avx512, act_q8_0_avx512},
    ggml_repack_entry{GGML_TYPE_Q8_0, dot_q8_0_avx512, act_q8_0_avx512},
    ggml_repack_entry{GGML_TYPE_IQ4_NL, dot_iq4_nl_avx512, act_q8_0_avx512},
    ggml_repack_entry{GGML_TYPE_Q4_K, dot_q4_K_avx512, act_q8_K_pairs_avx512},
    ggml_repack_entry{GGML_TYPE_Q5_K, dot_q5_K_avx512, act_q8_K_pairs_avx512},
    ggml_repack_entry{GGML_TYPE_Q6_K, dot_q6_K_avx512, ggml_quantize_row_q8_K_avx512},
    ggml_repack_entry{GGML_TYPE_IQ4_XS, dot_iq4_xs_avx512, ggml_quantize_row_q8_K_avx512},
    ggml_repack_entry{GGML_TYPE_Q5_0, dot_q5_0_avx512, act_q8_0_avx512},
    ggml_repack_entry{GGML_TYPE_Q4_1, dot_q4_1_avx512, ggml_quantize_row_q8_1_avx512},
    ggml_repack_entry{GGML_TYPE_MXFP4, dot_mxfp4_avx512, act_q8_0_avx512},
    ggml_repack_entry{GGML_TYPE_Q3_K, dot_q3_K_avx512, ggml_quantize_row_q8_K_avx512},
    ggml_repack_entry{GGML_TYPE_Q2_K, dot_q2_K_avx512, ggml_quantize_row_q8_K_avx512},
});
