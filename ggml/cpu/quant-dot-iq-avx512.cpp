// AVX-512 VNNI dot kernels of the codebook formats (see quant-dot.h): IQ4_NL x Q8_0,
// MXFP4 x Q8_0, IQ4_XS x Q8_K.
//
// Work goes in groups of 128 elements = 4 sub-blocks of 32 (4 IQ4_NL / MXFP4 blocks, or half an
// IQ4_XS super-block). A weight group is decoded into two registers of unsigned codes, lo
// (elements 0..15 of each sub-block, one sub-block per 128-bit lane) and hi (elements 16..31),
// plus one float scale per lane (lane l: the scale of sub-block l / 4: d for IQ4_NL, 2^(e - 128)
// for MXFP4, d * (ls - 32) for IQ4_XS). The 4-bit indices become codes by one VPSHUFB lookup of
// the codebook (16 entries: one 128-bit table), stored with an offset of 128 so that they are
// unsigned bytes. VPDPBUSD (unsigned x signed bytes, 4 products per 32-bit lane) leaves in lane
// l an exact partial integer sum of sub-block l / 4; the offset's share, -128 * (the activation
// codes of the lane), is precomputed when the activations are packed and seeds the sum. One
// int->float conversion, one multiply by the activation scales and one FMA by the weight scales
// finish 4 sub-blocks at once. Sums cannot overflow: |lane| <= 8 * 241 * 128.
//
// The activations are packed first (act_group, on the stack: Q8_0 blocks or the Q8_K codes
// regrouped into the same lo / hi layout), because each packed column is read by many weight
// rows. Mat-vec (nc == 1) streams the weight rows one at a time with a prefetch ahead, decoding
// on the fly (IQ4_XS: the column's y.d folded into the sub-block scales, two accumulators).
// Mat-mat from 9 columns on decodes 16 rows at a time into an interleaved copy and runs 16 x 8
// register tiles against the activation codes in place (see "mat-mat over 16-row groups");
// fewer columns, and the rows left over, go through register tiles of up to 4 rows x 4 columns
// over decoded groups (w_packed) and packed activations.
//
// Kept apart from quant-dot-iq-avx2.cpp: the unsigned-code VNNI product and the 16-row
// interleaved mat-mat have no counterpart there (VPMADDUBSW with VPSIGNB, 2 x 3 tiles).
#include "quant-dot.h"
#include "simd-traits.h"
#include "thread-scratch.h"

#include "ggml/quants.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
// GCC 12's AVX-512 intrinsics trip -Wuninitialized false positives.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop

namespace {

constexpr int k_tile_rows = 4, k_tile_cols = 4;  // the largest register tile
// Stack buffers of packed data: mat-vec packs k_act_groups groups of its column at a time
// (96 KiB); mat-mat packs k_chunk_groups groups of k_pass_cols columns (96 KiB) and of 4 weight
// rows (18 KiB) at a time.
constexpr int64_t k_act_groups = 384;
constexpr int64_t k_pass_cols = 16, k_chunk_groups = 24;
constexpr int64_t k_prefetch = 8192;  // bytes ahead in a weight row

// ---- packed activations ----

struct alignas(64) act_group {
    uint8_t lo[64];   // elements 0..15 of the 4 sub-blocks (signed codes)
    uint8_t hi[64];   // elements 16..31
    float d[16];      // lane l: the activation scale of sub-block l / 4
    int32_t aux[16];  // -128 * (sum of the 8 codes of lane l in lo and hi)
};

void store_act(__m512i lo, __m512i hi, __m512 d, act_group & g) {
    const __m512i z = _mm512_set1_epi8(char(0x80));
    const __m512i sum = _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(_mm512_setzero_si512(), z, lo), z, hi);
    _mm512_store_si512(g.lo, lo);
    _mm512_store_si512(g.hi, hi);
    _mm512_store_ps(g.d, d);
    _mm512_store_si512(g.aux, _mm512_sub_epi32(_mm512_setzero_si512(), sum));
}

// Lane l <- lane l / 4 of the 4 floats of v.
__m512 spread4(__m128 v) {
    const __m512i idx = _mm512_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3);
    return _mm512_permutexvar_ps(idx, _mm512_castps128_ps512(v));
}

// n (1..4) Q8_0 blocks into one group; missing blocks are zeros.
void pack_q8_0(const uint8_t * col, int64_t first_block, int n, act_group & g) {
    const auto * b = reinterpret_cast<const block_q8_0 *>(col) + first_block;
    __m256i q[4];
    uint16_t d[4] = {0, 0, 0, 0};
    for (int k = 0; k < 4; ++k) {
        q[k] = k < n ? _mm256_loadu_si256(reinterpret_cast<const __m256i *>(b[k].qs)) : _mm256_setzero_si256();
        if (k < n) d[k] = b[k].d;
    }
    const __m512i lo = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_permute2x128_si256(q[0], q[1], 0x20)),
                                          _mm256_permute2x128_si256(q[2], q[3], 0x20), 1);
    const __m512i hi = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_permute2x128_si256(q[0], q[1], 0x31)),
                                          _mm256_permute2x128_si256(q[2], q[3], 0x31), 1);
    const __m128 df = _mm_cvtph_ps(_mm_setr_epi16(short(d[0]), short(d[1]), short(d[2]), short(d[3]), 0, 0, 0, 0));
    store_act(lo, hi, spread4(df), g);
}

// Half h of a Q8_K block: sub-blocks 4 h .. 4 h + 3 into one group.
void pack_q8_K(const block_q8_K & b, int h, act_group & g) {
    const __m512i a0 = _mm512_loadu_si512(b.qs + 128 * h), a1 = _mm512_loadu_si512(b.qs + 128 * h + 64);
    // a0 lanes: sub-block 4h elements 0..15, 16..31, sub-block 4h+1 elements 0..15, 16..31
    store_act(_mm512_shuffle_i64x2(a0, a1, 0x88), _mm512_shuffle_i64x2(a0, a1, 0xDD), _mm512_set1_ps(b.d), g);
}

// ---- weight decoders ----

struct w_group {
    __m512i lo, hi;  // unsigned codes (codebook value + 128)
    __m512 f;        // lane l: the weight scale of sub-block l / 4
};

// The 16 codebook values + 128, in every 128-bit lane.
__m512i codebook_table(const int8_t * codebook) {
    alignas(16) uint8_t t[16];
    for (int i = 0; i < 16; ++i) t[i] = uint8_t(codebook[i] + 128);
    return _mm512_broadcast_i32x4(_mm_load_si128(reinterpret_cast<const __m128i *>(t)));
}

// Codes of 64 bytes of nibbles (Q4_0 layout per 16 bytes).
inline void lookup_nibbles(__m512i q, __m512i table, w_group & w) {
    const __m512i low4 = _mm512_set1_epi8(0x0F);
    w.lo = _mm512_shuffle_epi8(table, _mm512_and_si512(q, low4));
    w.hi = _mm512_shuffle_epi8(table, _mm512_and_si512(_mm512_srli_epi16(q, 4), low4));
}

inline __mmask64 byte_mask(int64_t n) {
    return n >= 64 ? ~__mmask64(0) : n <= 0 ? __mmask64(0) : (__mmask64(1) << n) - 1;
}

struct word_idx {
    alignas(64) uint16_t v[32];
};

// IQ4_NL groups (4 blocks of 9 words): lane k of the codes takes words 9 k + 1 .. 9 k + 8.
constexpr word_idx nl_codes_idx() {
    word_idx r{};
    for (int w = 0; w < 32; ++w) r.v[w] = uint16_t(9 * (w / 8) + 1 + w % 8);
    return r;
}
constexpr word_idx nl_scale_idx() {
    word_idx r{};
    for (int l = 0; l < 16; ++l) r.v[l] = uint16_t(9 * (l / 4));
    return r;
}
constexpr word_idx k_nl_codes = nl_codes_idx(), k_nl_scale = nl_scale_idx();

struct w_iq4_nl {
    using block = block_iq4_nl;
    static constexpr int64_t qk = QK4_NL;
    static constexpr int unit_blocks = 4, groups_per_unit = 1;
    static constexpr bool act_q8_K = false;
    // n blocks (1..4) at p; masked loads never touch bytes past them
    static void decode(const uint8_t * p, int n, __m512i table, w_group * w) {
        __m512i z0, z1;
        if (n == unit_blocks) {  // 72 bytes
            z0 = _mm512_loadu_si512(p);
            z1 = _mm512_maskz_loadu_epi8(0xFF, p + 64);
        } else {
            const int64_t bytes = int64_t(n) * int64_t(sizeof(block));
            z0 = _mm512_maskz_loadu_epi8(byte_mask(bytes), p);
            z1 = _mm512_maskz_loadu_epi8(byte_mask(bytes - 64), p + 64);
        }
        const __m512i q = _mm512_permutex2var_epi16(z0, _mm512_load_si512(k_nl_codes.v), z1);
        lookup_nibbles(q, table, w[0]);
        const __m512i dw = _mm512_permutexvar_epi16(_mm512_load_si512(k_nl_scale.v), z0);
        w[0].f = _mm512_cvtph_ps(_mm512_castsi512_si256(dw));
    }
};

// MXFP4 groups: 4 blocks of 17 bytes, the codes of block k at 17 k + 1, e at 17 k. (One vpermt2w
// over windows at p + 1 and p + 4 decodes faster from cache, but streamed from memory it ran at
// half the speed of these four 16-byte loads.)
struct w_mxfp4 {
    using block = block_mxfp4;
    static constexpr int64_t qk = QK_MXFP4;
    static constexpr int unit_blocks = 4, groups_per_unit = 1;
    static constexpr bool act_q8_K = false;
    static void decode(const uint8_t * p, int n, __m512i table, w_group * w) {
        constexpr int64_t bs = sizeof(block);
        __m128i q[4];
        __m512i z;
        if (n == unit_blocks) {  // 68 bytes
            for (int k = 0; k < 4; ++k) q[k] = _mm_loadu_si128(reinterpret_cast<const __m128i *>(p + bs * k + 1));
            z = _mm512_loadu_si512(p);
        } else {
            for (int k = 0; k < 4; ++k) {
                q[k] = k < n ? _mm_loadu_si128(reinterpret_cast<const __m128i *>(p + bs * k + 1)) : _mm_setzero_si128();
            }
            z = _mm512_maskz_loadu_epi8(byte_mask(int64_t(n) * bs), p);
        }
        const __m512i qz = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_set_m128i(q[1], q[0])),
                                              _mm256_set_m128i(q[3], q[2]), 1);
        lookup_nibbles(qz, table, w[0]);
        // e of block k is byte 17 k = byte k of 128-bit lane k: spread to the lane's 4 dwords
        const __m512i pick = _mm512_set1_epi32(int(0xFFFFFF00u));  // bytes 1..3 of each dword: zero
        const __m512i lane = _mm512_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3);
        const __m512i e = _mm512_shuffle_epi8(z, _mm512_or_si512(pick, lane));
        // 2^(e - 128): exponent field e - 1, or the subnormals 2^-128, 2^-127 for e = 0, 1
        const __m512i normal = _mm512_slli_epi32(_mm512_sub_epi32(e, _mm512_set1_epi32(1)), 23);
        const __m512i sub = _mm512_sllv_epi32(_mm512_set1_epi32(0x00200000), e);
        const __mmask16 tiny = _mm512_cmplt_epu32_mask(e, _mm512_set1_epi32(2));
        w[0].f = _mm512_castsi512_ps(_mm512_mask_blend_epi32(tiny, normal, sub));
    }
};

struct w_iq4_xs {
    using block = block_iq4_xs;
    static constexpr int64_t qk = QK_K;
    static constexpr int unit_blocks = 1, groups_per_unit = 2;
    static constexpr bool act_q8_K = true;
    // The scales come out multiplied by `times` (mat-vec folds the column's y.d into them).
    static void decode(const uint8_t * p, int /*n*/, __m512i table, w_group * w, float times = 1.0f) {
        const block & b = *reinterpret_cast<const block *>(p);
        lookup_nibbles(_mm512_loadu_si512(b.qs), table, w[0]);
        lookup_nibbles(_mm512_loadu_si512(b.qs + 64), table, w[1]);
        // ls of sub-block ib: nibble ib of scales_l (as a little-endian u32) and bits 2 ib, 2 ib + 1
        // of scales_h (every 32-bit lane holds scales_h twice; bits 4..5 come from the low copy)
        uint32_t sl;
        std::memcpy(&sl, b.scales_l, 4);
        const __m256i lo = _mm256_srlv_epi32(_mm256_set1_epi32(int(sl)), _mm256_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28));
        const __m256i hi = _mm256_srlv_epi32(_mm256_slli_epi32(_mm256_set1_epi16(short(b.scales_h)), 4),
                                             _mm256_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14));
        // bits 0..3 from lo, the others from hi, then the 6 bits
        const __m256i ls = _mm256_and_si256(_mm256_ternarylogic_epi32(_mm256_set1_epi32(0x0F), lo, hi, 0xCA),
                                            _mm256_set1_epi32(0x3F));
        const __m256 d = _mm256_mul_ps(_mm256_cvtph_ps(_mm_set1_epi16(short(b.d))), _mm256_set1_ps(times));
        const __m256i sc = _mm256_sub_epi32(ls, _mm256_set1_epi32(32));
        const __m512 s = _mm512_castps256_ps512(_mm256_mul_ps(_mm256_cvtepi32_ps(sc), d));
        const __m512i idx0 = _mm512_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3);
        w[0].f = _mm512_permutexvar_ps(idx0, s);
        w[1].f = _mm512_permutexvar_ps(_mm512_add_epi32(idx0, _mm512_set1_epi32(4)), s);
    }
};

template <class W>
__m512i table_of() {
    return codebook_table(std::is_same_v<W, w_mxfp4> ? ggml_mxfp4_codebook : ggml_iq4nl_codebook);
}

// Blocks present in unit u of a row of nb blocks.
template <class W>
inline int unit_blocks_at(int64_t nb, int64_t u) {
    const int64_t left = nb - u * W::unit_blocks;
    return int(left < W::unit_blocks ? left : W::unit_blocks);
}

// Packs units [u0, u0 + n) of one column (nb blocks of the weight type in all) into
// out[0 .. n * groups_per_unit).
template <class W>
void pack_column(const uint8_t * col, int64_t nb, int64_t u0, int64_t n, act_group * out) {
    for (int64_t u = 0; u < n; ++u) {
        if constexpr (W::act_q8_K) {
            const block_q8_K & b = reinterpret_cast<const block_q8_K *>(col)[u0 + u];
            pack_q8_K(b, 0, out[2 * u]);
            pack_q8_K(b, 1, out[2 * u + 1]);
        } else {
            pack_q8_0(col, (u0 + u) * W::unit_blocks, unit_blocks_at<W>(nb, u0 + u), out[u]);
        }
    }
}

// acc += the products of one decoded weight group with one packed activation group.
inline __attribute__((always_inline)) __m512 group_dot(__m512i lo, __m512i hi, __m512 f, const act_group & a,
                                                       __m512 acc) {
    __m512i s = _mm512_load_si512(a.aux);
    s = _mm512_dpbusd_epi32(s, lo, _mm512_load_si512(a.lo));
    s = _mm512_dpbusd_epi32(s, hi, _mm512_load_si512(a.hi));
    return _mm512_fmadd_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(s), _mm512_load_ps(a.d)), f, acc);
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
// y.d, the same for the super-block's two groups, is folded into the 8 sub-block scales.
template <class W>
float row_dot(const uint8_t * p, int64_t nb, int64_t u0, int64_t n, __m512i table, const act_group * act) {
    constexpr int64_t ub = W::unit_blocks * int64_t(sizeof(typename W::block));
    __m512 acc[W::groups_per_unit];
    for (int g = 0; g < W::groups_per_unit; ++g) acc[g] = _mm512_setzero_ps();
    for (int64_t u = 0; u < n; ++u, p += ub) {
        prefetch_unit<ub>(p);
        w_group w[W::groups_per_unit];
        const act_group * a = act + u * W::groups_per_unit;
        if constexpr (W::act_q8_K) {
            W::decode(p, W::unit_blocks, table, w, a[0].d[0]);
            for (int g = 0; g < W::groups_per_unit; ++g) {
                __m512i s = _mm512_load_si512(a[g].aux);
                s = _mm512_dpbusd_epi32(s, w[g].lo, _mm512_load_si512(a[g].lo));
                s = _mm512_dpbusd_epi32(s, w[g].hi, _mm512_load_si512(a[g].hi));
                acc[g] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(s), w[g].f, acc[g]);
            }
        } else {
            W::decode(p, unit_blocks_at<W>(nb, u0 + u), table, w);
            acc[0] = group_dot(w[0].lo, w[0].hi, w[0].f, a[0], acc[0]);
        }
    }
    for (int g = 1; g < W::groups_per_unit; ++g) acc[0] = _mm512_add_ps(acc[0], acc[g]);
    return _mm512_reduce_add_ps(acc[0]);
}

template <class W>
void mat_vec(int64_t nb, const uint8_t * a, size_t lda, int64_t nr, const uint8_t * b, float * y) {
    constexpr int64_t ub = W::unit_blocks * int64_t(sizeof(typename W::block));
    constexpr int64_t units_per_pass = k_act_groups / W::groups_per_unit;
    const int64_t n_units = (nb + W::unit_blocks - 1) / W::unit_blocks;
    const __m512i table = table_of<W>();
    alignas(64) act_group act[k_act_groups];
    for (int64_t u0 = 0; u0 < n_units; u0 += units_per_pass) {
        const int64_t n = n_units - u0 < units_per_pass ? n_units - u0 : units_per_pass;
        pack_column<W>(b, nb, u0, n, act);
        for (int64_t r = 0; r < nr; ++r) {
            const float s = row_dot<W>(a + size_t(r) * lda + size_t(u0 * ub), nb, u0, n, table, act);
            y[r] = u0 > 0 ? y[r] + s : s;
        }
    }
}

// ---- mat-mat: decoded weight groups times packed activations in register tiles ----

struct alignas(64) w_packed {
    uint8_t lo[64], hi[64];
    float f[16];
};

// Units [u0, u0 + n) of `rows` rows into out (row r's groups at out + r * n * groups_per_unit).
template <class W>
void pack_rows(const uint8_t * a, size_t lda, int64_t rows, int64_t nb, int64_t u0, int64_t n, __m512i table,
               w_packed * out) {
    constexpr int64_t ub = W::unit_blocks * int64_t(sizeof(typename W::block));
    const int64_t ng = n * W::groups_per_unit;
    for (int64_t r = 0; r < rows; ++r) {
        const uint8_t * p = a + size_t(r) * lda + size_t(u0 * ub);
        for (int64_t u = 0; u < n; ++u, p += ub) {
            w_group w[W::groups_per_unit];
            W::decode(p, unit_blocks_at<W>(nb, u0 + u), table, w);
            for (int g = 0; g < W::groups_per_unit; ++g) {
                w_packed & o = out[r * ng + u * W::groups_per_unit + g];
                _mm512_store_si512(o.lo, w[g].lo);
                _mm512_store_si512(o.hi, w[g].hi);
                _mm512_store_ps(o.f, w[g].f);
            }
        }
    }
}

struct tile_args {
    const w_packed * w;
    const act_group * act;
    int64_t ng;  // groups in the chunk (of each row and column)
    float * y;
    int64_t ldy;
    bool add;    // add to y (later chunks of k) instead of storing
};

// R rows x C columns over the chunk's groups: R * C accumulators of 16 lanes.
template <int R, int C>
void tile(const tile_args & t) {
    __m512 acc[R][C];
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 8
        for (int c = 0; c < C; ++c) acc[r][c] = _mm512_setzero_ps();
    for (int64_t g = 0; g < t.ng; ++g) {
        __m512i lo[R], hi[R];
        __m512 f[R];
#pragma GCC unroll 8
        for (int r = 0; r < R; ++r) {
            const w_packed & w = t.w[r * t.ng + g];
            lo[r] = _mm512_load_si512(w.lo);
            hi[r] = _mm512_load_si512(w.hi);
            f[r] = _mm512_load_ps(w.f);
        }
#pragma GCC unroll 8
        for (int c = 0; c < C; ++c) {
            const act_group & a = t.act[c * t.ng + g];
            const __m512i alo = _mm512_load_si512(a.lo), ahi = _mm512_load_si512(a.hi);
            const __m512i aux = _mm512_load_si512(a.aux);
            const __m512 ad = _mm512_load_ps(a.d);
#pragma GCC unroll 8
            for (int r = 0; r < R; ++r) {
                __m512i s = _mm512_dpbusd_epi32(aux, lo[r], alo);
                s = _mm512_dpbusd_epi32(s, hi[r], ahi);
                acc[r][c] = _mm512_fmadd_ps(_mm512_mul_ps(_mm512_cvtepi32_ps(s), ad), f[r], acc[r][c]);
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

template <int R>
struct tile_row {
    static constexpr tile_fn by_cols[k_tile_cols] = {tile<R, 1>, tile<R, 2>, tile<R, 3>, tile<R, 4>};
};

tile_fn tile_for(int64_t rows, int64_t cols) {
    static constexpr const tile_fn * by_rows[k_tile_rows] = {tile_row<1>::by_cols, tile_row<2>::by_cols,
                                                             tile_row<3>::by_cols, tile_row<4>::by_cols};
    return by_rows[rows - 1][cols - 1];
}

// Passes of up to k_pass_cols columns; per pass and chunk of k the columns are packed once, and
// every 4 weight rows are decoded once for all the pass's columns.
template <class W>
void mat_mat(int64_t nb, const uint8_t * a, size_t lda, int64_t nr, const uint8_t * b, size_t ldb, int64_t nc,
             float * y, int64_t ldy) {
    constexpr int64_t chunk_units_max = k_chunk_groups / W::groups_per_unit;
    const int64_t n_units = (nb + W::unit_blocks - 1) / W::unit_blocks;
    const int64_t n_chunks = (n_units + chunk_units_max - 1) / chunk_units_max;
    const int64_t chunk = (n_units + n_chunks - 1) / n_chunks;
    const __m512i table = table_of<W>();
    alignas(64) act_group act[k_pass_cols * k_chunk_groups];
    alignas(64) w_packed w[k_tile_rows * k_chunk_groups];
    tile_args t;
    t.w = w;
    t.ldy = ldy;
    for (int64_t c0 = 0; c0 < nc; c0 += k_pass_cols) {
        const int64_t ncols = nc - c0 < k_pass_cols ? nc - c0 : k_pass_cols;
        for (int64_t u0 = 0; u0 < n_units; u0 += chunk) {
            const int64_t n = n_units - u0 < chunk ? n_units - u0 : chunk;
            const int64_t ng = n * W::groups_per_unit;
            for (int64_t c = 0; c < ncols; ++c) pack_column<W>(b + size_t(c0 + c) * ldb, nb, u0, n, act + c * ng);
            t.ng = ng;
            t.add = u0 > 0;
            for (int64_t r0 = 0; r0 < nr; r0 += k_tile_rows) {
                const int64_t rows = nr - r0 < k_tile_rows ? nr - r0 : k_tile_rows;
                pack_rows<W>(a + size_t(r0) * lda, lda, rows, nb, u0, n, table, w);
                for (int64_t cc = 0; cc < ncols; cc += k_tile_cols) {
                    t.act = act + cc * ng;
                    t.y = y + (c0 + cc) * ldy + r0;
                    tile_for(rows, ncols - cc < k_tile_cols ? ncols - cc : k_tile_cols)(t);
                }
            }
        }
    }
}

// ---- mat-mat over 16-row groups (nc >= k_gemm_min_cols) ----
//
// The 16 rows of a group are decoded once per job into an interleaved copy (per-thread scratch):
// per sub-block of 32 elements, 8 code vectors (vector j holds, in 32-bit lane r, the 4 unsigned
// codes of elements 4 j .. 4 j + 3 of row r) and one float vector of the rows' scales. One
// VPDPBUSD against a broadcast dword of activation codes then gives 16 rows x 4 products; per
// sub-block and column: 8 VPDPBUSD seeded with the column's -128 * (sum of its codes), one
// conversion, one multiply of the rows' scales by the column's (Q8_0: d; Q8_K: y.d) and one FMA.
// Activation codes are read in place from the Q8 blocks. Register tiles of 16
// rows x up to 8 columns; the decoding is shared by all the job's columns.
constexpr int64_t k_gemm_min_cols = 9;  // below, the 4 x 4 tiles are as fast (measured)
constexpr int k_gemm_rows = 16, k_gemm_cols = 8;

template <class W>
struct gemm_layout {
    static constexpr int n_sub = 4 * W::groups_per_unit;  // sub-blocks of 32 per unit
    static constexpr int64_t unit_vectors = 9 * n_sub;     // 8 code vectors per sub-block, then the scales
};

// Unit u of the 16 rows at a (lda apart) into out (gemm_layout::unit_vectors vectors).
template <class W>
void gemm_pack_unit(const uint8_t * a, size_t lda, int64_t nb, int64_t u, __m512i table, __m512i * out) {
    constexpr int64_t ub = W::unit_blocks * int64_t(sizeof(typename W::block));
    constexpr int n_sub = gemm_layout<W>::n_sub, n_span = 2 * W::groups_per_unit;
    alignas(64) float sc[n_sub][16];
    __m512i e[n_span][16];  // per 64 elements of the unit: one vector per row, codes in element order
    const __m512i idx_lo = _mm512_setr_epi64(0, 1, 8, 9, 2, 3, 10, 11);
    const __m512i idx_hi = _mm512_setr_epi64(4, 5, 12, 13, 6, 7, 14, 15);
    for (int r = 0; r < k_gemm_rows; ++r) {
        const uint8_t * p = a + size_t(r) * lda + size_t(u * ub);
        prefetch_unit<ub>(p - k_prefetch + ub);  // the next unit of the row
        w_group w[W::groups_per_unit];
        W::decode(p, unit_blocks_at<W>(nb, u), table, w);
        for (int g = 0; g < W::groups_per_unit; ++g) {
            e[2 * g][r] = _mm512_permutex2var_epi64(w[g].lo, idx_lo, w[g].hi);
            e[2 * g + 1][r] = _mm512_permutex2var_epi64(w[g].lo, idx_hi, w[g].hi);
            alignas(64) float f[16];
            _mm512_store_ps(f, w[g].f);
            for (int k = 0; k < 4; ++k) sc[4 * g + k][r] = f[4 * k];
        }
    }
    for (int s = 0; s < n_span; ++s) {
        simd_transpose16x16(e[s]);
        for (int d = 0; d < 16; ++d) _mm512_store_si512(out + 16 * s + d, e[s][d]);
    }
    for (int k = 0; k < n_sub; ++k) _mm512_store_si512(out + 8 * n_sub + k, _mm512_castps_si512(_mm512_load_ps(sc[k])));
}

// Per column and sub-block of 32: the seed of the integer sums and the activation scale.
struct gemm_col {
    int32_t corr;  // -128 * (sum of the 32 activation codes)
    float d;       // Q8_0: the block's d; Q8_K: y.d
};

template <class W>
void gemm_prepare_cols(const uint8_t * b, size_t ldb, int64_t nc, int64_t nb, int64_t n_sub_row, gemm_col * info) {
    for (int64_t c = 0; c < nc; ++c) {
        const uint8_t * col = b + size_t(c) * ldb;
        gemm_col * ci = info + c * n_sub_row;
        if constexpr (W::act_q8_K) {
            for (int64_t i = 0; i < nb; ++i) {
                const block_q8_K & q = reinterpret_cast<const block_q8_K *>(col)[i];
                for (int k = 0; k < 8; ++k) ci[8 * i + k] = {-128 * (int32_t(q.bsums[2 * k]) + q.bsums[2 * k + 1]), q.d};
            }
        } else {
            for (int64_t i = 0; i < nb; ++i) {
                const block_q8_0 & q = reinterpret_cast<const block_q8_0 *>(col)[i];
                // sum of (code + 128) by VPSADBW, less 32 * 128
                const __m256i x = _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i *>(q.qs)),
                                                   _mm256_set1_epi8(char(0x80)));
                const __m256i s4 = _mm256_sad_epu8(x, _mm256_setzero_si256());
                const __m128i s2 = _mm_add_epi64(_mm256_castsi256_si128(s4), _mm256_extracti128_si256(s4, 1));
                const int64_t sum = _mm_cvtsi128_si64(s2) + _mm_extract_epi64(s2, 1) - 32 * 128;
                ci[i] = {int32_t(-128 * sum), _cvtsh_ss(q.d)};
            }
        }
    }
}

inline __m512i bcast_dword(const uint8_t * p) {
    int32_t v;
    std::memcpy(&v, p, sizeof v);
    return _mm512_set1_epi32(v);
}

// 16 packed rows (at w) against C columns: y[c * ldy + 0 .. 15].
template <class W, int C>
void gemm_tile(int64_t nb, const __m512i * w, const uint8_t * b, size_t ldb, const gemm_col * info, int64_t n_sub_row,
               float * y, int64_t ldy) {
    using L = gemm_layout<W>;
    const int64_t n_units = (nb + W::unit_blocks - 1) / W::unit_blocks;
    __m512 acc[C];
#pragma GCC unroll 8
    for (int c = 0; c < C; ++c) acc[c] = _mm512_setzero_ps();
    for (int64_t u = 0; u < n_units; ++u) {
        const __m512i * pw = w + u * L::unit_vectors;
        const int subs = W::act_q8_K ? L::n_sub : unit_blocks_at<W>(nb, u);
        for (int k = 0; k < subs; ++k) {
            __m512i wk[8];
#pragma GCC unroll 8
            for (int j = 0; j < 8; ++j) wk[j] = _mm512_load_si512(pw + 8 * k + j);
            const __m512 dsc = _mm512_castsi512_ps(_mm512_load_si512(pw + 8 * L::n_sub + k));
            const int64_t si = u * L::n_sub + k;
#pragma GCC unroll 8
            for (int c = 0; c < C; ++c) {
                const uint8_t * col = b + size_t(c) * ldb;
                const uint8_t * q = W::act_q8_K ? col + size_t(u) * sizeof(block_q8_K) + 4 + 32 * k
                                                : col + size_t(si) * sizeof(block_q8_0) + 2;
                const gemm_col & ci = info[c * n_sub_row + si];
                __m512i s = _mm512_set1_epi32(ci.corr);
#pragma GCC unroll 8
                for (int j = 0; j < 8; ++j) s = _mm512_dpbusd_epi32(s, wk[j], bcast_dword(q + 4 * j));
                acc[c] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(s), _mm512_mul_ps(dsc, _mm512_set1_ps(ci.d)), acc[c]);
            }
        }
    }
#pragma GCC unroll 8
    for (int c = 0; c < C; ++c) _mm512_storeu_ps(y + c * ldy, acc[c]);
}

// Rows in groups of 16 (nr16 of them) against nc columns; false when no scratch could be had.
template <class W>
bool gemm(int64_t nb, const uint8_t * a, size_t lda, int64_t nr16, const uint8_t * b, size_t ldb, int64_t nc,
          float * y, int64_t ldy) {
    using L = gemm_layout<W>;
    const int64_t n_units = (nb + W::unit_blocks - 1) / W::unit_blocks;
    const int64_t n_sub_row = n_units * L::n_sub;
    const size_t w_bytes = size_t(n_units * L::unit_vectors) * sizeof(__m512i);
    char * scratch = static_cast<char *>(ggml_cpu_thread_scratch(w_bytes + size_t(nc * n_sub_row) * sizeof(gemm_col)));
    if (!scratch) return false;
    __m512i * w = reinterpret_cast<__m512i *>(scratch);
    gemm_col * info = reinterpret_cast<gemm_col *>(scratch + w_bytes);
    gemm_prepare_cols<W>(b, ldb, nc, nb, n_sub_row, info);
    const __m512i table = table_of<W>();
    for (int64_t g = 0; g < nr16; g += k_gemm_rows) {
        const uint8_t * ag = a + size_t(g) * lda;
        for (int64_t u = 0; u < n_units; ++u) gemm_pack_unit<W>(ag, lda, nb, u, table, w + u * L::unit_vectors);
        int64_t c = 0;
        for (; c + k_gemm_cols <= nc; c += k_gemm_cols) {
            gemm_tile<W, k_gemm_cols>(nb, w, b + size_t(c) * ldb, ldb, info + c * n_sub_row, n_sub_row,
                                      y + c * ldy + g, ldy);
        }
        const uint8_t * bc = b + size_t(c) * ldb;
        const gemm_col * ic = info + c * n_sub_row;
        float * yc = y + c * ldy + g;
        switch (nc - c) {
            case 0: break;
            case 1: gemm_tile<W, 1>(nb, w, bc, ldb, ic, n_sub_row, yc, ldy); break;
            case 2: gemm_tile<W, 2>(nb, w, bc, ldb, ic, n_sub_row, yc, ldy); break;
            case 3: gemm_tile<W, 3>(nb, w, bc, ldb, ic, n_sub_row, yc, ldy); break;
            case 4: gemm_tile<W, 4>(nb, w, bc, ldb, ic, n_sub_row, yc, ldy); break;
            case 5: gemm_tile<W, 5>(nb, w, bc, ldb, ic, n_sub_row, yc, ldy); break;
            case 6: gemm_tile<W, 6>(nb, w, bc, ldb, ic, n_sub_row, yc, ldy); break;
            default: gemm_tile<W, 7>(nb, w, bc, ldb, ic, n_sub_row, yc, ldy); break;
        }
    }
    return true;
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
    const int64_t nr16 = nr / k_gemm_rows * k_gemm_rows;
    if (nc >= k_gemm_min_cols && nr16 > 0 && gemm<W>(nb, pa, lda, nr16, pb, ldb, nc, y, ldy)) {
        if (nr16 < nr) mat_mat<W>(nb, pa + size_t(nr16) * lda, lda, nr - nr16, pb, ldb, nc, y + nr16, ldy);
        return;
    }
    mat_mat<W>(nb, pa, lda, nr, pb, ldb, nc, y, ldy);
}

}  // namespace

void ggml_dot_iq4_nl_q8_0_avx512(int64_t k, const void * a, size_t lda, int64_t nr, const void * b, size_t ldb,
                                 int64_t nc, float * y, int64_t ldy) {
    dot_rows<w_iq4_nl>(k, a, lda, nr, b, ldb, nc, y, ldy);
}

void ggml_dot_mxfp4_q8_0_avx512(int64_t k, const void * a, size_t lda, int64_t nr, const void * b, size_t ldb,
                                int64_t nc, float * y, int64_t ldy) {
    dot_rows<w_mxfp4>(k, a, lda, nr, b, ldb, nc, y, ldy);
}

void ggml_dot_iq4_xs_q8_K_avx512(int64_t k, const void * a, size_t lda, int64_t nr, const void * b, size_t ldb,
                                 int64_t nc, float * y, int64_t ldy) {
    dot_rows<w_iq4_xs>(k, a, lda, nr, b, ldb, nc, y, ldy);
}
