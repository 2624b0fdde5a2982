// --help, --version and the README's flag table.
#include "config-test-util.h"

#include <cctype>
#include <fstream>
#include <sstream>

TEST(config_help, help_and_version_requests) {
    config_parsed p = config_run({"--help"});
    EXPECT_EQ(p.status, config_status::help);
    EXPECT_EQ(p.text, config_help_text());
    EXPECT_EQ(config_run({"-h"}).status, config_status::help);
    // --help wins over everything else on the line, even bad flags.
    EXPECT_EQ(config_run({"--port", "abc", "--nonsense", "-h"}).status, config_status::help);
    p = config_run({"--version"});
    EXPECT_EQ(p.status, config_status::version);
    EXPECT_EQ(p.text.rfind("inferd ", 0), 0u) << p.text;
    EXPECT_GT(p.text.size(), std::string("inferd ").size());
    EXPECT_EQ(config_run({"--version", "--bad"}).status, config_status::version);
}

TEST(config_help, lists_every_flag_default_and_variable) {
    std::string help = config_help_text();
    std::vector<config_flag_doc> flags = config_flags();
    EXPECT_GE(flags.size(), 29u);
    for (const config_flag_doc & d : flags) {
        SCOPED_TRACE(d.long_name);
        EXPECT_TRUE(config_contains(help, "--" + d.long_name)) << help;
        if (!d.short_names.empty()) {
            EXPECT_TRUE(config_contains(help, d.short_names + ", --" + d.long_name));
        }
        if (!d.env_name.empty()) {
            EXPECT_TRUE(config_contains(help, d.env_name));
        }
        if (!d.default_text.empty()) {
            EXPECT_TRUE(config_contains(help, "default: " + d.default_text));
        }
        EXPECT_FALSE(d.help.empty());
    }
    for (const char * expected : {"default: 127.0.0.1", "default: 8080", "default: 16MiB", "INFERD_API_KEY",
                                  "-np, --parallel N", "-m, --model FILE", "--config FILE"}) {
        EXPECT_TRUE(config_contains(help, expected)) << expected;
    }
}

TEST(config_help, variables_follow_the_naming_rule) {
    for (const config_flag_doc & d : config_flags()) {
        if (d.env_name.empty()) continue;
        std::string expected = "INFERD_";
        for (char c : d.long_name) expected += c == '-' ? '_' : char(std::toupper(static_cast<unsigned char>(c)));
        EXPECT_EQ(d.env_name, expected);
    }
}

TEST(config_help, markdown_table) {
    std::string md = config_markdown_table();
    EXPECT_EQ(md.rfind("| Flag | Environment | Default | Description |\n|---|---|---|---|\n", 0), 0u);
    size_t rows = 0;
    for (char c : md) rows += c == '\n';
    EXPECT_EQ(rows, config_flags().size() + 2);
    EXPECT_TRUE(config_contains(md, "| `--port N` | `INFERD_PORT` | `8080` |"));
    EXPECT_TRUE(config_contains(md, "| `-c, --ctx-size N` | `INFERD_CTX_SIZE` | `0` |"));
}

// config/README.md carries the generated table; regenerate it when a flag changes.
TEST(config_help, readme_is_up_to_date) {
    std::ifstream in("config/README.md");
    if (!in) GTEST_SKIP() << "config/README.md not found (run from the repository root)";
    std::stringstream ss;
    ss << in.rdbuf();
    EXPECT_TRUE(config_contains(ss.str(), config_markdown_table()))
        << "config/README.md is out of date; its table should be:\n"
        << config_markdown_table();
}
