// ggml/types.h — element types and their traits.
//
// Usage:
//   const ggml_type_traits & tt = ggml_get_type_traits(GGML_TYPE_F16);
//   size_t row_bytes = ggml_row_size(GGML_TYPE_F16, 4096);      // 8192
//   std::vector<float> out(n);
//   tt.to_float(src_row, out.data(), n);                         // n % tt.blck_size == 0
//   float x = ggml_fp16_to_fp32(ggml_fp32_to_fp16(1.5f));        // 1.5f
//
// The numeric values of ggml_type are the ids used in GGUF files, so a type read from a file
// maps directly (ids of formats this library does not implement are not valid: 4, 5, 16..19,
// 21, 22, 29, 31..38). Block-quantized types (Q4_0 … Q8_K, IQ4_NL, IQ4_XS, MXFP4) have their
// block layouts and functions in ggml/quants.h; to_float is their bit-exact dequantization,
// from_float the round-to-nearest reference quantizer (ggml_quantize_chunk is the quality one).
#pragma once

#include <cstddef>
#include <cstdint>

enum ggml_type : int32_t {
    GGML_TYPE_F32  = 0,
    GGML_TYPE_F16  = 1,
    GGML_TYPE_Q4_0 = 2,
    GGML_TYPE_Q4_1 = 3,
    GGML_TYPE_Q5_0 = 6,
    GGML_TYPE_Q5_1 = 7,
    GGML_TYPE_Q8_0 = 8,
    GGML_TYPE_Q8_1 = 9,
    GGML_TYPE_Q2_K = 10,
    GGML_TYPE_Q3_K = 11,
    GGML_TYPE_Q4_K = 12,
    GGML_TYPE_Q5_K = 13,
    GGML_TYPE_Q6_K = 14,
    GGML_TYPE_Q8_K = 15,
    GGML_TYPE_IQ4_NL = 20,
    GGML_TYPE_IQ4_XS = 23,
    GGML_TYPE_I8   = 24,
    GGML_TYPE_I16  = 25,
    GGML_TYPE_I32  = 26,
    GGML_TYPE_I64  = 27,
    GGML_TYPE_F64  = 28,
    GGML_TYPE_BF16 = 30,
    GGML_TYPE_MXFP4 = 39,
    GGML_TYPE_COUNT = 40,
};

using ggml_fp16_t = uint16_t;  // IEEE 754 binary16 bits
using ggml_bf16_t = uint16_t;  // bfloat16 bits (upper half of a binary32)

// Converts n values of a row of this type to float (n is a multiple of blck_size).
using ggml_to_float_fn = void (*)(const void * src, float * dst, int64_t n);
// Converts n floats to a row of this type (n is a multiple of blck_size).
using ggml_from_float_fn = void (*)(const float * src, void * dst, int64_t n);

struct ggml_type_traits {
    const char * name = nullptr;    // "f32", "f16", "q4_0", …; nullptr for unused ids
    int64_t blck_size = 0;          // elements per block (1 for plain types)
    size_t type_size = 0;           // bytes per block
    bool is_quantized = false;
    bool is_float = false;          // F32, F16, BF16, F64: element-wise float storage
    ggml_to_float_fn to_float = nullptr;
    ggml_from_float_fn from_float = nullptr;  // reference (scalar) conversion
    // Partner type of a reference dot product: what activations are converted to when they
    // meet this type (Q8_0 / Q8_K for quantized types). A backend may do better: the CPU keeps
    // activations in F32 against F16/BF16 weights (only its AVX-512 BF16 GEMM uses BF16).
    ggml_type vec_dot_type = GGML_TYPE_COUNT;
};

// Traits of a type; an entry with name == nullptr for ids that are not types.
const ggml_type_traits & ggml_get_type_traits(ggml_type type);

// True when t is a known id whose traits are complete (name, sizes, conversions where they apply).
bool ggml_type_is_supported(ggml_type type);
// True when the value is one of the ids above (supported or not yet).
bool ggml_type_is_valid(int32_t type);

const char * ggml_type_name(ggml_type type);   // "f32"…, or "invalid"
int64_t ggml_blck_size(ggml_type type);
size_t ggml_type_size(ggml_type type);
// Bytes of a row of ne elements (ne must be a multiple of the block size).
size_t ggml_row_size(ggml_type type, int64_t ne);

// Scalar conversions, exact and round-to-nearest-even, NaN and infinities preserved.
float ggml_fp16_to_fp32(ggml_fp16_t h);
ggml_fp16_t ggml_fp32_to_fp16(float f);
float ggml_bf16_to_fp32(ggml_bf16_t h);
ggml_bf16_t ggml_fp32_to_bf16(float f);

// Row conversions (reference speed; the CPU backend has SIMD versions).
void ggml_fp16_to_fp32_row(const ggml_fp16_t * x, float * y, int64_t n);
void ggml_fp32_to_fp16_row(const float * x, ggml_fp16_t * y, int64_t n);
void ggml_bf16_to_fp32_row(const ggml_bf16_t * x, float * y, int64_t n);
void ggml_fp32_to_bf16_row(const float * x, ggml_bf16_t * y, int64_t n);
