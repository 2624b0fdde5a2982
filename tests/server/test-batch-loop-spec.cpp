// Speculative decoding in the batch loop: with n-gram lookup or a draft model, every request's
// output (greedy and seeded sampling, logprobs, stop, max_tokens, cancellation, preemption,
// several slots, n > 1) is the same token for token as without speculation, drafts are actually
// accepted, rejected cells leave the cache (the next request's prefix reuse still matches), and a
// draft model of another vocabulary is refused.
#include "batch-loop-spec-util.h"
#include "server/batch-loop.h"
#include "testdata.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

namespace {

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

// Cancellation while a draft model's draft is being verified (the target as its own draft, so
// nearly every draft is accepted and the cancellation lands inside an accepted run): the request
// ends as cancelled after exactly the tokens it saw, the cache keeps no cell past them (no
// verified or unverified draft cells), and the next request in the slot continues as without
// speculation.
TEST(batch_loop_spec, draft_model_cancel_inside_a_draft_frees_slot_and_cells) {
    INFERD_REQUIRE_TESTDATA(dir);
    auto m = load(dir, "stories260K-f32.gguf");
    auto d = load(dir, "stories260K-f32.gguf");
    std::vector<spec_req> reqs;
    for (int n : {2, 5, 9, 14}) {
        spec_req q;
        q.prompt = prompts_for_test(4)[size_t(n) % 4];
        q.max_tokens = 40;
        q.cancel_after = n;
        reqs.push_back(q);
        q.cancel_after = -1;
        q.max_tokens = 12;
        q.prompt.push_back(300 + n);  // shares the cancelled request's prompt
        reqs.push_back(q);
    }
    const uint32_t n_ctx = 256;
    batch_loop_params p = loop_params(1, n_ctx);
    const spec_run plain = run_in_order(*m, p, reqs);
    p.spec.draft = d.get();
    p.spec.n_max = 8;
    p.spec.p_min = 0.0f;
    int inside_draft = 0;
    for (size_t i = 0; i < reqs.size(); i += 2) {
        SCOPED_TRACE("cancel after " + std::to_string(reqs[i].cancel_after));
        const spec_run spec = run_in_order(*m, p, {reqs[i]});
        const spec_result & r = spec.results[0];
        EXPECT_EQ(r.reason, gen_finish::cancelled);
        EXPECT_EQ(r.tokens, plain.results[i].tokens);
        EXPECT_GT(r.usage.draft_tokens, 0);
        EXPECT_EQ(spec.stats.running, 0u);
        EXPECT_EQ(spec.stats.waiting, 0u);
        // The cells hold the prompt and the emitted tokens, the last one perhaps not yet.
        const size_t cells = size_t(std::lround(spec.stats.kv_usage * float(n_ctx)));
        const size_t held = reqs[i].prompt.size() + r.tokens.size();
        EXPECT_TRUE(cells == held || cells + 1 == held) << cells << " cells for " << held << " tokens";
        std::printf("cancel after %d: %zu cells for %zu tokens\n", reqs[i].cancel_after, cells, held);
        inside_draft += cells == held ? 1 : 0;  // the last token's cell was a verified draft's
    }
    EXPECT_GT(inside_draft, 0) << "no cancellation landed inside a draft";
    const spec_run spec = run_in_order(*m, p, reqs);
    expect_same_outputs(plain, spec);
    for (size_t i = 0; i < reqs.size(); ++i) {
        EXPECT_EQ(spec.results[i].reason, i % 2 ? gen_finish::length : gen_finish::cancelled) << i;
        EXPECT_EQ(spec.results[i].usage.cached_tokens, plain.results[i].usage.cached_tokens) << i;
    }
    EXPECT_GT(spec.stats.draft_accepted, 0u);
    EXPECT_EQ(spec.stats.running, 0u);
}

// Two slots: a request cancelled inside a draft gives its slot to a waiting one while the other
// slot goes on drafting; every output equals the plain run's.
TEST(batch_loop_spec, draft_model_cancel_with_two_slots_equals_plain) {
    INFERD_REQUIRE_TESTDATA(dir);
    auto m = load(dir, "stories260K-f32.gguf");
    auto d = load(dir, "stories260K-f16.gguf");
    std::vector<spec_req> reqs(5);
    for (size_t i = 0; i < reqs.size(); ++i) {
        reqs[i].prompt = prompts_for_test(5)[i];
        reqs[i].max_tokens = 30;
        if (i % 2 == 0) reqs[i].cancel_after = 3 + 4 * int(i);
    }
    batch_loop_params p = loop_params(2);
    const spec_run plain = run_requests(*m, p, reqs);
    p.spec.draft = d.get();
    p.spec.n_max = 6;
    p.spec.p_min = 0.0f;
    const spec_run spec = run_requests(*m, p, reqs);
    expect_same_outputs(plain, spec);
    for (size_t i = 0; i < reqs.size(); ++i) {
        const spec_result & r = spec.results[i];
        EXPECT_EQ(r.reason, i % 2 == 0 ? gen_finish::cancelled : gen_finish::length) << i;
        if (i % 2 == 0) {
            EXPECT_EQ(int(r.tokens.size()), reqs[i].cancel_after) << i;
        }
    }
    EXPECT_GT(spec.stats.draft_accepted, 0u);
    EXPECT_EQ(spec.stats.running, 0u);
    EXPECT_EQ(spec.stats.waiting, 0u);
}
