// AVX-512 quantizer of activations into Q8_K blocks (see quant-dot.h).
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

// The first element of largest magnitude (NaNs skipped); 0 when every element is 0 or NaN.
float first_max(const float * x, float & amax) {
    __m512 m = _mm512_setzero_ps();
    for (int j = 0; j < QK_K; j += 16) m = _mm512_max_ps(_mm512_abs_ps(_mm512_loadu_ps(x + j)), m);  // NaN keeps m
    amax = _mm512_reduce_max_ps(m);
    if (!(amax > 0.0f)) return 0.0f;
    const __m512 va = _mm512_set1_ps(amax);
    for (int j = 0; j < QK_K; j += 16) {
        const __mmask16 hit = _mm512_cmp_ps_mask(_mm512_abs_ps(_mm512_loadu_ps(x + j)), va, _CMP_EQ_OQ);
        if (hit) return x[j + __builtin_ctz(unsigned(hit))];
    }
    return 0.0f;  // not reached: amax is one of the magnitudes
}

void quantize_block(const float * x, block_q8_K & y) {
    float amax = 0.0f;
    const float max = first_max(x, amax);
    if (!(amax > 0.0f) || !is_finite(amax)) return zero_block(y);
    const float iscale = -128.0f / max;
    if (!is_finite(iscale)) return zero_block(y);
    const __m512 vs = _mm512_set1_ps(iscale);
    const __m512i lo = _mm512_set1_epi32(-128), hi = _mm512_set1_epi32(127);
    for (int g = 0; g < QK_K / 16; ++g) {
        __m512i q = _mm512_cvtps_epi32(_mm512_mul_ps(_mm512_loadu_ps(x + 16 * g), vs));  // NaN: INT_MIN
        q = _mm512_min_epi32(_mm512_max_epi32(q, lo), hi);
        _mm_storeu_si128(reinterpret_cast<__m128i *>(y.qs + 16 * g), _mm512_cvtepi32_epi8(q));
        y.bsums[g] = int16_t(_mm512_reduce_add_epi32(q));
    }
    y.d = 1.0f / iscale;
}

}  // namespace

void ggml_quantize_row_q8_K_avx512(const float * x, void * y, int64_t k) {
    block_q8_K * yb = static_cast<block_q8_K *>(y);
    for (int64_t i = 0; i < k / QK_K; ++i) quantize_block(x + i * QK_K, yb[i]);
}
