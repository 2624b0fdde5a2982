// GET_ROWS and SET_ROWS: gather and scatter rows through an index tensor.
//
// get_rows: dst[:, i, j, k] = a[:, b[i, j, k], j, k] as F32. F32/F16/BF16 rows are converted
// in one kernel (any strides); rows of a weight-quantized type are first gathered as bytes into
// scratch memory (slot 0), then dequantized by ggml_cuda_dequantize_to_f32 into dst (dense). An index out
// of range gives a row of zeros (all-zero bytes dequantize to zeros in every format) and sets
// the error flag.
// set_rows: a[:, c[i, j % c_ne1, k % c_ne2], j, k] = b[:, i, j, k] into F32, F16, BF16 (any
// strides) or Q8_0 rows (quantized as ggml_quantize_row_q8_0_ref does, bit for bit); an index
// out of range is skipped and sets the error flag. I32 or I64 indices, any strides.
#include "ops-common.cuh"
#include "ops.cuh"

namespace {

constexpr int k_qk8_0 = 32;
constexpr size_t k_q8_0_block_bytes = 2 + k_qk8_0;

__device__ __forceinline__ void flag_error(int * flag) { *reinterpret_cast<volatile int *>(flag) = 1; }

__device__ __forceinline__ int64_t load_index(const cuda_tensor & t, int64_t i0, int64_t i1, int64_t i2) {
    const char * p = t.data + i0 * t.nb[0] + i1 * t.nb[1] + i2 * t.nb[2];
    if (t.type == GGML_TYPE_I64) return *reinterpret_cast<const int64_t *>(p);
    return *reinterpret_cast<const int32_t *>(p);
}

__global__ void k_get_rows_float(cuda_tensor a, cuda_tensor idx, cuda_tensor d, int * error_flag) {
    const int64_t nrows = cuda_nrows(d), ne0 = d.ne[0];
    for (int64_t r = cuda_row_begin(); r < nrows; r += cuda_row_step()) {
        const cuda_row_index ri = cuda_unravel_row(d, r);
        const int64_t row = load_index(idx, ri.i1, ri.i2, ri.i3);
        const bool bad = row < 0 || row >= a.ne[1];
        if (bad && blockIdx.x == 0 && threadIdx.x == 0) flag_error(error_flag);
        const char * pa = bad ? nullptr : cuda_row(a, row, ri.i2, ri.i3);
        char * pd = cuda_row(d, ri);
        for (int64_t i = cuda_elem_begin(); i < ne0; i += cuda_elem_step()) {
            cuda_store_f32(d.type, pd + i * d.nb[0], bad ? 0.0f : cuda_load_f32(a.type, pa + i * a.nb[0]));
        }
    }
}

// Row r of dst (in row-major order of dst's rows) as raw bytes of a's type into out[r], in
// words of W bytes (W divides the row size, a's data and strides).
template <typename W>
__global__ void k_gather_rows(cuda_tensor a, cuda_tensor idx, int64_t nrows, int64_t n_words, char * out,
                              int * error_flag, int64_t ne1, int64_t ne2) {
    for (int64_t r = cuda_row_begin(); r < nrows; r += cuda_row_step()) {
        const int64_t i1 = r % ne1, i2 = (r / ne1) % ne2, i3 = r / (ne1 * ne2);
        const int64_t row = load_index(idx, i1, i2, i3);
        const bool bad = row < 0 || row >= a.ne[1];
        if (bad && blockIdx.x == 0 && threadIdx.x == 0) flag_error(error_flag);
        const W * src = bad ? nullptr : reinterpret_cast<const W *>(cuda_row(a, row, i2, i3));
        W * dst = reinterpret_cast<W *>(out + r * n_words * int64_t(sizeof(W)));
        for (int64_t i = cuda_elem_begin(); i < n_words; i += cuda_elem_step()) {
            dst[i] = bad ? W(0) : src[i];
        }
    }
}

__global__ void k_set_rows_float(cuda_tensor b, cuda_tensor idx, cuda_tensor d, int * error_flag) {
    const int64_t nrows = cuda_nrows(b), ne0 = b.ne[0];
    for (int64_t r = cuda_row_begin(); r < nrows; r += cuda_row_step()) {
        const cuda_row_index ri = cuda_unravel_row(b, r);
        const int64_t row = load_index(idx, ri.i1, ri.i2 % idx.ne[1], ri.i3 % idx.ne[2]);
        if (row < 0 || row >= d.ne[1]) {
            if (blockIdx.x == 0 && threadIdx.x == 0) flag_error(error_flag);
            continue;
        }
        const char * pb = cuda_row(b, ri);
        char * pd = cuda_row(d, row, ri.i2, ri.i3);
        for (int64_t i = cuda_elem_begin(); i < ne0; i += cuda_elem_step()) {
            cuda_store_f32(d.type, pd + i * d.nb[0], cuda_load_f32(GGML_TYPE_F32, pb + i * b.nb[0]));
        }
    }
}

// Clamps v into [lo, hi]; NaN gives lo (as the CPU's reference quantizer).
__device__ __forceinline__ float clamp_level(float v, float lo, float hi) {
    if (!(v >= lo)) return lo;
    return v > hi ? hi : v;
}

// One warp per Q8_0 block: lane j quantizes element j. blockDim (32, warps); the warps of the
// grid walk (row of b, block of the row) pairs.
__global__ void k_set_rows_q8_0(cuda_tensor b, cuda_tensor idx, cuda_tensor d, int * error_flag) {
    const int64_t nrows = cuda_nrows(b), nblk = b.ne[0] / k_qk8_0;
    const int64_t n_items = nrows * nblk;
    const int lane = threadIdx.x;
    const int64_t step = int64_t(gridDim.x) * blockDim.y;
    for (int64_t it = int64_t(blockIdx.x) * blockDim.y + threadIdx.y; it < n_items; it += step) {
        const int64_t r = it / nblk, blk = it % nblk;
        const cuda_row_index ri = cuda_unravel_row(b, r);
        const int64_t row = load_index(idx, ri.i1, ri.i2 % idx.ne[1], ri.i3 % idx.ne[2]);
        if (row < 0 || row >= d.ne[1]) {
            if (lane == 0) flag_error(error_flag);
            continue;
        }
        const float x = *reinterpret_cast<const float *>(cuda_row(b, ri) + (blk * k_qk8_0 + lane) * b.nb[0]);
        const float amax = cuda_warp_max(fabsf(x));  // NaN ignored (fmaxf)
        float dq = amax / 127.0f;
        dq = isnan(dq) ? 0.0f : fminf(fmaxf(dq, -65504.0f), 65504.0f);
        float id = 0.0f;
        if (dq != 0.0f) {
            id = 1.0f / dq;
            if (isinf(id)) id = 0.0f;
        }
        char * blkp = cuda_row(d, row, ri.i2, ri.i3) + blk * k_q8_0_block_bytes;
        if (lane == 0) *reinterpret_cast<uint16_t *>(blkp) = cuda_f32_to_f16(dq);
        const float q = roundf(clamp_level(__fmul_rn(x, id), -127.0f, 127.0f));
        reinterpret_cast<int8_t *>(blkp + 2)[lane] = int8_t(q);
    }
}

bool is_weight_quant_type(ggml_type t) {
    switch (t) {
        case GGML_TYPE_Q4_0: case GGML_TYPE_Q4_1: case GGML_TYPE_Q5_0: case GGML_TYPE_Q5_1: case GGML_TYPE_Q8_0:
        case GGML_TYPE_Q2_K: case GGML_TYPE_Q3_K: case GGML_TYPE_Q4_K: case GGML_TYPE_Q5_K: case GGML_TYPE_Q6_K:
        case GGML_TYPE_IQ4_NL: case GGML_TYPE_IQ4_XS: case GGML_TYPE_MXFP4: return true;
        default: return false;
    }
}

bool is_index_type(ggml_type t) { return t == GGML_TYPE_I32 || t == GGML_TYPE_I64; }

void get_rows_quantized(ggml_cuda_context & ctx, const ggml_tensor * a, const ggml_tensor * idx, ggml_tensor * dst) {
    const int64_t nrows = ggml_nrows(dst);
    const size_t row_bytes = ggml_row_size(a->type, a->ne[0]);
    char * tmp = static_cast<char *>(ggml_cuda_scratch(ctx, size_t(nrows) * row_bytes, 0));
    if (!tmp) return;
    // The widest word that divides the row size, a's address and its strides.
    uintptr_t bits = reinterpret_cast<uintptr_t>(a->data) | row_bytes | a->nb[1] | a->nb[2] | a->nb[3];
    const size_t word = bits % 4 == 0 ? 4 : (bits % 2 == 0 ? 2 : 1);
    const int64_t n_words = int64_t(row_bytes / word);
    int rows_per_block = 1;
    const int threads = cuda_elementwise_threads(n_words, rows_per_block);
    const dim3 grid = cuda_rows_grid(n_words, nrows, threads, rows_per_block);
    const dim3 block(threads, rows_per_block);
    const cuda_tensor ta = cuda_tensor_of(a), ti = cuda_tensor_of(idx);
    const int64_t ne1 = dst->ne[1], ne2 = dst->ne[2];
    int * flag = ctx.error_flag;
    if (word == 4) {
        k_gather_rows<uint32_t><<<grid, block, 0, ctx.stream>>>(ta, ti, nrows, n_words, tmp, flag, ne1, ne2);
    } else if (word == 2) {
        k_gather_rows<uint16_t><<<grid, block, 0, ctx.stream>>>(ta, ti, nrows, n_words, tmp, flag, ne1, ne2);
    } else {
        k_gather_rows<uint8_t><<<grid, block, 0, ctx.stream>>>(ta, ti, nrows, n_words, tmp, flag, ne1, ne2);
    }
    if (!GGML_CUDA_CHECK(cudaGetLastError())) return;
    if (!ggml_cuda_dequantize_to_f32(a->type, tmp, static_cast<float *>(dst->data), nrows, a->ne[0], row_bytes,
                                     ctx.stream)) {
        ggml_cuda_fail(ctx, "get_rows: dequantization failed");
    }
}

}  // namespace

bool ggml_cuda_get_rows_supported(const ggml_tensor * dst) {
    const ggml_tensor * a = dst->src[0];
    const ggml_tensor * idx = dst->src[1];
    if (!a || !idx || dst->type != GGML_TYPE_F32 || idx->type != GGML_TYPE_I32) return false;
    if (!cuda_shape_ok(a) || !cuda_shape_ok(dst) || dst->ne[0] != a->ne[0]) return false;
    if (cuda_is_float_type(a->type)) return true;
    return is_weight_quant_type(a->type) && a->nb[0] == ggml_type_size(a->type) && ggml_is_contiguous(dst);
}

void ggml_cuda_op_get_rows(ggml_cuda_context & ctx, ggml_tensor * dst) {
    const ggml_tensor * a = dst->src[0];
    const ggml_tensor * idx = dst->src[1];
    if (ggml_nelements(dst) == 0) return;
    if (!cuda_check_aligned(ctx, a) || !cuda_check_aligned(ctx, idx) || !cuda_check_aligned(ctx, dst)) return;
    if (!cuda_is_float_type(a->type)) {
        get_rows_quantized(ctx, a, idx, dst);
        return;
    }
    int rows_per_block = 1;
    const int threads = cuda_elementwise_threads(dst->ne[0], rows_per_block);
    const dim3 grid = cuda_rows_grid(dst->ne[0], ggml_nrows(dst), threads, rows_per_block);
    k_get_rows_float<<<grid, dim3(threads, rows_per_block), 0, ctx.stream>>>(cuda_tensor_of(a), cuda_tensor_of(idx),
                                                                            cuda_tensor_of(dst), ctx.error_flag);
    GGML_CUDA_CHECK(cudaGetLastError());
}

bool ggml_cuda_set_rows_supported(const ggml_tensor * dst) {
    const ggml_tensor * b = dst->src[0];
    const ggml_tensor * idx = dst->src[1];
    if (!b || !idx || b->type != GGML_TYPE_F32 || !is_index_type(idx->type)) return false;
    if (!cuda_shape_ok(b) || !cuda_shape_ok(dst) || b->ne[0] != dst->ne[0]) return false;
    if (idx->ne[1] <= 0 || idx->ne[2] <= 0) return false;
    if (cuda_is_float_type(dst->type)) return true;
    return dst->type == GGML_TYPE_Q8_0 && dst->ne[0] % k_qk8_0 == 0 && dst->nb[0] == k_q8_0_block_bytes;
}

void ggml_cuda_op_set_rows(ggml_cuda_context & ctx, ggml_tensor * dst) {
    const ggml_tensor * b = dst->src[0];
    const ggml_tensor * idx = dst->src[1];
    if (ggml_nelements(b) == 0) return;
    if (!cuda_check_aligned(ctx, b) || !cuda_check_aligned(ctx, idx) || !cuda_check_aligned(ctx, dst)) return;
    if (dst->type == GGML_TYPE_Q8_0) {
        constexpr int warps = 8;
        const int64_t items = ggml_nrows(b) * (b->ne[0] / k_qk8_0);
        const int64_t blocks = ggml_cuda_ceil_div(items, warps);
        k_set_rows_q8_0<<<unsigned(blocks < 65535 ? blocks : 65535), dim3(32, warps), 0, ctx.stream>>>(
            cuda_tensor_of(b), cuda_tensor_of(idx), cuda_tensor_of(dst), ctx.error_flag);
    } else {
        int rows_per_block = 1;
        const int threads = cuda_elementwise_threads(b->ne[0], rows_per_block);
        const dim3 grid = cuda_rows_grid(b->ne[0], ggml_nrows(b), threads, rows_per_block);
        k_set_rows_float<<<grid, dim3(threads, rows_per_block), 0, ctx.stream>>>(cuda_tensor_of(b), cuda_tensor_of(idx),
                                                                                cuda_tensor_of(dst), ctx.error_flag);
    }
    GGML_CUDA_CHECK(cudaGetLastError());
}
