// tests/ggml/quant-dot-test-data.h — the random data the quantized dot-product tests share.
//
//   quant_dot_test::rng g{42};
//   std::vector<uint8_t> acts = quant_dot_test::random_acts(GGML_TYPE_Q8_0, k, cols, row_bytes, g);
#pragma once

#include <algorithm>

#include "ggml/cpu.h"
#include "ggml/ggml.h"

#include <cmath>
#include <cstdint>
#include <vector>

namespace quant_dot_test {

// splitmix64: reproducible values.
struct rng {
    uint64_t s;
    uint64_t next() {
        uint64_t z = (s += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
    }
    double uniform() { return double(next() >> 11) / double(1ull << 53) * 2.0 - 1.0; }  // [-1, 1)
    int64_t below(int64_t n) { return int64_t(next() % uint64_t(n)); }                    // [0, n)
};

// Index of the best quantized-kernel set this CPU runs: 0 scalar, 1 avx2, 2 avx512 (the amx path
// uses the avx512 kernels for quantized weights).
inline int best_isa() { return std::min(int(ggml_cpu_detect_features().best_isa()), int(ggml_cpu_isa::avx512)); }

// Random activations of type at (cols rows of k values, ld bytes apart), quantized by the
// reference quantizer: per 32 values uniform values, a constant (all codes at the end), zeros,
// or one outlier among small values. 64 guard bytes follow.
inline std::vector<uint8_t> random_acts(ggml_type at, int64_t k, int64_t cols, size_t ld, rng & g) {
    std::vector<uint8_t> mem(ld * size_t(cols) + 64, 0xA5);
    std::vector<float> x(static_cast<size_t>(k));
    for (int64_t c = 0; c < cols; ++c) {
        for (int64_t i = 0; i < k; i += 32) {
            const uint64_t kind = g.next() % 8;
            const double scale = std::pow(10.0, 2.0 * g.uniform());
            for (int j = 0; j < 32; ++j) {
                double v = g.uniform() * scale;
                if (kind == 1) v = scale;
                if (kind == 2) v = -scale;
                if (kind == 3) v = 0.0;
                if (kind == 4) v = j == 7 ? 100.0 * scale : v * 0.01;
                x[size_t(i + j)] = float(v);
            }
        }
        ggml_get_type_traits(at).from_float(x.data(), mem.data() + size_t(c) * ld, k);
    }
    return mem;
}

}  // namespace quant_dot_test
