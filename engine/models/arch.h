// engine/models/arch.h — what one architecture file provides (internal to the engine).
//
// Each file under engine/models/ (llama, qwen2, qwen3, qwen3moe, gpt2, gemma2, gemma3, phi3, bert)
// defines one llm_arch_def: how to read its hyper-parameters, which tensors it needs (with their
// shapes), and how to build its compute graph on the shared graph builder (graph-builder.h).
#pragma once

#include "engine/model.h"

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

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
    bool bool_or(std::string_view key, bool def) const;
    std::string str_or(std::string_view key, std::string def) const;
    bool has(std::string_view key) const;
    // An array of bools or integers (one per layer); false when the key is absent or not such an array.
    bool u32_array(std::string_view key, std::vector<uint32_t> & out) const;

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
    // The output matrix when the file ties it to the token embeddings: tok_embd itself, or a
    // copy of it on the output layer's device.
    virtual ggml_tensor * create_tied_output(ggml_tensor * tok_embd) = 0;
    // The file's size of dimension dim of a tensor (1 past its dimensions); -1 when it has no
    // such tensor. For sizes that only the tensor tells (classification outputs, token types).
    virtual int64_t file_ne(const std::string & name, int dim) const = 0;
};

// What a graph yields, as the context asks for it (graph_shape::embd): logits
// [n_vocab, n_outputs]; or token embeddings [n_embd, n_outputs] (the last hidden states after
// the final norm, pooling none) or pooled embeddings [n_embd_out, n_seqs]. The others nullptr.
struct graph_result {
    ggml_tensor * logits = nullptr;
    ggml_tensor * embd = nullptr;
    ggml_tensor * embd_pooled = nullptr;
};

// "blk.<il>.<suffix>"
std::string llm_tensor_name(int il, const char * suffix);

struct llm_arch_def {
    llm_arch arch;
    const char * name;  // general.architecture value
    void (*load_hparams)(const hparams_reader & r, model_hparams & hp);
    void (*create_tensors)(tensor_creator & c, const model_hparams & hp, model_weights & w);
    // The result of the ubatch described by the builder (graph_builder::build_output).
    graph_result (*build_graph)(graph_builder & b);
};

extern const llm_arch_def llm_arch_llama;
extern const llm_arch_def llm_arch_qwen2;
extern const llm_arch_def llm_arch_gpt2;
extern const llm_arch_def llm_arch_qwen3;
extern const llm_arch_def llm_arch_qwen3moe;
extern const llm_arch_def llm_arch_gemma2;
extern const llm_arch_def llm_arch_gemma3;
extern const llm_arch_def llm_arch_phi3;
extern const llm_arch_def llm_arch_bert;

// nullptr for an architecture not implemented here.
const llm_arch_def * llm_arch_find(std::string_view name);
// "llama, qwen2, …"
std::string llm_arch_list();

// Shared hyper-parameter reading of the decoder-only families: context, widths, heads, head
// sizes (key_length / value_length when present), norm epsilon under the given key.
void llm_load_common_hparams(const hparams_reader & r, model_hparams & hp, const char * eps_key);
// RoPE keys: rope.dimension_count, rope.freq_base, rope.scaling.{type,factor,
// original_context_length,attn_factor}, rope.scale_linear, YaRN betas.
void llm_load_rope_hparams(const hparams_reader & r, model_hparams & hp);
// Embeddings keys of every architecture: pooling_type and attention.causal (the latter keeps
// what load_hparams set when absent).
void llm_load_embd_hparams(const hparams_reader & r, model_hparams & hp);
// Mixture-of-experts keys: expert_count, expert_used_count and the experts' width
// (expert_feed_forward_length, else feed_forward_length). Nothing when expert_count is absent or 0.
void llm_load_moe_hparams(const hparams_reader & r, model_hparams & hp);
// Sliding-window keys: attention.sliding_window (0 or absent: none) and which layers use it:
// attention.sliding_window_pattern (a period P: layer il is local unless il % P == P - 1; or a
// per-layer array), else default_period (0: every layer local). RoPE of the local layers:
// rope.freq_base_swa (default: the global base) with no scaling.
void llm_load_swa_hparams(const hparams_reader & r, model_hparams & hp, uint32_t default_period);

// Tensors of a mixture-of-experts feed-forward block (router and the three expert tensors).
void llm_create_moe_tensors(tensor_creator & c, const model_hparams & hp, model_layer & l, int il);
// Tensors of the llama family (llama, Mixtral, qwen2, qwen3, qwen3moe): separate Q/K/V (biases
// required with with_bias, else optional), optional per-head Q/K norms (required with
// with_qk_norm), dense SwiGLU or experts (hp.n_expert > 0).
void llm_create_llama_like_tensors(tensor_creator & c, const model_hparams & hp, model_weights & w, bool with_bias,
                                   bool with_qk_norm);

// The Gemma family (gemma2.cpp): embedding scale sqrt(n_embd) and the query scale
// (attention.scale, else 1/sqrt(n_embd / n_head) for the 27B models, recognised by their layer
// count, else the head size's); tensors with post-attention / post-FFN norms (per-head Q/K norms
// with with_qk_norm); the graph.
void llm_load_gemma_scales(const hparams_reader & r, model_hparams & hp, uint32_t n_layer_27b);
void llm_create_gemma_tensors(tensor_creator & c, const model_hparams & hp, model_weights & w, bool with_qk_norm);
graph_result llm_build_gemma(graph_builder & b);
