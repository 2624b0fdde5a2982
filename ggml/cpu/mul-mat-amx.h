// ggml/cpu/mul-mat-amx.h — MUL_MAT of F16 and BF16 weights on AMX tiles (internal).
//
// The amx path (ggml_cpu_isa::amx: AVX-512 plus Intel AMX with BF16) multiplies F16 and BF16
// weights by F32 activations with TDPBF16PS, 16 x 16 x 32 products per instruction, summed in
// F32. BF16 operands carry 8 significant bits; to stay at least as exact as F16 arithmetic,
// each operand is split into a BF16 "hi" part and the BF16 rounding of its remainder, "lo":
//   w = w_hi + w_lo   exactly for F16 weights (11 significant bits); w_lo = 0 for BF16 weights
//   x ~ x_hi + x_lo   16 significant bits of an F32 activation
//   w * x ~ w_hi * x_hi + w_lo * x_hi + w_hi * x_lo     (w_lo * x_lo, ~2^-18 relative, left out)
// so each product is within ~2^-16 of the exact one (F16 activations would be 2^-11).
//
// Usage (mul-mat.cpp drives it):
//   phase 1, every thread: b (F32) into the activation buffer, 16 columns per tile row of
//   ggml_amx_act_tile_bytes(k) bytes, ggml_amx_act_tiles(n) tile rows (an even count):
//     const float * cols[16] = {…};   // nullptr past n: zero columns
//     ggml_amx_pack_act(cols, k, buf + u * ggml_amx_act_tile_bytes(k));
//   phase 2, jobs of up to ggml_amx_job_rows rows of a and ggml_amx_job_cols columns starting
//   at a multiple of 32:
//     ggml_amx_gemm(args);    // args.scratch: ggml_amx_scratch_bytes() per thread, 64-aligned
#pragma once

#include "ggml/types.h"

#include <cstddef>
#include <cstdint>

// Rows of a per job: their packed weights (one k-slice) stay in L1 / L2 while the job runs.
constexpr int64_t ggml_amx_job_rows = 128;
// Most columns per job (its partial sums stay in its scratch between k-slices).
constexpr int64_t ggml_amx_job_cols = 512;
// Use the amx GEMM from this many columns on: each job converts its rows of a into BF16 tiles
// once, which fewer columns do not repay (measured on 4096 x 4096, one thread, against the
// AVX-512 dot kernels: at 8 columns F16 0.68x, BF16 0.96x; at 16 F16 1.25x, BF16 1.8x).
constexpr int64_t ggml_amx_min_cols = 16;

// Bytes of one packed tile row of 16 columns of k elements (hi and lo tiles per 32 k).
size_t ggml_amx_act_tile_bytes(int64_t k);
// Tile rows the activation buffer has for n columns (whole 32-column blocks).
inline int64_t ggml_amx_act_tiles(int64_t n) { return (n + 31) / 32 * 2; }
// 16 columns of k floats (nullptr: a zero column) -> one packed tile row.
void ggml_amx_pack_act(const float * const * cols, int64_t k, void * tile_row);
// Per-thread scratch of one job.
size_t ggml_amx_scratch_bytes();
// The weight types the amx GEMM takes.
inline bool ggml_amx_supports(ggml_type t) { return t == GGML_TYPE_F16 || t == GGML_TYPE_BF16; }

// One job: d[j * ldd + i] = sum_k a_i[k] * b_j[k] for i < m (m <= ggml_amx_job_rows),
// j < n (n <= ggml_amx_job_cols), b_j being column j of the packed tile rows at act
// (act_stride = ggml_amx_act_tile_bytes(k) apart; whole 32-column blocks must exist).
struct ggml_amx_gemm_args {
    ggml_type type = GGML_TYPE_F16;  // of a
    const void * a = nullptr;        // row 0 of the job's weights
    size_t lda = 0;                  // bytes between rows of a
    int64_t m = 0;
    const void * act = nullptr;      // the tile row of the job's first column
    size_t act_stride = 0;
    int64_t n = 0;
    int64_t k = 0;
    float * d = nullptr;
    int64_t ldd = 0;
    void * scratch = nullptr;
};
void ggml_amx_gemm(const ggml_amx_gemm_args & g);
