// inferd-cli template parse: a model's raw output text → the assistant message the tool-call
// parser (inferd-toolcall) makes of it, printed as one JSON object
// {"content", "reasoning_content", "tool_calls": [{"name", "arguments", "id"?}]}. The wire format
// (family) comes from a model's tokenizer.chat_template, a template file or a name. Also the
// dispatch of the template commands (room for `template render`).
#include "cli-common.h"

#include "toolcall/toolcall.h"

#include <nlohmann/json.hpp>

#include <fstream>
#include <optional>
#include <sstream>

namespace {

using nlohmann::ordered_json;

bool read_file(const std::string & path, std::string * out) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return false;
    std::ostringstream ss;
    ss << in.rdbuf();
    *out = ss.str();
    return !in.bad();
}

int fail(const cli_env & env, const std::string & message) {
    std::fprintf(env.err, "inferd-cli: %s\n", message.c_str());
    return 2;
}

std::string family_names() {
    std::string names;
    for (toolcall::family f : toolcall::all_families()) {
        names += (names.empty() ? "" : ", ") + std::string(toolcall::family_name(f));
    }
    return names;
}

// The family from --model, --template or --family; nullopt after printing why.
std::optional<toolcall::family> pick_family(const tool_args & a, const cli_env & env) {
    if (const std::string * name = a.option("--family")) {
        std::optional<toolcall::family> f = toolcall::family_from_name(*name);
        if (!f) fail(env, "unknown family '" + *name + "' (one of: " + family_names() + ")");
        return f;
    }
    if (const std::string * path = a.option("--template")) {
        std::string source;
        if (!read_file(*path, &source)) return fail(env, "cannot read " + *path), std::nullopt;
        return toolcall::detect_family(source);
    }
    const std::string & path = *a.option("--model");
    model_params mp;
    mp.vocab_only = true;
    std::unique_ptr<model> md = cli_load_model(path, mp, env);
    if (!md) return std::nullopt;
    if (md->chat_template().empty()) return fail(env, path + " has no tokenizer.chat_template"), std::nullopt;
    return toolcall::detect_family(md->chat_template());
}

int parse_main(const std::vector<std::string> & args, const cli_env & env) {
    tool_args a;
    std::string e;
    if (!tool_args_parse(args,
                         {{"-m", "--model"}, {nullptr, "--template"}, {nullptr, "--family"}, {nullptr, "--tools"},
                          {nullptr, "--reasoning-open", true}},
                         &a, &e)) {
        return cli_usage_error(env, e);
    }
    if (a.help) return cli_print_usage(env.out), 0;
    const int sources = int(tool_args_has(a, "--model")) + int(tool_args_has(a, "--template")) + int(tool_args_has(a, "--family"));
    if (sources != 1) return cli_usage_error(env, "template parse needs one of --model FILE.gguf, --template FILE.jinja or --family NAME");
    if (a.positional.size() != 1) {
        return cli_usage_error(env, a.positional.empty() ? "template parse needs a TEXT_FILE"
                                                         : "unexpected argument '" + a.positional[1] + "'");
    }

    toolcall::parse_options opts;
    opts.reasoning_open = tool_args_has(a, "--reasoning-open");
    if (const std::string * path = a.option("--tools")) {
        std::string text;
        if (!read_file(*path, &text)) return fail(env, "cannot read " + *path);
        opts.tools = ordered_json::parse(text, nullptr, false);
        if (opts.tools.is_discarded()) return fail(env, *path + ": not valid JSON");
        if (!opts.tools.is_array()) return fail(env, *path + ": tools must be a JSON array ([{\"type\": \"function\", \"function\": {...}}])");
        for (const ordered_json & t : opts.tools) {
            if (!t.is_object()) return fail(env, *path + ": every tool must be a JSON object");
        }
    }
    std::string text;
    if (!read_file(a.positional[0], &text)) return fail(env, "cannot read " + a.positional[0]);
    const std::optional<toolcall::family> f = pick_family(a, env);
    if (!f) return 2;

    // Two seeds tell the format's own ids (the same in both) from generated ones.
    opts.id_seed = 1;
    const toolcall::message m = toolcall::parse(*f, text, opts);
    opts.id_seed = 2;
    const toolcall::message m2 = toolcall::parse(*f, text, opts);

    ordered_json j = ordered_json::object();
    j["content"] = m.content;
    j["reasoning_content"] = m.reasoning_content;
    j["tool_calls"] = ordered_json::array();
    for (size_t i = 0; i < m.tool_calls.size(); ++i) {
        const toolcall::tool_call & c = m.tool_calls[i];
        ordered_json call = {{"name", c.name}, {"arguments", c.arguments}};
        if (!c.id.empty() && i < m2.tool_calls.size() && m2.tool_calls[i].id == c.id) call["id"] = c.id;
        j["tool_calls"].push_back(std::move(call));
    }
    const std::string out = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    std::fwrite(out.data(), 1, out.size(), env.out);
    return 0;
}

}  // namespace

int cli_template_main(const std::vector<std::string> & args, const cli_env & env) {
    if (args.empty()) return cli_usage_error(env, "template needs a command (parse)");
    const std::vector<std::string> rest(args.begin() + 1, args.end());
    if (args[0] == "parse") return parse_main(rest, env);
    return cli_usage_error(env, "unknown template command '" + args[0] + "' (supported: parse)");
}
