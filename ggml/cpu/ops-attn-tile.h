// ggml/cpu/ops-attn-tile.h — ggml_cpu_attn_fns::group_tile written once for any SIMD width
// (internal; see ops-attn.h for the data it works on).
//
// Usage (in ops-attn-avx2.cpp / ops-attn-avx512.cpp, inside their anonymous namespace, after a
// traits struct of their own):
//   #include "cpu/ops-attn-tile.h"
//   static void attn_group_tile_avx512(const ggml_cpu_attn_group & g) { attn_tile_group<vt512>(g); }
// Every instantiation takes the file's traits type, which has internal linkage, so each file
// gets its own copy compiled with its own flags (no std templates are used here either).
//
// Traits T: using V (one SIMD vector of floats); W (floats per vector); RS (query rows per
// score block), RA (rows per accumulate block), DA (vectors of dv per accumulate block); static
// load, store, zero, set1, add, sub, mul, fmadd, max (max(a, b) returns b where a is NaN), exp,
// tanh, reduce_add, reduce_max, load_below(p, k) (lanes >= k zero and not read),
// store_below(p, x, k) (lanes < k only), lanes_below(x, k, fill) (lanes >= k replaced by fill),
// set1_pair(p) (p[0], p[1] in every pair of lanes), pair_sum(a, b) (lane i: the sum of lanes
// 2i and 2i + 1 of a, then of b).
//
// The step, for the nr rows of g over its n cells:
//   scores:     blocks of RS rows x W cells held in RS * 2 accumulators; per pair of elements
//               (e, e + 1) of the head, the cells' K values (one row of kt: W / 2 cells per
//               vector, the pair of each cell in adjacent lanes) are loaded once and multiplied
//               with every row's (q[e], q[e + 1]) broadcast; adjacent lanes are summed once per
//               32 elements: no horizontal sums across a whole vector.
//               s = scale * dot + mask (or cap * tanh(scale * dot) + mask); lanes past n -inf.
//   softmax:    per row, m' = max(m, max_t s_t), alpha = exp(m - m'), w_t = exp(s_t - m'),
//               l = alpha l + sum_t w_t (rows that still see nothing: weights 0, alpha 1).
//   accumulate: blocks of RA rows x DA vectors of dv: acc = alpha acc + sum_t w_t v_t with each
//               V row loaded once for the block and the rows' w_t broadcast.
#pragma once

#include <cstdint>

#include "cpu/ops-attn.h"

template <class T, int R>
inline void attn_tile_scores_block(const ggml_cpu_attn_group & g, int64_t r0, int64_t c0) {
    using V = typename T::V;
    V acc[R][2];
    const float * q = g.q + r0 * g.dp;
    const float * kt = g.kt + 2 * c0;
    const int64_t ks = 2 * g.k_tile;
    float * s0 = g.s + r0 * g.k_tile + c0;
    // Sums over 32 elements (16 products per lane), added up in s: fewer roundings than one
    // chain over dp.
    for (int64_t e0 = 0; e0 < g.dp; e0 += 32) {
#pragma GCC unroll 16
        for (int r = 0; r < R; ++r) acc[r][0] = acc[r][1] = T::zero();
        const int64_t e1 = e0 + 32 < g.dp ? e0 + 32 : g.dp;
        for (int64_t e = e0; e < e1; e += 2) {
            const float * kp = kt + e / 2 * ks;
            const V k0 = T::load(kp), k1 = T::load(kp + T::W);
#pragma GCC unroll 16
            for (int r = 0; r < R; ++r) {
                const V qv = T::set1_pair(q + r * g.dp + e);
                acc[r][0] = T::fmadd(qv, k0, acc[r][0]);
                acc[r][1] = T::fmadd(qv, k1, acc[r][1]);
            }
        }
#pragma GCC unroll 16
        for (int r = 0; r < R; ++r) {
            float * p = s0 + r * g.k_tile;
            const V dot = T::pair_sum(acc[r][0], acc[r][1]);
            T::store(p, e0 == 0 ? dot : T::add(T::load(p), dot));
        }
    }
    const V vscale = T::set1(g.scale);
    const V vcap = T::set1(g.cap);
    const V ninf = T::set1(-__builtin_inff());
    const int64_t left = g.n - c0;
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) {
        const float * mrow = g.mask ? g.mask + (r0 + r) / g.rows_per_mask * g.k_tile + c0 : nullptr;
        float * s = s0 + r * g.k_tile;
        const V m = mrow ? T::load_below(mrow, left) : T::zero();
        const V dot = T::load(s);
        V x = g.cap > 0.0f ? T::fmadd(T::tanh(T::mul(dot, vscale)), vcap, m) : T::fmadd(dot, vscale, m);
        T::store(s, T::lanes_below(x, left, ninf));
    }
}

// Rows [r0, r0 + rows) (rows <= T::RS) over cells [c0, c0 + W).
template <class T, int R = T::RS>
inline void attn_tile_scores_rows(const ggml_cpu_attn_group & g, int64_t r0, int64_t rows, int64_t c0) {
    if constexpr (R > 1) {
        if (rows < R) {
            attn_tile_scores_rows<T, R - 1>(g, r0, rows, c0);
            return;
        }
    }
    attn_tile_scores_block<T, R>(g, r0, c0);
}

// Scores of every row (lanes past n: -inf).
template <class T>
inline void attn_tile_scores(const ggml_cpu_attn_group & g) {
    for (int64_t r0 = 0; r0 < g.nr; r0 += T::RS) {
        const int64_t rows = g.nr - r0 < T::RS ? g.nr - r0 : T::RS;
        for (int64_t c0 = 0; c0 < g.n; c0 += T::W) attn_tile_scores_rows<T>(g, r0, rows, c0);
    }
}

// Scores to weights in place (every vector of a row up to n; lanes past n hold -inf: weight 0).
// Each row's maximum score first (into alpha), then the new maxima and the rescaling factors of
// W rows at a time.
template <class T>
inline void attn_tile_softmax(const ggml_cpu_attn_group & g) {
    using V = typename T::V;
    const int64_t nv = (g.n + T::W - 1) / T::W;
    for (int64_t r = 0; r < g.nr; ++r) {
        const float * s = g.s + r * g.k_tile;
        V vmax = T::set1(-__builtin_inff());
        for (int64_t i = 0; i < nv; ++i) vmax = T::max(T::load(s + i * T::W), vmax);  // NaN keeps vmax
        g.alpha[r] = T::reduce_max(vmax);
    }
    for (int64_t r0 = 0; r0 < g.nr; r0 += T::W) {
        const int64_t k = g.nr - r0;
        const V m_old = T::load_below(g.m + r0, k);
        const V m_new = T::max(T::load_below(g.alpha + r0, k), m_old);
        T::store_below(g.m + r0, m_new, k);
        T::store_below(g.alpha + r0, T::exp(T::sub(m_old, m_new)), k);  // 0 where m_old is -inf
    }
    for (int64_t r = 0; r < g.nr; ++r) {
        float * s = g.s + r * g.k_tile;
        if (g.m[r] == -__builtin_inff()) {  // nothing visible to this row yet
            g.alpha[r] = 1.0f;
            for (int64_t i = 0; i < nv; ++i) T::store(s + i * T::W, T::zero());
            continue;
        }
        const V vm = T::set1(g.m[r]);
        V sum = T::zero();
        for (int64_t i = 0; i < nv; ++i) {
            const V w = T::exp(T::sub(T::load(s + i * T::W), vm));
            T::store(s + i * T::W, w);
            sum = T::add(sum, w);
        }
        g.l[r] = g.l[r] * g.alpha[r] + T::reduce_add(sum);
    }
}

template <class T, int R, int D>
inline void attn_tile_acc_block(const ggml_cpu_attn_group & g, int64_t r0, int64_t d0) {
    using V = typename T::V;
    V a[R][D];
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) {
        const V al = T::set1(g.alpha[r0 + r]);
#pragma GCC unroll 4
        for (int d = 0; d < D; ++d) a[r][d] = T::mul(T::load(g.acc + (r0 + r) * g.dvp + d0 + d * T::W), al);
    }
    const float * w = g.s + r0 * g.k_tile;
    for (int64_t t = 0; t < g.n; ++t) {
        const float * vr = g.v + t * g.dvp + d0;
        V v[D];
#pragma GCC unroll 4
        for (int d = 0; d < D; ++d) v[d] = T::load(vr + d * T::W);
#pragma GCC unroll 16
        for (int r = 0; r < R; ++r) {
            const V wv = T::set1(w[r * g.k_tile + t]);
#pragma GCC unroll 4
            for (int d = 0; d < D; ++d) a[r][d] = T::fmadd(wv, v[d], a[r][d]);
        }
    }
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
        for (int d = 0; d < D; ++d) T::store(g.acc + (r0 + r) * g.dvp + d0 + d * T::W, a[r][d]);
}

template <class T, int D, int R = T::RA>
inline void attn_tile_acc_rows(const ggml_cpu_attn_group & g, int64_t r0, int64_t rows, int64_t d0) {
    if constexpr (R > 1) {
        if (rows < R) {
            attn_tile_acc_rows<T, D, R - 1>(g, r0, rows, d0);
            return;
        }
    }
    attn_tile_acc_block<T, R, D>(g, r0, d0);
}

template <class T>
inline void attn_tile_accumulate(const ggml_cpu_attn_group & g) {
    for (int64_t r0 = 0; r0 < g.nr; r0 += T::RA) {
        const int64_t rows = g.nr - r0 < T::RA ? g.nr - r0 : T::RA;
        int64_t d0 = 0;
        for (; d0 + T::DA * T::W <= g.dvp; d0 += T::DA * T::W) attn_tile_acc_rows<T, T::DA>(g, r0, rows, d0);
        for (; d0 < g.dvp; d0 += T::W) attn_tile_acc_rows<T, 1>(g, r0, rows, d0);
    }
}

template <class T>
inline void attn_tile_group(const ggml_cpu_attn_group & g) {
    attn_tile_scores<T>(g);
    attn_tile_softmax<T>(g);
    attn_tile_accumulate<T>(g);
}
