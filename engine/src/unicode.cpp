// engine/src/unicode.cpp — UTF-8 and category lookups for the tokenizers.
#include "unicode.h"

#include <algorithm>
#include <array>

namespace inferd::unicode {

uint8_t category_flags(uint32_t cp) {
    size_t lo = 0, hi = unicode_ranges_count;
    while (lo < hi) {
        const size_t mid = (lo + hi) / 2;
        if (unicode_ranges[mid].last < cp) {
            lo = mid + 1;
        } else if (unicode_ranges[mid].first > cp) {
            hi = mid;
        } else {
            return unicode_ranges[mid].flags;
        }
    }
    return 0;
}

bool is_whitespace(uint32_t cp) {
    if (cp >= 0x09 && cp <= 0x0D) return true;
    switch (cp) {
        case 0x20: case 0x85: case 0xA0: case 0x1680: case 0x2028: case 0x2029: case 0x202F:
        case 0x205F: case 0x3000:
            return true;
        default:
            return cp >= 0x2000 && cp <= 0x200A;
    }
}

bool is_nonspacing_mark(uint32_t cp) {
    const unicode_span * end = unicode_nonspacing_marks + unicode_nonspacing_marks_count;
    const unicode_span * it = std::upper_bound(unicode_nonspacing_marks, end, cp,
                                               [](uint32_t c, const unicode_span & s) { return c < s.first; });
    return it != unicode_nonspacing_marks && cp <= (it - 1)->last;
}

void fold_lowercase_strip_accents(uint32_t cp, std::vector<uint32_t> * out) {
    // Hangul syllables: leading consonant, vowel and (unless none) trailing consonant.
    constexpr uint32_t s_base = 0xAC00, l_base = 0x1100, v_base = 0x1161, t_base = 0x11A7;
    constexpr uint32_t v_count = 21, t_count = 28, s_count = 19 * v_count * t_count;
    if (cp >= s_base && cp < s_base + s_count) {
        const uint32_t s = cp - s_base;
        out->push_back(l_base + s / (v_count * t_count));
        out->push_back(v_base + (s % (v_count * t_count)) / t_count);
        if (s % t_count != 0) out->push_back(t_base + s % t_count);
        return;
    }
    if (is_nonspacing_mark(cp)) return;
    const unicode_fold * end = unicode_folds + unicode_folds_count;
    const unicode_fold * it =
        std::lower_bound(unicode_folds, end, cp, [](const unicode_fold & f, uint32_t c) { return f.cp < c; });
    if (it == end || it->cp != cp) {
        out->push_back(cp);
        return;
    }
    for (uint32_t c : it->to) {
        if (c != 0) out->push_back(c);
    }
}

size_t utf8_sequence_length(uint8_t b) {
    if (b < 0x80) return 1;
    if ((b & 0xE0) == 0xC0) return 2;
    if ((b & 0xF0) == 0xE0) return 3;
    if ((b & 0xF8) == 0xF0) return 4;
    return 1;
}

std::vector<uint32_t> utf8_decode(std::string_view text, std::vector<size_t> * offsets) {
    std::vector<uint32_t> out;
    out.reserve(text.size());
    if (offsets) offsets->clear();
    size_t i = 0;
    while (i < text.size()) {
        if (offsets) offsets->push_back(i);
        const uint8_t b = static_cast<uint8_t>(text[i]);
        const size_t n = utf8_sequence_length(b);
        if (n == 1) {
            out.push_back(b < 0x80 ? b : 0xFFFD);
            i++;
            continue;
        }
        bool ok = i + n <= text.size();
        uint32_t cp = b & (0x7F >> n);
        for (size_t k = 1; ok && k < n; k++) {
            const uint8_t c = static_cast<uint8_t>(text[i + k]);
            if ((c & 0xC0) != 0x80) ok = false;
            cp = (cp << 6) | (c & 0x3F);
        }
        if (!ok) {
            out.push_back(0xFFFD);
            i++;
            continue;
        }
        out.push_back(cp);
        i += n;
    }
    if (offsets) offsets->push_back(text.size());
    return out;
}

void utf8_append(std::string & out, uint32_t cp) {
    if (cp > 0x10FFFF) cp = 0xFFFD;
    if (cp < 0x80) {
        out.push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
        out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
        out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
        out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
}

namespace {

// Printable bytes ('!'..'~', 0xA1..0xAC, 0xAE..0xFF) map to themselves; the others, in byte
// order, to U+0100 upwards.
bool byte_is_printable(int b) {
    return (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
}

std::array<uint32_t, 256> make_byte_table() {
    std::array<uint32_t, 256> t{};
    uint32_t next = 0x100;
    for (int b = 0; b < 256; b++) t[b] = byte_is_printable(b) ? static_cast<uint32_t>(b) : next++;
    return t;
}

const std::array<uint32_t, 256> & byte_table() {
    static const std::array<uint32_t, 256> t = make_byte_table();
    return t;
}

}  // namespace

uint32_t byte_to_codepoint(uint8_t b) { return byte_table()[b]; }

int codepoint_to_byte(uint32_t cp) {
    if (cp < 0x100) return byte_is_printable(static_cast<int>(cp)) ? static_cast<int>(cp) : -1;
    if (cp < 0x100 + 68) {
        int k = static_cast<int>(cp - 0x100);
        for (int b = 0; b < 256; b++) {
            if (!byte_is_printable(b) && k-- == 0) return b;
        }
    }
    return -1;
}

}  // namespace inferd::unicode
