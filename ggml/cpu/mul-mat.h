// ggml/cpu/mul-mat.h — MUL_MAT kernels of one instruction-set path, as a table (internal).
//
// Usage (mul-mat.cpp picks the table of the backend's ISA and drives it):
//   const ggml_mul_mat_kernels & kt = ggml_mul_mat_kernels_avx512;
//   const int ti = ggml_mul_mat_type_index(GGML_TYPE_F16);          // 1
//   // mat-vec / few columns: activations in kt.dot_vec_type[ti], one row per column
//   kt.dot[ti](k, a, lda, n_rows, b, ldb, n_cols, y, ldy);
//   // mat-mat: activations packed into panels (see "B panels" below), then per job
//   ggml_mul_mat_gemm_args g = …; kt.gemm[ti](g);
//
// This header is included by the ISA files, so it holds declarations and plain structs only.
#pragma once

#include "ggml/types.h"

#include <cstddef>
#include <cstdint>

// Weight types, in table order.
#define GGML_MUL_MAT_N_TYPES 3  // F32, F16, BF16
#define GGML_MUL_MAT_MAX_NR 16  // widest B panel of any path
// 0, 1, 2 for F32, F16, BF16; -1 for any other type.
int ggml_mul_mat_type_index(ggml_type t);

// y[c * ldy + r] = sum_{i < k} a_r[i] * b_c[i] for r < nr, c < nc, where a_r is row r of the
// weights (a + r * lda bytes, weight type) and b_c is column c of the activations (b + c * ldb
// bytes, in the table's dot_vec_type). Any k >= 0 (k = 0 gives zeros).
using ggml_mul_mat_dot_fn = void (*)(int64_t k, const void * a, size_t lda, int64_t nr, const void * b, size_t ldb,
                                     int64_t nc, float * y, int64_t ldy);

// B panels: the activations of one batch, cut into panels of gemm_nr columns (the last one
// padded with zero columns). Panel p holds columns p*nr … p*nr+nr-1 for all k:
//   gemm_kpair == 1 (F32):  element (k, j) at index k * nr + j
//   gemm_kpair == 2 (BF16): element (k, j) at index (k / 2) * nr * 2 + j * 2 + k % 2,
//                           k padded to an even count with zeros
// A panel is ggml_mul_mat_panel_bytes(…) bytes; panels of a batch follow each other.
//
// One GEMM job: d[j * ldd + i] = sum_k a_i[k] * b_j[k] for i < m (m <= gemm_mc), j < n.
struct ggml_mul_mat_gemm_args {
    const void * a = nullptr;  // row 0 of the job's weights (weight type)
    size_t lda = 0;            // bytes between rows of a
    int64_t m = 0;             // rows of a (and of d), at most gemm_mc
    const void * bp = nullptr; // first B panel of the job
    size_t bp_stride = 0;      // bytes between panels
    int64_t n = 0;             // columns (of the panels' real columns)
    int64_t k = 0;             // > 0
    float * d = nullptr;       // d[j * ldd + i]
    int64_t ldd = 0;           // floats between columns of d
    void * scratch = nullptr;  // gemm_scratch bytes, 64-byte aligned, private to the thread
};
using ggml_mul_mat_gemm_fn = void (*)(const ggml_mul_mat_gemm_args & g);

// Fills one B panel from gemm_nr columns given as rows of n 32-bit units (F32 values, or BF16
// pairs for gemm_kpair == 2): panel[e * gemm_nr + j] = rows[j][e], 0 where rows[j] is nullptr.
using ggml_mul_mat_pack_fn = void (*)(const uint32_t * const * rows, int64_t n, uint32_t * panel);

struct ggml_mul_mat_kernels {
    const char * name;
    // Per weight type (index from ggml_mul_mat_type_index):
    ggml_type dot_vec_type[GGML_MUL_MAT_N_TYPES];   // F32 or BF16
    ggml_mul_mat_dot_fn dot[GGML_MUL_MAT_N_TYPES];
    ggml_type gemm_vec_type[GGML_MUL_MAT_N_TYPES];  // type held in the B panels
    int gemm_kpair[GGML_MUL_MAT_N_TYPES];           // 1: F32 panels, 2: BF16 pair panels
    ggml_mul_mat_gemm_fn gemm[GGML_MUL_MAT_N_TYPES]; // nullptr: the path has no GEMM for it
    ggml_mul_mat_pack_fn gemm_pack;                  // nullptr when no gemm
    int gemm_nr;           // columns per B panel (<= GGML_MUL_MAT_MAX_NR)
    int64_t gemm_mc;       // most rows of a per job
    size_t gemm_scratch;   // bytes of per-thread scratch a job needs
    int64_t gemm_min_n;    // use the GEMM from this many columns on (the dot kernel below)
};

// Bytes of one B panel of k elements per column.
size_t ggml_mul_mat_panel_bytes(const ggml_mul_mat_kernels & kt, int ti, int64_t k);

extern const ggml_mul_mat_kernels ggml_mul_mat_kernels_scalar;
extern const ggml_mul_mat_kernels ggml_mul_mat_kernels_avx2;
extern const ggml_mul_mat_kernels ggml_mul_mat_kernels_avx512;
