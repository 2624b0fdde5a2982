// tests/tools/test-loadgen-embeddings.cpp — the embeddings mode of inferd-loadgen: its flags,
// the seeded inputs, the request body, the response check and the embeddings report.
#include "loadgen/loadgen-embeddings.h"
#include "loadgen/loadgen-options.h"
#include "loadgen/loadgen-prompt.h"
#include "loadgen/loadgen-stats.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <functional>
#include <set>
#include <sstream>

namespace {

size_t word_count(const std::string & s) {
    std::istringstream in(s);
    size_t n = 0;
    for (std::string w; in >> w;) ++n;
    return n;
}

// An OpenAI embeddings response for n inputs of dim numbers each.
nlohmann::json good_response(int n, int dim, int64_t prompt_tokens) {
    nlohmann::json data = nlohmann::json::array();
    for (int i = 0; i < n; ++i) {
        nlohmann::json e = nlohmann::json::array();
        for (int k = 0; k < dim; ++k) e.push_back(0.25 * (i + k) - 1);
        data.push_back({{"object", "embedding"}, {"index", i}, {"embedding", e}});
    }
    return {{"object", "list"}, {"data", data}, {"model", "m"},
            {"usage", {{"prompt_tokens", prompt_tokens}, {"total_tokens", prompt_tokens}}}};
}

loadgen_request_result check(int status, const std::string & body, int inputs) {
    loadgen_request_result r;
    loadgen_check_embeddings(status, body, inputs, &r);
    return r;
}

}  // namespace

TEST(LoadgenEmbeddingsOptions, ParsesFlagsAndRejectsBadOnes) {
    loadgen_options o;
    EXPECT_FALSE(o.embeddings);
    EXPECT_EQ(o.inputs, 32);
    std::string err;
    const char * argv[] = {"x", "--embeddings", "--inputs", "5", "--prompt-words", "7", "--model", "e5", "--json"};
    ASSERT_TRUE(loadgen_parse_args(int(std::size(argv)), argv, &o, &err)) << err;
    EXPECT_TRUE(o.embeddings);
    EXPECT_EQ(o.inputs, 5);
    EXPECT_EQ(o.prompt_words, 7);
    EXPECT_EQ(o.model, "e5");

    loadgen_options d;
    const char * only[] = {"x", "--embeddings"};
    ASSERT_TRUE(loadgen_parse_args(2, only, &d, &err)) << err;
    EXPECT_TRUE(d.embeddings);
    EXPECT_EQ(d.inputs, 32);
    EXPECT_FALSE(d.chat);

    for (std::vector<const char *> bad : std::vector<std::vector<const char *>>{
             {"x", "--embeddings", "--inputs", "0"}, {"x", "--embeddings", "--inputs", "-3"},
             {"x", "--embeddings", "--inputs", "2.5"}, {"x", "--embeddings", "--inputs", "many"},
             {"x", "--embeddings", "--inputs", "100001"}, {"x", "--embeddings", "--inputs"},
             {"x", "--inputs", "4"}, {"x", "--embeddings", "--chat"}, {"x", "--chat", "--embeddings"},
             {"x", "--embeddings", "--prompt-words", "0"}, {"x", "--embeddings=1"}}) {
        loadgen_options b;
        err.clear();
        EXPECT_FALSE(loadgen_parse_args(int(bad.size()), bad.data(), &b, &err)) << bad.back();
        EXPECT_FALSE(err.empty());
    }
    const std::string usage = loadgen_usage();
    for (const char * word : {"--embeddings", "--inputs", "/v1/embeddings", "inputs_per_s", "prompt_tokens_per_s",
                              "latency_p50_ms", "latency_p99_ms", "malformed_json", "ttft_p99_ms"}) {
        EXPECT_NE(usage.find(word), std::string::npos) << word;
    }
}

TEST(LoadgenEmbeddings, InputsAreSeededAndDistinct) {
    loadgen_options o;
    o.inputs = 8;
    o.prompt_words = 12;
    const loadgen_prompt_gen gen(5, 0);
    const std::vector<std::string> a = loadgen_embedding_inputs(gen, o, 1, 3);
    ASSERT_EQ(a.size(), 8u);
    EXPECT_EQ(a, loadgen_embedding_inputs(loadgen_prompt_gen(5, 0), o, 1, 3));  // reproducible
    EXPECT_NE(a, loadgen_embedding_inputs(loadgen_prompt_gen(6, 0), o, 1, 3));  // seeded
    std::set<std::string> all;
    for (int client = 0; client < 3; ++client) {
        for (int64_t request = 0; request < 4; ++request) {
            for (const std::string & in : loadgen_embedding_inputs(gen, o, client, request)) {
                EXPECT_EQ(word_count(in), 12u) << in;
                all.insert(in);
            }
        }
    }
    EXPECT_EQ(all.size(), 3u * 4u * 8u);  // no input repeats within or across requests and clients

    const loadgen_prompt_gen shared(5, 10);
    for (const std::string & in : loadgen_embedding_inputs(shared, o, 0, 0)) {
        EXPECT_EQ(in.rfind(shared.shared_prefix() + " ", 0), 0u) << in;
        EXPECT_EQ(word_count(in), 22u);
    }
}

TEST(LoadgenEmbeddings, RequestBodyIsJsonWithEveryInput) {
    loadgen_options o;
    const std::vector<std::string> inputs = {"one two", "three \"quoted\" four", "five\nsix"};
    nlohmann::json j = nlohmann::json::parse(loadgen_embeddings_body(o, inputs));
    ASSERT_TRUE(j.is_object());
    ASSERT_TRUE(j["input"].is_array());
    EXPECT_EQ(j["input"].get<std::vector<std::string>>(), inputs);
    EXPECT_EQ(j["encoding_format"], "float");
    EXPECT_FALSE(j.contains("model"));
    EXPECT_FALSE(j.contains("stream"));
    EXPECT_FALSE(j.contains("max_tokens"));
    o.model = "embedder";
    j = nlohmann::json::parse(loadgen_embeddings_body(o, inputs));
    EXPECT_EQ(j["model"], "embedder");
    EXPECT_EQ(j["input"].size(), 3u);
}

TEST(LoadgenEmbeddings, CheckAcceptsAGoodResponse) {
    loadgen_request_result r = check(200, good_response(4, 3, 57).dump(), 4);
    EXPECT_EQ(r.error, "") << r.detail;
    EXPECT_TRUE(r.detail.empty());
    EXPECT_EQ(r.status, 200);
    EXPECT_EQ(r.inputs, 4);
    EXPECT_EQ(r.prompt_tokens, 57);

    nlohmann::json shuffled = good_response(3, 2, 9);  // indices in another order, integer numbers
    std::swap(shuffled["data"][0], shuffled["data"][2]);
    shuffled["data"][1]["embedding"] = {1, -2};
    r = check(200, shuffled.dump(), 3);
    EXPECT_EQ(r.error, "") << r.detail;
    EXPECT_EQ(r.inputs, 3);
}

TEST(LoadgenEmbeddings, CheckRejectsWrongCountAndShape) {
    const nlohmann::json good = good_response(3, 4, 20);
    std::vector<std::pair<std::string, nlohmann::json>> cases;
    auto with = [&](const char * name, const std::function<void(nlohmann::json &)> & change) {
        nlohmann::json j = good;
        change(j);
        cases.emplace_back(name, j);
    };
    with("fewer entries", [](nlohmann::json & j) { j["data"].erase(2); });
    with("more entries", [](nlohmann::json & j) { j["data"].push_back(j["data"][0]); });
    with("repeated index", [](nlohmann::json & j) { j["data"][2]["index"] = 0; });
    with("index out of range", [](nlohmann::json & j) { j["data"][2]["index"] = 3; });
    with("negative index", [](nlohmann::json & j) { j["data"][0]["index"] = -1; });
    with("no index", [](nlohmann::json & j) { j["data"][1].erase("index"); });
    with("index a string", [](nlohmann::json & j) { j["data"][1]["index"] = "1"; });
    with("entry not an object", [](nlohmann::json & j) { j["data"][1] = nlohmann::json::array({1.0}); });
    with("no embedding", [](nlohmann::json & j) { j["data"][1].erase("embedding"); });
    with("empty embedding", [](nlohmann::json & j) { j["data"][1]["embedding"] = nlohmann::json::array(); });
    with("embedding not an array", [](nlohmann::json & j) { j["data"][1]["embedding"] = "AAAA"; });
    with("string in embedding", [](nlohmann::json & j) { j["data"][1]["embedding"][2] = "0.5"; });
    with("null in embedding", [](nlohmann::json & j) { j["data"][1]["embedding"][0] = nullptr; });
    with("lengths differ", [](nlohmann::json & j) { j["data"][2]["embedding"].push_back(1.0); });
    with("no data", [](nlohmann::json & j) { j.erase("data"); });
    with("data an object", [](nlohmann::json & j) { j["data"] = {{"index", 0}}; });
    with("no usage", [](nlohmann::json & j) { j.erase("usage"); });
    with("no prompt_tokens", [](nlohmann::json & j) { j["usage"].erase("prompt_tokens"); });
    with("negative prompt_tokens", [](nlohmann::json & j) { j["usage"]["prompt_tokens"] = -1; });
    with("fractional prompt_tokens", [](nlohmann::json & j) { j["usage"]["prompt_tokens"] = 2.5; });
    cases.emplace_back("an array", nlohmann::json::array({good}));
    cases.emplace_back("an error object", nlohmann::json{{"error", {{"message", "no embedding model"}}}});
    for (const auto & [name, j] : cases) {
        const loadgen_request_result r = check(200, j.dump(), 3);
        EXPECT_EQ(r.error, "malformed_json") << name;
        EXPECT_FALSE(r.detail.empty()) << name;
        EXPECT_LE(r.detail.size(), 300u) << name;
        EXPECT_EQ(r.inputs, 0) << name;
        EXPECT_EQ(r.status, 200) << name;
    }
    for (const std::string & body : {std::string(), std::string("{\"data\":["), std::string("not json")}) {
        EXPECT_EQ(check(200, body, 3).error, "malformed_json") << body;
    }
    const loadgen_request_result big = check(200, std::string(5000, '['), 3);
    EXPECT_EQ(big.error, "malformed_json");
    EXPECT_LE(big.detail.size(), 300u);
    EXPECT_EQ(check(200, good.dump(), 2).detail.substr(0, 30), "\"data\" has 3 entries for 2 inp");
}

TEST(LoadgenEmbeddings, CheckNamesAStatusOtherThan200) {
    const std::string body = R"({"error":{"message":"queue full","type":"server_error"}})";
    loadgen_request_result r = check(503, body, 3);
    EXPECT_EQ(r.error, "http_503");
    EXPECT_EQ(r.status, 503);
    EXPECT_EQ(r.detail, body);
    EXPECT_EQ(r.inputs, 0);
    r = check(400, good_response(3, 2, 1).dump(), 3);  // a valid body does not make it a success
    EXPECT_EQ(r.error, "http_400");
    r = check(404, "", 3);
    EXPECT_EQ(r.error, "http_404");
    EXPECT_EQ(r.detail, "");
}

TEST(LoadgenEmbeddings, SummaryReportsInputsTokensAndLatency) {
    std::vector<loadgen_request_result> rs(5);
    for (int i = 0; i < 3; ++i) {
        rs[size_t(i)].start_s = 1.0 + i;
        rs[size_t(i)].end_s = 1.0 + i + 0.1 * (i + 1);  // latencies 0.1, 0.2, 0.3
        rs[size_t(i)].inputs = 8;
        rs[size_t(i)].prompt_tokens = 100;
        rs[size_t(i)].status = 200;
    }
    rs[3].error = "malformed_json", rs[3].detail = "\"data\" has 7 entries", rs[3].start_s = 1, rs[3].end_s = 9;
    rs[4].error = "http_503", rs[4].detail = "busy", rs[4].inputs = 0, rs[4].start_s = 1, rs[4].end_s = 20;
    const loadgen_summary s = loadgen_summarize(rs, 4.0, /*embeddings=*/true);
    EXPECT_TRUE(s.embeddings);
    EXPECT_EQ(s.requests, 5);
    EXPECT_EQ(s.ok, 3);
    EXPECT_EQ(s.inputs, 24);
    EXPECT_EQ(s.prompt_tokens, 300);
    EXPECT_DOUBLE_EQ(s.inputs_per_s, 6.0);
    EXPECT_DOUBLE_EQ(s.prompt_tokens_per_s, 75.0);
    EXPECT_DOUBLE_EQ(s.requests_per_s, 0.75);
    EXPECT_EQ(s.latency_samples, 3);  // failed requests are not timed
    EXPECT_NEAR(*s.latency_p50_s, 0.2, 1e-9);
    EXPECT_NEAR(*s.latency_p99_s, 0.3, 1e-9);

    const nlohmann::json j = nlohmann::json::parse(loadgen_format_json(s));
    EXPECT_EQ(j["mode"], "embeddings");
    EXPECT_EQ(j["requests"], 5);
    EXPECT_EQ(j["ok"], 3);
    EXPECT_EQ(j["error_count"], 2);
    EXPECT_EQ(j["errors"]["malformed_json"], 1);
    EXPECT_EQ(j["errors"]["http_503"], 1);
    EXPECT_EQ(j["error_examples"]["http_503"], "busy");
    EXPECT_EQ(j["inputs"], 24);
    EXPECT_DOUBLE_EQ(j["inputs_per_s"].get<double>(), 6.0);
    EXPECT_DOUBLE_EQ(j["prompt_tokens_per_s"].get<double>(), 75.0);
    EXPECT_DOUBLE_EQ(j["requests_per_s"].get<double>(), 0.75);
    EXPECT_NEAR(j["latency_p50_ms"].get<double>(), 200.0, 1e-6);
    EXPECT_NEAR(j["latency_p99_ms"].get<double>(), 300.0, 1e-6);
    EXPECT_EQ(j["latency_samples"], 3);
    for (const char * zero : {"completion_tokens", "cached_tokens", "tokens_per_s", "ttft_samples", "itl_samples"}) {
        EXPECT_EQ(j[zero], 0) << zero;
    }
    for (const char * null : {"ttft_p50_ms", "ttft_p99_ms", "itl_p50_ms", "itl_p99_ms"}) {
        EXPECT_TRUE(j[null].is_null()) << null;
    }

    const std::string table = loadgen_format_table(s);
    EXPECT_NE(table.find("requests               5 (3 ok)"), std::string::npos) << table;
    EXPECT_NE(table.find("inputs/s               6.00"), std::string::npos) << table;
    EXPECT_NE(table.find("prompt tokens/s        75.00"), std::string::npos) << table;
    EXPECT_NE(table.find("latency p50            200.0 ms"), std::string::npos) << table;
    EXPECT_NE(table.find("latency p99            300.0 ms (3 samples)"), std::string::npos) << table;
    EXPECT_NE(table.find("malformed_json"), std::string::npos) << table;
    EXPECT_EQ(table.find("TTFT"), std::string::npos) << table;

    const nlohmann::json je = nlohmann::json::parse(loadgen_format_json(loadgen_summarize({}, 0, true)));
    EXPECT_TRUE(je["latency_p50_ms"].is_null());
    EXPECT_EQ(je["inputs_per_s"], 0.0);

    // The streaming report is unchanged: none of the embeddings fields.
    const loadgen_summary streaming = loadgen_summarize(rs, 4.0);
    const nlohmann::json js = nlohmann::json::parse(loadgen_format_json(streaming));
    for (const char * field : {"mode", "inputs", "inputs_per_s", "prompt_tokens_per_s", "latency_p50_ms",
                               "latency_p99_ms", "latency_samples"}) {
        EXPECT_FALSE(js.contains(field)) << field;
    }
    EXPECT_NE(loadgen_format_table(streaming).find("TTFT p50"), std::string::npos);
    EXPECT_EQ(loadgen_format_table(streaming).find("latency p50"), std::string::npos);
}
