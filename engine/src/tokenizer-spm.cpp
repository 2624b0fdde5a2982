// tokenizer-spm.cpp — SentencePiece-style tokenization and detokenization (see
// engine/tokenizer-spm.h).
#include "engine/tokenizer-spm.h"

#include <queue>

namespace {

constexpr std::string_view k_space_escape = "\xE2\x96\x81";  // U+2581 "▁"

// One symbol of the fragment being merged: a byte range of the escaped text, linked to its
// neighbours. A symbol merged into its left neighbour gets len 0.
struct spm_symbol {
    int prev;
    int next;
    size_t off;
    size_t len;
};

struct spm_bigram {
    float score;
    int left;
    int right;
    size_t len;  // left.len + right.len when queued: stale entries are recognised by it
};

struct spm_bigram_order {
    bool operator()(const spm_bigram & a, const spm_bigram & b) const {
        // priority_queue pops the greatest: highest score first, then the leftmost pair.
        return a.score < b.score || (a.score == b.score && a.left > b.left);
    }
};

class spm_merger {
public:
    spm_merger(const vocab & v, std::string_view text) : v_(v), text_(text) {}

    void run(std::vector<int32_t> * out) {
        split_chars();
        for (int i = 1; i < (int) symbols_.size(); ++i) try_add(i - 1, i);
        while (!queue_.empty()) {
            const spm_bigram b = queue_.top();
            queue_.pop();
            spm_symbol & l = symbols_[(size_t) b.left];
            spm_symbol & r = symbols_[(size_t) b.right];
            if (l.len == 0 || r.len == 0 || l.len + r.len != b.len) continue;  // stale
            l.len += r.len;
            r.len = 0;
            l.next = r.next;
            if (r.next >= 0) symbols_[(size_t) r.next].prev = b.left;
            try_add(l.prev, b.left);
            try_add(b.left, l.next);
        }
        emit(out);
    }

private:
    const vocab & v_;
    std::string_view text_;
    std::vector<spm_symbol> symbols_;
    std::priority_queue<spm_bigram, std::vector<spm_bigram>, spm_bigram_order> queue_;

    void split_chars() {
        symbols_.reserve(text_.size());
        size_t off = 0;
        while (off < text_.size()) {
            const size_t len = std::min(vocab_utf8_len((uint8_t) text_[off]), text_.size() - off);
            const int idx = (int) symbols_.size();
            symbols_.push_back({idx - 1, off + len < text_.size() ? idx + 1 : -1, off, len});
            off += len;
        }
    }

    void try_add(int left, int right) {
        if (left < 0 || right < 0) return;
        const spm_symbol & l = symbols_[(size_t) left];
        const spm_symbol & r = symbols_[(size_t) right];
        const int32_t id = v_.token_id(text_.substr(l.off, l.len + r.len));
        if (id < 0) return;
        queue_.push({v_.token_score(id), left, right, l.len + r.len});
    }

    void emit(std::vector<int32_t> * out) const {
        for (int i = symbols_.empty() ? -1 : 0; i >= 0; i = symbols_[(size_t) i].next) {
            const spm_symbol & s = symbols_[(size_t) i];
            const int32_t id = v_.token_id(text_.substr(s.off, s.len));
            if (id >= 0) {
                out->push_back(id);
                continue;
            }
            for (size_t j = 0; j < s.len; ++j) {  // byte fallback
                const int32_t b = v_.byte_token((uint8_t) text_[s.off + j]);
                if (b >= 0) {
                    out->push_back(b);
                } else if (v_.unk_id() >= 0) {
                    out->push_back(v_.unk_id());
                }
            }
        }
    }
};

bool spm_is_space(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

// Splits every plain fragment of *frags at the occurrences of special token `id`. A token with
// lstrip / rstrip takes the whitespace before / after it away from the neighbouring text.
void split_on_token(const vocab & v, int32_t id, std::vector<tokenizer_fragment> * frags) {
    const vocab_token & tok = v.token(id);
    std::vector<tokenizer_fragment> result;
    bool changed = false;
    for (const tokenizer_fragment & f : *frags) {
        if (f.token >= 0 || f.text.find(tok.text) == std::string_view::npos) {
            result.push_back(f);
            continue;
        }
        changed = true;
        size_t start = 0;
        size_t pos;
        while ((pos = f.text.find(tok.text, start)) != std::string_view::npos) {
            size_t left_end = pos;
            if (tok.lstrip) {
                while (left_end > start && spm_is_space(f.text[left_end - 1])) --left_end;
            }
            if (left_end > start) result.push_back({-1, f.text.substr(start, left_end - start)});
            result.push_back({id, f.text.substr(pos, tok.text.size())});
            start = pos + tok.text.size();
            if (tok.rstrip) {
                while (start < f.text.size() && spm_is_space(f.text[start])) ++start;
            }
        }
        if (start < f.text.size()) result.push_back({-1, f.text.substr(start)});
    }
    if (changed) *frags = std::move(result);
}

}  // namespace

std::vector<tokenizer_fragment> tokenizer_split_special(const vocab & v, std::string_view text,
                                                        bool parse_special) {
    std::vector<tokenizer_fragment> frags;
    if (text.empty()) return frags;
    frags.push_back({-1, text});
    for (int32_t id : v.special_tokens()) {
        if (!parse_special && v.token_type(id) != vocab_token_type::user_defined) continue;
        split_on_token(v, id, &frags);
    }
    return frags;
}

void spm_tokenize_fragment(const vocab & v, std::string_view escaped, std::vector<int32_t> * out) {
    if (escaped.empty()) return;
    spm_merger(v, escaped).run(out);
}

std::vector<int32_t> spm_tokenize(const vocab & v, std::string_view text, bool add_special,
                                  bool parse_special) {
    std::vector<int32_t> out;
    if (add_special && v.add_bos() && v.bos_id() >= 0) out.push_back(v.bos_id());
    bool prev_special = true;  // the start of the text counts as following a special token
    std::string escaped;
    for (const tokenizer_fragment & f : tokenizer_split_special(v, text, parse_special)) {
        if (f.token >= 0) {
            out.push_back(f.token);
            prev_special = true;
            continue;
        }
        escaped.clear();
        escaped.reserve(f.text.size() + 8);
        if (v.add_space_prefix() && prev_special) escaped += k_space_escape;
        for (char c : f.text) {
            if (c == ' ') {
                escaped += k_space_escape;
            } else {
                escaped += c;
            }
        }
        spm_tokenize_fragment(v, escaped, &out);
        prev_special = false;
    }
    if (add_special && v.add_eos() && v.eos_id() >= 0) out.push_back(v.eos_id());
    return out;
}

std::string spm_token_to_piece(const vocab & v, int32_t id, bool render_special) {
    if (!v.valid_id(id)) return {};
    switch (v.token_type(id)) {
        case vocab_token_type::byte: {
            const int b = v.token_byte(id);
            return b >= 0 ? std::string(1, (char) b) : v.token_text(id);
        }
        case vocab_token_type::control:
            return render_special ? v.token_text(id) : std::string();
        case vocab_token_type::unknown:
            return "\xE2\x96\x85";  // U+2585, as SentencePiece shows an unknown piece
        case vocab_token_type::user_defined:
            return v.token_text(id);
        case vocab_token_type::unused:
            return {};
        case vocab_token_type::normal:
        case vocab_token_type::undefined:
            break;
    }
    const std::string & t = v.token_text(id);
    std::string out;
    out.reserve(t.size());
    for (size_t i = 0; i < t.size();) {
        if (t.compare(i, k_space_escape.size(), k_space_escape) == 0) {
            out += ' ';
            i += k_space_escape.size();
        } else {
            out += t[i++];
        }
    }
    return out;
}

bool spm_detokenize(const vocab & v, std::span<const int32_t> ids, std::string * out,
                    std::string * error, bool render_special, bool remove_leading_space) {
    out->clear();
    bool strip = remove_leading_space && v.add_space_prefix();
    for (size_t i = 0; i < ids.size(); ++i) {
        if (!v.valid_id(ids[i])) {
            if (error) {
                *error = "detokenize: token " + std::to_string(ids[i]) + " at position " +
                         std::to_string(i) + " is outside the vocabulary (" +
                         std::to_string(v.n_tokens()) + " tokens)";
            }
            return false;
        }
        std::string piece = spm_token_to_piece(v, ids[i], render_special);
        if (piece.empty()) continue;
        if (strip && piece[0] == ' ') piece.erase(0, 1);
        strip = false;
        *out += piece;
    }
    return true;
}
