// inferd-cli embed against every reference embedding of ../shared/testdata/reference: tokens
// identical, cosine >= 0.9999 (tiny-bert cls and mean, tiny-qwen2 last and mean), reranking
// scores within 0.02; a text with no tokens and usage errors exit as documented.
#include "cli/cli.h"
#include "testdata.h"
#include "tools/tools-test-util.h"

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <cmath>

using nlohmann::json;

namespace {

struct cli_run {
    int rc;
    std::string out;
    std::string err;
};

cli_run run_cli(const std::vector<std::string> & args) {
    tools_capture in, out, err;
    const int rc = cli_tool_main(args, in.get(), out.get(), err.get());
    return {rc, out.text(), err.text()};
}

double cosine(const json & a, const json & b) {
    double ab = 0, aa = 0, bb = 0;
    for (size_t i = 0; i < a.size(); ++i) {
        const double x = a[i].get<double>(), y = b[i].get<double>();
        ab += x * y, aa += x * x, bb += y * y;
    }
    return ab / std::sqrt(aa * bb);
}

// Every text with a reference embedding in one call; its tokens and vectors against the file.
void check_reference(const std::string & dir, const std::string & model, const std::string & pooling) {
    SCOPED_TRACE(model + " " + pooling);
    const json ref = json::parse(inferd_read_file(dir + "/reference/" + model + "." + pooling + ".emb.json"));
    std::vector<std::string> args = {"embed", "-m", dir + "/models/" + model + ".gguf", "--pooling", pooling,
                                     "--normalize", "none", "--threads", "2"};
    std::vector<const json *> inputs;
    for (const json & in : ref["inputs"]) {
        if (in["embedding"].is_null()) continue;
        args.push_back(in["text"]);
        inputs.push_back(&in);
    }
    const cli_run r = run_cli(args);
    ASSERT_EQ(r.rc, 0) << r.err;
    const json out = json::parse(r.out);
    ASSERT_EQ(out["embeddings"].size(), inputs.size());
    for (size_t i = 0; i < inputs.size(); ++i) {
        EXPECT_EQ(out["tokens"][i], (*inputs[i])["tokens"]) << "input " << i;
        EXPECT_GE(cosine(out["embeddings"][i], (*inputs[i])["embedding"]), 0.9999) << "input " << i;
    }
}

}  // namespace

TEST(inferd_cli_embed, bert_cls_and_mean) {
    INFERD_REQUIRE_TESTDATA(dir);
    check_reference(dir, "tiny-bert-f16", "cls");
    check_reference(dir, "tiny-bert-f16", "mean");
}

TEST(inferd_cli_embed, qwen2_last_and_mean) {
    INFERD_REQUIRE_TESTDATA(dir);
    check_reference(dir, "tiny-qwen2-f16", "last");
    check_reference(dir, "tiny-qwen2-f16", "mean");
    // "" has no tokens under this tokenizer: an error naming the text.
    const cli_run r = run_cli({"embed", "-m", dir + "/models/tiny-qwen2-f16.gguf", "--pooling", "last", "a", ""});
    EXPECT_EQ(r.rc, 1);
    EXPECT_NE(r.err.find("text 1"), std::string::npos) << r.err;
}

TEST(inferd_cli_embed, rerank_pairs) {
    INFERD_REQUIRE_TESTDATA(dir);
    const json ref = json::parse(inferd_read_file(dir + "/reference/tiny-bert-rerank-f16.rank.emb.json"));
    std::vector<std::string> args = {"embed", "-m", dir + "/models/tiny-bert-rerank-f16.gguf"};
    for (const json & p : ref["pairs"]) {
        args.push_back(p["query"]);
        args.push_back(p["document"]);
    }
    const cli_run r = run_cli(args);
    ASSERT_EQ(r.rc, 0) << r.err;
    const json out = json::parse(r.out);
    ASSERT_EQ(out["embeddings"].size(), ref["pairs"].size());
    for (size_t i = 0; i < ref["pairs"].size(); ++i) {
        EXPECT_EQ(out["tokens"][i], ref["pairs"][i]["tokens"]);
        ASSERT_EQ(out["embeddings"][i].size(), 1u);
        EXPECT_NEAR(out["embeddings"][i][0].get<double>(), ref["pairs"][i]["score"].get<double>(), 0.02) << "pair " << i;
    }
    // Pairs need an even count; a bad pooling name is a usage error.
    EXPECT_EQ(run_cli({"embed", "-m", dir + "/models/tiny-bert-rerank-f16.gguf", "q"}).rc, 2);
    EXPECT_EQ(run_cli({"embed", "-m", dir + "/models/tiny-bert-f16.gguf", "--pooling", "max", "x"}).rc, 2);
    EXPECT_EQ(run_cli({"embed", "-m", dir + "/models/tiny-bert-f16.gguf"}).rc, 2);
}

// Pooling none: one row per token; normalized vectors have unit length.
TEST(inferd_cli_embed, token_rows_and_normalization) {
    INFERD_REQUIRE_TESTDATA(dir);
    const json ref = json::parse(inferd_read_file(dir + "/reference/tiny-bert-f16.cls.emb.json"));
    const cli_run r = run_cli({"embed", "-m", dir + "/models/tiny-bert-f16.gguf", "--pooling", "none", "--normalize",
                               "none", ref["inputs"][0]["text"]});
    ASSERT_EQ(r.rc, 0) << r.err;
    const json rows = json::parse(r.out)["embeddings"][0];
    const json & want = ref["token_embeddings"]["rows"];
    ASSERT_EQ(rows.size(), want.size());
    for (size_t i = 0; i < rows.size(); ++i) EXPECT_GE(cosine(rows[i], want[i]), 0.9999) << "row " << i;
    const cli_run n = run_cli({"embed", "-m", dir + "/models/tiny-bert-f16.gguf", "hello"});
    ASSERT_EQ(n.rc, 0) << n.err;
    const json v = json::parse(n.out)["embeddings"][0];
    double n2 = 0;
    for (const json & x : v) n2 += x.get<double>() * x.get<double>();
    EXPECT_NEAR(n2, 1.0, 1e-5);
}
