// MUL_MAT on the GPU: dst[m, n, i2, i3] = sum_k a[k, m, i2 / r2, i3 / r3] * b[k, n, i2, i3].
//
// Few columns per batch (mm_use_mat_vec: up to 16 for quantized weights, 8 for float ones): the
// mat-vec kernels (mul-mat-vec*.cu). Quantized weights take their activations as Q8 rows made
// once per call (mm_quantize_q8), float weights F32 rows (b in place when its rows are dense).
//
// Many columns: cuBLAS GEMM with F32 accumulation on b converted to dense rows of the GEMM's
// input type — F16 for F16 and quantized weights, BF16 for BF16, F32 for F32 weights. Float
// weights are used in place (lda = nb1 / element size); quantized weights are dequantized to F16
// in row tiles of up to mm_gemm_weight_budget bytes in scratch, each tile followed by its GEMMs.
// Broadcast over dims 2 and 3 (grouped-query attention): the r2 batches of b that share a
// matrix of a are consecutive rows of the converted b, so one GEMM with r2 * N columns serves
// them when dst's batches are adjacent too; then batched GEMMs over a's matrices.
#include "mul-mat.cuh"
#include "mul-mat-plan.h"
#include "mul-mat-vec.cuh"
#include "ops.cuh"

#include <algorithm>
#include <climits>

namespace {

constexpr int mm_threads = 256;

unsigned mm_grid(int64_t threads_needed) {
    const int64_t blocks = (threads_needed + mm_threads - 1) / mm_threads;
    return unsigned(blocks < (int64_t(1) << 30) ? (blocks > 0 ? blocks : 1) : (int64_t(1) << 30));
}

// One warp per 32 elements.
__global__ void __launch_bounds__(mm_threads) mm_quantize_q8_kernel(const mm_rows_src s, int8_t * q, float2 * meta) {
    const int lane = threadIdx.x % 32;
    const int64_t nb = s.k / 32;
    const int64_t total = s.n_rows * nb;
    const int64_t stride = int64_t(gridDim.x) * (mm_threads / 32);
    for (int64_t g = int64_t(blockIdx.x) * (mm_threads / 32) + threadIdx.x / 32; g < total; g += stride) {
        const int64_t row = g / nb, kb = g % nb;
        const float x = *mm_rows_elem(s, row, kb * 32 + lane);
        float amax = fabsf(x);
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) amax = fmaxf(amax, __shfl_xor_sync(0xFFFFFFFFu, amax, o));
        const float d = amax / 127.0f;
        const float id = d > 0.0f ? 1.0f / d : 0.0f;
        const int qi = max(-127, min(127, __float2int_rn(roundf(x * id))));
        int sum = qi;
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) sum += __shfl_xor_sync(0xFFFFFFFFu, sum, o);
        q[row * s.k + kb * 32 + lane] = int8_t(qi);
        if (lane == 0) meta[row * nb + kb] = make_float2(d, d * float(sum));
    }
}

__device__ __forceinline__ void mm_put(float * p, float v) { *p = v; }
__device__ __forceinline__ void mm_put(__half * p, float v) { *p = mm_half_sat(v); }
__device__ __forceinline__ void mm_put(__nv_bfloat16 * p, float v) { *p = __float2bfloat16_rn(v); }

template <typename OT> __global__ void __launch_bounds__(mm_threads) mm_convert_rows_kernel(const mm_rows_src s, OT * out) {
    const int64_t total = s.n_rows * s.k;
    for (int64_t i = int64_t(blockIdx.x) * mm_threads + threadIdx.x; i < total; i += int64_t(gridDim.x) * mm_threads) {
        mm_put(out + i, *mm_rows_elem(s, i / s.k, i % s.k));
    }
}

template <typename OT> bool mm_convert_rows_t(const mm_rows_src & s, OT * out, cudaStream_t stream) {
    if (s.n_rows * s.k == 0) return true;
    mm_convert_rows_kernel<OT><<<mm_grid(s.n_rows * s.k), mm_threads, 0, stream>>>(s, out);
    return GGML_CUDA_CHECK(cudaGetLastError());
}

}  // namespace

mm_rows_src mm_rows_src_of(const ggml_tensor * t) {
    mm_rows_src s;
    s.data = static_cast<const char *>(t->data);
    s.k = t->ne[0];
    s.ne1 = t->ne[1];
    s.ne2 = t->ne[2];
    s.n_rows = t->ne[1] * t->ne[2] * t->ne[3];
    s.nb0 = t->nb[0];
    s.nb1 = t->nb[1];
    s.nb2 = t->nb[2];
    s.nb3 = t->nb[3];
    return s;
}

bool mm_quantize_q8(const mm_rows_src & s, int8_t * q, float2 * meta, cudaStream_t stream) {
    const int64_t warps = s.n_rows * (s.k / 32);
    if (warps == 0) return true;
    mm_quantize_q8_kernel<<<mm_grid(warps * 32), mm_threads, 0, stream>>>(s, q, meta);
    return GGML_CUDA_CHECK(cudaGetLastError());
}

bool mm_convert_rows(const mm_rows_src & s, float * out, cudaStream_t stream) { return mm_convert_rows_t(s, out, stream); }
bool mm_convert_rows(const mm_rows_src & s, __half * out, cudaStream_t stream) { return mm_convert_rows_t(s, out, stream); }
bool mm_convert_rows(const mm_rows_src & s, __nv_bfloat16 * out, cudaStream_t stream) {
    return mm_convert_rows_t(s, out, stream);
}

bool mm_rows_dense_f32(const ggml_tensor * b) {
    if (b->type != GGML_TYPE_F32 || b->nb[0] != sizeof(float) || b->nb[1] % sizeof(float) != 0) return false;
    if (b->ne[2] > 1 && b->nb[2] != size_t(b->ne[1]) * b->nb[1]) return false;
    if (b->ne[3] > 1 && b->nb[3] != size_t(b->ne[2]) * b->nb[2]) return false;
    return true;
}

bool mm_weights_supported(const ggml_tensor * a) {
    const mm_type_geom g = mm_type_geom_of(a->type);
    if (g.qk == 0 || a->nb[0] != size_t(g.bytes) || a->ne[0] % g.qk != 0) return false;
    if (g.quantized) return a->ne[0] % 32 == 0;
    return a->nb[1] % size_t(g.bytes) == 0 && a->nb[2] % size_t(g.bytes) == 0 && a->nb[3] % size_t(g.bytes) == 0;
}

bool mm_data_aligned(const ggml_tensor * a, const ggml_tensor * b, const ggml_tensor * dst) {
    const mm_type_geom g = mm_type_geom_of(a->type);
    if (!g.quantized && reinterpret_cast<uintptr_t>(a->data) % size_t(g.bytes) != 0) return false;
    return reinterpret_cast<uintptr_t>(b->data) % sizeof(float) == 0 && reinterpret_cast<uintptr_t>(dst->data) % sizeof(float) == 0;
}

bool mm_weights_aligned16(const ggml_tensor * a) {
    uintptr_t bits = reinterpret_cast<uintptr_t>(a->data) | a->nb[1];
    if (a->ne[2] > 1) bits |= a->nb[2];
    if (a->ne[3] > 1) bits |= a->nb[3];
    return bits % 16 == 0;
}

bool mm_mat_vec_activations(ggml_cuda_context & ctx, const ggml_tensor * a, const ggml_tensor * b, mmv_params & p,
                            int64_t n_cols) {
    const mm_rows_src s = mm_rows_src_of(b);
    const bool quantized = mm_type_geom_of(a->type).quantized;
    if (quantized && mmv_nc_for(n_cols) == 1 && mm_rows_dense_f32(b) &&
        (reinterpret_cast<uintptr_t>(b->data) | b->nb[1]) % 16 == 0) {
        // one column per pass, rows dense and aligned: the kernel quantizes them itself
        p.q8_fused = true;
        p.act_f = static_cast<const float *>(b->data);
        p.act_ld = int64_t(b->nb[1] / sizeof(float));
        p.aligned16 = mm_weights_aligned16(a);
        return true;
    }
    if (quantized) {
        int8_t * q = static_cast<int8_t *>(ggml_cuda_scratch(ctx, mm_q8_bytes(s.n_rows, p.k), 0));
        if (!q) return false;
        p.act_q = q;
        p.act_meta = mm_q8_meta(q, s.n_rows, p.k);
        p.aligned16 = mm_weights_aligned16(a);
        return mm_quantize_q8(s, q, mm_q8_meta(q, s.n_rows, p.k), ctx.stream);
    }
    if (mm_rows_dense_f32(b)) {
        p.act_f = static_cast<const float *>(b->data);
        p.act_ld = int64_t(b->nb[1] / sizeof(float));
    } else {
        float * x = static_cast<float *>(ggml_cuda_scratch(ctx, size_t(s.n_rows * p.k) * sizeof(float), 0));
        if (!x || !mm_convert_rows(s, x, ctx.stream)) return false;
        p.act_f = x;
        p.act_ld = p.k;
    }
    p.aligned16 = mm_weights_aligned16(a) && p.k % 8 == 0 && reinterpret_cast<uintptr_t>(p.act_f) % 16 == 0 &&
                  p.act_ld % 4 == 0;
    return true;
}

namespace {

// ---- mat-vec path ----

void mm_mat_vec(ggml_cuda_context & ctx, ggml_tensor * dst) {
    const ggml_tensor * a = dst->src[0];
    const ggml_tensor * b = dst->src[1];
    mmv_params p;
    p.w = static_cast<const uint8_t *>(a->data);
    p.w_nb1 = a->nb[1];
    p.w_nb2 = a->nb[2];
    p.w_nb3 = a->nb[3];
    p.k = a->ne[0];
    p.m = a->ne[1];
    p.dst = static_cast<float *>(dst->data);
    p.mode = mmv_mode::plain;
    p.ncols = int(b->ne[1]);
    p.ne12 = b->ne[2];
    p.r2 = b->ne[2] / a->ne[2];
    p.r3 = b->ne[3] / a->ne[3];
    p.n_batches = b->ne[2] * b->ne[3];
    p.d_nb1 = dst->nb[1];
    p.d_nb2 = dst->nb[2];
    p.d_nb3 = dst->nb[3];
    if (!mm_mat_vec_activations(ctx, a, b, p, p.ncols)) return;
    if (mm_type_geom_of(a->type).quantized) {
        mmvq_launch(a->type, p, p.ncols, ctx.stream);
    } else {
        mmvf_launch(a->type, p, p.ncols, ctx.stream);
    }
    GGML_CUDA_CHECK(cudaGetLastError());
}

// ---- GEMM path ----

struct mm_gemm_ctx {
    ggml_cuda_context * ctx = nullptr;
    const ggml_tensor * a = nullptr;
    ggml_tensor * dst = nullptr;
    int64_t K = 0, M = 0, N = 0, ne12 = 1, ne13 = 1, ne02 = 1, ne03 = 1, r2 = 1, r3 = 1;
    cudaDataType in_type = CUDA_R_16F;
    size_t in_size = 2;
    const char * B = nullptr;  // converted b: rows of K, batch (i12, i13) at (i13 * ne12 + i12) * N rows
    bool merge = false;        // the r2 batches sharing a matrix run as one GEMM of r2 * N columns
    int ldc = 0;
};

const char * mm_b_batch(const mm_gemm_ctx & g, int64_t i12, int64_t i13) {
    return g.B + size_t((i13 * g.ne12 + i12) * g.N * g.K) * g.in_size;
}

float * mm_dst_at(const mm_gemm_ctx & g, int64_t i12, int64_t i13, int64_t m0) {
    return reinterpret_cast<float *>(static_cast<char *>(g.dst->data) + i12 * g.dst->nb[2] + i13 * g.dst->nb[3]) + m0;
}

// C[m, n] (ldc) = A[m rows of lda] . B[n columns of K], one GEMM.
bool mm_gemm_one(const mm_gemm_ctx & g, const void * A, cudaDataType a_type, int64_t lda, int64_t m, int64_t n,
                 const void * B, float * C) {
    const float alpha = 1.0f, beta = 0.0f;
    return GGML_CUBLAS_CHECK(cublasGemmEx(g.ctx->cublas, CUBLAS_OP_T, CUBLAS_OP_N, int(m), int(n), int(g.K), &alpha, A,
                                          a_type, int(lda), B, g.in_type, int(g.K), &beta, C, CUDA_R_32F, g.ldc,
                                          CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

// Float weights in place: per i13, batched over a's matrices (or over b's batches).
bool mm_gemm_in_place(const mm_gemm_ctx & g) {
    const ggml_tensor * a = g.a;
    const size_t es = ggml_type_size(a->type);
    const int64_t lda = int64_t(a->nb[1] / es), stride_a = int64_t(a->nb[2] / es);
    const float alpha = 1.0f, beta = 0.0f;
    for (int64_t i13 = 0; i13 < g.ne13; ++i13) {
        const char * A = static_cast<const char *>(a->data) + (i13 / g.r3) * a->nb[3];
        if (g.merge || g.r2 == 1) {
            const int64_t n = g.N * g.r2;
            const long long stride_c = (long long)(g.r2 * int64_t(g.dst->nb[2] / sizeof(float)));
            if (!GGML_CUBLAS_CHECK(cublasGemmStridedBatchedEx(
                    g.ctx->cublas, CUBLAS_OP_T, CUBLAS_OP_N, int(g.M), int(n), int(g.K), &alpha, A, g.in_type, int(lda),
                    stride_a, mm_b_batch(g, 0, i13), g.in_type, int(g.K), (long long)(n * g.K), &beta,
                    mm_dst_at(g, 0, i13, 0), CUDA_R_32F, g.ldc, stride_c, int(g.ne02), CUBLAS_COMPUTE_32F,
                    CUBLAS_GEMM_DEFAULT))) {
                return false;
            }
            continue;
        }
        for (int64_t i12 = 0; i12 < g.ne12; ++i12) {
            if (!mm_gemm_one(g, A + (i12 / g.r2) * a->nb[2], g.in_type, lda, g.M, g.N, mm_b_batch(g, i12, i13),
                             mm_dst_at(g, i12, i13, 0))) {
                return false;
            }
        }
    }
    return true;
}

// Quantized weights: each matrix of a in F16 row tiles, each tile used by every batch of b that
// reads that matrix.
bool mm_gemm_dequant(const mm_gemm_ctx & g) {
    const ggml_tensor * a = g.a;
    const mm_gemm_tiles tiles = mm_gemm_plan_tiles(g.M, g.K, mm_gemm_weight_budget);
    __half * W = static_cast<__half *>(ggml_cuda_scratch(*g.ctx, size_t(tiles.rows * g.K) * sizeof(__half), 0));
    if (!W) return false;
    for (int64_t i03 = 0; i03 < g.ne03; ++i03) {
        for (int64_t i02 = 0; i02 < g.ne02; ++i02) {
            for (int64_t t = 0; t < tiles.count; ++t) {
                const int64_t m0 = t * tiles.rows, mt = std::min(tiles.rows, g.M - m0);
                const char * src = static_cast<const char *>(a->data) + i03 * a->nb[3] + i02 * a->nb[2] + m0 * a->nb[1];
                if (!ggml_cuda_dequantize_to_f16(a->type, src, W, mt, g.K, a->nb[1], g.ctx->stream)) return false;
                for (int64_t i13 = i03 * g.r3; i13 < (i03 + 1) * g.r3; ++i13) {
                    if (g.merge || g.r2 == 1) {
                        if (!mm_gemm_one(g, W, CUDA_R_16F, g.K, mt, g.N * g.r2, mm_b_batch(g, i02 * g.r2, i13),
                                         mm_dst_at(g, i02 * g.r2, i13, m0))) {
                            return false;
                        }
                        continue;
                    }
                    for (int64_t i12 = i02 * g.r2; i12 < (i02 + 1) * g.r2; ++i12) {
                        if (!mm_gemm_one(g, W, CUDA_R_16F, g.K, mt, g.N, mm_b_batch(g, i12, i13),
                                         mm_dst_at(g, i12, i13, m0))) {
                            return false;
                        }
                    }
                }
            }
        }
    }
    return true;
}

void mm_gemm(ggml_cuda_context & ctx, ggml_tensor * dst) {
    const ggml_tensor * a = dst->src[0];
    const ggml_tensor * b = dst->src[1];
    mm_gemm_ctx g;
    g.ctx = &ctx;
    g.a = a;
    g.dst = dst;
    g.K = a->ne[0];
    g.M = a->ne[1];
    g.N = b->ne[1];
    g.ne12 = b->ne[2];
    g.ne13 = b->ne[3];
    g.ne02 = a->ne[2];
    g.ne03 = a->ne[3];
    g.r2 = g.ne12 / g.ne02;
    g.r3 = g.ne13 / g.ne03;
    g.merge = g.r2 > 1 && dst->nb[2] == size_t(g.N) * dst->nb[1];
    g.ldc = int(dst->nb[1] / sizeof(float));
    const mm_rows_src s = mm_rows_src_of(b);
    const bool in_place = !mm_type_geom_of(a->type).quantized;
    if (a->type == GGML_TYPE_F32) {
        g.in_type = CUDA_R_32F;
        g.in_size = 4;
    } else if (a->type == GGML_TYPE_BF16) {
        g.in_type = CUDA_R_16BF;
    }
    if (a->type == GGML_TYPE_F32 && b->nb[1] == size_t(g.K) * sizeof(float) && mm_rows_dense_f32(b)) {
        g.B = static_cast<const char *>(b->data);
    } else {
        void * x = ggml_cuda_scratch(ctx, size_t(s.n_rows * g.K) * g.in_size, 1);
        if (!x) return;
        bool ok = false;
        if (g.in_type == CUDA_R_32F) ok = mm_convert_rows(s, static_cast<float *>(x), ctx.stream);
        if (g.in_type == CUDA_R_16F) ok = mm_convert_rows(s, static_cast<__half *>(x), ctx.stream);
        if (g.in_type == CUDA_R_16BF) ok = mm_convert_rows(s, static_cast<__nv_bfloat16 *>(x), ctx.stream);
        if (!ok) return;
        g.B = static_cast<const char *>(x);
    }
    if (in_place) {
        mm_gemm_in_place(g);
    } else {
        mm_gemm_dequant(g);
    }
}

}  // namespace

bool ggml_cuda_mul_mat_supported(const ggml_tensor * dst) {
    const ggml_tensor * a = dst->src[0];
    const ggml_tensor * b = dst->src[1];
    if (!a || !b || dst->type != GGML_TYPE_F32 || b->type != GGML_TYPE_F32 || !mm_weights_supported(a)) return false;
    if (a->ne[0] != b->ne[0] || a->ne[2] <= 0 || a->ne[3] <= 0) return false;
    if (b->ne[2] % a->ne[2] != 0 || b->ne[3] % a->ne[3] != 0) return false;
    if (dst->ne[0] != a->ne[1] || dst->ne[1] != b->ne[1] || dst->ne[2] != b->ne[2] || dst->ne[3] != b->ne[3]) {
        return false;
    }
    if (!ggml_is_contiguous(dst)) return false;
    for (int i = 0; i < GGML_MAX_DIMS; ++i) {
        if (b->nb[i] % sizeof(float) != 0) return false;
    }
    // cuBLAS takes int sizes and leading dimensions; the mat-vec kernels int columns
    const int64_t lim = INT_MAX;
    return a->ne[0] < lim && a->ne[1] < lim && b->ne[1] * b->ne[2] < lim && int64_t(a->nb[1]) < lim * 4 &&
           int64_t(dst->nb[1] / sizeof(float)) < lim;
}

void ggml_cuda_op_mul_mat(ggml_cuda_context & ctx, ggml_tensor * dst) {
    if (ggml_nelements(dst) == 0) return;
    const ggml_tensor * a = dst->src[0];
    if (!mm_data_aligned(a, dst->src[1], dst)) {
        ggml_cuda_fail(ctx, "mul_mat: data not aligned to the element size");
        return;
    }
    if (a->ne[0] == 0) {
        GGML_CUDA_CHECK(cudaMemsetAsync(dst->data, 0, ggml_nbytes(dst), ctx.stream));
        return;
    }
    if (mm_use_mat_vec(a->type, dst->src[1]->ne[1])) {
        mm_mat_vec(ctx, dst);
    } else {
        mm_gemm(ctx, dst);
    }
}
