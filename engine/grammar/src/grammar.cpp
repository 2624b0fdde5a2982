// Character sets, rule lookup and printing of grammars (grammar/grammar.h).
#include "grammar/grammar.h"

#include "utf8-decode.h"

#include <algorithm>
#include <cstdio>

bool grammar_char_set::contains(uint32_t cp) const {
    auto it = std::upper_bound(ranges.begin(), ranges.end(), cp,
                               [](uint32_t v, const grammar_char_range & r) { return v < r.lo; });
    return it != ranges.begin() && cp <= std::prev(it)->hi;
}

void grammar_char_set_normalize(grammar_char_set & s) {
    std::sort(s.ranges.begin(), s.ranges.end(),
              [](const grammar_char_range & a, const grammar_char_range & b) { return a.lo < b.lo; });
    std::vector<grammar_char_range> out;
    for (const grammar_char_range & r : s.ranges) {
        if (!out.empty() && uint64_t(r.lo) <= uint64_t(out.back().hi) + 1) {
            out.back().hi = std::max(out.back().hi, r.hi);
        } else {
            out.push_back(r);
        }
    }
    s.ranges = std::move(out);
}

grammar_char_set grammar_char_set_complement(const grammar_char_set & s) {
    grammar_char_set out;
    uint32_t next = 0;  // first code point not yet covered
    bool done = false;
    for (const grammar_char_range & r : s.ranges) {
        if (r.lo > next) out.ranges.push_back({next, r.lo - 1});
        if (r.hi >= grammar_max_code_point) {
            done = true;
            break;
        }
        next = r.hi + 1;
    }
    if (!done) out.ranges.push_back({next, grammar_max_code_point});
    return out;
}

uint32_t grammar::intern_set(const grammar_char_set & s) {
    for (size_t i = 0; i < sets.size(); ++i) {
        if (sets[i] == s) return uint32_t(i);
    }
    sets.push_back(s);
    return uint32_t(sets.size() - 1);
}

int32_t grammar::find_rule(std::string_view name) const {
    for (size_t i = 0; i < rules.size(); ++i) {
        if (rules[i].name == name) return int32_t(i);
    }
    return -1;
}

size_t grammar::n_symbols() const {
    size_t n = 0;
    for (const grammar_rule & r : rules) {
        for (const grammar_sequence & alt : r.alternatives) n += alt.size();
    }
    return n;
}

namespace {

// cp inside a literal ("…") or a class ([…]): printable ASCII as is (with the characters that
// mean something there escaped), other code points as \xHH / \uHHHH / \UHHHHHHHH.
void append_escaped(std::string & out, uint32_t cp, bool in_class) {
    char buf[16];
    switch (cp) {
        case '\n': out += "\\n"; return;
        case '\r': out += "\\r"; return;
        case '\t': out += "\\t"; return;
        case '\\': out += "\\\\"; return;
        default: break;
    }
    if (!in_class && cp == '"') {
        out += "\\\"";
        return;
    }
    if (in_class && (cp == ']' || cp == '[' || cp == '-' || cp == '^')) {
        out += '\\';
        out += char(cp);
        return;
    }
    if (cp >= 0x20 && cp < 0x7F) {
        out += char(cp);
    } else if (cp < 0x100) {
        std::snprintf(buf, sizeof buf, "\\x%02X", unsigned(cp));
        out += buf;
    } else if (cp < 0x10000) {
        std::snprintf(buf, sizeof buf, "\\u%04X", unsigned(cp));
        out += buf;
    } else {
        std::snprintf(buf, sizeof buf, "\\U%08X", unsigned(cp));
        out += buf;
    }
}

bool is_single(const grammar_char_set & s) { return s.ranges.size() == 1 && s.ranges[0].lo == s.ranges[0].hi; }

void append_class(std::string & out, const grammar_char_set & s) {
    if (s.ranges.size() == 1 && s.ranges[0].lo == 0 && s.ranges[0].hi == grammar_max_code_point) {
        out += '.';
        return;
    }
    // The shorter of the set and its complement.
    const grammar_char_set comp = grammar_char_set_complement(s);
    const bool negate = !comp.ranges.empty() && comp.ranges.size() < s.ranges.size();
    const grammar_char_set & shown = negate ? comp : s;
    out += negate ? "[^" : "[";
    for (const grammar_char_range & r : shown.ranges) {
        append_escaped(out, r.lo, true);
        if (r.hi != r.lo) {
            out += '-';
            append_escaped(out, r.hi, true);
        }
    }
    out += ']';
}

void append_sequence(std::string & out, const grammar & g, const grammar_sequence & seq) {
    if (seq.empty()) {
        out += "\"\"";
        return;
    }
    for (size_t i = 0; i < seq.size();) {
        if (i > 0) out += ' ';
        const grammar_symbol & sym = seq[i];
        if (sym.kind == grammar_symbol_kind::rule) {
            out += g.rules[sym.index].name;
            ++i;
            continue;
        }
        const grammar_char_set & s = g.sets[sym.index];
        if (!is_single(s)) {
            append_class(out, s);
            ++i;
            continue;
        }
        out += '"';
        for (; i < seq.size() && seq[i].kind == grammar_symbol_kind::chars && is_single(g.sets[seq[i].index]); ++i) {
            append_escaped(out, g.sets[seq[i].index].ranges[0].lo, false);
        }
        out += '"';
    }
}

}  // namespace

std::string grammar_char_set_to_gbnf(const grammar_char_set & s) {
    std::string out;
    append_class(out, s);
    return out;
}

std::string grammar_literal_to_gbnf(std::string_view text) {
    std::string out = "\"";
    for (size_t pos = 0; pos < text.size();) {
        uint32_t cp = 0;
        if (!grammar_utf8_decode(text, pos, cp)) {
            cp = 0xFFFD;  // invalid bytes: the replacement character
            ++pos;
        }
        append_escaped(out, cp, false);
    }
    return out + "\"";
}

std::string grammar_to_gbnf(const grammar & g) {
    std::string out;
    // root first, then the rules in the order they are first referred to (breadth first), then
    // any rule root does not reach: the order depends on the rules alone, not on their indices.
    std::vector<uint32_t> order;
    std::vector<bool> listed(g.rules.size(), false);
    if (!g.rules.empty()) {
        order.push_back(g.root);
        listed[g.root] = true;
    }
    for (size_t k = 0; k < order.size(); ++k) {
        for (const grammar_sequence & alt : g.rules[order[k]].alternatives) {
            for (const grammar_symbol & sym : alt) {
                if (sym.kind == grammar_symbol_kind::rule && !listed[sym.index]) {
                    listed[sym.index] = true;
                    order.push_back(sym.index);
                }
            }
        }
    }
    for (uint32_t i = 0; i < g.rules.size(); ++i) {
        if (!listed[i]) order.push_back(i);
    }
    for (uint32_t i : order) {
        const grammar_rule & r = g.rules[i];
        out += r.name;
        out += " ::= ";
        for (size_t a = 0; a < r.alternatives.size(); ++a) {
            if (a > 0) out += " | ";
            append_sequence(out, g, r.alternatives[a]);
        }
        out += '\n';
    }
    return out;
}
