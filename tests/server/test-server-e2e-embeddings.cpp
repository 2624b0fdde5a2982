// End-to-end: /v1/embeddings and /v1/rerank through the real inferd against the reference
// embeddings of ../shared/testdata/reference (cosine >= 0.9999; rerank scores within 0.02): an
// encoder served on its own (tiny-bert, CLS and mean pooling, and a reranker), a decoder as an embedder
// beside generation (tiny-qwen2, last and mean pooling) with embeddings computed while completions
// stream; the inputs batched together and one at a time; errors that name the input.
#include "server/inferd-process.h"
#include "testdata.h"

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <thread>

using nlohmann::json;

namespace {

double cosine(const json & a, const json & b) {
    double ab = 0, aa = 0, bb = 0;
    for (size_t i = 0; i < a.size(); ++i) {
        const double x = a[i].get<double>(), y = b[i].get<double>();
        ab += x * y;
        aa += x * x;
        bb += y * y;
    }
    return ab / std::sqrt(aa * bb);
}

json post(const inferd_process & p, const std::string & path, const json & body, int want = 200) {
    auto r = inferd_call(p.port(), "POST", path, body.dump());
    EXPECT_TRUE(r.has_value());
    if (!r) return json();
    EXPECT_EQ(r->status, want) << r->body;
    return json::parse(r->body, nullptr, false);
}

json reference(const std::string & dir, const std::string & name) {
    return json::parse(inferd_read_file(dir + "/reference/" + name + ".emb.json"));
}

// Every input with a reference embedding, all in one request and one at a time: cosine >= 0.9999.
void check_embeddings(const inferd_process & p, const json & ref) {
    json texts = json::array(), refs = json::array();
    size_t n_tokens = 0;
    for (const json & in : ref["inputs"]) {
        if (in["embedding"].is_null()) continue;
        texts.push_back(in["text"]);
        refs.push_back(in["embedding"]);
        n_tokens += in["tokens"].size();
    }
    const json all = post(p, "/v1/embeddings", {{"input", texts}});
    ASSERT_TRUE(all.contains("data")) << all.dump();
    ASSERT_EQ(all["data"].size(), texts.size());
    EXPECT_EQ(all["usage"]["prompt_tokens"], n_tokens) << "the reference tokenization, counted";
    for (size_t i = 0; i < texts.size(); ++i) {
        EXPECT_EQ(all["data"][i]["index"], i);
        EXPECT_GE(cosine(all["data"][i]["embedding"], refs[i]), 0.9999) << "input " << i << " in a batch";
        const json one = post(p, "/v1/embeddings", {{"input", texts[i]}});
        ASSERT_TRUE(one.contains("data")) << one.dump();
        EXPECT_GE(cosine(one["data"][0]["embedding"], refs[i]), 0.9999) << "input " << i << " alone";
    }
}

}  // namespace

// tiny-bert is an encoder: served for embeddings only, generation refused.
TEST(server_e2e_embeddings, bert_cls_and_errors) {
    INFERD_REQUIRE_TESTDATA(dir);
    inferd_process p({"-m", dir + "/models/tiny-bert-f16.gguf", "-t", "2"});
    ASSERT_TRUE(p.wait_ready()) << p.log();
    const json ref = reference(dir, "tiny-bert-f16.cls");
    check_embeddings(p, ref);
    // Token ids in, the same vector out; dimensions truncate and renormalize.
    const json ids = post(p, "/v1/embeddings", {{"input", {ref["inputs"][0]["tokens"]}}, {"dimensions", 16}});
    ASSERT_TRUE(ids.contains("data")) << ids.dump();
    const json & v = ids["data"][0]["embedding"];
    ASSERT_EQ(v.size(), 16u);
    double n2 = 0;
    for (const json & x : v) n2 += x.get<double>() * x.get<double>();
    EXPECT_NEAR(n2, 1.0, 1e-5);
    json head = ref["inputs"][0]["embedding"];
    head.erase(head.begin() + 16, head.end());
    EXPECT_GE(cosine(v, head), 0.9999);

    // Errors name the field.
    const json gen = post(p, "/v1/completions", {{"prompt", "Hi"}, {"max_tokens", 2}}, 400);
    EXPECT_NE(gen.dump().find("embeddings only"), std::string::npos) << gen.dump();
    std::string long_text;
    for (int i = 0; i < 600; ++i) long_text += "word ";
    const json too_long = post(p, "/v1/embeddings", {{"input", {"short", long_text}}}, 400);
    EXPECT_EQ(too_long["error"]["param"], "input") << too_long.dump();
    EXPECT_NE(too_long["error"]["message"].get<std::string>().find("input[1]"), std::string::npos) << too_long.dump();
    EXPECT_EQ(post(p, "/v1/embeddings", {{"input", "x"}, {"dimensions", 129}}, 400)["error"]["param"], "dimensions");
    EXPECT_EQ(post(p, "/v1/embeddings", {{"input", {{1, 99999}}}}, 400)["error"]["param"], "input");
    post(p, "/v1/rerank", {{"query", "q"}, {"documents", {"d"}}}, 400);
    EXPECT_EQ(p.terminate(), 0);
}

// --pooling overrides the file's: tiny-bert with mean pooling.
TEST(server_e2e_embeddings, bert_mean_by_flag) {
    INFERD_REQUIRE_TESTDATA(dir);
    inferd_process p({"-m", dir + "/models/tiny-bert-f16.gguf", "--pooling", "mean", "-t", "2"});
    ASSERT_TRUE(p.wait_ready()) << p.log();
    check_embeddings(p, reference(dir, "tiny-bert-f16.mean"));
    EXPECT_EQ(p.terminate(), 0);
}

// The reranker: [CLS] query [SEP] document [SEP] scored by the classification head.
TEST(server_e2e_embeddings, bert_rerank) {
    INFERD_REQUIRE_TESTDATA(dir);
    inferd_process p({"-m", dir + "/models/tiny-bert-rerank-f16.gguf", "-t", "2"});
    ASSERT_TRUE(p.wait_ready()) << p.log();
    const json ref = reference(dir, "tiny-bert-rerank-f16.rank");
    for (const json & pair : ref["pairs"]) {
        const json r = post(p, "/v1/rerank", {{"query", pair["query"]}, {"documents", {pair["document"]}}});
        ASSERT_TRUE(r.contains("results")) << r.dump();
        EXPECT_NEAR(r["results"][0]["relevance_score"].get<double>(), pair["score"].get<double>(), 0.02) << pair.dump();
        EXPECT_EQ(r["usage"]["prompt_tokens"], pair["tokens"].size());
    }
    // One query, every document of the reference that shares it: sorted by score, top_n kept.
    const std::string q = ref["pairs"][0]["query"];
    json docs = json::array();
    std::vector<double> want;
    for (const json & pair : ref["pairs"]) {
        if (pair["query"] != q) continue;
        docs.push_back(pair["document"]);
        want.push_back(pair["score"]);
    }
    ASSERT_GE(docs.size(), 2u);
    const json r = post(p, "/rerank", {{"query", q}, {"documents", docs}, {"top_n", 1}, {"return_documents", true}});
    ASSERT_EQ(r["results"].size(), 1u) << r.dump();
    const size_t best = size_t(std::max_element(want.begin(), want.end()) - want.begin());
    EXPECT_EQ(r["results"][0]["index"], best) << r.dump();
    EXPECT_EQ(r["results"][0]["document"]["text"], docs[best]) << r.dump();
    post(p, "/v1/embeddings", {{"input", "x"}}, 400);
    EXPECT_EQ(p.terminate(), 0);
}

// A decoder as an embedder beside generation: last and mean pooling, embeddings computed while
// streamed completions run (both finish, the vectors still match).
TEST(server_e2e_embeddings, decoder_last_and_mean_beside_generation) {
    INFERD_REQUIRE_TESTDATA(dir);
    for (const char * pooling : {"last", "mean"}) {
        SCOPED_TRACE(pooling);
        inferd_process p({"-m", dir + "/models/tiny-qwen2-f16.gguf", "--embeddings", "--pooling", pooling, "-t", "2",
                          "-c", "1024", "-np", "2"});
        ASSERT_TRUE(p.wait_ready()) << p.log();
        std::thread gen([&p] {
            auto r = inferd_call(p.port(), "POST", "/v1/completions",
                                 json({{"prompt", "Once upon a time"}, {"max_tokens", 64}, {"stream", true}}).dump());
            EXPECT_TRUE(r.has_value() && r->status == 200 && r->body.find("[DONE]") != std::string::npos);
        });
        const json ref = reference(dir, std::string("tiny-qwen2-f16.") + pooling);
        check_embeddings(p, ref);
        gen.join();
        // "" has no tokens under this tokenizer: refused, naming the input.
        const json empty = post(p, "/v1/embeddings", {{"input", {"a", ""}}}, 400);
        EXPECT_NE(empty.dump().find("input[1]"), std::string::npos) << empty.dump();
        post(p, "/v1/completions", {{"prompt", "Hi"}, {"max_tokens", 2}});
        EXPECT_EQ(p.terminate(), 0);
    }
}
