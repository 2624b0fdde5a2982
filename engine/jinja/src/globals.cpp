// globals.cpp — the template globals (range, namespace, dict, raise_exception, strftime_now,
// cycler, joiner), the namespace object, and the argument reader builtins use.
#include "interp.h"

#include <algorithm>

namespace jinja {

arg_reader::arg_reader(call_args & args, std::string_view fn, std::initializer_list<const char *> names) {
    slots_.assign(names.size(), nullptr);
    if (args.pos.size() > names.size()) {
        throw_error(error_kind::type, std::string(fn) + "() takes at most " + std::to_string(names.size()) +
                                          " argument(s) (" + std::to_string(args.pos.size()) + " given)");
    }
    for (size_t i = 0; i < args.pos.size(); ++i) slots_[i] = &args.pos[i];
    for (const auto & kw : args.kw) {
        const std::string & k = kw.first;
        const value & v = kw.second;
        const auto it = std::find_if(names.begin(), names.end(), [&k](const char * n) { return k == n; });
        if (it == names.end()) {
            throw_error(error_kind::type, std::string(fn) + "() got an unexpected keyword argument '" + k + "'");
        }
        const size_t j = static_cast<size_t>(it - names.begin());
        if (slots_[j]) throw_error(error_kind::type, std::string(fn) + "() got multiple values for argument '" + k + "'");
        slots_[j] = &v;
    }
}

namespace {

// jinja2.utils.Namespace: attributes assignable with {% set ns.attr = … %}.
struct namespace_obj final : object_obj {
    ~namespace_obj() override { defer_destruction(attrs); }
    std::vector<std::pair<std::string, value>> attrs;

    const char * type_name() const override { return "Namespace"; }
    value get_attr(interp & in, std::string_view name) override {
        for (const auto & [k, v] : attrs) {
            if (k == name) return v;
        }
        return object_obj::get_attr(in, name);
    }
    bool set_attr(std::string_view name, value v) override {
        for (auto & [k, x] : attrs) {
            if (k == name) {
                x = std::move(v);
                return true;
            }
        }
        const size_t slots = attrs.capacity();
        attrs.emplace_back(std::string(name), std::move(v));
        charge((attrs.capacity() - slots) * sizeof(attrs[0]) + heap_bytes(attrs.back().first));
        return true;
    }
    std::string repr(budget & b, uint32_t depth) const override {
        b.check_depth(depth);
        std::string out = "<Namespace {";
        for (size_t i = 0; i < attrs.size(); ++i) {
            if (i) out += ", ";
            out += repr_string(attrs[i].first) + ": ";
            append_repr(out, attrs[i].second, b, depth + 1);
            b.check_string(out.size());
        }
        return out + "}>";
    }
    void clear() override { attrs.clear(); }
};

// jinja2.utils.Cycler: next(), current, reset().
struct cycler_obj final : object_obj, std::enable_shared_from_this<cycler_obj> {
    ~cycler_obj() override { defer_destruction(items); }
    std::vector<value> items;
    size_t pos = 0;

    const char * type_name() const override { return "Cycler"; }
    value get_attr(interp & in, std::string_view name) override {
        auto self = shared_from_this();
        if (name == "current") return items[pos];
        if (name == "next") {
            return value::callable("next", [self](interp &, call_args &) {
                value v = self->items[self->pos];
                self->pos = (self->pos + 1) % self->items.size();
                return v;
            });
        }
        if (name == "reset") {
            return value::callable("reset", [self](interp &, call_args &) {
                self->pos = 0;
                return value::none();
            });
        }
        return object_obj::get_attr(in, name);
    }
    void clear() override { items.assign(items.size(), value::none()); }
};

// jinja2.utils.Joiner: returns "" the first time, then the separator.
struct joiner_obj final : object_obj {
    std::string sep;
    bool used = false;
    const char * type_name() const override { return "Joiner"; }
    bool callable() const override { return true; }
    value call(interp &, call_args &) override {
        if (!used) {
            used = true;
            return value::string("");
        }
        return value::string(sep);
    }
};

value range_fn(interp & in, call_args & args) {
    if (!args.kw.empty()) throw_error(error_kind::type, "range() takes no keyword arguments");
    if (args.pos.empty() || args.pos.size() > 3) {
        throw_error(error_kind::type, "range expected at most 3 arguments, got " + std::to_string(args.pos.size()));
    }
    int64_t start = 0, stop = 0, step = 1;
    for (const auto & a : args.pos) {
        if (!a.is_int() && !a.is_bool()) {
            throw_error(error_kind::type, cat({"'", type_name(a), "' object cannot be interpreted as an integer"}));
        }
    }
    if (args.pos.size() == 1) {
        stop = args.pos[0].get_int();
    } else {
        start = args.pos[0].get_int(), stop = args.pos[1].get_int();
        if (args.pos.size() == 3) step = args.pos[2].get_int();
    }
    if (step == 0) throw_error(error_kind::value, "range() arg 3 must not be zero");
    const long double span = step > 0 ? static_cast<long double>(stop) - start : static_cast<long double>(start) - stop;
    const long double count = span <= 0 ? 0 : (span + (step > 0 ? step : -step) - 1) / (step > 0 ? step : -step);
    if (count > static_cast<long double>(in.opts.bounds.max_range_length)) {
        throw_error(error_kind::limit, "range() longer than " + std::to_string(in.opts.bounds.max_range_length));
    }
    in.bud.charge(static_cast<uint64_t>(count));  // before the allocation
    in.check_items_memory(static_cast<uint64_t>(count));
    std::vector<value> items;
    items.reserve(static_cast<size_t>(count));
    for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) {
        items.push_back(value::integer(i));
        if (items.size() >= static_cast<size_t>(count)) break;
    }
    return value::list(std::move(items));
}

void add_pairs(interp & in, std::vector<std::pair<value, value>> & out, const value & src) {
    auto put = [&](value k, value v) {
        for (auto & [ek, ev] : out) {
            if (equals(ek, k, in.bud)) {
                ev = std::move(v);
                return;
            }
        }
        out.emplace_back(std::move(k), std::move(v));
    };
    if (src.is_dict()) {
        for (const auto & [k, v] : src.get_dict().items) put(k, v);
        return;
    }
    for (const auto & item : in.iterate(src)) {
        std::vector<value> pair = in.iterate(item);
        if (pair.size() != 2) {
            throw_error(error_kind::value, "dictionary update sequence element has length " + std::to_string(pair.size()) +
                                               "; 2 is required");
        }
        put(pair[0], pair[1]);
    }
}

value dict_fn(interp & in, call_args & args) {
    if (args.pos.size() > 1) throw_error(error_kind::type, "dict expected at most 1 argument, got " + std::to_string(args.pos.size()));
    std::vector<std::pair<value, value>> items;
    if (!args.pos.empty()) add_pairs(in, items, args.pos[0]);
    for (auto & [k, v] : args.kw) {
        std::vector<std::pair<value, value>> one{{value::string(k), v}};
        add_pairs(in, items, value::dict(std::move(one)));
    }
    return value::dict(std::move(items));
}

value namespace_fn(interp & in, call_args & args) {
    auto ns = std::make_shared<namespace_obj>();
    ns->charge(sizeof(namespace_obj) + k_block_overhead);
    in.track(ns);
    std::vector<std::pair<value, value>> items;
    if (args.pos.size() > 1) throw_error(error_kind::type, "namespace() takes at most 1 positional argument");
    if (!args.pos.empty()) add_pairs(in, items, args.pos[0]);
    for (auto & [k, v] : items) {
        if (!k.is_string()) throw_error(error_kind::type, "keywords must be strings");
        ns->set_attr(k.get_string(), v);
    }
    // keyword arguments win over the mapping's keys
    for (auto & [k, v] : args.kw) ns->set_attr(k, v);
    return value::object(ns);
}

value raise_exception_fn(interp & in, call_args & args) {
    const std::string msg = args.pos.empty() ? std::string() : in.str(args.pos[0]);
    throw_error(error_kind::raised, msg);
}

value strftime_now_fn(interp & in, call_args & args) {
    arg_reader r(args, "strftime_now", {"format"});
    if (!r.has(0) || !r.get(0)->is_string()) throw_error(error_kind::type, "strftime_now() expects a format string");
    return value::string(in.now_text(r.get(0)->get_string()));
}

value cycler_fn(interp & in, call_args & args) {
    if (args.pos.empty()) throw_error(error_kind::type, "at least one item has to be provided");
    auto c = std::make_shared<cycler_obj>();
    c->items = args.pos;
    c->charge(sizeof(cycler_obj) + k_block_overhead + c->items.capacity() * sizeof(value));
    in.track(c);
    return value::object(c);
}

value joiner_fn(interp & in, call_args & args) {
    arg_reader r(args, "joiner", {"sep"});
    auto j = std::make_shared<joiner_obj>();
    j->sep = r.has(0) ? in.str(*r.get(0)) : ", ";
    j->charge(sizeof(joiner_obj) + k_block_overhead + heap_bytes(j->sep));
    in.track(j);
    return value::object(j);
}

}  // namespace

void interp::install_globals(scope & globals) {
    globals.set("range", value::callable("range", range_fn, "<class 'range'>"));
    globals.set("dict", value::callable("dict", dict_fn, "<class 'dict'>"));
    globals.set("namespace", value::callable("namespace", namespace_fn, "<class 'jinja2.utils.Namespace'>"));
    globals.set("raise_exception", value::callable("raise_exception", raise_exception_fn, "<function raise_exception>"));
    globals.set("strftime_now", value::callable("strftime_now", strftime_now_fn, "<function strftime_now>"));
    globals.set("cycler", value::callable("cycler", cycler_fn, "<class 'jinja2.utils.Cycler'>"));
    globals.set("joiner", value::callable("joiner", joiner_fn, "<class 'jinja2.utils.Joiner'>"));
}

}  // namespace jinja
