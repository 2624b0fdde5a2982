// ggml/cpu/mul-mat.h — MUL_MAT kernels of one instruction-set path, as a table (internal).
//
// Usage (mul-mat.cpp picks the table of the backend's ISA and drives it):
//   const ggml_mul_mat_kernels & kt = ggml_mul_mat_kernels_avx512;
//   const ggml_mul_mat_type_kernels & e = kt.of(GGML_TYPE_F16);     // looked up once per op
//   // mat-vec / few columns: activations in e.dot_vec_type, one row per column
//   e.dot(k, a, lda, n_rows, b, ldb, n_cols, y, ldy);
//   // quantized weights: the activations quantized into the partner type first
//   const ggml_mul_mat_type_kernels & q = kt.of(GGML_TYPE_Q4_0);
//   q.dot_vec_from_f32(x, q8_row, k);   // F32 -> Q8_0 blocks (nullptr: the traits' quantizer,
//                                       // see ggml_mul_mat_from_f32 in mul-mat-plan.h)
//   q.dot(k, a, lda, n_rows, q8_rows, q8_ldb, n_cols, y, ldy);      // nr x nc tiles inside
//   // mat-mat: activations packed into panels (see "B panels" below), then per job
//   ggml_mul_mat_gemm_args g = …; e.gemm(g);
//
// Each mul-mat-<isa>.cpp builds its table in a constexpr function, one entry per weight type
// set by naming the type:
//   t.set(GGML_TYPE_F16, {.dot = dot_rows<load_f16>, .gemm = gemm<load_f16>});
//   ggml_mul_mat_set_quant(t, {.q4_0 = ggml_dot_q4_0_q8_0_avx2, …, .act_q8_0 = …});
//
// This header is included by the ISA files, so it holds declarations, plain structs and the
// constexpr table builders only.
#pragma once

#include "quant-dot.h"

#include "ggml/types.h"

#include <cstddef>
#include <cstdint>

#define GGML_MUL_MAT_MAX_NR 16  // widest B panel of any path

// ---- K-quants: the one switch ----
// The K-quant kernels (quant-dot-k-*.cpp) and Q8_K activation quantizers (quant-act-k-*.cpp)
// can be left out: with 0 the tables have no entries for Q2_K … Q6_K and MUL_MAT reports those
// weight types as unsupported; 1 puts the kernels in.
#define GGML_MUL_MAT_HAVE_K_QUANTS 1

// y[c * ldy + r] = sum_{i < k} a_r[i] * b_c[i] for r < nr, c < nc, where a_r is row r of the
// weights (a + r * lda bytes, weight type) and b_c is column c of the activations (b + c * ldb
// bytes, in the entry's dot_vec_type). Any k >= 0 (k = 0 gives zeros).
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

// The kernels of one weight type on one path.
struct ggml_mul_mat_type_kernels {
    ggml_type dot_vec_type = GGML_TYPE_F32;    // F32 or BF16; the partner of a quantized type
    ggml_mul_mat_dot_fn dot = nullptr;         // nullptr: this weight type is not supported
    // F32 row -> dot_vec_type row (k a multiple of its block size); nullptr for the float types
    // (convert.h converts those) and where the reference quantizer of the type traits serves.
    ggml_from_float_fn dot_vec_from_f32 = nullptr;
    ggml_type gemm_vec_type = GGML_TYPE_F32;   // type held in the B panels
    int gemm_kpair = 1;                        // 1: F32 panels, 2: BF16 pair panels
    ggml_mul_mat_gemm_fn gemm = nullptr;       // nullptr: the path has no GEMM for it
};

struct ggml_mul_mat_kernels {
    const char * name = "";
    ggml_mul_mat_type_kernels types[GGML_TYPE_COUNT] = {};  // indexed by the weight's ggml_type
    ggml_mul_mat_pack_fn gemm_pack = nullptr;  // nullptr when no gemm
    int gemm_nr = 1;                 // columns per B panel (<= GGML_MUL_MAT_MAX_NR)
    int64_t gemm_mc = 1;             // most rows of a per job
    size_t gemm_scratch = 0;         // bytes of per-thread scratch a job needs
    int64_t gemm_min_n = INT64_MAX;  // use the GEMM from this many columns on (the dot kernel below)

    // The entry of weight type t; an empty one (dot == nullptr) for a value outside the enum.
    constexpr const ggml_mul_mat_type_kernels & of(ggml_type t) const {
        return t >= 0 && t < GGML_TYPE_COUNT ? types[t] : k_none;
    }
    // Table builder: the entry of weight type t.
    constexpr ggml_mul_mat_kernels & set(ggml_type t, const ggml_mul_mat_type_kernels & e) {
        types[t] = e;
        return *this;
    }

    static constexpr ggml_mul_mat_type_kernels k_none = {};
};

// The quantized kernels of one path, named by weight type: the dot kernels of quant-dot.h
// and the activation quantizers (nullptr: the reference quantizer of the type traits).
struct ggml_mul_mat_quant_kernels {
    ggml_mul_mat_dot_fn q4_0 = nullptr, q4_1 = nullptr, q5_0 = nullptr, q5_1 = nullptr, q8_0 = nullptr;
    ggml_mul_mat_dot_fn q2_K = nullptr, q3_K = nullptr, q4_K = nullptr, q5_K = nullptr, q6_K = nullptr;
    ggml_mul_mat_dot_fn iq4_nl = nullptr, iq4_xs = nullptr, mxfp4 = nullptr;
    ggml_from_float_fn act_q8_0 = nullptr, act_q8_1 = nullptr, act_q8_K = nullptr;
};

// Sets the entries of the quantized weight types, each with its partner activation type
// (no GEMM: every column count takes the dot kernels, which tile rows x columns).
constexpr void ggml_mul_mat_set_quant(ggml_mul_mat_kernels & t, const ggml_mul_mat_quant_kernels & q) {
    t.set(GGML_TYPE_Q4_0, {.dot_vec_type = GGML_TYPE_Q8_0, .dot = q.q4_0, .dot_vec_from_f32 = q.act_q8_0});
    t.set(GGML_TYPE_Q4_1, {.dot_vec_type = GGML_TYPE_Q8_1, .dot = q.q4_1, .dot_vec_from_f32 = q.act_q8_1});
    t.set(GGML_TYPE_Q5_0, {.dot_vec_type = GGML_TYPE_Q8_0, .dot = q.q5_0, .dot_vec_from_f32 = q.act_q8_0});
    t.set(GGML_TYPE_Q5_1, {.dot_vec_type = GGML_TYPE_Q8_1, .dot = q.q5_1, .dot_vec_from_f32 = q.act_q8_1});
    t.set(GGML_TYPE_Q8_0, {.dot_vec_type = GGML_TYPE_Q8_0, .dot = q.q8_0, .dot_vec_from_f32 = q.act_q8_0});
#if GGML_MUL_MAT_HAVE_K_QUANTS
    t.set(GGML_TYPE_Q2_K, {.dot_vec_type = GGML_TYPE_Q8_K, .dot = q.q2_K, .dot_vec_from_f32 = q.act_q8_K});
    t.set(GGML_TYPE_Q3_K, {.dot_vec_type = GGML_TYPE_Q8_K, .dot = q.q3_K, .dot_vec_from_f32 = q.act_q8_K});
    t.set(GGML_TYPE_Q4_K, {.dot_vec_type = GGML_TYPE_Q8_K, .dot = q.q4_K, .dot_vec_from_f32 = q.act_q8_K});
    t.set(GGML_TYPE_Q5_K, {.dot_vec_type = GGML_TYPE_Q8_K, .dot = q.q5_K, .dot_vec_from_f32 = q.act_q8_K});
    t.set(GGML_TYPE_Q6_K, {.dot_vec_type = GGML_TYPE_Q8_K, .dot = q.q6_K, .dot_vec_from_f32 = q.act_q8_K});
#endif
    // the codebook formats (quant-dot-iq-*.cpp)
    t.set(GGML_TYPE_IQ4_NL, {.dot_vec_type = GGML_TYPE_Q8_0, .dot = q.iq4_nl, .dot_vec_from_f32 = q.act_q8_0});
    t.set(GGML_TYPE_IQ4_XS, {.dot_vec_type = GGML_TYPE_Q8_K, .dot = q.iq4_xs, .dot_vec_from_f32 = q.act_q8_K});
    t.set(GGML_TYPE_MXFP4, {.dot_vec_type = GGML_TYPE_Q8_0, .dot = q.mxfp4, .dot_vec_from_f32 = q.act_q8_0});
}

// Bytes of one B panel of k elements per column, for weights of type wt.
size_t ggml_mul_mat_panel_bytes(const ggml_mul_mat_kernels & kt, ggml_type wt, int64_t k);

extern const ggml_mul_mat_kernels ggml_mul_mat_kernels_scalar;
extern const ggml_mul_mat_kernels ggml_mul_mat_kernels_avx2;
extern const ggml_mul_mat_kernels ggml_mul_mat_kernels_avx512;
