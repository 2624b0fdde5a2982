// The batch loop with grammar-constrained requests on a real model: outputs follow the grammar
// and end with `stop` when complete, concurrent requests equal one-by-one runs, a preempted
// request resumes with its grammar state, nothing allowed ends with `stop`, ignore_eos does not
// run past a complete output, unconstrained requests beside constrained ones are unaffected,
// speculative decoding leaves the output as it is.
#include "batch-loop-test-util.h"
#include "server/batch-loop.h"
#include "testdata.h"

#include "grammar/gbnf.h"
#include "grammar/token-mask.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <condition_variable>
#include <mutex>

namespace {

class text_sink : public gen_sink {
public:
    explicit text_sink(const tokenizer & tok) : tok_(tok) {}
    void on_admitted(int32_t, int32_t) override {
        std::lock_guard<std::mutex> lk(mu_);
        ++admissions;
    }
    bool on_token(const gen_token & t) override {
        std::lock_guard<std::mutex> lk(mu_);
        tokens.push_back(t.id);
        text += tok_.token_to_piece(t.id);
        return true;
    }
    void on_finished(gen_finish r, const gen_usage &, const std::string & msg) override {
        std::lock_guard<std::mutex> lk(mu_);
        ++finished;
        reason = r;
        message = msg;
        cv_.notify_all();
    }
    bool wait(std::chrono::seconds limit = std::chrono::seconds(120)) {
        std::unique_lock<std::mutex> lk(mu_);
        return cv_.wait_for(lk, limit, [&] { return finished > 0; });
    }

    std::vector<int32_t> tokens;
    std::string text;
    int admissions = 0;
    int finished = 0;
    gen_finish reason = gen_finish::error;
    std::string message;

private:
    const tokenizer & tok_;
    std::mutex mu_;
    std::condition_variable cv_;
};

struct compiled {
    grammar g;
    std::shared_ptr<const grammar_program> program;
};

compiled compile(const std::string & gbnf) {
    compiled c;
    grammar_parse_result r = grammar_parse_gbnf(gbnf);
    EXPECT_TRUE(r.ok()) << r.error.to_string();
    c.g = r.value;
    grammar_program_result p = grammar_program_build(c.g);
    EXPECT_TRUE(p.ok()) << p.error;
    c.program = p.value;
    return c;
}

gen_request constrained(std::vector<int32_t> prompt, int32_t max_tokens, const compiled & c, std::shared_ptr<gen_sink> sink) {
    gen_request r;
    r.prompt = std::move(prompt);
    r.max_tokens = max_tokens;
    r.sampling.temperature = 0.0f;
    r.grammar = c.program;
    r.sink = std::move(sink);
    return r;
}

std::unique_ptr<model> load_stories(const std::string & dir) {
    return model::load(dir + "/models/stories260K-f32.gguf", model_params{});
}

// Ten three-digit numbers: 41 bytes, and stories260K's small vocabulary writes digits one byte a token.
const char * list_gbnf = "root ::= \"[\" item (\",\" item){9} \"]\"\nitem ::= [0-9]{3}\n";

}  // namespace

TEST(batch_loop_grammar, output_follows_the_grammar_and_stops_when_complete) {
    INFERD_REQUIRE_TESTDATA(dir);
    auto m = load_stories(dir);
    const compiled c = compile(list_gbnf);
    batch_loop loop(*m, loop_params(2));
    loop.start();
    auto s = std::make_shared<text_sink>(m->get_tokenizer());
    std::string why;
    ASSERT_TRUE(loop.submit(constrained(prompts_for_test(1)[0], 200, c, s), &why)) << why;
    ASSERT_TRUE(s->wait());
    EXPECT_EQ(s->reason, gen_finish::stop) << s->message;
    EXPECT_EQ(s->text.size(), 41u) << s->text;
    EXPECT_TRUE(grammar_recognize(c.g, s->text)) << s->text;
    // max_tokens still gives length.
    auto cut = std::make_shared<text_sink>(m->get_tokenizer());
    ASSERT_TRUE(loop.submit(constrained(prompts_for_test(1)[0], 5, c, cut), &why)) << why;
    ASSERT_TRUE(cut->wait());
    EXPECT_EQ(cut->reason, gen_finish::length);
    EXPECT_EQ(cut->text, s->text.substr(0, 5));
}

TEST(batch_loop_grammar, preempted_requests_keep_their_grammar_state) {
    INFERD_REQUIRE_TESTDATA(dir);
    auto m = load_stories(dir);
    const compiled c = compile(list_gbnf);
    const auto prompts = prompts_for_test(4);  // 7..16 tokens, + 41 generated
    std::vector<std::string> alone;
    {
        batch_loop one(*m, loop_params(1));
        one.start();
        for (const auto & p : prompts) {
            auto s = std::make_shared<text_sink>(m->get_tokenizer());
            std::string why;
            EXPECT_TRUE(one.submit(constrained(p, 100, c, s), &why)) << why;
            EXPECT_TRUE(s->wait());
            alone.push_back(s->text);
        }
    }
    batch_loop loop(*m, loop_params(4, 64));  // 4 x 48..57 cells wanted, 64 available
    std::vector<std::shared_ptr<text_sink>> sinks;
    for (const auto & p : prompts) {
        sinks.push_back(std::make_shared<text_sink>(m->get_tokenizer()));
        std::string why;
        ASSERT_TRUE(loop.submit(constrained(p, 100, c, sinks.back()), &why)) << why;
    }
    loop.start();
    int resumed = 0;
    for (size_t i = 0; i < sinks.size(); ++i) {
        ASSERT_TRUE(sinks[i]->wait());
        EXPECT_EQ(sinks[i]->reason, gen_finish::stop) << sinks[i]->message;
        EXPECT_TRUE(grammar_recognize(c.g, sinks[i]->text)) << sinks[i]->text;
        EXPECT_EQ(sinks[i]->text, alone[i]) << "request " << i;
        resumed += sinks[i]->admissions - 1;
    }
    EXPECT_GT(resumed, 0) << "some request was preempted and resumed";
}

TEST(batch_loop_grammar, nothing_allowed_stops_and_ignore_eos_ends_at_completion) {
    INFERD_REQUIRE_TESTDATA(dir);
    auto m = load_stories(dir);
    const tokenizer & tok = m->get_tokenizer();
    batch_loop loop(*m, loop_params(2));
    loop.start();
    // After "a" only a digit may come, and logit_bias bans every token that is one.
    const compiled digit = compile("root ::= \"a\" [0-9]\n");
    gen_request r = constrained(prompts_for_test(1)[0], 20, digit, nullptr);
    for (int32_t id = 0; id < tok.n_tokens(); ++id) {
        const std::string piece = tok.token_to_piece(id);
        if (!piece.empty() && piece[0] >= '0' && piece[0] <= '9') r.sampling.logit_bias.emplace_back(id, -INFINITY);
    }
    auto s = std::make_shared<text_sink>(tok);
    r.sink = s;
    std::string why;
    ASSERT_TRUE(loop.submit(std::move(r), &why)) << why;
    ASSERT_TRUE(s->wait());
    EXPECT_EQ(s->reason, gen_finish::stop) << s->message;
    EXPECT_EQ(s->text, "a");
    // ignore_eos does not carry a complete output on.
    const compiled ab = compile("root ::= \"ab\"\n");
    gen_request e = constrained(prompts_for_test(2)[1], 20, ab, nullptr);
    e.ignore_eos = true;
    auto se = std::make_shared<text_sink>(tok);
    e.sink = se;
    ASSERT_TRUE(loop.submit(std::move(e), &why)) << why;
    ASSERT_TRUE(se->wait());
    EXPECT_EQ(se->reason, gen_finish::stop) << se->message;
    EXPECT_EQ(se->text, "ab");
}

TEST(batch_loop_grammar, unconstrained_neighbours_are_unaffected) {
    INFERD_REQUIRE_TESTDATA(dir);
    auto m = load_stories(dir);
    const compiled c = compile(list_gbnf);
    const auto prompts = prompts_for_test(2);
    auto plain_alone = std::make_shared<text_sink>(m->get_tokenizer());
    batch_loop loop(*m, loop_params(2));
    loop.start();
    std::string why;
    gen_request plain = constrained(prompts[1], 30, c, plain_alone);
    plain.grammar = nullptr;
    plain.ignore_eos = true;
    ASSERT_TRUE(loop.submit(plain, &why)) << why;
    ASSERT_TRUE(plain_alone->wait());
    auto plain_beside = std::make_shared<text_sink>(m->get_tokenizer());
    auto g = std::make_shared<text_sink>(m->get_tokenizer());
    plain.sink = plain_beside;
    std::vector<gen_request> both = {constrained(prompts[0], 100, c, g), plain};
    ASSERT_TRUE(loop.submit_all(both, &why)) << why;
    ASSERT_TRUE(g->wait() && plain_beside->wait());
    EXPECT_TRUE(grammar_recognize(c.g, g->text)) << g->text;
    EXPECT_EQ(plain_beside->tokens, plain_alone->tokens);
    EXPECT_EQ(plain_beside->reason, gen_finish::length);
}

// Speculative decoding (n-gram lookup) under a grammar: each position is drawn with the grammar
// stage in the state of the accepted tokens before it, so greedy and seeded outputs are those
// of the loop without speculation.
TEST(batch_loop_grammar, speculation_keeps_the_output) {
    INFERD_REQUIRE_TESTDATA(dir);
    auto m = load_stories(dir);
    const compiled c = compile("root ::= (\"[1\" [0-9] \"]\"){12}\n");
    for (float temperature : {0.0f, 0.8f}) {
        SCOPED_TRACE(temperature);
        std::vector<std::string> texts;
        uint64_t drafted = 0, accepted = 0;
        for (bool spec : {false, true}) {
            batch_loop_params p = loop_params(1);
            p.spec.ngram = spec ? 3 : 0;
            batch_loop loop(*m, p);
            loop.start();
            auto s = std::make_shared<text_sink>(m->get_tokenizer());
            gen_request r = constrained(prompts_for_test(2)[1], 100, c, s);
            r.sampling.temperature = temperature;
            r.sampling.seed = 5;
            std::string why;
            ASSERT_TRUE(loop.submit(std::move(r), &why)) << why;
            ASSERT_TRUE(s->wait());
            EXPECT_EQ(s->reason, gen_finish::stop) << s->message;
            EXPECT_TRUE(grammar_recognize(c.g, s->text)) << s->text;
            texts.push_back(s->text);
            loop.stop();
            drafted = loop.stats().draft_tokens;
            accepted = loop.stats().draft_accepted;
        }
        EXPECT_EQ(texts[0], texts[1]);
        EXPECT_GT(drafted, 0u);
        EXPECT_GT(accepted, 0u);
    }
}

// A grammar whose start is cheap but whose second step is too costly to follow (a long counted
// repetition of something that may be empty): the request ends `refused` with the matcher's
// message after the one token it could follow, and the next request is served as before.
TEST(batch_loop_grammar, a_grammar_too_costly_partway_refuses_the_request) {
    INFERD_REQUIRE_TESTDATA(dir);
    auto m = load_stories(dir);
    const compiled costly = compile("root ::= \"[\" ws{999,1000} \"]\"\nws ::= [ ]*\n");
    const compiled c = compile(list_gbnf);
    batch_loop loop(*m, loop_params(2));
    loop.start();
    auto s = std::make_shared<text_sink>(m->get_tokenizer());
    std::string why;
    ASSERT_TRUE(loop.submit(constrained(prompts_for_test(1)[0], 20, costly, s), &why)) << why;
    ASSERT_TRUE(s->wait());
    EXPECT_EQ(s->reason, gen_finish::refused);
    EXPECT_NE(s->message.find("too costly to follow"), std::string::npos) << s->message;
    EXPECT_EQ(s->text, "[");
    auto next = std::make_shared<text_sink>(m->get_tokenizer());
    ASSERT_TRUE(loop.submit(constrained(prompts_for_test(1)[0], 200, c, next), &why)) << why;
    ASSERT_TRUE(next->wait());
    EXPECT_EQ(next->reason, gen_finish::stop) << next->message;
    EXPECT_TRUE(grammar_recognize(c.g, next->text)) << next->text;
}
