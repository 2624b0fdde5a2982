// ggml/cuda/ops-common.cuh — helpers shared by the kernels in ops-*.cu (internal).
//
// Usage (a launcher and its kernel):
//   __global__ void k_neg(cuda_tensor a, cuda_tensor d) {
//       for (int64_t r = cuda_row_begin(); r < cuda_nrows(d); r += cuda_row_step()) {
//           const cuda_row_index ri = cuda_unravel_row(d, r);
//           for (int64_t i = cuda_elem_begin(); i < d.ne[0]; i += cuda_elem_step())
//               cuda_store_f32(d.type, cuda_row(d, ri) + i * d.nb[0],
//                              -cuda_load_f32(a.type, cuda_row(a, ri) + i * a.nb[0]));
//       }
//   }
//   if (!cuda_check_aligned(ctx, a) || !cuda_check_aligned(ctx, dst)) return;  // would fault
//   k_neg<<<cuda_rows_grid(dst->ne[0], ggml_nrows(dst), 256), 256, 0, ctx.stream>>>(
//       cuda_tensor_of(a), cuda_tensor_of(dst));
//   GGML_CUDA_CHECK(cudaGetLastError());
//
// Elements of F32, F16 and BF16 tensors are read and written as floats with conversions that
// equal the CPU's bit for bit (ggml/types.h: round to nearest even, NaN stays NaN, quiet).
#pragma once

#include "cuda-common.cuh"

#include <cstdint>

// What a kernel needs of a tensor: its data, shape, byte strides and type.
struct cuda_tensor {
    char * data;
    int64_t ne[4];
    int64_t nb[4];
    int type;
};

inline cuda_tensor cuda_tensor_of(const ggml_tensor * t) {
    cuda_tensor c;
    c.data = static_cast<char *>(t->data);
    for (int i = 0; i < 4; ++i) {
        c.ne[i] = t->ne[i];
        c.nb[i] = static_cast<int64_t>(t->nb[i]);
    }
    c.type = t->type;
    return c;
}

inline bool cuda_is_float_type(ggml_type t) {
    return t == GGML_TYPE_F32 || t == GGML_TYPE_F16 || t == GGML_TYPE_BF16;
}

// Whether every dimension and the row count fit the kernels' indexing (below 2^31).
inline bool cuda_shape_ok(const ggml_tensor * t) {
    constexpr int64_t lim = INT32_MAX;
    return t->ne[0] < lim && t->ne[1] < lim && t->ne[2] < lim && t->ne[3] < lim && ggml_nrows(t) < lim;
}

// Whether data and every stride of t are multiples of its alignment (F32, I32: 4 bytes; F16,
// BF16 and block types of even size: 2; I64: 8; others 1). A misaligned access would fault and
// poison the context, so launchers check first; marks ctx failed otherwise.
inline bool cuda_check_aligned(ggml_cuda_context & ctx, const ggml_tensor * t) {
    size_t align = ggml_type_size(t->type) % 2 == 0 ? 2 : 1;
    if (t->type == GGML_TYPE_F32 || t->type == GGML_TYPE_I32) align = 4;
    if (t->type == GGML_TYPE_I64) align = 8;
    uintptr_t bits = reinterpret_cast<uintptr_t>(t->data);
    for (int i = 0; i < 4; ++i) bits |= t->nb[i];
    if (bits % align == 0) return true;
    return ggml_cuda_fail(ctx, "misaligned tensor data or strides");
}

// Grid of a row kernel with blockDim (threads, rows_per_block): x blocks along dim 0, y over
// row groups (kernels loop past gridDim.y).
inline dim3 cuda_rows_grid(int64_t ne0, int64_t nrows, int threads, int rows_per_block = 1) {
    const int64_t gx = ggml_cuda_ceil_div(ne0 > 0 ? ne0 : 1, threads);
    const int64_t gy = ggml_cuda_ceil_div(nrows > 0 ? nrows : 1, rows_per_block);
    return dim3(unsigned(gx < 65535 ? gx : 65535), unsigned(gy < 65535 ? gy : 65535), 1);
}

// Threads along dim 0 for a kernel over rows of ne0 elements: 32..256, a power of two; the
// rest of a 256-thread block takes further rows (rows_per_block).
inline int cuda_elementwise_threads(int64_t ne0, int & rows_per_block) {
    int t = 32;
    while (t < 256 && t < ne0) t *= 2;
    rows_per_block = 256 / t;
    return t;
}

// Threads per row of a row reduction over ne0 elements: one warp for short rows (then 8 rows
// per block), 256 or 1024 for long ones (one row per block; 1024 when there are few rows).
inline int cuda_reduce_threads(int64_t ne0, int64_t nrows, int & rows_per_block) {
    if (ne0 <= 512) {
        rows_per_block = 8;
        return 32;
    }
    rows_per_block = 1;
    return nrows >= 256 ? 256 : 1024;
}

// ---- device side ----

struct cuda_row_index {
    int64_t i1, i2, i3;
};

// Grid-stride loops of a row kernel: rows along y (blockDim.y rows per block), elements of a
// row along x.
__device__ __forceinline__ int64_t cuda_row_begin() { return int64_t(blockIdx.y) * blockDim.y + threadIdx.y; }
__device__ __forceinline__ int64_t cuda_row_step() { return int64_t(gridDim.y) * blockDim.y; }
__device__ __forceinline__ int64_t cuda_elem_begin() { return int64_t(blockIdx.x) * blockDim.x + threadIdx.x; }
__device__ __forceinline__ int64_t cuda_elem_step() { return int64_t(gridDim.x) * blockDim.x; }

__device__ __forceinline__ int64_t cuda_nrows(const cuda_tensor & t) { return t.ne[1] * t.ne[2] * t.ne[3]; }

__device__ __forceinline__ cuda_row_index cuda_unravel_row(const cuda_tensor & t, int64_t r) {
    cuda_row_index ri;
    ri.i1 = r % t.ne[1];
    r /= t.ne[1];
    ri.i2 = r % t.ne[2];
    ri.i3 = r / t.ne[2];
    return ri;
}

__device__ __forceinline__ char * cuda_row(const cuda_tensor & t, int64_t i1, int64_t i2, int64_t i3) {
    return t.data + i1 * t.nb[1] + i2 * t.nb[2] + i3 * t.nb[3];
}

__device__ __forceinline__ char * cuda_row(const cuda_tensor & t, const cuda_row_index & ri) {
    return cuda_row(t, ri.i1, ri.i2, ri.i3);
}

__device__ __forceinline__ float cuda_f16_to_f32(uint16_t h) { return __half2float(__ushort_as_half(h)); }

// Equal to ggml_fp32_to_fp16 (round to nearest even; NaN keeps its sign and top payload bits).
__device__ __forceinline__ uint16_t cuda_f32_to_f16(float f) {
    const uint32_t x = __float_as_uint(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) return uint16_t(((x >> 16) & 0x8000u) | 0x7e00u | ((x >> 13) & 0x3ffu));
    return __half_as_ushort(__float2half_rn(f));
}

__device__ __forceinline__ float cuda_bf16_to_f32(uint16_t h) { return __uint_as_float(uint32_t(h) << 16); }

// Equal to ggml_fp32_to_bf16.
__device__ __forceinline__ uint16_t cuda_f32_to_bf16(float f) {
    const uint32_t x = __float_as_uint(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) return uint16_t((x >> 16) | 0x40u);
    return uint16_t((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

// One element of type `type` (F32, F16 or BF16) at p.
__device__ __forceinline__ float cuda_load_f32(int type, const char * p) {
    if (type == GGML_TYPE_F32) return *reinterpret_cast<const float *>(p);
    const uint16_t h = *reinterpret_cast<const uint16_t *>(p);
    return type == GGML_TYPE_F16 ? cuda_f16_to_f32(h) : cuda_bf16_to_f32(h);
}

__device__ __forceinline__ void cuda_store_f32(int type, char * p, float v) {
    if (type == GGML_TYPE_F32) {
        *reinterpret_cast<float *>(p) = v;
    } else {
        *reinterpret_cast<uint16_t *>(p) = type == GGML_TYPE_F16 ? cuda_f32_to_f16(v) : cuda_f32_to_bf16(v);
    }
}

__device__ __forceinline__ float cuda_warp_sum(float v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

__device__ __forceinline__ float cuda_warp_max(float v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

// Sum over the blockDim.x threads that share threadIdx.y (one row); every one of them gets it.
// With blockDim.x > 32 the block must have blockDim.y == 1 and every thread must call it
// (it synchronizes the block); smem holds 32 floats.
__device__ __forceinline__ float cuda_row_sum(float v, float * smem) {
    v = cuda_warp_sum(v);
    if (blockDim.x <= 32) return v;
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    __syncthreads();  // smem may still be read from a previous reduction
    if (lane == 0) smem[warp] = v;
    __syncthreads();
    v = lane < int(blockDim.x / 32) ? smem[lane] : 0.0f;
    return cuda_warp_sum(v);
}

// Maximum as cuda_row_sum (NaN ignored, like fmaxf).
__device__ __forceinline__ float cuda_row_max(float v, float * smem) {
    v = cuda_warp_max(v);
    if (blockDim.x <= 32) return v;
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    __syncthreads();
    if (lane == 0) smem[warp] = v;
    __syncthreads();
    v = lane < int(blockDim.x / 32) ? smem[lane] : -INFINITY;
    return cuda_warp_max(v);
}
