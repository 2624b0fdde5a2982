// toolcall/call-grammar.h — the grammar that forces a model to write tool calls in its family's
// wire format: for `tool_choice: "required"` or a named function.
//
// Usage:
//   toolcall::call_grammar_options o;
//   o.function = "get_weather";        // "" (default): any of the tools
//   o.parallel = true;                 // one or more calls (false: exactly one)
//   o.allow_reasoning = true;          // an optional <think>…</think> block may come first
//   o.reasoning_open = toolcall::prompt_opens_reasoning(f, prompt);
//   toolcall::call_grammar_result r = toolcall::call_grammar(f, request["tools"], o);
//   if (!r.ok()) return error_400(r.error);  // "tool_choice: no tool named 'x'", …
//   use(r.value);                            // or r.gbnf, the same grammar as GBNF text
//
// The grammar's sentences are exactly what the family's template writes for an assistant turn of
// calls (see engine/toolcall/README.md, "Forcing tool calls"): the function name is one of the
// tools' names, the arguments are JSON (or XML parameters) that the tool's `parameters` JSON
// Schema accepts, compiled by json_schema_compile. Every sentence is read by toolcall::parse of
// the same family as the calls it spells.
#pragma once

#include "toolcall/toolcall.h"

#include "grammar/grammar.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <string>
#include <string_view>

namespace toolcall {

struct call_grammar_options {
    // The function the calls must name ("" = any of the tools).
    std::string function;
    // One or more calls (true), or exactly one. Families whose format holds one call per turn
    // (llama3-json, gpt-oss-harmony) always force exactly one.
    bool parallel = false;
    // An optional reasoning block of the family (its opening marker, free text, its closing
    // marker) may come before the calls.
    bool allow_reasoning = false;
    // The prompt already opened the reasoning block (prompt_opens_reasoning): the output starts
    // with its free text and closing marker. Implies allow_reasoning.
    bool reasoning_open = false;
    // Calls only where the model starts one (tool_choice "auto" with strict schemas): free text,
    // read as content, may come first and the calls may not come at all; from the family's call
    // marker (call_grammar_marker) on, the output is held to the calls. Only for families whose
    // calls start with a marker; an error for the others.
    bool optional_calls = false;
    // Arguments must match each tool's schema; a schema the JSON Schema compiler cannot compile
    // is an error naming the tool. When false, such a tool's arguments are any JSON object
    // instead (a tool's own `"strict": true` makes it strict anyway). Compilable schemas are
    // enforced either way.
    bool strict = false;
    // The time the tools' schemas may take to compile, all of them together (each compile is
    // bounded by what is left; past it a strict tool's schema is an error and another's
    // arguments are any JSON object). 0: only each compile's own budgets.
    uint32_t max_time_ms = 500;
    // When max_time_ms began (a server counts from the request's arrival); no time: the call's start.
    std::chrono::steady_clock::time_point started{};
};

struct call_grammar_result {
    grammar value;      // the compiled grammar (empty on error)
    std::string gbnf;   // the same as GBNF text (empty on error)
    std::string error;  // "" on success
    bool ok() const { return error.empty(); }
};

// Whether call_grammar supports the family.
bool call_grammar_supported(family f);
// The text a family's calls start with ("<tool_call>", "[TOOL_CALLS]", …), which optional_calls
// waits for; "" for families whose calls have none (generic and Llama 3 JSON, gpt-oss).
std::string_view call_grammar_marker(family f);

// tools: the request's `tools` ([{"type": "function", "function": {"name", "parameters"}}]).
// Errors: an unsupported family ("tool-call grammar not supported for family 'glm'"), no tools,
// a tool without a name, a function name not among the tools, a schema that does not compile
// in strict mode ("tool 'x': parameters: unsupported keyword …").
call_grammar_result call_grammar(family f, const nlohmann::ordered_json & tools, const call_grammar_options & o = {});

}  // namespace toolcall
