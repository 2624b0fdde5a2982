// grammar/json-ordered-read.h — JSON text to nlohmann::ordered_json (keys in the text's order)
// in time linear in the text, within a nesting bound.
//
// Usage:
//   nlohmann::ordered_json doc;
//   std::string error;
//   if (!json_read_ordered(text, 512, &doc, &error)) return error_400(error);
//   // "nested deeper than 512 levels at /properties/a/properties/a/…", or nlohmann's parse error
//
// nlohmann's own parser inserts every key of an ordered_json object by a linear search for a
// duplicate, so an object of n keys costs O(n²) (100,000 keys: seconds; a 16 MiB request body of
// keys: hours). Here each object keeps a hash index of its keys while it is read. A repeated key
// keeps its first place and takes the last value, as nlohmann's parser does. The nesting bound
// is checked as the text is read (no recursion anywhere: nlohmann's parser and destructor need
// none either), and the error names the JSON pointer where it was passed.
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <string>
#include <string_view>

// False with *error set when the text is not one JSON value or nests deeper than max_depth
// levels of objects and arrays (the top level is level 1).
bool json_read_ordered(std::string_view text, size_t max_depth, nlohmann::ordered_json * out, std::string * error);
