// A chat request made ready for the batch loop (internal): the prompt rendered by the model's
// chat template (its tool_use variant for requests with tools, when the file has one) from the
// full OpenAI messages and tools, how the answer is read back (tool calls
// and reasoning split off by the template's tool-call family), and the grammar that forces a tool
// call for tool_choice "required" or a named function.
//
// Usage:
//   chat_plan_inputs in{chat.get(), chat_tools.get(), template_kwargs, cfg.reasoning_split, &grammars};
//   chat_plan plan;
//   if (auto e = chat_plan_make(in, request, &plan)) return respond_error(*e);   // 400
//   tokens = tokenize(plan.prompt); g.grammar = plan.grammar ? plan.grammar : constraint program;
//
// In two steps, where the compile may be slow (the server's I/O threads): chat_plan_prepare
// renders and decides (cheap); chat_plan_lookup takes the tool-call grammar from the cache when
// it is there, else chat_plan_compile compiles it (on a compile thread).
//
// Which output parser: with tools (and tool_choice not "none") the family the template writes
// calls in (toolcall::detect_family; "generic" JSON when the template writes none); without
// tools, when reasoning is split (--reasoning-format / the request's reasoning_format) and the
// template has thinking markers, the family's reasoning markers only (no tool calls are read);
// otherwise none: the text goes to content as generated.
//
// Which grammar: tool_choice "required" or a named function forces the calls (with an optional
// reasoning block first when the template thinks and enable_thinking is not false); "auto" with a
// tool marked "strict": true holds the calls the model starts to their schemas and leaves the text
// before them free (formats whose calls start with a marker; not beside a response_format).
#pragma once

#include "api/chat-request.h"
#include "api/error.h"
#include "grammar-cache.h"
#include "toolcall/toolcall.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <memory>
#include <optional>
#include <string>

struct chat_output_options {
    bool parse = false;            // read the output with the family's stream parser
    toolcall::family family = toolcall::family::none;
    toolcall::parse_options opts;  // tools, reasoning_open
    bool split_reasoning = true;   // false: reasoning stays in content, inside <think>…</think>
    bool render_control = false;   // control tokens in the output become their text (markers)
};

// The tool-call grammar a request needs: toolcall::call_grammar(family, output.opts.tools, options).
struct chat_tool_grammar {
    toolcall::family family = toolcall::family::none;
    toolcall::call_grammar_options options;
};

struct chat_plan {
    std::string prompt;                              // the rendered template
    std::shared_ptr<const grammar_program> grammar;  // forces tool calls; nullptr when not forced
    std::optional<chat_tool_grammar> tool_grammar;   // what `grammar` is compiled from; nullopt: none
    chat_output_options output;
};

class chat_renderer;

struct chat_plan_inputs {
    const chat_renderer * chat = nullptr;        // the template
    const chat_renderer * chat_tools = nullptr;  // for requests with tools; nullptr: chat
    nlohmann::ordered_json kwargs;               // --chat-template-kwargs (an object, or null)
    bool reasoning_split = true;                 // --reasoning-format auto
    grammar_program_cache * grammars = nullptr;
};

// chat_plan_prepare, then chat_plan_compile.
std::optional<api_error> chat_plan_make(const chat_plan_inputs & in, const chat_request & cr, chat_plan * out);
// The prompt, the output settings and out->tool_grammar; compiles nothing. Errors: 400s
// (the template's, a forced call beside a response_format, a format that cannot force calls).
std::optional<api_error> chat_plan_prepare(const chat_plan_inputs & in, const chat_request & cr, chat_plan * out);
// out->grammar from in.grammars' cache only: true when known (nothing to compile, a cached program,
// or a cached refusal in *error); false when chat_plan_compile must compile it.
bool chat_plan_lookup(const chat_plan_inputs & in, chat_plan * out, std::optional<api_error> * error);
// Compiles out->tool_grammar into out->grammar (through in.grammars); 400s whose param is tool_choice.
// The tools' time budget counts from `started` (no time: from now).
std::optional<api_error> chat_plan_compile(const chat_plan_inputs & in, chat_plan * out,
                                           std::chrono::steady_clock::time_point started = {});
