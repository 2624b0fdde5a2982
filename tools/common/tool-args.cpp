// A small command-line parser shared by the tools.
#include "tool-args.h"

#include <charconv>

namespace {

const tool_option_spec * find_spec(std::initializer_list<tool_option_spec> specs, std::string_view word) {
    for (const tool_option_spec & s : specs) {
        if ((s.short_name && word == s.short_name) || word == s.long_name) return &s;
    }
    return nullptr;
}

}  // namespace

const std::string * tool_args::option(std::string_view long_name) const {
    for (auto it = options.rbegin(); it != options.rend(); ++it) {
        if (it->first == long_name) return &it->second;
    }
    return nullptr;
}

bool tool_args_parse(const std::vector<std::string> & args, std::initializer_list<tool_option_spec> specs,
                     tool_args * out, std::string * error) {
    *out = tool_args{};
    bool options_done = false;
    for (size_t i = 0; i < args.size(); ++i) {
        const std::string & w = args[i];
        if (options_done || w.size() < 2 || w[0] != '-') {
            out->positional.push_back(w);
            continue;
        }
        if (w == "--") {
            options_done = true;
        } else if (w == "-h" || w == "--help") {
            out->help = true;
        } else if (const size_t eq = w.find('='); eq != std::string::npos && w.rfind("--", 0) == 0) {
            const tool_option_spec * s = find_spec(specs, std::string_view(w).substr(0, eq));
            if (!s) {
                *error = "unknown option '" + w.substr(0, eq) + "'";
                return false;
            }
            if (s->flag) {
                *error = "option '" + w.substr(0, eq) + "' takes no value";
                return false;
            }
            out->options.emplace_back(s->long_name, w.substr(eq + 1));
        } else if (const tool_option_spec * s = find_spec(specs, w)) {
            if (s->flag) {
                out->options.emplace_back(s->long_name, "1");
                continue;
            }
            if (i + 1 >= args.size()) {
                *error = "option '" + w + "' wants a value";
                return false;
            }
            out->options.emplace_back(s->long_name, args[++i]);
        } else {
            *error = "unknown option '" + w + "'";
            return false;
        }
    }
    return true;
}

bool tool_args_parse_int(const std::string & s, int min, int max, int * out) {
    int v = 0;
    const char * first = s.data();
    const char * last = s.data() + s.size();
    const auto [end, ec] = std::from_chars(first, last, v);
    if (ec != std::errc() || end != last || first == last || v < min || v > max) return false;
    *out = v;
    return true;
}
