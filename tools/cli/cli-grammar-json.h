// tools/cli/cli-grammar-json.h — JSON values written exactly as Python's json.dumps writes them
// (ensure_ascii=False), the two serializations a model is checked against: compact
// (separators=(",", ":")) and spaced (the default ", " and ": ").
//
// Usage:
//   const nlohmann::ordered_json v = nlohmann::ordered_json::parse(R"({"a":[1,2.50,1e16]})");
//   json_dumps_compact(v);  // {"a":[1,2.5,1e+16]}
//   json_dumps_spaced(v);   // {"a": [1, 2.5, 1e+16]}
//
// Objects keep their key order (ordered_json); strings escape '"', '\\' and control characters
// (\n, \t, …, \u001f) and leave everything else as UTF-8; integers are written as they are;
// floats follow Python's repr: the shortest text that reads back as the same double, fixed
// notation (with ".0" when integral) for decimal exponents -4 .. 15, otherwise d.ddde±XX with at
// least two exponent digits; NaN and infinities as NaN, Infinity, -Infinity.
#pragma once

#include <nlohmann/json.hpp>

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <string>

inline std::string json_dumps_float(double d) {
    if (std::isnan(d)) return "NaN";
    if (std::isinf(d)) return d < 0 ? "-Infinity" : "Infinity";
    char buf[64];
    const std::to_chars_result r = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
    std::string s(buf, r.ptr);  // "-1.25e+15": the shortest digits that read back as d
    std::string out;
    if (s[0] == '-') {
        out = "-";
        s.erase(0, 1);
    }
    const size_t e = s.find('e');
    const int exp = std::atoi(s.c_str() + e + 1);
    std::string digits = s.substr(0, e);
    if (digits.size() > 1) digits.erase(1, 1);  // drop the '.'
    const int n_digits = int(digits.size());
    if (exp >= 16 || exp < -4) {
        out += digits.substr(0, 1);
        if (n_digits > 1) out += "." + digits.substr(1);
        const std::string mag = std::to_string(std::abs(exp));
        return out + (exp < 0 ? "e-" : "e+") + (mag.size() < 2 ? "0" : "") + mag;
    }
    if (exp < 0) return out + "0." + std::string(size_t(-exp - 1), '0') + digits;
    const int int_len = exp + 1;
    if (n_digits <= int_len) return out + digits + std::string(size_t(int_len - n_digits), '0') + ".0";
    return out + digits.substr(0, size_t(int_len)) + "." + digits.substr(size_t(int_len));
}

inline std::string json_dumps(const nlohmann::ordered_json & v, const char * item_sep, const char * key_sep) {
    if (v.is_object()) {
        std::string out = "{";
        bool first = true;
        for (auto it = v.begin(); it != v.end(); ++it) {
            if (!first) out += item_sep;
            first = false;
            out += nlohmann::ordered_json(it.key()).dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
            out += key_sep + json_dumps(it.value(), item_sep, key_sep);
        }
        return out + "}";
    }
    if (v.is_array()) {
        std::string out = "[";
        for (size_t i = 0; i < v.size(); ++i) out += (i ? item_sep : "") + json_dumps(v[i], item_sep, key_sep);
        return out + "]";
    }
    if (v.is_number_float()) return json_dumps_float(v.get<double>());
    return v.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

inline std::string json_dumps_compact(const nlohmann::ordered_json & v) { return json_dumps(v, ",", ":"); }
inline std::string json_dumps_spaced(const nlohmann::ordered_json & v) { return json_dumps(v, ", ", ": "); }
