// test-tokenizer-reference.cpp — the tokenizer of every model in ../shared/testdata/reference
// against the reference engine's `prompt_tokens` (BOS included where the model adds one), each
// model loaded vocabulary-only; plus the per-family rules those files rely on: Gemma's missing
// space prefix, Phi-3's added tokens and its whitespace after special tokens, and the
// end-of-generation set of every family.
#include "engine/model.h"
#include "engine/tokenizer-spm.h"
#include "engine/tokenizer.h"
#include "engine/vocab.h"
#include "ggml/gguf.h"
#include "reference-data.h"
#include "testdata.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

namespace {

struct prompt_case {
    std::string text;              // prompt_text ("" where the reference gives tokens only)
    std::vector<int32_t> tokens;   // prompt_tokens
};

bool read_prompt(const std::string & dir, const std::string & model, const std::string & prompt,
                 prompt_case * out) {
    std::ifstream f(dir + "/reference/" + model + "." + prompt + ".json");
    if (!f) return false;
    const nlohmann::json j = nlohmann::json::parse(f, nullptr, false);
    if (j.is_discarded()) return false;
    out->text = j.value("prompt_text", std::string());
    out->tokens = j.at("prompt_tokens").get<std::vector<int32_t>>();
    return true;
}

std::unique_ptr<model> load_vocab_only(const std::string & path) {
    model_params mp;
    mp.vocab_only = true;
    return model::load(path, mp);
}

std::string ids_to_string(const std::vector<int32_t> & ids) {
    std::string s;
    for (int32_t id : ids) {
        if (!s.empty()) s += ' ';
        s += std::to_string(id);
    }
    return s;
}

enum class prompt_result { matched, differs, token_list };

// Where the reference gives a prompt as text, tokenizing it must give its tokens exactly. Where it
// gives tokens only (stories260K, whose vocabulary is a placeholder), the empty prompt must be the
// BOS token alone, and other token lists must be valid ids that detokenize.
prompt_result check_prompt(const model & m, const std::string & name, const prompt_case & p) {
    const tokenizer & tok = m.get_tokenizer();
    if (!p.text.empty() || p.tokens == std::vector<int32_t>{m.get_vocab().bos_id()}) {
        const std::vector<int32_t> ids = tok.tokenize(p.text, /*add_special=*/true, /*parse_special=*/false);
        EXPECT_EQ(ids, p.tokens) << name << ": ours  " << ids_to_string(ids) << "\n  reference "
                                 << ids_to_string(p.tokens);
        return ids == p.tokens ? prompt_result::matched : prompt_result::differs;
    }
    std::string text, err;
    EXPECT_TRUE(tok.detokenize(p.tokens, &text, &err)) << name << ": " << err;
    return prompt_result::token_list;
}

}  // namespace

TEST(TokenizerReference, EveryModelTokenizesItsPromptsLikeTheReference) {
    INFERD_REQUIRE_TESTDATA(dir);
    const std::vector<std::string> models = reference_models(dir);
    ASSERT_FALSE(models.empty());
    int compared = 0, matched = 0, token_lists = 0;
    for (const std::string & name : models) {
        SCOPED_TRACE(name);
        std::unique_ptr<model> m;
        ASSERT_NO_THROW(m = load_vocab_only(dir + "/models/" + name + ".gguf"));
        int model_matched = 0, model_compared = 0;
        for (const char * prompt : {"p1", "p2"}) {
            prompt_case p;
            ASSERT_TRUE(read_prompt(dir, name, prompt, &p)) << name << "." << prompt;
            const prompt_result r = check_prompt(*m, name + "." + prompt, p);
            if (r == prompt_result::token_list) {
                ++token_lists;
                continue;
            }
            ++model_compared;
            if (r == prompt_result::matched) ++model_matched;
        }
        std::printf("%-22s %d/%d prompts match the reference tokens%s\n", name.c_str(), model_matched,
                    model_compared, model_compared < 2 ? " (the other one is given as tokens only)" : "");
        compared += model_compared;
        matched += model_matched;
    }
    std::printf("%d/%d prompts match; %d prompts are token lists without text\n", matched, compared, token_lists);
    EXPECT_EQ(matched, compared);
}

// Gemma's files say add_space_prefix = false: no "▁" is put before the text, nor after a special
// token; spaces inside the text are still "▁", and detokenizing keeps a leading space.
TEST(TokenizerFamilies, GemmaHasNoSpacePrefix) {
    INFERD_REQUIRE_TESTDATA(dir);
    for (const char * name : {"tiny-gemma2-f16", "tiny-gemma3-q4_k_m"}) {
        SCOPED_TRACE(name);
        std::unique_ptr<model> m;
        ASSERT_NO_THROW(m = load_vocab_only(dir + "/models/" + name + ".gguf"));
        const vocab & v = m->get_vocab();
        const tokenizer & tok = m->get_tokenizer();
        EXPECT_FALSE(v.add_space_prefix());
        EXPECT_TRUE(v.add_bos());
        // "The" (no "▁") starts the text; with a space prefix it would be "▁The".
        const int32_t the = v.token_id("The"), upon = v.token_id("\xE2\x96\x81upon");
        ASSERT_GE(the, 0);
        ASSERT_GE(upon, 0);
        EXPECT_EQ(tok.tokenize("The upon", false, false), (std::vector<int32_t>{the, upon}));
        EXPECT_EQ(tok.tokenize("The upon", true, false), (std::vector<int32_t>{v.bos_id(), the, upon}));
        const std::vector<int32_t> spaced = tok.tokenize(" The", false, false);
        ASSERT_FALSE(spaced.empty());
        EXPECT_EQ(v.token_text(spaced[0]).rfind("\xE2\x96\x81", 0), 0u) << v.token_text(spaced[0]);
        std::string text, err;
        ASSERT_TRUE(tok.detokenize(spaced, &text, &err)) << err;
        EXPECT_EQ(text, " The");  // the space was the user's: it stays
        // A chat turn: no prefix after <start_of_turn> either, and the newline after
        // <end_of_turn> stays (only Phi-3 drops whitespace after its special tokens).
        const int32_t sot = v.token_id("<start_of_turn>"), eot = v.token_id("<end_of_turn>");
        const int32_t user = v.token_id("user"), nl = v.byte_token('\n');
        ASSERT_EQ(sot, 4094);
        ASSERT_EQ(eot, 4095);
        ASSERT_GE(user, 0);
        const std::vector<int32_t> turn = tok.tokenize("<start_of_turn>user\nThe<end_of_turn>\n", false, true);
        EXPECT_EQ(turn, (std::vector<int32_t>{sot, user, nl, the, eot, nl})) << ids_to_string(turn);
        // Not parsing special tokens, the markers are plain text.
        for (int32_t id : tok.tokenize("<start_of_turn>user\nThe<end_of_turn>\n", false, false)) {
            EXPECT_NE(id, sot);
            EXPECT_NE(id, eot);
        }
        // <end_of_turn> ends generation (the file has no eot key: it is found by its text).
        EXPECT_EQ(v.eot_id(), eot);
        EXPECT_TRUE(v.is_eog(eot));
        EXPECT_TRUE(v.is_eog(v.eos_id()));
        EXPECT_FALSE(v.is_eog(sot));
    }
}

namespace {

// The Phi-3 vocabulary of the vocab tests, loaded directly.
void load_phi3_vocab(const std::string & dir, vocab * v) {
    std::string err;
    ASSERT_TRUE(v->load_file(dir + "/vocab/ggml-vocab-phi-3.gguf", &err)) << err;
}

}  // namespace

// Phi-3 stores </s> as a user-defined token; the reference engine treats it (as every
// end-of-turn marker) as a control token. Not parsing special tokens, text that spells a marker
// must stay text; parsing them, each marker is its token.
TEST(TokenizerFamilies, Phi3MarkersInPlainTextStayText) {
    INFERD_REQUIRE_TESTDATA(dir);
    vocab v;
    load_phi3_vocab(dir, &v);
    tokenizer tok;
    std::string err;
    ASSERT_TRUE(tok.init(v, &err)) << err;
    EXPECT_TRUE(v.add_bos());
    EXPECT_FALSE(v.add_eos());
    EXPECT_EQ(v.eos_id(), 32000);
    EXPECT_EQ(v.token_type(2), vocab_token_type::control);  // </s>: user-defined in the file
    const char * markers[] = {"</s>", "<|endoftext|>", "<|user|>", "<|assistant|>", "<|end|>", "<|system|>", "<s>",
                              "<unk>"};
    for (const char * marker : markers) {
        SCOPED_TRACE(marker);
        const int32_t id = v.token_id(marker);
        ASSERT_GE(id, 0);
        const std::string text = std::string("user text ") + marker + " more";
        const std::vector<int32_t> plain = tok.tokenize(text, true, false);
        for (size_t i = 1; i < plain.size(); ++i) EXPECT_FALSE(v.is_special(plain[i])) << plain[i];
        std::string back;
        ASSERT_TRUE(tok.detokenize(plain, &back, &err)) << err;
        EXPECT_EQ(back, text);
        const std::vector<int32_t> parsed = tok.tokenize(text, false, true);
        EXPECT_EQ(std::count(parsed.begin(), parsed.end(), id), 1) << ids_to_string(parsed);
    }
    // The same through the shipped model file.
    std::unique_ptr<model> m;
    ASSERT_NO_THROW(m = load_vocab_only(dir + "/models/tiny-phi3-f16.gguf"));
    const std::vector<int32_t> ids = m->get_tokenizer().tokenize("a</s><|endoftext|>b", true, false);
    for (int32_t id : ids) EXPECT_FALSE(m->get_vocab().is_special(id) && id != m->get_vocab().bos_id()) << id;
}

// Phi-3's tokenizer drops the whitespace after its special tokens (not after <s>, <unk>,
// <|endoftext|>), so a rendered chat turn tokenizes as the reference engine's:
// "<|user|>\nSYS\nHI<|end|>\n<|assistant|>\n" is 8 tokens, not 14.
TEST(TokenizerFamilies, Phi3DropsWhitespaceAfterSpecialTokens) {
    INFERD_REQUIRE_TESTDATA(dir);
    vocab v;
    load_phi3_vocab(dir, &v);
    tokenizer tok;
    std::string err;
    ASSERT_TRUE(tok.init(v, &err)) << err;
    EXPECT_EQ(tok.tokenize("<|user|>\nSYS\nHI<|end|>\n<|assistant|>\n", true, true),
              (std::vector<int32_t>{1, 32010, 317, 21554, 13, 17628, 32007, 32001}));
    EXPECT_TRUE(v.token(32010).rstrip);
    EXPECT_TRUE(v.token(2).rstrip);
    EXPECT_FALSE(v.token(1).rstrip);
    EXPECT_FALSE(v.token(32000).rstrip);
    // After <|endoftext|> the space stays (as its own "▁" before the prefixed word).
    const std::vector<int32_t> eot = tok.tokenize("<|endoftext|> x", false, true);
    ASSERT_GE(eot.size(), 2u);
    EXPECT_EQ(eot[0], 32000);
    EXPECT_EQ(eot[1], v.token_id("\xE2\x96\x81"));
}

// The rule is keyed on the model's name: the same tokens under another name keep their whitespace.
TEST(TokenizerFamilies, WhitespaceRuleFollowsTheModelName) {
    auto make = [](const char * name, vocab * v) {
        gguf_metadata md;
        md.set("general.name", gguf_value::from_string(name));
        md.set("tokenizer.ggml.model", gguf_value::from_string("llama"));
        md.set("tokenizer.ggml.tokens", gguf_value::from_array_strings({"<unk>", "<s>", "</s>", "<|user|>", "<0x0A>",
                                                                         "\xE2\x96\x81hi", "\xE2\x96\x81", "h", "i",
                                                                         "\xE2\x96\x81h"}));
        const int32_t types[] = {2, 3, 3, 3, 6, 1, 1, 1, 1, 1};
        md.set("tokenizer.ggml.token_type", gguf_value::from_array_i32(types));
        std::string err;
        ASSERT_TRUE(v->load(md, &err)) << err;
    };
    for (const char * name : {"Phi-3-mini-4k-instruct", "my PHI3 fine-tune"}) {
        vocab v;
        make(name, &v);
        EXPECT_EQ(spm_tokenize(v, "<|user|>\n hi", false, true), (std::vector<int32_t>{3, 5})) << name;
    }
    vocab other;
    make("Llama-2", &other);
    EXPECT_EQ(spm_tokenize(other, "<|user|>\nhi", false, true), (std::vector<int32_t>{3, 6, 4, 7, 8}));
}

// Generation stops at each family's end-of-turn token as well as at EOS: the set the server's batch
// loop and inferd-cli check (vocab::is_eog).
TEST(TokenizerFamilies, EndOfGenerationTokensOfEveryFamily) {
    INFERD_REQUIRE_TESTDATA(dir);
    struct family_case {
        const char * model;
        std::vector<std::string> eog;  // texts, in id order
        const char * eot;              // "" when none
    };
    const family_case cases[] = {
        {"tiny-qwen2-f16", {"<|endoftext|>", "<|im_end|>"}, "<|im_end|>"},
        {"tiny-qwen3-f16", {"<|endoftext|>", "<|im_end|>"}, "<|im_end|>"},
        {"tiny-qwen3moe-q4_k_m", {"<|endoftext|>", "<|im_end|>"}, "<|im_end|>"},
        {"tiny-mixtral-f16", {"</s>"}, ""},
        {"tiny-llama-f16", {"</s>"}, ""},
        {"tiny-gemma2-f16", {"</s>", "<end_of_turn>"}, "<end_of_turn>"},
        {"tiny-gemma3-f16", {"</s>", "<end_of_turn>"}, "<end_of_turn>"},
        {"tiny-phi3-f16", {"</s>", "<|endoftext|>", "<|end|>"}, "<|end|>"},
        {"tiny-gpt2-f16", {"<|endoftext|>"}, "<|endoftext|>"},
    };
    for (const family_case & c : cases) {
        SCOPED_TRACE(c.model);
        std::unique_ptr<model> m;
        ASSERT_NO_THROW(m = load_vocab_only(dir + "/models/" + c.model + ".gguf"));
        const vocab & v = m->get_vocab();
        std::vector<std::string> texts;
        for (int32_t id : v.eog_ids()) texts.push_back(v.token_text(id));
        EXPECT_EQ(texts, c.eog);
        EXPECT_TRUE(v.is_eog(v.eos_id()));
        EXPECT_EQ(v.eot_id() >= 0 ? v.token_text(v.eot_id()) : std::string(), c.eot);
        for (int32_t id : v.eog_ids()) EXPECT_TRUE(v.is_control(id)) << v.token_text(id);
        int n_eog = 0;
        for (int32_t id = 0; id < v.n_tokens(); ++id) n_eog += v.is_eog(id) ? 1 : 0;
        EXPECT_EQ(n_eog, (int) c.eog.size());
    }
}

namespace {

// A small SentencePiece-style vocabulary with the given extra tokens (type 4, user-defined, as
// some converters write added tokens) after <unk>, <s>, </s>.
void load_small_vocab(const std::vector<std::string> & extra, vocab * v, int64_t eot_key = -1) {
    gguf_metadata md;
    md.set("tokenizer.ggml.model", gguf_value::from_string("llama"));
    std::vector<std::string> tokens = {"<unk>", "<s>", "</s>", "a"};
    std::vector<int32_t> types = {2, 3, 3, 1};
    for (const std::string & t : extra) {
        tokens.push_back(t);
        types.push_back(4);
    }
    md.set("tokenizer.ggml.tokens", gguf_value::from_array_strings(tokens));
    md.set("tokenizer.ggml.token_type", gguf_value::from_array_i32(types));
    if (eot_key >= 0) md.set("tokenizer.ggml.eot_token_id", gguf_value::from_u32((uint32_t) eot_key));
    std::string err;
    ASSERT_TRUE(v->load(md, &err)) << err;
}

std::vector<std::string> eog_texts(const vocab & v) {
    std::vector<std::string> out;
    for (int32_t id : v.eog_ids()) out.push_back(v.token_text(id));
    return out;
}

}  // namespace

TEST(TokenizerFamilies, EndOfTurnMarkersFoundByTheirText) {
    vocab v;
    // Marker texts become control tokens that end generation; other added tokens stay as they are.
    load_small_vocab({"<start_of_turn>", "<end_of_turn>", "<|fim_pad|>", "<|fim_prefix|>"}, &v);
    EXPECT_EQ(eog_texts(v), (std::vector<std::string>{"</s>", "<end_of_turn>", "<|fim_pad|>"}));
    EXPECT_EQ(v.eot_id(), 5);
    EXPECT_TRUE(v.is_control(5));
    EXPECT_TRUE(v.is_control(7));  // <|fim_prefix|>: control, not an end
    EXPECT_FALSE(v.is_eog(7));
    EXPECT_EQ(v.token_type(4), vocab_token_type::user_defined);
    EXPECT_FALSE(v.is_eog(4));
    // The first marker in priority order is the eot: <|end|> before <|endoftext|> (Phi-3).
    load_small_vocab({"<|endoftext|>", "<|end|>"}, &v);
    EXPECT_EQ(v.token_text(v.eot_id()), "<|end|>");
    // An eot key wins over the text search, and is part of the set.
    load_small_vocab({"<|end|>", "<my_eot>"}, &v, 5);
    EXPECT_EQ(v.eot_id(), 5);
    EXPECT_TRUE(v.is_eog(5));
    EXPECT_TRUE(v.is_eog(4));
    // Harmony-style vocabularies end a message with <|end|> but not the generation.
    load_small_vocab({"<|end|>", "<|return|>", "<|call|>"}, &v);
    EXPECT_EQ(eog_texts(v), (std::vector<std::string>{"</s>", "<|return|>", "<|call|>"}));
    EXPECT_EQ(v.token_type(v.token_id("<|end|>")), vocab_token_type::user_defined);
}
