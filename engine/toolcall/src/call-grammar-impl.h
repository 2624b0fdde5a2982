// call-grammar-impl.h — internals of call_grammar: a GBNF text under construction, the tools'
// argument rules, and each family's call syntax (call-grammar-families.cpp).
#pragma once

#include "toolcall/call-grammar.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace toolcall::detail {

struct cg_tool {
    std::string name;
    nlohmann::ordered_json parameters;  // the schema ({"type": "object"} when the tool has none)
    bool strict = false;                // the request's strict, or the tool's own "strict": true
};

class cg_builder {
public:
    // max_time_ms: the time all the tools' schemas may take to compile together (0: no bound),
    // counted from `started` (no time: now).
    cg_builder(std::vector<cg_tool> tools, const nlohmann::ordered_json & all_tools, uint32_t max_time_ms = 0,
               std::chrono::steady_clock::time_point started = {})
        : tools_(std::move(tools)), all_tools_(all_tools), max_time_ms_(max_time_ms),
          deadline_((started == std::chrono::steady_clock::time_point{} ? std::chrono::steady_clock::now() : started) +
                    std::chrono::milliseconds(max_time_ms)) {}

    const std::vector<cg_tool> & tools() const { return tools_; }
    // Appends `name ::= body`.
    void rule(const std::string & name, const std::string & body);
    const std::string & text() const { return text_; }

    // The rule of tool i's JSON arguments (its schema compiled once, rules prefixed "t<i>-");
    // "" with error() set when the schema does not compile and the tool is strict.
    std::string json_args(size_t i);
    // The rule of tool i's XML parameters (qwen3-coder-xml): each `<parameter=k>\n…\n</parameter>\n`,
    // string parameters raw, others JSON; "" with error() set on failure.
    std::string xml_params(size_t i);
    // A rule for free text that ends at the first `marker` (the marker included); with `end` (a
    // GBNF expression), free text without `marker` followed by `end`.
    std::string text_until(const std::string & hint, std::string_view marker, const std::string & end = "");

    // JSON values may not hold '<' unescaped (formats that find their closing marker in the raw
    // text: XML parameters, harmony messages). Set before the first json_args / xml_params.
    void set_no_lt(bool v) { no_lt_ = v; }

    const std::string & error() const { return error_; }
    bool failed() const { return !error_.empty(); }

private:
    // Compiles a schema under prefix: the name of its root rule. When it does not compile: "" with
    // error_ set ("<what>: <compiler error>") when strict, else the fallback schema's rule.
    std::string compile_schema(const std::string & prefix, const nlohmann::ordered_json & schema, bool strict,
                               const std::string & what, std::string_view fallback);
    std::string raw_value(const std::string & prefix, const nlohmann::ordered_json & schema);
    std::string unique(const std::string & base);

    std::vector<cg_tool> tools_;
    const nlohmann::ordered_json & all_tools_;
    std::vector<std::string> json_args_;
    std::string text_;
    std::string error_;
    int counter_ = 0;
    bool no_lt_ = false;
    uint32_t max_time_ms_;
    std::chrono::steady_clock::time_point deadline_;
};

// GBNF literal of text.
std::string cg_lit(std::string_view text);
// GBNF literal of a name as a JSON string ("\"get_weather\"").
std::string cg_json_name(const std::string & name);
// `( a | b | … )` over the tools: each alternative is fn(i).
template <class F>
std::string cg_each_tool(const cg_builder & b, F fn) {
    std::string out = "(";
    for (size_t i = 0; i < b.tools().size(); ++i) {
        out += i ? " | " : " ";
        out += fn(i);
    }
    return out + " )";
}
// `one (sep one)*` when parallel, else `one`.
std::string cg_repeat(const std::string & one, const std::string & sep, bool parallel);

// The expression of the calls part of the output for family f (rules it needs added to b), or ""
// with b's error set / unsupported (returns "" with b.error() empty when the family is not covered).
std::string cg_family_calls(family f, cg_builder & b, bool parallel);
bool cg_family_supported(family f);
std::string_view cg_family_marker(family f);

}  // namespace toolcall::detail
