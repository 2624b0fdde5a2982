// Data movement: CONT, CPY and CONCAT.
//
// CONT and CPY copy the elements of src0 in row-major order into dst in row-major order (shapes
// may differ, element counts match). Same-type copies move the elements' bits (F32/F16/BF16 any
// strides; block-quantized types only between dense tensors, as whole bytes); CPY converts
// between F32, F16 and BF16 with the CPU's conversions (ops-common.cuh). Dense same-type
// tensors are one cudaMemcpyAsync.
// CONCAT puts a and b side by side along one dimension (same float type, any strides).
#include "ops-common.cuh"
#include "ops.cuh"

namespace {

// Moves one element of src at ps to pd: its bits when the types are equal, else converted.
__device__ __forceinline__ void copy_elem(int src_type, const char * ps, int dst_type, char * pd) {
    if (src_type == dst_type) {
        if (src_type == GGML_TYPE_F32) {
            *reinterpret_cast<uint32_t *>(pd) = *reinterpret_cast<const uint32_t *>(ps);
        } else {
            *reinterpret_cast<uint16_t *>(pd) = *reinterpret_cast<const uint16_t *>(ps);
        }
        return;
    }
    cuda_store_f32(dst_type, pd, cuda_load_f32(src_type, ps));
}

// Same shape: element (i0, i1, i2, i3) of s goes to the same position of d.
__global__ void k_copy_same_shape(cuda_tensor s, cuda_tensor d) {
    const int64_t nrows = cuda_nrows(d), ne0 = d.ne[0];
    for (int64_t r = cuda_row_begin(); r < nrows; r += cuda_row_step()) {
        const cuda_row_index ri = cuda_unravel_row(d, r);
        const char * ps = cuda_row(s, ri);
        char * pd = cuda_row(d, ri);
        for (int64_t i = cuda_elem_begin(); i < ne0; i += cuda_elem_step()) {
            copy_elem(s.type, ps + i * s.nb[0], d.type, pd + i * d.nb[0]);
        }
    }
}

__device__ __forceinline__ const char * elem_at(const cuda_tensor & t, int64_t flat) {
    const int64_t i0 = flat % t.ne[0];
    flat /= t.ne[0];
    const int64_t i1 = flat % t.ne[1];
    flat /= t.ne[1];
    const int64_t i2 = flat % t.ne[2];
    const int64_t i3 = flat / t.ne[2];
    return t.data + i0 * t.nb[0] + i1 * t.nb[1] + i2 * t.nb[2] + i3 * t.nb[3];
}

// Different shapes: the n-th element in row-major order of s goes to the n-th of d.
__global__ void k_copy_reshape(cuda_tensor s, cuda_tensor d, int64_t n) {
    for (int64_t i = cuda_elem_begin(); i < n; i += cuda_elem_step()) {
        copy_elem(s.type, elem_at(s, i), d.type, const_cast<char *>(elem_at(d, i)));
    }
}

// dst row (i1, i2, i3): from a where the concatenated coordinate is below a's extent, else b.
__global__ void k_concat(cuda_tensor a, cuda_tensor b, cuda_tensor d, int dim) {
    const int64_t nrows = cuda_nrows(d), ne0 = d.ne[0];
    for (int64_t r = cuda_row_begin(); r < nrows; r += cuda_row_step()) {
        const cuda_row_index ri = cuda_unravel_row(d, r);
        int64_t at[4] = {0, ri.i1, ri.i2, ri.i3};
        const cuda_tensor * src = &a;
        if (dim > 0 && at[dim] >= a.ne[dim]) {
            at[dim] -= a.ne[dim];
            src = &b;
        }
        char * pd = cuda_row(d, ri);
        for (int64_t i = cuda_elem_begin(); i < ne0; i += cuda_elem_step()) {
            const cuda_tensor * s = src;
            int64_t i0 = i;
            if (dim == 0 && i0 >= a.ne[0]) {
                i0 -= a.ne[0];
                s = &b;
            }
            const char * ps = cuda_row(*s, at[1], at[2], at[3]) + i0 * s->nb[0];
            copy_elem(s->type, ps, d.type, pd + i * d.nb[0]);
        }
    }
}

bool is_block_type(ggml_type t) {
    return ggml_type_is_supported(t) && ggml_get_type_traits(t).is_quantized;
}

}  // namespace

bool ggml_cuda_cpy_supported(const ggml_tensor * dst) {
    const ggml_tensor * a = dst->src[0];
    if (!a || ggml_nelements(a) != ggml_nelements(dst) || !cuda_shape_ok(a) || !cuda_shape_ok(dst)) return false;
    if (dst->op == GGML_OP_CONT && a->type == dst->type && is_block_type(a->type)) {
        return ggml_is_contiguous(a) && ggml_is_contiguous(dst);
    }
    if (dst->op == GGML_OP_CONT && a->type != dst->type) return false;
    return cuda_is_float_type(a->type) && cuda_is_float_type(dst->type);
}

void ggml_cuda_op_cpy(ggml_cuda_context & ctx, ggml_tensor * dst) {
    const ggml_tensor * a = dst->src[0];
    const int64_t n = ggml_nelements(a);
    if (n == 0) return;
    if (a->type == dst->type && ggml_is_contiguous(a) && ggml_is_contiguous(dst)) {
        if (a->data != dst->data) {
            GGML_CUDA_CHECK(cudaMemcpyAsync(dst->data, a->data, ggml_nbytes(a), cudaMemcpyDeviceToDevice, ctx.stream));
        }
        return;
    }
    if (!cuda_check_aligned(ctx, a) || !cuda_check_aligned(ctx, dst)) return;
    if (ggml_are_same_shape(a, dst)) {
        int rows_per_block = 1;
        const int threads = cuda_elementwise_threads(dst->ne[0], rows_per_block);
        const dim3 grid = cuda_rows_grid(dst->ne[0], ggml_nrows(dst), threads, rows_per_block);
        k_copy_same_shape<<<grid, dim3(threads, rows_per_block), 0, ctx.stream>>>(cuda_tensor_of(a),
                                                                                 cuda_tensor_of(dst));
    } else {
        const int64_t blocks = ggml_cuda_ceil_div(n, 256);
        k_copy_reshape<<<unsigned(blocks < 65535 ? blocks : 65535), 256, 0, ctx.stream>>>(cuda_tensor_of(a),
                                                                                         cuda_tensor_of(dst), n);
    }
    GGML_CUDA_CHECK(cudaGetLastError());
}

bool ggml_cuda_concat_supported(const ggml_tensor * dst) {
    const ggml_tensor * a = dst->src[0];
    const ggml_tensor * b = dst->src[1];
    const int dim = ggml_get_concat_dim(dst);
    return a && b && dim >= 0 && dim < GGML_MAX_DIMS && cuda_is_float_type(dst->type) && a->type == dst->type &&
           b->type == dst->type && cuda_shape_ok(dst);
}

void ggml_cuda_op_concat(ggml_cuda_context & ctx, ggml_tensor * dst) {
    const ggml_tensor * a = dst->src[0];
    const ggml_tensor * b = dst->src[1];
    const int dim = ggml_get_concat_dim(dst);
    if (!cuda_check_aligned(ctx, a) || !cuda_check_aligned(ctx, b) || !cuda_check_aligned(ctx, dst)) return;
    int rows_per_block = 1;
    const int threads = cuda_elementwise_threads(dst->ne[0], rows_per_block);
    const dim3 grid = cuda_rows_grid(dst->ne[0], ggml_nrows(dst), threads, rows_per_block);
    k_concat<<<grid, dim3(threads, rows_per_block), 0, ctx.stream>>>(cuda_tensor_of(a), cuda_tensor_of(b),
                                                                    cuda_tensor_of(dst), dim);
    GGML_CUDA_CHECK(cudaGetLastError());
}
