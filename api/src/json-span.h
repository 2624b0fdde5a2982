// api/src/json-span.h — a value's text taken from a JSON text without parsing it into a document
// (private). A request body is parsed once, into a map that sorts keys; the parts passed on in the
// client's key order (a schema, tools, a call's arguments) are cut from the body's text instead of
// parsing all of it a second time.
//
// Usage:
//   std::optional<std::string> tools = json_compact_text_at(body, "/tools");  // "[{...}]"
#pragma once

#include <optional>
#include <string>
#include <string_view>

// The compact text (no whitespace outside strings) of the value at a JSON pointer ("/tools",
// "/messages/2/tool_calls/0/function/arguments") in `text`, which must be valid JSON (the body was
// parsed before). A key given twice in an object resolves to its last value, as the parser does.
// nullopt when the pointer names nothing, or when the text turns out not to be valid JSON.
std::optional<std::string> json_compact_text_at(std::string_view text, std::string_view pointer);
