// ggml/cpu/quant-dot.h — dot kernels of quantized weights, and activation quantizers (internal).
//
// Every dot kernel has the ggml_mul_mat_dot_fn contract of mul-mat.h:
//   y[c * ldy + r] = sum_i a_r[i] * b_c[i]   for r < nr, c < nc, i < k
// where a_r is row r of the weights (blocks of the weight type, a + r * lda bytes) and b_c is
// column c of the activations, quantized into the partner type (b + c * ldb bytes):
//   Q4_0, Q5_0, Q8_0, IQ4_NL, MXFP4 -> Q8_0;  Q4_1, Q5_1 -> Q8_1;  Q2_K … Q6_K, IQ4_XS -> Q8_K.
// k is a multiple of the block size. With nc == 1 a kernel streams rows (mat-vec, generation);
// with nc > 1 it tiles rows x columns in registers (mat-mat, prompt processing).
// Results agree with the scalar kernels to float rounding (integer dot products are exact).
//
// Activation quantizers: a row of k floats into blocks of Q8_0 / Q8_1 / Q8_K, giving the same
// blocks as the _ref quantizers of ggml/quants.h (ties may round differently: then at most one
// code apart, documented where the kernel is).
//
// Declarations only (included by the ISA files).
#pragma once

#include <cstddef>
#include <cstdint>

#define GGML_QUANT_DOT_DECL(wt, at, isa)                                                           \
    void ggml_dot_##wt##_##at##_##isa(int64_t k, const void * a, size_t lda, int64_t nr, const void * b, \
                                      size_t ldb, int64_t nc, float * y, int64_t ldy)
#define GGML_QUANT_DOT_DECL_ALL(isa)                                                               \
    GGML_QUANT_DOT_DECL(q4_0, q8_0, isa);                                                          \
    GGML_QUANT_DOT_DECL(q4_1, q8_1, isa);                                                          \
    GGML_QUANT_DOT_DECL(q5_0, q8_0, isa);                                                          \
    GGML_QUANT_DOT_DECL(q5_1, q8_1, isa);                                                          \
    GGML_QUANT_DOT_DECL(q8_0, q8_0, isa);                                                          \
    GGML_QUANT_DOT_DECL(q2_K, q8_K, isa);                                                          \
    GGML_QUANT_DOT_DECL(q3_K, q8_K, isa);                                                          \
    GGML_QUANT_DOT_DECL(q4_K, q8_K, isa);                                                          \
    GGML_QUANT_DOT_DECL(q5_K, q8_K, isa);                                                          \
    GGML_QUANT_DOT_DECL(q6_K, q8_K, isa)

#define GGML_QUANT_DOT_DECL_IQ(isa)                                                                \
    GGML_QUANT_DOT_DECL(iq4_nl, q8_0, isa);                                                        \
    GGML_QUANT_DOT_DECL(iq4_xs, q8_K, isa);                                                        \
    GGML_QUANT_DOT_DECL(mxfp4, q8_0, isa)

// 32-element formats: quant-dot-legacy-{scalar,avx2,avx512}.cpp;
// K-quants: quant-dot-k-{scalar,avx2,avx512}.cpp;
// codebook formats (IQ4_NL, IQ4_XS, MXFP4): quant-dot-iq-{scalar,avx2,avx512}.cpp.
GGML_QUANT_DOT_DECL_ALL(scalar);
GGML_QUANT_DOT_DECL_ALL(avx2);
GGML_QUANT_DOT_DECL_ALL(avx512);
GGML_QUANT_DOT_DECL_IQ(scalar);
GGML_QUANT_DOT_DECL_IQ(avx2);
GGML_QUANT_DOT_DECL_IQ(avx512);

// Activation quantizers (scalar paths are the _ref functions of ggml/quants.h).
// Q8_0 / Q8_1: quant-act-{avx2,avx512}.cpp;  Q8_K: quant-act-k-{avx2,avx512}.cpp.
void ggml_quantize_row_q8_0_avx2(const float * x, void * y, int64_t k);
void ggml_quantize_row_q8_1_avx2(const float * x, void * y, int64_t k);
void ggml_quantize_row_q8_K_avx2(const float * x, void * y, int64_t k);
void ggml_quantize_row_q8_0_avx512(const float * x, void * y, int64_t k);
void ggml_quantize_row_q8_1_avx512(const float * x, void * y, int64_t k);
void ggml_quantize_row_q8_K_avx512(const float * x, void * y, int64_t k);
