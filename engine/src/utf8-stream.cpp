// utf8-stream.cpp — streaming UTF-8 validation with U+FFFD replacement (see engine/utf8-stream.h).
#include "engine/utf8-stream.h"

#include <cstring>

namespace {

constexpr std::string_view utf8_replacement = "\xEF\xBF\xBD";  // U+FFFD

enum class utf8_scan_status { complete, incomplete, invalid };

// Examines the sequence that starts at p[0] (n >= 1 bytes available). *len receives: for a
// complete character its length; for a sequence valid so far that runs past the end, n; for an
// invalid one the length of its maximal valid-so-far prefix (>= 1), the bytes one U+FFFD replaces.
utf8_scan_status utf8_scan(const unsigned char * p, size_t n, size_t * len) {
    const unsigned char b = p[0];
    if (b < 0x80) {
        *len = 1;
        return utf8_scan_status::complete;
    }
    size_t need = 0;
    unsigned char lo = 0x80;  // allowed range of the second byte (it excludes overlong forms,
    unsigned char hi = 0xBF;  // surrogates and code points beyond U+10FFFF)
    if (b >= 0xC2 && b <= 0xDF) {
        need = 2;
    } else if (b >= 0xE0 && b <= 0xEF) {
        need = 3;
        if (b == 0xE0) lo = 0xA0;
        if (b == 0xED) hi = 0x9F;
    } else if (b >= 0xF0 && b <= 0xF4) {
        need = 4;
        if (b == 0xF0) lo = 0x90;
        if (b == 0xF4) hi = 0x8F;
    } else {
        *len = 1;  // continuation byte without a lead, C0, C1, F5..FF
        return utf8_scan_status::invalid;
    }
    for (size_t i = 1; i < need; ++i) {
        if (i >= n) {
            *len = n;
            return utf8_scan_status::incomplete;
        }
        const unsigned char c = p[i];
        const unsigned char c_lo = i == 1 ? lo : 0x80;
        const unsigned char c_hi = i == 1 ? hi : 0xBF;
        if (c < c_lo || c > c_hi) {
            *len = i;
            return utf8_scan_status::invalid;
        }
    }
    *len = need;
    return utf8_scan_status::complete;
}

}  // namespace

void utf8_stream::push(std::string_view piece, std::string * out) {
    std::string joined;
    std::string_view in = piece;
    if (tail_len_ > 0) {
        joined.reserve(tail_len_ + piece.size());
        joined.assign(tail_, tail_len_);
        joined.append(piece);
        in = joined;
        tail_len_ = 0;
    }
    const auto * p = reinterpret_cast<const unsigned char *>(in.data());
    const size_t n = in.size();
    size_t run_begin = 0;  // start of the valid bytes not yet appended
    size_t i = 0;
    while (i < n) {
        if (p[i] < 0x80) {
            ++i;
            continue;
        }
        size_t len = 0;
        const utf8_scan_status st = utf8_scan(p + i, n - i, &len);
        if (st == utf8_scan_status::complete) {
            i += len;
            continue;
        }
        out->append(in.data() + run_begin, i - run_begin);
        if (st == utf8_scan_status::incomplete) {
            std::memcpy(tail_, in.data() + i, len);  // len <= 3: a lead needs at most 3 more
            tail_len_ = len;
            return;
        }
        out->append(utf8_replacement);
        i += len;
        run_begin = i;
    }
    out->append(in.data() + run_begin, n - run_begin);
}

std::string utf8_stream::push(std::string_view piece) {
    std::string out;
    push(piece, &out);
    return out;
}

std::string utf8_stream::flush() {
    std::string out;
    if (tail_len_ > 0) out = utf8_replacement;
    tail_len_ = 0;
    return out;
}

size_t utf8_valid_prefix_len(std::string_view s) {
    const auto * p = reinterpret_cast<const unsigned char *>(s.data());
    const size_t n = s.size();
    size_t i = 0;
    while (i < n) {
        if (p[i] < 0x80) {
            ++i;
            continue;
        }
        size_t len = 0;
        if (utf8_scan(p + i, n - i, &len) != utf8_scan_status::complete) break;
        i += len;
    }
    return i;
}
