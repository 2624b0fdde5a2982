// ADD, MUL, DIV (b broadcast to a) and SCALE (a*s + bias): element-wise, result in a's type.
// F32/F16/BF16 in any combination (F16/BF16 go through float); any strides; in place when
// dst shares a's memory. Dense F32 tensors are split flat across threads, others by rows.
#include "cpu/ops-common.h"

using namespace ggml_cpu_ops;

void ggml_cpu_op_add(const ggml_compute_params & p, ggml_tensor * dst) {
    const ggml_cpu_vec_fns & vec = ggml_cpu_vec_for(p.isa);
    elementwise_f32(p, dst, true, [&](const float * a, const float * b, float * y, int64_t n) { vec.add(a, b, y, n); });
}

void ggml_cpu_op_mul(const ggml_compute_params & p, ggml_tensor * dst) {
    const ggml_cpu_vec_fns & vec = ggml_cpu_vec_for(p.isa);
    elementwise_f32(p, dst, true, [&](const float * a, const float * b, float * y, int64_t n) { vec.mul(a, b, y, n); });
}

void ggml_cpu_op_div(const ggml_compute_params & p, ggml_tensor * dst) {
    const ggml_cpu_vec_fns & vec = ggml_cpu_vec_for(p.isa);
    elementwise_f32(p, dst, true, [&](const float * a, const float * b, float * y, int64_t n) { vec.div(a, b, y, n); });
}

void ggml_cpu_op_scale(const ggml_compute_params & p, ggml_tensor * dst) {
    const ggml_cpu_vec_fns & vec = ggml_cpu_vec_for(p.isa);
    const float s = ggml_get_scale(dst);
    const float bias = ggml_get_scale_bias(dst);
    elementwise_f32(p, dst, false, [&](const float * a, const float *, float * y, int64_t n) { vec.scale(a, s, bias, y, n); });
}
