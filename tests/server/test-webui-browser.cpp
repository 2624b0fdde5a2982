// The chat page driven in a real browser: Debian's headless Chromium through playwright-core
// (installed from npm into the build tree, pointed at /usr/bin/chromium or $INFERD_CHROMIUM; no
// browser download), against the real inferd serving a shipped model under an API key. What the
// browser does and checks is in webui-browser/browser-test.mjs (and reasoning-test.mjs, with Qwen3);
// the screenshots it takes (desktop, phone width light and dark) are left in the build tree's
// webui-screenshots/.
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

// The npm folder with playwright-core and the scripts; "" when Chromium, node or the package is
// missing (a failure under CI=true).
std::string prepare_browser() {
    if (!std::filesystem::exists(chromium_path())) {
        if (inferd_running_in_ci()) ADD_FAILURE() << chromium_path() << " is required under CI=true (Debian's chromium)";
        return "";
    }
    const std::filesystem::path here = std::filesystem::path(__FILE__).parent_path();
    return npm_work_prepare(INFERD_NPM_DIR,
                            {here / "webui-browser" / "browser-test.mjs", here / "webui-browser" / "reasoning-test.mjs",
                             here / "openai-client" / "checks.mjs"},
                            {"playwright-core@1"});
}

}  // namespace

TEST(webui_browser, chat_page_in_headless_chromium) {
    INFERD_REQUIRE_TESTDATA(dir);
    const std::string work = prepare_browser();
    if (work.empty()) GTEST_SKIP() << "Chromium (" << chromium_path() << "), node / npm or playwright-core missing: skipped";

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
    for (const char * f : {"webui-desktop.png", "webui-phone.png", "webui-phone-dark.png"}) {
        EXPECT_TRUE(std::filesystem::exists(shots / f) && std::filesystem::file_size(shots / f) > 1000) << f;
    }
    EXPECT_EQ(p.terminate(), 0);
}

TEST(webui_browser, reasoning_shown_collapsed) {
    INFERD_REQUIRE_TESTDATA(dir);
    const std::string work = prepare_browser();
    if (work.empty()) GTEST_SKIP() << "Chromium (" << chromium_path() << "), node / npm or playwright-core missing: skipped";
    inferd_process p({"-m", dir + "/models/tiny-qwen3-q4_k_m.gguf", "--chat-template",
                      dir + "/chat/templates/Qwen-Qwen3-0.6B.jinja", "-c", "1024", "-t", "2"});
    ASSERT_TRUE(p.wait_ready()) << p.log();
    std::string out;
    EXPECT_EQ(npm_work_run(work, "node reasoning-test.mjs " + std::to_string(p.port()), &out), 0) << out << "\n" << p.log();
    EXPECT_EQ(p.terminate(), 0);
}
