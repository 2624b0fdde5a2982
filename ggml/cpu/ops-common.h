// ggml/cpu/ops-common.h — helpers shared by the non-matmul kernels in ops-*.cpp (internal).
//
// Usage (inside a kernel):
//   using namespace ggml_cpu_ops;
//   const int64_t rows = ggml_nrows(a);
//   ggml_cpu_parallel_for(p, rows, row_chunk(rows, a->ne[0], p.nth), [&](int64_t r0, int64_t r1) {
//       for (int64_t r = r0; r < r1; ++r) {
//           const row_index ri = unravel_row(a, r);
//           const float * x = load_row_f32(a, row_ptr(a, ri), buf, cv);   // a's row as floats
//           ...
//           store_row_f32(dst, row_ptr(dst, ri), y, cv);                 // converts to dst's type
//       }
//   });
//
// Rows are dimension 0 of a tensor; "dense" rows have nb[0] equal to the element size (or a
// single element). Row loaders return the row itself when it already is dense F32 and convert
// into the caller's buffer otherwise; every path handles any nb.
#pragma once

#include "cpu/convert.h"
#include "cpu/ops.h"
#include "cpu/ops-vec.h"

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace ggml_cpu_ops {

struct row_index {
    int64_t i1 = 0, i2 = 0, i3 = 0;
};

// Row r of t in row-major order of dims 1..3.
inline row_index unravel_row(const ggml_tensor * t, int64_t r) {
    row_index ri;
    ri.i1 = r % t->ne[1];
    r /= t->ne[1];
    ri.i2 = r % t->ne[2];
    ri.i3 = r / t->ne[2];
    return ri;
}

inline char * row_ptr(const ggml_tensor * t, int64_t i1, int64_t i2, int64_t i3) {
    return static_cast<char *>(t->data) + size_t(i1) * t->nb[1] + size_t(i2) * t->nb[2] + size_t(i3) * t->nb[3];
}
inline char * row_ptr(const ggml_tensor * t, const row_index & ri) {
    return row_ptr(t, ri.i1, ri.i2, ri.i3);
}

// Each row's elements are adjacent (blocks adjacent for block types).
bool rows_dense(const ggml_tensor * t);
// Whole tensor dense in row-major order (like ggml_is_contiguous).
bool is_dense(const ggml_tensor * t);
// Rows of t are dense F32: they can be read and written in place as float arrays.
bool rows_dense_f32(const ggml_tensor * t);

// Rows per chunk for ggml_cpu_parallel_for over rows of ne0 elements: about four chunks per
// thread for balance, but at least ~4096 elements per chunk so tiny tensors are not split.
int64_t row_chunk(int64_t n_rows, int64_t ne0, int nth);
// Elements per chunk for a flat split of n elements (a multiple of 64).
int64_t flat_chunk(int64_t n, int nth);

// Row of t at `row` (ne[0] elements) as floats: the row itself when dense F32, else
// converted into buf (ne[0] floats).
const float * load_row_f32(const ggml_tensor * t, const char * row, float * buf, const ggml_cpu_convert_fns & cv);
// Writes n = t->ne[0] floats into `row` of t, converting to t's type and following nb[0].
// x may be the row itself (dense F32 rows): nothing is copied then.
void store_row_f32(const ggml_tensor * t, char * row, const float * x, const ggml_cpu_convert_fns & cv);
// Same for the first n elements of a row (n <= ne[0]), starting at element 0 of `row`.
void store_elems_f32(const ggml_tensor * t, char * row, const float * x, int64_t n, const ggml_cpu_convert_fns & cv);
// Reads n elements (type of t, stride t->nb[0]) starting at `row` into x.
void load_elems_f32(const ggml_tensor * t, const char * row, float * x, int64_t n, const ggml_cpu_convert_fns & cv);

// The per-thread scratch of the node, cut in two float buffers of n floats each (both
// 64-byte aligned when the scratch is; ggml_cpu_scratch_floats reserves 2*ne0 + 64).
struct scratch_pair {
    float * a = nullptr;
    float * b = nullptr;
};
scratch_pair thread_scratch_pair(const ggml_compute_params & p, int64_t n);

// Row of b that broadcasts to row ri of a tensor whose rows have ne0 elements (b->ne[0]
// divides ne0): b's row repeated to ne0 floats. Returns b's row itself when it is dense F32
// and b->ne[0] == ne0, else fills buf (ne0 floats).
const float * load_broadcast_row_f32(const ggml_tensor * b, const row_index & ri, int64_t ne0, float * buf,
                                     const ggml_cpu_convert_fns & cv);

// Copies n items of item_size bytes from src (stride src_stride bytes) to dst (stride
// dst_stride), using memcpy when both are dense. Same type on both sides.
void copy_items(char * dst, size_t dst_stride, const char * src, size_t src_stride, int64_t n, size_t item_size);

inline void report_error(const ggml_compute_params & p) {
    if (p.error) p.error->store(1, std::memory_order_relaxed);
}

// Element-wise kernel over dst with a = dst->src[0] and, when binary, b = dst->src[1]
// broadcast to a (b->ne[i] divides a->ne[i]). f(xa, xb, y, n) computes n outputs from rows of
// floats (xb is nullptr for unary ops); y may equal xa. dst has a's shape; any types that the
// row loaders handle. Dense F32 tensors of the same shape are split flat, ignoring rows.
template <typename F>
void elementwise_f32(const ggml_compute_params & p, ggml_tensor * dst, bool binary, F && f) {
    const ggml_tensor * a = dst->src[0];
    const ggml_tensor * b = binary ? dst->src[1] : nullptr;
    const bool b_flat = !b || (b->type == GGML_TYPE_F32 && is_dense(b) && ggml_are_same_shape(a, b));
    if (a->type == GGML_TYPE_F32 && dst->type == GGML_TYPE_F32 && is_dense(a) && is_dense(dst) && b_flat) {
        const int64_t n = ggml_nelements(a);
        const float * xa = static_cast<const float *>(a->data);
        const float * xb = b ? static_cast<const float *>(b->data) : nullptr;
        float * y = static_cast<float *>(dst->data);
        ggml_cpu_parallel_for(p, n, flat_chunk(n, p.nth), [&](int64_t i0, int64_t i1) {
            f(xa + i0, xb ? xb + i0 : nullptr, y + i0, i1 - i0);
        });
        return;
    }
    const ggml_cpu_convert_fns & cv = ggml_cpu_convert_for(p.isa);
    const int64_t ne0 = a->ne[0];
    const scratch_pair buf = thread_scratch_pair(p, ne0);
    const bool y_direct = rows_dense_f32(dst);
    const int64_t rows = ggml_nrows(a);
    ggml_cpu_parallel_for(p, rows, row_chunk(rows, ne0, p.nth), [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r) {
            const row_index ri = unravel_row(a, r);
            const float * xa = load_row_f32(a, row_ptr(a, ri), buf.a, cv);
            const float * xb = b ? load_broadcast_row_f32(b, ri, ne0, buf.b, cv) : nullptr;
            char * drow = row_ptr(dst, ri);
            float * y = y_direct ? reinterpret_cast<float *>(drow) : buf.a;
            f(xa, xb, y, ne0);
            if (!y_direct) store_row_f32(dst, drow, y, cv);
        }
    });
}

}  // namespace ggml_cpu_ops
