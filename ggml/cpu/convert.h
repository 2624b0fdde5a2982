// ggml/cpu/convert.h — SIMD row conversions between F32, F16 and BF16 (internal).
//
// Usage:
//   const ggml_cpu_convert_fns & cv = ggml_cpu_convert_for(ggml_cpu_isa::avx2);
//   cv.f16_to_f32(src, dst, n);
//   cv.row_to_f32(GGML_TYPE_BF16)(src, dst, n);   // by type, for F32/F16/BF16
//
// Every path gives results bit-identical to the scalar conversions of ggml/types.h
// (round-to-nearest-even, NaN kept).
#pragma once

#include "ggml/cpu.h"
#include "ggml/types.h"

struct ggml_cpu_convert_fns {
    void (*f16_to_f32)(const ggml_fp16_t * x, float * y, int64_t n);
    void (*f32_to_f16)(const float * x, ggml_fp16_t * y, int64_t n);
    void (*bf16_to_f32)(const ggml_bf16_t * x, float * y, int64_t n);
    void (*f32_to_bf16)(const float * x, ggml_bf16_t * y, int64_t n);
    // The same four with untyped row pointers (what row_to_f32 / row_from_f32 return).
    ggml_to_float_fn f16_row_to_f32;
    ggml_from_float_fn f32_row_to_f16;
    ggml_to_float_fn bf16_row_to_f32;
    ggml_from_float_fn f32_row_to_bf16;

    // For F32 (a copy), F16 and BF16; nullptr for other types.
    ggml_to_float_fn row_to_f32(ggml_type t) const;
    ggml_from_float_fn row_from_f32(ggml_type t) const;
};
const ggml_cpu_convert_fns & ggml_cpu_convert_for(ggml_cpu_isa isa);
