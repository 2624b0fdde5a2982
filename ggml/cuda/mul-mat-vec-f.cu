// Mat-vec kernels of the float weight types (F32, F16, BF16) with F32 activations.
//
// A warp computes R rows for up to NC columns per pass; its lanes take units of 8 consecutive
// elements (16-byte loads of F16 / BF16 weights, two of F32, and two 16-byte loads of each
// column's activations), the products accumulate in F32 and the warp sums its lanes. Rows or
// activations that are not 16-byte aligned (or k % 8 != 0) take the element-wise path.
#include "mul-mat-vec.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace {

template <typename WT> struct mmvf_weight;

template <> struct mmvf_weight<float> {
    __device__ static void load8(const uint8_t * p, float * w) {
        const float4 a = __ldg(reinterpret_cast<const float4 *>(p));
        const float4 b = __ldg(reinterpret_cast<const float4 *>(p) + 1);
        w[0] = a.x, w[1] = a.y, w[2] = a.z, w[3] = a.w, w[4] = b.x, w[5] = b.y, w[6] = b.z, w[7] = b.w;
    }
    __device__ static float load1(const uint8_t * p, int64_t i) { return reinterpret_cast<const float *>(p)[i]; }
};

template <> struct mmvf_weight<__half> {
    __device__ static void load8(const uint8_t * p, float * w) {
        const int4 v = __ldg(reinterpret_cast<const int4 *>(p));
        const int u[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            const float2 f = __half22float2(*reinterpret_cast<const __half2 *>(&u[i]));
            w[2 * i] = f.x;
            w[2 * i + 1] = f.y;
        }
    }
    __device__ static float load1(const uint8_t * p, int64_t i) {
        return __half2float(reinterpret_cast<const __half *>(p)[i]);
    }
};

template <> struct mmvf_weight<__nv_bfloat16> {
    __device__ static void load8(const uint8_t * p, float * w) {
        const int4 v = __ldg(reinterpret_cast<const int4 *>(p));
        const uint32_t u[4] = {uint32_t(v.x), uint32_t(v.y), uint32_t(v.z), uint32_t(v.w)};
#pragma unroll
        for (int i = 0; i < 4; ++i) {
            w[2 * i] = __uint_as_float(u[i] << 16);
            w[2 * i + 1] = __uint_as_float(u[i] & 0xFFFF0000u);
        }
    }
    __device__ static float load1(const uint8_t * p, int64_t i) {
        return __uint_as_float(uint32_t(reinterpret_cast<const uint16_t *>(p)[i]) << 16);
    }
};

// Aligned path: units of 8 elements.
template <typename WT, int NC, int R>
__device__ __forceinline__ void mmvf_dot_vec(const mmv_params & p, const uint8_t * w, int64_t row0, int nc,
                                             const int64_t * s_act, float (&acc)[R][NC]) {
    const int lane = threadIdx.x % 32;
    const int64_t n_units = p.k / 8;
#pragma unroll 2
    for (int64_t u = lane; u < n_units; u += 32) {
        float a[NC][8];
#pragma unroll
        for (int c = 0; c < NC; ++c) {
            if (c >= nc) break;
            const float4 * x = reinterpret_cast<const float4 *>(p.act_f + s_act[c] * p.act_ld + 8 * u);
            const float4 x0 = __ldg(x), x1 = __ldg(x + 1);
            a[c][0] = x0.x, a[c][1] = x0.y, a[c][2] = x0.z, a[c][3] = x0.w;
            a[c][4] = x1.x, a[c][5] = x1.y, a[c][6] = x1.z, a[c][7] = x1.w;
        }
#pragma unroll
        for (int r = 0; r < R; ++r) {
            if (row0 + r >= p.m) break;
            float wv[8];
            mmvf_weight<WT>::load8(w + (row0 + r) * p.w_nb1 + 8 * u * sizeof(WT), wv);
#pragma unroll
            for (int c = 0; c < NC; ++c) {
                if (c >= nc) break;
#pragma unroll
                for (int j = 0; j < 8; ++j) acc[r][c] = fmaf(wv[j], a[c][j], acc[r][c]);
            }
        }
    }
}

// Any alignment: element by element.
template <typename WT, int NC, int R>
__device__ __forceinline__ void mmvf_dot_scalar(const mmv_params & p, const uint8_t * w, int64_t row0, int nc,
                                                const int64_t * s_act, float (&acc)[R][NC]) {
    const int lane = threadIdx.x % 32;
    for (int64_t i = lane; i < p.k; i += 32) {
#pragma unroll
        for (int r = 0; r < R; ++r) {
            if (row0 + r >= p.m) break;
            const float wv = mmvf_weight<WT>::load1(w + (row0 + r) * p.w_nb1, i);
#pragma unroll
            for (int c = 0; c < NC; ++c) {
                if (c < nc) acc[r][c] = fmaf(wv, p.act_f[s_act[c] * p.act_ld + i], acc[r][c]);
            }
        }
    }
}

template <typename WT, int NC, int R>
__global__ void __launch_bounds__(mmv_threads) mmvf_kernel(const mmv_params p) {
    __shared__ int64_t s_act[NC];
    __shared__ float * s_dst[NC];
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const int64_t block_row0 = int64_t(blockIdx.x) * (mmv_threads / 32) * R;
    const int64_t row0 = block_row0 + int64_t(warp) * R;
    for (int64_t bi = blockIdx.y; bi < p.n_batches; bi += gridDim.y) {
        const mmv_batch b = mmv_batch_of(p, bi);
        if (!b.valid) {
            mmv_flag_error(p);
            continue;
        }
        for (int c0 = 0; c0 < b.n_cols; c0 += NC) {
            const int nc = b.n_cols - c0 < NC ? b.n_cols - c0 : NC;
            if (int(threadIdx.x) < nc) mmv_column(p, b, bi, c0 + threadIdx.x, &s_act[threadIdx.x], &s_dst[threadIdx.x]);
            __syncthreads();
            float acc[R][NC];
#pragma unroll
            for (int r = 0; r < R; ++r) {
#pragma unroll
                for (int c = 0; c < NC; ++c) acc[r][c] = 0.0f;
            }
            if (p.aligned16) {
                mmvf_dot_vec<WT, NC, R>(p, b.w, row0, nc, s_act, acc);
            } else {
                mmvf_dot_scalar<WT, NC, R>(p, b.w, row0, nc, s_act, acc);
            }
#pragma unroll
            for (int r = 0; r < R; ++r) {
#pragma unroll
                for (int c = 0; c < NC; ++c) {
                    const float v = mmv_warp_sum(acc[r][c]);
                    if (lane == 0 && c < nc && row0 + r < p.m) s_dst[c][row0 + r] = v;
                }
            }
            __syncthreads();
        }
    }
}

template <typename WT> void mmvf_launch_type(const mmv_params & p, int64_t n_cols, cudaStream_t stream) {
    const int nc = mmv_nc_for(n_cols);
    const dim3 grid(unsigned(mmvf_grid_x(p.m, nc)), unsigned(p.n_batches < mm_max_grid_y ? p.n_batches : mm_max_grid_y));
    switch (nc) {
        case 1: mmvf_kernel<WT, 1, mmv_rows_for(1)><<<grid, mmv_threads, 0, stream>>>(p); break;
        case 2: mmvf_kernel<WT, 2, mmv_rows_for(2)><<<grid, mmv_threads, 0, stream>>>(p); break;
        case 4: mmvf_kernel<WT, 4, mmv_rows_for(4)><<<grid, mmv_threads, 0, stream>>>(p); break;
        default: mmvf_kernel<WT, 8, mmv_rows_for(8)><<<grid, mmv_threads, 0, stream>>>(p); break;
    }
}

}  // namespace

bool mmvf_launch(ggml_type t, const mmv_params & p, int64_t n_cols, cudaStream_t stream) {
    switch (t) {
        case GGML_TYPE_F32: mmvf_launch_type<float>(p, n_cols, stream); return true;
        case GGML_TYPE_F16: mmvf_launch_type<__half>(p, n_cols, stream); return true;
        case GGML_TYPE_BF16: mmvf_launch_type<__nv_bfloat16>(p, n_cols, stream); return true;
        default: return false;
    }
}
