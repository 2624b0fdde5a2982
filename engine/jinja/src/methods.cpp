// methods.cpp — the python methods templates call on str, list and dict values, and the
// immutable sandbox's rule that mutating methods (list.append, dict.update, …) are unsafe.
#include "interp.h"
#include "utf8.h"

#include <algorithm>
#include <cstring>

namespace jinja {

static const char * const str_methods[] = {
    "strip", "lstrip", "rstrip", "split", "rsplit", "splitlines", "startswith", "endswith", "upper", "lower",
    "title", "capitalize", "swapcase", "casefold", "replace", "find", "rfind", "index", "rindex", "count", "join",
    "format", "isdigit", "isdecimal", "isnumeric", "isalpha", "isalnum", "isspace", "isupper", "islower",
    "istitle", "zfill", "center", "ljust", "rjust", "partition", "rpartition", "removeprefix", "removesuffix",
};
static const char * const list_methods[] = {"index", "count", "copy", "append", "clear", "pop", "reverse",
                                            "insert", "sort", "extend", "remove"};
static const char * const dict_methods[] = {"items", "keys", "values", "get", "copy", "clear",
                                            "pop", "popitem", "setdefault", "update"};
static const char * const list_unsafe[] = {"append", "clear", "pop", "reverse", "insert", "sort", "extend", "remove"};
static const char * const dict_unsafe[] = {"clear", "pop", "popitem", "setdefault", "update"};

template <size_t N>
static bool in_list(const char * const (&names)[N], std::string_view name) {
    return std::any_of(std::begin(names), std::end(names), [&](const char * n) { return name == n; });
}

bool has_method(const value & obj, std::string_view name) {
    if (obj.is_string()) return in_list(str_methods, name);
    if (obj.is_list() && (obj.flavor() == seq_flavor::list || obj.flavor() == seq_flavor::tuple)) {
        if (obj.flavor() == seq_flavor::tuple) return name == "index" || name == "count";
        return in_list(list_methods, name);
    }
    if (obj.is_dict()) return in_list(dict_methods, name);
    return false;
}

bool is_unsafe_method(const value & obj, std::string_view name) {
    if (obj.is_list()) return in_list(list_unsafe, name);
    if (obj.is_dict()) return in_list(dict_unsafe, name);
    return false;
}

value bound_method(const value & self, std::string_view name) {
    if (is_unsafe_method(self, name)) {
        return value::undefined("access to attribute '" + std::string(name) + "' of '" + type_name(self) +
                                    "' object is unsafe.",
                                error_kind::sandbox);
    }
    std::string n(name);
    return value::callable(
        n, [self, n](interp & in, call_args & args) { return call_method(in, self, n, args); },
        "<built-in method " + n + " of " + type_name(self) + " object>");
}

value call_method(interp & in, const value & self, std::string_view name, call_args & args) {
    bool found = false;
    value r;
    in.bud.charge(1);
    if (self.is_string()) {
        in.bud.charge(self.get_string().size() / 256);
        r = str_method(in, self, name, args, found);
    } else if (self.is_list()) {
        r = list_method(in, self, name, args, found);
    } else if (self.is_dict()) {
        r = dict_method(in, self, name, args, found);
    }
    if (!found) throw_error(error_kind::type, "'" + type_name(self) + "' object has no method '" + std::string(name) + "'");
    return r;
}

value list_method(interp & in, const value & self, std::string_view name, call_args & args, bool & found) {
    found = true;
    const auto & items = self.get_items();
    if (name == "index" || name == "count") {
        arg_reader r(args, name, {"value"});
        if (!r.has(0)) throw_error(error_kind::type, std::string(name) + "() takes exactly one argument (0 given)");
        int64_t count = 0;
        for (size_t i = 0; i < items.size(); ++i) {
            if (!equals(items[i], *r.get(0), in.bud)) continue;
            if (name == "index") return value::integer(static_cast<int64_t>(i));
            ++count;
        }
        if (name == "index") throw_error(error_kind::value, to_repr(*r.get(0), in.bud) + " is not in list");
        return value::integer(count);
    }
    if (name == "copy") return value::list(items);
    if (is_unsafe_method(self, name)) {
        throw_error(error_kind::sandbox,
                    "access to attribute '" + std::string(name) + "' of '" + type_name(self) + "' object is unsafe.");
    }
    found = false;
    return value();
}

value dict_method(interp & in, const value & self, std::string_view name, call_args & args, bool & found) {
    found = true;
    const auto & d = self.get_dict();
    if (name == "items" || name == "keys" || name == "values") {
        arg_reader r(args, name, {});
        std::vector<value> out;
        out.reserve(d.items.size());
        for (const auto & [k, v] : d.items) {
            if (name == "items") {
                out.push_back(value::list({k, v}, seq_flavor::tuple));
            } else {
                out.push_back(name == "keys" ? k : v);
            }
        }
        in.bud.charge(out.size());
        const seq_flavor fl = name == "items" ? seq_flavor::dict_items : (name == "keys" ? seq_flavor::dict_keys : seq_flavor::dict_values);
        return value::list(std::move(out), fl);
    }
    if (name == "get") {
        arg_reader r(args, "get", {"key", "default"});
        if (!r.has(0)) throw_error(error_kind::type, "get expected at least 1 argument, got 0");
        const value & key = *r.get(0);
        if ((key.is_list() && key.flavor() != seq_flavor::tuple) || key.is_dict()) {
            throw_error(error_kind::type, "unhashable type: '" + type_name(key) + "'");
        }
        if (const value * v = d.find(key)) return *v;
        return r.get_or(1, value::none());
    }
    if (name == "copy") return value::dict(d.items);
    if (is_unsafe_method(self, name)) {
        throw_error(error_kind::sandbox,
                    "access to attribute '" + std::string(name) + "' of '" + type_name(self) + "' object is unsafe.");
    }
    found = false;
    return value();
}

}  // namespace jinja
