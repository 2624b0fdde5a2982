// End-to-end operations: API keys, body limit, 8 concurrent greedy requests equal to one-by-one,
// a client that disconnects mid-stream (slot freed, gauges back to 0), /metrics (and promtool
// when installed), SIGTERM draining an in-flight request, a bad flag exiting 2.
#include "server/inferd-process.h"
#include "testdata.h"

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <cstdio>
#include <future>
#include <regex>

using nlohmann::json;

namespace {

std::string model_path(const std::string & dir) { return dir + "/models/stories260K-f32.gguf"; }

}  // namespace

TEST(server_e2e_ops, api_keys_guard_the_api_but_not_health) {
    INFERD_REQUIRE_TESTDATA(dir);
    inferd_process p({"-m", model_path(dir), "--api-key", "sekrit", "--api-key", "other", "--metrics-key", "mkey"});
    ASSERT_TRUE(p.wait_ready()) << p.log();
    const std::string body = R"({"prompt":[1],"max_tokens":2})";
    auto r = inferd_call(p.port(), "POST", "/v1/completions", body);
    EXPECT_EQ(r->status, 401);
    EXPECT_EQ(json::parse(r->body)["error"]["type"], "authentication_error");
    EXPECT_EQ(inferd_call(p.port(), "POST", "/v1/completions", body, "Authorization: Bearer wrong\r\n")->status, 401);
    EXPECT_EQ(inferd_call(p.port(), "POST", "/v1/completions", body, "Authorization: Bearer sekrit\r\n")->status, 200);
    EXPECT_EQ(inferd_call(p.port(), "POST", "/v1/completions", body, "Authorization: Bearer other\r\n")->status, 200);
    EXPECT_EQ(inferd_call(p.port(), "POST", "/tokenize", R"({"content":"a"})")->status, 401);
    EXPECT_EQ(inferd_call(p.port(), "GET", "/health")->status, 200);
    EXPECT_EQ(inferd_call(p.port(), "GET", "/metrics")->status, 401);
    EXPECT_EQ(inferd_call(p.port(), "GET", "/metrics", "", "Authorization: Bearer mkey\r\n")->status, 200);
    EXPECT_EQ(p.terminate(), 0);
}

TEST(server_e2e_ops, body_limit_and_bad_flags) {
    INFERD_REQUIRE_TESTDATA(dir);
    inferd_process p({"-m", model_path(dir), "--max-body-size", "1024"});
    ASSERT_TRUE(p.wait_ready()) << p.log();
    const std::string big = R"({"prompt":")" + std::string(4000, 'a') + R"("})";
    auto r = inferd_call(p.port(), "POST", "/v1/completions", big);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 413);
    EXPECT_TRUE(json::parse(r->body)["error"].is_object());
    EXPECT_EQ(inferd_call(p.port(), "GET", "/health")->status, 200) << "still serving";
    EXPECT_EQ(p.terminate(), 0);
    inferd_process bad({"-m", model_path(dir), "--parallel", "zero"});
    EXPECT_EQ(bad.wait_exit(), 2);
    EXPECT_NE(bad.log().find("--parallel"), std::string::npos) << bad.log();
    inferd_process missing({"-m", dir + "/models/nothing.gguf"});
    EXPECT_EQ(missing.wait_exit(), 1);
}

TEST(server_e2e_ops, concurrent_greedy_requests_equal_one_by_one) {
    INFERD_REQUIRE_TESTDATA(dir);
    inferd_process p({"-m", model_path(dir), "--parallel", "8", "-c", "1024", "--cache-type-k", "f32", "--cache-type-v", "f32"});
    ASSERT_TRUE(p.wait_ready()) << p.log();
    std::vector<std::string> bodies;
    for (int i = 0; i < 8; ++i) {
        json req = {{"prompt", json::array({1, 300 + i, 400 - i, 280 + 2 * i})}, {"max_tokens", 24}, {"temperature", 0}};
        bodies.push_back(req.dump());
    }
    std::vector<std::string> alone;
    for (const std::string & b : bodies) alone.push_back(json::parse(inferd_call(p.port(), "POST", "/v1/completions", b)->body)["choices"][0]["text"]);
    std::vector<std::future<std::string>> futs;
    for (const std::string & b : bodies) {
        futs.push_back(std::async(std::launch::async, [&p, b] {
            auto r = inferd_call(p.port(), "POST", "/v1/completions", b);
            return r ? json::parse(r->body)["choices"][0]["text"].get<std::string>() : std::string("<no response>");
        }));
    }
    for (size_t i = 0; i < futs.size(); ++i) EXPECT_EQ(futs[i].get(), alone[i]) << "request " << i;
    EXPECT_EQ(p.terminate(), 0);
}

TEST(server_e2e_ops, disconnect_mid_stream_frees_the_slot) {
    INFERD_REQUIRE_TESTDATA(dir);
    inferd_process p({"-m", model_path(dir), "--parallel", "2", "-c", "8192"});
    ASSERT_TRUE(p.wait_ready()) << p.log();
    {
        test_conn c(p.port());
        const json req = {{"prompt", json::array({1})}, {"max_tokens", 8000}, {"stream", true}, {"temperature", 1}, {"ignore_eos", true}};
        ASSERT_TRUE(c.send(test_request("POST", "/v1/completions", req.dump(), "Content-Type: application/json\r\n")));
        auto head = c.read_head();
        ASSERT_TRUE(head);
        ASSERT_TRUE(c.read_chunk());
        c.close();  // the client goes away mid-stream
    }
    double running = -1;
    for (int i = 0; i < 200; ++i) {
        running = inferd_metric(inferd_call(p.port(), "GET", "/metrics")->body, "inferd_requests_running");
        if (running == 0) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    EXPECT_EQ(running, 0);
    const std::string m = inferd_call(p.port(), "GET", "/metrics")->body;
    EXPECT_EQ(inferd_metric(m, "inferd_requests_waiting"), 0);
    EXPECT_GT(inferd_metric(m, "inferd_generation_tokens_total"), 0) << m;
    EXPECT_LT(inferd_metric(m, "inferd_generation_tokens_total"), 8000) << "the request ended when its client left";
    EXPECT_GT(inferd_metric(m, "inferd_decode_steps_total"), 0);
    EXPECT_NE(m.find("inferd_model_info{"), std::string::npos);
    EXPECT_NE(m.find("inferd_time_to_first_token_seconds_bucket"), std::string::npos);
    // promtool, when installed (Debian package prometheus), checks the exposition.
    if (std::system("command -v promtool > /dev/null 2>&1") == 0) {
        const std::string path = std::filesystem::temp_directory_path() / "inferd-metrics.txt";
        std::FILE * f = std::fopen(path.c_str(), "w");
        std::fputs(m.c_str(), f);
        std::fclose(f);
        EXPECT_EQ(std::system(("promtool check metrics < " + path + " > /dev/null").c_str()), 0);
    } else {
        std::printf("promtool is not installed: the exposition format check is skipped\n");
    }
    EXPECT_EQ(p.terminate(), 0);
}

TEST(server_e2e_ops, sigterm_drains_requests_in_flight) {
    INFERD_REQUIRE_TESTDATA(dir);
    inferd_process p({"-m", model_path(dir), "-c", "512"});
    ASSERT_TRUE(p.wait_ready()) << p.log();
    test_conn c(p.port(), 60);
    const json req = {{"prompt", json::array({1})}, {"max_tokens", 400}, {"stream", true}, {"temperature", 0}};
    ASSERT_TRUE(c.send(test_request("POST", "/v1/completions", req.dump(), "Content-Type: application/json\r\n")));
    ASSERT_TRUE(c.read_head());
    ASSERT_TRUE(c.read_chunk());
    ::kill(p.pid(), SIGTERM);
    std::string rest;
    for (;;) {
        auto ch = c.read_chunk();
        ASSERT_TRUE(ch) << "the stream ends properly";
        if (ch->empty()) break;
        rest += *ch;
    }
    EXPECT_NE(rest.find("data: [DONE]"), std::string::npos);
    EXPECT_EQ(p.wait_exit(), 0);
    test_conn late(p.port(), 2);
    EXPECT_FALSE(late.ok() && late.send(test_request("GET", "/health")) && late.read_response());
}

TEST(server_e2e_ops, full_queue_answers_503_with_retry_after) {
    INFERD_REQUIRE_TESTDATA(dir);
    inferd_process p({"-m", model_path(dir), "--parallel", "1", "--max-queue", "0", "-c", "4096"});
    ASSERT_TRUE(p.wait_ready()) << p.log();
    test_conn busy(p.port(), 60);
    // ignore_eos: the slot stays busy for all 4000 tokens, however quickly the sample ends a story.
    const json req = {{"prompt", json::array({1})}, {"max_tokens", 4000}, {"stream", true}, {"temperature", 1}, {"ignore_eos", true}};
    ASSERT_TRUE(busy.send(test_request("POST", "/v1/completions", req.dump(), "Content-Type: application/json\r\n")));
    ASSERT_TRUE(busy.read_head());
    ASSERT_TRUE(busy.read_chunk());  // the only slot is generating
    auto r = inferd_call(p.port(), "POST", "/v1/completions", R"({"prompt":[1],"max_tokens":2})");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 503);
    EXPECT_FALSE(r->header("retry-after").empty());
    EXPECT_EQ(json::parse(r->body)["error"]["code"], "queue_full");
    busy.close();
    // Once the slot is free again, requests are served.
    int status = 0;
    for (int i = 0; i < 200 && status != 200; ++i) {
        auto ok = inferd_call(p.port(), "POST", "/v1/completions", R"({"prompt":[1],"max_tokens":2})");
        status = ok ? ok->status : 0;
        if (status != 200) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    EXPECT_EQ(status, 200);
    EXPECT_EQ(p.terminate(), 0);
}

TEST(server_e2e_ops, health_says_loading_until_the_model_is_ready) {
    INFERD_REQUIRE_TESTDATA(dir);
    // the load is held back 3 s (INFERD_DEBUG_LOAD_DELAY_MS), so the port answers long before
    inferd_process p({"-m", model_path(dir)}, {"INFERD_DEBUG_LOAD_DELAY_MS=3000"});
    ASSERT_TRUE(p.wait_listening()) << p.log();
    const auto t0 = std::chrono::steady_clock::now();
    auto h = inferd_call(p.port(), "GET", "/health");
    auto c = inferd_call(p.port(), "POST", "/v1/completions", R"({"prompt":[1],"max_tokens":2})");
    const bool still_loading = std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(2500);
    ASSERT_TRUE(h && c);
    if (still_loading) {  // always, unless this machine stalled the test for seconds
        EXPECT_EQ(h->status, 503);
        EXPECT_EQ(json::parse(h->body), json({{"status", "loading"}}));
        EXPECT_FALSE(h->header("retry-after").empty());
        EXPECT_EQ(c->status, 503);
        EXPECT_EQ(json::parse(c->body)["error"]["code"], "model_loading");
    }
    ASSERT_TRUE(p.wait_ready()) << p.log();
    h = inferd_call(p.port(), "GET", "/health");
    ASSERT_TRUE(h);
    EXPECT_EQ(h->status, 200);
    EXPECT_EQ(json::parse(h->body), json({{"status", "ok"}}));
    EXPECT_NE(p.log().find("INFERD_DEBUG_LOAD_DELAY_MS"), std::string::npos);
    EXPECT_EQ(p.terminate(), 0);
}

TEST(server_e2e_ops, sigterm_while_loading_exits_at_once) {
    INFERD_REQUIRE_TESTDATA(dir);
    inferd_process p({"-m", model_path(dir)}, {"INFERD_DEBUG_LOAD_DELAY_MS=600000"});
    ASSERT_TRUE(p.wait_listening()) << p.log();
    EXPECT_EQ(inferd_call(p.port(), "GET", "/health")->status, 503);
    EXPECT_EQ(p.terminate(), 0) << p.log();  // the ten-minute delay is cut short
}
