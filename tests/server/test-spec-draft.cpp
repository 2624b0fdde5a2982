// Draft sources of speculative decoding: n-gram lookup (the latest earlier occurrence of the
// longest suffix, shorter suffixes as a fallback, the draft bounded by n_max and the history) and
// the vocabulary check of a draft model against its target.
#include "server/src/spec-draft.h"
#include "testdata.h"

#include <gtest/gtest.h>

using ids = std::vector<int32_t>;

TEST(spec_ngram_draft, proposes_what_followed_the_latest_earlier_occurrence) {
    EXPECT_EQ(spec_ngram_draft({1, 2, 3, 4, 1, 2, 3}, 3, 4), (ids{4, 1, 2, 3}));
    // Past the end of the history the draft goes on with itself (a period of 4).
    EXPECT_EQ(spec_ngram_draft({1, 2, 3, 4, 1, 2, 3}, 3, 7), (ids{4, 1, 2, 3, 4, 1, 2}));
    EXPECT_EQ(spec_ngram_draft({1, 2, 3, 4, 1, 2, 3}, 3, 2), (ids{4, 1}));
    // Two earlier occurrences of (5, 6): the later one wins.
    EXPECT_EQ(spec_ngram_draft({5, 6, 7, 5, 6, 8, 5, 6}, 2, 3), (ids{8, 5, 6}));
    // No earlier (2, 9, 2) or (9, 2): the last token alone.
    EXPECT_EQ(spec_ngram_draft({1, 2, 9, 2}, 3, 2), (ids{9, 2}));
    // A longer suffix wins over a later occurrence of a shorter one.
    EXPECT_EQ(spec_ngram_draft({7, 8, 1, 9, 8, 2, 7, 8}, 2, 1), (ids{1}));
    // A token repeated: the draft continues the run.
    EXPECT_EQ(spec_ngram_draft({4, 4, 4, 4}, 3, 5), (ids{4, 4, 4, 4, 4}));
    EXPECT_EQ(spec_ngram_draft({3, 4, 4, 4, 4}, 2, 3), (ids{4, 4, 4}));
}

TEST(spec_ngram_draft, nothing_to_propose) {
    EXPECT_TRUE(spec_ngram_draft({1, 2, 3}, 3, 8).empty());
    EXPECT_TRUE(spec_ngram_draft({1}, 3, 8).empty());
    EXPECT_TRUE(spec_ngram_draft({}, 3, 8).empty());
    EXPECT_TRUE(spec_ngram_draft({1, 2, 1, 2}, 3, 0).empty());
    EXPECT_TRUE(spec_ngram_draft({1, 2, 1, 2}, 0, 8).empty());
}

TEST(spec_vocab_mismatch, same_vocabulary_in_other_files_passes_others_are_named) {
    INFERD_REQUIRE_TESTDATA(dir);
    auto load = [&](const char * name) { return model::load(dir + "/models/" + name, model_params{}); };
    auto llama_f32 = load("tiny-llama-f32.gguf");
    auto llama_q4 = load("tiny-llama-q4_0.gguf");
    auto mixtral = load("tiny-mixtral-f16.gguf");  // the same 4096 llama-spm tokens
    auto stories = load("stories260K-f32.gguf");
    auto qwen2 = load("tiny-qwen2-f16.gguf");
    auto gpt2 = load("tiny-gpt2-f16.gguf");
    EXPECT_EQ(spec_vocab_mismatch(*llama_f32, *llama_q4), "");
    EXPECT_EQ(spec_vocab_mismatch(*llama_f32, *mixtral), "");
    EXPECT_EQ(spec_vocab_mismatch(*llama_f32, *stories), "the draft model has 512 tokens, the model 4096");
    const std::string why = spec_vocab_mismatch(*qwen2, *gpt2);  // both 4096 tokens
    EXPECT_FALSE(why.empty());
    EXPECT_NE(why.find("draft model"), std::string::npos) << why;
}
