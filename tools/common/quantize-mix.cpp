// Quantization mixes: the list of mixes, and the per-tensor rules as a table.
#include "quantize-mix.h"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace {

// Which tensors a rule is about (matched on the name the way the established quantizer does:
// substrings, so that expert variants such as ffn_down_exps match too).
enum class mix_tensor_kind { attn_v, attn_qkv, attn_output, ffn_down };

// Which layers of that kind a rule upgrades.
enum class mix_layers {
    all,
    more_bits,        // the first and last eighth of the layers and every third one in between
    first_eighth,     // layer < n_layers / 8
    first_sixteenth,  // layer < n_layers / 16
    first_two,        // layer < 2
    first_four,       // layer < 4
};

enum class mix_condition { none, gqa_at_least_4 };

struct mix_rule {
    quantize_file_type file_type;
    mix_tensor_kind kind;
    mix_layers layers;
    mix_condition condition;
    ggml_type type;
};

// First matching rule wins. Tensors no rule matches get the mix's base type.
constexpr mix_rule k_rules[] = {
    {QUANTIZE_FTYPE_MOSTLY_Q2_K, mix_tensor_kind::attn_v, mix_layers::all, mix_condition::gqa_at_least_4, GGML_TYPE_Q4_K},
    {QUANTIZE_FTYPE_MOSTLY_Q2_K, mix_tensor_kind::attn_v, mix_layers::all, mix_condition::none, GGML_TYPE_Q3_K},
    {QUANTIZE_FTYPE_MOSTLY_Q2_K, mix_tensor_kind::ffn_down, mix_layers::all, mix_condition::none, GGML_TYPE_Q3_K},
    {QUANTIZE_FTYPE_MOSTLY_Q2_K, mix_tensor_kind::attn_output, mix_layers::all, mix_condition::none, GGML_TYPE_Q3_K},

    {QUANTIZE_FTYPE_MOSTLY_Q3_K_M, mix_tensor_kind::attn_v, mix_layers::first_two, mix_condition::none, GGML_TYPE_Q5_K},
    {QUANTIZE_FTYPE_MOSTLY_Q3_K_M, mix_tensor_kind::attn_v, mix_layers::all, mix_condition::none, GGML_TYPE_Q4_K},
    {QUANTIZE_FTYPE_MOSTLY_Q3_K_M, mix_tensor_kind::ffn_down, mix_layers::first_sixteenth, mix_condition::none, GGML_TYPE_Q5_K},
    {QUANTIZE_FTYPE_MOSTLY_Q3_K_M, mix_tensor_kind::ffn_down, mix_layers::all, mix_condition::none, GGML_TYPE_Q4_K},
    {QUANTIZE_FTYPE_MOSTLY_Q3_K_M, mix_tensor_kind::attn_output, mix_layers::all, mix_condition::none, GGML_TYPE_Q4_K},
    {QUANTIZE_FTYPE_MOSTLY_Q3_K_M, mix_tensor_kind::attn_qkv, mix_layers::all, mix_condition::none, GGML_TYPE_Q4_K},

    {QUANTIZE_FTYPE_MOSTLY_Q3_K_L, mix_tensor_kind::attn_v, mix_layers::all, mix_condition::none, GGML_TYPE_Q5_K},
    {QUANTIZE_FTYPE_MOSTLY_Q3_K_L, mix_tensor_kind::ffn_down, mix_layers::all, mix_condition::none, GGML_TYPE_Q5_K},
    {QUANTIZE_FTYPE_MOSTLY_Q3_K_L, mix_tensor_kind::attn_output, mix_layers::all, mix_condition::none, GGML_TYPE_Q5_K},
    {QUANTIZE_FTYPE_MOSTLY_Q3_K_L, mix_tensor_kind::attn_qkv, mix_layers::all, mix_condition::none, GGML_TYPE_Q4_K},

    {QUANTIZE_FTYPE_MOSTLY_Q4_K_S, mix_tensor_kind::attn_v, mix_layers::first_four, mix_condition::none, GGML_TYPE_Q5_K},
    {QUANTIZE_FTYPE_MOSTLY_Q4_K_S, mix_tensor_kind::ffn_down, mix_layers::first_eighth, mix_condition::none, GGML_TYPE_Q5_K},

    {QUANTIZE_FTYPE_MOSTLY_Q4_K_M, mix_tensor_kind::attn_v, mix_layers::more_bits, mix_condition::none, GGML_TYPE_Q6_K},
    {QUANTIZE_FTYPE_MOSTLY_Q4_K_M, mix_tensor_kind::ffn_down, mix_layers::more_bits, mix_condition::none, GGML_TYPE_Q6_K},
    {QUANTIZE_FTYPE_MOSTLY_Q4_K_M, mix_tensor_kind::attn_qkv, mix_layers::all, mix_condition::none, GGML_TYPE_Q5_K},

    {QUANTIZE_FTYPE_MOSTLY_Q5_K_M, mix_tensor_kind::attn_v, mix_layers::more_bits, mix_condition::none, GGML_TYPE_Q6_K},
    {QUANTIZE_FTYPE_MOSTLY_Q5_K_M, mix_tensor_kind::ffn_down, mix_layers::more_bits, mix_condition::none, GGML_TYPE_Q6_K},
    {QUANTIZE_FTYPE_MOSTLY_Q5_K_M, mix_tensor_kind::attn_qkv, mix_layers::all, mix_condition::none, GGML_TYPE_Q6_K},

    {QUANTIZE_FTYPE_MOSTLY_IQ4_NL, mix_tensor_kind::attn_v, mix_layers::all, mix_condition::gqa_at_least_4, GGML_TYPE_Q5_K},
    {QUANTIZE_FTYPE_MOSTLY_IQ4_NL, mix_tensor_kind::ffn_down, mix_layers::first_eighth, mix_condition::none, GGML_TYPE_Q5_K},
    {QUANTIZE_FTYPE_MOSTLY_IQ4_XS, mix_tensor_kind::attn_v, mix_layers::all, mix_condition::gqa_at_least_4, GGML_TYPE_Q5_K},
    {QUANTIZE_FTYPE_MOSTLY_IQ4_XS, mix_tensor_kind::ffn_down, mix_layers::first_eighth, mix_condition::none, GGML_TYPE_Q5_K},
};

// Name parts of 2-D weights that are kept as they are (small, or sensitive, or not matrices
// that a dot product reads): matched as substrings, except the exact names below.
constexpr std::string_view k_keep_substrings[] = {
    "_norm.weight", "ffn_gate_inp.weight", "altup", "laurel", "per_layer_model_proj",
    "ssm_conv1d.weight", "shortconv.conv.weight", "attn_rel_b.weight", "time_mix_first.weight",
    "time_mix_w0.weight", "time_mix_w1.weight", "time_mix_w2.weight", "time_mix_v0.weight",
    "time_mix_v1.weight", "time_mix_v2.weight", "time_mix_a0.weight", "time_mix_a1.weight",
    "time_mix_a2.weight", "time_mix_g1.weight", "time_mix_g2.weight", "time_mix_decay_w1.weight",
    "time_mix_decay_w2.weight", "time_mix_lerp_fused.weight",
};
constexpr std::string_view k_keep_names[] = {"position_embd.weight", "token_types.weight"};

bool contains(std::string_view s, std::string_view part) { return s.find(part) != std::string_view::npos; }

bool kind_matches(mix_tensor_kind kind, std::string_view name) {
    switch (kind) {
        case mix_tensor_kind::attn_v: return contains(name, "attn_v.weight");
        case mix_tensor_kind::attn_qkv: return contains(name, "attn_qkv.weight");
        case mix_tensor_kind::attn_output: return contains(name, "attn_output.weight");
        case mix_tensor_kind::ffn_down: return contains(name, "ffn_down");
    }
    return false;
}

bool layers_match(mix_layers layers, int64_t layer, int64_t n) {
    if (layers == mix_layers::all) return true;
    if (layer < 0) return false;
    switch (layers) {
        case mix_layers::all: return true;
        case mix_layers::more_bits: return layer < n / 8 || layer >= 7 * n / 8 || (layer - n / 8) % 3 == 2;
        case mix_layers::first_eighth: return layer < n / 8;
        case mix_layers::first_sixteenth: return layer < n / 16;
        case mix_layers::first_two: return layer < 2;
        case mix_layers::first_four: return layer < 4;
    }
    return false;
}

bool condition_holds(mix_condition c, const quantize_model_info & info) {
    return c == mix_condition::none || (c == mix_condition::gqa_at_least_4 && info.n_gqa >= 4);
}

bool is_output_matrix(const quantize_model_info & info, std::string_view name) {
    return name == "output.weight" || (!info.has_output && name == "token_embd.weight");
}

// The rule-based type before the row-length check.
ggml_type mix_rule_type(const quantize_mix & mix, const quantize_model_info & info, std::string_view name, int64_t ne0) {
    if (!ggml_get_type_traits(mix.base_type).is_quantized) return mix.base_type;
    if (is_output_matrix(info, name)) {
        if (ne0 % ggml_blck_size(mix.base_type) != 0) return GGML_TYPE_Q8_0;
        return mix.base_type == GGML_TYPE_Q8_0 ? GGML_TYPE_Q8_0 : GGML_TYPE_Q6_K;
    }
    const int64_t layer = quantize_tensor_layer(name);
    for (const mix_rule & r : k_rules) {
        if (r.file_type == mix.file_type && kind_matches(r.kind, name) && layers_match(r.layers, layer, info.n_layers) &&
            condition_holds(r.condition, info)) {
            return r.type;
        }
    }
    return mix.base_type;
}

}  // namespace

const std::vector<quantize_mix> & quantize_mix_all() {
    static const std::vector<quantize_mix> mixes = {
        {"F16", QUANTIZE_FTYPE_MOSTLY_F16, GGML_TYPE_F16},       {"BF16", QUANTIZE_FTYPE_MOSTLY_BF16, GGML_TYPE_BF16},
        {"Q8_0", QUANTIZE_FTYPE_MOSTLY_Q8_0, GGML_TYPE_Q8_0},    {"Q4_0", QUANTIZE_FTYPE_MOSTLY_Q4_0, GGML_TYPE_Q4_0},
        {"Q4_1", QUANTIZE_FTYPE_MOSTLY_Q4_1, GGML_TYPE_Q4_1},    {"Q5_0", QUANTIZE_FTYPE_MOSTLY_Q5_0, GGML_TYPE_Q5_0},
        {"Q5_1", QUANTIZE_FTYPE_MOSTLY_Q5_1, GGML_TYPE_Q5_1},    {"Q2_K", QUANTIZE_FTYPE_MOSTLY_Q2_K, GGML_TYPE_Q2_K},
        {"Q3_K_S", QUANTIZE_FTYPE_MOSTLY_Q3_K_S, GGML_TYPE_Q3_K}, {"Q3_K_M", QUANTIZE_FTYPE_MOSTLY_Q3_K_M, GGML_TYPE_Q3_K},
        {"Q3_K_L", QUANTIZE_FTYPE_MOSTLY_Q3_K_L, GGML_TYPE_Q3_K}, {"Q4_K_S", QUANTIZE_FTYPE_MOSTLY_Q4_K_S, GGML_TYPE_Q4_K},
        {"Q4_K_M", QUANTIZE_FTYPE_MOSTLY_Q4_K_M, GGML_TYPE_Q4_K}, {"Q5_K_S", QUANTIZE_FTYPE_MOSTLY_Q5_K_S, GGML_TYPE_Q5_K},
        {"Q5_K_M", QUANTIZE_FTYPE_MOSTLY_Q5_K_M, GGML_TYPE_Q5_K}, {"Q6_K", QUANTIZE_FTYPE_MOSTLY_Q6_K, GGML_TYPE_Q6_K},
        {"IQ4_NL", QUANTIZE_FTYPE_MOSTLY_IQ4_NL, GGML_TYPE_IQ4_NL}, {"IQ4_XS", QUANTIZE_FTYPE_MOSTLY_IQ4_XS, GGML_TYPE_IQ4_XS},
    };
    return mixes;
}

const quantize_mix * quantize_mix_find(std::string_view name) {
    for (const quantize_mix & m : quantize_mix_all()) {
        const std::string_view mn = m.name;
        const bool same = mn.size() == name.size() &&
                          std::equal(mn.begin(), mn.end(), name.begin(), [](char a, char b) {
                              return std::toupper(static_cast<unsigned char>(a)) == std::toupper(static_cast<unsigned char>(b));
                          });
        if (same) return &m;
    }
    return nullptr;
}

std::string quantize_mix_names() {
    std::string out;
    for (const quantize_mix & m : quantize_mix_all()) {
        if (!out.empty()) out += ", ";
        out += m.name;
    }
    return out;
}

int64_t quantize_tensor_layer(std::string_view name) {
    constexpr std::string_view prefix = "blk.";
    if (name.substr(0, prefix.size()) != prefix) return -1;
    const char * first = name.data() + prefix.size();
    const char * last = name.data() + name.size();
    int64_t layer = -1;
    const auto [end, ec] = std::from_chars(first, last, layer);
    if (ec != std::errc() || end == first || end == last || *end != '.' || layer < 0) return -1;
    return layer;
}

quantize_model_info quantize_model_info_from_names(const std::vector<std::string> & names,
                                                   int64_t metadata_n_layers, int64_t n_gqa) {
    quantize_model_info info;
    info.n_layers = std::max<int64_t>(metadata_n_layers, 0);
    info.n_gqa = n_gqa > 0 ? n_gqa : 1;
    for (const std::string & n : names) {
        info.n_layers = std::max(info.n_layers, quantize_tensor_layer(n) + 1);
        if (n == "output.weight") info.has_output = true;
    }
    return info;
}

bool quantize_tensor_is_quantizable(std::string_view name, int n_dims) {
    constexpr std::string_view suffix = "weight";
    if (name.size() < suffix.size() || name.substr(name.size() - suffix.size()) != suffix) return false;
    if (n_dims < 2) return false;
    for (std::string_view part : k_keep_substrings) {
        if (contains(name, part)) return false;
    }
    for (std::string_view exact : k_keep_names) {
        if (name == exact) return false;
    }
    return true;
}

ggml_type quantize_fallback_type(ggml_type t, int64_t ne0) {
    const int64_t blck = ggml_blck_size(t);
    if (blck <= 0 || ne0 % blck == 0) return t;
    ggml_type alt = GGML_TYPE_F16;
    switch (t) {
        case GGML_TYPE_Q2_K:
        case GGML_TYPE_Q3_K: alt = GGML_TYPE_Q4_0; break;
        case GGML_TYPE_Q4_K: alt = GGML_TYPE_Q5_0; break;
        case GGML_TYPE_Q5_K: alt = GGML_TYPE_Q5_1; break;
        case GGML_TYPE_Q6_K: alt = GGML_TYPE_Q8_0; break;
        case GGML_TYPE_IQ4_XS: alt = GGML_TYPE_IQ4_NL; break;
        default: break;
    }
    return ne0 % ggml_blck_size(alt) == 0 ? alt : GGML_TYPE_F16;
}

quantize_tensor_choice quantize_mix_choose(const quantize_mix & mix, const quantize_model_info & info,
                                           std::string_view name, int64_t ne0) {
    quantize_tensor_choice c;
    const ggml_type wanted = mix_rule_type(mix, info, name, ne0);
    c.type = quantize_fallback_type(wanted, ne0);
    if (c.type != wanted) {
        c.fallback = true;
        c.message = "rows of " + std::to_string(ne0) + " elements are not a multiple of the " +
                    ggml_type_name(wanted) + " block size " + std::to_string(ggml_blck_size(wanted)) + ": using " +
                    ggml_type_name(c.type) + " instead";
    }
    return c;
}
