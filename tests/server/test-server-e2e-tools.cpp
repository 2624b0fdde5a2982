// End-to-end: tool calls through the real inferd serving a tiny Qwen3 model with real chat
// templates from ../shared/testdata/chat given to --chat-template. With tool_choice "required"
// or a named function the call is forced by a grammar in the template's own wire format; the
// answer must come back as well-formed tool_calls, the same whole and streamed (the streamed
// deltas add up to the whole answer). Also: tool_choice "none", requests refused with a 400, and
// the full message shapes (assistant tool_calls with arguments as text, tool results).
#include "ggml/gguf.h"
#include "server/inferd-process.h"
#include "testdata.h"

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <set>
#include <sstream>

using nlohmann::json;

namespace {

const json k_tools = json::parse(R"([
  {"type": "function", "function": {"name": "get_weather", "description": "Current weather",
   "parameters": {"type": "object", "properties": {"location": {"type": "string", "maxLength": 8},
                  "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
                  "required": ["location", "unit"], "additionalProperties": false}}},
  {"type": "function", "function": {"name": "get_time", "description": "Local time",
   "parameters": {"type": "object", "properties": {"zone": {"type": "string", "enum": ["UTC", "CET"]}},
                  "required": ["zone"], "additionalProperties": false}}}
])");

json chat_body(const json & extra) {
    json b = {{"messages", {{{"role", "user"}, {"content", "What is the weather in Paris?"}}}},
              {"tools", k_tools}, {"max_tokens", 200}, {"temperature", 0}, {"seed", 3}};
    for (const auto & [k, v] : extra.items()) b[k] = v;
    return b;
}

json post_ok(const inferd_process & p, const json & body) {
    auto r = inferd_call(p.port(), "POST", "/v1/chat/completions", body.dump());
    EXPECT_TRUE(r.has_value());
    if (!r) return json();
    EXPECT_EQ(r->status, 200) << r->body;
    return json::parse(r->body, nullptr, false);
}

// An error's status and param.
std::pair<int, std::string> post_error(const inferd_process & p, const json & body) {
    auto r = inferd_call(p.port(), "POST", "/v1/chat/completions", body.dump());
    if (!r) return {0, ""};
    const json j = json::parse(r->body, nullptr, false);
    std::string param = j.contains("error") && j["error"]["param"].is_string() ? j["error"]["param"].get<std::string>() : "";
    return {r->status, param};
}

size_t utf8_chars(const std::string & s) {
    size_t n = 0;
    for (unsigned char c : s) n += (c & 0xC0) != 0x80;
    return n;
}

// The arguments follow the tool's schema.
void expect_valid_call(const json & call) {
    ASSERT_TRUE(call.contains("function")) << call.dump();
    const std::string name = call["function"]["name"];
    const json args = json::parse(call["function"]["arguments"].get<std::string>(), nullptr, false);
    ASSERT_TRUE(args.is_object()) << call.dump();
    if (name == "get_weather") {
        EXPECT_TRUE(args["location"].is_string() && utf8_chars(args["location"].get<std::string>()) <= 8) << call.dump();
        EXPECT_TRUE(args["unit"] == "celsius" || args["unit"] == "fahrenheit") << call.dump();
        EXPECT_EQ(args.size(), 2u) << call.dump();
    } else {
        EXPECT_EQ(name, "get_time") << call.dump();
        EXPECT_TRUE(args["zone"] == "UTC" || args["zone"] == "CET") << call.dump();
    }
    EXPECT_EQ(call["type"], "function");
    EXPECT_TRUE(call["id"].is_string() && !call["id"].get<std::string>().empty()) << call.dump();
}

// The streamed deltas of one choice added up: {content, reasoning_content, tool_calls [{id, name,
// arguments}], finish_reason}.
json assemble_stream(const std::string & sse) {
    json msg = {{"content", ""}, {"reasoning_content", ""}, {"tool_calls", json::array()}, {"finish_reason", nullptr}};
    std::istringstream in(sse);
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind("data: {", 0) != 0) continue;
        const json chunk = json::parse(line.substr(6));
        if (chunk["choices"].empty()) continue;
        const json & c = chunk["choices"][0];
        if (!c["finish_reason"].is_null()) msg["finish_reason"] = c["finish_reason"];
        const json & d = c["delta"];
        if (d.contains("content") && d["content"].is_string()) msg["content"] = msg["content"].get<std::string>() + d["content"].get<std::string>();
        if (d.contains("reasoning_content")) {
            msg["reasoning_content"] = msg["reasoning_content"].get<std::string>() + d["reasoning_content"].get<std::string>();
        }
        for (const json & t : d.value("tool_calls", json::array())) {
            const size_t i = t["index"];
            json & calls = msg["tool_calls"];
            if (i == calls.size()) {
                EXPECT_TRUE(t.contains("id") && t.contains("type") && t["function"].contains("name")) << t.dump();
                calls.push_back({{"id", t["id"]}, {"type", t["type"]}, {"function", {{"name", t["function"]["name"]}, {"arguments", ""}}}});
            } else {
                EXPECT_LT(i, calls.size()) << t.dump();
                EXPECT_FALSE(t.contains("id") || t["function"].contains("name")) << "only a call's first delta names it: " << t.dump();
            }
            if (i < calls.size()) {
                calls[i]["function"]["arguments"] =
                    calls[i]["function"]["arguments"].get<std::string>() + t["function"].value("arguments", "");
            }
        }
    }
    return msg;
}

// Serves the tiny Qwen3 model with a template of the chat test data ("" for the model's own).
std::unique_ptr<inferd_process> serve(const std::string & dir, const std::string & templ) {
    std::vector<std::string> args = {"-m", dir + "/models/tiny-qwen3-q4_k_m.gguf", "--parallel", "2", "-c", "2048", "-t", "2"};
    if (!templ.empty()) {
        args.push_back("--chat-template");
        args.push_back(dir + "/chat/templates/" + templ + ".jinja");
    }
    return std::make_unique<inferd_process>(args);
}

// A forced call, whole and streamed: well-formed, the same both ways. extra: more request fields.
void check_forced_call(const std::string & dir, const std::string & templ, const json & extra = json::object()) {
    SCOPED_TRACE(templ.empty() ? "the model's own template" : templ);
    auto p = serve(dir, templ);
    ASSERT_TRUE(p->wait_ready()) << p->log();
    json named = chat_body({{"tool_choice", {{"type", "function"}, {"function", {{"name", "get_weather"}}}}},
                            {"parallel_tool_calls", false}});
    for (const auto & [k, v] : extra.items()) named[k] = v;
    const json whole = post_ok(*p, named);
    ASSERT_TRUE(whole.contains("choices")) << whole.dump();
    const json & choice = whole["choices"][0];
    EXPECT_EQ(choice["finish_reason"], "tool_calls") << whole.dump();
    const json & msg = choice["message"];
    ASSERT_EQ(msg["tool_calls"].size(), 1u) << whole.dump();
    EXPECT_EQ(msg["tool_calls"][0]["function"]["name"], "get_weather");
    expect_valid_call(msg["tool_calls"][0]);
    EXPECT_TRUE(msg["content"].is_null()) << whole.dump();

    json streamed_body = named;
    streamed_body["stream"] = true;
    auto r = inferd_call(p->port(), "POST", "/v1/chat/completions", streamed_body.dump());
    ASSERT_TRUE(r.has_value());
    ASSERT_EQ(r->status, 200) << r->body;
    const json streamed = assemble_stream(r->body);
    EXPECT_EQ(streamed["finish_reason"], "tool_calls") << r->body;
    ASSERT_EQ(streamed["tool_calls"].size(), 1u) << r->body;
    EXPECT_EQ(streamed["tool_calls"][0]["function"], msg["tool_calls"][0]["function"]) << r->body;
    EXPECT_EQ(streamed["content"], "") << r->body;

    // "required": any of the tools, one call.
    json any_body = chat_body({{"tool_choice", "required"}, {"parallel_tool_calls", false}});
    for (const auto & [k, v] : extra.items()) any_body[k] = v;
    const json any = post_ok(*p, any_body);
    ASSERT_TRUE(any.contains("choices")) << any.dump();
    EXPECT_EQ(any["choices"][0]["finish_reason"], "tool_calls") << any.dump();
    ASSERT_EQ(any["choices"][0]["message"]["tool_calls"].size(), 1u) << any.dump();
    expect_valid_call(any["choices"][0]["message"]["tool_calls"][0]);

    // Parallel calls: random weights may go on calling until max_tokens; every finished call is
    // valid (the last is cut short when the answer ends with "length") and has its own id.
    json many_body = chat_body({{"tool_choice", "required"}, {"max_tokens", 120}});
    for (const auto & [k, v] : extra.items()) many_body[k] = v;
    const json many = post_ok(*p, many_body);
    ASSERT_TRUE(many.contains("choices")) << many.dump();
    const json & calls = many["choices"][0]["message"]["tool_calls"];
    const bool cut = many["choices"][0]["finish_reason"] == "length";
    EXPECT_TRUE(cut || many["choices"][0]["finish_reason"] == "tool_calls") << many.dump();
    ASSERT_GE(calls.size(), cut ? 0u : 1u) << many.dump();
    std::set<std::string> ids;
    for (size_t i = 0; i < calls.size(); ++i) {
        if (!cut || i + 1 < calls.size()) expect_valid_call(calls[i]);
        ids.insert(calls[i].value("id", ""));
    }
    EXPECT_EQ(ids.size(), calls.size()) << "each call has its own id: " << many.dump();
    EXPECT_EQ(p->terminate(), 0);
}

// A copy of a model file with one more metadata string.
bool copy_with_key(const std::string & from, const std::string & to, const std::string & key, const std::string & value) {
    std::unique_ptr<gguf_file> f;
    if (!gguf_file::open(from, {}, &f)) return false;
    gguf_writer w;
    w.metadata() = f->metadata();
    w.metadata().set(key, gguf_value::from_string(value));
    for (const gguf_tensor_info & t : f->tensors()) {
        if (!w.add_tensor(t, f->tensor_data(t))) return false;
    }
    return bool(w.write_file(to));
}

}  // namespace

TEST(server_e2e_tools, hermes_qwen3) { INFERD_REQUIRE_TESTDATA(dir); check_forced_call(dir, "Qwen-Qwen3-0.6B"); }
TEST(server_e2e_tools, llama3_json) { INFERD_REQUIRE_TESTDATA(dir); check_forced_call(dir, "meta-llama-Llama-3.1-8B-Instruct"); }
TEST(server_e2e_tools, mistral) { INFERD_REQUIRE_TESTDATA(dir); check_forced_call(dir, "mistralai-Mistral-Nemo-Instruct-2407"); }
TEST(server_e2e_tools, qwen3_coder_xml) { INFERD_REQUIRE_TESTDATA(dir); check_forced_call(dir, "Qwen3-Coder"); }
TEST(server_e2e_tools, deepseek_v3_1) { INFERD_REQUIRE_TESTDATA(dir); check_forced_call(dir, "deepseek-ai-DeepSeek-V3.1"); }
TEST(server_e2e_tools, kimi_k2) { INFERD_REQUIRE_TESTDATA(dir); check_forced_call(dir, "moonshotai-Kimi-K2"); }
TEST(server_e2e_tools, functionary) { INFERD_REQUIRE_TESTDATA(dir); check_forced_call(dir, "meetkai-functionary-medium-v3.1"); }
// gpt-oss reasons first in its analysis channel, free text that random weights do not end:
// thinking off, the grammar goes straight to the call.
TEST(server_e2e_tools, gpt_oss_harmony) {
    INFERD_REQUIRE_TESTDATA(dir);
    check_forced_call(dir, "openai-gpt-oss-120b", {{"chat_template_kwargs", {{"enable_thinking", false}}}});
}
// The model's own template writes no calls: the generic JSON format.
TEST(server_e2e_tools, generic_json) { INFERD_REQUIRE_TESTDATA(dir); check_forced_call(dir, ""); }

// tool_choice none renders no tools and reads no calls; a conversation with calls and results
// renders; requests that cannot be served are a 400 naming the field.
TEST(server_e2e_tools, choices_history_and_errors) {
    INFERD_REQUIRE_TESTDATA(dir);
    auto p = serve(dir, "Qwen-Qwen3-0.6B");
    ASSERT_TRUE(p->wait_ready()) << p->log();
    json plain = chat_body({{"max_tokens", 4}});
    plain.erase("tools");
    const json without = post_ok(*p, plain);
    const json none = post_ok(*p, chat_body({{"max_tokens", 4}, {"tool_choice", "none"}}));
    const json with = post_ok(*p, chat_body({{"max_tokens", 4}}));
    ASSERT_TRUE(without.contains("usage") && none.contains("usage") && with.contains("usage"));
    EXPECT_EQ(none["usage"]["prompt_tokens"], without["usage"]["prompt_tokens"]) << "tool_choice none renders no tools";
    EXPECT_GT(with["usage"]["prompt_tokens"].get<int>(), without["usage"]["prompt_tokens"].get<int>() + 50);
    EXPECT_FALSE(none["choices"][0]["message"].contains("tool_calls")) << none.dump();

    // History: the call (arguments as text, as OpenAI clients send it) and its result render
    // like the same call with arguments as an object.
    json history = chat_body({{"max_tokens", 2}});
    history["messages"].push_back({{"role", "assistant"}, {"content", nullptr},
                                   {"tool_calls", {{{"id", "call_1"}, {"type", "function"},
                                                    {"function", {{"name", "get_weather"},
                                                                  {"arguments", R"({"location": "Paris", "unit": "celsius"})"}}}}}}});
    history["messages"].push_back({{"role", "tool"}, {"tool_call_id", "call_1"}, {"content", R"({"temperature": 22})"}});
    json as_object = history;
    as_object["messages"][1]["tool_calls"][0]["function"]["arguments"] = {{"location", "Paris"}, {"unit", "celsius"}};
    as_object["messages"][1]["content"] = "";
    const json h1 = post_ok(*p, history), h2 = post_ok(*p, as_object);
    ASSERT_TRUE(h1.contains("usage") && h2.contains("usage"));
    EXPECT_EQ(h1["usage"]["prompt_tokens"], h2["usage"]["prompt_tokens"]);
    EXPECT_GT(h1["usage"]["prompt_tokens"].get<int>(), with["usage"]["prompt_tokens"].get<int>() + 20);

    EXPECT_EQ(post_error(*p, chat_body({{"tool_choice", {{"type", "function"}, {"function", {{"name", "nope"}}}}}})),
              std::make_pair(400, std::string("tool_choice")));
    EXPECT_EQ(post_error(*p, chat_body({{"tool_choice", "required"}, {"response_format", {{"type", "json_object"}}}})),
              std::make_pair(400, std::string("tool_choice")));
    json no_tools = chat_body({{"tool_choice", "required"}});
    no_tools.erase("tools");
    EXPECT_EQ(post_error(*p, no_tools), std::make_pair(400, std::string("tool_choice")));
    EXPECT_EQ(p->terminate(), 0);

    // A format without a forcing grammar: "required" is refused, "auto" is served.
    auto glm = serve(dir, "GLM-4.6");
    ASSERT_TRUE(glm->wait_ready()) << glm->log();
    EXPECT_EQ(post_error(*glm, chat_body({{"tool_choice", "required"}})), std::make_pair(400, std::string("tool_choice")));
    post_ok(*glm, chat_body({{"max_tokens", 4}}));
    EXPECT_EQ(glm->terminate(), 0);
}

// A model whose file has tokenizer.chat_template.tool_use: requests with tools render with it
// (and read its call format), requests without tools with the default template.
TEST(server_e2e_tools, tool_use_template_variant) {
    INFERD_REQUIRE_TESTDATA(dir);
    const std::string model = (std::filesystem::temp_directory_path() / "inferd-tool-use-variant.gguf").string();
    ASSERT_TRUE(copy_with_key(dir + "/models/tiny-qwen3-q4_k_m.gguf", model, "tokenizer.chat_template.tool_use",
                              inferd_read_file(dir + "/chat/templates/Qwen-Qwen3-0.6B.jinja")));
    inferd_process p({"-m", model, "--parallel", "1", "-c", "2048", "-t", "2"});
    ASSERT_TRUE(p.wait_ready()) << p.log();
    EXPECT_NE(p.log().find("tool_use chat template"), std::string::npos) << p.log();
    json plain = chat_body({{"max_tokens", 2}});
    plain.erase("tools");
    const json without = post_ok(p, plain);
    const json with = post_ok(p, chat_body({{"max_tokens", 2}}));
    ASSERT_TRUE(without.contains("usage") && with.contains("usage"));
    // Qwen3's template lists the tools in a system turn; the default one has none.
    EXPECT_GT(with["usage"]["prompt_tokens"].get<int>(), without["usage"]["prompt_tokens"].get<int>() + 50);
    json forced = chat_body({{"tool_choice", "required"}, {"parallel_tool_calls", false}});
    auto r = inferd_call(p.port(), "POST", "/v1/chat/completions", forced.dump());
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->status, 200) << r->body;
    const json call = json::parse(r->body, nullptr, false);
    ASSERT_TRUE(call.contains("choices")) << r->body;
    ASSERT_EQ(call["choices"][0]["message"]["tool_calls"].size(), 1u) << r->body;
    expect_valid_call(call["choices"][0]["message"]["tool_calls"][0]);
    EXPECT_EQ(p.terminate(), 0);
    std::filesystem::remove(model);
}
