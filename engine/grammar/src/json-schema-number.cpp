// Integers and numbers for the JSON Schema compiler (json-schema-impl.h): bounds (any decimal,
// inclusive or exclusive, draft 4's boolean exclusives included), values excluded by `not`, and
// multipleOf where it is exact: an integer step (numbers then have integer values; a step above
// 1 needs bounds with few multiples between them, or no bounds at all: then the digits are read
// modulo the step) or a power of ten below 1 (at most that many fraction digits). With any of
// these the number is written without an exponent.
#include "json-schema-impl.h"

#include <algorithm>
#include <cmath>

namespace json_schema_detail {

namespace {

constexpr uint64_t k_max_listed_multiples = 256;
constexpr uint64_t k_max_modulus = 100;

std::optional<json_decimal> decimal_of(const json & v, const std::string & key, const std::string & path) {
    if (!v.is_number()) fail("'" + key + "' at " + at(path) + " is not a number");
    const auto d = json_decimal::parse(v.dump());
    if (!d) fail("'" + key + "' at " + at(path) + " is out of range");
    return d;
}

struct bound {
    std::optional<json_decimal> value;
    bool strict = false;
};

// The lower (or upper) bound of s, the tighter of minimum and exclusiveMinimum (a number, or
// draft 4's boolean that makes minimum strict).
bound bound_of(const json & s, bool lower, const std::string & path) {
    const std::string incl = lower ? "minimum" : "maximum", excl = lower ? "exclusiveMinimum" : "exclusiveMaximum";
    bound b;
    if (s.contains(incl) && s[incl].is_number()) b.value = decimal_of(s[incl], incl, path);
    if (!s.contains(excl)) return b;
    if (s[excl].is_boolean()) {
        b.strict = s[excl].get<bool>() && b.value.has_value();
    } else if (s[excl].is_number()) {
        const auto e = decimal_of(s[excl], excl, path);
        const int c = b.value ? json_decimal_compare(*e, *b.value) : 0;
        if (!b.value || (lower ? c >= 0 : c <= 0)) b = {e, true};
    }
    return b;
}

std::string join_alts(const std::vector<std::string> & alts) {
    std::string out;
    for (const std::string & a : alts) out += (out.empty() ? "" : " | ") + a;
    return alts.size() == 1 ? out : "(" + out + ")";
}

// Non-negative integers written in decimal whose value is r modulo m, as rules per remainder.
std::string modular_digits(schema_compiler & c, uint64_t m, const std::string & hint) {
    std::vector<std::string> names(m);  // rest(r): digits that, after a prefix of remainder r, end at 0
    for (uint64_t r = 0; r < m; ++r) names[r] = c.unique_name(hint + "-mod");
    for (uint64_t r = 0; r < m; ++r) {
        std::string body = r == 0 ? "\"\"" : "";
        for (int d = 0; d < 10; ++d) {
            body += (body.empty() ? "" : " | ") + std::string("\"") + char('0' + d) + "\" " + names[(r * 10 + uint64_t(d)) % m];
        }
        c.define(names[r], body);
    }
    std::string first = "\"0\"";
    for (int d = 1; d < 10; ++d) first += std::string(" | \"") + char('0' + d) + "\" " + names[uint64_t(d) % m];
    return "(" + first + ")";
}

uint64_t digits_value(const std::string & d) { return d.size() > 18 ? UINT64_MAX : std::stoull(d); }

}  // namespace

std::string schema_compiler::visit_integer(const json & s, const std::string & path) { return visit_numeric(s, path, true); }

std::string schema_compiler::visit_number(const json & s, const std::string & path) { return visit_numeric(s, path, false); }

std::string schema_compiler::visit_numeric(const json & s, const std::string & path, bool integer_type) {
    bound lo = bound_of(s, true, path), hi = bound_of(s, false, path);
    json_number_form form;
    if (integer_type) form = {true, false, std::nullopt};
    std::optional<uint64_t> step;  // an integer multipleOf above 1
    if (s.contains("multipleOf")) {
        const auto m = decimal_of(s["multipleOf"], "multipleOf", path);
        if (m->negative || m->is_zero()) fail("'multipleOf' at " + at(path) + " is not positive");
        if (m->frac.empty()) {
            form.integer = true;
            if (m->whole != "1") step = digits_value(m->whole);
        } else if (m->whole == "0" && m->frac.back() == '1' && m->frac.find_first_not_of('0') == m->frac.size() - 1) {
            if (!form.integer) form.max_fraction_digits = m->frac.size();
        } else {
            fail("unsupported 'multipleOf' at " + at(path) + " (only integers and powers of ten)");
        }
    }
    std::vector<json_decimal> excluded;
    if (s.contains(k_not_values)) {
        for (const json & v : s[k_not_values]) {
            if (v.is_number()) excluded.push_back(*json_decimal::parse(v.dump()));
        }
    }
    if (!lo.value && !hi.value && excluded.empty() && !s.contains("multipleOf")) return integer_type ? "json-int" : "json-number";
    if (step) return multiples(s, lo.value, lo.strict, hi.value, hi.strict, *step, excluded, integer_type, path);
    // the range cut at every excluded value
    std::sort(excluded.begin(), excluded.end(), [](const json_decimal & a, const json_decimal & b) { return json_decimal_compare(a, b) < 0; });
    std::vector<std::string> alts;
    bound from = lo;
    for (const json_decimal & x : excluded) {
        if (from.value && json_decimal_compare(x, *from.value) < 0) continue;
        if (hi.value && json_decimal_compare(x, *hi.value) > 0) break;
        const std::string r = json_schema_decimal_range(from.value, from.strict, x, true, form);
        if (!r.empty()) alts.push_back(r);
        from = {x, true};
    }
    const std::string r = json_schema_decimal_range(from.value, from.strict, hi.value, hi.strict, form);
    if (!r.empty()) alts.push_back(r);
    if (alts.empty()) fail_empty("the number bounds at " + at(path) + " leave no value");
    return join_alts(alts);
}

// Multiples of an integer step: listed when the bounds leave few, else read modulo the step.
std::string schema_compiler::multiples(const json & s, const std::optional<json_decimal> & lo, bool lo_strict,
                                       const std::optional<json_decimal> & hi, bool hi_strict, uint64_t step,
                                       const std::vector<json_decimal> & excluded, bool integer_type, const std::string & path) {
    const std::string zeros = integer_type ? "" : " (\".\" \"0\"+)?";
    (void) s;
    if (lo && hi) {
        auto as_double = [](const json_decimal & d) { return std::stod((d.negative ? "-" : "") + d.whole + "." + d.frac + "0"); };
        const double a = as_double(*lo), b = as_double(*hi), st = double(step);
        if (std::fabs(a) > 1e15 || std::fabs(b) > 1e15 || (b - a) / st > double(k_max_listed_multiples)) {
            fail("unsupported 'multipleOf' at " + at(path) + " (too many multiples between the bounds)");
        }
        std::vector<std::string> alts;
        for (double k = std::ceil(a / st); k * st <= b; k += 1) {
            const int64_t v = int64_t(k * st);
            const json_decimal d = *json_decimal::parse(std::to_string(v));
            if ((lo_strict && json_decimal_compare(d, *lo) == 0) || (hi_strict && json_decimal_compare(d, *hi) == 0)) continue;
            if (json_decimal_compare(d, *lo) < 0 || json_decimal_compare(d, *hi) > 0) continue;
            const bool out = std::any_of(excluded.begin(), excluded.end(),
                                         [&](const json_decimal & x) { return json_decimal_compare(x, d) == 0; });
            if (!out) alts.push_back(grammar_literal_to_gbnf(std::to_string(v)) + zeros);
        }
        if (alts.empty()) fail_empty("the bounds at " + at(path) + " leave no multiple of 'multipleOf'");
        return join_alts(alts);
    }
    if (lo || hi || !excluded.empty() || step > k_max_modulus) {
        fail("unsupported 'multipleOf' at " + at(path) + " (an integer step needs both bounds, or none and a step up to " +
             std::to_string(k_max_modulus) + ")");
    }
    const std::string digits = modular_digits(*this, step, "multiple-of-" + std::to_string(step));
    return "(\"-\"? " + digits + zeros + ")";
}

}  // namespace json_schema_detail
