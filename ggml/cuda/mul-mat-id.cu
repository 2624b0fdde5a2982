// MUL_MAT_ID on the GPU (mixture of experts): dst[:, i, t] = as[:, :, ids[i, t]] @ b[:, i % n_b, t].
//
// Everything stays on the device (no host synchronization: the graph can be captured):
//   - one token (decode): each (slot, token) pair is a batch of the mat-vec kernels that reads
//     its expert id itself (mode moe_pairs): only the chosen experts' weights are read;
//   - more tokens: one block groups the pairs by expert (mul-mat-id-group.cuh: counts, offsets,
//     a permutation, the list of chosen experts, GEMM tiles), then
//       up to moe_mat_vec_max_tokens tokens (and F32 / BF16 experts, see moe_use_mat_vec): the
//       mat-vec kernels with one batch per chosen expert and its pairs as columns (mode
//       moe_grouped): each chosen expert read once per pass of 8 columns;
//       more: the pairs' activations gathered in expert order as F16 rows, then the grouped
//       tensor-core GEMM (mul-mat-id-gemm.cu) over (expert, 64 pairs) tiles.
// An id out of range never leads to a read or write out of bounds: nothing is written to dst
// (every block finds it, see mmv_batch_of and moe_plan_groups) and *ctx.error_flag is set, so
// graph_compute fails with dst as it was, as on the CPU backend.
#include "mul-mat-id.cuh"
#include "mul-mat-plan.h"
#include "mul-mat-vec.cuh"
#include "mul-mat.cuh"
#include "ops.cuh"

#include <algorithm>
#include <climits>

namespace {

constexpr int moe_group_threads = 1024;
constexpr int64_t moe_max_experts = 2048;  // the grouping keeps 3 ints per expert in shared memory

struct moe_group_args {
    const int32_t * ids = nullptr;
    int64_t ids_ld = 0;
    int n_used = 1;
    int64_t n_pairs = 0;
    int n_expert = 0;
    int tile_cols = 0;  // 0: no GEMM tiles
    char * base = nullptr;
    moe_group_layout L;
    float * dst = nullptr;
    int64_t m = 0;
    int * error_flag = nullptr;
};

template <typename T> __device__ __forceinline__ T * moe_at(const moe_group_args & a, size_t off) {
    return reinterpret_cast<T *>(a.base + off);
}

__global__ void __launch_bounds__(moe_group_threads) moe_group_kernel(const moe_group_args a) {
    extern __shared__ int32_t moe_smem[];
    int32_t * s_count = moe_smem;
    int32_t * s_fill = moe_smem + (a.n_expert + 1);
    int32_t * s_offset = moe_smem + 2 * (a.n_expert + 1);
    for (int e = threadIdx.x; e <= a.n_expert; e += blockDim.x) s_count[e] = s_fill[e] = 0;
    __syncthreads();
    for (int64_t p = threadIdx.x; p < a.n_pairs; p += blockDim.x) {
        atomicAdd(&s_count[moe_bucket(a.ids, a.ids_ld, a.n_used, a.n_expert, p)], 1);
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        const bool valid = moe_plan_groups(s_count, a.n_expert, a.tile_cols, s_offset, moe_at<int32_t>(a, a.L.active),
                                           moe_at<int32_t>(a, a.L.n_active),
                                           a.tile_cols > 0 ? moe_at<moe_tile>(a, a.L.tiles) : nullptr,
                                           moe_at<int32_t>(a, a.L.n_tiles));
        if (!valid && a.error_flag) atomicExch(a.error_flag, 1);
    }
    __syncthreads();
    int32_t * perm = moe_at<int32_t>(a, a.L.perm);
    for (int e = threadIdx.x; e <= a.n_expert; e += blockDim.x) {
        moe_at<int32_t>(a, a.L.count)[e] = s_count[e];
        moe_at<int32_t>(a, a.L.offset)[e] = s_offset[e];
    }
    for (int64_t p = threadIdx.x; p < a.n_pairs; p += blockDim.x) {
        const int e = moe_bucket(a.ids, a.ids_ld, a.n_used, a.n_expert, p);
        perm[s_offset[e] + atomicAdd(&s_fill[e], 1)] = int32_t(p);
    }
}

// K = 0: zeros in dst, unless an id is out of range (then the error flag, and dst as it was).
__global__ void __launch_bounds__(256) moe_zero_kernel(const int32_t * ids, int64_t ids_ld, int n_used, int64_t n_pairs,
                                                       int n_expert, float * dst, int64_t n, int * error_flag) {
    bool bad = false;
    for (int64_t p = threadIdx.x; p < n_pairs; p += blockDim.x) bad = bad || moe_bucket(ids, ids_ld, n_used, n_expert, p) == n_expert;
    if (__syncthreads_or(bad)) {
        if (threadIdx.x == 0 && error_flag) atomicExch(error_flag, 1);
        return;
    }
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) dst[i] = 0.0f;
}

// X[j] = F16 activations of pair perm[j], for the valid pairs (the first *n_valid of perm;
// none when the grouping made no tile).
__global__ void __launch_bounds__(256) moe_gather_kernel(const mm_rows_src s, const int32_t * perm, const int32_t * n_valid,
                                                         const int32_t * n_tiles, int n_used, int n_b, __half * X) {
    const int64_t total = *n_tiles > 0 ? int64_t(*n_valid) * s.k : 0;
    for (int64_t i = int64_t(blockIdx.x) * 256 + threadIdx.x; i < total; i += int64_t(gridDim.x) * 256) {
        const int64_t j = i / s.k, e = i % s.k;
        const int64_t pair = perm[j];
        const int64_t row = pair % n_used % n_b + pair / n_used * n_b;
        X[i] = mm_half_sat(*mm_rows_elem(s, row, e));
    }
}

struct moe_shape {
    int64_t k = 0, m = 0, n_expert = 0, n_used = 0, n_t = 0, n_b = 0, n_pairs = 0;
};

moe_shape moe_shape_of(const ggml_tensor * dst) {
    moe_shape s;
    s.k = dst->src[0]->ne[0];
    s.m = dst->src[0]->ne[1];
    s.n_expert = dst->src[0]->ne[2];
    s.n_used = dst->src[2]->ne[0];
    s.n_t = dst->src[2]->ne[1];
    s.n_b = dst->src[1]->ne[1];
    s.n_pairs = s.n_used * s.n_t;
    return s;
}

// Runs the grouping kernel; returns the arrays' base (nullptr on failure).
char * moe_group(ggml_cuda_context & ctx, const ggml_tensor * dst, const moe_shape & sh, int tile_cols,
                 moe_group_layout * L) {
    const int64_t max_tiles = tile_cols > 0 ? moe_max_tiles(sh.n_pairs, sh.n_expert, tile_cols) : 0;
    *L = moe_group_layout_of(sh.n_expert, sh.n_pairs, max_tiles);
    char * base = static_cast<char *>(ggml_cuda_scratch(ctx, L->bytes, 2));
    if (!base) return nullptr;
    moe_group_args a;
    a.ids = static_cast<const int32_t *>(dst->src[2]->data);
    a.ids_ld = int64_t(dst->src[2]->nb[1] / sizeof(int32_t));
    a.n_used = int(sh.n_used);
    a.n_pairs = sh.n_pairs;
    a.n_expert = int(sh.n_expert);
    a.tile_cols = tile_cols;
    a.base = base;
    a.L = *L;
    a.dst = static_cast<float *>(dst->data);
    a.m = sh.m;
    a.error_flag = ctx.error_flag;
    const size_t smem = size_t(3 * (sh.n_expert + 1)) * sizeof(int32_t);
    moe_group_kernel<<<1, moe_group_threads, smem, ctx.stream>>>(a);
    return GGML_CUDA_CHECK(cudaGetLastError()) ? base : nullptr;
}

mmv_params moe_mat_vec_params(ggml_cuda_context & ctx, const ggml_tensor * dst, const moe_shape & sh) {
    const ggml_tensor * as = dst->src[0];
    mmv_params p;
    p.w = static_cast<const uint8_t *>(as->data);
    p.w_nb1 = as->nb[1];
    p.w_nb2 = as->nb[2];
    p.k = sh.k;
    p.m = sh.m;
    p.dst = static_cast<float *>(dst->data);
    p.ids = static_cast<const int32_t *>(dst->src[2]->data);
    p.ids_ld = int64_t(dst->src[2]->nb[1] / sizeof(int32_t));
    p.n_used = int(sh.n_used);
    p.n_b = int(sh.n_b);
    p.n_expert = sh.n_expert;
    p.error_flag = ctx.error_flag;
    return p;
}

bool moe_launch_mat_vec(ggml_type t, const mmv_params & p, int64_t n_cols, cudaStream_t stream) {
    return mm_type_geom_of(t).quantized ? mmvq_launch(t, p, n_cols, stream) : mmvf_launch(t, p, n_cols, stream);
}

// Few tokens: the mat-vec kernels, per pair (one token) or per chosen expert.
void moe_mat_vec(ggml_cuda_context & ctx, ggml_tensor * dst, const moe_shape & sh) {
    const ggml_tensor * as = dst->src[0];
    mmv_params p = moe_mat_vec_params(ctx, dst, sh);
    if (sh.n_t == 1) {
        p.mode = mmv_mode::moe_pairs;
        p.n_batches = sh.n_pairs;
    } else {
        moe_group_layout L;
        char * g = moe_group(ctx, dst, sh, 0, &L);
        if (!g) return;
        p.mode = mmv_mode::moe_grouped;
        p.n_batches = std::min(sh.n_expert, sh.n_pairs);
        p.grp_count = reinterpret_cast<const int32_t *>(g + L.count);
        p.grp_offset = reinterpret_cast<const int32_t *>(g + L.offset);
        p.grp_perm = reinterpret_cast<const int32_t *>(g + L.perm);
        p.grp_active = reinterpret_cast<const int32_t *>(g + L.active);
        p.grp_n_active = reinterpret_cast<const int32_t *>(g + L.n_active);
    }
    const int64_t n_cols = std::min(sh.n_t, sh.n_pairs);
    if (!mm_mat_vec_activations(ctx, as, dst->src[1], p, n_cols)) return;
    moe_launch_mat_vec(as->type, p, n_cols, ctx.stream);
    GGML_CUDA_CHECK(cudaGetLastError());
}

// Many tokens: grouping, gathered F16 activations, the grouped GEMM.
void moe_gemm(ggml_cuda_context & ctx, ggml_tensor * dst, const moe_shape & sh) {
    const ggml_tensor * as = dst->src[0];
    moe_group_layout L;
    char * g = moe_group(ctx, dst, sh, moe_gemm_tile_cols, &L);
    if (!g) return;
    __half * X = static_cast<__half *>(ggml_cuda_scratch(ctx, size_t(sh.n_pairs * sh.k) * sizeof(__half), 1));
    if (!X) return;
    const mm_rows_src s = mm_rows_src_of(dst->src[1]);
    const int32_t * perm = reinterpret_cast<const int32_t *>(g + L.perm);
    const int32_t * n_valid = reinterpret_cast<const int32_t *>(g + L.offset) + sh.n_expert;
    const int64_t blocks = std::min<int64_t>((sh.n_pairs * sh.k + 255) / 256, int64_t(1) << 30);
    const int32_t * n_tiles = reinterpret_cast<const int32_t *>(g + L.n_tiles);
    moe_gather_kernel<<<unsigned(blocks), 256, 0, ctx.stream>>>(s, perm, n_valid, n_tiles, int(sh.n_used), int(sh.n_b), X);
    if (!GGML_CUDA_CHECK(cudaGetLastError())) return;
    moe_gemm_params p;
    p.w = static_cast<const uint8_t *>(as->data);
    p.w_nb1 = as->nb[1];
    p.w_nb2 = as->nb[2];
    p.k = sh.k;
    p.m = sh.m;
    p.x = X;
    p.perm = perm;
    p.tiles = reinterpret_cast<const moe_tile *>(g + L.tiles);
    p.n_tiles = n_tiles;
    p.dst = static_cast<float *>(dst->data);
    moe_gemm_launch(as->type, p, moe_max_tiles(sh.n_pairs, sh.n_expert, moe_gemm_tile_cols), ctx.stream);
    GGML_CUDA_CHECK(cudaGetLastError());
}

}  // namespace

bool ggml_cuda_mul_mat_id_supported(const ggml_tensor * dst) {
    const ggml_tensor * as = dst->src[0];
    const ggml_tensor * b = dst->src[1];
    const ggml_tensor * ids = dst->src[2];
    if (!as || !b || !ids || dst->type != GGML_TYPE_F32 || b->type != GGML_TYPE_F32 || ids->type != GGML_TYPE_I32) {
        return false;
    }
    if (!mm_weights_supported(as) || as->ne[3] != 1 || as->ne[2] < 1 || as->ne[2] > moe_max_experts) return false;
    if (b->ne[0] != as->ne[0] || b->ne[3] != 1) return false;
    for (int i = 0; i < GGML_MAX_DIMS; ++i) {
        if (b->nb[i] % sizeof(float) != 0) return false;
    }
    if (ids->nb[0] != sizeof(int32_t) || ids->nb[1] % sizeof(int32_t) != 0 || ids->ne[2] != 1 || ids->ne[3] != 1) {
        return false;
    }
    if (b->ne[2] != ids->ne[1] || (b->ne[1] != 1 && b->ne[1] != ids->ne[0]) || ids->ne[0] < 1) return false;
    if (dst->ne[0] != as->ne[1] || dst->ne[1] != ids->ne[0] || dst->ne[2] != ids->ne[1] || dst->ne[3] != 1) {
        return false;
    }
    return ggml_is_contiguous(dst) && ids->ne[0] * ids->ne[1] < INT_MAX && as->ne[0] < INT_MAX && as->ne[1] < INT_MAX;
}

void ggml_cuda_op_mul_mat_id(ggml_cuda_context & ctx, ggml_tensor * dst) {
    if (ggml_nelements(dst) == 0) return;
    const moe_shape sh = moe_shape_of(dst);
    if (!mm_data_aligned(dst->src[0], dst->src[1], dst) || reinterpret_cast<uintptr_t>(dst->src[2]->data) % 4 != 0) {
        ggml_cuda_fail(ctx, "mul_mat_id: data not aligned to the element size");
        return;
    }
    if (sh.k == 0) {
        const ggml_tensor * ids = dst->src[2];
        moe_zero_kernel<<<1, 256, 0, ctx.stream>>>(static_cast<const int32_t *>(ids->data),
                                                   int64_t(ids->nb[1] / sizeof(int32_t)), int(sh.n_used), sh.n_pairs,
                                                   int(sh.n_expert), static_cast<float *>(dst->data),
                                                   ggml_nelements(dst), ctx.error_flag);
        GGML_CUDA_CHECK(cudaGetLastError());
        return;
    }
    if (moe_use_mat_vec(dst->src[0]->type, sh.n_t)) {
        moe_mat_vec(ctx, dst, sh);
    } else {
        moe_gemm(ctx, dst, sh);
    }
}
