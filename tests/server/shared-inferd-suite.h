// tests/server/shared-inferd-suite.h — a GoogleTest fixture whose test suite shares one real
// `inferd` (tiny-qwen2-q8_0 from ../shared/testdata, 4 slots, 1024 cells, 2 threads, alias
// "tiny"), started before the suite's first test and stopped after its last.
//
// Usage:
//   class my_e2e : public shared_inferd_suite<my_e2e> {};
//   TEST_F(my_e2e, completion) {
//       int status = 0;
//       json r = post("/v1/completions", {{"prompt", "Hi"}, {"max_tokens", 2}}, &status);
//       EXPECT_EQ(status, 200);
//   }
// Each suite (each Suite type) gets its own process. Tests skip with a printed reason when the
// test data is absent (and fail under CI=true, see testdata.h).
#pragma once

#include "server/inferd-process.h"
#include "testdata.h"

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <string>

template <class Suite>
class shared_inferd_suite : public ::testing::Test {
protected:
    using json = nlohmann::json;

    static void SetUpTestSuite() {
        const std::string dir = inferd_testdata_dir();
        if (dir.empty()) return;
        proc_ = new inferd_process({"-m", dir + "/models/tiny-qwen2-q8_0.gguf", "--parallel", "4", "-c", "1024",
                                    "-t", "2", "--alias", "tiny"});
        ready_ = proc_->wait_ready();
    }
    static void TearDownTestSuite() {
        delete proc_;
        proc_ = nullptr;
    }
    void SetUp() override {
        INFERD_REQUIRE_TESTDATA(dir);
        ASSERT_TRUE(ready_) << proc_->log();
    }
    // POSTs a JSON body; the parsed response (discarded on a parse error), its status in *status.
    static json post(const std::string & path, const json & body, int * status = nullptr) {
        auto r = inferd_call(proc_->port(), "POST", path, body.dump());
        EXPECT_TRUE(r.has_value());
        if (!r) return json();
        if (status) *status = r->status;
        return json::parse(r->body, nullptr, false);
    }

    static inline inferd_process * proc_ = nullptr;
    static inline bool ready_ = false;
};
