// The dispatch of a node to its launcher, and what the device supports (ops.cuh).
#include "ops.cuh"

bool ggml_cuda_supports_op(const ggml_tensor * dst) {
    switch (dst->op) {
        case GGML_OP_NONE:
        case GGML_OP_VIEW:
        case GGML_OP_RESHAPE:
        case GGML_OP_PERMUTE:
        case GGML_OP_TRANSPOSE: return true;
        case GGML_OP_CONT:
        case GGML_OP_CPY: return ggml_cuda_cpy_supported(dst);
        case GGML_OP_GET_ROWS: return ggml_cuda_get_rows_supported(dst);
        case GGML_OP_SET_ROWS: return ggml_cuda_set_rows_supported(dst);
        case GGML_OP_ADD:
        case GGML_OP_MUL:
        case GGML_OP_DIV: return ggml_cuda_binary_supported(dst);
        case GGML_OP_SCALE:
        case GGML_OP_SILU:
        case GGML_OP_GELU:
        case GGML_OP_TANH:
        case GGML_OP_SWIGLU: return ggml_cuda_unary_supported(dst);
        case GGML_OP_RMS_NORM:
        case GGML_OP_NORM: return ggml_cuda_norm_supported(dst);
        case GGML_OP_ROPE: return ggml_cuda_rope_supported(dst);
        case GGML_OP_SOFT_MAX: return ggml_cuda_soft_max_supported(dst);
        case GGML_OP_CONCAT: return ggml_cuda_concat_supported(dst);
        case GGML_OP_ARGMAX: return ggml_cuda_argmax_supported(dst);
        case GGML_OP_TOP_K: return ggml_cuda_top_k_supported(dst);
        case GGML_OP_SUM_ROWS: return ggml_cuda_sum_rows_supported(dst);
        case GGML_OP_MUL_MAT: return ggml_cuda_mul_mat_supported(dst);
        case GGML_OP_MUL_MAT_ID: return ggml_cuda_mul_mat_id_supported(dst);
        case GGML_OP_FLASH_ATTN_EXT: return ggml_cuda_flash_attn_supported(dst);
        case GGML_OP_COUNT: break;
    }
    return false;
}

bool ggml_cuda_op_checks_data(const ggml_tensor * dst) {
    switch (dst->op) {
        case GGML_OP_GET_ROWS:
        case GGML_OP_SET_ROWS:
        case GGML_OP_MUL_MAT_ID: return true;
        case GGML_OP_ROPE: return dst->src[2] != nullptr;
        default: return false;
    }
}

bool ggml_cuda_compute_forward(ggml_cuda_context & ctx, ggml_tensor * dst) {
    if (!ggml_cuda_supports_op(dst)) return false;
    switch (dst->op) {
        case GGML_OP_CONT:
        case GGML_OP_CPY: ggml_cuda_op_cpy(ctx, dst); break;
        case GGML_OP_GET_ROWS: ggml_cuda_op_get_rows(ctx, dst); break;
        case GGML_OP_SET_ROWS: ggml_cuda_op_set_rows(ctx, dst); break;
        case GGML_OP_ADD:
        case GGML_OP_MUL:
        case GGML_OP_DIV: ggml_cuda_op_binary(ctx, dst); break;
        case GGML_OP_SCALE:
        case GGML_OP_SILU:
        case GGML_OP_GELU:
        case GGML_OP_TANH:
        case GGML_OP_SWIGLU: ggml_cuda_op_unary(ctx, dst); break;
        case GGML_OP_RMS_NORM:
        case GGML_OP_NORM: ggml_cuda_op_norm(ctx, dst); break;
        case GGML_OP_ROPE: ggml_cuda_op_rope(ctx, dst); break;
        case GGML_OP_SOFT_MAX: ggml_cuda_op_soft_max(ctx, dst); break;
        case GGML_OP_CONCAT: ggml_cuda_op_concat(ctx, dst); break;
        case GGML_OP_ARGMAX: ggml_cuda_op_argmax(ctx, dst); break;
        case GGML_OP_TOP_K: ggml_cuda_op_top_k(ctx, dst); break;
        case GGML_OP_SUM_ROWS: ggml_cuda_op_sum_rows(ctx, dst); break;
        case GGML_OP_MUL_MAT: ggml_cuda_op_mul_mat(ctx, dst); break;
        case GGML_OP_MUL_MAT_ID: ggml_cuda_op_mul_mat_id(ctx, dst); break;
        case GGML_OP_FLASH_ATTN_EXT: ggml_cuda_op_flash_attn_ext(ctx, dst); break;
        default: break;  // metadata ops compute nothing
    }
    return !ctx.failed;
}
