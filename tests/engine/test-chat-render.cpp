// chat_renderer (engine/chat-render.h): the model's Jinja template run as written (variables,
// tools, extra variables, BOS not doubled, the template's own refusals as errors), the
// --chat-template forms (a family name, a file, Jinja text, a bad value), and the fallbacks
// (no template, a template that does not parse).
#include "engine/chat-render.h"
#include "testdata.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

using nlohmann::ordered_json;

namespace {

std::string read_text(const std::string & path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

const ordered_json k_chat = ordered_json::parse(R"([{"role":"system","content":"Be brief."},{"role":"user","content":"Hi"}])");

std::string render_ok(const chat_renderer & r, const ordered_json & msgs, bool gen = true,
                      const ordered_json & tools = ordered_json(), const ordered_json & kwargs = ordered_json()) {
    std::string out, err;
    EXPECT_TRUE(r.render(msgs, tools, gen, kwargs, &out, &err)) << err;
    return out;
}

}  // namespace

TEST(chat_render, jinja_text_with_every_variable) {
    const std::string tmpl =
        "{{ bos_token }}{% for m in messages %}[{{ m.role }}]{{ m.content }}{{ eos_token }}{% endfor %}"
        "{% if tools %}T{{ tools | length }}{% endif %}{% if add_generation_prompt %}[assistant]{% endif %}"
        "{{ extra | default('') }}";
    std::string note, err;
    auto r = chat_renderer::create(tmpl, "", {"<s>", "</s>", false}, &note, &err);
    ASSERT_TRUE(r) << err;
    EXPECT_EQ(r->describe(), "Jinja template --chat-template");
    EXPECT_EQ(render_ok(*r, k_chat), "<s>[system]Be brief.</s>[user]Hi</s>[assistant]");
    EXPECT_EQ(render_ok(*r, k_chat, false), "<s>[system]Be brief.</s>[user]Hi</s>");
    const ordered_json tools = ordered_json::parse(R"([{"type":"function","function":{"name":"f"}}])");
    EXPECT_EQ(render_ok(*r, k_chat, true, tools, {{"extra", "!"}}), "<s>[system]Be brief.</s>[user]Hi</s>T1[assistant]!");
}

TEST(chat_render, bos_text_not_doubled_when_the_tokenizer_adds_it) {
    auto r = chat_renderer::create("{{ bos_token }}{{ messages[0].content }}", "", {"<s>", "</s>", true}, nullptr, nullptr);
    ASSERT_TRUE(r);
    EXPECT_EQ(render_ok(*r, k_chat), "Be brief.");  // the tokenizer writes BOS
    auto keep = chat_renderer::create("x{{ bos_token }}", "", {"<s>", "</s>", true}, nullptr, nullptr);
    EXPECT_EQ(render_ok(*keep, k_chat), "x<s>");  // only a leading one is dropped
}

TEST(chat_render, the_templates_refusal_is_the_error) {
    auto r = chat_renderer::create("{% if messages[0].role == 'system' %}{{ raise_exception('System role not supported') }}{% endif %}ok",
                                   "", {}, nullptr, nullptr);
    ASSERT_TRUE(r);
    std::string out, err;
    EXPECT_FALSE(r->render(k_chat, ordered_json(), true, ordered_json(), &out, &err));
    EXPECT_NE(err.find("System role not supported"), std::string::npos) << err;
    EXPECT_EQ(render_ok(*r, ordered_json::parse(R"([{"role":"user","content":"Hi"}])")), "ok");
}

TEST(chat_render, model_template_name_file_and_bad_values) {
    const std::string model_tmpl = "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
                                   "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}";
    std::string note, err;
    auto own = chat_renderer::create("", model_tmpl, {}, &note, &err);
    ASSERT_TRUE(own) << err;
    EXPECT_EQ(note, "");
    EXPECT_EQ(own->describe(), "the model's Jinja template");
    EXPECT_EQ(render_ok(*own, k_chat), "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
    ASSERT_FALSE(own->stop_texts().empty());
    EXPECT_EQ(own->stop_texts()[0], "<|im_end|>");  // recognised as ChatML

    auto named = chat_renderer::create("llama3", model_tmpl, {"<|begin_of_text|>", "<|eot_id|>", true}, &note, &err);
    ASSERT_TRUE(named) << err;
    EXPECT_EQ(named->describe(), "llama3");
    EXPECT_EQ(render_ok(*named, ordered_json::parse(R"([{"role":"user","content":"Hi"}])")),
              "<|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n");

    const std::string file = testing::TempDir() + "chat-render-test.jinja";
    std::ofstream(file) << "F{{ messages | length }}";
    auto from_file = chat_renderer::create(file, model_tmpl, {}, &note, &err);
    ASSERT_TRUE(from_file) << err;
    EXPECT_EQ(render_ok(*from_file, k_chat), "F2");
    std::remove(file.c_str());

    EXPECT_FALSE(chat_renderer::create("no-such-template", model_tmpl, {}, &note, &err));
    EXPECT_NE(err.find("chatml"), std::string::npos) << err;  // the names are listed
    EXPECT_FALSE(chat_renderer::create("{% if %}", model_tmpl, {}, &note, &err));
    EXPECT_NE(err.find("--chat-template:1:"), std::string::npos) << err;  // where it fails
}

TEST(chat_render, fallbacks_say_so) {
    std::string note, err;
    auto none = chat_renderer::create("", "", {}, &note, &err);
    ASSERT_TRUE(none);
    EXPECT_EQ(none->describe(), "chatml");
    EXPECT_NE(note.find("no chat template"), std::string::npos) << note;
    // A template the engine cannot parse: the family its text is recognised as.
    auto broken = chat_renderer::create("", "{% for message in messages %}<|start_header_id|>{{ message['role'] }}<|end_header_id|>\n\n"
                                        "{{ message['content'] | trim }}<|eot_id|>{% endfo %}",
                                        {}, &note, &err);
    ASSERT_TRUE(broken);
    EXPECT_EQ(broken->describe(), "llama3");
    EXPECT_NE(note.find("does not parse"), std::string::npos) << note;
    // Templates that reach a limit of the engine on a short conversation (recursion without end,
    // nested loops of 10^12 iterations, doubling a string): the same fallback, or an error for
    // --chat-template; never a render per request that runs into the limit.
    for (const char * hostile : {"{% macro f(n) %}{{ f(n) }}{% endmacro %}{{ f(1) }}",
                                 "{% for i in range(1000000) %}{% for j in range(1000000) %}x{% endfor %}{% endfor %}",
                                 "{% set ns = namespace(s='x') %}{% for i in range(100) %}{% set ns.s = ns.s ~ ns.s %}{% endfor %}{{ ns.s }}"}) {
        auto fallback = chat_renderer::create("", std::string("<|im_start|>") + hostile, {}, &note, &err);
        ASSERT_TRUE(fallback) << hostile;
        EXPECT_EQ(fallback->describe(), "chatml") << hostile;
        EXPECT_NE(note.find("reaches a limit"), std::string::npos) << note;
        err.clear();
        EXPECT_FALSE(chat_renderer::create(hostile, "", {}, &note, &err)) << hostile;
        EXPECT_NE(err.find("--chat-template"), std::string::npos) << err;
    }
    // A family renders content parts and reasoning too.
    EXPECT_EQ(render_ok(*none, ordered_json::parse(R"([{"role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}])")),
              "<|im_start|>user\na\nb<|im_end|>\n<|im_start|>assistant\n");
}

// The reference templates: Qwen3's enable_thinking through the extra variables, and a template
// that refuses a system message.
TEST(chat_render, reference_templates) {
    INFERD_REQUIRE_TESTDATA(dir);
    const std::string qwen3 = read_text(dir + "/chat/templates/Qwen-Qwen3-0.6B.jinja");
    auto r = chat_renderer::create("", qwen3, {"", "<|im_end|>", false}, nullptr, nullptr);
    ASSERT_TRUE(r);
    const ordered_json user = ordered_json::parse(R"([{"role":"user","content":"Hi"}])");
    EXPECT_EQ(render_ok(*r, user, true, ordered_json(), {{"enable_thinking", false}}),
              "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n");
    EXPECT_EQ(render_ok(*r, user), "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");

    const std::string gemma = read_text(dir + "/chat/templates/google-gemma-2-2b-it.jinja");
    auto g = chat_renderer::create("", gemma, {"<bos>", "<eos>", true}, nullptr, nullptr);
    ASSERT_TRUE(g);
    std::string out, err;
    EXPECT_FALSE(g->render(k_chat, ordered_json(), true, ordered_json(), &out, &err));
    EXPECT_NE(err.find("System role not supported"), std::string::npos) << err;
    EXPECT_EQ(render_ok(*g, user), "<start_of_turn>user\nHi<end_of_turn>\n<start_of_turn>model\n");  // no BOS text
}
