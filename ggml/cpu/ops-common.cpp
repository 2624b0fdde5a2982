// Helpers shared by the non-matmul kernels: row access with any strides and types, chunk
// sizes, scratch buffers. See ops-common.h.
#include "cpu/ops-common.h"

#include <algorithm>
#include <cstring>

namespace ggml_cpu_ops {

bool rows_dense(const ggml_tensor * t) {
    return t->ne[0] <= ggml_blck_size(t->type) || t->nb[0] == ggml_type_size(t->type);
}

bool is_dense(const ggml_tensor * t) {
    if (!rows_dense(t)) return false;
    size_t next = ggml_row_size(t->type, t->ne[0]);
    for (int i = 1; i < GGML_MAX_DIMS; ++i) {
        if (t->ne[i] != 1 && t->nb[i] != next) return false;
        next *= size_t(t->ne[i]);
    }
    return true;
}

bool rows_dense_f32(const ggml_tensor * t) {
    return t->type == GGML_TYPE_F32 && rows_dense(t);
}

int64_t row_chunk(int64_t n_rows, int64_t ne0, int nth) {
    if (nth <= 1) return std::max<int64_t>(n_rows, 1);
    const int64_t balanced = (n_rows + 4 * int64_t(nth) - 1) / (4 * int64_t(nth));
    const int64_t min_rows = 4096 / std::max<int64_t>(ne0, 1);
    return std::max<int64_t>({balanced, min_rows, 1});
}

int64_t flat_chunk(int64_t n, int nth) {
    if (nth <= 1) return std::max<int64_t>(n, 1);
    const int64_t balanced = (n + 4 * int64_t(nth) - 1) / (4 * int64_t(nth));
    return std::max<int64_t>((balanced + 63) / 64 * 64, 4096);
}

namespace {

float elem_to_f32(ggml_type type, const char * p) {
    switch (type) {
        case GGML_TYPE_F32: {
            float v;
            std::memcpy(&v, p, 4);
            return v;
        }
        case GGML_TYPE_F16: {
            ggml_fp16_t h;
            std::memcpy(&h, p, 2);
            return ggml_fp16_to_fp32(h);
        }
        case GGML_TYPE_BF16: {
            ggml_bf16_t h;
            std::memcpy(&h, p, 2);
            return ggml_bf16_to_fp32(h);
        }
        default:
            GGML_ABORT("ops: element access to type %s", ggml_type_name(type));
    }
}

void elem_from_f32(ggml_type type, char * p, float v) {
    switch (type) {
        case GGML_TYPE_F32:
            std::memcpy(p, &v, 4);
            break;
        case GGML_TYPE_F16: {
            const ggml_fp16_t h = ggml_fp32_to_fp16(v);
            std::memcpy(p, &h, 2);
            break;
        }
        case GGML_TYPE_BF16: {
            const ggml_bf16_t h = ggml_fp32_to_bf16(v);
            std::memcpy(p, &h, 2);
            break;
        }
        default:
            GGML_ABORT("ops: element access to type %s", ggml_type_name(type));
    }
}

}  // namespace

void load_elems_f32(const ggml_tensor * t, const char * row, float * x, int64_t n, const ggml_cpu_convert_fns & cv) {
    if (n <= 0) return;
    if (n == 1 || t->nb[0] == ggml_type_size(t->type) || ggml_blck_size(t->type) > 1) {
        if (t->type == GGML_TYPE_F32) {
            if (reinterpret_cast<const float *>(row) != x) std::memmove(x, row, size_t(n) * 4);
            return;
        }
        ggml_to_float_fn to_f32 = cv.row_to_f32(t->type);
        if (!to_f32) to_f32 = ggml_get_type_traits(t->type).to_float;
        GGML_ASSERT(to_f32 != nullptr);
        to_f32(row, x, n);
        return;
    }
    const size_t nb0 = t->nb[0];
    for (int64_t i = 0; i < n; ++i) x[i] = elem_to_f32(t->type, row + size_t(i) * nb0);
}

void store_elems_f32(const ggml_tensor * t, char * row, const float * x, int64_t n, const ggml_cpu_convert_fns & cv) {
    if (n <= 0) return;
    if (n == 1 || t->nb[0] == ggml_type_size(t->type) || ggml_blck_size(t->type) > 1) {
        if (t->type == GGML_TYPE_F32) {
            if (reinterpret_cast<const float *>(row) != x) std::memmove(row, x, size_t(n) * 4);
            return;
        }
        ggml_from_float_fn from_f32 = cv.row_from_f32(t->type);
        if (!from_f32) from_f32 = ggml_get_type_traits(t->type).from_float;
        GGML_ASSERT(from_f32 != nullptr);
        from_f32(x, row, n);
        return;
    }
    const size_t nb0 = t->nb[0];
    for (int64_t i = 0; i < n; ++i) elem_from_f32(t->type, row + size_t(i) * nb0, x[i]);
}

const float * load_row_f32(const ggml_tensor * t, const char * row, float * buf, const ggml_cpu_convert_fns & cv) {
    if (rows_dense_f32(t)) return reinterpret_cast<const float *>(row);
    load_elems_f32(t, row, buf, t->ne[0], cv);
    return buf;
}

void store_row_f32(const ggml_tensor * t, char * row, const float * x, const ggml_cpu_convert_fns & cv) {
    store_elems_f32(t, row, x, t->ne[0], cv);
}

const float * load_broadcast_row_f32(const ggml_tensor * b, const row_index & ri, int64_t ne0, float * buf,
                                     const ggml_cpu_convert_fns & cv) {
    const char * row = row_ptr(b, ri.i1 % b->ne[1], ri.i2 % b->ne[2], ri.i3 % b->ne[3]);
    const int64_t nb0 = b->ne[0];
    if (nb0 == ne0) return load_row_f32(b, row, buf, cv);
    load_elems_f32(b, row, buf, nb0, cv);
    if (nb0 == 1) {
        std::fill(buf + 1, buf + ne0, buf[0]);
    } else {
        for (int64_t i = nb0; i < ne0; i += nb0) std::memcpy(buf + i, buf, size_t(nb0) * sizeof(float));
    }
    return buf;
}

scratch_pair thread_scratch_pair(const ggml_compute_params & p, int64_t n) {
    scratch_pair s;
    s.a = ggml_cpu_thread_scratch(p);
    s.b = s.a + (n + 15) / 16 * 16;  // 2n + 15 <= 2 * ne0 + 64 floats
    return s;
}

void copy_items(char * dst, size_t dst_stride, const char * src, size_t src_stride, int64_t n, size_t item_size) {
    if (n <= 0) return;
    if ((dst_stride == item_size && src_stride == item_size) || n == 1) {
        std::memmove(dst, src, size_t(n) * item_size);
        return;
    }
    switch (item_size) {
        case 2:
            for (int64_t i = 0; i < n; ++i) std::memcpy(dst + size_t(i) * dst_stride, src + size_t(i) * src_stride, 2);
            break;
        case 4:
            for (int64_t i = 0; i < n; ++i) std::memcpy(dst + size_t(i) * dst_stride, src + size_t(i) * src_stride, 4);
            break;
        default:
            for (int64_t i = 0; i < n; ++i) {
                std::memcpy(dst + size_t(i) * dst_stride, src + size_t(i) * src_stride, item_size);
            }
            break;
    }
}

}  // namespace ggml_cpu_ops
