// MUL_MAT kernels with AVX-512 (F, BW, VL, BF16): dot kernels for mat-vec and few columns (those
// of mul-mat-dot-simd.h at 16 lanes), and a packed GEMM (32 x 12 register tile) for mat-mat. See
// mul-mat.h for the contracts.
//
// The dot kernels (memory-bound) keep the activations in F32 and widen the weights in registers
// (vcvtph2ps for F16, a 16-bit shift for BF16). The GEMM works in F32 for F32 and F16 weights
// and with vdpbf16ps on BF16 activations (pairs of k per 32-bit lane) for BF16 weights.
#include "mul-mat.h"
#include "mul-mat-dot-simd.h"
#include "simd-traits.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
// GCC 12's intrinsic headers self-initialise undefined vectors (`__m512 __Y = __Y;`), which
// -Wuninitialized reports wherever they are inlined; silence it for them only.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop

namespace {

constexpr int k_mr = 32;        // rows of a per register tile (two vectors)
constexpr int k_nr = 12;        // columns per register tile (= B panel width)
constexpr int64_t k_mc = 128;   // rows of a per job
// k per packed block (even: BF16 packs pairs): a 32 x 192 F32 panel of a (24 KiB) and a 192 x 12
// slice of b (9 KiB) stay in L1 while a tile runs (measured: 256 was ~15% slower for F32).
constexpr int64_t k_kc = 192;
constexpr int64_t k_dot_cols = 4;  // most columns per dot block

inline int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

// ---- weight loaders: 16 lanes of F32 from element i of a row (masked: lanes past n are 0) ----

struct load_f32 {
    static constexpr int64_t size = 4;  // bytes per element
    static __m512 full(const char * p, int64_t i) { return _mm512_loadu_ps(reinterpret_cast<const float *>(p) + i); }
    static __m512 part(const char * p, int64_t i, int64_t n) {
        return _mm512_maskz_loadu_ps(simd_mask16(n), reinterpret_cast<const float *>(p) + i);
    }
};

struct load_f16 {
    static constexpr int64_t size = 2;  // bytes per element
    static __m512 full(const char * p, int64_t i) {
        const uint16_t * h = reinterpret_cast<const uint16_t *>(p) + i;
        return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i *>(h)));
    }
    static __m512 part(const char * p, int64_t i, int64_t n) {
        return _mm512_cvtph_ps(_mm256_maskz_loadu_epi16(simd_mask16(n), reinterpret_cast<const uint16_t *>(p) + i));
    }
};

struct load_bf16 {
    static constexpr int64_t size = 2;  // bytes per element
    static __m512 widen(__m256i h) { return simd_bf16_to_f32(h); }
    static __m512 full(const char * p, int64_t i) {
        return widen(_mm256_loadu_si256(reinterpret_cast<const __m256i *>(reinterpret_cast<const uint16_t *>(p) + i)));
    }
    static __m512 part(const char * p, int64_t i, int64_t n) {
        return widen(_mm256_maskz_loadu_epi16(simd_mask16(n), reinterpret_cast<const uint16_t *>(p) + i));
    }
};

// ---- dot kernels: mul-mat-dot-simd.h at 16 lanes, columns in blocks of up to k_dot_cols ----

template <typename W>
constexpr ggml_mul_mat_dot_fn dot_rows = mul_mat_dot::dot_rows<simd_avx512, W, load_f32, k_dot_cols>;

inline __m512bh as_bh(__m512i v) { return (__m512bh) v; }

// ---- packing of a: transposed 16 x 16 blocks ----

// In place: v[i] (row i, 16 columns) becomes column i of the block.
inline void transpose16(__m512 v[16]) { simd_transpose16x16(reinterpret_cast<__m512i *>(v)); }

// Packs rows [0, m) (m <= 32) of a, elements [k0, k0 + kc) as F32: ap[k * 32 + i].
// Rows past m are zero.
template <typename W>
void pack_a_f32(const char * a, size_t lda, int64_t m, int64_t k0, int64_t kc, float * ap) {
#pragma GCC unroll 16
    for (int h = 0; h < 2; ++h) {
        for (int64_t kb = 0; kb < kc; kb += 16) {
            const int64_t kn = min64(16, kc - kb);
            __m512 v[16];
#pragma GCC unroll 16
            for (int i = 0; i < 16; ++i) {
                const int64_t row = h * 16 + i;
                if (row >= m) v[i] = _mm512_setzero_ps();
                else if (kn == 16) v[i] = W::full(a + row * lda, k0 + kb);
                else v[i] = W::part(a + row * lda, k0 + kb, kn);
            }
            transpose16(v);
#pragma GCC unroll 16
            for (int kk = 0; kk < 16; ++kk) {
                if (kk < kn) _mm512_store_ps(ap + (kb + kk) * k_mr + h * 16, v[kk]);
            }
        }
    }
}

// Packs rows [0, m) of BF16 a, elements [k0, k0 + kc) (k0 even; elements at or past k_end
// read as 0) as pairs: 32-bit lane ap[p * 32 + i] = (a_i[k0 + 2p], a_i[k0 + 2p + 1]).
void pack_a_bf16_pairs(const char * a, size_t lda, int64_t m, int64_t k0, int64_t kc, int64_t k_end, uint32_t * ap) {
    const int64_t np = (kc + 1) / 2;
#pragma GCC unroll 16
    for (int h = 0; h < 2; ++h) {
        for (int64_t pb = 0; pb < np; pb += 16) {
            const int64_t e0 = k0 + 2 * pb;
            const __mmask32 msk = simd_mask32(k_end - e0);
            __m512 v[16];
#pragma GCC unroll 16
            for (int i = 0; i < 16; ++i) {
                const int64_t row = h * 16 + i;
                if (row >= m) {
                    v[i] = _mm512_setzero_ps();
                } else {
                    const uint16_t * src = reinterpret_cast<const uint16_t *>(a + row * lda) + e0;
                    v[i] = _mm512_castsi512_ps(_mm512_maskz_loadu_epi16(msk, src));
                }
            }
            transpose16(v);
            const int64_t pn = min64(16, np - pb);
#pragma GCC unroll 16
            for (int pp = 0; pp < 16; ++pp) {
                if (pp < pn) _mm512_store_ps(reinterpret_cast<float *>(ap + (pb + pp) * k_mr + h * 16), v[pp]);
            }
        }
    }
}

// ---- packing of b (activations) into panels of 12 columns ----

void pack_b(const uint32_t * const * rows, int64_t n, uint32_t * panel) {
    static_assert(k_nr <= 16, "a panel row is one masked store");
    for (int64_t e0 = 0; e0 < n; e0 += 16) {
        const int64_t en = min64(16, n - e0);
        const __mmask16 m = simd_mask16(en);
        __m512 v[16];
#pragma GCC unroll 16
        for (int j = 0; j < 16; ++j) {
            const bool real = j < k_nr && rows[j];
            v[j] = real ? _mm512_castsi512_ps(_mm512_maskz_loadu_epi32(m, rows[j] + e0)) : _mm512_setzero_ps();
        }
        transpose16(v);
#pragma GCC unroll 16
        for (int e = 0; e < 16; ++e) {
            if (e >= en) break;
            _mm512_mask_storeu_ps(reinterpret_cast<float *>(panel + (e0 + e) * k_nr), __mmask16((1u << k_nr) - 1u), v[e]);
        }
    }
}

// ---- register tiles: 32 rows x 12 columns ----

// Adds (or stores, when first) the tile to d[j * ldd + i] for i < m, j < n.
inline __attribute__((always_inline)) void tile_store(__m512 c[k_nr][2], float * d, int64_t ldd, int64_t m, int64_t n,
                                                      bool first) {
    const __mmask16 m0 = simd_mask16(m), m1 = m > 16 ? simd_mask16(m - 16) : __mmask16(0);
#pragma GCC unroll 12
    for (int j = 0; j < k_nr; ++j) {
        if (j >= n) break;
        float * dj = d + j * ldd;
        __m512 lo = c[j][0], hi = c[j][1];
        if (!first) {
            lo = _mm512_add_ps(lo, _mm512_maskz_loadu_ps(m0, dj));
            hi = _mm512_add_ps(hi, _mm512_maskz_loadu_ps(m1, dj + 16));
        }
        _mm512_mask_storeu_ps(dj, m0, lo);
        _mm512_mask_storeu_ps(dj + 16, m1, hi);
    }
}

void tile_f32(int64_t kc, const float * ap, const float * bp, float * d, int64_t ldd, int64_t m, int64_t n, bool first) {
    __m512 c[k_nr][2];
#pragma GCC unroll 12
    for (int j = 0; j < k_nr; ++j) c[j][0] = c[j][1] = _mm512_setzero_ps();
    for (int64_t k = 0; k < kc; ++k) {
        const __m512 a0 = _mm512_load_ps(ap), a1 = _mm512_load_ps(ap + 16);
#pragma GCC unroll 12
        for (int j = 0; j < k_nr; ++j) {
            const __m512 bj = _mm512_set1_ps(bp[j]);
            c[j][0] = _mm512_fmadd_ps(a0, bj, c[j][0]);
            c[j][1] = _mm512_fmadd_ps(a1, bj, c[j][1]);
        }
        ap += k_mr;
        bp += k_nr;
    }
    tile_store(c, d, ldd, m, n, first);
}

// np pairs of k: ap[p * 32 + i] and bp[p * 12 + j] are 32-bit BF16 pairs.
void tile_bf16(int64_t np, const uint32_t * ap, const uint32_t * bp, float * d, int64_t ldd, int64_t m, int64_t n,
               bool first) {
    __m512 c[k_nr][2];
#pragma GCC unroll 12
    for (int j = 0; j < k_nr; ++j) c[j][0] = c[j][1] = _mm512_setzero_ps();
    for (int64_t p = 0; p < np; ++p) {
        const __m512bh a0 = as_bh(_mm512_load_si512(ap)), a1 = as_bh(_mm512_load_si512(ap + 16));
#pragma GCC unroll 12
        for (int j = 0; j < k_nr; ++j) {
            const __m512bh bj = as_bh(_mm512_set1_epi32(int(bp[j])));
            c[j][0] = _mm512_dpbf16_ps(c[j][0], a0, bj);
            c[j][1] = _mm512_dpbf16_ps(c[j][1], a1, bj);
        }
        ap += k_mr;
        bp += k_nr;
    }
    tile_store(c, d, ldd, m, n, first);
}

// ---- GEMM jobs ----

template <typename W>
void gemm_f32(const ggml_mul_mat_gemm_args & g) {
    const char * a = static_cast<const char *>(g.a);
    float * ap = static_cast<float *>(g.scratch);
    const int64_t n_tiles_m = (g.m + k_mr - 1) / k_mr;
    const int64_t n_panels = (g.n + k_nr - 1) / k_nr;
    for (int64_t k0 = 0; k0 < g.k; k0 += k_kc) {
        const int64_t kc = min64(k_kc, g.k - k0);
        for (int64_t q = 0; q < n_tiles_m; ++q) {
            pack_a_f32<W>(a + q * k_mr * g.lda, g.lda, min64(k_mr, g.m - q * k_mr), k0, kc, ap + q * k_kc * k_mr);
        }
        for (int64_t p = 0; p < n_panels; ++p) {
            const char * panel = static_cast<const char *>(g.bp) + p * g.bp_stride;
            const float * bp = reinterpret_cast<const float *>(panel) + k0 * k_nr;
            const int64_t nn = min64(k_nr, g.n - p * k_nr);
            for (int64_t q = 0; q < n_tiles_m; ++q) {
                tile_f32(kc, ap + q * k_kc * k_mr, bp, g.d + p * k_nr * g.ldd + q * k_mr, g.ldd,
                         min64(k_mr, g.m - q * k_mr), nn, k0 == 0);
            }
        }
    }
}

void gemm_bf16(const ggml_mul_mat_gemm_args & g) {
    const char * a = static_cast<const char *>(g.a);
    uint32_t * ap = static_cast<uint32_t *>(g.scratch);
    const int64_t n_tiles_m = (g.m + k_mr - 1) / k_mr;
    const int64_t n_panels = (g.n + k_nr - 1) / k_nr;
    const int64_t kc_pairs = k_kc / 2;
    for (int64_t k0 = 0; k0 < g.k; k0 += k_kc) {
        const int64_t kc = min64(k_kc, g.k - k0);
        const int64_t np = (kc + 1) / 2;
        for (int64_t q = 0; q < n_tiles_m; ++q) {
            pack_a_bf16_pairs(a + q * k_mr * g.lda, g.lda, min64(k_mr, g.m - q * k_mr), k0, kc, g.k,
                              ap + q * kc_pairs * k_mr);
        }
        for (int64_t p = 0; p < n_panels; ++p) {
            const uint32_t * bp =
                reinterpret_cast<const uint32_t *>(static_cast<const char *>(g.bp) + p * g.bp_stride) + (k0 / 2) * k_nr;
            const int64_t nn = min64(k_nr, g.n - p * k_nr);
            for (int64_t q = 0; q < n_tiles_m; ++q) {
                tile_bf16(np, ap + q * kc_pairs * k_mr, bp, g.d + p * k_nr * g.ldd + q * k_mr, g.ldd,
                          min64(k_mr, g.m - q * k_mr), nn, k0 == 0);
            }
        }
    }
}

// F32 and F16 weights: dot kernels and the F32 GEMM; BF16 weights: the GEMM on BF16 pair
// panels (vdpbf16ps); the quantized types: dot kernels only (they tile rows x columns themselves).
constexpr ggml_mul_mat_kernels make_kernels() {
    ggml_mul_mat_kernels t;
    t.name = "avx512";
    t.set(GGML_TYPE_F32, {.dot = dot_rows<load_f32>, .gemm = gemm_f32<load_f32>});
    t.set(GGML_TYPE_F16, {.dot = dot_rows<load_f16>, .gemm = gemm_f32<load_f16>});
    t.set(GGML_TYPE_BF16,
          {.dot = dot_rows<load_bf16>, .gemm_vec_type = GGML_TYPE_BF16, .gemm_kpair = 2, .gemm = gemm_bf16});
    ggml_mul_mat_set_quant(t, {
        .q4_0 = ggml_dot_q4_0_q8_0_avx512,
        .q4_1 = ggml_dot_q4_1_q8_1_avx512,
        .q5_0 = ggml_dot_q5_0_q8_0_avx512,
        .q5_1 = ggml_dot_q5_1_q8_1_avx512,
        .q8_0 = ggml_dot_q8_0_q8_0_avx512,
        .q2_K = ggml_dot_q2_K_q8_K_avx512,
        .q3_K = ggml_dot_q3_K_q8_K_avx512,
        .q4_K = ggml_dot_q4_K_q8_K_avx512,
        .q5_K = ggml_dot_q5_K_q8_K_avx512,
        .q6_K = ggml_dot_q6_K_q8_K_avx512,
        .iq4_nl = ggml_dot_iq4_nl_q8_0_avx512,
        .iq4_xs = ggml_dot_iq4_xs_q8_K_avx512,
        .mxfp4 = ggml_dot_mxfp4_q8_0_avx512,
        .act_q8_0 = ggml_quantize_row_q8_0_avx512,
        .act_q8_1 = ggml_quantize_row_q8_1_avx512,
        .act_q8_K = ggml_quantize_row_q8_K_avx512,
    });
    t.gemm_pack = pack_b;
    t.gemm_nr = k_nr;
    t.gemm_mc = k_mc;
    t.gemm_scratch = size_t(k_mc) * size_t(k_kc) * sizeof(float);
    // the GEMM converts each job's rows of a into F32 panels once: with fewer columns the dot
    // kernel (4 rows x 4 columns per tile, the rows reread from L1) does less work per column
    // (measured on F32, F16 and BF16 weights 4096 x 4096: dot faster up to 32 columns).
    t.gemm_min_n = 64;
    return t;
}

}  // namespace

constinit const ggml_mul_mat_kernels ggml_mul_mat_kernels_avx512 = make_kernels();
