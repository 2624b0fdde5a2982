// ggml/cpu/ops-vec-avx512.cpp — AVX-512 row functions (16 floats per vector).
//
// Compiled with the AVX-512 flags and only reached after a CPUID check, so: nothing but the
// exported ggml_cpu_vec_fns_avx512 has external linkage, and no std templates are used (see
// ops-vec.h). Tails use mask registers: every element goes through the same vector code and
// nothing past n is touched.
//
// exp(x) and tanh(x) are those of vec-math-avx512.h (shared with the attention kernel).
#include "cpu/vec-math-avx512.h"

#include <cstddef>
#include <cstdint>

#include "cpu/ops-vec.h"

namespace {

constexpr float gelu_k1 = 0.7978845608028654f;              // sqrt(2/pi)
constexpr float gelu_k3 = 0.7978845608028654f * 0.044715f;  // sqrt(2/pi) * 0.044715

// Lanes [0, rem) set (rem in 0..16).
inline __mmask16 tail_mask(int64_t rem) {
    return (__mmask16)((1u << rem) - 1u);
}

inline __m512 exp_avx512(__m512 x) {
    return vec_math_exp_avx512(x);
}

// x * sigmoid(v) with e = exp(-|v|): sigmoid(v) = 1 / (1 + e) for v >= 0 and e / (1 + e) for
// v < 0, so exp never overflows and tiny results fade into subnormals instead of jumping to 0.
// v has the sign of x for both activations. v_lo is the rounding error of v (v + v_lo is the
// exact argument): exp(-|v + v_lo|) = e * (1 -+ v_lo).
inline __m512 x_sigmoid_avx512(__m512 x, __m512 v, __m512 v_lo) {
    const __m512 one = _mm512_set1_ps(1.0f);
    const __m512i sign = _mm512_set1_epi32((int)0x80000000u);
    const __mmask16 neg = _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_LT_OQ);
    __m512 e = exp_avx512(_mm512_castsi512_ps(_mm512_or_si512(_mm512_castps_si512(v), sign)));  // exp(-|v|)
    const __m512 c = _mm512_mask_blend_ps(neg, _mm512_sub_ps(_mm512_setzero_ps(), v_lo), v_lo);
    e = _mm512_fmadd_ps(e, c, e);
    const __m512 num = _mm512_mask_blend_ps(neg, one, e);
    return _mm512_div_ps(_mm512_mul_ps(x, num), _mm512_add_ps(one, e));
}

inline __m512 silu_avx512(__m512 x) {
    return x_sigmoid_avx512(x, x, _mm512_setzero_ps());
}

// x * sigmoid(2u), u = sqrt(2/pi) (x + 0.044715 x^3); see ops-vec-scalar.cpp and the note on
// the carried rounding errors in ops-vec-avx2.cpp.
inline __m512 gelu_avx512(__m512 x) {
    const __m512 k1 = _mm512_set1_ps(2.0f * gelu_k1), k3 = _mm512_set1_ps(2.0f * gelu_k3);
    const __m512 xc = _mm512_min_ps(_mm512_set1_ps(12.0f), _mm512_max_ps(_mm512_set1_ps(-12.0f), x));
    const __m512 x2 = _mm512_mul_ps(xc, xc);
    const __m512 x2_lo = _mm512_fmsub_ps(xc, xc, x2);
    const __m512 t = _mm512_fmadd_ps(x2, k3, k1);
    const __m512 v = _mm512_mul_ps(xc, t);
    __m512 v_lo = _mm512_fmsub_ps(xc, t, v);
    v_lo = _mm512_fmadd_ps(_mm512_mul_ps(xc, k3), x2_lo, v_lo);
    return x_sigmoid_avx512(x, v, v_lo);
}

// ---- element-wise: one body for full vectors and the masked tail ----

#define OPS_VEC_AVX512_UNARY(NAME, EXPR)                                            \
    void NAME(const float * x, float * y, int64_t n) {                              \
        int64_t i = 0;                                                              \
        for (; i + 16 <= n; i += 16) {                                              \
            const __m512 v = _mm512_loadu_ps(x + i);                                \
            _mm512_storeu_ps(y + i, EXPR);                                          \
        }                                                                           \
        if (i < n) {                                                                \
            const __mmask16 m = tail_mask(n - i);                                   \
            const __m512 v = _mm512_maskz_loadu_ps(m, x + i);                       \
            _mm512_mask_storeu_ps(y + i, m, EXPR);                                  \
        }                                                                           \
    }

#define OPS_VEC_AVX512_BINARY(NAME, EXPR)                                           \
    void NAME(const float * a, const float * b, float * y, int64_t n) {             \
        int64_t i = 0;                                                              \
        for (; i + 16 <= n; i += 16) {                                              \
            const __m512 va = _mm512_loadu_ps(a + i);                               \
            const __m512 vb = _mm512_loadu_ps(b + i);                               \
            _mm512_storeu_ps(y + i, EXPR);                                          \
        }                                                                           \
        if (i < n) {                                                                \
            const __mmask16 m = tail_mask(n - i);                                   \
            const __m512 va = _mm512_maskz_loadu_ps(m, a + i);                      \
            const __m512 vb = _mm512_maskz_loadu_ps(m, b + i);                      \
            _mm512_mask_storeu_ps(y + i, m, EXPR);                                  \
        }                                                                           \
    }

OPS_VEC_AVX512_BINARY(vec_add_avx512, _mm512_add_ps(va, vb))
OPS_VEC_AVX512_BINARY(vec_mul_avx512, _mm512_mul_ps(va, vb))
OPS_VEC_AVX512_BINARY(vec_div_avx512, _mm512_div_ps(va, vb))
OPS_VEC_AVX512_BINARY(vec_swiglu_avx512, _mm512_mul_ps(silu_avx512(va), vb))
OPS_VEC_AVX512_UNARY(vec_exp_avx512, exp_avx512(v))
OPS_VEC_AVX512_UNARY(vec_silu_avx512, silu_avx512(v))
OPS_VEC_AVX512_UNARY(vec_gelu_avx512, gelu_avx512(v))
OPS_VEC_AVX512_UNARY(vec_tanh_avx512, vec_math_tanh_avx512(v))

void vec_scale_avx512(const float * x, float s, float bias, float * y, int64_t n) {
    const __m512 vs = _mm512_set1_ps(s);
    const __m512 vbias = _mm512_set1_ps(bias);
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        _mm512_storeu_ps(y + i, _mm512_fmadd_ps(_mm512_loadu_ps(x + i), vs, vbias));
    }
    if (i < n) {
        const __mmask16 m = tail_mask(n - i);
        _mm512_mask_storeu_ps(y + i, m, _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, x + i), vs, vbias));
    }
}

void vec_scale_add_avx512(const float * x, float s, const float * b, float * y, int64_t n) {
    const __m512 vs = _mm512_set1_ps(s);
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        _mm512_storeu_ps(y + i, _mm512_fmadd_ps(_mm512_loadu_ps(x + i), vs, _mm512_loadu_ps(b + i)));
    }
    if (i < n) {
        const __mmask16 m = tail_mask(n - i);
        const __m512 v = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, x + i), vs, _mm512_maskz_loadu_ps(m, b + i));
        _mm512_mask_storeu_ps(y + i, m, v);
    }
}

// ---- reductions (four accumulators, then single vectors, then the masked tail) ----

float vec_sum_avx512(const float * x, int64_t n) {
    __m512 s0 = _mm512_setzero_ps(), s1 = _mm512_setzero_ps();
    __m512 s2 = _mm512_setzero_ps(), s3 = _mm512_setzero_ps();
    int64_t i = 0;
    for (; i + 64 <= n; i += 64) {
        s0 = _mm512_add_ps(s0, _mm512_loadu_ps(x + i));
        s1 = _mm512_add_ps(s1, _mm512_loadu_ps(x + i + 16));
        s2 = _mm512_add_ps(s2, _mm512_loadu_ps(x + i + 32));
        s3 = _mm512_add_ps(s3, _mm512_loadu_ps(x + i + 48));
    }
    for (; i + 16 <= n; i += 16) s0 = _mm512_add_ps(s0, _mm512_loadu_ps(x + i));
    if (i < n) s1 = _mm512_add_ps(s1, _mm512_maskz_loadu_ps(tail_mask(n - i), x + i));
    return _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(s0, s1), _mm512_add_ps(s2, s3)));
}

float vec_sum_sq_avx512(const float * x, int64_t n) {
    __m512 s0 = _mm512_setzero_ps(), s1 = _mm512_setzero_ps();
    __m512 s2 = _mm512_setzero_ps(), s3 = _mm512_setzero_ps();
    int64_t i = 0;
    for (; i + 64 <= n; i += 64) {
        const __m512 v0 = _mm512_loadu_ps(x + i), v1 = _mm512_loadu_ps(x + i + 16);
        const __m512 v2 = _mm512_loadu_ps(x + i + 32), v3 = _mm512_loadu_ps(x + i + 48);
        s0 = _mm512_fmadd_ps(v0, v0, s0);
        s1 = _mm512_fmadd_ps(v1, v1, s1);
        s2 = _mm512_fmadd_ps(v2, v2, s2);
        s3 = _mm512_fmadd_ps(v3, v3, s3);
    }
    for (; i + 16 <= n; i += 16) {
        const __m512 v = _mm512_loadu_ps(x + i);
        s0 = _mm512_fmadd_ps(v, v, s0);
    }
    if (i < n) {
        const __m512 v = _mm512_maskz_loadu_ps(tail_mask(n - i), x + i);
        s1 = _mm512_fmadd_ps(v, v, s1);
    }
    return _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(s0, s1), _mm512_add_ps(s2, s3)));
}

// max_ps(v, acc) returns acc when v is NaN, so NaN elements are ignored.
float vec_max_avx512(const float * x, int64_t n) {
    const __m512 ninf = _mm512_set1_ps(-__builtin_inff());
    __m512 m0 = ninf, m1 = ninf, m2 = ninf, m3 = ninf;
    int64_t i = 0;
    for (; i + 64 <= n; i += 64) {
        m0 = _mm512_max_ps(_mm512_loadu_ps(x + i), m0);
        m1 = _mm512_max_ps(_mm512_loadu_ps(x + i + 16), m1);
        m2 = _mm512_max_ps(_mm512_loadu_ps(x + i + 32), m2);
        m3 = _mm512_max_ps(_mm512_loadu_ps(x + i + 48), m3);
    }
    for (; i + 16 <= n; i += 16) m0 = _mm512_max_ps(_mm512_loadu_ps(x + i), m0);
    if (i < n) m1 = _mm512_max_ps(_mm512_mask_loadu_ps(ninf, tail_mask(n - i), x + i), m1);
    return _mm512_reduce_max_ps(_mm512_max_ps(_mm512_max_ps(m0, m1), _mm512_max_ps(m2, m3)));
}

int64_t vec_argmax_avx512(const float * x, int64_t n) {
    const float m = vec_max_avx512(x, n);
    const __m512 vm = _mm512_set1_ps(m);
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const unsigned bits = _mm512_cmp_ps_mask(_mm512_loadu_ps(x + i), vm, _CMP_EQ_OQ);
        if (bits != 0) return i + __builtin_ctz(bits);
    }
    if (i < n) {
        const __mmask16 tm = tail_mask(n - i);
        const unsigned bits = _mm512_mask_cmp_ps_mask(tm, _mm512_maskz_loadu_ps(tm, x + i), vm, _CMP_EQ_OQ);
        if (bits != 0) return i + __builtin_ctz(bits);
    }
    return 0;  // n == 0 or every element NaN
}

float vec_exp_sum_avx512(const float * x, float mx, float * y, int64_t n) {
    const __m512 vm = _mm512_set1_ps(mx);
    __m512 s0 = _mm512_setzero_ps(), s1 = _mm512_setzero_ps();
    int64_t i = 0;
    for (; i + 32 <= n; i += 32) {
        const __m512 e0 = exp_avx512(_mm512_sub_ps(_mm512_loadu_ps(x + i), vm));
        const __m512 e1 = exp_avx512(_mm512_sub_ps(_mm512_loadu_ps(x + i + 16), vm));
        _mm512_storeu_ps(y + i, e0);
        _mm512_storeu_ps(y + i + 16, e1);
        s0 = _mm512_add_ps(s0, e0);
        s1 = _mm512_add_ps(s1, e1);
    }
    for (; i + 16 <= n; i += 16) {
        const __m512 e = exp_avx512(_mm512_sub_ps(_mm512_loadu_ps(x + i), vm));
        _mm512_storeu_ps(y + i, e);
        s0 = _mm512_add_ps(s0, e);
    }
    if (i < n) {
        const __mmask16 m = tail_mask(n - i);
        const __m512 e = _mm512_maskz_mov_ps(m, exp_avx512(_mm512_sub_ps(_mm512_maskz_loadu_ps(m, x + i), vm)));
        _mm512_mask_storeu_ps(y + i, m, e);
        s1 = _mm512_add_ps(s1, e);
    }
    return _mm512_reduce_add_ps(_mm512_add_ps(s0, s1));
}

// Adjacent pairs: C = (c0, c0, c1, c1, ..), S = (s0, s0, ..) from the interleaved cache, and
// fmaddsub gives x*C -+ swap(x)*S: even lanes x0 c - x1 s, odd lanes x1 c + x0 s.
void vec_rope_norm_avx512(const float * x, const float * cs, float * y, int64_t n_dims) {
    for (int64_t i = 0; i < n_dims; i += 16) {
        const __mmask16 m = n_dims - i >= 16 ? (__mmask16)0xFFFF : tail_mask(n_dims - i);
        const __m512 v = _mm512_maskz_loadu_ps(m, x + i);
        const __m512 t = _mm512_maskz_loadu_ps(m, cs + i);
        const __m512 swapped = _mm512_permute_ps(v, 0xB1);
        const __m512 r = _mm512_fmaddsub_ps(v, _mm512_moveldup_ps(t), _mm512_mul_ps(swapped, _mm512_movehdup_ps(t)));
        _mm512_mask_storeu_ps(y + i, m, r);
    }
}

void vec_rope_neox_avx512(const float * x, const float * cs, float * y, int64_t n_dims) {
    const int64_t h = n_dims / 2;
    for (int64_t i = 0; i < h; i += 16) {
        const __mmask16 m = h - i >= 16 ? (__mmask16)0xFFFF : tail_mask(h - i);
        const __m512 x0 = _mm512_maskz_loadu_ps(m, x + i), x1 = _mm512_maskz_loadu_ps(m, x + h + i);
        const __m512 c = _mm512_maskz_loadu_ps(m, cs + i), s = _mm512_maskz_loadu_ps(m, cs + h + i);
        _mm512_mask_storeu_ps(y + i, m, _mm512_fmsub_ps(x0, c, _mm512_mul_ps(x1, s)));
        _mm512_mask_storeu_ps(y + h + i, m, _mm512_fmadd_ps(x0, s, _mm512_mul_ps(x1, c)));
    }
}

const ggml_cpu_vec_fns vec_fns_avx512 = {
    "avx512",
    vec_add_avx512,
    vec_mul_avx512,
    vec_div_avx512,
    vec_scale_avx512,
    vec_scale_add_avx512,
    vec_sum_avx512,
    vec_sum_sq_avx512,
    vec_max_avx512,
    vec_argmax_avx512,
    vec_exp_avx512,
    vec_exp_sum_avx512,
    vec_silu_avx512,
    vec_swiglu_avx512,
    vec_gelu_avx512,
    vec_tanh_avx512,
    vec_rope_norm_avx512,
    vec_rope_neox_avx512,
};

}  // namespace

const ggml_cpu_vec_fns & ggml_cpu_vec_fns_avx512() {
    return vec_fns_avx512;
}
