// What the speculative-decoding batch-loop tests share: a sink that records a request's tokens
// (and can stop or cancel after a count), requests queued together or one after the other, and
// the comparison of a speculative run with a plain one.
#pragma once

#include "batch-loop-test-util.h"
#include "server/batch-loop.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

class record_sink : public gen_sink {
public:
    record_sink(int stop_after, int cancel_after) : stop_after_(stop_after), cancel_after_(cancel_after) {}
    bool on_token(const gen_token & t) override {
        std::lock_guard<std::mutex> lk(mu_);
        tokens.push_back(t.id);
        logprobs.push_back(t.logprob);
        if (cancel_after_ >= 0 && int(tokens.size()) >= cancel_after_) cancel_ = true;
        return stop_after_ < 0 || int(tokens.size()) < stop_after_;
    }
    void on_finished(gen_finish r, const gen_usage & u, const std::string & msg) override {
        std::lock_guard<std::mutex> lk(mu_);
        ++finished;
        reason = r;
        usage = u;
        message = msg;
        cv_.notify_all();
    }
    bool cancelled() const override { return cancel_; }
    bool wait() {
        std::unique_lock<std::mutex> lk(mu_);
        return cv_.wait_for(lk, std::chrono::seconds(120), [&] { return finished > 0; });
    }

    std::vector<int32_t> tokens;
    std::vector<float> logprobs;
    int finished = 0;
    gen_finish reason = gen_finish::error;
    gen_usage usage;
    std::string message;

private:
    std::mutex mu_;
    std::condition_variable cv_;
    int stop_after_, cancel_after_;
    std::atomic<bool> cancel_{false};
};

struct spec_req {
    std::vector<int32_t> prompt;
    int32_t max_tokens = 32;
    sampling_params sampling = greedy_sampling();
    int stop_after = -1;
    int cancel_after = -1;
    bool ignore_eos = true;
    static sampling_params greedy_sampling() {
        sampling_params sp;
        sp.temperature = 0.0f;
        return sp;
    }
};

struct spec_result {
    std::vector<int32_t> tokens;
    std::vector<float> logprobs;
    gen_finish reason = gen_finish::error;
    gen_usage usage;
};

struct spec_run {
    std::vector<spec_result> results;
    batch_loop_stats stats;
};

inline gen_request make_request(const spec_req & q, std::shared_ptr<gen_sink> sink) {
    gen_request r;
    r.prompt = q.prompt;
    r.max_tokens = q.max_tokens;
    r.sampling = q.sampling;
    r.ignore_eos = q.ignore_eos;
    r.sink = std::move(sink);
    return r;
}

// Runs the requests in one loop: `groups` lists how many consecutive requests go in one
// submit_all (the choices of one API request); all are queued before the loop starts.
inline spec_run run_requests(const model & m, const batch_loop_params & p, const std::vector<spec_req> & reqs,
                      const std::vector<size_t> & groups = {}) {
    batch_loop loop(m, p);
    std::vector<std::shared_ptr<record_sink>> sinks;
    size_t next = 0;
    auto submit_group = [&](size_t n) {
        std::vector<gen_request> rs;
        for (size_t i = 0; i < n; ++i, ++next) {
            sinks.push_back(std::make_shared<record_sink>(reqs[next].stop_after, reqs[next].cancel_after));
            rs.push_back(make_request(reqs[next], sinks.back()));
        }
        std::string why;
        EXPECT_TRUE(loop.submit_all(rs, &why)) << why;
    };
    for (size_t g : groups) submit_group(g);
    while (next < reqs.size()) submit_group(1);
    loop.start();
    spec_run out;
    for (auto & s : sinks) {
        EXPECT_TRUE(s->wait());
        out.results.push_back({s->tokens, s->logprobs, s->reason, s->usage});
    }
    loop.stop();  // the statistics after the last step
    out.stats = loop.stats();
    return out;
}

// Each request alone after the other in a loop (a second request may reuse the first's cache).
inline spec_run run_in_order(const model & m, const batch_loop_params & p, const std::vector<spec_req> & reqs) {
    batch_loop loop(m, p);
    loop.start();
    spec_run out;
    for (const spec_req & q : reqs) {
        auto s = std::make_shared<record_sink>(q.stop_after, q.cancel_after);
        std::string why;
        EXPECT_TRUE(loop.submit(make_request(q, s), &why)) << why;
        EXPECT_TRUE(s->wait());
        out.results.push_back({s->tokens, s->logprobs, s->reason, s->usage});
    }
    loop.stop();
    out.stats = loop.stats();
    return out;
}

inline void expect_same_outputs(const spec_run & plain, const spec_run & spec) {
    ASSERT_EQ(plain.results.size(), spec.results.size());
    for (size_t i = 0; i < plain.results.size(); ++i) {
        const spec_result & a = plain.results[i];
        const spec_result & b = spec.results[i];
        EXPECT_EQ(a.tokens, b.tokens) << "request " << i;
        EXPECT_EQ(a.reason, b.reason) << "request " << i;
        EXPECT_EQ(a.usage.completion_tokens, b.usage.completion_tokens) << "request " << i;
        EXPECT_EQ(a.usage.prompt_tokens, b.usage.prompt_tokens) << "request " << i;
        EXPECT_EQ(a.usage.draft_tokens, 0);
    }
}
