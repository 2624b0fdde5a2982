// FLASH_ATTN_EXT on the GPU: fused attention with an online softmax, no score matrix.
//
// A block (4 warps) takes one kv head g, up to 4 rw (query, head) rows of the heads that read g
// (flash-attn-plan.h), and one split of the cells. Its q rows sit in shared memory (F32, never
// rounded); per tile of 32 cells (skipped when the mask hides every cell of it from every row
// of the block) the K and V rows are converted to F32 into shared memory (F16, F32, Q8_0: the
// floats of ggml's conversions) and each warp runs its rw rows, one cell per lane:
//   s    = scale * q . k  (soft-cap c > 0: c * tanh(q . k * scale / c)), + mask; -inf: excluded
//   m'   = max(m, max s);  alpha = exp(m - m');  p = exp(s - m')
//   l    = alpha l + sum p;  acc = alpha acc + sum_cells p v   (lane: elements lane + 32 j of v)
// One split: dst = acc / l (zeros when no cell was visible). Several (decode): each block leaves
// (m, l, acc) in scratch and a second kernel merges the splits of each (query, head):
//   M = max m_s;  out = sum_s exp(m_s - M) acc_s / sum_s exp(m_s - M) l_s.
#include "flash-attn-plan.h"
#include "ops.cuh"
#include "quants-common.cuh"

#include <cmath>

namespace {

struct fa_params {
    const char * q = nullptr;
    size_t q_nb0 = 0, q_nb1 = 0, q_nb2 = 0;
    const char * k = nullptr;
    const char * v = nullptr;
    size_t k_nb1 = 0, k_nb2 = 0, v_nb1 = 0, v_nb2 = 0;
    ggml_type k_type = GGML_TYPE_F16, v_type = GGML_TYPE_F16;
    bool k_vec = false, v_vec = false;  // rows aligned for 16-byte (F32) / 8-byte (F16) loads
    const char * mask = nullptr;
    size_t mask_nb1 = 0;
    bool mask_f16 = false;
    float * dst = nullptr;
    float * part = nullptr;  // n_splits > 1: [(query * n_head + head) * n_splits + split][2 + dv]
    int64_t d = 0, dv = 0, n_q = 0, n_head = 0, n_kv = 0, hpg = 1;
    int64_t rows = 0, row_blocks = 1, split_cells = 0, n_splits = 1;
    float scale = 1.0f;    // divided by the soft-cap when there is one
    float softcap = 0.0f;
};

__device__ __forceinline__ float fa_mask_at(const fa_params & p, int64_t i, int64_t c) {
    const char * row = p.mask + i * p.mask_nb1;
    return p.mask_f16 ? __half2float(reinterpret_cast<const __half *>(row)[c]) : reinterpret_cast<const float *>(row)[c];
}

// Elements e .. e + 3 of a K / V row as floats.
__device__ __forceinline__ float4 fa_load4(const char * row, ggml_type type, bool vec, int64_t e) {
    if (type == GGML_TYPE_F32) {
        const float * f = reinterpret_cast<const float *>(row) + e;
        return vec ? *reinterpret_cast<const float4 *>(f) : make_float4(f[0], f[1], f[2], f[3]);
    }
    if (type == GGML_TYPE_F16) {
        const __half * h = reinterpret_cast<const __half *>(row) + e;
        if (vec) {
            const uint2 u = *reinterpret_cast<const uint2 *>(h);
            const float2 a = __half22float2(*reinterpret_cast<const __half2 *>(&u.x));
            const float2 b = __half22float2(*reinterpret_cast<const __half2 *>(&u.y));
            return make_float4(a.x, a.y, b.x, b.y);
        }
        return make_float4(__half2float(h[0]), __half2float(h[1]), __half2float(h[2]), __half2float(h[3]));
    }
    // Q8_0: x = float(q) * d, as ggml's dequantization
    const uint8_t * blk = reinterpret_cast<const uint8_t *>(row) + (e / 32) * 34;
    const float d = qd_fp16_to_f32(qd_u16(blk));
    const uint32_t q = qd_u32(blk + 2 + e % 32);
    return make_float4(__fmul_rn(float(int8_t(q)), d), __fmul_rn(float(int8_t(q >> 8)), d),
                       __fmul_rn(float(int8_t(q >> 16)), d), __fmul_rn(float(int8_t(q >> 24)), d));
}

// Rows of cells c0 .. c0 + 31 (kv head base) as F32 into out (ld floats per row); zeros past c_end.
__device__ __forceinline__ void fa_load_tile(const char * base, size_t nb1, ggml_type type, bool vec, int64_t c0,
                                             int64_t c_end, int64_t n, int64_t ld, float * out) {
    const int64_t n4 = n / 4;
    for (int64_t u = threadIdx.x; u < fa_tile * n4; u += fa_threads) {
        const int64_t r = u / n4, e = 4 * (u % n4);
        float4 x = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        if (c0 + r < c_end) x = fa_load4(base + (c0 + r) * nb1, type, vec, e);
        *reinterpret_cast<float4 *>(out + r * ld + e) = x;
    }
}

template <int RW, int NV>
__device__ __forceinline__ void fa_finish(const fa_params & p, int64_t g, int64_t row0, const float (&m)[RW],
                                          const float (&l)[RW], const float (&acc)[RW][NV]) {
    const int lane = threadIdx.x % 32;
#pragma unroll
    for (int j = 0; j < RW; ++j) {
        if (row0 + j >= p.rows) break;
        const int64_t i = (row0 + j) / p.hpg, h = g * p.hpg + (row0 + j) % p.hpg;
        const int64_t pair = i * p.n_head + h;
        if (p.n_splits == 1) {
            float * out = p.dst + pair * p.dv;
            const float inv = l[j] > 0.0f ? 1.0f / l[j] : 0.0f;
#pragma unroll
            for (int t = 0; t < NV; ++t) {
                if (lane + 32 * t < p.dv) out[lane + 32 * t] = acc[j][t] * inv;
            }
        } else {
            float * out = p.part + (pair * p.n_splits + blockIdx.y) * (p.dv + 2);
            if (lane == 0) {
                out[0] = m[j];
                out[1] = l[j];
            }
#pragma unroll
            for (int t = 0; t < NV; ++t) {
                if (lane + 32 * t < p.dv) out[2 + lane + 32 * t] = acc[j][t];
            }
        }
    }
}

// The block's q rows (rows_per_block of them from r_base; zeros past the last) into Qs.
__device__ __forceinline__ void fa_load_q(const fa_params & p, int64_t g, int64_t r_base, int rows_per_block, float * Qs) {
    for (int64_t idx = threadIdx.x; idx < rows_per_block * p.d; idx += fa_threads) {
        const int64_t r = r_base + idx / p.d, e = idx % p.d;
        float x = 0.0f;
        if (r < p.rows) {
            const int64_t i = r / p.hpg, h = g * p.hpg + r % p.hpg;
            x = *reinterpret_cast<const float *>(p.q + e * p.q_nb0 + i * p.q_nb1 + h * p.q_nb2);
        }
        Qs[idx] = x;
    }
}

// The scores of the warp's rows for the lane's cell (q . k, four partial sums per row for
// shorter rounding chains), then scaled, soft-capped and masked; -inf past c_end.
template <int RW>
__device__ __forceinline__ void fa_scores(const fa_params & p, const float * Ks, const float * Qs_warp, int64_t row0,
                                          int64_t cell, int64_t c_end, float (&s)[RW]) {
    const int lane = threadIdx.x % 32;
    float4 s4[RW];
#pragma unroll
    for (int j = 0; j < RW; ++j) s4[j] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    for (int64_t e = 0; e < p.d; e += 4) {
        const float4 kv = *reinterpret_cast<const float4 *>(Ks + lane * (p.d + 4) + e);
#pragma unroll
        for (int j = 0; j < RW; ++j) {
            const float4 qv = *reinterpret_cast<const float4 *>(Qs_warp + j * p.d + e);
            s4[j].x = fmaf(qv.x, kv.x, s4[j].x);
            s4[j].y = fmaf(qv.y, kv.y, s4[j].y);
            s4[j].z = fmaf(qv.z, kv.z, s4[j].z);
            s4[j].w = fmaf(qv.w, kv.w, s4[j].w);
        }
    }
#pragma unroll
    for (int j = 0; j < RW; ++j) {
        s[j] = -INFINITY;
        if (cell >= c_end || row0 + j >= p.rows) continue;
        const float x = (s4[j].x + s4[j].y) + (s4[j].z + s4[j].w);
        s[j] = p.softcap > 0.0f ? p.softcap * tanhf(x * p.scale) : x * p.scale;
        if (p.mask) s[j] += fa_mask_at(p, (row0 + j) / p.hpg, cell);
    }
}

// Online softmax over one tile: new maxima, rescaled sums and accumulators; s becomes the
// cells' weights (0 for excluded cells).
template <int RW, int NV>
__device__ __forceinline__ void fa_softmax(const fa_params & p, int64_t row0, float (&s)[RW], float (&m)[RW],
                                           float (&l)[RW], float (&acc)[RW][NV]) {
#pragma unroll
    for (int j = 0; j < RW; ++j) {
        const float x = s[j];
        s[j] = 0.0f;
        if (row0 + j >= p.rows) continue;  // the same for the whole warp
        float mt = x;
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) mt = fmaxf(mt, __shfl_xor_sync(0xFFFFFFFFu, mt, o));
        const float m_new = fmaxf(m[j], mt);
        if (m_new == -INFINITY) continue;  // nothing visible to this row yet
        const float alpha = m[j] == -INFINITY ? 0.0f : expf(m[j] - m_new);
        s[j] = x == -INFINITY ? 0.0f : expf(x - m_new);
        float sum = s[j];
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) sum += __shfl_xor_sync(0xFFFFFFFFu, sum, o);
        l[j] = l[j] * alpha + sum;
        m[j] = m_new;
#pragma unroll
        for (int t = 0; t < NV; ++t) acc[j][t] *= alpha;
    }
}

// acc += sum over the tile's cells of weight * v (lane: elements lane + 32 t of v).
template <int RW, int NV>
__device__ __forceinline__ void fa_accumulate(const fa_params & p, const float * Vs, const float (&w)[RW],
                                              float (&acc)[RW][NV]) {
    const int lane = threadIdx.x % 32;
    for (int c = 0; c < fa_tile; ++c) {
        const float * vr = Vs + c * p.dv;
#pragma unroll
        for (int j = 0; j < RW; ++j) {
            const float pc = __shfl_sync(0xFFFFFFFFu, w[j], c);
            if (pc == 0.0f) continue;  // the same for the whole warp
#pragma unroll
            for (int t = 0; t < NV; ++t) {
                if (lane + 32 * t < p.dv) acc[j][t] = fmaf(pc, vr[lane + 32 * t], acc[j][t]);
            }
        }
    }
}

// Whether some row of the warp sees the lane's cell (the block skips tiles nobody sees).
template <int RW>
__device__ __forceinline__ bool fa_visible(const fa_params & p, int64_t row0, int64_t cell, int64_t c_end) {
    bool vis = false;
#pragma unroll
    for (int j = 0; j < RW; ++j) {
        if (row0 + j < p.rows && cell < c_end) vis = vis || !p.mask || fa_mask_at(p, (row0 + j) / p.hpg, cell) != -INFINITY;
    }
    return vis;
}

template <int RW, int NV>
__global__ void __launch_bounds__(fa_threads) fa_kernel(const fa_params p) {
    extern __shared__ __align__(16) float fa_smem[];
    constexpr int rows_per_block = (fa_threads / 32) * RW;
    float * Ks = fa_smem;                    // [fa_tile][d + 4]
    float * Vs = Ks + fa_tile * (p.d + 4);   // [fa_tile][dv]
    float * Qs = Vs + fa_tile * p.dv;        // [rows_per_block][d]
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const int64_t g = blockIdx.x / p.row_blocks;
    const int64_t r_base = (blockIdx.x % p.row_blocks) * rows_per_block;
    const int64_t row0 = r_base + int64_t(warp) * RW;  // this warp's first row
    fa_load_q(p, g, r_base, rows_per_block, Qs);
    const char * kb = p.k + g * p.k_nb2;
    const char * vb = p.v + g * p.v_nb2;
    const int64_t c_begin = int64_t(blockIdx.y) * p.split_cells;
    const int64_t c_end = c_begin + p.split_cells < p.n_kv ? c_begin + p.split_cells : p.n_kv;
    float m[RW], l[RW], acc[RW][NV];
#pragma unroll
    for (int j = 0; j < RW; ++j) {
        m[j] = -INFINITY;
        l[j] = 0.0f;
#pragma unroll
        for (int t = 0; t < NV; ++t) acc[j][t] = 0.0f;
    }
    __syncthreads();
    for (int64_t c0 = c_begin; c0 < c_end; c0 += fa_tile) {
        const int64_t cell = c0 + lane;
        if (!__syncthreads_or(fa_visible<RW>(p, row0, cell, c_end))) continue;
        fa_load_tile(kb, p.k_nb1, p.k_type, p.k_vec, c0, c_end, p.d, p.d + 4, Ks);
        fa_load_tile(vb, p.v_nb1, p.v_type, p.v_vec, c0, c_end, p.dv, p.dv, Vs);
        __syncthreads();
        float s[RW];
        fa_scores<RW>(p, Ks, Qs + warp * RW * p.d, row0, cell, c_end, s);
        fa_softmax<RW, NV>(p, row0, s, m, l, acc);
        fa_accumulate<RW, NV>(p, Vs, s, acc);
        __syncthreads();
    }
    fa_finish<RW, NV>(p, g, row0, m, l, acc);
}

__global__ void __launch_bounds__(fa_threads) fa_merge_kernel(const float * part, float * dst, int64_t n_splits, int64_t dv) {
    const int64_t pair = blockIdx.x;
    const float * pp = part + pair * n_splits * (dv + 2);
    float big = -INFINITY;
    for (int64_t s = 0; s < n_splits; ++s) big = fmaxf(big, pp[s * (dv + 2)]);
    for (int64_t e = threadIdx.x; e < dv; e += fa_threads) {
        float l = 0.0f, o = 0.0f;
        if (big != -INFINITY) {
            for (int64_t s = 0; s < n_splits; ++s) {
                const float ms = pp[s * (dv + 2)];
                if (ms == -INFINITY) continue;
                const float w = expf(ms - big);
                l += w * pp[s * (dv + 2) + 1];
                o += w * pp[s * (dv + 2) + 2 + e];
            }
        }
        dst[pair * dv + e] = l > 0.0f ? o / l : 0.0f;
    }
}

template <int RW, int NV> bool fa_launch_rw_nv(const fa_params & p, dim3 grid, size_t smem, cudaStream_t stream) {
    if (smem > 48 * 1024 &&
        !GGML_CUDA_CHECK(cudaFuncSetAttribute(fa_kernel<RW, NV>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)))) {
        return false;
    }
    fa_kernel<RW, NV><<<grid, fa_threads, smem, stream>>>(p);
    return GGML_CUDA_CHECK(cudaGetLastError());
}

template <int RW> bool fa_launch_rw(const fa_params & p, int nv, dim3 grid, size_t smem, cudaStream_t stream) {
    switch (nv) {
        case 2: return fa_launch_rw_nv<RW, 2>(p, grid, smem, stream);
        case 4: return fa_launch_rw_nv<RW, 4>(p, grid, smem, stream);
        default: return fa_launch_rw_nv<RW, 8>(p, grid, smem, stream);
    }
}

bool fa_kv_supported(const ggml_tensor * t) {
    if (t->type != GGML_TYPE_F32 && t->type != GGML_TYPE_F16 && t->type != GGML_TYPE_Q8_0) return false;
    const size_t es = t->type == GGML_TYPE_Q8_0 ? 2 : ggml_type_size(t->type);
    if (t->nb[0] != ggml_type_size(t->type) || t->ne[3] != 1 || t->nb[1] % es != 0 || t->nb[2] % es != 0) return false;
    return t->type != GGML_TYPE_Q8_0 || t->ne[0] % 32 == 0;
}

// Element alignment of the data (strides are checked by the supported() function).
bool fa_data_aligned(const ggml_tensor * dst) {
    for (int i = 0; i < 4; ++i) {
        const ggml_tensor * t = i == 0 ? dst : dst->src[i - 1];
        const size_t es = t->type == GGML_TYPE_Q8_0 ? 2 : ggml_type_size(t->type);
        if (reinterpret_cast<uintptr_t>(t->data) % es != 0) return false;
    }
    const ggml_tensor * mask = dst->src[3];
    return !mask || reinterpret_cast<uintptr_t>(mask->data) % ggml_type_size(mask->type) == 0;
}

bool fa_kv_vec(const ggml_tensor * t) {
    const size_t a = t->type == GGML_TYPE_F32 ? 16 : 8;
    return (reinterpret_cast<uintptr_t>(t->data) | t->nb[1] | t->nb[2]) % a == 0;
}

}  // namespace

bool ggml_cuda_flash_attn_supported(const ggml_tensor * dst) {
    const ggml_tensor * q = dst->src[0];
    const ggml_tensor * k = dst->src[1];
    const ggml_tensor * v = dst->src[2];
    const ggml_tensor * mask = dst->src[3];
    if (!q || !k || !v || dst->type != GGML_TYPE_F32 || q->type != GGML_TYPE_F32 || !ggml_is_contiguous(dst)) return false;
    if (!fa_kv_supported(k) || !fa_kv_supported(v) || !fa_head_sizes_supported(q->ne[0], v->ne[0])) return false;
    if (q->ne[0] != k->ne[0] || q->ne[3] != 1 || k->ne[1] != v->ne[1] || k->ne[2] != v->ne[2] || k->ne[2] <= 0) return false;
    if (q->ne[2] % k->ne[2] != 0 || (q->nb[0] | q->nb[1] | q->nb[2]) % sizeof(float) != 0) return false;
    if (dst->ne[0] != v->ne[0] || dst->ne[1] != q->ne[2] || dst->ne[2] != q->ne[1] || dst->ne[3] != 1) return false;
    if (mask) {
        if (mask->type != GGML_TYPE_F32 && mask->type != GGML_TYPE_F16) return false;
        if (mask->nb[0] != ggml_type_size(mask->type) || mask->ne[0] != k->ne[1] || mask->ne[1] < q->ne[1]) return false;
        if (mask->nb[1] % ggml_type_size(mask->type) != 0) return false;
    }
    return true;
}

void ggml_cuda_op_flash_attn_ext(ggml_cuda_context & ctx, ggml_tensor * dst) {
    const ggml_tensor * q = dst->src[0];
    const ggml_tensor * k = dst->src[1];
    const ggml_tensor * v = dst->src[2];
    const ggml_tensor * mask = dst->src[3];
    if (ggml_nelements(dst) == 0) return;
    if (!fa_data_aligned(dst)) {
        ggml_cuda_fail(ctx, "flash_attn_ext: data not aligned to the element size");
        return;
    }
    fa_params p;
    p.q = static_cast<const char *>(q->data);
    p.q_nb0 = q->nb[0];
    p.q_nb1 = q->nb[1];
    p.q_nb2 = q->nb[2];
    p.k = static_cast<const char *>(k->data);
    p.v = static_cast<const char *>(v->data);
    p.k_nb1 = k->nb[1];
    p.k_nb2 = k->nb[2];
    p.v_nb1 = v->nb[1];
    p.v_nb2 = v->nb[2];
    p.k_type = k->type;
    p.v_type = v->type;
    p.k_vec = fa_kv_vec(k);
    p.v_vec = fa_kv_vec(v);
    if (mask) {
        p.mask = static_cast<const char *>(mask->data);
        p.mask_nb1 = mask->nb[1];
        p.mask_f16 = mask->type == GGML_TYPE_F16;
    }
    p.dst = static_cast<float *>(dst->data);
    p.d = q->ne[0];
    p.dv = v->ne[0];
    p.n_q = q->ne[1];
    p.n_head = q->ne[2];
    p.n_kv = k->ne[1];
    p.hpg = q->ne[2] / k->ne[2];
    p.softcap = ggml_get_flash_attn_softcap(dst);
    p.scale = ggml_get_flash_attn_scale(dst);
    if (p.softcap > 0.0f) p.scale /= p.softcap;
    const fa_plan pl = fa_make_plan(p.d, p.dv, p.n_q, p.n_head, k->ne[2], p.n_kv, ctx.sm_count);
    p.rows = pl.rows;
    p.row_blocks = pl.row_blocks;
    p.split_cells = pl.split_cells;
    p.n_splits = pl.n_splits;
    if (pl.n_splits > 1) {
        p.part = static_cast<float *>(ggml_cuda_scratch(ctx, pl.partial_floats * sizeof(float), 0));
        if (!p.part) return;
    }
    const dim3 grid(unsigned(k->ne[2] * pl.row_blocks), unsigned(pl.n_splits));
    bool ok = false;
    switch (pl.rw) {
        case 1: ok = fa_launch_rw<1>(p, pl.nv, grid, pl.smem_bytes, ctx.stream); break;
        case 2: ok = fa_launch_rw<2>(p, pl.nv, grid, pl.smem_bytes, ctx.stream); break;
        default: ok = fa_launch_rw<4>(p, pl.nv, grid, pl.smem_bytes, ctx.stream); break;
    }
    if (!ok || pl.n_splits == 1) return;
    fa_merge_kernel<<<unsigned(p.n_q * p.n_head), fa_threads, 0, ctx.stream>>>(p.part, p.dst, pl.n_splits, p.dv);
    GGML_CUDA_CHECK(cudaGetLastError());
}
