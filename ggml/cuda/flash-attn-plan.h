// ggml/cuda/flash-attn-plan.h — how FLASH_ATTN_EXT is cut into blocks on the GPU (internal;
// plain C++ so that the tests check it without a GPU).
//
// Usage:
//   const fa_plan pl = fa_make_plan(d, dv, n_q, n_head, n_head_kv, n_kv, ctx.sm_count);
//   fa_kernel<pl.rw, pl.nv><<<dim3(n_head_kv * pl.row_blocks, pl.n_splits), fa_threads, pl.smem_bytes>>>(…);
//   if (pl.n_splits > 1) merge the pl.partial_floats of partial results;
//
// A block takes one kv head, fa_threads / 32 * rw of its (query, head) rows (the heads that share
// the kv head, so every K / V row it reads serves all of them) and one split of the cells.
// Decode (few rows) splits the cells until the blocks fill the GPU; prompts have rows enough.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

constexpr int fa_threads = 128;  // 4 warps
constexpr int fa_tile = 32;      // cells per tile: one per lane
constexpr int64_t fa_max_head = 256;
constexpr int64_t fa_min_split_cells = 128;
constexpr int64_t fa_max_splits = 1024;

// Head sizes the kernels take: multiples of 4 (float4 rows in shared memory), at most 256.
inline bool fa_head_sizes_supported(int64_t d, int64_t dv) {
    return d > 0 && dv > 0 && d <= fa_max_head && dv <= fa_max_head && d % 4 == 0 && dv % 4 == 0;
}

struct fa_plan {
    int rw = 1;                  // rows per warp: 1, 2 or 4
    int nv = 2;                  // output elements per lane / 1: dv <= 32 nv (2, 4 or 8)
    int64_t rows = 0;            // (query, head) rows of one kv head: heads per kv head x n_q
    int64_t row_blocks = 0;      // blocks over those rows
    int64_t n_splits = 1;        // blocks over the cells
    int64_t split_cells = fa_tile;
    size_t smem_bytes = 0;       // K tile (32 x (d + 4)), V tile (32 x dv), the block's q rows
    size_t partial_floats = 0;   // n_splits > 1: (m, l, acc[dv]) per (query, head, split)
};

inline fa_plan fa_make_plan(int64_t d, int64_t dv, int64_t n_q, int64_t n_head, int64_t n_head_kv, int64_t n_kv,
                            int sm_count) {
    fa_plan pl;
    const int64_t hpg = n_head / std::max<int64_t>(1, n_head_kv);
    pl.rows = hpg * n_q;
    pl.rw = pl.rows <= 4 ? 1 : pl.rows <= 8 ? 2 : 4;
    const int64_t rows_per_block = int64_t(fa_threads / 32) * pl.rw;
    pl.row_blocks = std::max<int64_t>(1, (pl.rows + rows_per_block - 1) / rows_per_block);
    pl.nv = dv <= 64 ? 2 : dv <= 128 ? 4 : 8;
    const int64_t base = n_head_kv * pl.row_blocks;
    const int64_t target = 2 * int64_t(sm_count > 0 ? sm_count : 132);
    const int64_t max_splits = std::clamp<int64_t>(n_kv / fa_min_split_cells, 1, fa_max_splits);
    const int64_t want = base >= target ? 1 : std::min(max_splits, (target + base - 1) / base);
    const int64_t cells = n_kv > 0 ? (n_kv + want - 1) / want : 1;
    pl.split_cells = (cells + fa_tile - 1) / fa_tile * fa_tile;
    pl.n_splits = n_kv > 0 ? (n_kv + pl.split_cells - 1) / pl.split_cells : 1;
    pl.smem_bytes = sizeof(float) * size_t(fa_tile * (d + 4) + fa_tile * dv + rows_per_block * d);
    if (pl.n_splits > 1) pl.partial_floats = size_t(n_q * n_head * pl.n_splits * (dv + 2));
    return pl;
}
