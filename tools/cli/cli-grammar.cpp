// inferd-cli grammar compile: a GBNF grammar or a JSON Schema compiled to the grammar constrained
// generation uses, printed as GBNF (one rule per line, generated rules included); a compile error
// names the file and the problem (line and column for GBNF, the keyword and its place for
// schemas). Also the dispatch of the grammar commands (check and bench have files of their own)
// and the vocabulary loading they share.
#include "cli-grammar.h"

#include "engine/grammar-stage.h"
#include "grammar/gbnf.h"
#include "grammar/json-schema.h"

bool cli_grammar_load_vocab(const std::string & path, const cli_env & env, cli_grammar_vocab * out) {
    model_params mp;
    mp.vocab_only = true;
    out->md = cli_load_model(path, mp, env);
    if (!out->md) return false;
    if (out->md->get_vocab().type() == vocab_type::none) {
        std::fprintf(env.err, "inferd-cli: %s has no tokenizer\n", path.c_str());
        return false;
    }
    try {
        out->gv = grammar_vocab_from_model(out->md->get_vocab(), out->md->get_tokenizer());
    } catch (const std::exception & e) {
        std::fprintf(env.err, "inferd-cli: %s: %s\n", path.c_str(), e.what());
        return false;
    }
    return out->gv != nullptr;
}

std::vector<int32_t> cli_grammar_tokenize(const cli_grammar_vocab & v, const std::string & text) {
    return v.md->get_tokenizer().tokenize(text, false, false);
}

namespace {

int compile_main(const std::vector<std::string> & args, const cli_env & env) {
    tool_args a;
    std::string e;
    if (!tool_args_parse(args, {{nullptr, "--gbnf"}, {nullptr, "--schema"}}, &a, &e)) return cli_usage_error(env, e);
    if (a.help) return cli_print_usage(env.out), 0;
    if (!a.positional.empty()) return cli_usage_error(env, "unexpected argument '" + a.positional[0] + "'");
    const std::string * gbnf = a.option("--gbnf");
    const std::string * schema = a.option("--schema");
    if ((gbnf != nullptr) == (schema != nullptr)) return cli_usage_error(env, "grammar compile needs one of --gbnf FILE or --schema FILE");
    const std::string & path = gbnf ? *gbnf : *schema;
    std::string text;
    if (!cli_read_file(path, &text)) {
        std::fprintf(env.err, "inferd-cli: cannot read %s\n", path.c_str());
        return 1;
    }
    if (gbnf) {
        const grammar_parse_result r = grammar_parse_gbnf(text);
        if (!r.ok()) {
            std::fprintf(env.err, "inferd-cli: %s: %s\n", path.c_str(), r.error.to_string().c_str());
            return 1;
        }
        std::fputs(grammar_to_gbnf(r.value).c_str(), env.out);
        return 0;
    }
    const json_schema_result r = json_schema_compile(text);
    if (!r.ok()) {
        std::fprintf(env.err, "inferd-cli: %s: %s\n", path.c_str(), r.error.c_str());
        return 1;
    }
    std::fputs(grammar_to_gbnf(r.value).c_str(), env.out);
    return 0;
}

}  // namespace

int cli_grammar_main(const std::vector<std::string> & args, const cli_env & env) {
    if (args.empty()) return cli_usage_error(env, "grammar needs a command (compile, check, bench)");
    const std::vector<std::string> rest(args.begin() + 1, args.end());
    if (args[0] == "compile") return compile_main(rest, env);
    if (args[0] == "check") return cli_grammar_check_main(rest, env);
    if (args[0] == "bench") return cli_grammar_bench_main(rest, env);
    return cli_usage_error(env, "unknown grammar command '" + args[0] + "' (supported: compile, check, bench)");
}
