// grammar/json-schema.h — a JSON Schema compiled to a grammar of the JSON texts it accepts.
//
// Usage:
//   json_schema_result r = json_schema_compile(R"({"type":"object","properties":{"a":{"type":"integer"}}})");
//   if (!r.ok()) return error_400(r.error);   // "unsupported keyword 'not' at /properties/a"
//   grammar_recognize(r.value, R"({"a": 1})");  // true
//   puts(r.gbnf.c_str());                       // the grammar as GBNF
//
// What is enforced (everything else that constrains values is rejected, naming the keyword and
// the place in the schema — a schema is never silently loosened):
//   type (one or a list); enum and const (each listed value checked against every keyword beside
//   it, so only values the whole schema accepts are written);
//   objects: properties in declared order, or with the required ones first in the order
//   `required` lists them (both orders are accepted), required and optional ones;
//   additionalProperties false / true / a schema (absent: allowed, after the declared ones);
//   patternProperties (a key takes the schema of every pattern it matches, additionalProperties
//   applies to keys matching none; keys are matched as decoded text); minProperties,
//   maxProperties; dependencies, dependentRequired, dependentSchemas;
//   arrays: items, prefixItems (and draft-4 items arrays with additionalItems), minItems,
//   maxItems; uniqueItems when at most one item may appear or the items come from at most 8
//   known values (an enum, a const, booleans, null);
//   strings: minLength, maxLength (in code points), pattern (a regular-expression subset:
//   literals, escapes \d \w \s \D \W \S, classes, ., groups, |, ?, *, +, {m,n}, ^ and $
//   anywhere), any number of them together with the lengths and a format; format date (checked
//   against the calendar, leap years included), time, date-time, uuid, email, uri, ipv4,
//   ipv6, hostname (other formats are annotations);
//   numbers: minimum / maximum / exclusiveMinimum / exclusiveMaximum of any decimal value (a
//   bounded number is written without an exponent); multipleOf an integer (with both bounds
//   leaving at most 256 multiples, or without bounds for steps up to 100) or a power of ten
//   below 1 (at most that many fraction digits);
//   allOf whose branches merge (properties, with each branch's additionalProperties applied to
//   the other branch's properties; required lists; types that intersect; enums; the tighter
//   bounds; patterns, anyOf / oneOf lists and conditions side by side; multipleOf steps);
//   anyOf; oneOf exactly when its branches are disjoint (types, listed values, or a property
//   both require with different listed values) or only say which properties an object has,
//   and for up to 4 overlapping branches by compiling each branch with the negation of the
//   others (where a negation cannot be written in full a smaller one is used, which can only
//   reject more); past that oneOf is compiled as anyOf (a value matching several branches is
//   accepted);
//   not of: a type, enum or const, a pattern, one bound (minimum, maxLength, maxItems, …),
//   required lists and not / anyOf / oneOf / allOf of them, properties whose schemas can be
//   negated, additionalProperties false, anyOf (each branch negated), not (the schema itself);
//   not {} and not true (no value) are errors;
//   if / then / else (the condition must be a form `not` accepts);
//   $ref to #, #/$defs/…, #/definitions/… and any JSON pointer into the document (recursion
//   included).
// A text that repeats a key is not one object validators agree on; the grammar never lets a
// declared or required key repeat, but keys of additional properties are not compared with each
// other, so minProperties counts a repeated one each time.
// A part of a schema that no value satisfies is left out where that is exact: an optional
// property that may then not appear, an anyOf branch, the array items from that position on;
// where it is required, or at the root, it is an error.
// Keywords that only annotate (title, description, default, examples, $schema, $id, $comment,
// readOnly, …, and unknown ones) are ignored.
//
// JSON strings are accepted as JSON writers write them: characters as they are except '"', '\'
// and control characters, which take the usual escapes; strings constrained by a pattern, a
// format or a property-name check accept only those forms (other escapes of the same character
// are rejected, never misread), and \uD800-\uDFFF escapes are never accepted.
//
// Whitespace between JSON tokens is bounded: nothing, one space, or a newline and up to 20 spaces
// or tabs of indentation (so compact and single-spaced serializations, and pretty-printing, are
// valid, and a model cannot loop in whitespace).
//
// Compiling is bounded (json_schema_options): the nesting of the compiler's own recursion
// (every fold, merge, reference and subschema counts one level, so no input reaches the C++
// stack's limit), the document's nesting, the work (subschemas visited, merged, folded or
// validated once combined), the grammar's rules and text, and the time; a pattern or
// property-name automaton past 4,096 states, or an object with more than 4,000 combinations of
// present properties. Past a budget the result is an error naming the place in the schema where
// the compiler gave up ("the schema is nested too deeply at /properties/a/items/…"), never a
// crash, a hang or unbounded memory. A `not` that would be folded through a $ref that leads back
// to itself is compiled as a recursive rule where it stands alone, and refused otherwise
// ("unsupported keyword 'not' at /… (the negation of a recursive $ref '#/$defs/n')").
#pragma once

#include "grammar/grammar.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

// Budgets of one compile (the defaults: at most 10 s, as inferd-cli grammar bench gives a schema;
// the server gives a request 0.5 s; reading the text counts).
struct json_schema_options {
    size_t max_depth = 256;            // nesting of subschemas, merges, folds and references
    size_t max_document_depth = 512;   // nesting of the schema's JSON document (objects and arrays)
    size_t max_work = 200000;          // subschemas visited, merged, folded or validated
    size_t max_rules = 200000;         // rules of the generated grammar
    size_t max_gbnf_bytes = size_t(4) << 20;  // its GBNF text, every attempt's rules included
    uint32_t max_time_ms = 10000;      // wall-clock time of the compile (0: no deadline)
    // When max_time_ms began (a server counts a request's compile from the request's arrival);
    // the default, no time, is the call's start.
    std::chrono::steady_clock::time_point started{};
};

struct json_schema_result {
    grammar value;
    std::string gbnf;   // the grammar's GBNF text (empty on error)
    std::string error;  // "" on success
    bool ok() const { return error.empty(); }
};

// schema_json: the schema as JSON text (a parse error is an error too).
json_schema_result json_schema_compile(std::string_view schema_json, const json_schema_options & options = {});
// The same from a parsed schema (its keys in the order written: properties keep that order).
json_schema_result json_schema_compile_document(const nlohmann::ordered_json & schema, const json_schema_options & options = {});
