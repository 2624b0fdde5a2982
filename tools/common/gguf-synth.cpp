// inferd-gguf synth: shape checks and the metadata of a synthetic model.
#include "gguf-synth.h"

#include "gguf-synth-impl.h"

#include <cmath>
#include <memory>

namespace {

bool fail(std::string * error, std::string msg) {
    *error = std::move(msg);
    return false;
}

bool positive(int v, const char * flag, std::string * error) {
    if (v > 0) return true;
    return fail(error, std::string(flag) + " is required (a positive number)");
}

// n_vocab from --vocab FILE: its token count, which must agree with a given --n-vocab.
bool synth_check_vocab_file(synth_params * p, std::string * error, bool * io_error) {
    std::unique_ptr<gguf_file> f;
    gguf_open_options o;
    o.load_tensor_data = false;
    const gguf_result r = gguf_file::open(p->vocab_path, o, &f);
    if (!r) {
        if (io_error) *io_error = true;
        return fail(error, "--vocab " + p->vocab_path + ": " + r.message);
    }
    size_t n = 0;
    if (!f->metadata().get_array_size("tokenizer.ggml.tokens", &n) || n == 0) {
        return fail(error, "--vocab " + p->vocab_path + ": no tokenizer.ggml.tokens array");
    }
    if (p->n_vocab == 0) p->n_vocab = int(n);
    if (size_t(p->n_vocab) != n) {
        return fail(error, "--n-vocab " + std::to_string(p->n_vocab) + " differs from the " + std::to_string(n) +
                               " tokens of " + p->vocab_path);
    }
    return true;
}

// "a, b or c": the archs for which `has` holds, for messages.
template <typename F>
std::string synth_archs_with(F has) {
    std::vector<std::string> names;
    for (const std::string & n : synth_arch_names()) {
        if (has(*synth_arch_find(n))) names.push_back(n);
    }
    std::string out;
    for (size_t i = 0; i < names.size(); ++i) {
        out += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
    }
    return out;
}

// Options the arch does not have are usage errors.
bool synth_check_arch_options(const synth_params & p, const synth_arch & arch, std::string * error) {
    struct option_rule {
        bool given;
        bool allowed;
        const char * flag;
        bool (*has)(const synth_arch &);
    };
    const option_rule rules[] = {
        {p.head_dim > 0, arch.head_dim_keys, "--head-dim", [](const synth_arch & a) { return a.head_dim_keys; }},
        {p.n_expert > 0, arch.moe > 0, "--n-expert", [](const synth_arch & a) { return a.moe > 0; }},
        {p.n_expert_used > 0, arch.moe > 0, "--n-expert-used", [](const synth_arch & a) { return a.moe > 0; }},
        {p.n_ff_exp > 0, arch.moe == 2, "--n-ff-exp", [](const synth_arch & a) { return a.moe == 2; }},
        {p.sliding_window > 0, arch.sliding_window > 0, "--sliding-window",
         [](const synth_arch & a) { return a.sliding_window > 0; }},
        {p.rope_base > 0.0f, arch.rope_base > 0.0f, "--rope-base", [](const synth_arch & a) { return a.rope_base > 0; }},
        {p.rope_base_swa > 0.0f, arch.rope_swa, "--rope-base-swa", [](const synth_arch & a) { return a.rope_swa; }},
        {p.attn_softcap > 0.0f, arch.softcaps, "--attn-softcap", [](const synth_arch & a) { return a.softcaps; }},
        {p.final_softcap > 0.0f, arch.softcaps, "--final-softcap", [](const synth_arch & a) { return a.softcaps; }},
        {p.untied_output, arch.untie, "--untied-output", [](const synth_arch & a) { return a.untie; }},
        {!p.pooling.empty(), arch.encoder, "--pooling", [](const synth_arch & a) { return a.encoder; }},
        {!p.chat_template.empty(), !arch.encoder, "--chat-template",
         [](const synth_arch & a) { return !a.encoder; }},
    };
    for (const option_rule & r : rules) {
        if (r.given && !r.allowed) {
            return fail(error, std::string(r.flag) + " is not an option of " + p.arch + " (only of " +
                                   synth_archs_with(r.has) + ")");
        }
    }
    return true;
}

// Expert counts and widths; fills qwen3moe's n_ff (the dense width it records but never uses).
bool synth_check_experts(synth_params * p, const synth_arch & arch, std::string * error) {
    if (arch.moe == 2) {
        if (p->n_expert == 0) return fail(error, "--n-expert is required for " + p->arch);
        if (p->n_ff_exp == 0) return fail(error, "--n-ff-exp (the width of one expert) is required for " + p->arch);
    }
    if (p->n_expert == 0 && p->n_expert_used > 0) return fail(error, "--n-expert-used wants --n-expert");
    if (p->n_expert == 0) return true;
    if (p->n_expert_used == 0) return fail(error, "--n-expert-used is required with --n-expert");
    if (p->n_expert_used > p->n_expert) {
        return fail(error, "--n-expert-used " + std::to_string(p->n_expert_used) + " exceeds --n-expert " +
                               std::to_string(p->n_expert));
    }
    if (arch.moe == 2 && p->n_ff == 0) p->n_ff = p->n_ff_exp * p->n_expert_used;
    return true;
}

// The head size (head_dim, default n_embd / n_head) and the grouping of heads.
bool synth_check_heads(synth_params * p, const synth_arch & arch, std::string * error) {
    if (p->head_dim == 0) {
        if (p->n_embd % p->n_head != 0) {
            return fail(error, "--n-embd " + std::to_string(p->n_embd) + " is not a multiple of --n-head " +
                                   std::to_string(p->n_head) + (arch.head_dim_keys ? " (or give --head-dim)" : ""));
        }
        p->head_dim = p->n_embd / p->n_head;
    }
    if (p->n_head % p->n_head_kv != 0) {
        return fail(error, "--n-head " + std::to_string(p->n_head) + " is not a multiple of --n-head-kv " +
                               std::to_string(p->n_head_kv));
    }
    if ((p->arch == "gpt2" || arch.encoder) && p->n_head_kv != p->n_head) {
        return fail(error, p->arch + " has no grouped-query attention: --n-head-kv must equal --n-head");
    }
    if (arch.rope_base > 0.0f && p->head_dim % 2 != 0) {
        const std::string how = arch.head_dim_keys ? "--head-dim" : "--n-embd / --n-head";
        return fail(error, "the head size (" + how + " = " + std::to_string(p->head_dim) + ") must be even for RoPE");
    }
    return true;
}

bool synth_check_chat_template(synth_params * p, const synth_arch & arch, std::string * error) {
    if (p->chat_template.empty() && p->vocab_path.empty()) {
        if (p->arch == "llama" && p->n_expert > 0) {
            p->chat_template = "llama2";  // Mixtral's [INST] family
        } else if (std::string(arch.chat_template) != "chatml") {
            p->chat_template = arch.chat_template;
        }
    }
    if (p->chat_template.empty() || synth_chat_template(p->chat_template, nullptr, nullptr)) return true;
    std::string names;
    for (const std::string & n : synth_chat_template_names()) names += (names.empty() ? "" : ", ") + n;
    return fail(error, "--chat-template '" + p->chat_template + "' is not one of " + names);
}

bool synth_check_numbers(const synth_params & p, std::string * error) {
    for (int v : {p.n_head_kv, p.n_ctx, p.n_vocab, p.n_ff, p.head_dim, p.n_expert, p.n_expert_used, p.n_ff_exp,
                  p.sliding_window}) {
        if (v < 0) return fail(error, "sizes must not be negative");
    }
    for (float v : {p.rope_base, p.rope_base_swa, p.attn_softcap, p.final_softcap}) {
        if (!(v >= 0.0f) || !std::isfinite(v)) return fail(error, "rope bases and soft-caps must be positive numbers");
    }
    return true;
}

// The arch's defaults for what was not given (rope_base stays 0: it is resolved when written).
void synth_fill_arch_defaults(synth_params * p, const synth_arch & arch) {
    if (p->n_head_kv == 0) p->n_head_kv = p->n_head;
    if (p->n_ctx == 0) p->n_ctx = arch.n_ctx;
    if (arch.sliding_window > 0 && p->sliding_window == 0) p->sliding_window = arch.sliding_window;
    if (arch.rope_swa && p->rope_base_swa == 0.0f) p->rope_base_swa = 1e4f;
    if (arch.softcaps && p->attn_softcap == 0.0f) p->attn_softcap = 50.0f;
    if (arch.softcaps && p->final_softcap == 0.0f) p->final_softcap = 30.0f;
}

// An encoder's pooling: cls by default, else one of synth_pooling_type's names.
bool synth_check_pooling(synth_params * p, const synth_arch & arch, std::string * error) {
    if (!arch.encoder) return true;
    if (p->pooling.empty()) p->pooling = "cls";
    if (synth_pooling_type(p->pooling) >= 0) return true;
    return fail(error, "--pooling wants cls, mean or rank, got '" + p->pooling + "'");
}

bool synth_check_vocab(synth_params * p, const synth_arch & arch, std::string * error, bool * io_error) {
    if (!p->vocab_path.empty()) return synth_check_vocab_file(p, error, io_error);
    if (p->n_vocab == 0) return fail(error, "--n-vocab is required without --vocab");
    if (arch.encoder && p->n_vocab < synth_wpm_min_vocab()) {
        return fail(error, "--n-vocab must be at least " + std::to_string(synth_wpm_min_vocab()) +
                               " (BERT's special and unused tokens, and the single characters)");
    }
    if (!arch.encoder && p->n_vocab < synth_min_vocab(p->chat_template)) {
        return fail(error, "--n-vocab must be at least " + std::to_string(synth_min_vocab(p->chat_template)) +
                               " (256 byte tokens and the special tokens)");
    }
    return true;
}

// Rows that K-quants cannot hold (not multiples of 256): a warning, the file is still written.
void synth_row_warnings(const synth_params & p, std::vector<std::string> * warnings) {
    const bool wide_q = p.head_dim * p.n_head != p.n_embd;
    const int ff = p.arch == "qwen3moe" ? p.n_ff_exp : p.n_ff;
    if (p.n_embd % 256 != 0 || ff % 256 != 0 || (wide_q && p.head_dim * p.n_head % 256 != 0)) {
        std::string what = "--n-embd " + std::to_string(p.n_embd) + " / " +
                           (p.arch == "qwen3moe" ? "--n-ff-exp " : "--n-ff ") + std::to_string(ff);
        if (wide_q) what += " / the query width " + std::to_string(p.head_dim * p.n_head);
        warnings->push_back(what + ": rows that are not multiples of 256 cannot use K-quants (the quantizer "
                                   "falls back to other types for them)");
    }
}

// --confident: the output matrix must be a tensor of its own (it predicts the next token, the
// embedding stands for the current one) and the built-in vocabulary must have merged tokens.
bool synth_check_confident(const synth_params & p, const synth_arch & arch, std::string * error) {
    if (!p.confident) return true;
    if (arch.encoder || (arch.tied && !p.untied_output)) {
        return fail(error, "--confident wants an untied output matrix (llama, phi3, or --untied-output)");
    }
    if (!p.vocab_path.empty()) return fail(error, "--confident works with the built-in vocabulary only (no --vocab)");
    if (p.n_vocab <= synth_min_vocab(p.chat_template)) {
        return fail(error, "--confident wants --n-vocab above " + std::to_string(synth_min_vocab(p.chat_template)) +
                               " (merged tokens to predict)");
    }
    return true;
}

}  // namespace

bool synth_params_check(synth_params * p, std::vector<std::string> * warnings, std::string * error,
                        bool * io_error) {
    if (io_error) *io_error = false;
    const std::string arch_names = synth_archs_with([](const synth_arch &) { return true; });
    if (p->arch.empty()) return fail(error, "--arch is required (" + arch_names + ")");
    const synth_arch * arch = synth_arch_find(p->arch);
    if (!arch) return fail(error, "--arch '" + p->arch + "' is not one of " + arch_names);
    if (!positive(p->n_embd, "--n-embd", error) || !positive(p->n_layer, "--n-layer", error) ||
        !positive(p->n_head, "--n-head", error) || (arch->moe != 2 && !positive(p->n_ff, "--n-ff", error))) {
        return false;
    }
    if (!synth_check_numbers(*p, error)) return false;
    if (p->type != GGML_TYPE_F16 && p->type != GGML_TYPE_F32) return fail(error, "--type must be f16 or f32");
    if (!synth_check_arch_options(*p, *arch, error) || !synth_check_experts(p, *arch, error)) return false;
    synth_fill_arch_defaults(p, *arch);
    if (!synth_check_heads(p, *arch, error) || !synth_check_chat_template(p, *arch, error)) return false;
    if (!synth_check_pooling(p, *arch, error) || !synth_check_vocab(p, *arch, error, io_error)) return false;
    if (!synth_check_confident(*p, *arch, error)) return false;
    if (p->out_path.empty()) return fail(error, "no output file given");
    synth_row_warnings(*p, warnings);
    return true;
}

bool synth_build_metadata(const synth_params & p, gguf_metadata * md, std::string * error) {
    const std::string a = p.arch;
    md->set("general.architecture", gguf_value::from_string(a));
    md->set("general.name", gguf_value::from_string(std::string(p.confident ? "synthetic confident " : "synthetic ") +
                                                    a + " " + std::to_string(p.n_embd) + "x" +
                                                    std::to_string(p.n_layer)));
    md->set("general.file_type", gguf_value::from_u32(p.type == GGML_TYPE_F16 ? 1 : 0));
    synth_arch_metadata(p, md);
    const bool encoder = synth_arch_find(p.arch)->encoder;
    if (p.vocab_path.empty()) {
        if (encoder) {
            synth_wpm_vocab_metadata(p.n_vocab, md);
        } else {
            synth_vocab_metadata(p.n_vocab, p.chat_template, md);
        }
        return true;
    }
    std::unique_ptr<gguf_file> f;
    gguf_open_options o;
    o.load_tensor_data = false;
    if (const gguf_result r = gguf_file::open(p.vocab_path, o, &f); !r) {
        return fail(error, p.vocab_path + ": " + r.message);
    }
    for (const gguf_kv & kv : f->metadata().kvs()) {
        if (kv.key.rfind("tokenizer.", 0) == 0) md->set(kv.key, kv.value);
    }
    if (encoder && !md->contains("tokenizer.ggml.token_type_count")) {
        md->set("tokenizer.ggml.token_type_count", gguf_value::from_u32(2));  // token_types has 2 rows
    }
    std::string jinja;
    if (!p.chat_template.empty() && synth_chat_template(p.chat_template, &jinja, nullptr)) {
        md->set("tokenizer.chat_template", gguf_value::from_string(jinja));
    }
    return true;
}
