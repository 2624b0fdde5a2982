// engine/tokenizer-wpm.h — the WordPiece tokenizer of BERT-family models
// (tokenizer.ggml.model = "bert").
//
// Usage:
//   std::vector<int32_t> ids = wpm_tokenize(v, "Hello, world!", /*add_special=*/true);
//   // [CLS] ▁hello ▁, ▁world ▁! [SEP]
//   // A cross-encoder pair [CLS] query [SEP] document [SEP], its parts tokenized apart:
//   std::vector<int32_t> q = wpm_tokenize(v, query, false), d = wpm_tokenize(v, document, false);
//   std::vector<int32_t> pair = {v.cls_id()};
//   pair.insert(pair.end(), q.begin(), q.end());
//   pair.push_back(v.sep_id());
//   pair.insert(pair.end(), d.begin(), d.end());
//   pair.push_back(v.sep_id());
//   std::string text;
//   std::string err;
//   if (!wpm_detokenize(v, ids, &text, &err)) { ... }   // an id outside the vocabulary
//
// Tokenizing (BERT's basic tokenizer, then WordPiece): the text is split into words at whitespace
// (the White_Space property); NUL, U+FFFD (and so invalid UTF-8) and control / format characters
// are dropped; every other character is lowercased and canonically decomposed (NFD), its
// nonspacing marks (accents) dropped ("Crème" → "creme"); each punctuation character, ASCII
// symbol ($ + < = > ^ ` | ~) and CJK ideograph becomes a word of its own. Each word is then
// covered greedily from the left by the longest token that matches: word-initial pieces are the
// tokens stored with the "▁" prefix, continuation pieces those stored without it (BERT's "##"
// already removed by the converters); a word that cannot be covered completely becomes one
// unknown token ([UNK]). add_special puts bos ([CLS]) first and eos ([SEP]) last as the
// vocabulary's add_bos / add_eos say, so "" becomes [CLS] [SEP]. Special-token names in the
// text are never matched: "[CLS]" in a document is the ordinary pieces of "[", "cls", "]".
//
// Detokenizing: a word-initial piece contributes a space and its text, a continuation piece its
// text; control tokens ([CLS], [SEP], [PAD], [UNK], [MASK]) render as nothing unless
// render_special. remove_leading_space drops the space before the first word, and the spaces
// BERT's decoder removes are removed: before "." "," "?" "!", around an apostrophe between two
// spaces, and before the contractions n't 'm 's 've 're. Lowercasing and accent removal are not
// undone.
#pragma once

#include "engine/vocab.h"

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

// The words of text after normalization (lowercased, accents dropped, punctuation split off),
// as UTF-8, in order.
std::vector<std::string> wpm_split_words(std::string_view text);

// Covers one normalized word, appending its pieces (or the unknown token) to *out.
void wpm_tokenize_word(const vocab & v, std::string_view word, std::vector<int32_t> * out);

std::vector<int32_t> wpm_tokenize(const vocab & v, std::string_view text, bool add_special);

// The text of one token as it appears in output (see above); "" for an invalid id.
std::string wpm_token_to_piece(const vocab & v, int32_t id, bool render_special);

// False (and *error names the position and id) when an id is outside the vocabulary.
bool wpm_detokenize(const vocab & v, std::span<const int32_t> ids, std::string * out, std::string * error,
                    bool render_special = false, bool remove_leading_space = true);
