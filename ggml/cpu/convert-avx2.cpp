// F16/BF16 <-> F32 row conversions with AVX2 + F16C (bit-identical to the scalar ones).
#include "convert-isa.h"

#include <cstring>
#include <immintrin.h>

namespace {

// Round-to-nearest-even F32 -> BF16 of 8 lanes, NaN kept quiet; result in the low 16 bits.
__m256i bf16_round8(__m256 v) {
    const __m256i x = _mm256_castps_si256(v);
    const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(x, 16), _mm256_set1_epi32(1));
    __m256i r = _mm256_add_epi32(_mm256_add_epi32(x, _mm256_set1_epi32(0x7fff)), lsb);
    r = _mm256_srli_epi32(r, 16);
    const __m256i nan_bits = _mm256_or_si256(_mm256_srli_epi32(x, 16), _mm256_set1_epi32(0x40));
    const __m256 is_nan = _mm256_cmp_ps(v, v, _CMP_UNORD_Q);
    return _mm256_blendv_epi8(r, nan_bits, _mm256_castps_si256(is_nan));
}

uint16_t bf16_scalar(float f) {
    uint32_t x;
    std::memcpy(&x, &f, 4);
    if ((x & 0x7fffffffu) > 0x7f800000u) return uint16_t((x >> 16) | 0x40u);
    return uint16_t((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

}  // namespace

void ggml_cpu_f16_to_f32_avx2(const uint16_t * x, float * y, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        _mm256_storeu_ps(y + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i *>(x + i))));
    }
    if (i < n) {
        uint16_t tmp[8] = {0};
        float out[8];
        std::memcpy(tmp, x + i, size_t(n - i) * 2);
        _mm256_storeu_ps(out, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i *>(tmp))));
        std::memcpy(y + i, out, size_t(n - i) * 4);
    }
}

void ggml_cpu_f32_to_f16_avx2(const float * x, uint16_t * y, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT);
        _mm_storeu_si128(reinterpret_cast<__m128i *>(y + i), h);
    }
    if (i < n) {
        float tmp[8] = {0};
        uint16_t out[8];
        std::memcpy(tmp, x + i, size_t(n - i) * 4);
        _mm_storeu_si128(reinterpret_cast<__m128i *>(out), _mm256_cvtps_ph(_mm256_loadu_ps(tmp), _MM_FROUND_TO_NEAREST_INT));
        std::memcpy(y + i, out, size_t(n - i) * 2);
    }
}

void ggml_cpu_bf16_to_f32_avx2(const uint16_t * x, float * y, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i *>(x + i)));
        _mm256_storeu_ps(y + i, _mm256_castsi256_ps(_mm256_slli_epi32(w, 16)));
    }
    for (; i < n; ++i) {
        const uint32_t u = uint32_t(x[i]) << 16;
        std::memcpy(y + i, &u, 4);
    }
}

void ggml_cpu_f32_to_bf16_avx2(const float * x, uint16_t * y, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256i r = bf16_round8(_mm256_loadu_ps(x + i));
        // pack 8 x 32-bit (values < 65536) into 8 x 16-bit
        const __m128i lo = _mm256_castsi256_si128(r), hi = _mm256_extracti128_si256(r, 1);
        _mm_storeu_si128(reinterpret_cast<__m128i *>(y + i), _mm_packus_epi32(lo, hi));
    }
    for (; i < n; ++i) y[i] = bf16_scalar(x[i]);
}
