// ggml/ggml.h — tensors, contexts, op builders and compute graphs.
//
// Usage:
//   ggml_init_params ip{ /*mem_size*/ 16 * ggml_tensor_overhead() + ggml_graph_overhead(),
//                        /*mem_buffer*/ nullptr, /*no_alloc*/ true };
//   ggml_context_ptr ctx(ggml_init(ip));                       // nullptr when out of memory
//   ggml_tensor * w = ggml_new_tensor_2d(ctx.get(), GGML_TYPE_F16, 4096, 4096); // [K, M]
//   ggml_tensor * x = ggml_new_tensor_2d(ctx.get(), GGML_TYPE_F32, 4096, 8);    // [K, N]
//   ggml_tensor * y = ggml_mul_mat(ctx.get(), w, x);                           // [M, N] F32
//   ggml_cgraph * gf = ggml_new_graph(ctx.get());
//   ggml_build_forward_expand(gf, y);
//   // then: allocate with ggml_gallocr (alloc.h), compute with a backend (backend.h).
//
// Conventions (as in ggml): ne[0] is the innermost (contiguous) dimension; nb[i] is the byte
// stride of dimension i; a matrix [K, M] has M rows of K elements. Op builders only record the
// op: they check shapes and types and return nullptr-free results or abort on a programming
// error (GGML_ASSERT). Tensors and graphs live in the context's arena; with no_alloc the data
// lives in backend buffers instead.
//
// Op parameters (a scale, an epsilon, RoPE's settings, …) are recorded by the builder and read
// back by backends only through the typed getters declared next to each builder
// (ggml_get_rope_params, ggml_get_norm_eps, …); each getter asserts that the tensor has its op.
// Where in op_params a builder keeps them is private to the core.
#pragma once

#include "ggml/types.h"

#include <cstddef>
#include <cstdint>
#include <memory>

#define GGML_MAX_DIMS 4
#define GGML_MAX_SRC 6
#define GGML_MAX_OP_PARAMS 64  // bytes
#define GGML_MAX_NAME 64
#define GGML_DEFAULT_GRAPH_SIZE 2048
#define GGML_MEM_ALIGN 64

// Invariant checks: print file, line and expression, then abort. Used for programming errors
// (wrong shapes passed to a builder), never for bad user input, which callers validate first.
[[noreturn]] void ggml_abort(const char * file, int line, const char * fmt, ...);
#define GGML_ASSERT(x) \
    do { if (!(x)) ggml_abort(__FILE__, __LINE__, "GGML_ASSERT(%s) failed", #x); } while (0)
#define GGML_ABORT(...) ggml_abort(__FILE__, __LINE__, __VA_ARGS__)

enum ggml_status {
    GGML_STATUS_ALLOC_FAILED = -2,
    GGML_STATUS_FAILED = -1,
    GGML_STATUS_SUCCESS = 0,
    GGML_STATUS_ABORTED = 1,
};
const char * ggml_status_to_string(ggml_status status);

enum ggml_op : int32_t {
    GGML_OP_NONE = 0,
    // metadata only (no computation; the result aliases its source)
    GGML_OP_VIEW,
    GGML_OP_RESHAPE,
    GGML_OP_PERMUTE,
    GGML_OP_TRANSPOSE,
    // computation
    GGML_OP_CONT,
    GGML_OP_CPY,
    GGML_OP_GET_ROWS,
    GGML_OP_SET_ROWS,
    GGML_OP_ADD,
    GGML_OP_MUL,
    GGML_OP_SCALE,
    GGML_OP_RMS_NORM,
    GGML_OP_NORM,
    GGML_OP_MUL_MAT,
    GGML_OP_ROPE,
    GGML_OP_SOFT_MAX,
    GGML_OP_SILU,
    GGML_OP_GELU,
    GGML_OP_SWIGLU,
    GGML_OP_CONCAT,
    GGML_OP_ARGMAX,
    GGML_OP_FLASH_ATTN_EXT,
    GGML_OP_MUL_MAT_ID,
    GGML_OP_TOP_K,
    GGML_OP_SUM_ROWS,
    GGML_OP_DIV,
    GGML_OP_TANH,
    GGML_OP_COUNT,
};
const char * ggml_op_name(ggml_op op);  // "ADD", "MUL_MAT", …
// True for VIEW, RESHAPE, PERMUTE, TRANSPOSE (and NONE): nothing to compute.
bool ggml_op_is_metadata(ggml_op op);

enum ggml_tensor_flag : int32_t {
    GGML_TENSOR_FLAG_INPUT = 1,   // set by the user before compute (graph input)
    GGML_TENSOR_FLAG_OUTPUT = 2,  // read by the user after compute: never reused by the allocator
    GGML_TENSOR_FLAG_PARAM = 4,   // model weight
};

// RoPE modes (op param "mode").
enum ggml_rope_mode : int32_t {
    GGML_ROPE_TYPE_NORMAL = 0,  // rotate adjacent pairs (x[2i], x[2i+1])  — llama
    GGML_ROPE_TYPE_NEOX = 2,    // rotate halves (x[i], x[i + n_dims/2]) — qwen2, gpt-neox
};

class ggml_backend_buffer_i;  // backend.h

struct ggml_tensor {
    ggml_type type = GGML_TYPE_F32;
    ggml_backend_buffer_i * buffer = nullptr;  // where data lives (nullptr: context memory or none)

    int64_t ne[GGML_MAX_DIMS] = {1, 1, 1, 1};  // number of elements per dimension
    size_t nb[GGML_MAX_DIMS] = {0, 0, 0, 0};   // stride in bytes per dimension

    ggml_op op = GGML_OP_NONE;
    alignas(8) int32_t op_params[GGML_MAX_OP_PARAMS / sizeof(int32_t)] = {};
    int32_t flags = 0;

    ggml_tensor * src[GGML_MAX_SRC] = {};
    ggml_tensor * view_src = nullptr;  // tensor whose memory this one aliases (transitively resolved)
    size_t view_offs = 0;              // byte offset into view_src's data

    void * data = nullptr;
    char name[GGML_MAX_NAME] = {};
    void * extra = nullptr;  // backend-specific
};

// ---- tensor queries ----
int64_t ggml_nelements(const ggml_tensor * t);
int64_t ggml_nrows(const ggml_tensor * t);   // ne[1]*ne[2]*ne[3]
size_t ggml_nbytes(const ggml_tensor * t);   // bytes spanned by the data (views: by their strides)
int ggml_n_dims(const ggml_tensor * t);      // 1..4, trailing dimensions of size 1 not counted
size_t ggml_element_size(const ggml_tensor * t);
bool ggml_is_contiguous(const ggml_tensor * t);        // dense, row-major
bool ggml_is_contiguous_rows(const ggml_tensor * t);   // each row (dim 0) dense
bool ggml_is_transposed(const ggml_tensor * t);
bool ggml_is_permuted(const ggml_tensor * t);
bool ggml_is_view(const ggml_tensor * t);
bool ggml_are_same_shape(const ggml_tensor * a, const ggml_tensor * b);
bool ggml_are_same_layout(const ggml_tensor * a, const ggml_tensor * b);  // type, ne and nb
// b can be broadcast (repeated) to a's shape: a->ne[i] % b->ne[i] == 0 for every i.
bool ggml_can_repeat(const ggml_tensor * b, const ggml_tensor * a);
const char * ggml_get_name(const ggml_tensor * t);
ggml_tensor * ggml_set_name(ggml_tensor * t, const char * name);
ggml_tensor * ggml_format_name(ggml_tensor * t, const char * fmt, ...);
void ggml_set_input(ggml_tensor * t);
void ggml_set_output(ggml_tensor * t);
void ggml_set_param(ggml_tensor * t);

// ---- context (an arena for tensor and graph metadata, and for data unless no_alloc) ----
struct ggml_init_params {
    size_t mem_size = 0;        // bytes of the arena
    void * mem_buffer = nullptr; // caller-owned memory, or nullptr to allocate
    bool no_alloc = false;      // true: tensors get no data (a backend buffer provides it)
};
struct ggml_context;
// nullptr when the memory cannot be had.
ggml_context * ggml_init(const ggml_init_params & params);
void ggml_free(ggml_context * ctx);
struct ggml_context_deleter { void operator()(ggml_context * c) const { ggml_free(c); } };
using ggml_context_ptr = std::unique_ptr<ggml_context, ggml_context_deleter>;

size_t ggml_tensor_overhead();                 // arena bytes of one tensor's metadata
size_t ggml_graph_overhead();                  // arena bytes of a default-size graph
size_t ggml_graph_overhead_custom(size_t size);
size_t ggml_used_mem(const ggml_context * ctx);
bool ggml_get_no_alloc(const ggml_context * ctx);
// Iterate over the tensors created in a context, in creation order.
ggml_tensor * ggml_get_first_tensor(const ggml_context * ctx);
ggml_tensor * ggml_get_next_tensor(const ggml_context * ctx, const ggml_tensor * t);
ggml_tensor * ggml_get_tensor(const ggml_context * ctx, const char * name);  // by name or nullptr

// ---- tensor creation (abort if the arena is full: size contexts with ggml_tensor_overhead) ----
ggml_tensor * ggml_new_tensor(ggml_context * ctx, ggml_type type, int n_dims, const int64_t * ne);
ggml_tensor * ggml_new_tensor_1d(ggml_context * ctx, ggml_type type, int64_t ne0);
ggml_tensor * ggml_new_tensor_2d(ggml_context * ctx, ggml_type type, int64_t ne0, int64_t ne1);
ggml_tensor * ggml_new_tensor_3d(ggml_context * ctx, ggml_type type, int64_t ne0, int64_t ne1, int64_t ne2);
ggml_tensor * ggml_new_tensor_4d(ggml_context * ctx, ggml_type type, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3);
ggml_tensor * ggml_dup_tensor(ggml_context * ctx, const ggml_tensor * src);  // same type and shape, new data

// ---- views (metadata ops; the result aliases a's data) ----
ggml_tensor * ggml_view_1d(ggml_context * ctx, ggml_tensor * a, int64_t ne0, size_t offset);
ggml_tensor * ggml_view_2d(ggml_context * ctx, ggml_tensor * a, int64_t ne0, int64_t ne1, size_t nb1, size_t offset);
ggml_tensor * ggml_view_3d(ggml_context * ctx, ggml_tensor * a, int64_t ne0, int64_t ne1, int64_t ne2,
                           size_t nb1, size_t nb2, size_t offset);
ggml_tensor * ggml_view_4d(ggml_context * ctx, ggml_tensor * a, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3,
                           size_t nb1, size_t nb2, size_t nb3, size_t offset);
ggml_tensor * ggml_view_tensor(ggml_context * ctx, ggml_tensor * a);  // same shape and strides
// Reshape requires a contiguous a; element count must match.
ggml_tensor * ggml_reshape(ggml_context * ctx, ggml_tensor * a, const ggml_tensor * shape_of);
ggml_tensor * ggml_reshape_1d(ggml_context * ctx, ggml_tensor * a, int64_t ne0);
ggml_tensor * ggml_reshape_2d(ggml_context * ctx, ggml_tensor * a, int64_t ne0, int64_t ne1);
ggml_tensor * ggml_reshape_3d(ggml_context * ctx, ggml_tensor * a, int64_t ne0, int64_t ne1, int64_t ne2);
ggml_tensor * ggml_reshape_4d(ggml_context * ctx, ggml_tensor * a, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3);
// permute: source dimension i becomes dimension axis_i of the result (ggml semantics).
ggml_tensor * ggml_permute(ggml_context * ctx, ggml_tensor * a, int axis0, int axis1, int axis2, int axis3);
ggml_tensor * ggml_transpose(ggml_context * ctx, ggml_tensor * a);  // swap dims 0 and 1

// ---- compute ops ----
// Contiguous copy of a (same type, same shape).
ggml_tensor * ggml_cont(ggml_context * ctx, ggml_tensor * a);
ggml_tensor * ggml_cont_2d(ggml_context * ctx, ggml_tensor * a, int64_t ne0, int64_t ne1);
ggml_tensor * ggml_cont_4d(ggml_context * ctx, ggml_tensor * a, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3);
// Copy a into b converting the type (F32, F16, BF16 in any pair); same element count,
// elements taken and written in row-major order of each. Returns a view of b.
ggml_tensor * ggml_cpy(ggml_context * ctx, ggml_tensor * a, ggml_tensor * b);
// Gather rows: a [ne0, n_rows, ne2, ne3] (F32/F16/BF16 or any quantized type), b I32 [n, ne2, ne3].
// Result F32 [ne0, n, ne2, ne3]: dst[:, i, j, k] = a[:, b[i, j, k], j, k].
ggml_tensor * ggml_get_rows(ggml_context * ctx, ggml_tensor * a, ggml_tensor * b);
// Scatter rows into a: a [ne0, n_rows, ne2, ne3] (F32/F16/BF16 or quantized, e.g. a Q8_0 KV cache),
// b F32 [ne0, n, ne2, ne3],
// c I32 or I64 [n, c_ne1, c_ne2] with ne2 % c_ne1 == 0 and ne3 % c_ne2 == 0:
// a[:, c[i, j % c_ne1, k % c_ne2], j, k] = b[:, i, j, k] (converted). Returns a view of a;
// indices out of range are an error reported by the backend (GGML_STATUS_FAILED).
ggml_tensor * ggml_set_rows(ggml_context * ctx, ggml_tensor * a, ggml_tensor * b, ggml_tensor * c);
// Element-wise with b broadcast to a (ggml_can_repeat(b, a)). a, b: F32/F16/BF16; result has a's type.
ggml_tensor * ggml_add(ggml_context * ctx, ggml_tensor * a, ggml_tensor * b);
ggml_tensor * ggml_mul(ggml_context * ctx, ggml_tensor * a, ggml_tensor * b);
// a*s + b (F32/F16/BF16; result has a's type).
ggml_tensor * ggml_scale(ggml_context * ctx, ggml_tensor * a, float s);
ggml_tensor * ggml_scale_bias(ggml_context * ctx, ggml_tensor * a, float s, float b);
// SCALE's parameters: s and b of ggml_scale_bias (ggml_scale records b = 0).
float ggml_get_scale(const ggml_tensor * t);
float ggml_get_scale_bias(const ggml_tensor * t);
// Over dim 0 of F32 a: x / sqrt(mean(x^2) + eps).
ggml_tensor * ggml_rms_norm(ggml_context * ctx, ggml_tensor * a, float eps);
// Over dim 0 of F32 a: (x - mean) / sqrt(var + eps).
ggml_tensor * ggml_norm(ggml_context * ctx, ggml_tensor * a, float eps);
// eps of RMS_NORM and NORM.
float ggml_get_norm_eps(const ggml_tensor * t);
// a [K, M, ne2, ne3] (F32/F16/BF16, rows contiguous), b F32 [K, N, ne12, ne13] (any strides),
// ne12 % ne2 == 0, ne13 % ne3 == 0 (a is broadcast over b's batches: grouped-query attention).
// Result F32 [M, N, ne12, ne13]: dst[m, n, i2, i3] = sum_k a[k, m, i2/(ne12/ne2), i3/(ne13/ne3)] * b[k, n, i2, i3].
ggml_tensor * ggml_mul_mat(ggml_context * ctx, ggml_tensor * a, ggml_tensor * b);
// Rotary position embedding. a F32 [head_dim, n_head, n_tokens, 1]; pos I32 [n_tokens].
// The first n_dims elements of each head rotate (n_dims even, <= head_dim), the rest pass.
// theta_i = pos * freq_base^(-2i/n_dims), scaled by freq_scale and YaRN (ext_factor,
// attn_factor, beta_fast, beta_slow, n_ctx_orig); ext_factor 0 and attn_factor 1 give plain RoPE.
struct ggml_rope_params {
    int n_dims = 0;
    int mode = GGML_ROPE_TYPE_NORMAL;
    int n_ctx_orig = 0;
    float freq_base = 10000.0f;
    float freq_scale = 1.0f;
    float ext_factor = 0.0f;
    float attn_factor = 1.0f;
    float beta_fast = 32.0f;
    float beta_slow = 1.0f;
};
ggml_tensor * ggml_rope(ggml_context * ctx, ggml_tensor * a, ggml_tensor * pos, const ggml_rope_params & p);
// ggml_rope with per-pair frequency factors (Llama 3.1+ "rope_freqs.weight"): freq_factors F32
// [n_dims/2] (contiguous, one dimension), or nullptr for plain ggml_rope. Pair i uses
// theta_i = pos * freq_base^(-2i/n_dims) / freq_factors[i] (the same index in NORMAL and NEOX
// mode); freq_scale and YaRN then apply to that theta exactly as above (the YaRN ramp still
// runs over the pair index i). Recorded as src[2]. Factors must be finite and > 0: the CPU
// backend reports others as GGML_STATUS_FAILED from graph_compute. Shapes/types violating
// the above abort in the builder like every other builder misuse.
ggml_tensor * ggml_rope_ff(ggml_context * ctx, ggml_tensor * a, ggml_tensor * pos, ggml_tensor * freq_factors,
                           const ggml_rope_params & p);
// ROPE's parameters, as given to ggml_rope / ggml_rope_ff (the freq factors are src[2]).
ggml_rope_params ggml_get_rope_params(const ggml_tensor * t);
// softmax(a*scale + mask) over dim 0. a F32 [ne0, ne1, ne2, ne3]; mask nullptr or F32/F16
// [ne0, >= ne1, m2, m3] with ne2 % m2 == 0 and ne3 % m3 == 0 (rows of the mask past ne1 unused).
// -INFINITY in the mask excludes an element; a row that excludes all gives zeros.
ggml_tensor * ggml_soft_max_ext(ggml_context * ctx, ggml_tensor * a, ggml_tensor * mask, float scale);
ggml_tensor * ggml_soft_max(ggml_context * ctx, ggml_tensor * a);
// SOFT_MAX's scale (1 for ggml_soft_max).
float ggml_get_soft_max_scale(const ggml_tensor * t);
// Activations, element-wise over F32/F16/BF16 (result has a's type).
ggml_tensor * ggml_silu(ggml_context * ctx, ggml_tensor * a);   // x * sigmoid(x)
ggml_tensor * ggml_gelu(ggml_context * ctx, ggml_tensor * a);   // tanh approximation
// silu(a) * b, same shapes.
ggml_tensor * ggml_swiglu(ggml_context * ctx, ggml_tensor * a, ggml_tensor * b);
// Concatenate along dim (0..3); other dims equal; same type.
ggml_tensor * ggml_concat(ggml_context * ctx, ggml_tensor * a, ggml_tensor * b, int dim);
// CONCAT's dim (0..3).
int ggml_get_concat_dim(const ggml_tensor * t);
// Index of the largest element of each row of F32 a [ne0, ne1] → I32 [ne1] (first one on ties).
ggml_tensor * ggml_argmax(ggml_context * ctx, ggml_tensor * a);
// Mixture of experts: each token's input times the weights of the experts it was routed to.
// as [K, M, n_expert] (any MUL_MAT weight type, rows contiguous: one [K, M] matrix per expert),
// b F32 [K, n_b, n_t] (any strides) with n_b == 1 (every used expert sees the same input) or
// n_b == n_used, ids I32 [n_used, n_t] (contiguous rows; values in [0, n_expert): the backend
// reports others as GGML_STATUS_FAILED).
// Result F32 [M, n_used, n_t], contiguous: dst[:, i, t] = as[:, :, ids[i, t]] @ b[:, i % n_b, t].
// A backend groups the tokens of a batch by expert: only the experts some token chose are read.
ggml_tensor * ggml_mul_mat_id(ggml_context * ctx, ggml_tensor * as, ggml_tensor * b, ggml_tensor * ids);
// Indices of the k largest elements of each row (dim 0) of F32 a [n, ne1, ne2, ne3], largest
// first, the lower index first among equal values; 0 < k <= n. Result I32 [k, ne1, ne2, ne3].
ggml_tensor * ggml_top_k(ggml_context * ctx, ggml_tensor * a, int k);
// TOP_K's k.
int ggml_get_top_k(const ggml_tensor * t);
// Sum of each row (dim 0) of F32 a: result F32 [1, ne1, ne2, ne3].
ggml_tensor * ggml_sum_rows(ggml_context * ctx, ggml_tensor * a);
// a / b element-wise with b broadcast to a (as ggml_add).
ggml_tensor * ggml_div(ggml_context * ctx, ggml_tensor * a, ggml_tensor * b);
// tanh element-wise over F32/F16/BF16 (result has a's type).
ggml_tensor * ggml_tanh(ggml_context * ctx, ggml_tensor * a);

// Fused attention. q F32 [D, n_q, n_head, n_batch] (any strides, e.g. a permuted view);
// k [D, n_kv, n_head_kv, n_batch] and v [Dv, n_kv, n_head_kv, n_batch] of type F16, F32 or
// Q8_0 with rows (dim 0) contiguous — typically views of a KV cache whose row c holds all heads
// of cell c (nb1 = cache row size, nb2 = one head's bytes); n_head % n_head_kv == 0 (head h
// reads kv head h / (n_head / n_head_kv)); mask nullptr or F32/F16 [n_kv, >= n_q, 1, 1 or
// n_batch] (rows past n_q unused), broadcast over heads (and over the batch when its dim 3 is
// 1), -INFINITY excludes a cell. Batch b (dim 3: independent attention problems of one shape,
// e.g. one sequence each) reads only q, k, v and mask of its own b.
// Result F32 [Dv, n_head, n_q, n_batch], contiguous:
//   dst[:, h, i, b] = sum_j softmax_j(scale * q[:, i, h, b] . k[:, j, h', b] + mask[j, i, b]) * v[:, j, h', b]
// computed in F32 (k, v converted to F32; q never rounded); a row whose mask excludes every
// cell gives zeros. logit_softcap > 0 caps the scores before the mask is added (Gemma 2):
// s = logit_softcap * tanh(scale * q . k / logit_softcap); 0 leaves them as they are.
ggml_tensor * ggml_flash_attn_ext(ggml_context * ctx, ggml_tensor * q, ggml_tensor * k,
                                  ggml_tensor * v, ggml_tensor * mask, float scale, float logit_softcap = 0.0f);
// FLASH_ATTN_EXT's scale and logit soft-cap (0: none).
float ggml_get_flash_attn_scale(const ggml_tensor * t);
float ggml_get_flash_attn_softcap(const ggml_tensor * t);

// ---- graphs ----
struct ggml_cgraph {
    int size = 0;       // capacity of nodes and of leafs
    int n_nodes = 0;
    int n_leafs = 0;
    ggml_tensor ** nodes = nullptr;  // tensors computed by an op, in topological order
    ggml_tensor ** leafs = nullptr;  // tensors with no op (weights, inputs, constants)
    // visited set: open addressing over tensor pointers
    size_t hash_size = 0;
    ggml_tensor ** hash_keys = nullptr;
};
ggml_cgraph * ggml_new_graph(ggml_context * ctx);  // GGML_DEFAULT_GRAPH_SIZE
ggml_cgraph * ggml_new_graph_custom(ggml_context * ctx, size_t size);
// Adds t and everything it depends on (sources first, view sources included).
void ggml_build_forward_expand(ggml_cgraph * gf, ggml_tensor * t);
int ggml_graph_n_nodes(const ggml_cgraph * gf);
ggml_tensor * ggml_graph_node(const ggml_cgraph * gf, int i);  // i < 0 counts from the end
void ggml_graph_clear(ggml_cgraph * gf);
bool ggml_graph_contains(const ggml_cgraph * gf, const ggml_tensor * t);
