// Integer ranges as GBNF (json-schema-impl.h): the range is cut by number of digits, and each
// same-length range [lo, hi] of digit strings is written digit by digit:
//   lo == hi:              the literal
//   lo[0] == hi[0]:        that digit, then the range of the rest
//   otherwise:             lo[0] (rest >= lo[1:]) | [lo[0]+1 - hi[0]-1] any rest | hi[0] (rest <= hi[1:])
#include "json-schema-impl.h"

#include <string>
#include <vector>

namespace {

std::string digit_class(char lo, char hi) {
    if (lo == hi) return std::string("\"") + lo + "\"";
    return std::string("[") + lo + "-" + hi + "]";
}

std::string any_digits(size_t n) {
    if (n == 0) return "";
    if (n == 1) return "[0-9]";
    return "[0-9]{" + std::to_string(n) + "}";
}

std::string join(const std::vector<std::string> & alts) {
    if (alts.size() == 1) return alts[0];
    std::string out = "(";
    for (size_t i = 0; i < alts.size(); ++i) out += (i ? " | " : "") + alts[i];
    return out + ")";
}

std::string seq(const std::string & a, const std::string & b) {
    if (a.empty()) return b;
    if (b.empty()) return a;
    return a + " " + b;
}

// Digit strings of lo's length in [lo, hi] (same length, lo <= hi).
std::string same_length(const std::string & lo, const std::string & hi) {
    if (lo.empty()) return "";
    if (lo == hi) return "\"" + lo + "\"";
    if (lo.size() == 1) return digit_class(lo[0], hi[0]);
    const size_t rest = lo.size() - 1;
    if (lo.find_first_not_of('0') == std::string::npos && hi.find_first_not_of('9') == std::string::npos) {
        return any_digits(lo.size());
    }
    if (lo[0] == hi[0]) return seq(std::string("\"") + lo[0] + "\"", same_length(lo.substr(1), hi.substr(1)));
    std::vector<std::string> alts;
    alts.push_back(seq(std::string("\"") + lo[0] + "\"", same_length(lo.substr(1), std::string(rest, '9'))));
    if (hi[0] - lo[0] > 1) alts.push_back(seq(digit_class(char(lo[0] + 1), char(hi[0] - 1)), any_digits(rest)));
    alts.push_back(seq(std::string("\"") + hi[0] + "\"", same_length(std::string(rest, '0'), hi.substr(1))));
    return join(alts);
}

std::string power_of_ten_low(size_t len) {
    std::string out = len == 1 ? "0" : "1";
    if (len > 1) out.append(len - 1, '0');
    return out;
}

}  // namespace

std::string json_schema_uint_range(uint64_t lo, std::optional<uint64_t> hi) {
    if (hi && *hi < lo) return "";
    const std::string a = std::to_string(lo);
    std::vector<std::string> alts;
    const size_t last = hi ? std::to_string(*hi).size() : a.size();
    for (size_t len = a.size(); len <= last; ++len) {
        const std::string from = len == a.size() ? a : power_of_ten_low(len);
        const std::string to = hi && len == last ? std::to_string(*hi) : std::string(len, '9');
        // a length above 1 never starts with 0: from starts with 1..9 there
        alts.push_back(same_length(from, to));
    }
    if (!hi) alts.push_back("[1-9] [0-9]{" + std::to_string(a.size()) + ",}");  // every longer number
    return join(alts);
}

std::string json_schema_int_range(std::optional<int64_t> lo, std::optional<int64_t> hi) {
    if (lo && hi && *hi < *lo) return "";
    std::vector<std::string> alts;
    // negative values -x, x in [max(1, -hi), -lo]
    if (!lo || *lo < 0) {
        const uint64_t x_lo = hi && *hi < 0 ? uint64_t(-(*hi + 1)) + 1 : 1;
        std::optional<uint64_t> x_hi;
        if (lo) x_hi = uint64_t(-(*lo + 1)) + 1;
        alts.push_back("\"-\" " + json_schema_uint_range(x_lo, x_hi));
    }
    if (!hi || *hi >= 0) {
        const uint64_t from = lo && *lo > 0 ? uint64_t(*lo) : 0;
        std::optional<uint64_t> to;
        if (hi) to = uint64_t(*hi);
        alts.push_back(json_schema_uint_range(from, to));
    }
    return join(alts);
}

namespace {

// n as a GBNF literal (built by appending: `"\"" + std::to_string(n)` draws a false GCC 12
// -Wrestrict warning once inlined).
std::string quoted_number(uint64_t n) {
    std::string out = "\"";
    out += std::to_string(n);
    out += '"';
    return out;
}

const char * const k_any_fraction = "(\".\" [0-9]+)?";
const char * const k_zero_fraction = "(\".\" \"0\"+)?";
const char * const k_nonzero_fraction = "\".\" [0-9]* [1-9] [0-9]*";

// Magnitudes m (no sign, no exponent) in [k, mx] (mx absent: open); k_excl / m_excl exclude the
// bound itself. Empty when nothing is left.
std::string magnitude_range(uint64_t k, bool k_excl, std::optional<uint64_t> mx, bool m_excl) {
    if (mx && (*mx < k || (*mx == k && (k_excl || m_excl)))) return "";
    std::vector<std::string> alts;
    if (mx && *mx == k) return quoted_number(k) + " " + k_zero_fraction;
    // integer part strictly between the bounds: any fraction
    if (!mx || *mx > k + 1) {
        std::optional<uint64_t> top;
        if (mx) top = *mx - 1;
        alts.push_back(json_schema_uint_range(k + 1, top) + " " + k_any_fraction);
    }
    alts.push_back(quoted_number(k) + " " + (k_excl ? k_nonzero_fraction : k_any_fraction));
    if (mx && !m_excl) alts.push_back(quoted_number(*mx) + " " + k_zero_fraction);
    return join(alts);
}

}  // namespace

std::string json_schema_number_range(std::optional<int64_t> lo, bool lo_excl, std::optional<int64_t> hi, bool hi_excl) {
    std::vector<std::string> alts;
    // x >= 0 part
    if (!hi || *hi > 0 || (*hi == 0 && !hi_excl)) {
        const bool from_zero = !lo || *lo < 0;
        const uint64_t k = from_zero ? 0 : uint64_t(*lo);
        std::optional<uint64_t> m;
        if (hi) m = uint64_t(*hi);
        const std::string r = magnitude_range(k, from_zero ? false : lo_excl, m, hi_excl);
        if (!r.empty()) alts.push_back(r);
    }
    // x < 0 part: "-" m
    if (!lo || *lo < 0) {
        const bool to_zero = !hi || *hi >= 0;
        const uint64_t k = to_zero ? 0 : uint64_t(-(*hi + 1)) + 1;
        std::optional<uint64_t> m;
        if (lo) m = uint64_t(-(*lo + 1)) + 1;
        const std::string r = magnitude_range(k, to_zero ? true : hi_excl, m, lo_excl);
        if (!r.empty()) alts.push_back("\"-\" " + r);
    }
    if (alts.empty()) return "";
    return join(alts);
}
