// A small validator for the JSON Schema compiler (json-schema-impl.h): whether one known value
// (an enum's or a const's) is valid against the keywords beside it, so that only the values
// the whole schema accepts are written into the grammar. It knows the keywords the compiler
// enforces; for any other constraining keyword the answer is "unknown" (nullopt), and the
// compiler turns that into an error rather than guess.
#include "json-schema-impl.h"

#include <algorithm>
#include <cmath>

namespace json_schema_detail {

namespace {

using verdict = std::optional<bool>;

// a and b together: false wins over unknown, unknown over true.
verdict both(verdict a, verdict b) {
    if ((a && !*a) || (b && !*b)) return false;
    if (!a || !b) return std::nullopt;
    return true;
}

bool is_integer_value(const json & v) {
    if (v.is_number_integer()) return true;
    if (!v.is_number_float()) return false;
    const double d = v.get<double>();
    return std::isfinite(d) && d == std::floor(d);
}

bool has_type(const json & v, const std::string & t) {
    if (t == "object") return v.is_object();
    if (t == "array") return v.is_array();
    if (t == "string") return v.is_string();
    if (t == "number") return v.is_number();
    if (t == "integer") return is_integer_value(v);
    if (t == "boolean") return v.is_boolean();
    if (t == "null") return v.is_null();
    return false;
}

size_t code_points(const std::string & s) {
    size_t n = 0;
    for (unsigned char c : s) n += (c & 0xC0) != 0x80 ? 1 : 0;
    return n;
}

bool matches(const std::string & pattern, const std::string & text, bool * known) {
    regex_tree t;
    std::string why;
    char_dfa d;
    if (!json_schema_regex_parse(pattern, &t, &why) || !json_schema_dfa_build({{&t, false, {}}}, 4096, &d, &why)) {
        *known = false;
        return false;
    }
    return d.run(text) != 0;
}

// Whether a / b is an integer, exactly: with a = A·10^-fa and b = B·10^-fb (A, B the digits),
// whether B·10^(fa-fb) divides A (or B divides A·10^(fb-fa)); unknown past 62-bit divisors.
verdict decimal_multiple(const json_decimal & a, const json_decimal & b) {
    const std::string digits_a = a.whole + a.frac, digits_b = b.whole + b.frac;
    const long shift = long(b.frac.size()) - long(a.frac.size());  // zeros to append to A
    unsigned __int128 m = 0;
    for (char d : digits_b) m = m * 10 + unsigned(d - '0');
    for (long i = 0; i < -shift; ++i) m *= 10;
    if (m == 0 || m > (unsigned __int128)(1) << 62) return std::nullopt;
    unsigned __int128 r = 0;
    for (char d : digits_a) r = (r * 10 + unsigned(d - '0')) % m;
    for (long i = 0; i < shift && r != 0; ++i) r = r * 10 % m;
    return r == 0;
}

// The patterns of s (patternProperties) that `key` matches; nullopt when one cannot be read.
std::optional<std::vector<const json *>> matching_patterns(const json & s, const std::string & key) {
    std::vector<const json *> out;
    if (!s.contains("patternProperties") || !s["patternProperties"].is_object()) return out;
    for (auto it = s["patternProperties"].begin(); it != s["patternProperties"].end(); ++it) {
        bool known = true;
        if (matches(it.key(), key, &known)) out.push_back(&it.value());
        if (!known) return std::nullopt;
    }
    return out;
}

struct validator {
    const schema_compiler & c;
    int depth;

    verdict value(const json & s, const json & v) const {
        if (depth > 64) return std::nullopt;
        return json_schema_validate(c, s, v, depth + 1);
    }

    verdict keyword(const json & s, const std::string & k, const json & x, const json & v) const;
    verdict number_keyword(const std::string & k, const json & x, const json & v) const;
    verdict string_keyword(const std::string & k, const json & x, const json & v) const;
    verdict object_keyword(const json & s, const std::string & k, const json & x, const json & v) const;
    verdict array_keyword(const json & s, const std::string & k, const json & x, const json & v) const;
};

verdict validator::number_keyword(const std::string & k, const json & x, const json & v) const {
    if (!v.is_number()) return true;
    const auto a = json_decimal::parse(v.dump()), b = x.is_number() ? json_decimal::parse(x.dump()) : std::nullopt;
    if (!a) return std::nullopt;
    if (k == "multipleOf") {
        if (!b || b->is_zero()) return std::nullopt;
        return decimal_multiple(*a, *b);
    }
    if (x.is_boolean()) return true;  // draft 4's exclusive flags: read with minimum / maximum
    if (!b) return std::nullopt;
    const int cmp = json_decimal_compare(*a, *b);
    if (k == "minimum") return cmp >= 0;
    if (k == "maximum") return cmp <= 0;
    if (k == "exclusiveMinimum") return cmp > 0;
    return cmp < 0;  // exclusiveMaximum
}

verdict validator::string_keyword(const std::string & k, const json & x, const json & v) const {
    if (!v.is_string()) return true;
    const std::string text = v.get<std::string>();
    if (k == "minLength" || k == "maxLength") {
        if (!x.is_number()) return std::nullopt;
        const double n = double(code_points(text));
        return k == "minLength" ? n >= x.get<double>() : n <= x.get<double>();
    }
    bool known = true;
    if (k == "format") {
        if (!x.is_string()) return true;
        const std::string * f = json_schema_format_pattern(x.get<std::string>());
        if (!f) return true;  // an annotation
        const bool ok = matches(*f, text, &known);
        return known ? verdict(ok) : std::nullopt;
    }
    const json list = k == "pattern" ? json::array({x}) : x;
    for (const json & p : list) {
        if (!p.is_string()) return std::nullopt;
        const bool m = matches(p.get<std::string>(), text, &known);
        if (!known) return std::nullopt;
        if (m != (k != k_not_patterns)) return false;
    }
    return true;
}

verdict validator::object_keyword(const json & s, const std::string & k, const json & x, const json & v) const {
    if (!v.is_object()) return true;
    if (k == "required") {
        for (const json & r : x) {
            if (!r.is_string() || !v.contains(r.get<std::string>())) return false;
        }
        return true;
    }
    if (k == "minProperties" || k == "maxProperties") {
        return k == "minProperties" ? double(v.size()) >= x.get<double>() : double(v.size()) <= x.get<double>();
    }
    if (k == k_key_outside) {
        for (const json & names : x) {
            bool outside = false;
            for (auto it = v.begin(); it != v.end() && !outside; ++it) outside = std::find(names.begin(), names.end(), it.key()) == names.end();
            if (!outside) return false;
        }
        return true;
    }
    if (k == k_presence) {
        for (const json & f : x) {
            if (!presence_eval(f, [&](const std::string & n) { return v.contains(n); })) return false;
        }
        return true;
    }
    if (k == "properties" || k == "additionalProperties" || k == "patternProperties") {
        verdict all = true;
        const json props = s.contains("properties") ? s["properties"] : json::object();
        for (auto it = v.begin(); it != v.end(); ++it) {
            if (k == "properties" && props.contains(it.key())) all = both(all, value(props[it.key()], it.value()));
            if (k == "properties") continue;
            const auto matched = matching_patterns(s, it.key());
            if (!matched) return std::nullopt;
            if (k == "patternProperties") {
                for (const json * p : *matched) all = both(all, value(*p, it.value()));
            } else if (!props.contains(it.key()) && matched->empty()) {
                all = both(all, value(x, it.value()));
            }
        }
        return all;
    }
    return std::nullopt;
}

verdict validator::array_keyword(const json & s, const std::string & k, const json & x, const json & v) const {
    if (!v.is_array()) return true;
    if (k == "minItems") return double(v.size()) >= x.get<double>();
    if (k == "maxItems") return double(v.size()) <= x.get<double>();
    if (k == "uniqueItems") {
        if (!x.is_boolean() || !x.get<bool>()) return true;
        for (size_t i = 0; i < v.size(); ++i) {
            for (size_t j = i + 1; j < v.size(); ++j) {
                if (v[i] == v[j]) return false;
            }
        }
        return true;
    }
    if (k == "items" && x.is_boolean() && !s.contains("prefixItems")) return x.get<bool>() || v.empty();
    if (k == "items" && x.is_object()) {
        if (s.contains("prefixItems")) return std::nullopt;
        verdict all = true;
        for (const json & e : v) all = both(all, value(x, e));
        return all;
    }
    return std::nullopt;
}

verdict validator::keyword(const json & s, const std::string & k, const json & x, const json & v) const {
    if (k == "type") {
        for (const json & t : x.is_array() ? x : json::array({x})) {
            if (t.is_string() && has_type(v, t.get<std::string>())) return true;
        }
        return false;
    }
    if (k == "enum") return x.is_array() && std::find(x.begin(), x.end(), v) != x.end();
    if (k == "const") return x == v;
    if (k == k_not_values) return std::find(x.begin(), x.end(), v) == x.end();
    if (k == "minimum" || k == "maximum" || k == "exclusiveMinimum" || k == "exclusiveMaximum" || k == "multipleOf") {
        verdict r = number_keyword(k, x, v);
        // draft 4: a boolean exclusive flag makes the bound strict
        const char * flag = k == "minimum" ? "exclusiveMinimum" : k == "maximum" ? "exclusiveMaximum" : nullptr;
        if (flag && r && *r && s.contains(flag) && s[flag] == true && v.is_number()) r = number_keyword(flag, x, v);
        return r;
    }
    if (k == "minLength" || k == "maxLength" || k == "pattern" || k == "format" || k == k_patterns || k == k_not_patterns) {
        return string_keyword(k, x, v);
    }
    if (k == "required" || k == "minProperties" || k == "maxProperties" || k == k_presence || k == "properties" ||
        k == "additionalProperties" || k == "patternProperties" || k == k_key_outside) {
        return object_keyword(s, k, x, v);
    }
    if (k == "items" || k == "minItems" || k == "maxItems" || k == "uniqueItems") return array_keyword(s, k, x, v);
    if (k == k_more_any_of || k == k_more_one_of) {  // lists that all hold
        verdict all = true;
        for (const json & l : x) all = both(all, keyword(s, k == k_more_any_of ? "anyOf" : "oneOf", l, v));
        return all;
    }
    if (k == "allOf" || k == "anyOf" || k == "oneOf") {
        if (!x.is_array()) return std::nullopt;
        verdict all = true;
        size_t n_true = 0;
        bool unknown = false;
        for (const json & b : x) {
            const verdict r = value(b, v);
            if (!r) unknown = true;
            else if (*r) ++n_true;
            all = both(all, r);
        }
        if (k == "allOf") return all;
        if (unknown) return (k == "anyOf" && n_true > 0) || (k == "oneOf" && n_true > 1) ? verdict(k == "anyOf") : std::nullopt;
        return k == "anyOf" ? n_true > 0 : n_true == 1;
    }
    if (k == "not") {
        const verdict r = value(x, v);
        return r ? verdict(!*r) : std::nullopt;
    }
    if (k == k_not_any) {  // none of them may match
        verdict all = true;
        for (const json & n : x) all = both(all, keyword(s, "not", n, v));
        return all;
    }
    if (k == "if") {
        const verdict r = value(x, v);
        if (!r) return std::nullopt;
        const char * branch = *r ? "then" : "else";
        return s.contains(branch) ? value(s[branch], v) : verdict(true);
    }
    if (k == "then" || k == "else") return true;  // read with "if"
    return std::nullopt;
}

}  // namespace

// The keywords that constrain values (the compiler enforces them or rejects them); any other
// keyword is an annotation here as it is there.
const std::set<std::string> & constraining_words_list() {
    static const std::set<std::string> w = {
        "type", "enum", "const", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
        "minLength", "maxLength", "pattern", "format", "required", "minProperties", "maxProperties", "properties",
        "additionalProperties", "patternProperties", "dependencies", "dependentRequired", "dependentSchemas",
        "propertyNames", "items", "prefixItems", "additionalItems", "minItems", "maxItems", "uniqueItems", "contains",
        "minContains", "maxContains", "allOf", "anyOf", "oneOf", "not", "if", "then", "else", "unevaluatedProperties",
        "unevaluatedItems", "$dynamicRef", "$recursiveRef", k_not_values, k_not_patterns, k_patterns, k_presence,
        k_more_any_of, k_more_one_of, k_not_any, k_key_outside};
    return w;
}

bool constraining_keyword(const std::string & key) { return constraining_words_list().count(key) > 0; }

std::optional<bool> json_schema_validate(const schema_compiler & c, const json & s, const json & v, int depth) {
    if (s.is_boolean()) return s.get<bool>();
    const schema_compiler::nesting level(c, "");
    c.count_work("");
    if (!s.is_object()) return std::nullopt;
    if (s.contains("$ref") && s["$ref"].is_string()) {
        const json resolved = c.inline_ref(s, "");
        if (resolved.contains("$ref")) return std::nullopt;
        return json_schema_validate(c, resolved, v, depth + 1);
    }
    const validator val{c, depth};
    verdict all = true;
    for (auto it = s.begin(); it != s.end(); ++it) {
        if (!constraining_keyword(it.key())) continue;
        all = both(all, val.keyword(s, it.key(), it.value(), v));
        if (all && !*all) return false;
    }
    return all;
}

}  // namespace json_schema_detail
