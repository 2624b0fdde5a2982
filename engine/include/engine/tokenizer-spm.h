// engine/tokenizer-spm.h — the SentencePiece-style tokenizer (tokenizer.ggml.model = "llama").
//
// Usage:
//   std::vector<int32_t> ids = spm_tokenize(v, "Hello world", /*add_special=*/true,
//                                           /*parse_special=*/false);
//   std::string text;
//   std::string err;
//   if (!spm_detokenize(v, ids, &text, &err)) { ... }   // an id outside the vocabulary
//
// Tokenizing: the text is first split around special tokens (tokenizer_split_special); each
// plain-text fragment gets a leading space when the vocabulary says add_space_prefix and the
// fragment starts the text or follows a special token, every space becomes U+2581 ("▁"), and
// the fragment is segmented by repeatedly merging the adjacent pair whose concatenation is a
// token with the highest score (ties: the leftmost pair), starting from single UTF-8
// characters. A character that is no token comes out as byte tokens <0xXX> (the unknown token
// when the vocabulary lacks one). add_special adds BOS / EOS as the vocabulary asks.
//
// Detokenizing: "▁" becomes a space, byte tokens become their bytes (reassembled into UTF-8
// characters by concatenation), control tokens render as nothing unless render_special, the
// unknown token as U+2585. With add_space_prefix, the single leading space of the first piece
// of text is removed (remove_leading_space) — the inverse of the prefix added when tokenizing.
#pragma once

#include "engine/vocab.h"

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

// A piece of input text: either a special token (token >= 0) or plain text (token == -1).
struct tokenizer_fragment {
    int32_t token = -1;
    std::string_view text;  // points into the input (the matched token text for a special token)
};

// Splits text around special tokens, longest match first. User-defined tokens are always
// matched (they are ordinary added words); control tokens (<s>, <|im_start|>, …) and unknown
// tokens (<unk>) only when parse_special. Around a matched token with lstrip / rstrip
// (vocab_token) the whitespace before / after it is dropped. Fragments refer into `text`; empty
// plain-text fragments are dropped.
std::vector<tokenizer_fragment> tokenizer_split_special(const vocab & v, std::string_view text,
                                                        bool parse_special);

// Segments one plain-text fragment (already escaped: spaces as "▁"), appending ids to *out.
void spm_tokenize_fragment(const vocab & v, std::string_view escaped, std::vector<int32_t> * out);

std::vector<int32_t> spm_tokenize(const vocab & v, std::string_view text, bool add_special,
                                  bool parse_special);

// The text of one token as it appears in output (see above); "" for an invalid id.
std::string spm_token_to_piece(const vocab & v, int32_t id, bool render_special);

// False (and *error names the position and id) when an id is outside the vocabulary.
bool spm_detokenize(const vocab & v, std::span<const int32_t> ids, std::string * out,
                    std::string * error, bool render_special = false,
                    bool remove_leading_space = true);
