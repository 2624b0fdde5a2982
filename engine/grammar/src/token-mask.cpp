// Token masks: the matcher's state, its steps over bytes, and the mask walk (grammar/token-mask.h).
#include "grammar/token-mask.h"

#include "grammar-earley.h"
#include "grammar-lexer.h"
#include "grammar-program.h"

#include <algorithm>
#include <mutex>
#include <unordered_map>

namespace {

// What the walk of the trie from a lexer state finds without asking the parser: the tokens the
// current lexemes take whole (bits), and the trie nodes where a lexeme can end inside a token
// with the state there (boundaries: the parser decides what may follow).
struct mask_entry {
    std::vector<uint64_t> bits;
    std::vector<std::pair<uint32_t, int32_t>> boundaries;
};

constexpr size_t k_cache_limit_bytes = size_t(256) << 20;

struct alt_state {
    uint32_t set = 0;   // the parser's set where the lexeme in progress started
    int32_t dfa = -1;   // the lexer's state in it; -1: no byte of it read yet
    auto operator<=>(const alt_state &) const = default;
};

}  // namespace

struct grammar_tables {
    explicit grammar_tables(const grammar_program & p) : lexer(p) {}
    std::mutex mu;
    grammar_lexer lexer;
    std::unordered_map<int32_t, mask_entry> cache;  // lexer state -> its walk
    size_t cache_bytes = 0;
};

std::shared_ptr<grammar_tables> grammar_program::tables_for(const std::shared_ptr<const grammar_vocab> & v) const {
    std::lock_guard<std::mutex> lock(tables_mu_);
    std::erase_if(tables_, [](const auto & e) { return e.first.expired(); });
    for (const auto & e : tables_) {
        if (e.first.lock() == v) return e.second;
    }
    tables_.emplace_back(v, std::make_shared<grammar_tables>(*this));
    return tables_.back().second;
}

grammar_program_result grammar_program_build(const grammar & g) {
    grammar_program_result r;
    auto p = std::make_shared<grammar_program>();
    if (!p->build(g, &r.error)) return r;
    r.value = std::move(p);
    return r;
}

struct grammar_matcher::impl {
    std::shared_ptr<const grammar_program> prog;
    std::shared_ptr<const grammar_vocab> vocab;
    std::shared_ptr<grammar_tables> tab;
    grammar_earley parser;
    std::vector<alt_state> alts;
    // scratch
    std::vector<std::vector<alt_state>> pool;  // per trie depth
    std::vector<int32_t> dfa_at;               // per trie depth
    mask_entry scratch;

    impl(std::shared_ptr<const grammar_program> p, std::shared_ptr<const grammar_vocab> v)
        : prog(std::move(p)), vocab(std::move(v)), tab(prog->tables_for(vocab)), parser(*prog), alts{{0, -1}} {}

    grammar_lexer & lexer() { return tab->lexer; }

    int32_t start_of(uint32_t set) {
        int32_t & s = parser.start_state(set);
        if (s == -2) s = lexer().start(parser.expected(set));
        return s;
    }

    // The parser's set after every lexeme that can end now has ended (any: one could).
    uint32_t ended_set(const std::vector<alt_state> & a, bool & any) {
        any = false;
        for (const alt_state & x : a) {
            if (x.dfa < 0 || lexer().accepts_id(x.dfa) < 0) continue;
            if (!any) parser.begin_set();
            any = true;
            parser.add_scan(x.set, lexer().accepts(x.dfa));
        }
        return any ? parser.finish_set() : 0;
    }

    void step(const std::vector<alt_state> & in, uint8_t b, std::vector<alt_state> & out) {
        out.clear();
        for (const alt_state & x : in) {
            const int32_t d = x.dfa >= 0 ? x.dfa : start_of(x.set);
            if (d < 0) continue;
            const int32_t n = lexer().step(d, b);
            if (n >= 0) out.push_back({x.set, n});
        }
        bool any = false;
        const uint32_t t = ended_set(in, any);
        if (any) {
            const int32_t s0 = start_of(t);
            const int32_t n = s0 >= 0 ? lexer().step(s0, b) : -1;
            if (n >= 0) out.push_back({t, n});
        }
        if (out.size() > 1) {
            std::sort(out.begin(), out.end());
            out.erase(std::unique(out.begin(), out.end()), out.end());
        }
    }

    bool can_end() {
        for (const alt_state & x : alts) {
            if (x.dfa < 0 && parser.root_complete(x.set)) return true;
        }
        const uint32_t mark = parser.n_sets();
        bool any = false;
        const uint32_t t = ended_set(alts, any);
        const bool r = any && parser.root_complete(t);
        parser.truncate(mark);
        return r;
    }

    void fill_entry(int32_t d, mask_entry & e) {
        const grammar_vocab::trie & tr = vocab->get_trie();
        e.bits.assign(vocab->mask_words(), 0);
        e.boundaries.clear();
        dfa_at.resize(size_t(tr.max_depth) + 1);
        dfa_at[0] = d;
        grammar_lexer & lx = lexer();
        const uint32_t n = uint32_t(tr.byte.size());
        for (uint32_t i = 1; i < n;) {
            const int32_t s = lx.step(dfa_at[tr.depth[i] - 1u], tr.byte[i]);
            if (s < 0) {
                i = tr.end[i];
                continue;
            }
            dfa_at[tr.depth[i]] = s;
            for (uint32_t k = tr.tok_begin[i]; k < tr.tok_begin[i + 1]; ++k) {
                const auto t = uint32_t(tr.tok_ids[k]);
                e.bits[t >> 6] |= uint64_t(1) << (t & 63);
            }
            if (tr.end[i] > i + 1 && lx.accepts_id(s) >= 0) e.boundaries.push_back({i, s});
            ++i;
        }
    }

    const mask_entry & entry(int32_t d) {
        if (auto it = tab->cache.find(d); it != tab->cache.end()) return it->second;
        if (tab->cache_bytes >= k_cache_limit_bytes) {
            fill_entry(d, scratch);
            return scratch;
        }
        mask_entry & e = tab->cache[d];
        fill_entry(d, e);
        tab->cache_bytes += e.bits.size() * sizeof(uint64_t) + e.boundaries.size() * 8 + 64;
        return e;
    }

    void mark_tokens(uint32_t node, uint64_t * out) const {
        const grammar_vocab::trie & tr = vocab->get_trie();
        for (uint32_t k = tr.tok_begin[node]; k < tr.tok_begin[node + 1]; ++k) {
            const auto t = uint32_t(tr.tok_ids[k]);
            out[t >> 6] |= uint64_t(1) << (t & 63);
        }
    }

    // Tokens below trie node `node` (whose bytes led to states a) that the grammar allows.
    void walk(uint32_t node, const std::vector<alt_state> & a, uint64_t * out) {
        const grammar_vocab::trie & tr = vocab->get_trie();
        std::vector<alt_state> & next = pool[tr.depth[node] + 1u];
        for (uint32_t c = node + 1; c < tr.end[node]; c = tr.end[c]) {
            step(a, tr.byte[c], next);
            if (next.empty()) continue;
            mark_tokens(c, out);
            if (tr.end[c] > c + 1) walk(c, next, out);
        }
    }

    // Tokens allowed from lexer state d whose lexeme began at parser set base.
    void apply_state(int32_t d, uint32_t base, uint64_t * out) {
        const mask_entry & e = entry(d);
        for (size_t w = 0; w < e.bits.size(); ++w) out[w] |= e.bits[w];
        std::unordered_map<int32_t, uint32_t> ended;  // accepts id -> the parser's set after it
        std::vector<alt_state> one(1);
        for (const auto & [node, s] : e.boundaries) {
            const int32_t aid = lexer().accepts_id(s);
            auto it = ended.find(aid);
            if (it == ended.end()) {
                parser.begin_set();
                parser.add_scan(base, lexer().accepts(s));
                it = ended.emplace(aid, parser.finish_set()).first;
            }
            if (start_of(it->second) < 0) continue;
            one[0] = {it->second, -1};
            walk(node, one, out);
        }
    }

    void fill_mask(grammar_token_mask & out) {
        out.assign(vocab->mask_words(), 0);
        pool.resize(size_t(vocab->get_trie().max_depth) + 2);
        const uint32_t mark = parser.n_sets();
        bool end = false;
        for (const alt_state & x : alts) {
            const int32_t d = x.dfa >= 0 ? x.dfa : start_of(x.set);
            if (d >= 0) apply_state(d, x.set, out.data());
            end = end || (x.dfa < 0 && parser.root_complete(x.set));
        }
        bool any = false;
        const uint32_t t = ended_set(alts, any);
        if (any) {
            const int32_t s0 = start_of(t);
            if (s0 >= 0) apply_state(s0, t, out.data());
            end = end || parser.root_complete(t);
        }
        parser.truncate(mark);
        if (end) {
            for (int32_t e : vocab->eog_ids()) out[size_t(e) >> 6] |= uint64_t(1) << (uint32_t(e) & 63);
        }
    }

    bool accept_bytes(std::string_view bytes) {
        const uint32_t mark = parser.n_sets();
        std::vector<alt_state> cur = alts, next;
        for (char c : bytes) {
            step(cur, uint8_t(c), next);
            if (next.empty()) {
                parser.truncate(mark);
                return false;
            }
            cur.swap(next);
        }
        alts = std::move(cur);
        return true;
    }

    bool is_complete() {
        if (!can_end()) return false;
        for (const alt_state & x : alts) {
            if (x.dfa >= 0 ? lexer().can_continue(x.dfa) : start_of(x.set) >= 0) return false;
        }
        const uint32_t mark = parser.n_sets();
        bool any = false;
        const uint32_t t = ended_set(alts, any);
        const bool more = any && start_of(t) >= 0;
        parser.truncate(mark);
        return !more;
    }
};

grammar_matcher::grammar_matcher(std::shared_ptr<const grammar_program> program, std::shared_ptr<const grammar_vocab> vocab)
    : p_(std::make_unique<impl>(std::move(program), std::move(vocab))) {}
grammar_matcher::grammar_matcher(const grammar_matcher & o) : p_(std::make_unique<impl>(*o.p_)) {}
grammar_matcher & grammar_matcher::operator=(const grammar_matcher & o) {
    if (this != &o) p_ = std::make_unique<impl>(*o.p_);
    return *this;
}
grammar_matcher::grammar_matcher(grammar_matcher &&) noexcept = default;
grammar_matcher & grammar_matcher::operator=(grammar_matcher &&) noexcept = default;
grammar_matcher::~grammar_matcher() = default;

void grammar_matcher::fill_mask(grammar_token_mask & out) {
    std::lock_guard<std::mutex> lock(p_->tab->mu);
    p_->fill_mask(out);
}

bool grammar_matcher::accept_token(int32_t t) {
    const grammar_vocab & v = *p_->vocab;
    if (t < 0 || t >= v.n_vocab()) return false;
    std::lock_guard<std::mutex> lock(p_->tab->mu);
    if (v.is_eog(t)) return p_->can_end();
    return v.in_trie(t) && p_->accept_bytes(v.token_bytes(t));
}

bool grammar_matcher::accept_bytes(std::string_view bytes) {
    std::lock_guard<std::mutex> lock(p_->tab->mu);
    return p_->accept_bytes(bytes);
}

bool grammar_matcher::can_end() const {
    std::lock_guard<std::mutex> lock(p_->tab->mu);
    return p_->can_end();
}

bool grammar_matcher::is_complete() const {
    std::lock_guard<std::mutex> lock(p_->tab->mu);
    return p_->is_complete();
}

void grammar_matcher::reset() {
    std::lock_guard<std::mutex> lock(p_->tab->mu);
    p_->parser.reset();
    p_->alts = {{0, -1}};
}

const grammar_vocab & grammar_matcher::vocab() const { return *p_->vocab; }
