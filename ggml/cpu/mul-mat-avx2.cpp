// MUL_MAT kernels with AVX2 + FMA + F16C: dot kernels for mat-vec and few columns (those of
// mul-mat-dot-simd.h at 8 lanes), and a packed GEMM (16 x 6 register tile) for mat-mat. See
// mul-mat.h for the contracts.
//
// Every weight type works in F32: F16 widened with vcvtph2ps, BF16 by a 16-bit shift; the
// activations stay F32.
#include "mul-mat.h"
#include "mul-mat-dot-simd.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
// GCC 12's intrinsic headers self-initialise undefined vectors, which -Wuninitialized
// reports wherever they are inlined; silence it for them only.
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
constexpr int64_t k_dot_cols = 2;  // most columns per dot block

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

// ---- dot kernels: mul-mat-dot-simd.h at 8 lanes, columns in blocks of up to k_dot_cols ----

template <typename W>
constexpr ggml_mul_mat_dot_fn dot_rows = mul_mat_dot::dot_rows<simd_avx2, W, load_f32, k_dot_cols>;

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
void store_part(float * d, __m256 v, int64_t n, bool first) {
    if (n <= 0) return;
    if (n >= 8) {
        _mm256_storeu_ps(d, first ? v : _mm256_add_ps(v, _mm256_loadu_ps(d)));
        return;
    }
    alignas(32) float t[8];
    _mm256_store_ps(t, v);
    for (int64_t i = 0; i < n; ++i) d[i] = first ? t[i] : d[i] + t[i];
}

void tile_f32(int64_t kc, const float * ap, const float * bp, float * d, int64_t ldd, int64_t m, int64_t n, bool first) {
    __m256 c[k_nr][2];
#pragma GCC unroll 6
    for (int j = 0; j < k_nr; ++j) c[j][0] = c[j][1] = _mm256_setzero_ps();
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
        store_part(d + j * ldd, c[j][0], m, first);
        store_part(d + j * ldd + 8, c[j][1], m - 8, first);
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

// F32, F16 and BF16 weights: dot kernels and the F32 GEMM; the quantized types: dot kernels
// only (they tile rows x columns themselves).
constexpr ggml_mul_mat_kernels make_kernels() {
    ggml_mul_mat_kernels t;
    t.name = "avx2";
    t.set(GGML_TYPE_F32, {.dot = dot_rows<load_f32>, .gemm = gemm<load_f32>});
    t.set(GGML_TYPE_F16, {.dot = dot_rows<load_f16>, .gemm = gemm<load_f16>});
    t.set(GGML_TYPE_BF16, {.dot = dot_rows<load_bf16>, .gemm = gemm<load_bf16>});
    ggml_mul_mat_set_quant(t, {
        .q4_0 = ggml_dot_q4_0_q8_0_avx2,
        .q4_1 = ggml_dot_q4_1_q8_1_avx2,
        .q5_0 = ggml_dot_q5_0_q8_0_avx2,
        .q5_1 = ggml_dot_q5_1_q8_1_avx2,
        .q8_0 = ggml_dot_q8_0_q8_0_avx2,
        .q2_K = ggml_dot_q2_K_q8_K_avx2,
        .q3_K = ggml_dot_q3_K_q8_K_avx2,
        .q4_K = ggml_dot_q4_K_q8_K_avx2,
        .q5_K = ggml_dot_q5_K_q8_K_avx2,
        .q6_K = ggml_dot_q6_K_q8_K_avx2,
        .iq4_nl = ggml_dot_iq4_nl_q8_0_avx2,
        .iq4_xs = ggml_dot_iq4_xs_q8_K_avx2,
        .mxfp4 = ggml_dot_mxfp4_q8_0_avx2,
        .act_q8_0 = ggml_quantize_row_q8_0_avx2,
        .act_q8_1 = ggml_quantize_row_q8_1_avx2,
        .act_q8_K = ggml_quantize_row_q8_K_avx2,
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

constinit const ggml_mul_mat_kernels ggml_mul_mat_kernels_avx2 = make_kernels();
