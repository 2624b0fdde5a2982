// ggml/cuda/mul-mat-vec-q.cuh — the quantized mat-vec kernel (internal; the mul-mat-vec-q-*.cu
// files instantiate it, a few weight types each, to keep each file's compile time short).
//
// A block (128 threads) computes R rows of one batch for up to NC columns per pass:
//   - the rows stream through shared memory in stages of 128 runs of 32 weights per row, with
//     up to three stages in flight (cp.async 16-byte copies: memory parallelism without
//     registers, and every block alignment of the types, 17 to 210 bytes, is read from shared
//     memory whatever it is);
//   - thread t takes run t of the stage: its activations (Q8, 32 int8 + {d, d * sum}) are loaded
//     once per column and serve the R rows; each row's run is decoded once (qd_block<T>::run)
//     and serves the NC columns through dp4a dot products (qd_dot_run);
//   - the 128 partial sums of each (row, column) are reduced over the warps and written.
#pragma once

#include "mul-mat-vec.cuh"
#include "quants-decode.cuh"

#include <cuda_pipeline.h>

// Queues the copy of stage st of rows row0 .. row0 + R - 1 into buf (one row every
// L.smem_row_bytes): cp.async 16-byte copies when the rows are 16-byte aligned (a row's last
// partial chunk reads only its bytes, zero-filling the rest), else plain byte copies.
template <int R>
__device__ __forceinline__ void mmvq_issue(const mmv_params & p, const mmvq_plan & L, const uint8_t * w, int64_t row0,
                                           int64_t st, uint8_t * buf) {
    const int64_t off = st * L.stage_bytes;
    const int64_t n = L.row_bytes - off < L.stage_bytes ? L.row_bytes - off : L.stage_bytes;
#pragma unroll
    for (int r = 0; r < R; ++r) {
        if (row0 + r >= p.m) break;
        const uint8_t * src = w + (row0 + r) * p.w_nb1 + off;
        uint8_t * dst = buf + r * L.smem_row_bytes;
        if (p.aligned16) {
            for (int64_t c = int64_t(threadIdx.x) * 16; c < n; c += mmv_threads * 16) {
                if (n - c >= 16) {
                    __pipeline_memcpy_async(dst + c, src + c, 16);
                } else {
                    __pipeline_memcpy_async(dst + c, src + c, 16, size_t(16 - (n - c)));
                }
            }
        } else {
            for (int64_t i = threadIdx.x; i < n; i += mmv_threads) dst[i] = src[i];
        }
    }
}

// Run `run` of an F32 activation row quantized as mm_quantize_q8 does it (d = max |x| / 127,
// q = round(x / d), {d, d * sum q}): the same values, made by the thread that uses them.
__device__ __forceinline__ void mmvq_quantize_run(const float * x, int (&a)[8], float2 & am) {
    float v[32];
#pragma unroll
    for (int i = 0; i < 8; ++i) {
        const float4 f = __ldg(reinterpret_cast<const float4 *>(x) + i);
        v[4 * i] = f.x, v[4 * i + 1] = f.y, v[4 * i + 2] = f.z, v[4 * i + 3] = f.w;
    }
    float amax = 0.0f;
#pragma unroll
    for (int i = 0; i < 32; ++i) amax = fmaxf(amax, fabsf(v[i]));
    const float d = amax / 127.0f;
    const float id = d > 0.0f ? 1.0f / d : 0.0f;
    int sum = 0;
#pragma unroll
    for (int i = 0; i < 8; ++i) {
        uint32_t w = 0;
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            const int q = max(-127, min(127, __float2int_rn(roundf(v[4 * i + j] * id))));
            sum += q;
            w |= uint32_t(q & 0xFF) << (8 * j);
        }
        a[i] = int(w);
    }
    am = make_float2(d, d * float(sum));
}

// Loads the Q8 activations of run `run` for the nc columns.
template <int NC>
__device__ __forceinline__ void mmvq_load_act(const mmv_params & p, const int64_t * s_act, int nc, int64_t run,
                                              int (&a)[NC][8], float2 (&am)[NC]) {
    if constexpr (NC == 1) {
        if (p.q8_fused) {
            mmvq_quantize_run(p.act_f + s_act[0] * p.act_ld + run * 32, a[0], am[0]);
            return;
        }
    }
#pragma unroll
    for (int c = 0; c < NC; ++c) {
        if (c >= nc) break;
        const int4 * q = reinterpret_cast<const int4 *>(p.act_q + s_act[c] * p.k + run * 32);
        const int4 v0 = __ldg(q), v1 = __ldg(q + 1);
        a[c][0] = v0.x, a[c][1] = v0.y, a[c][2] = v0.z, a[c][3] = v0.w;
        a[c][4] = v1.x, a[c][5] = v1.y, a[c][6] = v1.z, a[c][7] = v1.w;
        am[c] = __ldg(p.act_meta + s_act[c] * (p.k / 32) + run);
    }
}

// The R rows times the nc columns of one pass, over every stage of the rows.
template <ggml_type T, int NC, int R>
__device__ __forceinline__ void mmvq_rows(const mmv_params & p, const mmvq_plan & L, const uint8_t * w, int64_t row0,
                                          int nc, const int64_t * s_act, uint8_t * smem, float (&acc)[R][NC]) {
    using B = qd_block<T>;
    constexpr int runs_per_block = B::qk / 32;
    const int nbuf = L.n_buffers;
    const int64_t buf_bytes = int64_t(R) * L.smem_row_bytes;
    for (int st = 0; st < nbuf - 1; ++st) {
        mmvq_issue<R>(p, L, w, row0, st, smem + st * buf_bytes);
        __pipeline_commit();
    }
    for (int64_t st = 0; st < L.n_stages; ++st) {
        const int64_t run = st * mmvq_stage_runs + threadIdx.x;
        const bool active = run < L.n_runs;
        int a[NC][8];
        float2 am[NC];
        if (active) mmvq_load_act<NC>(p, s_act, nc, run, a, am);  // in flight during the wait
        const int64_t next = st + nbuf - 1;
        if (next < L.n_stages) mmvq_issue<R>(p, L, w, row0, next, smem + (next % nbuf) * buf_bytes);
        __pipeline_commit();             // an empty group past the last stage keeps the count
        __pipeline_wait_prior(nbuf - 1);  // stage st has landed (this thread's copies)
        __syncthreads();                 // and everyone's
        if (active) {
            const uint8_t * blk = smem + (st % nbuf) * buf_bytes + (threadIdx.x / runs_per_block) * B::bytes;
            const int s = threadIdx.x % runs_per_block;
#pragma unroll
            for (int r = 0; r < R; ++r) {
                if (row0 + r >= p.m) break;
                qd_wq wq;
                B::run(blk + r * L.smem_row_bytes, s, wq);
#pragma unroll
                for (int c = 0; c < NC; ++c) {
                    if (c < nc) acc[r][c] += qd_dot_run<B::sub16, B::has_m>(wq, a[c], am[c].x, am[c].y);
                }
            }
        }
        __syncthreads();  // the buffer is refilled by the next iteration's copies
    }
}

// Sums each (row, column) over the block's threads and writes it.
template <int NC, int R>
__device__ __forceinline__ void mmvq_store(const mmv_params & p, float (&acc)[R][NC], float (*s_red)[R * NC],
                                           float * const * s_dst, int64_t row0, int nc) {
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
#pragma unroll
    for (int r = 0; r < R; ++r) {
#pragma unroll
        for (int c = 0; c < NC; ++c) {
            const float v = mmv_warp_sum(acc[r][c]);
            if (lane == 0) s_red[warp][r * NC + c] = v;
        }
    }
    __syncthreads();
    if (threadIdx.x < R * NC) {
        const int r = threadIdx.x / NC, c = threadIdx.x % NC;
        if (c < nc && row0 + r < p.m) {
            float v = 0.0f;
#pragma unroll
            for (int i = 0; i < mmv_threads / 32; ++i) v += s_red[i][threadIdx.x];
            s_dst[c][row0 + r] = v;
        }
    }
    __syncthreads();
}

// Blocks per SM the register allocation aims at (more columns need more registers).
constexpr int mmvq_min_blocks(int nc) { return nc <= 2 ? 6 : nc <= 4 ? 4 : 3; }

template <ggml_type T, int NC, int R>
__global__ void __launch_bounds__(mmv_threads, mmvq_min_blocks(NC)) mmvq_kernel(const mmv_params p, const mmvq_plan L) {
    extern __shared__ __align__(16) uint8_t mmvq_smem[];
    __shared__ int64_t s_act[NC];
    __shared__ float * s_dst[NC];
    __shared__ float s_red[mmv_threads / 32][R * NC];
    const int64_t row0 = int64_t(blockIdx.x) * R;
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
            mmvq_rows<T, NC, R>(p, L, b.w, row0, nc, s_act, mmvq_smem, acc);
            mmvq_store<NC, R>(p, acc, s_red, s_dst, row0, nc);
        }
    }
}

// Launches the kernel of type T for n_cols columns per batch.
template <ggml_type T> void mmvq_launch_type(const mmv_params & p, int64_t n_cols, cudaStream_t stream) {
    const mmvq_plan L = mmvq_make_plan(T, p.k, p.m, n_cols);
    const dim3 grid(unsigned(L.grid_x), unsigned(p.n_batches < mm_max_grid_y ? p.n_batches : mm_max_grid_y));
    switch (L.nc) {
        case 1: mmvq_kernel<T, 1, mmv_rows_for(1)><<<grid, mmv_threads, L.smem_bytes, stream>>>(p, L); break;
        case 2: mmvq_kernel<T, 2, mmv_rows_for(2)><<<grid, mmv_threads, L.smem_bytes, stream>>>(p, L); break;
        case 4: mmvq_kernel<T, 4, mmv_rows_for(4)><<<grid, mmv_threads, L.smem_bytes, stream>>>(p, L); break;
        default: mmvq_kernel<T, 8, mmv_rows_for(8)><<<grid, mmv_threads, L.smem_bytes, stream>>>(p, L); break;
    }
}
