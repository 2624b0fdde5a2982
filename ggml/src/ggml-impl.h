// Internal helpers shared by the core's translation units. The op_params layout of each op is
// written by its builder and read by its typed getter, both in ops.cpp; nothing outside the core
// reads op_params by offset.
#pragma once

#include "ggml/ggml.h"

#include <cstring>

// Allocates size bytes in the context's arena (kind: 0 tensor, 1 graph, 2 tensor data).
void * ggml_ctx_alloc_object(ggml_context * ctx, size_t size, int kind);
// Creates a tensor; with view_src, a view of it at view_offs (resolved to the owning tensor).
ggml_tensor * ggml_new_tensor_impl(ggml_context * ctx, ggml_type type, int n_dims, const int64_t * ne,
                                   ggml_tensor * view_src, size_t view_offs);

inline void ggml_set_op_param_i32(ggml_tensor * t, int i, int32_t v) { t->op_params[i] = v; }
inline void ggml_set_op_param_f32(ggml_tensor * t, int i, float v) { std::memcpy(&t->op_params[i], &v, 4); }
inline int32_t ggml_get_op_param_i32(const ggml_tensor * t, int i) { return t->op_params[i]; }
inline float ggml_get_op_param_f32(const ggml_tensor * t, int i) {
    float v;
    std::memcpy(&v, &t->op_params[i], 4);
    return v;
}
