// tools/common/tensor-convert.h — whole-tensor conversions for the tools, rows split across
// threads: any type with a float conversion → float, and float → any type (quality quantizer).
//
// Usage:
//   std::vector<float> f(size_t(info.n_elements));
//   std::string err;
//   if (!tensor_rows_to_f32(info.type, bytes, info.ne[0], info.n_rows(), f.data(), 4, &err)) …
//   std::vector<uint8_t> q(ggml_row_size(GGML_TYPE_Q4_K, info.ne[0]) * size_t(info.n_rows()));
//   tensor_rows_quantize(GGML_TYPE_Q4_K, f.data(), q.data(), info.ne[0], info.n_rows(), 4, &err);
//
// Rows are independent, so the result does not depend on the number of threads.
#pragma once

#include "ggml/types.h"

#include <cstdint>
#include <functional>
#include <string>

// Runs fn(begin, end) over [0, n) in chunks of `chunk` items claimed by n_threads threads (the
// caller's thread is one of them). fn must not throw.
void tools_parallel_for(int64_t n, int64_t chunk, int n_threads, const std::function<void(int64_t, int64_t)> & fn);

// True when tensors of this type can be read as float (the type has a to_float conversion).
bool tensor_type_has_to_f32(ggml_type type);
// True when float rows can be written in this type (F32, F16, BF16 and the quantized weight types).
bool tensor_type_has_quantize(ggml_type type);

// Converts n_rows rows of n_per_row elements of `type` (rows back to back in src) to float.
// False with *error set when the type has no float conversion or the row length does not fit
// its block size.
bool tensor_rows_to_f32(ggml_type type, const void * src, int64_t n_per_row, int64_t n_rows, float * dst,
                        int n_threads, std::string * error);

// Quantizes n_rows rows of n_per_row floats into dst (ggml_row_size(type, n_per_row) bytes per
// row). False with *error set when the type cannot be written or the row length does not fit.
bool tensor_rows_quantize(ggml_type type, const float * src, void * dst, int64_t n_per_row, int64_t n_rows,
                          int n_threads, std::string * error);
