// Families: detection from the 39 reference chat templates, malformed calls as content, parallel
// calls and their indices, markers held back while they may still be markers, and the details of
// each wire format (Python literals, schemas, CDATA, ids, truncation).
#include "testdata.h"
#include "toolcall/toolcall-test-util.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

using nlohmann::ordered_json;
using toolcall::family;
using namespace toolcall_test;

namespace {

std::string read_file(const std::string & path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

toolcall::message parse_plain(family f, std::string_view text, const ordered_json & tools = nullptr) {
    toolcall::parse_options o;
    o.tools = tools;
    o.id_seed = 11;
    return toolcall::parse(f, text, o);
}

// One-shot and byte-by-byte streaming agree (deltas, result()); returns the one-shot message.
toolcall::message parse_checked(family f, std::string_view text, const ordered_json & tools = nullptr) {
    toolcall::parse_options o;
    o.tools = tools;
    o.id_seed = 11;
    toolcall::message once = toolcall::parse(f, text, o);
    std::vector<std::string_view> bytes;
    for (size_t i = 0; i < text.size(); ++i) bytes.push_back(text.substr(i, 1));
    toolcall::message result;
    assembled a = stream_pieces(f, o, bytes, &result);
    toolcall::message streamed = a.to_message();
    EXPECT_TRUE(a.problems.empty()) << family_name(f) << ": " << (a.problems.empty() ? "" : a.problems[0]);
    EXPECT_EQ(compare_messages(streamed, once), "") << family_name(f) << ": " << text;
    EXPECT_EQ(compare_messages(result, once), "") << family_name(f) << ": " << text;
    return once;
}

}  // namespace

TEST(toolcall_families, names_round_trip) {
    EXPECT_EQ(toolcall::all_families().size(), 25u);
    for (family f : toolcall::all_families()) {
        auto back = toolcall::family_from_name(toolcall::family_name(f));
        ASSERT_TRUE(back.has_value()) << toolcall::family_name(f);
        EXPECT_EQ(*back, f);
    }
    EXPECT_FALSE(toolcall::family_from_name("no-such-family").has_value());
    EXPECT_EQ(toolcall::family_name(family::gpt_oss_harmony), "gpt-oss-harmony");
    EXPECT_EQ(toolcall::family_name(family::deepseek_v3_1), "deepseek-v3.1");
}

TEST(toolcall_families, detect_family_on_reference_templates) {
    INFERD_REQUIRE_TESTDATA(dir);
    ordered_json expected = ordered_json::parse(read_file(dir + "/chat/expected.json"));
    int checked = 0;
    for (const auto & [name, info] : expected["templates"].items()) {
        std::string src = read_file(dir + "/chat/templates/" + name + ".jinja");
        ASSERT_FALSE(src.empty()) << name;
        EXPECT_EQ(toolcall::family_name(toolcall::detect_family(src)), info["tool_call_family"].get<std::string>())
            << name;
        ++checked;
    }
    EXPECT_EQ(checked, 39);
}

TEST(toolcall_families, detect_family_without_tool_calls_is_none) {
    EXPECT_EQ(toolcall::detect_family(""), family::none);
    EXPECT_EQ(toolcall::detect_family("{% for m in messages %}{{ m.content }}{% endfor %}"), family::none);
    EXPECT_EQ(toolcall::detect_family("{% if m.tool_calls %}<tool_call>{{ tc | tojson }}</tool_call>{% endif %}"),
              family::hermes);
}

TEST(toolcall_families, prompt_opens_reasoning) {
    EXPECT_TRUE(toolcall::prompt_opens_reasoning(family::hermes, "<|im_start|>assistant\n<think>\n"));
    EXPECT_FALSE(toolcall::prompt_opens_reasoning(family::hermes, "<|im_start|>assistant\n<think>\n\n</think>\n\n"));
    EXPECT_FALSE(toolcall::prompt_opens_reasoning(family::hermes, "<|im_start|>assistant\n"));
    EXPECT_TRUE(toolcall::prompt_opens_reasoning(family::seed_oss, "assistant\n<seed:think>"));
    EXPECT_FALSE(toolcall::prompt_opens_reasoning(family::command_r7b, "<|START_THINKING|><|END_THINKING|>"));
    EXPECT_FALSE(toolcall::prompt_opens_reasoning(family::gpt_oss_harmony, "<|start|>assistant"));
}

// ---- parallel calls: every family, two calls "a" {"x": 1} and "b" {} ----

class toolcall_parallel : public ::testing::TestWithParam<family_sample> {};

TEST_P(toolcall_parallel, two_calls_with_indices_0_and_1) {
    const family_sample & c = GetParam();
    toolcall::message m = parse_checked(c.f, c.text);
    ASSERT_EQ(m.tool_calls.size(), 2u) << m.to_json().dump();
    EXPECT_EQ(m.tool_calls[0].name, "a");
    EXPECT_EQ(m.tool_calls[1].name, "b");
    EXPECT_EQ(nlohmann::json::parse(m.tool_calls[0].arguments.dump()), nlohmann::json::parse(R"({"x": 1})"));
    EXPECT_EQ(m.tool_calls[1].arguments, ordered_json::object());
    EXPECT_NE(m.tool_calls[0].id, m.tool_calls[1].id);
    EXPECT_EQ(trimmed(m.content), "");

    toolcall::stream_parser p(c.f);
    std::vector<int> first_indices;
    for (size_t i = 0; i < c.text.size(); i += 3) {
        for (const auto & d : p.feed(std::string_view(c.text).substr(i, 3))) {
            if (d.what == toolcall::delta::kind::tool_call && !d.call.name.empty()) first_indices.push_back(d.call.index);
        }
    }
    for (const auto & d : p.finish()) {
        if (d.what == toolcall::delta::kind::tool_call && !d.call.name.empty()) first_indices.push_back(d.call.index);
    }
    EXPECT_EQ(first_indices, (std::vector<int>{0, 1}));
}

INSTANTIATE_TEST_SUITE_P(all, toolcall_parallel, ::testing::ValuesIn(two_call_samples()));

TEST(toolcall_families, llama3_json_single_call) {
    toolcall::message m = parse_checked(family::llama3_json, "{\"name\": \"a\", \"parameters\": {\"x\": 1}}");
    ASSERT_EQ(m.tool_calls.size(), 1u);
    EXPECT_EQ(m.tool_calls[0].name, "a");
    m = parse_checked(family::llama3_json, "<|python_tag|>{\"name\": \"a\", \"parameters\": {\"x\": 1}}");
    ASSERT_EQ(m.tool_calls.size(), 1u);
}

// ---- malformed calls stay content ----

struct malformed_case {
    family f;
    std::string text;
    std::string content;  // "" → the whole text, trimmed
};

class toolcall_malformed : public ::testing::TestWithParam<malformed_case> {};

TEST_P(toolcall_malformed, is_content_and_no_call) {
    const malformed_case & c = GetParam();
    toolcall::message m = parse_checked(c.f, c.text);
    EXPECT_TRUE(m.tool_calls.empty()) << m.to_json().dump();
    EXPECT_EQ(m.content, c.content.empty() ? trimmed(c.text) : c.content);
    // Cut anywhere, it still does not crash and stream and one-shot agree.
    for (size_t k = 0; k <= c.text.size(); ++k) parse_checked(c.f, std::string_view(c.text).substr(0, k));
}

INSTANTIATE_TEST_SUITE_P(
    all, toolcall_malformed,
    ::testing::Values(
        malformed_case{family::none, "<tool_call>{\"name\": \"a\", \"arguments\": {}}</tool_call>", ""},
        malformed_case{family::generic, "{\"foo\": 1}", ""},
        malformed_case{family::generic, "{\"tool_calls\": [{\"name\": 5}]}", ""},
        malformed_case{family::hermes, "<tool_call>\n{\"name\": get_weather}\n</tool_call>", ""},
        malformed_case{family::hermes, "Sure <tool_call>not json</tool_call> done", ""},
        malformed_case{family::apriel, "<tool_calls>[{\"name\": }]</tool_calls>", ""},
        malformed_case{family::nemotron_toolcall, "<TOOLCALL>not json</TOOLCALL>", ""},
        malformed_case{family::firefunction, "I use functools[oops] in Python", ""},
        malformed_case{family::command_r7b, "<|START_ACTION|>[{\"tool_name\": ]<|END_ACTION|>", ""},
        malformed_case{family::command_r_plus, "Action: ```json\n[{\"tool_name\": 1}]\n```", ""},
        malformed_case{family::gigachat, "Hi<|message_sep|>\n\nfunction call<|role_sep|>\n{broken", ""},
        malformed_case{family::llama3_json, "{\"name\": \"Bob\", \"age\": 3}", ""},
        malformed_case{family::mistral, "[TOOL_CALLS]not a call", ""},
        malformed_case{family::mistral, "[TOOL_CALLS][{\"name\": \"a\", \"arguments\": nope}]", ""},
        malformed_case{family::deepseek_r1, "<｜tool▁calls▁begin｜>garbage<｜tool▁calls▁end｜>", ""},
        malformed_case{family::deepseek_v3_1, "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>not json<｜tool▁call▁end｜><｜tool▁calls▁end｜>", ""},
        malformed_case{family::kimi, "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>not json<|tool_call_end|><|tool_calls_section_end|>", ""},
        malformed_case{family::solar, "<|tool_calls|><|tool_call:begin|>c1<|tool_call:name|>get_weather<|tool_call:args|>oops<|tool_call:end|>", ""},
        malformed_case{family::functionary_v3_1, "<function=get_weather>not json</function>", ""},
        malformed_case{family::qwen3_coder_xml, "<tool_call>\n<function=get_weather>\nnot a parameter\n</function>\n</tool_call>", ""},
        malformed_case{family::seed_oss, "<seed:tool_call>\n<function=get_weather>\noops\n</function>\n</seed:tool_call>", ""},
        malformed_case{family::minimax_xml, "<minimax:tool_call>\n<invoke name=\"get_weather\">\noops\n</invoke>\n</minimax:tool_call>", ""},
        malformed_case{family::deepseek_dsml, "<｜DSML｜function_calls>\n<｜DSML｜invoke>broken</｜DSML｜invoke>\n</｜DSML｜function_calls>", ""},
        malformed_case{family::glm, "<tool_call>get_weather\noops\n</tool_call>", ""},
        malformed_case{family::minicpm_xml, "<function name=\"get_weather\">oops</function>", ""},
        malformed_case{family::lfm_pythonic, "<|tool_call_start|>[get_weather(location=)]<|tool_call_end|>", ""},
        malformed_case{family::gemma4, "<|tool_call>call:get_weather oops<tool_call|>", ""},
        malformed_case{family::gpt_oss_harmony, " to=functions.get_weather<|channel|>commentary json<|message|>not json", "not json"}));

// ---- held back while it may be a marker ----

TEST(toolcall_families, partial_marker_is_held_back) {
    struct hold_case {
        family f;
        std::string before, marker_start, rest;
        std::string not_marker = "";  // the content when "!" follows instead ("": before + marker_start + "!")
    };
    const std::vector<hold_case> cases = {
        {family::hermes, "Let me check. ", "<tool_ca", "ll>{\"name\": \"f\", \"arguments\": {}}</tool_call>"},
        {family::mistral, "Ok ", "[TOOL_C", "ALLS]f[ARGS]{}"},
        {family::deepseek_v3_1, "Ok ", "<｜tool▁calls▁be", "gin｜><｜tool▁call▁begin｜>f<｜tool▁sep｜>{}<｜tool▁call▁end｜><｜tool▁calls▁end｜>"},
        // cut inside a character of the marker; "!" then makes that character invalid UTF-8
        {family::deepseek_v3_1, "Ok ", "<｜tool\xE2\x96", "\x81" "calls\xE2\x96\x81" "begin｜><｜tool▁call▁begin｜>f<｜tool▁sep｜>{}<｜tool▁call▁end｜>",
         "Ok <｜tool\xEF\xBF\xBD\xEF\xBF\xBD!"},
        {family::kimi, "Ok ", "<|tool_calls_sec", "tion_begin|><|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{}<|tool_call_end|>"},
        {family::qwen3_coder_xml, "Ok ", "<func", "tion=f>\n</function>"},
        {family::firefunction, "Ok", " functoo", "ls[{\"name\": \"f\", \"arguments\": {}}]"},
        {family::gemma4, "Ok ", "<|tool_", "call>call:f{}<tool_call|>"},
    };
    for (const hold_case & c : cases) {
        toolcall::stream_parser p(c.f);
        assembled a;
        a.add(p.feed(c.before + c.marker_start));
        EXPECT_EQ(a.content, trimmed(c.before)) << family_name(c.f) << ": nothing of the marker yet";
        EXPECT_TRUE(a.calls.empty());
        a.add(p.feed(c.rest));
        a.add(p.finish());
        EXPECT_EQ(a.content, trimmed(c.before)) << family_name(c.f);
        ASSERT_EQ(a.calls.size(), 1u) << family_name(c.f);
        EXPECT_EQ(a.calls[0].name, "f");

        // The same start that turns out not to be a marker is content, all of it.
        toolcall::stream_parser q(c.f);
        assembled b;
        b.add(q.feed(c.before + c.marker_start));
        b.add(q.feed("!"));
        b.add(q.finish());
        EXPECT_EQ(b.content, c.not_marker.empty() ? c.before + c.marker_start + "!" : c.not_marker) << family_name(c.f);
        EXPECT_TRUE(b.calls.empty());
    }
}

TEST(toolcall_families, content_before_reasoning_marker_start_waits) {
    toolcall::stream_parser p(family::hermes);
    assembled a;
    a.add(p.feed("<thi"));
    EXPECT_TRUE(a.content.empty() && a.reasoning.empty());
    a.add(p.feed("nk>Hmm</think>Answer"));
    a.add(p.finish());
    EXPECT_EQ(a.reasoning, "Hmm");
    EXPECT_EQ(a.content, "Answer");
}

// ---- format details ----

TEST(toolcall_families, python_literal_and_json_string_arguments) {
    toolcall::message m = parse_checked(family::hermes, "<tool_call>{'name': 'f', 'arguments': {'a': True, 'b': None, "
                                                        "'c': 'it\\'s', 'd': [1, 2.5, False]}}</tool_call>");
    ASSERT_EQ(m.tool_calls.size(), 1u);
    EXPECT_EQ(m.tool_calls[0].arguments.dump(), R"({"a":true,"b":null,"c":"it's","d":[1,2.5,false]})");
    m = parse_checked(family::hermes, R"(<tool_call>{"name": "f", "arguments": "{\"a\": 1}"}</tool_call>)");
    ASSERT_EQ(m.tool_calls.size(), 1u);
    EXPECT_EQ(m.tool_calls[0].arguments.dump(), R"({"a":1})");
}

TEST(toolcall_families, xml_values_follow_the_schema) {
    const std::string text = "<tool_call>\n<function=f>\n<parameter=code>\n34\n</parameter>\n<parameter=n>\n34\n</parameter>\n"
                             "<parameter=flag>\nTrue\n</parameter>\n<parameter=note>\nnot json\n</parameter>\n</function>\n</tool_call>";
    ordered_json tools = ordered_json::parse(R"([{"type": "function", "function": {"name": "f", "parameters": {"type": "object",
        "properties": {"code": {"type": "string"}, "n": {"type": "integer"}, "flag": {"type": "boolean"}}}}}])");
    toolcall::message with = parse_checked(family::qwen3_coder_xml, text, tools);
    ASSERT_EQ(with.tool_calls.size(), 1u);
    EXPECT_EQ(with.tool_calls[0].arguments.dump(), R"({"code":"34","n":34,"flag":true,"note":"not json"})");
    toolcall::message without = parse_checked(family::qwen3_coder_xml, text);
    ASSERT_EQ(without.tool_calls.size(), 1u);
    EXPECT_EQ(without.tool_calls[0].arguments.dump(), R"({"code":34,"n":34,"flag":true,"note":"not json"})");
    // Without a schema only JSON (or Python) literals become values: these stay strings.
    toolcall::message loose = parse_checked(family::qwen3_coder_xml,
                                            "<tool_call>\n<function=f>\n<parameter=zip>\n007\n</parameter>\n"
                                            "<parameter=tel>\n+15551234\n</parameter>\n</function>\n</tool_call>");
    ASSERT_EQ(loose.tool_calls.size(), 1u);
    EXPECT_EQ(loose.tool_calls[0].arguments.dump(), R"({"zip":"007","tel":"+15551234"})");
    // Multi-line string values keep their inner newlines; one newline at each end is the format's.
    toolcall::message code = parse_checked(family::qwen3_coder_xml,
                                           "<tool_call>\n<function=f>\n<parameter=code>\nline 1\n\nline \"2\"\n</parameter>\n</function>\n</tool_call>", tools);
    ASSERT_EQ(code.tool_calls.size(), 1u);
    EXPECT_EQ(code.tool_calls[0].arguments["code"], "line 1\n\nline \"2\"");
}

TEST(toolcall_families, minicpm_cdata_and_dsml_string_attribute) {
    toolcall::message m = parse_checked(family::minicpm_xml,
                                        "<function name=\"f\"><param name=\"code\"><![CDATA[if a < b && c:\n  pass]]></param></function>");
    ASSERT_EQ(m.tool_calls.size(), 1u);
    EXPECT_EQ(m.tool_calls[0].arguments["code"], "if a < b && c:\n  pass");
    m = parse_checked(family::deepseek_dsml, "<｜DSML｜function_calls>\n<｜DSML｜invoke name=\"f\">\n"
                                             "<｜DSML｜parameter name=\"s\" string=\"true\">12</｜DSML｜parameter>\n"
                                             "<｜DSML｜parameter name=\"n\" string=\"false\">12</｜DSML｜parameter>\n"
                                             "</｜DSML｜invoke>\n</｜DSML｜function_calls>");
    ASSERT_EQ(m.tool_calls.size(), 1u);
    EXPECT_EQ(m.tool_calls[0].arguments.dump(), R"({"s":"12","n":12})");
}

TEST(toolcall_families, gemma4_strings_keep_markup) {
    toolcall::message m = parse_checked(family::gemma4, "<|tool_call>call:f{q:<|\"|>a \"quoted\" <b> \\ text<|\"|>,n:-2.5e3,"
                                                        "list:[<|\"|>x<|\"|>,true]}<tool_call|>");
    ASSERT_EQ(m.tool_calls.size(), 1u);
    EXPECT_EQ(nlohmann::json::parse(m.tool_calls[0].arguments.dump()),
              nlohmann::json::parse(R"({"q":"a \"quoted\" <b> \\ text","n":-2.5e3,"list":["x",true]})"));
}

TEST(toolcall_families, ids_from_the_format_are_kept) {
    toolcall::message m = parse_checked(family::mistral, "[TOOL_CALLS][{\"name\": \"a\", \"arguments\": {}, \"id\": \"Abc123XyZ\"}]");
    ASSERT_EQ(m.tool_calls.size(), 1u);
    EXPECT_EQ(m.tool_calls[0].id, "Abc123XyZ");
    m = parse_checked(family::kimi, "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:3<|tool_call_argument_begin|>{}<|tool_call_end|>");
    ASSERT_EQ(m.tool_calls.size(), 1u);
    EXPECT_EQ(m.tool_calls[0].id, "functions.get_weather:3");
    EXPECT_EQ(m.tool_calls[0].name, "get_weather");
    m = parse_checked(family::hermes, "<tool_call>{\"name\": \"a\", \"arguments\": {}}</tool_call>");
    ASSERT_EQ(m.tool_calls.size(), 1u);
    const std::string & id = m.tool_calls[0].id;
    ASSERT_EQ(id.size(), 29u);
    EXPECT_EQ(id.substr(0, 5), "call_");
    for (char c : id.substr(5)) EXPECT_TRUE(std::isalnum(static_cast<unsigned char>(c))) << id;
}

TEST(toolcall_families, cut_off_call_is_closed) {
    // Generation stopped (max_tokens) inside the arguments: the call keeps what was written.
    toolcall::message m = parse_checked(family::hermes, "<tool_call>{\"name\": \"f\", \"arguments\": {\"a\": \"hel");
    ASSERT_EQ(m.tool_calls.size(), 1u);
    EXPECT_EQ(m.tool_calls[0].arguments.dump(), R"({"a":"hel"})");
    m = parse_checked(family::qwen3_coder_xml, "<tool_call>\n<function=f>\n<parameter=a>\nhel");
    ASSERT_EQ(m.tool_calls.size(), 1u);
    EXPECT_EQ(m.tool_calls[0].arguments.dump(), R"({"a":"hel"})");
    // A call broken after it went out ends there; what follows is content.
    m = parse_checked(family::kimi, "<|tool_calls_section_begin|><|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>"
                                    "{\"a\": [1, 2 oops");
    ASSERT_EQ(m.tool_calls.size(), 1u);
    EXPECT_EQ(m.tool_calls[0].arguments.dump(), R"({"a":[1,2]})");
    EXPECT_EQ(m.content, "oops");
}

TEST(toolcall_families, reasoning_forms) {
    toolcall::parse_options open;
    open.reasoning_open = true;
    toolcall::message m = toolcall::parse(family::qwen3_coder_xml, "thinking\n</think>\n\nanswer", open);
    EXPECT_EQ(m.reasoning_content, "thinking");
    EXPECT_EQ(m.content, "answer");
    m = toolcall::parse(family::qwen3_coder_xml, "never closed", open);
    EXPECT_EQ(m.reasoning_content, "never closed");
    m = parse_checked(family::seed_oss, "<seed:think>r</seed:think>c");
    EXPECT_EQ(m.reasoning_content, "r");
    EXPECT_EQ(m.content, "c");
    m = parse_checked(family::command_r7b, "<|START_THINKING|>r<|END_THINKING|><|START_RESPONSE|>c<|END_RESPONSE|>");
    EXPECT_EQ(m.reasoning_content, "r");
    EXPECT_EQ(m.content, "c");
    m = parse_checked(family::gpt_oss_harmony, "<|channel|>analysis<|message|>r<|end|><|start|>assistant<|channel|>final<|message|>c");
    EXPECT_EQ(m.reasoning_content, "r");
    EXPECT_EQ(m.content, "c");
    m = parse_checked(family::gemma4, "<|channel>thought\nr<channel|>c");
    EXPECT_EQ(m.reasoning_content, "r");
    EXPECT_EQ(m.content, "c");
    m = parse_checked(family::hermes, "text with <think> inside");
    EXPECT_EQ(m.reasoning_content, "");
    EXPECT_EQ(m.content, "text with <think> inside");
}

TEST(toolcall_families, utf8_is_whole_in_every_delta) {
    const std::string text = "caf\xC3\xA9 \xF0\x9F\x98\x80 bad\xFF end";
    toolcall::message m = parse_checked(family::none, text);
    EXPECT_EQ(m.content, "caf\xC3\xA9 \xF0\x9F\x98\x80 bad\xEF\xBF\xBD end");
    m = parse_checked(family::none, "cut \xE6\x9D");  // the output ends inside a character
    EXPECT_EQ(m.content, "cut \xEF\xBF\xBD");
}

TEST(toolcall_families, message_and_delta_json) {
    toolcall::message m = parse_plain(family::hermes, "Hi<tool_call>{\"name\": \"f\", \"arguments\": {\"a\": 1}}</tool_call>");
    ordered_json j = m.to_json();
    EXPECT_EQ(j["role"], "assistant");
    EXPECT_EQ(j["content"], "Hi");
    EXPECT_EQ(j["tool_calls"][0]["type"], "function");
    EXPECT_EQ(j["tool_calls"][0]["function"]["arguments"], "{\"a\":1}");
    toolcall::stream_parser p(family::hermes);
    auto ds = p.feed("<tool_call>{\"name\": \"f\", \"arguments\": {\"a\"");
    ASSERT_FALSE(ds.empty());
    ordered_json first = ds.front().to_json();
    EXPECT_EQ(first["tool_calls"][0]["index"], 0);
    EXPECT_EQ(first["tool_calls"][0]["function"]["name"], "f");
    EXPECT_TRUE(first["tool_calls"][0].contains("id"));
}

TEST(toolcall_families, generic_json_replies) {
    toolcall::message m = parse_checked(family::generic, "{\"response\": \"Hello there\"}");
    EXPECT_EQ(m.content, "Hello there");
    EXPECT_TRUE(m.tool_calls.empty());
    m = parse_checked(family::generic, "{\"tool_call\": {\"name\": \"f\", \"arguments\": {\"a\": [1]}}}");
    ASSERT_EQ(m.tool_calls.size(), 1u);
    EXPECT_EQ(m.tool_calls[0].arguments.dump(), R"({"a":[1]})");
    m = parse_checked(family::generic, "[{\"type\": \"function\", \"function\": {\"name\": \"f\", \"arguments\": \"{}\"}, \"id\": \"x1\"}]");
    ASSERT_EQ(m.tool_calls.size(), 1u);
    EXPECT_EQ(m.tool_calls[0].id, "x1");
    m = parse_checked(family::generic, "Plain answer {not json}");
    EXPECT_EQ(m.content, "Plain answer {not json}");
}
