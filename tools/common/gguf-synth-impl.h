// tools/common/gguf-synth-impl.h — internals of inferd-gguf synth shared by its units (and the
// tests): the architecture table, the tensor list and the seeded fill.
#pragma once

#include "gguf-synth.h"

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

enum class synth_init {
    matrix,         // approximately normal, standard deviation 0.02
    bias,           // approximately normal, standard deviation 0.01
    ones,           // norm weights
    router,         // expert routers: approximately normal, standard deviation 1 / sqrt(ne[0])
    small,          // --confident's layer matrices: approximately normal, standard deviation 0.002
    bigram_embd,    // --confident's token_embd: row t = synth_bigram_row(seed, t)
    bigram_output,  // --confident's output: row j = the sum of the rows of the tokens that predict j
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
    int64_t next_first = 0;  // bigram_*: the predicted tokens are next_first .. next_first + next_count - 1
    int64_t next_count = 0;

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

// Random numbers of the fill.
inline uint64_t splitmix64(uint64_t * state) {
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

// xoshiro256**, seeded through splitmix64.
struct synth_rng {
    uint64_t s[4];

    explicit synth_rng(uint64_t seed) {
        for (uint64_t & w : s) w = splitmix64(&seed);
    }
    uint64_t next() {
        const uint64_t result = rotl(s[1] * 5, 7) * 9;
        const uint64_t t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = rotl(s[3], 45);
        return result;
    }
    // Approximately normal with standard deviation `sd`: the sum of the four 16-bit parts of one
    // draw (Irwin-Hall, n = 4: mean 4 * 32767.5, standard deviation 65536 / sqrt(3)).
    float normal(float sd) {
        const uint64_t r = next();
        const uint32_t sum = uint32_t(r & 0xFFFF) + uint32_t((r >> 16) & 0xFFFF) + uint32_t((r >> 32) & 0xFFFF) +
                             uint32_t(r >> 48);
        constexpr float k_scale = 1.7320508f / 65536.0f;  // 1 / (65536 / sqrt(3))
        return (float(sum) - 131070.0f) * k_scale * sd;
    }
};

// Every tensor of the model, in file order, for checked params.
std::vector<synth_tensor> synth_tensor_list(const synth_params & p);

// Elements per independently seeded block.
constexpr int64_t k_synth_block = 65536;

// Fills `dst` (n_elements of t.type, F16 or F32) with tensor number `index`'s values for `seed`,
// n_threads threads; the bytes depend on (seed, index, t) only.
void synth_fill_tensor(const synth_tensor & t, size_t index, uint64_t seed, void * dst, int n_threads);

// --confident: the token each token predicts: first + (u + s) mod count, u = t - first for
// t >= first and t below it; s (about 0.618 count, coprime with count) makes the tokens
// first .. first + count - 1 one cycle.
int64_t synth_bigram_next(int64_t t, int64_t first, int64_t count);

// --confident: token t's embedding row (n_embd values, approximately normal with standard
// deviation 1), from its own generator seeded by (seed, t).
void synth_bigram_row(uint64_t seed, int64_t t, float * out, int64_t n_embd);

// Fills a bigram_embd or bigram_output tensor (F16 or F32), n_threads threads.
void synth_fill_bigram(const synth_tensor & t, uint64_t seed, void * dst, int n_threads);

// --confident: sets the inits of list (checked p with confident set): the bigram token_embd and
// output, small layer matrices; the predicted tokens are the built-in vocabulary's merged ones.
void synth_confident_apply(const synth_params & p, std::vector<synth_tensor> * list);
