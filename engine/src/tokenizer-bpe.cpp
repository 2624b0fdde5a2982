// engine/src/tokenizer-bpe.cpp — byte-level BPE: pre-tokenize, map bytes to GPT-2's alphabet,
// merge by rank, look up; and the reverse for detokenization.
#include "engine/tokenizer-bpe.h"

#include <algorithm>
#include <climits>
#include <functional>
#include <queue>

#include "engine/vocab.h"
#include "unicode.h"

namespace inferd {

namespace {

constexpr int32_t k_token_type_unknown = 2;
constexpr int32_t k_token_type_control = 3;
constexpr int32_t k_token_type_user_defined = 4;

// Decodes a token's text in GPT-2's byte alphabet back to bytes; code points outside the
// alphabet (user-defined tokens) are kept as their UTF-8.
std::string token_text_to_bytes(const std::string & text) {
    std::string out;
    for (uint32_t cp : unicode::utf8_decode(text)) {
        const int b = unicode::codepoint_to_byte(cp);
        if (b >= 0) {
            out.push_back(static_cast<char>(b));
        } else {
            unicode::utf8_append(out, cp);
        }
    }
    return out;
}

}  // namespace

bool bpe_pre_type_from_name(std::string_view name, bpe_pre_type * out) {
    if (name == "gpt-2" || name == "gpt2" || name == "mpt") {
        *out = bpe_pre_type::gpt2;
    } else if (name == "llama-bpe" || name == "llama3") {
        *out = bpe_pre_type::llama3;
    } else if (name == "qwen2") {
        *out = bpe_pre_type::qwen2;
    } else if (name == "starcoder") {
        *out = bpe_pre_type::starcoder;
    } else if (name == "deepseek-llm") {
        *out = bpe_pre_type::deepseek_llm;
    } else if (name == "falcon") {
        *out = bpe_pre_type::falcon;
    } else {
        return false;
    }
    return true;
}

bool bpe_tokenizer::init(const std::vector<std::string> & tokens,
                         const std::vector<std::string> & merges, bpe_pre_type pre,
                         std::string * err, const std::vector<int32_t> & token_types) {
    if (tokens.empty() || tokens.size() > static_cast<size_t>(INT32_MAX)) {
        if (err) *err = "bpe tokenizer: empty or oversized vocabulary";
        return false;
    }
    if (!token_types.empty() && token_types.size() != tokens.size()) {
        if (err) *err = "bpe tokenizer: token_type has " + std::to_string(token_types.size()) +
                        " entries for " + std::to_string(tokens.size()) + " tokens";
        return false;
    }
    pre_ = pre;
    vocab_ = nullptr;
    tokens_ = tokens;
    types_ = token_types;
    pieces_.clear();
    pieces_.reserve(tokens.size());
    token_ids_.clear();
    token_ids_.reserve(tokens.size());
    for (size_t i = 0; i < tokens.size(); i++) {
        pieces_.push_back(token_text_to_bytes(tokens[i]));
        token_ids_.emplace(tokens[i], static_cast<int32_t>(i));  // first occurrence wins
    }
    specials_.clear();
    for (size_t i = 0; i < types_.size(); i++) {
        const bool special = types_[i] == k_token_type_control || types_[i] == k_token_type_user_defined ||
                             types_[i] == k_token_type_unknown;
        if (special && !pieces_[i].empty()) specials_.push_back(static_cast<int32_t>(i));
    }
    std::stable_sort(specials_.begin(), specials_.end(), [this](int32_t a, int32_t b) {
        return pieces_[static_cast<size_t>(a)].size() > pieces_[static_cast<size_t>(b)].size();
    });
    merge_ranks_.clear();
    merge_ranks_.reserve(merges.size());
    for (size_t i = 0; i < merges.size(); i++) {
        const std::string & m = merges[i];
        const size_t sp = m.find(' ', 1);
        if (sp == std::string::npos || sp + 1 >= m.size()) {
            if (err) *err = "bpe tokenizer: malformed merge " + std::to_string(i) + ": '" + m + "'";
            return false;
        }
        merge_ranks_.emplace(m, static_cast<int32_t>(i));
    }
    return true;
}

bool bpe_tokenizer::init(const ::vocab & v, std::string * err) {
    if (v.type() != vocab_type::bpe) {
        if (err) *err = "bpe tokenizer: the vocabulary is not byte-level BPE";
        return false;
    }
    bpe_pre_type pre{};
    if (!bpe_pre_type_from_name(v.pre(), &pre)) {
        if (err) *err = "bpe tokenizer: unsupported pre-tokenizer '" + v.pre() + "'";
        return false;
    }
    return init(v, pre, err);
}

bool bpe_tokenizer::init(const ::vocab & v, bpe_pre_type pre, std::string * err) {
    if (v.type() != vocab_type::bpe) {
        if (err) *err = "bpe tokenizer: the vocabulary is not byte-level BPE";
        return false;
    }
    std::vector<std::string> tokens;
    std::vector<int32_t> types;
    tokens.reserve(static_cast<size_t>(v.n_tokens()));
    types.reserve(static_cast<size_t>(v.n_tokens()));
    for (int32_t i = 0; i < v.n_tokens(); i++) {
        tokens.push_back(v.token_text(i));
        types.push_back(static_cast<int32_t>(v.token_type(i)));
    }
    if (!init(tokens, {}, pre, err, types)) return false;
    vocab_ = &v;
    return true;
}

int32_t bpe_tokenizer::token_id(std::string_view text) const {
    auto it = token_ids_.find(std::string(text));
    return it == token_ids_.end() ? -1 : it->second;
}

int bpe_tokenizer::merge_rank(const std::string & left, const std::string & right) const {
    if (vocab_) {
        const int r = vocab_->merge_rank(std::string_view(left), std::string_view(right));
        return r < 0 ? INT_MAX : r;
    }
    std::string key;
    key.reserve(left.size() + right.size() + 1);
    key.append(left).push_back(' ');
    key.append(right);
    auto it = merge_ranks_.find(key);
    return it == merge_ranks_.end() ? INT_MAX : it->second;
}

// Applies the merges to syms, lowest rank first and leftmost first among equal ranks, until none
// applies. The candidate pairs wait in a heap and the symbols form a linked list, so a piece of n
// symbols costs O(n log n) rank lookups rather than one rescan of every pair after each merge
// (a long word in a prompt would otherwise take seconds to tokenize).
void bpe_tokenizer::merge_symbols(std::vector<std::string> & syms) const {
    const size_t n = syms.size();
    if (n < 2) return;
    struct candidate {
        int rank;
        size_t left, right, bytes;  // bytes: the pair's size when it was queued
        bool operator>(const candidate & o) const { return rank != o.rank ? rank > o.rank : left > o.left; }
    };
    constexpr size_t none = static_cast<size_t>(-1);
    std::vector<size_t> prev(n), next(n);
    for (size_t i = 0; i < n; i++) {
        prev[i] = i == 0 ? none : i - 1;
        next[i] = i + 1 == n ? none : i + 1;
    }
    std::priority_queue<candidate, std::vector<candidate>, std::greater<candidate>> queue;
    auto offer = [&](size_t l, size_t r) {
        if (l == none || r == none) return;
        const int rank = merge_rank(syms[l], syms[r]);
        if (rank != INT_MAX) queue.push({rank, l, r, syms[l].size() + syms[r].size()});
    };
    for (size_t i = 0; i + 1 < n; i++) offer(i, i + 1);
    std::vector<bool> alive(n, true);
    while (!queue.empty()) {
        const candidate c = queue.top();
        queue.pop();
        // Stale: one side was merged away, or grew by a merge since the pair was queued.
        if (!alive[c.left] || next[c.left] != c.right || syms[c.left].size() + syms[c.right].size() != c.bytes) continue;
        syms[c.left] += syms[c.right];
        syms[c.right].clear();
        alive[c.right] = false;
        next[c.left] = next[c.right];
        if (next[c.left] != none) prev[next[c.left]] = c.left;
        offer(prev[c.left], c.left);
        offer(c.left, next[c.left]);
    }
    size_t kept = 0;
    for (size_t i = 0; i < n; i++) {
        if (!alive[i]) continue;
        if (kept != i) syms[kept] = std::move(syms[i]);
        kept++;
    }
    syms.resize(kept);
}

void bpe_tokenizer::encode_piece(std::string_view piece, std::vector<int32_t> & out) const {
    std::vector<std::string> syms;
    syms.reserve(piece.size());
    std::string whole;
    for (char ch : piece) {
        std::string s;
        unicode::utf8_append(s, unicode::byte_to_codepoint(static_cast<uint8_t>(ch)));
        whole += s;
        syms.push_back(std::move(s));
    }
    if (pre_ == bpe_pre_type::llama3) {  // llama-bpe: a piece that is a token is taken whole
        auto it = token_ids_.find(whole);
        if (it != token_ids_.end()) {
            out.push_back(it->second);
            return;
        }
    }
    merge_symbols(syms);
    for (const std::string & s : syms) {
        auto it = token_ids_.find(s);
        if (it != token_ids_.end()) {
            out.push_back(it->second);
            continue;
        }
        // Not in the vocabulary: one token per byte (each byte's alphabet character).
        for (uint32_t cp : unicode::utf8_decode(s)) {
            std::string one;
            unicode::utf8_append(one, cp);
            auto b = token_ids_.find(one);
            if (b != token_ids_.end()) out.push_back(b->second);
        }
    }
}

std::vector<std::string> bpe_tokenizer::pre_tokenize(std::string_view text) const {
    std::vector<size_t> offsets;
    const std::vector<uint32_t> cps = unicode::utf8_decode(text, &offsets);
    std::vector<std::string> out;
    for (const unicode::piece_span & p : unicode::pretokenize(cps, pre_)) {
        out.emplace_back(text.substr(offsets[p.begin], offsets[p.end] - offsets[p.begin]));
    }
    return out;
}

void bpe_tokenizer::encode_plain(std::string_view text, std::vector<int32_t> & out) const {
    for (const std::string & piece : pre_tokenize(text)) encode_piece(piece, out);
}

std::vector<int32_t> bpe_tokenizer::encode(std::string_view text, bool parse_special) const {
    struct fragment {
        int32_t id;  // -1: raw text
        std::string_view text;
    };
    std::vector<fragment> frags = {{-1, text}};
    for (int32_t id : specials_) {
        if (!parse_special && types_[static_cast<size_t>(id)] != k_token_type_user_defined) continue;
        const std::string & pat = pieces_[static_cast<size_t>(id)];
        std::vector<fragment> next;
        for (const fragment & f : frags) {
            if (f.id >= 0) {
                next.push_back(f);
                continue;
            }
            size_t pos = 0;
            for (size_t at; (at = f.text.find(pat, pos)) != std::string_view::npos;) {
                if (at > pos) next.push_back({-1, f.text.substr(pos, at - pos)});
                next.push_back({id, f.text.substr(at, pat.size())});
                pos = at + pat.size();
            }
            if (pos < f.text.size()) next.push_back({-1, f.text.substr(pos)});
        }
        frags = std::move(next);
    }
    std::vector<int32_t> out;
    for (const fragment & f : frags) {
        if (f.id >= 0) {
            out.push_back(f.id);
        } else {
            encode_plain(f.text, out);
        }
    }
    return out;
}

std::string bpe_tokenizer::token_to_piece(int32_t id, bool special) const {
    if (id < 0 || static_cast<size_t>(id) >= pieces_.size()) return {};
    if (!special && !types_.empty() && types_[static_cast<size_t>(id)] == k_token_type_control) {
        return {};
    }
    return pieces_[static_cast<size_t>(id)];
}

std::string bpe_tokenizer::decode(std::span<const int32_t> ids, bool special) const {
    std::string out;
    for (int32_t id : ids) out += token_to_piece(id, special);
    return out;
}

}  // namespace inferd
