// Serialisation of errors and responses (api/error.h, completion-response.h, chat-response.h,
// info-response.h, response-common.h): the output is parsed back and compared structurally.
#include "api/chat-response.h"
#include "api/completion-response.h"
#include "api/error.h"
#include "api/info-response.h"
#include "api/response-common.h"

#include "api-test-util.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

using nlohmann::json;

namespace {

const api_response_meta meta = {"cmpl-abc", 1700000000, "tiny"};
const api_response_meta chat_meta = {"chatcmpl-xyz", 1700000001, "tiny"};

}  // namespace

TEST(ApiError, ClassesAndJson) {
    api_error e = api_error_invalid_request("'n' must be an integer between 1 and 16, got 0.", "n");
    EXPECT_EQ(e.status, 400);
    EXPECT_EQ(parse_output(api_error_to_json(e)), json::parse(R"({"error":{"message":
        "'n' must be an integer between 1 and 16, got 0.","type":"invalid_request_error","param":"n","code":null}})"));

    e = api_error_authentication();
    EXPECT_EQ(e.status, 401);
    json j = parse_output(api_error_to_json(e));
    EXPECT_EQ(j["error"]["type"], "authentication_error");
    EXPECT_EQ(j["error"]["code"], "invalid_api_key");
    EXPECT_TRUE(j["error"]["param"].is_null());

    e = api_error_model_not_found("gpt-5");
    EXPECT_EQ(e.status, 404);
    j = parse_output(api_error_to_json(e));
    EXPECT_EQ(j, json::parse(R"({"error":{"message":"The model 'gpt-5' does not exist.",
        "type":"not_found_error","param":"model","code":"model_not_found"}})"));

    e = api_error_not_found("No route for GET /v2/x.");
    EXPECT_EQ(e.status, 404);
    j = parse_output(api_error_to_json(e));
    EXPECT_EQ(j["error"]["type"], "not_found_error");
    EXPECT_TRUE(j["error"]["code"].is_null());

    e = api_error_method_not_allowed("GET", "/v1/completions");
    EXPECT_EQ(e.status, 405);
    EXPECT_EQ(e.code, "method_not_allowed");
    EXPECT_NE(e.message.find("/v1/completions"), std::string::npos);

    e = api_error_payload_too_large(16777216);
    EXPECT_EQ(e.status, 413);
    EXPECT_NE(e.message.find("16777216"), std::string::npos);

    e = api_error_internal("decode failed");
    EXPECT_EQ(e.status, 500);
    EXPECT_EQ(e.type, "server_error");
    EXPECT_EQ(e.retry_after_seconds, 0);

    e = api_error_unavailable("The model is loading.", 5, "model_loading");
    EXPECT_EQ(e.status, 503);
    EXPECT_EQ(e.retry_after_seconds, 5);
    j = parse_output(api_error_to_json(e));
    EXPECT_EQ(j["error"]["type"], "unavailable_error");
    EXPECT_EQ(j["error"]["code"], "model_loading");
    EXPECT_EQ(api_error_unavailable("full", 0).retry_after_seconds, 1);  // always a hint

    e = api_error_context_exceeded(2000, 100, 2048, "messages");
    EXPECT_EQ(e.status, 400);
    EXPECT_EQ(e.code, "context_length_exceeded");
    EXPECT_EQ(e.param, "messages");
    EXPECT_NE(e.message.find("2048"), std::string::npos);
    EXPECT_NE(e.message.find("2100"), std::string::npos);
}

TEST(ApiError, KeysInOpenAIsOrder) {
    std::string text = api_error_to_json(api_error_invalid_request("bad", "n"));
    EXPECT_EQ(text, R"({"error":{"message":"bad","type":"invalid_request_error","param":"n","code":null}})");
    completion_response res{meta, {}, {}};
    EXPECT_EQ(completion_response_to_json(res).rfind(R"({"id":"cmpl-abc","object":"text_completion","created":)", 0), 0u);
}

TEST(ApiError, InvalidUtf8InMessageDoesNotThrow) {
    api_error e = api_error_model_not_found("bad\xff");
    json j = parse_output(api_error_to_json(e));
    EXPECT_EQ(j["error"]["message"], "The model 'bad\xef\xbf\xbd' does not exist.");
}

TEST(CompletionResponse, Whole) {
    completion_response res;
    res.meta = meta;
    res.choices.push_back({0, "Hello", std::nullopt, api_finish_reason::length});
    res.choices.push_back({1, "Hi.", std::nullopt, api_finish_reason::stop});
    res.usage = {5, 20, 3};
    EXPECT_EQ(parse_output(completion_response_to_json(res)), json::parse(R"({
        "id":"cmpl-abc","object":"text_completion","created":1700000000,"model":"tiny",
        "choices":[{"index":0,"text":"Hello","logprobs":null,"finish_reason":"length"},
                   {"index":1,"text":"Hi.","logprobs":null,"finish_reason":"stop"}],
        "usage":{"prompt_tokens":5,"completion_tokens":20,"total_tokens":25,
                 "prompt_tokens_details":{"cached_tokens":3}}})"));
}

TEST(CompletionResponse, Logprobs) {
    completion_choice c;
    c.text = "The cat";
    c.finish_reason = api_finish_reason::length;
    c.logprobs = std::vector<completion_token_logprob>{
        {"The", std::nullopt, {}, 0},
        {" cat", -0.5, {{" cat", -0.5}, {" dog", -1.25}}, 3},
        {"!", -std::numeric_limits<double>::infinity(), {{"!", -std::numeric_limits<double>::infinity()}}, 7}};
    completion_response res{meta, {c}, {}};
    json j = parse_output(completion_response_to_json(res));
    EXPECT_EQ(j["choices"][0]["logprobs"], json::parse(R"({
        "tokens":["The"," cat","!"],
        "token_logprobs":[null,-0.5,-9999.0],
        "top_logprobs":[null,{" cat":-0.5," dog":-1.25},{"!":-9999.0}],
        "text_offset":[0,3,7]})"));
}

TEST(CompletionResponse, Chunks) {
    json j = parse_output(completion_chunk_to_json(meta, {2, " wor", std::nullopt, api_finish_reason::none}));
    EXPECT_EQ(j, json::parse(R"({"id":"cmpl-abc","object":"text_completion","created":1700000000,"model":"tiny",
        "choices":[{"index":2,"text":" wor","logprobs":null,"finish_reason":null}],"usage":null})"));
    j = parse_output(completion_chunk_to_json(meta, {0, "", std::nullopt, api_finish_reason::stop}));
    EXPECT_EQ(j["choices"][0]["finish_reason"], "stop");
    j = parse_output(completion_usage_chunk_to_json(meta, {4, 8, 0}));
    EXPECT_EQ(j, json::parse(R"({"id":"cmpl-abc","object":"text_completion","created":1700000000,"model":"tiny",
        "choices":[],"usage":{"prompt_tokens":4,"completion_tokens":8,"total_tokens":12,
        "prompt_tokens_details":{"cached_tokens":0}}})"));
}

TEST(ChatResponse, Whole) {
    chat_response res;
    res.meta = chat_meta;
    res.choices.push_back({.index = 0, .content = "Hi there!", .finish_reason = api_finish_reason::stop});
    res.usage = {12, 3, 10};
    EXPECT_EQ(parse_output(chat_response_to_json(res)), json::parse(R"({
        "id":"chatcmpl-xyz","object":"chat.completion","created":1700000001,"model":"tiny",
        "choices":[{"index":0,"message":{"role":"assistant","content":"Hi there!"},"logprobs":null,
                    "finish_reason":"stop"}],
        "usage":{"prompt_tokens":12,"completion_tokens":3,"total_tokens":15,
                 "prompt_tokens_details":{"cached_tokens":10}}})"));
}

TEST(ChatResponse, Logprobs) {
    chat_choice c;
    c.content = "Hé";
    c.finish_reason = api_finish_reason::length;
    c.logprobs = std::vector<chat_token_logprob>{{"H", -0.25, {{"H", -0.25}, {"h", -2.0}}},
                                                 {"\xc3\xa9", -1.5, {}}};
    chat_response res{chat_meta, {c}, {}};
    json j = parse_output(chat_response_to_json(res));
    EXPECT_EQ(j["choices"][0]["logprobs"], json::parse(R"({"content":[
        {"token":"H","logprob":-0.25,"bytes":[72],
         "top_logprobs":[{"token":"H","logprob":-0.25,"bytes":[72]},{"token":"h","logprob":-2.0,"bytes":[104]}]},
        {"token":"é","logprob":-1.5,"bytes":[195,169],"top_logprobs":[]}]})"));
}

TEST(ChatResponse, ChunksRoleContentFinishUsage) {
    json j = parse_output(chat_chunk_to_json(chat_meta, {.index = 0, .kind = chat_delta_kind::role}));
    EXPECT_EQ(j, json::parse(R"({"id":"chatcmpl-xyz","object":"chat.completion.chunk","created":1700000001,
        "model":"tiny","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,
        "finish_reason":null}],"usage":null})"));

    j = parse_output(chat_chunk_to_json(chat_meta, {.index = 1, .kind = chat_delta_kind::content, .content = "lo"}));
    EXPECT_EQ(j["choices"], json::parse(R"([{"index":1,"delta":{"content":"lo"},"logprobs":null,"finish_reason":null}])"));

    chat_chunk with_lp{.index = 0, .kind = chat_delta_kind::content, .content = "x",
                       .logprobs = std::vector<chat_token_logprob>{{"x", -0.1, {}}}};
    j = parse_output(chat_chunk_to_json(chat_meta, with_lp));
    EXPECT_EQ(j["choices"][0]["logprobs"],
              json::parse(R"({"content":[{"token":"x","logprob":-0.1,"bytes":[120],"top_logprobs":[]}]})"));

    j = parse_output(chat_chunk_to_json(chat_meta, {.index = 0, .kind = chat_delta_kind::finish,
                                                    .finish_reason = api_finish_reason::length}));
    EXPECT_EQ(j["choices"], json::parse(R"([{"index":0,"delta":{},"logprobs":null,"finish_reason":"length"}])"));

    j = parse_output(chat_usage_chunk_to_json(chat_meta, {7, 2, 1}));
    EXPECT_EQ(j, json::parse(R"({"id":"chatcmpl-xyz","object":"chat.completion.chunk","created":1700000001,
        "model":"tiny","choices":[],"usage":{"prompt_tokens":7,"completion_tokens":2,"total_tokens":9,
        "prompt_tokens_details":{"cached_tokens":1}}})"));
}

TEST(ChatResponse, InvalidUtf8ContentIsReplaced) {
    json j = parse_output(chat_chunk_to_json(chat_meta, {.index = 0, .kind = chat_delta_kind::content, .content = "a\xe2\x96"}));
    EXPECT_EQ(j["choices"][0]["delta"]["content"], "a\xef\xbf\xbd");
}

TEST(Sse, Framing) {
    EXPECT_EQ(sse_data(R"({"a":1})"), "data: {\"a\":1}\n\n");
    EXPECT_EQ(sse_done(), "data: [DONE]\n\n");
    std::string chunk = completion_chunk_to_json(meta, {0, "line1\nline2", std::nullopt, api_finish_reason::none});
    EXPECT_EQ(chunk.find('\n'), std::string::npos);  // one SSE event per chunk
    std::string event = sse_data(chunk);
    EXPECT_EQ(event.rfind("data: ", 0), 0u);
    EXPECT_EQ(event.substr(event.size() - 2), "\n\n");
    EXPECT_EQ(parse_output(event.substr(6, event.size() - 8))["choices"][0]["text"], "line1\nline2");
}

TEST(FinishReason, Names) {
    EXPECT_STREQ(api_finish_reason_name(api_finish_reason::stop), "stop");
    EXPECT_STREQ(api_finish_reason_name(api_finish_reason::length), "length");
    EXPECT_STREQ(api_finish_reason_name(api_finish_reason::tool_calls), "tool_calls");
    EXPECT_STREQ(api_finish_reason_name(api_finish_reason::none), "");
}

TEST(InfoResponse, Models) {
    EXPECT_EQ(parse_output(models_list_to_json({{"tiny", 1700000000, "inferd"}, {"alias", 5, "me"}})),
              json::parse(R"({"object":"list","data":[
                  {"id":"tiny","object":"model","created":1700000000,"owned_by":"inferd"},
                  {"id":"alias","object":"model","created":5,"owned_by":"me"}]})"));
    EXPECT_EQ(parse_output(models_list_to_json({})), json::parse(R"({"object":"list","data":[]})"));
    EXPECT_EQ(parse_output(model_info_to_json({"tiny", 1, "inferd"})),
              json::parse(R"({"id":"tiny","object":"model","created":1,"owned_by":"inferd"})"));
    api_model_info loaded{"tiny", 1, "inferd"};
    loaded.n_ctx = 4096;
    loaded.n_ctx_train = 32768;
    loaded.n_vocab = 151936;
    EXPECT_EQ(parse_output(model_info_to_json(loaded)),
              json::parse(R"({"id":"tiny","object":"model","created":1,"owned_by":"inferd",
                              "meta":{"n_ctx":4096,"n_ctx_train":32768,"n_vocab":151936}})"));
}

TEST(InfoResponse, Health) {
    EXPECT_EQ(parse_output(health_to_json(api_health::ok)), json::parse(R"({"status":"ok"})"));
    EXPECT_EQ(parse_output(health_to_json(api_health::loading)), json::parse(R"({"status":"loading"})"));
    EXPECT_EQ(parse_output(health_to_json(api_health::error)), json::parse(R"({"status":"error"})"));
    EXPECT_EQ(api_health_status(api_health::ok), 200);
    EXPECT_EQ(api_health_status(api_health::loading), 503);
    EXPECT_EQ(api_health_status(api_health::error), 503);
}

// The headers' usage examples build responses with designated initializers that leave fields
// out; this compiles them under -Wall -Wextra (no missing-initializer warnings) and checks them.
TEST(ResponseExamples, DesignatedInitializers) {
    completion_response res;
    res.meta = {.id = "cmpl-abc", .created = 1700000000, .model = "tinyllama"};
    res.choices.push_back({.index = 0, .text = "Hello", .finish_reason = api_finish_reason::length});
    res.usage = {.prompt_tokens = 5, .completion_tokens = 16};
    json j = parse_output(completion_response_to_json(res));
    EXPECT_EQ(j["choices"][0]["finish_reason"], "length");
    EXPECT_EQ(j["usage"]["total_tokens"], 21);

    j = parse_output(chat_chunk_to_json(chat_meta, {.index = 0, .kind = chat_delta_kind::content, .content = "p"}));
    EXPECT_EQ(j["choices"][0]["delta"], json::parse(R"({"content":"p"})"));
    j = parse_output(chat_chunk_to_json(chat_meta, {.index = 0, .kind = chat_delta_kind::finish,
                                                    .finish_reason = api_finish_reason::stop}));
    EXPECT_EQ(j["choices"][0]["finish_reason"], "stop");
    chat_response cr;
    cr.choices.push_back({.index = 0, .content = "Hi!", .finish_reason = api_finish_reason::stop});
    EXPECT_EQ(parse_output(chat_response_to_json(cr))["choices"][0]["message"]["content"], "Hi!");
}

namespace {

std::vector<chat_token_logprob> one_logprob(const std::string & token) {
    return {{token, -0.5, {{token, -0.5}}}};
}

const json one_logprob_json = json::parse(R"({"content":[{"token":"t","logprob":-0.5,"bytes":[116],
    "top_logprobs":[{"token":"t","logprob":-0.5,"bytes":[116]}]}]})");

}  // namespace

TEST(ChatResponseTools, MessageWithToolCalls) {
    chat_response res;
    res.meta = chat_meta;
    res.choices.push_back({.index = 0,
                           .tool_calls = {{"call_1", "get_weather", R"({"location":"Paris","unit":"c"})"},
                                          {"call_2", "get_time", "{}"}},
                           .finish_reason = api_finish_reason::tool_calls});
    res.usage = {20, 9, 0};
    const std::string text = chat_response_to_json(res);
    EXPECT_EQ(parse_output(text), json::parse(R"({
        "id":"chatcmpl-xyz","object":"chat.completion","created":1700000001,"model":"tiny",
        "choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":[
            {"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"location\":\"Paris\",\"unit\":\"c\"}"}},
            {"id":"call_2","type":"function","function":{"name":"get_time","arguments":"{}"}}]},
            "logprobs":null,"finish_reason":"tool_calls"}],
        "usage":{"prompt_tokens":20,"completion_tokens":9,"total_tokens":29,"prompt_tokens_details":{"cached_tokens":0}}})"));
    // The keys in OpenAI's order; arguments is JSON text inside a string.
    EXPECT_NE(text.find(R"("message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function",)"
                        R"("function":{"name":"get_weather","arguments":"{\"location\":\"Paris\",\"unit\":\"c\"}"}})"),
              std::string::npos)
        << text;
}

TEST(ChatResponseTools, MessageWithContentReasoningAndCalls) {
    chat_choice c{.index = 1,
                  .content = "Let me check.",
                  .reasoning_content = "The user wants the weather.",
                  .tool_calls = {{"call_9", "get_weather", R"({"location":"Rome"})"}},
                  .finish_reason = api_finish_reason::tool_calls};
    chat_response res{chat_meta, {c}, {}};
    const std::string text = chat_response_to_json(res);
    json m = parse_output(text)["choices"][0]["message"];
    EXPECT_EQ(m, json::parse(R"({"role":"assistant","content":"Let me check.",
        "reasoning_content":"The user wants the weather.",
        "tool_calls":[{"id":"call_9","type":"function","function":{"name":"get_weather","arguments":"{\"location\":\"Rome\"}"}}]})"));
    EXPECT_NE(text.find(R"({"role":"assistant","content":"Let me check.",)"
                        R"("reasoning_content":"The user wants the weather.","tool_calls":[)"),
              std::string::npos)
        << text;
}

TEST(ChatResponseTools, MessageWithReasoningOnly) {
    chat_response res{chat_meta, {{.index = 0, .content = "42", .reasoning_content = "6 times 7.",
                                   .finish_reason = api_finish_reason::stop}}, {}};
    json j = parse_output(chat_response_to_json(res));
    EXPECT_EQ(j["choices"][0]["message"],
              json::parse(R"({"role":"assistant","content":"42","reasoning_content":"6 times 7."})"));
    EXPECT_EQ(j["choices"][0]["finish_reason"], "stop");

    // Empty content without calls stays "" (not null); no reasoning_content or tool_calls keys.
    res.choices = {{.index = 0, .finish_reason = api_finish_reason::length}};
    j = parse_output(chat_response_to_json(res));
    EXPECT_EQ(j["choices"][0]["message"], json::parse(R"({"role":"assistant","content":""})"));
}

TEST(ChatResponseTools, ReasoningDelta) {
    json j = parse_output(chat_chunk_to_json(chat_meta, {.index = 0, .kind = chat_delta_kind::reasoning, .content = "Hmm"}));
    EXPECT_EQ(j, json::parse(R"({"id":"chatcmpl-xyz","object":"chat.completion.chunk","created":1700000001,
        "model":"tiny","choices":[{"index":0,"delta":{"reasoning_content":"Hmm"},"logprobs":null,
        "finish_reason":null}],"usage":null})"));
    j = parse_output(chat_chunk_to_json(chat_meta, {.index = 2, .kind = chat_delta_kind::reasoning, .content = "t",
                                                    .logprobs = one_logprob("t")}));
    EXPECT_EQ(j["choices"], json::array({{{"index", 2},
                                          {"delta", {{"reasoning_content", "t"}}},
                                          {"logprobs", one_logprob_json},
                                          {"finish_reason", nullptr}}}));
}

TEST(ChatResponseTools, ToolCallDeltas) {
    // The first delta of a call: index, id, type, name and (empty) arguments.
    const std::string first = chat_chunk_to_json(chat_meta, {.index = 0, .kind = chat_delta_kind::tool_call,
                                                             .call = {.index = 1, .id = "call_7", .name = "get_weather"}});
    EXPECT_EQ(parse_output(first)["choices"], json::parse(R"([{"index":0,"delta":{"tool_calls":[
        {"index":1,"id":"call_7","type":"function","function":{"name":"get_weather","arguments":""}}]},
        "logprobs":null,"finish_reason":null}])"));
    EXPECT_NE(first.find(R"("delta":{"tool_calls":[{"index":1,"id":"call_7","type":"function",)"
                         R"("function":{"name":"get_weather","arguments":""}}]})"),
              std::string::npos)
        << first;

    // Later deltas: index and a fragment of the arguments only.
    json j = parse_output(chat_chunk_to_json(
        chat_meta, {.index = 0, .kind = chat_delta_kind::tool_call, .call = {.index = 1, .arguments = "{\"location\": "}}));
    EXPECT_EQ(j["choices"][0]["delta"], json::parse(R"({"tool_calls":[{"index":1,"function":{"arguments":"{\"location\": "}}]})"));
    EXPECT_TRUE(j["choices"][0]["logprobs"].is_null());
    EXPECT_TRUE(j["usage"].is_null());

    // A first delta may carry arguments; a name without an id is a later delta.
    j = parse_output(chat_chunk_to_json(chat_meta, {.index = 0, .kind = chat_delta_kind::tool_call,
                                                    .call = {.index = 0, .id = "c", .name = "f", .arguments = "{}"}}));
    EXPECT_EQ(j["choices"][0]["delta"],
              json::parse(R"({"tool_calls":[{"index":0,"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]})"));
    j = parse_output(chat_chunk_to_json(chat_meta, {.index = 0, .kind = chat_delta_kind::tool_call,
                                                    .call = {.index = 0, .name = "f", .arguments = "}"}}));
    EXPECT_EQ(j["choices"][0]["delta"], json::parse(R"({"tool_calls":[{"index":0,"function":{"arguments":"}"}}]})"));

    // Log-probabilities of the call's tokens.
    j = parse_output(chat_chunk_to_json(chat_meta, {.index = 0, .kind = chat_delta_kind::tool_call,
                                                    .logprobs = one_logprob("t"), .call = {.index = 0, .arguments = "t"}}));
    EXPECT_EQ(j["choices"][0]["logprobs"], one_logprob_json);
}

TEST(ChatResponseTools, LogprobsOnlyForTextKinds) {
    for (chat_delta_kind kind : {chat_delta_kind::role, chat_delta_kind::finish}) {
        json j = parse_output(chat_chunk_to_json(chat_meta, {.index = 0, .kind = kind, .logprobs = one_logprob("t"),
                                                             .finish_reason = api_finish_reason::stop}));
        EXPECT_TRUE(j["choices"][0]["logprobs"].is_null()) << j.dump();
    }
    json j = parse_output(chat_chunk_to_json(chat_meta, {.index = 0, .kind = chat_delta_kind::content, .content = "t",
                                                         .logprobs = one_logprob("t")}));
    EXPECT_EQ(j["choices"][0]["logprobs"], one_logprob_json);
}

TEST(ChatResponseTools, FinishToolCallsChunk) {
    json j = parse_output(chat_chunk_to_json(chat_meta, {.index = 0, .kind = chat_delta_kind::finish,
                                                         .finish_reason = api_finish_reason::tool_calls}));
    EXPECT_EQ(j["choices"], json::parse(R"([{"index":0,"delta":{},"logprobs":null,"finish_reason":"tool_calls"}])"));
}

TEST(ChatResponseTools, InvalidUtf8IsReplaced) {
    chat_response res{chat_meta, {{.index = 0, .reasoning_content = "r\xff", .tool_calls = {{"c\xfe", "f", "{\"a\":\"\xc3\"}"}},
                                   .finish_reason = api_finish_reason::tool_calls}}, {}};
    json m = parse_output(chat_response_to_json(res))["choices"][0]["message"];
    EXPECT_EQ(m["reasoning_content"], "r\xef\xbf\xbd");
    EXPECT_EQ(m["tool_calls"][0]["id"], "c\xef\xbf\xbd");
    EXPECT_EQ(m["tool_calls"][0]["function"]["arguments"], "{\"a\":\"\xef\xbf\xbd\"}");
    json j = parse_output(chat_chunk_to_json(chat_meta, {.index = 0, .kind = chat_delta_kind::reasoning, .content = "\xe2\x96"}));
    EXPECT_EQ(j["choices"][0]["delta"]["reasoning_content"], "\xef\xbf\xbd");
}
