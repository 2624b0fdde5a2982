// Embeddings contexts against ../shared/testdata/reference/*.emb.json (README "Embeddings"):
// tiny-bert-f16 (cls, mean), tiny-qwen2-f16 as a decoder embedder (last, mean) and the
// tiny-bert-rerank-f16 cross-encoder (rank, both token layouts), from the reference token ids.
// Each input is decoded alone and all inputs together as one batch of sequences (several
// ubatches too), with the plain attention path and the fused one. Bounds: cosine >= 0.9999 for
// every pooled vector and every row of token_embeddings (pooling none); |score - ref| <= 0.02.
// Also: an input without tokens is refused, the batch rules (a sequence within one ubatch, in
// position order), and a logits context on an encoder is refused at creation; and every decoder
// architecture as an embedder against its own logits (decoders_as_embedders).
#include "engine/context.h"
#include "engine/model.h"
#include "ggml/types.h"
#include "testdata.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

namespace {

constexpr double k_min_cosine = 0.9999;
constexpr double k_max_score_diff = 0.02;

nlohmann::json read_json(const std::string & path) {
    std::ifstream f(path);
    return nlohmann::json::parse(f, nullptr, false);
}

double cosine(const float * a, const std::vector<float> & b) {
    double ab = 0, aa = 0, bb = 0;
    for (size_t i = 0; i < b.size(); ++i) {
        ab += double(a[i]) * b[i];
        aa += double(a[i]) * a[i];
        bb += double(b[i]) * b[i];
    }
    return ab / std::sqrt(aa * bb);
}

struct emb_run {
    bool flash_attn = false;
    pooling_type pooling = pooling_type::unspecified;
    uint32_t n_ubatch = 512;
    uint32_t n_seq_max = 16;
};

std::unique_ptr<context> make_context(const model & m, const emb_run & r) {
    context_params cp;
    cp.n_threads = 2;
    cp.embeddings = true;
    cp.pooling = r.pooling;
    cp.flash_attn = r.flash_attn;
    cp.n_ubatch = r.n_ubatch;
    cp.n_seq_max = r.n_seq_max;
    return std::make_unique<context>(m, cp);
}

void add_seq(llm_batch & b, const std::vector<int32_t> & tokens, int32_t seq, bool outputs = true) {
    for (size_t i = 0; i < tokens.size(); ++i) b.add(tokens[i], int32_t(i), seq, outputs);
}

// The pooled vectors of each input: decoded alone (batched = false) or all inputs at once as
// sequences 0..n-1. An input without tokens gets nullopt (and must be refused alone).
std::vector<std::optional<std::vector<float>>> pooled(context & ctx, const std::vector<std::vector<int32_t>> & inputs,
                                                      bool batched) {
    std::vector<std::optional<std::vector<float>>> out(inputs.size());
    const size_t n = size_t(ctx.n_embd_out());
    llm_batch b;
    auto take = [&](size_t i, int32_t seq) {
        const float * e = ctx.embeddings_seq(seq);
        EXPECT_NE(e, nullptr) << "input " << i;
        if (e) out[i] = std::vector<float>(e, e + n);
    };
    for (size_t i = 0; i < inputs.size(); ++i) {
        if (inputs[i].empty()) {
            EXPECT_EQ(ctx.decode(llm_batch{}), decode_invalid) << "an input without tokens must be refused";
            EXPECT_FALSE(ctx.last_error().empty());
            continue;
        }
        if (batched) {
            add_seq(b, inputs[i], int32_t(i));
            continue;
        }
        b.clear();
        add_seq(b, inputs[i], 0);
        EXPECT_EQ(ctx.decode(b), decode_ok) << ctx.last_error();
        take(i, 0);
    }
    if (batched) {
        EXPECT_EQ(ctx.decode(b), decode_ok) << ctx.last_error();
        for (size_t i = 0; i < inputs.size(); ++i) {
            if (!inputs[i].empty()) take(i, int32_t(i));
        }
    }
    return out;
}

struct emb_reference {
    std::vector<std::vector<int32_t>> tokens;
    std::vector<std::optional<std::vector<float>>> embedding;
    std::vector<std::vector<float>> token_rows;  // of input 0
};

emb_reference load_reference(const std::string & path) {
    const nlohmann::json j = read_json(path);
    emb_reference r;
    if (j.is_discarded()) return r;
    for (const auto & in : j.at("inputs")) {
        r.tokens.push_back(in.at("tokens").get<std::vector<int32_t>>());
        if (in.at("embedding").is_null()) r.embedding.emplace_back();
        else r.embedding.emplace_back(in.at("embedding").get<std::vector<float>>());
    }
    for (const auto & row : j.at("token_embeddings").at("rows")) r.token_rows.push_back(row.get<std::vector<float>>());
    return r;
}

// The smallest cosine between ours and the reference over the inputs that have one.
double min_cosine(const std::vector<std::optional<std::vector<float>>> & ours, const emb_reference & ref,
                  const std::string & what) {
    double worst = 1.0;
    for (size_t i = 0; i < ref.embedding.size(); ++i) {
        if (!ref.embedding[i]) {
            EXPECT_FALSE(ours[i].has_value()) << what << " input " << i << " has no tokens";
            continue;
        }
        if (!ours[i]) continue;  // already reported
        const double c = cosine(ours[i]->data(), *ref.embedding[i]);
        EXPECT_GE(c, k_min_cosine) << what << " input " << i;
        worst = std::min(worst, c);
    }
    return worst;
}

// Pooling none on input 0: every row against token_embeddings.
double token_rows_min_cosine(const model & m, const emb_reference & ref, bool flash_attn) {
    emb_run r;
    r.flash_attn = flash_attn;
    r.pooling = pooling_type::none;
    std::unique_ptr<context> ctx = make_context(m, r);
    EXPECT_EQ(ctx->n_embd_out(), int32_t(m.hparams().n_embd));
    llm_batch b;
    add_seq(b, ref.tokens[0], 0);
    EXPECT_EQ(ctx->decode(b), decode_ok) << ctx->last_error();
    EXPECT_EQ(ref.token_rows.size(), ref.tokens[0].size());
    double worst = 1.0;
    for (size_t t = 0; t < ref.token_rows.size(); ++t) {
        const float * e = ctx->embeddings(int32_t(t));
        if (!e) {
            ADD_FAILURE() << "no hidden state for token " << t;
            continue;
        }
        const double c = cosine(e, ref.token_rows[t]);
        EXPECT_GE(c, k_min_cosine) << "token row " << t;
        worst = std::min(worst, c);
    }
    EXPECT_EQ(ctx->embeddings_seq(0), nullptr) << "pooling none has no pooled vector";
    return worst;
}

void check_pooled_reference(const std::string & model_name, const std::string & pooling_name, pooling_type pooling) {
    INFERD_REQUIRE_TESTDATA(dir);
    const emb_reference ref = load_reference(dir + "/reference/" + model_name + "." + pooling_name + ".emb.json");
    ASSERT_FALSE(ref.tokens.empty()) << "cannot read the reference";
    std::unique_ptr<model> m = model::load(dir + "/models/" + model_name + ".gguf", model_params{});
    for (bool flash : {false, true}) {
        const std::string what = model_name + " " + pooling_name + (flash ? " fused" : " plain");
        SCOPED_TRACE(what);
        emb_run r;
        r.flash_attn = flash;
        r.pooling = pooling;
        std::unique_ptr<context> ctx = make_context(*m, r);
        EXPECT_EQ(ctx->pooling(), pooling);
        const double single = min_cosine(pooled(*ctx, ref.tokens, false), ref, what + " single");
        const double batch = min_cosine(pooled(*ctx, ref.tokens, true), ref, what + " batch");
        r.n_ubatch = 200;  // several ubatches, the 176- and 197-token inputs alone in theirs
        std::unique_ptr<context> small = make_context(*m, r);
        const double split = min_cosine(pooled(*small, ref.tokens, true), ref, what + " n_ubatch 200");
        const double rows = token_rows_min_cosine(*m, ref, flash);
        std::printf("%-16s %-5s %-6s min cosine: single %.7f  batch %.7f  n_ubatch-200 %.7f  token rows %.7f\n",
                    model_name.c_str(), pooling_name.c_str(), flash ? "fused" : "plain", single, batch, split, rows);
    }
}

}  // namespace

TEST(embeddings_reference, tiny_bert_cls) { check_pooled_reference("tiny-bert-f16", "cls", pooling_type::cls); }
TEST(embeddings_reference, tiny_bert_mean) { check_pooled_reference("tiny-bert-f16", "mean", pooling_type::mean); }
TEST(embeddings_reference, tiny_qwen2_last) { check_pooled_reference("tiny-qwen2-f16", "last", pooling_type::last); }
TEST(embeddings_reference, tiny_qwen2_mean) { check_pooled_reference("tiny-qwen2-f16", "mean", pooling_type::mean); }

// The cross-encoder: [CLS] query [SEP] document [SEP] (and the layout without the final [SEP]),
// each pair alone and all pairs as one batch; the file's own pooling (rank) by default.
TEST(embeddings_reference, tiny_bert_rerank) {
    INFERD_REQUIRE_TESTDATA(dir);
    const nlohmann::json j = read_json(dir + "/reference/tiny-bert-rerank-f16.rank.emb.json");
    ASSERT_FALSE(j.is_discarded());
    std::unique_ptr<model> m = model::load(dir + "/models/tiny-bert-rerank-f16.gguf", model_params{});
    EXPECT_EQ(m->hparams().pooling, pooling_type::rank);
    EXPECT_EQ(m->hparams().n_cls_out, 1u);
    for (const char * layout : {"", "_server"}) {
        std::vector<std::vector<int32_t>> inputs;
        std::vector<float> want;
        for (const auto & p : j.at("pairs")) {
            inputs.push_back(p.at(std::string("tokens") + layout).get<std::vector<int32_t>>());
            want.push_back(p.at(std::string("score") + layout).get<float>());
        }
        for (bool flash : {false, true}) {
            emb_run r;
            r.flash_attn = flash;
            std::unique_ptr<context> ctx = make_context(*m, r);
            ASSERT_EQ(ctx->pooling(), pooling_type::rank);
            ASSERT_EQ(ctx->n_embd_out(), 1);
            for (bool batched : {false, true}) {
                const auto scores = pooled(*ctx, inputs, batched);
                double worst = 0;
                for (size_t i = 0; i < want.size(); ++i) {
                    ASSERT_TRUE(scores[i].has_value());
                    const double d = std::fabs(double((*scores[i])[0]) - want[i]);
                    EXPECT_LE(d, k_max_score_diff) << "pair " << i << " layout tokens" << layout;
                    worst = std::max(worst, d);
                }
                std::printf("tiny-bert-rerank tokens%-7s %-6s %-6s max |score - ref| %.5f\n", layout,
                            flash ? "fused" : "plain", batched ? "batch" : "single", worst);
            }
        }
    }
}

// The model's pooling by default; an encoder has no logits; the batch rules of an embeddings
// context; rows without an output flag have no hidden state.
TEST(embeddings_reference, context_rules) {
    INFERD_REQUIRE_TESTDATA(dir);
    std::unique_ptr<model> bert = model::load(dir + "/models/tiny-bert-f16.gguf", model_params{});
    EXPECT_EQ(bert->hparams().pooling, pooling_type::cls);
    EXPECT_FALSE(bert->hparams().causal_attn);
    EXPECT_EQ(bert->weights().output, nullptr);
    context_params logits_params;
    logits_params.n_threads = 2;
    EXPECT_THROW(context(*bert, logits_params), std::runtime_error) << "a bert model has no logits";
    emb_run r;
    r.n_ubatch = 8;
    std::unique_ptr<context> ctx = make_context(*bert, r);
    EXPECT_EQ(ctx->pooling(), pooling_type::cls);
    EXPECT_EQ(std::string(pooling_type_name(ctx->pooling())), "cls");
    EXPECT_EQ(ctx->logits(0), nullptr);
    EXPECT_EQ(ctx->kv().used(), 0u);
    EXPECT_EQ(ctx->seq_pos_max(0), -1);
    llm_batch b;
    EXPECT_EQ(ctx->decode(b), decode_invalid) << "an empty batch";
    add_seq(b, std::vector<int32_t>(9, 1000), 0);
    EXPECT_EQ(ctx->decode(b), decode_invalid) << "9 tokens in one sequence, n_ubatch 8";
    EXPECT_NE(ctx->last_error().find("sequence 0 has 9 tokens"), std::string::npos) << ctx->last_error();
    b.clear();
    b.add(101, 1, 0, true);
    b.add(102, 0, 0, true);
    EXPECT_EQ(ctx->decode(b), decode_invalid) << "positions must increase along a sequence";
    EXPECT_NE(ctx->last_error().find("increasing position order"), std::string::npos) << ctx->last_error();
    b.clear();
    add_seq(b, {101, 1996, 102}, 1);
    add_seq(b, {101, 102}, 0);
    ASSERT_EQ(ctx->decode(b), decode_ok) << ctx->last_error();
    EXPECT_NE(ctx->embeddings_seq(0), nullptr);
    EXPECT_NE(ctx->embeddings_seq(1), nullptr);
    EXPECT_EQ(ctx->embeddings_seq(2), nullptr) << "not in the last decode";
    EXPECT_EQ(ctx->embeddings(0), nullptr) << "pooled contexts keep no token rows";

    r.pooling = pooling_type::none;
    std::unique_ptr<context> rows = make_context(*bert, r);
    b.clear();
    b.add(101, 0, 0, false);
    b.add(1996, 1, 0, true);
    b.add(102, 2, 0, false);
    ASSERT_EQ(rows->decode(b), decode_ok) << rows->last_error();
    EXPECT_EQ(rows->embeddings(0), nullptr);
    EXPECT_NE(rows->embeddings(1), nullptr);
    EXPECT_EQ(rows->embeddings(2), nullptr);

    r.pooling = pooling_type::rank;
    EXPECT_THROW(make_context(*bert, r), std::runtime_error) << "rank pooling needs a classification head";
}

namespace {

std::vector<int32_t> reference_prompt(const std::string & dir, const std::string & name, const char * prompt) {
    const nlohmann::json j = read_json(dir + "/reference/" + name + "." + prompt + ".json");
    return j.is_discarded() ? std::vector<int32_t>{} : j.at("prompt_tokens").get<std::vector<int32_t>>();
}

// Row r of the output matrix as floats.
std::vector<float> output_row(const ggml_tensor * w, int64_t r) {
    const size_t bytes = ggml_row_size(w->type, w->ne[0]);
    std::vector<uint8_t> raw(bytes);
    ggml_backend_tensor_get(const_cast<ggml_tensor *>(w), raw.data(), size_t(r) * w->nb[1], bytes);
    std::vector<float> out(size_t(w->ne[0]));
    ggml_get_type_traits(w->type).to_float(raw.data(), out.data(), w->ne[0]);
    return out;
}

// rms(a - b) / rms(b)
double rel_rms(const std::vector<float> & a, const float * b) {
    double d = 0, n = 0;
    for (size_t i = 0; i < a.size(); ++i) {
        d += (double(a[i]) - b[i]) * (double(a[i]) - b[i]);
        n += double(b[i]) * b[i];
    }
    return std::sqrt(d / n);
}

// A decoder as an embedder: its hidden states (pooling none, causal) times the output matrix
// give the logits of a logits context (F32 K/V so that both compute the same arithmetic), on a
// prompt longer than the sliding window of the models that have one; the last row of a prefix
// equals that row of the whole prompt (causal); mean pooling of two prompts batched equals
// each alone; the fused path equals the plain one.
void check_decoder_embedder(const std::string & dir, const std::string & name) {
    SCOPED_TRACE(name);
    const std::vector<int32_t> p2 = reference_prompt(dir, name, "p2"), p1 = reference_prompt(dir, name, "p1");
    ASSERT_FALSE(p2.empty());
    std::unique_ptr<model> m = model::load(dir + "/models/" + name + ".gguf", model_params{});
    context_params lp;
    lp.n_threads = 2;
    lp.n_ctx = 512;
    lp.type_k = lp.type_v = GGML_TYPE_F32;
    context logits_ctx(*m, lp);
    llm_batch b;
    add_seq(b, p2, 0);
    ASSERT_EQ(logits_ctx.decode(b), decode_ok) << logits_ctx.last_error();
    const float cap = m->hparams().final_softcap;
    for (bool flash : {false, true}) {
        emb_run r;
        r.flash_attn = flash;
        r.pooling = pooling_type::none;
        std::unique_ptr<context> ctx = make_context(*m, r);
        ASSERT_EQ(ctx->decode(b), decode_ok) << ctx->last_error();
        double worst = 0;
        for (size_t t : {size_t(0), p2.size() / 2, p2.size() - 1}) {
            const float * h = ctx->embeddings(int32_t(t));
            ASSERT_NE(h, nullptr);
            std::vector<float> logits(size_t(m->hparams().n_vocab));
            for (size_t v = 0; v < logits.size(); ++v) {
                const std::vector<float> w = output_row(m->weights().output, int64_t(v));
                double acc = 0;
                for (size_t e = 0; e < w.size(); ++e) acc += double(w[e]) * h[e];
                logits[v] = cap > 0 ? float(cap * std::tanh(acc / cap)) : float(acc);
            }
            worst = std::max(worst, rel_rms(logits, logits_ctx.logits(int32_t(t))));
        }
        EXPECT_LE(worst, 1e-3) << (flash ? "fused" : "plain");
        // causal: the last row of a prefix is that row of the whole prompt
        llm_batch prefix;
        add_seq(prefix, std::vector<int32_t>(p2.begin(), p2.begin() + 40), 0);
        std::vector<float> whole(ctx->embeddings(39), ctx->embeddings(39) + m->hparams().n_embd);
        ASSERT_EQ(ctx->decode(prefix), decode_ok);
        const double c_prefix = cosine(ctx->embeddings(39), whole);
        EXPECT_GE(c_prefix, 0.99999);
        // mean pooling: batched equals alone
        r.pooling = pooling_type::mean;
        std::unique_ptr<context> mean = make_context(*m, r);
        const auto alone = pooled(*mean, {p1, p2}, false), batched = pooled(*mean, {p1, p2}, true);
        double c_batch = 1;
        for (size_t i = 0; i < 2; ++i) {
            ASSERT_TRUE(alone[i] && batched[i]);
            c_batch = std::min(c_batch, cosine(batched[i]->data(), *alone[i]));
        }
        EXPECT_GE(c_batch, 0.99999);
        std::printf("%-18s %-6s logits from hidden states: rel rms %.2e; prefix cosine %.7f; batch vs alone %.7f\n",
                    name.c_str(), flash ? "fused" : "plain", worst, c_prefix, c_batch);
    }
}

}  // namespace

TEST(embeddings_reference, decoders_as_embedders) {
    INFERD_REQUIRE_TESTDATA(dir);
    for (const char * name : {"tiny-llama-f16", "tiny-qwen2-f16", "tiny-qwen3-f16", "tiny-qwen3moe-f16", "tiny-mixtral-f16",
                              "tiny-gemma2-f16", "tiny-gemma3-f16", "tiny-phi3-f16", "tiny-gpt2-f16"}) {
        check_decoder_embedder(dir, name);
    }
}
