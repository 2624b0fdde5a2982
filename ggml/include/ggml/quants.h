// ggml/quants.h — block-quantized types: block layouts (bit-identical to GGUF files written by
// other tools), reference quantization and dequantization, and the quality quantizer.
//
// Usage:
//   std::vector<block_q4_K> blocks(n / QK_K);
//   ggml_quantize_chunk(GGML_TYPE_Q4_K, src, blocks.data(), 0, n_rows, n_per_row, nullptr);
//   ggml_dequantize_row_q4_K(blocks.data(), out, n);                 // n % QK_K == 0
//   const ggml_type_traits & tt = ggml_get_type_traits(GGML_TYPE_Q4_K);
//   tt.to_float(blocks.data(), out, n);                              // the same, untyped
//
// Every dequantization is bit-exact: the same float for the same block on every path. The
// "_ref" quantizers are the plain round-to-nearest ones (used for activations, Q8_0/Q8_1/Q8_K,
// and as traits.from_float); ggml_quantize_chunk is the quality quantizer used for weights
// (error-minimising scale search), and never needs an importance matrix.
//
// MXFP4 has only its reference quantizer (ggml_quantize_chunk uses it).
//
// This header holds only plain structs and declarations, so ISA-specific files may include it.
#pragma once

#include "ggml/types.h"

#include <cstddef>
#include <cstdint>

#define QK4_0 32
#define QK4_1 32
#define QK5_0 32
#define QK5_1 32
#define QK8_0 32
#define QK8_1 32
#define QK_K 256
#define K_SCALE_SIZE 12
#define QK4_NL 32
#define QK_MXFP4 32

// ---- 32-element formats ----
struct block_q4_0 {  // x = d * (q - 8), q in 0..15
    ggml_fp16_t d;
    uint8_t qs[QK4_0 / 2];  // element j in the low nibble of qs[j], element j+16 in the high nibble
};
struct block_q4_1 {  // x = d * q + m
    ggml_fp16_t d;
    ggml_fp16_t m;
    uint8_t qs[QK4_1 / 2];
};
struct block_q5_0 {  // x = d * (q - 16), q in 0..31; bit 4 of element j is bit j of qh (little-endian u32)
    ggml_fp16_t d;
    uint8_t qh[4];
    uint8_t qs[QK5_0 / 2];
};
struct block_q5_1 {  // x = d * q + m
    ggml_fp16_t d;
    ggml_fp16_t m;
    uint8_t qh[4];
    uint8_t qs[QK5_1 / 2];
};
struct block_q8_0 {  // x = d * q
    ggml_fp16_t d;
    int8_t qs[QK8_0];
};
struct block_q8_1 {  // x = d * q; s = d * sum(q)
    ggml_fp16_t d;
    ggml_fp16_t s;
    int8_t qs[QK8_1];
};

// ---- K-quants: super-blocks of QK_K = 256 elements ----
struct block_q2_K {
    uint8_t scales[QK_K / 16];  // 4-bit scale (low nibble) and 4-bit min (high nibble) per 16 elements
    uint8_t qs[QK_K / 4];       // 2-bit quants
    ggml_fp16_t d;              // super-block scale of the scales
    ggml_fp16_t dmin;           // super-block scale of the mins
};
struct block_q3_K {
    uint8_t hmask[QK_K / 8];    // high bit of each quant
    uint8_t qs[QK_K / 4];       // low 2 bits
    uint8_t scales[12];         // 16 6-bit scales, packed
    ggml_fp16_t d;
};
struct block_q4_K {
    ggml_fp16_t d;
    ggml_fp16_t dmin;
    uint8_t scales[K_SCALE_SIZE];  // 8 6-bit scales and 8 6-bit mins, packed
    uint8_t qs[QK_K / 2];          // 4-bit quants
};
struct block_q5_K {
    ggml_fp16_t d;
    ggml_fp16_t dmin;
    uint8_t scales[K_SCALE_SIZE];
    uint8_t qh[QK_K / 8];          // high bits
    uint8_t qs[QK_K / 2];          // low 4 bits
};
struct block_q6_K {
    uint8_t ql[QK_K / 2];          // low 4 bits
    uint8_t qh[QK_K / 4];          // high 2 bits
    int8_t scales[QK_K / 16];      // 8-bit scales
    ggml_fp16_t d;
};
struct block_q8_K {                // activations of K-quant dot products
    float d;
    int8_t qs[QK_K];
    int16_t bsums[QK_K / 16];      // sum of each 16 quants
};

// ---- non-linear 4-bit formats ----
// IQ4_NL / IQ4_XS: 4-bit indices into the fixed int8 codebook ggml_iq4nl_codebook (below);
// nibbles laid out as in Q4_0: element j of each 32 in the low nibble of qs[j], element j + 16
// in the high nibble.
struct block_iq4_nl {  // x = d * codebook[q]
    ggml_fp16_t d;
    uint8_t qs[QK4_NL / 2];
};
struct block_iq4_xs {  // super-block of 256: 8 sub-blocks of 32, x = (d * (ls - 32)) * codebook[q]
    ggml_fp16_t d;
    uint16_t scales_h;          // bits 2 ib, 2 ib + 1: bits 4..5 of the 6-bit scale ls of sub-block ib
    uint8_t scales_l[QK_K / 64]; // low nibble: bits 0..3 of ls of sub-block 2 j, high nibble: of 2 j + 1
    uint8_t qs[QK_K / 2];       // sub-block ib in qs[16 ib .. 16 ib + 15], nibbles as in Q4_0
};
// MXFP4 (OCP microscaling): 32 E2M1 codes sharing one E8M0 exponent e. Code q (bit 3 the sign,
// bits 0..2 an index into {0, 0.5, 1, 1.5, 2, 3, 4, 6}) stands for value(q) * 2^(e - 127).
// As stored by the established engines, the table is kept doubled as int8
// (ggml_mxfp4_codebook = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, …, -12}) and the scale halved:
// x = float(codebook[q]) * ggml_e8m0_to_fp32_half(e) (exact: 2^(e - 128) times a small integer;
// e = 255 gives 2^127, so elements of E2M1 magnitude 1 and above overflow to infinity).
struct block_mxfp4 {
    uint8_t e;                  // E8M0 shared exponent
    uint8_t qs[QK_MXFP4 / 2];   // nibbles as in Q4_0
};

// The 16 values of the IQ4_NL / IQ4_XS codebook, ascending.
inline constexpr int8_t ggml_iq4nl_codebook[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                                   1,    13,   25,  38,  53,  69,  89,  113};
// The doubled E2M1 values of MXFP4, by code.
inline constexpr int8_t ggml_mxfp4_codebook[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};
// 2^(e - 128) as a float (subnormal for e = 0, 1): half the E8M0 value e stands for.
float ggml_e8m0_to_fp32_half(uint8_t e);

static_assert(sizeof(block_q4_0) == 18, "block_q4_0 layout");
static_assert(sizeof(block_q4_1) == 20, "block_q4_1 layout");
static_assert(sizeof(block_q5_0) == 22, "block_q5_0 layout");
static_assert(sizeof(block_q5_1) == 24, "block_q5_1 layout");
static_assert(sizeof(block_q8_0) == 34, "block_q8_0 layout");
static_assert(sizeof(block_q8_1) == 36, "block_q8_1 layout");
static_assert(sizeof(block_q2_K) == 84, "block_q2_K layout");
static_assert(sizeof(block_q3_K) == 110, "block_q3_K layout");
static_assert(sizeof(block_q4_K) == 144, "block_q4_K layout");
static_assert(sizeof(block_q5_K) == 176, "block_q5_K layout");
static_assert(sizeof(block_q6_K) == 210, "block_q6_K layout");
static_assert(sizeof(block_q8_K) == 292, "block_q8_K layout");
static_assert(sizeof(block_iq4_nl) == 18, "block_iq4_nl layout");
static_assert(sizeof(block_iq4_xs) == 136, "block_iq4_xs layout");
static_assert(sizeof(block_mxfp4) == 17, "block_mxfp4 layout");

// ---- dequantization (k elements; k a multiple of the block size) ----
void ggml_dequantize_row_q4_0(const block_q4_0 * x, float * y, int64_t k);
void ggml_dequantize_row_q4_1(const block_q4_1 * x, float * y, int64_t k);
void ggml_dequantize_row_q5_0(const block_q5_0 * x, float * y, int64_t k);
void ggml_dequantize_row_q5_1(const block_q5_1 * x, float * y, int64_t k);
void ggml_dequantize_row_q8_0(const block_q8_0 * x, float * y, int64_t k);
void ggml_dequantize_row_q8_1(const block_q8_1 * x, float * y, int64_t k);
void ggml_dequantize_row_q2_K(const block_q2_K * x, float * y, int64_t k);
void ggml_dequantize_row_q3_K(const block_q3_K * x, float * y, int64_t k);
void ggml_dequantize_row_q4_K(const block_q4_K * x, float * y, int64_t k);
void ggml_dequantize_row_q5_K(const block_q5_K * x, float * y, int64_t k);
void ggml_dequantize_row_q6_K(const block_q6_K * x, float * y, int64_t k);
void ggml_dequantize_row_q8_K(const block_q8_K * x, float * y, int64_t k);
void ggml_dequantize_row_iq4_nl(const block_iq4_nl * x, float * y, int64_t k);
void ggml_dequantize_row_iq4_xs(const block_iq4_xs * x, float * y, int64_t k);
void ggml_dequantize_row_mxfp4(const block_mxfp4 * x, float * y, int64_t k);

// ---- reference (round-to-nearest) quantization ----
void ggml_quantize_row_q4_0_ref(const float * x, block_q4_0 * y, int64_t k);
void ggml_quantize_row_q4_1_ref(const float * x, block_q4_1 * y, int64_t k);
void ggml_quantize_row_q5_0_ref(const float * x, block_q5_0 * y, int64_t k);
void ggml_quantize_row_q5_1_ref(const float * x, block_q5_1 * y, int64_t k);
void ggml_quantize_row_q8_0_ref(const float * x, block_q8_0 * y, int64_t k);
void ggml_quantize_row_q8_1_ref(const float * x, block_q8_1 * y, int64_t k);
void ggml_quantize_row_q2_K_ref(const float * x, block_q2_K * y, int64_t k);
void ggml_quantize_row_q3_K_ref(const float * x, block_q3_K * y, int64_t k);
void ggml_quantize_row_q4_K_ref(const float * x, block_q4_K * y, int64_t k);
void ggml_quantize_row_q5_K_ref(const float * x, block_q5_K * y, int64_t k);
void ggml_quantize_row_q6_K_ref(const float * x, block_q6_K * y, int64_t k);
void ggml_quantize_row_q8_K_ref(const float * x, block_q8_K * y, int64_t k);
// IQ4_NL: the largest magnitude on the codebook's end -127, every element on its nearest value.
void ggml_quantize_row_iq4_nl_ref(const float * x, block_iq4_nl * y, int64_t k);
// IQ4_XS: each sub-block's plain scale (as IQ4_NL), the largest of them on ls - 32 = -32, the
// others rounded to their 6-bit codes, then every element on its nearest value.
void ggml_quantize_row_iq4_xs_ref(const float * x, block_iq4_xs * y, int64_t k);
// MXFP4: e = floor(log2(max |x|)) - 2 + 127 (the largest magnitude lands in [4, 8) of the
// E2M1 range, saturating at 6), every element on its nearest E2M1 value (ties to the smaller
// magnitude); an all-zero block gets e = 0.
void ggml_quantize_row_mxfp4_ref(const float * x, block_mxfp4 * y, int64_t k);

// ---- quality quantization of weights ----
// Per type: quantizes n_rows rows of n_per_row floats into dst (rows back to back) with an
// error-minimising search; imatrix (n_per_row importance weights, or nullptr) weights the
// squared error of each column. Returns the bytes written.
size_t ggml_quantize_q4_0(const float * src, void * dst, int64_t n_rows, int64_t n_per_row, const float * imatrix);
size_t ggml_quantize_q4_1(const float * src, void * dst, int64_t n_rows, int64_t n_per_row, const float * imatrix);
size_t ggml_quantize_q5_0(const float * src, void * dst, int64_t n_rows, int64_t n_per_row, const float * imatrix);
size_t ggml_quantize_q5_1(const float * src, void * dst, int64_t n_rows, int64_t n_per_row, const float * imatrix);
size_t ggml_quantize_q8_0(const float * src, void * dst, int64_t n_rows, int64_t n_per_row, const float * imatrix);
size_t ggml_quantize_q2_K(const float * src, void * dst, int64_t n_rows, int64_t n_per_row, const float * imatrix);
size_t ggml_quantize_q3_K(const float * src, void * dst, int64_t n_rows, int64_t n_per_row, const float * imatrix);
size_t ggml_quantize_q4_K(const float * src, void * dst, int64_t n_rows, int64_t n_per_row, const float * imatrix);
size_t ggml_quantize_q5_K(const float * src, void * dst, int64_t n_rows, int64_t n_per_row, const float * imatrix);
size_t ggml_quantize_q6_K(const float * src, void * dst, int64_t n_rows, int64_t n_per_row, const float * imatrix);
size_t ggml_quantize_iq4_nl(const float * src, void * dst, int64_t n_rows, int64_t n_per_row, const float * imatrix);
size_t ggml_quantize_iq4_xs(const float * src, void * dst, int64_t n_rows, int64_t n_per_row, const float * imatrix);

// Any supported type:
// Quantizes n_rows rows of n_per_row floats (src) into dst, starting at row start_row of the
// destination tensor (dst points at the tensor's first byte). Works for every supported type
// (F32/F16/BF16 included). imatrix: optional per-column importance (n_per_row floats) or
// nullptr. src points at the first of the n_rows rows (it is not offset by start_row; dst is).
// Returns the bytes written: 0 (nothing written) when n_per_row is not a multiple of the
// type's block size, start_row < 0, n_rows <= 0, or the type cannot be quantized to.
size_t ggml_quantize_chunk(ggml_type type, const float * src, void * dst, int64_t start_row, int64_t n_rows,
                           int64_t n_per_row, const float * imatrix);
