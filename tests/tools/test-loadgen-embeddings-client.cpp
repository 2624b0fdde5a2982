// tests/tools/test-loadgen-embeddings-client.cpp — the embeddings mode of inferd-loadgen over
// HTTP: the client against a fake in-process server (good, broken and cut-short responses) and
// the closed loop of --embeddings against a fake server that embeds every input.
#include "loadgen-fake-server.h"
#include "loadgen/loadgen-client.h"
#include "loadgen/loadgen-embeddings.h"
#include "loadgen/loadgen-options.h"
#include "loadgen/loadgen-prompt.h"
#include "loadgen/loadgen-run.h"
#include "loadgen/loadgen-stats.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <set>
#include <sstream>

namespace {

// The response a correct server gives to an embeddings request body: one embedding of dim
// numbers per input, prompt_tokens the number of words of all inputs.
std::string embed_body(const std::string & request_body, int dim) {
    const nlohmann::json req = nlohmann::json::parse(request_body);
    nlohmann::json data = nlohmann::json::array();
    int64_t words = 0;
    for (size_t i = 0; i < req["input"].size(); ++i) {
        std::istringstream in(req["input"][i].get<std::string>());
        for (std::string w; in >> w;) ++words;
        data.push_back({{"object", "embedding"}, {"index", i}, {"embedding", std::vector<double>(size_t(dim), 0.5)}});
    }
    const nlohmann::json j = {{"object", "list"}, {"data", data}, {"model", "m"},
                              {"usage", {{"prompt_tokens", words}, {"total_tokens", words}}}};
    return j.dump();
}

loadgen_options options_for(uint16_t port, const std::string & prefix = "") {
    loadgen_options o;
    std::string err;
    std::string url = "http://127.0.0.1:";
    url.append(std::to_string(port)).append(prefix);
    EXPECT_TRUE(loadgen_parse_url(url, &o, &err)) << err;
    o.embeddings = true;
    o.timeout_s = 10;
    return o;
}

}  // namespace

TEST(LoadgenEmbeddingsClient, PostsToEmbeddingsAndChecksEachResponse) {
    // One response per request, in order; the client reconnects after each failure.
    std::vector<std::string> responses;
    std::string chunked = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n";
    std::atomic<size_t> next{0};
    loadgen_fake_server server([&](const std::string &, const std::string & body) {
        const size_t i = next++;
        if (i == 0) return loadgen_fake_response(200, embed_body(body, 16));  // kept alive
        if (i == 1) {  // chunked, in two chunks
            const std::string b = embed_body(body, 16);
            const size_t half = b.size() / 2;
            char h1[32], h2[32];
            std::snprintf(h1, sizeof h1, "%zx\r\n", half);
            std::snprintf(h2, sizeof h2, "\r\n%zx\r\n", b.size() - half);
            std::string out = chunked;
            out.append(h1).append(b, 0, half).append(h2).append(b, half).append("\r\n0\r\n\r\n");
            return out;
        }
        if (i == 2) {  // one embedding fewer than inputs
            nlohmann::json j = nlohmann::json::parse(embed_body(body, 16));
            j["data"].erase(j["data"].size() - 1);
            return loadgen_fake_response(200, j.dump());
        }
        if (i == 3) return loadgen_fake_response(503, R"({"error":{"message":"busy"}})");
        if (i == 4) {  // a body cut short: the server closes before Content-Length bytes came
            std::string r = loadgen_fake_response(200, embed_body(body, 16), /*close=*/true);
            return r.substr(0, r.size() - 10);
        }
        return loadgen_fake_response(200, "[]", /*close=*/true);
    });
    loadgen_options o = options_for(server.port(), "/base/");
    o.api_key = "secret";
    o.inputs = 3;
    const loadgen_prompt_gen gen(1, 0);
    loadgen_client client(o);
    const auto t0 = std::chrono::steady_clock::now();
    const std::vector<std::string> kinds = {"", "", "malformed_json", "http_503", "io", "malformed_json"};
    for (size_t i = 0; i < kinds.size(); ++i) {
        const std::vector<std::string> inputs = loadgen_embedding_inputs(gen, o, 0, int64_t(i));
        const loadgen_request_result r = client.embed(loadgen_embeddings_body(o, inputs), o.inputs, t0);
        EXPECT_EQ(r.error, kinds[i]) << "response " << i << ": " << r.detail;
        EXPECT_EQ(r.detail.empty(), kinds[i].empty()) << "response " << i << ": " << r.detail;
        EXPECT_LE(r.start_s, r.end_s);
        EXPECT_EQ(r.status, i == 3 ? 503 : 200) << "response " << i;
        if (kinds[i].empty()) {
            EXPECT_EQ(r.inputs, 3);
            EXPECT_EQ(r.prompt_tokens, 3 * o.prompt_words);
            EXPECT_FALSE(r.ttft_s);
        } else {
            EXPECT_EQ(r.inputs, 0);
        }
        if (i == 3) {
            EXPECT_EQ(r.detail, R"({"error":{"message":"busy"}})");
        }
    }
    const std::vector<std::string> heads = server.heads();
    const std::vector<std::string> bodies = server.bodies();
    ASSERT_EQ(heads.size(), kinds.size());
    for (size_t i = 0; i < heads.size(); ++i) {
        EXPECT_EQ(heads[i].rfind("POST /base/v1/embeddings HTTP/1.1\r\n", 0), 0u) << heads[i];
        EXPECT_NE(heads[i].find("Authorization: Bearer secret\r\n"), std::string::npos) << heads[i];
        EXPECT_NE(heads[i].find("Accept: application/json\r\n"), std::string::npos) << heads[i];
        const nlohmann::json j = nlohmann::json::parse(bodies[i]);
        EXPECT_EQ(j["input"].size(), 3u);
        EXPECT_EQ(j["encoding_format"], "float");
    }
}

TEST(LoadgenEmbeddingsRun, ClosedLoopAgainstAFakeServer) {
    loadgen_fake_server server(
        [](const std::string &, const std::string & body) { return loadgen_fake_response(200, embed_body(body, 8)); });
    loadgen_options o = options_for(server.port());
    o.concurrency = 3;
    o.duration_s = 0.3;
    o.warmup_s = 0.1;
    o.inputs = 4;
    o.prompt_words = 6;
    o.shared_prefix_words = 2;
    o.model = "embedder";
    const loadgen_run_result run = loadgen_run(o);
    const loadgen_summary s = loadgen_summarize(run.results, run.elapsed_s, o.embeddings);
    SCOPED_TRACE(loadgen_format_table(s));
    EXPECT_TRUE(s.errors.empty());
    EXPECT_GE(s.requests, 3);
    EXPECT_EQ(s.ok, s.requests);
    EXPECT_GE(run.warmup_requests, 3);
    EXPECT_GE(run.elapsed_s, o.duration_s);
    EXPECT_EQ(s.inputs, 4 * s.ok);
    EXPECT_EQ(s.prompt_tokens, 4 * 8 * s.ok);
    EXPECT_NEAR(s.inputs_per_s * run.elapsed_s, double(s.inputs), 1e-6);
    EXPECT_NEAR(s.prompt_tokens_per_s * run.elapsed_s, double(s.prompt_tokens), 1e-6);
    EXPECT_EQ(s.latency_samples, s.ok);
    ASSERT_TRUE(s.latency_p50_s && s.latency_p99_s);
    EXPECT_LE(*s.latency_p50_s, *s.latency_p99_s);
    EXPECT_EQ(s.ttft_samples, 0);
    EXPECT_EQ(s.completion_tokens, 0);
    for (const loadgen_request_result & r : run.results) {
        EXPECT_GE(r.start_s, o.warmup_s);
        EXPECT_LT(r.start_s, o.warmup_s + o.duration_s);
        EXPECT_EQ(r.status, 200);
    }

    std::set<std::string> inputs;
    size_t sent = 0;
    for (const std::string & body : server.bodies()) {
        const nlohmann::json j = nlohmann::json::parse(body);
        EXPECT_EQ(j["model"], "embedder");
        ASSERT_EQ(j["input"].size(), 4u);
        for (const nlohmann::json & in : j["input"]) inputs.insert(in.get<std::string>());
        sent += j["input"].size();
    }
    EXPECT_EQ(sent, size_t(4 * (s.requests + run.warmup_requests + run.late_requests)));
    EXPECT_EQ(inputs.size(), sent);  // every input of the run is its own text
}
