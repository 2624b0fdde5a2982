// Adaptive speculative decoding in the batch loop (spec.adaptive): the loop times its own steps.
// Drafting made expensive (a stall where drafts are proposed) turns itself off, says why through
// the spec observer and in stats(), and the output is still the plain loop's token for token;
// drafting that saves steps (every decode stalled alike, so a step's tokens decide) stays on.
// The stalls are far larger than a step of the tiny model, so the verdicts do not depend on the
// machine's speed.
#include "batch-loop-spec-util.h"
#include "server/batch-loop.h"
#include "testdata.h"

#include <gtest/gtest.h>

#include <chrono>
#include <mutex>
#include <string>
#include <thread>

namespace {

// BOS, then a phrase three times: n-gram lookup finds drafts from the start.
std::vector<int32_t> repeated_prompt() {
    std::vector<int32_t> p = {1};
    for (int rep = 0; rep < 3; ++rep) {
        for (int32_t k = 0; k < 9; ++k) p.push_back(300 + (k * 17) % 200);
    }
    return p;
}

// P C P, where C is the greedy continuation of P: the model goes on with C, which n-gram lookup
// finds in the prompt, so drafts are accepted.
std::vector<int32_t> predictable_prompt(const model & m) {
    spec_req q;
    q.prompt = repeated_prompt();
    q.max_tokens = 48;
    const spec_run first = run_in_order(m, loop_params(1), {q});
    std::vector<int32_t> p = q.prompt;
    p.insert(p.end(), first.results[0].tokens.begin(), first.results[0].tokens.end());
    p.insert(p.end(), q.prompt.begin() + 1, q.prompt.end());
    return p;
}

// A request of max_tokens on the predictable prompt, and the plain loop's answer to it.
struct plain_case {
    spec_req q;
    spec_result plain;
    uint64_t plain_steps = 0;
};

plain_case plain_answer(const model & m, int32_t max_tokens) {
    plain_case c;
    c.q.prompt = predictable_prompt(m);
    c.q.max_tokens = max_tokens;
    const spec_run r = run_in_order(m, loop_params(1), {c.q});
    EXPECT_EQ(r.results.size(), 1u);
    if (!r.results.empty()) c.plain = r.results[0];
    c.plain_steps = r.stats.steps;
    return c;
}

struct adaptive_run {
    spec_result result;
    batch_loop_stats stats;
    std::string changes;
};

// One request through an adaptive n-gram loop whose fault hook stalls `stall` at `site`.
adaptive_run run_adaptive(const model & m, const spec_req & q, const char * site, std::chrono::milliseconds stall) {
    batch_loop_params p = loop_params(1);
    p.spec.ngram = 3;
    p.spec.n_max = 8;
    p.spec.adaptive = true;
    p.fault_hook = [site, stall](std::string_view s) {
        if (s == site) std::this_thread::sleep_for(stall);
    };
    batch_loop loop(m, p);
    std::mutex mu;
    adaptive_run out;
    loop.set_spec_observer([&](const std::string & c) {
        std::lock_guard<std::mutex> lk(mu);
        out.changes += c + "\n";
    });
    EXPECT_TRUE(loop.stats().spec_active);  // on until measured otherwise
    loop.start();
    auto sink = std::make_shared<record_sink>(q.stop_after, q.cancel_after);
    std::string why;
    EXPECT_TRUE(loop.submit(make_request(q, sink), &why)) << why;
    EXPECT_TRUE(sink->wait());
    loop.stop();
    out.result = {sink->tokens, sink->logprobs, sink->reason, sink->usage};
    out.stats = loop.stats();
    return out;
}

}  // namespace

TEST(batch_loop_spec_adaptive, drafting_that_costs_more_than_it_saves_turns_itself_off) {
    INFERD_REQUIRE_TESTDATA(dir);
    auto m = model::load(dir + "/models/stories260K-f32.gguf", model_params{});
    const plain_case c = plain_answer(*m, 160);
    // 200 ms per drafting step: at most 9 tokens in it, 45 tokens/s, against a plain step of a
    // few milliseconds.
    const adaptive_run a = run_adaptive(*m, c.q, "draft", std::chrono::milliseconds(200));
    EXPECT_EQ(a.result.tokens, c.plain.tokens);
    EXPECT_EQ(a.result.reason, c.plain.reason);
    EXPECT_GE(a.stats.spec_turned_off, 1u);
    // Off at the end, unless the request ended in a retry round (which then says so).
    EXPECT_TRUE(!a.stats.spec_active || a.changes.find("trying drafts again") != std::string::npos) << a.changes;
    EXPECT_GT(a.stats.spec_speedup, 0.0);
    EXPECT_LT(a.stats.spec_speedup, 0.98);
    EXPECT_NE(a.changes.find("speculative decoding turned off"), std::string::npos) << a.changes;
    // Drafting ran in the first round only (and in a retry after 128 steps, when there was one).
    EXPECT_GT(a.result.usage.draft_tokens, 0);
    EXPECT_LT(a.stats.steps, c.plain_steps);  // fewer steps than plain (accepted drafts)
}

TEST(batch_loop_spec_adaptive, drafting_that_saves_steps_stays_on) {
    INFERD_REQUIRE_TESTDATA(dir);
    auto m = model::load(dir + "/models/stories260K-f32.gguf", model_params{});
    const plain_case c = plain_answer(*m, 100);
    // Every decode stalls 50 ms, with or without drafts: a step's rate is its tokens.
    const adaptive_run a = run_adaptive(*m, c.q, "step", std::chrono::milliseconds(50));
    EXPECT_EQ(a.result.tokens, c.plain.tokens);
    EXPECT_TRUE(a.stats.spec_active);
    EXPECT_EQ(a.stats.spec_turned_off, 0u);
    EXPECT_GT(a.stats.spec_speedup, 1.0);
    EXPECT_TRUE(a.changes.empty()) << a.changes;
    EXPECT_GT(a.result.usage.draft_accepted, 0);
}
