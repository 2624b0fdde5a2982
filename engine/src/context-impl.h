// The state behind engine/context.h (internal).
#pragma once

#include "engine/context.h"
#include "models/arch.h"
#include "models/graph-builder.h"
#include "models/graph-embd.h"
#include "scheduler/scheduler.h"

#include <memory>
#include <vector>

struct context_graph {
    graph_shape shape;
    ggml_context_ptr ctx;
    ggml_cgraph * gf = nullptr;
    graph_inputs in;
    graph_result out;
    bool valid = false;
};

struct context::impl {
    const model & m;
    context_params params;
    const llm_arch_def * arch = nullptr;
    std::vector<ggml_backend_ptr> backends;  // GPU ones first, the CPU last
    ggml_backend_i * cpu = nullptr;
    std::unique_ptr<ggml_scheduler> sched;
    std::unique_ptr<kv_cache> kv;      // layers that attend to every cell (nullptr when none)
    std::unique_ptr<kv_cache> kv_swa;  // sliding-window layers (nullptr when none)
    std::vector<uint32_t> full_layers, swa_layers;
    size_t graph_size = 0;
    context_graph graph;

    std::vector<float> logits;          // [n_outputs, n_vocab] of the last decode
    std::vector<int32_t> output_row;    // batch index -> row of logits, -1 when none
    std::string error;
    uint64_t n_builds = 0;
    uint64_t n_computes = 0;

    // scratch inputs, reused
    std::vector<int64_t> cells, cells_swa;
    std::vector<float> mask, mask_swa;
    std::vector<int32_t> out_ids;

    // ---- embeddings contexts (context-embd.cpp) ----
    pooling_type pooling = pooling_type::none;  // in effect
    embd_mask_rules mask_rules;
    std::unique_ptr<kv_cache> kv_empty;  // what kv() reports: one cell, never used
    std::vector<float> embd;             // pooling none: [rows, n_embd] of the last decode (output_row)
    std::vector<float> embd_seq;         // pooled: [n_seq_max, n_embd_out] of the last decode
    std::vector<uint8_t> seq_done;       // [n_seq_max]: the sequence was in the last decode
    std::vector<embd_ubatch> ubatches;
    embd_input_scratch embd_scratch;

    impl(const model & mm, const context_params & p) : m(mm), params(p) {}

    int fail(int status, std::string msg) {
        error = std::move(msg);
        return status;
    }
    bool validate(const llm_batch & b);
    void create_kv_caches();
    void init_embd();
    int32_t n_embd_out() const;
    uint32_t embd_max_seq_len() const;
    graph_shape embd_worst_shape() const;
    bool embd_plan(const llm_batch & b);
    int decode_embd(const llm_batch & b);
    int decode_embd_ubatch(const embd_ubatch & ub, int32_t & next_row);
    bool build_graph(const graph_shape & shape);
    int decode_ubatch(const llm_batch & b, size_t begin, size_t end, int32_t & next_row);
    bool apply_kv_shift();
    void start_backends();
    bool kv_shift_pending() const;
    bool apply_kv_shift_of(kv_cache & c);
    void set_cache_inputs(const llm_batch & b, size_t begin, int32_t n_tokens);
    // Each cache in turn (full, then sliding-window), skipping absent ones.
    template <typename F> void each_cache(F && f) {
        if (kv) f(*kv);
        if (kv_swa) f(*kv_swa);
    }
    // The cache the public accessors report on: the full one, else the sliding-window one.
    kv_cache & main_cache() const { return kv ? *kv : kv_swa ? *kv_swa : *kv_empty; }
    graph_caches caches() const { return {kv.get(), kv_swa.get(), params.n_ctx}; }
    int place_ubatch(const llm_batch & b, size_t begin, size_t end);
    void reserve_worst_case();
};
