// End-to-end: /v1/completions with echo and logprobs on the real inferd — the prompt's tokens
// lead the logprobs (the first without a value), prompt only (max_tokens 0, as
// lm-evaluation-harness scores), followed by the completion, streamed (the first chunk carries
// the prompt), a list of prompts and n > 1.
#include "server/inferd-process.h"
#include "server/shared-inferd-suite.h"
#include "testdata.h"

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <cmath>

using nlohmann::json;

namespace {

class server_e2e_echo : public shared_inferd_suite<server_e2e_echo> {
protected:
    static size_t n_tokens(const std::string & text) {
        return post("/tokenize", {{"content", text}})["tokens"].size();
    }
};

std::string joined(const json & tokens) {
    std::string s;
    for (const json & t : tokens) s += t.get<std::string>();
    return s;
}

// The prompt's part of a legacy logprobs object (its first n entries): the first token without a
// value, every other finite and <= 0 with n_top alternatives, offsets from 0 never decreasing.
void expect_prompt_part(const json & lp, size_t n, size_t n_top) {
    ASSERT_TRUE(lp.is_object());
    ASSERT_GE(lp["tokens"].size(), n);
    ASSERT_EQ(lp["token_logprobs"].size(), lp["tokens"].size());
    ASSERT_EQ(lp["top_logprobs"].size(), lp["tokens"].size());
    ASSERT_EQ(lp["text_offset"].size(), lp["tokens"].size());
    EXPECT_TRUE(lp["token_logprobs"][0].is_null());
    EXPECT_TRUE(lp["top_logprobs"][0].is_null());
    EXPECT_EQ(lp["text_offset"][0], 0);
    for (size_t i = 1; i < n; ++i) {
        ASSERT_TRUE(lp["token_logprobs"][i].is_number()) << i;
        const double v = lp["token_logprobs"][i];
        EXPECT_TRUE(std::isfinite(v) && v <= 0.0) << i << ": " << v;
        ASSERT_TRUE(lp["top_logprobs"][i].is_object()) << i;
        // Keys are token texts: two alternatives with one text would merge.
        EXPECT_GE(lp["top_logprobs"][i].size(), 1u);
        EXPECT_LE(lp["top_logprobs"][i].size(), n_top);
        for (const auto & [tok, alt] : lp["top_logprobs"][i].items()) EXPECT_LE(alt.get<double>(), 0.0) << tok;
        EXPECT_GE(lp["text_offset"][i].get<int64_t>(), lp["text_offset"][i - 1].get<int64_t>()) << i;
    }
}

}  // namespace

TEST_F(server_e2e_echo, prompt_only_as_lm_eval_asks) {
    const std::string prompt = "Once upon a time there was a little cat";
    int st = 0;
    const json j = post("/v1/completions", {{"prompt", prompt}, {"echo", true}, {"logprobs", 2}, {"max_tokens", 0}}, &st);
    ASSERT_EQ(st, 200) << j.dump();
    const json & c = j["choices"][0];
    EXPECT_EQ(c["text"], prompt);
    EXPECT_EQ(c["finish_reason"], "length");
    const size_t n = n_tokens(prompt);
    ASSERT_GT(n, 3u);
    EXPECT_EQ(c["logprobs"]["tokens"].size(), n);
    EXPECT_EQ(joined(c["logprobs"]["tokens"]), prompt);
    expect_prompt_part(c["logprobs"], n, 2);
    EXPECT_LT(c["logprobs"]["text_offset"][n - 1].get<size_t>(), prompt.size());
    EXPECT_EQ(j["usage"]["completion_tokens"], 0);
    EXPECT_EQ(j["usage"]["prompt_tokens"], n);
    EXPECT_EQ(j["usage"]["prompt_tokens_details"]["cached_tokens"], 0) << "scored prompts are computed in full";
    // The same request again scores the same (the first left its cells, which are not used).
    const json again = post("/v1/completions", {{"prompt", prompt}, {"echo", true}, {"logprobs", 2}, {"max_tokens", 0}});
    for (size_t i = 1; i < n; ++i) {
        EXPECT_NEAR(again["choices"][0]["logprobs"]["token_logprobs"][i].get<double>(),
                    c["logprobs"]["token_logprobs"][i].get<double>(), 1e-4);
    }
}

TEST_F(server_e2e_echo, completion_tokens_follow_the_prompt) {
    const std::string prompt = "The quick brown fox";
    const json j = post("/v1/completions", {{"prompt", prompt}, {"echo", true}, {"logprobs", 1}, {"max_tokens", 3},
                                            {"temperature", 0}});
    const json plain = post("/v1/completions", {{"prompt", prompt}, {"logprobs", 1}, {"max_tokens", 3}, {"temperature", 0}});
    const json & c = j["choices"][0];
    const json & lp = c["logprobs"];
    const size_t n = n_tokens(prompt);
    const size_t n_gen = plain["choices"][0]["logprobs"]["tokens"].size();
    ASSERT_GT(n_gen, 0u) << plain.dump();
    EXPECT_EQ(c["text"], prompt + plain["choices"][0]["text"].get<std::string>());
    ASSERT_EQ(lp["tokens"].size(), n + n_gen) << j.dump();
    expect_prompt_part(lp, n, 1);
    EXPECT_EQ(joined(lp["tokens"]), c["text"]);
    for (size_t k = 0; k < n_gen; ++k) {
        const json & p = plain["choices"][0]["logprobs"];
        EXPECT_EQ(lp["tokens"][n + k], p["tokens"][k]);
        EXPECT_NEAR(lp["token_logprobs"][n + k].get<double>(), p["token_logprobs"][k].get<double>(), 1e-3);
        // Completion offsets count the echoed prompt.
        EXPECT_EQ(lp["text_offset"][n + k].get<int64_t>(), p["text_offset"][k].get<int64_t>() + int64_t(prompt.size()));
    }
}

TEST_F(server_e2e_echo, streaming_sends_the_prompt_first) {
    const std::string prompt = "Hello world, this is";
    const json body = {{"prompt", prompt}, {"echo", true}, {"logprobs", 2}, {"max_tokens", 3}, {"temperature", 0}};
    const json plain = post("/v1/completions", body);
    json sbody = body;
    sbody["stream"] = true;
    auto r = inferd_call(proc_->port(), "POST", "/v1/completions", sbody.dump());
    ASSERT_TRUE(r);
    ASSERT_EQ(r->status, 200);
    std::vector<json> chunks;
    size_t p = 0;
    while (p < r->body.size()) {
        const size_t e = r->body.find("\n\n", p);
        ASSERT_NE(e, std::string::npos);
        const std::string data = r->body.substr(p + 6, e - p - 6);
        p = e + 2;
        if (data != "[DONE]") chunks.push_back(json::parse(data));
    }
    ASSERT_GE(chunks.size(), 2u);
    const json & first = chunks[0]["choices"][0];
    EXPECT_EQ(first["text"], prompt);
    const size_t n = n_tokens(prompt);
    EXPECT_EQ(first["logprobs"]["tokens"].size(), n) << first.dump();
    expect_prompt_part(first["logprobs"], n, 2);
    std::string text;
    json tokens = json::array();
    for (const json & c : chunks) {
        text += c["choices"][0]["text"].get<std::string>();
        if (c["choices"][0]["logprobs"].is_object()) {
            for (const json & t : c["choices"][0]["logprobs"]["tokens"]) tokens.push_back(t);
        }
    }
    EXPECT_EQ(text, plain["choices"][0]["text"]);
    EXPECT_EQ(tokens, plain["choices"][0]["logprobs"]["tokens"]);
}

TEST_F(server_e2e_echo, a_list_of_prompts_and_n_choices) {
    const std::vector<std::string> prompts = {"Paris is the capital of", "One, two, three, four"};
    const json j = post("/v1/completions", {{"prompt", prompts}, {"echo", true}, {"logprobs", 1}, {"max_tokens", 0}});
    ASSERT_EQ(j["choices"].size(), 2u) << j.dump();
    for (size_t i = 0; i < 2; ++i) {
        const json & c = j["choices"][i];
        EXPECT_EQ(c["index"], i);
        EXPECT_EQ(c["text"], prompts[i]);
        EXPECT_EQ(joined(c["logprobs"]["tokens"]), prompts[i]);
        expect_prompt_part(c["logprobs"], n_tokens(prompts[i]), 1);
    }
    // lm-eval sends token ids by default: the echoed text is their detokenization.
    json ids = json::array();
    for (const std::string & p : prompts) {
        const json tok = post("/tokenize", {{"content", p}});
        ids.push_back(tok["tokens"]);
    }
    const json by_ids = post("/v1/completions", {{"prompt", ids}, {"echo", true}, {"logprobs", 1}, {"max_tokens", 0}});
    ASSERT_EQ(by_ids["choices"].size(), 2u) << by_ids.dump();
    for (size_t i = 0; i < 2; ++i) {
        EXPECT_EQ(by_ids["choices"][i]["text"], prompts[i]);
        EXPECT_EQ(by_ids["choices"][i]["logprobs"]["tokens"], j["choices"][i]["logprobs"]["tokens"]);
        expect_prompt_part(by_ids["choices"][i]["logprobs"], ids[i].size(), 1);
    }
    const json n2 = post("/v1/completions",
                         {{"prompt", prompts[0]}, {"echo", true}, {"logprobs", 0}, {"max_tokens", 2}, {"n", 2}});
    ASSERT_EQ(n2["choices"].size(), 2u) << n2.dump();
    const size_t n = n_tokens(prompts[0]);
    for (size_t i = 0; i < 2; ++i) {
        const json & lp = n2["choices"][i]["logprobs"];
        ASSERT_GE(lp["tokens"].size(), n);
        EXPECT_TRUE(lp["token_logprobs"][0].is_null());
        for (size_t k = 1; k < n; ++k) {
            const json & first = j["choices"][0]["logprobs"]["token_logprobs"][k];
            EXPECT_NEAR(lp["token_logprobs"][k].get<double>(), first.get<double>(), 1e-4);
            EXPECT_TRUE(lp["top_logprobs"][k].empty()) << "logprobs 0: no alternatives";
        }
    }
}
