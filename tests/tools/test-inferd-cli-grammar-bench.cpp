// inferd-cli grammar bench over the whole collection of ../shared/testdata/jsonschema with the
// gpt-2 vocabulary: every schema's instances token by token, in both serializations, with a
// floor on the number of schemas that pass. The figures are printed (speed is not asserted).
#include "cli/cli.h"
#include "testdata.h"
#include "tools/tools-test-util.h"

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <vector>

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

}  // namespace
