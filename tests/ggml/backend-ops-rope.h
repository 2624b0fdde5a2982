// tests/ggml/backend-ops-rope.h — double-precision reference of ROPE, including YaRN.
//
// Usage:
//   ggml_rope_params p; p.n_dims = 64; p.mode = GGML_ROPE_TYPE_NEOX;
//   bops::dt y = bops::ref_rope(a, pos, p);     // a [head_dim, n_head, n_tokens, 1], pos [n_tokens]
//   bops::dt z = bops::ref_rope(a, pos, p, ff); // with frequency factors ff (n_dims/2 values)
//
// RoPE rotates pair i (0 <= i < n_dims/2) of each head by the angle pos * theta_i with
// theta_i = freq_base^(-2i/n_dims) / ff_i. NORMAL pairs (x[2i], x[2i+1]); NEOX pairs
// (x[i], x[i+n_dims/2]); elements past n_dims pass unchanged.
//
// Frequency factors (Llama 3.1+ "rope_freqs.weight", ggml's rope_ext "freq_factors"): the
// converter turns rope_scaling {type llama3, factor, low/high_freq_factor} into one factor per
// pair (1 for high frequencies, `factor` for low ones, a smooth blend between), and the
// frequency is divided by it: theta_i = base^(-2i/n_dims) / ff_i. Everything below (freq_scale,
// YaRN) applies to that divided angle; the YaRN ramp still runs over the pair index.
//
// YaRN (Peng et al. 2023, "YaRN: Efficient Context Window Extension of Large Language Models"):
// with scale s = 1/freq_scale and original context L = n_ctx_orig, pair i has wavelength
// lambda_i = 2*pi/theta_i and r_i = L / lambda_i rotations over the original context. Pairs
// that rotate often (r > beta_fast) keep their angle (extrapolation), pairs that rotate
// rarely (r < beta_slow) are interpolated (theta_i / s), and a ramp gamma blends between:
//   h(theta_i) = (1 - gamma_i) * theta_i / s + gamma_i * theta_i.
// Solving r_i = beta for i gives i(beta) = n_dims * ln(L / (2*pi*beta)) / (2 ln freq_base).
// As in the GGUF-era engines whose models we load, the ramp runs linearly over the pair index
// between floor(i(beta_fast)) and ceil(i(beta_slow)) (clamped to [0, n_dims-1]), and
// ext_factor scales gamma (0: plain linear interpolation, 1: full YaRN). The attention
// temperature of the paper, sqrt(1/t) = 1 + 0.1 ln(s), multiplies both cos and sin (so q.k
// gets 1/t), together with attn_factor; it applies only when ext_factor != 0.
#pragma once

#include "backend-ops-reference.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <vector>

namespace bops {

// The pair index at which a pair makes n_rot rotations over the original context.
inline double rope_yarn_pair_index(double n_rot, int n_dims, int n_ctx_orig, double base) {
    return n_dims * std::log(n_ctx_orig / (n_rot * 2.0 * std::numbers::pi)) / (2.0 * std::log(base));
}

// The angle of pair i at position pos, and the factor on cos/sin.
// freq_factor: ff_i (1 without frequency factors).
inline void ref_rope_angle(const ggml_rope_params & p, double pos, int64_t i, double * theta, double * mscale,
                           double freq_factor = 1.0) {
    const double base = p.freq_base;
    const double theta_extrap = pos * std::pow(base, -2.0 * static_cast<double>(i) / p.n_dims) / freq_factor;
    const double theta_interp = p.freq_scale * theta_extrap;
    *theta = theta_interp;
    *mscale = p.attn_factor;
    if (p.ext_factor != 0.0f) {
        const double low = std::max(0.0, std::floor(rope_yarn_pair_index(p.beta_fast, p.n_dims, p.n_ctx_orig, base)));
        const double high = std::min(static_cast<double>(p.n_dims - 1),
                                     std::ceil(rope_yarn_pair_index(p.beta_slow, p.n_dims, p.n_ctx_orig, base)));
        const double y = (static_cast<double>(i) - low) / std::max(0.001, high - low);
        const double gamma = (1.0 - std::clamp(y, 0.0, 1.0)) * p.ext_factor;
        *theta = theta_interp * (1.0 - gamma) + theta_extrap * gamma;
        *mscale *= 1.0 + 0.1 * std::log(1.0 / p.freq_scale);
    }
}

// The factors a Llama 3.1 GGUF carries for rope_scaling {rope_type "llama3", factor,
// low_freq_factor, high_freq_factor, original_max_position_embeddings = n_ctx_orig}: with
// wavelength w_i = 2*pi / base^(-2i/n_dims), pairs with w_i < n_ctx_orig / high_freq_factor keep
// 1, pairs with w_i > n_ctx_orig / low_freq_factor get `factor`, and in between
// ff_i = 1 / ((1 - s) / factor + s) with s = (n_ctx_orig / w_i - low_freq_factor) /
// (high_freq_factor - low_freq_factor).
inline std::vector<double> rope_llama3_freq_factors(int n_dims, double base, double factor, double low_freq_factor,
                                                    double high_freq_factor, double n_ctx_orig) {
    std::vector<double> ff(static_cast<size_t>(n_dims / 2));
    for (size_t i = 0; i < ff.size(); ++i) {
        const double wavelen = 2.0 * std::numbers::pi / std::pow(base, -2.0 * static_cast<double>(i) / n_dims);
        if (wavelen < n_ctx_orig / high_freq_factor) {
            ff[i] = 1.0;
        } else if (wavelen > n_ctx_orig / low_freq_factor) {
            ff[i] = factor;
        } else {
            const double smooth = (n_ctx_orig / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor);
            ff[i] = 1.0 / ((1.0 - smooth) / factor + smooth);
        }
    }
    return ff;
}

// ff: the frequency factors (n_dims/2 values), or empty for none.
inline dt ref_rope(const dt & a, const dt & pos, const ggml_rope_params & p, const std::vector<double> & ff = {}) {
    dt out = a;
    const int64_t half = p.n_dims / 2;
    for (int64_t t = 0; t < a.ne[2]; ++t) {
        for (int64_t i = 0; i < half; ++i) {
            double theta, mscale;
            ref_rope_angle(p, pos.at(t), i, &theta, &mscale, ff.empty() ? 1.0 : ff.at(static_cast<size_t>(i)));
            const double c = std::cos(theta) * mscale, s = std::sin(theta) * mscale;
            const int64_t j0 = p.mode == GGML_ROPE_TYPE_NEOX ? i : 2 * i;
            const int64_t j1 = p.mode == GGML_ROPE_TYPE_NEOX ? i + half : 2 * i + 1;
            for (int64_t h = 0; h < a.ne[1]; ++h) {
                const double x0 = a.at(j0, h, t), x1 = a.at(j1, h, t);
                out.at(j0, h, t) = x0 * c - x1 * s;
                out.at(j1, h, t) = x0 * s + x1 * c;
            }
        }
    }
    return out;
}

}  // namespace bops
