// End-to-end: the chat page served by the real inferd — the built-in files with their policy
// headers and ETags, the page public under --api-key while the API is not, --no-webui,
// --webui-path (and what it refuses to serve), the URL in the log, and model names: any name is
// served by the loaded model unless --strict-model-name.
#include "server/inferd-process.h"
#include "testdata.h"

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>

using nlohmann::json;

namespace {

std::vector<std::string> base_args(const std::string & dir) {
    return {"-m", dir + "/models/tiny-qwen2-q8_0.gguf", "-c", "512", "-t", "2", "--alias", "tiny"};
}

std::vector<std::string> with(std::vector<std::string> a, std::initializer_list<std::string> more) {
    a.insert(a.end(), more);
    return a;
}

// The files index.html refers to by a relative src= or href= ("app.js", "style.css", …).
std::vector<std::string> referenced_files(const std::string & html) {
    std::vector<std::string> out;
    const std::regex ref(R"re((?:src|href)="([^"#:]+)")re");
    for (auto it = std::sregex_iterator(html.begin(), html.end(), ref); it != std::sregex_iterator(); ++it) {
        std::string f = (*it)[1];
        if (f.rfind("./", 0) == 0) f = f.substr(2);
        if (!f.empty() && f[0] != '/') out.push_back("/" + f);
    }
    return out;
}

struct temp_page {
    std::filesystem::path root;
    temp_page() {
        root = std::filesystem::temp_directory_path() / ("inferd-webui-" + std::to_string(::getpid()));
        std::filesystem::remove_all(root);
        std::filesystem::create_directories(root / "page" / "assets");
        write("page/index.html", "<!doctype html><title>mine</title>");
        write("page/assets/app-1a2b.js", "console.log('mine');");
        write("page/.env", "SECRET=1");
        write("outside.txt", "not for the page");
        std::filesystem::create_symlink(root / "outside.txt", root / "page" / "link.txt");
    }
    ~temp_page() { std::filesystem::remove_all(root); }
    void write(const std::string & rel, const std::string & text) const { std::ofstream(root / rel) << text; }
    std::string page() const { return (root / "page").string(); }
};

}  // namespace

TEST(server_e2e_webui, builtin_page_with_its_policy_and_etags) {
    INFERD_REQUIRE_TESTDATA(dir);
    inferd_process p(base_args(dir));
    ASSERT_TRUE(p.wait_ready()) << p.log();
    EXPECT_NE(p.log().find("chat page: http://127.0.0.1:" + std::to_string(p.port()) + "/"), std::string::npos) << p.log();

    auto r = inferd_call(p.port(), "GET", "/");
    ASSERT_TRUE(r);
    ASSERT_EQ(r->status, 200);
    EXPECT_EQ(r->header("content-type"), "text/html; charset=utf-8");
    const std::string csp = r->header("content-security-policy");
    EXPECT_NE(csp.find("default-src 'none'"), std::string::npos) << csp;
    EXPECT_NE(csp.find("script-src 'self'"), std::string::npos) << csp;
    EXPECT_EQ(csp.find("unsafe-inline"), std::string::npos) << csp;
    EXPECT_EQ(r->header("x-content-type-options"), "nosniff");
    EXPECT_NE(csp.find("frame-ancestors 'none'"), std::string::npos) << csp;
    // The policy allows no inline code, and the page has none.
    const std::string & html = r->body;
    EXPECT_FALSE(std::regex_search(html, std::regex(R"(<script(?![^>]*\bsrc=)[^>]*>)", std::regex::icase))) << html;
    EXPECT_FALSE(std::regex_search(html, std::regex(R"(\son[a-z]+\s*=)", std::regex::icase))) << html;
    EXPECT_FALSE(std::regex_search(html, std::regex(R"(\sstyle\s*=)", std::regex::icase))) << html;

    const std::vector<std::string> files = referenced_files(html);
    EXPECT_GE(files.size(), 2u) << html;  // a script and a style sheet at least
    for (const std::string & f : files) {
        auto a = inferd_call(p.port(), "GET", f);
        ASSERT_TRUE(a) << f;
        EXPECT_EQ(a->status, 200) << f;
        EXPECT_FALSE(a->header("content-security-policy").empty()) << f;
        if (f.size() > 3 && f.substr(f.size() - 3) == ".js") {
            EXPECT_EQ(a->header("content-type"), "text/javascript; charset=utf-8") << f;
        }
        if (f.size() > 4 && f.substr(f.size() - 4) == ".css") {
            EXPECT_EQ(a->header("content-type"), "text/css; charset=utf-8") << f;
        }
    }

    // A reload with the ETag costs a 304 without a body.
    const std::string etag = r->header("etag");
    ASSERT_FALSE(etag.empty());
    auto again = inferd_call(p.port(), "GET", "/", {}, "If-None-Match: " + etag + "\r\n");
    ASSERT_TRUE(again);
    EXPECT_EQ(again->status, 304);
    EXPECT_TRUE(again->body.empty());
    auto changed = inferd_call(p.port(), "GET", "/", {}, "If-None-Match: \"something-else\"\r\n");
    EXPECT_EQ(changed->status, 200);

    // The page's paths never shadow the API, and unknown paths stay 404.
    EXPECT_EQ(inferd_call(p.port(), "GET", "/nope")->status, 404);
    EXPECT_EQ(inferd_call(p.port(), "GET", "/README.md")->status, 404);  // the folder's notes are not compiled in
    EXPECT_EQ(inferd_call(p.port(), "GET", "/../etc/passwd")->status, 404);
    EXPECT_EQ(inferd_call(p.port(), "POST", "/", "{}")->status, 404);
    EXPECT_EQ(inferd_call(p.port(), "GET", "/v1/completions")->status, 405);
    auto models = inferd_call(p.port(), "GET", "/v1/models");
    EXPECT_EQ(json::parse(models->body)["data"][0]["id"], "tiny");
    EXPECT_EQ(p.terminate(), 0);
}

TEST(server_e2e_webui, page_is_public_under_an_api_key_and_the_api_is_not) {
    INFERD_REQUIRE_TESTDATA(dir);
    inferd_process p(with(base_args(dir), {"--api-key", "sk-page"}));
    ASSERT_TRUE(p.wait_ready()) << p.log();
    EXPECT_EQ(inferd_call(p.port(), "GET", "/")->status, 200);
    EXPECT_EQ(inferd_call(p.port(), "GET", "/v1/models")->status, 401);
    EXPECT_EQ(inferd_call(p.port(), "GET", "/v1/models", {}, "Authorization: Bearer sk-page\r\n")->status, 200);
    EXPECT_EQ(p.terminate(), 0);
}

TEST(server_e2e_webui, no_webui_turns_the_page_off) {
    INFERD_REQUIRE_TESTDATA(dir);
    inferd_process p(with(base_args(dir), {"--no-webui"}));
    ASSERT_TRUE(p.wait_ready()) << p.log();
    EXPECT_EQ(inferd_call(p.port(), "GET", "/")->status, 404);
    EXPECT_EQ(p.log().find("chat page:"), std::string::npos) << p.log();
    EXPECT_EQ(inferd_call(p.port(), "GET", "/health")->status, 200);
    EXPECT_EQ(p.terminate(), 0);
}

TEST(server_e2e_webui, webui_path_serves_a_folder_and_nothing_outside_it) {
    INFERD_REQUIRE_TESTDATA(dir);
    temp_page t;
    inferd_process p(with(base_args(dir), {"--webui-path", t.page()}));
    ASSERT_TRUE(p.wait_ready()) << p.log();
    auto r = inferd_call(p.port(), "GET", "/");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200);
    EXPECT_EQ(r->body, "<!doctype html><title>mine</title>");
    EXPECT_FALSE(r->header("content-security-policy").empty());
    r = inferd_call(p.port(), "GET", "/assets/app-1a2b.js?v=2");
    EXPECT_EQ(r->status, 200);
    EXPECT_EQ(r->body, "console.log('mine');");
    EXPECT_EQ(r->header("content-type"), "text/javascript; charset=utf-8");
    t.write("page/index.html", "<!doctype html><title>rebuilt</title>");  // read at each request
    EXPECT_EQ(inferd_call(p.port(), "GET", "/index.html")->body, "<!doctype html><title>rebuilt</title>");
    for (const char * refused : {"/../outside.txt", "/%2e%2e/outside.txt", "/assets/%2E%2E/../outside.txt", "/link.txt",
                                 "/.env", "/%2eenv", "/assets//app-1a2b.js", "/assets", "/missing.js", "/%zz"}) {
        auto x = inferd_call(p.port(), "GET", refused);
        ASSERT_TRUE(x) << refused;
        EXPECT_EQ(x->status, 404) << refused << ": " << x->body;
        EXPECT_EQ(x->body.find("not for the page"), std::string::npos) << refused;
    }
    EXPECT_EQ(inferd_call(p.port(), "GET", "/health")->status, 200);
    EXPECT_EQ(p.terminate(), 0);

    inferd_process missing(with(base_args(dir), {"--webui-path", t.root.string() + "/no-such-folder"}));
    EXPECT_EQ(missing.wait_exit(), 1);
    EXPECT_NE(missing.log().find("no-such-folder: not a folder"), std::string::npos) << missing.log();
    inferd_process no_index(with(base_args(dir), {"--webui-path", (t.root / "page" / "assets").string()}));
    EXPECT_EQ(no_index.wait_exit(), 1);
    EXPECT_NE(no_index.log().find("no index.html"), std::string::npos) << no_index.log();
}

TEST(server_e2e_webui, strict_model_name_refuses_other_names) {
    INFERD_REQUIRE_TESTDATA(dir);
    inferd_process p(with(base_args(dir), {"--strict-model-name"}));
    ASSERT_TRUE(p.wait_ready()) << p.log();
    const json other = {{"model", "gpt-4o-mini"}, {"prompt", "x"}, {"max_tokens", 2}};
    auto r = inferd_call(p.port(), "POST", "/v1/completions", other.dump());
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 404);
    EXPECT_EQ(json::parse(r->body)["error"]["code"], "model_not_found");
    json mine = other;
    mine["model"] = "tiny";
    EXPECT_EQ(inferd_call(p.port(), "POST", "/v1/completions", mine.dump())->status, 200);
    mine.erase("model");  // no name at all: the loaded model
    EXPECT_EQ(inferd_call(p.port(), "POST", "/v1/completions", mine.dump())->status, 200);
    EXPECT_EQ(p.terminate(), 0);
}
