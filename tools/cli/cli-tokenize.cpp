// inferd-cli tokenize / detokenize: work on vocabulary-only GGUF files too.
#include "cli-common.h"

namespace {

std::unique_ptr<model> load_vocab(const tool_args & a, const cli_env & env) {
    const std::string * m = a.option("--model");
    if (!m || m->empty()) return cli_usage_error(env, "-m MODEL is required"), nullptr;
    model_params mp;
    mp.vocab_only = true;
    std::unique_ptr<model> md = cli_load_model(*m, mp, env);
    if (md && md->get_vocab().type() == vocab_type::none) {
        std::fprintf(env.err, "inferd-cli: %s has no tokenizer\n", m->c_str());
        return nullptr;
    }
    return md;
}

}  // namespace

int cli_tokenize_main(const std::vector<std::string> & args, const cli_env & env) {
    tool_args a;
    std::string e;
    if (!tool_args_parse(args, {{"-m", "--model"}, {"-p", "--prompt"}, {nullptr, "--no-bos", true},
                                {nullptr, "--parse-special", true}},
                         &a, &e)) {
        return cli_usage_error(env, e);
    }
    if (a.help) return cli_print_usage(env.out), 0;
    if (!a.positional.empty()) return cli_usage_error(env, "unexpected argument '" + a.positional[0] + "'");
    const std::string * p = a.option("--prompt");
    if (!p) return cli_usage_error(env, "-p TEXT is required");
    std::unique_ptr<model> m = load_vocab(a, env);
    if (!m) return a.option("--model") ? 1 : 2;
    const std::vector<int32_t> ids =
        m->get_tokenizer().tokenize(*p, !tool_args_has(a, "--no-bos"), tool_args_has(a, "--parse-special"));
    std::string line = "[";
    for (size_t i = 0; i < ids.size(); ++i) {
        if (i) line += ", ";
        line += std::to_string(ids[i]);
    }
    std::fprintf(env.out, "%s]\n", line.c_str());
    return 0;
}

int cli_detokenize_main(const std::vector<std::string> & args, const cli_env & env) {
    tool_args a;
    std::string e;
    if (!tool_args_parse(args, {{"-m", "--model"}, {nullptr, "--tokens"}}, &a, &e)) return cli_usage_error(env, e);
    if (a.help) return cli_print_usage(env.out), 0;
    if (!a.positional.empty()) return cli_usage_error(env, "unexpected argument '" + a.positional[0] + "'");
    const std::string * t = a.option("--tokens");
    std::vector<int32_t> ids;
    if (!t) return cli_usage_error(env, "--tokens LIST is required");
    if (!cli_parse_token_list(*t, &ids)) return cli_usage_error(env, "--tokens wants comma-separated integers, got '" + *t + "'");
    std::unique_ptr<model> m = load_vocab(a, env);
    if (!m) return a.option("--model") ? 1 : 2;
    std::string text;
    if (!m->get_tokenizer().detokenize(ids, &text, &e)) {
        std::fprintf(env.err, "inferd-cli: %s\n", e.c_str());
        return 1;
    }
    std::fprintf(env.out, "%s\n", text.c_str());
    return 0;
}
