// The architecture table and the hyper-parameter readers shared by the architecture files.
#include "models/arch.h"

#include "ggml/gguf.h"

#include <cmath>

namespace {

std::string missing(const std::string & key) { return "missing or invalid key '" + key + "'"; }

}  // namespace

bool hparams_reader::has(std::string_view key) const { return md_.contains(full(key)); }

uint32_t hparams_reader::u32(std::string_view key) const {
    uint64_t v = 0;
    const std::string k = full(key);
    if (!md_.get_uint(k, &v) || v > UINT32_MAX) throw model_load_error(missing(k));
    return uint32_t(v);
}

uint32_t hparams_reader::u32_or(std::string_view key, uint32_t def) const { return has(key) ? u32(key) : def; }

float hparams_reader::f32(std::string_view key) const {
    double v = 0;
    const std::string k = full(key);
    if (!md_.get_float(k, &v) || !std::isfinite(v)) throw model_load_error(missing(k));
    return float(v);
}

float hparams_reader::f32_or(std::string_view key, float def) const { return has(key) ? f32(key) : def; }

bool hparams_reader::bool_or(std::string_view key, bool def) const {
    if (!has(key)) return def;
    const std::string k = full(key);
    bool b = false;
    if (md_.get_bool(k, &b)) return b;
    uint64_t v = 0;
    if (md_.get_uint(k, &v) && v <= 1) return v != 0;
    throw model_load_error(missing(k));
}

bool hparams_reader::u32_array(std::string_view key, std::vector<uint32_t> & out) const {
    const gguf_value * v = md_.find(full(key));
    if (!v || !v->is_array()) return false;
    out.clear();
    for (size_t i = 0; i < v->array_size(); ++i) {
        uint64_t u = 0;
        bool b = false;
        if (v->array_get_uint(i, &u) && u <= UINT32_MAX) out.push_back(uint32_t(u));
        else if (v->array_get_bool(i, &b)) out.push_back(b ? 1 : 0);
        else return false;
    }
    return true;
}

std::string hparams_reader::str_or(std::string_view key, std::string def) const {
    if (!has(key)) return def;
    std::string v;
    const std::string k = full(key);
    if (!md_.get_string(k, &v)) throw model_load_error(missing(k));
    return v;
}

std::string llm_tensor_name(int il, const char * suffix) { return "blk." + std::to_string(il) + "." + suffix; }

namespace {

const llm_arch_def * const k_archs[] = {&llm_arch_llama,  &llm_arch_qwen2,  &llm_arch_qwen3, &llm_arch_qwen3moe,
                                        &llm_arch_gemma2, &llm_arch_gemma3, &llm_arch_phi3,  &llm_arch_gpt2,
                                        &llm_arch_bert};

}  // namespace

const llm_arch_def * llm_arch_find(std::string_view name) {
    for (const llm_arch_def * d : k_archs) {
        if (name == d->name) return d;
    }
    return nullptr;
}

std::string llm_arch_list() {
    std::string s;
    for (const llm_arch_def * d : k_archs) s += (s.empty() ? "" : ", ") + std::string(d->name);
    return s;
}

const char * llm_arch_name(llm_arch arch) {
    for (const llm_arch_def * d : k_archs) {
        if (d->arch == arch) return d->name;
    }
    return "?";
}

const char * pooling_type_name(pooling_type p) {
    switch (p) {
        case pooling_type::none: return "none";
        case pooling_type::mean: return "mean";
        case pooling_type::cls: return "cls";
        case pooling_type::last: return "last";
        case pooling_type::rank: return "rank";
        case pooling_type::unspecified: break;
    }
    return "unspecified";
}

void llm_load_embd_hparams(const hparams_reader & r, model_hparams & hp) {
    if (r.has("pooling_type")) {
        const uint32_t p = r.u32("pooling_type");
        if (p > uint32_t(pooling_type::rank)) {
            throw model_load_error("unsupported pooling_type " + std::to_string(p) +
                                   " (0 none, 1 mean, 2 cls, 3 last, 4 rank)");
        }
        hp.pooling = pooling_type(p);
    }
    hp.causal_attn = r.bool_or("attention.causal", hp.causal_attn);
}

bool model_hparams::has_swa() const {
    for (uint32_t il = 0; il < n_layer; ++il)
        if (is_swa(il)) return true;
    return false;
}

bool model_hparams::has_global() const {
    for (uint32_t il = 0; il < n_layer; ++il)
        if (!is_swa(il)) return true;
    return false;
}

float model_hparams::kq_scale() const {
    return attn_scale > 0.0f ? attn_scale : 1.0f / std::sqrt(float(n_embd_head_k));
}

void llm_load_common_hparams(const hparams_reader & r, model_hparams & hp, const char * eps_key) {
    hp.n_ctx_train = r.u32("context_length");
    hp.n_embd = r.u32("embedding_length");
    hp.n_layer = r.u32("block_count");
    hp.n_ff = r.u32("feed_forward_length");
    hp.n_head = r.u32("attention.head_count");
    hp.n_head_kv = r.u32_or("attention.head_count_kv", hp.n_head);
    if (hp.n_embd == 0 || hp.n_layer == 0 || hp.n_ff == 0 || hp.n_head == 0 || hp.n_head_kv == 0) {
        throw model_load_error("hyper-parameters must be positive (embedding_length, block_count, "
                               "feed_forward_length, attention.head_count[_kv])");
    }
    if (hp.n_head % hp.n_head_kv != 0) {
        throw model_load_error("attention.head_count (" + std::to_string(hp.n_head) +
                               ") is not a multiple of attention.head_count_kv (" + std::to_string(hp.n_head_kv) + ")");
    }
    if (!r.has("attention.key_length") && hp.n_embd % hp.n_head != 0) {
        throw model_load_error("embedding_length is not a multiple of attention.head_count");
    }
    hp.n_embd_head_k = r.u32_or("attention.key_length", hp.n_embd / hp.n_head);
    hp.n_embd_head_v = r.u32_or("attention.value_length", hp.n_embd / hp.n_head);
    if (hp.n_embd_head_k == 0 || hp.n_embd_head_v == 0) throw model_load_error("attention head size is zero");
    hp.norm_eps = r.f32(eps_key);
    if (!(hp.norm_eps >= 0.0f)) throw model_load_error("negative norm epsilon");
}

void llm_load_rope_hparams(const hparams_reader & r, model_hparams & hp) {
    hp.n_rot = r.u32_or("rope.dimension_count", hp.n_embd_head_k);
    if (hp.n_rot == 0 || hp.n_rot % 2 != 0 || hp.n_rot > hp.n_embd_head_k) {
        throw model_load_error("rope.dimension_count must be even and at most the head size");
    }
    hp.rope_freq_base = r.f32_or("rope.freq_base", 10000.0f);
    if (!(hp.rope_freq_base > 0.0f)) throw model_load_error("rope.freq_base must be positive");
    const std::string type = r.str_or("rope.scaling.type", "");
    float factor = r.f32_or("rope.scaling.factor", 0.0f);
    if (factor == 0.0f) factor = r.f32_or("rope.scale_linear", 0.0f);  // older key
    if (type.empty() || type == "none") {
        hp.rope_scaling = factor > 0.0f && factor != 1.0f ? rope_scaling_type::linear : rope_scaling_type::none;
    } else if (type == "linear") {
        hp.rope_scaling = rope_scaling_type::linear;
    } else if (type == "yarn") {
        hp.rope_scaling = rope_scaling_type::yarn;
    } else if (type == "longrope" || type == "su") {
        // LongRoPE: the scaling lives in per-dimension factors (tensors), not in freq_scale
        hp.rope_scaling = rope_scaling_type::none;
        factor = 0.0f;
    } else {
        throw model_load_error("unsupported rope.scaling.type '" + type + "' (none, linear, yarn and longrope are)");
    }
    if (factor < 0.0f) throw model_load_error("rope.scaling.factor must be positive");
    hp.rope_freq_scale = factor > 0.0f ? 1.0f / factor : 1.0f;
    hp.rope_n_ctx_orig = r.u32_or("rope.scaling.original_context_length", hp.n_ctx_train);
    if (hp.rope_scaling == rope_scaling_type::yarn) {
        hp.yarn_ext_factor = 1.0f;
        hp.yarn_attn_factor = r.f32_or("rope.scaling.attn_factor", 1.0f);
        hp.yarn_beta_fast = r.f32_or("rope.scaling.yarn_beta_fast", 32.0f);
        hp.yarn_beta_slow = r.f32_or("rope.scaling.yarn_beta_slow", 1.0f);
    }
}

void llm_load_moe_hparams(const hparams_reader & r, model_hparams & hp) {
    hp.n_expert = r.u32_or("expert_count", 0);
    if (hp.n_expert == 0) return;
    hp.n_expert_used = r.u32("expert_used_count");
    if (hp.n_expert_used == 0 || hp.n_expert_used > hp.n_expert) {
        throw model_load_error("expert_used_count (" + std::to_string(hp.n_expert_used) + ") must be in 1..expert_count (" +
                               std::to_string(hp.n_expert) + ")");
    }
    hp.n_ff_exp = r.u32_or("expert_feed_forward_length", hp.n_ff);
    if (hp.n_ff_exp == 0) throw model_load_error("the experts' feed-forward width is zero");
}

void llm_load_swa_hparams(const hparams_reader & r, model_hparams & hp, uint32_t default_period) {
    hp.n_swa = r.u32_or("attention.sliding_window", 0);
    hp.rope_freq_base_swa = r.f32_or("rope.freq_base_swa", hp.rope_freq_base);
    hp.rope_freq_scale_swa = 1.0f;
    if (!(hp.rope_freq_base_swa > 0.0f)) throw model_load_error("rope.freq_base_swa must be positive");
    hp.swa_layers.assign(hp.n_layer, 0);
    if (hp.n_swa == 0) return;
    std::vector<uint32_t> per_layer;
    uint32_t period = default_period;
    if (r.u32_array("attention.sliding_window_pattern", per_layer)) {
        if (per_layer.size() != hp.n_layer) {
            throw model_load_error("attention.sliding_window_pattern has " + std::to_string(per_layer.size()) +
                                   " entries for " + std::to_string(hp.n_layer) + " layers");
        }
        for (uint32_t il = 0; il < hp.n_layer; ++il) hp.swa_layers[il] = per_layer[il] != 0;
        return;
    }
    if (r.has("attention.sliding_window_pattern")) period = r.u32("attention.sliding_window_pattern");
    for (uint32_t il = 0; il < hp.n_layer; ++il) hp.swa_layers[il] = period == 0 || il % period < period - 1;
}

void llm_create_moe_tensors(tensor_creator & c, const model_hparams & hp, model_layer & l, int il) {
    const int64_t n_embd = hp.n_embd, n_ff = hp.n_ff_exp, n_expert = hp.n_expert;
    l.ffn_gate_inp = c.create(llm_tensor_name(il, "ffn_gate_inp.weight"), {n_embd, n_expert}, il);
    l.ffn_gate_exps = c.create(llm_tensor_name(il, "ffn_gate_exps.weight"), {n_embd, n_ff, n_expert}, il);
    l.ffn_up_exps = c.create(llm_tensor_name(il, "ffn_up_exps.weight"), {n_embd, n_ff, n_expert}, il);
    l.ffn_down_exps = c.create(llm_tensor_name(il, "ffn_down_exps.weight"), {n_ff, n_embd, n_expert}, il);
}
