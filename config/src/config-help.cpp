// What `inferd --help` and `--version` print, and the flag table for the README.
#include "config-internal.h"

#ifndef INFERD_VERSION
#error "INFERD_VERSION must be defined by the build (config/CMakeLists.txt)"
#endif

namespace {

// "-c, --ctx-size N"
std::string flag_synopsis(const config_flag_doc & d) {
    std::string s;
    std::string_view shorts = d.short_names;
    if (!shorts.empty()) s += std::string(shorts) + ", ";
    s += "--" + d.long_name;
    if (!d.value_name.empty()) s += " " + d.value_name;
    return s;
}

// Markdown table cells must not contain a bare '|'; '*' would start emphasis.
std::string md_cell(std::string_view s) {
    std::string out;
    for (char c : s) {
        if (c == '|' || c == '*') out += '\\';
        out += c;
    }
    return out;
}

// `text`, or "" for an empty text. (Built by appending: GCC 12 warns falsely on "`" + string.)
std::string md_code(std::string_view text) {
    std::string out;
    if (text.empty()) return out;
    out.append("`").append(text).append("`");
    return out;
}

// Words of text in lines of at most `width` characters, each after `indent` spaces but the first.
std::string wrap(std::string_view text, size_t indent, size_t width) {
    std::string out, line;
    auto flush = [&] {
        if (!out.empty()) out.append("\n").append(indent, ' ');
        out += line;
        line.clear();
    };
    while (!text.empty()) {
        size_t sp = text.find(' ');
        std::string_view word = text.substr(0, sp);
        text.remove_prefix(sp == std::string_view::npos ? text.size() : sp + 1);
        if (word.empty()) continue;
        if (!line.empty() && line.size() + 1 + word.size() > width) flush();
        if (!line.empty()) line += ' ';
        line += word;
    }
    if (!line.empty()) flush();
    return out;
}

}  // namespace

std::vector<config_flag_doc> config_flags() {
    const server_config defaults;
    std::vector<config_flag_doc> docs;
    for (const config_flag & f : config_flag_table()) {
        config_flag_doc d;
        d.long_name = f.long_name;
        std::string shorts = f.short_names;
        for (size_t p = shorts.find(' '); p != std::string::npos; p = shorts.find(' ', p + 2)) {
            shorts.replace(p, 1, ", ");
        }
        d.short_names = shorts;
        d.value_name = f.value_name ? f.value_name : "";
        d.env_name = f.env_name ? f.env_name : "";
        d.default_text = f.default_text(defaults);
        d.help = f.help;
        d.in_file = f.in_file;
        docs.push_back(std::move(d));
    }
    return docs;
}

std::string config_help_text() {
    std::string out =
        "usage: inferd -m MODEL.gguf [options]\n"
        "\n"
        "Serves the model over an OpenAI-compatible HTTP API (/v1/completions, /v1/chat/completions,\n"
        "/v1/models, /health, /metrics, /tokenize, /detokenize).\n"
        "\n"
        "Every setting comes from, highest first: the flag; its INFERD_* environment variable (lists\n"
        "as comma lists, switches as 1/0); the --config JSON file (keys are the long flag names);\n"
        "the default.\n";
    const char * group = "";
    std::vector<config_flag_doc> docs = config_flags();
    auto table = config_flag_table();
    for (size_t i = 0; i < docs.size(); ++i) {
        const config_flag_doc & d = docs[i];
        if (std::string_view(table[i].group) != group) {
            group = table[i].group;
            out += std::string("\n") + group + ":\n";
        }
        std::string line = "  " + flag_synopsis(d);
        constexpr size_t column = 32;
        line += line.size() + 2 <= column ? std::string(column - line.size(), ' ') : "\n" + std::string(column, ' ');
        std::string extra;
        if (!d.default_text.empty()) extra += "default: " + d.default_text;
        if (!d.env_name.empty()) extra += (extra.empty() ? "" : "; ") + std::string("env: ") + d.env_name;
        std::string text = d.help + (extra.empty() ? "" : " (" + extra + ")");
        out += line + wrap(text, column, 100 - column) + "\n";
    }
    out += "\nAn invalid value exits with status 2 and a message naming the flag.\n";
    return out;
}

std::string config_version_text() { return std::string("inferd ") + INFERD_VERSION; }

std::string config_markdown_table() {
    std::string out = "| Flag | Environment | Default | Description |\n|---|---|---|---|\n";
    for (const config_flag_doc & d : config_flags()) {
        std::string flag = md_code(flag_synopsis(d));
        std::string env = md_code(d.env_name);
        std::string def = md_code(d.default_text);
        std::string help = d.help;
        if (!d.in_file) help += " (not in the config file)";
        out += "| " + md_cell(flag) + " | " + env + " | " + md_cell(def) + " | " + md_cell(help) + " |\n";
    }
    return out;
}
