// Parsing and validation of POST /v1/chat/completions bodies (api/chat-request.h).
#include "api/chat-request.h"

#include "api-test-util.h"

#include <gtest/gtest.h>

#include <optional>
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
    EXPECT_STREQ(api_chat_role_name(api_chat_role::tool), "tool");
}

TEST(ChatRequest, InvalidMessages) {
    expect_rejected_body(R"({"model":"m"})", "messages");
    expect_rejected_body(R"({"messages":null})", "messages");
    expect_rejected_body(R"({"messages":[]})", "messages");
    expect_rejected_body(R"({"messages":"hi"})", "messages");
    expect_rejected_body(R"({"messages":{"role":"user"}})", "messages");
    expect_rejected_body(R"({"messages":["hi"]})", "messages[0]");
    expect_rejected_body(R"({"messages":[{"role":"user","content":"a"},{"content":"b"}]})", "messages[1].role");
    expect_rejected_body(R"({"messages":[{"role":"function","content":"x"}]})", "messages[0].role");
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

namespace {

const char * weather_tools = R"([
    {"type":"function","function":{"name":"get_weather","description":"Weather of a city.",
     "parameters":{"type":"object","properties":{"location":{"type":"string"},"unit":{"enum":["c","f"]}},
                   "required":["location"]}}},
    {"function":{"parameters":{"type":"object"},"name":"get_time"},"type":"function"}])";

// A body with `messages` (a JSON array) and `fields` after it.
std::string with_messages(const std::string & messages, const std::string & fields = "") {
    std::string body = R"({"model":"m","messages":)";
    body += messages;
    if (!fields.empty()) {
        body += ",";
        body += fields;
    }
    body += "}";
    return body;
}

// A body with one user message and `fields`.
std::string with_fields(const std::string & fields) {
    return with_messages(R"([{"role":"user","content":"hi"}])", fields);
}

// A body whose first message is an assistant message with `calls` as its tool_calls.
std::string with_calls(const std::string & calls) {
    std::string messages = R"([{"role":"assistant","content":null,"tool_calls":)";
    messages += calls;
    messages += "}]";
    return with_messages(messages);
}

std::string with_tools(const std::string & more) {
    std::string fields = "\"tools\":";
    fields += weather_tools;
    if (!more.empty()) {
        fields += ",";
        fields += more;
    }
    return with_fields(fields);
}

}  // namespace

TEST(ChatRequestTools, ToolRoundTripConversation) {
    chat_request req = parse_ok(with_messages(R"([
        {"role":"system","content":"You can call tools."},
        {"role":"user","name":"ann","content":"Weather in Paris and Rome?"},
        {"role":"assistant","content":null,"reasoning_content":"Two cities: two calls.","tool_calls":[
            {"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"location\": \"Paris\", \"unit\": \"c\"}"}},
            {"id":"call_2","type":"function","function":{"name":"get_weather","arguments":{"unit":"c","location":"Rome"}}},
            {"function":{"name":"get_time","arguments":"not json"}},
            {"type":null,"id":null,"function":{"name":"get_time"}},
            {"function":{"name":"get_time","arguments":null}},
            {"function":{"name":"get_time","arguments":"[1, 2]"}},
            {"function":{"name":"get_time","arguments":""}},
            {"function":{"name":"get_time","arguments":" {\"z\": {\"b\": [1, 2.5], \"a\": null}, \"y\": \"\\u00e9\"} "}}]},
        {"role":"tool","tool_call_id":"call_1","name":"get_weather","content":"18 C"},
        {"role":"tool","tool_call_id":"call_2","content":[{"type":"text","text":"21"},{"type":"text","text":"C"}]},
        {"role":"assistant","content":"Paris 18 C, Rome 21 C.","tool_calls":null}])",
                                              std::string("\"tools\":") + weather_tools));
    ASSERT_EQ(req.messages.size(), 6u);
    EXPECT_EQ(req.messages[1].name, "ann");
    EXPECT_TRUE(req.messages[1].tool_calls.empty());

    const api_chat_message & a = req.messages[2];
    EXPECT_EQ(a.role, api_chat_role::assistant);
    EXPECT_EQ(a.content, "");
    EXPECT_EQ(a.reasoning_content, "Two cities: two calls.");
    ASSERT_EQ(a.tool_calls.size(), 8u);
    EXPECT_EQ(a.tool_calls[0].id, "call_1");
    EXPECT_EQ(a.tool_calls[0].name, "get_weather");
    EXPECT_EQ(a.tool_calls[0].arguments, R"({"location":"Paris","unit":"c"})");  // text parsed to an object
    EXPECT_EQ(a.tool_calls[1].id, "call_2");
    EXPECT_EQ(a.tool_calls[1].arguments, R"({"unit":"c","location":"Rome"})");   // the client's key order
    EXPECT_EQ(a.tool_calls[2].id, "");
    EXPECT_EQ(a.tool_calls[2].name, "get_time");
    EXPECT_EQ(a.tool_calls[2].arguments, R"("not json")");   // not JSON: a JSON string of the text
    EXPECT_EQ(a.tool_calls[3].id, "");
    EXPECT_EQ(a.tool_calls[3].arguments, "{}");              // absent
    EXPECT_EQ(a.tool_calls[4].arguments, "{}");              // null
    EXPECT_EQ(a.tool_calls[5].arguments, R"("[1, 2]")");     // JSON, but not an object
    EXPECT_EQ(a.tool_calls[6].arguments, R"("")");
    EXPECT_EQ(a.tool_calls[7].arguments, "{\"z\":{\"b\":[1,2.5],\"a\":null},\"y\":\"\xc3\xa9\"}");

    const api_chat_message & t1 = req.messages[3];
    EXPECT_EQ(t1.role, api_chat_role::tool);
    EXPECT_EQ(t1.tool_call_id, "call_1");
    EXPECT_EQ(t1.name, "get_weather");
    EXPECT_EQ(t1.content, "18 C");
    EXPECT_EQ(req.messages[4].role, api_chat_role::tool);
    EXPECT_EQ(req.messages[4].tool_call_id, "call_2");
    EXPECT_EQ(req.messages[4].name, "");
    EXPECT_EQ(req.messages[4].content, "21\nC");
    EXPECT_EQ(req.messages[5].content, "Paris 18 C, Rome 21 C.");
    EXPECT_TRUE(req.messages[5].tool_calls.empty());
    EXPECT_EQ(req.messages[5].reasoning_content, "");

    // The tools as sent, keys in the client's order (not sorted).
    EXPECT_EQ(req.tools,
              R"([{"type":"function","function":{"name":"get_weather","description":"Weather of a city.",)"
              R"("parameters":{"type":"object","properties":{"location":{"type":"string"},"unit":{"enum":["c","f"]}},)"
              R"("required":["location"]}}},{"function":{"parameters":{"type":"object"},"name":"get_time"},"type":"function"}])");
    EXPECT_EQ(req.tool_names, (std::vector<std::string>{"get_weather", "get_time"}));
    EXPECT_EQ(req.tool_choice, api_tool_choice::auto_);
    EXPECT_TRUE(req.parallel_tool_calls);
}

// Many calls with object arguments: the first are cut from the body's text, the rest read from
// one ordered parse of it; every one keeps the client's key order, whichever way it was read.
TEST(ChatRequestTools, ManyObjectArgumentsKeepTheirOrder) {
    std::string calls;
    for (int i = 0; i < 12; ++i) {
        calls += (i ? "," : "") + std::string(R"({"id":"c)") + std::to_string(i) +
                 R"(","type":"function","function":{"name":"get_weather","arguments":{ "unit" : "c", "location" : "city )" +
                 std::to_string(i) + R"(", "n": [ )" + std::to_string(i) + R"( ]}}})";
    }
    chat_request req = parse_ok(with_messages(R"([{"role":"user","content":"go"},{"role":"assistant","content":null,"tool_calls":[)" +
                                                  calls + "]}]",
                                              std::string("\"tools\":") + weather_tools));
    ASSERT_EQ(req.messages.size(), 2u);
    ASSERT_EQ(req.messages[1].tool_calls.size(), 12u);
    for (int i = 0; i < 12; ++i) {
        EXPECT_EQ(req.messages[1].tool_calls[size_t(i)].arguments,
                  R"({"unit":"c","location":"city )" + std::to_string(i) + R"(","n":[)" + std::to_string(i) + "]}")
            << i;
    }
}

TEST(ChatRequestTools, ArgumentsEdgeCases) {
    // An empty tool_calls array is no calls; reasoning_content null is "".
    chat_request req =
        parse_ok(with_messages(R"([{"role":"assistant","content":"x","tool_calls":[],"reasoning_content":null}])"));
    EXPECT_TRUE(req.messages[0].tool_calls.empty());
    EXPECT_EQ(req.messages[0].reasoning_content, "");

    // Text nested deeper than a request may be stays a string rather than being parsed.
    std::string deep = "{\\\"a\\\":";
    deep.append(300, '[').append(300, ']').append("}");
    req = parse_ok(with_calls(R"([{"function":{"name":"f","arguments":")" + deep + "\"}}]"));
    ASSERT_EQ(req.messages[0].tool_calls.size(), 1u);
    nlohmann::json kept = nlohmann::json::parse(req.messages[0].tool_calls[0].arguments);
    ASSERT_TRUE(kept.is_string());
    EXPECT_EQ(kept.get<std::string>().substr(0, 6), "{\"a\":[");

    // A number out of range and a trailing comma are not objects either.
    req = parse_ok(with_calls(R"([{"function":{"name":"f","arguments":"{\"a\":1e999}"}},
                                  {"function":{"name":"f","arguments":"{\"a\":1,}"}},
                                  {"function":{"name":"f","arguments":"{\"a\":1} {}"}}])"));
    ASSERT_EQ(req.messages[0].tool_calls.size(), 3u);
    EXPECT_EQ(req.messages[0].tool_calls[0].arguments, R"("{\"a\":1e999}")");
    EXPECT_EQ(req.messages[0].tool_calls[1].arguments, R"("{\"a\":1,}")");
    EXPECT_EQ(req.messages[0].tool_calls[2].arguments, R"("{\"a\":1} {}")");

    // Object arguments keep nested key order and values as written.
    req = parse_ok(with_calls(R"([{"function":{"arguments":{"z":1,"a":{"y":[true,null],"b":"s"}},"name":"f"}}])"));
    EXPECT_EQ(req.messages[0].tool_calls[0].arguments, R"({"z":1,"a":{"y":[true,null],"b":"s"}})");
    EXPECT_EQ(req.messages[0].tool_calls[0].name, "f");
}

TEST(ChatRequestTools, MessageFieldErrors) {
    expect_rejected_body(with_messages(R"([{"role":"user","content":"x","tool_calls":[]}])"), "messages[0].tool_calls");
    expect_rejected_body(with_messages(R"([{"role":"user","content":"x"},
                                           {"role":"tool","content":"r","tool_calls":[{"function":{"name":"f"}}]}])"),
                         "messages[1].tool_calls");
    expect_rejected_body(with_messages(R"([{"role":"system","content":"x","tool_calls":{}}])"), "messages[0].tool_calls");
    expect_rejected_body(with_messages(R"([{"role":"tool","tool_call_id":"c"}])"), "messages[0].content");
    expect_rejected_body(with_messages(R"([{"role":"tool","content":null}])"), "messages[0].content");
    expect_rejected_body(with_messages(R"([{"role":"user","content":"x","name":5}])"), "messages[0].name");
    expect_rejected_body(with_messages(R"([{"role":"tool","content":"x","tool_call_id":7}])"), "messages[0].tool_call_id");
    expect_rejected_body(with_messages(R"([{"role":"assistant","content":"x","reasoning_content":{}}])"),
                         "messages[0].reasoning_content");
    // tool_calls null is no calls, on any message.
    chat_request req = parse_ok(with_messages(R"([{"role":"user","content":"x","tool_calls":null}])"));
    EXPECT_TRUE(req.messages[0].tool_calls.empty());
}

TEST(ChatRequestTools, ToolCallErrors) {
    expect_rejected_body(with_calls(R"("call")"), "messages[0].tool_calls");
    expect_rejected_body(with_calls(R"({"function":{"name":"f"}})"), "messages[0].tool_calls");
    expect_rejected_body(with_calls(R"([1])"), "messages[0].tool_calls[0]");
    expect_rejected_body(with_calls(R"([{"function":{"name":"f"}},[]])"), "messages[0].tool_calls[1]");
    expect_rejected_body(with_calls(R"([{"type":"custom","function":{"name":"f"}}])"), "messages[0].tool_calls[0].type");
    expect_rejected_body(with_calls(R"([{"type":1,"function":{"name":"f"}}])"), "messages[0].tool_calls[0].type");
    expect_rejected_body(with_calls(R"([{"id":5,"function":{"name":"f"}}])"), "messages[0].tool_calls[0].id");
    expect_rejected_body(with_calls(R"([{"id":"c"}])"), "messages[0].tool_calls[0].function");
    expect_rejected_body(with_calls(R"([{"function":null}])"), "messages[0].tool_calls[0].function");
    expect_rejected_body(with_calls(R"([{"function":"f"}])"), "messages[0].tool_calls[0].function");
    expect_rejected_body(with_calls(R"([{"function":{"arguments":"{}"}}])"), "messages[0].tool_calls[0].function.name");
    expect_rejected_body(with_calls(R"([{"function":{"name":""}}])"), "messages[0].tool_calls[0].function.name");
    expect_rejected_body(with_calls(R"([{"function":{"name":3}}])"), "messages[0].tool_calls[0].function.name");
    expect_rejected_body(with_calls(R"([{"function":{"name":"f","arguments":5}}])"),
                         "messages[0].tool_calls[0].function.arguments");
    expect_rejected_body(with_calls(R"([{"function":{"name":"f","arguments":[1]}}])"),
                         "messages[0].tool_calls[0].function.arguments");
    expect_rejected_body(with_calls(R"([{"function":{"name":"f","arguments":true}}])"),
                         "messages[0].tool_calls[0].function.arguments");
    // The path names the message and the call.
    expect_rejected_body(with_messages(R"([{"role":"user","content":"a"},{"role":"assistant","content":"b"},
        {"role":"assistant","tool_calls":[{"function":{"name":"f"}},{"function":{"name":""}}]}])"),
                         "messages[2].tool_calls[1].function.name");
}

TEST(ChatRequestTools, ToolsParsed) {
    chat_request req = parse_ok(with_fields(R"("tools":null)"));
    EXPECT_EQ(req.tools, "");
    EXPECT_TRUE(req.tool_names.empty());
    EXPECT_EQ(req.tool_choice, api_tool_choice::none);
    EXPECT_TRUE(req.parallel_tool_calls);
    req = parse_ok(with_fields(R"("tools":[])"));
    EXPECT_EQ(req.tools, "");
    EXPECT_EQ(req.tool_choice, api_tool_choice::none);
    EXPECT_EQ(parse_ok(with_fields("\"model\":null")).tool_choice, api_tool_choice::none);

    const std::string name64(64, 'n');
    req = parse_ok(with_fields(R"("tools":[
        {"type":"function","function":{"name":"a.b-c_9","description":null,"parameters":null,"strict":null}},
        {"type":"function","function":{"name":")" + name64 + R"(","strict":true,"x-extra":{"b":1,"a":2}}}])"));
    EXPECT_EQ(req.tool_names, (std::vector<std::string>{"a.b-c_9", name64}));
    EXPECT_EQ(req.tools,
              R"([{"type":"function","function":{"name":"a.b-c_9","description":null,"parameters":null,"strict":null}},)"
              R"({"type":"function","function":{"name":")" + name64 + R"(","strict":true,"x-extra":{"b":1,"a":2}}}])");
    EXPECT_EQ(req.tool_choice, api_tool_choice::auto_);
    EXPECT_EQ(req.tool_choice_function, "");
}

TEST(ChatRequestTools, ToolsRejected) {
    expect_rejected(R"("tools":"get_weather")", "tools");
    expect_rejected(R"("tools":{"type":"function"})", "tools");
    expect_rejected(R"("tools":[1])", "tools[0]");
    expect_rejected(R"("tools":[{"type":"function","function":{"name":"f"}},null])", "tools[1]");
    expect_rejected(R"("tools":[{"function":{"name":"f"}}])", "tools[0].type");
    expect_rejected(R"("tools":[{"type":"retrieval","function":{"name":"f"}}])", "tools[0].type");
    expect_rejected(R"("tools":[{"type":"function"}])", "tools[0].function");
    expect_rejected(R"("tools":[{"type":"function","function":[]}])", "tools[0].function");
    expect_rejected(R"("tools":[{"type":"function","function":{"description":"d"}}])", "tools[0].function.name");
    expect_rejected(R"("tools":[{"type":"function","function":{"name":null}}])", "tools[0].function.name");
    expect_rejected(R"("tools":[{"type":"function","function":{"name":7}}])", "tools[0].function.name");
    expect_rejected(R"("tools":[{"type":"function","function":{"name":""}}])", "tools[0].function.name");
    expect_rejected(R"("tools":[{"type":"function","function":{"name":"has space"}}])", "tools[0].function.name");
    expect_rejected(R"("tools":[{"type":"function","function":{"name":"caf\u00e9"}}])", "tools[0].function.name");
    const std::string name65(65, 'n');
    expect_rejected(R"("tools":[{"type":"function","function":{"name":")" + name65 + R"("}}])", "tools[0].function.name");
    expect_rejected(R"("tools":[{"type":"function","function":{"name":"f"}},{"type":"function","function":{"name":"g"}},
                                {"type":"function","function":{"name":"f"}}])",
                    "tools[2].function.name");
    expect_rejected(R"("tools":[{"type":"function","function":{"name":"f","description":5}}])", "tools[0].function.description");
    expect_rejected(R"("tools":[{"type":"function","function":{"name":"f","parameters":"{}"}}])", "tools[0].function.parameters");
    expect_rejected(R"("tools":[{"type":"function","function":{"name":"f","parameters":[]}}])", "tools[0].function.parameters");
    expect_rejected(R"("tools":[{"type":"function","function":{"name":"f","strict":"yes"}}])", "tools[0].function.strict");
}

TEST(ChatRequestTools, ToolChoice) {
    EXPECT_EQ(parse_ok(with_tools("")).tool_choice, api_tool_choice::auto_);
    EXPECT_EQ(parse_ok(with_tools(R"("tool_choice":null)")).tool_choice, api_tool_choice::auto_);
    EXPECT_EQ(parse_ok(with_tools(R"("tool_choice":"auto")")).tool_choice, api_tool_choice::auto_);
    EXPECT_EQ(parse_ok(with_tools(R"("tool_choice":"none")")).tool_choice, api_tool_choice::none);
    EXPECT_EQ(parse_ok(with_tools(R"("tool_choice":"required")")).tool_choice, api_tool_choice::required);
    chat_request req = parse_ok(with_tools(R"("tool_choice":{"type":"function","function":{"name":"get_time"}})"));
    EXPECT_EQ(req.tool_choice, api_tool_choice::function);
    EXPECT_EQ(req.tool_choice_function, "get_time");
    EXPECT_FALSE(req.tools.empty());  // "none" and a named function keep the tools

    // Without tools: "auto" and "none" are harmless and mean none.
    EXPECT_EQ(parse_ok(with_fields(R"("tool_choice":"auto")")).tool_choice, api_tool_choice::none);
    EXPECT_EQ(parse_ok(with_fields(R"("tool_choice":"none","tools":[])")).tool_choice, api_tool_choice::none);
}

TEST(ChatRequestTools, ToolChoiceRejected) {
    expect_rejected(R"("tool_choice":"required")", "tool_choice");
    expect_rejected(R"("tools":[],"tool_choice":"required")", "tool_choice");
    expect_rejected(R"("tool_choice":{"type":"function","function":{"name":"get_weather"}})", "tool_choice");
    expect_rejected_body(with_tools(R"("tool_choice":"always")"), "tool_choice");
    expect_rejected_body(with_tools(R"("tool_choice":"")"), "tool_choice");
    expect_rejected_body(with_tools(R"("tool_choice":5)"), "tool_choice");
    expect_rejected_body(with_tools(R"("tool_choice":["auto"])"), "tool_choice");
    expect_rejected_body(with_tools(R"("tool_choice":{"function":{"name":"get_time"}})"), "tool_choice.type");
    expect_rejected_body(with_tools(R"("tool_choice":{"type":"tool","function":{"name":"get_time"}})"), "tool_choice.type");
    expect_rejected_body(with_tools(R"("tool_choice":{"type":"function"})"), "tool_choice.function");
    expect_rejected_body(with_tools(R"("tool_choice":{"type":"function","function":"get_time"})"), "tool_choice.function");
    expect_rejected_body(with_tools(R"("tool_choice":{"type":"function","function":{}})"), "tool_choice.function.name");
    expect_rejected_body(with_tools(R"("tool_choice":{"type":"function","function":{"name":5}})"),
                         "tool_choice.function.name");

    chat_request req;
    auto err = chat_request_parse(with_tools(R"("tool_choice":{"type":"function","function":{"name":"get_wether"}})"), req);
    expect_invalid(err, "tool_choice", "unknown function");
    ASSERT_TRUE(err.has_value());
    EXPECT_EQ(err->message, "tool_choice names the function 'get_wether', which is not among the tools.");
}

TEST(ChatRequestTools, ParallelToolCalls) {
    EXPECT_TRUE(parse_ok(with_tools("")).parallel_tool_calls);
    EXPECT_TRUE(parse_ok(with_tools(R"("parallel_tool_calls":null)")).parallel_tool_calls);
    EXPECT_TRUE(parse_ok(with_tools(R"("parallel_tool_calls":true)")).parallel_tool_calls);
    EXPECT_FALSE(parse_ok(with_tools(R"("parallel_tool_calls":false)")).parallel_tool_calls);
    EXPECT_FALSE(parse_ok(with_fields(R"("parallel_tool_calls":false)")).parallel_tool_calls);
    expect_rejected(R"("parallel_tool_calls":"no")", "parallel_tool_calls");
    expect_rejected(R"("parallel_tool_calls":0)", "parallel_tool_calls");
}

TEST(ChatRequestReasoning, Format) {
    EXPECT_FALSE(parse_ok(with_fields(R"("n":1)")).reasoning_split.has_value());
    EXPECT_FALSE(parse_ok(with_fields(R"("reasoning_format":null)")).reasoning_split.has_value());
    EXPECT_EQ(parse_ok(with_fields(R"("reasoning_format":"none")")).reasoning_split, std::optional<bool>(false));
    EXPECT_EQ(parse_ok(with_fields(R"("reasoning_format":"auto")")).reasoning_split, std::optional<bool>(true));
    EXPECT_EQ(parse_ok(with_fields(R"("reasoning_format":"deepseek")")).reasoning_split, std::optional<bool>(true));
    expect_rejected(R"("reasoning_format":"deepseek-legacy")", "reasoning_format");
    expect_rejected(R"("reasoning_format":"")", "reasoning_format");
    expect_rejected(R"("reasoning_format":"Auto")", "reasoning_format");
    expect_rejected(R"("reasoning_format":true)", "reasoning_format");
    expect_rejected(R"("reasoning_format":{})", "reasoning_format");
}

TEST(ChatRequestReasoning, Effort) {
    EXPECT_EQ(parse_ok(with_fields(R"("n":1)")).reasoning_effort, "");
    EXPECT_EQ(parse_ok(with_fields(R"("reasoning_effort":null)")).reasoning_effort, "");
    for (const char * e : {"none", "minimal", "low", "medium", "high"}) {
        EXPECT_EQ(parse_ok(with_fields(std::string("\"reasoning_effort\":\"") + e + "\"")).reasoning_effort, e);
    }
    expect_rejected(R"("reasoning_effort":"max")", "reasoning_effort");
    expect_rejected(R"("reasoning_effort":"")", "reasoning_effort");
    expect_rejected(R"("reasoning_effort":"HIGH")", "reasoning_effort");
    expect_rejected(R"("reasoning_effort":3)", "reasoning_effort");
}
