// Prompts of different lengths (7, 10, 13, … tokens: BOS then ids from the stories260K
// vocabulary) shared by the batch-loop tests.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

inline std::vector<std::vector<int32_t>> prompts_for_test(size_t n) {
    std::vector<std::vector<int32_t>> out;
    for (size_t i = 0; i < n; ++i) {
        std::vector<int32_t> p = {1};
        for (size_t k = 0; k < 6 + 3 * i; ++k) p.push_back(int32_t(259 + (i * 37 + k * 11) % 250));
        out.push_back(p);
    }
    return out;
}
