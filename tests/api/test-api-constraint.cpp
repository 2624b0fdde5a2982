// Structured output in request bodies (api/request-common.h, api_constraint): response_format
// text / json_object / json_schema, llama-server's json_schema and grammar, on both endpoints;
// every rejection names its field.
#include "api/chat-request.h"
#include "api/completion-request.h"

#include "api-test-util.h"

#include <gtest/gtest.h>

#include <string>

namespace {

// `fields` inserted into an otherwise valid body of each endpoint.
std::string chat_body(const std::string & fields) {
    return R"({"messages":[{"role":"user","content":"hi"}])" + (fields.empty() ? "" : "," + fields) + "}";
}
std::string completion_body(const std::string & fields) {
    return R"({"prompt":"hi")" + (fields.empty() ? "" : "," + fields) + "}";
}

// The constraint both endpoints read from `fields` (they must agree).
api_constraint parse_ok(const std::string & fields) {
    chat_request chat;
    auto err = chat_request_parse(chat_body(fields), chat);
    EXPECT_FALSE(err.has_value()) << fields << " → " << (err ? err->message : "");
    completion_request comp;
    err = completion_request_parse(completion_body(fields), comp);
    EXPECT_FALSE(err.has_value()) << fields << " → " << (err ? err->message : "");
    EXPECT_EQ(chat.constraint.kind, comp.constraint.kind) << fields;
    EXPECT_EQ(chat.constraint.text, comp.constraint.text) << fields;
    EXPECT_EQ(chat.constraint.source_param, comp.constraint.source_param) << fields;
    return chat.constraint;
}

// Both endpoints reject `fields` with a 400 whose param is `param`; returns the message.
std::string expect_rejected(const std::string & fields, const std::string & param) {
    chat_request chat;
    auto err = chat_request_parse(chat_body(fields), chat);
    expect_invalid(err, param, fields);
    completion_request comp;
    auto err2 = completion_request_parse(completion_body(fields), comp);
    expect_invalid(err2, param, fields);
    return err ? err->message : "";
}

}  // namespace

TEST(ApiConstraint, NoneByDefaultAndForText) {
    EXPECT_EQ(parse_ok("").kind, api_constraint_kind::none);
    EXPECT_EQ(parse_ok(R"("response_format":{"type":"text"})").kind, api_constraint_kind::none);
    EXPECT_EQ(parse_ok(R"("response_format":null,"grammar":null,"json_schema":null)").kind, api_constraint_kind::none);
    EXPECT_EQ(parse_ok(R"("grammar":"")").kind, api_constraint_kind::none) << "an empty grammar is none";
}

TEST(ApiConstraint, JsonObjectIsAnyObject) {
    api_constraint c = parse_ok(R"("response_format":{"type":"json_object"})");
    EXPECT_EQ(c.kind, api_constraint_kind::json_schema);
    EXPECT_EQ(nlohmann::json::parse(c.text), nlohmann::json::parse(R"({"type":"object"})"));
    EXPECT_EQ(c.source_param, "response_format");
    // llama-server's extension: a schema narrows it.
    c = parse_ok(R"("response_format":{"type":"json_object","schema":{"type":"object","properties":{"a":{"type":"integer"}}}})");
    EXPECT_EQ(c.text, R"({"type":"object","properties":{"a":{"type":"integer"}}})");
}

TEST(ApiConstraint, JsonSchemaFormatKeepsTheDeclaredOrder) {
    const std::string schema =
        R"({"type":"object","properties":{"zeta":{"type":"string","maxLength":5},"alpha":{"enum":["x","y"]},)"
        R"("mid":{"type":"array","items":{"type":"integer","minimum":0,"maximum":9},"maxItems":3}},)"
        R"("required":["zeta","alpha","mid"],"additionalProperties":false})";
    api_constraint c = parse_ok(R"("response_format":{"type":"json_schema","json_schema":{"name":"answer","strict":true,)"
                                R"("description":"what to say","schema":)" + schema + "}}");
    EXPECT_EQ(c.kind, api_constraint_kind::json_schema);
    EXPECT_EQ(c.source_param, "response_format");
    EXPECT_EQ(c.text, schema) << "keys in the request's order, compact";
    // name, strict and description are optional.
    c = parse_ok(R"("response_format":{"type":"json_schema","json_schema":{"schema":{"type":"string"}}})");
    EXPECT_EQ(c.text, R"({"type":"string"})");
    c = parse_ok(R"("response_format":{"type":"json_schema","json_schema":{"name":"any","schema":true}})");
    EXPECT_EQ(c.text, "true");
    c = parse_ok(R"("response_format":{"type":"json_schema","json_schema":{"name":"n","strict":null,"schema":{ "b" : 1.5 , "a" : [ ] }}})");
    EXPECT_EQ(c.text, R"({"b":1.5,"a":[]})");
}

TEST(ApiConstraint, TheSchemaIsTheOneTheBodyReads) {
    // a repeated member: its last value, as the body's parse reads it
    api_constraint c = parse_ok(R"("response_format":{"type":"json_schema","json_schema":{"schema":{"type":"string"}}},)"
                                R"("response_format":{"type":"json_schema","json_schema":{"schema":{"type":"integer","maximum":3}}})");
    EXPECT_EQ(c.text, R"({"type":"integer","maximum":3})");
    // keys written with escapes
    c = parse_ok(R"("\u0072esponse_format":{"type":"json_schema","json_\u0073chema":{"schema":{"enum":["a b"]}}})");
    EXPECT_EQ(c.text, R"({"enum":["a b"]})");
}

TEST(ApiConstraint, LlamaServerExtensions) {
    api_constraint c = parse_ok(R"("json_schema":{"type":"object","properties":{"y":{},"x":{}}})");
    EXPECT_EQ(c.kind, api_constraint_kind::json_schema);
    EXPECT_EQ(c.source_param, "json_schema");
    EXPECT_EQ(c.text, R"({"type":"object","properties":{"y":{},"x":{}}})");
    c = parse_ok(R"("json_schema":false)");
    EXPECT_EQ(c.text, "false");
    c = parse_ok(R"("grammar":"root ::= \"yes\" | \"no\"\n")");
    EXPECT_EQ(c.kind, api_constraint_kind::gbnf);
    EXPECT_EQ(c.source_param, "grammar");
    EXPECT_EQ(c.text, "root ::= \"yes\" | \"no\"\n");
    // A text response_format does not conflict with either.
    c = parse_ok(R"("response_format":{"type":"text"},"grammar":"root ::= \"a\"")");
    EXPECT_EQ(c.kind, api_constraint_kind::gbnf);
}

TEST(ApiConstraint, InvalidResponseFormats) {
    expect_rejected(R"("response_format":"json_object")", "response_format");
    expect_rejected(R"("response_format":[])", "response_format");
    std::string msg = expect_rejected(R"("response_format":{"type":"xml"})", "response_format.type");
    EXPECT_NE(msg.find("\"xml\""), std::string::npos) << msg;
    EXPECT_NE(msg.find("json_schema"), std::string::npos) << msg;
    expect_rejected(R"("response_format":{"type":7})", "response_format.type");
    expect_rejected(R"("response_format":{})", "response_format.type");
    expect_rejected(R"("response_format":{"type":"json_object","schema":"x"})", "response_format.schema");
    expect_rejected(R"("response_format":{"type":"json_schema"})", "response_format.json_schema");
    expect_rejected(R"("response_format":{"type":"json_schema","json_schema":[]})", "response_format.json_schema");
    expect_rejected(R"("response_format":{"type":"json_schema","json_schema":{"name":"n"}})",
                    "response_format.json_schema.schema");
    expect_rejected(R"("response_format":{"type":"json_schema","json_schema":{"name":"n","schema":"{}"}})",
                    "response_format.json_schema.schema");
    expect_rejected(R"("response_format":{"type":"json_schema","json_schema":{"name":"n","schema":[1]}})",
                    "response_format.json_schema.schema");
    expect_rejected(R"("response_format":{"type":"json_schema","json_schema":{"name":5,"schema":{}}})",
                    "response_format.json_schema.name");
    expect_rejected(R"("response_format":{"type":"json_schema","json_schema":{"strict":"yes","schema":{}}})",
                    "response_format.json_schema.strict");
    expect_rejected(R"("response_format":{"type":"json_schema","json_schema":{"description":1,"schema":{}}})",
                    "response_format.json_schema.description");
}

TEST(ApiConstraint, InvalidExtensions) {
    expect_rejected(R"("json_schema":"{\"type\":\"object\"}")", "json_schema");
    expect_rejected(R"("json_schema":[{}])", "json_schema");
    expect_rejected(R"("json_schema":3)", "json_schema");
    expect_rejected(R"("grammar":{"root":"x"})", "grammar");
    expect_rejected(R"("grammar":true)", "grammar");
}

TEST(ApiConstraint, OnlyOneConstraint) {
    std::string msg = expect_rejected(R"("grammar":"root ::= \"a\"","json_schema":{})", "grammar");
    EXPECT_NE(msg.find("'json_schema' and 'grammar'"), std::string::npos) << msg;
    msg = expect_rejected(R"("response_format":{"type":"json_object"},"json_schema":{})", "json_schema");
    EXPECT_NE(msg.find("'response_format' and 'json_schema'"), std::string::npos) << msg;
    msg = expect_rejected(R"("response_format":{"type":"json_schema","json_schema":{"name":"n","schema":{}}},)"
                          R"("grammar":"root ::= \"a\"")",
                          "grammar");
    EXPECT_NE(msg.find("'response_format' and 'grammar'"), std::string::npos) << msg;
    expect_rejected(R"("response_format":{"type":"json_object"},"json_schema":{},"grammar":"root ::= \"a\"")",
                    "json_schema");
}

TEST(ApiConstraint, OtherFieldErrorsComeFirst) {
    // The first invalid field is reported; a bad temperature is read before the constraint.
    expect_rejected(R"("temperature":9,"response_format":{"type":"xml"})", "temperature");
}
