// text-util.h — byte-level helpers: whitespace, UTF-8 assembly, marker search.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace toolcall::detail {

inline bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

std::string_view trim(std::string_view s);

// Appends code point cp as UTF-8.
void utf8_append(uint32_t cp, std::string & out);

// Passes on complete UTF-8 characters of a byte stream that may be cut anywhere; bytes that
// cannot start or continue a character become U+FFFD.
class utf8_assembler {
public:
    void push(std::string_view in, std::string & out);
    // The stream has ended: a character still incomplete becomes U+FFFD.
    void flush(std::string & out);

private:
    std::string pending_;
};

struct marker_hit {
    size_t pos = std::string_view::npos;  // npos: none
    size_t index = 0;                     // into the marker list
};

// The earliest occurrence at or after `from` of any marker (the longest where several start at
// the same place).
marker_hit find_first_marker(std::string_view text, size_t from, const std::vector<std::string> & markers);

// The length of the longest end of `text` that is the beginning (but not all) of a marker: the
// part that must wait for more input before it can be called text.
size_t partial_marker_suffix(std::string_view text, const std::vector<std::string> & markers);

}  // namespace toolcall::detail
