// filters-seq.cpp — filters over sequences and mappings: length, list, first/last, join, map,
// select/reject(attr), sort, dictsort, unique, reverse, batch, slice, sum, min/max, items.
#include "builtins.h"
#include "utf8.h"

#include <algorithm>

namespace jinja {

int64_t py_len(const value & v) {
    switch (v.kind()) {
        case value_kind::undefined: return 0;
        case value_kind::string: return static_cast<int64_t>(utf8_length(v.get_string()));
        case value_kind::list:
            if (v.flavor() != seq_flavor::iterator) return static_cast<int64_t>(v.get_items().size());
            break;
        case value_kind::dict: return static_cast<int64_t>(v.get_dict().items.size());
        default: break;
    }
    throw_error(error_kind::type, "object of type '" + type_name(v) + "' has no len()");
}

value ignore_case(const value & v, bool case_sensitive) {
    if (!case_sensitive && v.is_string()) return value::string(py_lower(v.get_string()));
    return v;
}

std::function<value(const value &)> attr_getter(interp & in, const value & attribute, const value * fallback) {
    std::vector<value> parts;
    if (attribute.is_string()) {
        const std::string & a = attribute.get_string();
        size_t start = 0;
        while (true) {
            const size_t dot = a.find('.', start);
            const std::string p = a.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
            const bool digits = !p.empty() && p.find_first_not_of("0123456789") == std::string::npos && p.size() < 18;
            parts.push_back(digits ? value::integer(std::stoll(p)) : value::string(p));
            if (dot == std::string::npos) break;
            start = dot + 1;
        }
    } else {
        parts.push_back(attribute);
    }
    value def = fallback ? *fallback : value();
    const bool has_default = fallback != nullptr;
    return [&in, parts, def, has_default](const value & item) {
        value v = item;
        for (const auto & p : parts) v = in.getitem(v, p);
        if (has_default && v.is_undefined()) return def;
        return v;
    };
}

namespace {

value f_length(interp &, const value & input, call_args & args) {
    arg_reader r(args, "length", {});
    return value::integer(py_len(input));
}

value f_list(interp & in, const value & input, call_args & args) {
    arg_reader r(args, "list", {});
    return value::list(in.iterate(input));
}

value f_first(interp & in, const value & input, call_args & args) {
    arg_reader r(args, "first", {});
    std::vector<value> items = in.iterate(input);
    if (items.empty()) return value::undefined("No first item, sequence was empty.");
    return items.front();
}

value f_last(interp & in, const value & input, call_args & args) {
    arg_reader r(args, "last", {});
    if (input.is_list() && input.flavor() == seq_flavor::iterator) {
        throw_error(error_kind::type, "'" + type_name(input) + "' object is not reversible");
    }
    std::vector<value> items = in.iterate(input);
    if (items.empty()) return value::undefined("No last item, sequence was empty.");
    return items.back();
}

value f_join(interp & in, const value & input, call_args & args) {
    arg_reader r(args, "join", {"d", "attribute"});
    const std::string sep = r.has(0) ? in.str(*r.get(0)) : "";
    std::vector<value> items = in.iterate(input);
    if (r.has(1) && !r.get(1)->is_none()) {
        auto get = attr_getter(in, *r.get(1));
        for (auto & i : items) i = get(i);
    }
    std::string out;
    for (size_t i = 0; i < items.size(); ++i) {
        if (i) out += sep;
        out += in.str(items[i]);
        in.check_string(out);
    }
    return value::string(std::move(out));
}

// map(filter_name, *args) or map(attribute=…, default=…)
value f_map(interp & in, const value & input, call_args & args) {
    if (!truthy(input)) return value::iterator({});  // jinja2: `if value:` guards the loop
    std::vector<value> items = in.iterate(input);
    std::vector<value> out;
    const value * attribute = nullptr;
    const value * def = nullptr;
    for (const auto & [k, v] : args.kw) {
        if (k == "attribute") attribute = &v;
        if (k == "default") def = &v;
    }
    if (args.pos.empty() && attribute) {
        auto get = attr_getter(in, *attribute, def);
        for (const auto & i : items) out.push_back(get(i));
        return value::iterator(std::move(out));
    }
    if (args.pos.empty()) throw_error(error_kind::type, "map requires a filter argument");
    if (!args.pos[0].is_string()) throw_error(error_kind::type, "map() filter name must be a string");
    const std::string name = args.pos[0].get_string();
    for (const auto & i : items) {
        call_args rest;
        rest.pos.assign(args.pos.begin() + 1, args.pos.end());
        rest.kw = args.kw;
        out.push_back(in.apply_filter(name, i, rest));
    }
    return value::iterator(std::move(out));
}

// select/reject(test, *args) and selectattr/rejectattr(attr, test, *args)
value select_impl(interp & in, const value & input, call_args & args, bool with_attr, bool want) {
    if (!truthy(input)) return value::iterator({});  // jinja2: `if value:` guards the loop
    std::vector<value> items = in.iterate(input);
    size_t next = 0;
    std::function<value(const value &)> get;
    if (with_attr) {
        if (args.pos.empty()) throw_error(error_kind::type, "Missing parameter for attribute name");
        get = attr_getter(in, args.pos[0]);
        next = 1;
    }
    std::string test;
    if (args.pos.size() > next) {
        if (!args.pos[next].is_string()) throw_error(error_kind::type, "test name must be a string");
        test = args.pos[next].get_string();
        ++next;
    }
    std::vector<value> out;
    for (const auto & item : items) {
        const value v = get ? get(item) : item;
        bool ok;
        if (test.empty()) {
            ok = truthy(v);
        } else {
            call_args rest;
            rest.pos.assign(args.pos.begin() + static_cast<std::ptrdiff_t>(next), args.pos.end());
            rest.kw = args.kw;
            ok = in.apply_test(test, v, rest);
        }
        if (ok == want) out.push_back(item);
    }
    return value::iterator(std::move(out));
}

value f_select(interp & in, const value & input, call_args & args) { return select_impl(in, input, args, false, true); }
value f_reject(interp & in, const value & input, call_args & args) { return select_impl(in, input, args, false, false); }
value f_selectattr(interp & in, const value & input, call_args & args) { return select_impl(in, input, args, true, true); }
value f_rejectattr(interp & in, const value & input, call_args & args) { return select_impl(in, input, args, true, false); }

void sort_values(interp & in, std::vector<value> & items, const std::function<value(const value &)> & key, bool reverse) {
    std::vector<std::pair<value, value>> keyed;
    keyed.reserve(items.size());
    for (auto & i : items) keyed.emplace_back(key(i), std::move(i));
    in.bud.charge(keyed.size() * 4);
    auto less = [&](const auto & a, const auto & b) { return compare(a.first, b.first, in.bud) == -1; };
    if (reverse) {
        std::stable_sort(keyed.begin(), keyed.end(), [&](const auto & a, const auto & b) { return less(b, a); });
    } else {
        std::stable_sort(keyed.begin(), keyed.end(), less);
    }
    for (size_t i = 0; i < keyed.size(); ++i) items[i] = std::move(keyed[i].second);
}

// jinja2's make_multi_attrgetter: "a,b.c" → the key [item.a, item.b.c] (a list, so equal
// undefined parts compare equal instead of raising).
std::function<value(const value &)> multi_attr_getter(interp & in, const value & attribute, bool case_sensitive) {
    std::vector<std::function<value(const value &)>> getters;
    if (attribute.is_none() || attribute.is_undefined()) {
        getters.push_back([](const value & item) { return item; });
    } else if (attribute.is_string()) {
        const std::string & a = attribute.get_string();
        for (size_t start = 0;;) {
            const size_t comma = a.find(',', start);
            getters.push_back(attr_getter(in, value::string(a.substr(start, comma == std::string::npos ? std::string::npos : comma - start))));
            if (comma == std::string::npos) break;
            start = comma + 1;
        }
    } else {
        getters.push_back(attr_getter(in, attribute));
    }
    return [getters, case_sensitive](const value & item) {
        std::vector<value> key;
        for (const auto & g : getters) key.push_back(ignore_case(g(item), case_sensitive));
        return value::list(std::move(key));
    };
}

value f_sort(interp & in, const value & input, call_args & args) {
    arg_reader r(args, "sort", {"reverse", "case_sensitive", "attribute"});
    std::vector<value> items = in.iterate(input);
    const bool cs = r.has(1) && truthy(*r.get(1));
    sort_values(in, items, multi_attr_getter(in, r.get_or(2, value::none()), cs), r.has(0) && truthy(*r.get(0)));
    return value::list(std::move(items));
}

value f_dictsort(interp & in, const value & input, call_args & args) {
    arg_reader r(args, "dictsort", {"case_sensitive", "by", "reverse"});
    if (input.is_undefined()) in.raise_undefined(input);  // python reads value.items()
    if (!input.is_dict()) throw_error(error_kind::type, "dictsort requires a mapping, not " + type_name(input));
    const bool cs = r.has(0) && truthy(*r.get(0));
    const std::string by = r.has(1) ? in.str(*r.get(1)) : "key";
    if (by != "key" && by != "value") throw_error(error_kind::value, "You can only sort by either 'key' or 'value'");
    std::vector<value> items;
    for (const auto & [k, v] : input.get_dict().items) items.push_back(value::list({k, v}, seq_flavor::tuple));
    const size_t pos = by == "key" ? 0 : 1;
    sort_values(in, items, [&](const value & v) { return ignore_case(v.get_items()[pos], cs); }, r.has(2) && truthy(*r.get(2)));
    return value::list(std::move(items));
}

value f_unique(interp & in, const value & input, call_args & args) {
    arg_reader r(args, "unique", {"case_sensitive", "attribute"});
    const bool cs = r.has(0) && truthy(*r.get(0));
    std::function<value(const value &)> get;
    if (r.has(1) && !r.get(1)->is_none()) get = attr_getter(in, *r.get(1));
    std::vector<value> seen, out;
    for (const auto & item : in.iterate(input)) {
        value key = ignore_case(get ? get(item) : item, cs);
        if ((key.is_list() && key.flavor() != seq_flavor::tuple) || key.is_dict()) {
            throw_error(error_kind::type, "unhashable type: '" + type_name(key) + "'");
        }
        bool dup = false;
        for (const auto & s : seen) {
            if (equals(s, key, in.bud)) {
                dup = true;
                break;
            }
        }
        if (!dup) {
            seen.push_back(std::move(key));
            out.push_back(item);
        }
    }
    return value::iterator(std::move(out));
}

value f_reverse(interp & in, const value & input, call_args & args) {
    arg_reader r(args, "reverse", {});
    if (input.is_string()) {
        std::vector<uint32_t> cps = utf8_decode(input.get_string());
        std::string out;
        for (auto it = cps.rbegin(); it != cps.rend(); ++it) utf8_append(out, *it);
        return value::string(std::move(out), input.is_markup());
    }
    if (!input.is_list() && !input.is_dict() && !input.is_undefined()) {
        throw_error(error_kind::value, "argument must be iterable");
    }
    std::vector<value> items = in.iterate(input);
    std::reverse(items.begin(), items.end());
    if (input.is_list() && input.flavor() == seq_flavor::iterator) return value::list(std::move(items));
    return value::iterator(std::move(items), input.is_dict() ? "dict_reversekeyiterator" : "list_reverseiterator");
}

value f_batch(interp & in, const value & input, call_args & args) {
    arg_reader r(args, "batch", {"linecount", "fill_with"});
    if (!r.has(0)) throw_error(error_kind::type, "batch() missing required argument 'linecount'");
    const int64_t n = to_index_int(*r.get(0), "linecount");
    if (n <= 0) throw_error(error_kind::value, "batch linecount must be positive");
    std::vector<value> out, cur;
    for (const auto & item : in.iterate(input)) {
        cur.push_back(item);
        if (static_cast<int64_t>(cur.size()) == n) out.push_back(value::list(std::move(cur))), cur.clear();
    }
    if (!cur.empty()) {
        if (r.has(1) && !r.get(1)->is_none()) {
            while (static_cast<int64_t>(cur.size()) < n) cur.push_back(*r.get(1));
        }
        out.push_back(value::list(std::move(cur)));
    }
    return value::iterator(std::move(out));
}

value f_slice(interp & in, const value & input, call_args & args) {
    arg_reader r(args, "slice", {"slices", "fill_with"});
    if (!r.has(0)) throw_error(error_kind::type, "slice() missing required argument 'slices'");
    const int64_t slices = to_index_int(*r.get(0), "slices");
    if (slices <= 0 || slices > 100000) throw_error(error_kind::value, "slice count out of range");
    const std::vector<value> seq = in.iterate(input);
    const int64_t length = static_cast<int64_t>(seq.size());
    const int64_t per = length / slices, extra = length % slices;
    int64_t offset = 0;
    std::vector<value> out;
    for (int64_t i = 0; i < slices; ++i) {
        const int64_t start = offset + i * per;
        if (i < extra) ++offset;
        const int64_t end = offset + (i + 1) * per;
        std::vector<value> part(seq.begin() + start, seq.begin() + end);
        if (r.has(1) && !r.get(1)->is_none() && i >= extra) part.push_back(*r.get(1));
        out.push_back(value::list(std::move(part)));
    }
    return value::iterator(std::move(out));
}

value f_sum(interp & in, const value & input, call_args & args) {
    arg_reader r(args, "sum", {"attribute", "start"});
    std::function<value(const value &)> get;
    if (r.has(0) && !r.get(0)->is_none()) get = attr_getter(in, *r.get(0));
    value total = r.get_or(1, value::integer(0));
    for (const auto & item : in.iterate(input)) total = in.binary(binary_op::add, total, get ? get(item) : item);
    return total;
}

value min_max(interp & in, const value & input, call_args & args, bool want_max) {
    arg_reader r(args, want_max ? "max" : "min", {"case_sensitive", "attribute"});
    const bool cs = r.has(0) && truthy(*r.get(0));
    std::function<value(const value &)> get;
    if (r.has(1) && !r.get(1)->is_none()) get = attr_getter(in, *r.get(1));
    const std::vector<value> items = in.iterate(input);
    if (items.empty()) return value::undefined("No aggregated item, sequence was empty.");
    size_t best = 0;
    value best_key = ignore_case(get ? get(items[0]) : items[0], cs);
    for (size_t i = 1; i < items.size(); ++i) {
        value key = ignore_case(get ? get(items[i]) : items[i], cs);
        if (compare(key, best_key, in.bud) == (want_max ? 1 : -1)) best = i, best_key = std::move(key);
    }
    return items[best];
}

value f_min(interp & in, const value & input, call_args & args) { return min_max(in, input, args, false); }
value f_max(interp & in, const value & input, call_args & args) { return min_max(in, input, args, true); }

value f_items(interp &, const value & input, call_args & args) {
    arg_reader r(args, "items", {});
    if (input.is_undefined()) return value::iterator({});
    if (!input.is_dict()) throw_error(error_kind::type, "Can only get item pairs from a mapping.");
    std::vector<value> out;
    for (const auto & [k, v] : input.get_dict().items) out.push_back(value::list({k, v}, seq_flavor::tuple));
    return value::iterator(std::move(out));
}

}  // namespace

filter_fn find_seq_filter(std::string_view name) {
    static const std::pair<std::string_view, filter_fn> table[] = {
        {"length", f_length}, {"count", f_length},   {"list", f_list},       {"first", f_first},
        {"last", f_last},     {"join", f_join},      {"map", f_map},         {"select", f_select},
        {"reject", f_reject}, {"selectattr", f_selectattr}, {"rejectattr", f_rejectattr}, {"sort", f_sort},
        {"dictsort", f_dictsort}, {"unique", f_unique}, {"reverse", f_reverse}, {"batch", f_batch},
        {"slice", f_slice},   {"sum", f_sum},        {"min", f_min},         {"max", f_max},
        {"items", f_items},
    };
    for (const auto & [n, f] : table) {
        if (n == name) return f;
    }
    return nullptr;
}

}  // namespace jinja
