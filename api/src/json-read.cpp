// api/json-read.cpp — parsing request bodies and validating their fields.
#include "json-read.h"

#include "json-write.h"

#include <cmath>
#include <cstdio>
#include <limits>
#include <utility>

namespace {

// "[json.exception.parse_error.101] parse error at …" → "parse error at …".
std::string parse_error_text(const char * what) {
    std::string s = what;
    if (!s.empty() && s[0] == '[') {
        size_t end = s.find("] ");
        if (end != std::string::npos) {
            s.erase(0, end + 2);
        }
    }
    return s;
}

// A bound for messages: "0", "2", "0.5".
std::string number_text(double d) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", d);
    return buf;
}

}  // namespace

int json_nesting_depth(std::string_view text, int limit) {
    int depth = 0;
    int max_depth = 0;
    bool in_string = false;
    bool escaped = false;
    for (char c : text) {
        if (in_string) {
            if (escaped) {
                escaped = false;
            } else if (c == '\\') {
                escaped = true;
            } else if (c == '"') {
                in_string = false;
            }
            continue;
        }
        if (c == '"') {
            in_string = true;
        } else if (c == '[' || c == '{') {
            max_depth = std::max(max_depth, ++depth);
            if (max_depth > limit) {
                return max_depth;
            }
        } else if (c == ']' || c == '}') {
            depth = std::max(0, depth - 1);
        }
    }
    return max_depth;
}

std::string json_value_text(const nlohmann::json & v) {
    if (v.is_number() || v.is_boolean()) {
        return json_write(v);
    }
    if (v.is_string()) {
        std::string s = v.get_ref<const std::string &>();
        if (s.size() > 40) {
            s = s.substr(0, 40) + "…";
        }
        return "the string \"" + s + "\"";
    }
    return json_type_name(v);
}

std::optional<api_error> json_parse_object(std::string_view text, nlohmann::json & out) {
    if (json_nesting_depth(text, json_max_depth) > json_max_depth) {
        return api_error_invalid_request("The request body is nested deeper than " +
                                         std::to_string(json_max_depth) + " levels.");
    }
    try {
        out = nlohmann::json::parse(text.begin(), text.end());
    } catch (const nlohmann::json::parse_error & e) {
        return api_error_invalid_request("The request body is not valid JSON: " + parse_error_text(e.what()) +
                                         " (byte " + std::to_string(e.byte) + ").");
    } catch (const nlohmann::json::exception & e) {  // e.g. a number beyond the range of a double
        return api_error_invalid_request("The request body is not valid JSON: " + parse_error_text(e.what()) + ".");
    }
    if (!out.is_object()) {
        return api_error_invalid_request(std::string("The request body must be a JSON object, got ") +
                                         json_type_name(out) + ".");
    }
    return std::nullopt;
}

const char * json_type_name(const nlohmann::json & v) {
    switch (v.type()) {
        case nlohmann::json::value_t::null: return "null";
        case nlohmann::json::value_t::object: return "an object";
        case nlohmann::json::value_t::array: return "an array";
        case nlohmann::json::value_t::string: return "a string";
        case nlohmann::json::value_t::boolean: return "a boolean";
        case nlohmann::json::value_t::number_integer:
        case nlohmann::json::value_t::number_unsigned: return "an integer";
        case nlohmann::json::value_t::number_float: return "a number";
        default: return "an unsupported value";
    }
}

bool json_integer_in(const nlohmann::json & v, int64_t lo, int64_t hi, int64_t & out) {
    if (v.is_number_unsigned()) {
        uint64_t u = v.get<uint64_t>();
        if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) || static_cast<int64_t>(u) > hi ||
            static_cast<int64_t>(u) < lo) {
            return false;
        }
        out = static_cast<int64_t>(u);
        return true;
    }
    if (v.is_number_integer()) {
        int64_t i = v.get<int64_t>();
        if (i < lo || i > hi) {
            return false;
        }
        out = i;
        return true;
    }
    return false;
}

const nlohmann::json * json_reader::find(const char * key) const {
    auto it = obj_.find(key);
    if (it == obj_.end() || it->is_null()) {
        return nullptr;
    }
    return &*it;
}

void json_reader::fail(api_error e) {
    if (!error_) {
        error_ = std::move(e);
    }
}

void json_reader::fail(const std::string & key, const std::string & what) {
    fail(api_error_invalid_request(api_cat({"'", param(key), "' must be ", what, "."}), param(key)));
}

void json_reader::boolean(const char * key, bool & out) {
    const nlohmann::json * v = error_ ? nullptr : find(key);
    if (!v) {
        return;
    }
    if (!v->is_boolean()) {
        fail(key, std::string("a boolean, got ") + json_value_text(*v));
        return;
    }
    out = v->get<bool>();
}

void json_reader::boolean(const char * key, std::optional<bool> & out) {
    bool b = false;
    if (!error_ && find(key)) {
        boolean(key, b);
        if (!error_) {
            out = b;
        }
    }
}

void json_reader::string(const char * key, std::string & out) {
    const nlohmann::json * v = error_ ? nullptr : find(key);
    if (!v) {
        return;
    }
    if (!v->is_string()) {
        fail(key, std::string("a string, got ") + json_value_text(*v));
        return;
    }
    out = v->get<std::string>();
}

bool json_reader::integer_value(const char * key, int64_t lo, int64_t hi, int64_t & out) {
    const nlohmann::json * v = error_ ? nullptr : find(key);
    if (!v) {
        return false;
    }
    if (json_integer_in(*v, lo, hi, out)) {
        return true;
    }
    std::string range = hi == std::numeric_limits<int32_t>::max()
                            ? "an integer >= " + std::to_string(lo)
                            : "an integer between " + std::to_string(lo) + " and " + std::to_string(hi);
    fail(key, range + ", got " + json_value_text(*v));
    return false;
}

void json_reader::integer(const char * key, int64_t lo, int64_t hi, int32_t & out) {
    int64_t i = 0;
    if (integer_value(key, lo, hi, i)) {
        out = static_cast<int32_t>(i);
    }
}

void json_reader::integer(const char * key, int64_t lo, int64_t hi, std::optional<int32_t> & out) {
    int64_t i = 0;
    if (integer_value(key, lo, hi, i)) {
        out = static_cast<int32_t>(i);
    }
}

void json_reader::integer(const char * key, std::optional<int64_t> & out) {
    int64_t i = 0;
    const nlohmann::json * v = error_ ? nullptr : find(key);
    if (!v) {
        return;
    }
    if (!json_integer_in(*v, std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(), i)) {
        fail(key, std::string("a 64-bit signed integer, got ") + json_value_text(*v));
        return;
    }
    out = i;
}

void json_reader::number(const char * key, double lo, double hi, double & out, bool lo_open) {
    const nlohmann::json * v = error_ ? nullptr : find(key);
    if (!v) {
        return;
    }
    double d = v->is_number() ? v->get<double>() : std::nan("");
    bool ok = std::isfinite(d) && (lo_open ? d > lo : d >= lo) && d <= hi;
    if (!ok) {
        std::string range;
        if (hi == std::numeric_limits<double>::max()) {
            range = std::string("a number ") + (lo_open ? "> " : ">= ") + number_text(lo);
        } else {
            range = api_cat({"a number between ", number_text(lo), lo_open ? " (excluded)" : "", " and ", number_text(hi)});
        }
        fail(key, range + ", got " + json_value_text(*v));
        return;
    }
    out = d;
}
