// ggml/cpu/mul-mat-plan.h — pieces of the MUL_MAT driver (mul-mat.cpp) that other matrix ops
// of the CPU backend share (internal; MUL_MAT_ID in mul-mat-id.cpp).
//
// Usage:
//   const ggml_mul_mat_kernels & kt = ggml_mul_mat_kernels_for(p.isa);
//   const ggml_mul_mat_type_kernels & e = kt.of(a->type);
//   const ggml_type vt = e.dot_vec_type;
//   ggml_from_float_fn q = ggml_mul_mat_from_f32(e, vt);         // nullptr: a float type
//   const float * x = ggml_mul_mat_b_row(b, n, i12, i13, tmp);   // row n of batch (i12, i13)
#pragma once

#include "mul-mat.h"

#include "ggml/cpu.h"
#include "ggml/ggml.h"

#include <cstddef>
#include <cstdint>

// Quantized weights, dot path: a job's weight rows stay in the core's L2 cache while the
// kernel runs over the job's columns in passes of 12 to 16 (bytes of weights per job, at most)...
constexpr size_t ggml_mul_mat_job_weight_bytes = size_t(512) << 10;
// ... and a job takes at most this many columns (the weights of a job are read from memory or
// L3 once per job, so more columns per job mean less traffic; fewer mean more jobs to share).
constexpr int64_t ggml_mul_mat_job_cols = 64;

// The kernel table of an instruction-set path (scalar for anything but avx2 / avx512).
const ggml_mul_mat_kernels & ggml_mul_mat_kernels_for(ggml_cpu_isa isa);

// The dot path's conversion of F32 activations into vt: the entry's quantizer, else the
// reference quantizer of the type traits for a quantized vt; nullptr for the float types
// (convert.h converts those; F32 is copied or gathered).
ggml_from_float_fn ggml_mul_mat_from_f32(const ggml_mul_mat_type_kernels & e, ggml_type vt);

// Row n of batch (i12, i13) of the F32 tensor b: a pointer into b when its elements are
// adjacent, otherwise gathered into tmp (b->ne[0] floats).
const float * ggml_mul_mat_b_row(const ggml_tensor * b, int64_t n, int64_t i12, int64_t i13, float * tmp);
