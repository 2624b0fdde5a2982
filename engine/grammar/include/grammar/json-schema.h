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
//   type (one or a list); properties in declared order, required and optional ones;
//   additionalProperties false / true / a schema (absent: allowed, after the declared ones);
//   items, prefixItems (and draft-4 items arrays with additionalItems), minItems, maxItems;
//   enum, const; anyOf; oneOf (as anyOf: a grammar cannot check that exactly one branch
//   matches — instances matching several branches are accepted); allOf whose branches merge
//   (objects' properties and required lists, types that intersect, one constraining branch);
//   $ref to #, #/$defs/…, #/definitions/… and any JSON pointer into the document (recursion
//   included); minLength, maxLength; pattern (a regular-expression subset: literals, escapes
//   \d \w \s \D \W \S, classes, ., groups, |, ?, *, +, {m,n}; ^ and $ only at the ends);
//   format date, time, date-time, uuid, email, uri, ipv4, hostname (other formats are
//   annotations); integer minimum / maximum / exclusive bounds; number bounds that are integers
//   (the number is then written without an exponent).
// Keywords that only annotate (title, description, default, examples, $schema, $id, $comment,
// readOnly, …, and unknown ones) are ignored.
//
// Whitespace between JSON tokens is bounded: nothing, one space, or a newline and up to 20 spaces
// or tabs of indentation (so compact and single-spaced serializations, and pretty-printing, are
// valid, and a model cannot loop in whitespace).
#pragma once

#include "grammar/grammar.h"

#include <string>
#include <string_view>

struct json_schema_result {
    grammar value;
    std::string gbnf;   // the grammar's GBNF text (empty on error)
    std::string error;  // "" on success
    bool ok() const { return error.empty(); }
};

// schema_json: the schema as JSON text (a parse error is an error too).
json_schema_result json_schema_compile(std::string_view schema_json);
