// tests/server/hostile-suite.h — what the hostile-client suites share: one real `inferd` per
// suite (stories260K, 4 slots, 512 cells, a queue of 8, header timeout 1 s, idle, body and
// write timeouts 2 s),
// raw connections, and the checks that the daemon is whole after an attack (nothing running or
// waiting, a normal request answered as before).
#pragma once

#include "server/inferd-process.h"
#include "testdata.h"

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <thread>

template <class Suite>
class hostile_suite : public ::testing::Test {
protected:
    using json = nlohmann::json;

    static void SetUpTestSuite() {
        const std::string dir = inferd_testdata_dir();
        if (dir.empty()) return;
        proc_ = new inferd_process({"-m", dir + "/models/stories260K-f32.gguf", "-np", "4", "-c", "512", "-t", "2",
                                    "--max-queue", "8", "--header-timeout", "1", "--idle-timeout", "2",
                                    "--body-timeout", "2", "--write-timeout", "2"});
        ready_ = proc_->wait_ready();
        if (ready_) reference_ = complete(normal_request());
    }
    static void TearDownTestSuite() {
        delete proc_;
        proc_ = nullptr;
    }
    void SetUp() override {
        INFERD_REQUIRE_TESTDATA(dir);
        ASSERT_TRUE(ready_) << proc_->log();
    }
    // After each test: nothing left running or waiting, the same answer to the same request.
    void TearDown() override {
        if (!proc_ || !ready_) return;
        ASSERT_TRUE(proc_->alive()) << proc_->log();
        double running = -1, waiting = -1;
        for (int i = 0; i < 300; ++i) {
            const std::string m = metrics();
            running = metric(m, "inferd_requests_running");
            waiting = metric(m, "inferd_requests_waiting");
            if (running == 0 && waiting == 0) break;
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        EXPECT_EQ(running, 0.0);
        EXPECT_EQ(waiting, 0.0);
        EXPECT_EQ(complete(normal_request()), reference_);
    }

    static json normal_request() {
        return {{"prompt", json::array({1, 400, 401, 402})}, {"max_tokens", 8}, {"temperature", 0}};
    }
    // The text of a completion ("<status> <body>" when it is not a 200).
    static std::string complete(const json & req) {
        auto r = inferd_call(proc_->port(), "POST", "/v1/completions", req.dump());
        if (!r) return "<no response>";
        if (r->status != 200) return std::to_string(r->status) + " " + r->body;
        return json::parse(r->body)["choices"][0]["text"].get<std::string>();
    }
    static std::string metrics() {
        auto r = inferd_call(proc_->port(), "GET", "/metrics");
        return r ? r->body : "";
    }
    static double metric(const std::string & text, const std::string & name) { return inferd_metric(text, name); }
    // The status and parsed body of a POST with this raw body.
    static std::pair<int, json> post_raw(const std::string & path, const std::string & body) {
        auto r = inferd_call(proc_->port(), "POST", path, body);
        if (!r) return {0, json()};
        return {r->status, json::parse(r->body, nullptr, false)};
    }
    static uint16_t port() { return proc_->port(); }

    static inline inferd_process * proc_ = nullptr;
    static inline bool ready_ = false;
    static inline std::string reference_;
};
