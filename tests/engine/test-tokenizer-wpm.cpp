// tests/engine/test-tokenizer-wpm.cpp — the WordPiece tokenizer (tokenizer.ggml.model = "bert")
// against the reference tokenizations of ../shared/testdata/reference (tiny-bert's embedding
// inputs and the reranker's query/document pairs), plus self-contained checks of the
// normalization (case, accents, CJK, punctuation), [UNK] words and detokenizing.
#include "engine/model.h"
#include "engine/tokenizer-wpm.h"
#include "engine/tokenizer.h"
#include "engine/vocab.h"
#include "engine/src/unicode.h"
#include "testdata.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <memory>
#include <string>
#include <vector>

namespace {

nlohmann::json read_json(const std::string & path) {
    std::ifstream f(path);
    return nlohmann::json::parse(f, nullptr, false);
}

std::unique_ptr<model> load_bert_vocab(const std::string & dir, const std::string & name = "tiny-bert-f16") {
    model_params mp;
    mp.vocab_only = true;
    return model::load(dir + "/models/" + name + ".gguf", mp);
}

std::vector<int32_t> join_pair(const vocab & v, const std::vector<int32_t> & q, const std::vector<int32_t> & d,
                               bool final_sep) {
    std::vector<int32_t> out = {v.cls_id()};
    out.insert(out.end(), q.begin(), q.end());
    out.push_back(v.sep_id());
    out.insert(out.end(), d.begin(), d.end());
    if (final_sep) out.push_back(v.sep_id());
    return out;
}

std::vector<std::string> fold(uint32_t cp) {
    std::vector<uint32_t> cps;
    inferd::unicode::fold_lowercase_strip_accents(cp, &cps);
    std::vector<std::string> out;
    for (uint32_t c : cps) {
        out.emplace_back();
        inferd::unicode::utf8_append(out.back(), c);
    }
    return out;
}

// Token texts of ids, for readable failure messages.
std::string texts(const vocab & v, const std::vector<int32_t> & ids) {
    std::string out;
    for (int32_t id : ids) {
        if (!out.empty()) out += ' ';
        out += v.valid_id(id) ? v.token_text(id) : std::to_string(id);
    }
    return out;
}

class TokenizerWpm : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = inferd_testdata_dir();
        if (dir_.empty()) {
            if (inferd_running_in_ci()) FAIL() << "../shared/testdata is missing (required under CI=true)";
            GTEST_SKIP() << "../shared/testdata not found next to the repository: skipped";
        }
        model_ = load_bert_vocab(dir_);
    }
    const vocab & v() const { return model_->get_vocab(); }
    const tokenizer & tok() const { return model_->get_tokenizer(); }
    std::vector<int32_t> ids(std::string_view text) const { return tok().tokenize(text, false, false); }
    int32_t id(std::string_view text) const { return v().token_id(text); }

    std::string dir_;
    std::unique_ptr<model> model_;
};

}  // namespace

TEST_F(TokenizerWpm, VocabularyAndSpecialIds) {
    EXPECT_EQ(v().type(), vocab_type::wpm);
    EXPECT_EQ(v().model_name(), "bert");
    EXPECT_EQ(v().n_tokens(), 8192);
    EXPECT_EQ(v().pad_id(), 0);
    EXPECT_EQ(v().unk_id(), 100);
    EXPECT_EQ(v().cls_id(), 101);
    EXPECT_EQ(v().sep_id(), 102);
    EXPECT_EQ(v().mask_id(), 103);
    EXPECT_EQ(v().bos_id(), v().cls_id());
    EXPECT_EQ(v().eos_id(), v().sep_id());
    EXPECT_TRUE(v().add_bos());
    EXPECT_TRUE(v().add_eos());
    EXPECT_FALSE(v().add_space_prefix());
    EXPECT_TRUE(v().is_control(v().cls_id()));
    EXPECT_GE(v().max_token_size(), std::string("\xE2\x96\x81physically").size());
}

TEST_F(TokenizerWpm, ReferenceEmbeddingInputs) {
    for (const char * pooling : {"cls", "mean"}) {
        const nlohmann::json j = read_json(dir_ + "/reference/tiny-bert-f16." + pooling + ".emb.json");
        ASSERT_FALSE(j.is_discarded()) << pooling;
        ASSERT_EQ(j.at("inputs").size(), 9u);
        for (const nlohmann::json & in : j.at("inputs")) {
            const std::string text = in.at("text").get<std::string>();
            const std::vector<int32_t> want = in.at("tokens").get<std::vector<int32_t>>();
            const std::vector<int32_t> got = tok().tokenize(text, true, false);
            EXPECT_EQ(got, want) << "'" << text << "'\n ours: " << texts(v(), got) << "\n want: " << texts(v(), want);
            EXPECT_EQ(tok().tokenize(text, true, true), want) << "parse_special changes '" << text << "'";
        }
    }
}

TEST_F(TokenizerWpm, ReferenceRerankPairs) {
    std::unique_ptr<model> rerank = load_bert_vocab(dir_, "tiny-bert-rerank-f16");
    const vocab & rv = rerank->get_vocab();
    ASSERT_EQ(rv.n_tokens(), v().n_tokens());
    const nlohmann::json j = read_json(dir_ + "/reference/tiny-bert-rerank-f16.rank.emb.json");
    ASSERT_FALSE(j.is_discarded());
    ASSERT_FALSE(j.at("pairs").empty());
    for (const nlohmann::json & p : j.at("pairs")) {
        const std::string q = p.at("query").get<std::string>(), d = p.at("document").get<std::string>();
        const std::vector<int32_t> qi = rerank->get_tokenizer().tokenize(q, false, false);
        const std::vector<int32_t> di = rerank->get_tokenizer().tokenize(d, false, false);
        EXPECT_EQ(join_pair(rv, qi, di, true), p.at("tokens").get<std::vector<int32_t>>()) << q << " | " << d;
        EXPECT_EQ(join_pair(rv, qi, di, false), p.at("tokens_server").get<std::vector<int32_t>>()) << q << " | " << d;
        EXPECT_EQ(rerank->get_tokenizer().tokenize_pair(q, d), p.at("tokens").get<std::vector<int32_t>>()) << q << " | " << d;
    }
}

TEST_F(TokenizerWpm, EmptyAndWhitespaceOnlyTexts) {
    const std::vector<int32_t> cls_sep = {101, 102};
    EXPECT_EQ(tok().tokenize("", true, false), cls_sep);
    EXPECT_EQ(tok().tokenize(" \t\n\r  ", true, false), cls_sep);
    EXPECT_TRUE(ids("").empty());
    EXPECT_TRUE(ids("   ").empty());
}

TEST_F(TokenizerWpm, SplitWordsNormalizes) {
    using words = std::vector<std::string>;
    EXPECT_EQ(wpm_split_words("Héllo, WORLD!"), (words{"hello", ",", "world", "!"}));
    EXPECT_EQ(wpm_split_words("  a\tb\nc\r\nd\xC2\xA0" "e\xE3\x80\x80" "f  "), (words{"a", "b", "c", "d", "e", "f"}));
    EXPECT_EQ(wpm_split_words("$5+x=y^2 `a|b~c` <p>"),
              (words{"$", "5", "+", "x", "=", "y", "^", "2", "`", "a", "|", "b", "~", "c", "`", "<", "p", ">"}));
    // Non-ASCII symbols stay inside words; punctuation of any script is split off.
    EXPECT_EQ(wpm_split_words("a\xC2\xB1" "b c\xE3\x80\x82" "d"), (words{"a\xC2\xB1" "b", "c", "\xE3\x80\x82", "d"}));
    // Control and format characters, NUL and invalid bytes vanish without splitting the word.
    EXPECT_EQ(wpm_split_words(std::string("ab\x01\x7F" "c\xE2\x80\x8B" "d\xFF" "e\0f", 13)), (words{"abcdef"}));
}

TEST_F(TokenizerWpm, AccentsAreStripped) {
    EXPECT_EQ(ids("Café crème brûlée"), ids("cafe creme brulee"));
    EXPECT_EQ(ids("CAFÉ"), ids("cafe"));
    EXPECT_EQ(ids("Cafe\xCC\x81"), ids("cafe"));  // a decomposed accent (U+0301) is dropped too
    EXPECT_EQ(ids("Zürich Kraków São"), ids("zurich krakow sao"));
    EXPECT_EQ(wpm_split_words("\xC3\x85" "ngstr\xC3\xB6m na\xC3\xAFve"),
              (std::vector<std::string>{"angstrom", "naive"}));
    const std::vector<int32_t> cafe = {id("\xE2\x96\x81" "cafe")};
    EXPECT_EQ(ids("café"), cafe);
}

TEST_F(TokenizerWpm, CjkIdeographsAreWords) {
    // 東京 (two ideographs) are two words; each is a word-initial piece of its own.
    const std::vector<int32_t> got = ids("東京");
    ASSERT_EQ(got.size(), 2u);
    EXPECT_EQ(got[0], id("\xE2\x96\x81\xE6\x9D\xB1"));
    EXPECT_EQ(got[1], id("\xE2\x96\x81\xE4\xBA\xAC"));
    EXPECT_EQ(wpm_split_words("ab東cd"), (std::vector<std::string>{"ab", "東", "cd"}));
    // Kana are no ideographs: a kana word stays one word.
    EXPECT_EQ(wpm_split_words("カフェ"), (std::vector<std::string>{"カフェ"}));
}

TEST_F(TokenizerWpm, PunctuationIsSplit) {
    const int32_t a = id("\xE2\x96\x81" "a"), comma = id("\xE2\x96\x81,"), b = id("\xE2\x96\x81" "b");
    ASSERT_GE(a, 0);
    ASSERT_GE(comma, 0);
    ASSERT_GE(b, 0);
    EXPECT_EQ(ids("a,b"), (std::vector<int32_t>{a, comma, b}));
    EXPECT_EQ(ids("a , b"), (std::vector<int32_t>{a, comma, b}));
    EXPECT_EQ(ids("2024-07-15"), ids("2024 - 07 - 15"));
}

TEST_F(TokenizerWpm, UncoverableWordsAreOneUnknown) {
    const std::vector<int32_t> unk = {v().unk_id()};
    EXPECT_EQ(ids("\xF0\x9F\x99\x82"), unk);                 // 🙂
    EXPECT_EQ(ids("hello\xF0\x9F\x99\x82"), unk);            // the whole word, not only the emoji
    EXPECT_EQ(ids("\xED\x95\x9C\xEA\xB5\xAD\xEC\x96\xB4"), unk);  // 한국어
    const std::vector<int32_t> mixed = ids("hello \xF0\x9F\x9A\x80 world");
    ASSERT_EQ(mixed.size(), 3u);
    EXPECT_EQ(mixed[1], v().unk_id());
    EXPECT_EQ(mixed[0], id("\xE2\x96\x81hello"));
}

TEST_F(TokenizerWpm, LongestPiecesFirst) {
    // The reference covers "embeddings" as ▁em be d ding s: the longest word-initial piece
    // first, then the longest continuation each time (greedy, not the fewest pieces).
    const std::vector<int32_t> got = ids("embeddings");
    EXPECT_EQ(got, (std::vector<int32_t>{7861, 4783, 2094, 4667, 2015})) << texts(v(), got);
    EXPECT_EQ(ids("the"), (std::vector<int32_t>{1996}));
}

TEST_F(TokenizerWpm, SpecialNamesAreNeverParsed) {
    const std::vector<int32_t> plain = ids("[CLS] x [SEP]");
    EXPECT_EQ(tok().tokenize("[CLS] x [SEP]", false, true), plain);
    for (int32_t t : plain) {
        EXPECT_NE(t, v().cls_id());
        EXPECT_NE(t, v().sep_id());
    }
    EXPECT_EQ(plain.front(), id("\xE2\x96\x81["));
}

TEST_F(TokenizerWpm, DetokenizeRoundTrip) {
    std::string text, err;
    for (const char * s : {"the quick brown fox jumps over the lazy dog",
                           "embeddings map text to vectors of real numbers", "hello, world. how are you? fine!",
                           "it's 3 o'clock"}) {
        const std::vector<int32_t> t = tok().tokenize(s, true, false);
        ASSERT_TRUE(tok().detokenize(t, &text, &err)) << err;
        EXPECT_EQ(text, s) << texts(v(), t);
    }
    ASSERT_TRUE(tok().detokenize(tok().tokenize("Café au LAIT", true, false), &text, &err)) << err;
    EXPECT_EQ(text, "cafe au lait");
    ASSERT_TRUE(tok().detokenize(tok().tokenize("a b", true, false), &text, &err, /*render_special=*/true)) << err;
    EXPECT_EQ(text, "[CLS] a b[SEP]");
    EXPECT_FALSE(tok().detokenize(std::vector<int32_t>{1996, 8192}, &text, &err));
    EXPECT_NE(err.find("8192"), std::string::npos) << err;
}

TEST_F(TokenizerWpm, TokenToPiece) {
    EXPECT_EQ(tok().token_to_piece(1996), " the");
    EXPECT_EQ(tok().token_to_piece(2015), "s");  // a continuation piece
    EXPECT_EQ(tok().token_to_piece(v().cls_id()), "");
    EXPECT_EQ(tok().token_to_piece(v().cls_id(), true), "[CLS]");
    EXPECT_EQ(tok().token_to_piece(-1), "");
}

TEST(TokenizerWpmUnicode, FoldLowercaseStripAccents) {
    using pieces = std::vector<std::string>;
    EXPECT_EQ(fold('A'), (pieces{"a"}));
    EXPECT_EQ(fold('z'), (pieces{"z"}));
    EXPECT_EQ(fold(0xC9), (pieces{"e"}));             // É
    EXPECT_EQ(fold(0x130), (pieces{"i"}));            // İ
    EXPECT_EQ(fold(0x1E9E), (pieces{"\xC3\x9F"}));    // ẞ → ß
    EXPECT_EQ(fold(0x3A3), (pieces{"\xCF\x83"}));     // Σ → σ
    EXPECT_EQ(fold(0x301), pieces{});                 // combining acute accent
    EXPECT_EQ(fold(0xFB01), (pieces{"\xEF\xAC\x81"}));  // ﬁ: a compatibility decomposition only
    EXPECT_EQ(fold(0xD55C), (pieces{"\xE1\x84\x92", "\xE1\x85\xA1", "\xE1\x86\xAB"}));  // 한 → ᄒ ᅡ ᆫ
    EXPECT_EQ(fold(0xAC00), (pieces{"\xE1\x84\x80", "\xE1\x85\xA1"}));                 // 가 → ᄀ ᅡ
    EXPECT_EQ(fold(0xF900), (pieces{"\xE8\xB1\x88"}));  // a CJK compatibility ideograph → U+8C48
    EXPECT_EQ(fold(0x1F642), (pieces{"\xF0\x9F\x99\x82"}));
    EXPECT_TRUE(inferd::unicode::is_nonspacing_mark(0x300));
    EXPECT_TRUE(inferd::unicode::is_nonspacing_mark(0x36F));
    EXPECT_FALSE(inferd::unicode::is_nonspacing_mark(0x370));
    EXPECT_FALSE(inferd::unicode::is_nonspacing_mark('a'));
    EXPECT_FALSE(inferd::unicode::is_nonspacing_mark(0x903));  // Devanagari visarga: Mc, kept
}
