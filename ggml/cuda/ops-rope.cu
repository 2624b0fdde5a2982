// ROPE: rotary position embedding with YaRN and frequency factors, as ggml/cpu/ops-rope.cpp
// (which explains the math). a F32 [head_dim, n_head, n_tokens, ne3] (any strides), pos I32
// [n_tokens], optional factors F32 [n_dims/2] (contiguous); dst F32 (any strides, in place).
//
// Precision: positions reach 1e5 and beyond, where a float angle is off by ~0.01 rad. Each
// block first computes the rotation of every pair of its token into shared memory: the angle in
// double (theta = pos * base^(-2i/n_dims) / factor, the YaRN blend), reduced to [-pi, pi] in
// double, then cos/sin in float of the reduced angle (error ~2e-7 absolute, like rounding the
// double result to float). The heads then rotate with those floats.
// A factor that is not finite and > 0 sets the error flag and leaves dst unwritten (every block
// checks all factors, so none writes).
#include "ops-common.cuh"
#include "ops.cuh"

#include <algorithm>
#include <cmath>

namespace {

struct rope_args {
    int n_dims;
    bool neox;
    double log_freq_step;  // ln(freq_base^(-2 / n_dims)): freq_i = exp(i * log_freq_step)
    double freq_scale;
    double ext_factor;
    double corr_low, corr_high;
    double mscale;
    int heads_per_block;
};

double rope_corr_dim(int n_dims, int n_ctx_orig, double n_rot, double base) {
    return n_dims * std::log(double(n_ctx_orig) / (n_rot * 2.0 * M_PI)) / (2.0 * std::log(base));
}

rope_args rope_args_of(const ggml_tensor * dst) {
    const ggml_rope_params p = ggml_get_rope_params(dst);
    rope_args r;
    r.n_dims = p.n_dims;
    r.neox = (p.mode & GGML_ROPE_TYPE_NEOX) != 0;
    const double base = p.freq_base;
    r.log_freq_step = p.n_dims > 0 ? -2.0 * std::log(base) / p.n_dims : 0.0;
    r.freq_scale = p.freq_scale;
    r.ext_factor = p.ext_factor;
    r.mscale = p.attn_factor;
    r.corr_low = r.corr_high = 0.0;
    if (r.ext_factor != 0.0) {
        r.corr_low = std::max(0.0, std::floor(rope_corr_dim(p.n_dims, p.n_ctx_orig, p.beta_fast, base)));
        r.corr_high =
            std::min(double(p.n_dims - 1), std::ceil(rope_corr_dim(p.n_dims, p.n_ctx_orig, p.beta_slow, base)));
        r.mscale *= 1.0 + 0.1 * std::log(1.0 / r.freq_scale);
    }
    r.heads_per_block = 1;
    return r;
}

// cs[i] = mscale cos(t_i), cs[half + i] = mscale sin(t_i) for the pairs of one position.
// Returns false (in every thread) when a factor is invalid.
__device__ bool rope_cache(const rope_args & r, double pos, const float * ff, float * cs, int * bad) {
    const int half = r.n_dims / 2;
    if (threadIdx.x == 0) *bad = 0;
    __syncthreads();
    for (int i = threadIdx.x; i < half; i += blockDim.x) {
        double theta = pos * exp(double(i) * r.log_freq_step);
        if (ff) {
            const float f = ff[i];
            if (!(isfinite(f) && f > 0.0f)) *bad = 1;
            theta /= double(f);
        }
        double t = r.freq_scale * theta;
        if (r.ext_factor != 0.0) {
            const double y = (double(i) - r.corr_low) / fmax(0.001, r.corr_high - r.corr_low);
            const double mix = (1.0 - fmin(fmax(y, 0.0), 1.0)) * r.ext_factor;
            t = t * (1.0 - mix) + theta * mix;
        }
        const double two_pi = 6.283185307179586;
        const float tr = float(t - two_pi * rint(t / two_pi));
        float s, c;
        sincosf(tr, &s, &c);
        cs[i] = float(r.mscale * double(c));
        cs[half + i] = float(r.mscale * double(s));
    }
    __syncthreads();
    return *bad == 0;
}

// blockIdx.x: a group of heads_per_block heads; blockIdx.y (looping): token (i2, i3).
__global__ void k_rope(cuda_tensor a, cuda_tensor d, const int32_t * pos, int64_t pos_nb0, const float * ff,
                       rope_args r, int * error_flag) {
    extern __shared__ float cs[];  // n_dims floats
    __shared__ int bad;
    const int half = r.n_dims / 2;
    const int64_t ne0 = a.ne[0], n_head = a.ne[1], n_tok = a.ne[2] * a.ne[3];
    const int64_t h0 = int64_t(blockIdx.x) * r.heads_per_block;
    const int64_t nh = min(int64_t(r.heads_per_block), n_head - h0);
    const int64_t n_pass = ne0 - r.n_dims;
    for (int64_t tok = blockIdx.y; tok < n_tok; tok += gridDim.y) {
        const int64_t i2 = tok % a.ne[2], i3 = tok / a.ne[2];
        const int32_t p = *reinterpret_cast<const int32_t *>(reinterpret_cast<const char *>(pos) + i2 * pos_nb0);
        if (!rope_cache(r, double(p), ff, cs, &bad)) {
            if (threadIdx.x == 0 && blockIdx.x == 0) *reinterpret_cast<volatile int *>(error_flag) = 1;
            return;  // uniform across the block
        }
        for (int64_t k = threadIdx.x; k < nh * half; k += blockDim.x) {
            const int64_t h = h0 + k / half;
            const int i = int(k % half);
            const char * pa = cuda_row(a, h, i2, i3);
            char * pd = cuda_row(d, h, i2, i3);
            const int64_t j0 = r.neox ? i : 2 * i, j1 = r.neox ? i + half : 2 * i + 1;
            const float x0 = *reinterpret_cast<const float *>(pa + j0 * a.nb[0]);
            const float x1 = *reinterpret_cast<const float *>(pa + j1 * a.nb[0]);
            const float c = cs[i], s = cs[half + i];
            *reinterpret_cast<float *>(pd + j0 * d.nb[0]) = x0 * c - x1 * s;
            *reinterpret_cast<float *>(pd + j1 * d.nb[0]) = x0 * s + x1 * c;
        }
        for (int64_t k = threadIdx.x; k < nh * n_pass; k += blockDim.x) {
            const int64_t h = h0 + k / n_pass, j = r.n_dims + k % n_pass;
            *reinterpret_cast<float *>(cuda_row(d, h, i2, i3) + j * d.nb[0]) =
                *reinterpret_cast<const float *>(cuda_row(a, h, i2, i3) + j * a.nb[0]);
        }
        __syncthreads();  // cs is rewritten for the next token
    }
}

}  // namespace

bool ggml_cuda_rope_supported(const ggml_tensor * dst) {
    const ggml_tensor * a = dst->src[0];
    const ggml_tensor * pos = dst->src[1];
    const ggml_tensor * ff = dst->src[2];
    if (!a || !pos || a->type != GGML_TYPE_F32 || dst->type != GGML_TYPE_F32) return false;
    if (!ggml_are_same_shape(a, dst)) return false;
    if (!cuda_shape_ok(a) || pos->type != GGML_TYPE_I32 || pos->ne[0] < a->ne[2]) return false;
    const ggml_rope_params p = ggml_get_rope_params(dst);
    const int n_dims = p.n_dims, mode = p.mode;
    if (n_dims <= 0 || n_dims % 2 != 0 || n_dims > a->ne[0] || n_dims > 8192) return false;
    if (mode != GGML_ROPE_TYPE_NORMAL && mode != GGML_ROPE_TYPE_NEOX) return false;
    return !ff || (ff->type == GGML_TYPE_F32 && ggml_is_contiguous(ff) && ggml_nelements(ff) >= n_dims / 2);
}

void ggml_cuda_op_rope(ggml_cuda_context & ctx, ggml_tensor * dst) {
    const ggml_tensor * a = dst->src[0];
    const ggml_tensor * pos = dst->src[1];
    const ggml_tensor * ff = dst->src[2];
    if (ggml_nelements(a) == 0) return;
    if (!cuda_check_aligned(ctx, a) || !cuda_check_aligned(ctx, dst) || !cuda_check_aligned(ctx, pos) ||
        (ff && !cuda_check_aligned(ctx, ff))) {
        return;
    }
    rope_args r = rope_args_of(dst);
    // About 512 pairs per block: a decode step (one token) still spreads over several blocks.
    const int half = r.n_dims / 2;
    const int64_t n_head = a->ne[1];
    r.heads_per_block = int(std::clamp<int64_t>(512 / half, 1, n_head));
    const int64_t groups = ggml_cuda_ceil_div(n_head, r.heads_per_block);
    const int64_t n_tok = a->ne[2] * a->ne[3];
    const dim3 grid(unsigned(groups), unsigned(std::min<int64_t>(n_tok, 65535)));
    const int threads = half * r.heads_per_block >= 256 ? 256 : 128;
    k_rope<<<grid, threads, size_t(r.n_dims) * sizeof(float), ctx.stream>>>(
        cuda_tensor_of(a), cuda_tensor_of(dst), static_cast<const int32_t *>(pos->data), int64_t(pos->nb[0]),
        ff ? static_cast<const float *>(ff->data) : nullptr, r, ctx.error_flag);
    GGML_CUDA_CHECK(cudaGetLastError());
}
