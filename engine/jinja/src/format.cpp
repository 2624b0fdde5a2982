// format.cpp — python's printf-style `str % args`, `str.format(...)` and C-locale strftime.
#include "interp.h"
#include "utf8.h"

#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <ctime>

namespace jinja {

namespace {

struct spec {
    bool left = false, plus = false, space = false, zero = false, alt = false;
    int width = -1, precision = -1;
};

std::string pad(std::string s, const spec & sp) {
    const size_t len = utf8_length(s);
    if (sp.width < 0 || len >= static_cast<size_t>(sp.width)) return s;
    const size_t fill = static_cast<size_t>(sp.width) - len;
    if (sp.left) return s + std::string(fill, ' ');
    if (sp.zero && !s.empty()) {
        const size_t sign = (s[0] == '-' || s[0] == '+' || s[0] == ' ') ? 1 : 0;
        return s.substr(0, sign) + std::string(fill, '0') + s.substr(sign);
    }
    return std::string(fill, ' ') + s;
}

std::string printf_number(char conv, const value & v, const spec & sp) {
    std::string flags;
    if (sp.plus) flags += '+';
    if (sp.space) flags += ' ';
    if (sp.alt) flags += '#';
    char buf[512];
    if (conv == 'd' || conv == 'i' || conv == 'u' || conv == 'x' || conv == 'X' || conv == 'o') {
        if (v.is_float() && (conv == 'x' || conv == 'X' || conv == 'o')) {
            throw_error(error_kind::type, std::string("%") + conv + " format: an integer is required, not float");
        }
        const int64_t i = v.is_float() ? static_cast<int64_t>(std::trunc(v.get_number())) : v.get_int();
        const char c = (conv == 'i' || conv == 'u') ? 'd' : conv;
        const std::string f = "%" + flags + (c == 'd' ? std::string(PRId64) : std::string("ll") + c);
        if (c == 'd') {
            std::snprintf(buf, sizeof buf, f.c_str(), i);
        } else {
            std::snprintf(buf, sizeof buf, f.c_str(), static_cast<long long>(i));
        }
        return buf;
    }
    const int precision = sp.precision < 0 ? 6 : std::min(sp.precision, 100);
    const std::string f = "%" + flags + "." + std::to_string(precision) + conv;
    std::snprintf(buf, sizeof buf, f.c_str(), v.get_number());
    return buf;
}

// One `%` conversion of python's printf-style formatting.
std::string format_piece(interp & in, char conv, const value & arg, const spec & sp) {
    std::string piece;
    if (conv == 's' || conv == 'r' || conv == 'a') {
        piece = conv == 's' ? in.str(arg) : to_repr(arg, in.bud);
        if (sp.precision >= 0 && static_cast<size_t>(sp.precision) < piece.size()) piece.resize(static_cast<size_t>(sp.precision));
    } else if (std::string_view("diuxXoeEfFgG").find(conv) != std::string_view::npos) {
        if (!arg.is_number()) {
            throw_error(error_kind::type, std::string("%") + conv + " format: a real number is required, not " + type_name(arg));
        }
        piece = printf_number(conv, arg, sp);
    } else if (conv == 'c') {
        if (arg.is_string() && utf8_length(arg.get_string()) == 1) {
            piece = arg.get_string();
        } else if (arg.is_int()) {
            utf8_append(piece, static_cast<uint32_t>(arg.get_int()) & 0x1FFFFF);
        } else {
            throw_error(error_kind::type, "%c requires int or char");
        }
    } else {
        throw_error(error_kind::value, std::string("unsupported format character '") + conv + "'");
    }
    return piece;
}

}  // namespace

std::string py_format(interp & in, const std::string & fmt, const value & args) {
    std::vector<value> list;
    const dict_obj * mapping = nullptr;
    if (args.is_list() && args.flavor() == seq_flavor::tuple) {
        list = args.get_items();
    } else {
        list.push_back(args);
        if (args.is_dict()) mapping = &args.get_dict();
    }
    size_t next = 0;
    bool used_mapping = false;
    std::string out;
    auto take = [&]() -> value {
        if (next >= list.size()) throw_error(error_kind::type, "not enough arguments for format string");
        return list[next++];
    };
    for (size_t i = 0; i < fmt.size(); ++i) {
        if (fmt[i] != '%') {
            out += fmt[i];
            continue;
        }
        if (++i >= fmt.size()) throw_error(error_kind::value, "incomplete format");
        value arg;
        bool have_arg = false;
        if (fmt[i] == '(') {
            const size_t close = fmt.find(')', i);
            if (close == std::string::npos) throw_error(error_kind::value, "incomplete format key");
            if (!mapping) throw_error(error_kind::type, "format requires a mapping");
            const value * v = mapping->find(std::string_view(fmt).substr(i + 1, close - i - 1));
            if (!v) throw_error(error_kind::value, "KeyError: " + repr_string(fmt.substr(i + 1, close - i - 1)));
            arg = *v, have_arg = true, used_mapping = true;
            i = close + 1;
        }
        spec sp;
        for (; i < fmt.size() && std::string_view("-+ 0#").find(fmt[i]) != std::string_view::npos; ++i) {
            sp.left |= fmt[i] == '-', sp.plus |= fmt[i] == '+', sp.space |= fmt[i] == ' ';
            sp.zero |= fmt[i] == '0', sp.alt |= fmt[i] == '#';
        }
        auto read_num = [&](int & dst) {
            if (i < fmt.size() && fmt[i] == '*') {
                dst = static_cast<int>(std::min<int64_t>(to_index_int(take(), "*"), 10000));
                ++i;
                return;
            }
            if (i < fmt.size() && fmt[i] >= '0' && fmt[i] <= '9') dst = 0;
            for (; i < fmt.size() && fmt[i] >= '0' && fmt[i] <= '9'; ++i) dst = std::min(dst * 10 + (fmt[i] - '0'), 10000);
        };
        read_num(sp.width);
        if (i < fmt.size() && fmt[i] == '.') {
            ++i;
            sp.precision = 0;
            read_num(sp.precision);
        }
        while (i < fmt.size() && (fmt[i] == 'h' || fmt[i] == 'l' || fmt[i] == 'L')) ++i;
        if (i >= fmt.size()) throw_error(error_kind::value, "incomplete format");
        const char conv = fmt[i];
        if (conv == '%') {
            out += '%';
            continue;
        }
        if (!have_arg) arg = take();
        out += pad(format_piece(in, conv, arg, sp), sp);
        in.check_string(out);
    }
    // python: a list or dict argument counts as a mapping, so unused it is no error
    const bool mapping_like = args.is_dict() || args.is_undefined() || (args.is_list() && args.flavor() != seq_flavor::tuple);
    if (!used_mapping && !mapping_like && next < list.size()) {
        throw_error(error_kind::type, "not all arguments converted during string formatting");
    }
    return out;
}

// ---- str.format ----

namespace {

std::string format_field(interp & in, const value & v, std::string_view fs) {
    // [[fill]align][sign][#][0][width][,][.precision][type]
    size_t i = 0;
    std::string fill = " ";
    char align = 0;
    auto is_align = [](char c) { return c == '<' || c == '>' || c == '^' || c == '='; };
    if (fs.size() >= 2 && is_align(fs[1])) {
        fill = std::string(1, fs[0]), align = fs[1], i = 2;
    } else if (!fs.empty() && is_align(fs[0])) {
        align = fs[0], i = 1;
    }
    spec sp;
    if (i < fs.size() && (fs[i] == '+' || fs[i] == '-' || fs[i] == ' ')) sp.plus = fs[i] == '+', sp.space = fs[i] == ' ', ++i;
    if (i < fs.size() && fs[i] == '#') sp.alt = true, ++i;
    if (i < fs.size() && fs[i] == '0') sp.zero = true, ++i;
    int width = 0;
    for (; i < fs.size() && fs[i] >= '0' && fs[i] <= '9'; ++i) width = std::min(width * 10 + (fs[i] - '0'), 10000);
    if (i < fs.size() && fs[i] == ',') ++i;
    if (i < fs.size() && fs[i] == '.') {
        sp.precision = 0;
        for (++i; i < fs.size() && fs[i] >= '0' && fs[i] <= '9'; ++i) sp.precision = std::min(sp.precision * 10 + (fs[i] - '0'), 100);
    }
    const char type = i < fs.size() ? fs[i] : 0;
    std::string body;
    if (type == 0 || type == 's') {
        body = (type == 0 && v.is_float() && sp.precision >= 0) ? printf_number('g', v, sp) : in.str(v);
        if (type == 's' && sp.precision >= 0 && static_cast<size_t>(sp.precision) < body.size()) body.resize(static_cast<size_t>(sp.precision));
        if (!align) align = v.is_number() ? '>' : '<';
    } else {
        if (!v.is_number() || std::string_view("dnfFeEgGxXo%").find(type) == std::string_view::npos) {
            throw_error(error_kind::value, std::string("Unknown format code '") + type + "' for object of type '" + type_name(v) + "'");
        }
        if (type == '%') {
            body = printf_number('f', value::floating(v.get_number() * 100), sp) + "%";
        } else {
            body = printf_number(type == 'n' ? 'd' : type, v, sp);
        }
        if (!align) align = sp.zero ? '=' : '>';
        if (sp.zero && fill == " ") fill = "0";
    }
    const size_t len = utf8_length(body);
    if (width <= 0 || len >= static_cast<size_t>(width)) return body;
    const size_t n = static_cast<size_t>(width) - len;
    auto rep = [&](size_t k) {
        std::string s;
        for (size_t j = 0; j < k; ++j) s += fill;
        return s;
    };
    switch (align) {
        case '<': return body + rep(n);
        case '^': return rep(n / 2) + body + rep(n - n / 2);
        case '=': {
            const size_t sign = (!body.empty() && (body[0] == '-' || body[0] == '+')) ? 1 : 0;
            return body.substr(0, sign) + rep(n) + body.substr(sign);
        }
        default: return rep(n) + body;
    }
}

// A field index of at most 9 digits (python accepts more, but no argument list is that long).
int64_t field_number(std::string_view digits) {
    if (digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string_view::npos) {
        throw_error(error_kind::value, "bad field index '" + std::string(digits) + "' in format string");
    }
    int64_t n = 0;
    for (char c : digits) n = n * 10 + (c - '0');
    return n;
}

value resolve_field(interp & in, std::string_view name, call_args & args, size_t & auto_index) {
    size_t end = 0;
    while (end < name.size() && name[end] != '.' && name[end] != '[') ++end;
    const std::string_view head = name.substr(0, end);
    value v;
    if (head.empty() || (head[0] >= '0' && head[0] <= '9')) {
        const size_t idx = head.empty() ? auto_index++ : static_cast<size_t>(field_number(head));
        if (idx >= args.pos.size()) throw_error(error_kind::value, "Replacement index " + std::to_string(idx) + " out of range for positional args tuple");
        v = args.pos[idx];
    } else {
        bool found = false;
        for (const auto & [k, x] : args.kw) {
            if (k == head) v = x, found = true;
        }
        if (!found) throw_error(error_kind::value, "KeyError: " + repr_string(head));
    }
    while (end < name.size()) {
        if (name[end] == '.') {
            size_t e = end + 1;
            while (e < name.size() && name[e] != '.' && name[e] != '[') ++e;
            v = in.getattr(v, name.substr(end + 1, e - end - 1));
            end = e;
        } else {
            const size_t close = name.find(']', end);
            if (close == std::string_view::npos) throw_error(error_kind::value, "Missing ']' in format string");
            const std::string key(name.substr(end + 1, close - end - 1));
            const bool numeric = !key.empty() && key.find_first_not_of("0123456789") == std::string::npos;
            v = in.getitem(v, numeric ? value::integer(field_number(key)) : value::string(key));
            end = close + 1;
        }
    }
    return v;
}

}  // namespace

std::string py_str_format(interp & in, const std::string & fmt, call_args & args) {
    std::string out;
    size_t auto_index = 0;
    for (size_t i = 0; i < fmt.size(); ++i) {
        const char c = fmt[i];
        if (c == '}') {
            if (i + 1 < fmt.size() && fmt[i + 1] == '}') ++i;
            else throw_error(error_kind::value, "Single '}' encountered in format string");
            out += '}';
            continue;
        }
        if (c != '{') {
            out += c;
            continue;
        }
        if (i + 1 < fmt.size() && fmt[i + 1] == '{') {
            out += '{';
            ++i;
            continue;
        }
        const size_t close = fmt.find('}', i);
        if (close == std::string::npos) throw_error(error_kind::value, "Single '{' encountered in format string");
        std::string_view field = std::string_view(fmt).substr(i + 1, close - i - 1);
        std::string_view fs;
        char conversion = 0;
        if (const size_t colon = field.find(':'); colon != std::string_view::npos) fs = field.substr(colon + 1), field = field.substr(0, colon);
        if (const size_t bang = field.find('!'); bang != std::string_view::npos) {
            conversion = bang + 1 < field.size() ? field[bang + 1] : 0;
            field = field.substr(0, bang);
        }
        value v = resolve_field(in, field, args, auto_index);
        if (conversion == 'r' || conversion == 'a') v = value::string(to_repr(v, in.bud));
        if (conversion == 's') v = value::string(in.str(v));
        out += format_field(in, v, fs);
        in.check_string(out);
        i = close;
    }
    return out;
}

// ---- strftime (C locale) ----

std::string strftime_c(const std::tm & t, std::string_view fmt) {
    static const char * days[] = {"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"};
    static const char * months[] = {"January", "February", "March",     "April",   "May",      "June",
                                    "July",    "August",   "September", "October", "November", "December"};
    const int wday = ((t.tm_wday % 7) + 7) % 7, mon = ((t.tm_mon % 12) + 12) % 12;
    std::string out;
    char buf[64];
    auto num = [&](const char * f, long v) {
        std::snprintf(buf, sizeof buf, f, v);
        out += buf;
    };
    for (size_t i = 0; i < fmt.size(); ++i) {
        if (fmt[i] != '%' || i + 1 >= fmt.size()) {
            out += fmt[i];
            continue;
        }
        const char c = fmt[++i];
        switch (c) {
            case 'a': out += std::string(days[wday]).substr(0, 3); break;
            case 'A': out += days[wday]; break;
            case 'b':
            case 'h': out += std::string(months[mon]).substr(0, 3); break;
            case 'B': out += months[mon]; break;
            case 'd': num("%02ld", t.tm_mday); break;
            case 'e': num("%2ld", t.tm_mday); break;
            case 'H': num("%02ld", t.tm_hour); break;
            case 'I': num("%02ld", (t.tm_hour % 12) == 0 ? 12 : t.tm_hour % 12); break;
            case 'j': num("%03ld", t.tm_yday + 1); break;
            case 'm': num("%02ld", mon + 1); break;
            case 'M': num("%02ld", t.tm_min); break;
            case 'p': out += t.tm_hour < 12 ? "AM" : "PM"; break;
            case 'S': num("%02ld", t.tm_sec); break;
            case 'y': num("%02ld", (t.tm_year + 1900) % 100); break;
            case 'Y': num("%ld", t.tm_year + 1900L); break;
            case 'C': num("%02ld", (t.tm_year + 1900) / 100); break;
            case 'w': num("%ld", wday); break;
            case 'u': num("%ld", wday == 0 ? 7 : wday); break;
            case 'D': out += strftime_c(t, "%m/%d/%y"); break;
            case 'F': out += strftime_c(t, "%Y-%m-%d"); break;
            case 'T': out += strftime_c(t, "%H:%M:%S"); break;
            case 'R': out += strftime_c(t, "%H:%M"); break;
            case 'c': out += strftime_c(t, "%a %b %e %H:%M:%S %Y"); break;
            case 'x': out += strftime_c(t, "%m/%d/%y"); break;
            case 'X': out += strftime_c(t, "%H:%M:%S"); break;
            case 'n': out += '\n'; break;
            case 't': out += '\t'; break;
            case '%': out += '%'; break;
            case 'z':
            case 'Z': break;  // a naive datetime has no zone
            default: {
                const char f[3] = {'%', c, 0};
                const size_t n = std::strftime(buf, sizeof buf, f, &t);
                out.append(buf, n);
            }
        }
    }
    return out;
}

}  // namespace jinja
