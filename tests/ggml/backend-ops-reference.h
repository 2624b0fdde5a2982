// tests/ggml/backend-ops-reference.h — double-precision reference of every op, written from
// the semantics documented in ggml/include/ggml/ggml.h (never from the kernels).
//
// Usage:
//   bops::dt y = bops::ref_mul_mat(a, b);   // a, b read back from the backend (read_tensor)
//
// Inputs are the stored values as doubles (F16/BF16 decoded exactly), so the reference sees
// what the kernel saw; every result is exact in double or computed with double rounding only.
#pragma once

#include "backend-ops-values.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <numbers>

namespace bops {

// Calls fn(i0, i1, i2, i3) over every index of shape ne, row-major.
template <typename F> void for_each_index(const shape4 & ne, F && fn) {
    for (int64_t i3 = 0; i3 < ne[3]; ++i3)
        for (int64_t i2 = 0; i2 < ne[2]; ++i2)
            for (int64_t i1 = 0; i1 < ne[1]; ++i1)
                for (int64_t i0 = 0; i0 < ne[0]; ++i0) fn(i0, i1, i2, i3);
}

// Same elements, row-major order, new shape (cpy, cont, reshape).
inline dt ref_reorder(const dt & a, const shape4 & ne) {
    dt out(ne);
    GGML_ASSERT(out.size() == a.size());
    out.v = a.v;
    return out;
}

// dst[:, i, j, k] = a[:, idx[i, j, k], j, k]; idx is [n, ne2, ne3].
inline dt ref_get_rows(const dt & a, const dt & idx) {
    dt out({a.ne[0], idx.ne[0], idx.ne[1], idx.ne[2]});
    for_each_index(out.ne, [&](int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
        out.at(i0, i1, i2, i3) = a.at(i0, static_cast<int64_t>(idx.at(i1, i2, i3)), i2, i3);
    });
    return out;
}

// a[:, c[i, j % c1, k % c2], j, k] = b[:, i, j, k]; c is [n, c1, c2].
inline dt ref_set_rows(dt a, const dt & b, const dt & c) {
    for_each_index(b.ne, [&](int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
        const int64_t row = static_cast<int64_t>(c.at(i1, i2 % c.ne[1], i3 % c.ne[2]));
        a.at(i0, row, i2, i3) = b.at(i0, i1, i2, i3);
    });
    return a;
}

// Element-wise fn(a, b) with b repeated to a's shape.
inline dt ref_binary(const dt & a, const dt & b, const std::function<double(double, double)> & fn) {
    dt out(a.ne);
    for_each_index(a.ne, [&](int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
        out.at(i0, i1, i2, i3) =
            fn(a.at(i0, i1, i2, i3), b.at(i0 % b.ne[0], i1 % b.ne[1], i2 % b.ne[2], i3 % b.ne[3]));
    });
    return out;
}

inline dt ref_unary(const dt & a, const std::function<double(double)> & fn) {
    dt out(a.ne);
    for (size_t i = 0; i < a.v.size(); ++i) out.v[i] = fn(a.v[i]);
    return out;
}

inline double ref_silu(double x) { return x / (1.0 + std::exp(-x)); }
inline double ref_gelu(double x) {
    const double c = std::sqrt(2.0 / std::numbers::pi);
    return 0.5 * x * (1.0 + std::tanh(c * (x + 0.044715 * x * x * x)));
}

// Over each row (dim 0): rms_norm x / sqrt(mean(x^2) + eps); norm (x - mean) / sqrt(var + eps).
inline dt ref_norm(const dt & a, double eps, bool rms) {
    dt out(a.ne);
    const int64_t n = a.ne[0];
    for (int64_t r = 0; r < a.size() / n; ++r) {
        const double * x = a.v.data() + r * n;
        double mean = 0.0;
        if (!rms) {
            for (int64_t i = 0; i < n; ++i) mean += x[i];
            mean /= static_cast<double>(n);
        }
        double sq = 0.0;
        for (int64_t i = 0; i < n; ++i) sq += (x[i] - mean) * (x[i] - mean);
        const double inv = 1.0 / std::sqrt(sq / static_cast<double>(n) + eps);
        for (int64_t i = 0; i < n; ++i) out.v[r * n + i] = (x[i] - mean) * inv;
    }
    return out;
}

// dst[m, n, i2, i3] = sum_k a[k, m, i2 / (ne12/ne2), i3 / (ne13/ne3)] * b[k, n, i2, i3].
inline dt ref_mul_mat(const dt & a, const dt & b) {
    const int64_t K = a.ne[0];
    GGML_ASSERT(b.ne[0] == K && b.ne[2] % a.ne[2] == 0 && b.ne[3] % a.ne[3] == 0);
    const int64_t r2 = b.ne[2] / a.ne[2], r3 = b.ne[3] / a.ne[3];
    dt out({a.ne[1], b.ne[1], b.ne[2], b.ne[3]});
    for_each_index(out.ne, [&](int64_t m, int64_t n, int64_t i2, int64_t i3) {
        const double * ar = &a.v[a.idx(0, m, i2 / r2, i3 / r3)];
        const double * br = &b.v[b.idx(0, n, i2, i3)];
        double sum = 0.0;
        for (int64_t k = 0; k < K; ++k) sum += ar[k] * br[k];
        out.at(m, n, i2, i3) = sum;
    });
    return out;
}

// softmax(a*scale + mask) over dim 0; mask (nullptr: none) is [ne0, >= ne1, m2, m3] and
// repeats over dims 2 and 3. A row whose every element is -inf gives zeros.
inline dt ref_soft_max(const dt & a, const dt * mask, double scale) {
    dt out(a.ne);
    const int64_t n = a.ne[0];
    std::vector<double> row(static_cast<size_t>(n));
    for (int64_t i3 = 0; i3 < a.ne[3]; ++i3)
        for (int64_t i2 = 0; i2 < a.ne[2]; ++i2)
            for (int64_t i1 = 0; i1 < a.ne[1]; ++i1) {
                double mx = -INFINITY;
                for (int64_t i0 = 0; i0 < n; ++i0) {
                    double v = a.at(i0, i1, i2, i3) * scale;
                    if (mask) v += mask->at(i0, i1, i2 % mask->ne[2], i3 % mask->ne[3]);
                    row[i0] = v;
                    mx = std::max(mx, v);
                }
                if (mx == -INFINITY) continue;  // fully masked: zeros
                double sum = 0.0;
                for (int64_t i0 = 0; i0 < n; ++i0) sum += (row[i0] = std::exp(row[i0] - mx));
                for (int64_t i0 = 0; i0 < n; ++i0) out.at(i0, i1, i2, i3) = row[i0] / sum;
            }
    return out;
}

inline dt ref_concat(const dt & a, const dt & b, int dim) {
    shape4 ne = a.ne;
    ne[dim] += b.ne[dim];
    dt out(ne);
    for_each_index(ne, [&](int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
        int64_t i[4] = {i0, i1, i2, i3};
        if (i[dim] < a.ne[dim]) {
            out.at(i0, i1, i2, i3) = a.at(i0, i1, i2, i3);
        } else {
            i[dim] -= a.ne[dim];
            out.at(i0, i1, i2, i3) = b.at(i[0], i[1], i[2], i[3]);
        }
    });
    return out;
}

// Index of the largest element of each row (the first one on ties) → [ne1, ne2, ne3].
inline dt ref_argmax(const dt & a) {
    dt out({a.ne[1], a.ne[2], a.ne[3], 1});
    for (int64_t r = 0; r < out.size(); ++r) {
        int64_t best = 0;
        for (int64_t i = 1; i < a.ne[0]; ++i)
            if (a.v[r * a.ne[0] + i] > a.v[r * a.ne[0] + best]) best = i;
        out.v[r] = static_cast<double>(best);
    }
    return out;
}

// Sum of each row → [1, ne1, ne2, ne3].
inline dt ref_sum_rows(const dt & a) {
    dt out({1, a.ne[1], a.ne[2], a.ne[3]});
    for (int64_t r = 0; r < out.size(); ++r) {
        double s = 0.0;
        for (int64_t i = 0; i < a.ne[0]; ++i) s += a.v[r * a.ne[0] + i];
        out.v[r] = s;
    }
    return out;
}

// Indices of the k largest elements of each row, largest first, the lower index first among
// equal values, NaN after every number → [k, ne1, ne2, ne3].
inline dt ref_top_k(const dt & a, int64_t k) {
    dt out({k, a.ne[1], a.ne[2], a.ne[3]});
    const int64_t n = a.ne[0];
    std::vector<int64_t> idx(static_cast<size_t>(n));
    for (int64_t r = 0; r < out.size() / k; ++r) {
        const double * x = a.v.data() + r * n;
        for (int64_t i = 0; i < n; ++i) idx[static_cast<size_t>(i)] = i;
        std::stable_sort(idx.begin(), idx.end(), [x](int64_t i, int64_t j) {
            if (std::isnan(x[i]) || std::isnan(x[j])) return !std::isnan(x[i]);
            return x[i] > x[j];
        });
        for (int64_t i = 0; i < k; ++i) out.v[r * k + i] = static_cast<double>(idx[static_cast<size_t>(i)]);
    }
    return out;
}

}  // namespace bops
