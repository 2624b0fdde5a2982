// tokenizer-wpm.cpp — WordPiece tokenization and detokenization (see engine/tokenizer-wpm.h).
#include "engine/tokenizer-wpm.h"

#include "unicode.h"

#include <algorithm>

namespace {

constexpr std::string_view k_word_start = "\xE2\x96\x81";  // U+2581 "▁", the mark of a word-initial piece

// CJK ideographs as BERT's basic tokenizer lists them (the unified blocks and their extensions,
// the compatibility ideographs); kana and Hangul are not among them.
bool wpm_is_cjk_ideograph(uint32_t cp) {
    return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) || (cp >= 0x20000 && cp <= 0x2A6DF) ||
           (cp >= 0x2A700 && cp <= 0x2B73F) || (cp >= 0x2B740 && cp <= 0x2B81F) || (cp >= 0x2B820 && cp <= 0x2CEAF) ||
           (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F);
}

// A character that is a word by itself: punctuation, an ASCII symbol or a CJK ideograph.
bool wpm_is_single_char_word(uint32_t cp) {
    const uint8_t flags = inferd::unicode::category_flags(cp);
    if (flags & inferd::unicode::flag_punctuation) return true;
    if (cp < 0x7F && (flags & inferd::unicode::flag_symbol)) return true;
    return wpm_is_cjk_ideograph(cp);
}

// Characters the basic tokenizer drops: NUL, the replacement character and control / format
// characters (whitespace is handled before).
bool wpm_is_dropped(uint32_t cp) {
    return cp == 0 || cp == 0xFFFD || (inferd::unicode::category_flags(cp) & inferd::unicode::flag_control);
}

bool wpm_is_matchable(const vocab & v, int32_t id) { return id >= 0 && !v.is_control(id); }

// BERT's decoder clean-up: the spaces its tokenization put before punctuation and contractions.
void wpm_clean_up_spaces(std::string * text) {
    static constexpr std::string_view k_rules[][2] = {
        {" .", "."},      {" ?", "?"},      {" !", "!"},      {" ,", ","},      {" ' ", "'"},
        {" n't", "n't"}, {" 'm", "'m"},   {" 's", "'s"},   {" 've", "'ve"}, {" 're", "'re"},
    };
    for (const auto & rule : k_rules) {
        const std::string_view from = rule[0], to = rule[1];
        if (text->find(from) == std::string::npos) continue;
        std::string out;
        out.reserve(text->size());
        size_t start = 0;
        size_t pos;
        while ((pos = text->find(from, start)) != std::string::npos) {
            out.append(*text, start, pos - start);
            out += to;
            start = pos + from.size();
        }
        out.append(*text, start, std::string::npos);
        *text = std::move(out);
    }
}

}  // namespace

std::vector<std::string> wpm_split_words(std::string_view text) {
    namespace uc = inferd::unicode;
    std::vector<std::string> words;
    std::string word;
    auto finish = [&] {
        if (!word.empty()) words.push_back(std::move(word));
        word.clear();
    };
    std::vector<uint32_t> folded;
    for (uint32_t cp : uc::utf8_decode(text)) {
        if (uc::is_whitespace(cp)) {
            finish();
            continue;
        }
        if (wpm_is_dropped(cp)) continue;
        folded.clear();
        uc::fold_lowercase_strip_accents(cp, &folded);
        for (uint32_t c : folded) {
            if (wpm_is_single_char_word(c)) {
                finish();
                uc::utf8_append(word, c);
                finish();
            } else {
                uc::utf8_append(word, c);
            }
        }
    }
    finish();
    return words;
}

void wpm_tokenize_word(const vocab & v, std::string_view word, std::vector<int32_t> * out) {
    if (word.empty()) return;
    std::string marked;
    marked.reserve(k_word_start.size() + word.size());
    marked += k_word_start;
    marked += word;
    const std::string_view w = marked;
    const size_t first_out = out->size();
    const size_t max_len = v.max_token_size();
    size_t i = 0;
    while (i < w.size()) {
        // The first piece must cover the whole "▁" mark and at least one byte of the word.
        const size_t min_end = i == 0 ? k_word_start.size() + 1 : i + 1;
        int32_t id = -1;
        size_t end = std::min(w.size(), i + max_len);
        for (; end >= min_end; --end) {
            id = v.token_id(w.substr(i, end - i));
            if (wpm_is_matchable(v, id)) break;
            id = -1;
        }
        if (id < 0) {  // not coverable: the whole word is unknown
            out->resize(first_out);
            if (v.unk_id() >= 0) out->push_back(v.unk_id());
            return;
        }
        out->push_back(id);
        i = end;
    }
}

std::vector<int32_t> wpm_tokenize(const vocab & v, std::string_view text, bool add_special) {
    std::vector<int32_t> out;
    if (add_special && v.add_bos() && v.bos_id() >= 0) out.push_back(v.bos_id());
    for (const std::string & word : wpm_split_words(text)) wpm_tokenize_word(v, word, &out);
    if (add_special && v.add_eos() && v.eos_id() >= 0) out.push_back(v.eos_id());
    return out;
}

std::string wpm_token_to_piece(const vocab & v, int32_t id, bool render_special) {
    if (!v.valid_id(id)) return {};
    switch (v.token_type(id)) {
        case vocab_token_type::control:
            return render_special ? v.token_text(id) : std::string();
        case vocab_token_type::unused:
            return {};
        default:
            break;
    }
    const std::string & t = v.token_text(id);
    if (t.compare(0, k_word_start.size(), k_word_start) != 0) return t;
    std::string out = " ";
    out.append(t, k_word_start.size(), std::string::npos);
    return out;
}

bool wpm_detokenize(const vocab & v, std::span<const int32_t> ids, std::string * out, std::string * error,
                    bool render_special, bool remove_leading_space) {
    out->clear();
    for (size_t i = 0; i < ids.size(); ++i) {
        if (!v.valid_id(ids[i])) {
            if (error) {
                *error = "detokenize: token " + std::to_string(ids[i]) + " at position " + std::to_string(i) +
                         " is outside the vocabulary (" + std::to_string(v.n_tokens()) + " tokens)";
            }
            return false;
        }
        *out += wpm_token_to_piece(v, ids[i], render_special);
    }
    if (remove_leading_space && !out->empty() && (*out)[0] == ' ') out->erase(0, 1);
    wpm_clean_up_spaces(out);
    return true;
}
