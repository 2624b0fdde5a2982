// tests/engine/test-tokenizer-bpe.cpp — byte-level BPE tokenizer against the vocab test vectors
// of ../shared/testdata/vocab, plus self-contained checks of the pre-tokenizer scanners.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "engine/tokenizer-bpe.h"
#include "engine/vocab.h"
#include "ggml/gguf.h"
#include "testdata.h"

namespace {

using inferd::bpe_pre_type;
using inferd::bpe_tokenizer;

std::string read_all(const std::string & path) {
    std::ifstream f(path, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

// NAME.gguf.inp: every string followed by "\n__ggml_vocab_test__\n".
std::vector<std::string> read_inputs(const std::string & path) {
    const std::string text = read_all(path);
    const std::string sep = "\n__ggml_vocab_test__\n";
    std::vector<std::string> out;
    size_t pos = 0;
    while (pos < text.size()) {
        const size_t at = text.find(sep, pos);
        if (at == std::string::npos) break;
        out.push_back(text.substr(pos, at - pos));
        pos = at + sep.size();
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
        int32_t id = 0;
        while (ls >> id) ids.push_back(id);
        out.push_back(std::move(ids));
    }
    return out;
}

// Loads the tokenizer of a vocab GGUF; fails the test on any error.
void load_tokenizer(const std::string & path, bpe_tokenizer * tok) {
    std::unique_ptr<gguf_file> f;
    gguf_result r = gguf_file::open(path, gguf_open_options{}, &f);
    ASSERT_TRUE(r.status == GGUF_OK) << path << ": " << r.message;
    const gguf_metadata & md = f->metadata();
    std::string model, pre;
    ASSERT_TRUE(md.get_string("tokenizer.ggml.model", &model).status == GGUF_OK);
    ASSERT_EQ(model, "gpt2");
    ASSERT_TRUE(md.get_string("tokenizer.ggml.pre", &pre).status == GGUF_OK);
    bpe_pre_type type{};
    ASSERT_TRUE(inferd::bpe_pre_type_from_name(pre, &type)) << "pre-tokenizer " << pre;
    const gguf_value * tokens = nullptr;
    const gguf_value * merges = nullptr;
    const gguf_value * types = nullptr;
    ASSERT_TRUE(md.get_array("tokenizer.ggml.tokens", &tokens).status == GGUF_OK);
    ASSERT_TRUE(md.get_array("tokenizer.ggml.merges", &merges).status == GGUF_OK);
    std::vector<int32_t> token_types;
    if (md.get_array("tokenizer.ggml.token_type", &types).status == GGUF_OK) {
        std::vector<int64_t> t64;
        ASSERT_TRUE(types->array_to_i64(&t64));
        token_types.assign(t64.begin(), t64.end());
    }
    std::string err;
    ASSERT_TRUE(tok->init(tokens->array_strings(), merges->array_strings(), type, &err,
                          token_types))
        << err;
}

// Encodes every string to exactly the expected ids, and decodes the expected ids back to the
// exact input: this detokenizer applies no clean-up rule (the reference engine's drops the space
// before a lone '?' for some vocabularies), so the round trip is exact for every string.
void check_vocab(const std::string & name) {
    INFERD_REQUIRE_TESTDATA(dir);
    const std::string base = dir + "/vocab/ggml-vocab-" + name + ".gguf";
    bpe_tokenizer tok;
    ASSERT_NO_FATAL_FAILURE(load_tokenizer(base, &tok));
    const std::vector<std::string> inputs = read_inputs(base + ".inp");
    const std::vector<std::vector<int32_t>> expected = read_outputs(base + ".out");
    ASSERT_FALSE(inputs.empty());
    ASSERT_EQ(inputs.size(), expected.size());
    for (size_t i = 0; i < inputs.size(); i++) {
        EXPECT_EQ(tok.encode(inputs[i]), expected[i]) << name << " string " << i << ": '"
                                                      << inputs[i] << "'";
        EXPECT_EQ(tok.decode(expected[i]), inputs[i]) << name << " string " << i;
    }
}

TEST(TokenizerBpe, VocabGpt2) { check_vocab("gpt-2"); }

// The same vectors through the engine's vocab struct (merge ranks looked up there).
TEST(TokenizerBpe, FromVocabStruct) {
    INFERD_REQUIRE_TESTDATA(dir);
    for (const char * name : {"gpt-2", "gpt2-llama-bpe", "gpt2-qwen2", "mpt"}) {
        const std::string base = dir + "/vocab/ggml-vocab-" + name + ".gguf";
        vocab v;
        std::string err;
        ASSERT_TRUE(v.load_file(base, &err)) << err;
        bpe_tokenizer tok;
        ASSERT_TRUE(tok.init(v, &err)) << err;
        const std::vector<std::string> inputs = read_inputs(base + ".inp");
        const std::vector<std::vector<int32_t>> expected = read_outputs(base + ".out");
        ASSERT_EQ(inputs.size(), expected.size());
        for (size_t i = 0; i < inputs.size(); i++) {
            EXPECT_EQ(tok.encode(inputs[i]), expected[i]) << name << " string " << i;
        }
    }
    vocab spm;
    std::string err;
    ASSERT_TRUE(spm.load_file(dir + "/vocab/ggml-vocab-llama-spm.gguf", &err)) << err;
    bpe_tokenizer tok;
    EXPECT_FALSE(tok.init(spm, &err));
}
TEST(TokenizerBpe, VocabLlamaBpe) { check_vocab("gpt2-llama-bpe"); }
TEST(TokenizerBpe, VocabQwen2) { check_vocab("gpt2-qwen2"); }
TEST(TokenizerBpe, VocabStarcoder) { check_vocab("starcoder"); }
TEST(TokenizerBpe, VocabMpt) { check_vocab("mpt"); }
TEST(TokenizerBpe, VocabFalcon) { check_vocab("falcon"); }
TEST(TokenizerBpe, VocabDeepseekLlm) { check_vocab("deepseek-llm"); }

// A tiny vocabulary: every byte plus a few merges, to check the scanners without test data.
bpe_tokenizer make_tiny(bpe_pre_type type) {
    std::vector<std::string> tokens;
    int next = 0x100;
    for (int b = 0; b < 256; b++) {
        std::string s;
        // GPT-2 alphabet: printable bytes map to themselves, the rest to U+0100 upwards.
        const bool printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
        const int cp = printable ? b : next++;
        if (cp < 0x80) {
            s.push_back(static_cast<char>(cp));
        } else {
            s.push_back(static_cast<char>(0xC0 | (cp >> 6)));
            s.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
        }
        tokens.push_back(s);
    }
    tokens.push_back("he");
    tokens.push_back("hel");
    std::vector<std::string> merges = {"h e", "he l"};
    bpe_tokenizer tok;
    std::string err;
    EXPECT_TRUE(tok.init(tokens, merges, type, &err)) << err;
    return tok;
}

TEST(TokenizerBpe, Gpt2Pattern) {
    bpe_tokenizer tok = make_tiny(bpe_pre_type::gpt2);
    const std::vector<std::string> want = {"Hello", "'s", " world", "  ", " 123", "!!", "\n"};
    EXPECT_EQ(tok.pre_tokenize("Hello's world   123!!\n"), want);
    const std::vector<int32_t> ids = tok.encode("help");
    ASSERT_EQ(ids.size(), 2u);
    EXPECT_EQ(ids[0], 257);  // "hel"
    EXPECT_EQ(tok.decode(ids), "help");
}

TEST(TokenizerBpe, Llama3Pattern) {
    bpe_tokenizer tok = make_tiny(bpe_pre_type::llama3);
    const std::vector<std::string> want = {"I", "'LL", " pay", " ", "123", "45", ".\n\n", "ok"};
    EXPECT_EQ(tok.pre_tokenize("I'LL pay 12345.\n\nok"), want);
    bpe_tokenizer q = make_tiny(bpe_pre_type::qwen2);
    const std::vector<std::string> want_q = {"a", "1", "2", " \n", " b"};
    EXPECT_EQ(q.pre_tokenize("a12 \n b"), want_q);
}

TEST(TokenizerBpe, InvalidUtf8Survives) {
    bpe_tokenizer tok = make_tiny(bpe_pre_type::gpt2);
    const std::string bad = "a\xff\xc3 b\xe2\x82";
    EXPECT_EQ(tok.decode(tok.encode(bad)), bad);
    EXPECT_TRUE(tok.token_to_piece(-1).empty());
    EXPECT_TRUE(tok.token_to_piece(100000).empty());
}

TEST(TokenizerBpe, RejectsBadData) {
    bpe_tokenizer tok;
    std::string err;
    EXPECT_FALSE(tok.init({}, {}, bpe_pre_type::gpt2, &err));
    EXPECT_FALSE(tok.init({"a", "b"}, {"ab"}, bpe_pre_type::gpt2, &err));
    EXPECT_NE(err.find("malformed"), std::string::npos);
    EXPECT_FALSE(tok.init({"a", "b"}, {}, bpe_pre_type::gpt2, &err, {1}));
    bpe_pre_type t{};
    EXPECT_FALSE(inferd::bpe_pre_type_from_name("no-such-pre", &t));
}

TEST(TokenizerBpe, SpecialTokensOnlyWhenAsked) {
    INFERD_REQUIRE_TESTDATA(dir);
    bpe_tokenizer tok;
    ASSERT_NO_FATAL_FAILURE(load_tokenizer(dir + "/vocab/ggml-vocab-gpt-2.gguf", &tok));
    const int32_t eot = tok.token_id("<|endoftext|>");
    ASSERT_GE(eot, 0);
    const std::vector<int32_t> with = tok.encode("Hi<|endoftext|>there", true);
    ASSERT_EQ(with.size(), 3u);
    EXPECT_EQ(with[1], eot);
    EXPECT_EQ(with[0], tok.token_id("Hi"));
    const std::vector<int32_t> without = tok.encode("Hi<|endoftext|>there", false);
    EXPECT_EQ(std::count(without.begin(), without.end(), eot), 0);
    EXPECT_EQ(tok.decode(without), "Hi<|endoftext|>there");
    EXPECT_EQ(tok.decode(with), "Hithere");  // control tokens decode to nothing by default
    EXPECT_EQ(tok.decode(with, true), "Hi<|endoftext|>there");
}

TEST(TokenizerBpe, MegabyteRoundTrip) {
    INFERD_REQUIRE_TESTDATA(dir);
    bpe_tokenizer tok;
    ASSERT_NO_FATAL_FAILURE(load_tokenizer(dir + "/vocab/ggml-vocab-gpt-2.gguf", &tok));
    std::string text;
    const std::string para =
        "The quick brown fox jumps over the lazy dog. It's 2024, and we'll see 1,234 cats!\n";
    while (text.size() < (1u << 20)) text += para;
    const std::vector<int32_t> ids = tok.encode(text);
    EXPECT_EQ(tok.decode(ids), text);
}

// GPT-2's byte alphabet: printable bytes stand for themselves, the others for U+0100 upwards.
std::vector<std::string> byte_alphabet() {
    std::vector<std::string> out(256);
    int next = 0x100;
    for (int b = 0; b < 256; b++) {
        const bool printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
        const int cp = printable ? b : next++;
        std::string & s = out[size_t(b)];
        if (cp < 0x80) {
            s.push_back(static_cast<char>(cp));
        } else {
            s.push_back(static_cast<char>(0xC0 | (cp >> 6)));
            s.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
        }
    }
    return out;
}

// BPE as it is defined, one merge at a time: of all neighbouring pairs, the one of lowest rank,
// the leftmost among equals; then the ids (one per byte for a symbol the vocabulary lacks).
std::vector<int32_t> reference_bpe(const bpe_tokenizer & tok, const std::map<std::string, int> & ranks,
                                   const std::string & word) {
    static const std::vector<std::string> alphabet = byte_alphabet();
    std::vector<std::string> syms;
    for (unsigned char c : word) syms.push_back(alphabet[c]);
    for (;;) {
        int best = -1;
        size_t at = 0;
        for (size_t i = 0; i + 1 < syms.size(); i++) {
            auto it = ranks.find(syms[i] + " " + syms[i + 1]);
            if (it != ranks.end() && (best < 0 || it->second < best)) {
                best = it->second;
                at = i;
            }
        }
        if (best < 0) break;
        syms[at] += syms[at + 1];
        syms.erase(syms.begin() + std::ptrdiff_t(at) + 1);
    }
    std::vector<int32_t> ids;
    for (const std::string & s : syms) {
        const int32_t id = tok.token_id(s);
        if (id >= 0) {
            ids.push_back(id);
        } else {
            for (unsigned char c : s) ids.push_back(tok.token_id(alphabet[c]));
        }
    }
    return ids;
}

// Long single words (one piece each for the pre-tokenizer), with many equal-rank pairs (runs of
// one letter) and many merges: the same tokens as merging one pair at a time.
TEST(TokenizerBpe, LongWordsMergeAsDefined) {
    INFERD_REQUIRE_TESTDATA(dir);
    const std::string path = dir + "/vocab/ggml-vocab-gpt-2.gguf";
    bpe_tokenizer tok;
    ASSERT_NO_FATAL_FAILURE(load_tokenizer(path, &tok));
    std::unique_ptr<gguf_file> f;
    ASSERT_TRUE(gguf_file::open(path, gguf_open_options{}, &f).status == GGUF_OK);
    const gguf_value * merges = nullptr;
    ASSERT_TRUE(f->metadata().get_array("tokenizer.ggml.merges", &merges).status == GGUF_OK);
    std::map<std::string, int> ranks;
    const std::vector<std::string> list = merges->array_strings();
    for (size_t i = 0; i < list.size(); i++) ranks.emplace(list[i], int(i));
    std::mt19937 rng(7);
    const std::vector<std::string> alphabets = {"a", "ab", "eta", "thequickbrownfx", "0123456789"};
    for (const std::string & letters : alphabets) {
        for (size_t len : {1u, 2u, 3u, 7u, 64u, 333u, 2000u}) {
            std::string word;
            for (size_t i = 0; i < len; i++) word.push_back(letters[rng() % letters.size()]);
            EXPECT_EQ(tok.encode(word), reference_bpe(tok, ranks, word)) << "'" << word.substr(0, 40) << "…' (" << len << ")";
        }
    }
    // a word of 200,000 letters, which no text splits, is tokenized and decodes back
    std::string huge;
    while (huge.size() < 200000) huge += "supercalifragilisticexpialidocious";
    EXPECT_EQ(tok.decode(tok.encode(huge)), huge);
}

}  // namespace
