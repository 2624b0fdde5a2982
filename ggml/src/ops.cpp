// Op builders: check shapes and types, then record the op. Nothing is computed here.
#include "ggml/ggml.h"
#include "ggml-impl.h"

namespace {

bool is_float_storage(ggml_type t) { return t == GGML_TYPE_F32 || t == GGML_TYPE_F16 || t == GGML_TYPE_BF16; }
// Rows of such a type can be read as floats (float types and every supported quantized type).
bool has_to_float(ggml_type t) { return ggml_type_is_supported(t) && ggml_get_type_traits(t).to_float != nullptr; }
bool has_from_float(ggml_type t) { return ggml_type_is_supported(t) && ggml_get_type_traits(t).from_float != nullptr; }

ggml_tensor * new_like(ggml_context * ctx, ggml_type type, const int64_t * ne) {
    return ggml_new_tensor(ctx, type, GGML_MAX_DIMS, ne);
}

ggml_tensor * unary(ggml_context * ctx, ggml_op op, ggml_tensor * a) {
    GGML_ASSERT(is_float_storage(a->type));
    ggml_tensor * r = new_like(ctx, a->type, a->ne);
    r->op = op;
    r->src[0] = a;
    return r;
}

ggml_tensor * binary(ggml_context * ctx, ggml_op op, ggml_tensor * a, ggml_tensor * b) {
    GGML_ASSERT(is_float_storage(a->type) && is_float_storage(b->type));
    GGML_ASSERT(ggml_can_repeat(b, a));
    ggml_tensor * r = new_like(ctx, a->type, a->ne);
    r->op = op;
    r->src[0] = a;
    r->src[1] = b;
    return r;
}

}  // namespace

const char * ggml_op_name(ggml_op op) {
    static const char * const names[GGML_OP_COUNT] = {
        "NONE", "VIEW", "RESHAPE", "PERMUTE", "TRANSPOSE", "CONT", "CPY", "GET_ROWS", "SET_ROWS",
        "ADD", "MUL", "SCALE", "RMS_NORM", "NORM", "MUL_MAT", "ROPE", "SOFT_MAX", "SILU", "GELU",
        "SWIGLU", "CONCAT", "ARGMAX", "FLASH_ATTN_EXT", "MUL_MAT_ID", "TOP_K", "SUM_ROWS", "DIV", "TANH",
    };
    return op >= 0 && op < GGML_OP_COUNT ? names[op] : "INVALID";
}

bool ggml_op_is_metadata(ggml_op op) {
    return op == GGML_OP_NONE || op == GGML_OP_VIEW || op == GGML_OP_RESHAPE || op == GGML_OP_PERMUTE ||
           op == GGML_OP_TRANSPOSE;
}

ggml_tensor * ggml_cont(ggml_context * ctx, ggml_tensor * a) {
    return ggml_cont_4d(ctx, a, a->ne[0], a->ne[1], a->ne[2], a->ne[3]);
}

ggml_tensor * ggml_cont_2d(ggml_context * ctx, ggml_tensor * a, int64_t ne0, int64_t ne1) {
    return ggml_cont_4d(ctx, a, ne0, ne1, 1, 1);
}

ggml_tensor * ggml_cont_4d(ggml_context * ctx, ggml_tensor * a, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3) {
    GGML_ASSERT(ne0 * ne1 * ne2 * ne3 == ggml_nelements(a));
    GGML_ASSERT(!ggml_get_type_traits(a->type).is_quantized || ggml_is_contiguous(a));
    ggml_tensor * r = ggml_new_tensor_4d(ctx, a->type, ne0, ne1, ne2, ne3);
    ggml_format_name(r, "%s (cont)", a->name);
    r->op = GGML_OP_CONT;
    r->src[0] = a;
    return r;
}

ggml_tensor * ggml_cpy(ggml_context * ctx, ggml_tensor * a, ggml_tensor * b) {
    GGML_ASSERT(ggml_nelements(a) == ggml_nelements(b));
    GGML_ASSERT(is_float_storage(a->type) && is_float_storage(b->type));
    ggml_tensor * r = ggml_view_tensor(ctx, b);
    ggml_format_name(r, "%s (copy of %s)", b->name, a->name);
    r->op = GGML_OP_CPY;
    r->src[0] = a;
    r->src[1] = b;
    return r;
}

ggml_tensor * ggml_get_rows(ggml_context * ctx, ggml_tensor * a, ggml_tensor * b) {
    GGML_ASSERT(has_to_float(a->type) && (is_float_storage(a->type) || ggml_is_contiguous_rows(a)));
    GGML_ASSERT(b->type == GGML_TYPE_I32);
    GGML_ASSERT(a->ne[2] == b->ne[1] && a->ne[3] == b->ne[2] && b->ne[3] == 1);
    ggml_tensor * r = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, a->ne[0], b->ne[0], b->ne[1], b->ne[2]);
    r->op = GGML_OP_GET_ROWS;
    r->src[0] = a;
    r->src[1] = b;
    return r;
}

ggml_tensor * ggml_set_rows(ggml_context * ctx, ggml_tensor * a, ggml_tensor * b, ggml_tensor * c) {
    GGML_ASSERT(has_from_float(a->type) && (is_float_storage(a->type) || ggml_is_contiguous_rows(a)));
    GGML_ASSERT(b->type == GGML_TYPE_F32);
    GGML_ASSERT(c->type == GGML_TYPE_I32 || c->type == GGML_TYPE_I64);
    GGML_ASSERT(a->ne[0] == b->ne[0] && a->ne[2] == b->ne[2] && a->ne[3] == b->ne[3]);
    GGML_ASSERT(b->ne[1] == c->ne[0] && c->ne[3] == 1);
    GGML_ASSERT(c->ne[1] > 0 && c->ne[2] > 0 && b->ne[2] % c->ne[1] == 0 && b->ne[3] % c->ne[2] == 0);
    ggml_tensor * r = ggml_view_tensor(ctx, a);
    ggml_format_name(r, "%s (set rows)", a->name);
    r->op = GGML_OP_SET_ROWS;
    r->src[0] = b;
    r->src[1] = c;
    return r;
}

ggml_tensor * ggml_add(ggml_context * ctx, ggml_tensor * a, ggml_tensor * b) { return binary(ctx, GGML_OP_ADD, a, b); }
ggml_tensor * ggml_mul(ggml_context * ctx, ggml_tensor * a, ggml_tensor * b) { return binary(ctx, GGML_OP_MUL, a, b); }
ggml_tensor * ggml_div(ggml_context * ctx, ggml_tensor * a, ggml_tensor * b) { return binary(ctx, GGML_OP_DIV, a, b); }

ggml_tensor * ggml_scale(ggml_context * ctx, ggml_tensor * a, float s) { return ggml_scale_bias(ctx, a, s, 0.0f); }

ggml_tensor * ggml_scale_bias(ggml_context * ctx, ggml_tensor * a, float s, float b) {
    ggml_tensor * r = unary(ctx, GGML_OP_SCALE, a);
    ggml_set_op_param_f32(r, 0, s);
    ggml_set_op_param_f32(r, 1, b);
    return r;
}

ggml_tensor * ggml_rms_norm(ggml_context * ctx, ggml_tensor * a, float eps) {
    GGML_ASSERT(a->type == GGML_TYPE_F32);
    ggml_tensor * r = unary(ctx, GGML_OP_RMS_NORM, a);
    ggml_set_op_param_f32(r, 0, eps);
    return r;
}

ggml_tensor * ggml_norm(ggml_context * ctx, ggml_tensor * a, float eps) {
    GGML_ASSERT(a->type == GGML_TYPE_F32);
    ggml_tensor * r = unary(ctx, GGML_OP_NORM, a);
    ggml_set_op_param_f32(r, 0, eps);
    return r;
}

ggml_tensor * ggml_mul_mat(ggml_context * ctx, ggml_tensor * a, ggml_tensor * b) {
    GGML_ASSERT(a->ne[0] == b->ne[0]);
    GGML_ASSERT(b->ne[2] % a->ne[2] == 0 && b->ne[3] % a->ne[3] == 0);
    GGML_ASSERT(b->type == GGML_TYPE_F32);
    GGML_ASSERT(ggml_type_is_supported(a->type) && ggml_is_contiguous_rows(a) && !ggml_is_transposed(a));
    ggml_tensor * r = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, a->ne[1], b->ne[1], b->ne[2], b->ne[3]);
    r->op = GGML_OP_MUL_MAT;
    r->src[0] = a;
    r->src[1] = b;
    return r;
}

ggml_tensor * ggml_rope(ggml_context * ctx, ggml_tensor * a, ggml_tensor * pos, const ggml_rope_params & p) {
    return ggml_rope_ff(ctx, a, pos, nullptr, p);
}

ggml_tensor * ggml_rope_ff(ggml_context * ctx, ggml_tensor * a, ggml_tensor * pos, ggml_tensor * freq_factors,
                           const ggml_rope_params & p) {
    GGML_ASSERT(a->type == GGML_TYPE_F32);
    GGML_ASSERT(pos->type == GGML_TYPE_I32 && ggml_n_dims(pos) == 1 && pos->ne[0] == a->ne[2]);
    GGML_ASSERT(p.n_dims > 0 && p.n_dims % 2 == 0 && p.n_dims <= a->ne[0]);
    GGML_ASSERT(p.mode == GGML_ROPE_TYPE_NORMAL || p.mode == GGML_ROPE_TYPE_NEOX);
    if (freq_factors) {
        GGML_ASSERT(freq_factors->type == GGML_TYPE_F32 && ggml_is_contiguous(freq_factors));
        GGML_ASSERT(ggml_n_dims(freq_factors) == 1 && freq_factors->ne[0] == p.n_dims / 2);
    }
    ggml_tensor * r = unary(ctx, GGML_OP_ROPE, a);
    r->src[1] = pos;
    r->src[2] = freq_factors;
    ggml_set_op_param_i32(r, 0, p.n_dims);
    ggml_set_op_param_i32(r, 1, p.mode);
    ggml_set_op_param_i32(r, 2, p.n_ctx_orig);
    ggml_set_op_param_f32(r, 3, p.freq_base);
    ggml_set_op_param_f32(r, 4, p.freq_scale);
    ggml_set_op_param_f32(r, 5, p.ext_factor);
    ggml_set_op_param_f32(r, 6, p.attn_factor);
    ggml_set_op_param_f32(r, 7, p.beta_fast);
    ggml_set_op_param_f32(r, 8, p.beta_slow);
    return r;
}

ggml_tensor * ggml_soft_max_ext(ggml_context * ctx, ggml_tensor * a, ggml_tensor * mask, float scale) {
    GGML_ASSERT(a->type == GGML_TYPE_F32);
    if (mask) {
        GGML_ASSERT(mask->type == GGML_TYPE_F32 || mask->type == GGML_TYPE_F16);
        GGML_ASSERT(ggml_is_contiguous_rows(mask));
        GGML_ASSERT(mask->ne[0] == a->ne[0] && mask->ne[1] >= a->ne[1]);
        GGML_ASSERT(a->ne[2] % mask->ne[2] == 0 && a->ne[3] % mask->ne[3] == 0);
    }
    ggml_tensor * r = unary(ctx, GGML_OP_SOFT_MAX, a);
    r->src[1] = mask;
    ggml_set_op_param_f32(r, 0, scale);
    return r;
}

ggml_tensor * ggml_soft_max(ggml_context * ctx, ggml_tensor * a) { return ggml_soft_max_ext(ctx, a, nullptr, 1.0f); }

ggml_tensor * ggml_silu(ggml_context * ctx, ggml_tensor * a) { return unary(ctx, GGML_OP_SILU, a); }
ggml_tensor * ggml_gelu(ggml_context * ctx, ggml_tensor * a) { return unary(ctx, GGML_OP_GELU, a); }
ggml_tensor * ggml_tanh(ggml_context * ctx, ggml_tensor * a) { return unary(ctx, GGML_OP_TANH, a); }

ggml_tensor * ggml_swiglu(ggml_context * ctx, ggml_tensor * a, ggml_tensor * b) {
    GGML_ASSERT(ggml_are_same_shape(a, b) && is_float_storage(b->type));
    ggml_tensor * r = unary(ctx, GGML_OP_SWIGLU, a);
    r->src[1] = b;
    return r;
}

ggml_tensor * ggml_concat(ggml_context * ctx, ggml_tensor * a, ggml_tensor * b, int dim) {
    GGML_ASSERT(dim >= 0 && dim < GGML_MAX_DIMS);
    GGML_ASSERT(a->type == b->type && is_float_storage(a->type));
    int64_t ne[GGML_MAX_DIMS];
    for (int i = 0; i < GGML_MAX_DIMS; ++i) {
        if (i != dim) GGML_ASSERT(a->ne[i] == b->ne[i]);
        ne[i] = i == dim ? a->ne[i] + b->ne[i] : a->ne[i];
    }
    ggml_tensor * r = new_like(ctx, a->type, ne);
    r->op = GGML_OP_CONCAT;
    r->src[0] = a;
    r->src[1] = b;
    ggml_set_op_param_i32(r, 0, dim);
    return r;
}

ggml_tensor * ggml_argmax(ggml_context * ctx, ggml_tensor * a) {
    GGML_ASSERT(a->type == GGML_TYPE_F32 && a->ne[2] == 1 && a->ne[3] == 1);
    ggml_tensor * r = ggml_new_tensor_1d(ctx, GGML_TYPE_I32, a->ne[1]);
    r->op = GGML_OP_ARGMAX;
    r->src[0] = a;
    return r;
}

ggml_tensor * ggml_flash_attn_ext(ggml_context * ctx, ggml_tensor * q, ggml_tensor * k, ggml_tensor * v,
                                  ggml_tensor * mask, float scale, float logit_softcap) {
    auto kv_type_ok = [](ggml_type t) { return t == GGML_TYPE_F32 || t == GGML_TYPE_F16 || t == GGML_TYPE_Q8_0; };
    GGML_ASSERT(q->type == GGML_TYPE_F32);
    GGML_ASSERT(kv_type_ok(k->type) && kv_type_ok(v->type));
    GGML_ASSERT(ggml_is_contiguous_rows(k) && ggml_is_contiguous_rows(v));
    GGML_ASSERT(q->ne[3] >= 1 && k->ne[3] == q->ne[3] && v->ne[3] == q->ne[3]);
    GGML_ASSERT(q->ne[0] > 0 && q->ne[0] == k->ne[0] && v->ne[0] > 0);
    GGML_ASSERT(k->ne[1] == v->ne[1] && k->ne[2] == v->ne[2]);
    GGML_ASSERT(k->ne[2] > 0 && q->ne[2] % k->ne[2] == 0);
    if (mask) {
        GGML_ASSERT(mask->type == GGML_TYPE_F32 || mask->type == GGML_TYPE_F16);
        GGML_ASSERT(ggml_is_contiguous_rows(mask));
        GGML_ASSERT(mask->ne[0] == k->ne[1] && mask->ne[1] >= q->ne[1]);
        GGML_ASSERT(mask->ne[2] == 1 && (mask->ne[3] == 1 || mask->ne[3] == q->ne[3]));
    }
    ggml_tensor * r = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, v->ne[0], q->ne[2], q->ne[1], q->ne[3]);
    r->op = GGML_OP_FLASH_ATTN_EXT;
    r->src[0] = q;
    r->src[1] = k;
    r->src[2] = v;
    r->src[3] = mask;
    GGML_ASSERT(logit_softcap >= 0.0f);
    ggml_set_op_param_f32(r, 0, scale);
    ggml_set_op_param_f32(r, 1, logit_softcap);
    return r;
}

ggml_tensor * ggml_mul_mat_id(ggml_context * ctx, ggml_tensor * as, ggml_tensor * b, ggml_tensor * ids) {
    GGML_ASSERT(ggml_type_is_supported(as->type) && ggml_is_contiguous_rows(as) && !ggml_is_transposed(as));
    GGML_ASSERT(as->ne[3] == 1 && as->ne[2] > 0);
    GGML_ASSERT(b->type == GGML_TYPE_F32 && b->ne[3] == 1 && b->ne[0] == as->ne[0]);
    GGML_ASSERT(ids->type == GGML_TYPE_I32 && ggml_is_contiguous_rows(ids));
    GGML_ASSERT(ids->ne[2] == 1 && ids->ne[3] == 1 && ids->ne[0] > 0);
    GGML_ASSERT(b->ne[2] == ids->ne[1] && (b->ne[1] == 1 || b->ne[1] == ids->ne[0]));
    ggml_tensor * r = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, as->ne[1], ids->ne[0], ids->ne[1], 1);
    r->op = GGML_OP_MUL_MAT_ID;
    r->src[0] = as;
    r->src[1] = b;
    r->src[2] = ids;
    return r;
}

ggml_tensor * ggml_top_k(ggml_context * ctx, ggml_tensor * a, int k) {
    GGML_ASSERT(a->type == GGML_TYPE_F32 && k > 0 && k <= a->ne[0]);
    ggml_tensor * r = ggml_new_tensor_4d(ctx, GGML_TYPE_I32, k, a->ne[1], a->ne[2], a->ne[3]);
    r->op = GGML_OP_TOP_K;
    r->src[0] = a;
    ggml_set_op_param_i32(r, 0, k);
    return r;
}

ggml_tensor * ggml_sum_rows(ggml_context * ctx, ggml_tensor * a) {
    GGML_ASSERT(a->type == GGML_TYPE_F32);
    ggml_tensor * r = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, 1, a->ne[1], a->ne[2], a->ne[3]);
    r->op = GGML_OP_SUM_ROWS;
    r->src[0] = a;
    return r;
}

// ---- typed getters of the op parameters (the layout written by the builders above) ----

namespace {

void op_params_expect(const ggml_tensor * t, ggml_op op) {
    if (t == nullptr || t->op != op) {
        GGML_ABORT("op parameter getter of %s called on a %s tensor", ggml_op_name(op),
                   t ? ggml_op_name(t->op) : "null");
    }
}

}  // namespace

float ggml_get_scale(const ggml_tensor * t) {
    op_params_expect(t, GGML_OP_SCALE);
    return ggml_get_op_param_f32(t, 0);
}

float ggml_get_scale_bias(const ggml_tensor * t) {
    op_params_expect(t, GGML_OP_SCALE);
    return ggml_get_op_param_f32(t, 1);
}

float ggml_get_norm_eps(const ggml_tensor * t) {
    if (t == nullptr || (t->op != GGML_OP_RMS_NORM && t->op != GGML_OP_NORM)) op_params_expect(t, GGML_OP_NORM);
    return ggml_get_op_param_f32(t, 0);
}

ggml_rope_params ggml_get_rope_params(const ggml_tensor * t) {
    op_params_expect(t, GGML_OP_ROPE);
    ggml_rope_params p;
    p.n_dims = ggml_get_op_param_i32(t, 0);
    p.mode = ggml_get_op_param_i32(t, 1);
    p.n_ctx_orig = ggml_get_op_param_i32(t, 2);
    p.freq_base = ggml_get_op_param_f32(t, 3);
    p.freq_scale = ggml_get_op_param_f32(t, 4);
    p.ext_factor = ggml_get_op_param_f32(t, 5);
    p.attn_factor = ggml_get_op_param_f32(t, 6);
    p.beta_fast = ggml_get_op_param_f32(t, 7);
    p.beta_slow = ggml_get_op_param_f32(t, 8);
    return p;
}

float ggml_get_soft_max_scale(const ggml_tensor * t) {
    op_params_expect(t, GGML_OP_SOFT_MAX);
    return ggml_get_op_param_f32(t, 0);
}

int ggml_get_concat_dim(const ggml_tensor * t) {
    op_params_expect(t, GGML_OP_CONCAT);
    return ggml_get_op_param_i32(t, 0);
}

int ggml_get_top_k(const ggml_tensor * t) {
    op_params_expect(t, GGML_OP_TOP_K);
    return ggml_get_op_param_i32(t, 0);
}

float ggml_get_flash_attn_scale(const ggml_tensor * t) {
    op_params_expect(t, GGML_OP_FLASH_ATTN_EXT);
    return ggml_get_op_param_f32(t, 0);
}

float ggml_get_flash_attn_softcap(const ggml_tensor * t) {
    op_params_expect(t, GGML_OP_FLASH_ATTN_EXT);
    return ggml_get_op_param_f32(t, 1);
}
