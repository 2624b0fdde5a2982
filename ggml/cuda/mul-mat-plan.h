// ggml/cuda/mul-mat-plan.h — host-side planning of the CUDA matrix products (internal; plain C++
// so that the tests check it on machines without a GPU).
//
// Usage:
//   if (mm_use_mat_vec(a->type, n_cols)) {
//       const mmvq_plan pl = mmvq_make_plan(a->type, k, m, n_cols);   // quantized weights
//       kernel<<<dim3(pl.grid_x, n_batches), mmv_threads, pl.smem_bytes, stream>>>(…);
//   } else {
//       const mm_gemm_tiles t = mm_gemm_plan_tiles(m, k, mm_gemm_weight_budget);  // dequantized tiles
//   }
//
// The numbers here are the kernels' contracts: mul-mat-vec*.cu and mul-mat.cu use them for their
// launches, and the kernels assume them (128 threads, one run of 32 weights per thread per stage).
#pragma once

#include "ggml/types.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>

// Block geometry of a weight type: qk elements in `bytes` bytes (1 and the element size for
// F32 / F16 / BF16); qk == 0 for types the matrix products do not take.
struct mm_type_geom {
    int qk = 0;
    int bytes = 0;
    bool quantized = false;
};

inline mm_type_geom mm_type_geom_of(ggml_type t) {
    switch (t) {
        case GGML_TYPE_F32: return {1, 4, false};
        case GGML_TYPE_F16: return {1, 2, false};
        case GGML_TYPE_BF16: return {1, 2, false};
        case GGML_TYPE_Q4_0: return {32, 18, true};
        case GGML_TYPE_Q4_1: return {32, 20, true};
        case GGML_TYPE_Q5_0: return {32, 22, true};
        case GGML_TYPE_Q5_1: return {32, 24, true};
        case GGML_TYPE_Q8_0: return {32, 34, true};
        case GGML_TYPE_Q2_K: return {256, 84, true};
        case GGML_TYPE_Q3_K: return {256, 110, true};
        case GGML_TYPE_Q4_K: return {256, 144, true};
        case GGML_TYPE_Q5_K: return {256, 176, true};
        case GGML_TYPE_Q6_K: return {256, 210, true};
        case GGML_TYPE_IQ4_NL: return {32, 18, true};
        case GGML_TYPE_IQ4_XS: return {256, 136, true};
        case GGML_TYPE_MXFP4: return {32, 17, true};
        default: return {};
    }
}

inline int64_t mm_ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
inline int64_t mm_round_up(int64_t a, int64_t b) { return mm_ceil_div(a, b) * b; }

// ---- mat-vec (few columns) ----

constexpr int mmv_threads = 128;   // every mat-vec block: 4 warps
constexpr int mmv_max_nc = 8;      // columns one pass of a mat-vec kernel computes

// Most columns (per batch) for which MUL_MAT takes the mat-vec kernels: quantized weights run
// several passes of up to 8 columns (the later passes read the weights from L2), which beats
// dequantizing the whole matrix to F16 up to about 16 columns; F16 / BF16 / F32 weights go to
// cuBLAS (no dequantization needed) past one pass.
inline int mmv_max_cols(ggml_type t) { return mm_type_geom_of(t).quantized ? 16 : mmv_max_nc; }
inline bool mm_use_mat_vec(ggml_type t, int64_t n_cols) { return n_cols <= mmv_max_cols(t); }

// The kernel instance for n columns: 1, 2, 4 or 8 columns per pass (more passes past 8).
inline int mmv_nc_for(int64_t n_cols) { return n_cols <= 1 ? 1 : n_cols <= 2 ? 2 : n_cols <= 4 ? 4 : 8; }

// Rows of the weights one block computes (quantized kernels) or one warp computes (float
// kernels): two where the registers allow it (the activations loaded once serve both rows).
constexpr int mmv_rows_for(int nc) { return nc <= 4 ? 2 : 1; }

// Quantized mat-vec: every block stages its rows in shared memory, one stage of
// mmvq_stage_runs runs of 32 weights per row (one run per thread) at a time, with up to
// mmvq_max_buffers stages in flight (cp.async, 16-byte copies).
constexpr int mmvq_stage_runs = mmv_threads;
constexpr int mmvq_max_buffers = 3;

struct mmvq_plan {
    int nc = 1, rows = 1;           // kernel instance: columns per pass, rows per block
    int64_t n_runs = 0;             // runs of 32 weights per row (k / 32)
    int64_t row_bytes = 0;          // bytes of one row of weights
    int64_t stage_bytes = 0;        // bytes of one row's stage (mmvq_stage_runs runs)
    int64_t n_stages = 0;           // stages per row
    int n_buffers = 1;              // stages in flight (<= mmvq_max_buffers)
    int64_t smem_row_bytes = 0;     // one row's stage in shared memory (16-byte multiple, plus 16
                                    // so that unaligned 4-byte reads never leave it)
    size_t smem_bytes = 0;          // dynamic shared memory of a block
    int64_t grid_x = 0;             // blocks over the rows
};

inline mmvq_plan mmvq_make_plan(ggml_type t, int64_t k, int64_t m, int64_t n_cols) {
    const mm_type_geom g = mm_type_geom_of(t);
    mmvq_plan pl;
    pl.nc = mmv_nc_for(n_cols);
    pl.rows = mmv_rows_for(pl.nc);
    pl.n_runs = k / 32;
    pl.row_bytes = k / g.qk * g.bytes;
    pl.stage_bytes = int64_t(mmvq_stage_runs) * 32 / g.qk * g.bytes;
    pl.n_stages = std::max<int64_t>(1, mm_ceil_div(pl.n_runs, mmvq_stage_runs));
    pl.n_buffers = int(std::min<int64_t>(mmvq_max_buffers, pl.n_stages));
    // a row shorter than one stage needs only its own bytes
    const int64_t used = std::min(pl.stage_bytes, pl.row_bytes);
    pl.smem_row_bytes = mm_round_up(std::max<int64_t>(used, 1), 16) + 16;
    pl.smem_bytes = size_t(pl.n_buffers) * size_t(pl.rows) * size_t(pl.smem_row_bytes);
    pl.grid_x = mm_ceil_div(m, pl.rows);
    return pl;
}

// Float mat-vec (F32 / F16 / BF16 weights, F32 activations): a warp per mmv_rows_for(nc)
// rows, lanes over units of 8 elements.
inline int64_t mmvf_grid_x(int64_t m, int nc) { return mm_ceil_div(m, int64_t(mmv_rows_for(nc)) * (mmv_threads / 32)); }

// Largest grid.y of a launch; more batches loop inside the kernels.
constexpr int64_t mm_max_grid_y = 65535;

// ---- GEMM (many columns): cuBLAS on weights dequantized to F16 in row tiles ----

// Scratch bytes for one tile of dequantized weights: large enough to keep cuBLAS busy (an 8B
// model's feed-forward matrices take 4 tiles), small enough to stay in an H100's 50 MB L2
// between the dequantization that writes the tile and the GEMM that reads it (several times).
constexpr size_t mm_gemm_weight_budget = size_t(32) << 20;

struct mm_gemm_tiles {
    int64_t rows = 0;   // rows per tile (a multiple of 64 unless the matrix has fewer)
    int64_t count = 0;  // tiles
};

// Even tiles of at most `budget` bytes of F16 weights (at least 64 rows each).
inline mm_gemm_tiles mm_gemm_plan_tiles(int64_t m, int64_t k, size_t budget) {
    mm_gemm_tiles t;
    if (m <= 0) return t;
    const int64_t row_bytes = std::max<int64_t>(1, k) * 2;
    const int64_t max_rows = std::max<int64_t>(64, int64_t(budget) / row_bytes / 64 * 64);
    const int64_t n = mm_ceil_div(m, max_rows);
    t.rows = std::min(m, mm_round_up(mm_ceil_div(m, n), 64));
    t.count = mm_ceil_div(m, t.rows);
    return t;
}

// ---- MUL_MAT_ID ----

// Tokens per batch up to which the experts run the mat-vec kernels (one pass: an expert has at
// most one column per token); past it the grouped F16 tensor-core GEMM (mul-mat-id-gemm.cu).
// F32 and BF16 experts always take the mat-vec kernels (several passes for many tokens): F16
// tiles would lose F32's precision and BF16's range.
constexpr int64_t moe_mat_vec_max_tokens = mmv_max_nc;
inline bool moe_use_mat_vec(ggml_type t, int64_t n_t) {
    return n_t <= moe_mat_vec_max_tokens || t == GGML_TYPE_F32 || t == GGML_TYPE_BF16;
}
// Columns per tile of the grouped GEMM.
constexpr int moe_gemm_tile_cols = 64;
constexpr int moe_gemm_tile_rows = 64;

// Most (expert, column tile) tiles a batch can need: every expert's last tile may be partial.
inline int64_t moe_max_tiles(int64_t n_pairs, int64_t n_expert, int64_t tile_cols) {
    return n_pairs / tile_cols + std::min(n_expert, n_pairs);
}
