// JSON Schema `pattern` to GBNF over JSON string contents (json-schema-impl.h). A recursive
// descent over the pattern that emits GBNF as it goes: every matched character becomes the JSON
// string characters that decode to it (json_schema_json_chars), groups become parentheses,
// quantifiers stay quantifiers. Unsupported constructs (lookaround, backreferences, word
// boundaries, Unicode properties, flags, anchors inside the expression) are errors.
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

// body in parentheses ("" for the empty text). Appends rather than `"(" + body`, which GCC 12
// warns about wrongly (-Wrestrict) once inlined.
std::string parens(const std::string & body) {
    std::string out = "(";
    out += body.empty() ? std::string("\"\"") : body;
    out += ')';
    return out;
}

class regex_parser {
public:
    regex_parser(std::string_view p, const std::string & json_char) : p_(p), json_char_(json_char) {}

    std::string parse() {
        bool start_anchor = false, end_anchor = false;
        if (!p_.empty() && p_[0] == '^') {
            start_anchor = true;
            pos_ = 1;
        }
        if (p_.size() > pos_ && p_.back() == '$' && !escaped_at(p_.size() - 1)) {
            end_anchor = true;
            p_.remove_suffix(1);
        }
        std::string body = parse_alternation();
        if (pos_ < p_.size()) fail(std::string("unexpected '") + p_[pos_] + "'");
        std::string out;
        if (!start_anchor) out += json_char_ + "* ";
        out += parens(body);
        if (!end_anchor) out += " " + json_char_ + "*";
        return out;
    }

private:
    std::string_view p_;
    size_t pos_ = 0;
    const std::string & json_char_;

    [[noreturn]] void fail(const std::string & m) const { throw regex_failure{m}; }

    bool escaped_at(size_t i) const {
        size_t n = 0;
        while (i > n && p_[i - n - 1] == '\\') ++n;
        return n % 2 == 1;
    }

    char peek() const { return pos_ < p_.size() ? p_[pos_] : '\0'; }

    std::string parse_alternation() {
        std::vector<std::string> alts = {parse_concat()};
        while (peek() == '|') {
            ++pos_;
            alts.push_back(parse_concat());
        }
        if (alts.size() == 1) return alts[0];
        std::string out;
        for (size_t i = 0; i < alts.size(); ++i) {
            out += (i ? " | " : "") + (alts[i].empty() ? std::string("\"\"") : alts[i]);
        }
        return out;
    }

    std::string parse_concat() {
        std::string out;
        while (pos_ < p_.size() && peek() != '|' && peek() != ')') {
            std::string atom = parse_atom();
            atom = parse_quantifier(atom);
            out += (out.empty() ? "" : " ") + atom;
        }
        return out;
    }

    std::string parse_quantifier(const std::string & atom) {
        const char c = peek();
        std::string q;
        if (c == '*' || c == '+' || c == '?') {
            ++pos_;
            q = std::string(1, c);
        } else if (c == '{' && pos_ + 1 < p_.size() && p_[pos_ + 1] >= '0' && p_[pos_ + 1] <= '9') {
            const size_t close = p_.find('}', pos_);
            if (close == std::string_view::npos) fail("unterminated {m,n}");
            q = std::string(p_.substr(pos_, close - pos_ + 1));
            for (char d : q.substr(1, q.size() - 2)) {
                if (!(d >= '0' && d <= '9') && d != ',') fail("bad quantifier " + q);
            }
            pos_ = close + 1;
        } else {
            return atom;
        }
        if (peek() == '?') ++pos_;  // lazy: the same language
        if (peek() == '*' || peek() == '+' || (peek() == '{' && pos_ + 1 < p_.size() && p_[pos_ + 1] >= '0' && p_[pos_ + 1] <= '9')) {
            fail("nested quantifier");
        }
        return "(" + atom + ")" + q;
    }

    std::string parse_atom() {
        const char c = peek();
        switch (c) {
            case '(': return parse_group();
            case '[': return json_schema_json_chars(parse_class());
            case '.': ++pos_; return json_schema_json_chars(not_line_end());
            case '\\': return parse_escape_atom();
            case '^': fail("'^' inside the pattern (only at its start)");
            case '$': fail("'$' inside the pattern (only at its end)");
            case '*': case '+': case '?': fail(std::string("'") + c + "' with nothing to repeat");
            default: break;
        }
        uint32_t cp = 0;
        if (!grammar_utf8_decode(p_, pos_, cp)) fail("invalid UTF-8");
        return json_schema_json_chars(set_of({{cp, cp}}));
    }

    std::string parse_group() {
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
        std::string body = parse_alternation();
        if (peek() != ')') fail("missing ')'");
        ++pos_;
        return parens(body);
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
            case 'u': {
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
                return set_of({{v, v}});
            }
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

    std::string parse_escape_atom() {
        ++pos_;
        return json_schema_json_chars(parse_escape(false));
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

}  // namespace

std::string json_schema_json_chars(const grammar_char_set & decoded) {
    std::vector<std::string> alts;
    // characters JSON writes as they are: all but '"', '\' and U+0000..U+001F
    grammar_char_set plain;
    for (const grammar_char_range & r : decoded.ranges) {
        uint32_t lo = r.lo, hi = r.hi;
        if (hi < 0x20) continue;
        lo = std::max<uint32_t>(lo, 0x20);
        plain.ranges.push_back({lo, hi});
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
    if (decoded.contains('"')) alts.push_back(grammar_literal_to_gbnf("\\\""));
    if (decoded.contains('\\')) alts.push_back(grammar_literal_to_gbnf("\\\\"));
    for (uint32_t c = 0; c < 0x20; ++c) {
        if (!decoded.contains(c)) continue;
        const char * short_form = c == '\b' ? "\\b" : c == '\f' ? "\\f" : c == '\n' ? "\\n" : c == '\r' ? "\\r" : c == '\t' ? "\\t" : nullptr;
        if (short_form) {
            alts.push_back(grammar_literal_to_gbnf(short_form));
        } else {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", unsigned(c));
            alts.push_back(grammar_literal_to_gbnf(buf));
        }
    }
    if (alts.size() == 1) return alts[0];
    std::string out = "(";
    for (size_t i = 0; i < alts.size(); ++i) out += (i ? " | " : "") + alts[i];
    return out + ")";
}

bool json_schema_regex_to_gbnf(std::string_view pattern, const std::string & json_char, std::string * out,
                               std::string * error) {
    try {
        regex_parser p(pattern, json_char);
        *out = p.parse();
        return true;
    } catch (const regex_failure & f) {
        *error = f.message;
        return false;
    }
}
