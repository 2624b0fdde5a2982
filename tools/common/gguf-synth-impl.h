// tools/common/gguf-synth-impl.h — internals of inferd-gguf synth shared by its units (and the
// tests): the tensor list and the seeded fill.
#pragma once

#include "gguf-synth.h"

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

enum class synth_init {
    matrix,  // approximately normal, standard deviation 0.02
    bias,    // approximately normal, standard deviation 0.01
    ones,    // norm weights
};

struct synth_tensor {
    std::string name;
    ggml_type type = GGML_TYPE_F32;
    std::vector<int64_t> ne;
    synth_init init = synth_init::matrix;

    int64_t n_elements() const {
        int64_t n = 1;
        for (int64_t d : ne) n *= d;
        return n;
    }
};

// float -> F16 bits, rounded to nearest even: the same bits as ggml_fp32_to_fp16, inline and
// branch-free for results in F16's normal range (the rare others go to ggml_fp32_to_fp16).
inline uint16_t synth_f32_to_f16(float f) {
    uint32_t x;
    std::memcpy(&x, &f, sizeof(x));
    const uint32_t abs = x & 0x7fffffffu;
    if (abs - 0x38800000u >= 0x477ff000u - 0x38800000u) return ggml_fp32_to_fp16(f);  // zero, subnormal, inf, …
    const uint32_t rebased = abs - (112u << 23);  // exponent rebiased from 127 to 15
    return uint16_t(((x >> 16) & 0x8000u) | ((rebased + 0xfffu + ((rebased >> 13) & 1u)) >> 13));
}

// Every tensor of the model, in file order, for checked params.
std::vector<synth_tensor> synth_tensor_list(const synth_params & p);

// Elements per independently seeded block.
constexpr int64_t k_synth_block = 65536;

// Fills `dst` (n_elements of t.type, F16 or F32) with tensor number `index`'s values for `seed`,
// n_threads threads; the bytes depend on (seed, index, t) only.
void synth_fill_tensor(const synth_tensor & t, size_t index, uint64_t seed, void * dst, int n_threads);
