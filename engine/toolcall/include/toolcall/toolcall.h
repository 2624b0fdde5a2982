// toolcall/toolcall.h — a model's raw output text → an OpenAI-style assistant message
// (content, reasoning_content, tool_calls), at once or incrementally while it is generated.
//
// Usage:
//   toolcall::family f = toolcall::detect_family(chat_template_source);   // e.g. family::hermes
//   toolcall::parse_options opts;
//   opts.tools = request["tools"];                                  // optional: schemas for XML formats
//   opts.reasoning_open = toolcall::prompt_opens_reasoning(f, prompt);  // prompt ended in "<think>\n"
//
//   toolcall::message m = toolcall::parse(f, output_text, opts);     // one shot
//   m.tool_calls[0].name; m.tool_calls[0].arguments["location"];
//
//   toolcall::stream_parser p(f, opts);                              // streaming
//   for (const std::string & piece : pieces)
//       for (const toolcall::delta & d : p.feed(piece)) send_chunk(d.to_json());
//   for (const toolcall::delta & d : p.finish()) send_chunk(d.to_json());
//   const toolcall::message & final_message = p.result();           // == parse(f, whole text, opts)
//
// Nothing here throws on any model output: text that is not a well-formed call of the family's
// format stays content (see engine/toolcall/README.md, "Malformed output"). Only allocation failure
// propagates.
//
// Streaming model (OpenAI chat.completion.chunk deltas): content and reasoning_content deltas, and
// per tool call first {index, id, name} once the name is known, then `arguments` fragments whose
// concatenation is the call's final arguments JSON text. Indices are 0, 1, … in call order. Text
// that could still turn into a marker (a trailing "<tool_ca") is held back until decided. Leading and
// trailing whitespace of content and of reasoning is never emitted (whitespace between words is),
// so the concatenated deltas equal the one-shot message exactly; every delta's text is valid UTF-8
// (invalid bytes become U+FFFD, a character split across fragments waits for its last byte).
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace toolcall {

// Wire formats of tool calls (and of reasoning), named as the reference data names them.
enum class family : uint8_t {
    none,               // no tool calls; <think> reasoning at the start is still split off
    generic,            // the whole output is JSON: {"tool_calls": [...]}, {"tool_call": {...}}, {"response": "..."}
    apriel,             // <tool_calls>[{"name", "arguments"}]</tool_calls>
    command_r_plus,     // Action: ```json [{"tool_name", "parameters"}] ```
    command_r7b,        // <|START_THINKING|>…<|END_THINKING|><|START_ACTION|>[...]<|END_ACTION|>
    deepseek_dsml,      // <｜DSML｜function_calls><｜DSML｜invoke name=…><｜DSML｜parameter …>
    deepseek_r1,        // <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>name ```json {...} ```
    deepseek_v3_1,      // <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>name<｜tool▁sep｜>{...}<｜tool▁call▁end｜>
    firefunction,       //  functools[{"name", "arguments"}]
    functionary_v3_1,   // <function=name>{...}</function>, <|python_tag|>code
    gemma4,             // <|tool_call>call:name{key:<|"|>value<|"|>}<tool_call|>
    gigachat,           // <|message_sep|>\n\nfunction call<|role_sep|>\n{"name", "arguments"}
    glm,                // <tool_call>name<arg_key>k</arg_key><arg_value>v</arg_value></tool_call>
    gpt_oss_harmony,    // <|channel|>analysis<|message|>… to=functions.name<|channel|>commentary json<|message|>{...}
    hermes,             // <tool_call>{"name", "arguments"}</tool_call>
    kimi,               // <|tool_calls_section_begin|><|tool_call_begin|>functions.name:0<|tool_call_argument_begin|>{...}
    lfm_pythonic,       // <|tool_call_start|>[name(key='value')]<|tool_call_end|>
    llama3_json,        // {"name": ..., "parameters": {...}} as the whole output
    minicpm_xml,        // <function name="x"><param name="k">v</param></function>
    minimax_xml,        // <minimax:tool_call><invoke name="x"><parameter name="k">v</parameter></invoke>
    mistral,            // [TOOL_CALLS][{...}] or [TOOL_CALLS]name[ARGS]{...}
    nemotron_toolcall,  // <TOOLCALL>[{"name", "arguments"}]</TOOLCALL>
    qwen3_coder_xml,    // <tool_call><function=x><parameter=k>v</parameter></function></tool_call>
    seed_oss,           // <seed:think>…</seed:think><seed:tool_call><function=x><parameter=k>v</parameter>…
    solar,              // <|tool_calls|><|tool_call:begin|>id<|tool_call:name|>x<|tool_call:args|>{...}<|tool_call:end|>
};

// Every family, in the order above.
const std::vector<family> & all_families();
// The reference data's name: "hermes", "gpt-oss-harmony", "deepseek-v3.1", "none", "generic", …
std::string_view family_name(family f);
// The family of a name family_name returns; nullopt for an unknown name.
std::optional<family> family_from_name(std::string_view name);

// The family a chat template writes assistant tool calls in, from distinctive markers in its
// Jinja source (<tool_call>, [TOOL_CALLS], <|channel|>, <｜tool▁calls▁begin｜>, …); family::none when
// the template does not render assistant tool calls.
family detect_family(std::string_view template_source);

// Whether a prompt ends inside an open reasoning block of the family (its trimmed end is the
// opening marker: "…<|im_start|>assistant\n<think>\n"), so the output starts in reasoning.
bool prompt_opens_reasoning(family f, std::string_view prompt);

struct parse_options {
    // The request's `tools` ([{"type": "function", "function": {"name", "parameters"}}]); null when
    // none. Formats that write string parameters raw (the XML ones) use the schemas to tell a
    // string "34" from the number 34; without a schema a value that reads as JSON (or a Python
    // literal) is taken as that value, anything else as a string.
    nlohmann::ordered_json tools;
    // The prompt already opened the reasoning block (prompt_opens_reasoning): the output starts
    // inside it and the first closing marker ends it.
    bool reasoning_open = false;
    // Seed of the generated call ids; 0: seeded from std::random_device.
    uint64_t id_seed = 0;
};

struct tool_call {
    std::string id;    // the format's own id (kimi "functions.get_weather:0", mistral "call00001", …),
                       // else generated: "call_" + 24 letters and digits, unique per call
    std::string name;
    nlohmann::ordered_json arguments = nlohmann::ordered_json::object();  // always an object
};

struct message {
    std::string content;            // "" when none
    std::string reasoning_content;  // "" when none
    std::vector<tool_call> tool_calls;

    // The OpenAI assistant message: {"role", "content" (null when empty and there are calls),
    // "reasoning_content" (only when non-empty), "tool_calls" (only when any; arguments as JSON text)}.
    nlohmann::ordered_json to_json() const;
};

struct tool_call_delta {
    int index = 0;
    std::string id;         // non-empty only in the call's first delta
    std::string name;       // non-empty only in the call's first delta
    std::string arguments;  // a fragment of the arguments JSON text ("" in the first delta)
};

struct delta {
    enum class kind : uint8_t { content, reasoning, tool_call };
    kind what = kind::content;
    std::string text;  // kind::content, kind::reasoning
    tool_call_delta call;  // kind::tool_call

    // The `delta` object of a chat.completion.chunk choice: {"content": …}, {"reasoning_content": …}
    // or {"tool_calls": [{"index", "id", "type": "function", "function": {"name", "arguments"}}]}.
    nlohmann::ordered_json to_json() const;
};

// One-shot parse: the same as feeding the whole text to a stream_parser and finishing it.
message parse(family f, std::string_view text, const parse_options & opts = {});

// Incremental parse. feed() as pieces of the output arrive (any split, even inside a UTF-8
// character or a marker), finish() once at the end; each returns the deltas it decided, in order
// (consecutive deltas of one kind merged). After finish() the concatenated deltas equal result().
class stream_parser {
public:
    explicit stream_parser(family f, parse_options opts = {});
    ~stream_parser();
    stream_parser(const stream_parser &) = delete;
    stream_parser & operator=(const stream_parser &) = delete;

    std::vector<delta> feed(std::string_view piece);
    std::vector<delta> finish();
    // What the deltas so far add up to (arguments of an unfinished call: its fragments so far are
    // not parsed yet, so it shows the arguments {}); the parse result after finish().
    const message & result() const;
    bool finished() const;

private:
    struct impl;
    std::unique_ptr<impl> impl_;
};

}  // namespace toolcall
