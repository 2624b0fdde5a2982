// AVX-512 VNNI dot kernels of the 32-element formats (see quant-dot.h).
//
// Work goes in groups of 4 blocks (128 elements). One group of a weight row is decoded into two
// registers of unsigned codes, lo (elements 0..15 of the 4 blocks, 16 bytes per block) and hi
// (elements 16..31), plus the 4 block scales spread over the 16 float lanes (lane l holds the
// scale of block l / 4). VPDPBUSD (unsigned x signed bytes, 4 products per 32-bit lane) then
// leaves in lane l a partial integer sum of block l / 4, so one int->float conversion, one
// multiply by the activation scales and one FMA by the weight scales finish 4 blocks at once.
//
// Signed weight codes are made unsigned by an offset: Q4_0 / Q5_0 store q + 8 / q + 16, and
// Q8_0 codes get 128 added (xor 0x80). The offset's share, -zero * sum(activation codes), is
// precomputed per lane when the activations are packed and seeds the integer sum, so the
// result is exact in integers. Q4_1 / Q5_1 codes are unsigned already; their min term m * s
// (s: the Q8_1 block's d * sum of codes) is one more FMA per group, with s / 4 in every lane.
//
// The activations are packed first (act_group, on the stack), because each packed column is
// read by many weight rows. Mat-vec (nc == 1) then streams the weight rows one at a time with a
// prefetch ahead, decoding on the fly. Mat-mat decodes 4 weight rows at a time into a small
// buffer (w_packed) once for up to 16 columns, and runs register tiles of up to 4 rows x 4
// columns (16 accumulators) over the two packed sides.
//
// Kept apart from quant-dot-legacy-avx2.cpp: the VNNI product, the 4-block groups gathered with
// VPERMW and the masked tails have no counterpart there (VPMADDUBSW on pairs of blocks).
#include "quant-dot.h"

#include "ggml/quants.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
// GCC 12's AVX-512 intrinsics trip -Wuninitialized false positives.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop

namespace {

constexpr int64_t k_qk = 32;            // elements per block
constexpr int64_t k_group_blocks = 4;   // blocks per group
constexpr int k_tile_rows = 4, k_tile_cols = 4;  // the largest register tile
// Stack buffers of packed data: mat-vec packs k_act_groups groups of its column at a time
// (96 KiB); mat-mat packs k_chunk_groups groups of k_pass_cols columns (96 KiB) and of 4 weight
// rows (24 KiB) at a time.
constexpr int64_t k_act_groups = 384;
constexpr int64_t k_pass_cols = 16, k_chunk_groups = 24;
// Bytes ahead in a weight row that the decoders prefetch (the hardware prefetcher alone reached
// a fifth of the read bandwidth here; 4096 measured best, 1024 ~15% slower).
constexpr int64_t k_prefetch = 4096;

// ---- word-index tables of VPERMW / VPERMT2W ----

struct word_idx {
    alignas(64) uint16_t v[32];
};

// 32 words of codes: word w comes from block w / 8, word first + w % 8 of that block.
constexpr word_idx codes_idx(int stride_words, int first) {
    word_idx r{};
    for (int w = 0; w < 32; ++w) r.v[w] = uint16_t(stride_words * (w / 8) + first + w % 8);
    return r;
}

// 16 words for the 16 float lanes: lane l takes word `first` of block l / 4.
constexpr word_idx lanes_idx(int stride_words, int first) {
    word_idx r{};
    for (int l = 0; l < 16; ++l) r.v[l] = uint16_t(stride_words * (l / 4) + first);
    return r;
}

// Q5 high bits: words 0..3 the low qh halves of blocks 0..3, words 4..7 the high halves.
constexpr word_idx high_bits_idx(int stride_words, int first) {
    word_idx r{};
    for (int j = 0; j < 4; ++j) {
        r.v[j] = uint16_t(stride_words * j + first);
        r.v[4 + j] = uint16_t(stride_words * j + first + 1);
    }
    return r;
}

__m512i load_idx(const word_idx & w) { return _mm512_load_si512(w.v); }

__mmask64 byte_mask(int64_t n) {
    return n >= 64 ? ~__mmask64(0) : n <= 0 ? __mmask64(0) : (__mmask64(1) << n) - 1;
}

// Load masks of one group: window i covers bytes [offset_i, offset_i + 64) of the group,
// masked to its n valid bytes so that a partial group never reads past its last block.
struct group_masks {
    __mmask64 m[4];
};

group_masks make_masks(const int64_t * offsets, int n_windows, int64_t n) {
    group_masks g{};
    for (int i = 0; i < n_windows; ++i) g.m[i] = byte_mask(n - offsets[i]);
    return g;
}

__m512i load_window(const uint8_t * p, int64_t offset, __mmask64 m) { return _mm512_maskz_loadu_epi8(m, p + offset); }

__m512 fp16_lanes(__m512i words) { return _mm512_cvtph_ps(_mm512_castsi512_si256(words)); }

// ---- packed activations ----

struct alignas(64) act_group {
    int8_t lo[64];     // elements 0..15 of the 4 blocks
    int8_t hi[64];     // elements 16..31
    float d[16];       // lane l: d of block l / 4
    int32_t aux[16];   // _0 weights: -zero * (sum of the 8 codes of lane l); _1 weights: float s / 4
};

constexpr int64_t k_win_q8[4] = {0, 64, 8, 72};    // Q8_0 activations and weights: 136 bytes
constexpr int64_t k_win_q81[4] = {0, 64, 16, 80};  // Q8_1: 144 bytes
constexpr word_idx k_q8_0_lo = codes_idx(17, 1), k_q8_0_hi = codes_idx(17, 5), k_q8_0_d = lanes_idx(17, 0);
constexpr word_idx k_q8_1_codes = codes_idx(18, 2), k_q8_1_d = lanes_idx(18, 0), k_q8_1_s = lanes_idx(18, 1);

// One group of Q8_0 blocks: codes and scales (also the decoder of Q8_0 weights).
void decode_q8_0(const uint8_t * p, const group_masks & m, __m512i & lo, __m512i & hi, __m512 & d) {
    const __m512i z0 = load_window(p, 0, m.m[0]), z1 = load_window(p, 64, m.m[1]);
    const __m512i za = load_window(p, 8, m.m[2]), zb = load_window(p, 72, m.m[3]);
    lo = _mm512_permutex2var_epi16(z0, load_idx(k_q8_0_lo), z1);
    hi = _mm512_permutex2var_epi16(za, load_idx(k_q8_0_hi), zb);
    d = fp16_lanes(_mm512_permutex2var_epi16(z0, load_idx(k_q8_0_d), z1));
}

// Packs one group of Q8_0 activations for weights whose codes carry an offset of `zero`.
void pack_q8_0(const uint8_t * p, const group_masks & m, int zero, act_group & g) {
    __m512i lo, hi;
    __m512 d;
    decode_q8_0(p, m, lo, hi, d);
    const __m512i z = _mm512_set1_epi8(char(zero));
    const __m512i sum = _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(_mm512_setzero_si512(), z, lo), z, hi);
    _mm512_store_si512(g.lo, lo);
    _mm512_store_si512(g.hi, hi);
    _mm512_store_ps(g.d, d);
    _mm512_store_si512(g.aux, _mm512_sub_epi32(_mm512_setzero_si512(), sum));
}

void pack_q8_1(const uint8_t * p, const group_masks & m, act_group & g) {
    const __m512i z0 = load_window(p, 0, m.m[0]), z1 = load_window(p, 64, m.m[1]);
    const __m512i za = load_window(p, 16, m.m[2]), zb = load_window(p, 80, m.m[3]);
    const __m512i codes = load_idx(k_q8_1_codes);
    _mm512_store_si512(g.lo, _mm512_permutex2var_epi16(z0, codes, z1));
    _mm512_store_si512(g.hi, _mm512_permutex2var_epi16(za, codes, zb));
    _mm512_store_ps(g.d, fp16_lanes(_mm512_permutex2var_epi16(z0, load_idx(k_q8_1_d), z1)));
    const __m512 s = fp16_lanes(_mm512_permutex2var_epi16(z0, load_idx(k_q8_1_s), z1));
    const __m512 s4 = _mm512_mul_ps(s, _mm512_set1_ps(0.25f));
    _mm512_store_si512(g.aux, _mm512_castps_si512(s4));
}

// Packs groups [g0, g0 + ng) of one column (nb blocks in all) into out[0 .. ng).
void pack_column(const uint8_t * col, bool q8_1, int zero, int64_t nb, int64_t g0, int64_t ng, act_group * out) {
    const int64_t block_bytes = q8_1 ? int64_t(sizeof(block_q8_1)) : int64_t(sizeof(block_q8_0));
    const int64_t * win = q8_1 ? k_win_q81 : k_win_q8;
    const group_masks full = make_masks(win, 4, k_group_blocks * block_bytes);
    for (int64_t g = 0; g < ng; ++g) {
        const int64_t blocks = nb - (g0 + g) * k_group_blocks;
        const group_masks m = blocks >= k_group_blocks ? full : make_masks(win, 4, blocks * block_bytes);
        const uint8_t * p = col + (g0 + g) * k_group_blocks * block_bytes;
        if (q8_1) pack_q8_1(p, m, out[g]);
        else pack_q8_0(p, m, zero, out[g]);
    }
}

// ---- weight decoders: one group into unsigned codes and scales ----

struct w_group {
    __m512i lo, hi;  // unsigned codes: elements 0..15 / 16..31 of the 4 blocks
    __m512 d, m;     // lanes: d (and m for the _1 formats) of block l / 4
};

void split_nibbles(__m512i q, w_group & g) {
    const __m512i low4 = _mm512_set1_epi8(0x0F);
    g.lo = _mm512_and_si512(q, low4);
    g.hi = _mm512_and_si512(_mm512_srli_epi16(q, 4), low4);
}

// Bit 4 of every code from the 4 qh words (picked into words 0..7 of hb, see high_bits_idx).
void add_high_bits(__m512i hb, w_group & g) {
    const __m128i h = _mm512_castsi512_si128(hb);
    const __m512i b4 = _mm512_set1_epi8(0x10);
    g.lo = _mm512_mask_add_epi8(g.lo, _cvtu64_mask64(uint64_t(_mm_cvtsi128_si64(h))), g.lo, b4);
    g.hi = _mm512_mask_add_epi8(g.hi, _cvtu64_mask64(uint64_t(_mm_extract_epi64(h, 1))), g.hi, b4);
}

constexpr int64_t k_win_2[2] = {0, 64};

struct w_q4_0 {
    static constexpr int64_t block_bytes = sizeof(block_q4_0);
    static constexpr int zero = 8;
    static constexpr bool has_min = false;
    static constexpr int n_windows = 2;
    static constexpr const int64_t * windows = k_win_2;
    static constexpr word_idx codes = codes_idx(9, 1), d = lanes_idx(9, 0);
    static void decode(const uint8_t * p, const group_masks & m, w_group & g) {
        const __m512i z0 = load_window(p, 0, m.m[0]), z1 = load_window(p, 64, m.m[1]);
        split_nibbles(_mm512_permutex2var_epi16(z0, load_idx(codes), z1), g);
        g.d = fp16_lanes(_mm512_permutexvar_epi16(load_idx(d), z0));
    }
};

struct w_q4_1 {
    static constexpr int64_t block_bytes = sizeof(block_q4_1);
    static constexpr int zero = 0;
    static constexpr bool has_min = true;
    static constexpr int n_windows = 2;
    static constexpr const int64_t * windows = k_win_2;
    static constexpr word_idx codes = codes_idx(10, 2), d = lanes_idx(10, 0), m = lanes_idx(10, 1);
    static void decode(const uint8_t * p, const group_masks & mk, w_group & g) {
        const __m512i z0 = load_window(p, 0, mk.m[0]), z1 = load_window(p, 64, mk.m[1]);
        split_nibbles(_mm512_permutex2var_epi16(z0, load_idx(codes), z1), g);
        g.d = fp16_lanes(_mm512_permutexvar_epi16(load_idx(d), z0));
        g.m = fp16_lanes(_mm512_permutexvar_epi16(load_idx(m), z0));
    }
};

struct w_q5_0 {
    static constexpr int64_t block_bytes = sizeof(block_q5_0);
    static constexpr int zero = 16;
    static constexpr bool has_min = false;
    static constexpr int n_windows = 2;
    static constexpr const int64_t * windows = k_win_2;
    static constexpr word_idx codes = codes_idx(11, 3), d = lanes_idx(11, 0), qh = high_bits_idx(11, 1);
    static void decode(const uint8_t * p, const group_masks & m, w_group & g) {
        const __m512i z0 = load_window(p, 0, m.m[0]), z1 = load_window(p, 64, m.m[1]);
        split_nibbles(_mm512_permutex2var_epi16(z0, load_idx(codes), z1), g);
        add_high_bits(_mm512_permutex2var_epi16(z0, load_idx(qh), z1), g);
        g.d = fp16_lanes(_mm512_permutex2var_epi16(z0, load_idx(d), z1));
    }
};

struct w_q5_1 {
    static constexpr int64_t block_bytes = sizeof(block_q5_1);
    static constexpr int zero = 0;
    static constexpr bool has_min = true;
    static constexpr int n_windows = 2;
    static constexpr const int64_t * windows = k_win_2;
    static constexpr word_idx codes = codes_idx(12, 4), d = lanes_idx(12, 0), m = lanes_idx(12, 1),
                              qh = high_bits_idx(12, 2);
    static void decode(const uint8_t * p, const group_masks & mk, w_group & g) {
        const __m512i z0 = load_window(p, 0, mk.m[0]), z1 = load_window(p, 64, mk.m[1]);
        split_nibbles(_mm512_permutex2var_epi16(z0, load_idx(codes), z1), g);
        add_high_bits(_mm512_permutex2var_epi16(z0, load_idx(qh), z1), g);
        g.d = fp16_lanes(_mm512_permutex2var_epi16(z0, load_idx(d), z1));
        g.m = fp16_lanes(_mm512_permutex2var_epi16(z0, load_idx(m), z1));
    }
};

struct w_q8_0 {
    static constexpr int64_t block_bytes = sizeof(block_q8_0);
    static constexpr int zero = 128;
    static constexpr bool has_min = false;
    static constexpr int n_windows = 4;
    static constexpr const int64_t * windows = k_win_q8;
    static void decode(const uint8_t * p, const group_masks & m, w_group & g) {
        decode_q8_0(p, m, g.lo, g.hi, g.d);
        const __m512i flip = _mm512_set1_epi8(char(0x80));
        g.lo = _mm512_xor_si512(g.lo, flip);
        g.hi = _mm512_xor_si512(g.hi, flip);
    }
};

// ---- mat-vec: weight rows streamed and decoded on the fly ----

// acc += the products of one decoded weight group with one packed activation group.
template <bool Min>
inline __attribute__((always_inline)) __m512 group_dot(__m512i lo, __m512i hi, __m512 d, __m512 m,
                                                       const act_group & a, __m512 acc) {
    __m512i s = Min ? _mm512_setzero_si512() : _mm512_load_si512(a.aux);
    s = _mm512_dpbusd_epi32(s, lo, _mm512_load_si512(a.lo));
    s = _mm512_dpbusd_epi32(s, hi, _mm512_load_si512(a.hi));
    acc = _mm512_fmadd_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(s), _mm512_load_ps(a.d)), d, acc);
    if (Min) acc = _mm512_fmadd_ps(m, _mm512_castsi512_ps(_mm512_load_si512(a.aux)), acc);
    return acc;
}

// Prefetches the cache lines of the group k_prefetch bytes ahead of the one at p.
template <int64_t Bytes>
inline __attribute__((always_inline)) void prefetch_group(const uint8_t * p) {
#pragma GCC unroll 4
    for (int64_t off = 0; off < Bytes; off += 64) {
        _mm_prefetch(reinterpret_cast<const char *>(p + k_prefetch + off), _MM_HINT_T0);
    }
}

// Load masks of the groups of a row: all but the last are full.
struct row_masks {
    group_masks full, tail;
    int64_t n_full;  // groups before the first partial one
};

template <typename W>
row_masks make_row_masks(int64_t nb) {
    row_masks rm;
    const int64_t n_groups = (nb + k_group_blocks - 1) / k_group_blocks;
    rm.full = make_masks(W::windows, W::n_windows, k_group_blocks * W::block_bytes);
    rm.tail = make_masks(W::windows, W::n_windows, (nb - (n_groups - 1) * k_group_blocks) * W::block_bytes);
    rm.n_full = nb % k_group_blocks == 0 ? n_groups : n_groups - 1;
    return rm;
}

// One row (groups [g0, g0 + ng) of it, at p) against one packed column: a single sequential
// stream with a prefetch ahead.
template <typename W>
float row_dot(const uint8_t * p, int64_t g0, int64_t ng, const row_masks & rm, const act_group * act) {
    constexpr int64_t gb = k_group_blocks * W::block_bytes;
    __m512 acc = _mm512_setzero_ps();
    for (int64_t g = 0; g < ng; ++g, p += gb) {
        prefetch_group<gb>(p);
        w_group w{};
        W::decode(p, g0 + g < rm.n_full ? rm.full : rm.tail, w);
        acc = group_dot<W::has_min>(w.lo, w.hi, w.d, w.m, act[g], acc);
    }
    return _mm512_reduce_add_ps(acc);
}

template <typename W>
void mat_vec(int64_t nb, const uint8_t * a, size_t lda, int64_t nr, const uint8_t * b, float * y) {
    constexpr int64_t gb = k_group_blocks * W::block_bytes;
    const int64_t n_groups = (nb + k_group_blocks - 1) / k_group_blocks;
    const row_masks rm = make_row_masks<W>(nb);
    alignas(64) act_group act[k_act_groups];
    for (int64_t g0 = 0; g0 < n_groups; g0 += k_act_groups) {
        const int64_t ng = n_groups - g0 < k_act_groups ? n_groups - g0 : k_act_groups;
        pack_column(b, W::has_min, W::zero, nb, g0, ng, act);
        for (int64_t r = 0; r < nr; ++r) {
            const float s = row_dot<W>(a + size_t(r) * lda + size_t(g0 * gb), g0, ng, rm, act);
            y[r] = g0 > 0 ? y[r] + s : s;
        }
    }
}

// ---- mat-mat: decoded weight groups times packed activations in register tiles ----

struct alignas(64) w_packed {
    uint8_t lo[64], hi[64];
    float d[16], m[16];
};

template <typename W>
void pack_rows(const uint8_t * a, size_t lda, int64_t rows, int64_t g0, int64_t ng, const row_masks & rm,
               w_packed * out) {
    constexpr int64_t gb = k_group_blocks * W::block_bytes;
    for (int64_t r = 0; r < rows; ++r) {
        const uint8_t * p = a + size_t(r) * lda + size_t(g0 * gb);
        for (int64_t g = 0; g < ng; ++g, p += gb) {
            prefetch_group<gb>(p);
            w_group w{};
            W::decode(p, g0 + g < rm.n_full ? rm.full : rm.tail, w);
            w_packed & o = out[r * ng + g];
            _mm512_store_si512(o.lo, w.lo);
            _mm512_store_si512(o.hi, w.hi);
            _mm512_store_ps(o.d, w.d);
            if (W::has_min) _mm512_store_ps(o.m, w.m);
        }
    }
}

// Where a tile works: packed rows and columns (ng groups each) and the outputs.
struct tile_args {
    const w_packed * w;
    const act_group * act;
    int64_t ng;
    float * y;
    int64_t ldy;
    bool add;  // add to y (later chunks of k) instead of storing
};

// R rows x C columns over the chunk's groups: R * C accumulators of 16 lanes. The R decoded
// rows of a group are held in registers while each column's packed group is loaded once.
template <bool Min, int R, int C>
void tile(const tile_args & t) {
    __m512 acc[R][C];
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 8
        for (int c = 0; c < C; ++c) acc[r][c] = _mm512_setzero_ps();
    for (int64_t g = 0; g < t.ng; ++g) {
        __m512i lo[R], hi[R];
        __m512 d[R], m[R];
#pragma GCC unroll 8
        for (int r = 0; r < R; ++r) {
            const w_packed & w = t.w[r * t.ng + g];
            lo[r] = _mm512_load_si512(w.lo);
            hi[r] = _mm512_load_si512(w.hi);
            d[r] = _mm512_load_ps(w.d);
            m[r] = Min ? _mm512_load_ps(w.m) : d[r];
        }
#pragma GCC unroll 8
        for (int c = 0; c < C; ++c) {
            const act_group & a = t.act[c * t.ng + g];
            const __m512i alo = _mm512_load_si512(a.lo), ahi = _mm512_load_si512(a.hi);
            const __m512i aux = _mm512_load_si512(a.aux);
            const __m512 ad = _mm512_load_ps(a.d);
#pragma GCC unroll 8
            for (int r = 0; r < R; ++r) {
                __m512i s = Min ? _mm512_setzero_si512() : aux;
                s = _mm512_dpbusd_epi32(s, lo[r], alo);
                s = _mm512_dpbusd_epi32(s, hi[r], ahi);
                acc[r][c] = _mm512_fmadd_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(s), ad), d[r], acc[r][c]);
                if (Min) acc[r][c] = _mm512_fmadd_ps(m[r], _mm512_castsi512_ps(aux), acc[r][c]);
            }
        }
    }
#pragma GCC unroll 8
    for (int c = 0; c < C; ++c)
#pragma GCC unroll 8
        for (int r = 0; r < R; ++r) {
            const float s = _mm512_reduce_add_ps(acc[r][c]);
            float & out = t.y[c * t.ldy + r];
            out = t.add ? out + s : s;
        }
}

using tile_fn = void (*)(const tile_args &);

template <bool Min, int R>
struct tile_row {
    static constexpr tile_fn by_cols[k_tile_cols] = {tile<Min, R, 1>, tile<Min, R, 2>, tile<Min, R, 3>,
                                                     tile<Min, R, 4>};
};

template <bool Min>
tile_fn tile_for(int64_t rows, int64_t cols) {
    static constexpr const tile_fn * by_rows[k_tile_rows] = {tile_row<Min, 1>::by_cols, tile_row<Min, 2>::by_cols,
                                                             tile_row<Min, 3>::by_cols, tile_row<Min, 4>::by_cols};
    return by_rows[rows - 1][cols - 1];
}

// Passes of up to k_pass_cols columns; per pass and chunk of k the columns are packed once, and
// every 4 weight rows are decoded once for all the pass's columns.
template <typename W>
void mat_mat(int64_t nb, const uint8_t * a, size_t lda, int64_t nr, const uint8_t * b, size_t ldb, int64_t nc,
             float * y, int64_t ldy) {
    const int64_t n_groups = (nb + k_group_blocks - 1) / k_group_blocks;
    const int64_t n_chunks = (n_groups + k_chunk_groups - 1) / k_chunk_groups;
    const int64_t chunk = (n_groups + n_chunks - 1) / n_chunks;
    const row_masks rm = make_row_masks<W>(nb);
    alignas(64) act_group act[k_pass_cols * k_chunk_groups];
    alignas(64) w_packed w[k_tile_rows * k_chunk_groups];
    tile_args t;
    t.w = w;
    t.ldy = ldy;
    for (int64_t c0 = 0; c0 < nc; c0 += k_pass_cols) {
        const int64_t ncols = nc - c0 < k_pass_cols ? nc - c0 : k_pass_cols;
        for (int64_t g0 = 0; g0 < n_groups; g0 += chunk) {
            const int64_t ng = n_groups - g0 < chunk ? n_groups - g0 : chunk;
            for (int64_t c = 0; c < ncols; ++c) {
                pack_column(b + size_t(c0 + c) * ldb, W::has_min, W::zero, nb, g0, ng, act + c * ng);
            }
            t.ng = ng;
            t.add = g0 > 0;
            for (int64_t r0 = 0; r0 < nr; r0 += k_tile_rows) {
                const int64_t rows = nr - r0 < k_tile_rows ? nr - r0 : k_tile_rows;
                pack_rows<W>(a + size_t(r0) * lda, lda, rows, g0, ng, rm, w);
                for (int64_t cc = 0; cc < ncols; cc += k_tile_cols) {
                    t.act = act + cc * ng;
                    t.y = y + (c0 + cc) * ldy + r0;
                    tile_for<W::has_min>(rows, ncols - cc < k_tile_cols ? ncols - cc : k_tile_cols)(t);
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

void ggml_dot_q4_0_q8_0_avx512(int64_t k, const void * a, size_t lda, int64_t nr, const void * b, size_t ldb,
                               int64_t nc, float * y, int64_t ldy) {
    dot_rows<w_q4_0>(k, a, lda, nr, b, ldb, nc, y, ldy);
}

void ggml_dot_q4_1_q8_1_avx512(int64_t k, const void * a, size_t lda, int64_t nr, const void * b, size_t ldb,
                               int64_t nc, float * y, int64_t ldy) {
    dot_rows<w_q4_1>(k, a, lda, nr, b, ldb, nc, y, ldy);
}

void ggml_dot_q5_0_q8_0_avx512(int64_t k, const void * a, size_t lda, int64_t nr, const void * b, size_t ldb,
                               int64_t nc, float * y, int64_t ldy) {
    dot_rows<w_q5_0>(k, a, lda, nr, b, ldb, nc, y, ldy);
}

void ggml_dot_q5_1_q8_1_avx512(int64_t k, const void * a, size_t lda, int64_t nr, const void * b, size_t ldb,
                               int64_t nc, float * y, int64_t ldy) {
    dot_rows<w_q5_1>(k, a, lda, nr, b, ldb, nc, y, ldy);
}

void ggml_dot_q8_0_q8_0_avx512(int64_t k, const void * a, size_t lda, int64_t nr, const void * b, size_t ldb,
                               int64_t nc, float * y, int64_t ldy) {
    dot_rows<w_q8_0>(k, a, lda, nr, b, ldb, nc, y, ldy);
}
