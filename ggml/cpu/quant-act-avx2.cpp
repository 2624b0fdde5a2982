// AVX2 activation quantizers Q8_0 / Q8_1 (see quant-dot.h): the same blocks, bit for bit,
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
// GCC 12's intrinsics trip -Wuninitialized false positives (GCC bug 105593).
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

__m256 abs_ps(__m256 v) { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), v); }

// round-half-away(clamp(v, -127, 127)) as int32 lanes; NaN gives -127.
__m256i round_code(__m256 v) {
    v = _mm256_min_ps(_mm256_max_ps(v, _mm256_set1_ps(-127.0f)), _mm256_set1_ps(127.0f));  // max(NaN, x) = x
    const __m256 t = _mm256_round_ps(v, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    const __m256 frac = abs_ps(_mm256_sub_ps(v, t));
    const __m256 one = _mm256_or_ps(_mm256_and_ps(v, _mm256_set1_ps(-0.0f)), _mm256_set1_ps(1.0f));
    const __m256 up = _mm256_cmp_ps(frac, _mm256_set1_ps(0.5f), _CMP_GE_OQ);
    return _mm256_cvttps_epi32(_mm256_add_ps(t, _mm256_and_ps(up, one)));
}

float hmax(__m256 v) {
    __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    m = _mm_max_ps(m, _mm_movehl_ps(m, m));
    m = _mm_max_ss(m, _mm_movehdup_ps(m));
    return _mm_cvtss_f32(m);
}

int hsum_i32(__m256i v) {
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4E));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xB1));
    return _mm_cvtsi128_si32(s);
}

// One block: codes into q, d returned (float, before fp16 rounding), sum of the codes in sum.
float quantize_block(const float * x, int8_t * q, int & sum) {
    __m256 v[4];
    // max(|x|, acc) returns acc when |x| is NaN: NaN elements are ignored, as fmax does
    __m256 amax = _mm256_setzero_ps();
    for (int i = 0; i < 4; ++i) {
        v[i] = _mm256_loadu_ps(x + 8 * i);
        amax = _mm256_max_ps(abs_ps(v[i]), amax);
    }
    const float d = clamp_fp16_range(hmax(amax) / 127.0f);
    const __m256 id = _mm256_set1_ps(inverse_or_zero(d));
    __m256i c[4];
    for (int i = 0; i < 4; ++i) c[i] = round_code(_mm256_mul_ps(v[i], id));
    sum = hsum_i32(_mm256_add_epi32(_mm256_add_epi32(c[0], c[1]), _mm256_add_epi32(c[2], c[3])));
    // packs interleave the 128-bit lanes: 0..3 8..11 4..7 12..15 (x4 bytes); undo with a permute
    const __m256i w01 = _mm256_packs_epi32(c[0], c[1]), w23 = _mm256_packs_epi32(c[2], c[3]);
    const __m256i b = _mm256_packs_epi16(w01, w23);
    const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    _mm256_storeu_si256(reinterpret_cast<__m256i *>(q), _mm256_permutevar8x32_epi32(b, order));
    return d;
}

}  // namespace

void ggml_quantize_row_q8_0_avx2(const float * x, void * vy, int64_t k) {
    block_q8_0 * y = static_cast<block_q8_0 *>(vy);
    for (int64_t i = 0; i < k / k_qk; ++i) {
        int sum;
        const float d = quantize_block(x + i * k_qk, y[i].qs, sum);
        y[i].d = to_fp16(d);
    }
}

void ggml_quantize_row_q8_1_avx2(const float * x, void * vy, int64_t k) {
    block_q8_1 * y = static_cast<block_q8_1 *>(vy);
    for (int64_t i = 0; i < k / k_qk; ++i) {
        int sum;
        const float d = quantize_block(x + i * k_qk, y[i].qs, sum);
        y[i].d = to_fp16(d);
        y[i].s = to_fp16(clamp_fp16_range(float(sum) * d));
    }
}
