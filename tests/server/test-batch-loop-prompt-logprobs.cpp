// The batch loop's prompt log-probabilities (gen_request::prompt_logprobs) on a real model: each
// equals a double-precision log-softmax of the engine's own logits for that prefix; the first
// token has none; the alternatives are sorted; long prompts go in capped chunks; the prefix cache
// is not used for such a request but its cells serve the next one; n > 1 and preemption report
// the list exactly once per request.
#include "server/batch-loop.h"
#include "testdata.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <mutex>

namespace {

class prompt_sink : public gen_sink {
public:
    void on_admitted(int32_t, int32_t n_cached) override {
        std::lock_guard<std::mutex> lk(mu_);
        admissions.push_back(n_cached);
    }
    void on_prompt_logprobs(const std::vector<gen_token> & p) override {
        std::lock_guard<std::mutex> lk(mu_);
        ++n_reports;
        tokens_before_report = tokens.size();
        prompt = p;
    }
    bool on_token(const gen_token & t) override {
        std::lock_guard<std::mutex> lk(mu_);
        tokens.push_back(t.id);
        return true;
    }
    void on_finished(gen_finish r, const gen_usage & u, const std::string & msg) override {
        std::lock_guard<std::mutex> lk(mu_);
        reason = r;
        usage = u;
        message = msg;
        done = true;
        cv_.notify_all();
    }
    bool wait() {
        std::unique_lock<std::mutex> lk(mu_);
        return cv_.wait_for(lk, std::chrono::seconds(60), [&] { return done; });
    }

    std::vector<int32_t> admissions;
    std::vector<gen_token> prompt;
    int n_reports = 0;
    size_t tokens_before_report = 0;
    std::vector<int32_t> tokens;
    gen_finish reason = gen_finish::error;
    gen_usage usage;
    std::string message;
    bool done = false;

private:
    std::mutex mu_;
    std::condition_variable cv_;
};

context_params ctx_params(uint32_t n_ctx) {
    context_params cp;
    cp.n_ctx = n_ctx;
    cp.n_threads = 2;
    cp.type_k = cp.type_v = GGML_TYPE_F32;
    return cp;
}

batch_loop_params loop_params(uint32_t n_parallel, uint32_t n_ctx = 512) {
    batch_loop_params p;
    p.n_parallel = n_parallel;
    p.ctx = ctx_params(n_ctx);
    return p;
}

gen_request request(std::vector<int32_t> prompt, int32_t max_tokens, int32_t prompt_logprobs, std::shared_ptr<gen_sink> sink) {
    gen_request r;
    r.prompt = std::move(prompt);
    r.max_tokens = max_tokens;
    r.prompt_logprobs = prompt_logprobs;
    r.sampling.temperature = 0.0f;
    r.ignore_eos = true;
    r.sink = std::move(sink);
    return r;
}

std::vector<int32_t> test_prompt(size_t n, size_t salt) {
    std::vector<int32_t> p = {1};
    for (size_t k = 1; k < n; ++k) p.push_back(int32_t(259 + (salt * 37 + k * 11 + k * k) % 250));
    return p;
}

// Row i: the log-softmax (double) of the engine's logits after prompt[0..i], one decode with
// every position's logits.
std::vector<std::vector<double>> reference_rows(const model & m, const std::vector<int32_t> & prompt) {
    context ctx(m, ctx_params(512));
    llm_batch b;
    for (size_t i = 0; i < prompt.size(); ++i) b.add(prompt[i], int32_t(i), 0, true);
    EXPECT_EQ(ctx.decode(b), decode_ok);
    std::vector<std::vector<double>> rows;
    const int32_t n_vocab = ctx.n_vocab();
    for (size_t i = 0; i < prompt.size(); ++i) {
        const float * l = ctx.logits(int32_t(i));
        double mx = -INFINITY, z = 0.0;
        for (int32_t v = 0; v < n_vocab; ++v) mx = std::max(mx, double(l[v]));
        for (int32_t v = 0; v < n_vocab; ++v) z += std::exp(double(l[v]) - mx);
        std::vector<double> row(static_cast<size_t>(n_vocab));
        for (int32_t v = 0; v < n_vocab; ++v) row[size_t(v)] = double(l[v]) - mx - std::log(z);
        rows.push_back(std::move(row));
    }
    return rows;
}

// The reported list against the reference: one entry per prompt token, the first without a
// value, every value and alternative within 1e-4, alternatives sorted and the best of the row.
void expect_prompt_logprobs(const std::vector<gen_token> & got, const std::vector<int32_t> & prompt,
                            const std::vector<std::vector<double>> & ref, size_t n_top) {
    ASSERT_EQ(got.size(), prompt.size());
    EXPECT_EQ(got[0].id, prompt[0]);
    EXPECT_TRUE(std::isnan(got[0].logprob));
    EXPECT_TRUE(got[0].top.empty());
    for (size_t i = 1; i < prompt.size(); ++i) {
        const std::vector<double> & row = ref[i - 1];
        const gen_token & t = got[i];
        EXPECT_EQ(t.id, prompt[i]);
        EXPECT_NEAR(t.logprob, row[size_t(prompt[i])], 1e-4) << "token " << i;
        ASSERT_EQ(t.top.size(), n_top) << "token " << i;
        for (size_t k = 0; k < t.top.size(); ++k) {
            EXPECT_NEAR(t.top[k].second, row[size_t(t.top[k].first)], 1e-4);
            if (k > 0) {
                EXPECT_GE(t.top[k - 1].second, t.top[k].second);
            }
        }
        const size_t argmax = size_t(std::max_element(row.begin(), row.end()) - row.begin());
        if (n_top > 0) {
            EXPECT_NEAR(t.top[0].second, row[argmax], 1e-4);
        }
        if (n_top > 0 && argmax == size_t(prompt[i])) {
            EXPECT_EQ(t.top[0].first, prompt[i]) << "the actual token leads when it is the argmax";
        }
    }
}

std::unique_ptr<model> load_stories(const std::string & dir) {
    return model::load(dir + "/models/stories260K-f32.gguf", model_params{});
}

}  // namespace

TEST(batch_loop_prompt_logprobs, equal_a_log_softmax_of_the_engine_logits) {
    INFERD_REQUIRE_TESTDATA(dir);
    auto m = load_stories(dir);
    const std::vector<int32_t> prompt = test_prompt(24, 1);
    const auto ref = reference_rows(*m, prompt);
    batch_loop loop(*m, loop_params(2));
    loop.start();
    std::string why;
    auto only = std::make_shared<prompt_sink>();  // max_tokens 0: the prompt only
    ASSERT_TRUE(loop.submit(request(prompt, 0, 3, only), &why)) << why;
    ASSERT_TRUE(only->wait());
    EXPECT_EQ(only->reason, gen_finish::length);
    EXPECT_EQ(only->n_reports, 1);
    EXPECT_TRUE(only->tokens.empty());
    expect_prompt_logprobs(only->prompt, prompt, ref, 3);
    // With generated tokens: the list comes first, the tokens follow as without it.
    auto plain = std::make_shared<prompt_sink>(), with = std::make_shared<prompt_sink>();
    ASSERT_TRUE(loop.submit(request(prompt, 5, -1, plain), &why));
    ASSERT_TRUE(plain->wait());
    EXPECT_EQ(plain->n_reports, 0);
    ASSERT_TRUE(loop.submit(request(prompt, 5, 0, with), &why));
    ASSERT_TRUE(with->wait());
    EXPECT_EQ(with->n_reports, 1);
    EXPECT_EQ(with->tokens_before_report, 0u);
    EXPECT_EQ(with->tokens, plain->tokens);
    expect_prompt_logprobs(with->prompt, prompt, ref, 0);
    // Out of range.
    EXPECT_FALSE(loop.submit(request(prompt, 1, 21, std::make_shared<prompt_sink>()), &why));
    EXPECT_NE(why.find("prompt_logprobs"), std::string::npos) << why;
    EXPECT_FALSE(loop.submit(request(prompt, 1, -2, std::make_shared<prompt_sink>()), &why));
}

TEST(batch_loop_prompt_logprobs, a_long_prompt_goes_in_capped_chunks) {
    INFERD_REQUIRE_TESTDATA(dir);
    auto m = load_stories(dir);
    const std::vector<int32_t> prompt = test_prompt(300, 2);
    static_assert(batch_loop_prompt_logits_chunk < 300);
    const auto ref = reference_rows(*m, prompt);
    batch_loop loop(*m, loop_params(1));
    std::vector<int32_t> steps;  // written on the loop thread, read after the request ended
    std::mutex mu;
    loop.set_step_observer([&](int32_t n) {
        std::lock_guard<std::mutex> lk(mu);
        steps.push_back(n);
    });
    loop.start();
    auto s = std::make_shared<prompt_sink>();
    std::string why;
    ASSERT_TRUE(loop.submit(request(prompt, 2, 5, s), &why)) << why;
    ASSERT_TRUE(s->wait());
    EXPECT_EQ(s->n_reports, 1);
    EXPECT_EQ(s->tokens.size(), 2u);
    expect_prompt_logprobs(s->prompt, prompt, ref, 5);
    std::lock_guard<std::mutex> lk(mu);
    ASSERT_GE(steps.size(), 2u);
    EXPECT_EQ(steps[0], batch_loop_prompt_logits_chunk);
    EXPECT_EQ(steps[1], 300 - batch_loop_prompt_logits_chunk);
}

TEST(batch_loop_prompt_logprobs, skip_the_prefix_cache_but_leave_one) {
    INFERD_REQUIRE_TESTDATA(dir);
    auto m = load_stories(dir);
    const std::vector<int32_t> prompt = test_prompt(30, 3);
    const auto ref = reference_rows(*m, prompt);
    batch_loop loop(*m, loop_params(1));
    loop.start();
    std::string why;
    auto warm = std::make_shared<prompt_sink>();
    ASSERT_TRUE(loop.submit(request(prompt, 2, -1, warm), &why));
    ASSERT_TRUE(warm->wait());
    auto scored = std::make_shared<prompt_sink>();
    ASSERT_TRUE(loop.submit(request(prompt, 2, 1, scored), &why));
    ASSERT_TRUE(scored->wait());
    EXPECT_EQ(scored->usage.cached_tokens, 0) << "every prompt position needs its logits";
    ASSERT_EQ(scored->admissions.size(), 1u);
    EXPECT_EQ(scored->admissions[0], 0);
    expect_prompt_logprobs(scored->prompt, prompt, ref, 1);
    EXPECT_EQ(scored->tokens, warm->tokens);
    auto next = std::make_shared<prompt_sink>();
    ASSERT_TRUE(loop.submit(request(prompt, 2, -1, next), &why));
    ASSERT_TRUE(next->wait());
    EXPECT_EQ(next->usage.cached_tokens, int32_t(prompt.size()) - 1) << "the scored prompt's cells are a cache";
    EXPECT_EQ(next->tokens, warm->tokens);
}

TEST(batch_loop_prompt_logprobs, choices_and_preemption_report_once_each) {
    INFERD_REQUIRE_TESTDATA(dir);
    auto m = load_stories(dir);
    // n = 3 of one prompt at once (no cell sharing for them), then four requests over a cache
    // too small for all of them (preemption and recompute).
    const std::vector<int32_t> prompt = test_prompt(20, 4);
    const auto ref = reference_rows(*m, prompt);
    {
        batch_loop loop(*m, loop_params(4));
        std::vector<gen_request> rs;
        std::vector<std::shared_ptr<prompt_sink>> sinks;
        for (int i = 0; i < 3; ++i) {
            sinks.push_back(std::make_shared<prompt_sink>());
            rs.push_back(request(prompt, 4, 2, sinks.back()));
        }
        std::string why;
        ASSERT_TRUE(loop.submit_all(rs, &why)) << why;
        loop.start();
        for (auto & s : sinks) {
            ASSERT_TRUE(s->wait());
            EXPECT_EQ(s->n_reports, 1);
            EXPECT_EQ(s->usage.cached_tokens, 0);
            EXPECT_EQ(s->tokens, sinks[0]->tokens);
            expect_prompt_logprobs(s->prompt, prompt, ref, 2);
        }
    }
    batch_loop loop(*m, loop_params(4, 64));  // 4 x ~50 cells wanted, 64 available
    std::vector<std::vector<int32_t>> prompts;
    std::vector<std::shared_ptr<prompt_sink>> sinks;
    std::string why;
    for (size_t i = 0; i < 4; ++i) {
        prompts.push_back(test_prompt(7 + 3 * i, 10 + i));
        sinks.push_back(std::make_shared<prompt_sink>());
        ASSERT_TRUE(loop.submit(request(prompts.back(), 40, 1, sinks.back()), &why)) << why;
    }
    loop.start();
    size_t resumed = 0;
    for (size_t i = 0; i < sinks.size(); ++i) {
        ASSERT_TRUE(sinks[i]->wait());
        EXPECT_EQ(sinks[i]->reason, gen_finish::length) << sinks[i]->message;
        EXPECT_EQ(sinks[i]->n_reports, 1) << "request " << i;
        EXPECT_EQ(sinks[i]->tokens.size(), 40u);
        expect_prompt_logprobs(sinks[i]->prompt, prompts[i], reference_rows(*m, prompts[i]), 1);
        resumed += sinks[i]->admissions.size() - 1;
    }
    EXPECT_GT(resumed, 0u) << "some request was preempted and resumed";
}
