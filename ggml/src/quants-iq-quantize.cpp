// Quality quantizers of IQ4_NL and IQ4_XS: an error-minimising scale search per block.
//
// Both fit x ~ s * codebook[q] per 32 elements (q: indices into the non-linear codebook).
//   1. Sub-block search: candidate inverse scales map the element of largest magnitude near
//      either end of the codebook (-127, or +113 with the opposite sign of the scale), in steps
//      of one codebook unit; each gives indices by nearest value, and the weighted
//      least-squares scale for those indices scores it. The best is refined by re-rounding and
//      re-fitting while the explained energy grows.
//   2. Stored precision. IQ4_NL: the scale rounded to fp16, indices re-chosen for the decoded
//      scale, least squares again (a few rounds, the best fp16 value seen is kept). IQ4_XS: the
//      super-block scale d maps the largest sub-block scale to the code -32 or to +31 (both
//      tried); each sub-block takes its rounded 6-bit code or a neighbour (whichever gives the
//      smaller error with indices re-chosen), then d is re-fitted by least squares on the chosen
//      codes and indices while the error drops.
//   3. The result is compared with the reference (round-to-nearest) block and the better one is
//      written, so the quality quantizer is never worse than the reference on any block.
// Errors are squared errors weighted by the importance matrix (uniform without one), measured on
// the values dequantization gives. Blocks with non-finite values, or scales beyond fp16, are
// left to the reference quantizer, which clamps.
#include "quants-iq-impl.h"
#include "quants-legacy-impl.h"

#include "ggml/quants.h"

#include <cmath>
#include <cstring>
#include <initializer_list>

namespace {

constexpr int k_sub = 32;            // elements per sub-block (and per IQ4_NL block)
constexpr int k_n_sub = QK_K / k_sub;
constexpr int k_grid = 8;           // candidates on each side of each end of the codebook
constexpr int k_refine = 4;          // re-round / re-fit rounds of the continuous scale
constexpr int k_fp16_rounds = 3;     // re-fit rounds with the stored scale
constexpr int k_climb = 3;           // IQ4_XS: neighbouring codes tried per direction
constexpr int k_refits = 2;          // IQ4_XS: least-squares re-fits of d

inline float codebook_value(int i) { return float(ggml_iq4nl_codebook[i]); }

// Weights of a block of n elements: the importance matrix where usable, plus a small share of
// its mean so that no element is left without weight; uniform without one.
void block_weights(const float * imatrix, int n, float * w) {
    if (!imatrix) {
        for (int j = 0; j < n; ++j) w[j] = 1.0f;
        return;
    }
    float sum = 0.0f;
    for (int j = 0; j < n; ++j) {
        const float v = imatrix[j];
        w[j] = (v > 0.0f && v < INFINITY) ? v : 0.0f;
        sum += w[j];
    }
    if (!(sum > 0.0f && sum < INFINITY)) {
        for (int j = 0; j < n; ++j) w[j] = 1.0f;
        return;
    }
    const float eps = 1e-6f * sum / float(n);
    for (int j = 0; j < n; ++j) w[j] += eps;
}

// Every value finite and the largest magnitude well inside what an fp16 scale reaches.
bool searchable(const float * x, int n) {
    float amax = 0.0f;
    for (int j = 0; j < n; ++j) {
        if (!std::isfinite(x[j])) return false;
        amax = std::fabs(x[j]) > amax ? std::fabs(x[j]) : amax;
    }
    // scales stay near amax / 127 (IQ4_XS: times up to 32 in d): far below the fp16 limit
    return amax > 0.0f && amax < 1e6f;
}

// Indices for the inverse scale id, and the weighted least-squares scale on them
// (*s = sum w x c / sum w c^2, c the codebook values). Returns the energy the fit explains,
// (sum w x c)^2 / (sum w c^2): the larger the better.
float explained(const float * x, const float * w, float id, float * s) {
    float sxc = 0.0f, scc = 0.0f;
    for (int j = 0; j < k_sub; ++j) {
        const float c = codebook_value(quants_iq4_nearest(id * x[j]));
        sxc += w[j] * c * x[j];
        scc += w[j] * c * c;
    }
    if (!(scc > 0.0f)) {
        *s = 0.0f;
        return 0.0f;
    }
    *s = sxc / scc;
    return sxc * sxc / scc;
}

// Step 1: the best continuous scale of one sub-block (0 when it is all zeros).
float sub_search(const float * x, const float * w) {
    float amax = 0.0f, max = 0.0f;
    for (int j = 0; j < k_sub; ++j) {
        if (std::fabs(x[j]) > amax) {
            amax = std::fabs(x[j]);
            max = x[j];
        }
    }
    if (!(amax > 0.0f)) return 0.0f;
    float best = -1.0f, best_s = 0.0f, s = 0.0f;
    for (const float end : {codebook_value(0), codebook_value(15)}) {
        for (int t = -k_grid; t <= k_grid; ++t) {
            const float e = explained(x, w, (end + float(t)) / max, &s);
            if (e > best) {
                best = e;
                best_s = s;
            }
        }
    }
    for (int it = 0; it < k_refine && best_s != 0.0f; ++it) {
        const float e = explained(x, w, 1.0f / best_s, &s);
        if (!(e > best)) break;
        best = e;
        best_s = s;
    }
    return best_s;
}

// Indices of one sub-block for the decoded scale dl, and their weighted error, in the
// decoder's arithmetic (dl * codebook value).
double sub_requant(const float * x, const float * w, float dl, uint8_t * idx) {
    const float id = dl != 0.0f ? 1.0f / dl : 0.0f;
    double err = 0.0;
    for (int j = 0; j < k_sub; ++j) {
        idx[j] = uint8_t(quants_iq4_nearest(x[j] * id));
        const double e = double(dl * codebook_value(idx[j])) - double(x[j]);
        err += double(w[j]) * e * e;
    }
    return err;
}

double weighted_error(const float * x, const float * w, const float * y, int n) {
    double err = 0.0;
    for (int j = 0; j < n; ++j) {
        const double e = double(y[j]) - double(x[j]);
        err += double(w[j]) * e * e;
    }
    return err;
}

// ---- IQ4_NL ----

struct nl_fit {
    ggml_fp16_t d = 0;
    uint8_t idx[k_sub] = {};
    double err = INFINITY;
};

// Step 2 for IQ4_NL: fp16 scale, re-chosen indices, least squares again.
void nl_refine(const float * x, const float * w, float s, nl_fit & fit) {
    for (int round = 0; round < k_fp16_rounds; ++round) {
        uint8_t idx[k_sub];
        const ggml_fp16_t d16 = ggml_fp32_to_fp16(quants_legacy_clamp_fp16_range(s));
        const double err = sub_requant(x, w, ggml_fp16_to_fp32(d16), idx);
        if (!(err < fit.err)) return;
        fit.d = d16;
        fit.err = err;
        std::memcpy(fit.idx, idx, k_sub);
        double sxc = 0.0, scc = 0.0;
        for (int j = 0; j < k_sub; ++j) {
            const double c = codebook_value(idx[j]);
            sxc += double(w[j]) * c * double(x[j]);
            scc += double(w[j]) * c * c;
        }
        if (!(scc > 0.0)) return;
        s = float(sxc / scc);
    }
}

void quantize_block_iq4_nl(const float * x, const float * imatrix, block_iq4_nl & y) {
    ggml_quantize_row_iq4_nl_ref(x, &y, k_sub);
    if (!searchable(x, k_sub)) return;
    float w[k_sub], values[k_sub];
    block_weights(imatrix, k_sub, w);
    ggml_dequantize_row_iq4_nl(&y, values, k_sub);
    const double err_ref = weighted_error(x, w, values, k_sub);
    if (err_ref == 0.0) return;
    nl_fit fit;
    nl_refine(x, w, sub_search(x, w), fit);
    if (!(fit.err < err_ref)) return;
    block_iq4_nl candidate;
    candidate.d = fit.d;
    quants_legacy_pack_nibbles(fit.idx, candidate.qs);
    ggml_dequantize_row_iq4_nl(&candidate, values, k_sub);
    if (weighted_error(x, w, values, k_sub) < err_ref) y = candidate;
}

// ---- IQ4_XS ----

struct xs_fit {
    ggml_fp16_t d = 0;
    int ls[k_n_sub] = {};
    uint8_t idx[QK_K] = {};
    double err = INFINITY;
};

// The best code of one sub-block near the scale s for the decoded super-block scale d: the
// rounded code, then neighbours while the error drops. Returns the error; *ls and idx are set.
double xs_sub_code(const float * x, const float * w, float s, float d, int * ls, uint8_t * idx) {
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    float l0 = std::nearbyint(s * id);
    l0 = l0 < -32.0f ? -32.0f : l0 > 31.0f ? 31.0f : l0;
    int best_l = int(l0);
    double best = sub_requant(x, w, d * float(best_l), idx);
    uint8_t tmp[k_sub];
    for (const int dir : {-1, 1}) {
        for (int step = 1; step <= k_climb; ++step) {
            const int l = int(l0) + dir * step;
            if (l < -32 || l > 31) break;
            const double e = sub_requant(x, w, d * float(l), tmp);
            if (!(e < best)) break;
            best = e;
            best_l = l;
            std::memcpy(idx, tmp, k_sub);
        }
    }
    *ls = best_l + 32;
    return best;
}

// Codes and indices of every sub-block for the super-block scale d (fp16-rounded).
xs_fit xs_fit_for(const float * x, const float * w, const float * s, float d_wanted) {
    xs_fit f;
    f.d = ggml_fp32_to_fp16(quants_legacy_clamp_fp16_range(d_wanted));
    const float d = ggml_fp16_to_fp32(f.d);
    f.err = 0.0;
    for (int ib = 0; ib < k_n_sub; ++ib) {
        f.err += xs_sub_code(x + k_sub * ib, w + k_sub * ib, s[ib], d, &f.ls[ib], f.idx + k_sub * ib);
    }
    return f;
}

// Least-squares d for the codes and indices of f: x ~ d * ((ls - 32) c).
bool xs_refit(const float * x, const float * w, const xs_fit & f, float * d) {
    double saa = 0.0, sax = 0.0;
    for (int e = 0; e < QK_K; ++e) {
        const double a = double(f.ls[e / k_sub] - 32) * codebook_value(f.idx[e]);
        saa += double(w[e]) * a * a;
        sax += double(w[e]) * a * double(x[e]);
    }
    if (!(saa > 0.0)) return false;
    *d = float(sax / saa);
    return true;
}

xs_fit xs_search(const float * x, const float * w) {
    float s[k_n_sub];
    float s_ref = 0.0f;
    for (int ib = 0; ib < k_n_sub; ++ib) {
        s[ib] = sub_search(x + k_sub * ib, w + k_sub * ib);
        if (std::fabs(s[ib]) > std::fabs(s_ref)) s_ref = s[ib];
    }
    xs_fit best = xs_fit_for(x, w, s, s_ref / -32.0f);
    xs_fit alt = xs_fit_for(x, w, s, s_ref / 31.0f);
    if (alt.err < best.err) best = alt;
    for (int it = 0; it < k_refits; ++it) {
        float d = 0.0f;
        if (!xs_refit(x, w, best, &d)) break;
        const xs_fit cur = xs_fit_for(x, w, s, d);
        if (!(cur.err < best.err)) break;
        best = cur;
    }
    return best;
}

void quantize_block_iq4_xs(const float * x, const float * imatrix, block_iq4_xs & y) {
    ggml_quantize_row_iq4_xs_ref(x, &y, QK_K);
    if (!searchable(x, QK_K)) return;
    float w[QK_K], values[QK_K];
    block_weights(imatrix, QK_K, w);
    ggml_dequantize_row_iq4_xs(&y, values, QK_K);
    const double err_ref = weighted_error(x, w, values, QK_K);
    if (err_ref == 0.0) return;
    const xs_fit fit = xs_search(x, w);
    if (!(fit.err < err_ref)) return;
    block_iq4_xs candidate;
    candidate.d = fit.d;
    quants_iq4_xs_pack_scales(fit.ls, candidate);
    for (int ib = 0; ib < k_n_sub; ++ib) quants_legacy_pack_nibbles(fit.idx + k_sub * ib, candidate.qs + 16 * ib);
    ggml_dequantize_row_iq4_xs(&candidate, values, QK_K);
    if (weighted_error(x, w, values, QK_K) < err_ref) y = candidate;
}

template <typename block_t, int Block, void (*QuantizeBlock)(const float *, const float *, block_t &)>
size_t quantize_rows(const float * src, void * dst, int64_t n_rows, int64_t n_per_row, const float * imatrix) {
    if (n_rows <= 0 || n_per_row <= 0 || n_per_row % Block != 0) return 0;
    const int64_t nb = n_per_row / Block;
    block_t * out = static_cast<block_t *>(dst);
    for (int64_t r = 0; r < n_rows; ++r) {
        for (int64_t b = 0; b < nb; ++b) {
            QuantizeBlock(src + r * n_per_row + b * Block, imatrix ? imatrix + b * Block : nullptr, out[r * nb + b]);
        }
    }
    return size_t(n_rows) * size_t(nb) * sizeof(block_t);
}

}  // namespace

size_t ggml_quantize_iq4_nl(const float * src, void * dst, int64_t n_rows, int64_t n_per_row, const float * imatrix) {
    return quantize_rows<block_iq4_nl, QK4_NL, quantize_block_iq4_nl>(src, dst, n_rows, n_per_row, imatrix);
}

size_t ggml_quantize_iq4_xs(const float * src, void * dst, int64_t n_rows, int64_t n_per_row, const float * imatrix) {
    return quantize_rows<block_iq4_xs, QK_K, quantize_block_iq4_xs>(src, dst, n_rows, n_per_row, imatrix);
}
