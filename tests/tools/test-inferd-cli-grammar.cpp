// inferd-cli grammar compile: GBNF and JSON Schema files printed as the compiled grammar; errors
// name the file and the problem; usage errors exit 2. grammar check: texts walked token by token
// with the gpt-2 vocabulary, accepted or rejected at the right token; grammar bench: the counts of
// a small folder of schemas; JSON written as Python's json.dumps writes it.
#include "cli/cli-grammar-json.h"
#include "cli/cli.h"
#include "grammar/gbnf.h"
#include "testdata.h"
#include "tools/tools-test-util.h"

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

namespace {

std::string write_temp(const std::string & name, const std::string & text) {
    const std::filesystem::path p = std::filesystem::temp_directory_path() / ("inferd-cli-grammar-" + name);
    std::ofstream(p, std::ios::binary) << text;
    return p.string();
}

TEST(inferd_cli_grammar, compiles_gbnf) {
    const std::string f = write_temp("ok.gbnf", "root ::= \"a\"{2} item*\nitem ::= [0-9]  # digits\n");
    tools_capture in, out, err;
    ASSERT_EQ(cli_tool_main({"grammar", "compile", "--gbnf", f}, in.get(), out.get(), err.get()), 0) << err.text();
    EXPECT_EQ(out.text(), "root ::= \"aa\" root-1\nroot-1 ::= item root-1 | \"\"\nitem ::= [0-9]\n");
}

TEST(inferd_cli_grammar, compiles_a_schema) {
    const std::string f = write_temp("ok.json", R"({"type":"object","properties":{"n":{"type":"integer","minimum":1,"maximum":3}},"required":["n"],"additionalProperties":false})");
    tools_capture in, out, err;
    ASSERT_EQ(cli_tool_main({"grammar", "compile", "--schema", f}, in.get(), out.get(), err.get()), 0) << err.text();
    EXPECT_EQ(out.text().rfind("root ::= ", 0), 0u) << out.text();
    // The printed grammar is GBNF that holds the bounds.
    const grammar_parse_result g = grammar_parse_gbnf(out.text());
    ASSERT_TRUE(g.ok()) << g.error.to_string() << "\n" << out.text();
    EXPECT_TRUE(grammar_recognize(g.value, R"({"n":3})")) << out.text();
    EXPECT_FALSE(grammar_recognize(g.value, R"({"n":4})")) << out.text();
}

TEST(inferd_cli_grammar, errors_name_the_file_and_problem) {
    const std::string g = write_temp("bad.gbnf", "root ::= \"a\"\nroot ::= x\n");
    tools_capture in, out, err;
    EXPECT_EQ(cli_tool_main({"grammar", "compile", "--gbnf", g}, in.get(), out.get(), err.get()), 1);
    EXPECT_NE(err.text().find(g + ": line 2, column 1: rule 'root' is defined twice"), std::string::npos) << err.text();
    const std::string s = write_temp("bad.json", R"({"type":"object","properties":{"a":{"not":{}}}})");
    tools_capture in2, out2, err2;
    EXPECT_EQ(cli_tool_main({"grammar", "compile", "--schema", s}, in2.get(), out2.get(), err2.get()), 1);
    EXPECT_NE(err2.text().find(s + ": unsupported keyword 'not' at /properties/a"), std::string::npos) << err2.text();
    tools_capture in3, out3, err3;
    EXPECT_EQ(cli_tool_main({"grammar", "compile", "--gbnf", "/nonexistent/x.gbnf"}, in3.get(), out3.get(), err3.get()), 1);
    EXPECT_NE(err3.text().find("cannot read /nonexistent/x.gbnf"), std::string::npos);
}

TEST(inferd_cli_grammar, usage_errors) {
    for (const std::vector<std::string> & args :
         std::vector<std::vector<std::string>>{{"grammar"}, {"grammar", "check"}, {"grammar", "compile"},
                                               {"grammar", "compile", "--gbnf", "a", "--schema", "b"},
                                               {"grammar", "compile", "--bogus"}, {"grammar", "nope"},
                                               {"grammar", "check", "--gbnf", "g", "--text", "t"},
                                               {"grammar", "check", "--gbnf", "g", "--vocab", "v"},
                                               {"grammar", "check", "--gbnf", "g", "--vocab", "v", "--text", "t", "--spaced"},
                                               {"grammar", "bench"}, {"grammar", "bench", "dir"},
                                               {"grammar", "bench", "dir", "--vocab", "v", "--limit", "0"}}) {
        tools_capture in, out, err;
        EXPECT_EQ(cli_tool_main(args, in.get(), out.get(), err.get()), 2) << args.back();
        EXPECT_FALSE(err.text().empty());
    }
    tools_capture in, out, err;
    ASSERT_EQ(cli_tool_main({"--help"}, in.get(), out.get(), err.get()), 0);
    for (const char * cmd : {"inferd-cli grammar compile", "inferd-cli grammar check", "inferd-cli grammar bench"}) {
        EXPECT_NE(out.text().find(cmd), std::string::npos) << cmd;
    }
}

TEST(inferd_cli_grammar, json_dumps_writes_like_python) {
    const nlohmann::ordered_json v = nlohmann::ordered_json::parse(
        R"({"b":[1,-2,2.50,1e16,1e15,0.0001,0.00001,-0.0,1.5e-7,1234567890123456.7],"a":{"s":"x\u0001\n\"\u00e9"},"e":[],"f":{}})");
    EXPECT_EQ(json_dumps_compact(v),
              "{\"b\":[1,-2,2.5,1e+16,1000000000000000.0,0.0001,1e-05,-0.0,1.5e-07,1234567890123456.8],"
              "\"a\":{\"s\":\"x\\u0001\\n\\\"\u00e9\"},\"e\":[],\"f\":{}}");
    EXPECT_EQ(json_dumps_spaced(v),
              "{\"b\": [1, -2, 2.5, 1e+16, 1000000000000000.0, 0.0001, 1e-05, -0.0, 1.5e-07, 1234567890123456.8], "
              "\"a\": {\"s\": \"x\\u0001\\n\\\"\u00e9\"}, \"e\": [], \"f\": {}}");
}

const char * k_int_schema = R"({"type":"object","properties":{"a":{"type":"integer"}},"required":["a"],"additionalProperties":false})";

int run_check(const std::vector<std::string> & extra, std::string * out_text, std::string * err_text = nullptr) {
    const std::string vocab = inferd_testdata_dir() + "/vocab/ggml-vocab-gpt-2.gguf";
    std::vector<std::string> args = {"grammar", "check", "--vocab", vocab};
    args.insert(args.end(), extra.begin(), extra.end());
    tools_capture in, out, err;
    const int rc = cli_tool_main(args, in.get(), out.get(), err.get());
    *out_text = out.text();
    if (err_text) *err_text = err.text();
    return rc;
}

TEST(inferd_cli_grammar, check_accepts_a_valid_instance) {
    INFERD_REQUIRE_TESTDATA(dir);
    const std::string schema = write_temp("check.json", k_int_schema);
    std::string out, err;
    // gpt-2: {" a ": " 12 } (5 tokens); compact: {" a ": 12 }.
    EXPECT_EQ(run_check({"--schema", schema, "--text", write_temp("ok.txt", R"({"a": 12})")}, &out, &err), 0) << out << err;
    EXPECT_EQ(out, "accept: 5 tokens, 9 bytes\n");
    EXPECT_EQ(run_check({"--schema", schema, "--instance-json", write_temp("ok-inst.json", "{ \"a\" : 12 }")}, &out, &err), 0)
        << out << err;
    EXPECT_EQ(out, "accept: 5 tokens, 8 bytes\n");
    EXPECT_EQ(run_check({"--schema", schema, "--instance-json", write_temp("ok-inst.json", "{\"a\":12}"), "--spaced"}, &out), 0);
    EXPECT_EQ(out, "accept: 5 tokens, 9 bytes\n");
}

TEST(inferd_cli_grammar, check_rejects_at_the_token_that_leaves_the_grammar) {
    INFERD_REQUIRE_TESTDATA(dir);
    const std::string schema = write_temp("check.json", k_int_schema);
    std::string out;
    // {" a ": ␣" x "} : the string's opening quote arrives with token 3 (byte 5, after the space).
    EXPECT_EQ(run_check({"--schema", schema, "--text", write_temp("bad.txt", R"({"a": "x"})")}, &out), 1);
    EXPECT_EQ(out, "reject: token 3 (id 366, \" \\\"\") at byte 5 is not allowed\ntext so far: {\"a\":\n");
    // Compact: {" a ":" x "}: token 2 ends the key, has the colon and opens a string.
    EXPECT_EQ(run_check({"--schema", schema, "--instance-json", write_temp("bad.json", R"({"a":"x"})")}, &out), 1);
    EXPECT_EQ(out, "reject: token 2 (id 2404, \"\\\":\\\"\") at byte 3 is not allowed\ntext so far: {\"a\n");
    // Every token fits but the object is not closed.
    EXPECT_EQ(run_check({"--schema", schema, "--text", write_temp("open.txt", R"({"a": 12)")}, &out), 1);
    EXPECT_EQ(out, "reject: the end, after 4 tokens (8 bytes), is not allowed\ntext so far: {\"a\": 12\n");
}

TEST(inferd_cli_grammar, check_with_gbnf) {
    INFERD_REQUIRE_TESTDATA(dir);
    const std::string g = write_temp("ab.gbnf", "root ::= (\"ab\")+\n");
    std::string out;
    EXPECT_EQ(run_check({"--gbnf", g, "--text", write_temp("abab.txt", "abab")}, &out), 0) << out;
    EXPECT_EQ(run_check({"--gbnf", g, "--text", write_temp("ababa.txt", "ababa")}, &out), 1);  // ab aba
    EXPECT_EQ(out, "reject: the end, after 2 tokens (5 bytes), is not allowed\ntext so far: ababa\n");
    EXPECT_EQ(run_check({"--gbnf", g, "--text", write_temp("abx.txt", "abx")}, &out), 1);  // ab x
    EXPECT_EQ(out, "reject: token 1 (id 87, \"x\") at byte 2 is not allowed\ntext so far: ab\n");
}

TEST(inferd_cli_grammar, check_errors_exit_2) {
    INFERD_REQUIRE_TESTDATA(dir);
    std::string out, err;
    const std::string text = write_temp("t.txt", "1");
    EXPECT_EQ(run_check({"--gbnf", write_temp("bad2.gbnf", "root ::= x\n"), "--text", text}, &out, &err), 2);
    EXPECT_NE(err.find("undefined rule 'x'"), std::string::npos) << err;
    EXPECT_EQ(run_check({"--schema", write_temp("bad2.json", R"({"not":{}})"), "--text", text}, &out, &err), 2);
    EXPECT_NE(err.find("unsupported keyword 'not'"), std::string::npos) << err;
    EXPECT_EQ(run_check({"--schema", write_temp("check.json", k_int_schema), "--text", "/nonexistent/t"}, &out, &err), 2);
    EXPECT_NE(err.find("cannot read /nonexistent/t"), std::string::npos) << err;
    EXPECT_EQ(run_check({"--schema", write_temp("check.json", k_int_schema), "--instance-json", write_temp("t.json", "{")}, &out, &err), 2);
    tools_capture in, o, e;
    EXPECT_EQ(cli_tool_main({"grammar", "check", "--gbnf", write_temp("a.gbnf", "root ::= \"a\"\n"), "--vocab",
                             "/nonexistent/v.gguf", "--text", text},
                            in.get(), o.get(), e.get()),
              2);
}

// Three schemas: one passes (a number property: floats written as Python writes them, invalid
// instances rejected), one does not compile, one has an instance labelled valid that is not.
TEST(inferd_cli_grammar, bench_counts_a_small_folder) {
    INFERD_REQUIRE_TESTDATA(dir);
    tools_scratch_dir d;
    std::ofstream(d.file("a-pass.json")) << R"({"schema":{"type":"object","properties":{"a":{"type":"number"}},"required":["a"],
        "additionalProperties":false},"tests":[{"valid":true,"data":{"a":1e16}},{"valid":true,"data":{"a":0.5}},
        {"valid":true,"data":{"a":-3}},{"valid":false,"data":{"a":"x"}},{"valid":false,"data":{}}]})";
    std::ofstream(d.file("b-compile-error.json")) << R"({"schema":{"not":{}},"tests":[{"valid":true,"data":1}]})";
    std::ofstream(d.file("c-fail.json")) << R"({"schema":{"type":"integer"},"tests":[{"valid":true,"data":1},
        {"valid":true,"data":"no"}]})";
    std::ofstream(d.file("notes.txt")) << "not a schema";
    const std::string dir_arg = d.file("");
    const std::string vocab = dir + "/vocab/ggml-vocab-gpt-2.gguf";
    tools_capture in, out, err;
    ASSERT_EQ(cli_tool_main({"grammar", "bench", dir_arg, "--vocab", vocab, "--json", "--verbose"}, in.get(), out.get(), err.get()), 0)
        << err.text();
    const nlohmann::json j = nlohmann::json::parse(out.text());
    EXPECT_EQ(j["schemas"], 3);
    EXPECT_EQ(j["compile_errors"], 1);
    EXPECT_EQ(j["passing"], 1);
    EXPECT_TRUE(j["timed_out"].empty());
    EXPECT_GT(j["mask_us"]["mean"].get<double>(), 0.0);
    EXPECT_GE(j["mask_us"]["p999"].get<double>(), j["mask_us"]["p50"].get<double>());
    EXPECT_GT(j["compile_us"]["p50"].get<double>(), 0.0);
    EXPECT_NE(err.text().find("b-compile-error.json: unsupported keyword 'not'"), std::string::npos) << err.text();
    EXPECT_NE(err.text().find("c-fail.json: valid instance rejected at token 0"), std::string::npos) << err.text();
    // --limit 1: the first file only; the text summary names the counts.
    tools_capture in2, out2, err2;
    ASSERT_EQ(cli_tool_main({"grammar", "bench", dir_arg, "--vocab", vocab, "--limit", "1"}, in2.get(), out2.get(), err2.get()), 0);
    EXPECT_NE(out2.text().find("schemas:        1\n"), std::string::npos) << out2.text();
    EXPECT_NE(out2.text().find("passing:        1 (100.0%)"), std::string::npos) << out2.text();
    EXPECT_NE(out2.text().find("(3 schema files, --limit"), std::string::npos) << out2.text();
}

}  // namespace
