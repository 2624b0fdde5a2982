// call-grammar.cpp — call_grammar: the tools' argument grammars (JSON Schemas compiled by
// json_schema_compile, their rules renamed per tool), reasoning blocks, and the whole GBNF text.
#include "call-grammar-impl.h"
#include "engine.h"

#include "grammar/gbnf.h"
#include "grammar/json-schema.h"

#include <algorithm>
#include <optional>
#include <set>

namespace toolcall {
namespace detail {
namespace {

using json = nlohmann::ordered_json;

bool gbnf_name_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
}

// Copies a bracketed GBNF element (a literal, a class, a repetition bound) from i to its closer.
size_t copy_element(std::string_view g, size_t i, char closer, std::string & out) {
    out += g[i++];
    while (i < g.size() && g[i] != closer) {
        if (g[i] == '\\' && i + 1 < g.size() && closer != '}') out += g[i++];
        out += g[i++];
    }
    if (i < g.size()) out += g[i++];
    return i;
}

// Every rule name of a GBNF text with prefix in front (literals, classes, bounds and comments
// are copied as they are); with no_lt, negated classes also exclude '<' (JSON strings then write
// it as \u003c, so no marker of the format can appear inside a value).
std::string prefix_rules(std::string_view g, const std::string & prefix, bool no_lt) {
    std::string out;
    out.reserve(g.size() * 2);
    size_t i = 0;
    while (i < g.size()) {
        const char c = g[i];
        if (c == '"') {
            i = copy_element(g, i, '"', out);
        } else if (c == '[') {
            const size_t from = out.size();
            i = copy_element(g, i, ']', out);
            if (no_lt && out.compare(from, 2, "[^") == 0) out.insert(from + 2, "<");
        } else if (c == '{') {
            i = copy_element(g, i, '}', out);
        } else if (c == '#') {
            while (i < g.size() && g[i] != '\n') out += g[i++];
        } else if (gbnf_name_char(c)) {
            out += prefix;
            while (i < g.size() && gbnf_name_char(g[i])) out += g[i++];
        } else {
            out += g[i++];
        }
    }
    return out;
}

// Code points of UTF-8 text (the markers are valid UTF-8).
std::vector<std::string> code_points(std::string_view s) {
    std::vector<std::string> out;
    for (size_t i = 0; i < s.size();) {
        const auto b = static_cast<unsigned char>(s[i]);
        const size_t n = b < 0x80 ? 1 : b < 0xE0 ? 2 : b < 0xF0 ? 3 : 4;
        out.emplace_back(s.substr(i, n));
        i += n;
    }
    return out;
}

uint32_t decode(const std::string & cp) {
    const auto b = [&](size_t k) { return static_cast<uint32_t>(static_cast<unsigned char>(cp[k])); };
    if (cp.size() == 1) return b(0);
    if (cp.size() == 2) return ((b(0) & 0x1F) << 6) | (b(1) & 0x3F);
    if (cp.size() == 3) return ((b(0) & 0x0F) << 12) | ((b(1) & 0x3F) << 6) | (b(2) & 0x3F);
    return ((b(0) & 0x07) << 18) | ((b(1) & 0x3F) << 12) | ((b(2) & 0x3F) << 6) | (b(3) & 0x3F);
}

// The state after reading c with k code points of m matched (KMP, by brute force: markers are short).
size_t next_state(const std::vector<std::string> & m, size_t k, const std::string & c) {
    std::vector<std::string> s(m.begin(), m.begin() + static_cast<std::ptrdiff_t>(k));
    s.push_back(c);
    for (size_t len = std::min(m.size(), s.size()); len > 0; --len) {
        const auto n = static_cast<std::ptrdiff_t>(len);
        if (std::equal(m.begin(), m.begin() + n, s.end() - n)) return len;
    }
    return 0;
}

}  // namespace

std::string cg_lit(std::string_view text) { return grammar_literal_to_gbnf(text); }

std::string cg_json_name(const std::string & name) { return cg_lit(json(name).dump()); }

std::string cg_repeat(const std::string & one, const std::string & sep, bool parallel) {
    if (!parallel) return one;
    return one + " (" + (sep.empty() ? "" : cg_lit(sep) + " ") + one + ")*";
}

void cg_builder::rule(const std::string & name, const std::string & body) { text_ += name + " ::= " + body + "\n"; }

std::string cg_builder::unique(const std::string & base) { return base + "-" + std::to_string(counter_++); }

// Rules for "text without `marker`, then `marker`" (or, with `end`, "text without `marker`, then
// `end`"): state k has matched k code points of the marker.
std::string cg_builder::text_until(const std::string & hint, std::string_view marker, const std::string & end) {
    const std::vector<std::string> m = code_points(marker);
    const std::string base = unique(hint);
    std::set<std::string> chars(m.begin(), m.end());
    grammar_char_set others;
    for (const std::string & c : chars) others.ranges.push_back({decode(c), decode(c)});
    grammar_char_set_normalize(others);
    const std::string other = grammar_char_set_to_gbnf(grammar_char_set_complement(others));
    for (size_t k = 0; k < m.size(); ++k) {
        std::string body = other + " " + base + "-0";
        for (const std::string & c : chars) {
            const size_t nk = next_state(m, k, c);
            if (nk == m.size() && !end.empty()) continue;
            body += " | " + cg_lit(c) + (nk == m.size() ? "" : " " + base + "-" + std::to_string(nk));
        }
        if (!end.empty()) body += " | " + end;
        rule(base + "-" + std::to_string(k), body);
    }
    return base + "-0";
}

std::string cg_builder::compile_schema(const std::string & prefix, const json & schema, bool strict,
                                       const std::string & what, std::string_view fallback) {
    json_schema_options budgets;  // what is left of the time all the tools may take
    json_schema_result r;
    if (max_time_ms_) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline_ - std::chrono::steady_clock::now()).count();
        budgets.max_time_ms = uint32_t(std::max<int64_t>(1, left));
        if (left <= 0) r.error = "the tools' schemas are over their time budget of " + std::to_string(max_time_ms_) + " ms";
    }
    if (r.error.empty()) r = json_schema_compile_document(schema, budgets);
    if (!r.ok()) {
        if (strict) {
            error_ = what + ": " + r.error;
            return "";
        }
        r = json_schema_compile(fallback);
    }
    text_ += prefix_rules(r.gbnf, prefix, no_lt_);
    return prefix + "root";
}

std::string cg_builder::json_args(size_t i) {
    if (json_args_.size() < tools_.size()) json_args_.resize(tools_.size());
    if (!json_args_[i].empty()) return json_args_[i];
    const cg_tool & t = tools_[i];
    json_args_[i] = compile_schema("t" + std::to_string(i) + "-", t.parameters, t.strict,
                                   "tool '" + t.name + "': parameters", R"({"type":"object"})");
    return json_args_[i];
}

// A string parameter's raw text: its enum / const values, else any text without "</parameter>".
std::string cg_builder::raw_value(const std::string & prefix, const json & schema) {
    const std::string end = cg_lit("\n</parameter>\n");
    std::vector<std::string> values;
    if (schema.contains("const") && schema["const"].is_string()) values.push_back(schema["const"].get<std::string>());
    if (schema.contains("enum") && schema["enum"].is_array()) {
        for (const auto & e : schema["enum"]) {
            if (e.is_string()) values.push_back(e.get<std::string>());
        }
    }
    if (!values.empty()) {
        std::string body = "(";
        for (size_t k = 0; k < values.size(); ++k) body += (k ? " | " : " ") + cg_lit(values[k]);
        return body + " ) " + end;
    }
    // A length bound (minLength / maxLength, in characters): that many characters other than
    // '<' (so the value cannot hold its closing tag).
    const auto bound = [&schema](const char * key) -> std::optional<uint64_t> {
        if (!schema.contains(key) || !schema[key].is_number_unsigned()) return std::nullopt;
        return schema[key].get<uint64_t>();
    };
    const std::optional<uint64_t> lo = bound("minLength"), hi = bound("maxLength");
    if (lo || hi) {
        std::string counted = "[^<]{" + std::to_string(lo.value_or(0)) + ",";
        if (hi) counted += std::to_string(std::max(*hi, lo.value_or(0)));
        return counted + "} " + end;
    }
    // Text without "</parameter>", ended by the format's newline and closing tag.
    return text_until(prefix + "raw", "</parameter>", end);
}

std::string cg_builder::xml_params(size_t i) {
    const cg_tool & t = tools_[i];
    const json & s = t.parameters;
    const std::string prefix = "t" + std::to_string(i) + "-";
    static const std::set<std::string> plain = {"type",  "properties", "required", "additionalProperties",
                                                "description", "title", "$schema", "$id", "$defs",
                                                "definitions", "$comment", "strict"};
    bool simple = s.is_object() && s.contains("properties") && s["properties"].is_object();
    for (auto it = s.begin(); simple && it != s.end(); ++it) simple = plain.count(it.key()) != 0;
    const std::string any_param = "\"<parameter=\" [^>\\n]+ \">\\n\" ";
    if (!simple) {
        if (t.strict && !(s.is_object() && s.size() <= 1 && (s.empty() || s.contains("type")))) {
            error_ = "tool '" + t.name + "': parameters: a schema other than an object of properties cannot be written "
                     "as XML parameters";
            return "";
        }
        const std::string any = unique(prefix + "anyparam");
        rule(any, any_param + raw_value(prefix, json::object()));
        return "(" + any + ")*";
    }
    std::set<std::string> required;
    if (s.contains("required") && s["required"].is_array()) {
        for (const auto & r : s["required"]) {
            if (r.is_string()) required.insert(r.get<std::string>());
        }
    }
    const tool_schemas schemas(all_tools_);
    std::string seq;
    int k = 0;
    for (auto it = s["properties"].begin(); it != s["properties"].end(); ++it, ++k) {
        const std::string pp = prefix + "p" + std::to_string(k) + "-";
        std::string value;
        if (schemas.is_string(t.name, it.key())) {
            value = raw_value(pp, it.value());
        } else {
            json sub = it.value();
            for (const char * defs : {"$defs", "definitions"}) {
                if (s.contains(defs) && sub.is_object() && !sub.contains(defs)) sub[defs] = s[defs];
            }
            const std::string what = "tool '" + t.name + "': parameter '" + it.key() + "'";
            const std::string r = compile_schema(pp, sub, t.strict, what, "{}");
            if (r.empty()) return "";
            value = r + " " + cg_lit("\n</parameter>\n");
        }
        const std::string name = prefix + "param" + std::to_string(k);
        rule(name, cg_lit("<parameter=" + it.key() + ">\n") + " " + value);
        seq += " " + name + (required.count(it.key()) ? "" : "?");
    }
    return seq.empty() ? "\"\"" : "(" + seq + " )";
}

namespace {

// The reasoning block before the calls: `(open text-until-close ws)?`, or when the prompt opened
// it `text-until-close ws`.
std::string reasoning_part(family f, cg_builder & b, const call_grammar_options & o) {
    if (f == family::gpt_oss_harmony) {
        // Any of <|end|>, <|call|>, <|return|>, <|start|> ends a message: the text has no "<|".
        const std::string body = b.text_until("reason", "<|", cg_lit("<|end|><|start|>assistant"));
        return "(" + cg_lit("<|channel|>analysis<|message|>") + " " + body + ")? ";
    }
    std::string opened, closed;
    for (const reasoning_style & st : family_reasoning(f)) {
        const std::string body = b.text_until("reason", st.close);
        opened += (opened.empty() ? "" : " | ") + body;
        closed += (closed.empty() ? "" : " | ") + cg_lit(st.open) + " " + body;
    }
    if (opened.empty()) return "";
    if (o.reasoning_open) return "(" + opened + ") ";
    return "((" + closed + ") lead-ws)? ";
}

std::vector<cg_tool> collect_tools(const json & tools, const call_grammar_options & o, std::string & error) {
    std::vector<cg_tool> out;
    if (!tools.is_array() || tools.empty()) {
        error = "tool_choice requires a non-empty `tools` array";
        return out;
    }
    for (const auto & t : tools) {
        const json & fn = t.is_object() && t.contains("function") && t["function"].is_object() ? t["function"] : t;
        if (!fn.is_object() || !fn.contains("name") || !fn["name"].is_string() ||
            !valid_name(fn["name"].get<std::string>())) {
            error = "tools: every tool needs a function name (no spaces, quotes, brackets or braces)";
            return {};
        }
        cg_tool ct;
        ct.name = fn["name"].get<std::string>();
        ct.parameters = fn.contains("parameters") && fn["parameters"].is_object() && !fn["parameters"].empty()
                            ? fn["parameters"]
                            : json{{"type", "object"}};
        ct.strict = o.strict || (fn.contains("strict") && fn["strict"].is_boolean() && fn["strict"].get<bool>());
        if (o.function.empty() || o.function == ct.name) out.push_back(std::move(ct));
    }
    if (out.empty()) error = "tool_choice: no tool named '" + o.function + "' in tools";
    return out;
}

}  // namespace
}  // namespace detail

bool call_grammar_supported(family f) { return detail::cg_family_supported(f); }

std::string_view call_grammar_marker(family f) { return detail::cg_family_marker(f); }

call_grammar_result call_grammar(family f, const nlohmann::ordered_json & tools, const call_grammar_options & o) {
    call_grammar_result res;
    if (!detail::cg_family_supported(f)) {
        res.error = "tool-call grammar not supported for family '" + std::string(family_name(f)) + "'";
        return res;
    }
    std::vector<detail::cg_tool> list = detail::collect_tools(tools, o, res.error);
    if (!res.error.empty()) return res;
    detail::cg_builder b(std::move(list), tools, o.max_time_ms, o.started);
    const std::string reason = o.allow_reasoning || o.reasoning_open ? detail::reasoning_part(f, b, o) : "";
    const std::string calls = detail::cg_family_calls(f, b, o.parallel);
    if (b.failed() || calls.empty()) {
        res.error = b.failed() ? b.error()
                               : "tool-call grammar failed for family '" + std::string(family_name(f)) + "'";
        return res;
    }
    std::string body = (f == family::gpt_oss_harmony ? "" : "lead-ws ") + calls;
    if (o.optional_calls) {
        const std::string_view marker = detail::cg_family_marker(f);
        if (marker.empty()) {
            res.error = "optional tool calls need a call marker, and family '" + std::string(family_name(f)) +
                        "' has none";
            return res;
        }
        // Content (text without the marker), then the calls or nothing.
        body = b.text_until("content", marker, "(" + calls + ")?");
    }
    res.gbnf = "root ::= " + reason + body + "\nlead-ws ::= [ \\n]{0,3}\n" + b.text();
    grammar_parse_result p = grammar_parse_gbnf(res.gbnf);
    if (!p.ok()) {
        res.error = "internal error: tool-call grammar does not parse: " + p.error.to_string();
        res.gbnf.clear();
        return res;
    }
    res.value = std::move(p.value);
    return res;
}

}  // namespace toolcall
