// Value parsers of the configuration: integers, sizes, durations, booleans, enums, lists.
#include "config-internal.h"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

namespace {

bool ascii_iequals(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i) {
        char x = a[i], y = b[i];
        if (x >= 'A' && x <= 'Z') x = char(x - 'A' + 'a');
        if (y >= 'A' && y <= 'Z') y = char(y - 'A' + 'a');
        if (x != y) return false;
    }
    return true;
}

// Whole-string integer; false when s is empty, has junk or does not fit.
bool parse_whole_ll(std::string_view s, long long * out) {
    if (!s.empty() && s.front() == '+') s.remove_prefix(1);
    if (s.empty()) return false;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
    return ec == std::errc() && p == s.data() + s.size();
}

bool parse_whole_double(std::string_view s, double * out) {
    if (!s.empty() && s.front() == '+') s.remove_prefix(1);
    if (s.empty()) return false;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out, std::chars_format::fixed);
    return ec == std::errc() && p == s.data() + s.size() && std::isfinite(*out);
}

}  // namespace

std::string_view config_trim(std::string_view s) {
    const char * ws = " \t\r\n";
    size_t b = s.find_first_not_of(ws);
    if (b == std::string_view::npos) return {};
    size_t e = s.find_last_not_of(ws);
    return s.substr(b, e - b + 1);
}

std::string config_quote(std::string_view s) {
    constexpr size_t max_shown = 64;
    std::string q = "'";
    for (size_t i = 0; i < s.size() && i < max_shown; ++i) {
        unsigned char c = static_cast<unsigned char>(s[i]);
        if (c == '\n') {
            q += "\\n";
        } else if (c == '\t') {
            q += "\\t";
        } else if (c < 0x20 || c == 0x7f) {
            static const char hex[] = "0123456789abcdef";
            q += "\\x";
            q += hex[c >> 4];
            q += hex[c & 15];
        } else {
            q += char(c);
        }
    }
    if (s.size() > max_shown) q += "...";
    q += "'";
    return q;
}

bool config_parse_int(std::string_view s, long long lo, long long hi, const char * range_text, int * out,
                      std::string * err) {
    long long v = 0;
    if (!parse_whole_ll(s, &v)) {
        double d = 0;
        bool numeric = parse_whole_double(s, &d);
        if (s.empty()) {
            *err = "the value is empty (expected an integer)";
        } else if (numeric && d == std::floor(d)) {  // digits only, but too many for a long long
            *err = config_quote(s) + " is out of range (" + range_text + ")";
        } else {
            *err = config_quote(s) + (numeric ? " is not a whole number" : " is not an integer");
        }
        return false;
    }
    if (v < lo || v > hi) {
        *err = config_quote(s) + " is out of range (" + range_text + ")";
        return false;
    }
    *out = static_cast<int>(v);
    return true;
}

bool config_parse_float(std::string_view s, double lo, double hi, const char * range_text, float * out,
                        std::string * err) {
    double d = 0;
    if (!parse_whole_double(s, &d) || !std::isfinite(d)) {
        *err = s.empty() ? std::string("the value is empty (expected a number)") : config_quote(s) + " is not a number";
        return false;
    }
    if (d < lo || d > hi) {
        *err = config_quote(s) + " is out of range (" + range_text + ")";
        return false;
    }
    *out = static_cast<float>(d);
    return true;
}

bool config_parse_size(std::string_view s, size_t lo, size_t hi, size_t * out, std::string * err) {
    std::string_view digits = s;
    size_t n = 0;
    while (n < digits.size() && digits[n] >= '0' && digits[n] <= '9') ++n;
    std::string_view suffix = digits.substr(n);
    digits = digits.substr(0, n);
    unsigned shift = 0;
    if (!suffix.empty()) {
        char u = suffix.front();
        if (u == 'k' || u == 'K') shift = 10;
        else if (u == 'm' || u == 'M') shift = 20;
        else if (u == 'g' || u == 'G') shift = 30;
        std::string_view rest = shift ? suffix.substr(1) : suffix;
        bool rest_ok = rest.empty() || ascii_iequals(rest, "b") || (shift && ascii_iequals(rest, "ib"));
        if (!rest_ok) {
            *err = config_quote(s) + " is not a size (bytes, or a number with K, M or G, e.g. 16M)";
            return false;
        }
    }
    long long v = 0;
    if (!parse_whole_ll(digits, &v)) {
        *err = config_quote(s) + " is not a size (bytes, or a number with K, M or G, e.g. 16M)";
        return false;
    }
    unsigned long long bytes = static_cast<unsigned long long>(v);
    if (shift && bytes > (std::numeric_limits<unsigned long long>::max() >> shift)) bytes = ~0ull;
    else bytes <<= shift;
    if (bytes < lo || bytes > hi) {
        *err = config_quote(s) + " is out of range (" + config_size_text(lo) + ".." + config_size_text(hi) + ")";
        return false;
    }
    *out = static_cast<size_t>(bytes);
    return true;
}

bool config_parse_seconds(std::string_view s, long long lo_ms, long long hi_ms, std::chrono::milliseconds * out,
                          std::string * err) {
    double sec = 0;
    if (!parse_whole_double(s, &sec)) {
        *err = config_quote(s) + " is not a number of seconds";
        return false;
    }
    double ms = std::round(sec * 1000.0);
    if (ms < double(lo_ms) || ms > double(hi_ms)) {
        *err = config_quote(s) + " is out of range (" + config_seconds_text(std::chrono::milliseconds(lo_ms)) +
               ".." + config_seconds_text(std::chrono::milliseconds(hi_ms)) + " seconds)";
        return false;
    }
    *out = std::chrono::milliseconds(static_cast<long long>(ms));
    return true;
}

bool config_parse_bool(std::string_view s, bool * out, std::string * err) {
    for (const char * t : {"1", "true", "yes", "on"}) {
        if (ascii_iequals(s, t)) return *out = true, true;
    }
    for (const char * f : {"0", "false", "no", "off"}) {
        if (ascii_iequals(s, f)) return *out = false, true;
    }
    *err = config_quote(s) + " is not a boolean (true/false, 1/0, yes/no, on/off)";
    return false;
}

bool config_parse_cache_type(std::string_view s, config_cache_type * out, std::string * err) {
    for (config_cache_type t : {config_cache_type::f16, config_cache_type::f32, config_cache_type::q8_0}) {
        if (ascii_iequals(s, config_cache_type_name(t))) return *out = t, true;
    }
    *err = config_quote(s) + " is not a cache type (f16, f32 or q8_0)";
    return false;
}

bool config_parse_log_format(std::string_view s, config_log_format * out, std::string * err) {
    for (config_log_format f : {config_log_format::text, config_log_format::json}) {
        if (ascii_iequals(s, config_log_format_name(f))) return *out = f, true;
    }
    *err = config_quote(s) + " is not a log format (text or json)";
    return false;
}

std::vector<std::string> config_split_list(std::string_view s) {
    std::vector<std::string> items;
    while (true) {
        size_t comma = s.find(',');
        std::string_view item = config_trim(s.substr(0, comma));
        if (!item.empty()) items.emplace_back(item);
        if (comma == std::string_view::npos) break;
        s.remove_prefix(comma + 1);
    }
    return items;
}

std::string config_seconds_text(std::chrono::milliseconds ms) {
    long long v = ms.count();
    std::string text = std::to_string(v / 1000);
    long long frac = v % 1000;
    if (frac != 0) {
        char buf[8];
        std::snprintf(buf, sizeof buf, ".%03lld", frac);
        std::string f = buf;
        while (f.back() == '0') f.pop_back();
        text += f;
    }
    return text;
}

std::string config_size_text(size_t bytes) {
    const struct {
        unsigned shift;
        const char * unit;
    } units[] = {{30, "GiB"}, {20, "MiB"}, {10, "KiB"}};
    for (const auto & u : units) {
        size_t one = size_t{1} << u.shift;
        if (bytes >= one && bytes % one == 0) return std::to_string(bytes >> u.shift) + u.unit;
    }
    return std::to_string(bytes);
}

bool config_read_file(const std::string & path, std::string * out, std::string * err) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) {
        *err = "cannot read " + config_quote(path) + ": it is a directory";
        return false;
    }
    errno = 0;
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        *err = "cannot read " + config_quote(path) + ": " + (errno ? std::strerror(errno) : "cannot open it");
        return false;
    }
    std::ostringstream ss;
    ss << in.rdbuf();
    if (in.bad()) {
        *err = "cannot read " + config_quote(path) + ": read error";
        return false;
    }
    *out = ss.str();
    return true;
}

const char * config_cache_type_name(config_cache_type t) {
    switch (t) {
        case config_cache_type::f16: return "f16";
        case config_cache_type::f32: return "f32";
        case config_cache_type::q8_0: return "q8_0";
    }
    return "?";
}

const char * config_log_format_name(config_log_format f) {
    switch (f) {
        case config_log_format::text: return "text";
        case config_log_format::json: return "json";
    }
    return "?";
}
