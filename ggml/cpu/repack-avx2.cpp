// Repacked-weight dot kernels, AVX2 + FMA + F16C: one ymm lane per row, a 16-row group of
// repack.h taken as two halves of 8 rows (the low and high 32 bytes of each code vector).
// A code vector is unpacked once and multiplied with up to 4 activation columns; u8 x s8
// products go through VPMADDUBSW (no saturation: 2- to 6-bit codes, and |w| for Q8_0, IQ4_NL
// and MXFP4 with the sign moved onto the activations, |a| for IQ4_XS against Q8_K) and VPMADDWD
// into int32 lanes.
#include "repack.h"

#include "quant-dot.h"
#include "thread-scratch.h"

#include "ggml/quants.h"

#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <type_traits>

namespace {

constexpr int k_max_cols = 4;

inline int32_t load_i32(const void * p) {
    int32_t v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

inline __m256 load_f16x8(const uint8_t * p) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i *>(p)));
}

inline __m256i load_half(const uint8_t * p) { return _mm256_loadu_si256(reinterpret_cast<const __m256i *>(p)); }

// acc + the 4-element dot products of u8 codes w with s8 activations a, per 32-bit lane.
inline __m256i dot4(__m256i acc, __m256i w, __m256i a) {
    return _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(w, a), _mm256_set1_epi16(1)));
}

inline __m256i bcast(const void * p) { return _mm256_set1_epi32(load_i32(p)); }

template <int NC>
void store_half(const __m256 * sum, float * y, int64_t ldy, int rows) {
#pragma GCC unroll 16
    for (int c = 0; c < NC; ++c) {
        if (rows >= 8) {
            _mm256_storeu_ps(y + c * ldy, sum[c]);
        } else {
            float tmp[8];
            _mm256_storeu_ps(tmp, sum[c]);
            std::memcpy(y + c * ldy, tmp, size_t(rows) * sizeof(float));
        }
    }
}

// Each tile computes rows 8h … 8h+7 of a group (h = 0, 1); `rows` of them are written.

// Q8_0 and IQ4_NL: signed codes w (per type below), multiplied as |w| x (a with w's sign) so
// that VPMADDUBSW sees unsigned weights.
struct signed_q8_0 {
    static constexpr size_t bytes = ggml_repack_q8_0_group_bytes;
    static __m256i codes(const uint8_t * g, int s, int h) {
        return _mm256_xor_si256(load_half(g + ggml_repack_q8_0_qs + 64 * s + 32 * h), _mm256_set1_epi8(char(0x80)));
    }
};

// IQ4_NL: the nibbles of Q4_0's layout through the (signed) codebook.
struct signed_iq4_nl {
    static constexpr size_t bytes = ggml_repack_q4_0_group_bytes;
    static __m256i codes(const uint8_t * g, int s, int h) {
        const __m256i cb =
            _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i *>(ggml_iq4nl_codebook)));
        const __m256i v = load_half(g + ggml_repack_q4_0_qs + 64 * (s % 4) + 32 * h);
        return _mm256_shuffle_epi8(cb, _mm256_and_si256(s < 4 ? v : _mm256_srli_epi16(v, 4), _mm256_set1_epi8(0x0F)));
    }
};

// MXFP4: the nibbles of the group block (at offset 16) through the doubled E2M1 codebook;
// per row 2^(e - 128) from the exponent bytes.
struct signed_mxfp4 {
    static constexpr size_t bytes = ggml_repack_mxfp4_group_bytes;
    static __m256i codes(const uint8_t * g, int s, int h) {
        const __m256i cb =
            _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i *>(ggml_mxfp4_codebook)));
        const __m256i v = load_half(g + ggml_repack_mxfp4_qs + 64 * (s % 4) + 32 * h);
        return _mm256_shuffle_epi8(cb, _mm256_and_si256(s < 4 ? v : _mm256_srli_epi16(v, 4), _mm256_set1_epi8(0x0F)));
    }
    // subnormal for e = 0, 1 (bit 21 + e), else the exponent field e - 1
    static __m256 scale(const uint8_t * g, int h) {
        const __m256i e = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i *>(g + 8 * h)));
        const __m256i normal = _mm256_slli_epi32(_mm256_sub_epi32(e, _mm256_set1_epi32(1)), 23);
        const __m256i sub = _mm256_sllv_epi32(_mm256_set1_epi32(0x00200000), e);
        const __m256i small = _mm256_cmpgt_epi32(_mm256_set1_epi32(2), e);
        return _mm256_castsi256_ps(_mm256_blendv_epi8(normal, sub, small));
    }
};

// The 8 row scales of half h of a group block: f16 d, or MXFP4's exponents.
template <typename W>
inline __m256 half_scales(const uint8_t * g, int h) {
    if constexpr (std::is_same_v<W, signed_mxfp4>) {
        return W::scale(g, h);
    } else {
        return load_f16x8(g + 16 * h);
    }
}

template <typename W, int NC>
void tile_signed(int64_t nb, const uint8_t * gb, int h, const uint8_t * col, size_t ldb, float * y, int64_t ldy,
                 int rows) {
    __m256 sum[NC];
    const block_q8_0 * act[NC];
#pragma GCC unroll 16
    for (int c = 0; c < NC; ++c) {
        sum[c] = _mm256_setzero_ps();
        act[c] = reinterpret_cast<const block_q8_0 *>(col + size_t(c) * ldb);
    }
    for (int64_t i = 0; i < nb; ++i) {
        const uint8_t * g = gb + size_t(i) * W::bytes;
        __m256i acc[NC];
#pragma GCC unroll 16
        for (int c = 0; c < NC; ++c) acc[c] = _mm256_setzero_si256();
#pragma GCC unroll 16
        for (int s = 0; s < 8; ++s) {
            if (h == 0) ggml_repack_prefetch_part<8>(g, W::bytes, s);
            const __m256i w = W::codes(g, s, h);
            const __m256i aw = _mm256_abs_epi8(w);
#pragma GCC unroll 16
            for (int c = 0; c < NC; ++c) acc[c] = dot4(acc[c], aw, _mm256_sign_epi8(bcast(act[c][i].qs + 4 * s), w));
        }
        const __m256 d = half_scales<W>(g, h);
#pragma GCC unroll 16
        for (int c = 0; c < NC; ++c) {
            const __m256 db = _mm256_set1_ps(_cvtsh_ss(act[c][i].d));
            if constexpr (std::is_same_v<W, signed_mxfp4>) {
                // (d_b * sum) * 2^(e - 128) as the plain kernel: no subnormal product of the scales
                sum[c] = _mm256_fmadd_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(acc[c]), db), d, sum[c]);
            } else {
                sum[c] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(acc[c]), _mm256_mul_ps(d, db), sum[c]);
            }
        }
    }
    store_half<NC>(sum, y, ldy, rows);
}

template <int NC>
void tile_mxfp4(int64_t nb, const uint8_t * gb, int h, const uint8_t * col, size_t ldb, float * y, int64_t ldy,
                int rows) {
    tile_signed<signed_mxfp4, NC>(nb, gb, h, col, ldb, y, ldy, rows);
}

template <int NC>
void tile_q8_0(int64_t nb, const uint8_t * gb, int h, const uint8_t * col, size_t ldb, float * y, int64_t ldy, int rows) {
    tile_signed<signed_q8_0, NC>(nb, gb, h, col, ldb, y, ldy, rows);
}

template <int NC>
void tile_iq4_nl(int64_t nb, const uint8_t * gb, int h, const uint8_t * col, size_t ldb, float * y, int64_t ldy,
                 int rows) {
    tile_signed<signed_iq4_nl, NC>(nb, gb, h, col, ldb, y, ldy, rows);
}

// Q4_0, and with HI Q5_0: the fifth bits (bit s of each byte for step s) merged in as bit 4.
template <int NC, bool HI = false>
void tile_q4_0(int64_t nb, const uint8_t * gb, int h, const uint8_t * col, size_t ldb, float * y, int64_t ldy, int rows) {
    constexpr size_t group_bytes = HI ? ggml_repack_q5_0_group_bytes : ggml_repack_q4_0_group_bytes;
    __m256 sum[NC];
    const block_q8_0 * act[NC];
    const uint8_t * sums[NC];
#pragma GCC unroll 16
    for (int c = 0; c < NC; ++c) {
        sum[c] = _mm256_setzero_ps();
        act[c] = reinterpret_cast<const block_q8_0 *>(col + size_t(c) * ldb);
        sums[c] = col + size_t(c) * ldb + size_t(nb) * sizeof(block_q8_0);
    }
    const __m256i low4 = _mm256_set1_epi8(0x0F);
    for (int64_t i = 0; i < nb; ++i) {
        const uint8_t * g = gb + size_t(i) * group_bytes;
        __m256i acc[NC];
#pragma GCC unroll 16
        for (int c = 0; c < NC; ++c) acc[c] = _mm256_set1_epi32(load_i32(sums[c] + 4 * i) / (HI ? 8 : 16));  // -16 / -8 * sum a
#pragma GCC unroll 16
        for (int s = 0; s < 8; ++s) {
            if (h == 0) ggml_repack_prefetch_part<8>(g, group_bytes, s);
            const __m256i v = load_half(g + ggml_repack_q4_0_qs + 64 * (s % 4) + 32 * h);
            __m256i w = _mm256_and_si256(s < 4 ? v : _mm256_srli_epi16(v, 4), low4);
            if constexpr (HI) {
                const __m256i hv = load_half(g + ggml_repack_q5_0_qh + 32 * h);
                const __m256i hb = s < 4 ? _mm256_slli_epi16(hv, 4 - s) : _mm256_srli_epi16(hv, s - 4);
                w = _mm256_or_si256(w, _mm256_and_si256(hb, _mm256_set1_epi8(0x10)));
            }
#pragma GCC unroll 16
            for (int c = 0; c < NC; ++c) acc[c] = dot4(acc[c], w, bcast(act[c][i].qs + 4 * s));
        }
        const __m256 d = load_f16x8(g + 16 * h);
#pragma GCC unroll 16
        for (int c = 0; c < NC; ++c) {
            const __m256 dd = _mm256_mul_ps(d, _mm256_set1_ps(_cvtsh_ss(act[c][i].d)));
            sum[c] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(acc[c]), dd, sum[c]);
        }
    }
    store_half<NC>(sum, y, ldy, rows);
}

// Q4_1: the mins, then Q4_0's group block, against Q8_1 activations; per block
// (d * d_b) * sum q * b + m * s_b.
template <int NC>
void tile_q4_1(int64_t nb, const uint8_t * gb, int h, const uint8_t * col, size_t ldb, float * y, int64_t ldy, int rows) {
    __m256 sum[NC];
    const block_q8_1 * act[NC];
#pragma GCC unroll 16
    for (int c = 0; c < NC; ++c) {
        sum[c] = _mm256_setzero_ps();
        act[c] = reinterpret_cast<const block_q8_1 *>(col + size_t(c) * ldb);
    }
    const __m256i low4 = _mm256_set1_epi8(0x0F);
    for (int64_t i = 0; i < nb; ++i) {
        const uint8_t * g = gb + size_t(i) * ggml_repack_q4_1_group_bytes;
        const uint8_t * in = g + ggml_repack_q4_1_inner;
        __m256i acc[NC];
#pragma GCC unroll 16
        for (int c = 0; c < NC; ++c) acc[c] = _mm256_setzero_si256();
#pragma GCC unroll 16
        for (int s = 0; s < 8; ++s) {
            if (h == 0) ggml_repack_prefetch_part<8>(g, ggml_repack_q4_1_group_bytes, s);
            const __m256i v = load_half(in + ggml_repack_q4_0_qs + 64 * (s % 4) + 32 * h);
            const __m256i w = _mm256_and_si256(s < 4 ? v : _mm256_srli_epi16(v, 4), low4);
#pragma GCC unroll 16
            for (int c = 0; c < NC; ++c) acc[c] = dot4(acc[c], w, bcast(act[c][i].qs + 4 * s));
        }
        const __m256 d = load_f16x8(in + 16 * h);
        const __m256 m = load_f16x8(g + 16 * h);
#pragma GCC unroll 16
        for (int c = 0; c < NC; ++c) {
            const __m256 dd = _mm256_mul_ps(d, _mm256_set1_ps(_cvtsh_ss(act[c][i].d)));
            sum[c] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(acc[c]), dd, sum[c]);
            sum[c] = _mm256_fmadd_ps(m, _mm256_set1_ps(_cvtsh_ss(act[c][i].s)), sum[c]);
        }
    }
    store_half<NC>(sum, y, ldy, rows);
}

// The codes of Q4_K of half h, vector s of sub-block j = 2 t + nib; with HI Q5_K's: the fifth
// bits (bit s of each byte for step s) merged in as bit 4.
template <bool HI>
inline __m256i q4_K_codes(const uint8_t * g, int h, int t, int nib, int s) {
    constexpr size_t qs = ggml_repack_q4_K_qs;
    __m256i w = load_half(g + qs + 512 * t + 64 * s + 32 * h);
    w = _mm256_and_si256(nib ? _mm256_srli_epi16(w, 4) : w, _mm256_set1_epi8(0x0F));
    if constexpr (HI) {
        const __m256i hv = load_half(g + ggml_repack_q5_K_qh + 128 * t + 64 * nib + 32 * h);
        const __m256i hb = s < 4 ? _mm256_slli_epi16(hv, 4 - s) : _mm256_srli_epi16(hv, s - 4);
        w = _mm256_or_si256(w, _mm256_and_si256(hb, _mm256_set1_epi8(0x10)));
    }
    return w;
}

// Q4_K, and Q5_K with HI. With `ready` (see run_k_tiles), the codes come decoded from there:
// vector 64 i + 8 j + s.
template <int NC, bool HI = false>
void tile_q4_K(int64_t nb, const uint8_t * gb, int h, const uint8_t * col, size_t ldb, float * y, int64_t ldy, int rows,
               const __m256i * ready) {
    constexpr size_t group_bytes = HI ? ggml_repack_q5_K_group_bytes : ggml_repack_q4_K_group_bytes;
    constexpr int flush = HI ? 4 : 8;  // steps whose 16-bit sums cannot overflow
    __m256 sum[NC];
    const block_q8_K * act[NC];
#pragma GCC unroll 16
    for (int c = 0; c < NC; ++c) {
        sum[c] = _mm256_setzero_ps();
        act[c] = reinterpret_cast<const block_q8_K *>(col + size_t(c) * ldb);
    }
    for (int64_t i = 0; i < nb; ++i) {
        const uint8_t * g = gb + size_t(i) * group_bytes;
        // sum_j sc_j * dot_j, exact: VPMADDUBSW pairs summed in 16 bits over `flush` steps (at
        // most 8 * 2 * 15 * 127 = 30480 for Q4_K, 4 * 2 * 31 * 127 = 31496 for Q5_K), then
        // VPMADDWD with (sc, sc)
        __m256i part[NC];
#pragma GCC unroll 16
        for (int c = 0; c < NC; ++c) part[c] = _mm256_setzero_si256();
        for (int t = 0; t < 4; ++t)
#pragma GCC unroll 2
        for (int nib = 0; nib < 2; ++nib) {
            const int j = 2 * t + nib;  // sub-block
            if (h == 0 && !ready) ggml_repack_prefetch_part<8>(g, group_bytes, j);
            const __m128i sc8 = _mm_loadl_epi64(reinterpret_cast<const __m128i *>(g + ggml_repack_q4_K_sc + 16 * j + 8 * h));
            const __m256i sc = _mm256_cvtepu8_epi32(sc8);
            const __m256i sc_pair = _mm256_or_si256(sc, _mm256_slli_epi32(sc, 16));
            __m256i acc[NC];
#pragma GCC unroll 16
            for (int c = 0; c < NC; ++c) acc[c] = _mm256_setzero_si256();
#pragma GCC unroll 16
            for (int s = 0; s < 8; ++s) {
                const __m256i w = ready ? _mm256_load_si256(ready + 64 * i + 8 * j + s) : q4_K_codes<HI>(g, h, t, nib, s);
#pragma GCC unroll 16
                for (int c = 0; c < NC; ++c) {
                    acc[c] = _mm256_add_epi16(acc[c], _mm256_maddubs_epi16(w, bcast(act[c][i].qs + 32 * j + 4 * s)));
                }
                if ((s + 1) % flush == 0) {
#pragma GCC unroll 16
                    for (int c = 0; c < NC; ++c) {
                        part[c] = _mm256_add_epi32(part[c], _mm256_madd_epi16(acc[c], sc_pair));
                        acc[c] = _mm256_setzero_si256();
                    }
                }
            }
        }
        // the mins against the sub-blocks' code sums (act_q8_K_pairs_avx2)
        __m256i macc[NC];
#pragma GCC unroll 16
        for (int c = 0; c < NC; ++c) macc[c] = _mm256_setzero_si256();
#pragma GCC unroll 16
        for (int p = 0; p < 4; ++p) {
            const __m256i mn = _mm256_cvtepu8_epi16(
                _mm_loadu_si128(reinterpret_cast<const __m128i *>(g + ggml_repack_q4_K_mn + 32 * p + 16 * h)));
#pragma GCC unroll 16
            for (int c = 0; c < NC; ++c) macc[c] = _mm256_add_epi32(macc[c], _mm256_madd_epi16(mn, bcast(act[c][i].bsums + 2 * p)));
        }
        const __m256 d = load_f16x8(g + 16 * h);
        const __m256 dmin = load_f16x8(g + ggml_repack_q4_K_dmin + 16 * h);
#pragma GCC unroll 16
        for (int c = 0; c < NC; ++c) {
            const __m256 t = _mm256_fmsub_ps(d, _mm256_cvtepi32_ps(part[c]), _mm256_mul_ps(dmin, _mm256_cvtepi32_ps(macc[c])));
            sum[c] = _mm256_fmadd_ps(t, _mm256_set1_ps(act[c][i].d), sum[c]);
        }
    }
    store_half<NC>(sum, y, ldy, rows);
}

inline __m256i q6_K_codes(const uint8_t * unit, int h, int u, int s) {
    const __m256i lo_v = load_half(unit + 64 * (4 * (u % 2) + s) + 32 * h);
    const __m256i hi_v = load_half(unit + 512 + 64 * s + 32 * h);
    const __m256i lo = _mm256_and_si256(u < 2 ? lo_v : _mm256_srli_epi16(lo_v, 4), _mm256_set1_epi8(0x0F));
    __m256i hi;
    switch (u) {
        case 0: hi = _mm256_slli_epi16(hi_v, 4); break;
        case 1: hi = _mm256_slli_epi16(hi_v, 2); break;
        case 2: hi = hi_v; break;
        default: hi = _mm256_srli_epi16(hi_v, 2); break;
    }
    return _mm256_or_si256(lo, _mm256_and_si256(hi, _mm256_set1_epi8(0x30)));
}

// Q3_K: low 2 bits at bits 2u of low vector s | bit 4 (u % 2) + s of high vector u / 2 as bit 2.
inline __m256i q3_K_codes(const uint8_t * unit, int h, int u, int s) {
    const __m256i lo_v = load_half(unit + 64 * s + 32 * h);
    const __m256i hi_v = load_half(unit + 256 + 64 * (u / 2) + 32 * h);
    const int hs = 4 * (u % 2) + s - 2;  // high bit's position - 2
    const __m256i hi = hs >= 0 ? _mm256_srli_epi16(hi_v, hs) : _mm256_slli_epi16(hi_v, -hs);
    const __m256i lo = _mm256_srli_epi16(lo_v, 2 * u);
    return _mm256_or_si256(_mm256_and_si256(lo, _mm256_set1_epi8(3)), _mm256_and_si256(hi, _mm256_set1_epi8(4)));
}

inline __m256i q6_K_scale_pairs(const uint8_t * g, int h, int p) {
    return _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i *>(g + ggml_repack_q6_K_sc + 32 * p + 16 * h)));
}

// 16-element sub-blocks. Per format: the codes of (unit, u, s), the scale pairs of sub-blocks
// 2p, 2p+1, the pairs that weight the activation sums (bsums), and the block's value from the
// integer sums part (scales x dots) and macc (pairs x bsums) for activation scale yd.
// Q6_K and Q3_K: codes q + 2^shift, signed scales, value d * yd * (part - 2^shift * macc).
template <int Shift>
struct fmt_k16_offset {
    static constexpr size_t bytes = Shift == 5 ? ggml_repack_q6_K_group_bytes : ggml_repack_q3_K_group_bytes;
    static constexpr size_t qs = Shift == 5 ? ggml_repack_q6_K_qs : ggml_repack_q3_K_qs;
    static constexpr size_t unit = Shift == 5 ? ggml_repack_q6_K_unit : ggml_repack_q3_K_unit;
    static __m256i codes(const uint8_t * u8, int h, int u, int s) {
        return Shift == 5 ? q6_K_codes(u8, h, u, s) : q3_K_codes(u8, h, u, s);
    }
    static __m256i scale_pairs(const uint8_t * g, int h, int p) { return q6_K_scale_pairs(g, h, p); }
    static __m256i sum_pairs(const uint8_t * g, int h, int p) { return q6_K_scale_pairs(g, h, p); }
    static __m256 value(__m256i part, __m256i macc, const uint8_t * g, int h, float yd) {
        const __m256i t = _mm256_sub_epi32(part, _mm256_slli_epi32(macc, Shift));
        return _mm256_mul_ps(_mm256_cvtepi32_ps(t), _mm256_mul_ps(load_f16x8(g + 16 * h), _mm256_set1_ps(yd)));
    }
};

using fmt_q6_K = fmt_k16_offset<5>;
using fmt_q3_K = fmt_k16_offset<2>;
static_assert(ggml_repack_q3_K_sc == ggml_repack_q6_K_sc, "Q3_K's scale pairs sit where Q6_K's do");

// Q2_K: codes at bits 2u of vector s; scale | min << 4 bytes; value yd * (d * part - dmin * macc).
struct fmt_q2_K {
    static constexpr size_t bytes = ggml_repack_q2_K_group_bytes, qs = ggml_repack_q2_K_qs, unit = 256;
    static __m256i codes(const uint8_t * u8, int h, int u, int s) {
        return _mm256_and_si256(_mm256_srli_epi16(load_half(u8 + 64 * s + 32 * h), 2 * u), _mm256_set1_epi8(3));
    }
    static __m256i sm_pairs(const uint8_t * g, int h, int p) {
        return _mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i *>(g + ggml_repack_q2_K_sm + 32 * p + 16 * h)));
    }
    static __m256i scale_pairs(const uint8_t * g, int h, int p) {
        return _mm256_and_si256(sm_pairs(g, h, p), _mm256_set1_epi16(0x0F));
    }
    static __m256i sum_pairs(const uint8_t * g, int h, int p) { return _mm256_srli_epi16(sm_pairs(g, h, p), 4); }
    static __m256 value(__m256i part, __m256i macc, const uint8_t * g, int h, float yd) {
        const __m256 t = _mm256_fmsub_ps(load_f16x8(g + 16 * h), _mm256_cvtepi32_ps(part),
                                         _mm256_mul_ps(load_f16x8(g + ggml_repack_q2_K_dmin + 16 * h), _mm256_cvtepi32_ps(macc)));
        return _mm256_mul_ps(t, _mm256_set1_ps(yd));
    }
};

// With `ready` (see run_k_tiles), the codes come decoded from there: vector 64 i + 4 j + s.
template <typename F, int NC>
void tile_k16(int64_t nb, const uint8_t * gb, int h, const uint8_t * col, size_t ldb, float * y, int64_t ldy, int rows,
              const __m256i * ready) {
    __m256 sum[NC];
    const block_q8_K * act[NC];
#pragma GCC unroll 16
    for (int c = 0; c < NC; ++c) {
        sum[c] = _mm256_setzero_ps();
        act[c] = reinterpret_cast<const block_q8_K *>(col + size_t(c) * ldb);
    }
    for (int64_t i = 0; i < nb; ++i) {
        const uint8_t * g = gb + size_t(i) * F::bytes;
        // sum_j sc_j * dot_j, exact: VPMADDUBSW pairs of two steps summed in 16 bits (at most
        // 2 * 2 * 63 * 127 = 32004), then VPMADDWD with (sc, sc)
        __m256i part[NC];
#pragma GCC unroll 16
        for (int c = 0; c < NC; ++c) part[c] = _mm256_setzero_si256();
        for (int t = 0; t < 4; ++t)
#pragma GCC unroll 4
        for (int u = 0; u < 4; ++u) {
            const int j = 4 * t + u;  // sub-block
            if (h == 0 && !ready) ggml_repack_prefetch_part<16>(g, F::bytes, j);
            const uint8_t * unit = g + F::qs + F::unit * t;
            const __m256i scp = F::scale_pairs(g, h, j / 2);
            const __m256i sc_pair = u % 2 ? _mm256_shufflehi_epi16(_mm256_shufflelo_epi16(scp, 0xF5), 0xF5)
                                          : _mm256_shufflehi_epi16(_mm256_shufflelo_epi16(scp, 0xA0), 0xA0);
#pragma GCC unroll 2
            for (int s0 = 0; s0 < 4; s0 += 2) {
                const __m256i w0 = ready ? _mm256_load_si256(ready + 64 * i + 4 * j + s0) : F::codes(unit, h, u, s0);
                const __m256i w1 = ready ? _mm256_load_si256(ready + 64 * i + 4 * j + s0 + 1) : F::codes(unit, h, u, s0 + 1);
#pragma GCC unroll 16
                for (int c = 0; c < NC; ++c) {
                    const int8_t * a = act[c][i].qs + 16 * j + 4 * s0;
                    const __m256i p16 = _mm256_add_epi16(_mm256_maddubs_epi16(w0, bcast(a)), _mm256_maddubs_epi16(w1, bcast(a + 4)));
                    part[c] = _mm256_add_epi32(part[c], _mm256_madd_epi16(p16, sc_pair));
                }
            }
        }
        __m256i macc[NC];
#pragma GCC unroll 16
        for (int c = 0; c < NC; ++c) macc[c] = _mm256_setzero_si256();
#pragma GCC unroll 16
        for (int p = 0; p < 8; ++p) {
            const __m256i scp = F::sum_pairs(g, h, p);
#pragma GCC unroll 16
            for (int c = 0; c < NC; ++c) {
                macc[c] = _mm256_add_epi32(macc[c], _mm256_madd_epi16(scp, bcast(act[c][i].bsums + 2 * p)));
            }
        }
#pragma GCC unroll 16
        for (int c = 0; c < NC; ++c) sum[c] = _mm256_add_ps(sum[c], F::value(part[c], macc[c], g, h, act[c][i].d));
    }
    store_half<NC>(sum, y, ldy, rows);
}

// IQ4_XS: per sub-block the signed codebook values as |a| x (w with a's sign) into int32 (Q8_K
// codes may be -128, whose negation leaves a byte; no codebook value's does), weighted by
// ls - 32 in int32 (the plain kernel's integer sum), scaled once per block.
template <int NC>
void tile_iq4_xs(int64_t nb, const uint8_t * gb, int h, const uint8_t * col, size_t ldb, float * y, int64_t ldy,
                 int rows) {
    const __m256i cb = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i *>(ggml_iq4nl_codebook)));
    const __m256i low4 = _mm256_set1_epi8(0x0F);
    __m256 sum[NC];
    const block_q8_K * act[NC];
#pragma GCC unroll 16
    for (int c = 0; c < NC; ++c) {
        sum[c] = _mm256_setzero_ps();
        act[c] = reinterpret_cast<const block_q8_K *>(col + size_t(c) * ldb);
    }
    for (int64_t i = 0; i < nb; ++i) {
        const uint8_t * g = gb + size_t(i) * ggml_repack_iq4_xs_group_bytes;
        __m256i isum[NC];
#pragma GCC unroll 16
        for (int c = 0; c < NC; ++c) isum[c] = _mm256_setzero_si256();
        for (int t = 0; t < 4; ++t)
#pragma GCC unroll 2
        for (int nib = 0; nib < 2; ++nib) {
            const int j = 2 * t + nib;  // sub-block
            if (h == 0) ggml_repack_prefetch_part<8>(g, ggml_repack_iq4_xs_group_bytes, j);
            const uint8_t * qs = g + ggml_repack_iq4_xs_qs + 512 * t + 32 * h;
            __m256i acc[NC];
#pragma GCC unroll 16
            for (int c = 0; c < NC; ++c) acc[c] = _mm256_setzero_si256();
#pragma GCC unroll 16
            for (int s = 0; s < 8; ++s) {
                const __m256i v = load_half(qs + 64 * s);
                const __m256i w = _mm256_shuffle_epi8(cb, _mm256_and_si256(nib ? _mm256_srli_epi16(v, 4) : v, low4));
#pragma GCC unroll 16
                for (int c = 0; c < NC; ++c) {
                    const __m256i a = bcast(act[c][i].qs + 32 * j + 4 * s);
                    acc[c] = dot4(acc[c], _mm256_abs_epi8(a), _mm256_sign_epi8(w, a));
                }
            }
            const __m256i sc = _mm256_cvtepi8_epi32(
                _mm_loadl_epi64(reinterpret_cast<const __m128i *>(g + ggml_repack_iq4_xs_sc + 16 * j + 8 * h)));
#pragma GCC unroll 16
            for (int c = 0; c < NC; ++c) isum[c] = _mm256_add_epi32(isum[c], _mm256_mullo_epi32(acc[c], sc));
        }
        const __m256 d = load_f16x8(g + 16 * h);
#pragma GCC unroll 16
        for (int c = 0; c < NC; ++c) {
            sum[c] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(isum[c]), _mm256_mul_ps(d, _mm256_set1_ps(act[c][i].d)), sum[c]);
        }
    }
    store_half<NC>(sum, y, ldy, rows);
}

using tile_fn = void (*)(int64_t, const uint8_t *, int, const uint8_t *, size_t, float *, int64_t, int);

template <tile_fn F1, tile_fn F2, tile_fn F3, tile_fn F4>
void run_tiles(int64_t nb, const void * a, size_t lda, int64_t nr, const void * b, size_t ldb, int64_t nc, float * y,
               int64_t ldy) {
    static constexpr tile_fn tiles[k_max_cols] = {F1, F2, F3, F4};
    for (int64_t r0 = 0; r0 < nr; r0 += GGML_REPACK_ROWS) {
        const uint8_t * gb = static_cast<const uint8_t *>(a) + size_t(r0) * lda;
        for (int h = 0; h < 2; ++h) {
            const int rows = int(std::min<int64_t>(8, nr - r0 - 8 * h));
            if (rows <= 0) break;
            for (int64_t c0 = 0; c0 < nc; c0 += k_max_cols) {
                const int n = int(std::min<int64_t>(k_max_cols, nc - c0));
                tiles[n - 1](nb, gb, h, static_cast<const uint8_t *>(b) + size_t(c0) * ldb, ldb, y + c0 * ldy + r0 + 8 * h,
                             ldy, rows);
            }
        }
    }
}

void dot_q8_0_avx2(int64_t k, const void * a, size_t lda, int64_t nr, const void * b, size_t ldb, int64_t nc,
                   float * y, int64_t ldy) {
    run_tiles<tile_q8_0<1>, tile_q8_0<2>, tile_q8_0<3>, tile_q8_0<4>>(k / QK8_0, a, lda, nr, b, ldb, nc, y, ldy);
}

void dot_q4_0_avx2(int64_t k, const void * a, size_t lda, int64_t nr, const void * b, size_t ldb, int64_t nc,
                   float * y, int64_t ldy) {
    run_tiles<tile_q4_0<1>, tile_q4_0<2>, tile_q4_0<3>, tile_q4_0<4>>(k / QK4_0, a, lda, nr, b, ldb, nc, y, ldy);
}

void dot_q5_0_avx2(int64_t k, const void * a, size_t lda, int64_t nr, const void * b, size_t ldb, int64_t nc,
                   float * y, int64_t ldy) {
    run_tiles<tile_q4_0<1, true>, tile_q4_0<2, true>, tile_q4_0<3, true>, tile_q4_0<4, true>>(k / QK5_0, a, lda, nr, b, ldb,
                                                                                            nc, y, ldy);
}

void dot_q4_1_avx2(int64_t k, const void * a, size_t lda, int64_t nr, const void * b, size_t ldb, int64_t nc,
                   float * y, int64_t ldy) {
    run_tiles<tile_q4_1<1>, tile_q4_1<2>, tile_q4_1<3>, tile_q4_1<4>>(k / QK4_1, a, lda, nr, b, ldb, nc, y, ldy);
}

void dot_mxfp4_avx2(int64_t k, const void * a, size_t lda, int64_t nr, const void * b, size_t ldb, int64_t nc,
                    float * y, int64_t ldy) {
    run_tiles<tile_mxfp4<1>, tile_mxfp4<2>, tile_mxfp4<3>, tile_mxfp4<4>>(k / QK_MXFP4, a, lda, nr, b, ldb, nc, y, ldy);
}

void dot_iq4_nl_avx2(int64_t k, const void * a, size_t lda, int64_t nr, const void * b, size_t ldb, int64_t nc,
                     float * y, int64_t ldy) {
    run_tiles<tile_iq4_nl<1>, tile_iq4_nl<2>, tile_iq4_nl<3>, tile_iq4_nl<4>>(k / QK4_NL, a, lda, nr, b, ldb, nc, y, ldy);
}

// The K-quants against more than two tiles of columns: the tiles decode each code vector once per
// 4 columns, which costs 15-30% of a prompt batch against a kernel that decodes once for every
// column (inferd-kernel-bench mat_mat 4096 x 4096 x 512 on one thread, against the plain
// layout's GEMM: Q4_K 137 / 161 GFLOP/s, Q6_K 108 / 154). So each half of a group is decoded
// once into `ready` (per-thread scratch, 64 vectors of 32 codes per block: 2 KiB) with the
// group's prefetch, and the column tiles read the codes from there. With 2 tiles the decoding
// pass costs what it saves (measured: 8 columns 4-8% slower, 16 columns 8-10% faster).
constexpr int64_t k_ready_min_cols = 2 * k_max_cols + 1;
using ktile_fn = void (*)(int64_t, const uint8_t *, int, const uint8_t *, size_t, float *, int64_t, int, const __m256i *);
using kdecode_fn = void (*)(int64_t, const uint8_t *, int, __m256i *);

template <bool HI>
void decode_q4_K(int64_t nb, const uint8_t * gb, int h, __m256i * out) {
    constexpr size_t group_bytes = HI ? ggml_repack_q5_K_group_bytes : ggml_repack_q4_K_group_bytes;
    for (int64_t i = 0; i < nb; ++i) {
        const uint8_t * g = gb + size_t(i) * group_bytes;
        for (int j = 0; j < 8; ++j) {
            if (h == 0) ggml_repack_prefetch_part<8>(g, group_bytes, j);
#pragma GCC unroll 8
            for (int s = 0; s < 8; ++s) _mm256_store_si256(out + 64 * i + 8 * j + s, q4_K_codes<HI>(g, h, j / 2, j % 2, s));
        }
    }
}

template <typename F>
void decode_k16(int64_t nb, const uint8_t * gb, int h, __m256i * out) {
    for (int64_t i = 0; i < nb; ++i) {
        const uint8_t * g = gb + size_t(i) * F::bytes;
        for (int t = 0; t < 4; ++t) {
            const uint8_t * unit = g + F::qs + F::unit * t;
#pragma GCC unroll 4
            for (int u = 0; u < 4; ++u) {
                const int j = 4 * t + u;
                if (h == 0) ggml_repack_prefetch_part<16>(g, F::bytes, j);
#pragma GCC unroll 4
                for (int s = 0; s < 4; ++s) _mm256_store_si256(out + 64 * i + 4 * j + s, F::codes(unit, h, u, s));
            }
        }
    }
}

template <kdecode_fn Decode, ktile_fn F1, ktile_fn F2, ktile_fn F3, ktile_fn F4>
void run_k_tiles(int64_t nb, const void * a, size_t lda, int64_t nr, const void * b, size_t ldb, int64_t nc, float * y,
                 int64_t ldy) {
    static constexpr ktile_fn tiles[k_max_cols] = {F1, F2, F3, F4};
    __m256i * ready = nullptr;
    if (nc > k_ready_min_cols) ready = static_cast<__m256i *>(ggml_cpu_thread_scratch(size_t(nb) * 64 * sizeof(__m256i)));
    for (int64_t r0 = 0; r0 < nr; r0 += GGML_REPACK_ROWS) {
        const uint8_t * gb = static_cast<const uint8_t *>(a) + size_t(r0) * lda;
        for (int h = 0; h < 2; ++h) {
            const int rows = int(std::min<int64_t>(8, nr - r0 - 8 * h));
            if (rows <= 0) break;
            if (ready) Decode(nb, gb, h, ready);
            for (int64_t c0 = 0; c0 < nc; c0 += k_max_cols) {
                const int n = int(std::min<int64_t>(k_max_cols, nc - c0));
                tiles[n - 1](nb, gb, h, static_cast<const uint8_t *>(b) + size_t(c0) * ldb, ldb, y + c0 * ldy + r0 + 8 * h,
                             ldy, rows, ready);
            }
        }
    }
}

void dot_q4_K_avx2(int64_t k, const void * a, size_t lda, int64_t nr, const void * b, size_t ldb, int64_t nc,
                   float * y, int64_t ldy) {
    run_k_tiles<decode_q4_K<false>, tile_q4_K<1>, tile_q4_K<2>, tile_q4_K<3>, tile_q4_K<4>>(k / QK_K, a, lda, nr, b, ldb,
                                                                                          nc, y, ldy);
}

void dot_q5_K_avx2(int64_t k, const void * a, size_t lda, int64_t nr, const void * b, size_t ldb, int64_t nc,
                   float * y, int64_t ldy) {
    run_k_tiles<decode_q4_K<true>, tile_q4_K<1, true>, tile_q4_K<2, true>, tile_q4_K<3, true>, tile_q4_K<4, true>>(
        k / QK_K, a, lda, nr, b, ldb, nc, y, ldy);
}

void dot_q6_K_avx2(int64_t k, const void * a, size_t lda, int64_t nr, const void * b, size_t ldb, int64_t nc,
                   float * y, int64_t ldy) {
    run_k_tiles<decode_k16<fmt_q6_K>, tile_k16<fmt_q6_K, 1>, tile_k16<fmt_q6_K, 2>, tile_k16<fmt_q6_K, 3>,
                tile_k16<fmt_q6_K, 4>>(k / QK_K, a, lda, nr, b, ldb, nc, y, ldy);
}

void dot_q2_K_avx2(int64_t k, const void * a, size_t lda, int64_t nr, const void * b, size_t ldb, int64_t nc,
                   float * y, int64_t ldy) {
    run_k_tiles<decode_k16<fmt_q2_K>, tile_k16<fmt_q2_K, 1>, tile_k16<fmt_q2_K, 2>, tile_k16<fmt_q2_K, 3>,
                tile_k16<fmt_q2_K, 4>>(k / QK_K, a, lda, nr, b, ldb, nc, y, ldy);
}

void dot_q3_K_avx2(int64_t k, const void * a, size_t lda, int64_t nr, const void * b, size_t ldb, int64_t nc,
                   float * y, int64_t ldy) {
    run_k_tiles<decode_k16<fmt_q3_K>, tile_k16<fmt_q3_K, 1>, tile_k16<fmt_q3_K, 2>, tile_k16<fmt_q3_K, 3>,
                tile_k16<fmt_q3_K, 4>>(k / QK_K, a, lda, nr, b, ldb, nc, y, ldy);
}

void dot_iq4_xs_avx2(int64_t k, const void * a, size_t lda, int64_t nr, const void * b, size_t ldb, int64_t nc,
                     float * y, int64_t ldy) {
    run_tiles<tile_iq4_xs<1>, tile_iq4_xs<2>, tile_iq4_xs<3>, tile_iq4_xs<4>>(k / QK_K, a, lda, nr, b, ldb, nc, y, ldy);
}

// Q8_K activations of the Q4_K and Q5_K tiles with the sub-blocks' code sums
// (ggml_repack_q8_K_pair_sums), added once per column instead of in every tile.
void act_q8_K_pairs_avx2(const float * x, void * y, int64_t k) {
    ggml_quantize_row_q8_K_avx2(x, y, k);
    ggml_repack_q8_K_pair_sums(y, k);
}

void act_q8_0_avx2(const float * x, void * y, int64_t k) {
    ggml_quantize_row_q8_0_avx2(x, y, k);
    ggml_repack_q8_0_sums(y, k);
}

}  // namespace

constinit const ggml_repack_kernels ggml_repack_kernels_avx2 = ggml_repack_make_kernels({
    ggml_repack_entry{GGML_TYPE_Q4_0, dot_q4_0_avx2, act_q8_0_avx2},
    ggml_repack_entry{GGML_TYPE_Q8_0, dot_q8_0_avx2, act_q8_0_avx2},
    ggml_repack_entry{GGML_TYPE_IQ4_NL, dot_iq4_nl_avx2, act_q8_0_avx2},
    ggml_repack_entry{GGML_TYPE_Q4_K, dot_q4_K_avx2, act_q8_K_pairs_avx2},
    ggml_repack_entry{GGML_TYPE_Q5_K, dot_q5_K_avx2, act_q8_K_pairs_avx2},
    ggml_repack_entry{GGML_TYPE_Q6_K, dot_q6_K_avx2, ggml_quantize_row_q8_K_avx2},
    ggml_repack_entry{GGML_TYPE_IQ4_XS, dot_iq4_xs_avx2, ggml_quantize_row_q8_K_avx2},
    ggml_repack_entry{GGML_TYPE_Q5_0, dot_q5_0_avx2, act_q8_0_avx2},
    ggml_repack_entry{GGML_TYPE_Q4_1, dot_q4_1_avx2, ggml_quantize_row_q8_1_avx2},
    ggml_repack_entry{GGML_TYPE_MXFP4, dot_mxfp4_avx2, act_q8_0_avx2},
    ggml_repack_entry{GGML_TYPE_Q3_K, dot_q3_K_avx2, ggml_quantize_row_q8_K_avx2},
    ggml_repack_entry{GGML_TYPE_Q2_K, dot_q2_K_avx2, ggml_quantize_row_q8_K_avx2},
});
