// Activations SILU, GELU (tanh approximation), TANH and SWIGLU (silu(a) * b, same shapes):
// element-wise, result in a's type, F32/F16/BF16 through float, any strides, in place when dst
// shares a's memory. The math (and its accuracy) is in the row functions of ops-vec.h.
#include "cpu/ops-common.h"

using namespace ggml_cpu_ops;

void ggml_cpu_op_silu(const ggml_compute_params & p, ggml_tensor * dst) {
    const ggml_cpu_vec_fns & vec = ggml_cpu_vec_for(p.isa);
    elementwise_f32(p, dst, false, [&](const float * a, const float *, float * y, int64_t n) { vec.silu(a, y, n); });
}

void ggml_cpu_op_gelu(const ggml_compute_params & p, ggml_tensor * dst) {
    const ggml_cpu_vec_fns & vec = ggml_cpu_vec_for(p.isa);
    elementwise_f32(p, dst, false, [&](const float * a, const float *, float * y, int64_t n) { vec.gelu(a, y, n); });
}

void ggml_cpu_op_tanh(const ggml_compute_params & p, ggml_tensor * dst) {
    const ggml_cpu_vec_fns & vec = ggml_cpu_vec_for(p.isa);
    elementwise_f32(p, dst, false, [&](const float * a, const float *, float * y, int64_t n) { vec.tanh(a, y, n); });
}

void ggml_cpu_op_swiglu(const ggml_compute_params & p, ggml_tensor * dst) {
    const ggml_cpu_vec_fns & vec = ggml_cpu_vec_for(p.isa);
    elementwise_f32(p, dst, true, [&](const float * a, const float * b, float * y, int64_t n) { vec.swiglu(a, b, y, n); });
}
