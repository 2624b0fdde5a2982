// Contexts (arenas), tensor creation and queries, views.
#include "ggml/ggml.h"
#include "ggml-impl.h"

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

void ggml_abort(const char * file, int line, const char * fmt, ...) {
    std::fflush(stdout);
    std::fprintf(stderr, "%s:%d: ", file, line);
    va_list args;
    va_start(args, fmt);
    std::vfprintf(stderr, fmt, args);
    va_end(args);
    std::fprintf(stderr, "\n");
    std::abort();
}

const char * ggml_status_to_string(ggml_status status) {
    switch (status) {
        case GGML_STATUS_ALLOC_FAILED: return "allocation failed";
        case GGML_STATUS_FAILED: return "failed";
        case GGML_STATUS_SUCCESS: return "success";
        case GGML_STATUS_ABORTED: return "aborted";
    }
    return "unknown status";
}

// ---- context ----

// Every object in the arena starts with this header; objects form a list in creation order.
struct ggml_object {
    size_t offs;   // of the payload, from the arena start
    size_t size;   // of the payload
    ggml_object * next;
    int kind;      // 0 tensor, 1 graph, 2 tensor data
};

struct ggml_context {
    size_t mem_size = 0;
    uint8_t * mem = nullptr;
    bool mem_owned = false;
    bool no_alloc = false;
    ggml_object * first = nullptr;
    ggml_object * last = nullptr;
};

namespace {

size_t align_up(size_t x, size_t a) { return (x + a - 1) / a * a; }

constexpr size_t k_object_size = sizeof(ggml_object);

}  // namespace

ggml_context * ggml_init(const ggml_init_params & params) {
    auto * ctx = new (std::nothrow) ggml_context;
    if (!ctx) return nullptr;
    ctx->mem_size = align_up(params.mem_size ? params.mem_size : GGML_MEM_ALIGN, GGML_MEM_ALIGN);
    ctx->no_alloc = params.no_alloc;
    if (params.mem_buffer) {
        ctx->mem = static_cast<uint8_t *>(params.mem_buffer);
        ctx->mem_size = params.mem_size;
    } else {
        ctx->mem = static_cast<uint8_t *>(std::aligned_alloc(GGML_MEM_ALIGN, ctx->mem_size));
        ctx->mem_owned = true;
        if (!ctx->mem) {
            delete ctx;
            return nullptr;
        }
    }
    return ctx;
}

void ggml_free(ggml_context * ctx) {
    if (!ctx) return;
    if (ctx->mem_owned) std::free(ctx->mem);
    delete ctx;
}

size_t ggml_tensor_overhead() { return align_up(k_object_size, GGML_MEM_ALIGN) + align_up(sizeof(ggml_tensor), GGML_MEM_ALIGN); }

size_t ggml_used_mem(const ggml_context * ctx) {
    return ctx->last ? ctx->last->offs + ctx->last->size : 0;
}

bool ggml_get_no_alloc(const ggml_context * ctx) { return ctx->no_alloc; }

void * ggml_ctx_alloc_object(ggml_context * ctx, size_t size, int kind) {
    // The header sits right before its payload, so a payload finds its header in O(1).
    const size_t cur_end = ggml_used_mem(ctx);
    const size_t payload_offs = align_up(cur_end + k_object_size, GGML_MEM_ALIGN);
    const size_t payload_size = align_up(size, GGML_MEM_ALIGN);
    if (payload_offs + payload_size > ctx->mem_size) {
        GGML_ABORT("ggml context out of memory: need %zu bytes more (arena %zu, used %zu)",
                   payload_offs + payload_size - ctx->mem_size, ctx->mem_size, cur_end);
    }
    auto * obj = reinterpret_cast<ggml_object *>(ctx->mem + payload_offs - k_object_size);
    obj->offs = payload_offs;
    obj->size = payload_size;
    obj->next = nullptr;
    obj->kind = kind;
    if (ctx->last) ctx->last->next = obj; else ctx->first = obj;
    ctx->last = obj;
    return ctx->mem + payload_offs;
}

namespace {

ggml_tensor * tensor_of(const ggml_context * ctx, const ggml_object * obj) {
    return reinterpret_cast<ggml_tensor *>(ctx->mem + obj->offs);
}

}  // namespace

ggml_tensor * ggml_get_first_tensor(const ggml_context * ctx) {
    for (ggml_object * o = ctx->first; o; o = o->next) {
        if (o->kind == 0) return tensor_of(ctx, o);
    }
    return nullptr;
}

ggml_tensor * ggml_get_next_tensor(const ggml_context * ctx, const ggml_tensor * t) {
    const auto * obj = reinterpret_cast<const ggml_object *>(reinterpret_cast<const uint8_t *>(t) - k_object_size);
    for (ggml_object * o = obj->next; o; o = o->next) {
        if (o->kind == 0) return tensor_of(ctx, o);
    }
    return nullptr;
}

ggml_tensor * ggml_get_tensor(const ggml_context * ctx, const char * name) {
    for (ggml_object * o = ctx->first; o; o = o->next) {
        if (o->kind != 0) continue;
        ggml_tensor * t = tensor_of(ctx, o);
        if (std::strcmp(t->name, name) == 0) return t;
    }
    return nullptr;
}

// ---- tensors ----

ggml_tensor * ggml_new_tensor_impl(ggml_context * ctx, ggml_type type, int n_dims, const int64_t * ne,
                                   ggml_tensor * view_src, size_t view_offs) {
    GGML_ASSERT(ggml_type_is_valid(type));
    GGML_ASSERT(n_dims >= 1 && n_dims <= GGML_MAX_DIMS);
    if (view_src && view_src->view_src) {  // resolve to the tensor that owns the memory
        view_offs += view_src->view_offs;
        view_src = view_src->view_src;
    }
    const ggml_type_traits & tt = ggml_get_type_traits(type);
    GGML_ASSERT(ne[0] % tt.blck_size == 0);

    auto * t = static_cast<ggml_tensor *>(ggml_ctx_alloc_object(ctx, sizeof(ggml_tensor), 0));
    new (t) ggml_tensor();
    t->type = type;
    for (int i = 0; i < n_dims; ++i) {
        GGML_ASSERT(ne[i] >= 0);
        t->ne[i] = ne[i];
    }
    t->nb[0] = tt.type_size;
    t->nb[1] = tt.type_size * size_t(t->ne[0] / tt.blck_size);
    for (int i = 2; i < GGML_MAX_DIMS; ++i) t->nb[i] = t->nb[i - 1] * size_t(t->ne[i - 1]);

    t->view_src = view_src;
    t->view_offs = view_offs;
    if (view_src) {
        t->buffer = view_src->buffer;
        if (view_src->data) t->data = static_cast<uint8_t *>(view_src->data) + view_offs;
    } else if (!ctx->no_alloc) {
        const size_t bytes = ggml_nbytes(t);
        t->data = ggml_ctx_alloc_object(ctx, bytes ? bytes : 1, 2);
    }
    return t;
}

ggml_tensor * ggml_new_tensor(ggml_context * ctx, ggml_type type, int n_dims, const int64_t * ne) {
    return ggml_new_tensor_impl(ctx, type, n_dims, ne, nullptr, 0);
}
ggml_tensor * ggml_new_tensor_1d(ggml_context * ctx, ggml_type type, int64_t ne0) {
    return ggml_new_tensor(ctx, type, 1, &ne0);
}
ggml_tensor * ggml_new_tensor_2d(ggml_context * ctx, ggml_type type, int64_t ne0, int64_t ne1) {
    const int64_t ne[2] = {ne0, ne1};
    return ggml_new_tensor(ctx, type, 2, ne);
}
ggml_tensor * ggml_new_tensor_3d(ggml_context * ctx, ggml_type type, int64_t ne0, int64_t ne1, int64_t ne2) {
    const int64_t ne[3] = {ne0, ne1, ne2};
    return ggml_new_tensor(ctx, type, 3, ne);
}
ggml_tensor * ggml_new_tensor_4d(ggml_context * ctx, ggml_type type, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3) {
    const int64_t ne[4] = {ne0, ne1, ne2, ne3};
    return ggml_new_tensor(ctx, type, 4, ne);
}
ggml_tensor * ggml_dup_tensor(ggml_context * ctx, const ggml_tensor * src) {
    return ggml_new_tensor(ctx, src->type, GGML_MAX_DIMS, src->ne);
}

// ---- queries ----

int64_t ggml_nelements(const ggml_tensor * t) { return t->ne[0] * t->ne[1] * t->ne[2] * t->ne[3]; }
int64_t ggml_nrows(const ggml_tensor * t) { return t->ne[1] * t->ne[2] * t->ne[3]; }

size_t ggml_nbytes(const ggml_tensor * t) {
    for (int i = 0; i < GGML_MAX_DIMS; ++i) {
        if (t->ne[i] <= 0) return 0;
    }
    const int64_t blck = ggml_blck_size(t->type);
    size_t bytes = ggml_type_size(t->type);
    if (blck == 1) {
        for (int i = 0; i < GGML_MAX_DIMS; ++i) bytes += size_t(t->ne[i] - 1) * t->nb[i];
    } else {
        bytes = size_t(t->ne[0] / blck) * t->nb[0];
        for (int i = 1; i < GGML_MAX_DIMS; ++i) bytes += size_t(t->ne[i] - 1) * t->nb[i];
    }
    return bytes;
}

int ggml_n_dims(const ggml_tensor * t) {
    for (int i = GGML_MAX_DIMS - 1; i >= 1; --i) {
        if (t->ne[i] > 1) return i + 1;
    }
    return 1;
}

size_t ggml_element_size(const ggml_tensor * t) { return ggml_type_size(t->type); }

bool ggml_is_contiguous(const ggml_tensor * t) {
    size_t next = ggml_type_size(t->type);
    if (t->ne[0] != ggml_blck_size(t->type) && t->nb[0] != next) return false;
    next *= size_t(t->ne[0] / ggml_blck_size(t->type));
    for (int i = 1; i < GGML_MAX_DIMS; ++i) {
        if (t->ne[i] != 1) {
            if (t->nb[i] != next) return false;
            next *= size_t(t->ne[i]);
        }
    }
    return true;
}

bool ggml_is_contiguous_rows(const ggml_tensor * t) {
    return t->ne[0] == ggml_blck_size(t->type) || t->nb[0] == ggml_type_size(t->type);
}

bool ggml_is_transposed(const ggml_tensor * t) { return t->nb[0] > t->nb[1]; }

bool ggml_is_permuted(const ggml_tensor * t) {
    return t->nb[0] > t->nb[1] || t->nb[1] > t->nb[2] || t->nb[2] > t->nb[3];
}

bool ggml_is_view(const ggml_tensor * t) { return t->view_src != nullptr; }

bool ggml_are_same_shape(const ggml_tensor * a, const ggml_tensor * b) {
    for (int i = 0; i < GGML_MAX_DIMS; ++i) {
        if (a->ne[i] != b->ne[i]) return false;
    }
    return true;
}

bool ggml_are_same_layout(const ggml_tensor * a, const ggml_tensor * b) {
    if (a->type != b->type) return false;
    for (int i = 0; i < GGML_MAX_DIMS; ++i) {
        if (a->ne[i] != b->ne[i] || a->nb[i] != b->nb[i]) return false;
    }
    return true;
}

bool ggml_can_repeat(const ggml_tensor * b, const ggml_tensor * a) {
    for (int i = 0; i < GGML_MAX_DIMS; ++i) {
        if (b->ne[i] == 0 || a->ne[i] % b->ne[i] != 0) return false;
    }
    return true;
}

const char * ggml_get_name(const ggml_tensor * t) { return t->name; }

ggml_tensor * ggml_set_name(ggml_tensor * t, const char * name) {
    std::snprintf(t->name, sizeof(t->name), "%s", name);
    return t;
}

ggml_tensor * ggml_format_name(ggml_tensor * t, const char * fmt, ...) {
    va_list args;
    va_start(args, fmt);
    std::vsnprintf(t->name, sizeof(t->name), fmt, args);
    va_end(args);
    return t;
}

void ggml_set_input(ggml_tensor * t) { t->flags |= GGML_TENSOR_FLAG_INPUT; }
void ggml_set_output(ggml_tensor * t) { t->flags |= GGML_TENSOR_FLAG_OUTPUT; }
void ggml_set_param(ggml_tensor * t) { t->flags |= GGML_TENSOR_FLAG_PARAM; }
