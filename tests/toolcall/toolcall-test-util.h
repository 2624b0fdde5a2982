// tests/toolcall/toolcall-test-util.h — adding up a stream's deltas, and comparing messages the
// way ../shared/testdata/chat/README.md says (content and reasoning trimmed, null == "", calls in
// order, names equal, arguments equal as JSON values, ids equal where given).
#pragma once

#include "toolcall/toolcall.h"

#include <string>
#include <string_view>
#include <vector>

namespace toolcall_test {

inline std::string trimmed(std::string_view s) {
    const char * ws = " \t\n\r";
    size_t b = s.find_first_not_of(ws);
    if (b == std::string_view::npos) return "";
    size_t e = s.find_last_not_of(ws);
    return std::string(s.substr(b, e - b + 1));
}

// What a client assembles from the deltas; `problems` lists breaches of the streaming model.
struct assembled {
    std::string content;
    std::string reasoning;
    struct call {
        std::string id, name, arguments;
    };
    std::vector<call> calls;
    std::vector<std::string> problems;

    void add(const std::vector<toolcall::delta> & ds) {
        for (const toolcall::delta & d : ds) {
            try {
                (void)d.to_json().dump();  // throws on invalid UTF-8
            } catch (const std::exception & e) {
                problems.push_back(std::string("delta not serializable: ") + e.what());
            }
            switch (d.what) {
                case toolcall::delta::kind::content: content += d.text; break;
                case toolcall::delta::kind::reasoning: reasoning += d.text; break;
                case toolcall::delta::kind::tool_call: add_call(d.call); break;
            }
        }
    }

    void add_call(const toolcall::tool_call_delta & c) {
        if (!c.name.empty()) {
            if (c.index != static_cast<int>(calls.size())) problems.push_back("call index out of order");
            if (c.id.empty()) problems.push_back("first call delta without id");
            calls.push_back({c.id, c.name, c.arguments});
            return;
        }
        if (calls.empty() || c.index != static_cast<int>(calls.size()) - 1) {
            problems.push_back("arguments for a call that is not the latest");
            return;
        }
        calls.back().arguments += c.arguments;
    }

    toolcall::message to_message() {
        toolcall::message m;
        m.content = content;
        m.reasoning_content = reasoning;
        for (const call & c : calls) {
            toolcall::tool_call tc;
            tc.id = c.id;
            tc.name = c.name;
            tc.arguments = nlohmann::ordered_json::parse(c.arguments, nullptr, false);
            if (!tc.arguments.is_object()) problems.push_back("arguments text is not a JSON object: " + c.arguments);
            m.tool_calls.push_back(std::move(tc));
        }
        return m;
    }
};

// "" when m matches the expected message (README rules); else the first difference.
inline std::string compare_expected(const toolcall::message & m, const nlohmann::ordered_json & expected) {
    auto text = [](const nlohmann::ordered_json & v) { return v.is_string() ? trimmed(v.get<std::string>()) : ""; };
    if (trimmed(m.content) != text(expected["content"])) return "content \"" + m.content + "\"";
    if (trimmed(m.reasoning_content) != text(expected["reasoning_content"])) {
        return "reasoning_content \"" + m.reasoning_content + "\"";
    }
    const auto & calls = expected["tool_calls"];
    if (m.tool_calls.size() != calls.size()) return "tool_calls: " + std::to_string(m.tool_calls.size());
    for (size_t i = 0; i < calls.size(); ++i) {
        const auto & got = m.tool_calls[i];
        std::string where = "tool_calls[" + std::to_string(i) + "].";
        if (got.name != calls[i]["name"].get<std::string>()) return where + "name " + got.name;
        // Equal as JSON values: unordered keys, numbers by value.
        if (nlohmann::json::parse(got.arguments.dump()) != nlohmann::json::parse(calls[i]["arguments"].dump())) {
            return where + "arguments " + got.arguments.dump();
        }
        if (calls[i].contains("id") && got.id != calls[i]["id"].get<std::string>()) return where + "id " + got.id;
        if (got.id.empty()) return where + "id empty";
    }
    return "";
}

// "" when two parse results are the same message (content exactly, ids too).
inline std::string compare_messages(const toolcall::message & a, const toolcall::message & b) {
    if (a.content != b.content) return "content \"" + a.content + "\" vs \"" + b.content + "\"";
    if (a.reasoning_content != b.reasoning_content) return "reasoning \"" + a.reasoning_content + "\" vs \"" + b.reasoning_content + "\"";
    if (a.tool_calls.size() != b.tool_calls.size()) return "number of calls";
    for (size_t i = 0; i < a.tool_calls.size(); ++i) {
        if (a.tool_calls[i].name != b.tool_calls[i].name) return "name of call " + std::to_string(i);
        if (a.tool_calls[i].id != b.tool_calls[i].id) return "id of call " + std::to_string(i);
        if (a.tool_calls[i].arguments != b.tool_calls[i].arguments) {
            return "arguments of call " + std::to_string(i) + ": " + a.tool_calls[i].arguments.dump() + " vs " +
                   b.tool_calls[i].arguments.dump();
        }
    }
    return "";
}

// Streams `pieces` through a parser and adds the deltas up.
inline assembled stream_pieces(toolcall::family f, const toolcall::parse_options & opts,
                               const std::vector<std::string_view> & pieces, toolcall::message * result = nullptr) {
    toolcall::stream_parser p(f, opts);
    assembled a;
    for (std::string_view piece : pieces) a.add(p.feed(piece));
    a.add(p.finish());
    if (result) *result = p.result();
    return a;
}

struct family_sample {
    toolcall::family f;
    std::string text;
};

// Every family with calls: two calls, "a" {"x": 1} then "b" {}.
inline const std::vector<family_sample> & two_call_samples() {
    using toolcall::family;
    static const std::vector<family_sample> samples = {
        {family::hermes, "<tool_call>\n{\"name\": \"a\", \"arguments\": {\"x\": 1}}\n</tool_call>\n"
                                      "<tool_call>\n{\"name\": \"b\", \"arguments\": {}}\n</tool_call>"},
        {family::apriel, "<tool_calls>[{\"name\": \"a\", \"arguments\": {\"x\": 1}}, {\"name\": \"b\", \"arguments\": {}}]</tool_calls>"},
        {family::nemotron_toolcall, "<TOOLCALL>[{\"name\": \"a\", \"arguments\": {\"x\": 1}}, {\"name\": \"b\", \"arguments\": {}}]</TOOLCALL>"},
        {family::firefunction, " functools[{\"name\": \"a\", \"arguments\": {\"x\": 1}}, {\"name\": \"b\", \"arguments\": {}}]"},
        {family::command_r7b, "<|START_THINKING|><|END_THINKING|><|START_ACTION|>[{\"tool_call_id\": \"0\", \"tool_name\": \"a\", "
                                           "\"parameters\": {\"x\": 1}}, {\"tool_call_id\": \"1\", \"tool_name\": \"b\", \"parameters\": {}}]<|END_ACTION|>"},
        {family::command_r_plus, "Action: ```json\n[{\"tool_name\": \"a\", \"parameters\": {\"x\": 1}}, {\"tool_name\": \"b\", \"parameters\": {}}]\n```"},
        {family::gigachat, "<|message_sep|>\n\nfunction call<|role_sep|>\n{\"name\": \"a\", \"arguments\": {\"x\": 1}}"
                                        "<|message_sep|>\n\nfunction call<|role_sep|>\n{\"name\": \"b\", \"arguments\": {}}"},
        {family::mistral, "[TOOL_CALLS][{\"name\": \"a\", \"arguments\": {\"x\": 1}, \"id\": \"abcdef123\"}, "
                                       "{\"name\": \"b\", \"arguments\": {}, \"id\": \"ghijkl456\"}]"},
        {family::mistral, "[TOOL_CALLS]a[ARGS]{\"x\": 1}[TOOL_CALLS]b[CALL_ID]c2[ARGS]{}"},
        {family::generic, "{\"tool_calls\": [{\"name\": \"a\", \"arguments\": {\"x\": 1}}, {\"name\": \"b\", \"arguments\": {}}]}"},
        {family::deepseek_r1, "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>a\n```json\n{\"x\": 1}\n```<｜tool▁call▁end｜>\n"
                                           "<｜tool▁call▁begin｜>function<｜tool▁sep｜>b\n```json\n{}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>"},
        {family::deepseek_v3_1, "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>a<｜tool▁sep｜>{\"x\": 1}<｜tool▁call▁end｜>"
                                             "<｜tool▁call▁begin｜>b<｜tool▁sep｜>{}<｜tool▁call▁end｜><｜tool▁calls▁end｜>"},
        {family::kimi, "<|tool_calls_section_begin|><|tool_call_begin|>functions.a:0<|tool_call_argument_begin|>{\"x\": 1}<|tool_call_end|>"
                                    "<|tool_call_begin|>functions.b:1<|tool_call_argument_begin|>{}<|tool_call_end|><|tool_calls_section_end|>"},
        {family::solar, "<|tool_calls|><|tool_call:begin|>id1<|tool_call:name|>a<|tool_call:args|>{\"x\": 1}<|tool_call:end|>"
                                     "<|tool_call:begin|>id2<|tool_call:name|>b<|tool_call:args|>{}<|tool_call:end|>"},
        {family::functionary_v3_1, "<function=a>{\"x\": 1}</function><function=b>{}</function>"},
        {family::qwen3_coder_xml, "<tool_call>\n<function=a>\n<parameter=x>\n1\n</parameter>\n</function>\n</tool_call>\n"
                                               "<tool_call>\n<function=b>\n</function>\n</tool_call>"},
        {family::seed_oss, "<seed:tool_call>\n<function=a>\n<parameter=x>1</parameter>\n</function>\n</seed:tool_call>"
                                        "<seed:tool_call>\n<function=b>\n</function>\n</seed:tool_call>"},
        {family::minimax_xml, "<minimax:tool_call>\n<invoke name=\"a\">\n<parameter name=\"x\">1</parameter>\n</invoke>\n"
                                           "<invoke name=\"b\">\n</invoke>\n</minimax:tool_call>"},
        {family::deepseek_dsml, "<｜DSML｜function_calls>\n<｜DSML｜invoke name=\"a\">\n<｜DSML｜parameter name=\"x\" string=\"false\">1</｜DSML｜parameter>\n"
                                             "</｜DSML｜invoke>\n<｜DSML｜invoke name=\"b\">\n</｜DSML｜invoke>\n</｜DSML｜function_calls>"},
        {family::glm, "<tool_call>a\n<arg_key>x</arg_key>\n<arg_value>1</arg_value>\n</tool_call>\n<tool_call>b\n</tool_call>"},
        {family::minicpm_xml, "<function name=\"a\"><param name=\"x\">1</param></function>\n<function name=\"b\"></function>"},
        {family::lfm_pythonic, "<|tool_call_start|>[a(x=1), b()]<|tool_call_end|>"},
        {family::gemma4, "<|tool_call>call:a{x:1}<tool_call|><|tool_call>call:b{}<tool_call|>"},
        {family::gpt_oss_harmony, "<|channel|>commentary to=functions.a <|constrain|>json<|message|>{\"x\": 1}<|call|>"
                                               "<|start|>assistant to=functions.b<|channel|>commentary json<|message|>{}<|call|>"}
    };
    return samples;
}

}  // namespace toolcall_test
