// engine/model.h — a model loaded from a GGUF file: hyper-parameters, vocabulary, tokenizer and
// weights placed in backend buffers.
//
// Usage:
//   model_params mp; mp.n_gpu_layers = 0;
//   std::unique_ptr<model> m = model::load("tiny-llama-f32.gguf", mp);  // throws model_load_error
//   for (const std::string & w : m->warnings()) fprintf(stderr, "warning: %s\n", w.c_str());
//   const model_hparams & hp = m->hparams();      // n_embd, n_layer, …
//   std::vector<int32_t> ids = m->get_tokenizer().tokenize("Hello", true, false);
//   // decode with a context (engine/context.h)
//
// Loading reads `general.architecture` and the architecture-prefixed keys
// (`<arch>.embedding_length`, `<arch>.block_count`, …), finds every tensor by name and checks its
// shape and type. Errors (thrown as model_load_error, whose message names the file and the
// problem): the file is no valid GGUF; an unknown architecture (the supported ones are listed);
// a missing key; a missing tensor; a tensor with the wrong shape or an unsupported type.
// Weights on the CPU are used in place from the mapped file (no copy); with n_gpu_layers > 0 and
// GPU devices, the last n_gpu_layers layers (and the output layer when every layer is
// offloaded) are copied to the devices' buffers, spread over several GPUs in proportion to their
// free memory. Before copying, each device's weights (and with params.memory its K/V cells and
// compute buffers) are checked against its free memory: a placement that does not fit is a
// model_load_error that says how many layers would. Without a GPU device, the model says so in
// warnings() and keeps every layer on the CPU.
//
// vocab_only: reads the vocabulary and hyper-parameters-independent data only (no weights are
// needed; vocabulary-only files such as ggml-vocab-*.gguf load this way).
#pragma once

#include "engine/tokenizer.h"
#include "engine/vocab.h"
#include "ggml/backend.h"
#include "ggml/ggml.h"
#include "ggml/gguf.h"

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

class model_load_error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

enum class llm_arch { llama, qwen2, gpt2, qwen3, qwen3moe, gemma2, gemma3, phi3, bert };
const char * llm_arch_name(llm_arch arch);

enum class rope_scaling_type { none, linear, yarn };

// How an embeddings context turns a sequence's last hidden states into one vector:
// none: no pooling, one row per token (embeddings()); mean: the average of the sequence's rows;
// cls: its first token's row; last: its last token's row; rank: a reranker's score(s) from the
// first token's row through the model's classification head (cls, cls.output).
enum class pooling_type : int8_t { unspecified = -1, none = 0, mean = 1, cls = 2, last = 3, rank = 4 };
const char * pooling_type_name(pooling_type p);  // "none", "mean", "cls", "last", "rank", "unspecified"

struct model_hparams {
    llm_arch arch = llm_arch::llama;
    uint32_t n_ctx_train = 0;
    uint32_t n_embd = 0;
    uint32_t n_layer = 0;
    uint32_t n_ff = 0;
    uint32_t n_head = 0;
    uint32_t n_head_kv = 0;
    uint32_t n_embd_head_k = 0;  // head size of K (and Q)
    uint32_t n_embd_head_v = 0;  // head size of V
    uint32_t n_rot = 0;          // rotated dimensions of each head (RoPE)
    int32_t n_vocab = 0;
    float norm_eps = 1e-5f;      // RMSNorm or LayerNorm epsilon
    bool use_rope = true;        // false: learned position embeddings (gpt2)
    int rope_mode = 0;           // GGML_ROPE_TYPE_NORMAL or _NEOX
    float rope_freq_base = 10000.0f;
    float rope_freq_scale = 1.0f;  // 1 / linear scaling factor
    rope_scaling_type rope_scaling = rope_scaling_type::none;
    uint32_t rope_n_ctx_orig = 0;  // the training context before scaling
    float yarn_ext_factor = 0.0f;
    float yarn_attn_factor = 1.0f;
    float yarn_beta_fast = 32.0f;
    float yarn_beta_slow = 1.0f;

    // Mixture of experts (n_expert > 0): a router picks n_expert_used of n_expert feed-forward
    // blocks of width n_ff_exp per token; their outputs are summed with the router's softmax
    // weights, renormalized over the chosen experts.
    uint32_t n_expert = 0;
    uint32_t n_expert_used = 0;
    uint32_t n_ff_exp = 0;

    // Sliding-window attention: on the layers marked in swa_layers a token sees only the
    // n_swa positions ending at its own (p - n_swa < cell position <= p). Those layers use
    // their own RoPE base and scale.
    uint32_t n_swa = 0;
    std::vector<uint8_t> swa_layers;  // [n_layer], 1 for a sliding-window layer
    float rope_freq_base_swa = 10000.0f;
    float rope_freq_scale_swa = 1.0f;

    // Scores of attention: scale (0: 1/sqrt(n_embd_head_k)) and soft-cap c (0: none), the
    // scores become c * tanh(s / c); the final logits likewise with final_softcap.
    float attn_scale = 0.0f;
    float attn_softcap = 0.0f;
    float final_softcap = 0.0f;
    float embd_scale = 0.0f;  // input embeddings multiplied by it (0: not scaled)

    // Embeddings: the file's pooling (`<arch>.pooling_type`: 0 none, 1 mean, 2 cls, 3 last,
    // 4 rank; unspecified when absent), whether attention is causal (`<arch>.attention.causal`;
    // absent: true, except for encoders such as bert), and the classification head's outputs
    // (the rows of cls.output; 0 without a head).
    pooling_type pooling = pooling_type::unspecified;
    bool causal_attn = true;
    uint32_t n_cls_out = 0;

    uint32_t n_embd_k_gqa() const { return n_embd_head_k * n_head_kv; }
    uint32_t n_embd_v_gqa() const { return n_embd_head_v * n_head_kv; }
    uint32_t n_gqa() const { return n_head / n_head_kv; }
    bool is_swa(uint32_t il) const { return n_swa > 0 && il < swa_layers.size() && swa_layers[il] != 0; }
    bool has_swa() const;     // some layer uses the sliding window
    bool has_global() const;  // some layer attends to every cell
    float kq_scale() const;   // attn_scale, or 1/sqrt(n_embd_head_k)
};

// Weights of one block; tensors an architecture does not use are nullptr.
struct model_layer {
    ggml_tensor * attn_norm = nullptr;    // [n_embd]
    ggml_tensor * attn_norm_b = nullptr;  // [n_embd] (LayerNorm)
    ggml_tensor * wq = nullptr;           // [n_embd, n_head * head_k]
    ggml_tensor * wk = nullptr;           // [n_embd, n_embd_k_gqa]
    ggml_tensor * wv = nullptr;           // [n_embd, n_embd_v_gqa]
    ggml_tensor * bq = nullptr, * bk = nullptr, * bv = nullptr;
    ggml_tensor * wqkv = nullptr;         // fused [n_embd, n_embd + 2 * n_embd_gqa]
    ggml_tensor * bqkv = nullptr;
    ggml_tensor * wo = nullptr;           // [n_head * head_v, n_embd]
    ggml_tensor * bo = nullptr;
    ggml_tensor * ffn_norm = nullptr;     // [n_embd]
    ggml_tensor * ffn_norm_b = nullptr;
    ggml_tensor * ffn_gate = nullptr;     // [n_embd, n_ff]
    ggml_tensor * ffn_up = nullptr;       // [n_embd, n_ff]
    ggml_tensor * ffn_up_b = nullptr;
    ggml_tensor * ffn_down = nullptr;     // [n_ff, n_embd]
    ggml_tensor * ffn_down_b = nullptr;
    ggml_tensor * attn_q_norm = nullptr;  // [head_k] per-head RMSNorm of Q (qwen3, gemma3)
    ggml_tensor * attn_k_norm = nullptr;  // [head_k]
    ggml_tensor * attn_post_norm = nullptr;  // [n_embd] after attention (gemma)
    ggml_tensor * ffn_post_norm = nullptr;   // [n_embd] after the feed-forward (gemma)
    // post-norm blocks (bert): LayerNorm after the attention's residual and after the block's
    ggml_tensor * attn_out_norm = nullptr;   // [n_embd]
    ggml_tensor * attn_out_norm_b = nullptr;
    ggml_tensor * layer_out_norm = nullptr;  // [n_embd]
    ggml_tensor * layer_out_norm_b = nullptr;
    // mixture of experts
    ggml_tensor * ffn_gate_inp = nullptr;   // [n_embd, n_expert] router
    ggml_tensor * ffn_gate_exps = nullptr;  // [n_embd, n_ff_exp, n_expert]
    ggml_tensor * ffn_up_exps = nullptr;    // [n_embd, n_ff_exp, n_expert]
    ggml_tensor * ffn_down_exps = nullptr;  // [n_ff_exp, n_embd, n_expert]
};

struct model_weights {
    ggml_tensor * tok_embd = nullptr;       // [n_embd, n_vocab]
    ggml_tensor * pos_embd = nullptr;       // [n_embd, n_ctx_train] (gpt2, bert)
    ggml_tensor * type_embd = nullptr;      // [n_embd, n_token_types] token type embeddings (bert)
    ggml_tensor * tok_norm = nullptr;       // [n_embd] LayerNorm of the input embeddings (bert)
    ggml_tensor * tok_norm_b = nullptr;
    ggml_tensor * output_norm = nullptr;    // [n_embd]
    ggml_tensor * output_norm_b = nullptr;
    ggml_tensor * output = nullptr;         // [n_embd, n_vocab]; tok_embd when tied; nullptr: no logits (bert)
    // Classification head (rerankers): dense + tanh, then the output layer; each optional.
    ggml_tensor * cls = nullptr;            // [n_embd, n_embd]
    ggml_tensor * cls_b = nullptr;          // [n_embd]
    ggml_tensor * cls_out = nullptr;        // [n_embd, n_cls_out]
    ggml_tensor * cls_out_b = nullptr;      // [n_cls_out]
    ggml_tensor * rope_freqs = nullptr;     // [n_rot / 2] RoPE frequency factors (Llama 3.1+), optional
    // LongRoPE (phi3): factors for contexts beyond the original training context and within it
    ggml_tensor * rope_long = nullptr;      // [n_rot / 2], optional
    ggml_tensor * rope_short = nullptr;     // [n_rot / 2], optional
    std::vector<model_layer> layers;
};

// The context a model will serve, as far as device memory is concerned: with n_ctx > 0 the
// loader counts, for every device that gets layers, their weights, their K/V cells and an
// estimate of the compute buffers, and refuses (model_load_error) a placement that does not fit
// the device's free memory before any weight is copied. n_ctx 0: only the weights are counted.
struct model_memory_hint {
    uint32_t n_ctx = 0;
    uint32_t n_ubatch = 512;
    uint32_t n_seq_max = 1;
    uint32_t kv_pad = 256;
    ggml_type type_k = GGML_TYPE_F16;
    ggml_type type_v = GGML_TYPE_F16;
    bool flash_attn = true;  // false: the plain path's score matrix counts too
};

struct model_params {
    // Layers to put on GPU devices (the last ones; spread over several GPUs in proportion to
    // their free memory); the output layer too when n_gpu_layers exceeds the layer count; < 0: all.
    int32_t n_gpu_layers = 0;
    bool use_mmap = true;      // false: read the file into memory (weights still not copied)
    // Lock the weights in RAM (mlock: the file's bytes and the repacked copies), so that they
    // are never paged out; a refusal (RLIMIT_MEMLOCK) becomes a warning, not an error.
    bool use_mlock = false;
    // CPU weights read only by mul_mat (Q4_0, Q4_1, Q5_0, Q8_0, Q2_K … Q6_K, IQ4_NL, IQ4_XS,
    // MXFP4) repacked at load time into the interleaved layout of the CPU kernels (the file's pages are then
    // released); false, or the environment variable INFERD_NO_REPACK=1, keeps every weight in
    // place in the file. Not done when a GPU device is available to the model (its backends
    // may read the weights).
    bool repack = true;
    bool vocab_only = false;
    // GPU devices to use; empty: the GPU devices of ggml_backend_registry_default().
    std::vector<ggml_backend_device_i *> devices;
    model_memory_hint memory;
};

// What one device holds of a model, and what it has (model::device_usage()).
struct model_device_usage {
    ggml_backend_device_i * device = nullptr;
    uint32_t n_layers = 0;        // layers placed there
    bool output = false;          // the output layer too
    uint64_t weight_bytes = 0;
    uint64_t kv_bytes = 0;        // K/V cells of its layers for model_params::memory (0 without)
    uint64_t compute_bytes = 0;   // estimated compute buffers (0 without model_params::memory)
    size_t free = 0, total = 0;   // the device's memory when the model was placed
};

class model {
public:
    static std::unique_ptr<model> load(const std::string & path, const model_params & params);
    ~model();
    model(const model &) = delete;
    model & operator=(const model &) = delete;

    const std::string & path() const { return path_; }
    const gguf_file & file() const { return *file_; }
    const model_hparams & hparams() const { return hparams_; }
    const model_weights & weights() const { return weights_; }
    const vocab & get_vocab() const { return vocab_; }
    const tokenizer & get_tokenizer() const { return tokenizer_; }
    bool vocab_only() const { return vocab_only_; }
    // tokenizer.chat_template, "" when absent.
    const std::string & chat_template() const { return chat_template_; }
    // A named variant, tokenizer.chat_template.NAME ("tool_use", "rag"); "" when absent or not a
    // string.
    std::string chat_template_named(std::string_view name) const;
    // "llama 256x4 Q4_K_M"-style one-line description; parameter count and weight bytes.
    std::string description() const;
    // The file's general.file_type as quantizers name it ("Q4_K_M", "Q8_0", "F16", "BF16", …);
    // "" when the key is absent or holds an unknown id.
    std::string file_type_name() const;
    uint64_t n_params() const { return n_params_; }
    uint64_t n_weight_bytes() const { return n_weight_bytes_; }
    const std::vector<std::string> & warnings() const { return warnings_; }

    // Placement: the device of a layer's weights (nullptr: the CPU), and of the output layer.
    ggml_backend_device_i * layer_device(uint32_t il) const { return layer_dev_.at(il); }
    ggml_backend_device_i * output_device() const { return output_dev_; }
    // Every distinct GPU device holding weights, in priority order.
    const std::vector<ggml_backend_device_i *> & gpu_devices() const { return gpu_devs_; }
    // Every GPU device found (or given in model_params::devices), holding weights or not: large
    // batches of CPU-resident weights may still run there.
    const std::vector<ggml_backend_device_i *> & available_gpu_devices() const { return avail_gpus_; }
    // The CPU device of the registry the model was placed with.
    ggml_backend_device_i * cpu_device() const { return cpu_dev_; }
    // Per GPU device holding weights: what it holds and the memory counted for it.
    const std::vector<model_device_usage> & device_usage() const { return usage_; }
    // The output matrix is the token embeddings (weights().output may be a device copy of them).
    bool output_tied() const { return output_tied_; }

private:
    model() = default;
    friend class model_loader;
    static void place_and_load(model & m, const struct llm_arch_def & def, const model_params & params);

    std::string path_;
    std::unique_ptr<ggml_backend_registry> registry_;  // owns the devices when found here
    std::unique_ptr<gguf_file> file_;
    model_hparams hparams_;
    model_weights weights_;
    vocab vocab_;
    tokenizer tokenizer_;
    bool vocab_only_ = false;
    std::string chat_template_;
    uint64_t n_params_ = 0;
    uint64_t n_weight_bytes_ = 0;
    std::vector<std::string> warnings_;
    std::vector<ggml_backend_device_i *> layer_dev_;
    ggml_backend_device_i * output_dev_ = nullptr;
    std::vector<ggml_backend_device_i *> gpu_devs_;
    std::vector<ggml_backend_device_i *> avail_gpus_;
    ggml_backend_device_i * cpu_dev_ = nullptr;
    std::vector<model_device_usage> usage_;
    bool output_tied_ = false;
    ggml_context_ptr ctx_cpu_;                     // weight tensors on the CPU (no_alloc)
    std::vector<ggml_context_ptr> ctx_dev_;        // per GPU device of gpu_devs_
    std::vector<ggml_backend_buffer_ptr> buffers_; // the file-backed CPU buffer, device buffers
    std::vector<std::pair<void *, size_t>> locked_; // mlocked ranges of buffers_, unlocked before they go
};
