// Random outputs built from every family's markers and JSON / Python / XML fragments, parsed by
// every family: nothing crashes or hangs, every delta is valid UTF-8 and follows the streaming
// model, and however the text is split the deltas add up to the one-shot message.
#include "toolcall/toolcall-test-util.h"

#include <gtest/gtest.h>

#include <random>

using toolcall::family;
using namespace toolcall_test;

namespace {

const std::vector<std::string> & soup() {
    static const std::vector<std::string> pieces = {
        // markers of the families
        "<tool_call>", "</tool_call>", "<tool_calls>", "</tool_calls>", "<TOOLCALL>", "</TOOLCALL>", " functools",
        "<|START_ACTION|>", "<|END_ACTION|>", "<|START_THINKING|>", "<|END_THINKING|>", "<|START_RESPONSE|>",
        "Action:", "```json\n", "```", "<|message_sep|>\n\nfunction call<|role_sep|>\n", "[TOOL_CALLS]", "[ARGS]",
        "[CALL_ID]", "<｜tool▁calls▁begin｜>", "<｜tool▁call▁begin｜>", "<｜tool▁sep｜>", "<｜tool▁call▁end｜>",
        "<｜tool▁calls▁end｜>", "function<｜tool▁sep｜>f\n```json\n", "<|tool_calls_section_begin|>",
        "<|tool_call_begin|>", "functions.f:0", "<|tool_call_argument_begin|>", "<|tool_call_end|>",
        "<|tool_calls|>", "<|tool_call:begin|>", "<|tool_call:name|>", "<|tool_call:args|>", "<|tool_call:end|>",
        "<function=f>", "</function>", "<parameter=a>", "</parameter>", "<seed:tool_call>", "<seed:think>",
        "</seed:think>", "<minimax:tool_call>", "<invoke name=\"f\">", "</invoke>", "<parameter name=\"a\">",
        "<｜DSML｜function_calls>", "<｜DSML｜invoke name=\"f\">", "<｜DSML｜parameter name=\"a\" string=\"false\">",
        "</｜DSML｜parameter>", "<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>", "<function name=\"f\">",
        "<param name=\"a\">", "</param>", "<![CDATA[", "]]>", "<|tool_call_start|>[", "]<|tool_call_end|>", "f(",
        "a=", ")", "<|tool_call>call:f", "<tool_call|>", "<|\"|>", "<|channel|>analysis", "<|channel|>final",
        " to=functions.f", "<|message|>", "<|end|>", "<|start|>assistant", "<|call|>", "<think>", "</think>",
        "<|channel>thought\n", "<channel|>", "<|python_tag|>",
        // JSON, Python, text
        "{\"name\": \"f\", \"arguments\": ", "{\"name\": \"g\", \"parameters\": ", "{\"a\": 1}", "{'a': True}",
        "{", "}", "[", "]", ",", ":", "\"", "'", "\\", "\\\"", "\\u00e9", "\\ud83d\\ude00", "\\ud83d", "true",
        "None", "12.5", "-", "e", "x", "Hello", " ", "\n", "\t", "é", "東京", "\xF0\x9F\x98\x80", "\xE6\x9D",
        "\xFF", "<", ">", "|", "=",
    };
    return pieces;
}

std::string random_text(std::mt19937 & rng) {
    std::uniform_int_distribution<size_t> len(0, 30);
    std::uniform_int_distribution<size_t> pick(0, soup().size() - 1);
    std::string t;
    for (size_t n = len(rng); n > 0; --n) t += soup()[pick(rng)];
    return t;
}

std::string check(family f, const std::string & text, std::mt19937 & rng) {
    toolcall::parse_options o;
    o.id_seed = 5;
    o.reasoning_open = rng() % 4 == 0;
    toolcall::message once = toolcall::parse(f, text, o);
    for (const auto & tc : once.tool_calls) {
        if (!tc.arguments.is_object()) return "arguments not an object";
    }
    // Random splits, then byte by byte.
    for (int round = 0; round < 4; ++round) {
        std::vector<std::string_view> pieces;
        std::uniform_int_distribution<size_t> step(1, round == 3 ? 1 : 8);
        for (size_t i = 0; i < text.size();) {
            size_t n = std::min(step(rng), text.size() - i);
            pieces.push_back(std::string_view(text).substr(i, n));
            i += n;
        }
        toolcall::message result;
        assembled a = stream_pieces(f, o, pieces, &result);
        toolcall::message m = a.to_message();
        if (!a.problems.empty()) return a.problems.front();
        if (std::string d = compare_messages(m, once); !d.empty()) return "deltas vs one-shot: " + d;
        if (std::string d = compare_messages(result, once); !d.empty()) return "result() vs one-shot: " + d;
        if (trimmed(m.content) != m.content || trimmed(m.reasoning_content) != m.reasoning_content) {
            return "untrimmed text";
        }
    }
    return "";
}

}  // namespace

TEST(toolcall_stream, random_outputs_agree_in_every_split_for_every_family) {
    std::mt19937 rng(1234);
    size_t texts = 0;
    for (family f : toolcall::all_families()) {
        for (int i = 0; i < 300; ++i) {
            std::string text = random_text(rng);
            std::string d = check(f, text, rng);
            ASSERT_EQ(d, "") << toolcall::family_name(f) << "\n  text: " << nlohmann::json(text).dump(
                                                                                   -1, ' ', true, nlohmann::json::error_handler_t::replace);
            ++texts;
        }
    }
    std::printf("%zu random outputs, each one-shot, in 3 random splittings and byte by byte\n", texts);
}

// Well-formed calls with random content around them, for every family that has samples here.
TEST(toolcall_stream, calls_survive_surrounding_noise) {
    struct sample {
        family f;
        std::string call;
    };
    const std::vector<sample> samples = {
        {family::hermes, "<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": \"é\\n\"}}\n</tool_call>"},
        {family::qwen3_coder_xml, "<tool_call>\n<function=f>\n<parameter=a>\né\n</parameter>\n</function>\n</tool_call>"},
        {family::kimi, "<|tool_calls_section_begin|><|tool_call_begin|>functions.f:0<|tool_call_argument_begin|>{\"a\": \"é\\n\"}<|tool_call_end|><|tool_calls_section_end|>"},
        {family::lfm_pythonic, "<|tool_call_start|>[f(a='é\\n')]<|tool_call_end|>"},
        {family::gemma4, "<|tool_call>call:f{a:<|\"|>é\n<|\"|>}<tool_call|>"},
        {family::deepseek_v3_1, "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>f<｜tool▁sep｜>{\"a\": \"é\\n\"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>"},
    };
    const std::vector<std::string> noise = {"", "Hi ", "Plain text. ", "a < b ", "[x] ", "東京 "};
    std::mt19937 rng(99);
    for (const sample & s : samples) {
        for (const std::string & before : noise) {
            for (const std::string & after : noise) {
                std::string text = before + s.call + (after.empty() ? "" : " " + after);
                toolcall::message m = toolcall::parse(s.f, text);
                ASSERT_EQ(m.tool_calls.size(), 1u) << toolcall::family_name(s.f) << ": " << text;
                EXPECT_EQ(m.tool_calls[0].name, "f");
                EXPECT_EQ(m.tool_calls[0].arguments["a"].get<std::string>().substr(0, 2), "é");
                // Whitespace beside a call stays between the content around it.
                EXPECT_EQ(m.content, trimmed(before + (after.empty() ? "" : " " + after)))
                    << toolcall::family_name(s.f) << ": " << text;
                EXPECT_EQ(check(s.f, text, rng), "") << toolcall::family_name(s.f) << ": " << text;
            }
        }
    }
}

// Well-formed calls of every family, cut short, with a byte dropped or a piece put in: whatever
// the damage, the stream agrees with the one-shot parse.
TEST(toolcall_stream, damaged_calls_agree_in_every_split) {
    std::mt19937 rng(4321);
    std::uniform_int_distribution<size_t> pick(0, soup().size() - 1);
    size_t texts = 0;
    for (const family_sample & s : two_call_samples()) {
        for (int i = 0; i < 200; ++i) {
            std::string text = s.text;
            for (int k = rng() % 3; k >= 0; --k) {
                size_t at = rng() % (text.size() + 1);
                switch (rng() % 3) {
                    case 0: text.resize(at); break;
                    case 1: if (at < text.size()) text.erase(at, 1); break;
                    default: text.insert(at, soup()[pick(rng)]);
                }
            }
            std::string d = check(s.f, text, rng);
            ASSERT_EQ(d, "") << toolcall::family_name(s.f) << "\n  text: "
                             << nlohmann::json(text).dump(-1, ' ', true, nlohmann::json::error_handler_t::replace);
            ++texts;
        }
    }
    std::printf("%zu damaged calls, each one-shot, in 3 random splittings and byte by byte\n", texts);
}
