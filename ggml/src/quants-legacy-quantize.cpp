// Quality quantizer of the 32-element formats (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0): an error-minimising
// search per block.
//
// Each block is fitted as x ~ d * (u - zero) + m with integer levels u in 0..nmax (m = 0 for the
// symmetric types). The search, on the block normalised to max |x| = 1:
//   1. candidate inverse scales around the plain one (the largest element on the lowest level, or
//      on the highest; for the _1 types a span around nmax / (max - min)); each gives levels by
//      rounding, and the least-squares scale (and offset) for those levels scores it;
//   2. the best candidate is refined with the stored precision: d and m rounded to fp16, levels
//      re-rounded to the nearest with those values, least squares again (a few rounds; the error
//      never grows, and the best fp16 pair seen is kept);
//   3. the result is compared with the round-to-nearest reference block, and the better one is
//      written, so the quality quantizer is never worse than the reference on any block.
// Errors are squared errors weighted by the importance matrix (uniform without one), measured on
// the values dequantization gives. Blocks the format cannot represent (non-finite values, scales
// beyond fp16) are left to the reference quantizer, which clamps.
#include "quants-legacy-impl.h"

#include "ggml/quants.h"

#include <cmath>
#include <cstring>

namespace {

constexpr int k_block = quants_legacy_block;

struct legacy_format {
    int nmax;      // highest level
    int zero;      // level of value 0 for the symmetric types; 0 for the _1 types
    bool has_min;  // x = d * u + m (else x = d * (u - zero))
    // Candidate grid, in levels: the largest element (symmetric types) or the range
    // max - min (_1 types) is mapped to base + step * s for s in s_lo..s_hi, where base is the
    // lowest and the highest level (symmetric) or nmax (_1 types). Chosen by measurement: finer
    // or wider grids gain less than 0.3% RMSE on Gaussian and Laplacian data.
    float step;
    int s_lo;
    int s_hi;
};

constexpr legacy_format k_format_q4_0{15, 8, false, 0.2f, -6, 6};
constexpr legacy_format k_format_q4_1{15, 0, true, 0.2f, -10, 10};
constexpr legacy_format k_format_q5_0{31, 16, false, 0.4f, -6, 6};
constexpr legacy_format k_format_q5_1{31, 0, true, 0.4f, -10, 10};
constexpr legacy_format k_format_q8_0{254, 127, false, 0.5f, -40, 8};

// A fitted block: levels u, and the scale and offset as stored (fp16) and as floats.
struct block_fit {
    uint8_t u[k_block];
    ggml_fp16_t d16 = 0;
    ggml_fp16_t m16 = 0;
    double err = INFINITY;
};

// Round to nearest (ties to even) for |v| < 2^22, in plain float arithmetic.
inline float round_nearest(float v) {
    constexpr float magic = 12582912.0f;  // 1.5 * 2^23
    return (v + magic) - magic;
}

inline float clamp_float(float v, float lo, float hi) {
    v = v < lo ? lo : v;
    return v > hi ? hi : v;
}

float inverse_or_zero(float d) {
    if (d == 0.0f) return 0.0f;
    const float id = 1.0f / d;
    return std::isfinite(id) ? id : 0.0f;
}

// Error weights of a block: the importance matrix where it is usable, else uniform.
void block_weights(const float * imatrix, float * w) {
    float sum = 0.0f;
    for (int j = 0; j < k_block; ++j) {
        const float v = imatrix ? imatrix[j] : 1.0f;
        w[j] = (v > 0.0f && v < INFINITY) ? v : 0.0f;
        sum += w[j];
    }
    if (!(sum > 0.0f && sum < INFINITY)) {
        for (int j = 0; j < k_block; ++j) w[j] = 1.0f;
    }
}

// Weighted squared error of levels u with stored d16 / m16, on the values dequantization gives.
double block_error(const legacy_format & f, const float * x, const float * w, const uint8_t * u, ggml_fp16_t d16,
                   ggml_fp16_t m16) {
    const float d = ggml_fp16_to_fp32(d16);
    const float m = ggml_fp16_to_fp32(m16);
    double err = 0.0;
    for (int j = 0; j < k_block; ++j) {
        const float y = f.has_min ? float(u[j]) * d + m : float(int(u[j]) - f.zero) * d;
        const double e = double(y) - double(x[j]);
        err += double(w[j]) * e * e;
    }
    return err;
}

// Nearest levels for a given scale and offset.
void block_levels(const legacy_format & f, const float * x, float d, float m, uint8_t * u) {
    const float id = inverse_or_zero(d);
    const float zero = float(f.zero);
    const float top = float(f.nmax);
    for (int j = 0; j < k_block; ++j) u[j] = uint8_t(round_nearest(clamp_float((x[j] - m) * id + zero, 0.0f, top)));
}

// Least-squares scale (and offset) for fixed levels. Returns false when the levels determine
// no scale (all equal).
bool block_least_squares(const legacy_format & f, const float * x, const float * w, const uint8_t * u, double & d,
                         double & m) {
    double sw = 0, sl = 0, sll = 0, sx = 0, slx = 0;
    for (int j = 0; j < k_block; ++j) {
        const double l = double(int(u[j]) - f.zero);
        sw += w[j];
        sl += w[j] * l;
        sll += w[j] * l * l;
        sx += w[j] * double(x[j]);
        slx += w[j] * l * double(x[j]);
    }
    if (!f.has_min) {
        if (!(sll > 0)) return false;
        d = slx / sll;
        m = 0;
        return true;
    }
    const double det = sw * sll - sl * sl;
    if (!(det > 1e-12 * sw * sll)) return false;
    d = (sw * slx - sl * sx) / det;
    m = (sll * sx - sl * slx) / det;
    return d > 0;
}

// Sums of a normalised block that do not depend on the candidate.
struct block_moments {
    float sw = 0, sx = 0, sxx = 0;
};

// Scores one candidate inverse scale on the normalised block: the weighted squared error after
// the least-squares fit of its levels (float; only candidates are compared). The sums run in
// k_lanes independent partial sums so that the compiler vectorises them.
float candidate_error(const legacy_format & f, const float * xn, const float * w, const block_moments & bm, float id,
                      float min) {
    constexpr int k_lanes = 8;
    const float zero = float(f.zero);
    const float top = float(f.nmax);
    float sl[k_lanes] = {}, sll[k_lanes] = {}, slx[k_lanes] = {};
    for (int j = 0; j < k_block; j += k_lanes) {
        for (int k = 0; k < k_lanes; ++k) {
            const float l = round_nearest(clamp_float((xn[j + k] - min) * id + zero, 0.0f, top)) - zero;
            const float wl = w[j + k] * l;
            sl[k] += wl;
            sll[k] += wl * l;
            slx[k] += wl * xn[j + k];
        }
    }
    float tl = 0, tll = 0, tlx = 0;
    for (int k = 0; k < k_lanes; ++k) {
        tl += sl[k];
        tll += sll[k];
        tlx += slx[k];
    }
    if (!f.has_min) return tll > 0 ? bm.sxx - tlx * tlx / tll : INFINITY;
    const float det = bm.sw * tll - tl * tl;
    if (!(det > 0)) return INFINITY;
    const float d = (bm.sw * tlx - tl * bm.sx) / det;
    const float m = (tll * bm.sx - tl * tlx) / det;
    return bm.sxx - d * tlx - m * bm.sx;
}

// Step 1: the best candidate inverse scale for the block normalised by scale_norm; returns its
// levels in u. Symmetric types try the largest element near the lowest level and near the
// highest; the _1 types a span of nmax / (max - min).
void block_search(const legacy_format & f, const float * x, const float * w, float scale_norm, uint8_t * u) {
    float xn[k_block];
    float max_signed = 0.0f, mn = INFINITY, mx = -INFINITY;
    block_moments bm;
    for (int j = 0; j < k_block; ++j) {
        xn[j] = x[j] / scale_norm;
        if (std::fabs(xn[j]) > std::fabs(max_signed)) max_signed = xn[j];
        mn = xn[j] < mn ? xn[j] : mn;
        mx = xn[j] > mx ? xn[j] : mx;
        bm.sw += w[j];
        bm.sx += w[j] * xn[j];
        bm.sxx += w[j] * xn[j] * xn[j];
    }
    float best = INFINITY;
    float best_id = 0.0f;
    float best_min = f.has_min ? mn : 0.0f;
    auto consider = [&](float id, float min) {
        const float e = candidate_error(f, xn, w, bm, id, min);
        if (e < best) {
            best = e;
            best_id = id;
            best_min = min;
        }
    };
    if (f.has_min) {
        const float range = mx - mn;
        if (range > 0) {
            for (int s = f.s_lo; s <= f.s_hi; ++s) consider((float(f.nmax) + f.step * float(s)) / range, mn);
        }
    } else {
        // the largest element near the lowest level (-zero), and near the highest
        const float lo = float(f.zero), hi = float(f.nmax - f.zero);
        for (int s = f.s_lo; s <= f.s_hi; ++s) consider(-(lo + f.step * float(s)) / max_signed, 0.0f);
        if (hi != lo) {
            for (int s = f.s_lo; s <= f.s_hi; ++s) consider((hi + f.step * float(s)) / max_signed, 0.0f);
        }
    }
    const float zero = float(f.zero), top = float(f.nmax);
    for (int j = 0; j < k_block; ++j) {
        u[j] = uint8_t(round_nearest(clamp_float((xn[j] - best_min) * best_id + zero, 0.0f, top)));
    }
}

// Step 2: least squares and fp16 rounding, alternated with re-rounding of the levels.
void block_refine(const legacy_format & f, const float * x, const float * w, uint8_t * u, block_fit & fit) {
    for (int round = 0; round < 3; ++round) {
        double d = 0, m = 0;
        if (!block_least_squares(f, x, w, u, d, m)) return;
        const ggml_fp16_t d16 = ggml_fp32_to_fp16(quants_legacy_clamp_fp16_range(float(d)));
        const ggml_fp16_t m16 = ggml_fp32_to_fp16(quants_legacy_clamp_fp16_range(float(m)));
        block_levels(f, x, ggml_fp16_to_fp32(d16), ggml_fp16_to_fp32(m16), u);
        const double err = block_error(f, x, w, u, d16, m16);
        if (err < fit.err) {
            std::memcpy(fit.u, u, k_block);
            fit.d16 = d16;
            fit.m16 = m16;
            fit.err = err;
        } else {
            return;
        }
    }
}

// True when the search applies: every value finite and the plain scale within fp16.
bool block_searchable(const legacy_format & f, const float * x, float & amax) {
    amax = 0.0f;
    for (int j = 0; j < k_block; ++j) {
        if (!std::isfinite(x[j])) return false;
        const float a = std::fabs(x[j]);
        amax = a > amax ? a : amax;
    }
    // d stays below half the fp16 range for every candidate; for the _1 types m (about min) too
    const float limit = quants_legacy_fp16_max * 0.5f;
    if (f.has_min) return amax > 0.0f && amax < limit;
    return amax > 0.0f && amax / float(f.zero) < limit;
}

double weighted_error(const float * x, const float * w, const float * y) {
    double err = 0.0;
    for (int j = 0; j < k_block; ++j) {
        const double e = double(y[j]) - double(x[j]);
        err += double(w[j]) * e * e;
    }
    return err;
}

// The per-type pieces: reference quantizer, dequantization and packing of a fitted block.
void pack_block(const block_fit & fit, block_q4_0 & y) {
    y.d = fit.d16;
    quants_legacy_pack_nibbles(fit.u, y.qs);
}
void pack_block(const block_fit & fit, block_q4_1 & y) {
    y.d = fit.d16;
    y.m = fit.m16;
    quants_legacy_pack_nibbles(fit.u, y.qs);
}
void pack_block(const block_fit & fit, block_q5_0 & y) {
    y.d = fit.d16;
    quants_legacy_pack_nibbles(fit.u, y.qs);
    quants_legacy_pack_high_bits(fit.u, y.qh);
}
void pack_block(const block_fit & fit, block_q5_1 & y) {
    y.d = fit.d16;
    y.m = fit.m16;
    quants_legacy_pack_nibbles(fit.u, y.qs);
    quants_legacy_pack_high_bits(fit.u, y.qh);
}
void pack_block(const block_fit & fit, block_q8_0 & y) {
    y.d = fit.d16;
    for (int j = 0; j < k_block; ++j) y.qs[j] = int8_t(int(fit.u[j]) - 127);
}

template <typename block_t>
struct legacy_type {
    legacy_format format;
    void (*quantize_ref)(const float *, block_t *, int64_t);
    void (*dequantize)(const block_t *, float *, int64_t);
};

// One block: the reference block, replaced by the searched one when that has the smaller error.
template <typename block_t>
void quantize_block(const legacy_type<block_t> & t, const float * x, const float * imatrix, block_t & y) {
    t.quantize_ref(x, &y, k_block);
    float amax = 0.0f;
    if (!block_searchable(t.format, x, amax)) return;
    float w[k_block];
    block_weights(imatrix, w);
    float values[k_block];
    t.dequantize(&y, values, k_block);
    const double err_ref = weighted_error(x, w, values);
    if (err_ref == 0.0) return;

    uint8_t u[k_block];
    block_search(t.format, x, w, amax, u);
    block_fit fit;
    block_refine(t.format, x, w, u, fit);
    if (!(fit.err < err_ref)) return;
    block_t candidate;
    pack_block(fit, candidate);
    t.dequantize(&candidate, values, k_block);
    if (weighted_error(x, w, values) < err_ref) y = candidate;
}

template <typename block_t>
size_t quantize_rows(const legacy_type<block_t> & t, const float * src, void * dst, int64_t n_rows,
                     int64_t n_per_row, const float * imatrix) {
    if (n_rows <= 0 || n_per_row <= 0 || n_per_row % k_block != 0) return 0;
    const int64_t nb = n_per_row / k_block;
    block_t * out = static_cast<block_t *>(dst);
    for (int64_t r = 0; r < n_rows; ++r) {
        for (int64_t b = 0; b < nb; ++b) {
            quantize_block(t, src + r * n_per_row + b * k_block, imatrix ? imatrix + b * k_block : nullptr,
                           out[r * nb + b]);
        }
    }
    return size_t(n_rows) * size_t(nb) * sizeof(block_t);
}

}  // namespace

size_t ggml_quantize_q4_0(const float * src, void * dst, int64_t n_rows, int64_t n_per_row, const float * imatrix) {
    static constexpr legacy_type<block_q4_0> t{k_format_q4_0, ggml_quantize_row_q4_0_ref, ggml_dequantize_row_q4_0};
    return quantize_rows(t, src, dst, n_rows, n_per_row, imatrix);
}

size_t ggml_quantize_q4_1(const float * src, void * dst, int64_t n_rows, int64_t n_per_row, const float * imatrix) {
    static constexpr legacy_type<block_q4_1> t{k_format_q4_1, ggml_quantize_row_q4_1_ref, ggml_dequantize_row_q4_1};
    return quantize_rows(t, src, dst, n_rows, n_per_row, imatrix);
}

size_t ggml_quantize_q5_0(const float * src, void * dst, int64_t n_rows, int64_t n_per_row, const float * imatrix) {
    static constexpr legacy_type<block_q5_0> t{k_format_q5_0, ggml_quantize_row_q5_0_ref, ggml_dequantize_row_q5_0};
    return quantize_rows(t, src, dst, n_rows, n_per_row, imatrix);
}

size_t ggml_quantize_q5_1(const float * src, void * dst, int64_t n_rows, int64_t n_per_row, const float * imatrix) {
    static constexpr legacy_type<block_q5_1> t{k_format_q5_1, ggml_quantize_row_q5_1_ref, ggml_dequantize_row_q5_1};
    return quantize_rows(t, src, dst, n_rows, n_per_row, imatrix);
}

size_t ggml_quantize_q8_0(const float * src, void * dst, int64_t n_rows, int64_t n_per_row, const float * imatrix) {
    static constexpr legacy_type<block_q8_0> t{k_format_q8_0, ggml_quantize_row_q8_0_ref, ggml_dequantize_row_q8_0};
    return quantize_rows(t, src, dst, n_rows, n_per_row, imatrix);
}
