// ggml/cpu/ops-vec-scalar.cpp — the scalar (reference) row functions and the path selector.
//
// The scalar path is what the SIMD paths are tested against, so it favours accuracy: sums
// accumulate in double and exp / silu / gelu are evaluated in double with the C library.
//
// GELU (tanh approximation): with u = sqrt(2/pi) * (x + 0.044715 x^3),
//   0.5 x (1 + tanh(u)) = x * (1 + tanh(u)) / 2 = x * sigmoid(2u) = x / (1 + exp(-2u)),
// using 1 + tanh(u) = 2 / (1 + exp(-2u)). The last form has no cancellation for negative x
// (where 1 + tanh(u) -> 0), so its relative error stays small everywhere; every path uses it.
#include "cpu/ops-vec.h"

#include "ggml/cpu.h"

#include <cmath>
#include <limits>

namespace {

void vec_add_scalar(const float * a, const float * b, float * y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = a[i] + b[i];
}

void vec_mul_scalar(const float * a, const float * b, float * y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = a[i] * b[i];
}

void vec_div_scalar(const float * a, const float * b, float * y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = a[i] / b[i];
}

void vec_scale_scalar(const float * x, float s, float bias, float * y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = x[i] * s + bias;
}

void vec_scale_add_scalar(const float * x, float s, const float * m, float * y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = x[i] * s + m[i];
}

float vec_sum_scalar(const float * x, int64_t n) {
    double s = 0.0;
    for (int64_t i = 0; i < n; ++i) s += x[i];
    return (float)s;
}

float vec_sum_sq_scalar(const float * x, int64_t n) {
    double s = 0.0;
    for (int64_t i = 0; i < n; ++i) s += (double)x[i] * x[i];
    return (float)s;
}

float vec_max_scalar(const float * x, int64_t n) {
    float m = -std::numeric_limits<float>::infinity();
    for (int64_t i = 0; i < n; ++i) {
        if (x[i] > m) m = x[i];  // false for NaN: ignored
    }
    return m;
}

int64_t vec_argmax_scalar(const float * x, int64_t n) {
    int64_t best = -1;
    float m = 0.0f;
    for (int64_t i = 0; i < n; ++i) {
        if (std::isnan(x[i])) continue;
        if (best < 0 || x[i] > m) {
            m = x[i];
            best = i;
        }
    }
    return best < 0 ? 0 : best;
}

void vec_exp_scalar(const float * x, float * y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = (float)std::exp((double)x[i]);
}

float vec_exp_sum_scalar(const float * x, float m, float * y, int64_t n) {
    double s = 0.0;
    for (int64_t i = 0; i < n; ++i) {
        y[i] = (float)std::exp((double)x[i] - (double)m);
        s += y[i];
    }
    return (float)s;
}

double silu_f64(double x) {
    return x / (1.0 + std::exp(-x));
}

void vec_silu_scalar(const float * x, float * y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = (float)silu_f64(x[i]);
}

void vec_swiglu_scalar(const float * a, const float * b, float * y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = (float)(silu_f64(a[i]) * (double)b[i]);
}

void vec_gelu_scalar(const float * x, float * y, int64_t n) {
    const double k = std::sqrt(2.0 / M_PI);
    for (int64_t i = 0; i < n; ++i) {
        const double v = x[i];
        const double u = k * (v + 0.044715 * v * v * v);
        y[i] = (float)(v / (1.0 + std::exp(-2.0 * u)));
    }
}

void vec_tanh_scalar(const float * x, float * y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = (float)std::tanh((double)x[i]);
}

void vec_rope_norm_scalar(const float * x, const float * cs, float * y, int64_t n_dims) {
    for (int64_t i = 0; i + 1 < n_dims; i += 2) {
        const float x0 = x[i], x1 = x[i + 1], c = cs[i], s = cs[i + 1];
        y[i] = x0 * c - x1 * s;
        y[i + 1] = x0 * s + x1 * c;
    }
}

void vec_rope_neox_scalar(const float * x, const float * cs, float * y, int64_t n_dims) {
    const int64_t h = n_dims / 2;
    for (int64_t i = 0; i < h; ++i) {
        const float x0 = x[i], x1 = x[i + h], c = cs[i], s = cs[i + h];
        y[i] = x0 * c - x1 * s;
        y[i + h] = x0 * s + x1 * c;
    }
}

const ggml_cpu_vec_fns vec_fns_scalar = {
    "scalar",
    vec_add_scalar,
    vec_mul_scalar,
    vec_div_scalar,
    vec_scale_scalar,
    vec_scale_add_scalar,
    vec_sum_scalar,
    vec_sum_sq_scalar,
    vec_max_scalar,
    vec_argmax_scalar,
    vec_exp_scalar,
    vec_exp_sum_scalar,
    vec_silu_scalar,
    vec_swiglu_scalar,
    vec_gelu_scalar,
    vec_tanh_scalar,
    vec_rope_norm_scalar,
    vec_rope_neox_scalar,
};

}  // namespace

const ggml_cpu_vec_fns & ggml_cpu_vec_fns_scalar() {
    return vec_fns_scalar;
}

const ggml_cpu_vec_fns & ggml_cpu_vec_for(ggml_cpu_isa isa) {
    switch (isa) {
        case ggml_cpu_isa::amx:
        case ggml_cpu_isa::avx512:
            return ggml_cpu_vec_fns_avx512();
        case ggml_cpu_isa::avx2:
            return ggml_cpu_vec_fns_avx2();
        case ggml_cpu_isa::best: {
            const ggml_cpu_isa best = ggml_cpu_detect_features().best_isa();
            return best == ggml_cpu_isa::best ? vec_fns_scalar : ggml_cpu_vec_for(best);
        }
        case ggml_cpu_isa::scalar:
            break;
    }
    return vec_fns_scalar;
}
