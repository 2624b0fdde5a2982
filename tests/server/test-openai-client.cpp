// The official `openai` npm client (installed into the build tree by this test with npm, once)
// doing completions, chat and streaming against the real inferd.
#include "server/inferd-process.h"
#include "testdata.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

namespace {

bool have(const char * tool) { return std::system((std::string("command -v ") + tool + " > /dev/null 2>&1").c_str()) == 0; }

}  // namespace

TEST(openai_client, completions_chat_and_streaming) {
    INFERD_REQUIRE_TESTDATA(dir);
    if (!have("node") || !have("npm")) {
        if (inferd_running_in_ci()) FAIL() << "node and npm are required under CI=true";
        GTEST_SKIP() << "node / npm not installed: the openai client test is skipped";
    }
    const std::filesystem::path here = std::filesystem::path(__FILE__).parent_path() / "openai-client";
    const std::filesystem::path work = std::filesystem::path(INFERD_NPM_DIR);
    std::filesystem::create_directories(work);
    std::filesystem::copy_file(here / "client-test.mjs", work / "client-test.mjs",
                               std::filesystem::copy_options::overwrite_existing);
    if (!std::filesystem::exists(work / "node_modules" / "openai")) {
        const std::string cmd = "cd '" + work.string() + "' && npm install --no-audit --no-fund --silent openai@4 > npm.log 2>&1";
        if (std::system(cmd.c_str()) != 0) {
            if (inferd_running_in_ci()) FAIL() << "npm install openai failed (see " << (work / "npm.log") << ")";
            GTEST_SKIP() << "npm install openai failed (no network?): skipped";
        }
    }
    inferd_process p({"-m", dir + "/models/tiny-qwen2-q8_0.gguf", "--api-key", "sk-inferd-test", "-c", "512"});
    ASSERT_TRUE(p.wait_ready()) << p.log();
    const std::string cmd = "cd '" + work.string() + "' && node client-test.mjs " + std::to_string(p.port()) +
                            " sk-inferd-test > client.log 2>&1";
    const int rc = std::system(cmd.c_str());
    std::ifstream f(work / "client.log");
    std::stringstream ss;
    ss << f.rdbuf();
    EXPECT_EQ(rc, 0) << ss.str() << "\n" << p.log();
    EXPECT_EQ(p.terminate(), 0);
}
