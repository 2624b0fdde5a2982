// End-to-end structured output: the real inferd (tiny-qwen2, random weights, ChatML template)
// with a GBNF grammar, JSON Schemas (response_format json_schema / json_object and llama-server's
// json_schema field) on both endpoints, n > 1, streaming, max_tokens, the template's stop
// strings, and the 400s for invalid and conflicting constraints.
#include "server/inferd-process.h"
#include "server/shared-inferd-suite.h"
#include "testdata.h"

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <set>

using nlohmann::json;
using ojson = nlohmann::ordered_json;  // request bodies: a schema's properties keep their order

namespace {

// Bounded everywhere, so that random weights cannot wander: enums, short strings, few items,
// integers with bounds (a number's fraction has no bound on its digits). Properties deliberately
// not in alphabetical order.
const char * person_schema = R"({"type":"object","properties":{
    "name":{"type":"string","maxLength":12},
    "mood":{"enum":["happy","sad","calm"]},
    "age":{"type":"integer","minimum":0,"maximum":120},
    "tags":{"type":"array","items":{"type":"string","maxLength":6},"maxItems":3},
    "score":{"type":"integer","minimum":-5,"maximum":10},
    "ok":{"type":"boolean"}},
  "required":["name","mood","age","tags","score","ok"],"additionalProperties":false})";

size_t utf8_length(const std::string & s) {
    size_t n = 0;
    for (unsigned char c : s) n += (c & 0xC0) != 0x80;
    return n;
}

// Checks `text` against person_schema by hand; "" when valid, else what is wrong.
std::string person_problem(const std::string & text) {
    const nlohmann::ordered_json j = nlohmann::ordered_json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object()) return "not a JSON object";
    std::vector<std::string> keys;
    for (auto it = j.begin(); it != j.end(); ++it) keys.push_back(it.key());
    if (keys != std::vector<std::string>{"name", "mood", "age", "tags", "score", "ok"}) return "keys or their order";
    if (!j["name"].is_string() || utf8_length(j["name"].get<std::string>()) > 12) return "name";
    static const std::set<std::string> moods = {"happy", "sad", "calm"};
    if (!j["mood"].is_string() || !moods.count(j["mood"].get<std::string>())) return "mood";
    if (!j["age"].is_number_integer() || j["age"].get<int64_t>() < 0 || j["age"].get<int64_t>() > 120) return "age";
    if (!j["tags"].is_array() || j["tags"].size() > 3) return "tags";
    for (const auto & t : j["tags"]) {
        if (!t.is_string() || utf8_length(t.get<std::string>()) > 6) return "a tag";
    }
    if (!j["score"].is_number_integer() || j["score"].get<int64_t>() < -5 || j["score"].get<int64_t>() > 10) return "score";
    if (!j["ok"].is_boolean()) return "ok";
    return "";
}

ojson person_format() {
    return {{"type", "json_schema"},
            {"json_schema", {{"name", "person"}, {"strict", true}, {"schema", ojson::parse(person_schema)}}}};
}

ojson chat_request(ojson extra) {
    ojson r = {{"messages", ojson::array({{{"role", "user"}, {"content", "Describe a person."}}})}, {"max_tokens", 400}};
    for (auto it = extra.begin(); it != extra.end(); ++it) r[it.key()] = it.value();
    return r;
}

class server_e2e_grammar : public shared_inferd_suite<server_e2e_grammar> {
protected:
    // The data: lines of an SSE body, [DONE] included.
    static std::vector<std::string> sse_events(const std::string & body) {
        std::vector<std::string> out;
        size_t p = 0;
        while (p < body.size()) {
            const size_t e = body.find("\n\n", p);
            if (e == std::string::npos) break;
            out.push_back(body.substr(p + 6, e - p - 6));
            p = e + 2;
        }
        return out;
    }
    // POSTs a body with its keys in order; the parsed response, its status in *status.
    static json post(const std::string & path, const ojson & body, int * status = nullptr) {
        auto r = inferd_call(proc_->port(), "POST", path, body.dump());
        EXPECT_TRUE(r.has_value());
        if (!r) return json();
        if (status) *status = r->status;
        return json::parse(r->body, nullptr, false);
    }
    // A 400 invalid_request_error with this param; its message.
    static std::string expect_400(const std::string & path, const ojson & body, const std::string & param) {
        int st = 0;
        const json j = post(path, body, &st);
        EXPECT_EQ(st, 400) << j.dump();
        EXPECT_EQ(j["error"]["type"], "invalid_request_error") << j.dump();
        EXPECT_EQ(j["error"]["param"], param) << j.dump();
        return j["error"]["message"].is_string() ? j["error"]["message"].get<std::string>() : "";
    }
};

}  // namespace

TEST_F(server_e2e_grammar, gbnf_gives_exactly_yes_or_no) {
    const std::string gbnf = "root ::= \"yes\" | \"no\"";
    int st = 0;
    json j = post("/v1/completions",
                  {{"prompt", "Is the sky green?"}, {"grammar", gbnf}, {"n", 3}, {"temperature", 1.0}, {"seed", 7}, {"max_tokens", 20}}, &st);
    ASSERT_EQ(st, 200) << j.dump();
    ASSERT_EQ(j["choices"].size(), 3u);
    for (const auto & c : j["choices"]) {
        EXPECT_TRUE(c["text"] == "yes" || c["text"] == "no") << c.dump();
        EXPECT_EQ(c["finish_reason"], "stop") << c.dump();
    }
    j = post("/v1/chat/completions", chat_request({{"grammar", gbnf}, {"n", 3}, {"temperature", 1.0}, {"seed", 3}}), &st);
    ASSERT_EQ(st, 200) << j.dump();
    ASSERT_EQ(j["choices"].size(), 3u);
    for (const auto & c : j["choices"]) {
        const json & content = c["message"]["content"];
        EXPECT_TRUE(content == "yes" || content == "no") << c.dump();
        EXPECT_EQ(c["finish_reason"], "stop") << c.dump();
    }
}

TEST_F(server_e2e_grammar, json_schema_choices_validate) {
    int st = 0;
    const json j = post("/v1/chat/completions",
                        chat_request({{"response_format", person_format()}, {"n", 3}, {"temperature", 1.0}, {"seed", 11}}), &st);
    ASSERT_EQ(st, 200) << j.dump();
    ASSERT_EQ(j["choices"].size(), 3u);
    for (const auto & c : j["choices"]) {
        const std::string text = c["message"]["content"];
        EXPECT_EQ(person_problem(text), "") << text;
        EXPECT_EQ(c["finish_reason"], "stop") << c.dump();
    }
}

TEST_F(server_e2e_grammar, completions_take_the_json_schema_field) {
    int st = 0;
    const json j = post("/v1/completions",
                        {{"prompt", "A person:"}, {"json_schema", ojson::parse(person_schema)}, {"temperature", 0}, {"max_tokens", 400}},
                        &st);
    ASSERT_EQ(st, 200) << j.dump();
    const std::string text = j["choices"][0]["text"];
    EXPECT_EQ(person_problem(text), "") << text;
    EXPECT_EQ(j["choices"][0]["finish_reason"], "stop");
}

TEST_F(server_e2e_grammar, streamed_output_equals_the_plain_one) {
    const ojson req = chat_request({{"response_format", person_format()}, {"temperature", 0}});
    int st = 0;
    const json plain = post("/v1/chat/completions", req, &st);
    ASSERT_EQ(st, 200) << plain.dump();
    ojson sreq = req;
    sreq["stream"] = true;
    auto r = inferd_call(proc_->port(), "POST", "/v1/chat/completions", sreq.dump());
    ASSERT_TRUE(r);
    ASSERT_EQ(r->status, 200);
    const std::vector<std::string> ev = sse_events(r->body);
    ASSERT_GE(ev.size(), 3u);
    EXPECT_EQ(ev.back(), "[DONE]");
    std::string text, finish;
    for (size_t i = 0; i + 1 < ev.size(); ++i) {
        const json c = json::parse(ev[i]);
        const json & d = c["choices"][0]["delta"];
        if (d.contains("content") && d["content"].is_string()) text += d["content"].get<std::string>();
        if (c["choices"][0]["finish_reason"].is_string()) finish = c["choices"][0]["finish_reason"];
    }
    EXPECT_EQ(person_problem(text), "") << text;
    EXPECT_EQ(text, plain["choices"][0]["message"]["content"]);
    EXPECT_EQ(finish, "stop");
}

TEST_F(server_e2e_grammar, json_object_and_max_tokens) {
    int st = 0;
    json j = post("/v1/chat/completions",
                  chat_request({{"response_format", {{"type", "json_object"}}}, {"temperature", 0}, {"max_tokens", 300}}), &st);
    ASSERT_EQ(st, 200) << j.dump();
    const std::string text = j["choices"][0]["message"]["content"];
    ASSERT_FALSE(text.empty());
    EXPECT_EQ(text[0], '{') << text;
    if (j["choices"][0]["finish_reason"] == "stop") {
        EXPECT_TRUE(json::parse(text, nullptr, false).is_object()) << text;
    }
    // max_tokens ends a constrained output as any other: length.
    j = post("/v1/chat/completions", chat_request({{"response_format", person_format()}, {"temperature", 0}, {"max_tokens", 3}}), &st);
    ASSERT_EQ(st, 200) << j.dump();
    EXPECT_EQ(j["choices"][0]["finish_reason"], "length");
    EXPECT_EQ(j["usage"]["completion_tokens"], 3);
    // response_format text constrains nothing.
    j = post("/v1/chat/completions", chat_request({{"response_format", {{"type", "text"}}}, {"max_tokens", 4}}), &st);
    EXPECT_EQ(st, 200) << j.dump();
}

TEST_F(server_e2e_grammar, template_stop_strings_still_apply) {
    // The grammar spells out ChatML's end of turn in plain text; the stop string cuts there.
    int st = 0;
    const json j = post("/v1/chat/completions", chat_request({{"grammar", "root ::= \"ok<|im_end|>more\""}}), &st);
    ASSERT_EQ(st, 200) << j.dump();
    EXPECT_EQ(j["choices"][0]["message"]["content"], "ok");
    EXPECT_EQ(j["choices"][0]["finish_reason"], "stop");
}

// A grammar whose start is cheap but whose next step is too costly to follow: the request is
// refused there as a fault of the request (400, or the error as a stream's last event), not 500.
TEST_F(server_e2e_grammar, a_grammar_too_costly_partway_is_a_400) {
    const ojson req = {{"prompt", "x"}, {"max_tokens", 8}, {"grammar", "root ::= \"[\" ws{999,1000} \"]\"\nws ::= [ ]*"}};
    int st = 0;
    const json j = post("/v1/completions", req, &st);
    EXPECT_EQ(st, 400) << j.dump();
    EXPECT_EQ(j["error"]["type"], "invalid_request_error") << j.dump();
    EXPECT_NE(j["error"]["message"].get<std::string>().find("too costly to follow"), std::string::npos) << j.dump();
    ojson sreq = req;
    sreq["stream"] = true;
    auto r = inferd_call(proc_->port(), "POST", "/v1/completions", sreq.dump());
    ASSERT_TRUE(r);
    ASSERT_EQ(r->status, 200);
    const std::vector<std::string> ev = sse_events(r->body);
    ASSERT_GE(ev.size(), 2u);
    EXPECT_EQ(ev.back(), "[DONE]");
    const json last = json::parse(ev[ev.size() - 2]);
    EXPECT_EQ(last["error"]["type"], "invalid_request_error") << last.dump();
    post("/v1/completions", {{"prompt", "x"}, {"grammar", "root ::= \"a\""}}, &st);
    EXPECT_EQ(st, 200);
}

TEST_F(server_e2e_grammar, invalid_constraints_are_400s) {
    std::string msg = expect_400("/v1/completions", {{"prompt", "x"}, {"grammar", "root ::= \"yes"}}, "grammar");
    EXPECT_EQ(msg.rfind("grammar: line 1, column ", 0), 0u) << msg;
    msg = expect_400("/v1/completions", {{"prompt", "x"}, {"grammar", "root ::= other"}}, "grammar");
    EXPECT_NE(msg.find("other"), std::string::npos) << msg;
    const ojson bad_schema = {{"type", "object"}, {"properties", {{"a", {{"not", {{"multipleOf", 3}}}}}}}};
    msg = expect_400("/v1/chat/completions",
                     chat_request({{"response_format", {{"type", "json_schema"}, {"json_schema", {{"name", "x"}, {"schema", bad_schema}}}}}}),
                     "response_format");
    EXPECT_EQ(msg.rfind("response_format: ", 0), 0u) << msg;
    EXPECT_NE(msg.find("not"), std::string::npos) << msg;
    EXPECT_NE(msg.find("/properties/a"), std::string::npos) << msg;
    msg = expect_400("/v1/completions", {{"prompt", "x"}, {"json_schema", bad_schema}}, "json_schema");
    EXPECT_EQ(msg.rfind("json_schema: ", 0), 0u) << msg;
    msg = expect_400("/v1/chat/completions", chat_request({{"grammar", "root ::= \"a\""}, {"json_schema", ojson::object()}}), "grammar");
    EXPECT_NE(msg.find("'json_schema' and 'grammar'"), std::string::npos) << msg;
    expect_400("/v1/chat/completions", chat_request({{"response_format", {{"type", "yaml"}}}}), "response_format.type");
    // A grammar too costly to follow (every step of its automaton would be n² in the copies of
    // something that may be empty) is refused when compiled, not followed for minutes per token.
    msg = expect_400("/v1/completions", {{"prompt", "x"}, {"grammar", "root ::= ws{999,1000} \"x\"\nws ::= [ \\t\\n]*"}},
                     "grammar");
    EXPECT_NE(msg.find("too costly to follow"), std::string::npos) << msg;
    // The server still serves afterwards.
    int st = 0;
    post("/v1/completions", {{"prompt", "x"}, {"grammar", "root ::= \"a\""}}, &st);
    EXPECT_EQ(st, 200);
}
