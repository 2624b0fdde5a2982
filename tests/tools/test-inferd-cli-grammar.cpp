// inferd-cli grammar compile: GBNF and JSON Schema files printed as the compiled grammar; errors
// name the file and the problem; usage errors exit 2.
#include "cli/cli.h"
#include "tools/tools-test-util.h"

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
    EXPECT_NE(out.text().find("[1-3]"), std::string::npos) << out.text();
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
                                               {"grammar", "compile", "--bogus"}}) {
        tools_capture in, out, err;
        EXPECT_EQ(cli_tool_main(args, in.get(), out.get(), err.get()), 2) << args.back();
        EXPECT_FALSE(err.text().empty());
    }
    tools_capture in, out, err;
    ASSERT_EQ(cli_tool_main({"--help"}, in.get(), out.get(), err.get()), 0);
    EXPECT_NE(out.text().find("inferd-cli grammar compile"), std::string::npos);
}

}  // namespace
