// AVX2 quantizer of activations into Q8_K blocks (see quant-dot.h).
//
// Gives exactly the blocks of ggml_quantize_row_q8_K_ref (no tie exceptions): the scale comes
// from the first element of largest magnitude (NaNs skipped), iscale = -128 / that element,
// codes are round-to-nearest-even of iscale * x (vcvtps2dq under the default rounding mode, the
// same as the reference's rounding) clamped to [-128, 127] (NaN gives -128 in both), bsums
// are the sums of 16 stored codes, d = 1 / iscale. A block whose largest magnitude is zero or
// not finite, or whose iscale overflows, is all zero.
#include "quant-dot.h"

#include "ggml/quants.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
// GCC 12's intrinsic headers self-initialise undefined vectors, which -Wuninitialized reports
// wherever they are inlined (GCC bug 105593); silence it for them only.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop

namespace {

constexpr float k_flt_max = 3.40282346638528859811704183484516925e+38f;

inline bool is_finite(float v) { return v >= -k_flt_max && v <= k_flt_max; }

void zero_block(block_q8_K & y) {
    y.d = 0.0f;
    std::memset(y.qs, 0, sizeof y.qs);
    std::memset(y.bsums, 0, sizeof y.bsums);
}

inline __m256 abs_ps(__m256 v) { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), v); }

inline float hmax(__m256 v) {
    __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    m = _mm_max_ps(m, _mm_movehl_ps(m, m));
    m = _mm_max_ss(m, _mm_movehdup_ps(m));
    return _mm_cvtss_f32(m);
}

inline int hsum_epi32(__m256i v) {
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(1, 0, 3, 2)));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, _MM_SHUFFLE(2, 3, 0, 1)));
    return _mm_cvtsi128_si32(s);
}

// The first element of largest magnitude (NaNs skipped); 0 when every element is 0 or NaN.
float first_max(const float * x, float & amax) {
    __m256 m = _mm256_setzero_ps();
    for (int j = 0; j < QK_K; j += 8) m = _mm256_max_ps(abs_ps(_mm256_loadu_ps(x + j)), m);  // NaN keeps m
    amax = hmax(m);
    if (!(amax > 0.0f)) return 0.0f;
    const __m256 va = _mm256_set1_ps(amax);
    for (int j = 0; j < QK_K; j += 8) {
        const int hit = _mm256_movemask_ps(_mm256_cmp_ps(abs_ps(_mm256_loadu_ps(x + j)), va, _CMP_EQ_OQ));
        if (hit) return x[j + __builtin_ctz(unsigned(hit))];
    }
    return 0.0f;  // not reached: amax is one of the magnitudes
}

// 8 codes of x[0..7] * iscale, clamped to [-128, 127] (NaN: -128).
inline __m256i codes8(const float * x, __m256 vs) {
    const __m256i q = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(x), vs));  // NaN: INT_MIN
    return _mm256_min_epi32(_mm256_max_epi32(q, _mm256_set1_epi32(-128)), _mm256_set1_epi32(127));
}

void quantize_block(const float * x, block_q8_K & y) {
    float amax = 0.0f;
    const float max = first_max(x, amax);
    if (!(amax > 0.0f) || !is_finite(amax)) return zero_block(y);
    const float iscale = -128.0f / max;
    if (!is_finite(iscale)) return zero_block(y);
    const __m256 vs = _mm256_set1_ps(iscale);
    const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    for (int j = 0; j < QK_K; j += 32) {
        const __m256i a = codes8(x + j, vs), b = codes8(x + j + 8, vs);
        const __m256i c = codes8(x + j + 16, vs), d = codes8(x + j + 24, vs);
        y.bsums[j / 16] = int16_t(hsum_epi32(_mm256_add_epi32(a, b)));
        y.bsums[j / 16 + 1] = int16_t(hsum_epi32(_mm256_add_epi32(c, d)));
        // packs work per 128-bit lane: groups of 4 come out as a0-3 b0-3 c0-3 d0-3 a4-7 ...; reorder
        const __m256i q = _mm256_packs_epi16(_mm256_packs_epi32(a, b), _mm256_packs_epi32(c, d));
        _mm256_storeu_si256(reinterpret_cast<__m256i *>(y.qs + j), _mm256_permutevar8x32_epi32(q, order));
    }
    y.d = 1.0f / iscale;
}

}  // namespace

void ggml_quantize_row_q8_K_avx2(const float * x, void * y, int64_t k) {
    block_q8_K * yb = static_cast<block_q8_K *>(y);
    for (int64_t i = 0; i < k / QK_K; ++i) quantize_block(x + i * QK_K, yb[i]);
}
