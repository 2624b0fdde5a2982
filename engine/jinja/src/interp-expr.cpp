// interp-expr.cpp — evaluation of expressions: names, displays, attribute and item access
// (jinja2's sandboxed getattr/getitem), slices, calls, filters, tests, conditionals.
#include "interp.h"
#include "utf8.h"

namespace jinja {

value * scope::find_local(std::string_view name) {
    for (auto & [k, v] : vars) {
        if (k == name) return &v;
    }
    return nullptr;
}

void scope::set(std::string_view name, value v) {
    if (value * slot = find_local(name)) {
        *slot = std::move(v);
    } else {
        vars.emplace_back(std::string(name), std::move(v));
    }
}

void interp::enter() {
    if (++eval_depth_ > opts.bounds.max_eval_depth) {
        --eval_depth_;
        throw_error(error_kind::limit, "evaluation nested deeper than " + std::to_string(opts.bounds.max_eval_depth));
    }
}

value interp::eval(const expr & e) {
    depth_guard guard(*this);
    bud.charge(1);
    try {
        return eval_inner(e);
    } catch (const error & err) {
        if (err.line() != 0) throw;
        throw error(err.kind(), err.message(), prog_.source_name, e.loc.line, e.loc.column);
    }
}

void interp::raise_undefined(const value & v) { throw_error(v.undefined_kind(), v.undefined_message()); }

value interp::lookup(std::string_view name) {
    for (scope * s = cur.get(); s; s = s->parent.get()) {
        if (value * v = s->find_local(name)) return *v;
    }
    return value::undefined(repr_string(name) + " is undefined");
}

static void check_hashable(const value & key) {
    if ((key.is_list() && key.flavor() != seq_flavor::tuple) || key.is_dict() ||
        (key.is_object() && std::string(key.get_object().type_name()) != "Namespace")) {
        throw_error(error_kind::type, "unhashable type: '" + type_name(key) + "'");
    }
}

value interp::eval_inner(const expr & e) {
    switch (e.kind) {
        case expr_kind::literal: return static_cast<const literal_expr &>(e).val;
        case expr_kind::name: return lookup(static_cast<const name_expr &>(e).name);
        case expr_kind::list:
        case expr_kind::tuple: {
            const auto & items = static_cast<const seq_expr &>(e).items;
            std::vector<value> vals;
            vals.reserve(items.size());
            for (const auto & i : items) vals.push_back(eval(*i));
            return value::list(std::move(vals), e.kind == expr_kind::tuple ? seq_flavor::tuple : seq_flavor::list);
        }
        case expr_kind::dict: {
            std::vector<std::pair<value, value>> items;
            for (const auto & [k, v] : static_cast<const dict_expr &>(e).items) {
                value key = eval(*k);
                check_hashable(key);
                value val = eval(*v);
                bool replaced = false;
                for (auto & [ek, ev] : items) {
                    if (equals(ek, key, bud)) {
                        ev = std::move(val), replaced = true;
                        break;
                    }
                }
                if (!replaced) items.emplace_back(std::move(key), std::move(val));
            }
            return value::dict(std::move(items));
        }
        case expr_kind::getattr: {
            const auto & g = static_cast<const getattr_expr &>(e);
            return getattr(eval(*g.obj), g.name);
        }
        case expr_kind::getitem: {
            const auto & g = static_cast<const getitem_expr &>(e);
            value obj = eval(*g.obj);
            return getitem(obj, eval(*g.index));
        }
        case expr_kind::slice: return eval_slice(static_cast<const slice_expr &>(e));
        case expr_kind::call: return eval_call(static_cast<const call_expr &>(e));
        case expr_kind::filter: return eval_filter(static_cast<const filter_expr &>(e));
        case expr_kind::test: {
            const auto & t = static_cast<const test_expr &>(e);
            value input = eval(*t.input);
            call_args args = eval_args(t.args);
            return value::boolean(apply_test(t.name, input, args));
        }
        case expr_kind::negate:
        case expr_kind::plus: return negate(eval(*static_cast<const unary_expr &>(e).operand), e.kind == expr_kind::negate);
        case expr_kind::not_: return value::boolean(!truthy(eval(*static_cast<const unary_expr &>(e).operand)));
        case expr_kind::binary: {
            const auto & b = static_cast<const binary_expr &>(e);
            value l = eval(*b.left);
            return binary(b.op, l, eval(*b.right));
        }
        case expr_kind::concat: {
            std::vector<value> parts;
            for (const auto & i : static_cast<const seq_expr &>(e).items) parts.push_back(eval(*i));
            return concat(parts);
        }
        case expr_kind::compare: return eval_compare(static_cast<const compare_expr &>(e));
        case expr_kind::and_:
        case expr_kind::or_: {
            const auto & b = static_cast<const binary_expr &>(e);
            value l = eval(*b.left);
            if (truthy(l) == (e.kind == expr_kind::or_)) return l;
            return eval(*b.right);
        }
        case expr_kind::cond: return eval_cond(static_cast<const cond_expr &>(e));
    }
    return value();
}

value interp::eval_cond(const cond_expr & c) {
    if (truthy(eval(*c.test))) return eval(*c.then);
    if (c.otherwise) return eval(*c.otherwise);
    return value::undefined("the inline if-expression on line " + std::to_string(c.loc.line) +
                            " evaluated to false and no else section was defined.");
}

value interp::eval_compare(const compare_expr & c) {
    value left = eval(*c.first);
    for (const auto & [op, e] : c.rest) {
        value right = eval(*e);
        if (!compare_values(op, left, right)) return value::boolean(false);
        left = std::move(right);
    }
    return value::boolean(true);
}

call_args interp::eval_args(const arg_list & a) {
    call_args args;
    args.pos.reserve(a.pos.size());
    for (const auto & p : a.pos) args.pos.push_back(eval(*p));
    if (a.star_args) {
        for (auto & v : iterate(eval(*a.star_args))) args.pos.push_back(std::move(v));
    }
    auto add_kw = [&](std::string key, value v) {
        for (const auto & [k, existing] : args.kw) {
            if (k == key) throw_error(error_kind::type, "got multiple values for keyword argument '" + key + "'");
        }
        args.kw.emplace_back(std::move(key), std::move(v));
    };
    for (const auto & [k, v] : a.kw) add_kw(k, eval(*v));
    if (a.star_kwargs) {
        value d = eval(*a.star_kwargs);
        if (!d.is_dict()) throw_error(error_kind::type, "argument after ** must be a mapping, not " + type_name(d));
        for (const auto & [k, v] : d.get_dict().items) {
            if (!k.is_string()) throw_error(error_kind::type, "keywords must be strings");
            add_kw(k.get_string(), v);
        }
    }
    return args;
}

value interp::eval_call(const call_expr & c) {
    if (c.callee->kind == expr_kind::getattr) {
        // obj.method(...): python finds str/list/dict methods before dict keys.
        const auto & g = static_cast<const getattr_expr &>(*c.callee);
        value obj = eval(*g.obj);
        if (obj.is_undefined()) raise_undefined(obj);
        if (has_method(obj, g.name)) {
            if (is_unsafe_method(obj, g.name)) {
                throw_error(error_kind::sandbox,
                            "access to attribute '" + g.name + "' of '" + type_name(obj) + "' object is unsafe.");
            }
            call_args args = eval_args(c.args);
            return call_method(*this, obj, g.name, args);
        }
        value callee = getattr(obj, g.name);
        call_args args = eval_args(c.args);
        return call(callee, args);
    }
    value callee = eval(*c.callee);
    call_args args = eval_args(c.args);
    return call(callee, args);
}

value interp::call(const value & callee, call_args & args) {
    bud.charge(1);
    if (callee.kind() == value_kind::callable) return callee.get_callable().fn(*this, args);
    if (callee.is_object() && callee.get_object().callable()) return callee.get_object().call(*this, args);
    if (callee.is_undefined()) raise_undefined(callee);
    throw_error(error_kind::type, cat({"'", type_name(callee), "' object is not callable"}));
}

value interp::eval_filter(const filter_expr & f) {
    value input;
    if (f.input) {
        input = eval(*f.input);
    } else if (block_input_) {
        input = *block_input_;
    }
    call_args args = eval_args(f.args);
    return apply_filter(f.name, input, args);
}

value interp::getattr(const value & obj, std::string_view name) {
    bud.charge(1);
    switch (obj.kind()) {
        case value_kind::undefined: raise_undefined(obj);
        case value_kind::dict:
            if (has_method(obj, name)) return bound_method(obj, name);
            if (const value * v = obj.get_dict().find(name)) return *v;
            break;
        case value_kind::string:
        case value_kind::list:
            if (has_method(obj, name)) return bound_method(obj, name);
            break;
        case value_kind::object: return obj.get_object().get_attr(*this, name);
        default: break;
    }
    if (!name.empty() && name[0] == '_') {
        return value::undefined("access to attribute " + repr_string(name) + " of " + repr_string(type_name(obj)) +
                                    " object is unsafe.",
                                error_kind::sandbox);
    }
    return undefined_attribute(obj, name);
}

int64_t to_index_int(const value & v, std::string_view what) {
    if (v.is_int() || v.is_bool()) return v.get_int();
    throw_error(error_kind::type, std::string(what) + " indices must be integers, not " + type_name(v));
}

// python's index wrap-around: false when out of range.
static bool wrap_index(int64_t & i, size_t size) {
    const int64_t n = static_cast<int64_t>(size);
    if (i < 0) i += n;
    return i >= 0 && i < n;
}

value interp::getitem(const value & obj, const value & key) {
    bud.charge(1);
    if (obj.is_undefined()) raise_undefined(obj);
    const bool int_key = key.is_int() || key.is_bool();
    if (obj.is_list() && int_key && (obj.flavor() == seq_flavor::list || obj.flavor() == seq_flavor::tuple)) {
        const auto & items = obj.get_items();
        int64_t i = key.get_int();
        if (wrap_index(i, items.size())) return items[static_cast<size_t>(i)];
    } else if (obj.is_string() && int_key) {
        const std::string & s = obj.get_string();
        bud.charge(s.size() / 256);
        int64_t i = key.get_int();
        if (utf8_is_ascii(s)) {
            if (wrap_index(i, s.size())) return value::string(s.substr(static_cast<size_t>(i), 1), obj.is_markup());
        } else {
            const auto offsets = utf8_offsets(s);
            if (wrap_index(i, offsets.size() - 1)) {
                const size_t a = offsets[static_cast<size_t>(i)], b = offsets[static_cast<size_t>(i) + 1];
                return value::string(s.substr(a, b - a), obj.is_markup());
            }
        }
    } else if (obj.is_dict()) {
        const bool hashable = !(key.is_list() && key.flavor() != seq_flavor::tuple) && !key.is_dict();
        if (hashable) {
            if (const value * v = obj.get_dict().find(key)) return *v;
        }
    } else if (obj.is_object() && key.is_string()) {
        return obj.get_object().get_attr(*this, key.get_string());
    }
    if (key.is_string()) {
        // python falls back to getattr for string keys: methods of str/list/dict.
        if ((obj.is_dict() || obj.is_string() || obj.is_list()) && has_method(obj, key.get_string()))
            return bound_method(obj, key.get_string());
        return undefined_attribute(obj, key.get_string());
    }
    return undefined_element(obj, key, bud);
}

value interp::eval_slice(const slice_expr & s) {
    value obj = eval(*s.obj);
    value start = s.start ? eval(*s.start) : value::none();
    value stop = s.stop ? eval(*s.stop) : value::none();
    value step = s.step ? eval(*s.step) : value::none();
    if (obj.is_undefined()) raise_undefined(obj);
    if (obj.is_list() && (obj.flavor() == seq_flavor::list || obj.flavor() == seq_flavor::tuple)) {
        return value::list(slice_items(obj.get_items(), start, stop, step), obj.flavor());
    }
    if (obj.is_string()) {
        bud.charge(obj.get_string().size() / 256);
        return value::string(slice_string(obj.get_string(), start, stop, step), obj.is_markup());
    }
    // jinja2 slices with python's own subscript (not the environment's getitem): no undefined here
    if (obj.is_dict()) throw_error(error_kind::type, "unhashable type: 'slice'");
    throw_error(error_kind::type, cat({"'", type_name(obj), "' object is not subscriptable"}));
}

std::vector<value> interp::iterate(const value & v) {
    switch (v.kind()) {
        case value_kind::undefined: return {};
        case value_kind::list:
            bud.charge(v.get_items().size());  // the copy
            check_items_memory(v.get_items().size());
            return v.get_items();
        case value_kind::dict: {
            bud.charge(v.get_dict().items.size());
            check_items_memory(v.get_dict().items.size());
            std::vector<value> keys;
            keys.reserve(v.get_dict().items.size());
            for (const auto & [k, x] : v.get_dict().items) keys.push_back(k);
            return keys;
        }
        case value_kind::string: {
            const std::string & s = v.get_string();
            size_t n = 0;  // code points
            for (size_t i = 0; i < s.size(); ++n) utf8_next(s, i);
            check_list(n, "a string's characters");
            std::vector<value> chars;
            chars.reserve(n);
            for (size_t i = 0; i < s.size();) {
                const size_t start = i;
                utf8_next(s, i);
                chars.push_back(value::string(s.substr(start, i - start)));  // iter(Markup) gives str
            }
            return chars;
        }
        default: break;
    }
    throw_error(error_kind::type, "'" + type_name(v) + "' object is not iterable");
}

}  // namespace jinja
