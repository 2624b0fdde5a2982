// Row reductions over dimension 0 of F32 tensors (any strides): RMS_NORM, NORM and SUM_ROWS.
//
//   rms_norm: y = x / sqrt(mean(x^2) + eps)
//   norm:     y = (x - mean) / sqrt(mean((x - mean)^2) + eps)  (two passes, as the CPU)
//   sum_rows: dst[0, i1, i2, i3] = sum of the row
//
// One warp per row for rows of up to 512 elements (8 rows per block), else one block of 256 or
// 1024 threads per row; partial sums in float, combined by warp shuffles and shared memory.
// In place when dst shares a's memory (a row is read completely before it is written).
#include "ops-common.cuh"
#include "ops.cuh"

namespace {

enum class norm_kind { rms, mean_var, sum };

// blockDim (threads per row, rows per block): see cuda_reduce_threads. With more than one warp
// per row there is one row per block, so the row loop is uniform across the block.
template <norm_kind K>
__global__ void k_norm(cuda_tensor a, cuda_tensor d, float eps) {
    __shared__ float smem[32];
    const int64_t nrows = cuda_nrows(a), ne0 = a.ne[0];
    const float inv_n = ne0 > 0 ? 1.0f / float(ne0) : 0.0f;
    for (int64_t r = int64_t(blockIdx.x) * blockDim.y + threadIdx.y; r < nrows; r += int64_t(gridDim.x) * blockDim.y) {
        const cuda_row_index ri = cuda_unravel_row(a, r);
        const char * pa = cuda_row(a, ri);
        char * pd = cuda_row(d, ri);
        float s = 0.0f;
        if constexpr (K == norm_kind::rms) {
            for (int64_t i = threadIdx.x; i < ne0; i += blockDim.x) {
                const float x = *reinterpret_cast<const float *>(pa + i * a.nb[0]);
                s += x * x;
            }
        } else {
            for (int64_t i = threadIdx.x; i < ne0; i += blockDim.x) {
                s += *reinterpret_cast<const float *>(pa + i * a.nb[0]);
            }
        }
        s = cuda_row_sum(s, smem);
        if constexpr (K == norm_kind::sum) {
            if (threadIdx.x == 0) *reinterpret_cast<float *>(pd) = s;
            continue;
        }
        float mean = 0.0f;
        if constexpr (K == norm_kind::mean_var) {
            mean = s * inv_n;
            float v = 0.0f;
            for (int64_t i = threadIdx.x; i < ne0; i += blockDim.x) {
                const float x = *reinterpret_cast<const float *>(pa + i * a.nb[0]) - mean;
                v += x * x;
            }
            s = cuda_row_sum(v, smem);
        }
        const float scale = 1.0f / sqrtf(s * inv_n + eps);
        for (int64_t i = threadIdx.x; i < ne0; i += blockDim.x) {
            const float x = *reinterpret_cast<const float *>(pa + i * a.nb[0]);
            *reinterpret_cast<float *>(pd + i * d.nb[0]) = (x - mean) * scale;
        }
    }
}

template <norm_kind K>
void launch_norm(ggml_cuda_context & ctx, ggml_tensor * dst, float eps) {
    const ggml_tensor * a = dst->src[0];
    const int64_t nrows = ggml_nrows(a);
    if (nrows == 0) return;
    if (!cuda_check_aligned(ctx, a) || !cuda_check_aligned(ctx, dst)) return;
    int rows_per_block = 1;
    const int threads = cuda_reduce_threads(a->ne[0], nrows, rows_per_block);
    const int64_t blocks = ggml_cuda_ceil_div(nrows, rows_per_block);
    k_norm<K><<<unsigned(blocks < INT32_MAX ? blocks : INT32_MAX), dim3(threads, rows_per_block), 0, ctx.stream>>>(
        cuda_tensor_of(a), cuda_tensor_of(dst), eps);
    GGML_CUDA_CHECK(cudaGetLastError());
}

bool f32_rows(const ggml_tensor * dst) {
    const ggml_tensor * a = dst->src[0];
    return a && a->type == GGML_TYPE_F32 && dst->type == GGML_TYPE_F32 && cuda_shape_ok(a) && cuda_shape_ok(dst);
}

}  // namespace

bool ggml_cuda_norm_supported(const ggml_tensor * dst) {
    return f32_rows(dst) && ggml_are_same_shape(dst, dst->src[0]);
}

void ggml_cuda_op_norm(ggml_cuda_context & ctx, ggml_tensor * dst) {
    const float eps = ggml_get_norm_eps(dst);
    if (dst->op == GGML_OP_RMS_NORM) {
        launch_norm<norm_kind::rms>(ctx, dst, eps);
    } else {
        launch_norm<norm_kind::mean_var>(ctx, dst, eps);
    }
}

bool ggml_cuda_sum_rows_supported(const ggml_tensor * dst) {
    const ggml_tensor * a = dst->src[0];
    return f32_rows(dst) && dst->ne[0] == 1 && dst->ne[1] == a->ne[1] && dst->ne[2] == a->ne[2] &&
           dst->ne[3] == a->ne[3];
}

void ggml_cuda_op_sum_rows(ggml_cuda_context & ctx, ggml_tensor * dst) { launch_norm<norm_kind::sum>(ctx, dst, 0.0f); }
