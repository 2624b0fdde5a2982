// The chat page driven in a real browser: Debian's headless Chromium through playwright-core
// (installed from npm into the build tree, pointed at /usr/bin/chromium or $INFERD_CHROMIUM; no
// browser download), against the real inferd serving a shipped model under an API key. What the
// browser does and checks is in webui-browser/browser-test.mjs; the screenshots it takes (desktop
// and phone width) are left in the build tree's webui-screenshots/.
#include "server/inferd-process.h"
#include "server/npm-work.h"
#include "testdata.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

namespace {

std::string chromium_path() {
    const char * env = std::getenv("INFERD_CHROMIUM");
    return env && *env ? env : "/usr/bin/chromium";
}

}  // namespace

TEST(webui_browser, chat_page_in_headless_chromium) {
    INFERD_REQUIRE_TESTDATA(dir);
    if (!std::filesystem::exists(chromium_path())) {
        if (inferd_running_in_ci()) ADD_FAILURE() << chromium_path() << " is required under CI=true (Debian's chromium)";
        GTEST_SKIP() << "no Chromium at " << chromium_path() << " (Debian's chromium package): skipped";
    }
    const std::filesystem::path here = std::filesystem::path(__FILE__).parent_path();
    const std::string work = npm_work_prepare(
        INFERD_NPM_DIR, {here / "webui-browser" / "browser-test.mjs", here / "openai-client" / "checks.mjs"},
        {"playwright-core@1"});
    if (work.empty()) GTEST_SKIP() << "node / npm or playwright-core are not available: skipped";

    // The tiny model writes thousands of tokens a second; steps paced at 15 ms make it stream as a
    // real model does, so that the browser sees an answer arrive in pieces and can stop it midway.
    inferd_process p({"-m", dir + "/models/tiny-qwen2-q8_0.gguf", "--api-key", "sk-inferd-test", "-c", "4096",
                      "--parallel", "2", "-t", "2", "--alias", "tiny"},
                     {"INFERD_DEBUG_STEP_DELAY_MS=15"});
    ASSERT_TRUE(p.wait_ready()) << p.log();
    const std::filesystem::path shots = INFERD_SCREENSHOT_DIR;
    std::filesystem::remove_all(shots);
    std::string out;
    const int rc = npm_work_run(work, "node browser-test.mjs " + std::to_string(p.port()) + " sk-inferd-test '" +
                                          shots.string() + "'", &out);
    EXPECT_EQ(rc, 0) << out << "\n" << p.log();
    for (const char * f : {"webui-desktop.png", "webui-phone.png"}) {
        EXPECT_TRUE(std::filesystem::exists(shots / f) && std::filesystem::file_size(shots / f) > 1000) << f;
    }
    EXPECT_EQ(p.terminate(), 0);
}
