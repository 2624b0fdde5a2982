// inferd-cli grammar bench over the whole collection of ../shared/testdata/jsonschema with the
// gpt-2 vocabulary: every schema's instances token by token, in both serializations, with a
// floor on the number of schemas that pass. The figures are printed (speed is not asserted).
// And over the generated hostile suite (grammar/hostile-schemas.h): the bench never dies, every
// schema compiles or is a compile error.
#include "cli/cli.h"
#include "grammar/hostile-schemas.h"
#include "testdata.h"
#include "tools/tools-test-util.h"

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include <unistd.h>

namespace {

// The sanitizer build (about 10x slower) runs the first 300 schemas: memory errors, not the pass
// count, are what it is for.
#if defined(__SANITIZE_ADDRESS__)
constexpr const char * k_limit = "300";
#else
constexpr const char * k_limit = nullptr;
#endif

TEST(inferd_cli_grammar_bench, jsonschema_collection_token_by_token) {
    INFERD_REQUIRE_TESTDATA(dir);
    std::vector<std::string> args = {"grammar", "bench", dir + "/jsonschema", "--vocab",
                                     dir + "/vocab/ggml-vocab-gpt-2.gguf", "--json"};
    if (k_limit) args.insert(args.end(), {"--limit", k_limit});
    tools_capture in, out, err;
    ASSERT_EQ(cli_tool_main(args, in.get(), out.get(), err.get()), 0) << err.text();
    const nlohmann::json j = nlohmann::json::parse(out.text());
    std::printf("jsonschema, gpt-2 vocabulary, token by token: %s\n", j.dump().c_str());
    for (const auto & name : j["timed_out"]) std::printf("timed out: %s\n", name.get<std::string>().c_str());
    if (k_limit) {
        std::printf("jsonschema: the first %s schemas only (sanitizer build); no floor checked\n", k_limit);
        return;
    }
    // Measured: 2,568 schemas, 85 compile errors, 2,436 pass (one over its 10 s budget, which
    // passes given more time), under 2 minutes on one core of the development VM. The floor leaves room
    // for a few more schemas over budget on a slower machine and keeps a change from losing
    // schemas unnoticed; raise it as the compiler and the matcher learn more.
    EXPECT_EQ(j["schemas"].get<size_t>(), 2568u);
    EXPECT_LE(j["compile_errors"].get<size_t>(), 95u);
    EXPECT_GE(j["passing"].get<size_t>(), 2424u);
}

TEST(inferd_cli_grammar_bench, hostile_suite_never_dies) {
    INFERD_REQUIRE_TESTDATA(dir);
    if (k_limit) GTEST_SKIP() << "sanitizer build: test-json-schema-hostile runs the suite through the compiler there";
    const std::filesystem::path suite = std::filesystem::temp_directory_path() / ("inferd-hostile-" + std::to_string(::getpid()));
    const size_t n = hostile_schemas_write(suite);
    tools_capture in, out, err;
    const int rc = cli_tool_main({"grammar", "bench", suite.string(), "--vocab", dir + "/vocab/ggml-vocab-gpt-2.gguf", "--json",
                                  "--budget-s", "1"},
                                 in.get(), out.get(), err.get());
    std::filesystem::remove_all(suite);
    ASSERT_EQ(rc, 0) << err.text();
    const nlohmann::json j = nlohmann::json::parse(out.text());
    std::printf("hostile suite, gpt-2 vocabulary: %s\n", j.dump().c_str());
    EXPECT_EQ(j["schemas"].get<size_t>(), n);
    EXPECT_GT(j["compile_errors"].get<size_t>(), 0u);
    EXPECT_LT(j["compile_errors"].get<size_t>(), n);
}

}  // namespace
