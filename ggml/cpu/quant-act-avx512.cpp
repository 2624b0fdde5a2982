// AVX-512 activation quantizers Q8_0 / Q8_1 (see quant-dot.h): the same blocks, bit for bit,
// as ggml_quantize_row_q8_0_ref / _q8_1_ref (ggml/src/quants-legacy.cpp) on every input:
//   d = amax / 127 (amax ignores NaN; d clamped to the fp16 range), id = 1 / d (0 when d is 0
//   or 1 / d overflows), q = round-half-away(clamp(x * id, -127, 127)) with NaN -> -127,
//   Q8_1: s = fp16(clamp(sum(q) * d)).
// Rounding half away from zero is done exactly: trunc(v), plus the sign of v where the
// (exact) remainder v - trunc(v) has magnitude >= 0.5.
#include "quant-dot.h"

#include "ggml/quants.h"

#include <cstddef>
#include <cstdint>
#include <cstring>
// GCC 12's AVX-512 intrinsics trip -Wuninitialized false positives (GCC bug 105593).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop

namespace {

constexpr int k_qk = 32;
constexpr float k_fp16_max = 65504.0f;

float clamp_fp16_range(float v) {
    if (v != v) return 0.0f;
    if (v > k_fp16_max) return k_fp16_max;
    if (v < -k_fp16_max) return -k_fp16_max;
    return v;
}

float inverse_or_zero(float d) {
    if (d == 0.0f) return 0.0f;
    const float id = 1.0f / d;
    return id - id == 0.0f ? id : 0.0f;  // finite
}

ggml_fp16_t to_fp16(float f) { return ggml_fp16_t(_cvtss_sh(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)); }

// round-half-away(clamp(v, -127, 127)) as int32 lanes; NaN gives -127.
__m512i round_code(__m512 v) {
    v = _mm512_min_ps(_mm512_max_ps(v, _mm512_set1_ps(-127.0f)), _mm512_set1_ps(127.0f));  // max(NaN, x) = x
    const __m512 t = _mm512_roundscale_ps(v, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    const __m512 frac = _mm512_abs_ps(_mm512_sub_ps(v, t));
    const __m512 one = _mm512_or_ps(_mm512_and_ps(v, _mm512_set1_ps(-0.0f)), _mm512_set1_ps(1.0f));
    const __mmask16 up = _mm512_cmp_ps_mask(frac, _mm512_set1_ps(0.5f), _CMP_GE_OQ);
    return _mm512_cvttps_epi32(_mm512_mask_add_ps(t, up, t, one));
}

// One block: codes into q, d returned (float, before fp16 rounding), sum of the codes in sum.
float quantize_block(const float * x, int8_t * q, int & sum) {
    const __m512 v0 = _mm512_loadu_ps(x), v1 = _mm512_loadu_ps(x + 16);
    // max(|x|, acc) returns acc when |x| is NaN: NaN elements are ignored, as fmax does
    __m512 amax = _mm512_max_ps(_mm512_abs_ps(v0), _mm512_setzero_ps());
    amax = _mm512_max_ps(_mm512_abs_ps(v1), amax);
    const float d = clamp_fp16_range(_mm512_reduce_max_ps(amax) / 127.0f);
    const __m512 id = _mm512_set1_ps(inverse_or_zero(d));
    const __m512i q0 = round_code(_mm512_mul_ps(v0, id));
    const __m512i q1 = round_code(_mm512_mul_ps(v1, id));
    _mm_storeu_si128(reinterpret_cast<__m128i *>(q), _mm512_cvtepi32_epi8(q0));
    _mm_storeu_si128(reinterpret_cast<__m128i *>(q + 16), _mm512_cvtepi32_epi8(q1));
    sum = _mm512_reduce_add_epi32(_mm512_add_epi32(q0, q1));
    return d;
}

}  // namespace

void ggml_quantize_row_q8_0_avx512(const float * x, void * vy, int64_t k) {
    block_q8_0 * y = static_cast<block_q8_0 *>(vy);
    for (int64_t i = 0; i < k / k_qk; ++i) {
        int sum;
        const float d = quantize_block(x + i * k_qk, y[i].qs, sum);
        y[i].d = to_fp16(d);
    }
}

void ggml_quantize_row_q8_1_avx512(const float * x, void * vy, int64_t k) {
    block_q8_1 * y = static_cast<block_q8_1 *>(vy);
    for (int64_t i = 0; i < k / k_qk; ++i) {
        int sum;
        const float d = quantize_block(x + i * k_qk, y[i].qs, sum);
        y[i].d = to_fp16(d);
        y[i].s = to_fp16(clamp_fp16_range(float(sum) * d));
    }
}
