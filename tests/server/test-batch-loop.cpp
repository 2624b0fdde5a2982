// The batch loop on a real model: concurrent greedy requests equal to one-by-one runs, prefix
// cache reuse, preemption when the KV cache is full, cancellation, stop from the sink, queue
// limits, invalid requests, statistics back to idle.
#include "batch-loop-test-util.h"
#include "server/batch-loop.h"
#include "testdata.h"

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace {

class collect_sink : public gen_sink {
public:
    explicit collect_sink(int stop_after = -1, int cancel_after = -1) : stop_after_(stop_after), cancel_after_(cancel_after) {}
    void on_admitted(int32_t n_prompt, int32_t n_cached) override {
        std::lock_guard<std::mutex> lk(mu_);
        admissions.push_back({n_prompt, n_cached});
    }
    bool on_token(const gen_token & t) override {
        std::lock_guard<std::mutex> lk(mu_);
        tokens.push_back(t.id);
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
    size_t n_tokens() {
        std::lock_guard<std::mutex> lk(mu_);
        return tokens.size();
    }
    bool wait(std::chrono::seconds limit = std::chrono::seconds(60)) {
        std::unique_lock<std::mutex> lk(mu_);
        return cv_.wait_for(lk, limit, [&] { return finished > 0; });
    }

    std::vector<int32_t> tokens;
    std::vector<std::pair<int32_t, int32_t>> admissions;
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

gen_request greedy(std::vector<int32_t> prompt, int32_t max_tokens, std::shared_ptr<gen_sink> sink) {
    gen_request r;
    r.prompt = std::move(prompt);
    r.max_tokens = max_tokens;
    r.sampling.temperature = 0.0f;
    r.ignore_eos = true;
    r.sink = std::move(sink);
    return r;
}

// Each prompt alone through a one-slot loop.
std::vector<std::vector<int32_t>> one_by_one(const model & m, const std::vector<std::vector<int32_t>> & prompts, int32_t n) {
    batch_loop loop(m, loop_params(1));
    loop.start();
    std::vector<std::vector<int32_t>> out;
    for (const auto & p : prompts) {
        auto s = std::make_shared<collect_sink>();
        std::string why;
        EXPECT_TRUE(loop.submit(greedy(p, n, s), &why)) << why;
        EXPECT_TRUE(s->wait());
        out.push_back(s->tokens);
    }
    return out;
}

std::unique_ptr<model> load_stories(const std::string & dir) {
    return model::load(dir + "/models/stories260K-f32.gguf", model_params{});
}

}  // namespace

TEST(batch_loop, concurrent_greedy_requests_equal_one_by_one) {
    INFERD_REQUIRE_TESTDATA(dir);
    auto m = load_stories(dir);
    const auto prompts = prompts_for_test(8);
    const auto expected = one_by_one(*m, prompts, 24);
    batch_loop loop(*m, loop_params(4));  // 8 requests over 4 slots: some wait in the queue
    std::vector<std::shared_ptr<collect_sink>> sinks;
    for (const auto & p : prompts) {
        sinks.push_back(std::make_shared<collect_sink>());
        std::string why;
        ASSERT_TRUE(loop.submit(greedy(p, 24, sinks.back()), &why)) << why;
    }
    loop.start();
    for (size_t i = 0; i < sinks.size(); ++i) {
        ASSERT_TRUE(sinks[i]->wait());
        EXPECT_EQ(sinks[i]->reason, gen_finish::length);
        EXPECT_EQ(sinks[i]->tokens, expected[i]) << "request " << i;
        EXPECT_EQ(sinks[i]->usage.completion_tokens, 24);
        EXPECT_EQ(sinks[i]->usage.prompt_tokens, int32_t(prompts[i].size()));
    }
    loop.stop();
    EXPECT_EQ(loop.stats().running, 0u);
    EXPECT_EQ(loop.stats().waiting, 0u);
}

TEST(batch_loop, prefix_cache_reuses_a_finished_prompt) {
    INFERD_REQUIRE_TESTDATA(dir);
    auto m = load_stories(dir);
    std::vector<int32_t> base = prompts_for_test(6)[5];  // 22 tokens
    std::vector<int32_t> longer = base;
    longer.insert(longer.end(), {300, 301, 302});
    const auto expected = one_by_one(*m, {longer}, 12);
    batch_loop loop(*m, loop_params(2));
    loop.start();
    auto first = std::make_shared<collect_sink>();
    std::string why;
    ASSERT_TRUE(loop.submit(greedy(base, 4, first), &why));
    ASSERT_TRUE(first->wait());
    EXPECT_EQ(first->usage.cached_tokens, 0);
    auto second = std::make_shared<collect_sink>();
    ASSERT_TRUE(loop.submit(greedy(longer, 12, second), &why));
    ASSERT_TRUE(second->wait());
    // The first request's prompt (and possibly its first generated tokens, if they match) came
    // from the cache.
    EXPECT_GE(second->usage.cached_tokens, int32_t(base.size()));
    EXPECT_EQ(second->tokens, expected[0]);
    // The same prompt again while nothing else runs: everything but the last token is cached.
    auto third = std::make_shared<collect_sink>();
    ASSERT_TRUE(loop.submit(greedy(longer, 12, third), &why));
    ASSERT_TRUE(third->wait());
    EXPECT_EQ(third->usage.cached_tokens, int32_t(longer.size()) - 1);
    EXPECT_EQ(third->tokens, expected[0]);
}

TEST(batch_loop, shared_prefix_between_running_requests) {
    INFERD_REQUIRE_TESTDATA(dir);
    auto m = load_stories(dir);
    std::vector<int32_t> pre = prompts_for_test(8)[7];  // 28 tokens
    std::vector<int32_t> a = pre, b = pre;
    a.push_back(400);
    b.push_back(401);
    const auto expected = one_by_one(*m, {a, b}, 40);
    batch_loop loop(*m, loop_params(2));
    loop.start();
    auto sa = std::make_shared<collect_sink>(), sb = std::make_shared<collect_sink>();
    std::string why;
    ASSERT_TRUE(loop.submit(greedy(a, 40, sa), &why));
    while (sa->n_tokens() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));  // a is generating
    ASSERT_TRUE(loop.submit(greedy(b, 40, sb), &why));
    ASSERT_TRUE(sa->wait() && sb->wait());
    EXPECT_EQ(sb->usage.cached_tokens, int32_t(pre.size())) << "b shares a's prefix cells by sequence copy";
    EXPECT_EQ(sa->tokens, expected[0]);
    EXPECT_EQ(sb->tokens, expected[1]);
}

TEST(batch_loop, preemption_when_the_cache_is_full) {
    INFERD_REQUIRE_TESTDATA(dir);
    auto m = load_stories(dir);
    const auto prompts = prompts_for_test(4);  // 7..16 tokens
    const auto expected = one_by_one(*m, prompts, 40);
    batch_loop loop(*m, loop_params(4, 64));  // 4 x ~50 cells wanted, 64 available
    std::vector<std::shared_ptr<collect_sink>> sinks;
    for (const auto & p : prompts) {
        sinks.push_back(std::make_shared<collect_sink>());
        std::string why;
        ASSERT_TRUE(loop.submit(greedy(p, 40, sinks.back()), &why)) << why;
    }
    loop.start();
    size_t resumed = 0;
    for (size_t i = 0; i < sinks.size(); ++i) {
        ASSERT_TRUE(sinks[i]->wait());
        EXPECT_EQ(sinks[i]->reason, gen_finish::length) << sinks[i]->message;
        EXPECT_EQ(sinks[i]->tokens, expected[i]) << "request " << i;
        resumed += sinks[i]->admissions.size() - 1;
    }
    EXPECT_GT(resumed, 0u) << "some request was preempted and resumed";
}

TEST(batch_loop, cancel_stop_and_limits) {
    INFERD_REQUIRE_TESTDATA(dir);
    auto m = load_stories(dir);
    batch_loop_params p = loop_params(1);
    p.max_queue = 1;
    batch_loop loop(*m, p);
    std::string why;
    auto cancel = std::make_shared<collect_sink>(-1, 3);
    ASSERT_TRUE(loop.submit(greedy({1, 300}, 100, cancel), &why));
    // One free slot + max_queue 1: a second request may wait, a third is refused.
    auto second = std::make_shared<collect_sink>();
    ASSERT_TRUE(loop.submit(greedy({1, 301}, 3, second), &why));
    EXPECT_FALSE(loop.submit(greedy({1, 300}, 10, std::make_shared<collect_sink>()), &why));
    EXPECT_NE(why.find("queue is full"), std::string::npos);
    EXPECT_FALSE(loop.submit(greedy({}, 10, std::make_shared<collect_sink>()), &why));
    EXPECT_FALSE(loop.submit(greedy({1, 9999}, 10, std::make_shared<collect_sink>()), &why));
    EXPECT_FALSE(loop.submit(greedy(std::vector<int32_t>(600, 5), 10, std::make_shared<collect_sink>()), &why));
    loop.start();
    ASSERT_TRUE(cancel->wait());
    EXPECT_EQ(cancel->reason, gen_finish::cancelled);
    EXPECT_LE(cancel->tokens.size(), 4u);
    ASSERT_TRUE(second->wait());
    EXPECT_EQ(second->reason, gen_finish::length);
    auto stop = std::make_shared<collect_sink>(5);
    ASSERT_TRUE(loop.submit(greedy({1, 300}, 100, stop), &why));
    ASSERT_TRUE(stop->wait());
    EXPECT_EQ(stop->reason, gen_finish::stop);
    EXPECT_EQ(stop->tokens.size(), 5u);
    EXPECT_EQ(stop->usage.completion_tokens, 5);
    for (int i = 0; i < 100 && loop.stats().running > 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    EXPECT_EQ(loop.stats().running, 0u);
    EXPECT_EQ(loop.stats().waiting, 0u);
    EXPECT_GT(loop.stats().steps, 0u);
    // A request still queued when the loop stops ends as cancelled.
    auto long_one = std::make_shared<collect_sink>();
    ASSERT_TRUE(loop.submit(greedy({1, 300}, 400, long_one), &why));
    loop.stop();
    ASSERT_TRUE(long_one->wait());
    EXPECT_EQ(long_one->reason, gen_finish::cancelled);
}

TEST(batch_loop, requests_arriving_together_share_their_common_prompt) {
    INFERD_REQUIRE_TESTDATA(dir);
    auto m = load_stories(dir);
    std::vector<int32_t> prompt = {1};
    for (int i = 0; i < 60; ++i) prompt.push_back(260 + (i * 7) % 240);
    const auto expected = one_by_one(*m, {prompt}, 10);
    batch_loop loop(*m, loop_params(4));
    std::vector<std::shared_ptr<collect_sink>> sinks;
    for (int i = 0; i < 4; ++i) {
        sinks.push_back(std::make_shared<collect_sink>());
        std::string why;
        ASSERT_TRUE(loop.submit(greedy(prompt, 10, sinks.back()), &why));
    }
    loop.start();
    int32_t cached = 0;
    for (auto & s : sinks) {
        ASSERT_TRUE(s->wait());
        EXPECT_EQ(s->tokens, expected[0]);
        cached += s->usage.cached_tokens;
    }
    // The first computes the prompt, the three others copy all of it but the last token.
    EXPECT_EQ(cached, 3 * int32_t(prompt.size() - 1));
}

TEST(batch_loop, zero_max_tokens_reads_the_prompt_only) {
    INFERD_REQUIRE_TESTDATA(dir);
    auto m = load_stories(dir);
    batch_loop loop(*m, loop_params(1));
    loop.start();
    auto s = std::make_shared<collect_sink>();
    std::string why;
    ASSERT_TRUE(loop.submit(greedy({1, 300, 301}, 0, s), &why));
    ASSERT_TRUE(s->wait());
    EXPECT_EQ(s->reason, gen_finish::length);
    EXPECT_TRUE(s->tokens.empty());
    EXPECT_EQ(s->usage.prompt_tokens, 3);
}

// Generation stops at every end-of-generation token of the vocabulary, not only at EOS: tiny-qwen2's
// EOS is <|im_end|>, and <|endoftext|> ends generation too. A logit bias makes the model pick it.
TEST(batch_loop, stops_at_an_end_of_turn_token_that_is_not_eos) {
    INFERD_REQUIRE_TESTDATA(dir);
    auto m = model::load(dir + "/models/tiny-qwen2-f16.gguf", model_params{});
    const vocab & v = m->get_vocab();
    const int32_t end_of_text = v.token_id("<|endoftext|>");
    ASSERT_GE(end_of_text, 0);
    ASSERT_NE(end_of_text, v.eos_id());
    ASSERT_TRUE(v.is_eog(end_of_text));
    batch_loop loop(*m, loop_params(1));
    loop.start();
    for (bool ignore_eos : {false, true}) {
        SCOPED_TRACE(ignore_eos ? "ignore_eos" : "stops");
        auto s = std::make_shared<collect_sink>();
        gen_request r = greedy(m->get_tokenizer().tokenize("Once upon a time", true, false), 4, s);
        r.ignore_eos = ignore_eos;
        r.sampling.logit_bias = {{end_of_text, 100.0f}};
        std::string why;
        ASSERT_TRUE(loop.submit(std::move(r), &why)) << why;
        ASSERT_TRUE(s->wait());
        if (ignore_eos) {
            EXPECT_EQ(s->reason, gen_finish::length);
            EXPECT_EQ(s->tokens, std::vector<int32_t>(4, end_of_text));
        } else {
            EXPECT_EQ(s->reason, gen_finish::stop);
            EXPECT_TRUE(s->tokens.empty());
        }
    }
}
