// MUL_MAT kernels with AVX2 + FMA + F16C: dot kernels for mat-vec and few columns, and a
// packed GEMM (16 x 6 register tile) for mat-mat. See mul-mat.h for the contracts.
//
// Every weight type works in F32: F16 widened with vcvtph2ps, BF16 by a 16-bit shift; the
// activations stay F32.
#include "mul-mat.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
// GCC 12's intrinsic headers self-initialise undefined vectors, which -Wuninitialized
// reports wherever they are inlined (GCC bug 105593); silence it for them only.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop

namespace {

constexpr int k_mr = 16;        // rows of a per register tile (two vectors)
constexpr int k_nr = 6;         // columns per register tile (= B panel width)
constexpr int64_t k_mc = 64;    // rows of a per job
constexpr int64_t k_kc = 256;   // k per packed block
// Bytes ahead in a weight row that the dot kernels prefetch (one row / 4 interleaved rows).
constexpr int64_t k_prefetch_1 = 4096, k_prefetch_4 = 2048;
constexpr int64_t k_dot_cols = 2;

inline int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

// ---- weight loaders: 8 lanes of F32 from element i of a row; part() reads only n < 8 ----

struct load_f32 {
    static constexpr int64_t size = 4;  // bytes per element
    static __m256 full(const char * p, int64_t i) { return _mm256_loadu_ps(reinterpret_cast<const float *>(p) + i); }
    static __m256 part(const char * p, int64_t i, int64_t n) {
        alignas(32) float t[8] = {};
        std::memcpy(t, reinterpret_cast<const float *>(p) + i, size_t(n) * sizeof(float));
        return _mm256_load_ps(t);
    }
};

struct load_f16 {
    static constexpr int64_t size = 2;  // bytes per element
    static __m256 full(const char * p, int64_t i) {
        const uint16_t * h = reinterpret_cast<const uint16_t *>(p) + i;
        return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i *>(h)));
    }
    static __m256 part(const char * p, int64_t i, int64_t n) {
        alignas(16) uint16_t t[8] = {};
        std::memcpy(t, reinterpret_cast<const uint16_t *>(p) + i, size_t(n) * sizeof(uint16_t));
        return _mm256_cvtph_ps(_mm_load_si128(reinterpret_cast<const __m128i *>(t)));
    }
};

struct load_bf16 {
    static constexpr int64_t size = 2;  // bytes per element
    static __m256 widen(__m128i h) { return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16)); }
    static __m256 full(const char * p, int64_t i) {
        return widen(_mm_loadu_si128(reinterpret_cast<const __m128i *>(reinterpret_cast<const uint16_t *>(p) + i)));
    }
    static __m256 part(const char * p, int64_t i, int64_t n) {
        alignas(16) uint16_t t[8] = {};
        std::memcpy(t, reinterpret_cast<const uint16_t *>(p) + i, size_t(n) * sizeof(uint16_t));
        return widen(_mm_load_si128(reinterpret_cast<const __m128i *>(t)));
    }
};

float hsum(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

// ---- dot kernels ----

// R weight rows against C columns, U steps of 8 k unrolled for U * R * C independent
// accumulators, and a software prefetch ahead in each row. Mat-vec (C = 1) takes one row at a
// time up to k_dot_long_k (one sequential stream per thread reads memory fastest); with more
// columns or longer rows 4 rows share each load of b. See mul-mat-avx512.cpp.
template <typename W, int R, int C>
void dot_block(int64_t k, const char * a, size_t lda, const char * b, size_t ldb, float * y, int64_t ldy) {
    constexpr int U = R * C >= 4 ? 1 : 4 / (R * C);
    constexpr int64_t step = 8 * U;
    __m256 acc[U][R][C];
#pragma GCC unroll 16
    for (int u = 0; u < U; ++u)
#pragma GCC unroll 16
        for (int r = 0; r < R; ++r)
#pragma GCC unroll 16
            for (int c = 0; c < C; ++c) acc[u][r][c] = _mm256_setzero_ps();
    int64_t i = 0;
    for (; i + step <= k; i += step) {
#pragma GCC unroll 16
        for (int r = 0; r < R; ++r) {
#pragma GCC unroll 16
            for (int64_t off = 0; off < step * W::size; off += 64) {
                _mm_prefetch(a + r * lda + i * W::size + (R == 1 ? k_prefetch_1 : k_prefetch_4) + off, _MM_HINT_T0);
            }
        }
#pragma GCC unroll 16
        for (int u = 0; u < U; ++u) {
            __m256 bv[C];
#pragma GCC unroll 16
            for (int c = 0; c < C; ++c) bv[c] = load_f32::full(b + c * ldb, i + 8 * u);
#pragma GCC unroll 16
            for (int r = 0; r < R; ++r) {
                const __m256 av = W::full(a + r * lda, i + 8 * u);
#pragma GCC unroll 16
                for (int c = 0; c < C; ++c) acc[u][r][c] = _mm256_fmadd_ps(av, bv[c], acc[u][r][c]);
            }
        }
    }
    for (; i < k; i += 8) {
        const int64_t n = k - i;
        __m256 bv[C];
#pragma GCC unroll 16
        for (int c = 0; c < C; ++c) bv[c] = n >= 8 ? load_f32::full(b + c * ldb, i) : load_f32::part(b + c * ldb, i, n);
#pragma GCC unroll 16
        for (int r = 0; r < R; ++r) {
            const __m256 av = n >= 8 ? W::full(a + r * lda, i) : W::part(a + r * lda, i, n);
#pragma GCC unroll 16
            for (int c = 0; c < C; ++c) acc[0][r][c] = _mm256_fmadd_ps(av, bv[c], acc[0][r][c]);
        }
    }
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) {
#pragma GCC unroll 16
        for (int c = 0; c < C; ++c) {
            __m256 s = acc[0][r][c];
#pragma GCC unroll 16
            for (int u = 1; u < U; ++u) s = _mm256_add_ps(s, acc[u][r][c]);
            y[c * ldy + r] = hsum(s);
        }
    }
}

using dot_block_fn = void (*)(int64_t, const char *, size_t, const char *, size_t, float *, int64_t);

// Past this k a column of F32 activations (> 32 KiB) no longer stays in L1 next to the weight
// stream, and 4 rows sharing each load of it beat the single stream (measured: k = 8192 one
// row is faster, k = 11008 and 14336 four rows are).
constexpr int64_t k_dot_long_k = 8192;

template <typename W>
void dot_rows(int64_t k, const void * a, size_t lda, int64_t nr, const void * b, size_t ldb, int64_t nc, float * y,
              int64_t ldy) {
    static constexpr dot_block_fn rows4[k_dot_cols] = {dot_block<W, 4, 1>, dot_block<W, 4, 2>};
    static constexpr dot_block_fn rows1[k_dot_cols] = {dot_block<W, 1, 1>, dot_block<W, 1, 2>};
    const char * pa = static_cast<const char *>(a);
    const char * pb = static_cast<const char *>(b);
    for (int64_t r = 0; r < nr;) {
        const bool four = (nc > 1 || k > k_dot_long_k) && nr - r >= 4;
        for (int64_t c = 0; c < nc; c += k_dot_cols) {
            const int64_t cn = min64(k_dot_cols, nc - c);
            (four ? rows4 : rows1)[cn - 1](k, pa + r * lda, lda, pb + c * ldb, ldb, y + c * ldy + r, ldy);
        }
        r += four ? 4 : 1;
    }
}

// ---- packing of a: transposed 8 x 8 blocks ----

// In place: v[i] (row i, 8 columns) becomes column i of the block.
void transpose8(__m256 v[8]) {
    __m256 t[8], s[8];
#pragma GCC unroll 16
    for (int i = 0; i < 4; ++i) {
        t[2 * i] = _mm256_unpacklo_ps(v[2 * i], v[2 * i + 1]);
        t[2 * i + 1] = _mm256_unpackhi_ps(v[2 * i], v[2 * i + 1]);
    }
#pragma GCC unroll 16
    for (int j = 0; j < 2; ++j) {
        s[4 * j + 0] = _mm256_shuffle_ps(t[4 * j], t[4 * j + 2], 0x44);
        s[4 * j + 1] = _mm256_shuffle_ps(t[4 * j], t[4 * j + 2], 0xEE);
        s[4 * j + 2] = _mm256_shuffle_ps(t[4 * j + 1], t[4 * j + 3], 0x44);
        s[4 * j + 3] = _mm256_shuffle_ps(t[4 * j + 1], t[4 * j + 3], 0xEE);
    }
#pragma GCC unroll 16
    for (int c = 0; c < 4; ++c) {
        v[c] = _mm256_permute2f128_ps(s[c], s[4 + c], 0x20);
        v[4 + c] = _mm256_permute2f128_ps(s[c], s[4 + c], 0x31);
    }
}

// Packs rows [0, m) (m <= 16) of a, elements [k0, k0 + kc) as F32: ap[k * 16 + i]. Rows past
// m are zero.
template <typename W>
void pack_a(const char * a, size_t lda, int64_t m, int64_t k0, int64_t kc, float * ap) {
#pragma GCC unroll 16
    for (int h = 0; h < 2; ++h) {
        for (int64_t kb = 0; kb < kc; kb += 8) {
            const int64_t kn = min64(8, kc - kb);
            __m256 v[8];
#pragma GCC unroll 16
            for (int i = 0; i < 8; ++i) {
                const int64_t row = h * 8 + i;
                if (row >= m) v[i] = _mm256_setzero_ps();
                else if (kn == 8) v[i] = W::full(a + row * lda, k0 + kb);
                else v[i] = W::part(a + row * lda, k0 + kb, kn);
            }
            transpose8(v);
#pragma GCC unroll 8
            for (int kk = 0; kk < 8; ++kk) {
                if (kk < kn) _mm256_store_ps(ap + (kb + kk) * k_mr + h * 8, v[kk]);
            }
        }
    }
}

// ---- packing of b (activations) into panels of 6 columns ----

void pack_b(const uint32_t * const * rows, int64_t n, uint32_t * panel) {
    static_assert(k_nr == 6, "the store mask below keeps 6 lanes");
    const __m256i keep = _mm256_setr_epi32(-1, -1, -1, -1, -1, -1, 0, 0);  // k_nr = 6 lanes
    for (int64_t e0 = 0; e0 < n; e0 += 8) {
        const int64_t en = min64(8, n - e0);
        __m256 v[8];
#pragma GCC unroll 16
        for (int j = 0; j < 8; ++j) {
            if (j >= k_nr || !rows[j]) {
                v[j] = _mm256_setzero_ps();
            } else if (en == 8) {
                v[j] = _mm256_loadu_ps(reinterpret_cast<const float *>(rows[j] + e0));
            } else {
                v[j] = load_f32::part(reinterpret_cast<const char *>(rows[j]), e0, en);
            }
        }
        transpose8(v);
#pragma GCC unroll 8
        for (int e = 0; e < 8; ++e) {
            if (e < en) _mm256_maskstore_ps(reinterpret_cast<float *>(panel + (e0 + e) * k_nr), keep, v[e]);
        }
    }
}

// ---- register tile: 16 rows x 6 columns ----

// Stores 8 lanes, only the first n (0..8) of them.
void store_part(float * d, __m256 v, int64_t n) {
    if (n <= 0) return;
    if (n >= 8) {
        _mm256_storeu_ps(d, v);
        return;
    }
    alignas(32) float t[8];
    _mm256_store_ps(t, v);
    for (int64_t i = 0; i < n; ++i) d[i] = t[i];
}

// Loads 8 lanes, only the first n (0..8) of them (the rest 0).
__m256 load_part(const float * d, int64_t n) {
    if (n >= 8) return _mm256_loadu_ps(d);
    alignas(32) float t[8] = {};
    for (int64_t i = 0; i < n; ++i) t[i] = d[i];
    return _mm256_load_ps(t);
}

// Continues the sums of d (zeros for the first block of k) over the next kc elements of k,
// one product after the other, so that every element of d is summed in k order whatever
// the blocking.
void tile_f32(int64_t kc, const float * ap, const float * bp, float * d, int64_t ldd, int64_t m, int64_t n, bool first) {
    __m256 c[k_nr][2];
#pragma GCC unroll 6
    for (int j = 0; j < k_nr; ++j) {
        const bool load = !first && j < n;
        c[j][0] = load ? load_part(d + j * ldd, m) : _mm256_setzero_ps();
        c[j][1] = load ? load_part(d + j * ldd + 8, m - 8) : _mm256_setzero_ps();
    }
    for (int64_t k = 0; k < kc; ++k) {
        const __m256 a0 = _mm256_load_ps(ap), a1 = _mm256_load_ps(ap + 8);
#pragma GCC unroll 6
        for (int j = 0; j < k_nr; ++j) {
            const __m256 bj = _mm256_broadcast_ss(bp + j);
            c[j][0] = _mm256_fmadd_ps(a0, bj, c[j][0]);
            c[j][1] = _mm256_fmadd_ps(a1, bj, c[j][1]);
        }
        ap += k_mr;
        bp += k_nr;
    }
#pragma GCC unroll 6
    for (int j = 0; j < k_nr; ++j) {
        if (j >= n) break;
        store_part(d + j * ldd, c[j][0], m);
        store_part(d + j * ldd + 8, c[j][1], m - 8);
    }
}

// ---- GEMM jobs ----

template <typename W>
void gemm(const ggml_mul_mat_gemm_args & g) {
    const char * a = static_cast<const char *>(g.a);
    float * ap = static_cast<float *>(g.scratch);
    const int64_t n_tiles_m = (g.m + k_mr - 1) / k_mr;
    const int64_t n_panels = (g.n + k_nr - 1) / k_nr;
    for (int64_t k0 = 0; k0 < g.k; k0 += k_kc) {
        const int64_t kc = min64(k_kc, g.k - k0);
        for (int64_t q = 0; q < n_tiles_m; ++q) {
            pack_a<W>(a + q * k_mr * g.lda, g.lda, min64(k_mr, g.m - q * k_mr), k0, kc, ap + q * k_kc * k_mr);
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

}  // namespace

extern const ggml_mul_mat_kernels ggml_mul_mat_kernels_avx2 = {
    /*name*/ "avx2",
    /*dot_vec_type*/ {GGML_TYPE_F32, GGML_TYPE_F32, GGML_TYPE_F32, GGML_MUL_MAT_QUANT_VEC_TYPES},
    /*dot*/ {dot_rows<load_f32>, dot_rows<load_f16>, dot_rows<load_bf16>,
            GGML_MUL_MAT_LEGACY_DOTS(avx2), GGML_MUL_MAT_K_DOTS(avx2), GGML_MUL_MAT_IQ_DOTS(avx2)},
    /*dot_vec_from_f32*/ {nullptr, nullptr, nullptr,
                          GGML_MUL_MAT_QUANT_ACT(ggml_quantize_row_q8_0_avx2, ggml_quantize_row_q8_1_avx2,
                                                 ggml_quantize_row_q8_K_avx2)},
    /*gemm_vec_type*/ {GGML_TYPE_F32, GGML_TYPE_F32, GGML_TYPE_F32, GGML_MUL_MAT_QUANT_F32},
    /*gemm_kpair*/ {1, 1, 1, GGML_MUL_MAT_QUANT_ZERO},
    /*gemm*/ {gemm<load_f32>, gemm<load_f16>, gemm<load_bf16>, GGML_MUL_MAT_QUANT_NONE},
    /*gemm_pack*/ pack_b,
    /*gemm_nr*/ k_nr,
    /*gemm_mc*/ k_mc,
    /*gemm_scratch*/ size_t(k_mc) * size_t(k_kc) * sizeof(float),
    // the GEMM converts each job's rows of a into F32 panels once: with fewer columns the dot
    // kernel (4 rows x 4 columns per tile, the rows reread from L1) does less work per column
    // (measured on F32, F16 and BF16 weights 4096 x 4096: dot faster up to 32 columns).
    /*gemm_min_n*/ 64,
};
