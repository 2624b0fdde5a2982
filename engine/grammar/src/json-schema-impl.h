// engine/grammar/src/json-schema-impl.h — the pieces of the JSON Schema compiler that build GBNF
// expressions: integer ranges (json-schema-ranges.cpp) and regular expressions
// (json-schema-regex.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

// GBNF for the decimal integers in [lo, hi] (either side open when absent), written as JSON
// writes them: no leading zeros, no "-0". Empty when the range is empty.
std::string json_schema_int_range(std::optional<int64_t> lo, std::optional<int64_t> hi);

// GBNF for the JSON numbers x (no exponent) with lo <= x <= hi (either side open when absent;
// *_excl: strict); the bounds are integers. Empty when no number is left.
std::string json_schema_number_range(std::optional<int64_t> lo, bool lo_excl, std::optional<int64_t> hi, bool hi_excl);

// GBNF for the digit strings of the integer part of non-negative numbers in [lo, hi] (hi absent:
// open), i.e. json_schema_int_range over non-negative bounds.
std::string json_schema_uint_range(uint64_t lo, std::optional<uint64_t> hi);

// GBNF for the contents of a JSON string (between the quotes, escapes as JSON writes them) whose
// decoded text matches the regular expression `pattern` (ECMAScript syntax, the subset listed in
// grammar/json-schema.h; unanchored ends match anything). `json_char` is the rule name of one
// JSON string character. On an unsupported construct returns false and sets *error.
bool json_schema_regex_to_gbnf(std::string_view pattern, const std::string & json_char, std::string * out,
                               std::string * error);

// GBNF for one JSON string character (as JSON writes it) whose decoded code point is in the set
// given by its ranges; used by patterns and formats.
struct grammar_char_set;
std::string json_schema_json_chars(const grammar_char_set & decoded);
