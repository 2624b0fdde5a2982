// inferd-cli generate: prompt → continuation (text or ids), optional logits dump, speed on stderr.
#include "cli-common.h"
#include "engine/utf8-stream.h"

#include <chrono>

namespace {

struct generate_options {
    cli_model_options model;
    sampling_params sampling;
    std::vector<int32_t> tokens;
    std::string prompt;
    bool have_prompt = false;
    int n_predict = 128;
    bool ids = false;
    bool parse_special = false;
    std::string dump_logits;
};

int parse_generate(const std::vector<std::string> & args, const cli_env & env, generate_options * o) {
    tool_args a;
    std::string e;
    if (!tool_args_parse(args,
                         {{"-m", "--model"}, {"-p", "--prompt"}, {nullptr, "--tokens"}, {"-n", "--n-predict"},
                          {nullptr, "--temp"}, {"-s", "--seed"}, {nullptr, "--top-k"}, {nullptr, "--top-p"},
                          {nullptr, "--min-p"}, {nullptr, "--repeat-penalty"}, {"-t", "--threads"},
                          {"-c", "--ctx-size"}, {"-ub", "--ubatch"}, {"-ngl", "--n-gpu-layers"}, {"-fa", "--flash-attn", true},
                          {nullptr, "--ids", true}, {nullptr, "--parse-special", true}, {nullptr, "--dump-logits"}},
                         &a, &e)) {
        return cli_usage_error(env, e);
    }
    if (a.help) return cli_print_usage(env.out), -1;
    if (!a.positional.empty()) return cli_usage_error(env, "unexpected argument '" + a.positional[0] + "'");
    if (!cli_read_model_options(a, env, &o->model) || !cli_read_sampling_options(a, env, &o->sampling)) return 2;
    const std::string * p = a.option("--prompt");
    const std::string * t = a.option("--tokens");
    if ((p != nullptr) == (t != nullptr)) return cli_usage_error(env, "give exactly one of -p TEXT and --tokens LIST");
    if (p) o->prompt = *p, o->have_prompt = true;
    if (t && !cli_parse_token_list(*t, &o->tokens)) {
        return cli_usage_error(env, "--tokens wants comma-separated integers, got '" + *t + "'");
    }
    if (const std::string * v = a.option("--n-predict"); v && !tool_args_parse_int(*v, -1, 1 << 30, &o->n_predict)) {
        return cli_usage_error(env, "-n wants an integer >= -1, got '" + *v + "'");
    }
    o->ids = tool_args_has(a, "--ids");
    o->parse_special = tool_args_has(a, "--parse-special");
    if (const std::string * v = a.option("--dump-logits")) o->dump_logits = *v;
    return 0;
}

bool write_logits(const std::string & path, const std::vector<float> & logits, const cli_env & env) {
    std::FILE * f = std::fopen(path.c_str(), "wb");
    const bool ok = f && std::fwrite(logits.data(), sizeof(float), logits.size(), f) == logits.size();
    if (f && std::fclose(f) != 0) return false;
    if (!ok) std::fprintf(env.err, "inferd-cli: cannot write %s\n", path.c_str());
    return ok;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int cli_generate_main(const std::vector<std::string> & args, const cli_env & env) {
    generate_options o;
    if (const int rc = parse_generate(args, env, &o); rc != 0) return rc < 0 ? 0 : rc;
    std::unique_ptr<model> m = cli_load_model(o.model.path, cli_model_params(o.model), env);
    if (!m) return 1;
    if (o.have_prompt) o.tokens = m->get_tokenizer().tokenize(o.prompt, true, o.parse_special);
    for (int32_t id : o.tokens) {
        if (!m->get_vocab().valid_id(id)) {
            std::fprintf(env.err, "inferd-cli: token %d is outside the vocabulary (0..%d)\n", id, m->hparams().n_vocab - 1);
            return 1;
        }
    }
    if (o.tokens.empty()) return std::fprintf(env.err, "inferd-cli: the prompt is empty\n"), 1;
    const std::string why = sampling_params_validate(o.sampling, m->hparams().n_vocab);
    if (!why.empty()) return cli_usage_error(env, why);
    std::unique_ptr<context> ctx = cli_make_context(*m, o.model, env);
    if (!ctx) return 1;
    if (o.tokens.size() >= ctx->n_ctx()) {
        std::fprintf(env.err, "inferd-cli: the prompt (%zu tokens) does not fit the context (%u)\n", o.tokens.size(), ctx->n_ctx());
        return 1;
    }
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<float> all;
    if (cli_decode_tokens(*ctx, o.tokens, 0, !o.dump_logits.empty(), &all) != 0) {
        return std::fprintf(env.err, "inferd-cli: %s\n", ctx->last_error().c_str()), 1;
    }
    const double t_prompt = seconds_since(t0);
    if (!o.dump_logits.empty() && !write_logits(o.dump_logits, all, env)) return 1;

    sampler smp(o.sampling, m->hparams().n_vocab);
    for (int32_t id : o.tokens) smp.accept_history(id);
    std::vector<int32_t> generated;
    utf8_stream text;
    const float * row = ctx->logits(int32_t((o.tokens.size() - 1) % ctx->params().n_batch));
    const auto t1 = std::chrono::steady_clock::now();
    int32_t pos = int32_t(o.tokens.size());
    while (o.n_predict < 0 || int(generated.size()) < o.n_predict) {
        const int32_t id = smp.sample(row).id;
        if (id < 0 || m->get_vocab().is_eog(id)) break;
        smp.accept(id);
        generated.push_back(id);
        if (!o.ids) {
            std::fputs(text.push(m->get_tokenizer().token_to_piece(id)).c_str(), env.out);
            std::fflush(env.out);
        }
        if (uint32_t(pos) + 1 >= ctx->n_ctx()) break;  // the context is full
        llm_batch b;
        b.add(id, pos++, 0, true);
        if (ctx->decode(b) != 0) return std::fprintf(env.err, "\ninferd-cli: %s\n", ctx->last_error().c_str()), 1;
        row = ctx->logits(0);
    }
    const double t_gen = seconds_since(t1);
    if (o.ids) {
        std::string line = "[";
        for (size_t i = 0; i < generated.size(); ++i) {
            if (i) line += ",";
            line += std::to_string(generated[i]);
        }
        std::fprintf(env.out, "%s]\n", line.c_str());
    } else {
        std::fprintf(env.out, "%s\n", text.flush().c_str());
    }
    std::fprintf(env.err, "inferd-cli: prompt %zu tokens in %.3f s (%.1f t/s), generated %zu tokens in %.3f s (%.1f t/s)\n",
                 o.tokens.size(), t_prompt, double(o.tokens.size()) / std::max(t_prompt, 1e-9), generated.size(), t_gen,
                 double(generated.size()) / std::max(t_gen, 1e-9));
    return 0;
}
