// text-util.cpp — whitespace, UTF-8 assembly, marker search.
#include "text-util.h"

#include <algorithm>

namespace toolcall::detail {

namespace {
constexpr std::string_view replacement = "\xEF\xBF\xBD";  // U+FFFD
}

std::string_view trim(std::string_view s) {
    size_t b = 0;
    size_t e = s.size();
    while (b < e && is_space(s[b])) ++b;
    while (e > b && is_space(s[e - 1])) --e;
    return s.substr(b, e - b);
}

void utf8_append(uint32_t cp, std::string & out) {
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

void utf8_assembler::push(std::string_view in, std::string & out) {
    pending_.append(in);
    size_t i = 0;
    const size_t n = pending_.size();
    while (i < n) {
        auto c = static_cast<unsigned char>(pending_[i]);
        if (c < 0x80) {
            out += static_cast<char>(c);
            ++i;
            continue;
        }
        size_t len = 0;
        unsigned lo = 0x80;
        unsigned hi = 0xBF;  // the second byte's range (no overlongs, surrogates, > U+10FFFF)
        if (c >= 0xC2 && c <= 0xDF) {
            len = 2;
        } else if (c >= 0xE0 && c <= 0xEF) {
            len = 3;
            if (c == 0xE0) lo = 0xA0;
            if (c == 0xED) hi = 0x9F;
        } else if (c >= 0xF0 && c <= 0xF4) {
            len = 4;
            if (c == 0xF0) lo = 0x90;
            if (c == 0xF4) hi = 0x8F;
        } else {
            out += replacement;
            ++i;
            continue;
        }
        size_t k = 1;
        bool bad = false;
        for (; k < len && i + k < n; ++k) {
            auto d = static_cast<unsigned char>(pending_[i + k]);
            if (d < (k == 1 ? lo : 0x80) || d > (k == 1 ? hi : 0xBF)) {
                bad = true;
                break;
            }
        }
        if (bad) {
            out += replacement;
            ++i;
            continue;
        }
        if (k < len) break;  // cut: wait for the rest
        out.append(pending_, i, len);
        i += len;
    }
    pending_.erase(0, i);
}

void utf8_assembler::flush(std::string & out) {
    if (!pending_.empty()) out += replacement;
    pending_.clear();
}

marker_hit find_first_marker(std::string_view text, size_t from, const std::vector<std::string> & markers) {
    marker_hit best;
    for (size_t m = 0; m < markers.size(); ++m) {
        if (markers[m].empty()) continue;
        size_t p = text.find(markers[m], from);
        if (p == std::string_view::npos) continue;
        if (p < best.pos || (p == best.pos && markers[m].size() > markers[best.index].size())) {
            best.pos = p;
            best.index = m;
        }
    }
    return best;
}

size_t partial_marker_suffix(std::string_view text, const std::vector<std::string> & markers) {
    size_t best = 0;
    for (const std::string & m : markers) {
        size_t k = std::min(m.size() - (m.empty() ? 0 : 1), text.size());
        for (; k > best; --k) {
            if (text.substr(text.size() - k) == std::string_view(m).substr(0, k)) {
                best = k;
                break;
            }
        }
    }
    return best;
}

}  // namespace toolcall::detail
