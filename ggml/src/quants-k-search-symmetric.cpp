// Scale search of the symmetric K-quants (Q3_K, Q6_K): x ~ (d * sc) * q per sub-block of 16,
// signed levels and signed scale codes, one super-block of 256 values at a time.
//
// Stage 1: each sub-block gets its best continuous (signed) scale: a grid of candidate inverse
// scales that map the element of largest magnitude near the wider, negative end of the level
// range (the quality effort also tries the positive end), levels rounded, the scale re-fitted
// by weighted least squares; the quality effort then iterates "re-round, re-fit".
// Stage 2: d maps the largest scale to the most negative code (the quality effort also tries
// the most positive one); codes are rounded against the decoded F16 d and the levels re-fitted
// with the scale the decoder will use. The quality effort then tries, per sub-block, the
// neighbouring codes and their negations (error measured in the decoder's float arithmetic),
// and re-fits d by least squares on the chosen codes and levels, keeping the best block.
#include "quants-k-impl.h"

#include <cmath>

const quants_k_symmetric_spec quants_k_spec_q3_K = {-4, 3, -32, 31, 9, 0.1f};
const quants_k_symmetric_spec quants_k_spec_q6_K = {-32, 31, -128, 127, 9, 0.1f};

namespace {

constexpr int k_superblock = 256;
constexpr int k_sub = 16;
constexpr int k_refine_iterations = 8;
constexpr int k_climb_steps = 8;
constexpr int k_superblock_refits = 2;
constexpr int L = quants_k_lanes;

// Levels of x for inverse scale iscale, and the weighted least-squares scale on them
// (*s = sum w x q / sum w q^2). Returns the part of sum w x^2 the fit explains,
// (sum w x q)^2 / (sum w q^2): the larger the better (0 when every level is 0).
float symmetric_score(const float * x, const float * w, float iscale, float q_min, float q_max, float * s) {
    float a_xq[L] = {}, a_qq[L] = {};
    for (int i = 0; i < k_sub; i += L) {
        for (int l = 0; l < L; ++l) {
            const float q = quants_k_round_clamp_f(iscale * x[i + l], q_min, q_max);
            const float wq = w[i + l] * q;
            a_xq[l] += wq * x[i + l];
            a_qq[l] += wq * q;
        }
    }
    const float sxq = quants_k_lanes_sum(a_xq), sqq = quants_k_lanes_sum(a_qq);
    if (!(sqq > 0)) {
        *s = 0;
        return 0;
    }
    *s = sxq / sqq;
    return sxq * sxq / sqq;
}

// Stage 1: the best continuous (signed) scale of one sub-block of 16.
float symmetric_sub_search(const float * x, const float * w, const quants_k_symmetric_spec & spec, bool refine) {
    float amax = 0, xm = 0;
    for (int i = 0; i < k_sub; ++i) {
        const float a = std::fabs(x[i]);
        if (a > amax) {
            amax = a;
            xm = x[i];
        }
    }
    if (!(amax > 0) || !std::isfinite(amax)) return 0.0f;
    const float q_min = float(spec.q_min), q_max = float(spec.q_max);
    float best_s = 0, s = 0, best = -1;
    for (int side = 0; side < (refine ? 2 : 1); ++side) {
        const float end = side == 0 ? q_min : q_max;  // where the largest magnitude maps to
        const float sign = side == 0 ? -1.0f : 1.0f;
        for (int k = -spec.n_grid; k <= spec.n_grid; ++k) {
            const float iscale = (end + sign * spec.grid_step * float(k)) / xm;
            const float score = symmetric_score(x, w, iscale, q_min, q_max, &s);
            if (score > best) {
                best = score;
                best_s = s;
            }
        }
    }
    for (int it = 0; refine && it < k_refine_iterations && best_s != 0; ++it) {
        const float score = symmetric_score(x, w, 1.0f / best_s, q_min, q_max, &s);
        if (!(score > best)) break;
        best = score;
        best_s = s;
    }
    return best_s;
}

struct symmetric_state {
    float d = 0;  // decoded F16 value
    quants_k_symmetric_fit fit;
};

// Levels of one sub-block for code sc, and their error, in the decoder's arithmetic.
float symmetric_requant(const float * x, const float * w, const quants_k_symmetric_spec & spec, float d, int sc,
                        int8_t * q) {
    const float dl = d * float(sc);
    const float iscale = dl != 0 ? 1.0f / dl : 0.0f;
    const float q_min = float(spec.q_min), q_max = float(spec.q_max);
    float acc[L] = {};
    for (int i = 0; i < k_sub; i += L) {
        for (int l = 0; l < L; ++l) {
            const float qf = quants_k_round_clamp_f(x[i + l] * iscale, q_min, q_max);
            q[i + l] = int8_t(qf);
            const float e = dl * qf - x[i + l];
            acc[l] += w[i + l] * e * e;
        }
    }
    return quants_k_lanes_sum(acc);
}

// The best code of one sub-block among the current one (*sc, error err), its neighbours and
// their negations, then a climb to neighbouring codes while the error drops.
float symmetric_climb(const float * x, const float * w, const quants_k_symmetric_spec & spec, float d, int * sc,
                      float err) {
    int8_t q[k_sub];
    const int c0 = *sc;
    const int starts[5] = {c0 - 1, c0 + 1, -c0, -c0 - 1, -c0 + 1};
    int best_c = c0;
    for (int c : starts) {
        if (c < spec.code_min || c > spec.code_max || c == c0) continue;
        const float e = symmetric_requant(x, w, spec, d, c, q);
        if (e < err) {
            err = e;
            best_c = c;
        }
    }
    for (int step = 0; step < k_climb_steps; ++step) {
        const int from = best_c;
        const int next[2] = {from - 1, from + 1};
        for (int c : next) {
            if (c < spec.code_min || c > spec.code_max) continue;
            const float e = symmetric_requant(x, w, spec, d, c, q);
            if (e < err) {
                err = e;
                best_c = c;
            }
        }
        if (best_c == from) break;
    }
    *sc = best_c;
    return err;
}

void symmetric_requant_all(const float * x, const float * w, const quants_k_symmetric_spec & spec, bool climb,
                           symmetric_state & st) {
    st.fit.err = 0;
    for (int j = 0; j < k_superblock / k_sub; ++j) {
        const float * xj = x + j * k_sub;
        const float * wj = w + j * k_sub;
        int8_t * qj = st.fit.q + j * k_sub;
        float err = symmetric_requant(xj, wj, spec, st.d, st.fit.sc[j], qj);
        if (climb) {
            int sc = st.fit.sc[j];
            err = symmetric_climb(xj, wj, spec, st.d, &sc, err);
            if (sc != st.fit.sc[j]) {
                st.fit.sc[j] = int8_t(sc);
                err = symmetric_requant(xj, wj, spec, st.d, sc, qj);
            }
        }
        st.fit.err += err;
    }
}

// Least-squares d for the current codes and levels: x ~ d * (sc q).
bool symmetric_refit_superblock(const float * x, const float * w, symmetric_state & st) {
    double saa = 0, sax = 0;
    for (int e = 0; e < k_superblock; ++e) {
        const double a = double(st.fit.sc[e / k_sub]) * st.fit.q[e];
        saa += double(w[e]) * a * a;
        sax += double(w[e]) * a * x[e];
    }
    if (!(saa > 0)) return false;
    st.fit.d = quants_k_to_fp16(float(sax / saa), &st.d);
    return st.d != 0;
}

// A stored block from the sub-block scales s, with d mapping s_ref to code.
symmetric_state symmetric_from_scales(const float * x, const float * w, const quants_k_symmetric_spec & spec,
                                      const float * s, float s_ref, int code, bool quality) {
    symmetric_state st;
    st.fit.d = quants_k_to_fp16(s_ref / float(code), &st.d);
    const float id = st.d != 0 ? 1.0f / st.d : 0.0f;
    for (int j = 0; j < k_superblock / k_sub; ++j) {
        st.fit.sc[j] = int8_t(quants_k_round_clamp(s[j] * id, spec.code_min, spec.code_max));
    }
    symmetric_requant_all(x, w, spec, quality, st);
    for (int it = 0; quality && it < k_superblock_refits; ++it) {
        symmetric_state cur = st;
        if (!symmetric_refit_superblock(x, w, cur)) break;
        symmetric_requant_all(x, w, spec, true, cur);
        if (!(cur.fit.err < st.fit.err)) break;
        st = cur;
    }
    return st;
}

}  // namespace

void quants_k_fit_symmetric_superblock(const float * x, const float * w, const quants_k_symmetric_spec & spec,
                                       quants_k_effort effort, quants_k_symmetric_fit * out) {
    const bool quality = effort == quants_k_effort::quality;
    float s[k_superblock / k_sub];
    float s_max = 0;
    for (int j = 0; j < k_superblock / k_sub; ++j) {
        s[j] = symmetric_sub_search(x + j * k_sub, w + j * k_sub, spec, quality);
        if (std::fabs(s[j]) > std::fabs(s_max)) s_max = s[j];
    }
    symmetric_state st = symmetric_from_scales(x, w, spec, s, s_max, spec.code_min, quality);
    if (quality && s_max != 0) {
        symmetric_state alt = symmetric_from_scales(x, w, spec, s, s_max, spec.code_max, quality);
        if (alt.fit.err < st.fit.err) st = alt;
    }
    *out = st.fit;
}
