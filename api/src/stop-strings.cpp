// api/stop-strings.cpp — stop-string hold-back for streaming.
#include "api/stop-strings.h"

#include <algorithm>

namespace {

// The longest k < stop.size() such that `text` (its part from `from` on) ends with stop[0, k).
size_t stop_partial_suffix(std::string_view text, std::string_view stop, size_t from) {
    size_t avail = text.size() - from;
    size_t k = std::min(stop.size() - 1, avail);
    for (; k > 0; --k) {
        if (text.substr(text.size() - k) == stop.substr(0, k)) {
            return k;
        }
    }
    return 0;
}

}  // namespace

size_t utf8_incomplete_tail(std::string_view s) {
    // Walk back over at most 3 continuation bytes to the byte that starts the last character.
    size_t n = s.size();
    size_t back = 0;
    while (back < 3 && back < n && (static_cast<unsigned char>(s[n - 1 - back]) & 0xC0) == 0x80) {
        ++back;
    }
    if (back == n) {
        return 0;  // only continuation bytes: invalid, nothing to wait for
    }
    unsigned char lead = static_cast<unsigned char>(s[n - 1 - back]);
    size_t len = lead < 0x80 ? 1 : (lead >> 5) == 0x6 ? 2 : (lead >> 4) == 0xE ? 3 : (lead >> 3) == 0x1E ? 4 : 0;
    if (len == 0) {
        return 0;  // a stray continuation byte or an invalid lead: pass it on
    }
    size_t have = back + 1;
    return have < len ? have : 0;
}

stop_scan_result stop_strings_scan(std::string_view text, const std::vector<std::string> & stops, size_t from) {
    stop_scan_result res;
    from = std::min(from, text.size());
    size_t best = std::string_view::npos;
    for (size_t i = 0; i < stops.size(); ++i) {
        if (stops[i].empty()) {
            continue;
        }
        size_t pos = text.find(stops[i], from);
        if (pos < best) {
            best = pos;
            res.stop_index = static_cast<int>(i);
        }
    }
    if (best != std::string_view::npos) {
        res.n_safe = best;
        res.stopped = true;
        return res;
    }
    size_t hold = 0;
    for (const std::string & stop : stops) {
        if (!stop.empty()) {
            hold = std::max(hold, stop_partial_suffix(text, stop, from));
        }
    }
    size_t n_safe = text.size() - hold;
    n_safe -= utf8_incomplete_tail(text.substr(0, n_safe));
    res.n_safe = std::max(n_safe, from);
    res.stop_index = -1;
    return res;
}

std::string stop_string_stream::push(std::string_view piece) {
    if (stopped_) {
        return "";
    }
    buf_.append(piece);
    stop_scan_result r = stop_strings_scan(buf_, stops_, n_sent_);
    std::string out = buf_.substr(n_sent_, r.n_safe - n_sent_);
    n_sent_ = r.n_safe;
    if (r.stopped) {
        stopped_ = true;
        stop_index_ = r.stop_index;
        buf_.resize(n_sent_);
    }
    return out;
}

std::string stop_string_stream::flush() {
    if (stopped_) {
        return "";
    }
    std::string out = buf_.substr(n_sent_);
    n_sent_ = buf_.size();
    return out;
}
