// End-to-end: one model of each newer family (qwen3, qwen3moe, Mixtral, gemma2, gemma3, phi3)
// served by the real inferd, checked through /v1/completions with logprobs against the
// reference engine's outputs in ../shared/testdata/reference:
//   - the prompt scored with echo (max_tokens 0): each prompt token's log-probability equals the
//     one the reference logits give, within the logits' tolerance;
//   - the reference's greedy continuation (up to its first near-tie) appended to the prompt and
//     scored: every continuation token is the top alternative at its position;
//   - a greedy completion of that length gives the same tokens (same log-probabilities, same
//     text as the scored continuation).
#include "engine/reference-data.h"
#include "server/inferd-process.h"
#include "testdata.h"

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <cmath>

using nlohmann::json;

namespace {

json post(const inferd_process & p, const std::string & path, const json & body) {
    auto r = inferd_call(p.port(), "POST", path, body.dump());
    EXPECT_TRUE(r.has_value());
    if (!r) return json();
    EXPECT_EQ(r->status, 200) << r->body;
    return json::parse(r->body, nullptr, false);
}

double log_sum_exp(const float * row, size_t n) {
    double mx = -INFINITY, s = 0;
    for (size_t i = 0; i < n; ++i) mx = std::max(mx, double(row[i]));
    for (size_t i = 0; i < n; ++i) s += std::exp(double(row[i]) - mx);
    return mx + std::log(s);
}

double row_std(const float * row, size_t n) {
    double m = 0, v = 0;
    for (size_t i = 0; i < n; ++i) m += row[i];
    m /= double(n);
    for (size_t i = 0; i < n; ++i) v += (row[i] - m) * (row[i] - m);
    return std::sqrt(v / double(n));
}

void check_family(const std::string & dir, const std::string & name) {
    reference_case ref;
    std::string err;
    ASSERT_TRUE(reference_load(dir, name, "p1", &ref, &err)) << err;
    ASSERT_EQ(ref.n_rows, ref.prompt_tokens.size());
    const reference_tolerance tol = reference_tolerance_for(name);
    inferd_process p({"-m", dir + "/models/" + name + ".gguf", "--parallel", "2", "-c", "512", "-t", "2"});
    ASSERT_TRUE(p.wait_ready()) << p.log();
    const size_t nv = size_t(ref.n_vocab), n_prompt = ref.prompt_tokens.size();

    // 1. The prompt's log-probabilities against the reference logits. The logits' error bound
    // (rms <= tol * std of the row) bounds a log-probability's error by about twice the largest
    // logit error: 8 * tol * std leaves room for a maximum of 4x the rms.
    const json scored = post(p, "/v1/completions", {{"prompt", ref.prompt_tokens}, {"echo", true},
                                                    {"logprobs", 1}, {"max_tokens", 0}});
    const json & lp = scored["choices"][0]["logprobs"];
    ASSERT_EQ(lp["token_logprobs"].size(), n_prompt) << scored.dump();
    double worst = 0;
    for (size_t i = 1; i < n_prompt; ++i) {
        const float * row = ref.logits.data() + (i - 1) * nv;
        const double want = double(row[size_t(ref.prompt_tokens[i])]) - log_sum_exp(row, nv);
        const double got = lp["token_logprobs"][i].get<double>();
        const double bound = 8.0 * tol.rel_rms * row_std(row, nv);
        worst = std::max(worst, std::fabs(got - want) / bound);
        EXPECT_NEAR(got, want, bound) << name << " prompt position " << i;
    }

    // 2. The greedy continuation up to the first near-tie, scored: each token is the best.
    size_t k = 0;
    while (k < ref.greedy_tokens.size() && ref.greedy_top2_gap[k] >= tol.top2_gap) ++k;
    ASSERT_GT(k, 0u) << name << ": the reference continuation starts with a near-tie";
    std::vector<int32_t> seq = ref.prompt_tokens;
    seq.insert(seq.end(), ref.greedy_tokens.begin(), ref.greedy_tokens.begin() + long(k));
    const json cont = post(p, "/v1/completions", {{"prompt", seq}, {"echo", true}, {"logprobs", 1}, {"max_tokens", 0}});
    const json & clp = cont["choices"][0]["logprobs"];
    ASSERT_EQ(clp["token_logprobs"].size(), seq.size());
    std::string cont_text;
    for (size_t i = n_prompt; i < seq.size(); ++i) {
        double best = -INFINITY;
        for (const auto & [tok, v] : clp["top_logprobs"][i].items()) best = std::max(best, v.get<double>());
        EXPECT_NEAR(clp["token_logprobs"][i].get<double>(), best, 1e-5) << name << " greedy step " << i - n_prompt;
        cont_text += clp["tokens"][i].get<std::string>();
    }

    // 3. Generated greedily: the same tokens.
    const json gen = post(p, "/v1/completions", {{"prompt", ref.prompt_tokens}, {"max_tokens", k},
                                                 {"temperature", 0}, {"logprobs", 1}});
    const json & glp = gen["choices"][0]["logprobs"];
    ASSERT_EQ(glp["token_logprobs"].size(), k) << gen.dump();
    for (size_t j = 0; j < k; ++j) {
        EXPECT_EQ(glp["tokens"][j], clp["tokens"][n_prompt + j]) << name << " step " << j;
        EXPECT_NEAR(glp["token_logprobs"][j].get<double>(), clp["token_logprobs"][n_prompt + j].get<double>(), 2e-3)
            << name << " step " << j;
    }
    EXPECT_EQ(gen["choices"][0]["text"], cont_text);
    std::printf("%-20s prompt log-probabilities within %.0f%% of the bound, greedy %zu tokens\n", name.c_str(),
                100.0 * worst, k);
    EXPECT_EQ(p.terminate(), 0);
}

}  // namespace

// Chat prompts come from the model's own template run as written: Gemma 2's refuses a system
// message (a 400 with its words) and renders a user turn with BOS once (the template writes
// bos_token, the tokenizer adds BOS: the text's is dropped); a template file and the request's
// chat_template_kwargs.
TEST(server_e2e_families, chat_template_run_as_written) {
    INFERD_REQUIRE_TESTDATA(dir);
    inferd_process p({"-m", dir + "/models/tiny-gemma2-f16.gguf", "--parallel", "1", "-c", "256", "-t", "2"});
    ASSERT_TRUE(p.wait_ready()) << p.log();
    const json sys = {{"messages", {{{"role", "system"}, {"content", "Be brief."}}, {{"role", "user"}, {"content", "Hi"}}}},
                      {"max_tokens", 2}};
    auto r = inferd_call(p.port(), "POST", "/v1/chat/completions", sys.dump());
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->status, 400) << r->body;
    EXPECT_NE(r->body.find("System role not supported"), std::string::npos) << r->body;
    const json user = {{"messages", {{{"role", "user"}, {"content", "Hi"}}}}, {"max_tokens", 2}, {"temperature", 0}};
    const json ok = post(p, "/v1/chat/completions", user);
    // <bos><start_of_turn>user\nHi<end_of_turn>\n<start_of_turn>model\n: BOS once (the tokenizer's)
    const json tok = post(p, "/tokenize", {{"content", "<start_of_turn>user\nHi<end_of_turn>\n<start_of_turn>model\n"},
                                          {"add_special", true}});
    ASSERT_TRUE(tok.contains("tokens")) << tok.dump();
    EXPECT_EQ(ok["usage"]["prompt_tokens"], tok["tokens"].size()) << ok.dump();

    // A template file given with --chat-template, extra variables from --chat-template-kwargs and
    // the request's chat_template_kwargs (which win key by key): Qwen3's enable_thinking false
    // closes the reasoning block in the prompt.
    inferd_process q({"-m", dir + "/models/tiny-qwen3-f16.gguf", "--parallel", "1", "-c", "256", "-t", "2",
                      "--chat-template", dir + "/chat/templates/Qwen-Qwen3-0.6B.jinja",
                      "--chat-template-kwargs", R"({"enable_thinking": false})"});
    ASSERT_TRUE(q.wait_ready()) << q.log();
    json think = user;
    const json closed = post(q, "/v1/chat/completions", think);
    think["chat_template_kwargs"] = {{"enable_thinking", true}};
    const json open = post(q, "/v1/chat/completions", think);
    const json block = post(q, "/tokenize", {{"content", "<think>\n\n</think>\n\n"}});
    ASSERT_TRUE(block.contains("tokens")) << block.dump();
    EXPECT_EQ(closed["usage"]["prompt_tokens"].get<size_t>(), open["usage"]["prompt_tokens"].get<size_t>() + block["tokens"].size())
        << open.dump() << "\n" << closed.dump();
    think["chat_template_kwargs"] = "no";
    r = inferd_call(q.port(), "POST", "/v1/chat/completions", think.dump());
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->status, 400) << r->body;
}

TEST(server_e2e_families, qwen3) { INFERD_REQUIRE_TESTDATA(dir); check_family(dir, "tiny-qwen3-f16"); }
TEST(server_e2e_families, qwen3moe) { INFERD_REQUIRE_TESTDATA(dir); check_family(dir, "tiny-qwen3moe-f16"); }
TEST(server_e2e_families, mixtral) { INFERD_REQUIRE_TESTDATA(dir); check_family(dir, "tiny-mixtral-f16"); }
TEST(server_e2e_families, gemma2) { INFERD_REQUIRE_TESTDATA(dir); check_family(dir, "tiny-gemma2-f16"); }
TEST(server_e2e_families, gemma3) { INFERD_REQUIRE_TESTDATA(dir); check_family(dir, "tiny-gemma3-f16"); }
TEST(server_e2e_families, phi3) { INFERD_REQUIRE_TESTDATA(dir); check_family(dir, "tiny-phi3-f16"); }
