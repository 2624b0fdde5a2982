// GBNF text to a grammar (grammar/gbnf.h): a recursive-descent parser over the bytes of the text
// that builds rules as it reads them (a rule is created when first named, defined or not; every
// named rule must be defined by the end of the text).
#include "grammar/gbnf.h"

#include "utf8-decode.h"

#include <map>
#include <unordered_map>

namespace {

// Thrown inside the parser with the byte offset of the problem; turned into line / column.
struct gbnf_failure {
    size_t offset;
    std::string message;
};

bool is_name_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
}

int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

// Repetition counts up to this are written out; larger ones are built by doubling.
constexpr uint32_t k_small_count = 32;

class gbnf_parser {
public:
    explicit gbnf_parser(std::string_view text) : s_(text) {}

    grammar parse() {
        skip_space(true);
        while (pos_ < s_.size()) {
            parse_rule();
            skip_space(true);
        }
        resolve_references();
        return std::move(g_);
    }

private:
    std::string_view s_;
    size_t pos_ = 0;
    grammar g_;
    size_t n_symbols_ = 0;
    size_t groups_open_ = 0;  // nesting of '(' now (the parser recurses once per group)
    std::map<std::string, uint32_t, std::less<>> user_rules_;  // name → rule, defined or referenced
    std::map<uint32_t, size_t> defined_at_;                     // user rule → offset of its name
    std::map<uint32_t, size_t> first_use_;                      // user rule → offset of its first use
    std::unordered_map<std::string, uint32_t> by_name_;         // every rule by its current name
    std::unordered_map<std::string, uint32_t> next_suffix_;     // generated names: next n of base-n

    [[noreturn]] void fail(size_t offset, std::string message) const { throw gbnf_failure{offset, std::move(message)}; }

    char peek(size_t ahead = 0) const { return pos_ + ahead < s_.size() ? s_[pos_ + ahead] : '\0'; }
    bool at_end() const { return pos_ >= s_.size(); }

    // Spaces, tabs and comments; newlines too when newline_ok.
    void skip_space(bool newline_ok) {
        while (!at_end()) {
            const char c = peek();
            if (c == ' ' || c == '\t' || (newline_ok && (c == '\n' || c == '\r'))) {
                ++pos_;
            } else if (c == '#') {
                while (!at_end() && peek() != '\n') ++pos_;
            } else {
                break;
            }
        }
    }

    std::string parse_name() {
        const size_t start = pos_;
        while (!at_end() && is_name_char(peek())) ++pos_;
        if (pos_ == start) fail(start, "expected a rule name");
        return std::string(s_.substr(start, pos_ - start));
    }

    uint32_t new_rule(std::string name, bool generated) {
        by_name_[name] = uint32_t(g_.rules.size());
        grammar_rule r;
        r.name = std::move(name);
        r.generated = generated;
        g_.rules.push_back(std::move(r));
        return uint32_t(g_.rules.size() - 1);
    }

    // A rule named after `parent` for a group or repetition: parent-1, parent-2, … (a name the
    // text may still define gets another name when it does: see user_rule).
    uint32_t new_generated_rule(uint32_t parent) {
        const std::string base = g_.rules[parent].name;
        uint32_t & n = next_suffix_[base];
        for (;;) {
            std::string name = base + "-" + std::to_string(++n);
            if (!by_name_.count(name)) return new_rule(std::move(name), true);
        }
    }

    // The rule the text names `name`, created on first mention.
    uint32_t user_rule(const std::string & name) {
        if (auto it = user_rules_.find(name); it != user_rules_.end()) return it->second;
        if (auto clash = by_name_.find(name); clash != by_name_.end()) {  // a generated rule took the name
            const uint32_t other = clash->second;
            by_name_.erase(clash);
            std::string renamed = name + "-g";
            while (by_name_.count(renamed)) renamed += "g";
            g_.rules[other].name = renamed;
            by_name_[renamed] = other;
        }
        const uint32_t r = new_rule(name, false);
        user_rules_.emplace(name, r);
        return r;
    }

    void count_symbols(size_t n) {
        n_symbols_ += n;
        if (n_symbols_ > grammar_max_symbols) fail(pos_, "the grammar is too large once repetitions are expanded");
    }

    void parse_rule() {
        const size_t name_at = pos_;
        const std::string name = parse_name();
        skip_space(false);
        if (s_.substr(pos_, 3) != "::=") fail(pos_, "expected '::=' after rule name '" + name + "'");
        pos_ += 3;
        const uint32_t r = user_rule(name);
        if (auto it = defined_at_.find(r); it != defined_at_.end()) {
            fail(name_at, "rule '" + name + "' is defined twice (first at " + place(it->second) + ")");
        }
        defined_at_.emplace(r, name_at);
        skip_space(true);
        parse_alternatives(r, false);
        if (!at_end() && peek() != '\n' && peek() != '\r') {
            fail(pos_, std::string("unexpected '") + peek() + "'");
        }
    }

    void parse_alternatives(uint32_t rule, bool nested) {
        parse_sequence(rule, nested);
        for (;;) {
            if (!nested) {  // a top-level rule continues where the next line starts with '|'
                const size_t save = pos_;
                skip_space(true);
                if (peek() != '|') {
                    pos_ = save;
                    return;
                }
            }
            if (peek() != '|') return;
            ++pos_;
            skip_space(true);
            parse_sequence(rule, nested);
        }
    }

    void push_symbol(uint32_t rule, grammar_symbol sym) {
        g_.rules[rule].alternatives.back().push_back(sym);
        count_symbols(1);
    }

    void parse_sequence(uint32_t rule, bool nested) {
        g_.rules[rule].alternatives.emplace_back();
        size_t last_start = SIZE_MAX;  // index in the sequence where the last element begins
        for (;;) {
            const char c = peek();
            grammar_sequence & seq = g_.rules[rule].alternatives.back();
            if (c == '"') {
                last_start = seq.size();
                parse_literal(rule);
            } else if (c == '[') {
                last_start = seq.size();
                push_symbol(rule, {grammar_symbol_kind::chars, g_.intern_set(parse_class())});
            } else if (c == '.') {
                ++pos_;
                last_start = seq.size();
                push_symbol(rule, {grammar_symbol_kind::chars, g_.intern_set({{{0, grammar_max_code_point}}})});
            } else if (is_name_char(c)) {
                last_start = seq.size();
                const size_t at = pos_;
                const uint32_t ref = user_rule(parse_name());
                first_use_.emplace(ref, at);
                push_symbol(rule, {grammar_symbol_kind::rule, ref});
            } else if (c == '(') {
                if (++groups_open_ > grammar_max_group_depth) {
                    fail(pos_, "groups nested more than " + std::to_string(grammar_max_group_depth) + " deep");
                }
                ++pos_;
                const uint32_t group = new_generated_rule(rule);
                skip_space(true);
                parse_alternatives(group, true);
                skip_space(true);
                if (peek() != ')') fail(pos_, "expected ')'");
                ++pos_;
                --groups_open_;
                last_start = g_.rules[rule].alternatives.back().size();
                push_symbol(rule, {grammar_symbol_kind::rule, group});
            } else if (c == '*' || c == '+' || c == '?' || c == '{') {
                if (last_start == SIZE_MAX) fail(pos_, std::string("'") + c + "' must follow an element");
                parse_repetition(rule, last_start);
                last_start = SIZE_MAX;
            } else {
                return;
            }
            skip_space(nested);
        }
    }

    // One code point of a literal or class at pos_, escapes decoded.
    uint32_t parse_char() {
        const size_t at = pos_;
        if (peek() == '\\') {
            const char e = peek(1);
            pos_ += 2;
            switch (e) {
                case 'n': return '\n';
                case 'r': return '\r';
                case 't': return '\t';
                case '\\': case '"': case '\'': case '[': case ']': case '-': case '^': case '/': return uint32_t(e);
                case 'x': return parse_hex(2, at);
                case 'u': return parse_hex(4, at);
                case 'U': return parse_hex(8, at);
                default: fail(at, std::string("unknown escape '\\") + (e ? std::string(1, e) : std::string()) + "'");
            }
        }
        uint32_t cp = 0;
        if (!grammar_utf8_decode(s_, pos_, cp)) fail(at, "invalid UTF-8");
        return cp;
    }

    uint32_t parse_hex(int digits, size_t at) {
        uint32_t v = 0;
        for (int i = 0; i < digits; ++i) {
            const int h = hex_value(peek());
            if (h < 0) fail(at, "expected " + std::to_string(digits) + " hex digits after the escape");
            v = v * 16 + uint32_t(h);
            ++pos_;
        }
        if (v > grammar_max_code_point || (v >= 0xD800 && v <= 0xDFFF)) fail(at, "the escape is no Unicode code point");
        return v;
    }

    void parse_literal(uint32_t rule) {
        const size_t start = pos_;
        ++pos_;  // "
        while (peek() != '"') {
            if (at_end() || peek() == '\n') fail(start, "unterminated string literal");
            const uint32_t cp = parse_char();
            push_symbol(rule, {grammar_symbol_kind::chars, g_.intern_set({{{cp, cp}}})});
        }
        ++pos_;
    }

    grammar_char_set parse_class() {
        const size_t start = pos_;
        ++pos_;  // [
        const bool negate = peek() == '^';
        if (negate) ++pos_;
        grammar_char_set set;
        while (peek() != ']') {
            if (at_end() || peek() == '\n') fail(start, "unterminated character class");
            const size_t at = pos_;
            const uint32_t lo = parse_char();
            uint32_t hi = lo;
            if (peek() == '-' && peek(1) != ']' && peek(1) != '\0') {
                ++pos_;
                hi = parse_char();
                if (hi < lo) fail(at, "character class range is reversed");
            }
            set.ranges.push_back({lo, hi});
        }
        ++pos_;
        if (set.ranges.empty() && !negate) fail(start, "empty character class");
        grammar_char_set_normalize(set);
        if (negate) set = grammar_char_set_complement(set);
        if (set.ranges.empty()) fail(start, "the character class matches no character");
        return set;
    }

    uint32_t parse_count() {
        const size_t at = pos_;
        uint64_t v = 0;
        if (peek() < '0' || peek() > '9') fail(at, "expected a number");
        while (peek() >= '0' && peek() <= '9') {
            v = v * 10 + uint64_t(peek() - '0');
            if (v > grammar_max_repeat) fail(at, "repetition count over " + std::to_string(grammar_max_repeat));
            ++pos_;
        }
        return uint32_t(v);
    }

    // The element that ends the current sequence at `start` becomes a repetition.
    void parse_repetition(uint32_t rule, size_t start) {
        const size_t at = pos_;
        uint32_t min = 0, max = UINT32_MAX;  // UINT32_MAX: unbounded
        const char c = peek();
        ++pos_;
        if (c == '+') {
            min = 1;
        } else if (c == '?') {
            max = 1;
        } else if (c == '{') {
            skip_space(true);
            min = parse_count();
            skip_space(true);
            if (peek() == ',') {
                ++pos_;
                skip_space(true);
                if (peek() != '}') max = parse_count();
            } else {
                max = min;
            }
            skip_space(true);
            if (peek() != '}') fail(pos_, "expected '}'");
            ++pos_;
            if (max < min) fail(at, "repetition {m,n} with n < m");
        }
        grammar_sequence & seq = g_.rules[rule].alternatives.back();
        grammar_sequence element(seq.begin() + ptrdiff_t(start), seq.end());
        seq.resize(start);
        expand_repetition(rule, element, min, max);
    }

    // A generated rule with the given alternatives.
    uint32_t make_rule(uint32_t parent, std::vector<grammar_sequence> alternatives) {
        const uint32_t r = new_generated_rule(parent);
        for (const grammar_sequence & a : alternatives) count_symbols(a.size());
        g_.rules[r].alternatives = std::move(alternatives);
        return r;
    }

    // Appends to `rule` n copies of what `unit` matches: n rule symbols when n is small, else by
    // doubling (d_0 = unit, d_{k+1} = d_k d_k; n as a sum of powers of two), O(log n) symbols.
    void push_copies(uint32_t rule, uint32_t parent, const grammar_sequence & unit, uint32_t n) {
        if (n <= k_small_count) {
            for (uint32_t i = 0; i < n; ++i) {
                for (const grammar_symbol & s : unit) push_symbol(rule, s);
            }
            return;
        }
        uint32_t d = make_rule(parent, {unit});
        for (uint32_t bit = 1;; bit <<= 1) {
            if (n & bit) push_symbol(rule, {grammar_symbol_kind::rule, d});
            if (bit > n / 2) break;
            d = make_rule(parent, {{{grammar_symbol_kind::rule, d}, {grammar_symbol_kind::rule, d}}});
        }
    }

    // element{min,max}: min copies; then, unbounded, a starred rule; else up to (max - min) more
    // (up_to).
    void expand_repetition(uint32_t rule, const grammar_sequence & element, uint32_t min, uint32_t max) {
        push_copies(rule, rule, element, min);
        if (max == min) return;
        if (max == UINT32_MAX) {  // star := element star | ""
            const uint32_t star = new_generated_rule(rule);
            grammar_sequence again = element;
            again.push_back({grammar_symbol_kind::rule, star});
            g_.rules[star].alternatives = {again, {}};
            count_symbols(again.size());
            push_symbol(rule, {grammar_symbol_kind::rule, star});
            return;
        }
        for (const grammar_symbol & s : up_to(rule, element, max - min)) push_symbol(rule, s);
    }

    // Symbols matching 0 … n copies of unit, unambiguously (one derivation per count, so that a
    // parser keeps few items): nested optionals for small n; else with pair = unit unit,
    //   n = 2m + 1:  up_to(pair, m) unit?
    //   n = 2m:      up_to(pair, m - 1) unit? | pair{m}   (the two cover disjoint counts)
    // which takes O(log n) rules.
    grammar_sequence up_to(uint32_t parent, const grammar_sequence & unit, uint32_t n) {
        if (n == 0) return {};
        if (n <= k_small_count) {
            uint32_t inner = UINT32_MAX;
            for (uint32_t k = 0; k < n; ++k) {
                grammar_sequence seq = unit;
                if (inner != UINT32_MAX) seq.push_back({grammar_symbol_kind::rule, inner});
                inner = make_rule(parent, {seq, {}});
            }
            return {{grammar_symbol_kind::rule, inner}};
        }
        grammar_sequence pair_seq = unit;
        pair_seq.insert(pair_seq.end(), unit.begin(), unit.end());
        const grammar_sequence pair = {{grammar_symbol_kind::rule, make_rule(parent, {pair_seq})}};
        const uint32_t maybe = make_rule(parent, {unit, {}});
        const uint32_t m = n / 2;
        grammar_sequence low = up_to(parent, pair, n % 2 == 1 ? m : m - 1);
        low.push_back({grammar_symbol_kind::rule, maybe});
        if (n % 2 == 1) return low;
        const uint32_t exact = new_generated_rule(parent);
        g_.rules[exact].alternatives.emplace_back();
        push_copies(exact, parent, pair, m);
        g_.rules[exact].alternatives.push_back(low);
        count_symbols(low.size());
        return {{grammar_symbol_kind::rule, exact}};
    }

    // Every rule used is defined (the first undefined one by place of first use is reported),
    // and there is a root.
    void resolve_references() {
        size_t worst = SIZE_MAX;
        std::string name;
        for (const auto & [rule, at] : first_use_) {
            if (!defined_at_.count(rule) && at < worst) {
                worst = at;
                name = g_.rules[rule].name;
            }
        }
        if (worst != SIZE_MAX) fail(worst, "undefined rule '" + name + "'");
        const auto root = user_rules_.find("root");
        if (root == user_rules_.end() || !defined_at_.count(root->second)) {
            throw gbnf_failure{SIZE_MAX, "no rule named 'root' (the start of the grammar)"};
        }
        g_.root = root->second;
    }

public:
    // "line L, column C" of a byte offset.
    std::string place(size_t offset) const {
        grammar_parse_error e = locate(offset);
        return "line " + std::to_string(e.line) + ", column " + std::to_string(e.column);
    }

    grammar_parse_error locate(size_t offset) const {
        grammar_parse_error e;
        e.line = 1;
        size_t line_start = 0;
        for (size_t i = 0; i < offset && i < s_.size(); ++i) {
            if (s_[i] == '\n') {
                ++e.line;
                line_start = i + 1;
            }
        }
        e.column = 1;
        for (size_t i = line_start; i < offset && i < s_.size(); ++i) {
            if ((static_cast<unsigned char>(s_[i]) & 0xC0) != 0x80) ++e.column;
        }
        return e;
    }
};

}  // namespace

std::string grammar_parse_error::to_string() const {
    if (line == 0) return message;
    return "line " + std::to_string(line) + ", column " + std::to_string(column) + ": " + message;
}

grammar_parse_result grammar_parse_gbnf(std::string_view text) {
    grammar_parse_result r;
    gbnf_parser p(text);
    try {
        r.value = p.parse();
    } catch (const gbnf_failure & f) {
        r.failed = true;
        if (f.offset != SIZE_MAX) r.error = p.locate(f.offset);
        r.error.message = f.message;
        r.value = grammar{};
    }
    return r;
}
