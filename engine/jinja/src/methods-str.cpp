// methods-str.cpp — python's str methods (strip, split, startswith, replace, find, join, …),
// by code point where python counts characters; a Markup string's results stay Markup.
#include "interp.h"
#include "utf8.h"

#include <algorithm>

namespace jinja {

namespace {

struct cp_text {  // a string's code points with their byte offsets
    explicit cp_text(const std::string & s) : text(s), offsets(utf8_offsets(s)) {
        for (size_t i = 0; i + 1 < offsets.size(); ++i) {
            size_t p = offsets[i];
            cps.push_back(utf8_next(s, p));
        }
    }
    size_t size() const { return cps.size(); }
    std::string sub(size_t a, size_t b) const { return text.substr(offsets[a], offsets[b] - offsets[a]); }
    size_t cp_index(size_t byte) const {
        return static_cast<size_t>(std::lower_bound(offsets.begin(), offsets.end(), byte) - offsets.begin());
    }
    const std::string & text;
    std::vector<size_t> offsets;
    std::vector<uint32_t> cps;
};

const std::string & need_str(const value & v, std::string_view what) {
    if (!v.is_string()) {
        throw_error(error_kind::type, std::string(what) + " arg must be None or str, not " + type_name(v));
    }
    return v.get_string();
}

std::string strip_text(const std::string & s, const value * chars, bool left, bool right) {
    const cp_text t(s);
    std::vector<uint32_t> set;
    const bool whitespace = !chars || chars->is_none();
    if (!whitespace) set = utf8_decode(need_str(*chars, "strip"));
    auto strip_it = [&](uint32_t cp) {
        return whitespace ? py_isspace(cp) : std::find(set.begin(), set.end(), cp) != set.end();
    };
    size_t a = 0, b = t.size();
    if (left) {
        while (a < b && strip_it(t.cps[a])) ++a;
    }
    if (right) {
        while (b > a && strip_it(t.cps[b - 1])) --b;
    }
    return t.sub(a, b);
}

int64_t read_maxsplit(const arg_reader & r, size_t i) {
    const value * v = r.get(i);
    return v ? to_index_int(*v, "maxsplit") : -1;
}

std::vector<std::string> split_whitespace(const std::string & s, int64_t maxsplit, bool from_right) {
    const cp_text t(s);
    std::vector<std::string> parts;
    const size_t n = t.size();
    if (!from_right) {
        size_t i = 0;
        while (true) {
            while (i < n && py_isspace(t.cps[i])) ++i;
            if (i >= n) break;
            if (maxsplit >= 0 && static_cast<int64_t>(parts.size()) == maxsplit) {
                parts.push_back(t.sub(i, n));  // the rest, trailing whitespace kept
                break;
            }
            size_t j = i;
            while (j < n && !py_isspace(t.cps[j])) ++j;
            parts.push_back(t.sub(i, j));
            i = j;
        }
        return parts;
    }
    size_t i = n;
    while (true) {
        while (i > 0 && py_isspace(t.cps[i - 1])) --i;
        if (i == 0) break;
        if (maxsplit >= 0 && static_cast<int64_t>(parts.size()) == maxsplit) {
            parts.push_back(t.sub(0, i));  // the rest, leading whitespace kept
            break;
        }
        size_t j = i;
        while (j > 0 && !py_isspace(t.cps[j - 1])) --j;
        parts.push_back(t.sub(j, i));
        i = j;
    }
    std::reverse(parts.begin(), parts.end());
    return parts;
}

std::vector<std::string> split_sep(const std::string & s, const std::string & sep, int64_t maxsplit, bool from_right) {
    if (sep.empty()) throw_error(error_kind::value, "empty separator");
    std::vector<std::string> parts;
    if (!from_right) {
        size_t start = 0;
        while (maxsplit < 0 || static_cast<int64_t>(parts.size()) < maxsplit) {
            const size_t p = s.find(sep, start);
            if (p == std::string::npos) break;
            parts.push_back(s.substr(start, p - start));
            start = p + sep.size();
        }
        parts.push_back(s.substr(start));
        return parts;
    }
    size_t end = s.size();
    while (maxsplit < 0 || static_cast<int64_t>(parts.size()) < maxsplit) {
        if (end < sep.size()) break;
        const size_t p = s.rfind(sep, end - sep.size());
        if (p == std::string::npos) break;
        parts.push_back(s.substr(p + sep.size(), end - p - sep.size()));
        end = p;
    }
    parts.push_back(s.substr(0, end));
    std::reverse(parts.begin(), parts.end());
    return parts;
}

bool is_line_break(uint32_t cp) {
    return cp == '\n' || cp == '\r' || cp == 0x0B || cp == 0x0C || cp == 0x1C || cp == 0x1D || cp == 0x1E ||
           cp == 0x85 || cp == 0x2028 || cp == 0x2029;
}

value string_list(const std::vector<std::string> & parts, bool markup) {
    std::vector<value> out;
    out.reserve(parts.size());
    for (const auto & p : parts) out.push_back(value::string(p, markup));
    return value::list(std::move(out));
}

// python's clamp of optional start/end arguments (code point indices) to a byte range.
void sub_range(const cp_text & t, const arg_reader & r, size_t i_start, size_t & a, size_t & b) {
    const int64_t n = static_cast<int64_t>(t.size());
    auto clamp = [&](const value * v, int64_t def) {
        if (!v || v->is_none()) return def;
        int64_t x = to_index_int(*v, "slice");
        if (x < 0) x = std::max<int64_t>(0, x + n);
        return std::min(x, n);
    };
    const int64_t s = clamp(r.get(i_start), 0), e = clamp(r.get(i_start + 1), n);
    a = t.offsets[static_cast<size_t>(s)];
    b = std::max(a, t.offsets[static_cast<size_t>(std::max(s, e))]);
}

bool affix_match(interp & in, const std::string & s, const value & affix, bool prefix) {
    if (affix.is_list() && affix.flavor() == seq_flavor::tuple) {
        for (const auto & a : affix.get_items()) {
            if (affix_match(in, s, a, prefix)) return true;
        }
        return false;
    }
    if (!affix.is_string()) {
        throw_error(error_kind::type, std::string(prefix ? "startswith" : "endswith") +
                                          " first arg must be str or a tuple of str, not " + type_name(affix));
    }
    const std::string & x = affix.get_string();
    if (x.size() > s.size()) return false;
    return prefix ? s.compare(0, x.size(), x) == 0 : s.compare(s.size() - x.size(), x.size(), x) == 0;
}

std::string title_case(const std::string & s, bool capitalize_only) {
    std::string out;
    bool prev_cased = false;
    bool first = true;
    for (size_t i = 0; i < s.size();) {
        const uint32_t cp = utf8_next(s, i);
        uint32_t m = cp;
        if (capitalize_only) {
            m = first ? py_toupper(cp) : py_tolower(cp);
        } else {
            const bool cased = py_islower(cp) || py_isupper(cp);
            m = cased ? (prev_cased ? py_tolower(cp) : py_toupper(cp)) : cp;
            prev_cased = cased;
        }
        first = false;
        utf8_append(out, m);
    }
    return out;
}

std::string replace_text(const std::string & s, const std::string & old, const std::string & rep, int64_t count) {
    std::string out;
    if (old.empty()) {
        const cp_text t(s);
        int64_t done = 0;
        for (size_t i = 0; i <= t.size(); ++i) {
            if (count < 0 || done < count) {
                out += rep;
                ++done;
            }
            if (i < t.size()) out += t.sub(i, i + 1);
        }
        return out;
    }
    size_t start = 0;
    int64_t done = 0;
    while (count < 0 || done < count) {
        const size_t p = s.find(old, start);
        if (p == std::string::npos) break;
        out.append(s, start, p - start);
        out += rep;
        start = p + old.size();
        ++done;
    }
    out.append(s, start, std::string::npos);
    return out;
}

bool all_cps(const std::string & s, bool (*pred)(uint32_t)) {
    if (s.empty()) return false;
    for (size_t i = 0; i < s.size();) {
        if (!pred(utf8_next(s, i))) return false;
    }
    return true;
}

bool cased_check(const std::string & s, bool want_lower) {
    bool any = false;
    for (size_t i = 0; i < s.size();) {
        const uint32_t cp = utf8_next(s, i);
        if (want_lower ? py_isupper(cp) : py_islower(cp)) return false;
        if (want_lower ? py_islower(cp) : py_isupper(cp)) any = true;
    }
    return any;
}

std::string justify(const std::string & s, const arg_reader & r, char how) {
    const int64_t width = r.has(0) ? to_index_int(*r.get(0), "width") : 0;
    std::string fill = " ";
    if (r.has(1)) {
        fill = need_str(*r.get(1), "fillchar");
        if (utf8_length(fill) != 1) throw_error(error_kind::type, "The fill character must be exactly one character long");
    }
    const int64_t len = static_cast<int64_t>(utf8_length(s));
    if (width <= len) return s;
    const int64_t n = std::min<int64_t>(width - len, 1 << 24);
    auto rep = [&](int64_t k) {
        std::string o;
        for (int64_t i = 0; i < k; ++i) o += fill;
        return o;
    };
    if (how == 'l') return s + rep(n);
    if (how == 'r') return rep(n) + s;
    const int64_t left = n / 2 + (n & width & 1);
    return rep(left) + s + rep(n - left);
}

}  // namespace

static value str_method_more(interp & in, const value & self, std::string_view name, call_args & args, bool & found);
static value str_layout_method(interp & in, const value & self, std::string_view name, call_args & args, bool & found);

value str_method(interp & in, const value & self, std::string_view name, call_args & args, bool & found) {
    found = true;
    const std::string & s = self.get_string();
    const bool mk = self.is_markup();
    if (name == "strip" || name == "lstrip" || name == "rstrip") {
        arg_reader r(args, name, {"chars"});
        return value::string(strip_text(s, r.get(0), name != "rstrip", name != "lstrip"), mk);
    }
    if (name == "split" || name == "rsplit") {
        arg_reader r(args, name, {"sep", "maxsplit"});
        const int64_t maxsplit = read_maxsplit(r, 1);
        const bool right = name == "rsplit";
        if (!r.has(0) || r.get(0)->is_none()) return string_list(split_whitespace(s, maxsplit, right), mk);
        return string_list(split_sep(s, need_str(*r.get(0), "sep"), maxsplit, right), mk);
    }
    if (name == "splitlines") {
        arg_reader r(args, name, {"keepends"});
        const bool keep = r.has(0) && truthy(*r.get(0));
        std::vector<std::string> lines;
        const cp_text t(s);
        size_t start = 0;
        for (size_t i = 0; i < t.size(); ++i) {
            if (!is_line_break(t.cps[i])) continue;
            size_t end = i + 1;
            if (t.cps[i] == '\r' && i + 1 < t.size() && t.cps[i + 1] == '\n') ++end;
            lines.push_back(t.sub(start, keep ? end : i));
            start = end;
            i = end - 1;
        }
        if (start < t.size()) lines.push_back(t.sub(start, t.size()));
        return string_list(lines, mk);
    }
    if (name == "startswith" || name == "endswith") {
        arg_reader r(args, name, {"affix", "start", "end"});
        if (!r.has(0)) throw_error(error_kind::type, std::string(name) + "() takes at least 1 argument (0 given)");
        if (!r.has(1) && !r.has(2)) return value::boolean(affix_match(in, s, *r.get(0), name == "startswith"));
        const cp_text t(s);
        size_t a, b;
        sub_range(t, r, 1, a, b);
        return value::boolean(affix_match(in, s.substr(a, b - a), *r.get(0), name == "startswith"));
    }
    if (name == "upper") return value::string(py_upper(s), mk);
    if (name == "lower" || name == "casefold") return value::string(py_lower(s), mk);
    if (name == "title") return value::string(title_case(s, false), mk);
    if (name == "capitalize") return value::string(title_case(s, true), mk);
    if (name == "swapcase") {
        std::string out;
        for (size_t i = 0; i < s.size();) {
            const uint32_t cp = utf8_next(s, i);
            utf8_append(out, py_islower(cp) ? py_toupper(cp) : py_tolower(cp));
        }
        return value::string(out, mk);
    }
    if (name == "replace") {
        arg_reader r(args, name, {"old", "new", "count"});
        if (!r.has(0) || !r.has(1)) throw_error(error_kind::type, "replace expected at least 2 arguments");
        std::string old = need_str(*r.get(0), "replace"), rep = need_str(*r.get(1), "replace");
        if (mk && !r.get(0)->is_markup()) old = escape_html(old);
        if (mk && !r.get(1)->is_markup()) rep = escape_html(rep);
        const int64_t count = r.has(2) ? to_index_int(*r.get(2), "count") : -1;
        std::string out = replace_text(s, old, rep, count);
        in.check_string(out);
        return value::string(std::move(out), mk);
    }
    return str_method_more(in, self, name, args, found);
}

static value str_method_more(interp & in, const value & self, std::string_view name, call_args & args, bool & found) {
    const std::string & s = self.get_string();
    const bool mk = self.is_markup();
    if (name == "find" || name == "rfind" || name == "index" || name == "rindex" || name == "count") {
        arg_reader r(args, name, {"sub", "start", "end"});
        if (!r.has(0)) throw_error(error_kind::type, std::string(name) + "() takes at least 1 argument (0 given)");
        const std::string & sub = need_str(*r.get(0), name);
        const cp_text t(s);
        size_t a, b;
        sub_range(t, r, 1, a, b);
        const std::string_view hay = std::string_view(s).substr(a, b - a);
        if (name == "count") {
            if (sub.empty()) return value::integer(static_cast<int64_t>(utf8_length(hay)) + 1);
            int64_t n = 0;
            for (size_t p = hay.find(sub); p != std::string_view::npos; p = hay.find(sub, p + sub.size())) ++n;
            return value::integer(n);
        }
        const bool rev = name == "rfind" || name == "rindex";
        const size_t p = rev ? hay.rfind(sub) : hay.find(sub);
        if (p == std::string_view::npos) {
            if (name == "index" || name == "rindex") throw_error(error_kind::value, "substring not found");
            return value::integer(-1);
        }
        return value::integer(static_cast<int64_t>(t.cp_index(a + p)));
    }
    if (name == "join") {
        arg_reader r(args, name, {"iterable"});
        if (!r.has(0)) throw_error(error_kind::type, "join() takes exactly one argument (0 given)");
        std::string out;
        size_t i = 0;
        for (const auto & item : in.iterate(*r.get(0))) {
            if (!item.is_string()) {
                throw_error(error_kind::type, "sequence item " + std::to_string(i) + ": expected str instance, " +
                                                  type_name(item) + " found");
            }
            if (i++) out += s;
            out += (mk && !item.is_markup()) ? escape_html(item.get_string()) : item.get_string();
            in.check_string(out);
        }
        return value::string(std::move(out), mk);
    }
    if (name == "format") return value::string(py_str_format(in, s, args), mk);
    if (name == "isdigit" || name == "isdecimal" || name == "isnumeric") return value::boolean(all_cps(s, py_isdigit));
    if (name == "isalpha") return value::boolean(all_cps(s, py_isalpha));
    if (name == "isalnum") return value::boolean(all_cps(s, [](uint32_t c) { return py_isalpha(c) || py_isdigit(c); }));
    if (name == "isspace") return value::boolean(all_cps(s, py_isspace));
    if (name == "islower" || name == "isupper") return value::boolean(cased_check(s, name == "islower"));
    if (name == "istitle") return value::boolean(!s.empty() && title_case(s, false) == s && cased_check(py_lower(s), true));
    return str_layout_method(in, self, name, args, found);
}

// center/ljust/rjust/zfill/partition/rpartition/removeprefix/removesuffix
static value str_layout_method(interp & in, const value & self, std::string_view name, call_args & args, bool & found) {
    const std::string & s = self.get_string();
    const bool mk = self.is_markup();
    if (name == "center" || name == "ljust" || name == "rjust") {
        arg_reader r(args, name, {"width", "fillchar"});
        std::string out = justify(s, r, name[0] == 'c' ? 'c' : name[0]);
        in.check_string(out);
        return value::string(std::move(out), mk);
    }
    if (name == "zfill") {
        arg_reader r(args, name, {"width"});
        const int64_t width = r.has(0) ? to_index_int(*r.get(0), "width") : 0;
        const int64_t len = static_cast<int64_t>(utf8_length(s));
        if (width <= len) return self;
        const size_t sign = (!s.empty() && (s[0] == '-' || s[0] == '+')) ? 1 : 0;
        std::string out = s.substr(0, sign) + std::string(static_cast<size_t>(std::min<int64_t>(width - len, 1 << 24)), '0') + s.substr(sign);
        in.check_string(out);
        return value::string(std::move(out), mk);
    }
    if (name == "partition" || name == "rpartition") {
        arg_reader r(args, name, {"sep"});
        if (!r.has(0)) throw_error(error_kind::type, std::string(name) + "() takes exactly one argument (0 given)");
        const std::string & sep = need_str(*r.get(0), name);
        if (sep.empty()) throw_error(error_kind::value, "empty separator");
        const size_t p = name == "partition" ? s.find(sep) : s.rfind(sep);
        std::vector<value> parts;
        if (p == std::string::npos) {
            parts = name == "partition" ? std::vector<value>{value::string(s, mk), value::string("", mk), value::string("", mk)}
                                        : std::vector<value>{value::string("", mk), value::string("", mk), value::string(s, mk)};
        } else {
            parts = {value::string(s.substr(0, p), mk), value::string(sep, mk), value::string(s.substr(p + sep.size()), mk)};
        }
        return value::list(std::move(parts), seq_flavor::tuple);
    }
    if (name == "removeprefix" || name == "removesuffix") {
        arg_reader r(args, name, {"affix"});
        if (!r.has(0)) throw_error(error_kind::type, std::string(name) + "() takes exactly one argument (0 given)");
        const std::string & a = need_str(*r.get(0), name);
        if (name == "removeprefix" && s.compare(0, a.size(), a) == 0) return value::string(s.substr(a.size()), mk);
        if (name == "removesuffix" && !a.empty() && s.size() >= a.size() && s.compare(s.size() - a.size(), a.size(), a) == 0)
            return value::string(s.substr(0, s.size() - a.size()), mk);
        return self;
    }
    found = false;
    return value();
}

}  // namespace jinja
