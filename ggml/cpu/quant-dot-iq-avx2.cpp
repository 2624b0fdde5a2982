// AVX2 dot kernels of the codebook formats (see quant-dot.h): IQ4_NL x Q8_0, MXFP4 x Q8_0,
// IQ4_XS x Q8_K.
//
// Work goes in pairs of sub-blocks (64 elements: 2 IQ4_NL / MXFP4 blocks, or a quarter of an
// IQ4_XS super-block). A weight pair is decoded into two registers of signed codes by one VPSHUFB
// lookup of the int8 codebook each, lo (elements 0..15 of sub-block 0, then of sub-block 1) and
// hi (elements 16..31), plus the two sub-block scales spread over the 8 float lanes (lanes 0..3:
// sub-block 0, 4..7: sub-block 1).
//
// VPMADDUBSW multiplies unsigned by signed bytes, and both sides are signed here; Q8_K codes may
// be -128, whose negation does not fit a byte, while every codebook value's does (|v| <= 127).
// So the activations' magnitudes are the unsigned side and the weight codes take the
// activations' signs (VPSIGNB): |a| * (w * sign(a)) = a * w, at most 2 * 128 * 127 = 32512 per
// 16-bit pair (exact). VPMADDWD by 1 then leaves in lane l a partial integer sum of sub-block
// l / 4 (lo and hi widened separately: their sum could leave 16 bits), and one int->float
// conversion, one multiply by the activation scales and one FMA by the weight scales finish
// two sub-blocks.
//
// The activations are packed first (act_pair, on the stack), because each packed column is read
// by many weight rows. Mat-vec (nc == 1) streams the weight rows one at a time with a prefetch
// ahead, decoding on the fly (IQ4_XS: the column's y.d folded into the sub-block scales); mat-mat
// decodes 2 weight rows at a time into a small buffer once for up to 12 columns and runs register
// tiles of up to 2 rows x 3 columns.
//
// This file and quant-dot-iq-avx512.cpp are two algorithms, not one at two widths, so they are
// kept apart: here signed codebook codes meet the activations' magnitudes (VPSIGNB) in
// VPMADDUBSW; there the codes are offset to unsigned for VPDPBUSD (VNNI), and mat-mat from 9
// columns on runs 16 x 8 tiles over an interleaved copy of 16 rows.
#include "quant-dot.h"

#include "ggml/quants.h"

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
// GCC 12's intrinsics trip -Wuninitialized false positives.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop

namespace {

constexpr int k_tile_rows = 2, k_tile_cols = 3;  // the largest register tile
// Stack buffers of packed data: mat-vec packs k_act_pairs pairs of its column at a time
// (80 KiB); mat-mat packs k_chunk_pairs pairs of k_pass_cols columns (75 KiB) and of 2 weight
// rows (7.5 KiB) at a time.
constexpr int64_t k_act_pairs = 512;
constexpr int64_t k_pass_cols = 12, k_chunk_pairs = 40;
constexpr int64_t k_prefetch = 4096;  // bytes ahead in a weight row

// ---- packed activations ----

struct alignas(32) act_pair {
    int8_t lo[32], hi[32];     // signed codes: elements 0..15 of sub-block 0, then of sub-block 1; 16..31
    uint8_t alo[32], ahi[32];  // their magnitudes
    float d[8];                // lane l: the activation scale of sub-block l / 4
};

void store_act(__m256i lo, __m256i hi, __m256 d, act_pair & o) {
    _mm256_store_si256(reinterpret_cast<__m256i *>(o.lo), lo);
    _mm256_store_si256(reinterpret_cast<__m256i *>(o.hi), hi);
    _mm256_store_si256(reinterpret_cast<__m256i *>(o.alo), _mm256_abs_epi8(lo));
    _mm256_store_si256(reinterpret_cast<__m256i *>(o.ahi), _mm256_abs_epi8(hi));
    _mm256_store_ps(o.d, d);
}

// [f0 x4, f1 x4] from two fp16 values.
__m256 pair_lanes(ggml_fp16_t h0, ggml_fp16_t h1) {
    const __m128 f = _mm_cvtph_ps(_mm_cvtsi32_si128(int(uint32_t(h0) | uint32_t(h1) << 16)));
    return _mm256_permutevar8x32_ps(_mm256_castps128_ps256(f), _mm256_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1));
}

// n (1 or 2) Q8_0 blocks from first_block on into one pair; a missing block is zeros.
void pack_q8_0(const uint8_t * col, int64_t first_block, int n, act_pair & o) {
    const auto * b = reinterpret_cast<const block_q8_0 *>(col) + first_block;
    const __m256i q0 = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(b[0].qs));
    const __m256i q1 = n == 2 ? _mm256_loadu_si256(reinterpret_cast<const __m256i *>(b[1].qs)) : _mm256_setzero_si256();
    store_act(_mm256_permute2x128_si256(q0, q1, 0x20), _mm256_permute2x128_si256(q0, q1, 0x31),
              pair_lanes(b[0].d, n == 2 ? b[1].d : ggml_fp16_t(0)), o);
}

// Quarter p of a Q8_K block: sub-blocks 2 p and 2 p + 1 into one pair.
void pack_q8_K(const block_q8_K & b, int p, act_pair & o) {
    const __m256i a0 = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(b.qs + 64 * p));
    const __m256i a1 = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(b.qs + 64 * p + 32));
    store_act(_mm256_permute2x128_si256(a0, a1, 0x20), _mm256_permute2x128_si256(a0, a1, 0x31), _mm256_set1_ps(b.d), o);
}

// ---- weight decoders ----

struct w_pair {
    __m256i lo, hi;  // signed codes (codebook values)
    __m256 f;        // lane l: the weight scale of sub-block l / 4
};

__m256i codebook_table(const int8_t * codebook) {
    return _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i *>(codebook)));
}

// Codes of 32 bytes of nibbles: 16 bytes per sub-block, Q4_0 layout.
inline void lookup_nibbles(__m256i q, __m256i table, w_pair & w) {
    const __m256i low4 = _mm256_set1_epi8(0x0F);
    w.lo = _mm256_shuffle_epi8(table, _mm256_and_si256(q, low4));
    w.hi = _mm256_shuffle_epi8(table, _mm256_and_si256(_mm256_srli_epi16(q, 4), low4));
}

inline __m128i load_128(const uint8_t * p) { return _mm_loadu_si128(reinterpret_cast<const __m128i *>(p)); }

struct w_iq4_nl {
    using block = block_iq4_nl;
    static constexpr int64_t qk = QK4_NL;
    static constexpr int unit_blocks = 2, pairs_per_unit = 1;
    static constexpr bool act_q8_K = false, small_codes = false;
    static void decode(const uint8_t * p, int n, __m256i table, w_pair * w) {
        const block * b = reinterpret_cast<const block *>(p);
        const __m128i x1 = n == 2 ? load_128(b[1].qs) : _mm_setzero_si128();
        lookup_nibbles(_mm256_set_m128i(x1, load_128(b[0].qs)), table, w[0]);
        w[0].f = pair_lanes(b[0].d, n == 2 ? b[1].d : ggml_fp16_t(0));
    }
};

// 2^(e - 128) for every e: exponent field e - 1, or the subnormals 2^-128, 2^-127 for e = 0, 1.
struct e8m0_half_table {
    float v[256];
};
constexpr e8m0_half_table make_e8m0_half_table() {
    e8m0_half_table t{};
    for (uint32_t e = 0; e < 256; ++e) t.v[e] = std::bit_cast<float>(e < 2 ? uint32_t(0x00200000u) << e : (e - 1) << 23);
    return t;
}
alignas(64) constexpr e8m0_half_table k_e8m0_half = make_e8m0_half_table();

struct w_mxfp4 {
    using block = block_mxfp4;
    static constexpr int64_t qk = QK_MXFP4;
    static constexpr int unit_blocks = 2, pairs_per_unit = 1;
    static constexpr bool act_q8_K = false, small_codes = true;
    static void decode(const uint8_t * p, int n, __m256i table, w_pair * w) {
        const block * b = reinterpret_cast<const block *>(p);
        const __m128i x1 = n == 2 ? load_128(b[1].qs) : _mm_setzero_si128();
        lookup_nibbles(_mm256_set_m128i(x1, load_128(b[0].qs)), table, w[0]);
        const __m128 f0 = _mm_broadcast_ss(&k_e8m0_half.v[b[0].e]);
        const __m128 f1 = n == 2 ? _mm_broadcast_ss(&k_e8m0_half.v[b[1].e]) : _mm_setzero_ps();
        w[0].f = _mm256_set_m128(f1, f0);
    }
};

struct w_iq4_xs {
    using block = block_iq4_xs;
    static constexpr int64_t qk = QK_K;
    static constexpr int unit_blocks = 1, pairs_per_unit = 4;
    static constexpr bool act_q8_K = true, small_codes = false;
    // The scales come out multiplied by `times` (mat-vec folds the column's y.d into them).
    static void decode(const uint8_t * p, int /*n*/, __m256i table, w_pair * w, float times = 1.0f) {
        const block & b = *reinterpret_cast<const block *>(p);
        // ls of sub-block ib: nibble ib of scales_l (as a little-endian u32), bits 2 ib of scales_h
        uint32_t sl;
        std::memcpy(&sl, b.scales_l, 4);
        const __m256i lo = _mm256_and_si256(
            _mm256_srlv_epi32(_mm256_set1_epi32(int(sl)), _mm256_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28)),
            _mm256_set1_epi32(0x0F));
        const __m256i hi = _mm256_and_si256(_mm256_srlv_epi32(_mm256_set1_epi32(int(uint32_t(b.scales_h) << 4)),
                                                              _mm256_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14)),
                                            _mm256_set1_epi32(0x30));
        const __m256i sc = _mm256_sub_epi32(_mm256_or_si256(lo, hi), _mm256_set1_epi32(32));
        const __m256 s = _mm256_mul_ps(_mm256_cvtepi32_ps(sc), _mm256_set1_ps(_cvtsh_ss(b.d) * times));
        for (int q = 0; q < 4; ++q) {
            lookup_nibbles(_mm256_loadu_si256(reinterpret_cast<const __m256i *>(b.qs + 32 * q)), table, w[q]);
            const __m256i idx = _mm256_add_epi32(_mm256_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1), _mm256_set1_epi32(2 * q));
            w[q].f = _mm256_permutevar8x32_ps(s, idx);
        }
    }
};

template <class W>
__m256i table_of() {
    return codebook_table(std::is_same_v<W, w_mxfp4> ? ggml_mxfp4_codebook : ggml_iq4nl_codebook);
}

template <class W>
inline int unit_blocks_at(int64_t nb, int64_t u) {
    const int64_t left = nb - u * W::unit_blocks;
    return int(left < W::unit_blocks ? left : W::unit_blocks);
}

// Packs units [u0, u0 + n) of one column (nb weight blocks in all) into out[0 .. n * pairs_per_unit).
template <class W>
void pack_column(const uint8_t * col, int64_t nb, int64_t u0, int64_t n, act_pair * out) {
    for (int64_t u = 0; u < n; ++u) {
        if constexpr (W::act_q8_K) {
            const block_q8_K & b = reinterpret_cast<const block_q8_K *>(col)[u0 + u];
            for (int q = 0; q < 4; ++q) pack_q8_K(b, q, out[4 * u + q]);
        } else {
            pack_q8_0(col, (u0 + u) * W::unit_blocks, unit_blocks_at<W>(nb, u0 + u), out[u]);
        }
    }
}

// acc += the products of one decoded weight pair (lo, hi: signed codes) with one activation pair
// (ScaleAct: times the activation scales; else f holds them already).
template <bool SmallCodes, bool ScaleAct = true>
inline __attribute__((always_inline)) __m256 pair_dot(__m256i lo, __m256i hi, __m256 f, const act_pair & a,
                                                      __m256 acc) {
    const __m256i ones = _mm256_set1_epi16(1);
    const __m256i alo = _mm256_load_si256(reinterpret_cast<const __m256i *>(a.alo));
    const __m256i ahi = _mm256_load_si256(reinterpret_cast<const __m256i *>(a.ahi));
    const __m256i slo = _mm256_load_si256(reinterpret_cast<const __m256i *>(a.lo));
    const __m256i shi = _mm256_load_si256(reinterpret_cast<const __m256i *>(a.hi));
    const __m256i plo = _mm256_maddubs_epi16(alo, _mm256_sign_epi8(lo, slo));
    const __m256i phi = _mm256_maddubs_epi16(ahi, _mm256_sign_epi8(hi, shi));
    __m256i s;
    if (SmallCodes) {
        s = _mm256_madd_epi16(_mm256_add_epi16(plo, phi), ones);  // |codes| <= 12: 16-bit sums stay small
    } else {
        s = _mm256_add_epi32(_mm256_madd_epi16(plo, ones), _mm256_madd_epi16(phi, ones));
    }
    if (!ScaleAct) return _mm256_fmadd_ps(_mm256_cvtepi32_ps(s), f, acc);
    return _mm256_fmadd_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(s), _mm256_load_ps(a.d)), f, acc);
}

float hsum(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

template <int64_t Bytes>
inline __attribute__((always_inline)) void prefetch_unit(const uint8_t * p) {
#pragma GCC unroll 4
    for (int64_t off = 0; off < Bytes; off += 64) {
        _mm_prefetch(reinterpret_cast<const char *>(p + k_prefetch + off), _MM_HINT_T0);
    }
}

// ---- mat-vec: weight rows streamed and decoded on the fly ----

// Units [u0, u0 + n) of one row (at p, unit u0) against one packed column. IQ4_XS: the column's
// y.d, the same for the super-block's four pairs, is folded into the sub-block scales.
template <class W>
float row_dot(const uint8_t * p, int64_t nb, int64_t u0, int64_t n, __m256i table, const act_pair * act) {
    constexpr int64_t ub = W::unit_blocks * int64_t(sizeof(typename W::block));
    __m256 acc[2] = {_mm256_setzero_ps(), _mm256_setzero_ps()};
    for (int64_t u = 0; u < n; ++u, p += ub) {
        prefetch_unit<ub>(p);
        w_pair w[W::pairs_per_unit];
        const act_pair * a = act + u * W::pairs_per_unit;
        if constexpr (W::act_q8_K) {
            W::decode(p, W::unit_blocks, table, w, a[0].d[0]);
            for (int q = 0; q < W::pairs_per_unit; ++q) {
                acc[q % 2] = pair_dot<W::small_codes, false>(w[q].lo, w[q].hi, w[q].f, a[q], acc[q % 2]);
            }
        } else {
            W::decode(p, unit_blocks_at<W>(nb, u0 + u), table, w);
            acc[0] = pair_dot<W::small_codes>(w[0].lo, w[0].hi, w[0].f, a[0], acc[0]);
        }
    }
    return hsum(_mm256_add_ps(acc[0], acc[1]));
}

template <class W>
void mat_vec(int64_t nb, const uint8_t * a, size_t lda, int64_t nr, const uint8_t * b, float * y) {
    constexpr int64_t ub = W::unit_blocks * int64_t(sizeof(typename W::block));
    constexpr int64_t units_per_pass = k_act_pairs / W::pairs_per_unit;
    const int64_t n_units = (nb + W::unit_blocks - 1) / W::unit_blocks;
    const __m256i table = table_of<W>();
    alignas(32) act_pair act[k_act_pairs];
    for (int64_t u0 = 0; u0 < n_units; u0 += units_per_pass) {
        const int64_t n = n_units - u0 < units_per_pass ? n_units - u0 : units_per_pass;
        pack_column<W>(b, nb, u0, n, act);
        for (int64_t r = 0; r < nr; ++r) {
            const float s = row_dot<W>(a + size_t(r) * lda + size_t(u0 * ub), nb, u0, n, table, act);
            y[r] = u0 > 0 ? y[r] + s : s;
        }
    }
}

// ---- mat-mat: decoded weight pairs times packed activations in register tiles ----

struct alignas(32) w_packed {
    int8_t lo[32], hi[32];
    float f[8];
};

template <class W>
void pack_rows(const uint8_t * a, size_t lda, int64_t rows, int64_t nb, int64_t u0, int64_t n, __m256i table,
               w_packed * out) {
    constexpr int64_t ub = W::unit_blocks * int64_t(sizeof(typename W::block));
    const int64_t np = n * W::pairs_per_unit;
    for (int64_t r = 0; r < rows; ++r) {
        const uint8_t * p = a + size_t(r) * lda + size_t(u0 * ub);
        for (int64_t u = 0; u < n; ++u, p += ub) {
            w_pair w[W::pairs_per_unit];
            W::decode(p, unit_blocks_at<W>(nb, u0 + u), table, w);
            for (int q = 0; q < W::pairs_per_unit; ++q) {
                w_packed & o = out[r * np + u * W::pairs_per_unit + q];
                _mm256_store_si256(reinterpret_cast<__m256i *>(o.lo), w[q].lo);
                _mm256_store_si256(reinterpret_cast<__m256i *>(o.hi), w[q].hi);
                _mm256_store_ps(o.f, w[q].f);
            }
        }
    }
}

struct tile_args {
    const w_packed * w;
    const act_pair * act;
    int64_t np;  // pairs in the chunk (of each row and column)
    float * y;
    int64_t ldy;
    bool add;    // add to y (later chunks of k) instead of storing
};

// R rows x C columns over the chunk's pairs; the R decoded rows of a pair stay in registers.
template <bool SmallCodes, int R, int C>
void tile(const tile_args & t) {
    __m256 acc[R][C];
    for (int r = 0; r < R; ++r)
        for (int c = 0; c < C; ++c) acc[r][c] = _mm256_setzero_ps();
    for (int64_t i = 0; i < t.np; ++i) {
        __m256i lo[R], hi[R];
        __m256 f[R];
#pragma GCC unroll 4
        for (int r = 0; r < R; ++r) {
            const w_packed & w = t.w[r * t.np + i];
            lo[r] = _mm256_load_si256(reinterpret_cast<const __m256i *>(w.lo));
            hi[r] = _mm256_load_si256(reinterpret_cast<const __m256i *>(w.hi));
            f[r] = _mm256_load_ps(w.f);
        }
#pragma GCC unroll 4
        for (int c = 0; c < C; ++c)
#pragma GCC unroll 4
            for (int r = 0; r < R; ++r) {
                acc[r][c] = pair_dot<SmallCodes>(lo[r], hi[r], f[r], t.act[c * t.np + i], acc[r][c]);
            }
    }
    for (int c = 0; c < C; ++c)
        for (int r = 0; r < R; ++r) {
            const float s = hsum(acc[r][c]);
            float & out = t.y[c * t.ldy + r];
            out = t.add ? out + s : s;
        }
}

using tile_fn = void (*)(const tile_args &);

template <bool SmallCodes>
tile_fn tile_for(int64_t rows, int64_t cols) {
    static constexpr tile_fn one[k_tile_cols] = {tile<SmallCodes, 1, 1>, tile<SmallCodes, 1, 2>, tile<SmallCodes, 1, 3>};
    static constexpr tile_fn two[k_tile_cols] = {tile<SmallCodes, 2, 1>, tile<SmallCodes, 2, 2>, tile<SmallCodes, 2, 3>};
    return (rows == 1 ? one : two)[cols - 1];
}

// Passes of up to k_pass_cols columns; per pass and chunk of k the columns are packed once, and
// every 2 weight rows are decoded once for all the pass's columns.
template <class W>
void mat_mat(int64_t nb, const uint8_t * a, size_t lda, int64_t nr, const uint8_t * b, size_t ldb, int64_t nc,
             float * y, int64_t ldy) {
    constexpr int64_t chunk_units_max = k_chunk_pairs / W::pairs_per_unit;
    const int64_t n_units = (nb + W::unit_blocks - 1) / W::unit_blocks;
    const int64_t n_chunks = (n_units + chunk_units_max - 1) / chunk_units_max;
    const int64_t chunk = (n_units + n_chunks - 1) / n_chunks;
    const __m256i table = table_of<W>();
    alignas(32) act_pair act[k_pass_cols * k_chunk_pairs];
    alignas(32) w_packed w[k_tile_rows * k_chunk_pairs];
    tile_args t;
    t.w = w;
    t.ldy = ldy;
    for (int64_t c0 = 0; c0 < nc; c0 += k_pass_cols) {
        const int64_t ncols = nc - c0 < k_pass_cols ? nc - c0 : k_pass_cols;
        for (int64_t u0 = 0; u0 < n_units; u0 += chunk) {
            const int64_t n = n_units - u0 < chunk ? n_units - u0 : chunk;
            const int64_t np = n * W::pairs_per_unit;
            for (int64_t c = 0; c < ncols; ++c) pack_column<W>(b + size_t(c0 + c) * ldb, nb, u0, n, act + c * np);
            t.np = np;
            t.add = u0 > 0;
            for (int64_t r0 = 0; r0 < nr; r0 += k_tile_rows) {
                const int64_t rows = nr - r0 < k_tile_rows ? nr - r0 : k_tile_rows;
                pack_rows<W>(a + size_t(r0) * lda, lda, rows, nb, u0, n, table, w);
                for (int64_t cc = 0; cc < ncols; cc += k_tile_cols) {
                    t.act = act + cc * np;
                    t.y = y + (c0 + cc) * ldy + r0;
                    tile_for<W::small_codes>(rows, ncols - cc < k_tile_cols ? ncols - cc : k_tile_cols)(t);
                }
            }
        }
    }
}

// ---- the kernel ----

template <class W>
void dot_rows(int64_t k, const void * a, size_t lda, int64_t nr, const void * b, size_t ldb, int64_t nc, float * y,
              int64_t ldy) {
    const int64_t nb = k / W::qk;
    const uint8_t * pa = static_cast<const uint8_t *>(a);
    const uint8_t * pb = static_cast<const uint8_t *>(b);
    if (nb == 0) {
        for (int64_t c = 0; c < nc; ++c)
            for (int64_t r = 0; r < nr; ++r) y[c * ldy + r] = 0.0f;
        return;
    }
    if (nc == 1) {
        mat_vec<W>(nb, pa, lda, nr, pb, y);
        return;
    }
    mat_mat<W>(nb, pa, lda, nr, pb, ldb, nc, y, ldy);
}

}  // namespace

void ggml_dot_iq4_nl_q8_0_avx2(int64_t k, const void * a, size_t lda, int64_t nr, const void * b, size_t ldb,
                               int64_t nc, float * y, int64_t ldy) {
    dot_rows<w_iq4_nl>(k, a, lda, nr, b, ldb, nc, y, ldy);
}

void ggml_dot_mxfp4_q8_0_avx2(int64_t k, const void * a, size_t lda, int64_t nr, const void * b, size_t ldb,
                              int64_t nc, float * y, int64_t ldy) {
    dot_rows<w_mxfp4>(k, a, lda, nr, b, ldb, nc, y, ldy);
}

void ggml_dot_iq4_xs_q8_K_avx2(int64_t k, const void * a, size_t lda, int64_t nr, const void * b, size_t ldb,
                               int64_t nc, float * y, int64_t ldy) {
    dot_rows<w_iq4_xs>(k, a, lda, nr, b, ldb, nc, y, ldy);
}
