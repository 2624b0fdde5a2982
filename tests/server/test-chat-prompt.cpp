// Chat requests made ready for the batch loop (server/src/chat-prompt.h) with real templates of
// ../shared/testdata/chat: the template a request renders with, what reaches it (tools, calls
// with text arguments, reasoning_effort), how the output is read (family, reasoning), and when a
// grammar holds the calls.
#include "engine/chat-render.h"
#include "server/src/chat-prompt.h"
#include "testdata.h"

#include <gtest/gtest.h>

namespace {

std::shared_ptr<const chat_renderer> renderer(const std::string & dir, const std::string & name) {
    std::string note, err;
    auto r = chat_renderer::create("", inferd_read_file(dir + "/chat/templates/" + name + ".jinja"), {}, &note, &err);
    EXPECT_TRUE(r && note.empty()) << name << ": " << err << note;
    return r;
}

const char * k_tools = R"([{"type": "function", "function": {"name": "get_weather",
  "parameters": {"type": "object", "properties": {"location": {"type": "string"}}, "required": ["location"]}}}])";
const char * k_strict_tools = R"([{"type": "function", "function": {"name": "get_weather", "strict": true,
  "parameters": {"type": "object", "properties": {"location": {"type": "string"}}, "required": ["location"]}}}])";

chat_request request(const std::string & extra_fields) {
    const std::string body = R"({"messages": [{"role": "user", "content": "Weather in Paris?"}])" +
                             std::string(extra_fields.empty() ? "" : ", ") + extra_fields + "}";
    chat_request cr;
    auto e = chat_request_parse(body, cr);
    EXPECT_FALSE(e.has_value()) << body << ": " << (e ? e->message : "");
    return cr;
}

struct planner {
    std::shared_ptr<const chat_renderer> chat, tools;
    grammar_program_cache grammars;
    nlohmann::ordered_json kwargs;
    bool split = true;

    chat_plan plan(const std::string & fields, std::optional<api_error> * err = nullptr) {
        chat_plan_inputs in{chat.get(), tools.get(), kwargs, split, &grammars};
        chat_plan p;
        std::optional<api_error> e = chat_plan_make(in, request(fields), &p);
        if (err) *err = e;
        else EXPECT_FALSE(e.has_value()) << fields << ": " << (e ? e->message : "");
        return p;
    }
};

}  // namespace

TEST(chat_prompt, hermes_tools_and_grammars) {
    INFERD_REQUIRE_TESTDATA(dir);
    planner pl;
    pl.chat = renderer(dir, "Qwen-Qwen3-0.6B");
    const std::string tools = std::string(R"("tools": )") + k_tools;
    const chat_plan plain = pl.plan("");
    const chat_plan with = pl.plan(tools);
    EXPECT_NE(with.prompt.find("\"name\": \"get_weather\""), std::string::npos) << with.prompt;
    EXPECT_EQ(with.output.family, toolcall::family::hermes);
    EXPECT_TRUE(with.output.parse && with.output.render_control);
    EXPECT_EQ(with.grammar, nullptr) << "auto without a strict tool: no grammar";
    EXPECT_EQ(with.output.opts.tools.size(), 1u);

    EXPECT_NE(pl.plan(std::string(R"("tools": )") + k_strict_tools).grammar, nullptr) << "auto with a strict tool";
    EXPECT_NE(pl.plan(tools + R"(, "tool_choice": "required")").grammar, nullptr);
    EXPECT_NE(pl.plan(tools + R"(, "tool_choice": {"type": "function", "function": {"name": "get_weather"}})").grammar,
              nullptr);
    std::optional<api_error> err;
    pl.plan(tools + R"(, "tool_choice": "required", "response_format": {"type": "json_object"})", &err);
    ASSERT_TRUE(err.has_value());
    EXPECT_EQ(err->param, "tool_choice");
    // A strict tool beside a response_format: the response format holds the output.
    EXPECT_EQ(pl.plan(std::string(R"("tools": )") + k_strict_tools + R"(, "response_format": {"type": "json_object"})").grammar,
              nullptr);

    // tool_choice none: no tools rendered, no calls read; reasoning still split (Qwen3 thinks).
    const chat_plan none = pl.plan(tools + R"(, "tool_choice": "none")");
    EXPECT_EQ(none.prompt, plain.prompt);
    EXPECT_EQ(none.output.family, toolcall::family::none);
    EXPECT_TRUE(none.output.parse);
    EXPECT_TRUE(none.output.opts.tools.is_null());
    // Reasoning kept raw: nothing to parse without tools.
    EXPECT_FALSE(pl.plan(R"("reasoning_format": "none")").output.parse);
    pl.split = false;
    EXPECT_FALSE(pl.plan("").output.parse);
    EXPECT_TRUE(pl.plan(tools).output.parse);
    EXPECT_FALSE(pl.plan(tools).output.split_reasoning);
    EXPECT_TRUE(pl.plan(tools + R"(, "reasoning_format": "auto")").output.split_reasoning);
}

TEST(chat_prompt, messages_and_variables_reach_the_template) {
    INFERD_REQUIRE_TESTDATA(dir);
    planner pl;
    pl.chat = renderer(dir, "Qwen-Qwen3-0.6B");
    // A call with its arguments as text renders as the object; the tool result follows.
    const chat_plan history = pl.plan(R"("messages": [{"role": "user", "content": "Weather?"},
        {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function",
          "function": {"name": "get_weather", "arguments": "{\"location\": \"Paris\"}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "22 C"}])");
    EXPECT_NE(history.prompt.find("<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"location\": \"Paris\"}}\n</tool_call>"),
              std::string::npos)
        << history.prompt;
    EXPECT_NE(history.prompt.find("<tool_response>\n22 C\n</tool_response>"), std::string::npos) << history.prompt;
    // reasoning_effort "none" turns Qwen3's thinking off; the flag's kwargs and the request's.
    const std::string closed = "<think>\n\n</think>\n\n";
    EXPECT_EQ(pl.plan("").prompt.find(closed), std::string::npos);
    EXPECT_NE(pl.plan(R"("reasoning_effort": "none")").prompt.find(closed), std::string::npos);
    pl.kwargs = {{"enable_thinking", false}};
    EXPECT_NE(pl.plan("").prompt.find(closed), std::string::npos);
    EXPECT_EQ(pl.plan(R"("chat_template_kwargs": {"enable_thinking": true})").prompt.find(closed), std::string::npos);
}

TEST(chat_prompt, families_and_variants) {
    INFERD_REQUIRE_TESTDATA(dir);
    const std::string tools = std::string(R"("tools": )") + k_tools;
    const std::string strict = std::string(R"("tools": )") + k_strict_tools;
    planner llama;
    llama.chat = renderer(dir, "meta-llama-Llama-3.1-8B-Instruct");
    EXPECT_EQ(llama.plan(tools).output.family, toolcall::family::llama3_json);
    EXPECT_EQ(llama.plan(strict).grammar, nullptr) << "no call marker: auto stays free";
    EXPECT_NE(llama.plan(tools + R"(, "tool_choice": "required")").grammar, nullptr);
    EXPECT_FALSE(llama.plan("").output.parse) << "no thinking markers, no tools: raw content";

    planner glm;
    glm.chat = renderer(dir, "GLM-4.6");
    std::optional<api_error> err;
    glm.plan(tools + R"(, "tool_choice": "required")", &err);
    ASSERT_TRUE(err.has_value());
    EXPECT_EQ(err->param, "tool_choice");
    EXPECT_NE(err->message.find("'glm'"), std::string::npos) << err->message;

    // DeepSeek R1 with enable_thinking opens <think> in the prompt: the output starts in
    // reasoning (without it the template closes the block at once).
    planner r1;
    r1.chat = renderer(dir, "deepseek-ai-DeepSeek-R1-Distill-Qwen-32B");
    EXPECT_FALSE(r1.plan("").output.opts.reasoning_open);
    EXPECT_TRUE(r1.plan(R"("chat_template_kwargs": {"enable_thinking": true})").output.opts.reasoning_open);

    // gpt-oss: its channels are read even without tools.
    planner oss;
    oss.chat = renderer(dir, "openai-gpt-oss-120b");
    EXPECT_EQ(oss.plan("").output.family, toolcall::family::gpt_oss_harmony);
    EXPECT_EQ(oss.plan(R"("reasoning_effort": "high")").prompt.find("Reasoning: high") != std::string::npos, true);

    // A template that writes no calls: generic JSON; the tool_use variant for requests with tools.
    planner plain;
    std::string note, e;
    plain.chat = chat_renderer::create("chatml", "", {}, &note, &e);
    ASSERT_TRUE(plain.chat) << e;
    EXPECT_EQ(plain.plan(tools).output.family, toolcall::family::generic);
    plain.tools = renderer(dir, "Qwen-Qwen3-0.6B");
    EXPECT_EQ(plain.plan(tools).output.family, toolcall::family::hermes);
    EXPECT_EQ(plain.plan("").prompt.find("<tools>"), std::string::npos);
    EXPECT_NE(plain.plan(tools).prompt.find("<tools>"), std::string::npos);
}

// The tool-call grammar in two steps (prepare, then lookup or compile), and from the cache the
// second time: the same tool set with the same options gives the same program.
TEST(chat_prompt, tool_grammars_come_from_the_cache) {
    INFERD_REQUIRE_TESTDATA(dir);
    planner pl;
    pl.chat = renderer(dir, "Qwen-Qwen3-0.6B");
    const std::string fields = std::string(R"("tools": )") + k_tools + R"(, "tool_choice": "required")";
    chat_plan_inputs in{pl.chat.get(), nullptr, pl.kwargs, pl.split, &pl.grammars};
    chat_plan prepared;
    ASSERT_FALSE(chat_plan_prepare(in, request(fields), &prepared).has_value());
    ASSERT_TRUE(prepared.tool_grammar.has_value());
    EXPECT_EQ(prepared.grammar, nullptr) << "prepare compiles nothing";
    std::optional<api_error> err;
    EXPECT_FALSE(chat_plan_lookup(in, &prepared, &err)) << "not compiled yet";
    ASSERT_FALSE(chat_plan_compile(in, &prepared).has_value());
    ASSERT_NE(prepared.grammar, nullptr);

    const chat_plan again = pl.plan(fields);
    EXPECT_EQ(again.grammar, prepared.grammar);
    chat_plan looked;
    ASSERT_FALSE(chat_plan_prepare(in, request(fields), &looked).has_value());
    ASSERT_TRUE(chat_plan_lookup(in, &looked, &err));
    EXPECT_FALSE(err.has_value());
    EXPECT_EQ(looked.grammar, prepared.grammar);
    // Another option (one call only): another grammar.
    EXPECT_NE(pl.plan(fields + R"(, "parallel_tool_calls": false)").grammar, prepared.grammar);
    // No tools: nothing to look up.
    chat_plan plain;
    ASSERT_FALSE(chat_plan_prepare(in, request(""), &plain).has_value());
    EXPECT_FALSE(plain.tool_grammar.has_value());
    EXPECT_TRUE(chat_plan_lookup(in, &plain, &err));
}
