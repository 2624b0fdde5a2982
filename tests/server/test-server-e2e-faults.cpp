// End-to-end faults and limits of the real daemon: with failures injected into the batch loop
// (INFERD_DEBUG_FAULTS: a token's way out, admissions, an allocation before a decode), 24
// concurrent requests, streamed and not, each end as 200 or as a 500 in OpenAI's error shape
// (a stream: an error event, then [DONE]); nothing stays running or waiting, the failures are
// logged, and the daemon exits 0 on SIGTERM. With --max-connections, a connection over the limit
// gets 503 with Retry-After and is counted in /metrics.
#include "server/inferd-process.h"
#include "testdata.h"

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <memory>
#include <regex>
#include <thread>

using nlohmann::json;

namespace {

struct outcome {
    int status = 0;
    bool error_event = false;  // a stream carried {"error":…}
    bool done = false;         // a stream ended with [DONE]
    bool finished = false;     // a finish_reason was sent
    std::string body;
};

outcome request(uint16_t port, int i, bool stream) {
    const json req = {{"prompt", "Once upon a time " + std::to_string(i)}, {"max_tokens", 10 + i % 7},
                      {"temperature", 0}, {"stream", stream}, {"ignore_eos", true}};
    outcome o;
    auto r = inferd_call(port, "POST", "/v1/completions", req.dump());
    if (!r) return o;
    o.status = r->status;
    o.body = r->body;
    if (!stream || r->status != 200) return o;
    o.error_event = r->body.find("data: {\"error\"") != std::string::npos;
    o.done = r->body.find("data: [DONE]") != std::string::npos;
    o.finished = r->body.find("\"finish_reason\":\"length\"") != std::string::npos;
    return o;
}

}  // namespace

TEST(server_e2e_faults, injected_faults_fail_their_requests_and_the_daemon_goes_on) {
    INFERD_REQUIRE_TESTDATA(dir);
    inferd_process p({"-m", dir + "/models/tiny-llama-q4_k_m.gguf", "-t", "2", "-np", "4"},
                     {"INFERD_DEBUG_FAULTS=token:37,step:29,admit:7"});
    ASSERT_TRUE(p.wait_ready()) << p.log();
    std::vector<outcome> out(24);
    {
        std::vector<std::jthread> clients;
        for (int i = 0; i < 24; ++i) clients.emplace_back([&, i] { out[size_t(i)] = request(p.port(), i, i % 2 == 1); });
    }
    int ok = 0, failed = 0;
    for (size_t i = 0; i < out.size(); ++i) {
        SCOPED_TRACE("request " + std::to_string(i));
        const outcome & o = out[i];
        if (o.status == 500) {
            const json e = json::parse(o.body);
            EXPECT_EQ(e["error"]["type"], "server_error") << o.body;
            EXPECT_NE(e["error"]["message"].get<std::string>().find("internal error"), std::string::npos) << o.body;
            ++failed;
            continue;
        }
        ASSERT_EQ(o.status, 200) << o.body;
        if (i % 2 == 1) {  // streamed: the headers went out before the fault could come
            EXPECT_TRUE(o.done) << o.body;
            EXPECT_NE(o.error_event, o.finished) << o.body;
            (o.error_event ? failed : ok) += 1;
        } else {
            EXPECT_EQ(json::parse(o.body)["choices"][0]["finish_reason"], "length") << o.body;
            ++ok;
        }
    }
    EXPECT_GT(failed, 0);
    EXPECT_GT(ok, 0);
    const std::string metrics = inferd_call(p.port(), "GET", "/metrics")->body;
    EXPECT_EQ(inferd_metric(metrics, "inferd_requests_running"), 0.0) << metrics;
    EXPECT_EQ(inferd_metric(metrics, "inferd_requests_waiting"), 0.0) << metrics;
    EXPECT_NE(p.log().find("injected fault at token"), std::string::npos) << p.log();
    EXPECT_NE(p.log().find("std::bad_alloc"), std::string::npos) << p.log();
    EXPECT_EQ(p.terminate(), 0) << p.log();
}

TEST(server_e2e_faults, connections_over_max_connections_get_503) {
    INFERD_REQUIRE_TESTDATA(dir);
    inferd_process p({"-m", dir + "/models/stories260K-f32.gguf", "--max-connections", "4"});
    ASSERT_TRUE(p.wait_ready()) << p.log();
    std::vector<std::unique_ptr<test_conn>> held;
    for (int i = 0; i < 4; ++i) held.push_back(std::make_unique<test_conn>(p.port()));
    // The four are open once the server has accepted them: a fifth is refused.
    std::optional<test_response> r;
    for (int tries = 0; tries < 50; ++tries) {
        test_conn c(p.port());
        c.send(test_request("GET", "/health"));
        r = c.read_response();
        if (r && r->status == 503) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 503);
    EXPECT_EQ(r->header("retry-after"), "1");
    EXPECT_NE(r->body.find("too_many_connections"), std::string::npos) << r->body;
    held.clear();
    std::optional<test_response> m;
    for (int tries = 0; tries < 100; ++tries) {
        m = inferd_call(p.port(), "GET", "/metrics");
        if (m && m->status == 200) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    ASSERT_TRUE(m && m->status == 200);
    EXPECT_GE(inferd_metric(m->body, "inferd_http_connections_refused_total"), 1.0) << m->body;
    EXPECT_NE(p.log().find("the limit is 4 (--max-connections)"), std::string::npos) << p.log();
    EXPECT_EQ(p.terminate(), 0);
}
