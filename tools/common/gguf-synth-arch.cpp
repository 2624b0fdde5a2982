// inferd-gguf synth: the architectures — what each has, its hyper-parameter keys and its tensors.
#include "gguf-synth-impl.h"

namespace {

constexpr synth_arch k_archs[] = {
    {.name = "llama", .rope_base = 1e4f, .rope_dim_key = true, .rope_base_key = true, .moe = 1},
    {.name = "qwen2", .norm_eps = 1e-6f, .rope_base = 1e6f, .rope_dim_key = true, .rope_base_key = true,
     .tied = true, .untie = true},
    {.name = "gpt2", .n_ctx = 1024, .tied = true},
    {.name = "qwen3", .norm_eps = 1e-6f, .rope_base = 1e6f, .rope_base_key = true, .head_dim_keys = true,
     .qk_norm = true, .tied = true, .untie = true, .quant_version_key = true},
    {.name = "qwen3moe", .norm_eps = 1e-6f, .rope_base = 1e6f, .rope_base_key = true, .head_dim_keys = true,
     .qk_norm = true, .tied = true, .untie = true, .moe = 2, .quant_version_key = true},
    {.name = "gemma2", .chat_template = "gemma", .n_ctx = 8192, .norm_eps = 1e-6f, .rope_base = 1e4f,
     .head_dim_keys = true, .post_norms = true, .tied = true, .sliding_window = 4096, .softcaps = true,
     .quant_version_key = true},
    {.name = "gemma3", .chat_template = "gemma", .n_ctx = 8192, .norm_eps = 1e-6f, .rope_base = 1e6f,
     .rope_base_key = true, .head_dim_keys = true, .qk_norm = true, .post_norms = true, .tied = true,
     .sliding_window = 512, .rope_swa = true, .quant_version_key = true},
    {.name = "phi3", .chat_template = "phi3", .rope_base = 1e4f, .rope_dim_key = true, .rope_base_key = true,
     .sliding_window = 2047, .quant_version_key = true},
    {.name = "bert", .chat_template = "", .n_ctx = 512, .norm_eps = 1e-12f, .quant_version_key = true,
     .encoder = true},
};

gguf_value u32(int v) { return gguf_value::from_u32(uint32_t(v)); }

void synth_moe_metadata(const synth_params & p, gguf_metadata * md) {
    const std::string & a = p.arch;
    md->set(a + ".expert_count", u32(p.n_expert));
    md->set(a + ".expert_used_count", u32(p.n_expert_used));
    if (a == "qwen3moe") md->set(a + ".expert_feed_forward_length", u32(p.n_ff_exp));
    if (a == "llama") md->set(a + ".vocab_size", u32(p.n_vocab));  // as Mixtral conversions carry
}

void synth_push_attention(const synth_params & p, const synth_arch & arch, const std::string & b,
                          std::vector<synth_tensor> * t) {
    const int64_t e = p.n_embd, hd = p.head_dim;
    const int64_t q = hd * p.n_head, kv = hd * p.n_head_kv;
    const ggml_type m = p.type;
    t->push_back({b + "attn_q.weight", m, {e, q}, synth_init::matrix});
    t->push_back({b + "attn_k.weight", m, {e, kv}, synth_init::matrix});
    t->push_back({b + "attn_v.weight", m, {e, kv}, synth_init::matrix});
    if (p.arch == "qwen2") {
        t->push_back({b + "attn_q.bias", GGML_TYPE_F32, {q}, synth_init::bias});
        t->push_back({b + "attn_k.bias", GGML_TYPE_F32, {kv}, synth_init::bias});
        t->push_back({b + "attn_v.bias", GGML_TYPE_F32, {kv}, synth_init::bias});
    }
    if (arch.qk_norm) {
        t->push_back({b + "attn_q_norm.weight", GGML_TYPE_F32, {hd}, synth_init::ones});
        t->push_back({b + "attn_k_norm.weight", GGML_TYPE_F32, {hd}, synth_init::ones});
    }
    t->push_back({b + "attn_output.weight", m, {q, e}, synth_init::matrix});
    if (arch.post_norms) t->push_back({b + "post_attention_norm.weight", GGML_TYPE_F32, {e}, synth_init::ones});
}

void synth_push_ffn(const synth_params & p, const synth_arch & arch, const std::string & b,
                    std::vector<synth_tensor> * t) {
    const int64_t e = p.n_embd;
    const ggml_type m = p.type;
    t->push_back({b + "ffn_norm.weight", GGML_TYPE_F32, {e}, synth_init::ones});
    if (p.n_expert > 0) {
        const int64_t ff = p.arch == "qwen3moe" ? p.n_ff_exp : p.n_ff, x = p.n_expert;
        t->push_back({b + "ffn_gate_inp.weight", GGML_TYPE_F32, {e, x}, synth_init::router});
        t->push_back({b + "ffn_gate_exps.weight", m, {e, ff, x}, synth_init::matrix});
        t->push_back({b + "ffn_up_exps.weight", m, {e, ff, x}, synth_init::matrix});
        t->push_back({b + "ffn_down_exps.weight", m, {ff, e, x}, synth_init::matrix});
    } else {
        const int64_t ff = p.n_ff;
        t->push_back({b + "ffn_gate.weight", m, {e, ff}, synth_init::matrix});
        t->push_back({b + "ffn_up.weight", m, {e, ff}, synth_init::matrix});
        t->push_back({b + "ffn_down.weight", m, {ff, e}, synth_init::matrix});
    }
    if (arch.post_norms) t->push_back({b + "post_ffw_norm.weight", GGML_TYPE_F32, {e}, synth_init::ones});
}

// llama, qwen2, qwen3, qwen3moe, gemma2, gemma3: separate Q/K/V, gated feed-forward or experts.
std::vector<synth_tensor> synth_tensors_llama_like(const synth_params & p, const synth_arch & arch) {
    const int64_t e = p.n_embd, v = p.n_vocab;
    std::vector<synth_tensor> t;
    t.push_back({"token_embd.weight", p.type, {e, v}, synth_init::matrix});
    t.push_back({"output_norm.weight", GGML_TYPE_F32, {e}, synth_init::ones});
    if (!arch.tied || p.untied_output) t.push_back({"output.weight", p.type, {e, v}, synth_init::matrix});
    for (int il = 0; il < p.n_layer; ++il) {
        const std::string b = "blk." + std::to_string(il) + ".";
        t.push_back({b + "attn_norm.weight", GGML_TYPE_F32, {e}, synth_init::ones});
        synth_push_attention(p, arch, b, &t);
        synth_push_ffn(p, arch, b, &t);
    }
    return t;
}

// gpt2: learned positions, LayerNorm with biases, fused QKV with biases, tied output.
std::vector<synth_tensor> synth_tensors_gpt2(const synth_params & p) {
    const int64_t e = p.n_embd, v = p.n_vocab, ff = p.n_ff;
    const ggml_type m = p.type;
    std::vector<synth_tensor> t;
    t.push_back({"token_embd.weight", m, {e, v}, synth_init::matrix});
    t.push_back({"position_embd.weight", m, {e, int64_t(p.n_ctx)}, synth_init::matrix});
    t.push_back({"output_norm.weight", GGML_TYPE_F32, {e}, synth_init::ones});
    t.push_back({"output_norm.bias", GGML_TYPE_F32, {e}, synth_init::bias});
    for (int il = 0; il < p.n_layer; ++il) {
        const std::string b = "blk." + std::to_string(il) + ".";
        t.push_back({b + "attn_norm.weight", GGML_TYPE_F32, {e}, synth_init::ones});
        t.push_back({b + "attn_norm.bias", GGML_TYPE_F32, {e}, synth_init::bias});
        t.push_back({b + "attn_qkv.weight", m, {e, 3 * e}, synth_init::matrix});
        t.push_back({b + "attn_qkv.bias", GGML_TYPE_F32, {3 * e}, synth_init::bias});
        t.push_back({b + "attn_output.weight", m, {e, e}, synth_init::matrix});
        t.push_back({b + "attn_output.bias", GGML_TYPE_F32, {e}, synth_init::bias});
        t.push_back({b + "ffn_norm.weight", GGML_TYPE_F32, {e}, synth_init::ones});
        t.push_back({b + "ffn_norm.bias", GGML_TYPE_F32, {e}, synth_init::bias});
        t.push_back({b + "ffn_up.weight", m, {e, ff}, synth_init::matrix});
        t.push_back({b + "ffn_up.bias", GGML_TYPE_F32, {ff}, synth_init::bias});
        t.push_back({b + "ffn_down.weight", m, {ff, e}, synth_init::matrix});
        t.push_back({b + "ffn_down.bias", GGML_TYPE_F32, {e}, synth_init::bias});
    }
    return t;
}

// phi3: fused QKV (rows Q, K, V) and fused gate/up (rows gate, then up), untied output.
std::vector<synth_tensor> synth_tensors_phi3(const synth_params & p) {
    const int64_t e = p.n_embd, v = p.n_vocab, ff = p.n_ff;
    const int64_t kv = int64_t(p.head_dim) * p.n_head_kv;
    const ggml_type m = p.type;
    std::vector<synth_tensor> t;
    t.push_back({"token_embd.weight", m, {e, v}, synth_init::matrix});
    t.push_back({"output_norm.weight", GGML_TYPE_F32, {e}, synth_init::ones});
    t.push_back({"output.weight", m, {e, v}, synth_init::matrix});
    for (int il = 0; il < p.n_layer; ++il) {
        const std::string b = "blk." + std::to_string(il) + ".";
        t.push_back({b + "attn_norm.weight", GGML_TYPE_F32, {e}, synth_init::ones});
        t.push_back({b + "attn_qkv.weight", m, {e, e + 2 * kv}, synth_init::matrix});
        t.push_back({b + "attn_output.weight", m, {e, e}, synth_init::matrix});
        t.push_back({b + "ffn_norm.weight", GGML_TYPE_F32, {e}, synth_init::ones});
        t.push_back({b + "ffn_up.weight", m, {e, 2 * ff}, synth_init::matrix});
        t.push_back({b + "ffn_down.weight", m, {ff, e}, synth_init::matrix});
    }
    return t;
}

// bert: learned positions and token types, post-norm layers (LayerNorm with biases), biased
// Q/K/V/O and FFN without a gate; with rank pooling the classification head (dense + tanh, then
// one output label).
std::vector<synth_tensor> synth_tensors_bert(const synth_params & p) {
    const int64_t e = p.n_embd, v = p.n_vocab, ff = p.n_ff;
    const ggml_type m = p.type;
    constexpr ggml_type f32 = GGML_TYPE_F32;
    std::vector<synth_tensor> t;
    t.push_back({"token_embd.weight", m, {e, v}, synth_init::matrix});
    t.push_back({"position_embd.weight", f32, {e, int64_t(p.n_ctx)}, synth_init::matrix});
    t.push_back({"token_types.weight", f32, {e, 2}, synth_init::matrix});
    t.push_back({"token_embd_norm.weight", f32, {e}, synth_init::ones});
    t.push_back({"token_embd_norm.bias", f32, {e}, synth_init::bias});
    for (int il = 0; il < p.n_layer; ++il) {
        const std::string b = "blk." + std::to_string(il) + ".";
        for (const char * w : {"attn_q", "attn_k", "attn_v", "attn_output"}) {
            t.push_back({b + w + ".weight", m, {e, e}, synth_init::matrix});
            t.push_back({b + w + ".bias", f32, {e}, synth_init::bias});
        }
        t.push_back({b + "attn_output_norm.weight", f32, {e}, synth_init::ones});
        t.push_back({b + "attn_output_norm.bias", f32, {e}, synth_init::bias});
        t.push_back({b + "ffn_up.weight", m, {e, ff}, synth_init::matrix});
        t.push_back({b + "ffn_up.bias", f32, {ff}, synth_init::bias});
        t.push_back({b + "ffn_down.weight", m, {ff, e}, synth_init::matrix});
        t.push_back({b + "ffn_down.bias", f32, {e}, synth_init::bias});
        t.push_back({b + "layer_output_norm.weight", f32, {e}, synth_init::ones});
        t.push_back({b + "layer_output_norm.bias", f32, {e}, synth_init::bias});
    }
    if (p.pooling == "rank") {
        t.push_back({"cls.weight", m, {e, e}, synth_init::matrix});
        t.push_back({"cls.bias", f32, {e}, synth_init::bias});
        t.push_back({"cls.output.weight", f32, {e}, synth_init::matrix});
        t.push_back({"cls.output.bias", f32, {1}, synth_init::bias});
    }
    return t;
}

}  // namespace

const synth_arch * synth_arch_find(const std::string & name) {
    for (const synth_arch & a : k_archs) {
        if (name == a.name) return &a;
    }
    return nullptr;
}

std::vector<std::string> synth_arch_names() {
    std::vector<std::string> names;
    for (const synth_arch & a : k_archs) names.emplace_back(a.name);
    return names;
}

void synth_arch_metadata(const synth_params & p, gguf_metadata * md) {
    const synth_arch & arch = *synth_arch_find(p.arch);
    const std::string & a = p.arch;
    md->set(a + ".context_length", u32(p.n_ctx));
    md->set(a + ".embedding_length", u32(p.n_embd));
    md->set(a + ".block_count", u32(p.n_layer));
    md->set(a + ".feed_forward_length", u32(p.n_ff));
    md->set(a + ".attention.head_count", u32(p.n_head));
    if (!arch.encoder) md->set(a + ".attention.head_count_kv", u32(p.n_head_kv));
    const bool layer_norm = a == "gpt2" || arch.encoder;
    const std::string eps_key = layer_norm ? ".attention.layer_norm_epsilon" : ".attention.layer_norm_rms_epsilon";
    md->set(a + eps_key, gguf_value::from_f32(arch.norm_eps));
    if (arch.encoder) {
        md->set(a + ".attention.causal", gguf_value::from_bool(false));
        md->set(a + ".pooling_type", u32(synth_pooling_type(p.pooling)));
    }
    if (arch.rope_dim_key) md->set(a + ".rope.dimension_count", u32(p.head_dim));
    if (arch.rope_base_key || p.rope_base > 0.0f) {
        md->set(a + ".rope.freq_base", gguf_value::from_f32(p.rope_base > 0.0f ? p.rope_base : arch.rope_base));
    }
    if (arch.head_dim_keys) {
        md->set(a + ".attention.key_length", u32(p.head_dim));
        md->set(a + ".attention.value_length", u32(p.head_dim));
    }
    if (p.n_expert > 0) synth_moe_metadata(p, md);
    if (arch.sliding_window > 0) md->set(a + ".attention.sliding_window", u32(p.sliding_window));
    if (arch.rope_swa) md->set(a + ".rope.freq_base_swa", gguf_value::from_f32(p.rope_base_swa));
    if (arch.softcaps) {
        md->set(a + ".attn_logit_softcapping", gguf_value::from_f32(p.attn_softcap));
        md->set(a + ".final_logit_softcapping", gguf_value::from_f32(p.final_softcap));
    }
    if (a == "phi3") md->set(a + ".rope.scaling.original_context_length", u32(p.n_ctx));
    if (arch.quant_version_key || p.n_expert > 0) md->set("general.quantization_version", u32(2));
}

std::vector<synth_tensor> synth_tensor_list(const synth_params & p) {
    std::vector<synth_tensor> list = p.arch == "gpt2" ? synth_tensors_gpt2(p)
                                     : p.arch == "phi3" ? synth_tensors_phi3(p)
                                     : p.arch == "bert" ? synth_tensors_bert(p)
                                                        : synth_tensors_llama_like(p, *synth_arch_find(p.arch));
    if (p.confident) synth_confident_apply(p, &list);
    return list;
}
