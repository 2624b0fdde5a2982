// End-to-end speculative decoding: inferd with --spec-ngram and with --model-draft answers
// /v1/completions (greedy and seeded, plain and streamed) exactly as inferd without them, /metrics
// counts the draft tokens and says whether drafting is on (always with --spec-always), and a
// draft model that is missing or has another vocabulary stops the daemon with a clear message and
// exit code 1.
#include "server/inferd-process.h"
#include "testdata.h"

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <regex>

using nlohmann::json;

namespace {

std::string stories(const std::string & dir) { return dir + "/models/stories260K-f32.gguf"; }

// BOS and a phrase three times: n-gram lookup has drafts from the first token on.
json repeated_prompt(int salt) {
    json p = json::array({1});
    for (int rep = 0; rep < 3; ++rep) {
        for (int k = 0; k < 9; ++k) p.push_back(300 + (k * 17 + salt * 5) % 200);
    }
    return p;
}

std::vector<json> requests() {
    std::vector<json> out;
    for (int i = 0; i < 3; ++i) {
        out.push_back({{"prompt", repeated_prompt(i)}, {"max_tokens", 40}, {"temperature", 0}});
        out.push_back({{"prompt", repeated_prompt(i)}, {"max_tokens", 40}, {"temperature", 0.8}, {"seed", 42 + i}});
    }
    return out;
}

// The text and finish reason of a completion, read whole or from its stream.
std::pair<std::string, std::string> complete(uint16_t port, json req, bool stream) {
    req["stream"] = stream;
    auto r = inferd_call(port, "POST", "/v1/completions", req.dump());
    if (!r || r->status != 200) return {"<failed>", r ? r->body : "<no response>"};
    if (!stream) {
        const json j = json::parse(r->body);
        return {j["choices"][0]["text"], j["choices"][0]["finish_reason"]};
    }
    std::string text, reason;
    size_t p = 0;
    while ((p = r->body.find("data: ", p)) != std::string::npos) {
        const size_t e = r->body.find("\n\n", p);
        const std::string ev = r->body.substr(p + 6, e - p - 6);
        p = e;
        if (ev == "[DONE]") break;
        const json c = json::parse(ev);
        if (c["choices"].empty()) continue;
        text += c["choices"][0]["text"].get<std::string>();
        if (c["choices"][0]["finish_reason"].is_string()) reason = c["choices"][0]["finish_reason"];
    }
    return {text, reason};
}

std::vector<std::pair<std::string, std::string>> answers(uint16_t port) {
    std::vector<std::pair<std::string, std::string>> out;
    for (const json & req : requests()) {
        for (bool stream : {false, true}) out.push_back(complete(port, req, stream));
    }
    return out;
}

}  // namespace

TEST(server_e2e_spec, ngram_and_draft_model_answer_as_without_speculation) {
    INFERD_REQUIRE_TESTDATA(dir);
    std::vector<std::pair<std::string, std::string>> expected;
    {
        inferd_process plain({"-m", stories(dir), "-c", "1024"});
        ASSERT_TRUE(plain.wait_ready()) << plain.log();
        expected = answers(plain.port());
        const std::string m = inferd_call(plain.port(), "GET", "/metrics")->body;
        EXPECT_EQ(inferd_metric(m, "inferd_draft_tokens_total"), 0.0);
        EXPECT_EQ(inferd_metric(m, "inferd_spec_active"), 0.0) << m;  // no speculation configured
        EXPECT_EQ(plain.terminate(), 0);
    }
    // With --spec-always drafting runs on every step, so drafts are accepted somewhere in these
    // answers. Without it (the last variant) drafting may turn itself off after its first round
    // (when rejected drafts or a slow build make it lose), so only the answers and the gauges
    // are checked there.
    const std::vector<std::vector<std::string>> variants = {
        {"--spec-ngram", "3", "--draft-max", "8", "--spec-always"},
        {"--model-draft", dir + "/models/stories260K-f16.gguf", "--draft-max", "6", "--draft-p-min", "0.3",
         "--spec-always"},
        {"--spec-ngram", "3", "--draft-max", "8"},
    };
    for (const std::vector<std::string> & v : variants) {
        const bool always = v.back() == "--spec-always";
        SCOPED_TRACE(v[0] + (always ? " --spec-always" : ""));
        std::vector<std::string> args = {"-m", stories(dir), "-c", "1024"};
        args.insert(args.end(), v.begin(), v.end());
        inferd_process p(args);
        ASSERT_TRUE(p.wait_ready()) << p.log();
        const auto got = answers(p.port());
        ASSERT_EQ(got.size(), expected.size());
        for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i], expected[i]) << "request " << i / 2 << (i % 2 ? " streamed" : "");
        const std::string m = inferd_call(p.port(), "GET", "/metrics")->body;
        const double drafted = inferd_metric(m, "inferd_draft_tokens_total");
        const double accepted = inferd_metric(m, "inferd_draft_accepted_total");
        EXPECT_GT(drafted, 0.0) << m;
        if (always) {
            EXPECT_GT(accepted, 0.0) << m;
        }
        EXPECT_LE(accepted, drafted);
        // Drafting on, unless it turned itself off (--spec-always: never).
        const double active = inferd_metric(m, "inferd_spec_active");
        const double turned_off = inferd_metric(m, "inferd_spec_turned_off_total");
        EXPECT_TRUE(active == 1.0 || (active == 0.0 && turned_off >= 1.0)) << m;
        if (always) {
            EXPECT_EQ(active, 1.0) << m;
            EXPECT_EQ(turned_off, 0.0) << m;
            EXPECT_EQ(inferd_metric(m, "inferd_spec_speedup_ratio"), 0.0) << m;  // nothing measured
        }
        EXPECT_EQ(p.terminate(), 0);
    }
}

TEST(server_e2e_spec, a_bad_draft_model_stops_the_daemon) {
    INFERD_REQUIRE_TESTDATA(dir);
    inferd_process other({"-m", stories(dir), "--model-draft", dir + "/models/tiny-llama-q4_0.gguf"});
    EXPECT_EQ(other.wait_exit(), 1);
    EXPECT_NE(other.log().find("its vocabulary differs"), std::string::npos) << other.log();
    inferd_process missing({"-m", stories(dir), "-md", dir + "/models/no-such-draft.gguf"});
    EXPECT_EQ(missing.wait_exit(), 1);
    EXPECT_NE(missing.log().find("the draft model"), std::string::npos) << missing.log();
    EXPECT_NE(missing.log().find("no-such-draft.gguf"), std::string::npos) << missing.log();
}
