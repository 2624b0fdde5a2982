// call-grammar-families.cpp — each family's call syntax as GBNF, as its chat template writes an
// assistant turn of calls (the reference fixtures' texts are sentences of these grammars).
#include "call-grammar-impl.h"

namespace toolcall::detail {
namespace {

// `{"name": "N", "<args_key>": ARGS<tail>}` for each tool.
std::string json_call_object(cg_builder & b, const std::string & args_key, const std::string & tail = "") {
    return cg_each_tool(b, [&](size_t i) {
        const std::string args = b.json_args(i);
        return cg_lit("{\"name\": ") + " " + cg_json_name(b.tools()[i].name) + " " +
               cg_lit(", \"" + args_key + "\": ") + " " + args + " " + tail + (tail.empty() ? "" : " ") + cg_lit("}");
    });
}

// `<before>NAME<middle>ARGS<after>` for each tool (token formats).
std::string token_call(cg_builder & b, const std::string & before, const std::string & middle,
                       const std::string & after) {
    std::string out = cg_lit(before);
    out += " ";
    out += cg_each_tool(b, [&](size_t i) { return cg_lit(b.tools()[i].name + middle) + " " + b.json_args(i); });
    if (!after.empty()) out += " " + cg_lit(after);
    return out;
}

std::string hermes(cg_builder & b, bool parallel) {
    const std::string object = json_call_object(b, "arguments");
    b.rule("hermes-call", cg_lit("<tool_call>\n") + " " + object + " " + cg_lit("\n</tool_call>"));
    return cg_repeat("hermes-call", "\n", parallel);
}

std::string generic(cg_builder & b, bool parallel) {
    b.rule("generic-call", json_call_object(b, "arguments"));
    if (!parallel) return cg_lit("{\"tool_call\": ") + " generic-call " + cg_lit("}");
    return cg_lit("{\"tool_calls\": [") + " " + cg_repeat("generic-call", ", ", true) + " " + cg_lit("]}");
}

// Both forms the parser reads: `[TOOL_CALLS][{"name", "arguments", "id"?}, …]` (Mistral Nemo,
// Small 3) and `[TOOL_CALLS]name[ARGS]{…}` repeated (Devstral, Magistral, Small 3.2).
std::string mistral(cg_builder & b, bool parallel) {
    const std::string id = std::string("(") + cg_lit(", \"id\": \"") + " [a-zA-Z0-9]{9} " + cg_lit("\"") + ")?";
    b.rule("mistral-object", json_call_object(b, "arguments", id));
    b.rule("mistral-array", cg_lit("[") + " " + cg_repeat("mistral-object", ", ", parallel) + " " + cg_lit("]"));
    b.rule("mistral-named", token_call(b, "", "[ARGS]", ""));
    return cg_lit("[TOOL_CALLS]") + " (mistral-array | " +
           cg_repeat("mistral-named", "[TOOL_CALLS]", parallel) + ")";
}

std::string deepseek_v3_1(cg_builder & b, bool parallel) {
    b.rule("ds-call", token_call(b, "<｜tool▁call▁begin｜>", "<｜tool▁sep｜>", "<｜tool▁call▁end｜>"));
    return cg_lit("<｜tool▁calls▁begin｜>") + " " + cg_repeat("ds-call", "", parallel) + " " +
           cg_lit("<｜tool▁calls▁end｜>");
}

std::string deepseek_r1(cg_builder & b, bool parallel) {
    b.rule("ds-call", token_call(b, "<｜tool▁call▁begin｜>function<｜tool▁sep｜>", "\n```json\n",
                                 "\n```<｜tool▁call▁end｜>"));
    return cg_lit("<｜tool▁calls▁begin｜>") + " " + cg_repeat("ds-call", "\n", parallel) + " " +
           cg_lit("<｜tool▁calls▁end｜>");
}

std::string kimi(cg_builder & b, bool parallel) {
    b.rule("kimi-call", cg_lit("<|tool_call_begin|>functions.") + " " + cg_each_tool(b, [&](size_t i) {
               return cg_lit(b.tools()[i].name + ":") + " [0-9]{1,3} " + cg_lit("<|tool_call_argument_begin|>") +
                      " " + b.json_args(i);
           }) + " " + cg_lit("<|tool_call_end|>"));
    return cg_lit("<|tool_calls_section_begin|>") + " " + cg_repeat("kimi-call", "", parallel) + " " +
           cg_lit("<|tool_calls_section_end|>");
}

std::string functionary(cg_builder & b, bool parallel) {
    b.rule("fn-call", token_call(b, "<function=", ">", "</function>"));
    return cg_repeat("fn-call", "", parallel);
}

std::string qwen3_coder(cg_builder & b, bool parallel) {
    b.set_no_lt(true);  // a JSON value's text ends at the first "</parameter>"
    const std::string calls = cg_each_tool(b, [&](size_t i) {
        return cg_lit(b.tools()[i].name + ">\n") + " " + b.xml_params(i);
    });
    b.rule("xml-call", cg_lit("<tool_call>\n<function=") + " " + calls + " " + cg_lit("</function>\n</tool_call>"));
    return cg_repeat("xml-call", "\n", parallel);
}

// After `<|start|>assistant` (the generation prompt): one call to a function, in the commentary
// channel; the model then ends the message with <|call|> (an end-of-generation token).
std::string harmony(cg_builder & b) {
    b.set_no_lt(true);  // the message ends at the first <|end|>, <|call|>, <|return|> or <|start|>
    return token_call(b, " to=functions.", "<|channel|>commentary json<|message|>", "");
}

}  // namespace

std::string_view cg_family_marker(family f) {
    switch (f) {
        case family::hermes:
        case family::qwen3_coder_xml: return "<tool_call>";
        case family::mistral: return "[TOOL_CALLS]";
        case family::deepseek_v3_1:
        case family::deepseek_r1: return "<｜tool▁calls▁begin｜>";
        case family::kimi: return "<|tool_calls_section_begin|>";
        case family::functionary_v3_1: return "<function=";
        default: return "";
    }
}

bool cg_family_supported(family f) {
    switch (f) {
        case family::hermes:
        case family::generic:
        case family::llama3_json:
        case family::mistral:
        case family::deepseek_v3_1:
        case family::deepseek_r1:
        case family::kimi:
        case family::functionary_v3_1:
        case family::qwen3_coder_xml:
        case family::gpt_oss_harmony: return true;
        default: return false;
    }
}

std::string cg_family_calls(family f, cg_builder & b, bool parallel) {
    std::string out;
    switch (f) {
        case family::hermes: out = hermes(b, parallel); break;
        case family::generic: out = generic(b, parallel); break;
        case family::llama3_json: b.rule("llama-call", json_call_object(b, "parameters")); out = "llama-call"; break;
        case family::mistral: out = mistral(b, parallel); break;
        case family::deepseek_v3_1: out = deepseek_v3_1(b, parallel); break;
        case family::deepseek_r1: out = deepseek_r1(b, parallel); break;
        case family::kimi: out = kimi(b, parallel); break;
        case family::functionary_v3_1: out = functionary(b, parallel); break;
        case family::qwen3_coder_xml: out = qwen3_coder(b, parallel); break;
        case family::gpt_oss_harmony: out = harmony(b); break;
        default: return "";
    }
    return b.failed() ? "" : out;
}

}  // namespace toolcall::detail
