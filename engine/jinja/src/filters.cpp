// filters.cpp — string, number and other filters (default, upper/lower/title/capitalize, trim,
// replace, string, safe, escape, indent, wordcount, center, truncate, format, int, float, abs,
// round, tojson, attr) and the dispatch of filters by name.
#include "builtins.h"
#include "utf8.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace jinja {

namespace {

value soft_str(interp & in, const value & v) {
    if (v.is_string()) return v;
    return value::string(in.str(v));
}

value f_default(interp &, const value & input, call_args & args) {
    arg_reader r(args, "default", {"default_value", "boolean"});
    const bool boolean = r.has(1) && truthy(*r.get(1));
    if (input.is_undefined() || (boolean && !truthy(input))) return r.get_or(0, value::string(""));
    return input;
}

value f_upper(interp & in, const value & input, call_args & args) {
    arg_reader r(args, "upper", {});
    const value s = soft_str(in, input);
    return value::string(py_upper(s.get_string()), s.is_markup());
}

value f_lower(interp & in, const value & input, call_args & args) {
    arg_reader r(args, "lower", {});
    const value s = soft_str(in, input);
    return value::string(py_lower(s.get_string()), s.is_markup());
}

value f_capitalize(interp & in, const value & input, call_args & args) {
    arg_reader r(args, "capitalize", {});
    value s = soft_str(in, input);
    call_args none;
    return call_method(in, s, "capitalize", none);
}

// jinja2's title: words start after runs of '-', whitespace, '(', '{', '[' or '<'.
value f_title(interp & in, const value & input, call_args & args) {
    arg_reader r(args, "title", {});
    const value sv = soft_str(in, input);
    const std::string & s = sv.get_string();
    std::string out;
    bool word_start = true;
    for (size_t i = 0; i < s.size();) {
        const uint32_t cp = utf8_next(s, i);
        const bool sep = cp == '-' || cp == '(' || cp == '{' || cp == '[' || cp == '<' || py_isspace(cp);
        utf8_append(out, sep ? cp : (word_start ? py_toupper(cp) : py_tolower(cp)));
        word_start = sep;
    }
    return value::string(std::move(out), sv.is_markup());
}

value f_trim(interp & in, const value & input, call_args & args) {
    arg_reader r(args, "trim", {"chars"});
    value s = soft_str(in, input);
    call_args strip_args;
    if (r.has(0)) strip_args.pos.push_back(*r.get(0));
    return call_method(in, s, "strip", strip_args);
}

value f_replace(interp & in, const value & input, call_args & args) {
    arg_reader r(args, "replace", {"old", "new", "count"});
    if (!r.has(0) || !r.has(1)) throw_error(error_kind::type, "replace() missing required arguments 'old' and 'new'");
    call_args rep;
    rep.pos = {value::string(in.str(*r.get(0))), value::string(in.str(*r.get(1)))};
    if (r.has(2) && !r.get(2)->is_none()) rep.pos.push_back(*r.get(2));
    return call_method(in, value::string(in.str(input)), "replace", rep);
}

value f_string(interp & in, const value & input, call_args & args) {
    arg_reader r(args, "string", {});
    return soft_str(in, input);
}

value f_safe(interp & in, const value & input, call_args & args) {
    arg_reader r(args, "safe", {});
    if (input.is_markup()) return input;
    return value::string(in.str(input), true);
}

value f_escape(interp & in, const value & input, call_args & args) {
    arg_reader r(args, "escape", {});
    if (input.is_markup()) return input;
    return value::string(escape_html(in.str(input)), true);
}

value f_forceescape(interp & in, const value & input, call_args & args) {
    arg_reader r(args, "forceescape", {});
    return value::string(escape_html(in.str(input)), true);
}

value f_indent(interp & in, const value & input, call_args & args) {
    arg_reader r(args, "indent", {"width", "first", "blank"});
    std::string indention = "    ";
    if (r.has(0)) {
        if (r.get(0)->is_string()) {
            indention = r.get(0)->get_string();
        } else {
            indention = std::string(static_cast<size_t>(std::clamp<int64_t>(to_index_int(*r.get(0), "width"), 0, 1 << 20)), ' ');
        }
    }
    const bool first = r.has(1) && truthy(*r.get(1)), blank = r.has(2) && truthy(*r.get(2));
    if (input.is_undefined()) in.raise_undefined(input);
    if (!input.is_string()) {  // python's indent adds "\n" to its input and splits lines
        throw_error(error_kind::type, "'" + type_name(input) + "' object has no attribute 'splitlines'");
    }
    const value & sv = input;
    call_args none;
    const value lines_v = call_method(in, value::string(sv.get_string() + "\n"), "splitlines", none);
    const auto & lines = lines_v.get_items();
    std::string out;
    for (size_t i = 0; i < lines.size(); ++i) {
        const std::string & line = lines[i].get_string();
        if (i > 0) {
            out += "\n";
            if (blank || !line.empty()) out += indention;
        }
        out += line;
        in.check_string(out);
    }
    if (first) out = indention + out;
    return value::string(std::move(out), sv.is_markup());
}

value f_wordcount(interp & in, const value & input, call_args & args) {
    arg_reader r(args, "wordcount", {});
    const std::string s = in.str(input);
    int64_t n = 0;
    bool in_word = false;
    for (size_t i = 0; i < s.size();) {
        const uint32_t cp = utf8_next(s, i);
        const bool w = py_isalpha(cp) || py_isdigit(cp) || cp == '_';
        if (w && !in_word) ++n;
        in_word = w;
    }
    return value::integer(n);
}

value f_center(interp & in, const value & input, call_args & args) {
    arg_reader r(args, "center", {"width"});
    call_args c;
    c.pos.push_back(r.get_or(0, value::integer(80)));
    return call_method(in, value::string(in.str(input)), "center", c);
}

value f_truncate(interp & in, const value & input, call_args & args) {
    arg_reader r(args, "truncate", {"length", "killwords", "end", "leeway"});
    if (input.is_undefined()) return input;  // len(Undefined) is 0: returned as it is
    const int64_t input_len = py_len(input);  // python takes len() of the value as it is
    const int64_t length = r.has(0) ? to_index_int(*r.get(0), "length") : 255;
    const bool killwords = r.has(1) && truthy(*r.get(1));
    const std::string end = r.has(2) ? in.str(*r.get(2)) : "...";
    const int64_t leeway = r.has(3) && !r.get(3)->is_none() ? to_index_int(*r.get(3), "leeway") : 5;
    const int64_t end_len = static_cast<int64_t>(utf8_length(end));
    if (length < end_len) throw_error(error_kind::value, "expected length >= " + std::to_string(end_len) + ", got " + std::to_string(length));
    if (leeway < 0) throw_error(error_kind::value, "expected leeway >= 0, got " + std::to_string(leeway));
    if (input_len <= length + leeway) return input;
    if (!input.is_string()) throw_error(error_kind::type, "'" + type_name(input) + "' object has no attribute 'rsplit'");
    const std::string & s = input.get_string();
    std::string head = slice_string(s, value::none(), value::integer(length - end_len), value::none());
    if (!killwords) {
        const size_t sp = head.rfind(' ');
        if (sp != std::string::npos) head.resize(sp);
    }
    return value::string(head + end);
}

value f_format(interp & in, const value & input, call_args & args) {
    if (!args.pos.empty() && !args.kw.empty()) {
        throw_error(error_kind::type, "can't handle positional and keyword arguments at the same time");
    }
    value fmt_args;
    if (!args.kw.empty()) {
        std::vector<std::pair<value, value>> d;
        for (auto & [k, v] : args.kw) d.emplace_back(value::string(k), v);
        fmt_args = value::dict(std::move(d));
    } else {
        fmt_args = value::list(args.pos, seq_flavor::tuple);
    }
    const value s = soft_str(in, input);
    return in.binary(binary_op::mod, s, fmt_args);
}

bool parse_py_int(std::string text, int base, int64_t & out) {
    size_t a = 0, b = text.size();
    while (a < b && py_isspace(static_cast<unsigned char>(text[a]))) ++a;
    while (b > a && py_isspace(static_cast<unsigned char>(text[b - 1]))) --b;
    text = text.substr(a, b - a);
    bool neg = false;
    size_t i = 0;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) neg = text[i++] == '-';
    if (base == 16 && text.size() > i + 1 && text[i] == '0' && (text[i + 1] | 0x20) == 'x') i += 2;
    if (base == 8 && text.size() > i + 1 && text[i] == '0' && (text[i + 1] | 0x20) == 'o') i += 2;
    if (base == 2 && text.size() > i + 1 && text[i] == '0' && (text[i + 1] | 0x20) == 'b') i += 2;
    if (i >= text.size()) return false;
    uint64_t v = 0;
    bool prev_digit = false;
    for (; i < text.size(); ++i) {
        const char c = text[i];
        if (c == '_' && prev_digit && i + 1 < text.size()) {
            prev_digit = false;
            continue;
        }
        int d = (c >= '0' && c <= '9') ? c - '0' : ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') ? (c | 0x20) - 'a' + 10 : 99;
        if (d >= base) return false;
        if (v > (static_cast<uint64_t>(INT64_MAX) - static_cast<uint64_t>(d)) / static_cast<uint64_t>(base)) return false;
        v = v * static_cast<uint64_t>(base) + static_cast<uint64_t>(d);
        prev_digit = true;
    }
    if (!prev_digit) return false;
    out = neg ? -static_cast<int64_t>(v) : static_cast<int64_t>(v);
    return true;
}

bool parse_py_float(const std::string & text, double & out) {
    std::string t;
    for (char c : text) {
        if (c != '_') t += c;
    }
    size_t a = 0, b = t.size();
    while (a < b && py_isspace(static_cast<unsigned char>(t[a]))) ++a;
    while (b > a && py_isspace(static_cast<unsigned char>(t[b - 1]))) --b;
    t = t.substr(a, b - a);
    if (t.empty()) return false;
    const char * begin = t.c_str();
    char * end = nullptr;
    errno = 0;
    out = std::strtod(begin, &end);
    if (end != begin + t.size()) return false;
    const std::string low = py_lower(t);
    if (low.find("0x") != std::string::npos) return false;  // strtod reads hex floats; python does not
    return true;
}

value f_int(interp & in, const value & input, call_args & args) {
    arg_reader r(args, "int", {"default", "base"});
    const value def = r.get_or(0, value::integer(0));
    const int64_t base = r.has(1) ? to_index_int(*r.get(1), "base") : 10;
    if (input.is_undefined()) in.raise_undefined(input);
    if (input.is_int() || input.is_bool()) return value::integer(input.get_int());
    double d = 0;
    if (input.is_string()) {
        int64_t i = 0;
        if (base >= 2 && base <= 36 && parse_py_int(input.get_string(), static_cast<int>(base), i)) return value::integer(i);
        if (!parse_py_float(input.get_string(), d)) return def;
    } else if (input.is_float()) {
        d = input.get_number();
    } else {
        return def;
    }
    if (std::isnan(d)) return def;
    if (std::isinf(d)) throw_error(error_kind::value, "cannot convert float infinity to integer");
    if (std::fabs(d) >= 9.2e18) throw_error(error_kind::value, "integer result too large (64-bit overflow)");
    return value::integer(static_cast<int64_t>(std::trunc(d)));
}

value f_float(interp & in, const value & input, call_args & args) {
    arg_reader r(args, "float", {"default"});
    if (input.is_undefined()) in.raise_undefined(input);
    if (input.is_number()) return value::floating(input.get_number());
    double d = 0;
    if (input.is_string() && parse_py_float(input.get_string(), d)) return value::floating(d);
    return r.get_or(0, value::floating(0.0));
}

value f_abs(interp &, const value & input, call_args & args) {
    arg_reader r(args, "abs", {});
    if (input.is_float()) return value::floating(std::fabs(input.get_number()));
    if (input.is_int() || input.is_bool()) {
        if (input.get_int() == INT64_MIN) throw_error(error_kind::value, "integer result too large (64-bit overflow)");
        return value::integer(input.get_int() < 0 ? -input.get_int() : input.get_int());
    }
    throw_error(error_kind::type, "bad operand type for abs(): '" + type_name(input) + "'");
}

double round_half_even(double x, int64_t precision) {
    if (precision > 300) return x;
    if (precision >= 0) {
        char buf[512];
        std::snprintf(buf, sizeof buf, "%.*f", static_cast<int>(std::min<int64_t>(precision, 340)), x);
        return std::strtod(buf, nullptr);
    }
    const double m = std::pow(10.0, static_cast<double>(-precision));
    return std::nearbyint(x / m) * m;
}

value f_round(interp &, const value & input, call_args & args) {
    arg_reader r(args, "round", {"precision", "method"});
    const int64_t precision = r.has(0) ? to_index_int(*r.get(0), "precision") : 0;
    const std::string method = r.has(1) && r.get(1)->is_string() ? r.get(1)->get_string() : "common";
    if (method != "common" && method != "ceil" && method != "floor") {
        throw_error(error_kind::value, "method must be common, ceil or floor");
    }
    if (!input.is_number()) throw_error(error_kind::type, "type " + type_name(input) + " doesn't define __round__ method");
    if (method == "common") {
        if (!input.is_float()) {
            if (precision >= 0) return value::integer(input.get_int());
            return value::integer(static_cast<int64_t>(round_half_even(static_cast<double>(input.get_int()), precision)));
        }
        return value::floating(round_half_even(input.get_number(), precision));
    }
    const double m = std::pow(10.0, static_cast<double>(precision));
    const double x = input.get_number() * m;
    return value::floating((method == "ceil" ? std::ceil(x) : std::floor(x)) / m);
}

value f_tojson(interp & in, const value & input, call_args & args) {
    arg_reader r(args, "tojson", {"ensure_ascii", "indent", "separators", "sort_keys"});
    json_options o;
    o.ensure_ascii = r.has(0) && truthy(*r.get(0));
    o.sort_keys = r.has(3) && truthy(*r.get(3));
    if (r.has(1) && !r.get(1)->is_none()) {
        const value & ind = *r.get(1);
        o.has_indent = true;
        if (ind.is_string()) {
            o.indent = ind.get_string();
        } else {
            o.indent = std::string(static_cast<size_t>(std::clamp<int64_t>(to_index_int(ind, "indent"), 0, 1 << 16)), ' ');
        }
        o.item_separator.assign(1, ',');  // python: "," when indenting
    }
    if (r.has(2) && !r.get(2)->is_none()) {
        const value & sep = *r.get(2);
        std::vector<value> parts = in.iterate(sep);
        if (parts.size() != 2 || !parts[0].is_string() || !parts[1].is_string()) {
            throw_error(error_kind::value, "separators must be an (item_separator, key_separator) pair of strings");
        }
        o.item_separator = parts[0].get_string();
        o.key_separator = parts[1].get_string();
    }
    return value::string(to_json(input, o, in.bud));
}

value f_attr(interp & in, const value & input, call_args & args) {
    arg_reader r(args, "attr", {"name"});
    if (!r.has(0)) throw_error(error_kind::type, "attr() missing required argument 'name'");
    const std::string name = in.str(*r.get(0));
    if (input.is_undefined()) in.raise_undefined(input);
    if (has_method(input, name)) return bound_method(input, name);
    if (input.is_object()) return input.get_object().get_attr(in, name);
    return undefined_attribute(input, name);
}


}  // namespace

filter_fn find_filter(std::string_view name) {
    static const std::pair<std::string_view, filter_fn> table[] = {
        {"default", f_default},   {"d", f_default},         {"upper", f_upper},     {"lower", f_lower},
        {"capitalize", f_capitalize}, {"title", f_title},   {"trim", f_trim},       {"replace", f_replace},
        {"string", f_string},     {"safe", f_safe},         {"escape", f_escape},   {"e", f_escape},
        {"forceescape", f_forceescape}, {"indent", f_indent}, {"wordcount", f_wordcount}, {"center", f_center},
        {"truncate", f_truncate}, {"format", f_format},     {"int", f_int},         {"float", f_float},
        {"abs", f_abs},           {"round", f_round},       {"tojson", f_tojson},   {"attr", f_attr},
    };
    for (const auto & [n, f] : table) {
        if (n == name) return f;
    }
    return find_seq_filter(name);
}

value interp::apply_filter(std::string_view name, const value & input, call_args & args) {
    depth_guard guard(*this);  // map('map', 'map', …) recurses through here
    bud.charge(1 + (input.is_string() ? input.get_string().size() / 256 : 0));
    const filter_fn f = find_filter(name);
    if (!f) throw_error(error_kind::unknown_name, "No filter named '" + std::string(name) + "' found.");
    return f(*this, input, args);
}

}  // namespace jinja
