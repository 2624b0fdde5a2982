// tools/common/gguf-synth-impl.h — internals of inferd-gguf synth shared by its units (and the
// tests): the architecture table, the tensor list and the seeded fill.
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
    router,  // expert routers: approximately normal, standard deviation 1 / sqrt(ne[0])
};

// What an architecture has (one row per --arch; synth_arch_find).
struct synth_arch {
    const char * name = "";
    const char * chat_template = "chatml";  // the default family of the built-in vocabulary
    int n_ctx = 4096;                // default context length
    float norm_eps = 1e-5f;          // RMS norm epsilon (gpt2, bert: LayerNorm epsilon)
    float rope_base = 0.0f;          // default rope.freq_base (0: no RoPE)
    bool rope_dim_key = false;       // writes rope.dimension_count
    bool rope_base_key = false;      // writes rope.freq_base without --rope-base
    bool head_dim_keys = false;      // attention.key_length / value_length; --head-dim allowed
    bool qk_norm = false;            // attn_q_norm / attn_k_norm [head_dim]
    bool post_norms = false;         // post_attention_norm / post_ffw_norm
    bool tied = false;               // no output.weight by default
    bool untie = false;              // --untied-output allowed
    int moe = 0;                     // 0: no experts, 1: optional (llama: Mixtral), 2: required
    int sliding_window = 0;          // default attention.sliding_window (0: the arch has none)
    bool rope_swa = false;           // rope.freq_base_swa
    bool softcaps = false;           // attn_logit_softcapping / final_logit_softcapping
    bool quant_version_key = false;  // writes general.quantization_version
    bool encoder = false;            // BERT-style encoder: no causal mask, pooling, WordPiece
                                     // vocabulary, no chat template, no grouped-query attention
};

// The row of `name`, or nullptr.
const synth_arch * synth_arch_find(const std::string & name);

// The architecture's hyper-parameter keys (NAME.*) and general.quantization_version, for checked p.
void synth_arch_metadata(const synth_params & p, gguf_metadata * md);

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
