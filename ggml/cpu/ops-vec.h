// ggml/cpu/ops-vec.h — SIMD row functions of the non-matmul CPU kernels (internal).
//
// Usage:
//   const ggml_cpu_vec_fns & vec = ggml_cpu_vec_for(p.isa);
//   vec.add(a, b, y, n);                       // y[i] = a[i] + b[i]
//   float m = vec.max(x, n);
//   float s = vec.exp_sum(x, m, y, n);         // y[i] = exp(x[i] - m), returns the sum of y
//
// One table per instruction-set path: scalar (the reference, any x86-64 or other CPU),
// AVX2+FMA and AVX-512. The AVX paths live in ops-vec-avx2.cpp / ops-vec-avx512.cpp, which are
// compiled with that ISA's flags and may only be reached after a CPUID check (the CPU backend
// caps p.isa to what the CPU supports). This header is included by those files, so it holds
// declarations and a plain struct only.
//
// Rules shared by every function: n >= 0 elements; pointers need no alignment beyond that of
// float; y may be the same pointer as an input (in place) but must not partially overlap one;
// nothing is read or written past n elements.
//
// Accuracy of the SIMD paths against exact math: exp relative error < 2e-7 for results in the
// normal range (inf above ~88.72, 0 / subnormals below ~-87.3, NaN only for NaN input); silu
// ~3e-7 relative; gelu ~1e-6 relative (tanh approximation, computed as x * sigmoid(2u), see
// ops-vec-scalar.cpp). Sums use several accumulators, so their rounding differs from the
// scalar path (which accumulates in double) by a few float ulps of the sum of |x|.
#pragma once

#include <cstdint>

enum class ggml_cpu_isa;  // ggml/cpu.h

struct ggml_cpu_vec_fns {
    const char * name;  // "scalar", "avx2", "avx512"

    // y = a + b, y = a * b, y = a / b (same length rows; IEEE division on every path).
    void (*add)(const float * a, const float * b, float * y, int64_t n);
    void (*mul)(const float * a, const float * b, float * y, int64_t n);
    void (*div)(const float * a, const float * b, float * y, int64_t n);
    // y = x * s + bias.
    void (*scale)(const float * x, float s, float bias, float * y, int64_t n);
    // y = x * s + m (softmax input with its mask row).
    void (*scale_add)(const float * x, float s, const float * m, float * y, int64_t n);

    // Reductions; 0 for n == 0.
    float (*sum)(const float * x, int64_t n);
    float (*sum_sq)(const float * x, int64_t n);
    // Largest element; -inf for n == 0. NaN elements are ignored.
    float (*max)(const float * x, int64_t n);
    // Index of the first largest element, NaN ignored; 0 when n == 0 or every element is NaN.
    int64_t (*argmax)(const float * x, int64_t n);

    // y = exp(x).
    void (*exp)(const float * x, float * y, int64_t n);
    // y = exp(x - m) and returns sum(y).
    float (*exp_sum)(const float * x, float m, float * y, int64_t n);

    // Activations: silu(x) = x / (1 + exp(-x)); swiglu: y = silu(a) * b;
    // gelu(x) = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
    void (*silu)(const float * x, float * y, int64_t n);
    void (*swiglu)(const float * a, const float * b, float * y, int64_t n);
    void (*gelu)(const float * x, float * y, int64_t n);
    // y = tanh(x): the scalar path rounds the double-precision tanh; SIMD within 3 ulp of it
    // (2 over a dense sweep; see vec-math-avx2.h), tanh(+-inf) = +-1, NaN stays NaN.
    void (*tanh)(const float * x, float * y, int64_t n);

    // RoPE rotation of the first n_dims elements of a row (n_dims even; elements past n_dims are
    // not touched). Pair i is rotated by (c_i, s_i): (x0, x1) -> (x0 c - x1 s, x0 s + x1 c).
    // rope_norm: pairs (x[2i], x[2i+1]), cs = c_0, s_0, c_1, s_1, ... (n_dims floats).
    // rope_neox: pairs (x[i], x[i + n_dims/2]), cs = c_0 .. c_{h-1}, s_0 .. s_{h-1} (h = n_dims/2).
    void (*rope_norm)(const float * x, const float * cs, float * y, int64_t n_dims);
    void (*rope_neox)(const float * x, const float * cs, float * y, int64_t n_dims);
};

// The table of one path. ggml_cpu_isa::best picks the fastest path this CPU supports;
// avx2 / avx512 must only be asked for when the CPU supports them.
const ggml_cpu_vec_fns & ggml_cpu_vec_for(ggml_cpu_isa isa);

const ggml_cpu_vec_fns & ggml_cpu_vec_fns_scalar();
const ggml_cpu_vec_fns & ggml_cpu_vec_fns_avx2();    // ops-vec-avx2.cpp
const ggml_cpu_vec_fns & ggml_cpu_vec_fns_avx512();  // ops-vec-avx512.cpp
