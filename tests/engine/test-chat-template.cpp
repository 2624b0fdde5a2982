// test-chat-template.cpp — chat template families: rendering of a 3-turn conversation per family
// (expected strings derived by hand from each family's official Jinja template), recognition of
// real template sources, the templates stored in the shipped models, names, and errors.
#include "engine/chat-template.h"
#include "testdata.h"

#include "ggml/gguf.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

namespace {

// system, user, assistant, user. The reply carries surrounding spaces so that the families that
// trim contents (llama3, gemma, command-r, mistral-v3, llama2-sys-strip) show it.
const std::vector<chat_message> conversation = {
    {"system", "You are a helpful assistant"},
    {"user", "Hello"},
    {"assistant", " Hi there "},
    {"user", "Who are you"},
};

struct render_case {
    chat_template_kind kind;
    std::string expected;        // without the generation prompt
    std::string expected_prompt; // with it
};

const std::vector<render_case> & render_cases() {
    static const std::vector<render_case> cases = [] {
        std::vector<render_case> v;
        {
            const std::string s =
                "<|im_start|>system\nYou are a helpful assistant<|im_end|>\n"
                "<|im_start|>user\nHello<|im_end|>\n"
                "<|im_start|>assistant\n Hi there <|im_end|>\n"
                "<|im_start|>user\nWho are you<|im_end|>\n";
            v.push_back({chat_template_kind::chatml, s, s + "<|im_start|>assistant\n"});
            // Qwen3: the reply precedes the last user message, so it shows its answer alone.
            v.push_back({chat_template_kind::qwen3, s, s + "<|im_start|>assistant\n"});
        }
        {
            // Mistral Instruct v0.2's template; the system text goes in front of the first user
            // text, as llama-server does (that template itself rejects a system message).
            const std::string s = "[INST] You are a helpful assistant\nHello [/INST] Hi there </s>"
                                  "[INST] Who are you [/INST]";
            v.push_back({chat_template_kind::llama2, s, s});
        }
        {
            const std::string head = "[INST] <<SYS>>\nYou are a helpful assistant\n<</SYS>>\n\nHello [/INST]";
            const std::string sys = head + "  Hi there  </s>[INST] Who are you [/INST]";
            const std::string bos = head + "  Hi there  </s><s>[INST] Who are you [/INST]";
            const std::string strip = head + " Hi there </s>[INST] Who are you [/INST]";
            v.push_back({chat_template_kind::llama2_sys, sys, sys});
            v.push_back({chat_template_kind::llama2_sys_bos, bos, bos});
            v.push_back({chat_template_kind::llama2_sys_strip, strip, strip});
        }
        {
            // v1: system text opens the first user message; v3 and v3-tekken: the last one.
            const std::string v1 = " [INST] You are a helpful assistant\n\nHello [/INST]  Hi there </s>"
                                   " [INST] Who are you [/INST]";
            const std::string v3 = "[INST] Hello[/INST] Hi there</s>"
                                   "[INST] You are a helpful assistant\n\nWho are you[/INST]";
            const std::string v3t = "[INST]Hello[/INST] Hi there </s>"
                                    "[INST]You are a helpful assistant\n\nWho are you[/INST]";
            const std::string v7 = "[SYSTEM_PROMPT] You are a helpful assistant[/SYSTEM_PROMPT]"
                                   "[INST] Hello[/INST]  Hi there </s>[INST] Who are you[/INST]";
            const std::string v7t = "[SYSTEM_PROMPT]You are a helpful assistant[/SYSTEM_PROMPT]"
                                    "[INST]Hello[/INST] Hi there </s>[INST]Who are you[/INST]";
            v.push_back({chat_template_kind::mistral_v1, v1, v1});
            v.push_back({chat_template_kind::mistral_v3, v3, v3});
            v.push_back({chat_template_kind::mistral_v3_tekken, v3t, v3t});
            v.push_back({chat_template_kind::mistral_v7, v7, v7});
            v.push_back({chat_template_kind::mistral_v7_tekken, v7t, v7t});
        }
        {
            const std::string s =
                "<|start_header_id|>system<|end_header_id|>\n\nYou are a helpful assistant<|eot_id|>"
                "<|start_header_id|>user<|end_header_id|>\n\nHello<|eot_id|>"
                "<|start_header_id|>assistant<|end_header_id|>\n\nHi there<|eot_id|>"
                "<|start_header_id|>user<|end_header_id|>\n\nWho are you<|eot_id|>";
            v.push_back({chat_template_kind::llama3, s,
                         s + "<|start_header_id|>assistant<|end_header_id|>\n\n"});
        }
        {
            const std::string s = "<|system|>\nYou are a helpful assistant</s>\n<|user|>\nHello</s>\n"
                                  "<|assistant|>\n Hi there </s>\n<|user|>\nWho are you</s>\n";
            v.push_back({chat_template_kind::zephyr, s, s + "<|assistant|>\n"});
        }
        {
            // Phi-3.5's template: EOS closes a conversation rendered without the generation prompt.
            const std::string s = "<|system|>\nYou are a helpful assistant<|end|>\n<|user|>\nHello<|end|>\n"
                                  "<|assistant|>\n Hi there <|end|>\n<|user|>\nWho are you<|end|>\n";
            v.push_back({chat_template_kind::phi3, s + "</s>", s + "<|assistant|>\n"});
        }
        {
            const std::string s =
                "<|im_start|>system<|im_sep|>You are a helpful assistant<|im_end|>"
                "<|im_start|>user<|im_sep|>Hello<|im_end|>"
                "<|im_start|>assistant<|im_sep|> Hi there <|im_end|>"
                "<|im_start|>user<|im_sep|>Who are you<|im_end|>";
            v.push_back({chat_template_kind::phi4, s, s + "<|im_start|>assistant<|im_sep|>"});
        }
        {
            const std::string s =
                "<start_of_turn>user\nYou are a helpful assistant\n\nHello<end_of_turn>\n"
                "<start_of_turn>model\nHi there<end_of_turn>\n"
                "<start_of_turn>user\nWho are you<end_of_turn>\n";
            v.push_back({chat_template_kind::gemma, s, s + "<start_of_turn>model\n"});
        }
        {
            const std::string s =
                "<|START_OF_TURN_TOKEN|><|SYSTEM_TOKEN|>You are a helpful assistant<|END_OF_TURN_TOKEN|>"
                "<|START_OF_TURN_TOKEN|><|USER_TOKEN|>Hello<|END_OF_TURN_TOKEN|>"
                "<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>Hi there<|END_OF_TURN_TOKEN|>"
                "<|START_OF_TURN_TOKEN|><|USER_TOKEN|>Who are you<|END_OF_TURN_TOKEN|>";
            v.push_back({chat_template_kind::command_r, s, s + "<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>"});
        }
        {
            const std::string tail = "USER: Hello\nASSISTANT:  Hi there </s>\nUSER: Who are you\n";
            const std::string s = "You are a helpful assistant\n\n" + tail;
            const std::string o = "SYSTEM: You are a helpful assistant\n" + tail;
            v.push_back({chat_template_kind::vicuna, s, s + "ASSISTANT:"});
            v.push_back({chat_template_kind::vicuna_orca, o, o + "ASSISTANT:"});
        }
        return v;
    }();
    return cases;
}

std::string render(chat_template_kind kind, const std::vector<chat_message> & msgs, bool prompt) {
    std::string out, err;
    EXPECT_TRUE(chat_template_apply(kind, msgs, prompt, "<s>", "</s>", &out, &err)) << err;
    return out;
}

}  // namespace

TEST(ChatTemplate, EveryFamilyRendersTheConversation) {
    std::set<chat_template_kind> covered;
    for (const render_case & c : render_cases()) {
        SCOPED_TRACE(std::string(chat_template_name(c.kind)));
        EXPECT_EQ(render(c.kind, conversation, false), c.expected);
        EXPECT_EQ(render(c.kind, conversation, true), c.expected_prompt);
        covered.insert(c.kind);
    }
    EXPECT_EQ(covered.size(), chat_template_names().size());  // no family left untested
}

TEST(ChatTemplate, BosAndEosComeFromTheArguments) {
    std::string out, err;
    ASSERT_TRUE(chat_template_apply(chat_template_kind::llama2_sys_bos, conversation, true, "<BOS>",
                                    "<EOS>", &out, &err));
    EXPECT_EQ(out, "[INST] <<SYS>>\nYou are a helpful assistant\n<</SYS>>\n\nHello [/INST]  Hi there  <EOS>"
                   "<BOS>[INST] Who are you [/INST]");
    const std::vector<chat_message> two = {{"user", "a"}, {"assistant", "b"}};
    ASSERT_TRUE(chat_template_apply(chat_template_kind::zephyr, two, false, "<s>", "<|endoftext|>", &out,
                                    &err));
    EXPECT_EQ(out, "<|user|>\na<|endoftext|>\n<|assistant|>\nb<|endoftext|>\n");
    ASSERT_TRUE(chat_template_apply(chat_template_kind::mistral_v7, two, false, "<s>", "<e>", &out, &err));
    EXPECT_EQ(out, "[INST] a[/INST] b<e>");
    // The leading BOS is never rendered: the tokenizer adds it.
    ASSERT_TRUE(chat_template_apply(chat_template_kind::llama3, two, false, "<|begin_of_text|>", "", &out,
                                    &err));
    EXPECT_EQ(out.find("<|begin_of_text|>"), std::string::npos);
}

TEST(ChatTemplate, EmptyConversation) {
    std::string out = "stale", err;
    ASSERT_TRUE(chat_template_apply(chat_template_kind::chatml, {}, true, "", "", &out, &err));
    EXPECT_EQ(out, "<|im_start|>assistant\n");
    ASSERT_TRUE(chat_template_apply(chat_template_kind::llama2, {}, false, "", "", &out, &err));
    EXPECT_EQ(out, "");
}

TEST(ChatTemplate, UnknownRoleIsAnError) {
    const std::vector<chat_message> msgs = {{"user", "hi"}, {"tool", "42"}};
    for (std::string_view name : chat_template_names()) {
        SCOPED_TRACE(std::string(name));
        std::string out, err;
        EXPECT_FALSE(
            chat_template_apply(*chat_template_from_name(name), msgs, true, "<s>", "</s>", &out, &err));
        EXPECT_NE(err.find("message 1"), std::string::npos) << err;
        EXPECT_NE(err.find("unknown role 'tool'"), std::string::npos) << err;
    }
    std::string out;
    EXPECT_FALSE(chat_template_apply(chat_template_kind::chatml, msgs, true, "", "", &out, nullptr));
    const std::vector<chat_message> upper = {{"User", "hi"}};  // roles are case sensitive
    EXPECT_FALSE(chat_template_apply(chat_template_kind::chatml, upper, true, "", "", &out, nullptr));
    std::string err;
    EXPECT_FALSE(chat_template_apply(chat_template_kind::chatml, conversation, true, "", "", nullptr, &err));
    EXPECT_FALSE(err.empty());
}

TEST(ChatTemplate, SystemWithoutUserTurnIsAnErrorWhereThereIsNoSystemRole) {
    const std::vector<chat_message> only_system = {{"system", "Be brief."}};
    const std::vector<chat_message> system_then_assistant = {{"system", "Be brief."}, {"assistant", "ok"}};
    for (chat_template_kind kind : {chat_template_kind::gemma, chat_template_kind::mistral_v1,
                                    chat_template_kind::mistral_v3, chat_template_kind::mistral_v3_tekken}) {
        SCOPED_TRACE(std::string(chat_template_name(kind)));
        std::string out, err;
        EXPECT_FALSE(chat_template_apply(kind, only_system, true, "<s>", "</s>", &out, &err));
        EXPECT_NE(err.find("system"), std::string::npos) << err;
        err.clear();
        EXPECT_FALSE(chat_template_apply(kind, system_then_assistant, true, "<s>", "</s>", &out, &err));
        EXPECT_FALSE(err.empty());
    }
    // Families with a system form render it alone.
    EXPECT_EQ(render(chat_template_kind::chatml, only_system, false),
              "<|im_start|>system\nBe brief.<|im_end|>\n");
    EXPECT_EQ(render(chat_template_kind::mistral_v7, only_system, false),
              "[SYSTEM_PROMPT] Be brief.[/SYSTEM_PROMPT]");
}

TEST(ChatTemplate, GemmaAndMistralPlaceTheSystemText) {
    // Gemma: a user turn after an assistant one does not repeat the system text; the system text is
    // written as given (Gemma 3's template trims only the turns' own contents).
    const std::vector<chat_message> msgs = {{"system", " Rules "}, {"user", " q1"}, {"assistant", "a1"},
                                            {"user", "q2"}};
    EXPECT_EQ(render(chat_template_kind::gemma, msgs, true),
              "<start_of_turn>user\n Rules \n\nq1<end_of_turn>\n<start_of_turn>model\na1<end_of_turn>\n"
              "<start_of_turn>user\nq2<end_of_turn>\n<start_of_turn>model\n");
    // mistral-v3 without a system message: plain turns.
    const std::vector<chat_message> plain = {{"user", "q1"}, {"assistant", "a1"}, {"user", "q2"}};
    EXPECT_EQ(render(chat_template_kind::mistral_v3, plain, true), "[INST] q1[/INST] a1</s>[INST] q2[/INST]");
    // mistral-v1 with the system message placed after the first user turn still opens it.
    const std::vector<chat_message> late = {{"user", "q1"}, {"system", "S"}, {"assistant", "a1"}};
    EXPECT_EQ(render(chat_template_kind::mistral_v1, late, false), " [INST] S\n\nq1 [/INST] a1</s>");
}

TEST(ChatTemplate, Phi3MatchesTheShippedMiniTemplate) {
    // ggml-vocab-phi-3.gguf's template writes "<|assistant|>\n" after every user turn and the
    // reply then; with the generation prompt the two layouts agree (BOS aside).
    const std::vector<chat_message> msgs = {{"user", "q1"}, {"assistant", "a1"}, {"user", "q2"}};
    EXPECT_EQ(render(chat_template_kind::phi3, msgs, true),
              "<|user|>\nq1<|end|>\n<|assistant|>\na1<|end|>\n<|user|>\nq2<|end|>\n<|assistant|>\n");
}

TEST(ChatTemplate, NamesRoundTrip) {
    const std::vector<std::string_view> names = chat_template_names();
    EXPECT_GE(names.size(), 18u);
    std::set<std::string_view> unique(names.begin(), names.end());
    EXPECT_EQ(unique.size(), names.size());
    std::set<chat_template_kind> kinds;
    for (std::string_view n : names) {
        const std::optional<chat_template_kind> k = chat_template_from_name(n);
        ASSERT_TRUE(k.has_value()) << n;
        EXPECT_EQ(chat_template_name(*k), n);
        kinds.insert(*k);
    }
    EXPECT_EQ(kinds.size(), names.size());
    for (std::string_view n : {"chatml", "llama2", "llama3", "zephyr", "phi3", "gemma", "mistral-v7"}) {
        EXPECT_TRUE(chat_template_from_name(n).has_value()) << n;
    }
    EXPECT_EQ(chat_template_from_name("mistral"), chat_template_kind::llama2);
    EXPECT_FALSE(chat_template_from_name("").has_value());
    EXPECT_FALSE(chat_template_from_name("ChatML").has_value());
    EXPECT_FALSE(chat_template_from_name("llama-3").has_value());
    EXPECT_FALSE(chat_template_from_name("<|im_start|>").has_value());  // a template is not a name
}

TEST(ChatTemplate, ResolveLikeLlamaServer) {
    const std::string qwen = "{% for message in messages %}{{'<|im_start|>' + message['role'] + "
                             "'\\n' + message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}";
    const std::string gemma = "{{ '<start_of_turn>' + role + '\\n' + message['content'] | trim }}";
    std::string note, err;
    // A name wins over the model's template.
    EXPECT_EQ(chat_template_resolve("llama3", qwen, &note, &err), chat_template_kind::llama3);
    EXPECT_EQ(note, "");
    // A Jinja source on the command line is recognised.
    EXPECT_EQ(chat_template_resolve(gemma, qwen, &note, &err), chat_template_kind::gemma);
    // Nothing requested: the model's template.
    EXPECT_EQ(chat_template_resolve("", qwen, &note, &err), chat_template_kind::chatml);
    EXPECT_EQ(note, "");
    EXPECT_EQ(chat_template_resolve("", gemma, &note, &err), chat_template_kind::gemma);
    // No template, or an unknown one: ChatML with a note.
    EXPECT_EQ(chat_template_resolve("", "", &note, &err), chat_template_kind::chatml);
    EXPECT_NE(note.find("no chat template"), std::string::npos);
    EXPECT_EQ(chat_template_resolve("", "{{ messages[0]['content'] }}", &note, nullptr),
              chat_template_kind::chatml);
    EXPECT_NE(note.find("not recognised"), std::string::npos);
    // A bad flag value is an error naming the choices.
    err.clear();
    EXPECT_FALSE(chat_template_resolve("llama-3", qwen, &note, &err).has_value());
    EXPECT_NE(err.find("'llama-3'"), std::string::npos) << err;
    EXPECT_NE(err.find("mistral-v7-tekken"), std::string::npos) << err;
    EXPECT_FALSE(chat_template_resolve("nope", "", nullptr, nullptr).has_value());
}

TEST(ChatTemplate, StopTexts) {
    using texts = std::vector<std::string_view>;
    EXPECT_EQ(chat_template_stop_texts(chat_template_kind::chatml), texts{"<|im_end|>"});
    EXPECT_EQ(chat_template_stop_texts(chat_template_kind::qwen3), texts{"<|im_end|>"});
    EXPECT_EQ(chat_template_stop_texts(chat_template_kind::llama3), texts{"<|eot_id|>"});
    EXPECT_EQ(chat_template_stop_texts(chat_template_kind::gemma), texts{"<end_of_turn>"});
    EXPECT_EQ(chat_template_stop_texts(chat_template_kind::phi3), texts{"<|end|>"});
    EXPECT_TRUE(chat_template_stop_texts(chat_template_kind::zephyr).empty());  // EOS ends turns
    EXPECT_TRUE(chat_template_stop_texts(chat_template_kind::mistral_v3).empty());
    // Every stop text is the turn end the renderer writes after an assistant message.
    for (const render_case & c : render_cases()) {
        for (std::string_view stop : chat_template_stop_texts(c.kind)) {
            EXPECT_NE(c.expected.find(std::string(stop)), std::string::npos) << chat_template_name(c.kind);
        }
    }
}

TEST(ChatTemplate, ShippedModelsTemplates) {
    INFERD_REQUIRE_TESTDATA(dir);
    struct model_case {
        std::string path;
        chat_template_kind kind;
    };
    const std::vector<model_case> models = {
        {dir + "/models/tiny-llama-f32.gguf", chat_template_kind::zephyr},
        {dir + "/models/tiny-qwen2-f16.gguf", chat_template_kind::chatml},
        {dir + "/vocab/ggml-vocab-phi-3.gguf", chat_template_kind::phi3},
    };
    for (const model_case & m : models) {
        SCOPED_TRACE(m.path);
        std::unique_ptr<gguf_file> f;
        gguf_result r = gguf_file::open(m.path, gguf_open_options{}, &f);
        ASSERT_TRUE(r) << r.message;
        std::string jinja;
        r = f->metadata().get_string("tokenizer.chat_template", &jinja);
        ASSERT_TRUE(r) << r.message;
        EXPECT_EQ(chat_template_detect(jinja), m.kind);
    }
    // A file without the key: the caller falls back to ChatML.
    std::unique_ptr<gguf_file> f;
    ASSERT_TRUE(gguf_file::open(dir + "/models/stories260K-f32.gguf", gguf_open_options{}, &f));
    std::string jinja;
    EXPECT_FALSE(f->metadata().get_string("tokenizer.chat_template", &jinja));
    EXPECT_EQ(chat_template_detect(jinja).value_or(chat_template_kind::chatml), chat_template_kind::chatml);
}

// Template sources as the models ship them (tokenizer_config.json's chat_template, JSON-decoded:
// the Jinja string literals keep their backslash escapes).
namespace {

struct jinja_case {
    const char * model;
    std::string source;
    std::optional<chat_template_kind> kind;
};

const std::vector<jinja_case> & jinja_cases() {
    static const std::vector<jinja_case> cases = {
        {"Qwen2.5-Instruct (abridged tools part)",
         R"J({%- if tools %}{{- '<|im_start|>system\n' }}{%- if messages[0]['role'] == 'system' %}{{- messages[0]['content'] }}{%- else %}{{- 'You are Qwen, created by Alibaba Cloud. You are a helpful assistant.' }}{%- endif %}{{- "<|im_end|>\n" }}{%- else %}{%- if messages[0]['role'] == 'system' %}{{- '<|im_start|>system\n' + messages[0]['content'] + '<|im_end|>\n' }}{%- else %}{{- '<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n' }}{%- endif %}{%- endif %}{%- for message in messages %}{%- if (message.role == "user") or (message.role == "system" and not loop.first) %}{{- '<|im_start|>' + message.role + '\n' + message.content + '<|im_end|>' + '\n' }}{%- elif message.role == "assistant" %}{{- '<|im_start|>' + message.role + '\n' + message.content + '<|im_end|>\n' }}{%- endif %}{%- endfor %}{%- if add_generation_prompt %}{{- '<|im_start|>assistant\n' }}{%- endif %})J",
         chat_template_kind::chatml},
        {"Qwen3 (abridged: the reasoning part)",
         R"J({%- set ns = namespace(multi_step_tool=true, last_query_index=messages|length - 1) %}{%- for message in messages %}{%- if (message.role == "user") or (message.role == "system" and not loop.first) %}{{- '<|im_start|>' + message.role + '\n' + message.content + '<|im_end|>' + '\n' }}{%- elif message.role == "assistant" %}{%- if loop.index0 > ns.last_query_index %}{{- '<|im_start|>' + message.role + '\n<think>\n' + reasoning_content.strip('\n') + '\n</think>\n\n' + content.lstrip('\n') }}{%- else %}{{- '<|im_start|>' + message.role + '\n' + content }}{%- endif %}{{- '<|im_end|>\n' }}{%- endif %}{%- endfor %}{%- if add_generation_prompt %}{{- '<|im_start|>assistant\n' }}{%- if enable_thinking is defined and enable_thinking is false %}{{- '<think>\n\n</think>\n\n' }}{%- endif %}{%- endif %})J",
         chat_template_kind::qwen3},
        {"OpenHermes-2.5",
         R"J({% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %})J",
         chat_template_kind::chatml},
        {"Mistral-7B-Instruct-v0.2",
         R"J({{ bos_token }}{% for message in messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}{% if message['role'] == 'user' %}{{ '[INST] ' + message['content'] + ' [/INST]' }}{% elif message['role'] == 'assistant' %}{{ message['content'] + eos_token}}{% else %}{{ raise_exception('Only user and assistant roles are supported!') }}{% endif %}{% endfor %})J",
         chat_template_kind::llama2},
        {"Llama-2-7b-chat",
         R"J({% if messages[0]['role'] == 'system' %}{% set loop_messages = messages[1:] %}{% set system_message = messages[0]['content'] %}{% else %}{% set loop_messages = messages %}{% set system_message = false %}{% endif %}{% for message in loop_messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}{% if loop.index0 == 0 and system_message != false %}{% set content = '<<SYS>>\n' + system_message + '\n<</SYS>>\n\n' + message['content'] %}{% else %}{% set content = message['content'] %}{% endif %}{% if message['role'] == 'user' %}{{ bos_token + '[INST] ' + content.strip() + ' [/INST]' }}{% elif message['role'] == 'assistant' %}{{ ' '  + content.strip() + ' ' + eos_token }}{% endif %}{% endfor %})J",
         chat_template_kind::llama2_sys_bos},
        {"vigogne-2-70b-chat",
         R"J({{ bos_token }}{% if messages[0]['role'] == 'system' %}{% set loop_messages = messages[1:] %}{% set system_message = messages[0]['content'] %}{% else %}{% set loop_messages = messages %}{% set system_message = false %}{% endif %}{% for message in loop_messages %}{% if loop.index0 == 0 and system_message != false %}{% set content = '<<SYS>>\n' + system_message + '\n<</SYS>>\n\n' + message['content'] %}{% else %}{% set content = message['content'] %}{% endif %}{% if message['role'] == 'user' %}{{ '[INST] ' + content.strip() + ' [/INST]' }}{% elif message['role'] == 'assistant' %}{{ ' '  + content.strip() + ' ' + eos_token }}{% endif %}{% endfor %})J",
         chat_template_kind::llama2_sys_strip},
        {"Llama 2 layout without stripping",
         R"J({% for message in messages %}{% if message['role'] == 'system' %}{{ '[INST] <<SYS>>\n' + message['content'] + '\n<</SYS>>\n\n' }}{% elif message['role'] == 'user' %}{{ message['content'] + ' [/INST]' }}{% elif message['role'] == 'assistant' %}{{ ' ' + message['content'] + ' ' + eos_token }}{% endif %}{% endfor %})J",
         chat_template_kind::llama2_sys},
        {"Mistral tokenizer v1 (mistral-common)",
         R"J({{ bos_token }}{% for message in messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}{% if message['role'] == 'user' %}{{ ' [INST] ' + message['content'] + ' [/INST]' }}{% elif message['role'] == 'assistant' %}{{ ' ' + message['content'] + eos_token }}{% else %}{{ raise_exception('Only user and assistant roles are supported!') }}{% endif %}{% endfor %})J",
         chat_template_kind::mistral_v1},
        {"Mistral-7B-Instruct-v0.3",
         R"J({%- if messages[0]["role"] == "system" %}{%- set system_message = messages[0]["content"] %}{%- set loop_messages = messages[1:] %}{%- else %}{%- set loop_messages = messages %}{%- endif %}{{- bos_token }}{%- for message in loop_messages %}{%- if message["role"] == "user" %}{%- if tools is not none and (message == user_messages[-1]) %}{{- "[AVAILABLE_TOOLS] [" }}{{- "]" }}{{- "[/AVAILABLE_TOOLS]" }}{%- endif %}{%- if loop.last and system_message is defined %}{{- "[INST] " + system_message + "\n\n" + message["content"] + "[/INST]" }}{%- else %}{{- "[INST] " + message["content"] + "[/INST]" }}{%- endif %}{%- elif message["role"] == "assistant" %}{{- " " + message["content"]|trim + eos_token}}{%- else %}{{- raise_exception("Only user and assistant roles are supported, with the exception of an initial optional system message!") }}{%- endif %}{%- endfor %})J",
         chat_template_kind::mistral_v3},
        {"Mistral-Nemo-Instruct-2407",
         R"J({%- if messages[0]["role"] == "system" %}{%- set system_message = messages[0]["content"] %}{%- set loop_messages = messages[1:] %}{%- else %}{%- set loop_messages = messages %}{%- endif %}{{- bos_token }}{%- for message in loop_messages %}{%- if message["role"] == "user" %}{%- if loop.last and system_message is defined %}{{- "[INST]" + system_message + "\n\n" + message["content"] + "[/INST]" }}{%- else %}{{- "[INST]" + message["content"] + "[/INST]" }}{%- endif %}{%- elif message["role"] == "assistant" %}{{- message["content"] + eos_token}}{%- endif %}{%- endfor %})J",
         chat_template_kind::mistral_v3_tekken},
        {"Mistral-Large-Instruct-2411",
         R"J({%- if messages[0]['role'] == 'system' %}{%- set system_message = messages[0]['content'] %}{%- set loop_messages = messages[1:] %}{%- else %}{%- set loop_messages = messages %}{%- endif %}{{- bos_token }}{%- if system_message is defined %}{{- '[SYSTEM_PROMPT] ' + system_message + '[/SYSTEM_PROMPT]' }}{%- endif %}{%- for message in loop_messages %}{%- if message['role'] == 'user' %}{{- '[INST] ' + message['content'] + '[/INST]' }}{%- elif message['role'] == 'assistant' %}{{- ' ' + message['content'] + eos_token }}{%- endif %}{%- endfor %})J",
         chat_template_kind::mistral_v7},
        {"Mistral-Small-24B-Instruct-2501",
         R"J({%- set today = strftime_now("%Y-%m-%d") %}{%- if messages[0]['role'] == 'system' %}{%- set system_message = messages[0]['content'] %}{%- set loop_messages = messages[1:] %}{%- else %}{%- set loop_messages = messages %}{%- endif %}{{- bos_token }}{{- '[SYSTEM_PROMPT]' + system_message + '[/SYSTEM_PROMPT]' }}{%- for message in loop_messages %}{%- if message['role'] == 'user' %}{{- '[INST]' + message['content'] + '[/INST]' }}{%- elif message['role'] == 'assistant' %}{{- message['content'] + eos_token }}{%- endif %}{%- endfor %})J",
         chat_template_kind::mistral_v7_tekken},
        {"Meta-Llama-3-8B-Instruct",
         R"J({% set loop_messages = messages %}{% for message in loop_messages %}{% set content = '<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n'+ message['content'] | trim + '<|eot_id|>' %}{% if loop.index0 == 0 %}{% set content = bos_token + content %}{% endif %}{{ content }}{% endfor %}{% if add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>\n\n' }}{% endif %})J",
         chat_template_kind::llama3},
        {"zephyr-7b-beta",
         R"J({% for message in messages %}
{% if message['role'] == 'user' %}
{{ '<|user|>
' + message['content'] + eos_token }}
{% elif message['role'] == 'system' %}
{{ '<|system|>
' + message['content'] + eos_token }}
{% elif message['role'] == 'assistant' %}
{{ '<|assistant|>
'  + message['content'] + eos_token }}
{% endif %}
{% if loop.last and add_generation_prompt %}
{{ '<|assistant|>' }}
{% endif %}
{% endfor %})J",
         chat_template_kind::zephyr},
        {"Phi-3.5-mini-instruct",
         R"J({% for message in messages %}{% if message['role'] == 'system' and message['content'] %}{{'<|system|>
' + message['content'] + '<|end|>
'}}{% elif message['role'] == 'user' %}{{'<|user|>
' + message['content'] + '<|end|>
'}}{% elif message['role'] == 'assistant' %}{{'<|assistant|>
' + message['content'] + '<|end|>
'}}{% endif %}{% endfor %}{% if add_generation_prompt %}{{ '<|assistant|>
' }}{% else %}{{ eos_token }}{% endif %})J",
         chat_template_kind::phi3},
        {"phi-4",
         R"J({% for message in messages %}{% if (message['role'] == 'system') %}{{'<|im_start|>system<|im_sep|>' + message['content'] + '<|im_end|>'}}{% elif (message['role'] == 'user') %}{{'<|im_start|>user<|im_sep|>' + message['content'] + '<|im_end|>'}}{% elif (message['role'] == 'assistant') %}{{'<|im_start|>assistant<|im_sep|>' + message['content'] + '<|im_end|>'}}{% endif %}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant<|im_sep|>' }}{% endif %})J",
         chat_template_kind::phi4},
        {"gemma-7b-it",
         R"J({{ bos_token }}{% if messages[0]['role'] == 'system' %}{{ raise_exception('System role not supported') }}{% endif %}{% for message in messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}{% if (message['role'] == 'assistant') %}{% set role = 'model' %}{% else %}{% set role = message['role'] %}{% endif %}{{ '<start_of_turn>' + role + '\n' + message['content'] | trim + '<end_of_turn>\n' }}{% endfor %}{% if add_generation_prompt %}{{'<start_of_turn>model\n'}}{% endif %})J",
         chat_template_kind::gemma},
        {"c4ai-command-r-v01",
         R"J({{ bos_token }}{% if messages[0]['role'] == 'system' %}{% set loop_messages = messages[1:] %}{% set system_message = messages[0]['content'] %}{% else %}{% set loop_messages = messages %}{% set system_message = false %}{% endif %}{% if system_message != false %}{{ '<|START_OF_TURN_TOKEN|><|SYSTEM_TOKEN|>' + system_message + '<|END_OF_TURN_TOKEN|>' }}{% endif %}{% for message in loop_messages %}{% set content = message['content'] %}{% if message['role'] == 'user' %}{{ '<|START_OF_TURN_TOKEN|><|USER_TOKEN|>' + content.strip() + '<|END_OF_TURN_TOKEN|>' }}{% elif message['role'] == 'assistant' %}{{ '<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>'  + content.strip() + '<|END_OF_TURN_TOKEN|>' }}{% endif %}{% endfor %}{% if add_generation_prompt %}{{ '<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>' }}{% endif %})J",
         chat_template_kind::command_r},
        {"vicuna-13b-v1.5",
         R"J({%- for message in messages %}{%- if message['role'] == 'system' -%}{{- '' + message['content'] + '\n\n' -}}{%- else -%}{%- if message['role'] == 'user' -%}{{-'USER: ' + message['content'] + '\n'-}}{%- else -%}{{-'ASSISTANT: ' + message['content'] + '</s>\n' -}}{%- endif -%}{%- endif -%}{%- endfor -%}{%- if add_generation_prompt -%}{{-'ASSISTANT:'-}}{%- endif -%})J",
         chat_template_kind::vicuna},
        {"Orca-Vicuna",
         R"J({%- for message in messages %}{%- if message['role'] == 'system' -%}{{-'SYSTEM: ' + message['content'] + '\n' -}}{%- else -%}{%- if message['role'] == 'user' -%}{{-'USER: ' + message['content'] + '\n'-}}{%- else -%}{{-'ASSISTANT: ' + message['content'] + '</s>\n' -}}{%- endif -%}{%- endif -%}{%- endfor -%}{%- if add_generation_prompt -%}{{-'ASSISTANT:'-}}{%- endif -%})J",
         chat_template_kind::vicuna_orca},
        // Families inferd does not implement, and non-templates.
        {"deepseek-coder-33b-instruct",
         R"J({% if not add_generation_prompt is defined %}{% set add_generation_prompt = false %}{% endif %}{{bos_token}}{%- for message in messages %}{%- if message['role'] == 'system' %}{{ message['content'] }}{%- else %}{%- if message['role'] == 'user' %}{{'### Instruction:\n' + message['content'] + '\n'}}{%- else %}{{'### Response:\n' + message['content'] + '\n<|EOT|>\n'}}{%- endif %}{%- endif %}{%- endfor %}{% if add_generation_prompt %}{{'### Response:'}}{% endif %})J",
         std::nullopt},
        {"plain concatenation", R"J({% for message in messages %}{{ message['content'] }}{% endfor %})J", std::nullopt},
        {"empty", "", std::nullopt},
    };
    return cases;
}

}  // namespace

TEST(ChatTemplate, DetectsFamiliesFromTheirJinjaSources) {
    std::set<chat_template_kind> detected;
    for (const jinja_case & c : jinja_cases()) {
        SCOPED_TRACE(c.model);
        const std::optional<chat_template_kind> k = chat_template_detect(c.source);
        ASSERT_EQ(k.has_value(), c.kind.has_value()) << (k ? chat_template_name(*k) : "nullopt");
        if (k) {
            EXPECT_EQ(chat_template_name(*k), chat_template_name(*c.kind));
            detected.insert(*k);
        }
    }
    EXPECT_EQ(detected.size(), chat_template_names().size());  // every family has a real source
}

TEST(ChatTemplate, ShippedModelRendersWithItsVocabularyTexts) {
    INFERD_REQUIRE_TESTDATA(dir);
    std::unique_ptr<gguf_file> f;
    gguf_result r = gguf_file::open(dir + "/models/tiny-llama-f32.gguf", gguf_open_options{}, &f);
    ASSERT_TRUE(r) << r.message;
    std::string jinja;
    ASSERT_TRUE(f->metadata().get_string("tokenizer.chat_template", &jinja));
    const std::optional<chat_template_kind> kind = chat_template_detect(jinja);
    ASSERT_EQ(kind, chat_template_kind::zephyr);
    int64_t eos_id = -1;
    ASSERT_TRUE(f->metadata().get_int("tokenizer.ggml.eos_token_id", &eos_id));
    const gguf_value * tokens = f->metadata().find("tokenizer.ggml.tokens");
    ASSERT_NE(tokens, nullptr);
    ASSERT_LT((size_t) eos_id, tokens->array_strings().size());
    const std::string & eos = tokens->array_strings()[(size_t) eos_id];
    EXPECT_EQ(eos, "</s>");
    std::string out, err;
    const std::vector<chat_message> msgs = {{"user", "Hello"}};
    ASSERT_TRUE(chat_template_apply(*kind, msgs, true, "<s>", eos, &out, &err)) << err;
    EXPECT_EQ(out, "<|user|>\nHello</s>\n<|assistant|>\n");
}
