// ggml/cuda/mul-mat-id-group.cuh — grouping the (token, slot) pairs of a MUL_MAT_ID by expert
// (internal; __host__ __device__ so that the host tests run the same code).
//
// Pair p = i + n_used * t (slot i of token t) chose expert ids[i, t]; its output is row p of
// dst [m, n_used, n_t]. The grouping kernel (mul-mat-id.cu, one block) runs, with a barrier
// between the steps:
//   1. count[e] += 1 for every pair (bucket n_expert collects ids out of range)   — atomics
//   2. moe_plan_groups (one thread): offset[e] (first position of e's pairs), the list of
//      experts some pair chose (active), and the GEMM's tiles of up to tile_cols pairs
//   3. perm[offset[e] + (running count of e)] = p for every pair                   — atomics
// so perm lists the pairs expert by expert, the pairs of bucket n_expert (invalid ids) last. The
// order of the pairs within an expert is the order the atomics ran in: nothing depends on it
// (each pair's result is computed the same way wherever its column lands). An id out of range
// anywhere leaves no active expert and no tile: the products write nothing.
//
// Usage (host emulation, as the tests do):
//   for (p …) count[moe_bucket(ids, ld, n_used, n_expert, p)]++;
//   moe_plan_groups(count, n_expert, 64, offset, active, &n_active, tiles, &n_tiles);
//   for (p …) { const int e = moe_bucket(…); perm[offset[e] + fill[e]++] = p; }
#pragma once

#include "quants-common.cuh"

#include <cstdint>

// One tile of the grouped GEMM: columns [col0, col0 + n_cols) of perm, all of expert `expert`.
struct moe_tile {
    int32_t expert;
    int32_t col0;
    int32_t n_cols;
    int32_t pad;
};

// The expert of pair p, or n_expert when its id is out of range.
QD_HD int moe_bucket(const int32_t * ids, int64_t ids_ld, int n_used, int n_expert, int64_t p) {
    const int64_t i = p % n_used, t = p / n_used;
    const int32_t e = ids[i + t * ids_ld];
    return e >= 0 && e < n_expert ? e : n_expert;
}

// From count[0 .. n_expert] (the last: pairs with invalid ids): offset[0 .. n_expert], the
// active experts in increasing order, and (tiles != nullptr) the tiles of tile_cols columns.
// Returns false when some id is out of range: then *n_active = *n_tiles = 0, so that the
// products that follow write nothing (dst stays as it was, as on the CPU backend).
QD_HD bool moe_plan_groups(const int32_t * count, int n_expert, int tile_cols, int32_t * offset, int32_t * active,
                           int32_t * n_active, moe_tile * tiles, int32_t * n_tiles) {
    int32_t pos = 0, na = 0, nt = 0;
    for (int e = 0; e < n_expert; ++e) {
        offset[e] = pos;
        const int32_t c = count[e];
        if (c > 0) {
            active[na++] = e;
            for (int32_t c0 = 0; tiles && c0 < c; c0 += tile_cols) {
                tiles[nt++] = moe_tile{e, pos + c0, c - c0 < tile_cols ? c - c0 : tile_cols, 0};
            }
        }
        pos += c;
    }
    offset[n_expert] = pos;
    const bool valid = count[n_expert] == 0;
    *n_active = valid ? na : 0;
    *n_tiles = valid ? nt : 0;
    return valid;
}

// Where the grouping lives in scratch (int32 arrays, each 16-byte aligned).
struct moe_group_layout {
    size_t count = 0, offset = 0, perm = 0, active = 0, n_active = 0, n_tiles = 0, tiles = 0, bytes = 0;
};

inline moe_group_layout moe_group_layout_of(int64_t n_expert, int64_t n_pairs, int64_t max_tiles) {
    moe_group_layout l;
    size_t at = 0;
    auto take = [&at](size_t bytes) {
        const size_t r = at;
        at += (bytes + 15) / 16 * 16;
        return r;
    };
    l.count = take(size_t(n_expert + 1) * 4);
    l.offset = take(size_t(n_expert + 1) * 4);
    l.perm = take(size_t(n_pairs) * 4);
    l.active = take(size_t(n_expert) * 4);
    l.n_active = take(4);
    l.n_tiles = take(4);
    l.tiles = take(size_t(max_tiles) * sizeof(moe_tile));
    l.bytes = at;
    return l;
}
