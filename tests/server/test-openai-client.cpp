// Real npm clients against the real inferd: the official `openai` client doing completions, chat
// and streaming; structured output through openai's zod helper and the `ai` SDK's generateObject
// (an OpenAI-compatible provider); tool calls and reasoning through both, with Qwen3's chat
// template; embeddings through openai's embeddings.create and LangChain's OpenAIEmbeddings. The packages are installed into the build tree with npm, once:
// openai 4 (its zod helper wants zod 3), zod 3, ai 5 and @ai-sdk/openai-compatible 1 (the
// newest ai wants Node 22), @langchain/openai 1 with @langchain/core 1.
#include "server/inferd-process.h"
#include "server/npm-work.h"
#include "testdata.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

namespace {

const std::vector<std::string> npm_packages = {"openai@4", "zod@3", "ai@5", "@ai-sdk/openai-compatible@1",
                                               "@langchain/openai@1", "@langchain/core@1"};

// The npm work folder with every package installed and `script` (with checks.mjs) copied in; "" after skipping
// (or failing under CI=true) with the reason.
std::string prepare_npm(const char * script) {
    const std::filesystem::path here = std::filesystem::path(__FILE__).parent_path() / "openai-client";
    return npm_work_prepare(INFERD_NPM_DIR, {here / script, here / "checks.mjs"}, npm_packages);
}

// Runs `node script PORT KEY [ARG]` in work; the exit status, its output in *out.
int run_node(const std::string & work, const char * script, uint16_t port, const std::string & arg, std::string * out) {
    std::string cmd = std::string("node ") + script + " " + std::to_string(port) + " sk-inferd-test";
    if (!arg.empty()) cmd += " '" + arg + "'";
    return npm_work_run(work, cmd, out);
}

// Serves a tiny model (qwen2 unless model is given) with an API key and runs a client script
// against it (node_arg: a third argument for the script).
void run_client_script(const std::string & dir, const char * script, const char * ctx,
                       const std::string & model = "tiny-qwen2-q8_0.gguf", std::vector<std::string> extra = {},
                       const std::string & node_arg = "") {
    const std::string work = prepare_npm(script);
    if (work.empty()) GTEST_SKIP() << "node / npm or the npm packages are not available: skipped";
    std::vector<std::string> args = {"-m", dir + "/models/" + model, "--api-key", "sk-inferd-test", "-c", ctx};
    args.insert(args.end(), extra.begin(), extra.end());
    inferd_process p(args);
    ASSERT_TRUE(p.wait_ready()) << p.log();
    std::string out;
    EXPECT_EQ(run_node(work, script, p.port(), node_arg, &out), 0) << out << "\n" << p.log();
    EXPECT_EQ(p.terminate(), 0);
}

}  // namespace

TEST(openai_client, completions_chat_and_streaming) {
    INFERD_REQUIRE_TESTDATA(dir);
    run_client_script(dir, "client-test.mjs", "512");
}

TEST(openai_client, structured_output_with_zod_and_the_ai_sdk) {
    INFERD_REQUIRE_TESTDATA(dir);
    run_client_script(dir, "structured-test.mjs", "1024");
}

TEST(openai_client, tool_calls_and_reasoning) {
    INFERD_REQUIRE_TESTDATA(dir);
    run_client_script(dir, "tools-test.mjs", "2048", "tiny-qwen3-q4_k_m.gguf",
                      {"--chat-template", dir + "/chat/templates/Qwen-Qwen3-0.6B.jinja"});
}

TEST(openai_client, embeddings_with_openai_and_langchain) {
    INFERD_REQUIRE_TESTDATA(dir);
    const std::string ref = std::filesystem::absolute(dir + "/reference/tiny-bert-f16.cls.emb.json").string();
    run_client_script(dir, "embeddings-test.mjs", "512", "tiny-bert-f16.gguf", {}, ref);
}

// HTTPS: a self-signed certificate made here with the openssl tool; the openai client trusts it
// through NODE_EXTRA_CA_CERTS. A plain-HTTP request to the HTTPS port gets no answer and the daemon
// goes on; a missing key file stops the daemon with a message naming it.
TEST(openai_client, https_with_a_self_signed_certificate) {
    INFERD_REQUIRE_TESTDATA(dir);
    const std::string work = prepare_npm("tls-test.mjs");
    if (work.empty()) GTEST_SKIP() << "node / npm or the npm packages are not available: skipped";
    if (!npm_work_have("openssl")) {
        if (inferd_running_in_ci()) ADD_FAILURE() << "the openssl tool is required under CI=true";
        GTEST_SKIP() << "the openssl tool is not available: skipped";
    }
    const std::string cert = work + "/tls-cert.pem", key = work + "/tls-key.pem";
    const std::string make_cert = "openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=127.0.0.1 "
                                  "-addext subjectAltName=IP:127.0.0.1 -keyout '" + key + "' -out '" + cert +
                                  "' > '" + work + "/openssl.log' 2>&1";
    ASSERT_EQ(std::system(make_cert.c_str()), 0) << "openssl req failed (see " << work << "/openssl.log)";
    inferd_process p({"-m", dir + "/models/tiny-qwen2-q8_0.gguf", "--api-key", "sk-inferd-test", "-c", "512",
                      "--ssl-cert-file", cert, "--ssl-key-file", key});
    ASSERT_TRUE(p.wait_listening()) << p.log();
    EXPECT_NE(p.log().find("listening on https://"), std::string::npos) << p.log();
    {
        test_conn plain(p.port(), 5);
        ASSERT_TRUE(plain.send(test_request("GET", "/health")));
        auto r = plain.read_response();
        EXPECT_FALSE(r && r->status == 200);
    }
    std::string out;
    const int rc = npm_work_run(work, "NODE_EXTRA_CA_CERTS='" + cert + "' node tls-test.mjs " + std::to_string(p.port()) +
                                          " sk-inferd-test", &out);
    EXPECT_EQ(rc, 0) << out << "\n" << p.log();
    EXPECT_EQ(p.terminate(), 0);

    inferd_process bad({"-m", dir + "/models/tiny-qwen2-q8_0.gguf", "--ssl-cert-file", cert, "--ssl-key-file",
                        work + "/no-such-key.pem"});
    EXPECT_EQ(bad.wait_exit(), 1);
    EXPECT_NE(bad.log().find("no-such-key.pem"), std::string::npos) << bad.log();
}
