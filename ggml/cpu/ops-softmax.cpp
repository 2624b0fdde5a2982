// SOFT_MAX and ARGMAX: reductions along dimension 0.
//
// soft_max: y = softmax(x * scale + mask) per row, numerically stable (the row maximum is
// subtracted before exp). The mask (F32 or F16, optional) has rows [ne0, >= ne1, m2, m3]:
// row (i1, i2, i3) of a uses mask row (i1, i2 % m2, i3 % m3). -inf in the mask excludes an
// element; a row whose every element is -inf gives zeros (not NaN). In place when dst shares
// a's memory.
// argmax: index (I32) of the first largest element of each row; NaNs are ignored, and a row
// of NaNs gives 0.
#include "cpu/ops-common.h"

#include <algorithm>
#include <cmath>

using namespace ggml_cpu_ops;

namespace {

// Row of the mask for row ri of a, as floats (in buf unless it is dense F32).
const float * soft_max_mask_row(const ggml_tensor * mask, const row_index & ri, float * buf,
                                const ggml_cpu_convert_fns & cv) {
    const char * row = row_ptr(mask, ri.i1, ri.i2 % mask->ne[2], ri.i3 % mask->ne[3]);
    return load_row_f32(mask, row, buf, cv);
}

}  // namespace

void ggml_cpu_op_soft_max(const ggml_compute_params & p, ggml_tensor * dst) {
    const ggml_tensor * a = dst->src[0];
    const ggml_tensor * mask = dst->src[1];
    const float scale = ggml_get_soft_max_scale(dst);
    const ggml_cpu_vec_fns & vec = ggml_cpu_vec_for(p.isa);
    const ggml_cpu_convert_fns & cv = ggml_cpu_convert_for(p.isa);
    const int64_t ne0 = a->ne[0];
    if (mask) GGML_ASSERT(mask->ne[0] == ne0 && mask->ne[1] >= a->ne[1]);
    const scratch_pair buf = thread_scratch_pair(p, ne0);
    const bool y_direct = rows_dense_f32(dst);
    const int64_t rows = ggml_nrows(a);
    ggml_cpu_parallel_for(p, rows, row_chunk(rows, ne0, p.nth), [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r) {
            const row_index ri = unravel_row(a, r);
            // w = x * scale + mask, in buf.a (x is read before dst is written: in place is safe)
            const float * x = load_row_f32(a, row_ptr(a, ri), buf.a, cv);
            if (mask) {
                vec.scale_add(x, scale, soft_max_mask_row(mask, ri, buf.b, cv), buf.a, ne0);
            } else {
                vec.scale(x, scale, 0.0f, buf.a, ne0);
            }
            char * drow = row_ptr(dst, ri);
            float * y = y_direct ? reinterpret_cast<float *>(drow) : buf.a;
            const float m = vec.max(buf.a, ne0);
            if (m == -INFINITY) {
                std::fill(y, y + ne0, 0.0f);
            } else {
                const float sum = vec.exp_sum(buf.a, m, y, ne0);
                vec.scale(y, 1.0f / sum, 0.0f, y, ne0);
            }
            if (!y_direct) store_row_f32(dst, drow, y, cv);
        }
    });
}

void ggml_cpu_op_argmax(const ggml_compute_params & p, ggml_tensor * dst) {
    const ggml_tensor * a = dst->src[0];
    const ggml_cpu_vec_fns & vec = ggml_cpu_vec_for(p.isa);
    const ggml_cpu_convert_fns & cv = ggml_cpu_convert_for(p.isa);
    const int64_t ne0 = a->ne[0];
    GGML_ASSERT(dst->type == GGML_TYPE_I32 && ggml_nelements(dst) == ggml_nrows(a));
    float * buf = ggml_cpu_thread_scratch(p);
    const int64_t rows = ggml_nrows(a);
    // dst holds one index per row of a, in row order; follow dst's strides over its own shape.
    ggml_cpu_parallel_for(p, rows, row_chunk(rows, ne0, p.nth), [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r) {
            const float * x = load_row_f32(a, row_ptr(a, unravel_row(a, r)), buf, cv);
            const int32_t idx = int32_t(vec.argmax(x, ne0));
            int64_t k = r;
            const int64_t d0 = k % dst->ne[0];
            k /= dst->ne[0];
            char * out = row_ptr(dst, unravel_row(dst, k)) + size_t(d0) * dst->nb[0];
            std::memcpy(out, &idx, 4);
        }
    });
}
