// The vocabulary's byte trie (grammar_vocab in grammar/token-mask.h).
#include "grammar/token-mask.h"

#include <algorithm>
#include <numeric>

namespace {

struct trie_builder {
    const std::vector<std::string> & bytes;
    const std::vector<int32_t> & order;  // token ids sorted by their bytes
    grammar_vocab::trie & t;

    uint32_t new_node(uint8_t b, uint16_t depth, uint32_t parent) {
        t.byte.push_back(b);
        t.parent.push_back(parent);
        t.end.push_back(0);
        t.tok_begin.push_back(uint32_t(t.tok_ids.size()));
        t.depth.push_back(depth);
        t.max_depth = std::max(t.max_depth, depth);
        return uint32_t(t.byte.size() - 1);
    }

    // order[lo, hi) share their first `depth` bytes; node is theirs. Iterative over the bytes
    // at each depth, recursive over depth (bounded by the longest token).
    void build(size_t lo, size_t hi, uint16_t depth, uint32_t node) {
        while (lo < hi && bytes[size_t(order[lo])].size() == depth) t.tok_ids.push_back(order[lo++]);
        while (lo < hi) {
            const auto b = uint8_t(bytes[size_t(order[lo])][depth]);
            size_t mid = lo + 1;
            while (mid < hi && uint8_t(bytes[size_t(order[mid])][depth]) == b) ++mid;
            const uint32_t child = new_node(b, uint16_t(depth + 1), node);
            build(lo, mid, uint16_t(depth + 1), child);
            lo = mid;
        }
        t.end[node] = uint32_t(t.byte.size());
    }
};

}  // namespace

std::shared_ptr<const grammar_vocab> grammar_vocab::build(const std::vector<std::string> & token_bytes,
                                                          const std::vector<bool> & special,
                                                          const std::vector<int32_t> & eog_ids) {
    auto v = std::shared_ptr<grammar_vocab>(new grammar_vocab());
    v->n_vocab_ = int32_t(token_bytes.size());
    v->bytes_ = token_bytes;
    for (int32_t e : eog_ids) {
        if (e >= 0 && e < v->n_vocab_) v->eog_.push_back(e);
    }
    std::sort(v->eog_.begin(), v->eog_.end());
    v->eog_.erase(std::unique(v->eog_.begin(), v->eog_.end()), v->eog_.end());
    v->in_trie_.assign(token_bytes.size(), 0);
    std::vector<int32_t> order;
    for (int32_t t = 0; t < v->n_vocab_; ++t) {
        const bool sp = size_t(t) < special.size() && special[size_t(t)];
        // Tokens over 4,096 bytes (none in real vocabularies) are left out: never allowed.
        if (sp || token_bytes[size_t(t)].empty() || token_bytes[size_t(t)].size() > 4096 || v->is_eog(t)) continue;
        v->in_trie_[size_t(t)] = 1;
        order.push_back(t);
    }
    std::sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
        return token_bytes[size_t(a)] != token_bytes[size_t(b)] ? token_bytes[size_t(a)] < token_bytes[size_t(b)] : a < b;
    });
    trie_builder tb{v->bytes_, order, v->trie_};
    const uint32_t root = tb.new_node(0, 0, 0);
    tb.build(0, order.size(), 0, root);
    v->trie_.tok_begin.push_back(uint32_t(v->trie_.tok_ids.size()));
    return v;
}

bool grammar_vocab::is_eog(int32_t t) const { return std::binary_search(eog_.begin(), eog_.end(), t); }
