// ggml/cuda/mul-mat-vec.cuh — the mat-vec kernels of MUL_MAT and MUL_MAT_ID (internal).
//
// Usage (mul-mat.cu, mul-mat-id.cu):
//   mmv_params p = …;                     // weights, activations, outputs, how batches map
//   mmvq_launch(GGML_TYPE_Q4_K, p, n_cols, stream);   // quantized weights, Q8 activations
//   mmvf_launch(GGML_TYPE_F16, p, n_cols, stream);    // float weights, F32 activations
//
// A launch covers every batch (grid.y) and every row block (grid.x); n_cols is the most columns
// a batch has (1 .. 8 per pass; more run further passes). What a batch is:
//   plain       MUL_MAT batch (i12, i13): weights of (i12 / r2, i13 / r3), ncols activation rows
//               batch * ncols + n, outputs at dst + i12 nb2 + i13 nb3 + n nb1;
//   moe_pairs   MUL_MAT_ID pair (slot i, token t) = batch i + n_used t: expert ids[i, t], one
//               activation row (i % n_b) + n_b t, output row i + n_used t of dst [m, n_used, n_t];
//               an expert id out of range anywhere: nothing is written, *error_flag is set;
//   moe_grouped the batch-th expert some pair chose (mul-mat-id-group.cuh): its pairs as columns.
//
// Activations: quantized weights read Q8 rows (int8 act_q + k * row, and per 32 a float2
// {d, d * sum(q)} at act_meta + k / 32 * row, see mm_quantize_q8 in mul-mat.cu), or with
// q8_fused (one column per pass) F32 rows that each thread quantizes itself, run by run, to
// the same Q8 values (no separate kernel, no launch: decode); float weights read F32 rows at
// act_f + act_ld * row.
#pragma once

#include "cuda-common.cuh"
#include "mul-mat-plan.h"

#include <cstdint>

enum class mmv_mode : int { plain, moe_pairs, moe_grouped };

struct mmv_params {
    const uint8_t * w = nullptr;     // weights of batch (0, 0) / of expert 0
    size_t w_nb1 = 0;                // bytes between rows
    size_t w_nb2 = 0, w_nb3 = 0;     // plain: batch strides; moe: bytes between experts (w_nb2)
    int64_t k = 0, m = 0;            // elements per row, rows
    bool aligned16 = false;          // every row starts 16-byte aligned (quantized: cp.async copies;
                                     // float: 16-byte loads, with act rows aligned too and k % 8 == 0)
    const int8_t * act_q = nullptr;  // quantized weights: Q8 activation rows
    const float2 * act_meta = nullptr;
    bool q8_fused = false;           // quantized weights, one column: F32 rows at act_f (16-byte
                                     // aligned, act_ld % 4 == 0) quantized in the kernel
    const float * act_f = nullptr;   // float weights: F32 activation rows
    int64_t act_ld = 0;
    float * dst = nullptr;
    mmv_mode mode = mmv_mode::plain;
    int64_t n_batches = 0;
    // plain
    int ncols = 1;
    int64_t ne12 = 1, r2 = 1, r3 = 1;
    size_t d_nb1 = 0, d_nb2 = 0, d_nb3 = 0;
    // moe
    const int32_t * ids = nullptr;
    int64_t ids_ld = 0;              // int32 elements between tokens' rows of ids
    int n_used = 1, n_b = 1;
    int64_t n_expert = 0;
    const int32_t * grp_count = nullptr;   // moe_grouped: see mul-mat-id-group.cuh
    const int32_t * grp_offset = nullptr;
    const int32_t * grp_perm = nullptr;
    const int32_t * grp_active = nullptr;
    const int32_t * grp_n_active = nullptr;
    int * error_flag = nullptr;
};

// Quantized weights (every type of qd_dispatch_quant): false when the type has no kernel.
// mul-mat-vec-q-legacy.cu: Q4_0 … Q8_0, IQ4_NL, MXFP4; mul-mat-vec-q-k.cu: the K-quants, IQ4_XS.
bool mmvq_launch(ggml_type t, const mmv_params & p, int64_t n_cols, cudaStream_t stream);
bool mmvq_launch_k(ggml_type t, const mmv_params & p, int64_t n_cols, cudaStream_t stream);
// F32 / F16 / BF16 weights.
bool mmvf_launch(ggml_type t, const mmv_params & p, int64_t n_cols, cudaStream_t stream);

#if defined(__CUDACC__)

// What one batch of a launch works on.
struct mmv_batch {
    const uint8_t * w = nullptr;  // its weight matrix
    int n_cols = 0;               // 0: nothing to do
    bool valid = true;            // false: moe_pairs with an id out of range
    int64_t i12 = 0, i13 = 0;     // plain
    int32_t grp_off = 0;          // moe_grouped: first position of its pairs in grp_perm
};

__device__ __forceinline__ mmv_batch mmv_batch_of(const mmv_params & p, int64_t bi) {
    mmv_batch b;
    if (p.mode == mmv_mode::plain) {
        b.i12 = bi % p.ne12;
        b.i13 = bi / p.ne12;
        b.w = p.w + (b.i12 / p.r2) * p.w_nb2 + (b.i13 / p.r3) * p.w_nb3;
        b.n_cols = p.ncols;
    } else if (p.mode == mmv_mode::moe_pairs) {
        // every block checks every id of the batch: one out of range and none writes anything
        for (int64_t q = 0; q < p.n_batches && b.valid; ++q) {
            const int32_t eq = p.ids[q % p.n_used + q / p.n_used * p.ids_ld];
            b.valid = eq >= 0 && eq < p.n_expert;
        }
        const int64_t i = bi % p.n_used, t = bi / p.n_used;
        b.w = p.w + (b.valid ? p.ids[i + t * p.ids_ld] : 0) * p.w_nb2;
        b.n_cols = b.valid ? 1 : 0;
    } else {
        if (bi >= *p.grp_n_active) return b;
        const int32_t e = p.grp_active[bi];
        b.w = p.w + e * p.w_nb2;
        b.n_cols = p.grp_count[e];
        b.grp_off = p.grp_offset[e];
    }
    return b;
}

// Activation row and output column of column c of batch bi.
__device__ __forceinline__ void mmv_column(const mmv_params & p, const mmv_batch & b, int64_t bi, int c,
                                           int64_t * act_row, float ** dst) {
    if (p.mode == mmv_mode::plain) {
        *act_row = bi * p.ncols + c;
        *dst = reinterpret_cast<float *>(reinterpret_cast<char *>(p.dst) + b.i12 * p.d_nb2 + b.i13 * p.d_nb3 +
                                         c * p.d_nb1);
        return;
    }
    const int64_t pair = p.mode == mmv_mode::moe_pairs ? bi : p.grp_perm[b.grp_off + c];
    const int64_t i = pair % p.n_used, t = pair / p.n_used;
    *act_row = i % p.n_b + t * p.n_b;
    *dst = p.dst + pair * p.m;
}

__device__ __forceinline__ float mmv_warp_sum(float v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xFFFFFFFFu, v, o);
    return v;
}

// moe_pairs with an expert id out of range: the error flag (nothing is written).
__device__ __forceinline__ void mmv_flag_error(const mmv_params & p) {
    if (threadIdx.x == 0 && p.error_flag) atomicExch(p.error_flag, 1);
}

#endif  // __CUDACC__
