// The state behind engine/context.h (internal).
#pragma once

#include "engine/context.h"
#include "models/arch.h"
#include "models/graph-builder.h"
#include "scheduler/scheduler.h"

#include <memory>
#include <vector>

struct context_graph {
    graph_shape shape;
    ggml_context_ptr ctx;
    ggml_cgraph * gf = nullptr;
    graph_inputs in;
    ggml_tensor * logits = nullptr;
    bool valid = false;
};

struct context::impl {
    const model & m;
    context_params params;
    const llm_arch_def * arch = nullptr;
    std::vector<ggml_backend_ptr> backends;  // GPU ones first, the CPU last
    ggml_backend_i * cpu = nullptr;
    std::unique_ptr<ggml_scheduler> sched;
    std::unique_ptr<kv_cache> kv;
    size_t graph_size = 0;
    context_graph graph;

    std::vector<float> logits;          // [n_outputs, n_vocab] of the last decode
    std::vector<int32_t> output_row;    // batch index -> row of logits, -1 when none
    std::string error;
    uint64_t n_builds = 0;
    uint64_t n_computes = 0;

    // scratch inputs, reused
    std::vector<int64_t> cells;
    std::vector<float> mask;
    std::vector<int32_t> out_ids;

    impl(const model & mm, const context_params & p) : m(mm), params(p) {}

    int fail(int status, std::string msg) {
        error = std::move(msg);
        return status;
    }
    bool validate(const llm_batch & b);
    bool build_graph(const graph_shape & shape);
    int decode_ubatch(const llm_batch & b, size_t begin, size_t end, int32_t & next_row);
    bool apply_kv_shift();
    void reserve_worst_case();
};
