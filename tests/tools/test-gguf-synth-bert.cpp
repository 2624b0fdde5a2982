// Tests of inferd-gguf synth --arch bert: with tiny-bert's shape and vocabulary a file has exactly
// the metadata keys (and values) and the tensor table of the testdata's tiny-bert-f16 (CLS) and
// tiny-bert-rerank-f16 (rank pooling); the built-in WordPiece vocabulary loads as BERT's and
// tokenizes English into several pieces per word; the BERT-base benchmark shape is accepted;
// bad options are usage errors naming the flag.
#include "engine/model.h"
#include "engine/tokenizer.h"
#include "engine/vocab.h"
#include "gguf-synth-impl.h"
#include "gguf-inspect.h"
#include "gguf-synth.h"
#include "testdata.h"
#include "gguf-synth-test-util.h"
#include "tools-test-util.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

namespace {

int run_tool(const std::vector<std::string> & args, std::string * err_text = nullptr) {
    tools_capture out, err;
    const int rc = gguf_tool_main(args, out.get(), err.get());
    if (err_text) *err_text = err.text();
    return rc;
}

// tiny-bert's shape (testdata README, "Embeddings").
const std::vector<std::string> k_tiny_bert = {"--arch",  "bert", "--n-embd", "128", "--n-layer", "3",
                                              "--n-head", "4",    "--n-ff",   "512", "--n-ctx",   "512"};

// A small bert with the built-in vocabulary.
const std::vector<std::string> k_small_bert = {"--arch", "bert", "--n-embd", "64",  "--n-layer", "2",
                                               "--n-head", "4",  "--n-ff",   "128", "--n-vocab", "1000"};

// Every key of ref (general.name aside) with the same type and value in ours, and no other key.
void expect_same_keys(const gguf_file & ours, const gguf_file & ref) {
    std::set<std::string> ref_keys, our_keys;
    for (const gguf_kv & kv : ref.metadata().kvs()) {
        if (kv.key == "general.name") continue;
        ref_keys.insert(kv.key);
        const gguf_value * v = ours.metadata().find(kv.key);
        ASSERT_NE(v, nullptr) << "missing key " << kv.key;
        EXPECT_TRUE(*v == kv.value) << kv.key << ": " << v->to_string() << " vs " << kv.value.to_string();
    }
    for (const gguf_kv & kv : ours.metadata().kvs()) {
        if (kv.key != "general.name") our_keys.insert(kv.key);
    }
    EXPECT_EQ(our_keys, ref_keys);
}

std::unique_ptr<model> load_vocab_only(const std::string & path) {
    model_params mp;
    mp.vocab_only = true;
    return model::load(path, mp);
}

}  // namespace

TEST(gguf_synth_bert, keys_and_tensors_match_tiny_bert) {
    INFERD_REQUIRE_TESTDATA(data);
    tools_scratch_dir dir;
    const struct {
        const char * model;
        const char * pooling;
    } cases[] = {{"tiny-bert-f16", "cls"}, {"tiny-bert-rerank-f16", "rank"}};
    for (const auto & c : cases) {
        SCOPED_TRACE(c.model);
        const std::string ref_path = data + "/models/" + c.model + ".gguf";
        const std::string out = dir.file(std::string(c.model) + ".gguf");
        std::string err_text;
        ASSERT_EQ(run_tool(synth_args(k_tiny_bert, {"--vocab", ref_path, "--pooling", c.pooling}, out), &err_text), 0)
            << err_text;
        std::unique_ptr<gguf_file> ref = open_gguf(ref_path);
        std::unique_ptr<gguf_file> ours = open_gguf(out);
        ASSERT_TRUE(ref && ours);
        expect_same_keys(*ours, *ref);
        EXPECT_EQ(tensor_table(*ours), tensor_table(*ref));
    }
}

TEST(gguf_synth_bert, builtin_vocabulary_is_wordpiece) {
    tools_scratch_dir dir;
    const std::string out = dir.file("bert.gguf");
    std::string err_text;
    ASSERT_EQ(run_tool(synth_args(k_small_bert, {}, out), &err_text), 0) << err_text;
    std::unique_ptr<gguf_file> f = open_gguf(out);
    ASSERT_TRUE(f);
    uint64_t u = 0;
    bool causal = true;
    ASSERT_TRUE(f->metadata().get_uint("bert.pooling_type", &u));
    EXPECT_EQ(u, 2u);  // cls
    ASSERT_TRUE(f->metadata().get_bool("bert.attention.causal", &causal));
    EXPECT_FALSE(causal);
    ASSERT_TRUE(f->metadata().get_uint("tokenizer.ggml.token_type_count", &u));
    EXPECT_EQ(u, 2u);
    EXPECT_FALSE(f->metadata().contains("tokenizer.chat_template"));
    EXPECT_FALSE(f->metadata().contains("bert.attention.head_count_kv"));
    EXPECT_EQ(f->find_tensor("cls.weight"), nullptr);
    ASSERT_NE(f->find_tensor("blk.1.layer_output_norm.bias"), nullptr);
    EXPECT_EQ(f->find_tensor("position_embd.weight")->ne[1], 512);  // the default context

    std::unique_ptr<model> m = load_vocab_only(out);
    const vocab & v = m->get_vocab();
    ASSERT_EQ(v.type(), vocab_type::wpm);
    EXPECT_EQ(v.n_tokens(), 1000);
    EXPECT_EQ(v.pad_id(), 0);
    EXPECT_EQ(v.unk_id(), 100);
    EXPECT_EQ(v.cls_id(), 101);
    EXPECT_EQ(v.sep_id(), 102);
    EXPECT_EQ(v.mask_id(), 103);
    EXPECT_EQ(v.token_text(103), "[MASK]");
    EXPECT_TRUE(v.is_control(101));
    EXPECT_FALSE(v.is_control(1));  // [unused0]

    const std::string text = "The quick brown fox jumps over the lazy dog, 42 times!";
    const std::vector<int32_t> ids = m->get_tokenizer().tokenize(text, true, false);
    ASSERT_GE(ids.size(), 2u);
    EXPECT_EQ(ids.front(), 101);
    EXPECT_EQ(ids.back(), 102);
    EXPECT_EQ(std::count(ids.begin(), ids.end(), v.unk_id()), 0);
    EXPECT_GT(ids.size(), 2u + 14u) << "expected several pieces per word";  // 11 words, 3 punctuation/number marks
    std::string back, err;
    ASSERT_TRUE(m->get_tokenizer().detokenize(ids, &back, &err)) << err;
    EXPECT_EQ(back, "the quick brown fox jumps over the lazy dog, 42 times!");
    // Accents are stripped; a character outside ASCII makes its word [UNK].
    std::vector<int32_t> cafe_unk = m->get_tokenizer().tokenize("cafe", false, false);
    cafe_unk.push_back(v.unk_id());
    EXPECT_EQ(m->get_tokenizer().tokenize("Caf\xC3\xA9 \xF0\x9F\x99\x82", false, false), cafe_unk);
}

TEST(gguf_synth_bert, pooling_option) {
    tools_scratch_dir dir;
    const struct {
        const char * name;
        uint64_t value;
    } cases[] = {{"mean", 1}, {"cls", 2}, {"rank", 4}};
    for (const auto & c : cases) {
        SCOPED_TRACE(c.name);
        const std::string out = dir.file(std::string(c.name) + ".gguf");
        std::string err_text;
        ASSERT_EQ(run_tool(synth_args(k_small_bert, {"--pooling", c.name}, out), &err_text), 0) << err_text;
        std::unique_ptr<gguf_file> f = open_gguf(out);
        ASSERT_TRUE(f);
        uint64_t u = 0;
        ASSERT_TRUE(f->metadata().get_uint("bert.pooling_type", &u));
        EXPECT_EQ(u, c.value);
        const bool rank = c.value == 4;
        EXPECT_EQ(f->find_tensor("cls.weight") != nullptr, rank);
        EXPECT_EQ(f->find_tensor("cls.bias") != nullptr, rank);
        EXPECT_EQ(f->find_tensor("cls.output.weight") != nullptr, rank);
        EXPECT_EQ(f->find_tensor("cls.output.bias") != nullptr, rank);
        if (rank) {
            EXPECT_EQ(tensor_table(*f)["cls.weight"], "f16 [64, 64]");
            EXPECT_EQ(tensor_table(*f)["cls.output.weight"], "f32 [64]");
            EXPECT_EQ(tensor_table(*f)["cls.output.bias"], "f32 [1]");
        }
    }
}

// BERT-base (the benchmark shape): sizes and the vocabulary, built in memory (nothing is written).
TEST(gguf_synth_bert, bert_base_shape) {
    synth_params p;
    p.arch = "bert";
    p.n_embd = 768, p.n_layer = 12, p.n_head = 12, p.n_ff = 3072, p.n_vocab = 30522, p.n_ctx = 512;
    p.out_path = "unused.gguf";
    std::vector<std::string> warnings;
    std::string err;
    ASSERT_TRUE(synth_params_check(&p, &warnings, &err)) << err;
    EXPECT_TRUE(warnings.empty());
    EXPECT_EQ(p.pooling, "cls");
    uint64_t n = 0;
    for (const synth_tensor & t : synth_tensor_list(p)) n += uint64_t(t.n_elements());
    const uint64_t layer = 4 * (768 * 768 + 768) + 2 * 2 * 768 + (768 * 3072 + 3072) + (3072 * 768 + 768);
    EXPECT_EQ(n, 30522ull * 768 + 512 * 768 + 2 * 768 + 2 * 768 + 12 * layer);  // about 108.9 M

    gguf_metadata md;
    ASSERT_TRUE(synth_build_metadata(p, &md, &err)) << err;
    vocab v;
    ASSERT_TRUE(v.load(md, &err)) << err;
    ASSERT_EQ(v.n_tokens(), 30522);
    tokenizer tok;
    ASSERT_TRUE(tok.init(v, &err)) << err;
    const std::vector<int32_t> ids = tok.tokenize("Embeddings map text to vectors of real numbers.", true, false);
    EXPECT_EQ(std::count(ids.begin(), ids.end(), v.unk_id()), 0);
    EXPECT_GT(ids.size(), 2u + 9u);
    std::string back;
    ASSERT_TRUE(tok.detokenize(ids, &back, &err)) << err;
    EXPECT_EQ(back, "embeddings map text to vectors of real numbers.");
    std::set<std::string> texts;
    for (int32_t id = 0; id < v.n_tokens(); ++id) texts.insert(v.token_text(id));
    EXPECT_EQ(texts.size(), size_t(v.n_tokens())) << "token texts repeat";
}

TEST(gguf_synth_bert, usage_errors_name_the_flag) {
    tools_scratch_dir dir;
    const std::string out = dir.file("m.gguf");
    auto with = [&](std::vector<std::string> extra) { return synth_args(k_small_bert, extra, out); };
    const std::vector<std::string> llama = {"--arch", "llama", "--n-embd", "64", "--n-layer", "1", "--n-head", "4",
                                            "--n-ff", "128", "--n-vocab", "300"};
    std::vector<std::string> tiny_vocab = k_small_bert;
    tiny_vocab.back() = "207";
    struct bad_case {
        std::vector<std::string> args;
        const char * expect;
    };
    const std::vector<bad_case> cases = {
        {with({"--pooling", "max"}), "--pooling wants cls, mean or rank, got 'max'"},
        {with({"--n-head-kv", "2"}), "bert has no grouped-query attention"},
        {with({"--chat-template", "chatml"}), "--chat-template is not an option of bert"},
        {with({"--rope-base", "1e4"}), "--rope-base is not an option of bert"},
        {with({"--head-dim", "32"}), "--head-dim is not an option of bert"},
        {synth_args(tiny_vocab, {}, out), "--n-vocab must be at least 208"},
        {synth_args(llama, {"--pooling", "mean"}, out), "--pooling is not an option of llama (only of bert)"},
    };
    for (size_t i = 0; i < cases.size(); ++i) {
        SCOPED_TRACE(i);
        std::string err_text;
        EXPECT_EQ(run_tool(cases[i].args, &err_text), 2) << err_text;
        EXPECT_NE(err_text.find(cases[i].expect), std::string::npos) << err_text;
    }
    EXPECT_FALSE(std::filesystem::exists(out));
    // --pooling belongs to synth only.
    std::string err_text;
    EXPECT_EQ(run_tool({"info", out, "--pooling", "cls"}, &err_text), 2);
    EXPECT_NE(err_text.find("--pooling"), std::string::npos) << err_text;
}
