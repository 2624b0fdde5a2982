// inferd-cli template render: a conversation rendered with a chat template (the model's
// tokenizer.chat_template or a file) by the Jinja engine, printed exactly.
// inferd-cli template parse: a model's raw output text → the assistant message the tool-call
// parser (inferd-toolcall) makes of it, printed as one JSON object
// {"content", "reasoning_content", "tool_calls": [{"name", "arguments", "id"?}]}. The wire format
// (family) comes from a model's tokenizer.chat_template, a template file or a name.
#include "cli-common.h"

#include "jinja/jinja.h"
#include "toolcall/toolcall.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <ctime>
#include <optional>

namespace {

using nlohmann::ordered_json;

int fail(const cli_env & env, const std::string & message) {
    std::fprintf(env.err, "inferd-cli: %s\n", message.c_str());
    return 2;
}

// The model of --model (vocabulary only) when it has a chat template; nullptr after printing why.
std::unique_ptr<model> load_template_model(const std::string & path, const cli_env & env) {
    model_params mp;
    mp.vocab_only = true;
    std::unique_ptr<model> md = cli_load_model(path, mp, env);
    if (md && md->chat_template().empty()) return fail(env, path + " has no tokenizer.chat_template"), nullptr;
    return md;
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
        if (!cli_read_file(*path, &source)) return fail(env, "cannot read " + *path), std::nullopt;
        return toolcall::detect_family(source);
    }
    const std::unique_ptr<model> md = load_template_model(*a.option("--model"), env);
    if (!md) return std::nullopt;
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
        if (!cli_read_file(*path, &text)) return fail(env, "cannot read " + *path);
        opts.tools = ordered_json::parse(text, nullptr, false);
        if (opts.tools.is_discarded()) return fail(env, *path + ": not valid JSON");
        if (!opts.tools.is_array()) return fail(env, *path + ": tools must be a JSON array ([{\"type\": \"function\", \"function\": {...}}])");
        for (const ordered_json & t : opts.tools) {
            if (!t.is_object()) return fail(env, *path + ": every tool must be a JSON object");
        }
    }
    std::string text;
    if (!cli_read_file(a.positional[0], &text)) return fail(env, "cannot read " + a.positional[0]);
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

// The template source and the special-token texts: from --model (its template and its
// vocabulary's BOS / EOS texts) or from --template (with --bos / --eos, else left undefined).
struct render_source {
    std::string text, name;
    std::optional<std::string> bos, eos;
};

bool load_render_source(const tool_args & a, const cli_env & env, render_source * out) {
    if (const std::string * file = a.option("--template")) {
        if (!cli_read_file(*file, &out->text)) return fail(env, "cannot read " + *file), false;
        out->name = *file;
    } else {
        const std::unique_ptr<model> md = load_template_model(*a.option("--model"), env);
        if (!md) return false;
        out->text = md->chat_template();
        out->name = "tokenizer.chat_template";
        const vocab & v = md->get_vocab();
        if (v.bos_id() >= 0) out->bos = v.token_text(v.bos_id());
        if (v.eos_id() >= 0) out->eos = v.token_text(v.eos_id());
    }
    if (const std::string * b = a.option("--bos")) out->bos = *b;
    if (const std::string * e = a.option("--eos")) out->eos = *e;
    return true;
}

// The render context: messages (a JSON array, or an object with "messages" and perhaps
// "tools"), tools, add_generation_prompt, bos_token / eos_token and the --kwargs object's keys.
bool build_render_context(const tool_args & a, const render_source & src, const cli_env & env, ordered_json * ctx) {
    std::string text;
    const std::string & path = *a.option("--messages");
    if (!cli_read_file(path, &text)) return fail(env, "cannot read " + path), false;
    ordered_json m = ordered_json::parse(text, nullptr, false);
    if (m.is_discarded()) return fail(env, path + ": not valid JSON"), false;
    ordered_json tools;
    if (m.is_object()) {
        if (m.contains("tools")) tools = m["tools"];
        m = m.value("messages", ordered_json());
    }
    if (!m.is_array()) return fail(env, path + ": messages must be a JSON array (or an object with \"messages\")"), false;
    if (const std::string * tp = a.option("--tools")) {
        if (!cli_read_file(*tp, &text)) return fail(env, "cannot read " + *tp), false;
        tools = ordered_json::parse(text, nullptr, false);
        if (tools.is_discarded() || !tools.is_array()) return fail(env, *tp + ": tools must be a JSON array"), false;
    }
    *ctx = ordered_json::object();
    (*ctx)["messages"] = std::move(m);
    if (!tools.is_null()) (*ctx)["tools"] = std::move(tools);
    (*ctx)["add_generation_prompt"] = !tool_args_has(a, "--no-generation-prompt");
    if (src.bos) (*ctx)["bos_token"] = *src.bos;
    if (src.eos) (*ctx)["eos_token"] = *src.eos;
    if (const std::string * kw = a.option("--kwargs")) {
        const ordered_json k = ordered_json::parse(*kw, nullptr, false);
        if (k.is_discarded() || !k.is_object()) return fail(env, "--kwargs must be a JSON object"), false;
        for (const auto & [key, value] : k.items()) (*ctx)[key] = value;
    }
    return true;
}

int render_main(const std::vector<std::string> & args, const cli_env & env) {
    tool_args a;
    std::string e;
    if (!tool_args_parse(args,
                         {{"-m", "--model"}, {nullptr, "--template"}, {nullptr, "--messages"}, {nullptr, "--tools"},
                          {nullptr, "--kwargs"}, {nullptr, "--bos"}, {nullptr, "--eos"}, {nullptr, "--date"},
                          {nullptr, "--no-generation-prompt", true}},
                         &a, &e)) {
        return cli_usage_error(env, e);
    }
    if (a.help) return cli_print_usage(env.out), 0;
    if (int(tool_args_has(a, "--model")) + int(tool_args_has(a, "--template")) != 1) {
        return cli_usage_error(env, "template render needs one of --model FILE.gguf or --template FILE.jinja");
    }
    if (!tool_args_has(a, "--messages")) return cli_usage_error(env, "template render needs --messages FILE.json");
    if (!a.positional.empty()) return cli_usage_error(env, "unexpected argument '" + a.positional[0] + "'");
    render_source src;
    ordered_json ctx;
    if (!load_render_source(a, env, &src) || !build_render_context(a, src, env, &ctx)) return 2;
    jinja::render_options ro;
    if (const std::string * date = a.option("--date")) {
        std::tm tm{};
        char rest = 0;
        if (std::sscanf(date->c_str(), "%4d-%2d-%2d%c", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &rest) != 3 ||
            tm.tm_mon < 1 || tm.tm_mon > 12 || tm.tm_mday < 1 || tm.tm_mday > 31) {
            return cli_usage_error(env, "--date wants YYYY-MM-DD, not '" + *date + "'");
        }
        tm.tm_year -= 1900;
        tm.tm_mon -= 1;
        const time_t t = timegm(&tm);  // fills the weekday and the day of the year
        gmtime_r(&t, &tm);
        ro.clock = [tm] { return tm; };
    }
    try {
        jinja::parse_options po;
        po.source_name = src.name;
        const jinja::parsed_template t = jinja::parse(src.text, po);
        const std::string out = jinja::render(t, ctx, ro);
        std::fwrite(out.data(), 1, out.size(), env.out);
    } catch (const jinja::error & err) {
        return fail(env, err.what());
    }
    return 0;
}

}  // namespace

int cli_template_main(const std::vector<std::string> & args, const cli_env & env) {
    if (args.empty()) return cli_usage_error(env, "template needs a command (render, parse)");
    const std::vector<std::string> rest(args.begin() + 1, args.end());
    if (args[0] == "render") return render_main(rest, env);
    if (args[0] == "parse") return parse_main(rest, env);
    return cli_usage_error(env, "unknown template command '" + args[0] + "' (supported: render, parse)");
}
