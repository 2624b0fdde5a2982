// ggml/cpu/simd-traits.h — one vector width as a traits struct, for kernels written once over
// the width (internal).
//
// Usage (a kernel template in a header, instantiated in each ISA file):
//   template <typename S> float block_amax(const float * x) {   // x: S::lanes * n floats
//       typename S::vf m = S::zero();
//       for (int i = 0; i < n; i += S::lanes) m = S::max(S::abs(S::load(x + i)), m);
//       return S::reduce_max(m);
//   }
//   // quant-act-avx2.cpp:   block_amax<simd_avx2>(x)
//   // quant-act-avx512.cpp: block_amax<simd_avx512>(x)
//
// simd_avx2 (8 float / int32 lanes) is defined where the file is compiled with AVX2, simd_avx512
// (16 lanes) where it is compiled with AVX-512 F + BW. Everything here has internal linkage: an
// ISA file's copy is built with that file's -m flags and never shared with another file.
#pragma once

#include <cstdint>
// GCC 12's intrinsic headers self-initialise undefined vectors, which -Wuninitialized reports
// wherever they are inlined; silence it for them only.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop

namespace {

#if defined(__AVX2__) && defined(__FMA__)
struct simd_avx2 {
    static constexpr int lanes = 8;
    using vf = __m256;   // float lanes
    using vi = __m256i;  // int32 lanes

    static vf load(const float * p) { return _mm256_loadu_ps(p); }
    static vf zero() { return _mm256_setzero_ps(); }
    static vf set1(float v) { return _mm256_set1_ps(v); }
    static vf abs(vf v) { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), v); }
    static vf max(vf a, vf b) { return _mm256_max_ps(a, b); }  // b where a or b is NaN
    static vf min(vf a, vf b) { return _mm256_min_ps(a, b); }  // b where a or b is NaN
    static vf add(vf a, vf b) { return _mm256_add_ps(a, b); }
    static vf sub(vf a, vf b) { return _mm256_sub_ps(a, b); }
    static vf mul(vf a, vf b) { return _mm256_mul_ps(a, b); }
    static vf fmadd(vf a, vf b, vf c) { return _mm256_fmadd_ps(a, b, c); }  // a * b + c
    static vf sign_or_one(vf v) {  // +1 or -1 with the sign bit of v
        return _mm256_or_ps(_mm256_and_ps(v, _mm256_set1_ps(-0.0f)), _mm256_set1_ps(1.0f));
    }
    static vf trunc(vf v) { return _mm256_round_ps(v, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC); }
    // x + (a >= b ? y : 0) per lane (ordered: false where a or b is NaN)
    static vf add_where_ge(vf x, vf y, vf a, vf b) {
        return _mm256_add_ps(x, _mm256_and_ps(_mm256_cmp_ps(a, b, _CMP_GE_OQ), y));
    }
    // Bit l set where lane l of a equals lane l of b (ordered).
    static unsigned eq_bits(vf a, vf b) { return unsigned(_mm256_movemask_ps(_mm256_cmp_ps(a, b, _CMP_EQ_OQ))); }
    static float reduce_add(vf v) {
        __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
        s = _mm_add_ps(s, _mm_movehl_ps(s, s));
        s = _mm_add_ss(s, _mm_movehdup_ps(s));
        return _mm_cvtss_f32(s);
    }
    static float reduce_max(vf v) {
        __m128 m = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
        m = _mm_max_ps(m, _mm_movehl_ps(m, m));
        m = _mm_max_ss(m, _mm_movehdup_ps(m));
        return _mm_cvtss_f32(m);
    }

    static vi set1_i32(int32_t v) { return _mm256_set1_epi32(v); }
    static vi cvt_round(vf v) { return _mm256_cvtps_epi32(v); }    // current rounding mode
    static vi cvt_trunc(vf v) { return _mm256_cvttps_epi32(v); }
    static vi add_i32(vi a, vi b) { return _mm256_add_epi32(a, b); }
    static vi clamp_i32(vi v, vi lo, vi hi) { return _mm256_min_epi32(_mm256_max_epi32(v, lo), hi); }
    static int reduce_add_i32(vi v) {
        __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
        s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4E));
        s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xB1));
        return _mm_cvtsi128_si32(s);
    }
    // 32 int32 codes in [-128, 127] (c[0..3]) stored as 32 bytes in order.
    static void store_codes32(int8_t * q, const vi * c) {
        // the packs work per 128-bit lane: 0..3 8..11 4..7 12..15 (x4 bytes); a permute restores the order
        const __m256i b = _mm256_packs_epi16(_mm256_packs_epi32(c[0], c[1]), _mm256_packs_epi32(c[2], c[3]));
        const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
        _mm256_storeu_si256(reinterpret_cast<__m256i *>(q), _mm256_permutevar8x32_epi32(b, order));
    }
};
#endif

#if defined(__AVX512F__) && defined(__AVX512BW__)
struct simd_avx512 {
    static constexpr int lanes = 16;
    using vf = __m512;   // float lanes
    using vi = __m512i;  // int32 lanes

    static vf load(const float * p) { return _mm512_loadu_ps(p); }
    static vf zero() { return _mm512_setzero_ps(); }
    static vf set1(float v) { return _mm512_set1_ps(v); }
    static vf abs(vf v) { return _mm512_abs_ps(v); }
    static vf max(vf a, vf b) { return _mm512_max_ps(a, b); }  // b where a or b is NaN
    static vf min(vf a, vf b) { return _mm512_min_ps(a, b); }  // b where a or b is NaN
    static vf add(vf a, vf b) { return _mm512_add_ps(a, b); }
    static vf sub(vf a, vf b) { return _mm512_sub_ps(a, b); }
    static vf mul(vf a, vf b) { return _mm512_mul_ps(a, b); }
    static vf fmadd(vf a, vf b, vf c) { return _mm512_fmadd_ps(a, b, c); }  // a * b + c
    static vf sign_or_one(vf v) {  // +1 or -1 with the sign bit of v
        return _mm512_or_ps(_mm512_and_ps(v, _mm512_set1_ps(-0.0f)), _mm512_set1_ps(1.0f));
    }
    static vf trunc(vf v) { return _mm512_roundscale_ps(v, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC); }
    // x + (a >= b ? y : 0) per lane (ordered: false where a or b is NaN)
    static vf add_where_ge(vf x, vf y, vf a, vf b) {
        return _mm512_mask_add_ps(x, _mm512_cmp_ps_mask(a, b, _CMP_GE_OQ), x, y);
    }
    // Bit l set where lane l of a equals lane l of b (ordered).
    static unsigned eq_bits(vf a, vf b) { return unsigned(_mm512_cmp_ps_mask(a, b, _CMP_EQ_OQ)); }
    static float reduce_add(vf v) { return _mm512_reduce_add_ps(v); }
    static float reduce_max(vf v) { return _mm512_reduce_max_ps(v); }

    static vi set1_i32(int32_t v) { return _mm512_set1_epi32(v); }
    static vi cvt_round(vf v) { return _mm512_cvtps_epi32(v); }    // current rounding mode
    static vi cvt_trunc(vf v) { return _mm512_cvttps_epi32(v); }
    static vi add_i32(vi a, vi b) { return _mm512_add_epi32(a, b); }
    static vi clamp_i32(vi v, vi lo, vi hi) { return _mm512_min_epi32(_mm512_max_epi32(v, lo), hi); }
    static int reduce_add_i32(vi v) { return _mm512_reduce_add_epi32(v); }
    // 32 int32 codes in [-128, 127] (c[0..1]) stored as 32 bytes in order.
    static void store_codes32(int8_t * q, const vi * c) {
        _mm_storeu_si128(reinterpret_cast<__m128i *>(q), _mm512_cvtepi32_epi8(c[0]));
        _mm_storeu_si128(reinterpret_cast<__m128i *>(q + 16), _mm512_cvtepi32_epi8(c[1]));
    }
};
// Lanes [0, n) set (n clamped to [0, lanes]).
inline __mmask16 simd_mask16(int64_t n) {
    return n >= 16 ? __mmask16(0xffff) : n <= 0 ? __mmask16(0) : __mmask16((1u << n) - 1u);
}
inline __mmask32 simd_mask32(int64_t n) {
    return n >= 32 ? __mmask32(0xffffffffu) : n <= 0 ? __mmask32(0) : __mmask32((1u << n) - 1u);
}
// 16 BF16 values as F32.
inline __m512 simd_bf16_to_f32(__m256i h) {
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}

// In place: lane j of v[i] <- lane i of v[j] (a 16 x 16 transpose of 32-bit lanes).
inline void simd_transpose16x16(__m512i * v) {
    __m512i t[16], u[16];
    for (int i = 0; i < 16; i += 2) {
        t[i] = _mm512_unpacklo_epi32(v[i], v[i + 1]);
        t[i + 1] = _mm512_unpackhi_epi32(v[i], v[i + 1]);
    }
    // u[4 G + j], 128-bit lane L: lane 4 L + j of rows 4 G .. 4 G + 3
    for (int g = 0; g < 16; g += 4) {
        u[g] = _mm512_unpacklo_epi64(t[g], t[g + 2]);
        u[g + 1] = _mm512_unpackhi_epi64(t[g], t[g + 2]);
        u[g + 2] = _mm512_unpacklo_epi64(t[g + 1], t[g + 3]);
        u[g + 3] = _mm512_unpackhi_epi64(t[g + 1], t[g + 3]);
    }
    // 4 x 4 transpose of 128-bit lanes across the groups, for each j
    for (int j = 0; j < 4; ++j) {
        const __m512i p = _mm512_shuffle_i32x4(u[j], u[4 + j], 0x44), q = _mm512_shuffle_i32x4(u[j], u[4 + j], 0xee);
        const __m512i r = _mm512_shuffle_i32x4(u[8 + j], u[12 + j], 0x44);
        const __m512i w = _mm512_shuffle_i32x4(u[8 + j], u[12 + j], 0xee);
        v[j] = _mm512_shuffle_i32x4(p, r, 0x88);
        v[4 + j] = _mm512_shuffle_i32x4(p, r, 0xdd);
        v[8 + j] = _mm512_shuffle_i32x4(q, w, 0x88);
        v[12 + j] = _mm512_shuffle_i32x4(q, w, 0xdd);
    }
}
#endif

}  // namespace
