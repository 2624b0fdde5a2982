// Forced tool-call grammars (toolcall/call-grammar.h): the reference fixtures' calls are
// sentences of the grammar built from their conversation's tools, and damaged ones are not;
// random generation under the grammar (token masks over a small vocabulary) always parses back
// into calls of the tools with arguments their schemas accept; errors name what is wrong.
#include "testdata.h"

#include "grammar/gbnf.h"
#include "grammar/token-mask.h"
#include "toolcall/call-grammar.h"

#include <gtest/gtest.h>

#include <chrono>

#include <algorithm>
#include <fstream>
#include <map>
#include <random>

using nlohmann::ordered_json;
using toolcall::family;

namespace {

ordered_json read_json(const std::string & path) {
    std::ifstream in(path, std::ios::binary);
    return ordered_json::parse(in, nullptr, false);
}

// The tools of tool_call_parallel: get_weather (a string and a string enum) and search_flights
// (arrays of objects, nested objects, integers, numbers, booleans).
const ordered_json & parallel_tools() {
    static const ordered_json tools = ordered_json::parse(R"([
      {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object",
        "properties": {"location": {"type": "string"}, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
        "required": ["location"]}}},
      {"type": "function", "function": {"name": "search_flights", "parameters": {"type": "object",
        "properties": {"origin": {"type": "string"}, "destination": {"type": "string"},
          "passengers": {"type": "array", "items": {"type": "object", "properties": {"name": {"type": "string"},
            "age": {"type": "integer"}, "seat": {"type": "string", "enum": ["window", "aisle", "middle"]}},
            "required": ["name"], "additionalProperties": false}, "maxItems": 3},
          "options": {"type": "object", "properties": {"max_stops": {"type": "integer", "minimum": 0},
            "cabin": {"type": "string", "enum": ["economy", "business", "first"]}, "max_price": {"type": "number"},
            "flexible_dates": {"type": "boolean"}}, "additionalProperties": false}},
        "required": ["origin", "destination", "passengers"], "additionalProperties": false}}}
    ])");
    return tools;
}

const std::vector<family> & supported() {
    static const std::vector<family> fams = [] {
        std::vector<family> out;
        for (family f : toolcall::all_families()) {
            if (toolcall::call_grammar_supported(f)) out.push_back(f);
        }
        return out;
    }();
    return fams;
}

std::string replace_all(std::string s, const std::string & from, const std::string & to) {
    for (size_t p = s.find(from); p != std::string::npos; p = s.find(from, p + to.size())) s.replace(p, from.size(), to);
    return s;
}

}  // namespace

TEST(toolcall_grammar, covers_the_required_families) {
    for (const char * name : {"hermes", "generic", "llama3-json", "mistral", "qwen3-coder-xml", "deepseek-v3.1",
                              "deepseek-r1", "kimi", "functionary-v3.1", "gpt-oss-harmony"}) {
        EXPECT_TRUE(toolcall::call_grammar_supported(*toolcall::family_from_name(name))) << name;
    }
}

TEST(toolcall_grammar, reference_fixtures) {
    INFERD_REQUIRE_TESTDATA(dir);
    ordered_json calls = read_json(dir + "/chat/toolcalls.json");
    ordered_json conversations = read_json(dir + "/chat/conversations.json");
    std::map<std::string, ordered_json> tools;
    for (const auto & c : conversations) tools[c["name"].get<std::string>()] = c.value("tools", ordered_json());
    int checked = 0;
    for (const auto & fx : calls["fixtures"]) {
        const family f = *toolcall::family_from_name(fx["family"].get<std::string>());
        const std::string kase = fx["case"].get<std::string>();
        if (!toolcall::call_grammar_supported(f) || (kase != "single" && kase != "parallel")) continue;
        const std::string label = fx["template"].get<std::string>() + " / " + kase;
        toolcall::call_grammar_options o;
        o.parallel = kase == "parallel";
        o.allow_reasoning = true;
        o.reasoning_open = toolcall::prompt_opens_reasoning(f, fx["prompt_tail"].get<std::string>());
        o.strict = true;
        const ordered_json & t = tools[fx["conversation"].get<std::string>()];
        toolcall::call_grammar_result r = toolcall::call_grammar(f, t, o);
        ASSERT_TRUE(r.ok()) << label << ": " << r.error;
        const std::string text = fx["text"].get<std::string>();
        EXPECT_TRUE(grammar_recognize(r.value, text)) << label << "\n" << text << "\n" << r.gbnf;
        // Another function name.
        EXPECT_FALSE(grammar_recognize(r.value, replace_all(text, "get_weather", "get_wether"))) << label;
        // The required location removed (JSON arguments or an XML parameter).
        std::string damaged = replace_all(text, "\"location\": \"Paris\", ", "");
        damaged = replace_all(damaged, "\"location\": \"東京\"", "");
        damaged = replace_all(damaged, "<parameter=location>\nParis\n</parameter>\n", "");
        damaged = replace_all(damaged, "<parameter=location>\n東京\n</parameter>\n", "");
        ASSERT_NE(damaged, text) << label;
        EXPECT_FALSE(grammar_recognize(r.value, damaged)) << label << "\n" << damaged;
        // Only one call allowed: the parallel text is rejected.
        if (o.parallel) {
            o.parallel = false;
            EXPECT_FALSE(grammar_recognize(toolcall::call_grammar(f, t, o).value, text)) << label;
        }
        ++checked;
    }
    EXPECT_GE(checked, 20);
}

TEST(toolcall_grammar, named_function_only) {
    toolcall::call_grammar_options o;
    o.function = "search_flights";
    toolcall::call_grammar_result r = toolcall::call_grammar(family::hermes, parallel_tools(), o);
    ASSERT_TRUE(r.ok()) << r.error;
    EXPECT_FALSE(grammar_recognize(
        r.value, "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"location\": \"Paris\"}}\n</tool_call>"));
    EXPECT_TRUE(grammar_recognize(r.value, "<tool_call>\n{\"name\": \"search_flights\", \"arguments\": {\"origin\": "
                                           "\"CDG\", \"destination\": \"HND\", \"passengers\": []}}\n</tool_call>"));
}

// XML formats write string parameters raw: a length bound counts characters other than '<'.
TEST(toolcall_grammar, xml_string_length_bounds) {
    const ordered_json tools = ordered_json::parse(R"([{"type": "function", "function": {"name": "f",
      "parameters": {"type": "object", "properties": {"s": {"type": "string", "minLength": 2, "maxLength": 4}},
      "required": ["s"]}}}])");
    toolcall::call_grammar_result r = toolcall::call_grammar(family::qwen3_coder_xml, tools, {});
    ASSERT_TRUE(r.ok()) << r.error;
    const auto call = [](const std::string & v) {
        return "<tool_call>\n<function=f>\n<parameter=s>\n" + v + "\n</parameter>\n</function>\n</tool_call>";
    };
    EXPECT_TRUE(grammar_recognize(r.value, call("ab")));
    EXPECT_TRUE(grammar_recognize(r.value, call("\xC3\xA9t\xC3\xA9s")));  // 4 characters, 6 bytes
    EXPECT_TRUE(grammar_recognize(r.value, call("a\nb")));
    EXPECT_FALSE(grammar_recognize(r.value, call("a")));
    EXPECT_FALSE(grammar_recognize(r.value, call("abcde")));
    EXPECT_FALSE(grammar_recognize(r.value, call("a<b")));
    EXPECT_EQ(toolcall::parse(family::qwen3_coder_xml, call("\xC3\xA9t\xC3\xA9s"), {tools}).tool_calls.at(0).arguments["s"],
              "\xC3\xA9t\xC3\xA9s");
}

// optional_calls: free text first, calls held to the schema only from the family's marker on.
TEST(toolcall_grammar, optional_calls_after_free_text) {
    toolcall::call_grammar_options o;
    o.optional_calls = true;
    o.parallel = true;
    toolcall::call_grammar_result r = toolcall::call_grammar(family::hermes, parallel_tools(), o);
    ASSERT_TRUE(r.ok()) << r.error;
    const std::string call = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"location\": \"Paris\"}}\n</tool_call>";
    EXPECT_TRUE(grammar_recognize(r.value, ""));
    EXPECT_TRUE(grammar_recognize(r.value, "Any text at all, <tool or tool_call> included."));
    EXPECT_TRUE(grammar_recognize(r.value, "Let me look.\n" + call));
    EXPECT_TRUE(grammar_recognize(r.value, "<tool" + call + "\n" + call));
    EXPECT_FALSE(grammar_recognize(r.value, "Let me look.\n<tool_call>\n{\"name\": \"nope\"}\n</tool_call>"));
    EXPECT_FALSE(grammar_recognize(r.value, "Let me look.\n" + call + " and more text"));
    const toolcall::message m = toolcall::parse(family::hermes, "Let me look.\n" + call, {parallel_tools()});
    EXPECT_EQ(m.content, "Let me look.");
    ASSERT_EQ(m.tool_calls.size(), 1u);
    EXPECT_EQ(m.tool_calls[0].arguments["location"], "Paris");
    for (family f : supported()) {
        SCOPED_TRACE(std::string(toolcall::family_name(f)));
        const bool marked = !toolcall::call_grammar_marker(f).empty();
        EXPECT_EQ(toolcall::call_grammar(f, parallel_tools(), o).ok(), marked);
        EXPECT_EQ(marked, f != family::generic && f != family::llama3_json && f != family::gpt_oss_harmony);
    }
}

TEST(toolcall_grammar, generic_forms) {
    toolcall::call_grammar_options o;
    toolcall::call_grammar_result one = toolcall::call_grammar(family::generic, parallel_tools(), o);
    ASSERT_TRUE(one.ok()) << one.error;
    const std::string call = R"({"name": "get_weather", "arguments": {"location": "Paris"}})";
    EXPECT_TRUE(grammar_recognize(one.value, "{\"tool_call\": " + call + "}"));
    EXPECT_FALSE(grammar_recognize(one.value, "{\"tool_calls\": [" + call + "]}"));
    o.parallel = true;
    toolcall::call_grammar_result many = toolcall::call_grammar(family::generic, parallel_tools(), o);
    ASSERT_TRUE(many.ok()) << many.error;
    EXPECT_TRUE(grammar_recognize(many.value, "{\"tool_calls\": [" + call + ", " + call + "]}"));
}

TEST(toolcall_grammar, errors) {
    toolcall::call_grammar_options o;
    o.function = "get_time";
    toolcall::call_grammar_result r = toolcall::call_grammar(family::hermes, parallel_tools(), o);
    EXPECT_FALSE(r.ok());
    EXPECT_NE(r.error.find("get_time"), std::string::npos) << r.error;

    r = toolcall::call_grammar(family::glm, parallel_tools(), {});
    EXPECT_FALSE(r.ok());
    EXPECT_NE(r.error.find("glm"), std::string::npos) << r.error;

    r = toolcall::call_grammar(family::hermes, ordered_json::array(), {});
    EXPECT_FALSE(r.ok());

    const ordered_json bad = ordered_json::parse(R"([{"type": "function", "function": {"name": "odd",
        "parameters": {"type": "object", "properties": {"a": {"type": "string"}}, "propertyNames": {"pattern": "^a"}}}}])");
    for (family f : supported()) {
        toolcall::call_grammar_options strict;
        strict.strict = true;
        r = toolcall::call_grammar(f, bad, strict);
        EXPECT_FALSE(r.ok()) << toolcall::family_name(f);
        EXPECT_NE(r.error.find("'odd'"), std::string::npos) << toolcall::family_name(f) << ": " << r.error;
        r = toolcall::call_grammar(f, bad, {});  // not strict: any object (any parameters)
        EXPECT_TRUE(r.ok()) << toolcall::family_name(f) << ": " << r.error;
    }
    // A per-parameter schema (XML) that does not compile, and a tool's own strict flag.
    const ordered_json bad_param = ordered_json::parse(R"([{"type": "function", "function": {"name": "odd2",
        "strict": true, "parameters": {"type": "object", "properties": {"a": {"type": "object", "contains": {}}}}}}])");
    r = toolcall::call_grammar(family::qwen3_coder_xml, bad_param, {});
    EXPECT_FALSE(r.ok());
    EXPECT_NE(r.error.find("'odd2'"), std::string::npos) << r.error;
    r = toolcall::call_grammar(family::hermes, bad_param, {});
    EXPECT_FALSE(r.ok());
    EXPECT_NE(r.error.find("'odd2'"), std::string::npos) << r.error;
    // Not strict: that parameter takes any JSON value, the others keep their schemas.
    ordered_json lenient = bad_param;
    lenient[0]["function"].erase("strict");
    lenient[0]["function"]["parameters"]["properties"]["n"] = {{"type", "integer"}};
    r = toolcall::call_grammar(family::qwen3_coder_xml, lenient, {});
    ASSERT_TRUE(r.ok()) << r.error;
    const std::string head = "<tool_call>\n<function=odd2>\n<parameter=a>\n";
    const std::string tail = "\n</parameter>\n</function>\n</tool_call>";
    EXPECT_TRUE(grammar_recognize(r.value, head + "[1, \"x\"]" + tail));
    EXPECT_TRUE(grammar_recognize(r.value, head + "5\n</parameter>\n<parameter=n>\n7" + tail));
    EXPECT_FALSE(grammar_recognize(r.value, head + "5\n</parameter>\n<parameter=n>\nseven" + tail));
}

namespace {

constexpr int32_t k_eos = 1;

// Single printable bytes, '\n', the families' markers and a few multi-byte pieces.
std::shared_ptr<const grammar_vocab> test_vocab(std::vector<std::string> & bytes) {
    bytes = {"<s>", "</s>"};  // special; end of generation
    for (int c = 0x20; c < 0x7F; ++c) bytes.push_back(std::string(1, char(c)));
    for (const char * t :
         {"\n", "<tool_call>", "</tool_call>", "<tool_call>\n", "\n</tool_call>", "<think>", "</think>", "[THINK]",
          "[/THINK]", "[TOOL_CALLS]", "[ARGS]", "<｜tool▁calls▁begin｜>", "<｜tool▁call▁begin｜>", "<｜tool▁sep｜>",
          "<｜tool▁call▁end｜>", "<｜tool▁calls▁end｜>", "｜", "▁", "<|tool_calls_section_begin|>", "<|tool_call_begin|>",
          "<|tool_call_argument_begin|>", "<|tool_call_end|>", "<|tool_calls_section_end|>", "<function=", "</function>",
          "<parameter=", "</parameter>", "\n</parameter>\n", "<|channel|>", "<|message|>", "<|end|>", "<|start|>",
          "assistant", " to=functions.", "commentary json", "get_weather", "search_flights", "{\"", "\": ", ", \"",
          "\"}", "é", "日本", "```json\n", "\n```", "functions.", "function"}) {
        bytes.emplace_back(t);
    }
    std::vector<bool> special(bytes.size(), false);
    special[0] = special[1] = true;
    return grammar_vocab::build(bytes, special, {k_eos});
}

// Tokens that close what is open: quotes, brackets, markers (more than one byte starting with
// '<', '[' or "\n<"), the value closer of XML parameters.
bool closes(const std::string & b) {
    if (b == "\"" || b == "}" || b == "]" || b == "\"}") return true;
    return b.size() > 1 && (b[0] == '<' || b[0] == '[' || (b[0] == '\n' && b.size() > 2 && b[1] == '<'));
}

// Samples under the grammar until it ends (or max_steps): uniform at first, then mostly closers.
bool generate(const grammar & g, uint32_t seed, bool stop_early, std::string & out) {
    std::vector<std::string> bytes;
    static const auto vocab = test_vocab(bytes);
    grammar_program_result p = grammar_program_build(g);
    if (!p.ok()) return false;
    grammar_matcher m(p.value, vocab);
    grammar_token_mask mask;
    std::mt19937 rng(seed);
    out.clear();
    for (int step = 0; step < 4000; ++step) {
        m.fill_mask(mask);
        std::vector<int32_t> allowed, closing;
        for (int32_t t = 2; t < vocab->n_vocab(); ++t) {
            if (!grammar_mask_test(mask, t)) continue;
            allowed.push_back(t);
            if (closes(vocab->token_bytes(t))) closing.push_back(t);
        }
        if (grammar_mask_test(mask, k_eos) && (allowed.empty() || stop_early || rng() % 2 == 0)) return true;
        if (allowed.empty()) return false;
        const bool close = step > 40 && !closing.empty() && rng() % 10 < 8;
        const std::vector<int32_t> & from = close ? closing : allowed;
        const int32_t t = from[rng() % from.size()];
        if (!m.accept_token(t)) return false;
        out += vocab->token_bytes(t);
    }
    return false;
}

// What the test checks of arguments: types, enums, required keys, no unknown keys where
// additionalProperties is false, recursively.
std::string check_value(const ordered_json & v, const ordered_json & s, const std::string & at) {
    const std::string type = s.value("type", "");
    const bool ok = type.empty() || (type == "object" && v.is_object()) || (type == "array" && v.is_array()) ||
                    (type == "string" && v.is_string()) || (type == "boolean" && v.is_boolean()) ||
                    (type == "integer" && v.is_number_integer()) || (type == "number" && v.is_number());
    if (!ok) return at + ": not " + type + ": " + v.dump();
    if (s.contains("enum") && std::find(s["enum"].begin(), s["enum"].end(), v) == s["enum"].end()) {
        return at + ": not in enum: " + v.dump();
    }
    if (v.is_object()) {
        for (const auto & r : s.value("required", ordered_json::array())) {
            if (!v.contains(r.get<std::string>())) return at + ": missing " + r.get<std::string>();
        }
        const ordered_json props = s.value("properties", ordered_json::object());
        for (auto it = v.begin(); it != v.end(); ++it) {
            if (props.contains(it.key())) {
                if (std::string e = check_value(it.value(), props[it.key()], at + "/" + it.key()); !e.empty()) return e;
            } else if (s.contains("additionalProperties") && s["additionalProperties"] == false) {
                return at + ": unknown key " + it.key();
            }
        }
    }
    if (v.is_array() && s.contains("items")) {
        for (size_t i = 0; i < v.size(); ++i) {
            if (std::string e = check_value(v[i], s["items"], at + "/" + std::to_string(i)); !e.empty()) return e;
        }
    }
    return "";
}

std::string check_calls(const toolcall::message & msg, const ordered_json & tools) {
    if (msg.tool_calls.empty()) return "no tool calls";
    for (const toolcall::tool_call & c : msg.tool_calls) {
        const ordered_json * schema = nullptr;
        for (const auto & t : tools) {
            if (t["function"]["name"] == c.name) schema = &t["function"]["parameters"];
        }
        if (!schema) return "unknown function " + c.name;
        if (std::string e = check_value(c.arguments, *schema, c.name); !e.empty()) return e;
    }
    return "";
}

}  // namespace

TEST(toolcall_grammar, random_generation_parses_back) {
    for (family f : supported()) {
        for (uint32_t seed = 1; seed <= 12; ++seed) {
            toolcall::call_grammar_options o;
            o.parallel = seed % 2 == 0;
            o.allow_reasoning = seed % 3 == 1;
            o.reasoning_open = seed == 5 && f != family::gpt_oss_harmony;
            o.function = seed == 3 ? "search_flights" : "";
            o.strict = true;
            toolcall::call_grammar_result r = toolcall::call_grammar(f, parallel_tools(), o);
            ASSERT_TRUE(r.ok()) << toolcall::family_name(f) << ": " << r.error;
            std::string text;
            const std::string label = std::string(toolcall::family_name(f)) + " seed " + std::to_string(seed);
            ASSERT_TRUE(generate(r.value, seed * 7919 + uint32_t(f), seed % 4 == 0, text)) << label << "\n" << text;
            EXPECT_TRUE(grammar_recognize(r.value, text)) << label << "\n" << text;
            toolcall::parse_options po;
            po.tools = parallel_tools();
            po.reasoning_open = o.reasoning_open;
            toolcall::message msg = toolcall::parse(f, text, po);
            EXPECT_EQ(check_calls(msg, parallel_tools()), "") << label << "\n" << text << "\n" << msg.to_json().dump();
            if (!o.parallel) {
                EXPECT_LE(msg.tool_calls.size(), 1u) << label << "\n" << text;
            }
            for (const auto & c : msg.tool_calls) {
                if (!o.function.empty()) {
                    EXPECT_EQ(c.name, o.function) << label;
                }
            }
        }
    }
}

// The tools' schemas share one time budget: once it is spent a strict tool's schema is an error
// that says so, another tool's arguments are any JSON object; hostile schemas never take longer.
TEST(toolcall_grammar, schemas_share_one_time_budget) {
    ordered_json tools = ordered_json::array();
    for (int i = 0; i < 40; ++i) {
        ordered_json props = ordered_json::object();  // slow to compile: many optional properties with a count
        for (int p = 0; p < 24; ++p) props["p" + std::to_string(p)] = {{"type", "string"}, {"maxLength", 3}};
        tools.push_back({{"type", "function"},
                         {"function", {{"name", "f" + std::to_string(i)},
                                       {"parameters", {{"type", "object"}, {"properties", props}, {"minProperties", 3}}}}}});
    }
    toolcall::call_grammar_options o;
    o.max_time_ms = 1;
    o.strict = true;
    const toolcall::call_grammar_result strict = toolcall::call_grammar(family::hermes, tools, o);
    ASSERT_FALSE(strict.ok());
    EXPECT_NE(strict.error.find("time budget"), std::string::npos) << strict.error;
    o.strict = false;
    const toolcall::call_grammar_result loose = toolcall::call_grammar(family::hermes, tools, o);
    ASSERT_TRUE(loose.ok()) << loose.error;
    EXPECT_TRUE(grammar_recognize(loose.value, "<tool_call>\n{\"name\": \"f39\", \"arguments\": {\"any\": [1]}}\n</tool_call>"));
}

// The tools' budget counts from options.started when it is given (a server's request counts its
// own reading and rendering): a start long ago leaves no time for a strict schema.
TEST(toolcall_grammar, the_time_budget_counts_from_the_given_start) {
    const ordered_json tools = ordered_json::parse(
        R"([{"type":"function","function":{"name":"f","parameters":{"type":"object","properties":{"a":{"type":"integer"}}}}}])");
    toolcall::call_grammar_options o;
    o.strict = true;
    o.started = std::chrono::steady_clock::now() - std::chrono::seconds(2);
    const toolcall::call_grammar_result late = toolcall::call_grammar(family::hermes, tools, o);
    ASSERT_FALSE(late.ok());
    EXPECT_NE(late.error.find("time budget"), std::string::npos) << late.error;
    o.started = std::chrono::steady_clock::now();
    const toolcall::call_grammar_result in_time = toolcall::call_grammar(family::hermes, tools, o);
    ASSERT_TRUE(in_time.ok()) << in_time.error;
    EXPECT_TRUE(grammar_recognize(in_time.value, "<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": 1}}\n</tool_call>"));
    EXPECT_FALSE(grammar_recognize(in_time.value, "<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": \"x\"}}\n</tool_call>"));
}
