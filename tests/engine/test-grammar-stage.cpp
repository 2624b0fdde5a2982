// The grammar as a sampler stage (engine/grammar-stage.h): with random logits, every draw is a
// token the grammar allows, the output is a sentence when the end is drawn, copies go on
// independently, and a refused token stops the sampler.
#include "engine/grammar-stage.h"
#include "grammar/gbnf.h"

#include <gtest/gtest.h>

#include <random>

namespace {

constexpr int32_t k_eos = 0;

std::vector<std::string> vocab_bytes() {
    std::vector<std::string> b = {"</s>"};
    for (const char * t : {"a", "b", "ab", "ba", "aab", ",", ", ", "[", "]", "[a", "a]", "x", "yes", "no"}) b.emplace_back(t);
    return b;
}

std::shared_ptr<const grammar_vocab> test_vocab() {
    const auto b = vocab_bytes();
    std::vector<bool> special(b.size(), false);
    special[k_eos] = true;
    return grammar_vocab::build(b, special, {k_eos});
}

std::shared_ptr<const grammar_program> program(const char * gbnf) {
    grammar_parse_result g = grammar_parse_gbnf(gbnf);
    EXPECT_TRUE(g.ok()) << g.error.to_string();
    grammar_program_result p = grammar_program_build(g.value);
    EXPECT_TRUE(p.ok()) << p.error;
    return p.value;
}

}  // namespace

TEST(grammar_stage, draws_stay_inside_the_grammar) {
    const char * text = R"(root ::= "[" ("a" | "b")* ("," " "? ("a" | "b")+)* "]")";
    grammar_parse_result g = grammar_parse_gbnf(text);
    ASSERT_TRUE(g.ok());
    auto vocab = test_vocab();
    const auto bytes = vocab_bytes();
    std::mt19937 rng(7);
    std::normal_distribution<float> nd(0.0f, 2.0f);
    for (uint64_t seed = 1; seed <= 20; ++seed) {
        sampling_params sp;
        sp.temperature = 1.0f;
        sp.top_k = 0;
        sp.top_p = 1.0f;
        sp.min_p = 0.0f;
        sp.seed = seed;
        sampler smp(sp, int32_t(bytes.size()));
        smp.add_stage(grammar_stage_new(program(text), vocab));
        ASSERT_EQ(smp.n_stages(), 1u);
        std::string out;
        bool ended = false;
        for (int step = 0; step < 40 && !ended; ++step) {
            std::vector<float> logits(bytes.size());
            for (float & l : logits) l = nd(rng);
            const sampled_token t = smp.sample(logits.data());
            ASSERT_GE(t.id, 0);
            ASSERT_TRUE(smp.accept(t.id)) << out << " + " << bytes[size_t(t.id)];
            if (t.id == k_eos) {
                ended = true;
            } else {
                out += bytes[size_t(t.id)];
                ASSERT_TRUE(grammar_recognize_prefix(g.value, out)) << out;
            }
        }
        if (ended) {
            EXPECT_TRUE(grammar_recognize(g.value, out)) << out;
        }
    }
}

TEST(grammar_stage, copies_refusals_and_reset) {
    auto vocab = test_vocab();
    sampling_params sp;
    sp.temperature = 0.0f;
    sampler a(sp, 15);
    a.add_stage(grammar_stage_new(program(R"(root ::= "yes" | "no")"), vocab));
    std::vector<float> logits(15, 0.0f);
    logits[11] = 5.0f;  // "x" is the best token but not allowed
    logits[13] = 1.0f;  // "yes"
    logits[14] = 2.0f;  // "no"
    EXPECT_EQ(a.sample(logits.data()).id, 14);
    sampler b(a);
    EXPECT_TRUE(a.accept(14));
    auto stage = grammar_stage_new(program("root ::= \"a\""), vocab);
    const grammar_matcher * m = grammar_stage_matcher(*stage);
    ASSERT_NE(m, nullptr);
    EXPECT_FALSE(m->can_end());
    // After "no" only the end remains.
    EXPECT_EQ(a.sample(logits.data()).id, k_eos);
    EXPECT_FALSE(a.accept(13));  // refused: the grammar is complete
    // The copy still stands at the start.
    EXPECT_EQ(b.sample(logits.data()).id, 14);
    EXPECT_TRUE(b.accept(13));
    a.reset();
    EXPECT_EQ(a.sample(logits.data()).id, 14);
}
