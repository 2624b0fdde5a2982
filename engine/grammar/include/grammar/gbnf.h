// grammar/gbnf.h — GBNF text (the grammar format of llama.cpp's `grammar` field) to a grammar.
//
// Usage:
//   grammar_parse_result r = grammar_parse_gbnf(text);
//   if (!r.ok()) return error_400(r.error.to_string());   // "line 3, column 12: expected '::='"
//   use(r.value);
//
// The format: rules `name ::= alternatives`, one per line (a rule continues on the next lines
// inside parentheses, after `::=` or `|`, and where the next line starts with `|`); names of
// letters, digits, `-` and `_`; alternatives separated by `|`; sequences of
//   "literal"        with escapes \n \r \t \\ \" \' \[ \] \- \^ \/ \xHH \uHHHH \UHHHHHHHH
//   [a-z0-9_]        character classes with ranges, [^…] negated, the same escapes
//   .                any character
//   name             a rule, defined anywhere in the text
//   ( … )            a group
// each followed by at most one of *, +, ?, {m}, {m,}, {m,n}. `#` starts a comment to the end of
// the line. Literals and classes hold UTF-8; the grammar matches code points. Rule `root` is the
// start.
//
// Errors name the line and column (1-based, columns in code points) and the problem: a syntax
// error, an undefined rule (at its first use), a rule defined twice, no `root`, an empty or
// reversed character class range, a bad escape, invalid UTF-8, a repetition bound over
// grammar_max_repeat, groups nested deeper than grammar_max_group_depth, or a grammar over
// grammar_max_symbols symbols once repetitions are expanded.
#pragma once

#include "grammar/grammar.h"

#include <cstddef>
#include <string>
#include <string_view>

constexpr uint32_t grammar_max_repeat = 1000000;
constexpr size_t grammar_max_symbols = size_t(1) << 20;
constexpr size_t grammar_max_group_depth = 1000;  // '(' inside '(': the parser's recursion

struct grammar_parse_error {
    uint32_t line = 0;    // 1-based; 0 when the error has no place (no `root`)
    uint32_t column = 0;  // 1-based, in code points
    std::string message;
    // "line L, column C: message", or the message alone without a place.
    std::string to_string() const;
};

struct grammar_parse_result {
    grammar value;
    grammar_parse_error error;
    bool failed = false;
    bool ok() const { return !failed; }
};

grammar_parse_result grammar_parse_gbnf(std::string_view text);
