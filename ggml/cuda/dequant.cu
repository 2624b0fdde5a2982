// ggml_cuda_dequantize_to_f16 / _f32 (ops.cuh): rows of any weight type to dense F16 / F32 rows.
//
// Quantized types: one thread per run of 32 weights, decoded with the block decoders of
// quants-decode.cuh into the floats of ggml's dequantization (bit-exact), then stored as 32
// consecutive outputs (16-byte stores when the destination allows). F16 outputs are those
// floats rounded to nearest (values past the F16 range become infinities). Float types
// (F32, F16, BF16) are converted element by element.
#include "ops.cuh"
#include "quants-decode.cuh"

#include <cuda_bf16.h>

namespace {

constexpr int dq_threads = 256;

__device__ __forceinline__ void dq_store32(float * out, const float * y, bool vec) {
    if (vec) {
#pragma unroll
        for (int i = 0; i < 8; ++i) reinterpret_cast<float4 *>(out)[i] = make_float4(y[4 * i], y[4 * i + 1], y[4 * i + 2], y[4 * i + 3]);
    } else {
#pragma unroll
        for (int i = 0; i < 32; ++i) out[i] = y[i];
    }
}

__device__ __forceinline__ void dq_store32(__half * out, const float * y, bool vec) {
    if (vec) {
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            __half2 h[4];
#pragma unroll
            for (int j = 0; j < 4; ++j) h[j] = __floats2half2_rn(y[8 * i + 2 * j], y[8 * i + 2 * j + 1]);
            reinterpret_cast<int4 *>(out)[i] = *reinterpret_cast<const int4 *>(h);
        }
    } else {
#pragma unroll
        for (int i = 0; i < 32; ++i) out[i] = __float2half_rn(y[i]);
    }
}

template <ggml_type T, typename OT>
__global__ void __launch_bounds__(dq_threads) dq_quant_kernel(const uint8_t * src, OT * dst, int64_t n_rows,
                                                              int64_t n_per_row, size_t stride, bool vec) {
    using B = qd_block<T>;
    constexpr int runs_per_block = B::qk / 32;
    const int64_t runs_per_row = n_per_row / 32;
    const int64_t total = n_rows * runs_per_row;
    for (int64_t r = int64_t(blockIdx.x) * dq_threads + threadIdx.x; r < total; r += int64_t(gridDim.x) * dq_threads) {
        const int64_t row = r / runs_per_row, run = r % runs_per_row;
        float y[32];
        qd_run_to_f32<B>(src + row * stride + (run / runs_per_block) * B::bytes, int(run % runs_per_block), y);
        dq_store32(dst + row * n_per_row + run * 32, y, vec);
    }
}

template <typename IT> __device__ __forceinline__ float dq_load(const IT * p);
template <> __device__ __forceinline__ float dq_load(const float * p) { return *p; }
template <> __device__ __forceinline__ float dq_load(const __half * p) { return __half2float(*p); }
template <> __device__ __forceinline__ float dq_load(const __nv_bfloat16 * p) { return __bfloat162float(*p); }

__device__ __forceinline__ void dq_put(float * p, float v) { *p = v; }
__device__ __forceinline__ void dq_put(__half * p, float v) { *p = __float2half_rn(v); }

template <typename IT, typename OT>
__global__ void __launch_bounds__(dq_threads) dq_float_kernel(const uint8_t * src, OT * dst, int64_t n_rows,
                                                              int64_t n_per_row, size_t stride) {
    const int64_t total = n_rows * n_per_row;
    for (int64_t i = int64_t(blockIdx.x) * dq_threads + threadIdx.x; i < total; i += int64_t(gridDim.x) * dq_threads) {
        const int64_t row = i / n_per_row, e = i % n_per_row;
        dq_put(dst + i, dq_load(reinterpret_cast<const IT *>(src + row * stride) + e));
    }
}

unsigned dq_grid(int64_t work) {
    const int64_t blocks = (work + dq_threads - 1) / dq_threads;
    return unsigned(blocks < (int64_t(1) << 30) ? (blocks > 0 ? blocks : 1) : (int64_t(1) << 30));
}

template <typename OT>
bool dq_launch(ggml_type type, const void * src, OT * dst, int64_t n_rows, int64_t n_per_row, size_t stride,
               cudaStream_t stream) {
    if (n_rows <= 0 || n_per_row <= 0) return true;
    const uint8_t * s = static_cast<const uint8_t *>(src);
    switch (type) {
        case GGML_TYPE_F32:
            dq_float_kernel<float, OT><<<dq_grid(n_rows * n_per_row), dq_threads, 0, stream>>>(s, dst, n_rows, n_per_row, stride);
            return GGML_CUDA_CHECK(cudaGetLastError());
        case GGML_TYPE_F16:
            dq_float_kernel<__half, OT><<<dq_grid(n_rows * n_per_row), dq_threads, 0, stream>>>(s, dst, n_rows, n_per_row, stride);
            return GGML_CUDA_CHECK(cudaGetLastError());
        case GGML_TYPE_BF16:
            dq_float_kernel<__nv_bfloat16, OT><<<dq_grid(n_rows * n_per_row), dq_threads, 0, stream>>>(s, dst, n_rows, n_per_row,
                                                                                                        stride);
            return GGML_CUDA_CHECK(cudaGetLastError());
        default: break;
    }
    if (n_per_row % 32 != 0) return false;
    const bool vec = reinterpret_cast<uintptr_t>(dst) % 16 == 0;
    const unsigned grid = dq_grid(n_rows * (n_per_row / 32));
    const bool known = qd_dispatch_quant(type, [&](auto blk) {
        using B = decltype(blk);
        constexpr ggml_type T = B::type;
        if (n_per_row % B::qk != 0) return;
        dq_quant_kernel<T, OT><<<grid, dq_threads, 0, stream>>>(s, dst, n_rows, n_per_row, stride, vec);
    });
    return known && n_per_row % ggml_blck_size(type) == 0 && GGML_CUDA_CHECK(cudaGetLastError());
}

}  // namespace

bool ggml_cuda_dequantize_to_f16(ggml_type type, const void * src, __half * dst, int64_t n_rows, int64_t n_per_row,
                                 size_t src_row_stride, cudaStream_t stream) {
    return dq_launch(type, src, dst, n_rows, n_per_row, src_row_stride, stream);
}

bool ggml_cuda_dequantize_to_f32(ggml_type type, const void * src, float * dst, int64_t n_rows, int64_t n_per_row,
                                 size_t src_row_stride, cudaStream_t stream) {
    return dq_launch(type, src, dst, n_rows, n_per_row, src_row_stride, stream);
}
