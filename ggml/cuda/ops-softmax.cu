// SOFT_MAX (with scale and mask) and ARGMAX: reductions along dimension 0, as the CPU's
// ggml/cpu/ops-softmax.cpp.
//
// soft_max: y = softmax(x * scale + mask) per row, the row maximum subtracted before exp; the
// mask (F32 or F16, optional, any strides) row for row (i1, i2, i3) is (i1, i2 % m2, i3 % m3);
// -inf excludes an element and a row with every element excluded gives zeros; NaN elements are
// ignored by the maximum (and make the row NaN, as on the CPU). F32 a and dst, any strides, in
// place when dst shares a's memory (every read of a row happens before its first write).
// argmax: I32 index of the first largest element of each row; NaN ignored; 0 for a row of NaNs.
#include "ops-common.cuh"
#include "ops.cuh"

namespace {

struct soft_max_row {
    const char * pa;
    const char * pm;  // mask row or nullptr
    int64_t nba, nbm;
    int mask_type;
    float scale;

    __device__ float operator()(int64_t i) const {
        const float x = *reinterpret_cast<const float *>(pa + i * nba);
        return pm ? x * scale + cuda_load_f32(mask_type, pm + i * nbm) : x * scale;
    }
};

// blockDim as k_norm (ops-norm.cu): one warp per short row, one block per long row.
__global__ void k_soft_max(cuda_tensor a, cuda_tensor mask, bool has_mask, cuda_tensor d, float scale) {
    __shared__ float smem[32];
    const int64_t nrows = cuda_nrows(a), ne0 = a.ne[0];
    for (int64_t r = int64_t(blockIdx.x) * blockDim.y + threadIdx.y; r < nrows; r += int64_t(gridDim.x) * blockDim.y) {
        const cuda_row_index ri = cuda_unravel_row(a, r);
        soft_max_row w;
        w.pa = cuda_row(a, ri);
        w.pm = has_mask ? cuda_row(mask, ri.i1, ri.i2 % mask.ne[2], ri.i3 % mask.ne[3]) : nullptr;
        w.nba = a.nb[0];
        w.nbm = mask.nb[0];
        w.mask_type = mask.type;
        w.scale = scale;
        char * pd = cuda_row(d, ri);

        float m = -INFINITY;
        for (int64_t i = threadIdx.x; i < ne0; i += blockDim.x) m = fmaxf(m, w(i));
        m = cuda_row_max(m, smem);
        if (m == -INFINITY) {
            for (int64_t i = threadIdx.x; i < ne0; i += blockDim.x) *reinterpret_cast<float *>(pd + i * d.nb[0]) = 0.0f;
            continue;
        }
        float s = 0.0f;
        for (int64_t i = threadIdx.x; i < ne0; i += blockDim.x) s += expf(w(i) - m);
        s = cuda_row_sum(s, smem);
        const float inv = 1.0f / s;
        for (int64_t i = threadIdx.x; i < ne0; i += blockDim.x) {
            *reinterpret_cast<float *>(pd + i * d.nb[0]) = expf(w(i) - m) * inv;
        }
    }
}

// (v1, i1) goes before (v2, i2): larger value, then lower index; i < 0 means no candidate.
__device__ __forceinline__ bool argmax_better(float v1, int64_t i1, float v2, int64_t i2) {
    return i1 >= 0 && (i2 < 0 || v1 > v2 || (v1 == v2 && i1 < i2));
}

__device__ __forceinline__ void argmax_warp(float & v, int64_t & i) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        const float ov = __shfl_xor_sync(0xffffffffu, v, o);
        const int64_t oi = __shfl_xor_sync(0xffffffffu, i, o);
        if (argmax_better(ov, oi, v, i)) {
            v = ov;
            i = oi;
        }
    }
}

__global__ void k_argmax(cuda_tensor a, cuda_tensor d) {
    __shared__ float sv[32];
    __shared__ int64_t si[32];
    const int64_t nrows = cuda_nrows(a), ne0 = a.ne[0];
    for (int64_t r = int64_t(blockIdx.x) * blockDim.y + threadIdx.y; r < nrows; r += int64_t(gridDim.x) * blockDim.y) {
        const char * pa = cuda_row(a, cuda_unravel_row(a, r));
        float best = 0.0f;
        int64_t bi = -1;
        for (int64_t i = threadIdx.x; i < ne0; i += blockDim.x) {
            const float x = *reinterpret_cast<const float *>(pa + i * a.nb[0]);
            if (!isnan(x) && (bi < 0 || x > best)) {
                best = x;
                bi = i;
            }
        }
        argmax_warp(best, bi);
        if (blockDim.x > 32) {
            const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
            __syncthreads();
            if (lane == 0) {
                sv[warp] = best;
                si[warp] = bi;
            }
            __syncthreads();
            best = lane < int(blockDim.x / 32) ? sv[lane] : 0.0f;
            bi = lane < int(blockDim.x / 32) ? si[lane] : -1;
            argmax_warp(best, bi);
        }
        if (threadIdx.x == 0) {
            // dst holds one index per row of a, in row order, following dst's own strides
            const int64_t i0 = r % d.ne[0];
            const cuda_row_index ro = cuda_unravel_row(d, r / d.ne[0]);
            *reinterpret_cast<int32_t *>(cuda_row(d, ro) + i0 * d.nb[0]) = int32_t(bi < 0 ? 0 : bi);
        }
    }
}

}  // namespace

bool ggml_cuda_soft_max_supported(const ggml_tensor * dst) {
    const ggml_tensor * a = dst->src[0];
    const ggml_tensor * mask = dst->src[1];
    if (!a || a->type != GGML_TYPE_F32 || dst->type != GGML_TYPE_F32 || !ggml_are_same_shape(a, dst)) return false;
    if (!cuda_shape_ok(a)) return false;
    if (!mask) return true;
    return (mask->type == GGML_TYPE_F32 || mask->type == GGML_TYPE_F16) && mask->ne[0] == a->ne[0] &&
           mask->ne[1] >= a->ne[1] && mask->ne[2] > 0 && mask->ne[3] > 0 && a->ne[2] % mask->ne[2] == 0 &&
           a->ne[3] % mask->ne[3] == 0;
}

void ggml_cuda_op_soft_max(ggml_cuda_context & ctx, ggml_tensor * dst) {
    const ggml_tensor * a = dst->src[0];
    const ggml_tensor * mask = dst->src[1];
    const int64_t nrows = ggml_nrows(a);
    if (nrows == 0 || a->ne[0] == 0) return;
    if (!cuda_check_aligned(ctx, a) || !cuda_check_aligned(ctx, dst)) return;
    if (mask && !cuda_check_aligned(ctx, mask)) return;
    int rows_per_block = 1;
    const int threads = cuda_reduce_threads(a->ne[0], nrows, rows_per_block);
    const int64_t blocks = ggml_cuda_ceil_div(nrows, rows_per_block);
    const cuda_tensor tm = cuda_tensor_of(mask ? mask : a);
    k_soft_max<<<unsigned(blocks < INT32_MAX ? blocks : INT32_MAX), dim3(threads, rows_per_block), 0, ctx.stream>>>(
        cuda_tensor_of(a), tm, mask != nullptr, cuda_tensor_of(dst), ggml_get_soft_max_scale(dst));
    GGML_CUDA_CHECK(cudaGetLastError());
}

bool ggml_cuda_argmax_supported(const ggml_tensor * dst) {
    const ggml_tensor * a = dst->src[0];
    return a && a->type == GGML_TYPE_F32 && dst->type == GGML_TYPE_I32 && ggml_nelements(dst) == ggml_nrows(a) &&
           cuda_shape_ok(a) && cuda_shape_ok(dst);
}

void ggml_cuda_op_argmax(ggml_cuda_context & ctx, ggml_tensor * dst) {
    const ggml_tensor * a = dst->src[0];
    const int64_t nrows = ggml_nrows(a);
    if (nrows == 0) return;
    if (!cuda_check_aligned(ctx, a) || !cuda_check_aligned(ctx, dst)) return;
    int rows_per_block = 1;
    const int threads = cuda_reduce_threads(a->ne[0], nrows, rows_per_block);
    const int64_t blocks = ggml_cuda_ceil_div(nrows, rows_per_block);
    k_argmax<<<unsigned(blocks < INT32_MAX ? blocks : INT32_MAX), dim3(threads, rows_per_block), 0, ctx.stream>>>(
        cuda_tensor_of(a), cuda_tensor_of(dst));
    GGML_CUDA_CHECK(cudaGetLastError());
}
