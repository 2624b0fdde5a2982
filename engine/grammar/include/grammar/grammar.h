// grammar/grammar.h — a context-free grammar over Unicode code points: what GBNF text and
// JSON Schemas compile to, and what token masks are computed from.
//
// Usage:
//   grammar_parse_result r = grammar_parse_gbnf("root ::= \"yes\" | \"no\"");   // grammar/gbnf.h
//   if (!r.ok()) fprintf(stderr, "%s\n", r.error.to_string().c_str());      // "line 1, column 9: …"
//   const grammar & g = r.value;
//   std::string text = grammar_to_gbnf(g);                          // the rules, printed back
//   bool yes = grammar_recognize(g, "yes");                           // whole-text membership
//
// A grammar is a list of rules; rule i has alternatives, each a sequence of symbols; a symbol is
// either a set of code points (one character of the text) or a reference to a rule. An empty
// alternative matches the empty text. Repetitions and groups of GBNF become generated rules
// (named after the rule they appear in: "item-1", "item-2", …), so the grammar itself has only
// sequences and alternatives. Rule `root` (grammar::root) is the start.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

// Code points lo..hi, both included.
struct grammar_char_range {
    uint32_t lo = 0;
    uint32_t hi = 0;
    bool operator==(const grammar_char_range &) const = default;
};

// A set of code points: sorted, disjoint, non-adjacent ranges (grammar_char_set_normalize).
struct grammar_char_set {
    std::vector<grammar_char_range> ranges;
    bool contains(uint32_t cp) const;
    bool operator==(const grammar_char_set &) const = default;
};

// Sorts and merges ranges (overlapping or adjacent ones become one).
void grammar_char_set_normalize(grammar_char_set & s);
// The code points of 0..0x10FFFF not in s (s normalized).
grammar_char_set grammar_char_set_complement(const grammar_char_set & s);
// s as one GBNF element: `.` for every code point, else a character class (negated when that
// is shorter), e.g. `[a-z_]`, `[^"\\]`.
std::string grammar_char_set_to_gbnf(const grammar_char_set & s);
// text (UTF-8) as a GBNF string literal with escapes: `"a\"b\n"`.
std::string grammar_literal_to_gbnf(std::string_view text);

constexpr uint32_t grammar_max_code_point = 0x10FFFF;

enum class grammar_symbol_kind : uint8_t { chars, rule };

struct grammar_symbol {
    grammar_symbol_kind kind = grammar_symbol_kind::chars;
    uint32_t index = 0;  // into grammar::sets (chars) or grammar::rules (rule)
    bool operator==(const grammar_symbol &) const = default;
};

using grammar_sequence = std::vector<grammar_symbol>;

struct grammar_rule {
    std::string name;
    std::vector<grammar_sequence> alternatives;
    bool generated = false;  // made for a group or repetition, not written by the user
};

struct grammar {
    std::vector<grammar_rule> rules;
    std::vector<grammar_char_set> sets;  // distinct sets, shared by every symbol that uses one
    uint32_t root = 0;

    // Index of the set equal to s (added when new).
    uint32_t intern_set(const grammar_char_set & s);
    // Index of the rule named name, or -1.
    int32_t find_rule(std::string_view name) const;
    // Number of symbols over every alternative of every rule.
    size_t n_symbols() const;
};

// The grammar as GBNF: one line per rule, `name ::= alt | alt`, runs of single code points as
// string literals, other sets as character classes. Parsing it again gives the same grammar.
std::string grammar_to_gbnf(const grammar & g);

// Whether the whole of text (UTF-8; invalid UTF-8 is never accepted) is in the language of g's
// root rule. An Earley recognizer over code points: any context-free grammar (left recursion
// and empty rules included); for tests and tools, not for masks.
bool grammar_recognize(const grammar & g, std::string_view text);

// Whether text (UTF-8, possibly ending inside a code point) is the start of some text in the
// language of g: the reference a token mask is checked against (a token is allowed exactly when
// the output with it is such a start). Slow; for tests.
bool grammar_recognize_prefix(const grammar & g, std::string_view text);
