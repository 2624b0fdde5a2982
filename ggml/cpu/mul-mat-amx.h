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
//   phase 1, every thread: rows of b (F32) into the activation buffer, ggml_amx_act_rows(n)
//   rows of ggml_amx_act_row_bytes(k) each (rows n .. n_rows-1 zeroed):
//     ggml_amx_pack_act(x, k, buf + j * ggml_amx_act_row_bytes(k));
//   phase 2, jobs of up to ggml_amx_job_rows rows of a and a run of columns:
//     ggml_amx_gemm(args);    // args.scratch: ggml_amx_scratch_bytes() per thread, 64-aligned
#pragma once

#include "ggml/types.h"

#include <cstddef>
#include <cstdint>

// Columns (tokens) of one register block; the activation buffer holds a multiple of it.
constexpr int64_t ggml_amx_block_cols = 32;
// Rows of a per job: their packed weights (one k-slice) stay in L2 while the job runs.
constexpr int64_t ggml_amx_job_rows = 128;
// Use the amx GEMM from this many columns on: each job converts its rows of a into BF16 tiles
// once, which fewer columns do not repay (measured on F16 4096 x 4096, one thread: the dot
// kernel twice as fast at 16 columns, 1.6x at 32; the amx GEMM 1.4x faster at 64).
constexpr int64_t ggml_amx_min_cols = 64;

// Bytes of one packed activation row of k elements (hi then lo, padded).
size_t ggml_amx_act_row_bytes(int64_t k);
// Rows the activation buffer has for n columns.
inline int64_t ggml_amx_act_rows(int64_t n) { return (n + ggml_amx_block_cols - 1) / ggml_amx_block_cols * ggml_amx_block_cols; }
// x (k floats) -> one packed activation row; nullptr x writes a zero row.
void ggml_amx_pack_act(const float * x, int64_t k, void * row);
// Per-thread scratch of one job.
size_t ggml_amx_scratch_bytes();
// The weight types the amx GEMM takes.
inline bool ggml_amx_supports(ggml_type t) { return t == GGML_TYPE_F16 || t == GGML_TYPE_BF16; }

// One job: d[j * ldd + i] = sum_k a_i[k] * b_j[k] for i < m (m <= ggml_amx_job_rows), j < n,
// b_j being the packed activation row j (act + j * act_stride; rows up to the next multiple
// of ggml_amx_block_cols must exist).
struct ggml_amx_gemm_args {
    ggml_type type = GGML_TYPE_F16;  // of a
    const void * a = nullptr;        // row 0 of the job's weights
    size_t lda = 0;                  // bytes between rows of a
    int64_t m = 0;
    const void * act = nullptr;      // packed activation row 0 of the job
    size_t act_stride = 0;           // = ggml_amx_act_row_bytes(k)
    int64_t n = 0;
    int64_t k = 0;
    float * d = nullptr;
    int64_t ldd = 0;
    void * scratch = nullptr;
};
void ggml_amx_gemm(const ggml_amx_gemm_args & g);
