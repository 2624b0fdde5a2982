// CPU op dispatch: which kernel runs a node, how many threads it gets, how much work memory
// it needs, and which type combinations the kernels handle.
#include "ops.h"

namespace {

bool is_float(ggml_type t) { return t == GGML_TYPE_F32 || t == GGML_TYPE_F16 || t == GGML_TYPE_BF16; }
bool is_quantized(ggml_type t) { return ggml_type_is_supported(t) && ggml_get_type_traits(t).is_quantized; }
bool rows_readable(ggml_type t) { return is_float(t) || is_quantized(t); }

// Nodes smaller than this run on one thread: waking the others costs more than it saves.
constexpr int64_t k_min_elements_per_thread = 4096;

bool float_sources(const ggml_tensor * node, int n) {
    for (int i = 0; i < n; ++i) {
        if (!node->src[i] || !is_float(node->src[i]->type)) return false;
    }
    return true;
}

// ROPE's optional src[2]: F32, contiguous, at least n_dims/2 factors (the kernel reads that many).
bool rope_freq_factors_supported(const ggml_tensor * node) {
    const ggml_tensor * ff = node->src[2];
    if (!ff) return true;
    const int32_t n_dims = ggml_get_rope_params(node).n_dims;
    return ff->type == GGML_TYPE_F32 && ggml_is_contiguous(ff) && ggml_nelements(ff) >= n_dims / 2;
}

}  // namespace

int64_t ggml_cpu_scratch_floats(const ggml_tensor * node) {
    int64_t ne0 = node->ne[0];
    for (int i = 0; i < 2; ++i) {
        if (node->src[i] && node->src[i]->ne[0] > ne0) ne0 = node->src[i]->ne[0];
    }
    return 2 * ne0 + 64;
}

float * ggml_cpu_thread_scratch(const ggml_compute_params & p) {
    // Each thread owns wsize / nth bytes (at least ggml_cpu_scratch_floats of the node, see
    // ggml_cpu_op_work_size), rounded down to a cache line.
    const size_t per_thread = p.wsize / size_t(p.nth) / 64 * 64;
    return reinterpret_cast<float *>(static_cast<uint8_t *>(p.wdata) + per_thread * size_t(p.ith));
}

size_t ggml_cpu_op_work_size(const ggml_tensor * node, int n_threads) {
    if (node->op == GGML_OP_MUL_MAT) return ggml_cpu_mul_mat_work_size(node, n_threads);
    if (node->op == GGML_OP_FLASH_ATTN_EXT) return ggml_cpu_flash_attn_work_size(node, n_threads);
    if (node->op == GGML_OP_MUL_MAT_ID) return ggml_cpu_mul_mat_id_work_size(node, n_threads);
    const size_t per_thread = (size_t(ggml_cpu_scratch_floats(node)) * sizeof(float) + 127) / 64 * 64;
    return per_thread * size_t(n_threads);
}

int ggml_cpu_op_n_tasks(const ggml_tensor * node, int n_threads) {
    if (ggml_op_is_metadata(node->op)) return 0;
    int64_t work = ggml_nelements(node);
    if (node->op == GGML_OP_MUL_MAT || node->op == GGML_OP_MUL_MAT_ID) work *= node->src[0]->ne[0];
    if (node->op == GGML_OP_ARGMAX || node->op == GGML_OP_SET_ROWS || node->op == GGML_OP_TOP_K ||
        node->op == GGML_OP_SUM_ROWS) {
        work = ggml_nelements(node->src[0]);
    }
    if (node->op == GGML_OP_FLASH_ATTN_EXT) {  // (query, head) rows x cells x (D + Dv)
        work = ggml_nrows(node) * node->src[1]->ne[1] * (node->src[0]->ne[0] + node->ne[0]);
    }
    return work < k_min_elements_per_thread ? 1 : n_threads;
}

bool ggml_cpu_supports_op(const ggml_tensor * node) {
    const ggml_tensor * a = node->src[0];
    switch (node->op) {
        case GGML_OP_NONE:
        case GGML_OP_VIEW:
        case GGML_OP_RESHAPE:
        case GGML_OP_PERMUTE:
        case GGML_OP_TRANSPOSE: return true;
        case GGML_OP_CONT: return rows_readable(node->type) && a->type == node->type;
        case GGML_OP_CPY: return float_sources(node, 2);
        case GGML_OP_GET_ROWS: return rows_readable(a->type) && node->src[1]->type == GGML_TYPE_I32;
        case GGML_OP_SET_ROWS:
            return rows_readable(node->type) && a->type == GGML_TYPE_F32 &&
                   (node->src[1]->type == GGML_TYPE_I32 || node->src[1]->type == GGML_TYPE_I64);
        case GGML_OP_ADD:
        case GGML_OP_MUL:
        case GGML_OP_DIV:
        case GGML_OP_SWIGLU: return float_sources(node, 2) && is_float(node->type);
        case GGML_OP_SCALE:
        case GGML_OP_SILU:
        case GGML_OP_GELU:
        case GGML_OP_TANH: return float_sources(node, 1) && is_float(node->type);
        case GGML_OP_RMS_NORM:
        case GGML_OP_NORM: return a->type == GGML_TYPE_F32 && node->type == GGML_TYPE_F32;
        case GGML_OP_ROPE:
            return a->type == GGML_TYPE_F32 && node->type == GGML_TYPE_F32 && rope_freq_factors_supported(node);
        case GGML_OP_SOFT_MAX:
            return a->type == GGML_TYPE_F32 &&
                   (!node->src[1] || node->src[1]->type == GGML_TYPE_F32 || node->src[1]->type == GGML_TYPE_F16);
        case GGML_OP_CONCAT: return float_sources(node, 2) && a->type == node->src[1]->type;
        case GGML_OP_ARGMAX: return a->type == GGML_TYPE_F32;
        case GGML_OP_SUM_ROWS: return a->type == GGML_TYPE_F32 && node->type == GGML_TYPE_F32;
        case GGML_OP_TOP_K:
            return a->type == GGML_TYPE_F32 && node->type == GGML_TYPE_I32 && a->ne[0] <= INT32_MAX &&
                   node->ne[0] <= a->ne[0];
        case GGML_OP_MUL_MAT_ID: return ggml_cpu_mul_mat_id_supported(node);
        case GGML_OP_MUL_MAT: return ggml_cpu_mul_mat_supported(node);
        case GGML_OP_FLASH_ATTN_EXT: return ggml_cpu_flash_attn_supported(node);
        case GGML_OP_COUNT: break;
    }
    return false;
}

void ggml_cpu_compute_forward(const ggml_compute_params & p, ggml_tensor * node) {
    switch (node->op) {
        case GGML_OP_CONT: ggml_cpu_op_cont(p, node); break;
        case GGML_OP_CPY: ggml_cpu_op_cpy(p, node); break;
        case GGML_OP_GET_ROWS: ggml_cpu_op_get_rows(p, node); break;
        case GGML_OP_SET_ROWS: ggml_cpu_op_set_rows(p, node); break;
        case GGML_OP_ADD: ggml_cpu_op_add(p, node); break;
        case GGML_OP_MUL: ggml_cpu_op_mul(p, node); break;
        case GGML_OP_DIV: ggml_cpu_op_div(p, node); break;
        case GGML_OP_SCALE: ggml_cpu_op_scale(p, node); break;
        case GGML_OP_RMS_NORM: ggml_cpu_op_rms_norm(p, node); break;
        case GGML_OP_NORM: ggml_cpu_op_norm(p, node); break;
        case GGML_OP_MUL_MAT: ggml_cpu_op_mul_mat(p, node); break;
        case GGML_OP_ROPE: ggml_cpu_op_rope(p, node); break;
        case GGML_OP_SOFT_MAX: ggml_cpu_op_soft_max(p, node); break;
        case GGML_OP_SILU: ggml_cpu_op_silu(p, node); break;
        case GGML_OP_GELU: ggml_cpu_op_gelu(p, node); break;
        case GGML_OP_TANH: ggml_cpu_op_tanh(p, node); break;
        case GGML_OP_SWIGLU: ggml_cpu_op_swiglu(p, node); break;
        case GGML_OP_CONCAT: ggml_cpu_op_concat(p, node); break;
        case GGML_OP_ARGMAX: ggml_cpu_op_argmax(p, node); break;
        case GGML_OP_SUM_ROWS: ggml_cpu_op_sum_rows(p, node); break;
        case GGML_OP_TOP_K: ggml_cpu_op_top_k(p, node); break;
        case GGML_OP_MUL_MAT_ID: ggml_cpu_op_mul_mat_id(p, node); break;
        case GGML_OP_FLASH_ATTN_EXT: ggml_cpu_op_flash_attn_ext(p, node); break;
        default: break;  // metadata ops compute nothing
    }
}
