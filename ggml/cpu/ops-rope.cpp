// ROPE: rotary position embedding with YaRN context extension.
//
// a [head_dim, n_head, n_tokens, ne3] (F32; any strides), pos I32 [n_tokens]. For pair i of
// the first n_dims elements of each head (i in [0, n_dims/2)):
//   normal mode: the pair is (x[2i], x[2i+1]);  NEOX mode: (x[i], x[i + n_dims/2]);
//   (x0, x1) -> mscale * (x0 cos t - x1 sin t,  x0 sin t + x1 cos t)
// and elements from n_dims on are copied unchanged.
//
// The angle t of pair i at position p (YaRN, Peng et al. 2023, "YaRN: Efficient Context Window
// Extension of Large Language Models"):
//   theta_i      = p * freq_base^(-2i / n_dims) / ff_i   the extrapolated (original) angle
//                  (ff_i: the frequency factors of src[2], Llama 3.1+ rope_freqs; 1 without)
//   interpolated = freq_scale * theta_i                  position interpolation (freq_scale = 1/s)
//   With ext_factor == 0: t = interpolated and mscale = attn_factor.
//   With ext_factor != 0: YaRN blends the two per dimension. A pair whose wavelength
//   2*pi / freq_i fits many times into the original context (n_ctx_orig) keeps its original
//   angle; one that fits few times is interpolated; between them a linear ramp. The pair index
//   at which a dimension completes r rotations over n_ctx_orig positions is
//     corr_dim(r) = n_dims * ln(n_ctx_orig / (2 pi r)) / (2 ln(freq_base)),
//   the ramp runs from low = max(0, floor(corr_dim(beta_fast))) to
//   high = min(n_dims - 1, ceil(corr_dim(beta_slow))):
//     ramp(i) = 1 - clamp((i - low) / max(0.001, high - low), 0, 1)   (1: extrapolate)
//     mix_i   = ramp(i) * ext_factor
//     t       = interpolated * (1 - mix_i) + theta_i * mix_i
//   and the magnitude is scaled by mscale = attn_factor * (1 + 0.1 ln(1 / freq_scale)).
//
// The YaRN ramp runs over the pair index i whatever the factors (they only change theta_i).
// Factors that are not finite and > 0 are a data error (*p.error, dst left unwritten).
//
// cos/sin are computed once per (token, pair), in double (angles reach 1e5 rad and beyond),
// and shared by every head of the token.
#include "cpu/ops-common.h"

#include <algorithm>
#include <cmath>
#include <cstring>

using namespace ggml_cpu_ops;

namespace {

struct rope_params {
    int n_dims = 0;
    bool neox = false;
    double freq_step = 1.0;   // freq_base^(-2 / n_dims): freq_{i+1} = freq_i * freq_step
    double freq_scale = 1.0;
    double ext_factor = 0.0;
    double corr_low = 0.0, corr_high = 0.0;
    double mscale = 1.0;
    const float * freq_factors = nullptr;  // n_dims/2 divisors of theta_i, or nullptr
};

double rope_corr_dim(int n_dims, int n_ctx_orig, double n_rot, double base) {
    return n_dims * std::log(double(n_ctx_orig) / (n_rot * 2.0 * M_PI)) / (2.0 * std::log(base));
}

rope_params rope_params_of(const ggml_tensor * dst) {
    rope_params r;
    const ggml_rope_params rp = ggml_get_rope_params(dst);
    r.n_dims = rp.n_dims;
    r.neox = (rp.mode & GGML_ROPE_TYPE_NEOX) != 0;
    const int n_ctx_orig = rp.n_ctx_orig;
    const double base = rp.freq_base;
    r.freq_scale = rp.freq_scale;
    r.ext_factor = rp.ext_factor;
    const double attn_factor = rp.attn_factor;
    const double beta_fast = rp.beta_fast;
    const double beta_slow = rp.beta_slow;
    r.freq_step = r.n_dims > 0 ? std::pow(base, -2.0 / r.n_dims) : 1.0;
    r.mscale = attn_factor;
    if (r.ext_factor != 0.0) {
        r.corr_low = std::max(0.0, std::floor(rope_corr_dim(r.n_dims, n_ctx_orig, beta_fast, base)));
        r.corr_high = std::min(double(r.n_dims - 1), std::ceil(rope_corr_dim(r.n_dims, n_ctx_orig, beta_slow, base)));
        r.mscale *= 1.0 + 0.1 * std::log(1.0 / r.freq_scale);
    }
    if (dst->src[2]) r.freq_factors = static_cast<const float *>(dst->src[2]->data);
    return r;
}

bool rope_freq_factors_valid(const rope_params & r) {
    if (!r.freq_factors) return true;
    for (int i = 0; i < r.n_dims / 2; ++i) {
        if (!(std::isfinite(r.freq_factors[i]) && r.freq_factors[i] > 0.0f)) return false;
    }
    return true;
}

// The rotation of every pair of one position, in the layout the row functions of ops-vec.h
// take: normal mode cs = c_0, s_0, c_1, s_1, ...; NEOX cs = c_0 .. c_{h-1}, s_0 .. s_{h-1};
// c_i = mscale cos(t_i), s_i = mscale sin(t_i).
void rope_cache(const rope_params & r, double pos, float * cs) {
    const int half = r.n_dims / 2;
    double freq = 1.0;
    for (int i = 0; i < half; ++i, freq *= r.freq_step) {
        const double theta = r.freq_factors ? pos * freq / double(r.freq_factors[i]) : pos * freq;
        double t = r.freq_scale * theta;
        if (r.ext_factor != 0.0) {
            const double y = (double(i) - r.corr_low) / std::max(0.001, r.corr_high - r.corr_low);
            const double mix = (1.0 - std::clamp(y, 0.0, 1.0)) * r.ext_factor;
            t = t * (1.0 - mix) + theta * mix;
        }
        const float c = float(r.mscale * std::cos(t)), s = float(r.mscale * std::sin(t));
        if (r.neox) {
            cs[i] = c;
            cs[half + i] = s;
        } else {
            cs[2 * i] = c;
            cs[2 * i + 1] = s;
        }
    }
}

// Rotates one head: x and y are ne0 floats, y may be x.
void rope_row(const rope_params & r, const ggml_cpu_vec_fns & vec, const float * cs, const float * x, float * y,
              int64_t ne0) {
    if (r.neox) {
        vec.rope_neox(x, cs, y, r.n_dims);
    } else {
        vec.rope_norm(x, cs, y, r.n_dims);
    }
    if (x != y) std::copy(x + r.n_dims, x + ne0, y + r.n_dims);
}

}  // namespace

void ggml_cpu_op_rope(const ggml_compute_params & p, ggml_tensor * dst) {
    const ggml_tensor * a = dst->src[0];
    const ggml_tensor * pos = dst->src[1];
    const rope_params r = rope_params_of(dst);
    const int64_t ne0 = a->ne[0], n_head = a->ne[1], ne2 = a->ne[2];
    GGML_ASSERT(r.n_dims >= 0 && r.n_dims % 2 == 0 && r.n_dims <= ne0);
    GGML_ASSERT(pos->type == GGML_TYPE_I32 && pos->ne[0] >= ne2);
    if (!rope_freq_factors_valid(r)) {
        report_error(p);
        return;
    }

    // Work units: (token, group of heads). Tokens alone when there are enough of them; the
    // cos/sin cache costs about as much as rotating ~50 heads, so heads are only split into
    // groups of at least 32.
    const int64_t n_tok = ne2 * a->ne[3];
    int64_t groups = 1;
    if (n_tok < p.nth) groups = std::clamp<int64_t>((p.nth + n_tok - 1) / n_tok, 1, std::max<int64_t>(n_head / 32, 1));
    const int64_t heads_per_group = (n_head + groups - 1) / groups;

    const ggml_cpu_convert_fns & cv = ggml_cpu_convert_for(p.isa);
    const ggml_cpu_vec_fns & vec = ggml_cpu_vec_for(p.isa);
    float * cs = ggml_cpu_thread_scratch(p);          // n_dims floats
    float * row_buf = cs + (r.n_dims + 15) / 16 * 16;  // ne0 floats, for rows that are not dense F32
    const bool x_direct = rows_dense_f32(a), y_direct = rows_dense_f32(dst);
    const char * pos_data = static_cast<const char *>(pos->data);

    ggml_cpu_parallel_for(p, n_tok * groups, 1, [&](int64_t u0, int64_t u1) {
        for (int64_t u = u0; u < u1; ++u) {
            const int64_t tok = u / groups, g = u % groups;
            const int64_t i2 = tok % ne2, i3 = tok / ne2;
            int32_t position;
            std::memcpy(&position, pos_data + size_t(i2) * pos->nb[0], 4);
            rope_cache(r, double(position), cs);
            const int64_t h1 = std::min(n_head, (g + 1) * heads_per_group);
            for (int64_t h = g * heads_per_group; h < h1; ++h) {
                const char * arow = row_ptr(a, h, i2, i3);
                char * drow = row_ptr(dst, h, i2, i3);
                const float * x = x_direct ? reinterpret_cast<const float *>(arow) : load_row_f32(a, arow, row_buf, cv);
                float * y = y_direct ? reinterpret_cast<float *>(drow) : row_buf;
                rope_row(r, vec, cs, x, y, ne0);
                if (!y_direct) store_row_f32(dst, drow, y, cv);
            }
        }
    });
}
