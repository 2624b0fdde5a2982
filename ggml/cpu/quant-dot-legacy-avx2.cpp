// AVX2 dot kernels of the 32-element formats (see quant-dot.h).
//
// Work goes in pairs of blocks (64 elements). A pair of weight blocks is decoded into two
// registers of codes, lo (elements 0..15 of block 0, then of block 1) and hi (elements 16..31),
// plus the two block scales spread over the 8 float lanes (lanes 0..3: block 0, 4..7: block 1).
// VPMADDUBSW (unsigned x signed bytes, pairs summed into 16 bits) on lo and hi, one 16-bit add,
// and VPMADDWD by 1 leave in lane l a partial integer sum of block l / 4 (bytes 4l .. 4l + 3 of
// lo and of hi); one int->float conversion, one multiply by the activation scales and one FMA
// by the weight scales finish two blocks.
//
// Q4_0 / Q5_0 codes are stored with an offset (q + 8, q + 16): its share, -zero * (the
// activation codes of the lane), is precomputed per lane when the activations are packed and
// added in integers, so the sums are exact. 16-bit sums cannot saturate: at most
// 2 * (31 * 127 * 2) = 15748. Q4_1 / Q5_1 add their min term m * s (s: the Q8_1 block's
// d * sum of codes, s / 4 in every lane) with one more FMA. Q8_0 weights are signed: their
// magnitudes meet the activation codes with the weight's sign moved onto them (VPSIGNB), at most
// 128 * 127 * 2 = 32512 per 16-bit pair, exact because the activation quantizers give codes in
// -127..127 (never -128); lo and hi go through VPMADDWD separately there.
//
// The activations are packed first (act_pair, on the stack), because each packed column is read
// by many weight rows. Mat-vec (nc == 1) streams the weight rows one at a time with a prefetch
// ahead, decoding on the fly; mat-mat decodes 2 weight rows at a time into a small buffer once
// for up to 12 columns and runs register tiles of up to 2 rows x 3 columns.
//
// This file and quant-dot-legacy-avx512.cpp are two algorithms, not one at two widths, so they
// are kept apart: here VPMADDUBSW + VPMADDWD on pairs of blocks with the sign trick for Q8_0 and
// 2 x 3 tiles; there VPDPBUSD (VNNI) on groups of 4 blocks gathered with VPERMW, every weight
// made unsigned by an offset, masked loads for the last group and 4 x 4 tiles.
#include "quant-dot.h"

#include "ggml/quants.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
// GCC 12's intrinsics trip -Wuninitialized false positives.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop

namespace {

constexpr int64_t k_qk = 32;
constexpr int k_tile_rows = 2, k_tile_cols = 3;  // the largest register tile
// Stack buffers of packed data: mat-vec packs k_act_pairs pairs of its column at a time
// (64 KiB); mat-mat packs k_chunk_pairs pairs of k_pass_cols columns (60 KiB) and of 2 weight
// rows (10 KiB) at a time.
constexpr int64_t k_act_pairs = 512;
constexpr int64_t k_pass_cols = 12, k_chunk_pairs = 40;
constexpr int64_t k_prefetch = 4096;  // bytes ahead in a weight row (measured best of 1024 … 4096)

// ---- packed activations ----

struct alignas(32) act_pair {
    int8_t lo[32];    // elements 0..15 of block 0, then of block 1
    int8_t hi[32];    // elements 16..31
    float d[8];       // lane l: d of block l / 4
    int32_t aux[8];   // Q4_0, Q5_0: -zero * (codes of lane l); Q4_1, Q5_1: float s / 4; Q8_0: 0
};

uint32_t load_u32(const uint8_t * p) {
    uint32_t v;
    std::memcpy(&v, p, 4);
    return v;
}

// [f0 x4, f1 x4] from two fp16 values.
__m256i load_256(const void * p) { return _mm256_loadu_si256(static_cast<const __m256i *>(p)); }

__m256 pair_lanes(ggml_fp16_t h0, ggml_fp16_t h1) {
    const __m128 f = _mm_cvtph_ps(_mm_cvtsi32_si128(int(uint32_t(h0) | uint32_t(h1) << 16)));
    return _mm256_permutevar8x32_ps(_mm256_castps128_ps256(f), _mm256_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1));
}

// Codes of one or two blocks of 32 bytes into the lo / hi layout.
void split_halves(__m256i q0, __m256i q1, __m256i & lo, __m256i & hi) {
    lo = _mm256_permute2x128_si256(q0, q1, 0x20);
    hi = _mm256_permute2x128_si256(q0, q1, 0x31);
}

// Packs pair i of one column (n = 1 or 2 blocks present); zero: the offset of the weight codes.
void pack_pair(const uint8_t * col, bool q8_1, int zero, int64_t i, int n, act_pair & o) {
    const size_t bs = q8_1 ? sizeof(block_q8_1) : sizeof(block_q8_0);
    const uint8_t * b0 = col + size_t(2 * i) * bs;
    const uint8_t * b1 = b0 + bs;
    const size_t head = q8_1 ? 4 : 2;  // d (and s) before the codes
    const __m256i q0 = load_256(b0 + head);
    const __m256i q1 = n == 2 ? load_256(b1 + head) : _mm256_setzero_si256();
    __m256i lo, hi;
    split_halves(q0, q1, lo, hi);
    _mm256_store_si256(reinterpret_cast<__m256i *>(o.lo), lo);
    _mm256_store_si256(reinterpret_cast<__m256i *>(o.hi), hi);
    ggml_fp16_t d0, d1 = 0, s0 = 0, s1 = 0;
    std::memcpy(&d0, b0, 2);
    if (n == 2) std::memcpy(&d1, b1, 2);
    _mm256_store_ps(o.d, pair_lanes(d0, d1));
    if (q8_1) {
        std::memcpy(&s0, b0 + 2, 2);
        if (n == 2) std::memcpy(&s1, b1 + 2, 2);
        _mm256_store_ps(reinterpret_cast<float *>(o.aux), _mm256_mul_ps(pair_lanes(s0, s1), _mm256_set1_ps(0.25f)));
        return;
    }
    const __m256i z = _mm256_set1_epi8(char(zero));
    const __m256i sums = _mm256_add_epi16(_mm256_maddubs_epi16(z, lo), _mm256_maddubs_epi16(z, hi));
    const __m256i lanes = _mm256_madd_epi16(sums, _mm256_set1_epi16(1));
    _mm256_store_si256(reinterpret_cast<__m256i *>(o.aux), _mm256_sub_epi32(_mm256_setzero_si256(), lanes));
}

// Packs pairs [i0, i0 + n) of one column (nb blocks in all) into out[0 .. n).
void pack_column(const uint8_t * col, bool q8_1, int zero, int64_t nb, int64_t i0, int64_t n, act_pair * out) {
    for (int64_t i = 0; i < n; ++i) {
        const int64_t left = nb - 2 * (i0 + i);
        pack_pair(col, q8_1, zero, i0 + i, left >= 2 ? 2 : 1, out[i]);
    }
}

// ---- weight decoders: a pair of blocks (or the last single one) into the lo / hi layout ----

struct w_pair {
    __m256i lo, hi;  // unsigned codes (Q8_0: signed)
    __m256 d, m;     // lanes: d (and m for the _1 formats) of block l / 4
};

void split_nibbles(const uint8_t * qs0, const uint8_t * qs1, w_pair & w) {
    const __m128i x0 = _mm_loadu_si128(reinterpret_cast<const __m128i *>(qs0));
    const __m128i x1 = qs1 ? _mm_loadu_si128(reinterpret_cast<const __m128i *>(qs1)) : _mm_setzero_si128();
    const __m256i q = _mm256_set_m128i(x1, x0);
    const __m256i low4 = _mm256_set1_epi8(0x0F);
    w.lo = _mm256_and_si256(q, low4);
    w.hi = _mm256_and_si256(_mm256_srli_epi16(q, 4), low4);
}

// 0x10 in byte j where bit j of bits is set.
__m256i spread_bits(uint32_t bits) {
    const __m256i idx = _mm256_setr_epi64x(0, 0x0101010101010101, 0x0202020202020202, 0x0303030303030303);
    const __m256i spread = _mm256_shuffle_epi8(_mm256_set1_epi32(int(bits)), idx);
    const __m256i bit = _mm256_set1_epi64x(int64_t(0x8040201008040201ull));
    const __m256i set = _mm256_cmpeq_epi8(_mm256_and_si256(spread, bit), bit);
    return _mm256_and_si256(set, _mm256_set1_epi8(0x10));
}

// Bit 4 of the codes: bits 0..15 of each qh belong to lo, bits 16..31 to hi.
void add_high_bits(uint32_t qh0, uint32_t qh1, w_pair & w) {
    w.lo = _mm256_or_si256(w.lo, spread_bits((qh0 & 0xFFFFu) | qh1 << 16));
    w.hi = _mm256_or_si256(w.hi, spread_bits(qh0 >> 16 | (qh1 & 0xFFFF0000u)));
}

struct w_q4_0 {
    using block = block_q4_0;
    static constexpr int zero = 8;
    static constexpr bool has_min = false, is_signed = false;
    template <bool Two>
    static void decode(const block * b, w_pair & w) {
        split_nibbles(b[0].qs, Two ? b[1].qs : nullptr, w);
        w.d = pair_lanes(b[0].d, Two ? b[1].d : ggml_fp16_t(0));
    }
};

struct w_q4_1 {
    using block = block_q4_1;
    static constexpr int zero = 0;
    static constexpr bool has_min = true, is_signed = false;
    template <bool Two>
    static void decode(const block * b, w_pair & w) {
        split_nibbles(b[0].qs, Two ? b[1].qs : nullptr, w);
        w.d = pair_lanes(b[0].d, Two ? b[1].d : ggml_fp16_t(0));
        w.m = pair_lanes(b[0].m, Two ? b[1].m : ggml_fp16_t(0));
    }
};

struct w_q5_0 {
    using block = block_q5_0;
    static constexpr int zero = 16;
    static constexpr bool has_min = false, is_signed = false;
    template <bool Two>
    static void decode(const block * b, w_pair & w) {
        split_nibbles(b[0].qs, Two ? b[1].qs : nullptr, w);
        add_high_bits(load_u32(b[0].qh), Two ? load_u32(b[1].qh) : 0u, w);
        w.d = pair_lanes(b[0].d, Two ? b[1].d : ggml_fp16_t(0));
    }
};

struct w_q5_1 {
    using block = block_q5_1;
    static constexpr int zero = 0;
    static constexpr bool has_min = true, is_signed = false;
    template <bool Two>
    static void decode(const block * b, w_pair & w) {
        split_nibbles(b[0].qs, Two ? b[1].qs : nullptr, w);
        add_high_bits(load_u32(b[0].qh), Two ? load_u32(b[1].qh) : 0u, w);
        w.d = pair_lanes(b[0].d, Two ? b[1].d : ggml_fp16_t(0));
        w.m = pair_lanes(b[0].m, Two ? b[1].m : ggml_fp16_t(0));
    }
};

struct w_q8_0 {
    using block = block_q8_0;
    static constexpr int zero = 0;
    static constexpr bool has_min = false, is_signed = true;
    template <bool Two>
    static void decode(const block * b, w_pair & w) {
        const __m256i q0 = load_256(b[0].qs);
        const __m256i q1 = Two ? load_256(b[1].qs) : _mm256_setzero_si256();
        split_halves(q0, q1, w.lo, w.hi);
        w.d = pair_lanes(b[0].d, Two ? b[1].d : ggml_fp16_t(0));
    }
};

// acc += the products of one decoded weight pair with one packed activation pair. For Q8_0,
// lo / hi are the signed codes and alo / ahi their magnitudes (abs_lo / abs_hi).
template <typename W>
inline __attribute__((always_inline)) __m256 pair_dot(__m256i lo, __m256i hi, __m256i abs_lo, __m256i abs_hi, __m256 d,
                                                      __m256 m, const act_pair & a, __m256 acc) {
    const __m256i alo = _mm256_load_si256(reinterpret_cast<const __m256i *>(a.lo));
    const __m256i ahi = _mm256_load_si256(reinterpret_cast<const __m256i *>(a.hi));
    const __m256i ones = _mm256_set1_epi16(1);
    __m256i s;
    if (W::is_signed) {
        const __m256i plo = _mm256_maddubs_epi16(abs_lo, _mm256_sign_epi8(alo, lo));
        const __m256i phi = _mm256_maddubs_epi16(abs_hi, _mm256_sign_epi8(ahi, hi));
        s = _mm256_add_epi32(_mm256_madd_epi16(plo, ones), _mm256_madd_epi16(phi, ones));
    } else {
        const __m256i p = _mm256_add_epi16(_mm256_maddubs_epi16(lo, alo), _mm256_maddubs_epi16(hi, ahi));
        s = _mm256_madd_epi16(p, ones);
        if (W::zero) s = _mm256_add_epi32(s, _mm256_load_si256(reinterpret_cast<const __m256i *>(a.aux)));
    }
    acc = _mm256_fmadd_ps(_mm256_mul_ps(_mm256_cvtepi32_ps(s), _mm256_load_ps(a.d)), d, acc);
    if (W::has_min) acc = _mm256_fmadd_ps(m, _mm256_load_ps(reinterpret_cast<const float *>(a.aux)), acc);
    return acc;
}

float hsum(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

// ---- mat-vec: weight rows streamed and decoded on the fly ----

// Blocks [2 * i0, 2 * i0 + 2 * n) of one row (fewer when the row ends) against a packed column.
template <typename W>
float row_dot(const typename W::block * row, int64_t nb, int64_t i0, int64_t n, const act_pair * act) {
    __m256 acc = _mm256_setzero_ps();
    w_pair w{};
    for (int64_t i = 0; i < n; ++i) {
        const typename W::block * b = row + 2 * (i0 + i);
        _mm_prefetch(reinterpret_cast<const char *>(b) + k_prefetch, _MM_HINT_T0);
        if (2 * sizeof(*b) > 64) _mm_prefetch(reinterpret_cast<const char *>(b + 2) - 1 + k_prefetch, _MM_HINT_T0);
        if (2 * (i0 + i) + 2 <= nb) W::template decode<true>(b, w);
        else W::template decode<false>(b, w);
        const __m256i abs_lo = W::is_signed ? _mm256_abs_epi8(w.lo) : w.lo;
        const __m256i abs_hi = W::is_signed ? _mm256_abs_epi8(w.hi) : w.hi;
        acc = pair_dot<W>(w.lo, w.hi, abs_lo, abs_hi, w.d, w.m, act[i], acc);
    }
    return hsum(acc);
}

template <typename W>
void mat_vec(int64_t nb, const uint8_t * a, size_t lda, int64_t nr, const uint8_t * b, float * y) {
    const int64_t n_pairs = (nb + 1) / 2;
    alignas(32) act_pair act[k_act_pairs];
    for (int64_t i0 = 0; i0 < n_pairs; i0 += k_act_pairs) {
        const int64_t n = n_pairs - i0 < k_act_pairs ? n_pairs - i0 : k_act_pairs;
        pack_column(b, W::has_min, W::zero, nb, i0, n, act);
        for (int64_t r = 0; r < nr; ++r) {
            const auto * row = reinterpret_cast<const typename W::block *>(a + size_t(r) * lda);
            const float s = row_dot<W>(row, nb, i0, n, act);
            y[r] = i0 > 0 ? y[r] + s : s;
        }
    }
}

// ---- mat-mat: decoded weight pairs times packed activations in register tiles ----

struct alignas(32) w_packed {
    uint8_t lo[32], hi[32];
    float d[8], m[8];
};

template <typename W>
void pack_rows(const uint8_t * a, size_t lda, int64_t rows, int64_t nb, int64_t i0, int64_t n, w_packed * out) {
    for (int64_t r = 0; r < rows; ++r) {
        const auto * row = reinterpret_cast<const typename W::block *>(a + size_t(r) * lda);
        for (int64_t i = 0; i < n; ++i) {
            w_pair w{};
            const typename W::block * b = row + 2 * (i0 + i);
            if (2 * (i0 + i) + 2 <= nb) W::template decode<true>(b, w);
            else W::template decode<false>(b, w);
            w_packed & o = out[r * n + i];
            _mm256_store_si256(reinterpret_cast<__m256i *>(o.lo), w.lo);
            _mm256_store_si256(reinterpret_cast<__m256i *>(o.hi), w.hi);
            _mm256_store_ps(o.d, w.d);
            if (W::has_min) _mm256_store_ps(o.m, w.m);
        }
    }
}

struct tile_args {
    const w_packed * w;
    const act_pair * act;
    int64_t n;  // pairs in the chunk (of each row and column)
    float * y;
    int64_t ldy;
    bool add;   // add to y (later chunks of k) instead of storing
};

// R rows x C columns over the chunk's pairs; the R decoded rows of a pair stay in registers.
template <typename W, int R, int C>
void tile(const tile_args & t) {
    __m256 acc[R][C];
    for (int r = 0; r < R; ++r)
        for (int c = 0; c < C; ++c) acc[r][c] = _mm256_setzero_ps();
    for (int64_t i = 0; i < t.n; ++i) {
        __m256i lo[R], hi[R], abs_lo[R], abs_hi[R];
        __m256 d[R], m[R];
#pragma GCC unroll 4
        for (int r = 0; r < R; ++r) {
            const w_packed & w = t.w[r * t.n + i];
            lo[r] = _mm256_load_si256(reinterpret_cast<const __m256i *>(w.lo));
            hi[r] = _mm256_load_si256(reinterpret_cast<const __m256i *>(w.hi));
            abs_lo[r] = W::is_signed ? _mm256_abs_epi8(lo[r]) : lo[r];
            abs_hi[r] = W::is_signed ? _mm256_abs_epi8(hi[r]) : hi[r];
            d[r] = _mm256_load_ps(w.d);
            m[r] = W::has_min ? _mm256_load_ps(w.m) : d[r];
        }
#pragma GCC unroll 4
        for (int c = 0; c < C; ++c)
#pragma GCC unroll 4
            for (int r = 0; r < R; ++r) {
                acc[r][c] = pair_dot<W>(lo[r], hi[r], abs_lo[r], abs_hi[r], d[r], m[r], t.act[c * t.n + i], acc[r][c]);
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

template <typename W>
tile_fn tile_for(int64_t rows, int64_t cols) {
    static constexpr tile_fn one[k_tile_cols] = {tile<W, 1, 1>, tile<W, 1, 2>, tile<W, 1, 3>};
    static constexpr tile_fn two[k_tile_cols] = {tile<W, 2, 1>, tile<W, 2, 2>, tile<W, 2, 3>};
    return (rows == 1 ? one : two)[cols - 1];
}

// Passes of up to k_pass_cols columns; per pass and chunk of k the columns are packed once, and
// every 2 weight rows are decoded once for all the pass's columns.
template <typename W>
void mat_mat(int64_t nb, const uint8_t * a, size_t lda, int64_t nr, const uint8_t * b, size_t ldb, int64_t nc,
             float * y, int64_t ldy) {
    const int64_t n_pairs = (nb + 1) / 2;
    const int64_t n_chunks = (n_pairs + k_chunk_pairs - 1) / k_chunk_pairs;
    const int64_t chunk = (n_pairs + n_chunks - 1) / n_chunks;
    alignas(32) act_pair act[k_pass_cols * k_chunk_pairs];
    alignas(32) w_packed w[k_tile_rows * k_chunk_pairs];
    tile_args t;
    t.w = w;
    t.ldy = ldy;
    for (int64_t c0 = 0; c0 < nc; c0 += k_pass_cols) {
        const int64_t ncols = nc - c0 < k_pass_cols ? nc - c0 : k_pass_cols;
        for (int64_t i0 = 0; i0 < n_pairs; i0 += chunk) {
            const int64_t n = n_pairs - i0 < chunk ? n_pairs - i0 : chunk;
            for (int64_t c = 0; c < ncols; ++c) {
                pack_column(b + size_t(c0 + c) * ldb, W::has_min, W::zero, nb, i0, n, act + c * n);
            }
            t.n = n;
            t.add = i0 > 0;
            for (int64_t r0 = 0; r0 < nr; r0 += k_tile_rows) {
                const int64_t rows = nr - r0 < k_tile_rows ? nr - r0 : k_tile_rows;
                pack_rows<W>(a + size_t(r0) * lda, lda, rows, nb, i0, n, w);
                for (int64_t cc = 0; cc < ncols; cc += k_tile_cols) {
                    t.act = act + cc * n;
                    t.y = y + (c0 + cc) * ldy + r0;
                    tile_for<W>(rows, ncols - cc < k_tile_cols ? ncols - cc : k_tile_cols)(t);
                }
            }
        }
    }
}

// ---- the kernel ----

template <typename W>
void dot_rows(int64_t k, const void * a, size_t lda, int64_t nr, const void * b, size_t ldb, int64_t nc, float * y,
              int64_t ldy) {
    const int64_t nb = k / k_qk;
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

void ggml_dot_q4_0_q8_0_avx2(int64_t k, const void * a, size_t lda, int64_t nr, const void * b, size_t ldb,
                             int64_t nc, float * y, int64_t ldy) {
    dot_rows<w_q4_0>(k, a, lda, nr, b, ldb, nc, y, ldy);
}

void ggml_dot_q4_1_q8_1_avx2(int64_t k, const void * a, size_t lda, int64_t nr, const void * b, size_t ldb,
                             int64_t nc, float * y, int64_t ldy) {
    dot_rows<w_q4_1>(k, a, lda, nr, b, ldb, nc, y, ldy);
}

void ggml_dot_q5_0_q8_0_avx2(int64_t k, const void * a, size_t lda, int64_t nr, const void * b, size_t ldb,
                             int64_t nc, float * y, int64_t ldy) {
    dot_rows<w_q5_0>(k, a, lda, nr, b, ldb, nc, y, ldy);
}

void ggml_dot_q5_1_q8_1_avx2(int64_t k, const void * a, size_t lda, int64_t nr, const void * b, size_t ldb,
                             int64_t nc, float * y, int64_t ldy) {
    dot_rows<w_q5_1>(k, a, lda, nr, b, ldb, nc, y, ldy);
}

void ggml_dot_q8_0_q8_0_avx2(int64_t k, const void * a, size_t lda, int64_t nr, const void * b, size_t ldb,
                             int64_t nc, float * y, int64_t ldy) {
    dot_rows<w_q8_0>(k, a, lda, nr, b, ldb, nc, y, ldy);
}
