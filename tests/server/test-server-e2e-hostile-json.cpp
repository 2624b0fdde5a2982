// Hostile request bodies against the real daemon: invalid UTF-8, nesting 100,000 deep, 1e400,
// NaN, duplicate keys, empty and whitespace bodies, a 10 MB string, a wrong type or value in
// every field of completions, chat and embeddings (a 400 naming the field each time); and
// generation abuse: max_tokens of 10^9, n x max_tokens beyond the cache, a prompt longer than
// the context, 10,000 stop strings, logit_bias with 10^5 entries. Nothing is a 5xx, and after
// each test the daemon is whole (hostile-suite.h).
#include "hostile-suite.h"

#include <vector>

class hostile_json : public hostile_suite<hostile_json> {};

namespace {

// A 400 in OpenAI's shape whose message contains `text`.
void expect_400(const std::pair<int, nlohmann::json> & r, const std::string & text) {
    EXPECT_EQ(r.first, 400) << r.second.dump();
    ASSERT_TRUE(r.second.contains("error")) << r.second.dump();
    EXPECT_EQ(r.second["error"]["type"], "invalid_request_error");
    EXPECT_NE(r.second["error"]["message"].get<std::string>().find(text), std::string::npos) << r.second.dump();
}

}  // namespace

TEST_F(hostile_json, malformed_bodies_get_400) {
    expect_400(post_raw("/v1/completions", "{\"prompt\":\"a\xff\xfe\",\"max_tokens\":2}"), "not valid JSON");
    expect_400(post_raw("/v1/completions", std::string(100000, '[') + std::string(100000, ']')), "nested deeper");
    expect_400(post_raw("/v1/chat/completions", "{\"messages\":" + std::string(100000, '[') + std::string(100000, ']') + "}"),
               "nested deeper");
    expect_400(post_raw("/v1/completions", R"({"prompt":"a","temperature":1e400})"), "not valid JSON");
    expect_400(post_raw("/v1/completions", R"({"prompt":"a","temperature":NaN})"), "not valid JSON");
    expect_400(post_raw("/v1/completions", ""), "not valid JSON");
    expect_400(post_raw("/v1/completions", " \r\n\t "), "not valid JSON");
    expect_400(post_raw("/v1/completions", "[1,2]"), "");
    expect_400(post_raw("/v1/embeddings", "\"just a string\""), "");
    // Duplicate keys: the last one counts, as in most JSON readers.
    const auto dup = post_raw("/v1/completions", R"({"prompt":"x","prompt":[1,400,401,402],"max_tokens":8,"temperature":0})");
    ASSERT_EQ(dup.first, 200) << dup.second.dump();
    EXPECT_EQ(dup.second["choices"][0]["text"], reference_);
    // A 10 MB string: read whole (under the 16 MiB body limit), then refused for its length.
    const std::string big = json({{"prompt", std::string(10'000'000, 'a')}, {"max_tokens", 1}}).dump();
    expect_400(post_raw("/v1/completions", big), "maximum context length");
}

// Each value is wrong for its field: a 400 whose param is the field (or a part of it).
TEST_F(hostile_json, a_wrong_value_in_every_field_is_a_400_naming_it) {
    struct table {
        std::string path;
        json base;
        std::vector<std::pair<std::string, std::vector<json>>> fields;
    };
    const std::vector<table> tables = {
        {"/v1/completions", {{"prompt", "a"}, {"max_tokens", 2}},
         {{"model", {5, json::object(), json::array()}},
          {"prompt", {5, json::object(), true, json::array({json::object()}), {{-1}}, {{1, "a"}}, nullptr}},
          {"max_tokens", {"5", -2, 1.5, json::object(), true}},
          {"temperature", {"x", -1, 3, json::object()}},
          {"top_p", {"x", 2, -0.1}},
          {"n", {0, "2", 1000, -1}},
          {"stop", {5, {5}, json::object(), {""}}},
          {"seed", {"x", 1.5, json::object()}},
          {"presence_penalty", {"x", 3}},
          {"frequency_penalty", {"x", -3}},
          {"logit_bias", {json::array(), "x", {{"a", 1}}, {{"1", "x"}}, {{"1000", 1}}}},
          {"logprobs", {"x", -1, 100}},
          {"echo", {"x", 1}},
          {"stream", {"x", 1}},
          {"stream_options", {"x", {{"include_usage", "x"}}}},
          {"top_k", {"x", 1.5}},
          {"min_p", {"x", 2, -1}},
          {"ignore_eos", {"x", 1}},
          {"user", {5, json::object()}},
          {"response_format", {"x", {{"type", "nope"}}, {{"type", "json_schema"}}}},
          {"repeat_penalty", {"x", -1}},
          {"grammar", {5}},
          {"json_schema", {"x", 5}}}},
        {"/v1/chat/completions", {{"messages", {{{"role", "user"}, {"content", "a"}}}}, {"max_tokens", 2}},
         {{"messages", {"x", json::object(), json::array(), {{{"role", "nope"}, {"content", "x"}}},
                        {{{"content", "x"}}}, {{{"role", "user"}, {"content", 5}}}, {5}}},
          {"tools", {"x", {{{"type", "function"}}}, {5}, json::object()}},
          {"tool_choice", {5, "sometimes", {{"type", "function"}}}},
          {"max_completion_tokens", {"x", -5}},
          {"top_logprobs", {"x", 100, -1}},
          {"logprobs", {"x", 5}},
          {"reasoning_format", {5, "weird"}},
          {"parallel_tool_calls", {"x"}},
          {"chat_template_kwargs", {"x", 5, json::array()}},
          {"reasoning_effort", {5}}}},
    };
    for (const table & t : tables) {
        for (const auto & [field, values] : t.fields) {
            for (const json & v : values) {
                json body = t.base;
                body[field] = v;
                SCOPED_TRACE(t.path + " " + field + " = " + v.dump());
                const auto r = post_raw(t.path, body.dump());
                ASSERT_EQ(r.first, 400) << r.second.dump();
                const std::string param = r.second["error"]["param"].is_string() ? r.second["error"]["param"].get<std::string>() : "";
                EXPECT_EQ(param.substr(0, field.size()), field) << r.second.dump();
            }
        }
    }
}

TEST_F(hostile_json, generation_abuse_is_refused_or_served) {
    expect_400(post_raw("/v1/completions", R"({"prompt":"a","max_tokens":1000000000})"), "maximum context length");
    std::string words;
    for (int i = 0; i < 2000; ++i) words += "word ";
    expect_400(post_raw("/v1/completions", json({{"prompt", words}, {"max_tokens", 1}}).dump()), "maximum context length");
    json stops = json::array();
    for (int i = 0; i < 10000; ++i) {
        std::string s = "s";
        s += std::to_string(i);
        stops.push_back(s);
    }
    const auto many_stops = post_raw("/v1/completions", json({{"prompt", "a"}, {"max_tokens", 2}, {"stop", stops}}).dump());
    EXPECT_EQ(many_stops.first, 400);
    EXPECT_EQ(many_stops.second["error"]["param"], "stop");
    json bias = json::object();
    for (int i = 0; i < 100000; ++i) bias[std::to_string(i)] = 1;
    const auto huge_bias = post_raw("/v1/completions", json({{"prompt", "a"}, {"max_tokens", 2}, {"logit_bias", bias}}).dump());
    EXPECT_EQ(huge_bias.first, 400);
    EXPECT_EQ(huge_bias.second["error"]["param"], "logit_bias");
    // n choices whose tokens together exceed the 512 cells: served one after another as cells
    // free up (preemption), each choice complete.
    const auto wide = post_raw("/v1/completions",
                               json({{"prompt", json::array({1, 400})}, {"max_tokens", 300}, {"n", 4},
                                     {"ignore_eos", true}, {"temperature", 0.7}, {"seed", 3}}).dump());
    ASSERT_EQ(wide.first, 200) << wide.second.dump();
    ASSERT_EQ(wide.second["choices"].size(), 4u);
    for (const json & c : wide.second["choices"]) EXPECT_EQ(c["finish_reason"], "length");
    EXPECT_EQ(wide.second["usage"]["completion_tokens"], 1200);
}
