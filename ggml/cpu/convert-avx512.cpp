// F16/BF16 <-> F32 row conversions with AVX-512 (bit-identical to the scalar ones).
#include "convert-isa.h"

#include <cstring>
// GCC 12's AVX-512 intrinsics trip -Wuninitialized false positives (GCC bug 105593).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop

namespace {

__mmask16 tail_mask(int64_t left) { return __mmask16((1u << left) - 1u); }

// Round-to-nearest-even F32 -> BF16 of 16 lanes with NaN kept quiet.
__m256i bf16_round16(__m512 v) {
    const __m512i x = _mm512_castps_si512(v);
    const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(x, 16), _mm512_set1_epi32(1));
    __m512i r = _mm512_srli_epi32(_mm512_add_epi32(_mm512_add_epi32(x, _mm512_set1_epi32(0x7fff)), lsb), 16);
    const __mmask16 nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
    r = _mm512_mask_or_epi32(r, nan, _mm512_srli_epi32(x, 16), _mm512_set1_epi32(0x40));
    return _mm512_cvtepi32_epi16(r);
}

}  // namespace

void ggml_cpu_f16_to_f32_avx512(const uint16_t * x, float * y, int64_t n) {
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        _mm512_storeu_ps(y + i, _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i *>(x + i))));
    }
    if (i < n) {
        const __mmask16 m = tail_mask(n - i);
        const __m256i h = _mm256_maskz_loadu_epi16(m, x + i);
        _mm512_mask_storeu_ps(y + i, m, _mm512_cvtph_ps(h));
    }
}

void ggml_cpu_f32_to_f16_avx512(const float * x, uint16_t * y, int64_t n) {
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m256i h = _mm512_cvtps_ph(_mm512_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT);
        _mm256_storeu_si256(reinterpret_cast<__m256i *>(y + i), h);
    }
    if (i < n) {
        const __mmask16 m = tail_mask(n - i);
        const __m256i h = _mm512_cvtps_ph(_mm512_maskz_loadu_ps(m, x + i), _MM_FROUND_TO_NEAREST_INT);
        _mm256_mask_storeu_epi16(y + i, m, h);
    }
}

void ggml_cpu_bf16_to_f32_avx512(const uint16_t * x, float * y, int64_t n) {
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m512i w = _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i *>(x + i)));
        _mm512_storeu_ps(y + i, _mm512_castsi512_ps(_mm512_slli_epi32(w, 16)));
    }
    if (i < n) {
        const __mmask16 m = tail_mask(n - i);
        const __m512i w = _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(m, x + i));
        _mm512_mask_storeu_ps(y + i, m, _mm512_castsi512_ps(_mm512_slli_epi32(w, 16)));
    }
}

void ggml_cpu_f32_to_bf16_avx512(const float * x, uint16_t * y, int64_t n) {
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        _mm256_storeu_si256(reinterpret_cast<__m256i *>(y + i), bf16_round16(_mm512_loadu_ps(x + i)));
    }
    if (i < n) {
        const __mmask16 m = tail_mask(n - i);
        _mm256_mask_storeu_epi16(y + i, m, bf16_round16(_mm512_maskz_loadu_ps(m, x + i)));
    }
}
