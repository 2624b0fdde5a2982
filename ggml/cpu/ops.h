// ggml/cpu/ops.h — CPU op kernels and how the graph executor calls them (internal).
//
// Usage (from the CPU backend's graph executor, on each of nth threads):
//   ggml_compute_params p = …;                  // ith, nth, work buffer, counters, isa
//   ggml_cpu_compute_forward(p, node);          // every thread calls it for the same node
//   pool.barrier(nth);                          // then all move on to the next node
//
// Rules for kernels:
//   - a node runs on one thread (p.nth == 1, p.barrier() is a no-op) or on every thread of the
//     run (p.nth == the run's nth); never on a subset, so p.barrier() is always the run's own
//     barrier (see ggml_cpu_op_n_tasks and the executor in backend-cpu.cpp);
//   - every thread of the node calls the kernel; split the work by claiming chunks with
//     ggml_cpu_parallel_for (atomic counters; zero at the start of each node) or by ith/nth;
//   - sources may be non-contiguous (any nb) unless the op's builder forbids it;
//   - in-place: for ADD, MUL, DIV, SCALE, RMS_NORM, NORM, ROPE, SOFT_MAX, SILU, GELU, TANH,
//     SWIGLU the allocator may give dst the memory of src[0]; kernels must give the same result
//     then;
//   - errors that depend on data (set_rows or mul_mat_id index out of range) set *p.error = 1;
//     never abort.
//
// Sources and parameters of each op, as the builders in ggml/src record them (parameters are
// read only through the typed getters of ggml.h, never from op_params by offset):
//   CONT      src0 = a; dst contiguous, a's type, same element count (shape may differ)
//   CPY       src0 = a, src1 = b; dst is a view of b (same layout as b); F32/F16/BF16 pairs
//   GET_ROWS  src0 = a, src1 = I32 indices; dst F32
//   SET_ROWS  src0 = b (rows, F32), src1 = indices (I32 or I64); dst is a view of a (view_src)
//   ADD, MUL, DIV  src0 = a, src1 = b (broadcast to a)
//   SCALE     src0 = a; ggml_get_scale, ggml_get_scale_bias
//   RMS_NORM, NORM  src0 = a; ggml_get_norm_eps
//   MUL_MAT   src0 = a (weights-like), src1 = b
//   ROPE      src0 = a, src1 = pos (I32), src2 = freq factors (F32 [n_dims/2], contiguous;
//             theta_i is divided by factor i before freq_scale/YaRN) or nullptr;
//             ggml_get_rope_params (n_dims, mode, n_ctx_orig, freq_base, freq_scale,
//             ext_factor, attn_factor, beta_fast, beta_slow)
//   SOFT_MAX  src0 = a, src1 = mask or nullptr; ggml_get_soft_max_scale
//   SILU, GELU, TANH  src0 = a
//   SWIGLU    src0 = a (gate), src1 = b (up): dst = silu(a) * b
//   CONCAT    src0 = a, src1 = b; ggml_get_concat_dim
//   ARGMAX    src0 = a; dst I32
//   FLASH_ATTN_EXT  src0 = q, src1 = k, src2 = v, src3 = mask or nullptr; ggml_get_flash_attn_scale,
//             ggml_get_flash_attn_softcap (0: none); dst F32 [Dv, n_head, n_q, 1] contiguous (never
//             in place)
//   MUL_MAT_ID  src0 = as [K, M, n_expert] (weights), src1 = b F32 [K, n_b, n_t],
//             src2 = ids I32 [n_used, n_t] (rows contiguous); dst F32 [M, n_used, n_t] contiguous
//   TOP_K     src0 = a (F32); ggml_get_top_k (= dst->ne[0]); dst I32 [k, ne1, ne2, ne3]
//   SUM_ROWS  src0 = a (F32); dst F32 [1, ne1, ne2, ne3]
#pragma once

#include "ggml/cpu.h"
#include "ggml/ggml.h"

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>

class ggml_cpu_threadpool;

#define GGML_CPU_N_COUNTERS 4  // chunk counters per node (one per phase of a kernel)

struct ggml_compute_params {
    int ith = 0;
    int nth = 1;
    void * wdata = nullptr;            // work buffer shared by all threads of this node
    size_t wsize = 0;
    std::atomic<int64_t> * counters = nullptr;  // GGML_CPU_N_COUNTERS, zero at node start
    ggml_cpu_isa isa = ggml_cpu_isa::scalar;    // kernel path to use
    const ggml_cpu_calibration * calibration = nullptr;  // MUL_MAT's path per weight type, under isa
    const ggml_cpu_features * features = nullptr;
    ggml_cpu_threadpool * pool = nullptr;
    std::atomic<int> * error = nullptr;         // set to 1 on a data error
    void barrier() const;                        // all nth threads meet
};

// The path MUL_MAT / MUL_MAT_ID run on for weights of type t against n_cols columns.
inline ggml_cpu_isa ggml_cpu_mul_mat_isa(const ggml_compute_params & p, ggml_type t, int64_t n_cols) {
    return p.calibration ? p.calibration->choose(t, n_cols, p.isa) : p.isa;
}

// Claims chunks of [0, n) of size chunk atomically (phase picks one of the node's counters)
// and calls fn(begin, end) for each. Every thread of the node must call it with the same
// n, chunk and phase.
template <typename F>
void ggml_cpu_parallel_for(const ggml_compute_params & p, int64_t n, int64_t chunk, F && fn, int phase = 0) {
    if (chunk < 1) chunk = 1;
    std::atomic<int64_t> & c = p.counters[phase];
    for (;;) {
        const int64_t begin = c.fetch_add(chunk, std::memory_order_relaxed);
        if (begin >= n) break;
        fn(begin, std::min(n, begin + chunk));
    }
}

// Per-thread scratch from the work buffer: ggml_cpu_op_work_size reserves, for every op but
// MUL_MAT, ggml_cpu_scratch_floats(node) floats per thread.
float * ggml_cpu_thread_scratch(const ggml_compute_params & p);
int64_t ggml_cpu_scratch_floats(const ggml_tensor * node);

// Dispatch on node->op.
void ggml_cpu_compute_forward(const ggml_compute_params & p, ggml_tensor * node);
// Bytes of work buffer the node needs with n_threads threads.
size_t ggml_cpu_op_work_size(const ggml_tensor * node, int n_threads);
// Threads worth using for this node (1 for tiny ones).
int ggml_cpu_op_n_tasks(const ggml_tensor * node, int n_threads);
// Whether the CPU kernels handle this op with these types and layouts.
bool ggml_cpu_supports_op(const ggml_tensor * node);

// ---- kernels (ops-*.cpp; mul_mat in mul-mat*.cpp) ----
void ggml_cpu_op_cont(const ggml_compute_params & p, ggml_tensor * dst);
void ggml_cpu_op_cpy(const ggml_compute_params & p, ggml_tensor * dst);
void ggml_cpu_op_get_rows(const ggml_compute_params & p, ggml_tensor * dst);
void ggml_cpu_op_set_rows(const ggml_compute_params & p, ggml_tensor * dst);
void ggml_cpu_op_add(const ggml_compute_params & p, ggml_tensor * dst);
void ggml_cpu_op_mul(const ggml_compute_params & p, ggml_tensor * dst);
void ggml_cpu_op_div(const ggml_compute_params & p, ggml_tensor * dst);
void ggml_cpu_op_scale(const ggml_compute_params & p, ggml_tensor * dst);
void ggml_cpu_op_rms_norm(const ggml_compute_params & p, ggml_tensor * dst);
void ggml_cpu_op_norm(const ggml_compute_params & p, ggml_tensor * dst);
void ggml_cpu_op_rope(const ggml_compute_params & p, ggml_tensor * dst);
void ggml_cpu_op_soft_max(const ggml_compute_params & p, ggml_tensor * dst);
void ggml_cpu_op_silu(const ggml_compute_params & p, ggml_tensor * dst);
void ggml_cpu_op_gelu(const ggml_compute_params & p, ggml_tensor * dst);
void ggml_cpu_op_tanh(const ggml_compute_params & p, ggml_tensor * dst);
void ggml_cpu_op_swiglu(const ggml_compute_params & p, ggml_tensor * dst);
void ggml_cpu_op_concat(const ggml_compute_params & p, ggml_tensor * dst);
void ggml_cpu_op_argmax(const ggml_compute_params & p, ggml_tensor * dst);
void ggml_cpu_op_sum_rows(const ggml_compute_params & p, ggml_tensor * dst);  // ops-rows.cpp
void ggml_cpu_op_top_k(const ggml_compute_params & p, ggml_tensor * dst);
void ggml_cpu_op_mul_mat(const ggml_compute_params & p, ggml_tensor * dst);
size_t ggml_cpu_mul_mat_work_size(const ggml_tensor * dst, int n_threads);
bool ggml_cpu_mul_mat_supported(const ggml_tensor * dst);
void ggml_cpu_op_mul_mat_id(const ggml_compute_params & p, ggml_tensor * dst);  // mul-mat-id.cpp
size_t ggml_cpu_mul_mat_id_work_size(const ggml_tensor * dst, int n_threads);
bool ggml_cpu_mul_mat_id_supported(const ggml_tensor * dst);
void ggml_cpu_op_flash_attn_ext(const ggml_compute_params & p, ggml_tensor * dst);  // ops-attn.cpp
size_t ggml_cpu_flash_attn_work_size(const ggml_tensor * dst, int n_threads);
bool ggml_cpu_flash_attn_supported(const ggml_tensor * dst);
