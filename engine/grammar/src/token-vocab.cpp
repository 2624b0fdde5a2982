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

// UTF-8 decoding position after a byte, from the position before it: 0 at a character boundary,
// 1..3 continuation bytes to come, 4..7 the restricted first continuation of E0, ED, F0 and F4
// (no overlongs, surrogates or code points past U+10FFFF); -1 not well-formed.
int utf8_next(int at, uint8_t b) {
    const bool cont = (b & 0xC0) == 0x80;
    switch (at) {
    case 0:
        if (b < 0x80) return 0;
        if (b >= 0xC2 && b <= 0xDF) return 1;
        if (b == 0xE0) return 4;
        if (b == 0xED) return 5;
        if (b >= 0xE1 && b <= 0xEF) return 2;
        if (b == 0xF0) return 6;
        if (b == 0xF4) return 7;
        if (b >= 0xF1 && b <= 0xF3) return 3;
        return -1;
    case 1: case 2: case 3: return cont ? at - 1 : -1;
    case 4: return b >= 0xA0 && b <= 0xBF ? 1 : -1;
    case 5: return b >= 0x80 && b <= 0x9F ? 1 : -1;
    case 6: return b >= 0x90 && b <= 0xBF ? 2 : -1;
    case 7: return b >= 0x80 && b <= 0x8F ? 2 : -1;
    default: return -1;
    }
}

// What each subtree with enough nodes reads (children follow their parents in preorder, so a
// reverse pass hands each node's summary to its parent).
void index_subtrees(grammar_vocab::trie & t) {
    const size_t n = t.byte.size();
    std::vector<int8_t> at(n, 0);  // UTF-8 position after the node's bytes
    for (size_t i = 1; i < n; ++i) {
        const int p = at[t.parent[i]];
        at[i] = int8_t(p < 0 ? -1 : utf8_next(p, t.byte[i]));
    }
    std::vector<grammar_vocab::trie::subtree> sum(n);
    std::vector<uint8_t> bad(n, 0);  // some path through the subtree is not well-formed
    for (size_t i = n; i-- > 1;) {
        grammar_vocab::trie::subtree & s = sum[i];
        if (t.byte[i] < 0x80) {
            s.ascii[t.byte[i] >> 6] |= uint64_t(1) << (t.byte[i] & 63);
        } else {
            s.non_ascii = true;
        }
        bad[i] |= uint8_t(at[i] < 0);
        s.utf8 = !bad[i] && at[t.parent[i]] == 0;
        grammar_vocab::trie::subtree & p = sum[t.parent[i]];
        p.ascii[0] |= s.ascii[0];
        p.ascii[1] |= s.ascii[1];
        p.non_ascii = p.non_ascii || s.non_ascii;
        bad[t.parent[i]] |= bad[i];
    }
    t.subtree_idx.assign(n, -1);
    for (size_t i = 1; i < n; ++i) {
        if (t.end[i] - i < grammar_vocab::trie::k_subtree_min) continue;
        t.subtree_idx[i] = int32_t(t.subtrees.size());
        t.subtrees.push_back(sum[i]);
    }
}

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
    index_subtrees(v->trie_);
    return v;
}

bool grammar_vocab::is_eog(int32_t t) const { return std::binary_search(eog_.begin(), eog_.end(), t); }
