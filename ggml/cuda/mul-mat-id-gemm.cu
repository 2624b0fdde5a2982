// The grouped expert GEMM of MUL_MAT_ID (see mul-mat-id.cuh): one kernel per weight type.
#include "mul-mat-id.cuh"
#include "mul-mat-plan.h"
#include "quants-decode.cuh"

#include <mma.h>

namespace {

using namespace nvcuda;

constexpr int mg_bm = moe_gemm_tile_rows;  // rows of weights per block
constexpr int mg_bn = moe_gemm_tile_cols;  // columns (pairs) per tile
constexpr int mg_bk = 64;                  // elements of k per step
constexpr int mg_threads = 128;            // 4 warps, 2 x 2 over the 64 x 64 tile
constexpr int mg_ld = mg_bk + 8;           // halves per row of the A and B tiles (a multiple of 8)
constexpr int mg_ldc = mg_bm + 4;          // floats per column of the C tile (a multiple of 4)
constexpr int mg_smem = 2 * mg_bm * mg_ld * 2 > mg_bn * mg_ldc * 4 ? 2 * mg_bm * mg_ld * 2 : mg_bn * mg_ldc * 4;
static_assert(mg_bm == 64 && mg_bn == 64 && mg_threads == 128, "the loaders below assume these");

// Run `run` (32 elements) of a weight row as floats: quantized types through their decoders.
template <typename B> struct mg_quant {
    __device__ static void run_f32(const uint8_t * row, int64_t run, float * y) {
        constexpr int runs_per_block = B::qk / 32;
        qd_run_to_f32<B>(row + (run / runs_per_block) * B::bytes, int(run % runs_per_block), y);
    }
};

// F16 experts: the elements as they are (F32 and BF16 experts take the mat-vec kernels, see
// moe_use_mat_vec).
struct mg_f16 {
    __device__ static void run_f32(const uint8_t * row, int64_t run, float * y) {
        const __half * p = reinterpret_cast<const __half *>(row) + run * 32;
#pragma unroll
        for (int e = 0; e < 32; ++e) y[e] = __half2float(p[e]);
    }
};

// The 64 x 64 weight tile of step k0 as F16: thread t decodes run k0 / 32 + t % 2 of row t / 2.
template <typename D>
__device__ __forceinline__ void mg_load_a(const moe_gemm_params & p, const uint8_t * w, int64_t m0, int64_t k0,
                                          __half * As) {
    const int r = threadIdx.x / 2, h = threadIdx.x % 2;
    const int64_t run = k0 / 32 + h;
    float y[32];
    if (m0 + r < p.m && run < p.k / 32) {
        D::run_f32(w + (m0 + r) * p.w_nb1, run, y);
    } else {
#pragma unroll
        for (int e = 0; e < 32; ++e) y[e] = 0.0f;
    }
    int4 * out = reinterpret_cast<int4 *>(As + r * mg_ld + 32 * h);
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        __half2 v[4];
#pragma unroll
        for (int j = 0; j < 4; ++j) v[j] = __floats2half2_rn(y[8 * i + 2 * j], y[8 * i + 2 * j + 1]);
        out[i] = *reinterpret_cast<const int4 *>(v);
    }
}

// The tile's 64 columns of activations for step k0 (zeros past n_cols and past k).
__device__ __forceinline__ void mg_load_b(const moe_gemm_params & p, const moe_tile & t, int64_t k0, __half * Bs) {
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        const int c = threadIdx.x + mg_threads * i;
        const int j = c / 8, part = c % 8;
        const int64_t kk = k0 + 8 * part;
        int4 v = make_int4(0, 0, 0, 0);
        if (j < t.n_cols && kk < p.k) v = __ldg(reinterpret_cast<const int4 *>(p.x + (int64_t(t.col0) + j) * p.k + kk));
        *reinterpret_cast<int4 *>(Bs + j * mg_ld + 8 * part) = v;
    }
}

template <typename D>
__global__ void __launch_bounds__(mg_threads, 4) moe_gemm_kernel(const moe_gemm_params p) {
    __shared__ __align__(128) unsigned char smem[mg_smem];
    __half * As = reinterpret_cast<__half *>(smem);
    __half * Bs = As + mg_bm * mg_ld;
    float * Cs = reinterpret_cast<float *>(smem);
    const int warp = threadIdx.x / 32, wm = warp % 2, wn = warp / 2;
    const int64_t m0 = int64_t(blockIdx.x) * mg_bm;
    const int32_t n_tiles = *p.n_tiles;
    for (int64_t ti = blockIdx.y; ti < n_tiles; ti += gridDim.y) {
        const moe_tile t = p.tiles[ti];
        const uint8_t * w = p.w + int64_t(t.expert) * p.w_nb2;
        wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[2][2];
#pragma unroll
        for (int i = 0; i < 2; ++i) {
#pragma unroll
            for (int j = 0; j < 2; ++j) wmma::fill_fragment(acc[i][j], 0.0f);
        }
        for (int64_t k0 = 0; k0 < p.k; k0 += mg_bk) {
            mg_load_a<D>(p, w, m0, k0, As);
            mg_load_b(p, t, k0, Bs);
            __syncthreads();
#pragma unroll
            for (int kk = 0; kk < mg_bk; kk += 16) {
                wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> fa[2];
                wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::col_major> fb[2];
#pragma unroll
                for (int i = 0; i < 2; ++i) wmma::load_matrix_sync(fa[i], As + (32 * wm + 16 * i) * mg_ld + kk, mg_ld);
#pragma unroll
                for (int j = 0; j < 2; ++j) wmma::load_matrix_sync(fb[j], Bs + (32 * wn + 16 * j) * mg_ld + kk, mg_ld);
#pragma unroll
                for (int i = 0; i < 2; ++i) {
#pragma unroll
                    for (int j = 0; j < 2; ++j) wmma::mma_sync(acc[i][j], fa[i], fb[j], acc[i][j]);
                }
            }
            __syncthreads();
        }
#pragma unroll
        for (int i = 0; i < 2; ++i) {
#pragma unroll
            for (int j = 0; j < 2; ++j) {
                wmma::store_matrix_sync(Cs + (32 * wn + 16 * j) * mg_ldc + 32 * wm + 16 * i, acc[i][j], mg_ldc,
                                        wmma::mem_col_major);
            }
        }
        __syncthreads();
        for (int idx = threadIdx.x; idx < mg_bn * mg_bm; idx += mg_threads) {
            const int j = idx / mg_bm, r = idx % mg_bm;
            if (j < t.n_cols && m0 + r < p.m) p.dst[int64_t(p.perm[t.col0 + j]) * p.m + m0 + r] = Cs[j * mg_ldc + r];
        }
        __syncthreads();
    }
}

template <typename D> void mg_launch(const moe_gemm_params & p, int64_t max_tiles, cudaStream_t stream) {
    const int64_t gy = max_tiles < mm_max_grid_y ? (max_tiles > 0 ? max_tiles : 1) : mm_max_grid_y;
    const dim3 grid(unsigned(mm_ceil_div(p.m, mg_bm)), unsigned(gy));
    moe_gemm_kernel<D><<<grid, mg_threads, 0, stream>>>(p);
}

}  // namespace

bool moe_gemm_launch(ggml_type t, const moe_gemm_params & p, int64_t max_tiles, cudaStream_t stream) {
    if (t == GGML_TYPE_F16) {
        mg_launch<mg_f16>(p, max_tiles, stream);
        return true;
    }
    return qd_dispatch_quant(t, [&](auto blk) { mg_launch<mg_quant<decltype(blk)>>(p, max_tiles, stream); });
}
