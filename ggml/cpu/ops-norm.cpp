// RMS_NORM and NORM over dimension 0 of an F32 tensor (any strides; in place when dst shares
// a's memory):
//   rms_norm: y = x / sqrt(mean(x^2) + eps)
//   norm:     y = (x - mean(x)) / sqrt(mean((x - mean)^2) + eps)   (two passes: the variance
//             of the centred row, which keeps its precision when |mean| >> stddev)
#include "cpu/ops-common.h"

#include <cmath>

using namespace ggml_cpu_ops;

namespace {

// Runs norm_row(x, y, n) over the rows of dst->src[0]; y is dst's row when it is dense F32.
template <typename F>
void norm_rows(const ggml_compute_params & p, ggml_tensor * dst, F && norm_row) {
    const ggml_tensor * a = dst->src[0];
    const ggml_cpu_convert_fns & cv = ggml_cpu_convert_for(p.isa);
    const int64_t ne0 = a->ne[0];
    const scratch_pair buf = thread_scratch_pair(p, ne0);
    const bool y_direct = rows_dense_f32(dst);
    const int64_t rows = ggml_nrows(a);
    ggml_cpu_parallel_for(p, rows, row_chunk(rows, ne0, p.nth), [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r) {
            const row_index ri = unravel_row(a, r);
            const float * x = load_row_f32(a, row_ptr(a, ri), buf.a, cv);
            char * drow = row_ptr(dst, ri);
            float * y = y_direct ? reinterpret_cast<float *>(drow) : buf.b;
            norm_row(x, y, ne0);
            if (!y_direct) store_row_f32(dst, drow, y, cv);
        }
    });
}

}  // namespace

void ggml_cpu_op_rms_norm(const ggml_compute_params & p, ggml_tensor * dst) {
    const ggml_cpu_vec_fns & vec = ggml_cpu_vec_for(p.isa);
    const float eps = ggml_get_norm_eps(dst);
    norm_rows(p, dst, [&](const float * x, float * y, int64_t n) {
        if (n == 0) return;
        const double mean_sq = double(vec.sum_sq(x, n)) / double(n);
        vec.scale(x, float(1.0 / std::sqrt(mean_sq + double(eps))), 0.0f, y, n);
    });
}

void ggml_cpu_op_norm(const ggml_compute_params & p, ggml_tensor * dst) {
    const ggml_cpu_vec_fns & vec = ggml_cpu_vec_for(p.isa);
    const float eps = ggml_get_norm_eps(dst);
    norm_rows(p, dst, [&](const float * x, float * y, int64_t n) {
        if (n == 0) return;
        const float mean = float(double(vec.sum(x, n)) / double(n));
        vec.scale(x, 1.0f, -mean, y, n);  // y = x - mean (y may be x)
        const double var = double(vec.sum_sq(y, n)) / double(n);
        vec.scale(y, float(1.0 / std::sqrt(var + double(eps))), 0.0f, y, n);
    });
}
