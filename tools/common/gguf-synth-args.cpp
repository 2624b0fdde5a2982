// inferd-gguf synth: the command line (options → synth_params), messages and exit codes.
#include "gguf-synth.h"
#include "tool-args.h"

#include <charconv>
#include <cmath>

namespace {

struct synth_int_flag {
    const char * name;
    int synth_params::*field;
    int max;
};

constexpr synth_int_flag k_int_flags[] = {
    {"--n-embd", &synth_params::n_embd, 1 << 16},      {"--n-layer", &synth_params::n_layer, 4096},
    {"--n-head", &synth_params::n_head, 1 << 16},      {"--n-head-kv", &synth_params::n_head_kv, 1 << 16},
    {"--n-ff", &synth_params::n_ff, 1 << 20},          {"--n-vocab", &synth_params::n_vocab, 1 << 21},
    {"--n-ctx", &synth_params::n_ctx, 1 << 20},        {"--head-dim", &synth_params::head_dim, 1 << 14},
    {"--n-expert", &synth_params::n_expert, 1024},     {"--n-expert-used", &synth_params::n_expert_used, 1024},
    {"--n-ff-exp", &synth_params::n_ff_exp, 1 << 20},  {"--sliding-window", &synth_params::sliding_window, 1 << 24},
};

struct synth_float_flag {
    const char * name;
    float synth_params::*field;
};

constexpr synth_float_flag k_float_flags[] = {
    {"--rope-base", &synth_params::rope_base},
    {"--rope-base-swa", &synth_params::rope_base_swa},
    {"--attn-softcap", &synth_params::attn_softcap},
    {"--final-softcap", &synth_params::final_softcap},
};

// A positive finite number ("10000", "1e6", "50.0").
bool synth_parse_positive_float(const std::string & s, float * out) {
    const char * first = s.data();
    const char * last = first + s.size();
    float v = 0.0f;
    const auto [end, ec] = std::from_chars(first, last, v);
    if (ec != std::errc() || end != last || first == last || !(v > 0.0f) || !std::isfinite(v)) return false;
    *out = v;
    return true;
}

bool synth_parse_u64(const std::string & s, uint64_t * out) {
    const char * first = s.data();
    const char * last = first + s.size();
    const auto [end, ec] = std::from_chars(first, last, *out);
    return ec == std::errc() && end == last && first != last;
}

// Fills p from the options; false with *error naming the flag.
bool synth_params_from_args(const tool_args & a, synth_params * p, std::string * error) {
    if (const std::string * v = a.option("--arch")) p->arch = *v;
    for (const synth_int_flag & f : k_int_flags) {
        const std::string * v = a.option(f.name);
        if (!v) continue;
        if (!tool_args_parse_int(*v, 1, f.max, &(p->*f.field))) {
            *error = std::string(f.name) + " wants a number in 1.." + std::to_string(f.max) + ", got '" + *v + "'";
            return false;
        }
    }
    for (const synth_float_flag & f : k_float_flags) {
        const std::string * v = a.option(f.name);
        if (v && !synth_parse_positive_float(*v, &(p->*f.field))) {
            *error = std::string(f.name) + " wants a positive number, got '" + *v + "'";
            return false;
        }
    }
    p->untied_output = tool_args_has(a, "--untied-output");
    p->confident = tool_args_has(a, "--confident");
    if (const std::string * v = a.option("--seed"); v && !synth_parse_u64(*v, &p->seed)) {
        *error = "--seed wants a non-negative whole number, got '" + *v + "'";
        return false;
    }
    if (const std::string * v = a.option("--type")) {
        if (*v == "f16" || *v == "F16") {
            p->type = GGML_TYPE_F16;
        } else if (*v == "f32" || *v == "F32") {
            p->type = GGML_TYPE_F32;
        } else {
            *error = "--type wants f16 or f32, got '" + *v + "'";
            return false;
        }
    }
    if (const std::string * v = a.option("--vocab")) p->vocab_path = *v;
    if (const std::string * v = a.option("--chat-template")) p->chat_template = *v;
    if (const std::string * v = a.option("--pooling")) p->pooling = *v;
    return true;
}

int synth_usage_error(std::FILE * err, const std::string & message) {
    std::fprintf(err, "inferd-gguf synth: %s\n(inferd-gguf --help shows the usage)\n", message.c_str());
    return 2;
}

}  // namespace

const std::vector<std::string> & synth_option_names() {
    static const std::vector<std::string> names = {
        "--arch", "--n-embd", "--n-layer", "--n-head", "--n-head-kv", "--n-ff", "--n-vocab", "--n-ctx",
        "--head-dim", "--n-expert", "--n-expert-used", "--n-ff-exp", "--sliding-window", "--rope-base",
        "--rope-base-swa", "--attn-softcap", "--final-softcap", "--untied-output", "--seed", "--vocab", "--type",
        "--chat-template", "--pooling", "--confident"};
    return names;
}

int synth_tool_main(const tool_args & args, int n_threads, std::FILE * out, std::FILE * err) {
    synth_params p;
    std::string error;
    if (!synth_params_from_args(args, &p, &error)) return synth_usage_error(err, error);
    if (args.positional.size() != 2) return synth_usage_error(err, "wants exactly one output file OUT.gguf");
    p.out_path = args.positional[1];
    p.n_threads = n_threads;
    p.progress = err;
    std::vector<std::string> warnings;
    bool io_error = false;
    if (!synth_params_check(&p, &warnings, &error, &io_error)) {
        if (!io_error) return synth_usage_error(err, error);
        std::fprintf(err, "inferd-gguf synth: %s\n", error.c_str());
        return 1;
    }
    for (const std::string & w : warnings) std::fprintf(err, "inferd-gguf synth: warning: %s\n", w.c_str());
    synth_stats st;
    if (!synth_model_write(p, &st, &error)) {
        std::fprintf(err, "inferd-gguf synth: %s\n", error.c_str());
        return 1;
    }
    std::string experts;  // what the shape does not say: experts, an encoder's pooling
    if (p.n_expert > 0) {
        experts = ", " + std::to_string(p.n_expert) + " experts (" + std::to_string(p.n_expert_used) + " used)";
    } else if (p.confident) {
        experts = ", confident";
    } else if (!p.pooling.empty()) {
        experts = ", ";
        experts += p.pooling;
        experts += " pooling";
    }
    std::fprintf(out, "%s: %s %dx%d%s, %zu tensors, %llu parameters, %.1f MiB of %s weights, %.1f s\n",
                 p.out_path.c_str(), p.arch.c_str(), p.n_embd, p.n_layer, experts.c_str(), st.n_tensors,
                 (unsigned long long) st.n_params, double(st.bytes) / (1024.0 * 1024.0),
                 p.type == GGML_TYPE_F16 ? "f16" : "f32", st.seconds);
    return 0;
}
