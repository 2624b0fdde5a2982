// Automata over code points for the JSON Schema compiler (json-schema-impl.h): patterns and
// literal sets become one NFA (Thompson's construction, anchors as edges taken only at the start
// or the end of the text), then one DFA by subset construction over a partition of the code
// points into classes. Each input has a tag bit; a DFA state knows which inputs accept a text
// that ends there. The DFA is complete (the empty subset is a state of its own), so "matches
// none of the inputs" is a language it describes too. Emission writes one GBNF rule per live
// state, optionally counting code points for minLength / maxLength.
#include "grammar/grammar.h"
#include "json-schema-impl.h"
#include "utf8-decode.h"

#include <algorithm>
#include <map>
#include <vector>

namespace {

constexpr size_t k_max_nfa_states = 60000;

struct nfa {
    struct edge {
        uint32_t set;
        uint32_t to;
    };
    struct state {
        std::vector<uint32_t> eps, at_start, at_end;
        std::vector<edge> edges;
        uint64_t tag = 0;
    };
    std::vector<state> states;
    std::vector<grammar_char_set> sets;

    uint32_t add_state() {
        if (states.size() >= k_max_nfa_states) throw std::string("the pattern is too large for an automaton");
        states.emplace_back();
        return uint32_t(states.size() - 1);
    }
    uint32_t add_set(const grammar_char_set & s) {
        for (size_t i = 0; i < sets.size(); ++i) {
            if (sets[i] == s) return uint32_t(i);
        }
        sets.push_back(s);
        return uint32_t(sets.size() - 1);
    }
    uint32_t any() { return add_set(grammar_char_set{{{0, grammar_max_code_point}}}); }
};

// Adds the states of node i after `from`; returns the state where it ends.
uint32_t build(nfa & a, const regex_tree & t, uint32_t i, uint32_t from) {
    const regex_node & n = t.nodes[i];
    switch (n.k) {
        case regex_node::kind::chars: {
            const uint32_t to = a.add_state();
            a.states[from].edges.push_back({a.add_set(n.set), to});
            return to;
        }
        case regex_node::kind::line_start:
        case regex_node::kind::line_end: {
            const uint32_t to = a.add_state();
            (n.k == regex_node::kind::line_start ? a.states[from].at_start : a.states[from].at_end).push_back(to);
            return to;
        }
        case regex_node::kind::seq: {
            uint32_t cur = from;
            for (uint32_t k : n.kids) cur = build(a, t, k, cur);
            return cur;
        }
        case regex_node::kind::alt: {
            const uint32_t out = a.add_state();
            for (uint32_t k : n.kids) {
                const uint32_t in = a.add_state();
                a.states[from].eps.push_back(in);
                a.states[build(a, t, k, in)].eps.push_back(out);
            }
            return out;
        }
        case regex_node::kind::repeat: break;
    }
    uint32_t cur = from;
    for (uint32_t c = 0; c < n.min; ++c) cur = build(a, t, n.kids[0], cur);
    if (n.max == regex_unbounded) {
        const uint32_t loop = a.add_state();
        a.states[cur].eps.push_back(loop);
        a.states[build(a, t, n.kids[0], loop)].eps.push_back(loop);
        return loop;
    }
    const uint32_t out = a.add_state();
    a.states[cur].eps.push_back(out);
    for (uint32_t c = n.min; c < n.max; ++c) {
        cur = build(a, t, n.kids[0], cur);
        a.states[cur].eps.push_back(out);
    }
    return out;
}

// Input `tag` reached from `start`: a pattern searched in the text, or exact literals.
void add_input(nfa & a, const dfa_input & in, uint64_t tag, uint32_t start) {
    if (in.tree) {
        const uint32_t pre = a.add_state(), any = a.any();
        a.states[start].eps.push_back(pre);
        a.states[pre].edges.push_back({any, pre});  // unanchored start: anything before
        const uint32_t end = build(a, *in.tree, in.tree->root, pre);
        const uint32_t post = a.add_state();
        a.states[end].eps.push_back(post);
        a.states[post].edges.push_back({any, post});  // and after
        a.states[post].tag |= tag;
        if (in.full_match) {  // drop the loops: the whole text must match
            a.states[pre].edges.clear();
            a.states[post].edges.clear();
        }
        return;
    }
    for (const std::string & lit : in.literals) {
        uint32_t cur = a.add_state();
        a.states[start].eps.push_back(cur);
        for (size_t pos = 0; pos < lit.size();) {
            uint32_t cp = 0;
            if (!grammar_utf8_decode(lit, pos, cp)) throw std::string("a literal is not valid UTF-8");
            const uint32_t next = a.add_state();
            a.states[cur].edges.push_back({a.add_set(grammar_char_set{{{cp, cp}}}), next});
            cur = next;
        }
        a.states[cur].tag |= tag;
    }
}

std::vector<uint32_t> closure(const nfa & a, std::vector<uint32_t> set, bool at_start, bool at_end) {
    std::vector<char> seen(a.states.size(), 0);
    for (uint32_t s : set) seen[s] = 1;
    std::vector<uint32_t> stack = set;
    auto push = [&](uint32_t s) {
        if (!seen[s]) {
            seen[s] = 1;
            set.push_back(s);
            stack.push_back(s);
        }
    };
    while (!stack.empty()) {
        const uint32_t s = stack.back();
        stack.pop_back();
        for (uint32_t t : a.states[s].eps) push(t);
        if (at_start) {
            for (uint32_t t : a.states[s].at_start) push(t);
        }
        if (at_end) {
            for (uint32_t t : a.states[s].at_end) push(t);
        }
    }
    std::sort(set.begin(), set.end());
    return set;
}

// The code points cut into classes: maximal groups of intervals that every set of the NFA
// either contains whole or not at all. member[s][c]: set s holds class c.
void partition(const nfa & a, char_dfa & d, std::vector<std::vector<char>> & member) {
    std::vector<uint32_t> cuts = {0};
    for (const grammar_char_set & s : a.sets) {
        for (const grammar_char_range & r : s.ranges) {
            cuts.push_back(r.lo);
            if (r.hi < grammar_max_code_point) cuts.push_back(r.hi + 1);
        }
    }
    std::sort(cuts.begin(), cuts.end());
    cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
    std::map<std::vector<char>, int32_t> by_signature;
    for (size_t i = 0; i < cuts.size(); ++i) {
        const uint32_t lo = cuts[i], hi = i + 1 < cuts.size() ? cuts[i + 1] - 1 : grammar_max_code_point;
        std::vector<char> sig(a.sets.size());
        for (size_t s = 0; s < a.sets.size(); ++s) sig[s] = a.sets[s].contains(lo) ? 1 : 0;
        auto [it, fresh] = by_signature.emplace(sig, int32_t(d.classes.size()));
        if (fresh) d.classes.emplace_back();
        d.classes[size_t(it->second)].ranges.push_back({lo, hi});
        d.intervals.push_back({lo, it->second});
    }
    for (grammar_char_set & c : d.classes) grammar_char_set_normalize(c);
    member.assign(a.sets.size(), std::vector<char>(d.classes.size(), 0));
    for (const auto & [sig, c] : by_signature) {
        for (size_t s = 0; s < sig.size(); ++s) member[s][size_t(c)] = sig[s];
    }
}

void determinize(const nfa & a, uint32_t start, size_t max_states, char_dfa & d) {
    std::vector<std::vector<char>> member;
    partition(a, d, member);
    std::map<std::pair<bool, std::vector<uint32_t>>, int32_t> ids;
    std::vector<std::pair<bool, std::vector<uint32_t>>> queue;  // the states in id order, to expand
    auto id_of = [&](bool at_start, std::vector<uint32_t> set) {
        auto key = std::make_pair(at_start, std::move(set));
        auto it = ids.find(key);
        if (it != ids.end()) return it->second;
        if (d.states.size() >= max_states) throw std::string("the automaton needs more than " + std::to_string(max_states) + " states");
        const int32_t id = int32_t(d.states.size());
        d.states.emplace_back();
        uint64_t mask = 0;
        for (uint32_t s : closure(a, key.second, at_start, true)) mask |= a.states[s].tag;
        d.states.back().accept = mask;
        ids.emplace(key, id);
        queue.push_back(std::move(key));
        return id;
    };
    id_of(true, closure(a, {start}, true, false));
    for (size_t done = 0; done < queue.size(); ++done) {
        const std::vector<uint32_t> set = queue[done].second;  // a copy: id_of grows the queue
        std::vector<int32_t> next(d.classes.size());
        for (size_t c = 0; c < d.classes.size(); ++c) {
            std::vector<uint32_t> to;
            for (uint32_t s : set) {
                for (const nfa::edge & e : a.states[s].edges) {
                    if (member[e.set][c]) to.push_back(e.to);
                }
            }
            std::sort(to.begin(), to.end());
            to.erase(std::unique(to.begin(), to.end()), to.end());
            next[c] = id_of(false, closure(a, std::move(to), false, false));
        }
        d.states[done].next = std::move(next);
    }
}

}  // namespace

int32_t char_dfa::class_of(uint32_t cp) const {
    auto it = std::upper_bound(intervals.begin(), intervals.end(), cp,
                               [](uint32_t v, const std::pair<uint32_t, int32_t> & r) { return v < r.first; });
    return it == intervals.begin() ? -1 : std::prev(it)->second;
}

uint64_t char_dfa::run(std::string_view text) const {
    int32_t q = 0;
    for (size_t pos = 0; pos < text.size();) {
        uint32_t cp = 0;
        if (!grammar_utf8_decode(text, pos, cp)) return 0;
        q = states[size_t(q)].next[size_t(class_of(cp))];
    }
    return states[size_t(q)].accept;
}

bool json_schema_dfa_build(const std::vector<dfa_input> & inputs, size_t max_states, char_dfa * out, std::string * error) {
    if (inputs.size() > 64) {
        *error = "more than 64 patterns at once";
        return false;
    }
    try {
        nfa a;
        a.any();  // the classes cover every code point
        const uint32_t start = a.add_state();
        for (size_t i = 0; i < inputs.size(); ++i) add_input(a, inputs[i], uint64_t(1) << i, start);
        *out = char_dfa{};
        determinize(a, start, max_states, *out);
        return true;
    } catch (const std::string & e) {
        *error = e;
        return false;
    }
}

namespace {

// The product of the DFA with a counter of code points (0..max, or saturating at min when
// there is no max): its states reachable from the start, their edges, which accept.
struct counted {
    struct state {
        int32_t q;
        uint64_t n;
        std::vector<std::pair<int32_t, int32_t>> edges;  // (class, product state)
        std::optional<std::string> tail;
        bool live = false;
    };
    std::vector<state> states;
};

counted count_states(const char_dfa & d, const dfa_tail & tail, const dfa_emit_options & o) {
    counted p;
    std::map<std::pair<int32_t, uint64_t>, int32_t> ids;
    auto id_of = [&](int32_t q, uint64_t n) {
        auto [it, fresh] = ids.emplace(std::make_pair(q, n), int32_t(p.states.size()));
        if (fresh) {
            if (p.states.size() >= o.max_states) {
                throw std::string("the string's automaton needs more than " + std::to_string(o.max_states) + " states");
            }
            p.states.push_back({q, n, {}, std::nullopt, false});
        }
        return it->second;
    };
    id_of(0, 0);
    for (size_t i = 0; i < p.states.size(); ++i) {
        const int32_t q = p.states[i].q;
        const uint64_t n = p.states[i].n;
        if (n >= o.min_len) p.states[i].tail = tail(d.states[size_t(q)].accept);
        if (o.max_len && n >= *o.max_len) continue;
        const uint64_t n2 = o.max_len ? n + 1 : std::min(n + 1, o.min_len);
        for (size_t c = 0; c < d.classes.size(); ++c) {
            const int32_t to = id_of(d.states[size_t(q)].next[c], n2);
            p.states[i].edges.push_back({int32_t(c), to});
        }
    }
    return p;
}

void mark_live(counted & p) {
    std::vector<std::vector<int32_t>> back(p.states.size());
    std::vector<int32_t> frontier;  // live states whose predecessors are not marked yet
    for (size_t i = 0; i < p.states.size(); ++i) {
        for (const auto & [c, to] : p.states[i].edges) back[size_t(to)].push_back(int32_t(i));
        if (p.states[i].tail) {
            p.states[i].live = true;
            frontier.push_back(int32_t(i));
        }
    }
    while (!frontier.empty()) {
        const int32_t s = frontier.back();
        frontier.pop_back();
        for (int32_t from : back[size_t(s)]) {
            if (!p.states[size_t(from)].live) {
                p.states[size_t(from)].live = true;
                frontier.push_back(from);
            }
        }
    }
}

}  // namespace

std::string json_schema_dfa_to_gbnf(const char_dfa & d, const dfa_tail & tail, const dfa_emit_options & o, const gbnf_sink & sink,
                                    const std::string & hint, std::string * error) {
    counted p;
    try {
        p = count_states(d, tail, o);
    } catch (const std::string & e) {
        *error = e;
        return "";
    }
    mark_live(p);
    if (!p.states[0].live) return "";
    std::vector<std::string> names(p.states.size());
    for (size_t i = 0; i < p.states.size(); ++i) {
        if (p.states[i].live) names[i] = sink.name(hint);
    }
    for (size_t i = 0; i < p.states.size(); ++i) {
        if (!p.states[i].live) continue;
        std::map<int32_t, grammar_char_set> by_target;  // the classes that lead to each live state
        for (const auto & [c, to] : p.states[i].edges) {
            if (!p.states[size_t(to)].live) continue;
            auto & set = by_target[to];
            set.ranges.insert(set.ranges.end(), d.classes[size_t(c)].ranges.begin(), d.classes[size_t(c)].ranges.end());
        }
        std::string body;
        for (auto & [to, set] : by_target) {
            grammar_char_set_normalize(set);
            const std::string chars = json_schema_json_chars(set);
            if (chars.empty()) continue;
            body += (body.empty() ? "" : " | ") + chars + " " + names[size_t(to)];
        }
        if (p.states[i].tail) {
            body += (body.empty() ? "" : " | ") + (p.states[i].tail->empty() ? std::string("\"\"") : *p.states[i].tail);
        }
        sink.define(names[i], body);
    }
    return names[0];
}
