// engine/vocab.h — a tokenizer vocabulary loaded from a GGUF file's `tokenizer.ggml.*` keys.
//
// Usage:
//   vocab v;
//   std::string err;
//   if (!v.load_file("model.gguf", &err)) { fprintf(stderr, "%s\n", err.c_str()); return 1; }
//   // or v.load(gguf->metadata(), &err) for an already opened file
//   int32_t id = v.token_id("▁the");          // -1 when absent
//   const std::string & text = v.token_text(id);
//   int rank = v.merge_rank(left_id, right_id);  // BPE: lower merges first, -1 = no merge
//   int32_t b = v.byte_token(0x0A);          // token of one raw byte (SPM <0x0A>, BPE "Ċ")
//
// Keys read: tokenizer.ggml.model (required: "llama" → SentencePiece-style, "gpt2" → byte-level
// BPE, "bert" → WordPiece, "no_vocab" / "none" → no tokenizer), tokenizer.ggml.pre,
// tokenizer.ggml.tokens (required), tokenizer.ggml.scores, tokenizer.ggml.token_type,
// tokenizer.ggml.merges (BPE),
// tokenizer.ggml.{bos,eos,unknown,padding,seperator/separator,eot,cls,mask}_token_id,
// tokenizer.ggml.add_bos_token, tokenizer.ggml.add_eos_token, tokenizer.ggml.add_space_prefix,
// general.name (see below). Array lengths that disagree, ids out of range, merges naming unknown
// tokens: load() fails with a message naming the key. A vocab is immutable after load(): usable
// from any thread.
//
// Rules the files do not spell out, applied at load as the reference engine applies them:
// - End of generation: eos, eot, and every token whose text is one of the family end-of-turn
//   markers (<|im_end|>, <|eot_id|>, <|end|>, <end_of_turn>, <|endoftext|>, </s>, <eos>, …; see
//   vocab.cpp) stop generation (is_eog, eog_ids). Such a token is made a control token when the
//   file says otherwise (Phi-3 stores </s> as user-defined): a control token is matched in text
//   only when special tokens are parsed, so plain text that spells it stays plain text.
// - eot_id: tokenizer.ggml.eot_token_id, else the first of <|eot_id|>, <|im_end|>, <|end|>,
//   <end_of_turn>, <|endoftext|>, … found in the vocabulary.
// - WordPiece ("bert"): the special ids default to BERT's ([PAD] 0, [UNK] 100, [CLS] 101,
//   [SEP] 102, [MASK] 103) where the file names none. A text is [CLS] pieces [SEP]: bos_id() is
//   the [CLS] id and eos_id() the [SEP] id (the same as cls_id() and sep_id()), and add_bos() and
//   add_eos() are true, so that tokenize(text, add_special = true) adds them; [SEP] thereby
//   counts as end of generation.
// - Phi-3 (general.name containing "phi-3" or "phi3", any case): whitespace right after a matched
//   special token is dropped (vocab_token::rstrip), except after <unk>, <s> and <|endoftext|>.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

class gguf_metadata;

enum class vocab_type {
    none,  // no tokenizer in the file
    spm,   // SentencePiece-style (tokenizer.ggml.model = "llama")
    bpe,   // byte-level BPE (tokenizer.ggml.model = "gpt2")
    wpm,   // WordPiece (tokenizer.ggml.model = "bert"; engine/tokenizer-wpm.h)
};

// Token attribute as stored in tokenizer.ggml.token_type.
enum class vocab_token_type : int32_t {
    undefined = 0,
    normal = 1,
    unknown = 2,
    control = 3,
    user_defined = 4,
    unused = 5,
    byte = 6,
};

struct vocab_token {
    std::string text;
    float score = 0.0f;
    vocab_token_type type = vocab_token_type::normal;
    // When this special token is matched in text, the whitespace before it (lstrip) / after it
    // (rstrip) is dropped from the neighbouring plain text.
    bool lstrip = false;
    bool rstrip = false;
};

// Hash for heterogeneous (std::string_view) lookups in string-keyed maps.
struct vocab_string_hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

class vocab {
public:
    vocab();

    // Loads from metadata; false with *error naming the key/problem. Replaces any prior content.
    bool load(const gguf_metadata & md, std::string * error);
    bool load_file(const std::string & path, std::string * error);

    vocab_type type() const { return type_; }
    const std::string & model_name() const { return model_; }  // "llama", "gpt2", …
    const std::string & pre() const { return pre_; }           // pre-tokenizer name ("" if none)

    int32_t n_tokens() const { return (int32_t) tokens_.size(); }
    bool valid_id(int32_t id) const { return id >= 0 && id < n_tokens(); }
    const vocab_token & token(int32_t id) const { return tokens_[(size_t) id]; }  // valid_id(id)
    const std::string & token_text(int32_t id) const { return tokens_[(size_t) id].text; }
    float token_score(int32_t id) const { return tokens_[(size_t) id].score; }
    vocab_token_type token_type(int32_t id) const { return tokens_[(size_t) id].type; }
    bool is_control(int32_t id) const { return token_type(id) == vocab_token_type::control; }
    bool is_byte(int32_t id) const { return token_type(id) == vocab_token_type::byte; }
    // Control and user-defined tokens. User-defined tokens are matched verbatim in any text;
    // control (and unknown) tokens only where special tokens are parsed.
    bool is_special(int32_t id) const;

    int32_t token_id(std::string_view text) const;  // -1 when absent
    // The longest token text, in bytes.
    size_t max_token_size() const { return max_token_size_; }

    // The token standing for one raw byte: SPM "<0xXX>"; BPE the GPT-2 byte-to-unicode character
    // of that byte. -1 when the vocabulary has none.
    int32_t byte_token(uint8_t b) const { return byte_tokens_[b]; }
    // For a byte token (SPM "<0xXX>"), its byte; -1 for other tokens.
    int token_byte(int32_t id) const;

    // BPE merges: rank of merging the pair (lower merges first), -1 when not a merge.
    int merge_rank(int32_t left, int32_t right) const;
    int merge_rank(std::string_view left, std::string_view right) const;
    size_t n_merges() const { return merge_ranks_.size(); }

    // Special token ids (-1 when absent).
    int32_t bos_id() const { return bos_; }
    int32_t eos_id() const { return eos_; }
    int32_t eot_id() const { return eot_; }  // end of turn (see above: found by text when no key)
    int32_t unk_id() const { return unk_; }
    int32_t pad_id() const { return pad_; }
    int32_t sep_id() const { return sep_; }
    int32_t cls_id() const { return cls_; }    // WordPiece: [CLS], the first token of a text
    int32_t mask_id() const { return mask_; }
    bool add_bos() const { return add_bos_; }
    bool add_eos() const { return add_eos_; }
    bool add_space_prefix() const { return add_space_prefix_; }
    // End-of-generation tokens (see above): generation stops when the model produces one.
    bool is_eog(int32_t id) const;
    const std::vector<int32_t> & eog_ids() const { return eog_; }  // ascending ids

    // The tokens matched verbatim in text (control, user-defined and unknown tokens with a
    // non-empty text), longest text first: the order to match them in.
    const std::vector<int32_t> & special_tokens() const { return special_by_length_; }

private:
    vocab_type type_ = vocab_type::none;
    std::string model_;
    std::string pre_;
    std::vector<vocab_token> tokens_;
    std::unordered_map<std::string, int32_t, vocab_string_hash, std::equal_to<>> text_to_id_;
    std::unordered_map<uint64_t, int> merge_ranks_;  // (left << 32 | right) -> rank
    int32_t byte_tokens_[256];  // -1 where absent
    std::vector<int32_t> special_by_length_;
    std::vector<int32_t> eog_;
    int32_t bos_ = -1, eos_ = -1, eot_ = -1, unk_ = -1, pad_ = -1, sep_ = -1, cls_ = -1, mask_ = -1;
    size_t max_token_size_ = 0;
    bool add_bos_ = false, add_eos_ = false, add_space_prefix_ = false;

    bool load_tokens(const gguf_metadata & md, std::string * error);
    bool load_merges(const gguf_metadata & md, std::string * error);
    bool load_special_ids(const gguf_metadata & md, std::string * error);
    void build_lookups();
    void build_eog();
    void apply_name_rules(const gguf_metadata & md);
};

// GPT-2's byte-level mapping: every byte to one printable Unicode code point (as UTF-8), and back
// (-1 for a code point that is no byte's image).
const std::string & vocab_byte_to_unicode(uint8_t b);
int vocab_unicode_to_byte(uint32_t codepoint);

// UTF-8 helpers shared by the tokenizers. Length of the sequence starting with byte `c`
// (1 for invalid lead bytes, so that scanning always advances).
size_t vocab_utf8_len(uint8_t c);
