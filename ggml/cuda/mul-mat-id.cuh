// ggml/cuda/mul-mat-id.cuh — the grouped expert GEMM of MUL_MAT_ID (internal).
//
// Usage (mul-mat-id.cu, after the grouping kernel and the gather of the activations):
//   moe_gemm_params p = …;
//   moe_gemm_launch(as->type, p, moe_max_tiles(n_pairs, n_expert, moe_gemm_tile_cols), stream);
//
// Each block takes tiles (expert, up to 64 columns of perm) from the list the grouping made
// (blocks past *n_tiles return), and 64 rows of that expert's weights: per step of 64 elements
// of k it dequantizes its 64 x 64 weights into F16 in shared memory (the block decoders of
// quants-decode.cuh, the floats of ggml's dequantization rounded to F16), loads the 64 columns'
// F16 activations, and multiplies with tensor cores (wmma 16x16x16, F32 accumulators). The
// results go to the pairs' rows of dst.
#pragma once

#include "cuda-common.cuh"
#include "mul-mat-id-group.cuh"

struct moe_gemm_params {
    const uint8_t * w = nullptr;  // expert 0's weights
    size_t w_nb1 = 0, w_nb2 = 0;  // bytes between rows, between experts
    int64_t k = 0, m = 0;
    const __half * x = nullptr;   // gathered activations: row j (k halves) is the pair perm[j]
    const int32_t * perm = nullptr;
    const moe_tile * tiles = nullptr;
    const int32_t * n_tiles = nullptr;
    float * dst = nullptr;        // [m, n_used, n_t]: pair p's row at dst + p * m
};

// F16 and the quantized weight types; false for any other.
bool moe_gemm_launch(ggml_type t, const moe_gemm_params & p, int64_t max_tiles, cudaStream_t stream);
