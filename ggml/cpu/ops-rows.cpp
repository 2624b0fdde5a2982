// SUM_ROWS and TOP_K: reductions along dimension 0 of an F32 tensor (any strides).
//
// sum_rows: dst[0, i1, i2, i3] = sum of row (i1, i2, i3) (several accumulators on the SIMD
// paths, double on the scalar one; see ops-vec.h).
// top_k: dst[0 .. k-1, i1, i2, i3] = indices (I32) of the k largest elements of the row, the
// largest first, the lower index first among equal values (-0 equals +0); NaN ranks below
// every number (NaNs come last, by index). A partial sort of the row's indices: O(n log k).
#include "cpu/ops-common.h"

#include <algorithm>
#include <cmath>
#include <numeric>

using namespace ggml_cpu_ops;

namespace {

// Element i of the row goes before element j in top_k's order (a strict total order).
struct top_k_before {
    const float * x;
    bool operator()(int32_t i, int32_t j) const {
        const float a = x[i], b = x[j];
        const bool na = std::isnan(a), nb = std::isnan(b);
        if (na || nb) return na == nb ? i < j : nb;
        return a > b || (a == b && i < j);
    }
};

// Writes n values of 4 bytes to row of t, element stride nb[0].
void store_row_4(const ggml_tensor * t, char * row, const void * v, int64_t n) {
    copy_items(row, t->nb[0], static_cast<const char *>(v), 4, n, 4);
}

}  // namespace

void ggml_cpu_op_sum_rows(const ggml_compute_params & p, ggml_tensor * dst) {
    const ggml_tensor * a = dst->src[0];
    const ggml_cpu_vec_fns & vec = ggml_cpu_vec_for(p.isa);
    const ggml_cpu_convert_fns & cv = ggml_cpu_convert_for(p.isa);
    const int64_t ne0 = a->ne[0];
    float * buf = ggml_cpu_thread_scratch(p);
    const int64_t rows = ggml_nrows(a);
    ggml_cpu_parallel_for(p, rows, row_chunk(rows, ne0, p.nth), [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r) {
            const row_index ri = unravel_row(a, r);
            const float s = vec.sum(load_row_f32(a, row_ptr(a, ri), buf, cv), ne0);
            std::memcpy(row_ptr(dst, ri), &s, sizeof(float));
        }
    });
}

void ggml_cpu_op_top_k(const ggml_compute_params & p, ggml_tensor * dst) {
    const ggml_tensor * a = dst->src[0];
    const ggml_cpu_convert_fns & cv = ggml_cpu_convert_for(p.isa);
    const int64_t ne0 = a->ne[0], k = dst->ne[0];
    GGML_ASSERT(dst->type == GGML_TYPE_I32 && k <= ne0 && ne0 <= INT32_MAX);
    const scratch_pair buf = thread_scratch_pair(p, ne0);  // the row, then its indices
    int32_t * idx = reinterpret_cast<int32_t *>(buf.b);
    const int64_t rows = ggml_nrows(a);
    ggml_cpu_parallel_for(p, rows, row_chunk(rows, ne0, p.nth), [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r) {
            const row_index ri = unravel_row(a, r);
            const float * x = load_row_f32(a, row_ptr(a, ri), buf.a, cv);
            std::iota(idx, idx + ne0, 0);
            std::partial_sort(idx, idx + k, idx + ne0, top_k_before{x});
            store_row_4(dst, row_ptr(dst, ri), idx, k);
        }
    });
}
