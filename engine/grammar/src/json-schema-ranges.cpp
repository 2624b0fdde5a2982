// Number ranges as GBNF (json-schema-impl.h). Bounds are decimals of any length (json_decimal),
// so 0.01, -273.15 and 1e300 are exact. A number without exponent is a sign, an integer part and
// an optional fraction; the range is cut by sign, then by integer part:
//   integer part strictly inside the bounds' integer parts: any fraction;
//   integer part equal to a bound's: the fraction compared digit by digit with the bound's.
// Same-length ranges of digit strings [lo, hi] are written digit by digit:
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
    for (size_t i = 0; i < alts.size(); ++i) out += (i ? " | " : "") + (alts[i].empty() ? std::string("\"\"") : alts[i]);
    return out + ")";
}

std::string seq(const std::string & a, const std::string & b) {
    if (a.empty()) return b;
    if (b.empty()) return a;
    return a + " " + b;
}

std::string quoted(const std::string & digits) {
    std::string out = "\"";
    out += digits;
    out += '"';
    return out;
}

// Digit strings of lo's length in [lo, hi] (same length, lo <= hi).
std::string same_length(const std::string & lo, const std::string & hi) {
    if (lo.empty()) return "";
    if (lo == hi) return quoted(lo);
    if (lo.size() == 1) return digit_class(lo[0], hi[0]);
    const size_t rest = lo.size() - 1;
    if (lo.find_first_not_of('0') == std::string::npos && hi.find_first_not_of('9') == std::string::npos) {
        return any_digits(lo.size());
    }
    if (lo[0] == hi[0]) return seq(quoted(lo.substr(0, 1)), same_length(lo.substr(1), hi.substr(1)));
    std::vector<std::string> alts;
    alts.push_back(seq(quoted(lo.substr(0, 1)), same_length(lo.substr(1), std::string(rest, '9'))));
    if (hi[0] - lo[0] > 1) alts.push_back(seq(digit_class(char(lo[0] + 1), char(hi[0] - 1)), any_digits(rest)));
    alts.push_back(seq(quoted(hi.substr(0, 1)), same_length(std::string(rest, '0'), hi.substr(1))));
    return join(alts);
}

bool digits_less(const std::string & a, const std::string & b) {  // as numbers, no leading zeros
    return a.size() != b.size() ? a.size() < b.size() : a < b;
}

std::string plus_one(std::string d) {
    for (size_t i = d.size(); i-- > 0;) {
        if (d[i] != '9') {
            ++d[i];
            return d;
        }
        d[i] = '0';
    }
    d.insert(d.begin(), '1');
    return d;
}

std::string minus_one(std::string d) {  // d > 0
    for (size_t i = d.size(); i-- > 0;) {
        if (d[i] != '0') {
            --d[i];
            break;
        }
        d[i] = '9';
    }
    const size_t nz = d.find_first_not_of('0');
    return nz == std::string::npos ? "0" : d.substr(nz);
}

// Integer parts (digit strings as JSON writes them) in [lo, hi] (hi absent: open); "" if empty.
std::string uint_range(const std::string & lo, const std::optional<std::string> & hi) {
    if (hi && digits_less(*hi, lo)) return "";
    std::vector<std::string> alts;
    const size_t last = hi ? hi->size() : lo.size();
    for (size_t len = lo.size(); len <= last; ++len) {
        std::string from = lo;
        if (len != lo.size()) {
            from.assign(len, '0');
            from[0] = '1';
        }
        const std::string to = hi && len == last ? *hi : std::string(len, '9');
        alts.push_back(same_length(from, to));  // a length above 1 never starts with 0
    }
    if (!hi) alts.push_back("[1-9] [0-9]{" + std::to_string(lo.size()) + ",}");  // every longer number
    return join(alts);
}

// The fraction digits (a bound's, no trailing zeros) compared with the digits written from
// position i on; tlo / thi: the digits so far equal the lower / upper bound's. Digits at
// positions from `limit` on must be zeros (multipleOf 10^-limit).
struct fraction_bounds {
    const std::string * lo = nullptr;  // nullptr: no lower bound on the fraction
    bool lo_excl = false;
    const std::string * hi = nullptr;
    bool hi_excl = false;
    std::optional<size_t> limit;
};

char digit_at(const std::string & d, size_t i) { return i < d.size() ? d[i] : '0'; }

// Whether the fraction may end at position i (the rest is zeros).
bool may_end(const fraction_bounds & b, size_t i, bool tlo, bool thi) {
    const bool lo_ok = !tlo || (i >= b.lo->size() && !b.lo_excl);
    const bool hi_ok = !thi || i < b.hi->size() || !b.hi_excl;
    return lo_ok && hi_ok;
}

// Any digits from position i on (at least one when `first`).
std::string any_fraction(const fraction_bounds & b, size_t i, bool first) {
    if (!b.limit) return first ? "[0-9]+" : "[0-9]*";
    const size_t k = *b.limit > i ? *b.limit - i : 0;
    if (k == 0) return first ? "\"0\"+" : "\"0\"*";
    return "[0-9]{" + std::string(first ? "1" : "0") + "," + std::to_string(k) + "} \"0\"*";
}

// Digits from position i on with a non-zero one among them.
std::string nonzero_fraction(const fraction_bounds & b, size_t i) {
    if (!b.limit) return "[0-9]* [1-9] [0-9]*";
    if (i >= *b.limit) return "";
    std::vector<std::string> alts;
    const std::string later = nonzero_fraction(b, i + 1);
    if (!later.empty()) alts.push_back("\"0\" " + later);
    const std::string rest = any_fraction(b, i + 1, false);
    alts.push_back("[1-9] " + rest);
    return join(alts);
}

std::string fraction_digits(const fraction_bounds & b, size_t i, bool tlo, bool thi, bool first);

// The digit at position i followed by the rest, keeping the comparisons that stay tight.
void digit_choices(const fraction_bounds & b, size_t i, bool tlo, bool thi, std::vector<std::string> & alts) {
    const char top = b.limit && i >= *b.limit ? '0' : '9';  // past the limit only zeros
    const char l = tlo ? digit_at(*b.lo, i) : '0', h = thi ? digit_at(*b.hi, i) : '9';
    auto keep = [&](char d, bool nlo, bool nhi) {
        if (d > top) return;
        const std::string rest = fraction_digits(b, i + 1, nlo, nhi, false);
        if (!rest.empty()) alts.push_back(seq(quoted(std::string(1, d)), rest == "\"\"" ? "" : rest));
    };
    // digits strictly between the bounds' digits end both comparisons
    const char free_lo = tlo ? char(l + 1) : '0', free_hi = std::min(thi ? char(h - 1) : '9', top);
    if (free_lo <= free_hi) alts.push_back(seq(digit_class(free_lo, free_hi), any_fraction(b, i + 1, false)));
    if (tlo && thi && l == h) {
        keep(l, true, true);
        return;
    }
    if (tlo && (!thi || l < h)) keep(l, true, false);
    if (thi && (!tlo || h > l)) keep(h, false, true);
}

// GBNF for the fraction digits from position i on (at least one digit when `first`).
std::string fraction_digits(const fraction_bounds & b, size_t i, bool tlo, bool thi, bool first) {
    const bool past_lo = !tlo || i >= b.lo->size(), past_hi = !thi || i >= b.hi->size();
    if (past_lo && past_hi) {  // closed forms: every later digit is compared with a zero
        if (!tlo && !thi) return any_fraction(b, i, first);
        if (tlo && !thi) return b.lo_excl ? nonzero_fraction(b, i) : any_fraction(b, i, first);
        if (b.hi_excl || (tlo && b.lo_excl)) return "";  // must stay equal to the bound: no
        return first ? "\"0\"+" : "\"0\"*";
    }
    std::vector<std::string> alts;
    if (!first && may_end(b, i, tlo, thi)) alts.push_back("\"\"");
    digit_choices(b, i, tlo, thi, alts);
    return alts.empty() ? "" : join(alts);
}

// The optional "." and fraction after an integer part, bounded by b; nullopt when nothing fits.
std::optional<std::string> fraction_part(const fraction_bounds & b, const json_number_form & form) {
    const bool tlo = b.lo != nullptr, thi = b.hi != nullptr;
    const bool zero_ok = may_end(b, 0, tlo, thi);
    if (!form.fraction) return zero_ok ? std::optional<std::string>("") : std::nullopt;
    const std::string digits = fraction_digits(b, 0, tlo, thi, true);
    if (digits.empty()) return zero_ok ? std::optional<std::string>("") : std::nullopt;
    const std::string dot = "\".\" " + digits;
    return zero_ok ? "(" + dot + ")?" : dot;
}

// Magnitudes m >= 0 (no sign) with lo <= m <= hi (hi absent: open), *_excl: strict.
std::string magnitude_range(const json_decimal & lo, bool lo_excl, const std::optional<json_decimal> & hi, bool hi_excl,
                            const json_number_form & form) {
    std::vector<std::string> alts;
    std::optional<size_t> limit = form.max_fraction_digits;
    if (form.integer) limit = 0;
    if (hi && hi->whole == lo.whole) {
        const auto f = fraction_part({&lo.frac, lo_excl, &hi->frac, hi_excl, limit}, form);
        if (f) alts.push_back(seq(quoted(lo.whole), *f));
        return alts.empty() ? "" : join(alts);
    }
    if (const auto f = fraction_part({&lo.frac, lo_excl, nullptr, false, limit}, form)) alts.push_back(seq(quoted(lo.whole), *f));
    std::optional<std::string> top;
    if (hi) top = hi->whole == "0" ? std::string() : minus_one(hi->whole);
    if (!top || (!top->empty() && !digits_less(*top, plus_one(lo.whole)))) {
        const auto f = fraction_part({nullptr, false, nullptr, false, limit}, form);
        alts.push_back(seq(uint_range(plus_one(lo.whole), top), *f));
    }
    if (hi) {
        if (const auto f = fraction_part({nullptr, false, &hi->frac, hi_excl, limit}, form)) alts.push_back(seq(quoted(hi->whole), *f));
    }
    return alts.empty() ? "" : join(alts);
}

json_decimal negated(json_decimal d) {
    d.negative = !d.negative;
    return d;
}

}  // namespace

std::optional<json_decimal> json_decimal::parse(std::string_view text) {
    json_decimal d;
    size_t i = 0;
    if (i < text.size() && text[i] == '-') {
        d.negative = true;
        ++i;
    }
    std::string digits;  // all mantissa digits; point: how many belong to the integer part
    size_t point = std::string::npos;
    for (; i < text.size() && ((text[i] >= '0' && text[i] <= '9') || text[i] == '.'); ++i) {
        if (text[i] == '.') {
            if (point != std::string::npos) return std::nullopt;
            point = digits.size();
        } else {
            digits += text[i];
        }
    }
    if (digits.empty()) return std::nullopt;
    if (point == std::string::npos) point = digits.size();
    long exp = 0;
    if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
        const std::string e(text.substr(i + 1));
        if (e.empty() || e.size() > 6) return std::nullopt;
        exp = std::stol(e);
        i = text.size();
    }
    if (i != text.size() || std::labs(exp) > 100000) return std::nullopt;
    long p = long(point) + exp;  // the point's place in digits after the shift
    if (p < 0) {
        digits.insert(0, size_t(-p), '0');
        p = 0;
    }
    if (size_t(p) > digits.size()) digits.append(size_t(p) - digits.size(), '0');
    d.whole = digits.substr(0, size_t(p));
    d.frac = digits.substr(size_t(p));
    const size_t nz = d.whole.find_first_not_of('0');
    d.whole = nz == std::string::npos ? "0" : d.whole.substr(nz);
    while (!d.frac.empty() && d.frac.back() == '0') d.frac.pop_back();
    if (d.is_zero()) d.negative = false;
    return d;
}

int json_decimal_compare(const json_decimal & a, const json_decimal & b) {
    if (a.negative != b.negative) return a.negative ? -1 : 1;
    int mag = 0;
    if (a.whole.size() != b.whole.size()) mag = a.whole.size() < b.whole.size() ? -1 : 1;
    else if (a.whole != b.whole) mag = a.whole < b.whole ? -1 : 1;
    else if (a.frac != b.frac) mag = a.frac < b.frac ? -1 : 1;  // no trailing zeros: string order is value order
    return a.negative ? -mag : mag;
}

std::string json_schema_decimal_range(const std::optional<json_decimal> & lo, bool lo_excl, const std::optional<json_decimal> & hi,
                                      bool hi_excl, const json_number_form & form) {
    if (lo && hi) {
        const int c = json_decimal_compare(*lo, *hi);
        if (c > 0 || (c == 0 && (lo_excl || hi_excl))) return "";
    }
    const json_decimal zero;
    std::vector<std::string> alts;
    // x >= 0: magnitudes from max(lo, 0)
    if (!hi || !hi->negative) {
        const bool from_zero = !lo || lo->negative;
        const std::string r = magnitude_range(from_zero ? zero : *lo, from_zero ? false : lo_excl, hi, hi_excl, form);
        if (!r.empty()) alts.push_back(r);
    }
    // x < 0: "-" and magnitudes in (max(-hi, 0), -lo]; never "-0"
    if (!lo || lo->negative) {
        const bool to_zero = !hi || !hi->negative;
        std::optional<json_decimal> top;
        if (lo) top = negated(*lo);
        const std::string r = magnitude_range(to_zero ? zero : negated(*hi), to_zero ? true : hi_excl, top, lo_excl, form);
        if (!r.empty()) alts.push_back("\"-\" " + r);
    }
    if (alts.empty()) return "";
    return join(alts);
}
