// engine/grammar/src/utf8-decode.h — strict UTF-8 decoding and encoding for the grammar module.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

// Decodes the code point at s[pos] and advances pos past it. False (pos unchanged) for invalid
// UTF-8: a stray continuation byte, a truncated sequence, an overlong form, a surrogate, or a
// value over 0x10FFFF.
inline bool grammar_utf8_decode(std::string_view s, size_t & pos, uint32_t & cp) {
    if (pos >= s.size()) return false;
    const auto b0 = static_cast<unsigned char>(s[pos]);
    if (b0 < 0x80) {
        cp = b0;
        ++pos;
        return true;
    }
    int n = 0;
    uint32_t v = 0, min = 0;
    if ((b0 & 0xE0) == 0xC0) {
        n = 1, v = b0 & 0x1F, min = 0x80;
    } else if ((b0 & 0xF0) == 0xE0) {
        n = 2, v = b0 & 0x0F, min = 0x800;
    } else if ((b0 & 0xF8) == 0xF0) {
        n = 3, v = b0 & 0x07, min = 0x10000;
    } else {
        return false;
    }
    if (pos + size_t(n) >= s.size()) return false;  // bytes pos + 1 .. pos + n must exist
    for (int i = 1; i <= n; ++i) {
        const auto b = static_cast<unsigned char>(s[pos + size_t(i)]);
        if ((b & 0xC0) != 0x80) return false;
        v = (v << 6) | (b & 0x3F);
    }
    if (v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) return false;
    cp = v;
    pos += size_t(n) + 1;
    return true;
}

// Appends the UTF-8 form of cp (a code point that is no surrogate, at most 0x10FFFF).
inline void grammar_utf8_append(std::string & out, uint32_t cp) {
    if (cp < 0x80) {
        out += char(cp);
    } else if (cp < 0x800) {
        out += char(0xC0 | (cp >> 6));
        out += char(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        out += char(0xE0 | (cp >> 12));
        out += char(0x80 | ((cp >> 6) & 0x3F));
        out += char(0x80 | (cp & 0x3F));
    } else {
        out += char(0xF0 | (cp >> 18));
        out += char(0x80 | ((cp >> 12) & 0x3F));
        out += char(0x80 | ((cp >> 6) & 0x3F));
        out += char(0x80 | (cp & 0x3F));
    }
}
