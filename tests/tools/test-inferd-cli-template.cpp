// inferd-cli template render: every reference render byte for byte, the errors where the reference
// raised; from a model's own template; bad inputs exit 2.
// inferd-cli template parse: every reference tool-call fixture (../shared/testdata/chat/toolcalls.json)
// parsed through the command with its template file (and the conversation's tools, and
// --reasoning-open where the prompt opens reasoning) prints the expected message (README rules:
// content and reasoning trimmed, null == "", calls in order, arguments equal as JSON values, ids
// where given); ids only where the format carries them; unknown families, missing files and bad
// tools JSON exit 2.
#include "cli/cli.h"
#include "ggml/gguf.h"
#include "testdata.h"
#include "tools/tools-test-util.h"

#include "toolcall/toolcall.h"

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <memory>
#include <map>
#include <string>
#include <vector>

using nlohmann::ordered_json;

namespace {

ordered_json read_json(const std::string & path) {
    std::ifstream in(path, std::ios::binary);
    return ordered_json::parse(in, nullptr, false);
}

void write_file(const std::string & path, const std::string & text) { std::ofstream(path, std::ios::binary) << text; }

std::string trimmed(const std::string & s) {
    const char * ws = " \t\r\n";
    const size_t b = s.find_first_not_of(ws);
    if (b == std::string::npos) return "";
    return s.substr(b, s.find_last_not_of(ws) - b + 1);
}

std::string text_of(const ordered_json & v) { return v.is_string() ? trimmed(v.get<std::string>()) : ""; }

// "" when the printed message matches the expected one; else the first difference.
std::string compare_expected(const ordered_json & got, const ordered_json & expected) {
    if (!got.is_object()) return "not a JSON object";
    if (text_of(got.value("content", ordered_json())) != text_of(expected["content"])) return "content " + got["content"].dump();
    if (text_of(got.value("reasoning_content", ordered_json())) != text_of(expected["reasoning_content"])) {
        return "reasoning_content " + got["reasoning_content"].dump();
    }
    const ordered_json & calls = expected["tool_calls"];
    const ordered_json got_calls = got.value("tool_calls", ordered_json::array());
    if (!got_calls.is_array() || got_calls.size() != calls.size()) return "tool_calls " + got_calls.dump();
    for (size_t i = 0; i < calls.size(); ++i) {
        const ordered_json & g = got_calls[i];
        const std::string where = "tool_calls[" + std::to_string(i) + "].";
        if (g.value("name", "") != calls[i]["name"].get<std::string>()) return where + "name " + g.value("name", "");
        if (!g.contains("arguments") || !g["arguments"].is_object()) return where + "arguments not an object";
        // Equal as JSON values: unordered keys, numbers by value.
        if (nlohmann::json::parse(g["arguments"].dump()) != nlohmann::json::parse(calls[i]["arguments"].dump())) {
            return where + "arguments " + g["arguments"].dump();
        }
        if (calls[i].contains("id") && g.value("id", "") != calls[i]["id"].get<std::string>()) return where + "id " + g.value("id", "");
    }
    return "";
}

struct run_result {
    int rc = 0;
    std::string out, err;
};

run_result run(const std::vector<std::string> & args) {
    tools_capture in, out, err;
    run_result r;
    r.rc = cli_tool_main(args, in.get(), out.get(), err.get());
    r.out = out.text();
    r.err = err.text();
    return r;
}

}  // namespace

TEST(inferd_cli_template, parses_every_reference_fixture) {
    INFERD_REQUIRE_TESTDATA(dir);
    const ordered_json calls = read_json(dir + "/chat/toolcalls.json");
    const ordered_json conversations = read_json(dir + "/chat/conversations.json");
    ASSERT_FALSE(calls.is_discarded());
    ASSERT_FALSE(conversations.is_discarded());
    std::map<std::string, ordered_json> tools;
    for (const auto & c : conversations) tools[c["name"].get<std::string>()] = c.value("tools", ordered_json());

    tools_scratch_dir tmp;
    size_t n = 0, passed = 0;
    for (const auto & f : calls["fixtures"]) {
        const std::string label = f["template"].get<std::string>() + " / " + f["case"].get<std::string>();
        std::string stem = "f";
        stem += std::to_string(n++);
        const std::string text_file = tmp.file(stem + ".txt");
        write_file(text_file, f["text"].get<std::string>());
        std::vector<std::string> args = {"template", "parse", "--template",
                                         dir + "/chat/templates/" + f["template"].get<std::string>() + ".jinja"};
        const ordered_json & t = tools[f["conversation"].get<std::string>()];
        if (!t.is_null()) {
            const std::string tools_file = tmp.file(stem + ".tools.json");
            write_file(tools_file, t.dump());
            args.insert(args.end(), {"--tools", tools_file});
        }
        // As test-toolcall-reference decides it: the prompt's tail ends in the family's opening marker.
        const auto fam = toolcall::family_from_name(f["family"].get<std::string>());
        ASSERT_TRUE(fam.has_value()) << label << ": unknown family " << f["family"];
        if (toolcall::prompt_opens_reasoning(*fam, f["prompt_tail"].get<std::string>())) args.push_back("--reasoning-open");
        args.push_back(text_file);

        const run_result r = run(args);
        ASSERT_EQ(r.rc, 0) << label << "\n" << r.err;
        ASSERT_TRUE(!r.out.empty() && r.out.back() == '\n') << label << ": " << r.out;
        ASSERT_EQ(r.out.find('\n'), r.out.size() - 1) << label << ": not one line: " << r.out;
        const ordered_json got = ordered_json::parse(r.out, nullptr, false);
        ASSERT_FALSE(got.is_discarded()) << label << ": not JSON: " << r.out;
        const std::string d = compare_expected(got, f["expected"]);
        EXPECT_EQ(d, "") << label << "\n  text: " << f["text"].get<std::string>() << "\n  got: " << r.out;
        passed += d.empty();
    }
    EXPECT_EQ(n, 81u);
    std::printf("template parse: %zu of %zu fixtures match\n", passed, n);
}

// template render: every (template, conversation) case of the reference renders byte for byte,
// with the case's variables (BOS / EOS by flag, the rest through --kwargs) and the reference's
// fixed day; the cases where the reference raised exit 2 with an error (raise_exception's text
// verbatim).
TEST(inferd_cli_template, renders_every_reference_case) {
    INFERD_REQUIRE_TESTDATA(dir);
    const ordered_json expected = read_json(dir + "/chat/expected.json");
    const ordered_json conversations = read_json(dir + "/chat/conversations.json");
    ASSERT_FALSE(expected.is_discarded());
    ASSERT_FALSE(conversations.is_discarded());
    std::map<std::string, ordered_json> convs;
    for (const auto & c : conversations) convs[c["name"].get<std::string>()] = c;

    tools_scratch_dir tmp;
    size_t renders = 0, errors = 0, n = 0;
    for (const auto & c : expected["cases"]) {
        const std::string label = c["template"].get<std::string>() + " / " + c["conversation"].get<std::string>();
        const ordered_json & conv = convs[c["conversation"].get<std::string>()];
        ordered_json input = {{"messages", conv["messages"]}};
        if (c["tools"].get<bool>()) input["tools"] = conv["tools"];
        std::string name = "m";
        name += std::to_string(n++);
        name += ".json";
        const std::string messages = tmp.file(name);
        write_file(messages, input.dump());
        std::vector<std::string> args = {"template", "render", "--template",
                                         dir + "/chat/templates/" + c["template"].get<std::string>() + ".jinja",
                                         "--messages", messages, "--date", "2026-01-15"};
        ordered_json kwargs = ordered_json::object();
        for (const auto & [k, v] : c["variables"].items()) {
            if (k == "add_generation_prompt") {
                if (!v.get<bool>()) args.push_back("--no-generation-prompt");
            } else if (k == "bos_token" || k == "eos_token") {
                args.insert(args.end(), {k == "bos_token" ? "--bos" : "--eos", v.get<std::string>()});
            } else {
                kwargs[k] = v;
            }
        }
        if (!kwargs.empty()) args.insert(args.end(), {"--kwargs", kwargs.dump()});
        const run_result r = run(args);
        if (c.contains("error")) {
            ++errors;
            EXPECT_EQ(r.rc, 2) << label << ": rendered where the reference raised " << c["error"];
            EXPECT_NE(r.err.find(dir + "/chat/templates/"), std::string::npos) << label << ": " << r.err;
            if (c["error_kind"] == "raise_exception") {
                EXPECT_NE(r.err.find(c["error"].get<std::string>()), std::string::npos) << label << ": " << r.err;
            }
            continue;
        }
        ++renders;
        std::ifstream in(dir + "/chat/" + c["render"].get<std::string>(), std::ios::binary);
        const std::string want((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        ASSERT_EQ(r.rc, 0) << label << "\n" << r.err;
        EXPECT_EQ(r.out, want) << label;
    }
    EXPECT_EQ(renders, 535u);
    EXPECT_EQ(errors, 50u);
}

// render's inputs: the model's own template with its BOS / EOS texts, and the errors.
TEST(inferd_cli_template, render_from_a_model_and_its_errors) {
    INFERD_REQUIRE_TESTDATA(dir);
    tools_scratch_dir tmp;
    const std::string messages = tmp.file("m.json");
    write_file(messages, R"([{"role":"system","content":"Be brief."},{"role":"user","content":"Hi"}])");
    const run_result r = run({"template", "render", "--model", dir + "/models/tiny-qwen3-f16.gguf", "--messages", messages});
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(r.out, "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
    const run_result off = run({"template", "render", "--model", dir + "/models/tiny-qwen3-f16.gguf", "--messages", messages,
                                "--no-generation-prompt"});
    EXPECT_EQ(off.out, "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n");

    const std::string bad = tmp.file("bad.jinja");
    write_file(bad, "{% for m in messages %}\n{{ m.content | nosuchfilter }}\n{% endfor %}");
    const run_result e = run({"template", "render", "--template", bad, "--messages", messages});
    EXPECT_EQ(e.rc, 2);
    EXPECT_NE(e.err.find(bad + ":2:"), std::string::npos) << e.err;  // the place of the problem
    EXPECT_NE(e.err.find("nosuchfilter"), std::string::npos) << e.err;
    write_file(bad, "{% if %}");
    EXPECT_EQ(run({"template", "render", "--template", bad, "--messages", messages}).rc, 2);
    EXPECT_EQ(run({"template", "render", "--template", bad}).rc, 2);                                      // no --messages
    EXPECT_EQ(run({"template", "render", "--messages", messages}).rc, 2);                                 // no template
    EXPECT_EQ(run({"template", "render", "--template", bad, "--messages", tmp.file("none.json")}).rc, 2);  // missing file
    EXPECT_EQ(run({"template", "render", "--template", bad, "--messages", messages, "--kwargs", "[1]"}).rc, 2);
    EXPECT_EQ(run({"template", "render", "--template", bad, "--messages", messages, "--date", "15.1.2026"}).rc, 2);
    write_file(messages, R"({"role":"user"})");
    EXPECT_EQ(run({"template", "render", "--template", bad, "--messages", messages}).rc, 2);  // not a list
}

// --model: the family of the GGUF's tokenizer.chat_template (a vocabulary-only file with Qwen3's
// template written in).
TEST(inferd_cli_template, family_from_a_models_chat_template) {
    INFERD_REQUIRE_TESTDATA(dir);
    std::unique_ptr<gguf_file> vocab;
    const gguf_result opened = gguf_file::open(dir + "/vocab/ggml-vocab-gpt2-qwen2.gguf", gguf_open_options{}, &vocab);
    ASSERT_TRUE(opened) << opened.message;
    std::ifstream in(dir + "/chat/templates/Qwen-Qwen3-0.6B.jinja", std::ios::binary);
    const std::string jinja((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    ASSERT_FALSE(jinja.empty());
    tools_scratch_dir tmp;
    gguf_writer w;
    w.metadata() = vocab->metadata();
    w.metadata().set("tokenizer.chat_template", gguf_value::from_string(jinja));
    const std::string model = tmp.file("qwen3-vocab.gguf");
    const gguf_result wrote = w.write_file(model);
    ASSERT_TRUE(wrote) << wrote.message;

    const std::string text = tmp.file("out.txt");
    write_file(text, "<think>\nhm\n</think>\n\nSure.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>");
    const run_result r = run({"template", "parse", "--model", model, text});
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_EQ(r.out, "{\"content\":\"Sure.\",\"reasoning_content\":\"hm\",\"tool_calls\":[{\"name\":\"get_weather\","
                     "\"arguments\":{\"city\":\"Paris\"}}]}\n");

    // A GGUF without a chat template.
    const run_result none = run({"template", "parse", "--model", dir + "/vocab/ggml-vocab-gpt-2.gguf", text});
    EXPECT_EQ(none.rc, 2);
    EXPECT_NE(none.err.find("chat_template"), std::string::npos) << none.err;
}

TEST(inferd_cli_template, ids_only_where_the_format_carries_them) {
    tools_scratch_dir tmp;
    const std::string hermes = tmp.file("hermes.txt");
    write_file(hermes, "<tool_call>\n{\"name\": \"a\", \"arguments\": {\"x\": 1}}\n</tool_call>");
    run_result r = run({"template", "parse", "--family", "hermes", hermes});
    ASSERT_EQ(r.rc, 0) << r.err;
    ordered_json j = ordered_json::parse(r.out);
    ASSERT_EQ(j["tool_calls"].size(), 1u) << r.out;
    EXPECT_EQ(j["tool_calls"][0]["name"], "a");
    EXPECT_EQ(j["tool_calls"][0]["arguments"], ordered_json({{"x", 1}}));
    EXPECT_FALSE(j["tool_calls"][0].contains("id")) << r.out;
    EXPECT_EQ(j["content"], "");

    const std::string mistral = tmp.file("mistral.txt");
    write_file(mistral, "[TOOL_CALLS][{\"name\": \"a\", \"arguments\": {\"x\": 1}, \"id\": \"abcdef123\"}]");
    r = run({"template", "parse", "--family", "mistral", mistral});
    ASSERT_EQ(r.rc, 0) << r.err;
    j = ordered_json::parse(r.out);
    ASSERT_EQ(j["tool_calls"].size(), 1u) << r.out;
    EXPECT_EQ(j["tool_calls"][0].value("id", ""), "abcdef123") << r.out;

    // Reasoning opened by the prompt.
    const std::string think = tmp.file("think.txt");
    write_file(think, "let me see</think>\nHello");
    r = run({"template", "parse", "--family", "hermes", "--reasoning-open", think});
    ASSERT_EQ(r.rc, 0) << r.err;
    j = ordered_json::parse(r.out);
    EXPECT_EQ(j["reasoning_content"], "let me see") << r.out;
    EXPECT_EQ(j["content"], "Hello") << r.out;
}

TEST(inferd_cli_template, errors_exit_2) {
    tools_scratch_dir tmp;
    const std::string text = tmp.file("t.txt");
    write_file(text, "hi");

    run_result r = run({"template", "parse", "--family", "no-such-family", text});
    EXPECT_EQ(r.rc, 2);
    EXPECT_NE(r.err.find("no-such-family"), std::string::npos) << r.err;
    for (const char * name : {"hermes", "gpt-oss-harmony", "deepseek-v3.1", "none"}) {
        EXPECT_NE(r.err.find(name), std::string::npos) << name << " not listed: " << r.err;
    }
    EXPECT_EQ(r.out, "");

    r = run({"template", "parse", "--family", "hermes", tmp.file("missing.txt")});
    EXPECT_EQ(r.rc, 2);
    EXPECT_NE(r.err.find("missing.txt"), std::string::npos) << r.err;
    r = run({"template", "parse", "--template", tmp.file("missing.jinja"), text});
    EXPECT_EQ(r.rc, 2);
    EXPECT_NE(r.err.find("missing.jinja"), std::string::npos) << r.err;
    r = run({"template", "parse", "--model", tmp.file("missing.gguf"), text});
    EXPECT_EQ(r.rc, 2);
    EXPECT_FALSE(r.err.empty());

    const std::string bad_tools = tmp.file("bad-tools.json");
    for (const char * body : {"[{\"type\": ", "{\"type\": \"function\"}", "[1]"}) {
        write_file(bad_tools, body);
        r = run({"template", "parse", "--family", "hermes", "--tools", bad_tools, text});
        EXPECT_EQ(r.rc, 2) << body;
        EXPECT_NE(r.err.find("bad-tools.json"), std::string::npos) << r.err;
    }

    // Usage errors.
    for (const std::vector<std::string> & args :
         std::vector<std::vector<std::string>>{{"template"}, {"template", "render"}, {"template", "parse"},
                                               {"template", "parse", text},
                                               {"template", "parse", "--family", "hermes"},
                                               {"template", "parse", "--family", "hermes", "--template", "x", text},
                                               {"template", "parse", "--family", "hermes", text, text},
                                               {"template", "parse", "--bogus", text}}) {
        r = run(args);
        EXPECT_EQ(r.rc, 2) << args.back();
        EXPECT_FALSE(r.err.empty());
    }
    r = run({"template", "show"});
    EXPECT_NE(r.err.find("unknown template command 'show'"), std::string::npos) << r.err;

    r = run({"--help"});
    ASSERT_EQ(r.rc, 0);
    EXPECT_NE(r.out.find("inferd-cli template parse"), std::string::npos);
    EXPECT_NE(r.out.find("inferd-cli template render"), std::string::npos);
}
