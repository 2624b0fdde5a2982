// JSON Schema `pattern` (an ECMAScript subset) to a tree (json-schema-impl.h), and the tree to
// GBNF over JSON string contents. The parser is a recursive descent: alternations of sequences
// of atoms (characters, classes, escapes, groups, the anchors ^ and $), each atom with at most
// one quantifier. Unsupported constructs (lookaround, backreferences, word boundaries, Unicode
// properties, inline flags) are errors. The tree becomes GBNF directly when its anchors stand
// only at the ends of the pattern (or of its top-level alternatives); otherwise it goes through
// the automaton (json-schema-automaton.cpp).
#include "grammar/grammar.h"
#include "json-schema-impl.h"
#include "utf8-decode.h"

#include <algorithm>
#include <cstdio>
#include <vector>

namespace {

struct regex_failure {
    std::string message;
};

grammar_char_set set_of(std::initializer_list<grammar_char_range> r) {
    grammar_char_set s{std::vector<grammar_char_range>(r)};
    grammar_char_set_normalize(s);
    return s;
}

const grammar_char_set & digits() {
    static const grammar_char_set s = set_of({{'0', '9'}});
    return s;
}
const grammar_char_set & word() {
    static const grammar_char_set s = set_of({{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}});
    return s;
}
const grammar_char_set & space() {  // ECMAScript \s
    static const grammar_char_set s = set_of({{'\t', '\r'}, {' ', ' '}, {0xA0, 0xA0}, {0x1680, 0x1680}, {0x2000, 0x200A},
                                              {0x2028, 0x2029}, {0x202F, 0x202F}, {0x205F, 0x205F}, {0x3000, 0x3000},
                                              {0xFEFF, 0xFEFF}});
    return s;
}
const grammar_char_set & not_line_end() {  // ECMAScript .
    static const grammar_char_set s = grammar_char_set_complement(set_of({{'\n', '\n'}, {'\r', '\r'}, {0x2028, 0x2029}}));
    return s;
}

class regex_parser {
public:
    regex_parser(std::string_view p, regex_tree * out) : p_(p), t_(*out) {}

    void parse() {
        t_.nodes.clear();
        t_.root = parse_alternation();
        if (pos_ < p_.size()) fail(std::string("unexpected '") + p_[pos_] + "'");
    }

private:
    std::string_view p_;
    size_t pos_ = 0;
    size_t groups_open_ = 0;  // nesting of groups now: the tree's height, which its walks recurse over
    regex_tree & t_;

    [[noreturn]] void fail(const std::string & m) const { throw regex_failure{m}; }

    char peek() const { return pos_ < p_.size() ? p_[pos_] : '\0'; }

    uint32_t add(regex_node n) {
        if (t_.nodes.size() > 100000) fail("the pattern is too long");
        t_.nodes.push_back(std::move(n));
        return uint32_t(t_.nodes.size() - 1);
    }

    uint32_t add_chars(const grammar_char_set & s) {
        regex_node n;
        n.k = regex_node::kind::chars;
        n.set = s;
        return add(std::move(n));
    }

    // A list of parts as one node: the part itself when there is one.
    uint32_t group(regex_node::kind k, std::vector<uint32_t> kids) {
        if (kids.size() == 1) return kids[0];
        regex_node n;
        n.k = k;
        n.kids = std::move(kids);
        return add(std::move(n));
    }

    uint32_t parse_alternation() {
        std::vector<uint32_t> alts = {parse_concat()};
        while (peek() == '|') {
            ++pos_;
            alts.push_back(parse_concat());
        }
        return group(regex_node::kind::alt, std::move(alts));
    }

    uint32_t parse_concat() {
        std::vector<uint32_t> parts;
        while (pos_ < p_.size() && peek() != '|' && peek() != ')') parts.push_back(parse_quantifier(parse_atom()));
        return group(regex_node::kind::seq, std::move(parts));
    }

    bool at_count() const { return peek() == '{' && pos_ + 1 < p_.size() && p_[pos_ + 1] >= '0' && p_[pos_ + 1] <= '9'; }

    uint32_t parse_quantifier(uint32_t atom) {
        const char c = peek();
        uint32_t lo = 0, hi = regex_unbounded;
        if (c == '*' || c == '+' || c == '?') {
            ++pos_;
            lo = c == '+' ? 1 : 0;
            hi = c == '?' ? 1 : regex_unbounded;
        } else if (at_count()) {
            const size_t close = p_.find('}', pos_);
            if (close == std::string_view::npos) fail("unterminated {m,n}");
            const std::string q(p_.substr(pos_ + 1, close - pos_ - 1));
            const size_t comma = q.find(',');
            auto number = [&](const std::string & d) -> uint32_t {
                if (d.empty() || d.size() > 7 || d.find_first_not_of("0123456789") != std::string::npos) fail("bad quantifier {" + q + "}");
                return uint32_t(std::stoul(d));
            };
            lo = number(q.substr(0, comma));
            hi = comma == std::string::npos ? lo : comma + 1 == q.size() ? regex_unbounded : number(q.substr(comma + 1));
            if (hi < lo) fail("bad quantifier {" + q + "}");
            pos_ = close + 1;
        } else {
            return atom;
        }
        if (peek() == '?') ++pos_;  // lazy: the same language
        if (peek() == '*' || peek() == '+' || at_count()) fail("nested quantifier");
        const regex_node::kind k = t_.nodes[atom].k;
        if (k == regex_node::kind::line_start || k == regex_node::kind::line_end) fail("a quantifier on an anchor");
        regex_node n;
        n.k = regex_node::kind::repeat;
        n.kids = {atom};
        n.min = lo;
        n.max = hi;
        return add(std::move(n));
    }

    uint32_t parse_atom() {
        const char c = peek();
        switch (c) {
            case '(': return parse_group();
            case '[': return add_chars(parse_class());
            case '.': ++pos_; return add_chars(not_line_end());
            case '\\': ++pos_; return add_chars(parse_escape(false));
            case '^': case '$': {
                ++pos_;
                regex_node n;
                n.k = c == '^' ? regex_node::kind::line_start : regex_node::kind::line_end;
                return add(std::move(n));
            }
            case '*': case '+': case '?': fail(std::string("'") + c + "' with nothing to repeat");
            default: break;
        }
        uint32_t cp = 0;
        if (!grammar_utf8_decode(p_, pos_, cp)) fail("invalid UTF-8");
        return add_chars(set_of({{cp, cp}}));
    }

    uint32_t parse_group() {
        if (++groups_open_ > regex_max_group_depth) fail("groups nested more than " + std::to_string(regex_max_group_depth) + " deep");
        struct close_group {
            size_t & open;
            ~close_group() { --open; }
        } closing{groups_open_};
        ++pos_;
        if (peek() == '?') {
            if (p_.substr(pos_, 2) == "?:") {
                pos_ += 2;
            } else if (p_.substr(pos_, 2) == "?<" && pos_ + 2 < p_.size() && p_[pos_ + 2] != '=' && p_[pos_ + 2] != '!') {
                const size_t close = p_.find('>', pos_);
                if (close == std::string_view::npos) fail("unterminated group name");
                pos_ = close + 1;
            } else {
                fail("lookaround and inline flags are not supported");
            }
        }
        const uint32_t body = parse_alternation();
        if (peek() != ')') fail("missing ')'");
        ++pos_;
        return body;
    }

    uint32_t parse_hex(size_t digits) {
        uint32_t v = 0;
        for (size_t i = 0; i < digits; ++i) {
            const char h = peek();
            int d = (h >= '0' && h <= '9') ? h - '0' : (h >= 'a' && h <= 'f') ? h - 'a' + 10 : (h >= 'A' && h <= 'F') ? h - 'A' + 10 : -1;
            if (d < 0) fail("bad hex escape");
            v = v * 16 + uint32_t(d);
            ++pos_;
        }
        return v;
    }

    uint32_t parse_unicode_escape() {
        uint32_t v = 0;
        if (peek() == '{') {
            ++pos_;
            const size_t close = p_.find('}', pos_);
            if (close == std::string_view::npos || close == pos_ || close - pos_ > 6) fail("bad \\u{…} escape");
            v = parse_hex(close - pos_);
            ++pos_;
        } else {
            v = parse_hex(4);
        }
        if (v > grammar_max_code_point || (v >= 0xD800 && v <= 0xDFFF)) fail("\\u escape of a surrogate or past U+10FFFF");
        return v;
    }

    // The set of an escape after the backslash (pos_ at the letter); in_class: \b is backspace.
    grammar_char_set parse_escape(bool in_class) {
        const char e = peek();
        ++pos_;
        switch (e) {
            case 'd': return digits();
            case 'D': return grammar_char_set_complement(digits());
            case 'w': return word();
            case 'W': return grammar_char_set_complement(word());
            case 's': return space();
            case 'S': return grammar_char_set_complement(space());
            case 't': return set_of({{'\t', '\t'}});
            case 'n': return set_of({{'\n', '\n'}});
            case 'r': return set_of({{'\r', '\r'}});
            case 'f': return set_of({{'\f', '\f'}});
            case 'v': return set_of({{'\v', '\v'}});
            case '0': return set_of({{0, 0}});
            case 'x': { const uint32_t v = parse_hex(2); return set_of({{v, v}}); }
            case 'u': { const uint32_t v = parse_unicode_escape(); return set_of({{v, v}}); }
            case 'b':
                if (in_class) return set_of({{8, 8}});
                fail("word boundaries (\\b) are not supported");
            case 'B': fail("word boundaries (\\B) are not supported");
            case 'p': case 'P': fail("Unicode property escapes are not supported");
            case 'c': fail("control escapes (\\c) are not supported");
            case '\0': fail("trailing backslash");
            default: break;
        }
        if (e >= '1' && e <= '9') fail("backreferences are not supported");
        --pos_;
        uint32_t cp = 0;
        if (!grammar_utf8_decode(p_, pos_, cp)) fail("invalid UTF-8");
        return set_of({{cp, cp}});  // an escaped character stands for itself
    }

    // One class member's set: an escape or a character (pos_ at it).
    grammar_char_set class_atom(bool * single, uint32_t * cp) {
        *single = false;
        if (peek() == '\\') {
            ++pos_;
            grammar_char_set s = parse_escape(true);
            if (s.ranges.size() == 1 && s.ranges[0].lo == s.ranges[0].hi) {
                *single = true;
                *cp = s.ranges[0].lo;
            }
            return s;
        }
        if (!grammar_utf8_decode(p_, pos_, *cp)) fail("invalid UTF-8");
        *single = true;
        return set_of({{*cp, *cp}});
    }

    grammar_char_set parse_class() {
        ++pos_;
        const bool negate = peek() == '^';
        if (negate) ++pos_;
        grammar_char_set set;
        while (peek() != ']') {
            if (pos_ >= p_.size()) fail("unterminated character class");
            bool single = false;
            uint32_t lo = 0;
            grammar_char_set a = class_atom(&single, &lo);
            if (single && peek() == '-' && pos_ + 1 < p_.size() && p_[pos_ + 1] != ']') {
                ++pos_;
                bool single_hi = false;
                uint32_t hi = 0;
                class_atom(&single_hi, &hi);
                if (!single_hi || hi < lo) fail("bad character class range");
                set.ranges.push_back({lo, hi});
                continue;
            }
            set.ranges.insert(set.ranges.end(), a.ranges.begin(), a.ranges.end());
        }
        ++pos_;
        grammar_char_set_normalize(set);
        if (negate) set = grammar_char_set_complement(set);
        if (set.ranges.empty()) fail("a character class that matches nothing");
        return set;
    }
};

// body in parentheses ("" for the empty text). Appends rather than `"(" + body`, which GCC 12
// warns about wrongly (-Wrestrict) once inlined.
std::string parens(const std::string & body) {
    std::string out = "(";
    out += body.empty() ? std::string("\"\"") : body;
    out += ')';
    return out;
}

// GBNF for node i of a tree without anchors; false when an anchor is met.
bool node_to_gbnf(const regex_tree & t, uint32_t i, std::string * out);

// The children of n as GBNF, joined by sep.
bool kids_to_gbnf(const regex_tree & t, const regex_node & n, const char * sep, std::string * out) {
    for (uint32_t k : n.kids) {
        std::string part;
        if (!node_to_gbnf(t, k, &part)) return false;
        if (!out->empty()) *out += sep;
        *out += part;
    }
    return true;
}

bool node_to_gbnf(const regex_tree & t, uint32_t i, std::string * out) {
    const regex_node & n = t.nodes[i];
    std::string s;
    switch (n.k) {
        case regex_node::kind::chars: *out = json_schema_json_chars(n.set); return true;
        case regex_node::kind::line_start:
        case regex_node::kind::line_end: return false;
        case regex_node::kind::seq:
            if (!kids_to_gbnf(t, n, " ", &s)) return false;
            *out = s.empty() ? "\"\"" : s;
            return true;
        case regex_node::kind::alt:
            if (!kids_to_gbnf(t, n, " | ", &s)) return false;
            *out = parens(s);
            return true;
        case regex_node::kind::repeat: {
            std::string part;
            if (!node_to_gbnf(t, n.kids[0], &part)) return false;
            std::string q;  // appended piece by piece (GCC 12 warns wrongly about "{" + …)
            if (n.min == 0 && n.max == regex_unbounded) q = "*";
            else if (n.min == 1 && n.max == regex_unbounded) q = "+";
            else if (n.min == 0 && n.max == 1) q = "?";
            else {
                q += '{';
                q += std::to_string(n.min);
                if (n.max != n.min) q += ',';
                if (n.max != n.min && n.max != regex_unbounded) q += std::to_string(n.max);
                q += '}';
            }
            *out = parens(part) + q;
            return true;
        }
    }
    return false;
}

// One top-level alternative: its ^ and $ at the ends decide the unanchored json-char* around it.
bool branch_to_gbnf(const regex_tree & t, uint32_t i, const std::string & json_char, std::string * out) {
    const regex_node & n = t.nodes[i];
    std::vector<uint32_t> parts = n.k == regex_node::kind::seq ? n.kids : std::vector<uint32_t>{i};
    const bool start = !parts.empty() && t.nodes[parts.front()].k == regex_node::kind::line_start;
    if (start) parts.erase(parts.begin());
    const bool end = !parts.empty() && t.nodes[parts.back()].k == regex_node::kind::line_end;
    if (end) parts.pop_back();
    std::string body;
    for (uint32_t k : parts) {
        std::string part;
        if (!node_to_gbnf(t, k, &part)) return false;
        body += (body.empty() ? "" : " ") + part;
    }
    std::string s = start ? "" : json_char + "* ";
    s += parens(body);
    if (!end) s += " " + json_char + "*";
    *out = s;
    return true;
}

}  // namespace

// The largest product of the finite counts of repetitions nested in one another ({1,1000} inside
// {1,1000}: 10^6). Such a pattern is that ambiguous (a run of a's splits that many ways), and the
// lexer that matches it token by token would follow that many positions at once. Nodes are
// added after their kids, so one pass in index order sees every kid first.
uint64_t nested_count_product(const regex_tree & t) {
    std::vector<uint64_t> product(t.nodes.size(), 1);
    uint64_t most = 1;
    for (size_t i = 0; i < t.nodes.size(); ++i) {
        const regex_node & n = t.nodes[i];
        uint64_t inner = 1;
        for (uint32_t k : n.kids) inner = std::max(inner, product[k]);
        const uint64_t own = n.k == regex_node::kind::repeat && n.max != regex_unbounded ? std::max<uint64_t>(n.max, 1) : 1;
        product[i] = std::min<uint64_t>(inner * own, uint64_t(1) << 40);
        most = std::max(most, product[i]);
    }
    return most;
}

bool json_schema_regex_parse(std::string_view pattern, regex_tree * out, std::string * error) {
    try {
        regex_parser p(pattern, out);
        p.parse();
        if (nested_count_product(*out) > regex_max_nested_counts) {
            *error = "repetition counts nested in one another multiply past " + std::to_string(regex_max_nested_counts) +
                     " (too ambiguous to match token by token)";
            return false;
        }
        return true;
    } catch (const regex_failure & f) {
        *error = f.message;
        return false;
    }
}

bool json_schema_regex_tree_to_gbnf(const regex_tree & t, const std::string & json_char, std::string * out) {
    const regex_node & root = t.nodes[t.root];
    if (root.k != regex_node::kind::alt) return branch_to_gbnf(t, t.root, json_char, out);
    std::string s;
    for (uint32_t k : root.kids) {
        std::string branch;
        if (!branch_to_gbnf(t, k, json_char, &branch)) return false;
        s += (s.empty() ? "" : " | ") + branch;
    }
    *out = parens(s);
    return true;
}

namespace {

// The escapes (after the backslash) that JSON writers use for the characters of `decoded` that
// they escape: \" \\ and \b \f \n \r \t by letter, the other control characters as \u00XX
// (any \u00XX when every control character is in the set).
std::string escapes_of(const grammar_char_set & decoded) {
    std::string letters;
    for (const auto & [c, letter] : {std::pair<uint32_t, char>{'"', '"'}, {'\\', '\\'}, {'\b', 'b'}, {'\f', 'f'}, {'\n', 'n'},
                                     {'\r', 'r'}, {'\t', 't'}}) {
        if (decoded.contains(c)) letters += letter;
    }
    std::vector<std::string> alts;
    if (!letters.empty()) {
        grammar_char_set set;
        for (char l : letters) set.ranges.push_back({uint32_t(uint8_t(l)), uint32_t(uint8_t(l))});
        grammar_char_set_normalize(set);
        alts.push_back(grammar_char_set_to_gbnf(set));
    }
    bool all_controls = true;
    for (uint32_t c = 0; c < 0x20 && all_controls; ++c) all_controls = decoded.contains(c);
    if (all_controls) alts.push_back("\"u00\" [01] [0-9a-fA-F]");
    for (uint32_t c = 0; c < 0x20 && !all_controls; ++c) {
        const bool lettered = c == '\b' || c == '\f' || c == '\n' || c == '\r' || c == '\t';
        if (!decoded.contains(c) || lettered) continue;
        char buf[8];
        std::snprintf(buf, sizeof buf, "u%04x", unsigned(c));
        alts.push_back(grammar_literal_to_gbnf(buf));
    }
    if (alts.empty()) return "";
    std::string out = "\"\\\\\" ";
    if (alts.size() == 1) return out + alts[0];
    out += '(';
    for (size_t i = 0; i < alts.size(); ++i) out += (i ? " | " : "") + alts[i];
    return out + ")";
}

}  // namespace

std::string json_schema_json_chars(const grammar_char_set & decoded) {
    if (decoded.ranges.size() == 1 && decoded.ranges[0].lo == 0 && decoded.ranges[0].hi == grammar_max_code_point) return "json-char";
    std::vector<std::string> alts;
    // characters JSON writes as they are: all but '"', '\' and U+0000..U+001F
    grammar_char_set plain;
    for (const grammar_char_range & r : decoded.ranges) {
        if (r.hi < 0x20) continue;
        plain.ranges.push_back({std::max<uint32_t>(r.lo, 0x20), r.hi});
    }
    grammar_char_set_normalize(plain);
    grammar_char_set special{{{'"', '"'}, {'\\', '\\'}}};
    grammar_char_set without;
    for (const grammar_char_range & r : grammar_char_set_complement(special).ranges) {
        for (const grammar_char_range & q : plain.ranges) {
            const uint32_t lo = std::max(r.lo, q.lo), hi = std::min(r.hi, q.hi);
            if (lo <= hi) without.ranges.push_back({lo, hi});
        }
    }
    grammar_char_set_normalize(without);
    if (!without.ranges.empty()) alts.push_back(grammar_char_set_to_gbnf(without));
    const std::string escapes = escapes_of(decoded);  // one alternative for every escape
    if (!escapes.empty()) alts.push_back(escapes);
    if (alts.empty()) return "";
    if (alts.size() == 1) return alts[0];
    return "(" + alts[0] + " | " + alts[1] + ")";
}
