// Data movement: CONT, CPY, GET_ROWS, SET_ROWS, CONCAT.
//
// CONT and CPY copy elements in row-major order of the source into row-major order of dst
// (shapes may differ, element counts match); CPY converts between F32, F16 and BF16 (through
// float, bit-exact conversions of convert.h). Same-type copies move bytes, so they also work
// for block-quantized types (in whole blocks). Any strides on both sides.
// GET_ROWS / SET_ROWS gather and scatter rows through an index tensor; an index out of range
// sets *p.error (GET_ROWS leaves that row as zeros, SET_ROWS skips it).
#include "cpu/ops-common.h"

#include <algorithm>

using namespace ggml_cpu_ops;

namespace {

// Coordinates (in units along dim 0) of a position in t walked in row-major order.
struct cursor {
    int64_t i0 = 0, i1 = 0, i2 = 0, i3 = 0;
};

cursor cursor_at(const ggml_tensor * t, int64_t units_per_row, int64_t linear) {
    cursor c;
    c.i0 = linear % units_per_row;
    const row_index ri = unravel_row(t, linear / units_per_row);
    c.i1 = ri.i1;
    c.i2 = ri.i2;
    c.i3 = ri.i3;
    return c;
}

void cursor_next_row(const ggml_tensor * t, cursor & c) {
    c.i0 = 0;
    if (++c.i1 < t->ne[1]) return;
    c.i1 = 0;
    if (++c.i2 < t->ne[2]) return;
    c.i2 = 0;
    ++c.i3;
}

// Whole dense tensors of one type: a flat byte copy split across threads.
void copy_dense_bytes(const ggml_compute_params & p, const ggml_tensor * src, ggml_tensor * dst) {
    const int64_t n = int64_t(ggml_row_size(src->type, src->ne[0])) * ggml_nrows(src);
    int64_t chunk = (n + 4 * int64_t(p.nth) - 1) / (4 * int64_t(p.nth));
    chunk = std::max<int64_t>((chunk + 4095) / 4096 * 4096, 64 * 1024);
    const char * s = static_cast<const char *>(src->data);
    char * d = static_cast<char *>(dst->data);
    ggml_cpu_parallel_for(p, n, chunk, [&](int64_t b0, int64_t b1) { std::memcpy(d + b0, s + b0, size_t(b1 - b0)); });
}

// Writes the n units of one source row (same type: raw bytes, else floats in x) into dst,
// starting at cursor c and following dst's rows; c ends past the last unit written.
void copy_row_segments(const ggml_tensor * src, const char * srow, const float * x, ggml_tensor * dst,
                       int64_t n, int64_t dst_units, cursor & c, const ggml_cpu_convert_fns & cv) {
    const size_t unit = ggml_type_size(src->type);
    int64_t done = 0;
    while (done < n) {
        const int64_t len = std::min(n - done, dst_units - c.i0);
        char * d = row_ptr(dst, c.i1, c.i2, c.i3) + size_t(c.i0) * dst->nb[0];
        if (x) {
            store_elems_f32(dst, d, x + done, len, cv);
        } else {
            copy_items(d, dst->nb[0], srow + size_t(done) * src->nb[0], src->nb[0], len, unit);
        }
        done += len;
        c.i0 += len;
        if (c.i0 == dst_units) cursor_next_row(dst, c);
    }
}

// A source whose dim 1 is the dense one (a transposed view, such as attention's V^T) copied
// in source-row order would write one dst cache line per element; dst is written in tiles of
// k_tile x k_tile elements instead, row by row, while the tile's k_tile source runs stay in L1.
constexpr int64_t k_tile = 32;

bool is_transposed_copy(const ggml_tensor * src, const ggml_tensor * dst) {
    const size_t item = ggml_type_size(src->type);
    if (src->type != dst->type || ggml_blck_size(src->type) != 1 || (item != 2 && item != 4)) return false;
    if (!ggml_are_same_shape(src, dst) || !is_dense(dst)) return false;
    return src->nb[1] == item && src->nb[0] != item && src->ne[0] > 1 && src->ne[1] > 1;
}

template <typename T>
void copy_transposed(const ggml_compute_params & p, const ggml_tensor * src, ggml_tensor * dst) {
    const int64_t ne0 = src->ne[0], ne1 = src->ne[1], ne2 = src->ne[2];
    const int64_t tiles0 = (ne0 + k_tile - 1) / k_tile, tiles1 = (ne1 + k_tile - 1) / k_tile;
    const int64_t n_jobs = ne2 * src->ne[3] * tiles0;  // a job: one slice's k_tile dst columns
    ggml_cpu_parallel_for(p, n_jobs, 1, [&](int64_t j0, int64_t j1) {
        for (int64_t job = j0; job < j1; ++job) {
            const int64_t t0 = job % tiles0, slice = job / tiles0;
            const int64_t i2 = slice % ne2, i3 = slice / ne2;
            const char * s = static_cast<const char *>(src->data) + size_t(i2) * src->nb[2] + size_t(i3) * src->nb[3];
            T * d = reinterpret_cast<T *>(static_cast<char *>(dst->data) + size_t(i2) * dst->nb[2] + size_t(i3) * dst->nb[3]);
            const int64_t a0 = t0 * k_tile, b0 = std::min(ne0, a0 + k_tile);
            for (int64_t t1 = 0; t1 < tiles1; ++t1) {
                const int64_t a1 = t1 * k_tile, b1 = std::min(ne1, a1 + k_tile);
                for (int64_t i1 = a1; i1 < b1; ++i1) {
                    const char * col = s + size_t(i1) * sizeof(T);
                    T * drow = d + i1 * ne0;
                    for (int64_t i0 = a0; i0 < b0; ++i0) {
                        std::memcpy(drow + i0, col + size_t(i0) * src->nb[0], sizeof(T));
                    }
                }
            }
        }
    });
}

// Elements of src in row-major order into dst in row-major order (same element count).
void copy_row_major(const ggml_compute_params & p, const ggml_tensor * src, ggml_tensor * dst) {
    GGML_ASSERT(ggml_nelements(src) == ggml_nelements(dst));
    if (ggml_nelements(src) == 0) return;
    const bool same_type = src->type == dst->type;
    if (same_type && is_dense(src) && is_dense(dst)) {
        copy_dense_bytes(p, src, dst);
        return;
    }
    if (is_transposed_copy(src, dst)) {
        if (ggml_type_size(src->type) == 2) {
            copy_transposed<uint16_t>(p, src, dst);
        } else {
            copy_transposed<uint32_t>(p, src, dst);
        }
        return;
    }
    const int64_t blck = ggml_blck_size(src->type);
    GGML_ASSERT(same_type || (blck == 1 && ggml_blck_size(dst->type) == 1));
    GGML_ASSERT(src->ne[0] % blck == 0 && dst->ne[0] % blck == 0);
    const int64_t src_units = src->ne[0] / blck, dst_units = dst->ne[0] / blck;
    const ggml_cpu_convert_fns & cv = ggml_cpu_convert_for(p.isa);
    float * buf = ggml_cpu_thread_scratch(p);
    const int64_t rows = ggml_nrows(src);
    ggml_cpu_parallel_for(p, rows, row_chunk(rows, src->ne[0], p.nth), [&](int64_t r0, int64_t r1) {
        cursor c = cursor_at(dst, dst_units, r0 * src_units);
        for (int64_t r = r0; r < r1; ++r) {
            const char * srow = row_ptr(src, unravel_row(src, r));
            const float * x = same_type ? nullptr : load_row_f32(src, srow, buf, cv);
            copy_row_segments(src, srow, x, dst, src_units, dst_units, c, cv);
        }
    });
}

int64_t read_index(const ggml_tensor * idx, int64_t i0, int64_t i1, int64_t i2) {
    const char * ptr = static_cast<const char *>(idx->data) + size_t(i0) * idx->nb[0] + size_t(i1) * idx->nb[1] +
                       size_t(i2) * idx->nb[2];
    if (idx->type == GGML_TYPE_I64) {
        int64_t v;
        std::memcpy(&v, ptr, 8);
        return v;
    }
    GGML_ASSERT(idx->type == GGML_TYPE_I32);
    int32_t v;
    std::memcpy(&v, ptr, 4);
    return v;
}

}  // namespace

void ggml_cpu_op_cont(const ggml_compute_params & p, ggml_tensor * dst) {
    copy_row_major(p, dst->src[0], dst);
}

void ggml_cpu_op_cpy(const ggml_compute_params & p, ggml_tensor * dst) {
    copy_row_major(p, dst->src[0], dst);  // dst is the view of src[1] that receives the copy
}

// dst[:, i, j, k] = a[:, b[i, j, k], j, k]
void ggml_cpu_op_get_rows(const ggml_compute_params & p, ggml_tensor * dst) {
    const ggml_tensor * a = dst->src[0];
    const ggml_tensor * b = dst->src[1];
    const ggml_cpu_convert_fns & cv = ggml_cpu_convert_for(p.isa);
    const int64_t ne0 = a->ne[0];
    GGML_ASSERT(dst->ne[0] == ne0);
    float * buf = ggml_cpu_thread_scratch(p);
    const int64_t rows = ggml_nrows(dst);
    ggml_cpu_parallel_for(p, rows, row_chunk(rows, ne0, p.nth), [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r) {
            const row_index ri = unravel_row(dst, r);
            const int64_t idx = read_index(b, ri.i1, ri.i2, ri.i3);
            char * drow = row_ptr(dst, ri);
            if (idx < 0 || idx >= a->ne[1]) {
                report_error(p);
                std::fill(buf, buf + ne0, 0.0f);
                store_row_f32(dst, drow, buf, cv);
                continue;
            }
            const char * arow = row_ptr(a, idx, ri.i2, ri.i3);
            if (rows_dense_f32(dst)) {
                load_elems_f32(a, arow, reinterpret_cast<float *>(drow), ne0, cv);  // convert straight into dst
            } else {
                store_row_f32(dst, drow, load_row_f32(a, arow, buf, cv), cv);
            }
        }
    });
}

// a[:, c[i, j % c_ne1, k % c_ne2], j, k] = b[:, i, j, k]; src0 = b, src1 = c, dst = view of a.
void ggml_cpu_op_set_rows(const ggml_compute_params & p, ggml_tensor * dst) {
    const ggml_tensor * b = dst->src[0];
    const ggml_tensor * c = dst->src[1];
    const ggml_cpu_convert_fns & cv = ggml_cpu_convert_for(p.isa);
    const int64_t ne0 = b->ne[0];
    GGML_ASSERT(dst->ne[0] == ne0);
    float * buf = ggml_cpu_thread_scratch(p);
    const int64_t rows = ggml_nrows(b);
    ggml_cpu_parallel_for(p, rows, row_chunk(rows, ne0, p.nth), [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r) {
            const row_index ri = unravel_row(b, r);
            const int64_t idx = read_index(c, ri.i1, ri.i2 % c->ne[1], ri.i3 % c->ne[2]);
            if (idx < 0 || idx >= dst->ne[1]) {
                report_error(p);
                continue;
            }
            store_row_f32(dst, row_ptr(dst, idx, ri.i2, ri.i3), load_row_f32(b, row_ptr(b, ri), buf, cv), cv);
        }
    });
}

// dst = a and b side by side along dim (same type; the other dims equal).
void ggml_cpu_op_concat(const ggml_compute_params & p, ggml_tensor * dst) {
    const ggml_tensor * a = dst->src[0];
    const ggml_tensor * b = dst->src[1];
    const int dim = ggml_get_concat_dim(dst);
    GGML_ASSERT(dim >= 0 && dim < GGML_MAX_DIMS && a->type == dst->type && b->type == dst->type);
    const int64_t blck = ggml_blck_size(dst->type);
    const size_t unit = ggml_type_size(dst->type);
    const int64_t rows = ggml_nrows(dst);
    ggml_cpu_parallel_for(p, rows, row_chunk(rows, dst->ne[0], p.nth), [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r) {
            const row_index ri = unravel_row(dst, r);
            char * drow = row_ptr(dst, ri);
            if (dim == 0) {
                const int64_t na = a->ne[0] / blck;
                copy_items(drow, dst->nb[0], row_ptr(a, ri), a->nb[0], na, unit);
                copy_items(drow + size_t(na) * dst->nb[0], dst->nb[0], row_ptr(b, ri), b->nb[0], b->ne[0] / blck, unit);
                continue;
            }
            int64_t at[4] = {0, ri.i1, ri.i2, ri.i3};
            const ggml_tensor * src = a;
            if (at[dim] >= a->ne[dim]) {
                at[dim] -= a->ne[dim];
                src = b;
            }
            copy_items(drow, dst->nb[0], row_ptr(src, at[1], at[2], at[3]), src->nb[0], dst->ne[0] / blck, unit);
        }
    });
}
