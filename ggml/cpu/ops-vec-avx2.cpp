// ggml/cpu/ops-vec-avx2.cpp — AVX2 + FMA row functions (8 floats per vector).
//
// Compiled with -mavx2 -mfma -mf16c and only reached after a CPUID check, so: nothing but the
// exported ggml_cpu_vec_fns_avx2 has external linkage, and no std templates are used (see the
// ISA-file rules in ops-vec.h). Tails are handled with masked loads and stores, so every
// element goes through the same vector code and nothing past n is touched.
//
// exp(x) and tanh(x) are those of vec-math-avx2.h (shared with the attention kernel).
#include <immintrin.h>

#include <cstddef>
#include <cstdint>

#include "cpu/ops-vec.h"
#include "cpu/vec-math-avx2.h"

namespace {

constexpr float gelu_k1 = 0.7978845608028654f;                  // sqrt(2/pi)
constexpr float gelu_k3 = 0.7978845608028654f * 0.044715f;      // sqrt(2/pi) * 0.044715

// Lanes [0, rem) set (rem in 0..8).
inline __m256i tail_mask(int64_t rem) {
    const __m256i iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)rem), iota);
}

inline __m256 exp_avx2(__m256 x) {
    return vec_math_exp_avx2(x);
}

// x * sigmoid(v) with e = exp(-|v|): sigmoid(v) = 1 / (1 + e) for v >= 0 and e / (1 + e) for
// v < 0, so exp never overflows and tiny results fade into subnormals instead of jumping to 0.
// v has the sign of x for both activations, so x's sign bit picks the numerator. v_lo is the
// rounding error of v (v + v_lo is the exact argument): exp(-|v + v_lo|) = e * (1 -+ v_lo).
inline __m256 x_sigmoid_avx2(__m256 x, __m256 v, __m256 v_lo) {
    const __m256 one = _mm256_set1_ps(1.0f);
    const __m256 sign = _mm256_set1_ps(-0.0f);
    __m256 e = exp_avx2(_mm256_or_ps(v, sign));                         // exp(-|v|)
    e = _mm256_fmadd_ps(e, _mm256_xor_ps(v_lo, _mm256_andnot_ps(x, sign)), e);
    const __m256 num = _mm256_blendv_ps(one, e, x);                     // e where x < 0
    return _mm256_div_ps(_mm256_mul_ps(x, num), _mm256_add_ps(one, e));
}

inline __m256 silu_avx2(__m256 x) {
    return x_sigmoid_avx2(x, x, _mm256_setzero_ps());
}

// x * sigmoid(2u), u = sqrt(2/pi) (x + 0.044715 x^3); see ops-vec-scalar.cpp. The rounding
// errors of x^2 and of the last product are carried (FMA residuals): exp magnifies the
// absolute error of 2u, which reaches ~87 where gelu(x) nears the smallest normal float.
// u is computed from x clamped to [-12, 12] (keeps x^2 finite; beyond, sigmoid(2u) is exactly
// 0 or 1 in float either way); NaN passes the clamp.
inline __m256 gelu_avx2(__m256 x) {
    const __m256 k1 = _mm256_set1_ps(2.0f * gelu_k1), k3 = _mm256_set1_ps(2.0f * gelu_k3);
    const __m256 xc = _mm256_min_ps(_mm256_set1_ps(12.0f), _mm256_max_ps(_mm256_set1_ps(-12.0f), x));
    const __m256 x2 = _mm256_mul_ps(xc, xc);
    const __m256 x2_lo = _mm256_fmsub_ps(xc, xc, x2);
    const __m256 t = _mm256_fmadd_ps(x2, k3, k1);
    const __m256 v = _mm256_mul_ps(xc, t);
    __m256 v_lo = _mm256_fmsub_ps(xc, t, v);
    v_lo = _mm256_fmadd_ps(_mm256_mul_ps(xc, k3), x2_lo, v_lo);
    return x_sigmoid_avx2(x, v, v_lo);
}

inline float hsum_avx2(__m256 v) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

inline float hmax_avx2(__m256 v) {
    __m128 s = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_max_ps(s, _mm_movehl_ps(s, s));
    s = _mm_max_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

// ---- element-wise: one body for full vectors and the masked tail ----

#define OPS_VEC_AVX2_UNARY(NAME, EXPR)                                              \
    void NAME(const float * x, float * y, int64_t n) {                              \
        int64_t i = 0;                                                              \
        for (; i + 8 <= n; i += 8) {                                                \
            const __m256 v = _mm256_loadu_ps(x + i);                                \
            _mm256_storeu_ps(y + i, EXPR);                                          \
        }                                                                           \
        if (i < n) {                                                                \
            const __m256i m = tail_mask(n - i);                                     \
            const __m256 v = _mm256_maskload_ps(x + i, m);                          \
            _mm256_maskstore_ps(y + i, m, EXPR);                                    \
        }                                                                           \
    }

#define OPS_VEC_AVX2_BINARY(NAME, EXPR)                                             \
    void NAME(const float * a, const float * b, float * y, int64_t n) {             \
        int64_t i = 0;                                                              \
        for (; i + 8 <= n; i += 8) {                                                \
            const __m256 va = _mm256_loadu_ps(a + i);                               \
            const __m256 vb = _mm256_loadu_ps(b + i);                               \
            _mm256_storeu_ps(y + i, EXPR);                                          \
        }                                                                           \
        if (i < n) {                                                                \
            const __m256i m = tail_mask(n - i);                                     \
            const __m256 va = _mm256_maskload_ps(a + i, m);                         \
            const __m256 vb = _mm256_maskload_ps(b + i, m);                         \
            _mm256_maskstore_ps(y + i, m, EXPR);                                    \
        }                                                                           \
    }

OPS_VEC_AVX2_BINARY(vec_add_avx2, _mm256_add_ps(va, vb))
OPS_VEC_AVX2_BINARY(vec_mul_avx2, _mm256_mul_ps(va, vb))
OPS_VEC_AVX2_BINARY(vec_div_avx2, _mm256_div_ps(va, vb))
OPS_VEC_AVX2_BINARY(vec_swiglu_avx2, _mm256_mul_ps(silu_avx2(va), vb))
OPS_VEC_AVX2_UNARY(vec_exp_avx2, exp_avx2(v))
OPS_VEC_AVX2_UNARY(vec_silu_avx2, silu_avx2(v))
OPS_VEC_AVX2_UNARY(vec_gelu_avx2, gelu_avx2(v))
OPS_VEC_AVX2_UNARY(vec_tanh_avx2, vec_math_tanh_avx2(v))

void vec_scale_avx2(const float * x, float s, float bias, float * y, int64_t n) {
    const __m256 vs = _mm256_set1_ps(s);
    const __m256 vbias = _mm256_set1_ps(bias);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        _mm256_storeu_ps(y + i, _mm256_fmadd_ps(_mm256_loadu_ps(x + i), vs, vbias));
    }
    if (i < n) {
        const __m256i m = tail_mask(n - i);
        _mm256_maskstore_ps(y + i, m, _mm256_fmadd_ps(_mm256_maskload_ps(x + i, m), vs, vbias));
    }
}

void vec_scale_add_avx2(const float * x, float s, const float * b, float * y, int64_t n) {
    const __m256 vs = _mm256_set1_ps(s);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        _mm256_storeu_ps(y + i, _mm256_fmadd_ps(_mm256_loadu_ps(x + i), vs, _mm256_loadu_ps(b + i)));
    }
    if (i < n) {
        const __m256i m = tail_mask(n - i);
        const __m256 v = _mm256_fmadd_ps(_mm256_maskload_ps(x + i, m), vs, _mm256_maskload_ps(b + i, m));
        _mm256_maskstore_ps(y + i, m, v);
    }
}

// ---- reductions (four accumulators, then single vectors, then the masked tail) ----

float vec_sum_avx2(const float * x, int64_t n) {
    __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
    __m256 s2 = _mm256_setzero_ps(), s3 = _mm256_setzero_ps();
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
        s0 = _mm256_add_ps(s0, _mm256_loadu_ps(x + i));
        s1 = _mm256_add_ps(s1, _mm256_loadu_ps(x + i + 8));
        s2 = _mm256_add_ps(s2, _mm256_loadu_ps(x + i + 16));
        s3 = _mm256_add_ps(s3, _mm256_loadu_ps(x + i + 24));
    }
    for (; i + 8 <= n; i += 8) s0 = _mm256_add_ps(s0, _mm256_loadu_ps(x + i));
    if (i < n) s1 = _mm256_add_ps(s1, _mm256_maskload_ps(x + i, tail_mask(n - i)));
    return hsum_avx2(_mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3)));
}

float vec_sum_sq_avx2(const float * x, int64_t n) {
    __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
    __m256 s2 = _mm256_setzero_ps(), s3 = _mm256_setzero_ps();
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
        const __m256 v0 = _mm256_loadu_ps(x + i), v1 = _mm256_loadu_ps(x + i + 8);
        const __m256 v2 = _mm256_loadu_ps(x + i + 16), v3 = _mm256_loadu_ps(x + i + 24);
        s0 = _mm256_fmadd_ps(v0, v0, s0);
        s1 = _mm256_fmadd_ps(v1, v1, s1);
        s2 = _mm256_fmadd_ps(v2, v2, s2);
        s3 = _mm256_fmadd_ps(v3, v3, s3);
    }
    for (; i + 8 <= n; i += 8) {
        const __m256 v = _mm256_loadu_ps(x + i);
        s0 = _mm256_fmadd_ps(v, v, s0);
    }
    if (i < n) {
        const __m256 v = _mm256_maskload_ps(x + i, tail_mask(n - i));
        s1 = _mm256_fmadd_ps(v, v, s1);
    }
    return hsum_avx2(_mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3)));
}

// max_ps(v, acc) returns acc when v is NaN, so NaN elements are ignored.
float vec_max_avx2(const float * x, int64_t n) {
    const __m256 ninf = _mm256_set1_ps(-__builtin_inff());
    __m256 m0 = ninf, m1 = ninf, m2 = ninf, m3 = ninf;
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
        m0 = _mm256_max_ps(_mm256_loadu_ps(x + i), m0);
        m1 = _mm256_max_ps(_mm256_loadu_ps(x + i + 8), m1);
        m2 = _mm256_max_ps(_mm256_loadu_ps(x + i + 16), m2);
        m3 = _mm256_max_ps(_mm256_loadu_ps(x + i + 24), m3);
    }
    for (; i + 8 <= n; i += 8) m0 = _mm256_max_ps(_mm256_loadu_ps(x + i), m0);
    if (i < n) {
        const __m256i m = tail_mask(n - i);
        const __m256 v = _mm256_blendv_ps(ninf, _mm256_maskload_ps(x + i, m), _mm256_castsi256_ps(m));
        m1 = _mm256_max_ps(v, m1);
    }
    return hmax_avx2(_mm256_max_ps(_mm256_max_ps(m0, m1), _mm256_max_ps(m2, m3)));
}

int64_t vec_argmax_avx2(const float * x, int64_t n) {
    const float m = vec_max_avx2(x, n);
    const __m256 vm = _mm256_set1_ps(m);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const int bits = _mm256_movemask_ps(_mm256_cmp_ps(_mm256_loadu_ps(x + i), vm, _CMP_EQ_OQ));
        if (bits != 0) return i + __builtin_ctz((unsigned)bits);
    }
    for (; i < n; ++i) {
        if (x[i] == m) return i;
    }
    return 0;  // n == 0 or every element NaN
}

float vec_exp_sum_avx2(const float * x, float mx, float * y, int64_t n) {
    const __m256 vm = _mm256_set1_ps(mx);
    __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m256 e0 = exp_avx2(_mm256_sub_ps(_mm256_loadu_ps(x + i), vm));
        const __m256 e1 = exp_avx2(_mm256_sub_ps(_mm256_loadu_ps(x + i + 8), vm));
        _mm256_storeu_ps(y + i, e0);
        _mm256_storeu_ps(y + i + 8, e1);
        s0 = _mm256_add_ps(s0, e0);
        s1 = _mm256_add_ps(s1, e1);
    }
    for (; i + 8 <= n; i += 8) {
        const __m256 e = exp_avx2(_mm256_sub_ps(_mm256_loadu_ps(x + i), vm));
        _mm256_storeu_ps(y + i, e);
        s0 = _mm256_add_ps(s0, e);
    }
    if (i < n) {
        const __m256i m = tail_mask(n - i);
        const __m256 e = _mm256_and_ps(exp_avx2(_mm256_sub_ps(_mm256_maskload_ps(x + i, m), vm)),
                                       _mm256_castsi256_ps(m));
        _mm256_maskstore_ps(y + i, m, e);
        s1 = _mm256_add_ps(s1, e);
    }
    return hsum_avx2(_mm256_add_ps(s0, s1));
}

// Adjacent pairs: C = (c0, c0, c1, c1, ..), S = (s0, s0, ..) from the interleaved cache, and
// fmaddsub gives x*C -+ swap(x)*S: even lanes x0 c - x1 s, odd lanes x1 c + x0 s.
// (Full blocks use plain loads and stores: masked stores are slow on some CPUs.)
inline __m256 rope_norm_block_avx2(__m256 v, __m256 t) {
    const __m256 swapped = _mm256_permute_ps(v, 0xB1);
    return _mm256_fmaddsub_ps(v, _mm256_moveldup_ps(t), _mm256_mul_ps(swapped, _mm256_movehdup_ps(t)));
}

void vec_rope_norm_avx2(const float * x, const float * cs, float * y, int64_t n_dims) {
    int64_t i = 0;
    for (; i + 8 <= n_dims; i += 8) {
        _mm256_storeu_ps(y + i, rope_norm_block_avx2(_mm256_loadu_ps(x + i), _mm256_loadu_ps(cs + i)));
    }
    if (i < n_dims) {
        const __m256i m = tail_mask(n_dims - i);
        _mm256_maskstore_ps(y + i, m, rope_norm_block_avx2(_mm256_maskload_ps(x + i, m), _mm256_maskload_ps(cs + i, m)));
    }
}

void vec_rope_neox_avx2(const float * x, const float * cs, float * y, int64_t n_dims) {
    const int64_t h = n_dims / 2;
    int64_t i = 0;
    for (; i + 8 <= h; i += 8) {
        const __m256 x0 = _mm256_loadu_ps(x + i), x1 = _mm256_loadu_ps(x + h + i);
        const __m256 c = _mm256_loadu_ps(cs + i), s = _mm256_loadu_ps(cs + h + i);
        _mm256_storeu_ps(y + i, _mm256_fmsub_ps(x0, c, _mm256_mul_ps(x1, s)));
        _mm256_storeu_ps(y + h + i, _mm256_fmadd_ps(x0, s, _mm256_mul_ps(x1, c)));
    }
    if (i < h) {
        const __m256i m = tail_mask(h - i);
        const __m256 x0 = _mm256_maskload_ps(x + i, m), x1 = _mm256_maskload_ps(x + h + i, m);
        const __m256 c = _mm256_maskload_ps(cs + i, m), s = _mm256_maskload_ps(cs + h + i, m);
        _mm256_maskstore_ps(y + i, m, _mm256_fmsub_ps(x0, c, _mm256_mul_ps(x1, s)));
        _mm256_maskstore_ps(y + h + i, m, _mm256_fmadd_ps(x0, s, _mm256_mul_ps(x1, c)));
    }
}

const ggml_cpu_vec_fns vec_fns_avx2 = {
    "avx2",
    vec_add_avx2,
    vec_mul_avx2,
    vec_div_avx2,
    vec_scale_avx2,
    vec_scale_add_avx2,
    vec_sum_avx2,
    vec_sum_sq_avx2,
    vec_max_avx2,
    vec_argmax_avx2,
    vec_exp_avx2,
    vec_exp_sum_avx2,
    vec_silu_avx2,
    vec_swiglu_avx2,
    vec_gelu_avx2,
    vec_tanh_avx2,
    vec_rope_norm_avx2,
    vec_rope_neox_avx2,
};

}  // namespace

const ggml_cpu_vec_fns & ggml_cpu_vec_fns_avx2() {
    return vec_fns_avx2;
}
