// Speculative decoding in the batch loop: with n-gram lookup or a draft model, every request's
// output (greedy and seeded sampling, logprobs, stop, max_tokens, cancellation, preemption,
// several slots, n > 1) is the same token for token as without speculation, drafts are actually
// accepted, rejected cells leave the cache (the next request's prefix reuse still matches), and a
// draft model of another vocabulary is refused.
#include "batch-loop-test-util.h"
#include "server/batch-loop.h"
#include "testdata.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <condition_variable>
#include <mutex>

namespace {

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

gen_request make_request(const spec_req & q, std::shared_ptr<gen_sink> sink) {
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
spec_run run_requests(const model & m, const batch_loop_params & p, const std::vector<spec_req> & reqs,
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
spec_run run_in_order(const model & m, const batch_loop_params & p, const std::vector<spec_req> & reqs) {
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

void expect_same_outputs(const spec_run & plain, const spec_run & spec) {
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

batch_loop_params ngram_params(batch_loop_params p, uint32_t n = 3, int32_t n_max = 8) {
    p.spec.ngram = n;
    p.spec.n_max = n_max;
    return p;
}

// BOS, then a phrase three times: n-gram lookup finds drafts from the start.
std::vector<int32_t> repeated_prompt(int32_t salt = 0) {
    std::vector<int32_t> p = {1};
    for (int rep = 0; rep < 3; ++rep) {
        for (int32_t k = 0; k < 9; ++k) p.push_back(300 + (k * 17 + salt * 5) % 200);
    }
    return p;
}

sampling_params seeded(uint64_t seed) {
    sampling_params sp;
    sp.temperature = 0.8f;
    sp.top_k = 40;
    sp.top_p = 0.95f;
    sp.min_p = 0.05f;
    sp.seed = seed;
    return sp;
}

std::unique_ptr<model> load(const std::string & dir, const char * name) {
    return model::load(dir + "/models/" + name, model_params{});
}

}  // namespace

TEST(batch_loop_spec, ngram_greedy_equals_plain_and_accepts_drafts) {
    INFERD_REQUIRE_TESTDATA(dir);
    auto m = load(dir, "stories260K-f32.gguf");
    std::vector<spec_req> reqs(3);
    for (size_t i = 0; i < reqs.size(); ++i) {
        reqs[i].prompt = repeated_prompt(int32_t(i));
        reqs[i].max_tokens = 48;
    }
    const spec_run plain = run_in_order(*m, loop_params(1), reqs);
    const spec_run spec = run_in_order(*m, ngram_params(loop_params(1)), reqs);
    expect_same_outputs(plain, spec);
    EXPECT_GT(spec.stats.draft_tokens, 0u);
    EXPECT_GT(spec.stats.draft_accepted, 0u);
    EXPECT_LE(spec.stats.draft_accepted, spec.stats.draft_tokens);
    EXPECT_LT(spec.stats.steps, plain.stats.steps);  // accepted drafts save steps
    int32_t drafted = 0, accepted = 0;
    for (const spec_result & r : spec.results) drafted += r.usage.draft_tokens, accepted += r.usage.draft_accepted;
    EXPECT_EQ(uint64_t(drafted), spec.stats.draft_tokens);
    EXPECT_EQ(uint64_t(accepted), spec.stats.draft_accepted);
}

TEST(batch_loop_spec, ngram_seeded_sampling_and_logprobs_equal_plain) {
    INFERD_REQUIRE_TESTDATA(dir);
    auto m = load(dir, "stories260K-f32.gguf");
    std::vector<spec_req> reqs(4);
    for (size_t i = 0; i < reqs.size(); ++i) {
        reqs[i].prompt = repeated_prompt(int32_t(i));
        reqs[i].max_tokens = 40;
        reqs[i].sampling = seeded(100 + i);
        reqs[i].sampling.n_probs = 2;
    }
    reqs[1].sampling.repeat_penalty = 1.1f;  // penalties see the accepted tokens one by one
    reqs[2].sampling.temperature = 0.3f;
    const spec_run plain = run_in_order(*m, loop_params(1), reqs);
    const spec_run spec = run_in_order(*m, ngram_params(loop_params(1)), reqs);
    expect_same_outputs(plain, spec);
    EXPECT_GT(spec.stats.draft_accepted, 0u);
    for (size_t i = 0; i < reqs.size(); ++i) {
        ASSERT_EQ(plain.results[i].logprobs.size(), spec.results[i].logprobs.size());
        for (size_t k = 0; k < plain.results[i].logprobs.size(); ++k) {
            EXPECT_NEAR(plain.results[i].logprobs[k], spec.results[i].logprobs[k], 1e-4) << i << ":" << k;
        }
    }
}

// Four slots: two long prompts prefill in chunks (n_batch 24) while the others generate and draft;
// n = 2 for one request (submit_all).
TEST(batch_loop_spec, ngram_with_several_slots_prefill_and_n2_equals_plain) {
    INFERD_REQUIRE_TESTDATA(dir);
    auto m = load(dir, "stories260K-f32.gguf");
    std::vector<spec_req> reqs(6);
    for (size_t i = 0; i < reqs.size(); ++i) {
        reqs[i].prompt = i % 2 ? prompts_for_test(12)[4 + i] : repeated_prompt(int32_t(i));
        reqs[i].max_tokens = 30 + int32_t(i);
        reqs[i].sampling = i < 2 ? seeded(7 + i) : spec_req::greedy_sampling();
    }
    reqs[1].prompt = reqs[0].prompt;  // n = 2: one prompt, two seeds
    batch_loop_params p = loop_params(4);
    p.ctx.n_batch = p.ctx.n_ubatch = 24;
    const spec_run plain = run_requests(*m, p, reqs, {2});
    const spec_run spec = run_requests(*m, ngram_params(p, 3, 6), reqs, {2});
    expect_same_outputs(plain, spec);
    EXPECT_GT(spec.stats.draft_accepted, 0u);
}

// A stop from the sink and max_tokens land inside runs of accepted drafts; a cancellation in the
// middle of one emits nothing more.
TEST(batch_loop_spec, ngram_stop_max_tokens_and_cancel_inside_accepted_runs) {
    INFERD_REQUIRE_TESTDATA(dir);
    auto m = load(dir, "stories260K-f32.gguf");
    std::vector<spec_req> reqs;
    for (int n = 3; n <= 17; n += 2) {
        spec_req q;
        q.prompt = repeated_prompt(n % 3);
        q.max_tokens = n;  // a length finish at every odd count
        reqs.push_back(q);
        q.max_tokens = 40;
        q.stop_after = n + 1;
        reqs.push_back(q);
        q.stop_after = -1;
        q.cancel_after = n;
        reqs.push_back(q);
    }
    const spec_run plain = run_in_order(*m, loop_params(1), reqs);
    const spec_run spec = run_in_order(*m, ngram_params(loop_params(1), 3, 12), reqs);
    expect_same_outputs(plain, spec);
    for (size_t i = 0; i < reqs.size(); ++i) {
        const spec_result & r = spec.results[i];
        if (reqs[i].cancel_after >= 0) {
            EXPECT_EQ(r.reason, gen_finish::cancelled);
            EXPECT_EQ(int(r.tokens.size()), reqs[i].cancel_after);
        } else if (reqs[i].stop_after >= 0) {
            EXPECT_EQ(r.reason, gen_finish::stop);
            EXPECT_EQ(int(r.tokens.size()), reqs[i].stop_after);
        } else {
            EXPECT_EQ(r.reason, gen_finish::length);
            EXPECT_EQ(int32_t(r.tokens.size()), reqs[i].max_tokens);
        }
    }
    EXPECT_GT(spec.stats.draft_accepted, 0u);
}

// A KV cache too small for all four requests: requests are preempted and resumed (drafts are
// dropped first when a step does not fit). Greedy: a resumed request's positions sit in other
// cells and batches, and the kernels' float rounding can then differ in the last bit, which can
// reorder two near-tied candidates of a seeded draw (as it can without speculation).
TEST(batch_loop_spec, ngram_with_preemption_equals_plain) {
    INFERD_REQUIRE_TESTDATA(dir);
    auto m = load(dir, "stories260K-f32.gguf");
    std::vector<spec_req> reqs(4);
    for (size_t i = 0; i < reqs.size(); ++i) {
        reqs[i].prompt = repeated_prompt(int32_t(i));
        reqs[i].prompt.resize(19);
        reqs[i].max_tokens = 40;
    }
    const spec_run alone = run_in_order(*m, loop_params(1), reqs);
    const spec_run plain = run_requests(*m, loop_params(4, 96), reqs);
    expect_same_outputs(alone, plain);
    const spec_run spec = run_requests(*m, ngram_params(loop_params(4, 96)), reqs);
    expect_same_outputs(alone, spec);
    EXPECT_GT(spec.stats.draft_accepted, 0u);
}

// After speculation the cache holds exactly the slot's tokens: the cache usage matches the plain
// run's, and a follow-up request that extends the finished one reuses its cells and continues as
// it would without speculation.
TEST(batch_loop_spec, ngram_cache_holds_the_slot_tokens_for_prefix_reuse) {
    INFERD_REQUIRE_TESTDATA(dir);
    auto m = load(dir, "stories260K-f32.gguf");
    spec_req first;
    first.prompt = repeated_prompt(1);
    first.max_tokens = 29;
    const spec_run plain1 = run_in_order(*m, loop_params(1), {first});
    ASSERT_EQ(plain1.results[0].tokens.size(), 29u);
    spec_req second;
    second.prompt = first.prompt;
    second.prompt.insert(second.prompt.end(), plain1.results[0].tokens.begin(), plain1.results[0].tokens.end());
    second.prompt.push_back(305);
    second.max_tokens = 24;
    const spec_run plain = run_in_order(*m, loop_params(1), {first, second});
    const spec_run spec = run_in_order(*m, ngram_params(loop_params(1)), {first, second});
    expect_same_outputs(plain, spec);
    EXPECT_EQ(plain.stats.kv_usage, spec.stats.kv_usage);
    EXPECT_EQ(spec.results[1].usage.cached_tokens, int32_t(first.prompt.size()) + 28);
    EXPECT_EQ(plain.results[1].usage.cached_tokens, spec.results[1].usage.cached_tokens);
    EXPECT_GT(spec.stats.draft_accepted, 0u);
}

// The target model as its own draft: the draft proposes what the target samples greedily.
TEST(batch_loop_spec, draft_model_same_file_accepts_nearly_everything) {
    INFERD_REQUIRE_TESTDATA(dir);
    auto m = load(dir, "stories260K-f32.gguf");
    auto d = load(dir, "stories260K-f32.gguf");
    std::vector<spec_req> reqs(4);
    for (size_t i = 0; i < reqs.size(); ++i) {
        reqs[i].prompt = prompts_for_test(4)[i];
        reqs[i].max_tokens = 40;
    }
    batch_loop_params p = loop_params(2);
    const spec_run plain = run_requests(*m, p, reqs);
    p.spec.draft = d.get();
    p.spec.n_max = 6;
    p.spec.p_min = 0.0f;
    const spec_run spec = run_requests(*m, p, reqs);
    expect_same_outputs(plain, spec);
    EXPECT_GT(spec.stats.draft_tokens, 40u);
    EXPECT_GE(double(spec.stats.draft_accepted), 0.9 * double(spec.stats.draft_tokens));
    EXPECT_LT(spec.stats.steps, plain.stats.steps);
}

// A quantized draft of the same model, with seeded sampling and a probability floor; n-gram
// lookup set as well is not used when a draft model is given.
TEST(batch_loop_spec, draft_model_quantized_equals_plain) {
    INFERD_REQUIRE_TESTDATA(dir);
    auto m = load(dir, "tiny-llama-f32.gguf");
    auto d = load(dir, "tiny-llama-q4_0.gguf");
    std::vector<spec_req> reqs(4);
    for (size_t i = 0; i < reqs.size(); ++i) {
        reqs[i].prompt = {1, 450, 1128, 3143, 2081, 338, 263, 2217, 1058, 3646, 297, 263};
        reqs[i].prompt.push_back(int32_t(300 + i));
        reqs[i].max_tokens = 32;
        reqs[i].sampling = i % 2 ? seeded(11 + i) : spec_req::greedy_sampling();
    }
    batch_loop_params p = loop_params(3);
    const spec_run plain = run_requests(*m, p, reqs);
    p.spec.draft = d.get();
    p.spec.ngram = 3;
    p.spec.n_max = 5;
    p.spec.p_min = 0.2f;
    const spec_run spec = run_requests(*m, p, reqs);
    expect_same_outputs(plain, spec);
    EXPECT_GT(spec.stats.draft_tokens, 0u);
    EXPECT_GT(spec.stats.draft_accepted, 0u);
}

TEST(batch_loop_spec, draft_model_with_another_vocabulary_is_refused) {
    INFERD_REQUIRE_TESTDATA(dir);
    auto m = load(dir, "stories260K-f32.gguf");
    auto other = load(dir, "tiny-llama-q4_0.gguf");  // 4096 tokens, not 512
    batch_loop_params p = loop_params(1);
    p.spec.draft = other.get();
    try {
        batch_loop loop(*m, p);
        FAIL() << "a draft model of another vocabulary was accepted";
    } catch (const std::runtime_error & e) {
        EXPECT_NE(std::string(e.what()).find("vocabulary"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("4096"), std::string::npos) << e.what();
    }
    auto qwen = load(dir, "tiny-qwen2-f16.gguf");
    auto gpt2 = load(dir, "tiny-gpt2-f16.gguf");  // 4096 tokens too, other texts and specials
    batch_loop_params q = loop_params(1);
    q.spec.draft = gpt2.get();
    EXPECT_THROW(batch_loop(*qwen, q), std::runtime_error);
}

TEST(batch_loop_spec, bad_spec_params_are_refused) {
    INFERD_REQUIRE_TESTDATA(dir);
    auto m = load(dir, "stories260K-f32.gguf");
    batch_loop_params p = ngram_params(loop_params(1));
    p.spec.n_max = 0;
    EXPECT_THROW(batch_loop(*m, p), std::runtime_error);
    p.spec.n_max = 4;
    p.spec.n_min = 5;
    EXPECT_THROW(batch_loop(*m, p), std::runtime_error);
}
