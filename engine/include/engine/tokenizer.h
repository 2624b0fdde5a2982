// engine/tokenizer.h — one tokenizer over a loaded vocabulary, whatever its kind.
//
// Usage:
//   vocab v; v.load(md, &err);
//   tokenizer tok;
//   if (!tok.init(v, &err)) { ... }                 // unsupported BPE pre-tokenizer, no vocab
//   std::vector<int32_t> ids = tok.tokenize("Hello", /*add_special=*/true, /*parse_special=*/false);
//   std::string piece = tok.token_to_piece(ids[1]);   // raw bytes (may be half a character)
//   std::string text;
//   if (!tok.detokenize(ids, &text, &err)) { ... }  // an id outside the vocabulary
//
// SentencePiece-style vocabularies (tokenizer.ggml.model "llama") use tokenizer-spm.h; byte-level
// BPE ("gpt2") uses tokenizer-bpe.h with the pre-tokenizer named by tokenizer.ggml.pre (an empty
// or "default" name means GPT-2's, and init() records a warning); WordPiece ("bert") uses
// tokenizer-wpm.h. add_special adds BOS and EOS as the vocabulary's add_bos / add_eos flags say
// (WordPiece: [CLS] and [SEP]). parse_special: control tokens are matched in the text (never for
// WordPiece, whose special names stay ordinary text). The vocab must outlive the tokenizer.
//
// BERT-style pairs (a cross-encoder's [CLS] query [SEP] document [SEP]): tokenize query and
// document with add_special = false and join them with get_vocab().cls_id() / sep_id().
#pragma once

#include "engine/tokenizer-bpe.h"
#include "engine/vocab.h"

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

class tokenizer {
public:
    // False with *error when the vocabulary has no tokenizer (type none) or names a BPE
    // pre-tokenizer that is not implemented.
    bool init(const vocab & v, std::string * error);

    const vocab & get_vocab() const { return *vocab_; }
    int32_t n_tokens() const { return vocab_ ? vocab_->n_tokens() : 0; }
    const std::vector<std::string> & warnings() const { return warnings_; }

    std::vector<int32_t> tokenize(std::string_view text, bool add_special, bool parse_special) const;
    // A cross-encoder's input: [CLS] query [SEP] document [SEP], the two tokenized apart without
    // special tokens (BOS and EOS in place of [CLS] and [SEP] when the vocabulary has none).
    std::vector<int32_t> tokenize_pair(std::string_view query, std::string_view document) const;
    // The same from tokens already tokenized without special tokens (a query shared by many
    // documents is tokenized once).
    std::vector<int32_t> join_pair(std::span<const int32_t> query, std::span<const int32_t> document) const;
    // The bytes one token contributes to the output (control tokens: "" unless render_special).
    // SPM pieces keep their leading space (no leading-space removal for a single piece).
    std::string token_to_piece(int32_t id, bool render_special = false) const;
    // False (and *error naming the position and the id) for an id outside the vocabulary.
    // remove_leading_space: SPM and WordPiece, drop the space the tokenizer added before the
    // first word.
    bool detokenize(std::span<const int32_t> ids, std::string * out, std::string * error,
                    bool render_special = false, bool remove_leading_space = true) const;

private:
    const vocab * vocab_ = nullptr;
    inferd::bpe_tokenizer bpe_;
    std::vector<std::string> warnings_;
};
