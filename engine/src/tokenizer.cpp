// The tokenizer facade: dispatch to the SentencePiece-style, byte-level BPE or WordPiece tokenizer.
#include "engine/tokenizer.h"

#include "engine/tokenizer-spm.h"
#include "engine/tokenizer-wpm.h"

bool tokenizer::init(const vocab & v, std::string * error) {
    vocab_ = &v;
    warnings_.clear();
    switch (v.type()) {
        case vocab_type::spm:
        case vocab_type::wpm: return true;
        case vocab_type::none:
            if (error) *error = "tokenizer: the model has no vocabulary (tokenizer.ggml.model is none)";
            return false;
        case vocab_type::bpe: break;
    }
    if (v.pre().empty() || v.pre() == "default") {
        warnings_.push_back("tokenizer.ggml.pre is " + (v.pre().empty() ? std::string("missing") : "'default'") +
                            ": using the GPT-2 pre-tokenizer");
        return bpe_.init(v, inferd::bpe_pre_type::gpt2, error);
    }
    return bpe_.init(v, error);
}

std::vector<int32_t> tokenizer::tokenize(std::string_view text, bool add_special, bool parse_special) const {
    if (!vocab_) return {};
    if (vocab_->type() == vocab_type::spm) return spm_tokenize(*vocab_, text, add_special, parse_special);
    if (vocab_->type() == vocab_type::wpm) return wpm_tokenize(*vocab_, text, add_special);
    std::vector<int32_t> ids;
    if (add_special && vocab_->add_bos() && vocab_->bos_id() >= 0) ids.push_back(vocab_->bos_id());
    std::vector<int32_t> body = bpe_.encode(text, parse_special);
    ids.insert(ids.end(), body.begin(), body.end());
    if (add_special && vocab_->add_eos() && vocab_->eos_id() >= 0) ids.push_back(vocab_->eos_id());
    return ids;
}

std::vector<int32_t> tokenizer::tokenize_pair(std::string_view query, std::string_view document) const {
    return join_pair(tokenize(query, false, false), tokenize(document, false, false));
}

std::vector<int32_t> tokenizer::join_pair(std::span<const int32_t> query, std::span<const int32_t> document) const {
    if (!vocab_) return {};
    const int32_t first = vocab_->cls_id() >= 0 ? vocab_->cls_id() : vocab_->bos_id();
    const int32_t sep = vocab_->sep_id() >= 0 ? vocab_->sep_id() : vocab_->eos_id();
    std::vector<int32_t> ids;
    ids.reserve(query.size() + document.size() + 3);
    if (first >= 0) ids.push_back(first);
    ids.insert(ids.end(), query.begin(), query.end());
    if (sep >= 0) ids.push_back(sep);
    ids.insert(ids.end(), document.begin(), document.end());
    if (sep >= 0) ids.push_back(sep);
    return ids;
}

std::string tokenizer::token_to_piece(int32_t id, bool render_special) const {
    if (!vocab_ || !vocab_->valid_id(id)) return {};
    if (vocab_->type() == vocab_type::spm) return spm_token_to_piece(*vocab_, id, render_special);
    if (vocab_->type() == vocab_type::wpm) return wpm_token_to_piece(*vocab_, id, render_special);
    return bpe_.token_to_piece(id, render_special);
}

bool tokenizer::detokenize(std::span<const int32_t> ids, std::string * out, std::string * error,
                           bool render_special, bool remove_leading_space) const {
    out->clear();
    if (!vocab_) {
        if (error) *error = "detokenize: no vocabulary";
        return false;
    }
    if (vocab_->type() == vocab_type::spm) {
        return spm_detokenize(*vocab_, ids, out, error, render_special, remove_leading_space);
    }
    if (vocab_->type() == vocab_type::wpm) {
        return wpm_detokenize(*vocab_, ids, out, error, render_special, remove_leading_space);
    }
    for (size_t i = 0; i < ids.size(); ++i) {
        if (!vocab_->valid_id(ids[i])) {
            if (error) {
                *error = "detokenize: token " + std::to_string(ids[i]) + " at position " + std::to_string(i) +
                         " is outside the vocabulary (0.." + std::to_string(vocab_->n_tokens() - 1) + ")";
            }
            return false;
        }
    }
    *out = bpe_.decode(ids, render_special);
    return true;
}
