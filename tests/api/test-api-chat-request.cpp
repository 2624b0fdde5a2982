// Parsing and validation of POST /v1/chat/completions bodies (api/chat-request.h).
#include "api/chat-request.h"

#include "api-test-util.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

chat_request parse_ok(const std::string & body) {
    chat_request req;
    auto err = chat_request_parse(body, req);
    EXPECT_FALSE(err.has_value()) << body << " → " << (err ? err->message : "");
    return req;
}

void expect_rejected_body(const std::string & body, const std::string & param) {
    chat_request req;
    expect_invalid(chat_request_parse(body, req), param, body);
}

// `fields` is inserted into an otherwise valid body.
void expect_rejected(const std::string & fields, const std::string & param) {
    expect_rejected_body(R"({"model":"m","messages":[{"role":"user","content":"hi"}],)" + fields + "}", param);
}

}  // namespace

TEST(ChatRequest, Defaults) {
    chat_request req = parse_ok(R"({"model":"tiny","messages":[{"role":"user","content":"Hello"}]})");
    EXPECT_EQ(req.model, "tiny");
    ASSERT_EQ(req.messages.size(), 1u);
    EXPECT_EQ(req.messages[0].role, api_chat_role::user);
    EXPECT_EQ(req.messages[0].content, "Hello");
    EXPECT_FALSE(req.max_tokens.has_value());
    EXPECT_FALSE(req.logprobs);
    EXPECT_EQ(req.top_logprobs, 0);
    EXPECT_EQ(req.n, 1);
    EXPECT_FALSE(req.stream);
    EXPECT_EQ(req.sampling.temperature, 1.0);
    EXPECT_EQ(req.sampling.top_p, 1.0);
}

TEST(ChatRequest, RolesAndContentForms) {
    chat_request req = parse_ok(R"({"messages":[
        {"role":"system","content":"Be brief."},
        {"role":"developer","content":"Use English."},
        {"role":"user","name":"ann","content":[{"type":"text","text":"Hi"},{"type":"text","text":"there"}]},
        {"role":"assistant","content":null},
        {"role":"assistant"},
        {"role":"user","content":[]}]})");
    ASSERT_EQ(req.messages.size(), 6u);
    EXPECT_EQ(req.messages[0].role, api_chat_role::system);
    EXPECT_EQ(req.messages[1].role, api_chat_role::system);
    EXPECT_EQ(req.messages[1].content, "Use English.");
    EXPECT_EQ(req.messages[2].role, api_chat_role::user);
    EXPECT_EQ(req.messages[2].content, "Hi\nthere");
    EXPECT_EQ(req.messages[3].role, api_chat_role::assistant);
    EXPECT_EQ(req.messages[3].content, "");
    EXPECT_EQ(req.messages[4].content, "");
    EXPECT_EQ(req.messages[5].content, "");
    EXPECT_STREQ(api_chat_role_name(api_chat_role::system), "system");
    EXPECT_STREQ(api_chat_role_name(api_chat_role::user), "user");
    EXPECT_STREQ(api_chat_role_name(api_chat_role::assistant), "assistant");
}

TEST(ChatRequest, InvalidMessages) {
    expect_rejected_body(R"({"model":"m"})", "messages");
    expect_rejected_body(R"({"messages":null})", "messages");
    expect_rejected_body(R"({"messages":[]})", "messages");
    expect_rejected_body(R"({"messages":"hi"})", "messages");
    expect_rejected_body(R"({"messages":{"role":"user"}})", "messages");
    expect_rejected_body(R"({"messages":["hi"]})", "messages[0]");
    expect_rejected_body(R"({"messages":[{"role":"user","content":"a"},{"content":"b"}]})", "messages[1].role");
    expect_rejected_body(R"({"messages":[{"role":"tool","content":"x"}]})", "messages[0].role");
    expect_rejected_body(R"({"messages":[{"role":"User","content":"x"}]})", "messages[0].role");
    expect_rejected_body(R"({"messages":[{"role":5,"content":"x"}]})", "messages[0].role");
    expect_rejected_body(R"({"messages":[{"role":"user"}]})", "messages[0].content");
    expect_rejected_body(R"({"messages":[{"role":"user","content":null}]})", "messages[0].content");
    expect_rejected_body(R"({"messages":[{"role":"system","content":42}]})", "messages[0].content");
    expect_rejected_body(R"({"messages":[{"role":"user","content":{"type":"text"}}]})", "messages[0].content");
}

TEST(ChatRequest, InvalidContentParts) {
    expect_rejected_body(
        R"({"messages":[{"role":"user","content":"a"},{"role":"user","content":[{"type":"text","text":"ok"},{"type":"image_url","image_url":{"url":"x"}}]}]})",
        "messages[1].content[1].type");
    expect_rejected_body(R"({"messages":[{"role":"user","content":[{"text":"no type"}]}]})",
                         "messages[0].content[0].type");
    expect_rejected_body(R"({"messages":[{"role":"user","content":[{"type":"text"}]}]})",
                         "messages[0].content[0].text");
    expect_rejected_body(R"({"messages":[{"role":"user","content":[{"type":"text","text":3}]}]})",
                         "messages[0].content[0].text");
    expect_rejected_body(R"({"messages":[{"role":"user","content":["plain"]}]})", "messages[0].content[0]");
}

TEST(ChatRequest, MaxTokensForms) {
    chat_request req = parse_ok(R"({"messages":[{"role":"user","content":"x"}],"max_tokens":7})");
    EXPECT_EQ(req.max_tokens, 7);
    req = parse_ok(R"({"messages":[{"role":"user","content":"x"}],"max_completion_tokens":9})");
    EXPECT_EQ(req.max_tokens, 9);
    req = parse_ok(R"({"messages":[{"role":"user","content":"x"}],"max_tokens":3,"max_completion_tokens":5})");
    EXPECT_EQ(req.max_tokens, 5);
    req = parse_ok(R"({"messages":[{"role":"user","content":"x"}],"max_tokens":null,"max_completion_tokens":null})");
    EXPECT_FALSE(req.max_tokens.has_value());
    expect_rejected(R"("max_tokens":0)", "max_tokens");
    expect_rejected(R"("max_tokens":"5")", "max_tokens");
    expect_rejected(R"("max_completion_tokens":-3)", "max_completion_tokens");
    expect_rejected(R"("max_completion_tokens":2.5)", "max_completion_tokens");
}

TEST(ChatRequest, Logprobs) {
    chat_request req = parse_ok(R"({"messages":[{"role":"user","content":"x"}],"logprobs":true,"top_logprobs":20})");
    EXPECT_TRUE(req.logprobs);
    EXPECT_EQ(req.top_logprobs, 20);
    req = parse_ok(R"({"messages":[{"role":"user","content":"x"}],"logprobs":true})");
    EXPECT_TRUE(req.logprobs);
    EXPECT_EQ(req.top_logprobs, 0);
    expect_rejected(R"("logprobs":1)", "logprobs");
    expect_rejected(R"("logprobs":true,"top_logprobs":21)", "top_logprobs");
    expect_rejected(R"("logprobs":true,"top_logprobs":-1)", "top_logprobs");
    expect_rejected(R"("top_logprobs":2)", "top_logprobs");
    expect_rejected(R"("logprobs":false,"top_logprobs":2)", "top_logprobs");
}

TEST(ChatRequest, SharedFields) {
    chat_request req = parse_ok(R"({"messages":[{"role":"user","content":"x"}],"temperature":0.2,"top_p":0.9,
        "n":3,"stream":true,"stream_options":{"include_usage":true},"stop":"END","seed":42,
        "presence_penalty":0.5,"frequency_penalty":-0.5,"logit_bias":{"11":-5},"user":"bob","top_k":5,
        "min_p":0.05,"repeat_penalty":1.3,"tools":[],"response_format":{"type":"text"}})");
    EXPECT_DOUBLE_EQ(req.sampling.temperature, 0.2);
    EXPECT_DOUBLE_EQ(req.sampling.top_p, 0.9);
    EXPECT_EQ(req.n, 3);
    EXPECT_TRUE(req.stream);
    EXPECT_TRUE(req.include_usage);
    EXPECT_EQ(req.stop, (std::vector<std::string>{"END"}));
    EXPECT_EQ(req.sampling.seed, 42);
    EXPECT_DOUBLE_EQ(req.sampling.presence_penalty, 0.5);
    EXPECT_DOUBLE_EQ(req.sampling.frequency_penalty, -0.5);
    ASSERT_EQ(req.sampling.logit_bias.size(), 1u);
    EXPECT_EQ(req.sampling.logit_bias[0].token, 11);
    EXPECT_FLOAT_EQ(req.sampling.logit_bias[0].bias, -5.0f);
    EXPECT_EQ(req.user, "bob");
    EXPECT_EQ(req.sampling.top_k, 5);
    EXPECT_DOUBLE_EQ(req.sampling.min_p, 0.05);
    EXPECT_DOUBLE_EQ(req.sampling.repeat_penalty, 1.3);
    EXPECT_FALSE(api_sampling_check_vocab(req.sampling, 12).has_value());
    expect_invalid(api_sampling_check_vocab(req.sampling, 11), "logit_bias", "bias token 11 of 11");
}

TEST(ChatRequest, SharedFieldsRejected) {
    expect_rejected(R"("temperature":3)", "temperature");
    expect_rejected(R"("top_p":-1)", "top_p");
    expect_rejected(R"("n":20)", "n");
    expect_rejected(R"("stream":null,"stream_options":{"include_usage":true})", "stream_options");
    expect_rejected(R"("stop":{"a":1})", "stop");
    expect_rejected(R"("seed":true)", "seed");
    expect_rejected(R"("logit_bias":{"1":-100.5})", "logit_bias");
    expect_rejected(R"("user":["x"])", "user");
    expect_rejected(R"("min_p":2)", "min_p");
    expect_rejected(R"("model":null,"top_k":"5")", "top_k");
}

TEST(ChatRequest, MalformedBodies) {
    for (const char * body : {"", "[]", "{\"messages\":[", "{'messages':[]}", "true"}) {
        chat_request req;
        auto err = chat_request_parse(body, req);
        ASSERT_TRUE(err.has_value()) << body;
        EXPECT_EQ(err->status, 400);
        EXPECT_EQ(err->param, "");
    }
}

TEST(ChatRequest, ChatTemplateKwargs) {
    EXPECT_EQ(parse_ok(R"({"messages":[{"role":"user","content":"hi"}]})").chat_template_kwargs, "{}");
    EXPECT_EQ(parse_ok(R"({"messages":[{"role":"user","content":"hi"}],"chat_template_kwargs":null})").chat_template_kwargs, "{}");
    EXPECT_EQ(parse_ok(R"({"messages":[{"role":"user","content":"hi"}],"chat_template_kwargs":{"enable_thinking":false}})")
                  .chat_template_kwargs,
              R"({"enable_thinking":false})");
    expect_rejected(R"("chat_template_kwargs":[1])", "chat_template_kwargs");
    expect_rejected(R"("chat_template_kwargs":"enable_thinking")", "chat_template_kwargs");
}
