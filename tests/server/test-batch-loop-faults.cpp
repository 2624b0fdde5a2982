// Faults in the batch loop on a real model: a sink that throws (on a token, on admission, on its
// end), a sampler-side failure injected through fault_hook, and an allocation failure in a
// step each end only the requests concerned with `error` and a message; the others produce what
// they produce without faults, the error observer sees each failure, and afterwards the loop is
// idle (nothing running or waiting) and serves new requests as before.
#include "batch-loop-test-util.h"
#include "server/batch-loop.h"
#include "testdata.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <new>
#include <stdexcept>
#include <thread>
#include <map>
#include <functional>

namespace {

// Records what a request produced; throws at its n-th token (throw_at_token), on admission, or
// in on_finished when asked.
class faulty_sink : public gen_sink {
public:
    int throw_at_token = -1;
    bool throw_on_admit = false;
    bool throw_on_finish = false;

    void on_admitted(int32_t, int32_t) override {
        if (throw_on_admit) throw std::runtime_error("sink refused the admission");
    }
    bool on_token(const gen_token & t) override {
        std::lock_guard<std::mutex> lk(mu_);
        if (int(tokens.size()) + 1 == throw_at_token) throw std::runtime_error("sink broke at a token");
        tokens.push_back(t.id);
        return true;
    }
    void on_finished(gen_finish r, const gen_usage &, const std::string & msg) override {
        {
            std::lock_guard<std::mutex> lk(mu_);
            ++finished;
            reason = r;
            message = msg;
        }
        cv_.notify_all();
        if (throw_on_finish) throw std::runtime_error("sink broke at the end");
    }
    bool wait() {
        std::unique_lock<std::mutex> lk(mu_);
        return cv_.wait_for(lk, std::chrono::seconds(60), [&] { return finished > 0; });
    }

    std::vector<int32_t> tokens;
    int finished = 0;
    gen_finish reason = gen_finish::cancelled;
    std::string message;

private:
    std::mutex mu_;
    std::condition_variable cv_;
};

gen_request greedy(std::vector<int32_t> prompt, int32_t max_tokens, std::shared_ptr<gen_sink> sink) {
    gen_request r;
    r.prompt = std::move(prompt);
    r.max_tokens = max_tokens;
    r.sampling.temperature = 0.0f;
    r.ignore_eos = true;
    r.sink = std::move(sink);
    return r;
}

struct run_result {
    std::vector<std::shared_ptr<faulty_sink>> sinks;
    std::vector<std::string> errors;  // what the error observer saw
    batch_loop_stats stats;
};

// The prompts through a loop of 3 slots; configure(i, sink) sets request i's faults.
run_result run(const model & m, batch_loop_params p, const std::vector<std::vector<int32_t>> & prompts,
               const std::function<void(size_t, faulty_sink &)> & configure) {
    run_result out;
    std::mutex mu;
    batch_loop loop(m, p);
    loop.set_error_observer([&](uint64_t, const std::string & what) {
        std::lock_guard<std::mutex> lk(mu);
        out.errors.push_back(what);
    });
    loop.start();
    for (size_t i = 0; i < prompts.size(); ++i) {
        auto s = std::make_shared<faulty_sink>();
        configure(i, *s);
        out.sinks.push_back(s);
        std::string why;
        EXPECT_TRUE(loop.submit(greedy(prompts[i], 20, s), &why)) << why;
    }
    for (auto & s : out.sinks) EXPECT_TRUE(s->wait());
    // The loop is idle, and a request after the faults is served as before.
    auto after = std::make_shared<faulty_sink>();
    std::string why;
    EXPECT_TRUE(loop.submit(greedy(prompts[0], 20, after), &why)) << why;
    EXPECT_TRUE(after->wait());
    out.sinks.push_back(after);
    // The gauges are updated at the end of the step that finished the last request.
    for (int i = 0; i < 200 && (loop.stats().running > 0 || loop.stats().waiting > 0); ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    out.stats = loop.stats();
    return out;
}

std::unique_ptr<model> stories(const std::string & dir) {
    return model::load(dir + "/models/stories260K-f32.gguf", model_params{});
}

}  // namespace

TEST(batch_loop_faults, a_sink_that_throws_ends_only_its_request) {
    INFERD_REQUIRE_TESTDATA(dir);
    auto m = stories(dir);
    const auto prompts = prompts_for_test(6);
    const run_result plain = run(*m, loop_params(3), prompts, [](size_t, faulty_sink &) {});
    const run_result faulty = run(*m, loop_params(3), prompts, [](size_t i, faulty_sink & s) {
        if (i == 1) s.throw_at_token = 4;
        if (i == 3) s.throw_on_admit = true;
        if (i == 4) s.throw_on_finish = true;
    });
    ASSERT_EQ(faulty.sinks.size(), plain.sinks.size());
    for (size_t i = 0; i < faulty.sinks.size(); ++i) {
        SCOPED_TRACE("request " + std::to_string(i));
        const faulty_sink & f = *faulty.sinks[i];
        if (i == 1 || i == 3) {
            EXPECT_EQ(f.reason, gen_finish::error);
            EXPECT_NE(f.message.find("internal error while generating: sink"), std::string::npos) << f.message;
            EXPECT_EQ(f.tokens.size(), i == 1 ? 3u : 0u);
        } else {
            EXPECT_EQ(f.reason, gen_finish::length) << f.message;
            EXPECT_EQ(f.tokens, plain.sinks[i]->tokens);
        }
    }
    EXPECT_EQ(faulty.errors.size(), 2u);
    EXPECT_EQ(faulty.stats.running, 0u);
    EXPECT_EQ(faulty.stats.waiting, 0u);
}

// Faults injected at the hook's sites: every 5th token (a sampler or detokenizer failing), every
// 4th admission, and an allocation failure before the 9th decode, which ends every request of
// that step. Requests not hit produce the tokens of the run without faults.
TEST(batch_loop_faults, injected_faults_end_their_requests_and_the_loop_goes_on) {
    INFERD_REQUIRE_TESTDATA(dir);
    auto m = stories(dir);
    const auto prompts = prompts_for_test(8);
    const run_result plain = run(*m, loop_params(3), prompts, [](size_t, faulty_sink &) {});
    batch_loop_params p = loop_params(3);
    auto calls = std::make_shared<std::map<std::string, int>>();
    p.fault_hook = [calls](std::string_view site) {
        const int k = ++(*calls)[std::string(site)];
        if (site == "token" && k % 5 == 0) throw std::runtime_error("token fault");
        if (site == "admit" && k % 4 == 0) throw std::runtime_error("admit fault");
        if (site == "step" && k == 9) throw std::bad_alloc();
    };
    const run_result faulty = run(*m, p, prompts, [](size_t, faulty_sink &) {});
    int failed = 0, bad_alloc = 0;
    for (size_t i = 0; i < faulty.sinks.size(); ++i) {
        SCOPED_TRACE("request " + std::to_string(i));
        const faulty_sink & f = *faulty.sinks[i];
        if (f.reason == gen_finish::error) {
            ++failed;
            bad_alloc += f.message.find("bad_alloc") != std::string::npos;
            EXPECT_NE(f.message.find("internal error while generating"), std::string::npos) << f.message;
            // What came before the fault is what the request produces without faults.
            ASSERT_LE(f.tokens.size(), plain.sinks[i]->tokens.size());
            EXPECT_TRUE(std::equal(f.tokens.begin(), f.tokens.end(), plain.sinks[i]->tokens.begin()));
        } else {
            EXPECT_EQ(f.reason, gen_finish::length) << f.message;
            EXPECT_EQ(f.tokens, plain.sinks[i]->tokens);
        }
    }
    EXPECT_GT(failed, 2);
    EXPECT_GT(bad_alloc, 0);
    EXPECT_EQ(int(faulty.errors.size()), failed);
    EXPECT_EQ(faulty.stats.running, 0u);
    EXPECT_EQ(faulty.stats.waiting, 0u);
}
