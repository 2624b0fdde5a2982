// engine/tokenizer-bpe.h — byte-level BPE (GPT-2 style) tokenizer with its pre-tokenizers.
//
// Text is split by the pre-tokenizer (hand-written scanners for each model family's split
// pattern), each piece's bytes are mapped to GPT-2's printable byte alphabet, and adjacent
// symbols are merged by merge rank; the final symbols are looked up in the vocabulary.
//
//   inferd::bpe_tokenizer tok;
//   std::string err;
//   if (!tok.init(tokens, merges, inferd::bpe_pre_type::gpt2, &err)) { ... }
//   std::vector<int32_t> ids = tok.encode("Hello world");
//   std::string text = tok.decode(ids);
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

class vocab;

namespace inferd {

enum class bpe_pre_type {
    gpt2,       // "gpt-2" (also "mpt", which uses the same pattern)
    llama3,     // "llama-bpe": case-insensitive contractions, digits in groups of 1-3
    qwen2,      // "qwen2": as llama-bpe with single digits
    starcoder,  // "starcoder": every digit alone, then the gpt-2 pattern
    falcon,     // "falcon": punctuation runs, then the gpt-2 pattern, then 3-digit groups
    deepseek_llm,  // "deepseek-llm": newlines, script letter runs, punctuation, CJK, numbers
};

// The pre-tokenizer of a `tokenizer.ggml.pre` value; false for names not implemented here.
bool bpe_pre_type_from_name(std::string_view name, bpe_pre_type * out);

class bpe_tokenizer {
public:
    // tokens: the vocabulary in GPT-2's byte alphabet (tokenizer.ggml.tokens); merges: "left
    // right" in rank order (tokenizer.ggml.merges); token_types: tokenizer.ggml.token_type, may
    // be empty (3 = control tokens, which decode to nothing unless asked). Returns false with a
    // message on inconsistent data.
    bool init(const std::vector<std::string> & tokens, const std::vector<std::string> & merges,
              bpe_pre_type pre, std::string * err, const std::vector<int32_t> & token_types = {});

    // From a loaded byte-level BPE vocabulary (vocab_type::bpe): its tokens and token types,
    // its pre-tokenizer name (false for one not implemented here), and its merge ranks, which
    // are looked up in v (v must outlive this tokenizer).
    bool init(const ::vocab & v, std::string * err);
    // Same with the pre-tokenizer given (for a vocabulary whose tokenizer.ggml.pre is missing).
    bool init(const ::vocab & v, bpe_pre_type pre, std::string * err);

    // Tokenizes text; no BOS/EOS. User-defined tokens (type 4) are always matched verbatim,
    // control (type 3) and unknown (type 2) tokens only when parse_special is true (longest
    // token text first).
    std::vector<int32_t> encode(std::string_view text, bool parse_special = false) const;
    // The pre-tokens of text, as UTF-8 strings (for tests and diagnostics).
    std::vector<std::string> pre_tokenize(std::string_view text) const;

    // The raw bytes of one token (may be part of a UTF-8 character); empty for an invalid id,
    // and for a control token unless special is true.
    std::string token_to_piece(int32_t id, bool special = false) const;
    std::string decode(std::span<const int32_t> ids, bool special = false) const;

    size_t n_tokens() const { return tokens_.size(); }
    int32_t token_id(std::string_view text) const;  // -1 when absent (text in byte alphabet)
    bpe_pre_type pre_type() const { return pre_; }

private:
    void encode_piece(std::string_view piece, std::vector<int32_t> & out) const;
    void encode_plain(std::string_view text, std::vector<int32_t> & out) const;
    int merge_rank(const std::string & left, const std::string & right) const;
    void merge_symbols(std::vector<std::string> & syms) const;

    bpe_pre_type pre_ = bpe_pre_type::gpt2;
    const ::vocab * vocab_ = nullptr;  // merge ranks come from here when set
    std::vector<std::string> tokens_;
    std::vector<int32_t> types_;
    std::vector<std::string> pieces_;  // decoded bytes of each token
    std::vector<int32_t> specials_;    // control + user-defined tokens, longest piece first
    std::unordered_map<std::string, int32_t> token_ids_;
    std::unordered_map<std::string, int32_t> merge_ranks_;  // "left right" -> rank
};

}  // namespace inferd
