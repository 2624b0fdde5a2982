// Metadata ops: views, reshapes, permutes, transposes. They compute nothing; the result
// aliases its source's memory.
#include "ggml/ggml.h"
#include "ggml-impl.h"

namespace {

ggml_tensor * view_impl(ggml_context * ctx, ggml_tensor * a, int n_dims, const int64_t * ne, size_t offset) {
    ggml_tensor * r = ggml_new_tensor_impl(ctx, a->type, n_dims, ne, a, offset);
    ggml_format_name(r, "%s (view)", a->name);
    r->op = GGML_OP_VIEW;
    r->src[0] = a;
    static_assert(sizeof(size_t) == 8);
    std::memcpy(r->op_params, &offset, sizeof(offset));
    return r;
}

// A view must stay inside the memory of the tensor it aliases.
ggml_tensor * checked(ggml_tensor * r) {
    GGML_ASSERT(ggml_nelements(r) == 0 || r->view_offs + ggml_nbytes(r) <= ggml_nbytes(r->view_src));
    return r;
}

}  // namespace

ggml_tensor * ggml_view_1d(ggml_context * ctx, ggml_tensor * a, int64_t ne0, size_t offset) {
    return checked(view_impl(ctx, a, 1, &ne0, offset));
}

ggml_tensor * ggml_view_2d(ggml_context * ctx, ggml_tensor * a, int64_t ne0, int64_t ne1, size_t nb1, size_t offset) {
    const int64_t ne[2] = {ne0, ne1};
    ggml_tensor * r = view_impl(ctx, a, 2, ne, offset);
    r->nb[1] = nb1;
    r->nb[2] = r->nb[1] * size_t(ne1);
    r->nb[3] = r->nb[2];
    return checked(r);
}

ggml_tensor * ggml_view_3d(ggml_context * ctx, ggml_tensor * a, int64_t ne0, int64_t ne1, int64_t ne2,
                           size_t nb1, size_t nb2, size_t offset) {
    const int64_t ne[3] = {ne0, ne1, ne2};
    ggml_tensor * r = view_impl(ctx, a, 3, ne, offset);
    r->nb[1] = nb1;
    r->nb[2] = nb2;
    r->nb[3] = r->nb[2] * size_t(ne2);
    return checked(r);
}

ggml_tensor * ggml_view_4d(ggml_context * ctx, ggml_tensor * a, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3,
                           size_t nb1, size_t nb2, size_t nb3, size_t offset) {
    const int64_t ne[4] = {ne0, ne1, ne2, ne3};
    ggml_tensor * r = view_impl(ctx, a, 4, ne, offset);
    r->nb[1] = nb1;
    r->nb[2] = nb2;
    r->nb[3] = nb3;
    return checked(r);
}

ggml_tensor * ggml_view_tensor(ggml_context * ctx, ggml_tensor * a) {
    ggml_tensor * r = view_impl(ctx, a, GGML_MAX_DIMS, a->ne, 0);
    for (int i = 0; i < GGML_MAX_DIMS; ++i) r->nb[i] = a->nb[i];
    return r;
}

namespace {

ggml_tensor * reshape_impl(ggml_context * ctx, ggml_tensor * a, int n_dims, const int64_t * ne) {
    GGML_ASSERT(ggml_is_contiguous(a));
    int64_t n = 1;
    for (int i = 0; i < n_dims; ++i) n *= ne[i];
    GGML_ASSERT(n == ggml_nelements(a));
    ggml_tensor * r = ggml_new_tensor_impl(ctx, a->type, n_dims, ne, a, 0);
    ggml_format_name(r, "%s (reshaped)", a->name);
    r->op = GGML_OP_RESHAPE;
    r->src[0] = a;
    return r;
}

}  // namespace

ggml_tensor * ggml_reshape(ggml_context * ctx, ggml_tensor * a, const ggml_tensor * shape_of) {
    return reshape_impl(ctx, a, GGML_MAX_DIMS, shape_of->ne);
}
ggml_tensor * ggml_reshape_1d(ggml_context * ctx, ggml_tensor * a, int64_t ne0) {
    return reshape_impl(ctx, a, 1, &ne0);
}
ggml_tensor * ggml_reshape_2d(ggml_context * ctx, ggml_tensor * a, int64_t ne0, int64_t ne1) {
    const int64_t ne[2] = {ne0, ne1};
    return reshape_impl(ctx, a, 2, ne);
}
ggml_tensor * ggml_reshape_3d(ggml_context * ctx, ggml_tensor * a, int64_t ne0, int64_t ne1, int64_t ne2) {
    const int64_t ne[3] = {ne0, ne1, ne2};
    return reshape_impl(ctx, a, 3, ne);
}
ggml_tensor * ggml_reshape_4d(ggml_context * ctx, ggml_tensor * a, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3) {
    const int64_t ne[4] = {ne0, ne1, ne2, ne3};
    return reshape_impl(ctx, a, 4, ne);
}

ggml_tensor * ggml_permute(ggml_context * ctx, ggml_tensor * a, int axis0, int axis1, int axis2, int axis3) {
    const int axes[4] = {axis0, axis1, axis2, axis3};
    bool seen[4] = {false, false, false, false};
    for (int ax : axes) {
        GGML_ASSERT(ax >= 0 && ax < GGML_MAX_DIMS && !seen[ax]);
        seen[ax] = true;
    }
    ggml_tensor * r = ggml_view_tensor(ctx, a);
    ggml_format_name(r, "%s (permuted)", a->name);
    for (int i = 0; i < GGML_MAX_DIMS; ++i) {
        r->ne[axes[i]] = a->ne[i];
        r->nb[axes[i]] = a->nb[i];
    }
    r->op = GGML_OP_PERMUTE;
    for (int i = 0; i < 4; ++i) r->op_params[i] = axes[i];
    return r;
}

ggml_tensor * ggml_transpose(ggml_context * ctx, ggml_tensor * a) {
    ggml_tensor * r = ggml_view_tensor(ctx, a);
    ggml_format_name(r, "%s (transposed)", a->name);
    r->ne[0] = a->ne[1];
    r->ne[1] = a->ne[0];
    r->nb[0] = a->nb[1];
    r->nb[1] = a->nb[0];
    r->op = GGML_OP_TRANSPOSE;
    return r;
}
