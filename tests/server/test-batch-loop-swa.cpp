// The batch loop on a model with sliding-window layers (tiny-gemma3, window 16) whose window cache
// is kept small (16 cells per sequence plus a 16-token ubatch): concurrent requests equal
// one-by-one runs, the prefix cache reuses a sequence only where its window's cells are still
// there (and recomputes otherwise, with the same result), and preemption stays correct.
#include "server/batch-loop.h"
#include "testdata.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>

namespace {

class collect_sink : public gen_sink {
public:
    void on_admitted(int32_t, int32_t n_cached) override {
        std::lock_guard<std::mutex> lk(mu_);
        cached.push_back(n_cached);
    }
    bool on_token(const gen_token & t) override {
        std::lock_guard<std::mutex> lk(mu_);
        tokens.push_back(t.id);
        return true;
    }
    void on_finished(gen_finish r, const gen_usage & u, const std::string &) override {
        std::lock_guard<std::mutex> lk(mu_);
        reason = r;
        usage = u;
        done = true;
        cv_.notify_all();
    }
    bool cancelled() const override { return false; }
    bool wait() {
        std::unique_lock<std::mutex> lk(mu_);
        return cv_.wait_for(lk, std::chrono::seconds(60), [&] { return done; });
    }

    std::vector<int32_t> tokens;
    std::vector<int32_t> cached;  // cached tokens at each admission
    gen_finish reason = gen_finish::error;
    gen_usage usage;

private:
    std::mutex mu_;
    std::condition_variable cv_;
    bool done = false;
};

batch_loop_params small_window_cache(uint32_t n_parallel, uint32_t n_ctx = 512) {
    batch_loop_params p;
    p.n_parallel = n_parallel;
    p.ctx.n_ctx = n_ctx;
    p.ctx.n_threads = 2;
    p.ctx.n_ubatch = 16;
    p.ctx.kv_pad = 16;
    p.ctx.type_k = p.ctx.type_v = GGML_TYPE_F32;
    return p;
}

gen_request greedy(std::vector<int32_t> prompt, int32_t max_tokens, std::shared_ptr<gen_sink> sink) {
    gen_request r;
    r.prompt = std::move(prompt);
    r.max_tokens = max_tokens;
    r.sampling.temperature = 0.0f;
    r.ignore_eos = true;
    r.sink = std::move(sink);
    return r;
}

std::vector<int32_t> prompt_of(size_t i, size_t n) {
    std::vector<int32_t> p = {1};
    for (size_t k = 0; k + 1 < n; ++k) p.push_back(int32_t(300 + (i * 53 + k * 29) % 3000));
    return p;
}

std::shared_ptr<collect_sink> run(batch_loop & loop, const std::vector<int32_t> & prompt, int32_t n) {
    auto s = std::make_shared<collect_sink>();
    std::string why;
    EXPECT_TRUE(loop.submit(greedy(prompt, n, s), &why)) << why;
    EXPECT_TRUE(s->wait());
    return s;
}

// Each prompt alone in a fresh loop whose window cache is as large as the context.
std::vector<int32_t> alone(const model & m, const std::vector<int32_t> & prompt, int32_t n) {
    batch_loop_params p = small_window_cache(1);
    p.ctx.kv_pad = 512;
    batch_loop loop(m, p);
    loop.start();
    return run(loop, prompt, n)->tokens;
}

std::unique_ptr<model> load_gemma3(const std::string & dir) {
    return model::load(dir + "/models/tiny-gemma3-f16.gguf", model_params{});
}

}  // namespace

TEST(batch_loop_swa, concurrent_requests_equal_one_by_one) {
    INFERD_REQUIRE_TESTDATA(dir);
    auto m = load_gemma3(dir);
    std::vector<std::vector<int32_t>> expected;
    for (size_t i = 0; i < 4; ++i) expected.push_back(alone(*m, prompt_of(i, 20 + 7 * i), 30));
    batch_loop loop(*m, small_window_cache(2));  // 4 requests over 2 slots
    std::vector<std::shared_ptr<collect_sink>> sinks;
    for (size_t i = 0; i < 4; ++i) {
        sinks.push_back(std::make_shared<collect_sink>());
        std::string why;
        ASSERT_TRUE(loop.submit(greedy(prompt_of(i, 20 + 7 * i), 30, sinks.back()), &why)) << why;
    }
    loop.start();
    for (size_t i = 0; i < sinks.size(); ++i) {
        ASSERT_TRUE(sinks[i]->wait());
        EXPECT_EQ(sinks[i]->tokens, expected[i]) << "request " << i;
    }
}

TEST(batch_loop_swa, prefix_reused_only_where_the_window_is_whole) {
    INFERD_REQUIRE_TESTDATA(dir);
    auto m = load_gemma3(dir);
    const std::vector<int32_t> p = prompt_of(7, 30);
    batch_loop loop(*m, small_window_cache(1));
    loop.start();
    const auto first = run(loop, p, 6);
    ASSERT_EQ(first->tokens.size(), 6u);
    // Going on from where the first request's cells end: its window is there.
    std::vector<int32_t> cont = p;
    cont.insert(cont.end(), first->tokens.begin(), first->tokens.end() - 1);  // the last one was never decoded
    cont.insert(cont.end(), {500, 501});
    const auto second = run(loop, cont, 8);
    EXPECT_EQ(second->usage.cached_tokens, int32_t(p.size() + first->tokens.size() - 1));
    EXPECT_EQ(second->tokens, alone(*m, cont, 8));
    // Branching off at position 20: the window before it was dropped long ago, so the prompt is
    // computed again from the start, with the same result as in a fresh loop.
    std::vector<int32_t> branch(p.begin(), p.begin() + 20);
    branch.insert(branch.end(), {700, 701, 702});
    const auto third = run(loop, branch, 8);
    EXPECT_EQ(third->usage.cached_tokens, 0);
    EXPECT_EQ(third->tokens, alone(*m, branch, 8));
}

TEST(batch_loop_swa, preemption_when_the_cache_is_full) {
    INFERD_REQUIRE_TESTDATA(dir);
    auto m = load_gemma3(dir);
    std::vector<std::vector<int32_t>> expected;
    for (size_t i = 0; i < 4; ++i) expected.push_back(alone(*m, prompt_of(i, 8 + 3 * i), 40));
    batch_loop loop(*m, small_window_cache(4, 96));  // 4 x ~55 cells wanted, 96 in the full cache
    std::vector<std::shared_ptr<collect_sink>> sinks;
    for (size_t i = 0; i < 4; ++i) {
        sinks.push_back(std::make_shared<collect_sink>());
        std::string why;
        ASSERT_TRUE(loop.submit(greedy(prompt_of(i, 8 + 3 * i), 40, sinks.back()), &why)) << why;
    }
    loop.start();
    size_t resumed = 0;
    for (size_t i = 0; i < sinks.size(); ++i) {
        ASSERT_TRUE(sinks[i]->wait());
        EXPECT_EQ(sinks[i]->reason, gen_finish::length);
        EXPECT_EQ(sinks[i]->tokens, expected[i]) << "request " << i;
        resumed += sinks[i]->cached.size() - 1;
    }
    EXPECT_GT(resumed, 0u) << "some request was preempted and resumed";
}
