// The server's compile cache (server/src/grammar-cache.h): the same constraint or the same tool
// set compiles once (the same program comes back), refusals are remembered, lookup never
// compiles, and every option of a tool-call grammar is part of its key.
#include "server/src/grammar-cache.h"

#include <gtest/gtest.h>

namespace {

using ojson = nlohmann::ordered_json;

api_constraint schema(const std::string & text, const std::string & param = "response_format") {
    api_constraint c;
    c.kind = api_constraint_kind::json_schema;
    c.text = text;
    c.source_param = param;
    return c;
}

const ojson k_tools = ojson::parse(R"([{"type": "function", "function": {"name": "get_weather",
  "parameters": {"type": "object", "properties": {"location": {"type": "string"}}, "required": ["location"]}}},
  {"type": "function", "function": {"name": "get_time", "parameters": {"type": "object"}}}])");

}  // namespace

TEST(grammar_cache, the_same_constraint_compiles_once) {
    grammar_program_cache cache;
    const api_constraint c = schema(R"({"type":"object","properties":{"a":{"type":"integer"}}})");
    std::shared_ptr<const grammar_program> p, cached;
    std::optional<api_error> e;
    EXPECT_FALSE(cache.lookup(c, &p, &e)) << "nothing compiled yet";
    ASSERT_FALSE(cache.compile(c, &p).has_value());
    ASSERT_NE(p, nullptr);
    ASSERT_FALSE(cache.compile(c, &cached).has_value());
    EXPECT_EQ(cached, p);
    ASSERT_TRUE(cache.lookup(c, &cached, &e));
    EXPECT_FALSE(e.has_value());
    EXPECT_EQ(cached, p);
    // The same text as GBNF is another constraint.
    api_constraint g;
    g.kind = api_constraint_kind::gbnf;
    g.text = "root ::= \"a\"";
    g.source_param = "grammar";
    std::shared_ptr<const grammar_program> q;
    ASSERT_FALSE(cache.compile(g, &q).has_value());
    EXPECT_NE(q, p);
    // No constraint: known at once, no program.
    ASSERT_TRUE(cache.lookup(api_constraint{}, &q, &e));
    EXPECT_EQ(q, nullptr);
    EXPECT_FALSE(e.has_value());
}

TEST(grammar_cache, refusals_are_remembered_with_the_field_of_each_request) {
    grammar_program_cache cache;
    const std::string bad = R"({"type":"string","pattern":"["})";
    std::shared_ptr<const grammar_program> p;
    std::optional<api_error> first = cache.compile(schema(bad), &p);
    ASSERT_TRUE(first.has_value());
    EXPECT_EQ(first->status, 400);
    EXPECT_EQ(first->param, "response_format");
    EXPECT_EQ(first->message.rfind("response_format: ", 0), 0u) << first->message;
    EXPECT_EQ(p, nullptr);
    std::optional<api_error> e;
    ASSERT_TRUE(cache.lookup(schema(bad, "json_schema"), &p, &e)) << "a refusal is cached";
    ASSERT_TRUE(e.has_value());
    EXPECT_EQ(e->param, "json_schema");
    EXPECT_EQ(e->message.substr(e->message.find(':')), first->message.substr(first->message.find(':')));
}

TEST(grammar_cache, the_same_tool_set_compiles_once) {
    grammar_program_cache cache;
    toolcall::call_grammar_options o;
    std::shared_ptr<const grammar_program> p, again;
    std::optional<api_error> e;
    EXPECT_FALSE(cache.lookup_tool_calls(toolcall::family::hermes, k_tools, o, &p, &e));
    ASSERT_FALSE(cache.compile_tool_calls(toolcall::family::hermes, k_tools, o, &p).has_value());
    ASSERT_NE(p, nullptr);
    ASSERT_FALSE(cache.compile_tool_calls(toolcall::family::hermes, k_tools, o, &again).has_value());
    EXPECT_EQ(again, p);
    ASSERT_TRUE(cache.lookup_tool_calls(toolcall::family::hermes, k_tools, o, &again, &e));
    EXPECT_FALSE(e.has_value());
    EXPECT_EQ(again, p);
    // The same tools parsed again from their text: the same key.
    const ojson copy = ojson::parse(k_tools.dump());
    ASSERT_FALSE(cache.compile_tool_calls(toolcall::family::hermes, copy, o, &again).has_value());
    EXPECT_EQ(again, p);
}

TEST(grammar_cache, every_tool_call_option_is_part_of_the_key) {
    grammar_program_cache cache(64);
    std::vector<std::shared_ptr<const grammar_program>> seen;
    auto add = [&](toolcall::family f, const ojson & tools, const toolcall::call_grammar_options & o) {
        std::shared_ptr<const grammar_program> p;
        auto e = cache.compile_tool_calls(f, tools, o, &p);
        EXPECT_FALSE(e.has_value()) << (e ? e->message : "");
        for (const auto & q : seen) EXPECT_NE(p, q);
        seen.push_back(p);
    };
    toolcall::call_grammar_options o;
    add(toolcall::family::hermes, k_tools, o);
    add(toolcall::family::mistral, k_tools, o);
    ojson one = ojson::array({k_tools[0]});
    add(toolcall::family::hermes, one, o);
    toolcall::call_grammar_options named = o;
    named.function = "get_time";
    add(toolcall::family::hermes, k_tools, named);
    toolcall::call_grammar_options parallel = o;
    parallel.parallel = true;
    add(toolcall::family::hermes, k_tools, parallel);
    toolcall::call_grammar_options thinking = o;
    thinking.allow_reasoning = true;
    add(toolcall::family::hermes, k_tools, thinking);
    toolcall::call_grammar_options open = thinking;
    open.reasoning_open = true;
    add(toolcall::family::hermes, k_tools, open);
    toolcall::call_grammar_options optional = o;
    optional.optional_calls = true;
    add(toolcall::family::hermes, k_tools, optional);
}

TEST(grammar_cache, tool_call_refusals_name_tool_choice) {
    grammar_program_cache cache;
    toolcall::call_grammar_options o;
    o.function = "no_such_tool";
    std::shared_ptr<const grammar_program> p;
    std::optional<api_error> e = cache.compile_tool_calls(toolcall::family::hermes, k_tools, o, &p);
    ASSERT_TRUE(e.has_value());
    EXPECT_EQ(e->status, 400);
    EXPECT_EQ(e->param, "tool_choice");
    EXPECT_EQ(e->message.rfind("tool_choice: ", 0), 0u) << e->message;
    std::optional<api_error> again;
    ASSERT_TRUE(cache.lookup_tool_calls(toolcall::family::hermes, k_tools, o, &p, &again));
    ASSERT_TRUE(again.has_value());
    EXPECT_EQ(again->message, e->message);
}

TEST(grammar_cache, the_oldest_entry_leaves_a_full_cache) {
    grammar_program_cache cache(2);
    std::shared_ptr<const grammar_program> p;
    std::optional<api_error> e;
    for (int i = 0; i < 3; ++i) {
        ASSERT_FALSE(cache.compile(schema(R"({"type":"integer","minimum":)" + std::to_string(i) + "}"), &p));
    }
    EXPECT_FALSE(cache.lookup(schema(R"({"type":"integer","minimum":0})"), &p, &e));
    EXPECT_TRUE(cache.lookup(schema(R"({"type":"integer","minimum":2})"), &p, &e));
}
