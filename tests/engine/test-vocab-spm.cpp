// test-vocab-spm.cpp — vocabulary loading and the SentencePiece-style tokenizer against the
// reference vectors in ../shared/testdata (vocab/*.inp/.out and tiny-llama's prompt_tokens).
#include "engine/tokenizer-spm.h"
#include "engine/vocab.h"
#include "testdata.h"

#include "ggml/gguf.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace {

std::string read_file(const std::string & path) {
    std::ifstream f(path, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

// NAME.gguf.inp: every string is followed by "\n__ggml_vocab_test__\n".
std::vector<std::string> read_inputs(const std::string & path) {
    const std::string all = read_file(path);
    const std::string sep = "\n__ggml_vocab_test__\n";
    std::vector<std::string> out;
    size_t start = 0;
    size_t pos;
    while ((pos = all.find(sep, start)) != std::string::npos) {
        out.push_back(all.substr(start, pos - start));
        start = pos + sep.size();
    }
    return out;
}

// NAME.gguf.out: one line of space-separated ids per string.
std::vector<std::vector<int32_t>> read_outputs(const std::string & path) {
    std::ifstream f(path);
    std::vector<std::vector<int32_t>> out;
    std::string line;
    while (std::getline(f, line)) {
        std::istringstream ls(line);
        std::vector<int32_t> ids;
        int32_t id;
        while (ls >> id) ids.push_back(id);
        out.push_back(std::move(ids));
    }
    return out;
}

void check_vocab_file(const std::string & dir, const std::string & name) {
    const std::string base = dir + "/vocab/ggml-vocab-" + name + ".gguf";
    vocab v;
    std::string err;
    ASSERT_TRUE(v.load_file(base, &err)) << err;
    ASSERT_EQ(v.type(), vocab_type::spm);
    const std::vector<std::string> inputs = read_inputs(base + ".inp");
    const std::vector<std::vector<int32_t>> expected = read_outputs(base + ".out");
    ASSERT_FALSE(inputs.empty());
    ASSERT_EQ(inputs.size(), expected.size());
    for (size_t i = 0; i < inputs.size(); ++i) {
        const std::vector<int32_t> ids = spm_tokenize(v, inputs[i], false, false);
        EXPECT_EQ(ids, expected[i]) << name << " string " << i << ": '" << inputs[i] << "'";
        std::string text;
        ASSERT_TRUE(spm_detokenize(v, expected[i], &text, &err)) << err;
        EXPECT_EQ(text, inputs[i]) << name << " string " << i;
    }
}

}  // namespace

TEST(VocabSpm, LlamaSpmVectors) {
    INFERD_REQUIRE_TESTDATA(dir);
    check_vocab_file(dir, "llama-spm");
}

TEST(VocabSpm, Phi3Vectors) {
    INFERD_REQUIRE_TESTDATA(dir);
    check_vocab_file(dir, "phi-3");
}

TEST(VocabSpm, LoadsMetadata) {
    INFERD_REQUIRE_TESTDATA(dir);
    vocab v;
    std::string err;
    ASSERT_TRUE(v.load_file(dir + "/vocab/ggml-vocab-llama-spm.gguf", &err)) << err;
    EXPECT_EQ(v.n_tokens(), 32000);
    EXPECT_EQ(v.model_name(), "llama");
    EXPECT_EQ(v.bos_id(), 1);
    EXPECT_EQ(v.eos_id(), 2);
    EXPECT_EQ(v.unk_id(), 0);
    EXPECT_TRUE(v.add_bos());
    EXPECT_FALSE(v.add_eos());
    EXPECT_TRUE(v.add_space_prefix());
    EXPECT_TRUE(v.is_eog(2));
    EXPECT_FALSE(v.is_eog(1));
    EXPECT_EQ(v.token_id("<0x0A>"), 13);
    EXPECT_EQ(v.byte_token(0x0A), 13);
    EXPECT_EQ(v.token_byte(13), 0x0A);
    EXPECT_EQ(v.token_byte(1), -1);
    EXPECT_EQ(v.token_text(v.token_id("\xE2\x96\x81the")), "\xE2\x96\x81the");
    EXPECT_EQ(v.token_id("no such token"), -1);
}

TEST(VocabSpm, SpecialTokensOnlyWhenAsked) {
    INFERD_REQUIRE_TESTDATA(dir);
    vocab v;
    std::string err;
    ASSERT_TRUE(v.load_file(dir + "/vocab/ggml-vocab-llama-spm.gguf", &err)) << err;
    const std::vector<int32_t> plain = spm_tokenize(v, "<s>Hi", false, false);
    const std::vector<int32_t> parsed = spm_tokenize(v, "<s>Hi", false, true);
    ASSERT_FALSE(parsed.empty());
    EXPECT_EQ(parsed[0], 1);
    EXPECT_NE(plain[0], 1);
    // After a special token the fragment gets the space prefix again: "<s>Hi" == <s> + " Hi".
    std::vector<int32_t> hi = spm_tokenize(v, "Hi", false, false);
    hi.insert(hi.begin(), 1);
    EXPECT_EQ(parsed, hi);
    // add_special: BOS from metadata; no EOS.
    const std::vector<int32_t> with_bos = spm_tokenize(v, "Hi", true, false);
    ASSERT_EQ(with_bos.size(), hi.size());
    EXPECT_EQ(with_bos, hi);
    std::string text;
    ASSERT_TRUE(spm_detokenize(v, parsed, &text, &err)) << err;
    EXPECT_EQ(text, "Hi");
    ASSERT_TRUE(spm_detokenize(v, parsed, &text, &err, /*render_special=*/true)) << err;
    EXPECT_EQ(text, "<s> Hi");
}

TEST(VocabSpm, ByteFallbackAndErrors) {
    INFERD_REQUIRE_TESTDATA(dir);
    vocab v;
    std::string err;
    ASSERT_TRUE(v.load_file(dir + "/vocab/ggml-vocab-llama-spm.gguf", &err)) << err;
    // A character absent from the vocabulary (U+1F9EA, test tube) falls back to its 4 bytes.
    const std::string s = "\xF0\x9F\xA7\xAA";
    const std::vector<int32_t> ids = spm_tokenize(v, s, false, false);
    ASSERT_GE(ids.size(), 4u);
    const std::vector<int32_t> tail(ids.end() - 4, ids.end());
    EXPECT_EQ(tail, (std::vector<int32_t>{v.byte_token(0xF0), v.byte_token(0x9F), v.byte_token(0xA7),
                                          v.byte_token(0xAA)}));
    std::string text;
    ASSERT_TRUE(spm_detokenize(v, ids, &text, &err)) << err;
    EXPECT_EQ(text, s);
    EXPECT_FALSE(spm_detokenize(v, std::vector<int32_t>{5, 32000}, &text, &err));
    EXPECT_NE(err.find("32000"), std::string::npos);
    EXPECT_FALSE(spm_detokenize(v, std::vector<int32_t>{-1}, &text, &err));
}

TEST(VocabSpm, LoadErrors) {
    gguf_metadata md;
    vocab v;
    std::string err;
    EXPECT_FALSE(v.load(md, &err));
    EXPECT_NE(err.find("tokenizer.ggml.model"), std::string::npos) << err;
    md.set("tokenizer.ggml.model", gguf_value::from_string("bert-ish"));
    EXPECT_FALSE(v.load(md, &err));
    EXPECT_NE(err.find("bert-ish"), std::string::npos) << err;
    md.set("tokenizer.ggml.model", gguf_value::from_string("llama"));
    EXPECT_FALSE(v.load(md, &err));
    EXPECT_NE(err.find("tokenizer.ggml.tokens"), std::string::npos) << err;
    md.set("tokenizer.ggml.tokens", gguf_value::from_array_strings({"<unk>", "<s>", "</s>", "a"}));
    const float scores[3] = {0, 0, 0};
    md.set("tokenizer.ggml.scores", gguf_value::from_array_f32(scores));
    EXPECT_FALSE(v.load(md, &err));
    EXPECT_NE(err.find("tokenizer.ggml.scores"), std::string::npos) << err;
    md.remove("tokenizer.ggml.scores");
    md.set("tokenizer.ggml.eos_token_id", gguf_value::from_u32(9));
    EXPECT_FALSE(v.load(md, &err));
    EXPECT_NE(err.find("eos_token_id"), std::string::npos) << err;
    md.set("tokenizer.ggml.eos_token_id", gguf_value::from_u32(2));
    EXPECT_TRUE(v.load(md, &err)) << err;
    EXPECT_EQ(v.n_tokens(), 4);
    md.set("tokenizer.ggml.model", gguf_value::from_string("gpt2"));
    EXPECT_FALSE(v.load(md, &err));
    EXPECT_NE(err.find("tokenizer.ggml.merges"), std::string::npos) << err;
    md.set("tokenizer.ggml.merges", gguf_value::from_array_strings({"a b"}));
    EXPECT_FALSE(v.load(md, &err));
    EXPECT_NE(err.find("merges[0]"), std::string::npos) << err;
}

TEST(VocabSpm, TinyLlamaPromptTokens) {
    INFERD_REQUIRE_TESTDATA(dir);
    vocab v;
    std::string err;
    ASSERT_TRUE(v.load_file(dir + "/models/tiny-llama-f32.gguf", &err)) << err;
    const std::string json = read_file(dir + "/reference/tiny-llama-f32.p1.json");
    auto field = [&](const std::string & key) {
        const size_t k = json.find("\"" + key + "\"");
        EXPECT_NE(k, std::string::npos) << key;
        return k == std::string::npos ? std::string() : json.substr(json.find(':', k) + 1);
    };
    std::string text = field("prompt_text");
    text = text.substr(text.find('"') + 1);
    text = text.substr(0, text.find('"'));
    std::string arr = field("prompt_tokens");
    arr = arr.substr(arr.find('[') + 1);
    arr = arr.substr(0, arr.find(']'));
    for (char & c : arr) c = c == ',' ? ' ' : c;
    std::istringstream ls(arr);
    std::vector<int32_t> expected;
    int32_t id;
    while (ls >> id) expected.push_back(id);
    ASSERT_FALSE(expected.empty());
    EXPECT_EQ(spm_tokenize(v, text, true, false), expected) << text;
}

TEST(VocabSpm, TokenizesOneMegabyteQuickly) {
    INFERD_REQUIRE_TESTDATA(dir);
    vocab v;
    std::string err;
    ASSERT_TRUE(v.load_file(dir + "/vocab/ggml-vocab-llama-spm.gguf", &err)) << err;
    const std::vector<std::string> inputs = read_inputs(dir + "/vocab/ggml-vocab-llama-spm.gguf.inp");
    std::string text;
    while (text.size() < (1u << 20)) {
        for (const std::string & s : inputs) text += s + "\n";
    }
    const auto t0 = std::chrono::steady_clock::now();
    const std::vector<int32_t> ids = spm_tokenize(v, text, true, false);
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    std::printf("tokenized %zu bytes into %zu tokens in %.1f ms\n", text.size(), ids.size(), ms);
    std::string back;
    ASSERT_TRUE(spm_detokenize(v, ids, &back, &err)) << err;
    EXPECT_EQ(back, text);
}
