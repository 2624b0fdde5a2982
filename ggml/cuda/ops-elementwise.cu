// Element-wise ops: ADD, MUL, DIV (b broadcast to a), SWIGLU (silu(a) * b), SCALE (a*s + bias),
// SILU, GELU (tanh form), TANH. F32/F16/BF16 in any combination, through float; any strides;
// in place when dst shares a's memory (each element is read before it is written, by the same
// thread). The math follows ggml/cpu/ops-vec-scalar.cpp in float:
//   silu(x) = x / (1 + exp(-x)); gelu(x) = x / (1 + exp(-2u)), u = sqrt(2/pi) (x + 0.044715 x^3)
// (the form without cancellation for negative x); expf, tanhf and the division are the
// accurate (non-fast-math) ones.
#include "ops-common.cuh"
#include "ops.cuh"

namespace {

struct op_add {
    __device__ float operator()(float a, float b) const { return a + b; }
};
struct op_mul {
    __device__ float operator()(float a, float b) const { return a * b; }
};
struct op_div {
    __device__ float operator()(float a, float b) const { return a / b; }
};
__device__ __forceinline__ float silu_f32(float x) { return x / (1.0f + expf(-x)); }
struct op_swiglu {
    __device__ float operator()(float a, float b) const { return silu_f32(a) * b; }
};
struct op_scale {
    float s, bias;
    __device__ float operator()(float a, float) const { return a * s + bias; }
};
struct op_silu {
    __device__ float operator()(float a, float) const { return silu_f32(a); }
};
struct op_gelu {
    __device__ float operator()(float x, float) const {
        const float u = 0.7978845608028654f * (x + 0.044715f * x * x * x);
        return x / (1.0f + expf(-2.0f * u));
    }
};
struct op_tanh {
    __device__ float operator()(float x, float) const { return tanhf(x); }
};

// Any types, any strides; b (when has_b) broadcast to a's shape (b->ne[i] divides a->ne[i]).
// blockDim (x along dim 0, y over rows).
template <typename Op>
__global__ void k_elementwise(cuda_tensor a, cuda_tensor b, cuda_tensor d, bool has_b, Op op) {
    const int64_t nrows = cuda_nrows(d), ne0 = d.ne[0];
    for (int64_t r = cuda_row_begin(); r < nrows; r += cuda_row_step()) {
        const cuda_row_index ri = cuda_unravel_row(d, r);
        const char * pa = cuda_row(a, ri);
        const char * pb = has_b ? cuda_row(b, ri.i1 % b.ne[1], ri.i2 % b.ne[2], ri.i3 % b.ne[3]) : nullptr;
        char * pd = cuda_row(d, ri);
        for (int64_t i = cuda_elem_begin(); i < ne0; i += cuda_elem_step()) {
            const float x = cuda_load_f32(a.type, pa + i * a.nb[0]);
            float y = 0.0f;
            if (has_b) {
                const int64_t ib = b.ne[0] == ne0 ? i : i % b.ne[0];
                y = cuda_load_f32(b.type, pb + ib * b.nb[0]);
            }
            cuda_store_f32(d.type, pd + i * d.nb[0], op(x, y));
        }
    }
}

// Dense F32 tensors of one shape: a flat loop.
template <typename Op>
__global__ void k_elementwise_flat(const float * a, const float * b, float * d, int64_t n, Op op) {
    for (int64_t i = cuda_elem_begin(); i < n; i += cuda_elem_step()) {
        d[i] = op(a[i], b ? b[i] : 0.0f);
    }
}

template <typename Op>
void launch_elementwise(ggml_cuda_context & ctx, ggml_tensor * dst, const ggml_tensor * b, Op op) {
    const ggml_tensor * a = dst->src[0];
    if (!cuda_check_aligned(ctx, a) || !cuda_check_aligned(ctx, dst) || (b && !cuda_check_aligned(ctx, b))) return;
    const int64_t n = ggml_nelements(dst);
    const bool flat = a->type == GGML_TYPE_F32 && dst->type == GGML_TYPE_F32 && ggml_is_contiguous(a) &&
                      ggml_is_contiguous(dst) &&
                      (!b || (b->type == GGML_TYPE_F32 && ggml_is_contiguous(b) && ggml_are_same_shape(a, b)));
    if (flat) {
        const int64_t blocks = ggml_cuda_ceil_div(n, 256);
        k_elementwise_flat<<<unsigned(blocks < 65535 ? blocks : 65535), 256, 0, ctx.stream>>>(
            static_cast<const float *>(a->data), b ? static_cast<const float *>(b->data) : nullptr,
            static_cast<float *>(dst->data), n, op);
    } else {
        int rows_per_block = 1;
        const int threads = cuda_elementwise_threads(dst->ne[0], rows_per_block);
        const dim3 grid = cuda_rows_grid(dst->ne[0], ggml_nrows(dst), threads, rows_per_block);
        const cuda_tensor tb = b ? cuda_tensor_of(b) : cuda_tensor_of(a);
        k_elementwise<<<grid, dim3(threads, rows_per_block), 0, ctx.stream>>>(cuda_tensor_of(a), tb,
                                                                             cuda_tensor_of(dst), b != nullptr, op);
    }
    GGML_CUDA_CHECK(cudaGetLastError());
}

bool float_tensors(const ggml_tensor * dst, int n_src) {
    if (!cuda_is_float_type(dst->type) || !cuda_shape_ok(dst)) return false;
    for (int i = 0; i < n_src; ++i) {
        const ggml_tensor * s = dst->src[i];
        if (!s || !cuda_is_float_type(s->type) || !cuda_shape_ok(s)) return false;
    }
    return ggml_are_same_shape(dst, dst->src[0]);
}

}  // namespace

bool ggml_cuda_binary_supported(const ggml_tensor * dst) {
    return float_tensors(dst, 2) && ggml_can_repeat(dst->src[1], dst->src[0]);
}

void ggml_cuda_op_binary(ggml_cuda_context & ctx, ggml_tensor * dst) {
    const ggml_tensor * b = dst->src[1];
    switch (dst->op) {
        case GGML_OP_ADD: launch_elementwise(ctx, dst, b, op_add{}); break;
        case GGML_OP_MUL: launch_elementwise(ctx, dst, b, op_mul{}); break;
        case GGML_OP_DIV: launch_elementwise(ctx, dst, b, op_div{}); break;
        default: ggml_cuda_fail(ctx, "binary: not an element-wise binary op"); break;
    }
}

bool ggml_cuda_unary_supported(const ggml_tensor * dst) {
    if (dst->op == GGML_OP_SWIGLU) return float_tensors(dst, 2) && ggml_are_same_shape(dst->src[0], dst->src[1]);
    return float_tensors(dst, 1);
}

void ggml_cuda_op_unary(ggml_cuda_context & ctx, ggml_tensor * dst) {
    switch (dst->op) {
        case GGML_OP_SCALE: {
            const op_scale op{ggml_get_scale(dst), ggml_get_scale_bias(dst)};
            launch_elementwise(ctx, dst, nullptr, op);
            break;
        }
        case GGML_OP_SILU: launch_elementwise(ctx, dst, nullptr, op_silu{}); break;
        case GGML_OP_GELU: launch_elementwise(ctx, dst, nullptr, op_gelu{}); break;
        case GGML_OP_TANH: launch_elementwise(ctx, dst, nullptr, op_tanh{}); break;
        case GGML_OP_SWIGLU: launch_elementwise(ctx, dst, dst->src[1], op_swiglu{}); break;
        default: ggml_cuda_fail(ctx, "unary: not an element-wise unary op"); break;
    }
}
