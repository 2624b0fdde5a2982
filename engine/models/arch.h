// engine/models/arch.h — what one architecture file provides (internal to the engine).
//
// Each file under engine/models/ (llama.cpp, qwen2.cpp, gpt2.cpp) defines one llm_arch_def:
// how to read its hyper-parameters, which tensors it needs (with their shapes), and how to build
// its compute graph on the shared graph builder (graph-builder.h).
#pragma once

#include "engine/model.h"

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

class graph_builder;
class gguf_metadata;

// Reads `<arch>.<key>` values; required ones throw model_load_error naming the key.
class hparams_reader {
public:
    hparams_reader(const gguf_metadata & md, std::string prefix) : md_(md), prefix_(std::move(prefix)) {}
    uint32_t u32(std::string_view key) const;                     // required
    uint32_t u32_or(std::string_view key, uint32_t def) const;
    float f32(std::string_view key) const;                        // required
    float f32_or(std::string_view key, float def) const;
    std::string str_or(std::string_view key, std::string def) const;
    bool has(std::string_view key) const;

private:
    std::string full(std::string_view key) const { return prefix_ + "." + std::string(key); }
    const gguf_metadata & md_;
    std::string prefix_;
};

// Finds weight tensors by name, checks their shapes, and creates them on the device their layer
// lives on. il = -1 for tensors outside the blocks (input side), -2 for the output side.
class tensor_creator {
public:
    virtual ~tensor_creator() = default;
    // Throws model_load_error when the tensor is missing or its shape differs.
    virtual ggml_tensor * create(const std::string & name, std::initializer_list<int64_t> ne, int il) = 0;
    // nullptr when the file does not have it; a wrong shape still throws.
    virtual ggml_tensor * create_optional(const std::string & name, std::initializer_list<int64_t> ne, int il) = 0;
};

// "blk.<il>.<suffix>"
std::string llm_tensor_name(int il, const char * suffix);

struct llm_arch_def {
    llm_arch arch;
    const char * name;  // general.architecture value
    void (*load_hparams)(const hparams_reader & r, model_hparams & hp);
    void (*create_tensors)(tensor_creator & c, const model_hparams & hp, model_weights & w);
    // Logits [n_vocab, n_outputs] of the ubatch described by the builder.
    ggml_tensor * (*build_graph)(graph_builder & b);
};

extern const llm_arch_def llm_arch_llama;
extern const llm_arch_def llm_arch_qwen2;
extern const llm_arch_def llm_arch_gpt2;

// nullptr for an architecture not implemented here.
const llm_arch_def * llm_arch_find(std::string_view name);
// "llama, qwen2, gpt2"
std::string llm_arch_list();

// Shared hyper-parameter reading of the decoder-only families: context, widths, heads, head
// sizes (key_length / value_length when present), norm epsilon under the given key.
void llm_load_common_hparams(const hparams_reader & r, model_hparams & hp, const char * eps_key);
// RoPE keys: rope.dimension_count, rope.freq_base, rope.scaling.{type,factor,
// original_context_length,attn_factor}, rope.scale_linear, YaRN betas.
void llm_load_rope_hparams(const hparams_reader & r, model_hparams & hp);
