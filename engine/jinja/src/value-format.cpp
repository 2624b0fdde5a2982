// value-format.cpp — python str(), repr() and json.dumps() of values.
#include "utf8.h"
#include "value.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

namespace jinja {

std::string format_int(int64_t i) { return std::to_string(i); }

// python repr(float): the shortest digits that round-trip; positional for exponents -4..15,
// scientific otherwise ("1e+16", "1.5e-05"); an integral value keeps ".0".
std::string format_float(double d) {
    if (std::isnan(d)) return "nan";
    if (std::isinf(d)) return d < 0 ? "-inf" : "inf";
    char buf[64];
    auto res = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
    std::string sci(buf, res.ptr);
    const size_t epos = sci.find('e');
    std::string mant = sci.substr(0, epos);
    const int exp = std::stoi(sci.substr(epos + 1));
    std::string sign_str;
    if (mant[0] == '-') {
        sign_str = "-";
        mant.erase(0, 1);
    }
    std::string digits;
    for (char c : mant) {
        if (c != '.') digits += c;
    }
    std::string out = sign_str;
    if (exp >= -4 && exp < 16) {
        if (exp < 0) {
            out += "0." + std::string(static_cast<size_t>(-exp - 1), '0') + digits;
        } else if (static_cast<size_t>(exp) + 1 >= digits.size()) {
            out += digits + std::string(static_cast<size_t>(exp) + 1 - digits.size(), '0') + ".0";
        } else {
            out += digits.substr(0, static_cast<size_t>(exp) + 1) + "." + digits.substr(static_cast<size_t>(exp) + 1);
        }
        return out;
    }
    out += digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    char ebuf[16];
    std::snprintf(ebuf, sizeof ebuf, "e%c%02d", exp < 0 ? '-' : '+', std::abs(exp));
    return out + ebuf;
}

static void append_hex_escape(std::string & out, uint32_t cp) {
    char buf[16];
    if (cp < 0x100) {
        std::snprintf(buf, sizeof buf, "\\x%02x", cp);
    } else if (cp < 0x10000) {
        std::snprintf(buf, sizeof buf, "\\u%04x", cp);
    } else {
        std::snprintf(buf, sizeof buf, "\\U%08x", cp);
    }
    out += buf;
}

std::string repr_string(std::string_view s) {
    const bool has_single = s.find('\'') != std::string_view::npos;
    const bool has_double = s.find('"') != std::string_view::npos;
    const char quote = (has_single && !has_double) ? '"' : '\'';
    std::string out(1, quote);
    for (size_t i = 0; i < s.size();) {
        const size_t start = i;
        const uint32_t cp = utf8_next(s, i);
        if (cp == static_cast<uint32_t>(quote) || cp == '\\') {
            out += '\\';
            out += static_cast<char>(cp);
        } else if (cp == '\n') {
            out += "\\n";
        } else if (cp == '\r') {
            out += "\\r";
        } else if (cp == '\t') {
            out += "\\t";
        } else if (cp == 0xFFFD && i - start == 1) {
            out.append(s.substr(start, 1));  // an invalid byte: kept
        } else if (!py_isprintable(cp)) {
            append_hex_escape(out, cp);
        } else {
            out.append(s.substr(start, i - start));
        }
    }
    out += quote;
    return out;
}

static void append_seq_repr(std::string & out, const value & v, budget & bud, uint32_t depth) {
    const auto & items = v.get_items();
    const bool tuple = v.flavor() == seq_flavor::tuple;
    out += tuple ? '(' : '[';
    for (size_t i = 0; i < items.size(); ++i) {
        if (i) out += ", ";
        append_repr(out, items[i], bud, depth + 1);
        bud.check_string(out.size());
    }
    if (tuple && items.size() == 1) out += ',';
    out += tuple ? ')' : ']';
}

static void append_dict_repr(std::string & out, const dict_obj & d, budget & bud, uint32_t depth) {
    out += '{';
    bool first = true;
    for (const auto & [k, v] : d.items) {
        if (!first) out += ", ";
        first = false;
        append_repr(out, k, bud, depth + 1);
        out += ": ";
        append_repr(out, v, bud, depth + 1);
        bud.check_string(out.size());
    }
    out += '}';
}

static void append_list_repr(std::string & out, const value & v, budget & bud, uint32_t depth) {
    switch (v.flavor()) {
        case seq_flavor::list:
        case seq_flavor::tuple: append_seq_repr(out, v, bud, depth); return;
        case seq_flavor::iterator: out += cat({"<", v.get_list().iterator_type, " object>"}); return;
        case seq_flavor::dict_items:
        case seq_flavor::dict_keys:
        case seq_flavor::dict_values: {
            out += type_name(v) + "(";
            append_seq_repr(out, value::list(v.get_items()), bud, depth);
            out += ")";
            return;
        }
    }
}

void append_repr(std::string & out, const value & v, budget & bud, uint32_t depth) {
    bud.check_depth(depth);
    bud.charge(1);
    switch (v.kind()) {
        case value_kind::undefined: out += "Undefined"; return;
        case value_kind::none: out += "None"; return;
        case value_kind::boolean: out += v.get_bool() ? "True" : "False"; return;
        case value_kind::integer: out += format_int(v.get_int()); return;
        case value_kind::floating: out += format_float(v.get_number()); return;
        case value_kind::string:
            if (v.is_markup()) {
                out += "Markup(" + repr_string(v.get_string()) + ")";
            } else {
                out += repr_string(v.get_string());
            }
            return;
        case value_kind::list: append_list_repr(out, v, bud, depth); return;
        case value_kind::dict: append_dict_repr(out, v.get_dict(), bud, depth); return;
        case value_kind::callable: out += v.get_callable().repr; return;
        case value_kind::object: out += v.get_object().repr(bud, depth); return;
    }
}

std::string to_repr(const value & v, budget & bud, uint32_t depth) {
    std::string out;
    append_repr(out, v, bud, depth);
    return out;
}

std::string to_str(const value & v, budget & bud) {
    switch (v.kind()) {
        case value_kind::undefined: return "";
        case value_kind::string: return v.get_string();
        default: return to_repr(v, bud);
    }
}

// ---- json.dumps ----

static void json_string(std::string & out, std::string_view s, bool ensure_ascii) {
    out += '"';
    for (size_t i = 0; i < s.size();) {
        const size_t start = i;
        const uint32_t cp = utf8_next(s, i);
        switch (cp) {
            case '"': out += "\\\""; continue;
            case '\\': out += "\\\\"; continue;
            case '\n': out += "\\n"; continue;
            case '\r': out += "\\r"; continue;
            case '\t': out += "\\t"; continue;
            case '\b': out += "\\b"; continue;
            case '\f': out += "\\f"; continue;
            default: break;
        }
        char buf[16];
        if (cp < 0x20 || (ensure_ascii && cp >= 0x7F)) {
            if (cp >= 0x10000) {
                const uint32_t v = cp - 0x10000;
                std::snprintf(buf, sizeof buf, "\\u%04x\\u%04x", 0xD800 + (v >> 10), 0xDC00 + (v & 0x3FF));
            } else {
                std::snprintf(buf, sizeof buf, "\\u%04x", cp);
            }
            out += buf;
        } else {
            out.append(s.substr(start, i - start));
        }
    }
    out += '"';
}

namespace {

struct json_writer {
    const json_options & opts;
    budget & bud;
    std::string out;

    void newline(uint32_t level) {
        out += '\n';
        for (uint32_t i = 0; i < level; ++i) out += opts.indent;
    }

    std::string key_text(const value & k) {
        switch (k.kind()) {
            case value_kind::string: return k.get_string();
            case value_kind::boolean: return k.get_bool() ? "true" : "false";
            case value_kind::none: return "null";
            case value_kind::integer: return format_int(k.get_int());
            case value_kind::floating: return float_text(k.get_number());
            default:
                throw_error(error_kind::type, "keys must be str, int, float, bool or None, not " + type_name(k));
        }
    }

    static std::string float_text(double d) {
        if (std::isnan(d)) return "NaN";
        if (std::isinf(d)) return d < 0 ? "-Infinity" : "Infinity";
        return format_float(d);
    }

    void write_seq(const std::vector<value> & items, uint32_t level) {
        if (items.empty()) {
            out += "[]";
            return;
        }
        out += '[';
        for (size_t i = 0; i < items.size(); ++i) {
            if (i) out += opts.item_separator;
            if (opts.has_indent) newline(level + 1);
            write(items[i], level + 1);
        }
        if (opts.has_indent) newline(level);
        out += ']';
    }

    // python sorts the original keys: all strings (by code point, which is UTF-8 byte order) or
    // all numbers; a mix cannot be ordered.
    void sort_entries(const dict_obj & d, std::vector<std::pair<std::string, const value *>> & entries) {
        bool strings = false, others = false;
        for (const auto & [k, v] : d.items) (k.is_string() ? strings : others) = true;
        if (strings && others) throw_error(error_kind::type, "'<' not supported between instances of 'int' and 'str'");
        std::vector<size_t> order(entries.size());
        for (size_t i = 0; i < order.size(); ++i) order[i] = i;
        std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
            return compare(d.items[a].first, d.items[b].first, bud) == -1;
        });
        std::vector<std::pair<std::string, const value *>> sorted;
        sorted.reserve(entries.size());
        for (size_t i : order) sorted.push_back(std::move(entries[i]));
        entries = std::move(sorted);
    }

    void write_dict(const dict_obj & d, uint32_t level) {
        if (d.items.empty()) {
            out += "{}";
            return;
        }
        std::vector<std::pair<std::string, const value *>> entries;
        entries.reserve(d.items.size());
        for (const auto & [k, v] : d.items) entries.emplace_back(key_text(k), &v);
        if (opts.sort_keys) sort_entries(d, entries);
        out += '{';
        bool first = true;
        for (const auto & [k, v] : entries) {
            if (!first) out += opts.item_separator;
            first = false;
            if (opts.has_indent) newline(level + 1);
            json_string(out, k, opts.ensure_ascii);
            out += opts.key_separator;
            write(*v, level + 1);
        }
        if (opts.has_indent) newline(level);
        out += '}';
    }

    void write(const value & v, uint32_t level) {
        bud.check_depth(level);
        bud.charge(1);
        bud.check_string(out.size());
        switch (v.kind()) {
            case value_kind::none: out += "null"; return;
            case value_kind::boolean: out += v.get_bool() ? "true" : "false"; return;
            case value_kind::integer: out += format_int(v.get_int()); return;
            case value_kind::floating: out += float_text(v.get_number()); return;
            case value_kind::string: json_string(out, v.get_string(), opts.ensure_ascii); return;
            case value_kind::list:
                if (v.flavor() == seq_flavor::list || v.flavor() == seq_flavor::tuple) {
                    write_seq(v.get_items(), level);
                    return;
                }
                break;
            case value_kind::dict: write_dict(v.get_dict(), level); return;
            default: break;
        }
        throw_error(error_kind::type, "Object of type " + type_name(v) + " is not JSON serializable");
    }
};

}  // namespace

std::string to_json(const value & v, const json_options & opts, budget & bud) {
    json_writer w{opts, bud, {}};
    w.write(v, 0);
    bud.check_string(w.out.size());
    return std::move(w.out);
}

}  // namespace jinja
