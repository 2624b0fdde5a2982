// Splitting a grammar into lexemes and parser rules (grammar-program.h).
#include "grammar-program.h"

#include <algorithm>
#include <map>

namespace {

bool set_has_scalar(const grammar_char_set & s) {
    for (const grammar_char_range & r : s.ranges) {
        if (r.lo < 0xD800 || r.hi > 0xDFFF) return true;
    }
    return false;
}

// The rules for which some alternative has every symbol "true", where a character set is true
// when chars_true(set) and a rule when it is in the result (least fixpoint, linear time).
template <typename F> std::vector<uint8_t> rules_fixpoint(const grammar & g, F chars_true) {
    std::vector<uint8_t> out(g.rules.size(), 0);
    std::vector<uint32_t> alt_rule, pending;                  // per alternative
    std::vector<std::vector<uint32_t>> uses(g.rules.size());  // rule -> alternatives using it
    std::vector<uint32_t> queue;
    for (uint32_t r = 0; r < g.rules.size(); ++r) {
        for (const grammar_sequence & alt : g.rules[r].alternatives) {
            const uint32_t a = uint32_t(alt_rule.size());
            uint32_t n = 0;
            bool never = false;  // a character set that is not "true"
            for (const grammar_symbol & s : alt) {
                if (s.kind == grammar_symbol_kind::rule) {
                    uses[s.index].push_back(a);
                    ++n;
                } else if (!chars_true(g.sets[s.index])) {
                    never = true;
                }
            }
            if (never) n = UINT32_MAX;  // more than its rules can ever count down
            alt_rule.push_back(r);
            pending.push_back(n);
            if (n == 0 && !out[r]) {
                out[r] = 1;
                queue.push_back(r);
            }
        }
    }
    while (!queue.empty()) {
        const uint32_t r = queue.back();
        queue.pop_back();
        for (uint32_t a : uses[r]) {
            if (--pending[a] == 0 && !out[alt_rule[a]]) {
                out[alt_rule[a]] = 1;
                queue.push_back(alt_rule[a]);
            }
        }
    }
    return out;
}

// Strongly connected components of the rule graph (iterative Tarjan), each emitted after the
// components it refers to.
std::vector<std::vector<uint32_t>> rule_sccs(const grammar & g) {
    const uint32_t n = uint32_t(g.rules.size());
    std::vector<std::vector<uint32_t>> succ(n);
    for (uint32_t r = 0; r < n; ++r) {
        for (const grammar_sequence & alt : g.rules[r].alternatives) {
            for (const grammar_symbol & s : alt) {
                if (s.kind == grammar_symbol_kind::rule) succ[r].push_back(s.index);
            }
        }
    }
    std::vector<int32_t> index(n, -1), low(n, 0);
    std::vector<uint8_t> on_stack(n, 0);
    std::vector<uint32_t> stack;
    std::vector<std::pair<uint32_t, uint32_t>> calls;  // (rule, next successor to visit)
    std::vector<std::vector<uint32_t>> out;
    int32_t next_index = 0;
    for (uint32_t start = 0; start < n; ++start) {
        if (index[start] >= 0) continue;
        calls.push_back({start, 0});
        index[start] = low[start] = next_index++;
        stack.push_back(start);
        on_stack[start] = 1;
        while (!calls.empty()) {
            auto & [v, i] = calls.back();
            if (i < succ[v].size()) {
                const uint32_t w = succ[v][i++];
                if (index[w] < 0) {
                    index[w] = low[w] = next_index++;
                    stack.push_back(w);
                    on_stack[w] = 1;
                    calls.push_back({w, 0});
                } else if (on_stack[w]) {
                    low[v] = std::min(low[v], index[w]);
                }
                continue;
            }
            const uint32_t done = v;
            calls.pop_back();
            if (!calls.empty()) low[calls.back().first] = std::min(low[calls.back().first], low[done]);
            if (low[done] == index[done]) {
                std::vector<uint32_t> comp;
                uint32_t w = 0;
                do {
                    w = stack.back();
                    stack.pop_back();
                    on_stack[w] = 0;
                    comp.push_back(w);
                } while (w != done);
                out.push_back(std::move(comp));
            }
        }
    }
    return out;
}

// Rules whose component refers to itself only in tail position and to other components only
// through lexical rules.
std::vector<uint8_t> lexical_rules(const grammar & g) {
    std::vector<uint8_t> lex(g.rules.size(), 0);
    std::vector<int32_t> comp_of(g.rules.size(), -1);
    const auto comps = rule_sccs(g);
    for (size_t c = 0; c < comps.size(); ++c) {
        for (uint32_t r : comps[c]) comp_of[r] = int32_t(c);
        bool ok = true;
        for (uint32_t r : comps[c]) {
            for (const grammar_sequence & alt : g.rules[r].alternatives) {
                for (size_t i = 0; i < alt.size() && ok; ++i) {
                    if (alt[i].kind != grammar_symbol_kind::rule) continue;
                    const uint32_t s = alt[i].index;
                    ok = comp_of[s] == int32_t(c) ? i + 1 == alt.size() : lex[s] != 0;
                }
            }
        }
        for (uint32_t r : comps[c]) lex[r] = ok ? 1 : 0;
    }
    return lex;
}

}  // namespace

bool grammar_program::build(const grammar & src, std::string * err) {
    g = src;
    const std::vector<uint8_t> productive = rules_fixpoint(g, set_has_scalar);
    if (!productive[g.root]) {
        *err = "the grammar matches no text (rule '" + g.rules[g.root].name + "' derives nothing)";
        return false;
    }
    for (grammar_rule & rule : g.rules) {
        std::erase_if(rule.alternatives, [&](const grammar_sequence & alt) {
            return std::any_of(alt.begin(), alt.end(), [&](const grammar_symbol & s) {
                return s.kind == grammar_symbol_kind::rule ? !productive[s.index] : !set_has_scalar(g.sets[s.index]);
            });
        });
    }
    nullable = rules_fixpoint(g, [](const grammar_char_set &) { return false; });
    lexical = lexical_rules(g);

    std::map<uint32_t, uint32_t> lexeme_of;               // lexical rule -> lexeme id
    std::map<std::vector<uint64_t>, uint32_t> run_rule;    // a run of lexical symbols -> its rule
    auto lexeme = [&](uint32_t rule) {
        auto [it, fresh] = lexeme_of.emplace(rule, uint32_t(lexemes.size()));
        if (fresh) lexemes.push_back(rule);
        return it->second;
    };
    auto run_lexeme = [&](const grammar_sequence & run, const std::string & owner) {
        if (run.size() == 1 && run[0].kind == grammar_symbol_kind::rule) return lexeme(run[0].index);
        std::vector<uint64_t> key;
        for (const grammar_symbol & s : run) key.push_back(uint64_t(s.kind) << 32 | s.index);
        auto [it, fresh] = run_rule.emplace(std::move(key), uint32_t(g.rules.size()));
        if (fresh) {
            grammar_rule r;
            r.name = owner + "-lex-" + std::to_string(run_rule.size());
            r.alternatives.push_back(run);
            r.generated = true;
            bool null = true;
            for (const grammar_symbol & s : run) null = null && s.kind == grammar_symbol_kind::rule && nullable[s.index];
            g.rules.push_back(std::move(r));
            lexical.push_back(1);
            nullable.push_back(null ? 1 : 0);
        }
        return lexeme(it->second);
    };

    if (lexical[g.root]) {
        grammar_rule r;
        r.name = "root-parse";
        r.alternatives.push_back({grammar_symbol{grammar_symbol_kind::rule, g.root}});
        r.generated = true;
        g.rules.push_back(std::move(r));
        lexical.push_back(0);
        nullable.push_back(nullable[g.root]);
        proot = uint32_t(g.rules.size() - 1);
    } else {
        proot = g.root;
    }
    const size_t n_rules = g.rules.size();
    rule_palts.assign(n_rules, {});
    for (uint32_t r = 0; r < n_rules; ++r) {
        if (lexical[r]) continue;
        const std::vector<grammar_sequence> alts = g.rules[r].alternatives;  // runs may add rules
        const std::string owner = g.rules[r].name;
        for (const grammar_sequence & alt : alts) {
            grammar_palt pa;
            pa.rule = r;
            grammar_sequence run;
            for (const grammar_symbol & s : alt) {
                if (s.kind == grammar_symbol_kind::chars || lexical[s.index]) {
                    run.push_back(s);
                    continue;
                }
                if (!run.empty()) pa.syms.push_back({run_lexeme(run, owner), true});
                run.clear();
                pa.syms.push_back({s.index, false});
            }
            if (!run.empty()) pa.syms.push_back({run_lexeme(run, owner), true});
            rule_palts[r].push_back(uint32_t(palts.size()));
            palts.push_back(std::move(pa));
        }
    }
    rule_palts.resize(g.rules.size());
    looping.assign(g.rules.size(), 0);
    for (const std::vector<uint32_t> & comp : rule_sccs(g)) {
        for (uint32_t r : comp) {
            bool self = comp.size() > 1;
            for (const grammar_sequence & alt : g.rules[r].alternatives) {
                for (const grammar_symbol & sym : alt) self = self || (sym.kind == grammar_symbol_kind::rule && sym.index == r);
            }
            looping[r] = self ? 1 : 0;
        }
    }
    return true;
}
