// Scale search of the affine K-quants (Q2_K, Q4_K, Q5_K): x ~ (d * sc) * q - dmin * m per
// sub-block, one super-block of 256 values at a time.
//
// Stage 1: each sub-block gets its best continuous scale and min: a grid of candidate inverse
// scales over [min(x, 0), max(x)], levels rounded, scale and min re-fitted by weighted least
// squares on those levels (min kept >= 0, the format subtracts it); the quality effort then
// iterates "re-round with the fitted scale, re-fit" while the error drops.
// Stage 2: d and dmin map the largest scale and min to the top code; the codes are rounded
// against the decoded F16 values and the levels re-fitted with the scale the decoder will use.
// The quality effort climbs the codes of each sub-block to neighbouring codes (error measured
// in the decoder's float arithmetic) and re-fits d and dmin by least squares on the chosen codes
// and levels, keeping the best stored block.
#include "quants-k-impl.h"

#include <cmath>

const quants_k_affine_spec quants_k_spec_q2_K = {16, 3, 15, 15, -0.5f, 0.1f};
const quants_k_affine_spec quants_k_spec_q4_K = {32, 15, 63, 20, -1.0f, 0.1f};
const quants_k_affine_spec quants_k_spec_q5_K = {32, 31, 63, 15, -0.5f, 0.1f};

namespace {

constexpr int k_superblock = 256;
constexpr int k_max_sub = 32;
constexpr int k_refine_iterations = 8;
constexpr int k_climb_steps = 8;
constexpr int k_superblock_refits = 2;
constexpr int L = quants_k_lanes;

struct affine_sub {
    float s = 0;  // x ~ s * q - m
    float m = 0;
    float err = 0;
};

float affine_error(const float * x, const float * w, const float * q, int n, float s, float m) {
    float acc[L] = {};
    for (int i = 0; i < n; i += L) {
        for (int l = 0; l < L; ++l) {
            const float e = (s * q[i + l] - m) - x[i + l];
            acc[l] += w[i + l] * e * e;
        }
    }
    return quants_k_lanes_sum(acc);
}

void affine_levels(const float * x, int n, float m, float iscale, float q_max, float * q) {
    for (int i = 0; i < n; ++i) q[i] = quants_k_round_clamp_f((x[i] + m) * iscale, 0.0f, q_max);
}

// Weighted least squares of x ~ s * q - m on fixed levels, with s >= 0 and m >= 0; sw and sx
// are the sums of w and w x.
affine_sub affine_sub_refit(const float * x, const float * w, const float * q, int n, double sw, double sx) {
    float a_q[L] = {}, a_qq[L] = {}, a_xq[L] = {};
    for (int i = 0; i < n; i += L) {
        for (int l = 0; l < L; ++l) {
            const float wq = w[i + l] * q[i + l];
            a_q[l] += wq;
            a_qq[l] += wq * q[i + l];
            a_xq[l] += wq * x[i + l];
        }
    }
    const double sq = quants_k_lanes_sum(a_q), sqq = quants_k_lanes_sum(a_qq), sxq = quants_k_lanes_sum(a_xq);
    const double det = sw * sqq - sq * sq;
    double s = 0, b = 0;  // x ~ s * q + b
    if (det > 0) {
        s = (sw * sxq - sq * sx) / det;
        b = (sqq * sx - sq * sxq) / det;
    }
    if (!(det > 0) || b > 0 || s < 0) {
        b = 0;
        s = sqq > 0 ? sxq / sqq : 0;
        if (s < 0) {
            s = 0;
            b = sw > 0 ? std::fmin(0.0, sx / sw) : 0;
        }
    }
    affine_sub r;
    r.s = float(s);
    r.m = float(-b);
    r.err = affine_error(x, w, q, n, r.s, r.m);
    return r;
}

// Stage 1: the best continuous scale and min of one sub-block.
affine_sub affine_sub_search(const float * x, const float * w, int n, const quants_k_affine_spec & spec,
                             bool refine) {
    float xmin = 0.0f, xmax = -INFINITY;  // the min is <= 0: the format subtracts it; NaNs skipped
    double sw = 0, sx = 0;
    for (int i = 0; i < n; ++i) {
        xmin = x[i] < xmin ? x[i] : xmin;
        xmax = x[i] > xmax ? x[i] : xmax;
        sw += w[i];
        sx += double(w[i]) * x[i];
    }
    const float q_max = float(spec.q_max);
    float q[k_max_sub];
    affine_sub best;
    best.m = -xmin;
    if (!(xmax > xmin) || !std::isfinite(xmax - xmin)) {
        for (int i = 0; i < n; ++i) q[i] = 0;
        best.err = affine_error(x, w, q, n, 0.0f, best.m);
        return best;
    }
    best.s = (xmax - xmin) / q_max;
    affine_levels(x, n, best.m, 1.0f / best.s, q_max, q);
    best.err = affine_error(x, w, q, n, best.s, best.m);
    for (int k = 0; k <= spec.n_grid; ++k) {
        const float iscale = (q_max + spec.grid_lo + spec.grid_step * float(k)) / (xmax - xmin);
        affine_levels(x, n, -xmin, iscale, q_max, q);
        const affine_sub c = affine_sub_refit(x, w, q, n, sw, sx);
        if (c.err < best.err) best = c;
    }
    for (int it = 0; refine && it < k_refine_iterations && best.s > 0; ++it) {
        affine_levels(x, n, best.m, 1.0f / best.s, q_max, q);
        const affine_sub c = affine_sub_refit(x, w, q, n, sw, sx);
        if (!(c.err < best.err)) break;
        best = c;
    }
    return best;
}

struct affine_state {
    float d = 0, dmin = 0;  // decoded F16 values
    quants_k_affine_fit fit;
};

// Levels of one sub-block for codes sc and m, and their error, in the decoder's arithmetic.
float affine_requant(const float * x, const float * w, int n, float d, float dmin, int sc, int m, float q_max,
                     uint8_t * q) {
    const float dl = d * float(sc);
    const float ml = dmin * float(m);
    const float iscale = dl > 0 ? 1.0f / dl : 0.0f;
    float acc[L] = {};
    for (int i = 0; i < n; i += L) {
        for (int l = 0; l < L; ++l) {
            const float qf = quants_k_round_clamp_f((x[i + l] + ml) * iscale, 0.0f, q_max);
            q[i + l] = uint8_t(qf);
            const float e = (dl * qf - ml) - x[i + l];
            acc[l] += w[i + l] * e * e;
        }
    }
    return quants_k_lanes_sum(acc);
}

// Moves the codes (*sc, *m) of one sub-block to a neighbour while that lowers its error err;
// returns the error of the codes it ends on.
float affine_climb(const float * x, const float * w, const quants_k_affine_spec & spec, float d, float dmin, int * sc,
                   int * m, float err) {
    uint8_t q[k_max_sub];
    for (int step = 0; step < k_climb_steps; ++step) {
        int best_sc = *sc, best_m = *m;
        float best = err;
        for (int ds = -1; ds <= 1; ++ds) {
            for (int dm = -1; dm <= 1; ++dm) {
                const int c = *sc + ds, cm = *m + dm;
                if ((ds == 0 && dm == 0) || c < 0 || cm < 0 || c > spec.code_max || cm > spec.code_max) continue;
                const float e = affine_requant(x, w, spec.sub_size, d, dmin, c, cm, float(spec.q_max), q);
                if (e < best) {
                    best = e;
                    best_sc = c;
                    best_m = cm;
                }
            }
        }
        if (!(best < err)) break;
        err = best;
        *sc = best_sc;
        *m = best_m;
    }
    return err;
}

// Re-fits the levels of every sub-block for the current codes (climbing the codes first when
// asked) and sets the total error.
void affine_requant_all(const float * x, const float * w, const quants_k_affine_spec & spec, bool climb,
                        affine_state & st) {
    const int n = spec.sub_size;
    const float q_max = float(spec.q_max);
    st.fit.err = 0;
    for (int j = 0; j < k_superblock / n; ++j) {
        const float * xj = x + j * n;
        const float * wj = w + j * n;
        uint8_t * qj = st.fit.q + j * n;
        float err = affine_requant(xj, wj, n, st.d, st.dmin, st.fit.sc[j], st.fit.m[j], q_max, qj);
        if (climb) {
            int sc = st.fit.sc[j], m = st.fit.m[j];
            const float climbed = affine_climb(xj, wj, spec, st.d, st.dmin, &sc, &m, err);
            if (climbed < err) {
                st.fit.sc[j] = uint8_t(sc);
                st.fit.m[j] = uint8_t(m);
                err = affine_requant(xj, wj, n, st.d, st.dmin, sc, m, q_max, qj);
            }
        }
        st.fit.err += err;
    }
}

// Least-squares d and dmin for the current codes and levels: x ~ d * (sc q) - dmin * m.
bool affine_refit_superblock(const float * x, const float * w, const quants_k_affine_spec & spec, affine_state & st) {
    double saa = 0, sab = 0, sbb = 0, sax = 0, sbx = 0;
    for (int e = 0; e < k_superblock; ++e) {
        const int j = e / spec.sub_size;
        const double a = double(st.fit.sc[j]) * st.fit.q[e], b = st.fit.m[j], we = w[e];
        saa += we * a * a;
        sab += we * a * b;
        sbb += we * b * b;
        sax += we * a * x[e];
        sbx += we * b * x[e];
    }
    if (!(saa > 0)) return false;
    const double det = saa * sbb - sab * sab;
    double d = 0, dmin = -1;
    if (det > 1e-12 * saa * sbb) {
        d = (sbb * sax - sab * sbx) / det;
        dmin = (sab * sax - saa * sbx) / det;
    }
    if (dmin < 0) {
        dmin = st.dmin;
        d = (sax + dmin * sab) / saa;
    }
    if (!(d > 0)) return false;
    st.fit.d = quants_k_to_fp16(float(d), &st.d);
    st.fit.dmin = quants_k_to_fp16(float(dmin), &st.dmin);
    return true;
}

}  // namespace

void quants_k_fit_affine_superblock(const float * x, const float * w, const quants_k_affine_spec & spec,
                                    quants_k_effort effort, quants_k_affine_fit * out) {
    const bool quality = effort == quants_k_effort::quality;
    const int n = spec.sub_size, n_sub = k_superblock / n;
    affine_sub sub[16];
    float s_max = 0, m_max = 0;
    for (int j = 0; j < n_sub; ++j) {
        sub[j] = affine_sub_search(x + j * n, w + j * n, n, spec, quality);
        s_max = sub[j].s > s_max ? sub[j].s : s_max;
        m_max = sub[j].m > m_max ? sub[j].m : m_max;
    }
    affine_state st;
    st.fit.d = quants_k_to_fp16(s_max / float(spec.code_max), &st.d);
    st.fit.dmin = quants_k_to_fp16(m_max / float(spec.code_max), &st.dmin);
    const float id = st.d > 0 ? 1.0f / st.d : 0.0f;
    const float idmin = st.dmin > 0 ? 1.0f / st.dmin : 0.0f;
    for (int j = 0; j < n_sub; ++j) {
        st.fit.sc[j] = uint8_t(quants_k_round_clamp(sub[j].s * id, 0, spec.code_max));
        st.fit.m[j] = uint8_t(quants_k_round_clamp(sub[j].m * idmin, 0, spec.code_max));
    }
    affine_requant_all(x, w, spec, quality, st);
    if (quality) {
        affine_state cur = st;
        for (int it = 0; it < k_superblock_refits; ++it) {
            if (!affine_refit_superblock(x, w, spec, cur)) break;
            affine_requant_all(x, w, spec, true, cur);
            if (!(cur.fit.err < st.fit.err)) break;
            st = cur;
        }
    }
    *out = st.fit;
}
