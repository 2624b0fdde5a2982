// The verdict on speculative decoding from step rates, with rates given by the test (no clock):
// drafting that wins stays on with few plain steps; drafting that loses turns off within the
// first round, is tried again after 128 steps, then 256, 512, ... up to the cap; a win after a
// retry resets the wait; rates of different numbers of generating requests are not compared;
// empty steps are ignored.
#include "server/src/spec-governor.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

namespace {

// Tokens per second of a plain step and of a drafting step (each request emits `per_draft`
// tokens in a drafting step, one in a plain step).
struct rates {
    double plain = 100;
    double spec = 200;
    uint32_t per_draft = 3;
};

struct tally {
    uint32_t drafted = 0, plain = 0;
    std::string changes;  // every change line, one per line
};

tally run_steps(spec_governor & g, uint32_t steps, uint32_t n_gen, const rates & r) {
    tally t;
    for (uint32_t i = 0; i < steps; ++i) {
        const bool draft = g.allow_drafts(n_gen);
        const uint32_t emitted = draft ? n_gen * r.per_draft : n_gen;
        g.observe(n_gen, draft, double(emitted) / (draft ? r.spec : r.plain), emitted);
        (draft ? t.drafted : t.plain) += 1;
        if (std::string c = g.take_change(); !c.empty()) t.changes += c + "\n";
    }
    return t;
}

// Steps until drafting is allowed again (counting this one), at most `limit`.
uint32_t steps_off(spec_governor & g, uint32_t n_gen, double plain_rate, uint32_t limit) {
    for (uint32_t i = 1; i <= limit; ++i) {
        if (g.allow_drafts(n_gen)) return i;
        g.observe(n_gen, false, double(n_gen) / plain_rate, n_gen);
    }
    return limit + 1;
}

}  // namespace

TEST(spec_governor, winning_drafts_stay_on_with_few_plain_steps) {
    spec_governor g;
    const tally t = run_steps(g, 1000, 1, rates{100, 250, 3});
    EXPECT_TRUE(g.active());
    EXPECT_EQ(g.times_disabled(), 0u);
    EXPECT_NEAR(g.speedup(), 2.5, 1e-9);
    EXPECT_TRUE(t.changes.empty()) << t.changes;
    // The first round's plain samples (8), then one plain step in 32.
    EXPECT_GE(t.plain, 8u + 1000u / 32u - 2u);
    EXPECT_LE(t.plain, 8u + 1000u / 32u + 2u);
}

TEST(spec_governor, losing_drafts_turn_off_in_the_first_round_and_retry_with_backoff) {
    spec_governor g;
    const rates lose{100, 60, 3};
    // The first verdict needs 8 drafting and 4 plain steps: about 12 steps.
    uint32_t steps = 0;
    while (g.active() && steps < 100) run_steps(g, 1, 1, lose), ++steps;
    EXPECT_FALSE(g.active());
    EXPECT_LE(steps, 16u);
    EXPECT_EQ(g.times_disabled(), 1u);
    EXPECT_NEAR(g.speedup(), 0.6, 1e-9);
    // Off for 128 steps, then one fresh round of 8 drafting steps (the plain rate is current),
    // then off for 256, 512, ...
    uint32_t expect_wait = 128;
    for (int round = 0; round < 8; ++round) {
        EXPECT_EQ(steps_off(g, 1, 100, 10000), expect_wait) << "round " << round;
        EXPECT_TRUE(g.active());
        EXPECT_NE(g.take_change().find("trying drafts again"), std::string::npos);
        g.observe(1, true, 3.0 / 60, 3);  // the step steps_off let draft
        const tally t = run_steps(g, 7, 1, lose);
        EXPECT_FALSE(g.active()) << "round " << round;
        EXPECT_EQ(t.drafted, 7u);
        EXPECT_NE(t.changes.find("turned off"), std::string::npos) << t.changes;
        EXPECT_EQ(g.times_disabled(), uint64_t(round) + 2);
        expect_wait = std::min(2 * expect_wait, 8192u);
    }
    EXPECT_EQ(expect_wait, 8192u);
}

TEST(spec_governor, a_win_after_a_retry_keeps_drafting_and_resets_the_wait) {
    spec_governor g;
    for (int i = 0; i < 100 && g.active(); ++i) run_steps(g, 1, 1, rates{100, 60, 3});
    ASSERT_FALSE(g.active());
    ASSERT_EQ(steps_off(g, 1, 100, 1000), 128u);
    g.observe(1, true, 3.0 / 300, 3);
    const tally t = run_steps(g, 200, 1, rates{100, 300, 3});  // the text became predictable
    EXPECT_TRUE(g.active());
    EXPECT_NE(t.changes.find("pay again"), std::string::npos) << t.changes;
    EXPECT_GT(g.speedup(), 2.0);
    // Losing again waits the shortest time again. The moving rate takes a few steps to fall.
    uint32_t steps = 0;
    while (g.active() && steps < 100) run_steps(g, 1, 1, rates{100, 50, 3}), ++steps;
    ASSERT_FALSE(g.active());
    EXPECT_EQ(steps_off(g, 1, 100, 1000), 128u);
}

TEST(spec_governor, rates_of_other_request_counts_are_not_compared) {
    spec_governor g;
    // One request: plain steps at 100 tokens/s, drafting at 150 (a win).
    run_steps(g, 100, 1, rates{100, 150, 3});
    EXPECT_TRUE(g.active());
    // Four requests: plain 400 tokens/s, drafting 300. Against the one-request plain rate this
    // would look like a win; against the four-request one it is a loss.
    uint32_t steps = 0;
    while (g.active() && steps < 100) run_steps(g, 1, 4, rates{400, 300, 3}), ++steps;
    EXPECT_FALSE(g.active());
    EXPECT_NEAR(g.speedup(), 0.75, 1e-9);
}

TEST(spec_governor, steps_without_tokens_or_time_and_steps_without_requests_are_ignored) {
    spec_governor g;
    for (int i = 0; i < 50; ++i) {
        EXPECT_TRUE(g.allow_drafts(0));  // nothing is generating: nothing to decide
        g.observe(1, true, 0.0, 3);
        g.observe(1, true, 1.0, 0);
        g.observe(0, true, 1.0, 3);
    }
    EXPECT_TRUE(g.active());
    EXPECT_EQ(g.speedup(), 0.0);
    // A loss right at the margin (0.98x is kept, below is not).
    spec_governor at_margin;
    run_steps(at_margin, 200, 1, rates{100, 98.5, 3});
    EXPECT_TRUE(at_margin.active());
    spec_governor below;
    run_steps(below, 200, 1, rates{100, 97, 3});
    EXPECT_FALSE(below.active());
}
