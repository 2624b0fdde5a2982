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
    std::vector<uint32_t> exits;  // projected states: nodes where the real state takes over
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

void grammar_program::forget_tables(const grammar_vocab * v) const {
    std::lock_guard<std::mutex> lock(tables_mu_);
    std::erase_if(tables_, [v](const auto & e) { return e.first.expired() || e.first.lock().get() == v; });
}

namespace {

// Every single byte as a token, and one end-of-generation token: the vocabulary of the probe in
// grammar_program_build (built once; programs forget their tables for it after the probe).
const std::shared_ptr<const grammar_vocab> & byte_vocab() {
    static const std::shared_ptr<const grammar_vocab> v = [] {
        std::vector<std::string> bytes(257);
        for (int b = 0; b < 256; ++b) bytes[size_t(b)] = std::string(1, char(b));
        std::vector<bool> special(257, false);
        special[256] = true;
        return grammar_vocab::build(bytes, special, {256});
    }();
    return v;
}

}  // namespace

std::shared_ptr<grammar_tables> grammar_program::tables_for(const std::shared_ptr<const grammar_vocab> & v) const {
    std::lock_guard<std::mutex> lock(tables_mu_);
    std::erase_if(tables_, [](const auto & e) { return e.first.expired(); });
    for (const auto & e : tables_) {
        if (e.first.lock() == v) return e.second;
    }
    tables_.emplace_back(v, std::make_shared<grammar_tables>(*this));
    return tables_.back().second;
}

grammar_program_result grammar_program_build(const grammar & g, uint64_t work_budget) {
    grammar_program_result r;
    auto p = std::make_shared<grammar_program>();
    p->work_budget = work_budget;
    if (!p->build(g, &r.error)) return r;
    // The first mask over a vocabulary of every single byte: a grammar too costly to follow from
    // its start is refused here (off the generation loop, before any output) rather than failing
    // a generation at its first token. Its tables go with the vocabulary.
    {
        grammar_matcher probe(p, byte_vocab());
        grammar_token_mask mask;
        probe.fill_mask(mask);
        if (!probe.error().empty()) {
            r.error = probe.error();
            return r;
        }
    }
    p->forget_tables(byte_vocab().get());
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
    std::vector<int32_t> dfa_at;               // per trie depth
    mask_entry scratch;
    std::vector<uint8_t> path;
    // (lexer state, parser set) -> the tokens that cross a lexeme's end from there (see
    // apply_state); for the sets below history_sets, which mask walks never drop.
    std::unordered_map<uint64_t, std::vector<uint32_t>> crossing;
    uint32_t history_sets = 0;
    static constexpr size_t k_crossing_limit = 4096;
    std::string error;  // why the matcher gave up (see token-mask.h); empty while it has not
    template <typename F> bool guarded(F && f);

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

    // Walks the subtree below trie node root from lexer state d (the state after root's bytes)
    // with the DFA alone, adding to e. The hottest loop of the matcher: raw pointers, so that
    // writes to the bits do not make the compiler reload them.
    using boundary_list = std::vector<std::pair<uint32_t, int32_t>>;
    void walk_dfa(uint32_t root, int32_t d, uint64_t * bits, boundary_list & boundaries, std::vector<uint32_t> & exits) {
        const grammar_vocab::trie & tr = vocab->get_trie();
        dfa_at.resize(size_t(tr.max_depth) + 1);
        int32_t * at = dfa_at.data();
        at[tr.depth[root]] = d;
        const uint8_t * byte = tr.byte.data();
        const uint32_t * end = tr.end.data();
        const uint16_t * depth = tr.depth.data();
        const uint32_t * tok_begin = tr.tok_begin.data();
        const int32_t * tok_ids = tr.tok_ids.data();
        const int32_t * sub_idx = tr.subtree_idx.data();
        const grammar_vocab::trie::subtree * subtrees = tr.subtrees.data();
        grammar_lexer & lx = lexer();
        const int32_t * trans = lx.transitions();
        const uint8_t * marks = lx.marks();
        for (uint32_t i = root + 1, n = end[root]; i < n;) {
            const uint32_t dep = depth[i];
            const int32_t from = at[dep - 1];
            int32_t s = trans[size_t(from) * 256 + byte[i]];
            if (s == grammar_lexer::unknown_transition) {
                s = lx.step(from, byte[i]);
                trans = lx.transitions();
                marks = lx.marks();
            }
            if (s < 0) {
                i = end[i];
                continue;
            }
            // A state's loops are computed once it is seen looping on a byte (walks of literals,
            // which never loop, pay nothing for them).
            if (sub_idx[i] >= 0 && marks[from] == 0 && (s == from || lx.loops_known(from))) {
                const bool all = takes_subtree(from, subtrees[sub_idx[i]]);
                trans = lx.transitions();  // computing the loops may have added states
                marks = lx.marks();
                if (all) {  // every path below stays in from's loop: all its tokens are allowed
                    for (uint32_t k = tok_begin[i], ke = tok_begin[end[i]]; k < ke; ++k) {
                        const auto t = uint32_t(tok_ids[k]);
                        bits[t >> 6] |= uint64_t(1) << (t & 63);
                    }
                    i = end[i];
                    continue;
                }
            }
            at[dep] = s;
            for (uint32_t k = tok_begin[i], ke = tok_begin[i + 1]; k < ke; ++k) {
                const auto t = uint32_t(tok_ids[k]);
                bits[t >> 6] |= uint64_t(1) << (t & 63);
            }
            if (marks[s] != 0 && end[i] > i + 1) {
                if (marks[s] & grammar_lexer::mark_accepts) boundaries.push_back({i, s});
                if (marks[s] & grammar_lexer::mark_escape) exits.push_back(i);
            }
            ++i;
        }
    }

    // Whether state d, at a character boundary, reads every path of subtree st and stays in d
    // (so no lexeme ends and every token there is allowed).
    bool takes_subtree(int32_t d, const grammar_vocab::trie::subtree & st) {
        if (!st.utf8) return false;
        const grammar_lexer::loop_info & l = lexer().loops(d);
        return (st.ascii[0] & ~l.ascii[0]) == 0 && (st.ascii[1] & ~l.ascii[1]) == 0 && (!st.non_ascii || l.non_ascii);
    }

    // The real lexer state after trie node node's bytes from state d (dead: -1).
    int32_t state_at(int32_t d, uint32_t node) {
        const grammar_vocab::trie & tr = vocab->get_trie();
        path.clear();
        for (uint32_t i = node; i != 0; i = tr.parent[i]) path.push_back(tr.byte[i]);
        for (size_t k = path.size(); k-- > 0 && d >= 0;) d = lexer().step(d, path[k]);
        return d;
    }

    // What the walk from lexer state d finds. A state whose members belong to several lexemes is
    // the union of its parts (a part recurs in many states). A state inside a loop is walked as its projection
    // (shared with every state that differs only in what follows the loop); where the walk
    // leaves the loop for what follows, the subtree is walked again from the real state.
    void fill_entry(int32_t d, mask_entry & e) {
        if (const std::vector<int32_t> parts = lexer().parts(d); !parts.empty()) {
            e.bits.assign(vocab->mask_words(), 0);
            e.boundaries.clear();
            e.exits.clear();
            for (int32_t g : parts) {
                const mask_entry & ge = entry(g);
                for (size_t w = 0; w < e.bits.size(); ++w) e.bits[w] |= ge.bits[w];
                e.boundaries.insert(e.boundaries.end(), ge.boundaries.begin(), ge.boundaries.end());
                e.exits.insert(e.exits.end(), ge.exits.begin(), ge.exits.end());
            }
            std::sort(e.exits.begin(), e.exits.end());
            e.exits.erase(std::unique(e.exits.begin(), e.exits.end()), e.exits.end());
            return;
        }
        const int32_t p = lexer().project(d);
        if (p == d) {
            e.bits.assign(vocab->mask_words(), 0);
            e.boundaries.clear();
            e.exits.clear();
            walk_dfa(0, d, e.bits.data(), e.boundaries, e.exits);
            return;
        }
        const mask_entry & pe = entry(p);
        e.bits = pe.bits;
        e.boundaries = pe.boundaries;
        e.exits.clear();
        const std::vector<uint32_t> exits = pe.exits;  // entry() may reuse scratch
        for (uint32_t node : exits) {
            const int32_t r = state_at(d, node);
            if (r < 0) continue;
            // The projected walk saw an escape here, not the real state's lexeme ends.
            if (lexer().accepts_id(r) >= 0) e.boundaries.push_back({node, r});
            walk_dfa(node, r, e.bits.data(), e.boundaries, e.exits);
        }
    }

    const mask_entry & entry(int32_t d) {
        if (auto it = tab->cache.find(d); it != tab->cache.end()) return it->second;
        if (tab->cache_bytes >= k_cache_limit_bytes) {
            mask_entry tmp;
            fill_entry(d, tmp);
            scratch = std::move(tmp);
            return scratch;
        }
        mask_entry e;
        fill_entry(d, e);
        tab->cache_bytes += e.bits.size() * sizeof(uint64_t) + e.boundaries.size() * 8 + e.exits.size() * 4 + 64;
        return tab->cache.emplace(d, std::move(e)).first->second;
    }

    // Tokens below trie node `node` where a new lexeme starts at parser set t: the DFA walk of
    // the subtree, and where a lexeme ends inside it, the same again from the parser's next set.
    void walk_from_set(uint32_t node, uint32_t t, uint64_t * out) {
        const int32_t s0 = start_of(t);
        if (s0 < 0) return;
        boundary_list inner;
        std::vector<uint32_t> no_exits;
        walk_dfa(node, s0, out, inner, no_exits);
        walk_boundaries(inner, t, out);
    }

    // For each (node, state) where a lexeme that began at parser set base can end: the tokens
    // below node that start the next lexeme there.
    void walk_boundaries(const boundary_list & boundaries, uint32_t base, uint64_t * out) {
        std::unordered_map<int32_t, uint32_t> ended;  // accepts id -> the parser's set after it
        for (const auto & [node, s] : boundaries) {
            const int32_t aid = lexer().accepts_id(s);
            auto it = ended.find(aid);
            if (it == ended.end()) {
                parser.begin_set();
                parser.add_scan(base, lexer().accepts(s));
                it = ended.emplace(aid, parser.finish_set()).first;
            }
            walk_from_set(node, it->second, out);
        }
    }

    // Tokens allowed from lexer state d whose lexeme began at parser set base: the cached bits,
    // and for the nodes where a lexeme can end, walks with the parser. What those walks add
    // depends only on (d, base), so for a set of the output's history (not one a mask walk
    // makes and drops) it is kept: a step inside a string repeats the same walks.
    void apply_state(int32_t d, uint32_t base, uint64_t * out) {
        const mask_entry & e = entry(d);
        for (size_t w = 0; w < e.bits.size(); ++w) out[w] |= e.bits[w];
        if (e.boundaries.empty()) return;
        const bool keep = base < history_sets;
        const uint64_t key = uint64_t(uint32_t(d)) << 32 | base;
        if (keep) {
            if (auto it = crossing.find(key); it != crossing.end()) {
                for (uint32_t t : it->second) out[t >> 6] |= uint64_t(1) << (t & 63);
                return;
            }
        }
        std::vector<uint64_t> extra(e.bits.size(), 0);
        const boundary_list boundaries = e.boundaries;  // the walks may fill entries (rehash-safe, but scratch is reused)
        walk_boundaries(boundaries, base, extra.data());
        std::vector<uint32_t> toks;
        for (size_t w = 0; w < extra.size(); ++w) {
            out[w] |= extra[w];
            for (uint64_t x = extra[w] & ~e.bits[w]; x != 0; x &= x - 1) toks.push_back(uint32_t(w * 64 + size_t(__builtin_ctzll(x))));
        }
        if (!keep) return;
        if (crossing.size() >= k_crossing_limit) crossing.clear();
        crossing.emplace(key, std::move(toks));
    }

    void fill_mask(grammar_token_mask & out) {
        out.assign(vocab->mask_words(), 0);
        const uint32_t mark = parser.n_sets();
        history_sets = mark;
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

// Each call runs under the tables' lock with the lexer armed for one budget; a lexer over its
// budget fails the matcher (see token-mask.h), which then answers every call at once.
template <typename F> bool grammar_matcher::impl::guarded(F && f) {
    if (!error.empty()) return false;
    try {
        lexer().arm(prog->work_budget);
        f();
        return true;
    } catch (const grammar_lexer_over_budget & e) {
        error = e.what();
        return false;
    }
}

void grammar_matcher::fill_mask(grammar_token_mask & out) {
    std::lock_guard<std::mutex> lock(p_->tab->mu);
    if (!p_->guarded([&] { p_->fill_mask(out); })) out.assign(p_->vocab->mask_words(), 0);
}

bool grammar_matcher::accept_token(int32_t t) {
    const grammar_vocab & v = *p_->vocab;
    if (t < 0 || t >= v.n_vocab()) return false;
    std::lock_guard<std::mutex> lock(p_->tab->mu);
    bool r = false;
    p_->guarded([&] { r = v.is_eog(t) ? p_->can_end() : v.in_trie(t) && p_->accept_bytes(v.token_bytes(t)); });
    return r;
}

bool grammar_matcher::accept_bytes(std::string_view bytes) {
    std::lock_guard<std::mutex> lock(p_->tab->mu);
    bool r = false;
    p_->guarded([&] { r = p_->accept_bytes(bytes); });
    return r;
}

bool grammar_matcher::can_end() const {
    std::lock_guard<std::mutex> lock(p_->tab->mu);
    bool r = false;
    p_->guarded([&] { r = p_->can_end(); });
    return r;
}

bool grammar_matcher::is_complete() const {
    std::lock_guard<std::mutex> lock(p_->tab->mu);
    bool r = false;
    p_->guarded([&] { r = p_->is_complete(); });
    return r;
}

void grammar_matcher::reset() {
    std::lock_guard<std::mutex> lock(p_->tab->mu);
    p_->parser.reset();
    p_->alts = {{0, -1}};
    p_->crossing.clear();
}

const std::string & grammar_matcher::error() const {
    std::lock_guard<std::mutex> lock(p_->tab->mu);
    return p_->error;
}

const grammar_vocab & grammar_matcher::vocab() const { return *p_->vocab; }
