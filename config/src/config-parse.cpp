// config_parse: the command line, the INFERD_* environment and the JSON config file, layered
// over the defaults, then the API-key file and the checks between settings.
#include "config-internal.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <thread>

extern char ** environ;

namespace {

// The configuration being built and where each setting came from (for messages).
struct parse_state {
    server_config cfg;
    std::set<const config_flag *> lists_set_in_layer;  // list flags already cleared in this layer
    std::map<std::string, std::string> origin;         // long name -> "--port", "INFERD_PORT", …

    std::string origin_of(const char * long_name) const {
        auto it = origin.find(long_name);
        return it != origin.end() ? it->second : std::string("--") + long_name + " (default)";
    }
};

bool apply_value(parse_state & st, const config_flag & f, std::string_view value, const std::string & origin,
                 std::string * err) {
    if (f.is_list && f.clear && st.lists_set_in_layer.insert(&f).second) f.clear(st.cfg);
    std::string why;
    if (!f.apply(st.cfg, value, &why)) {
        *err = origin + ": " + why;
        return false;
    }
    st.origin[f.long_name] = origin;
    return true;
}

// --- command line ---------------------------------------------------------------------------

struct cli_item {
    const config_flag * flag;
    std::string value;
    std::string origin;  // the flag as typed: "-c", "--ctx-size"
};

struct cli_scan {
    std::vector<cli_item> items;
    bool help = false, version = false;
    std::optional<std::string> config_path;
    std::string error;  // the first problem, "" when none
};

std::string unknown_flag_message(std::string_view arg) {
    if (arg.empty() || arg[0] != '-' || arg == "-") {
        return "unexpected argument " + config_quote(arg) + " (every setting is a flag; see --help)";
    }
    std::string_view bare = arg;
    while (!bare.empty() && bare[0] == '-') bare.remove_prefix(1);
    std::string msg = "unknown flag " + config_quote(arg);
    std::string guess = bare.empty() ? std::string() : config_flag_suggest(bare);
    return msg + (guess.empty() ? " (see --help)" : " (did you mean --" + guess + "?)");
}

// A following argument that is itself a long flag is not taken as a value ("-m --port 80").
bool looks_like_long_flag(const std::string & a) { return a.size() > 2 && a.compare(0, 2, "--") == 0; }

cli_scan scan_cli(const std::vector<std::string> & args) {
    cli_scan scan;
    auto fail = [&](std::string msg) {
        if (scan.error.empty()) scan.error = std::move(msg);
    };
    for (size_t i = 0; i < args.size(); ++i) {
        const std::string & arg = args[i];
        std::string_view name = arg;
        std::optional<std::string> inline_value;
        if (looks_like_long_flag(arg) && arg.find('=') != std::string::npos) {
            size_t eq = arg.find('=');
            name = std::string_view(arg).substr(0, eq);
            inline_value = arg.substr(eq + 1);
        }
        const config_flag * f = config_flag_find_cli(name);
        if (!f) {
            fail(unknown_flag_message(inline_value ? name : std::string_view(arg)));
            continue;
        }
        if (f->action == config_flag_action::help) scan.help = true;
        if (f->action == config_flag_action::version) scan.version = true;
        if (f->action == config_flag_action::help || f->action == config_flag_action::version) continue;
        std::string origin(name), value;
        bool ignored = false;
        std::string why;
        if (!f->value_name) {
            // A switch takes an optional boolean word after it too: "-fa on", "--flash-attn off".
            bool word_follows = !inline_value && i + 1 < args.size() && config_parse_bool(args[i + 1], &ignored, &why);
            value = word_follows ? args[++i] : inline_value.value_or("true");
        } else if (inline_value) {
            value = *inline_value;
        } else if (i + 1 < args.size() && !looks_like_long_flag(args[i + 1])) {
            value = args[++i];
        } else {
            fail(origin + ": missing value (expects " + f->value_name + ")");
            continue;
        }
        if (f->action == config_flag_action::config_file) {
            scan.config_path = value;
            continue;
        }
        scan.items.push_back({f, std::move(value), std::move(origin)});
    }
    return scan;
}

// --- config file ------------------------------------------------------------------------------

// A JSON scalar as the text a flag parses; nullopt for null, objects and arrays.
std::optional<std::string> json_scalar_text(const nlohmann::json & v) {
    if (v.is_string()) return v.get<std::string>();
    if (v.is_boolean()) return std::string(v.get<bool>() ? "true" : "false");
    if (v.is_number()) return v.dump();
    return std::nullopt;
}

bool apply_file_key(parse_state & st, const std::string & where, const std::string & key, const nlohmann::json & v,
                    std::string * err) {
    const config_flag * f = config_flag_find_long(key);
    if (!f || !f->in_file) {
        *err = where + ": unknown key " + config_quote(key);
        if (f) {
            *err += " (not a setting: use it on the command line)";
        } else if (std::string guess = config_flag_suggest(key); !guess.empty()) {
            *err += " (did you mean '" + guess + "'?)";
        }
        return false;
    }
    std::string origin = where + ": key " + config_quote(key);
    if (v.is_array() && f->is_list) {
        for (const nlohmann::json & item : v) {
            std::optional<std::string> text = json_scalar_text(item);
            if (!text) {
                *err = origin + ": expected strings in the array, got " + item.type_name();
                return false;
            }
            if (!apply_value(st, *f, *text, origin, err)) return false;
        }
        return true;
    }
    std::optional<std::string> text = json_scalar_text(v);
    if (!text && v.is_object() && f->value_name && std::string_view(f->value_name) == "JSON") text = v.dump();
    if (!text) {
        *err = origin + ": expected a string, number or boolean, got " + (v.is_array() ? "an array" : v.type_name());
        return false;
    }
    return apply_value(st, *f, *text, origin, err);
}

bool apply_file(parse_state & st, const std::string & path, const std::string & flag_origin, std::string * err) {
    std::string body, why;
    if (!config_read_file(path, &body, &why)) {
        *err = flag_origin + ": " + why;
        return false;
    }
    std::string where = "config file " + config_quote(path);
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/true, /*ignore_comments=*/true);
    } catch (const nlohmann::json::exception & e) {
        std::string what = e.what();
        size_t close = what.find("] ");  // drop the "[json.exception.parse_error.101] " prefix
        *err = where + ": invalid JSON: " + (close != std::string::npos ? what.substr(close + 2) : what);
        return false;
    }
    if (!j.is_object()) {
        *err = where + ": expected a JSON object of settings, got " + (j.is_array() ? "an array" : j.type_name());
        return false;
    }
    for (const auto & [key, value] : j.items()) {
        if (!apply_file_key(st, where, key, value, err)) return false;
    }
    st.cfg.config_file = path;
    return true;
}

// --- environment ------------------------------------------------------------------------------

bool apply_env(parse_state & st, const config_env & env, std::string * err) {
    for (const config_flag & f : config_flag_table()) {
        if (!f.env_name || f.action != config_flag_action::set) continue;
        auto it = env.find(f.env_name);
        if (it == env.end() || it->second.empty()) continue;  // empty = unset
        if (!f.is_list) {
            if (!apply_value(st, f, it->second, f.env_name, err)) return false;
            continue;
        }
        for (const std::string & item : config_split_list(it->second)) {
            if (!apply_value(st, f, item, f.env_name, err)) return false;
        }
    }
    return true;
}

// --- after the layers -------------------------------------------------------------------------

bool load_api_key_file(parse_state & st, std::string * err) {
    const std::string & path = st.cfg.api_key_file;
    std::string origin = st.origin_of("api-key-file"), body, why;
    if (!config_read_file(path, &body, &why)) {
        *err = origin + ": " + why;
        return false;
    }
    size_t line_no = 0, found = 0;
    std::string_view rest = body;
    while (!rest.empty()) {
        size_t nl = rest.find('\n');
        std::string_view line = config_trim(rest.substr(0, nl));
        rest.remove_prefix(nl == std::string_view::npos ? rest.size() : nl + 1);
        ++line_no;
        if (line.empty() || line[0] == '#') continue;
        if (!config_check_key(line, &why)) {
            *err = origin + ": line " + std::to_string(line_no) + " of " + config_quote(path) + ": " + why;
            return false;
        }
        st.cfg.api_keys.emplace_back(line);
        ++found;
    }
    if (found == 0) {
        *err = origin + ": " + config_quote(path) + " holds no key (one key per line)";
        return false;
    }
    return true;
}

bool finish(parse_state & st, std::string * err) {
    server_config & c = st.cfg;
    if (!c.api_key_file.empty() && !load_api_key_file(st, err)) return false;
    if (c.model_path.empty() && !c.list_devices) {
        *err = "no model given: pass -m/--model FILE (or set INFERD_MODEL, or \"model\" in the config file)";
        return false;
    }
    if (c.ubatch_size > c.batch_size) {
        *err = st.origin_of("ubatch-size") + ": the ubatch size " + std::to_string(c.ubatch_size) +
               " is larger than the batch size " + std::to_string(c.batch_size) + " (" +
               st.origin_of("batch-size") + ")";
        return false;
    }
    if (c.ssl_cert_file.empty() != c.ssl_key_file.empty()) {
        *err = c.ssl_cert_file.empty() ? st.origin_of("ssl-key-file") + ": HTTPS needs --ssl-cert-file as well"
                                       : st.origin_of("ssl-cert-file") + ": HTTPS needs --ssl-key-file as well";
        return false;
    }
    if (c.draft_min > c.draft_max) {
        *err = st.origin_of("draft-min") + ": the minimum draft " + std::to_string(c.draft_min) +
               " is larger than the maximum draft " + std::to_string(c.draft_max) + " (" +
               st.origin_of("draft-max") + ")";
        return false;
    }
    if (c.threads == 0) c.threads = static_cast<int>(std::clamp(std::thread::hardware_concurrency(), 1u, 1024u));
    return true;
}

}  // namespace

config_status config_parse(const std::vector<std::string> & args, const config_env & env, server_config * cfg,
                           std::string * text) {
    text->clear();
    *cfg = server_config{};
    cli_scan scan = scan_cli(args);
    if (scan.help) return *text = config_help_text(), config_status::help;
    if (scan.version) return *text = config_version_text(), config_status::version;
    if (!scan.error.empty()) return *text = scan.error, config_status::usage_error;

    parse_state st;
    std::string err;
    std::string file_origin = scan.config_path ? "--config" : "INFERD_CONFIG";
    std::optional<std::string> path = scan.config_path;
    if (!path) {
        if (auto it = env.find("INFERD_CONFIG"); it != env.end() && !it->second.empty()) path = it->second;
    }
    bool ok = true;
    if (path && path->empty()) {
        err = file_origin + ": the value is empty";
        ok = false;
    }
    ok = ok && (!path || apply_file(st, *path, file_origin, &err));
    st.lists_set_in_layer.clear();
    ok = ok && apply_env(st, env, &err);
    st.lists_set_in_layer.clear();
    for (size_t i = 0; ok && i < scan.items.size(); ++i) {
        const cli_item & item = scan.items[i];
        ok = apply_value(st, *item.flag, item.value, item.origin, &err);
    }
    ok = ok && finish(st, &err);
    if (!ok) return *text = err, config_status::usage_error;
    *cfg = std::move(st.cfg);
    return config_status::ok;
}

std::vector<std::string> config_args_from_argv(int argc, const char * const * argv) {
    std::vector<std::string> args;
    for (int i = 1; i < argc; ++i) args.emplace_back(argv[i] ? argv[i] : "");
    return args;
}

config_env config_env_from_process() {
    config_env env;
    for (char ** e = environ; e && *e; ++e) {
        std::string_view kv = *e;
        if (kv.substr(0, 7) != "INFERD_") continue;
        size_t eq = kv.find('=');
        if (eq == std::string_view::npos) continue;
        env.emplace(std::string(kv.substr(0, eq)), std::string(kv.substr(eq + 1)));
    }
    return env;
}

int config_exit_code(config_status st) { return st == config_status::usage_error ? 2 : 0; }
