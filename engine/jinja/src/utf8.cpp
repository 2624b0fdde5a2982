// utf8.cpp — see utf8.h.
#include "utf8.h"

namespace jinja {

uint32_t utf8_next(std::string_view s, size_t & i) {
    const auto b0 = static_cast<unsigned char>(s[i]);
    if (b0 < 0x80) {
        ++i;
        return b0;
    }
    int n = 0;
    uint32_t cp = 0;
    uint32_t min = 0;
    if ((b0 & 0xE0) == 0xC0) {
        n = 1, cp = b0 & 0x1F, min = 0x80;
    } else if ((b0 & 0xF0) == 0xE0) {
        n = 2, cp = b0 & 0x0F, min = 0x800;
    } else if ((b0 & 0xF8) == 0xF0) {
        n = 3, cp = b0 & 0x07, min = 0x10000;
    } else {
        ++i;
        return 0xFFFD;
    }
    for (int k = 1; k <= n; ++k) {
        if (i + k >= s.size()) {
            ++i;
            return 0xFFFD;
        }
        const auto b = static_cast<unsigned char>(s[i + k]);
        if ((b & 0xC0) != 0x80) {
            ++i;
            return 0xFFFD;
        }
        cp = (cp << 6) | (b & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
        ++i;
        return 0xFFFD;
    }
    i += n + 1;
    return cp;
}

void utf8_append(std::string & out, uint32_t cp) {
    if (cp < 0x80) {
        out += static_cast<char>(cp);
    } else if (cp < 0x800) {
        out += static_cast<char>(0xC0 | (cp >> 6));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        out += static_cast<char>(0xE0 | (cp >> 12));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
        out += static_cast<char>(0xF0 | (cp >> 18));
        out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (cp & 0x3F));
    }
}

bool utf8_is_ascii(std::string_view s) {
    for (char c : s) {
        if (static_cast<unsigned char>(c) >= 0x80) return false;
    }
    return true;
}

size_t utf8_length(std::string_view s) {
    if (utf8_is_ascii(s)) return s.size();
    size_t n = 0;
    for (size_t i = 0; i < s.size(); ++n) utf8_next(s, i);
    return n;
}

std::vector<size_t> utf8_offsets(std::string_view s) {
    std::vector<size_t> offsets;
    offsets.reserve(s.size() + 1);
    for (size_t i = 0; i < s.size();) {
        offsets.push_back(i);
        utf8_next(s, i);
    }
    offsets.push_back(s.size());
    return offsets;
}

std::vector<uint32_t> utf8_decode(std::string_view s) {
    std::vector<uint32_t> cps;
    cps.reserve(s.size());
    for (size_t i = 0; i < s.size();) cps.push_back(utf8_next(s, i));
    return cps;
}

bool py_isspace(uint32_t cp) {
    if (cp < 0x80) return cp == ' ' || (cp >= 9 && cp <= 13) || (cp >= 0x1C && cp <= 0x1F);
    return cp == 0x85 || cp == 0xA0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) ||
           cp == 0x2028 || cp == 0x2029 || cp == 0x202F || cp == 0x205F || cp == 0x3000;
}

bool py_isprintable(uint32_t cp) {
    if (cp < 0x20 || cp == 0x7F) return false;
    if (cp < 0x7F) return true;
    if (cp <= 0xA0 || cp == 0xAD) return false;  // C1 controls, NBSP (Zs), soft hyphen (Cf)
    if (py_isspace(cp)) return false;  // Zs, Zl, Zp other than the space
    if ((cp >= 0x600 && cp <= 0x605) || cp == 0x61C || cp == 0x6DD || cp == 0x70F ||
        cp == 0x180E || (cp >= 0x200B && cp <= 0x200F) || (cp >= 0x202A && cp <= 0x202E) ||
        (cp >= 0x2060 && cp <= 0x206F) || cp == 0xFEFF || (cp >= 0xFFF9 && cp <= 0xFFFB) ||
        cp == 0x110BD || (cp >= 0x1D173 && cp <= 0x1D17A) || (cp >= 0xE0000 && cp <= 0xE007F)) {
        return false;  // format characters (Cf)
    }
    if ((cp >= 0xD800 && cp <= 0xF8FF) || cp >= 0xF0000) return false;  // surrogates, private use
    if (cp == 0xFFFE || cp == 0xFFFF) return false;
    return true;
}

bool py_islower(uint32_t cp) { return py_toupper(cp) != cp; }
bool py_isupper(uint32_t cp) { return py_tolower(cp) != cp; }

bool py_isalpha(uint32_t cp) {
    if (cp < 0x80) return (cp | 0x20) >= 'a' && (cp | 0x20) <= 'z';
    if (py_islower(cp) || py_isupper(cp)) return true;
    if (cp == 0xAA || cp == 0xBA || cp == 0xDF) return true;
    return (cp >= 0x3040 && cp <= 0x30FF) || (cp >= 0x3400 && cp <= 0x9FFF) ||
           (cp >= 0xAC00 && cp <= 0xD7A3) || (cp >= 0x0590 && cp <= 0x06FF && cp != 0x60C);
}

bool py_isdigit(uint32_t cp) {
    return (cp >= '0' && cp <= '9') || (cp >= 0x660 && cp <= 0x669) || (cp >= 0xFF10 && cp <= 0xFF19);
}

uint32_t py_toupper(uint32_t cp) {
    if (cp < 0x80) return (cp >= 'a' && cp <= 'z') ? cp - 32 : cp;
    if (cp == 0xB5) return 0x39C;
    if ((cp >= 0xE0 && cp <= 0xFE && cp != 0xF7)) return cp - 32;
    if (cp == 0xFF) return 0x178;
    if (cp >= 0x100 && cp <= 0x17F) {
        if ((cp >= 0x139 && cp <= 0x148) || (cp >= 0x179 && cp <= 0x17E)) return (cp % 2 == 0) ? cp - 1 : cp;
        if (cp == 0x131) return 'I';
        if (cp == 0x17F) return 'S';
        if (cp == 0x138 || cp == 0x149) return cp;
        return (cp % 2 == 1) ? cp - 1 : cp;
    }
    if (cp >= 0x3B1 && cp <= 0x3C9 && cp != 0x3C2) return cp - 32;
    if (cp == 0x3C2) return 0x3A3;
    if (cp >= 0x3AC && cp <= 0x3AF) {
        static const uint32_t map[] = {0x386, 0x388, 0x389, 0x38A};
        return map[cp - 0x3AC];
    }
    if (cp == 0x3CC) return 0x38C;
    if (cp == 0x3CD || cp == 0x3CE) return cp - 0x3F;
    if (cp >= 0x430 && cp <= 0x44F) return cp - 32;
    if (cp >= 0x450 && cp <= 0x45F) return cp - 80;
    if (cp >= 0x460 && cp <= 0x4FF && cp != 0x482 && !(cp >= 0x483 && cp <= 0x489)) {
        if (cp >= 0x4C1 && cp <= 0x4CE) return (cp % 2 == 0) ? cp - 1 : cp;
        if (cp == 0x4CF) return 0x4C0;
        return (cp % 2 == 1) ? cp - 1 : cp;
    }
    if (cp >= 0xFF41 && cp <= 0xFF5A) return cp - 32;
    return cp;
}

uint32_t py_tolower(uint32_t cp) {
    if (cp < 0x80) return (cp >= 'A' && cp <= 'Z') ? cp + 32 : cp;
    if ((cp >= 0xC0 && cp <= 0xDE && cp != 0xD7)) return cp + 32;
    if (cp == 0x178) return 0xFF;
    if (cp >= 0x100 && cp <= 0x17F) {
        if ((cp >= 0x139 && cp <= 0x148) || (cp >= 0x179 && cp <= 0x17E)) return (cp % 2 == 1) ? cp + 1 : cp;
        if (cp == 0x130) return 'i';
        if (cp == 0x138 || cp == 0x149 || cp == 0x131 || cp == 0x17F) return cp;
        return (cp % 2 == 0) ? cp + 1 : cp;
    }
    if (cp >= 0x391 && cp <= 0x3A9 && cp != 0x3A2) return cp + 32;
    if (cp == 0x386) return 0x3AC;
    if (cp >= 0x388 && cp <= 0x38A) return cp + 37;
    if (cp == 0x38C) return 0x3CC;
    if (cp == 0x38E || cp == 0x38F) return cp + 0x3F;
    if (cp >= 0x410 && cp <= 0x42F) return cp + 32;
    if (cp >= 0x400 && cp <= 0x40F) return cp + 80;
    if (cp >= 0x460 && cp <= 0x4FF && cp != 0x482 && !(cp >= 0x483 && cp <= 0x489)) {
        if (cp >= 0x4C1 && cp <= 0x4CE) return (cp % 2 == 1) ? cp + 1 : cp;
        if (cp == 0x4C0) return 0x4CF;
        return (cp % 2 == 0) ? cp + 1 : cp;
    }
    if (cp >= 0xFF21 && cp <= 0xFF3A) return cp + 32;
    return cp;
}

static std::string map_case(std::string_view s, uint32_t (*f)(uint32_t)) {
    std::string out;
    out.reserve(s.size());
    for (size_t i = 0; i < s.size();) {
        const size_t start = i;
        const uint32_t cp = utf8_next(s, i);
        const uint32_t m = f(cp);
        if (m == cp) {
            out.append(s.substr(start, i - start));  // keeps invalid bytes as they are
        } else {
            utf8_append(out, m);
        }
    }
    return out;
}

std::string py_upper(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (size_t i = 0; i < s.size();) {
        const size_t start = i;
        const uint32_t cp = utf8_next(s, i);
        const uint32_t m = py_toupper(cp);
        if (cp == 0xDF) {
            out += "SS";  // python upper-cases the sharp s to two letters
        } else if (m == cp) {
            out.append(s.substr(start, i - start));
        } else {
            utf8_append(out, m);
        }
    }
    return out;
}

std::string py_lower(std::string_view s) { return map_case(s, py_tolower); }

}  // namespace jinja
