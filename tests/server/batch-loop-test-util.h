// What the batch-loop tests share: a loop's parameters (F32 cache, 2 threads) and prompts of
// different lengths (7, 10, 13, … tokens: BOS then ids from the stories260K vocabulary).
#pragma once

#include "server/batch-loop.h"

#include <cstddef>
#include <cstdint>
#include <vector>

inline batch_loop_params loop_params(uint32_t n_parallel, uint32_t n_ctx = 512) {
    batch_loop_params p;
    p.n_parallel = n_parallel;
    p.ctx.n_ctx = n_ctx;
    p.ctx.n_threads = 2;
    p.ctx.type_k = p.ctx.type_v = GGML_TYPE_F32;
    return p;
}

inline std::vector<std::vector<int32_t>> prompts_for_test(size_t n) {
    std::vector<std::vector<int32_t>> out;
    for (size_t i = 0; i < n; ++i) {
        std::vector<int32_t> p = {1};
        for (size_t k = 0; k < 6 + 3 * i; ++k) p.push_back(int32_t(259 + (i * 37 + k * 11) % 250));
        out.push_back(p);
    }
    return out;
}
