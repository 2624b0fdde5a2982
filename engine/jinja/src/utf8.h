// utf8.h — UTF-8 helpers for the Jinja engine: decoding (lenient: an invalid byte is one code
// point U+FFFD and is kept as it is where text is copied), encoding, code point offsets, and the
// python character classes the engine needs (whitespace, printable, simple case mapping).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace jinja {

// Decodes the code point at s[i] and advances i past it (one byte for an invalid sequence).
uint32_t utf8_next(std::string_view s, size_t & i);
void utf8_append(std::string & out, uint32_t cp);
bool utf8_is_ascii(std::string_view s);
size_t utf8_length(std::string_view s);
// Byte offsets of every code point of s, followed by s.size().
std::vector<size_t> utf8_offsets(std::string_view s);
std::vector<uint32_t> utf8_decode(std::string_view s);

bool py_isspace(uint32_t cp);       // str.isspace() / regex \s
bool py_isprintable(uint32_t cp);   // str.isprintable() (approximate for rare scripts)
bool py_isalpha(uint32_t cp);
bool py_isdigit(uint32_t cp);
bool py_islower(uint32_t cp);
bool py_isupper(uint32_t cp);
uint32_t py_toupper(uint32_t cp);   // simple case mapping: ASCII, Latin-1, Latin Extended-A,
uint32_t py_tolower(uint32_t cp);   // Greek and Cyrillic
std::string py_upper(std::string_view s);
std::string py_lower(std::string_view s);

}  // namespace jinja
