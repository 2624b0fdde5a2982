// ggml/cpu/mul-mat.h — MUL_MAT kernels of one instruction-set path, as a table (internal).
//
// Usage (mul-mat.cpp picks the table of the backend's ISA and drives it):
//   const ggml_mul_mat_kernels & kt = ggml_mul_mat_kernels_avx512;
//   const int ti = ggml_mul_mat_type_index(GGML_TYPE_F16);          // 1
//   // mat-vec / few columns: activations in kt.dot_vec_type[ti], one row per column
//   kt.dot[ti](k, a, lda, n_rows, b, ldb, n_cols, y, ldy);
//   // quantized weights: the activations quantized into the partner type first
//   const int tq = ggml_mul_mat_type_index(GGML_TYPE_Q4_0);         // 3
//   kt.dot_vec_from_f32[tq](x, q8_row, k);                           // F32 -> Q8_0 blocks
//   kt.dot[tq](k, a, lda, n_rows, q8_rows, q8_ldb, n_cols, y, ldy);  // nr x nc tiles inside
//   // mat-mat: activations packed into panels (see "B panels" below), then per job
//   ggml_mul_mat_gemm_args g = …; kt.gemm[ti](g);
//
// This header is included by the ISA files, so it holds declarations and plain structs only.
#pragma once

#include "quant-dot.h"

#include "ggml/types.h"

#include <cstddef>
#include <cstdint>

// Weight types, in table order: F32, F16, BF16, then the quantized ones
// Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_NL, IQ4_XS, MXFP4.
#define GGML_MUL_MAT_N_TYPES 16
#define GGML_MUL_MAT_MAX_NR 16  // widest B panel of any path
// Index in the tables (0 … GGML_MUL_MAT_N_TYPES - 1) of a weight type; -1 for any other type.
int ggml_mul_mat_type_index(ggml_type t);

// ---- K-quants: the one switch ----
// The K-quant kernels (quant-dot-k-*.cpp) and Q8_K activation quantizers (quant-act-k-*.cpp)
// can be left out: with 0 the tables hold nullptr for Q2_K … Q6_K and MUL_MAT reports those
// weight types as unsupported; 1 puts the kernels in.
#define GGML_MUL_MAT_HAVE_K_QUANTS 1

// Table entries of the quantized weight types, in table order, for mul-mat-<isa>.cpp.
#define GGML_MUL_MAT_QUANT_VEC_TYPES                                                               \
    GGML_TYPE_Q8_0, GGML_TYPE_Q8_1, GGML_TYPE_Q8_0, GGML_TYPE_Q8_1, GGML_TYPE_Q8_0, GGML_TYPE_Q8_K, \
        GGML_TYPE_Q8_K, GGML_TYPE_Q8_K, GGML_TYPE_Q8_K, GGML_TYPE_Q8_K, GGML_TYPE_Q8_0, GGML_TYPE_Q8_K, \
        GGML_TYPE_Q8_0
#define GGML_MUL_MAT_LEGACY_DOTS(isa)                                                              \
    ggml_dot_q4_0_q8_0_##isa, ggml_dot_q4_1_q8_1_##isa, ggml_dot_q5_0_q8_0_##isa, ggml_dot_q5_1_q8_1_##isa, \
        ggml_dot_q8_0_q8_0_##isa
#if GGML_MUL_MAT_HAVE_K_QUANTS
#define GGML_MUL_MAT_K_DOTS(isa)                                                                   \
    ggml_dot_q2_K_q8_K_##isa, ggml_dot_q3_K_q8_K_##isa, ggml_dot_q4_K_q8_K_##isa, ggml_dot_q5_K_q8_K_##isa, \
        ggml_dot_q6_K_q8_K_##isa
#define GGML_MUL_MAT_K_ACT(q8_K_fn) q8_K_fn, q8_K_fn, q8_K_fn, q8_K_fn, q8_K_fn
#else
#define GGML_MUL_MAT_K_DOTS(isa) nullptr, nullptr, nullptr, nullptr, nullptr
#define GGML_MUL_MAT_K_ACT(q8_K_fn) nullptr, nullptr, nullptr, nullptr, nullptr
#endif
// The codebook formats IQ4_NL, IQ4_XS, MXFP4 (quant-dot-iq-*.cpp).
#define GGML_MUL_MAT_IQ_DOTS(isa) ggml_dot_iq4_nl_q8_0_##isa, ggml_dot_iq4_xs_q8_K_##isa, ggml_dot_mxfp4_q8_0_##isa
// dot_vec_from_f32 entries of the quantized types from the three activation quantizers.
#define GGML_MUL_MAT_QUANT_ACT(q8_0_fn, q8_1_fn, q8_K_fn) \
    q8_0_fn, q8_1_fn, q8_0_fn, q8_1_fn, q8_0_fn, GGML_MUL_MAT_K_ACT(q8_K_fn), q8_0_fn, q8_K_fn, q8_0_fn
// Float weight types: the activations stay F32, no GEMM entries beyond the float ones.
#define GGML_MUL_MAT_QUANT_NONE \
    nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr
#define GGML_MUL_MAT_QUANT_ZERO 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0
#define GGML_MUL_MAT_QUANT_F32                                                                     \
    GGML_TYPE_F32, GGML_TYPE_F32, GGML_TYPE_F32, GGML_TYPE_F32, GGML_TYPE_F32, GGML_TYPE_F32, GGML_TYPE_F32, \
        GGML_TYPE_F32, GGML_TYPE_F32, GGML_TYPE_F32, GGML_TYPE_F32, GGML_TYPE_F32, GGML_TYPE_F32

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
    ggml_type dot_vec_type[GGML_MUL_MAT_N_TYPES];   // F32 or BF16; the partner of a quantized type
    ggml_mul_mat_dot_fn dot[GGML_MUL_MAT_N_TYPES];  // nullptr: this weight type is not supported
    // F32 row -> dot_vec_type row (k a multiple of its block size); nullptr for the float types
    // (convert.h converts those) and where the reference quantizer of the type traits serves.
    ggml_from_float_fn dot_vec_from_f32[GGML_MUL_MAT_N_TYPES];
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
