// value.cpp — construction, python type names, truth, equality and ordering of values.
#include "value.h"

#include "utf8.h"

#include <cmath>
#include <cstdint>

namespace jinja {

void throw_error(error_kind kind, std::string message) { throw error(kind, std::move(message)); }

namespace {

struct reaper {
    std::vector<value> pending;
    bool draining = false;
};

reaper & reaper_queue() {
    thread_local reaper q;
    return q;
}

bool holds_others(const value & v) {
    return v.is_list() || v.is_dict() || v.is_object() || v.kind() == value_kind::callable;
}

void drain(reaper & q) {
    if (q.draining) return;
    q.draining = true;
    while (!q.pending.empty()) {
        value v = std::move(q.pending.back());
        q.pending.pop_back();
    }  // v's destructor may queue more
    q.draining = false;
}

}  // namespace

list_obj::~list_obj() { defer_destruction(items); }
dict_obj::~dict_obj() { defer_destruction(items); }

void defer_destruction(std::vector<value> & items) {
    reaper & q = reaper_queue();
    for (auto & v : items) {
        if (holds_others(v)) q.pending.push_back(std::move(v));
    }
    drain(q);
}

void defer_destruction(std::vector<std::pair<value, value>> & items) {
    reaper & q = reaper_queue();
    for (auto & [k, v] : items) {
        if (holds_others(k)) q.pending.push_back(std::move(k));
        if (holds_others(v)) q.pending.push_back(std::move(v));
    }
    drain(q);
}

void defer_destruction(std::vector<std::pair<std::string, value>> & items) {
    reaper & q = reaper_queue();
    for (auto & [k, v] : items) {
        if (holds_others(v)) q.pending.push_back(std::move(v));
    }
    drain(q);
}

void memory_meter::fail() const {
    throw_error(error_kind::limit, "render exceeded the memory limit (" + std::to_string(max_) + " bytes)");
}

namespace {

// A new T: charged<T> (its charge, which charge_of computes again when it is freed, taken from
// the meter first) during a render, a plain T outside one.
template <class T, class... Args>
std::shared_ptr<T> make_obj(size_t charge, Args &&... args) {
    if (memory_meter * m = memory_meter::active()) {
        m->charge(charge);
        return std::make_shared<charged<T>>(std::forward<Args>(args)...);
    }
    return std::make_shared<T>(std::forward<Args>(args)...);
}

// Would n elements of the given size fit in the active meter (before they are allocated)?
void check_memory(size_t n, size_t size) {
    if (memory_meter * m = memory_meter::active()) m->check(n > SIZE_MAX / size ? SIZE_MAX : n * size);
}

}  // namespace

void budget::fail_steps() const {
    throw_error(error_kind::limit, "render exceeded the step limit (" + std::to_string(max_steps) + ")");
}
void budget::fail_depth() const {
    throw_error(error_kind::limit, "value nested deeper than " + std::to_string(max_value_depth));
}
void budget::fail_string(size_t size) const {
    throw_error(error_kind::limit, "string of " + std::to_string(size) + " bytes exceeds the limit of " +
                                       std::to_string(max_string));
}

value value::none() {
    value v;
    v.kind_ = value_kind::none;
    return v;
}

value value::boolean(bool b) {
    value v;
    v.kind_ = value_kind::boolean;
    v.b_ = b;
    return v;
}

value value::integer(int64_t i) {
    value v;
    v.kind_ = value_kind::integer;
    v.i_ = i;
    return v;
}

value value::floating(double d) {
    value v;
    v.kind_ = value_kind::floating;
    v.f_ = d;
    return v;
}

value value::string(std::string s, bool markup) {
    value v;
    v.kind_ = value_kind::string;
    v.flag_ = markup ? 1 : 0;
    v.obj_ = make_obj<string_obj>(string_charge(s), std::move(s));  // a move keeps the capacity
    return v;
}

value value::list(std::vector<value> items, seq_flavor flavor) {
    value v;
    v.kind_ = value_kind::list;
    v.flag_ = static_cast<uint8_t>(flavor);
    auto obj = make_obj<list_obj>(list_charge(items.capacity()));
    obj->items = std::move(items);
    v.obj_ = std::move(obj);
    return v;
}

value value::iterator(std::vector<value> items, const char * type_name) {
    value v;
    v.kind_ = value_kind::list;
    v.flag_ = static_cast<uint8_t>(seq_flavor::iterator);
    auto obj = make_obj<list_obj>(list_charge(items.capacity()));
    obj->items = std::move(items);
    obj->iterator_type = type_name;
    v.obj_ = std::move(obj);
    return v;
}

value value::dict(std::vector<std::pair<value, value>> items) {
    value v;
    v.kind_ = value_kind::dict;
    auto obj = make_obj<dict_obj>(dict_charge(items.capacity()));
    obj->items = std::move(items);
    v.obj_ = std::move(obj);
    return v;
}

value value::callable(std::string name, native_fn fn, std::string repr) {
    value v;
    v.kind_ = value_kind::callable;
    if (repr.empty()) repr = "<built-in function " + name + ">";
    auto obj = make_obj<callable_obj>(callable_charge(name, repr));
    obj->repr = std::move(repr);
    obj->name = std::move(name);
    obj->fn = std::move(fn);
    v.obj_ = std::move(obj);
    return v;
}

value value::object(std::shared_ptr<object_obj> obj) {
    value v;
    v.kind_ = value_kind::object;
    v.obj_ = std::move(obj);
    return v;
}

value value::undefined(std::string message, error_kind kind) {
    value v;
    auto obj = make_obj<undefined_obj>(undefined_charge(message));
    obj->message = std::move(message);
    obj->kind = kind;
    v.obj_ = std::move(obj);
    return v;
}

bool value::is_callable() const {
    if (kind_ == value_kind::callable) return true;
    return kind_ == value_kind::object && static_cast<object_obj &>(*obj_).callable();
}

const std::string & value::get_string() const { return static_cast<const string_obj &>(*obj_).text; }
const std::vector<value> & value::get_items() const { return static_cast<const list_obj &>(*obj_).items; }
const list_obj & value::get_list() const { return static_cast<const list_obj &>(*obj_); }
const dict_obj & value::get_dict() const { return static_cast<const dict_obj &>(*obj_); }
const callable_obj & value::get_callable() const { return static_cast<const callable_obj &>(*obj_); }
object_obj & value::get_object() const { return static_cast<object_obj &>(*obj_); }

const undefined_obj * value::get_undefined() const {
    return kind_ == value_kind::undefined && obj_ ? static_cast<const undefined_obj *>(obj_.get()) : nullptr;
}

std::string value::undefined_message() const {
    const undefined_obj * u = get_undefined();
    return u ? u->message : "value is undefined";
}

error_kind value::undefined_kind() const {
    const undefined_obj * u = get_undefined();
    return u ? u->kind : error_kind::undefined;
}

value object_obj::get_attr(interp &, std::string_view name) {
    return value::undefined(repr_string(std::string(type_name()) + " object") + " has no attribute " +
                            repr_string(name));
}

bool object_obj::set_attr(std::string_view, value) { return false; }

value object_obj::call(interp &, call_args &) {
    throw_error(error_kind::type, "'" + std::string(type_name()) + "' object is not callable");
}

std::string object_obj::repr(budget &, uint32_t) const { return cat({"<", type_name(), " object>"}); }

const value * dict_obj::find(std::string_view key) const {
    for (const auto & [k, v] : items) {
        if (k.is_string() && k.get_string() == key) return &v;
    }
    return nullptr;
}

const value * dict_obj::find(const value & key) const {
    if (key.is_string()) return find(std::string_view(key.get_string()));
    budget b;
    for (const auto & [k, v] : items) {
        if (!k.is_string() && equals(k, key, b)) return &v;
    }
    return nullptr;
}

std::string type_name(const value & v) {
    switch (v.kind()) {
        case value_kind::undefined: return "Undefined";
        case value_kind::none: return "NoneType";
        case value_kind::boolean: return "bool";
        case value_kind::integer: return "int";
        case value_kind::floating: return "float";
        case value_kind::string: return v.is_markup() ? "Markup" : "str";
        case value_kind::list:
            switch (v.flavor()) {
                case seq_flavor::list: return "list";
                case seq_flavor::tuple: return "tuple";
                case seq_flavor::iterator: return v.get_list().iterator_type;
                case seq_flavor::dict_items: return "dict_items";
                case seq_flavor::dict_keys: return "dict_keys";
                case seq_flavor::dict_values: return "dict_values";
            }
            return "list";
        case value_kind::dict: return "dict";
        case value_kind::callable: return "function";
        case value_kind::object: return v.get_object().type_name();
    }
    return "object";
}

std::string object_type_repr(const value & v) {
    if (v.is_none()) return "None";
    if (v.is_markup()) return "markupsafe.Markup object";
    if (v.is_object()) {
        const std::string name = type_name(v);
        if (name == "Namespace") return "jinja2.utils.Namespace object";
        if (name == "LoopContext") return "jinja2.runtime.LoopContext object";
        return name + " object";
    }
    if (v.kind() == value_kind::callable) return "builtin_function_or_method object";
    return type_name(v) + " object";
}

value undefined_attribute(const value & obj, std::string_view name) {
    return value::undefined(repr_string(object_type_repr(obj)) + " has no attribute " + repr_string(name));
}

value undefined_element(const value & obj, const value & key, budget & bud) {
    return value::undefined(object_type_repr(obj) + " has no element " + to_repr(key, bud));
}

bool truthy(const value & v) {
    switch (v.kind()) {
        case value_kind::undefined:
        case value_kind::none: return false;
        case value_kind::boolean: return v.get_bool();
        case value_kind::integer: return v.get_int() != 0;
        case value_kind::floating: return v.get_number() != 0.0;
        case value_kind::string: return !v.get_string().empty();
        case value_kind::list: return v.flavor() == seq_flavor::iterator || !v.get_items().empty();
        case value_kind::dict: return !v.get_dict().items.empty();
        case value_kind::callable:
        case value_kind::object: return true;
    }
    return false;
}

static bool numbers_equal(const value & a, const value & b) {
    if (a.is_float() || b.is_float()) return a.get_number() == b.get_number();
    return a.get_int() == b.get_int();
}

static bool seq_comparable(const value & a, const value & b) {
    const bool at = a.flavor() == seq_flavor::tuple, bt = b.flavor() == seq_flavor::tuple;
    const bool al = a.flavor() == seq_flavor::list, bl = b.flavor() == seq_flavor::list;
    return (at && bt) || (al && bl);
}

static bool dicts_equal(const dict_obj & a, const dict_obj & b, budget & bud, uint32_t depth) {
    if (a.items.size() != b.items.size()) return false;
    for (const auto & [k, v] : a.items) {
        const value * other = b.find(k);
        if (!other || !equals(v, *other, bud, depth + 1)) return false;
    }
    return true;
}

bool equals(const value & a, const value & b, budget & bud, uint32_t depth) {
    bud.check_depth(depth);
    bud.charge(1);
    if (a.is_number() && b.is_number()) return numbers_equal(a, b);
    if (a.kind() != b.kind()) return false;
    switch (a.kind()) {
        case value_kind::undefined:
        case value_kind::none: return true;
        case value_kind::string:
            bud.charge(a.get_string().size() / 256);
            return a.get_string() == b.get_string();
        case value_kind::list: {
            if (a.same_object(b)) return true;
            if (!seq_comparable(a, b)) return false;
            const auto & x = a.get_items();
            const auto & y = b.get_items();
            if (x.size() != y.size()) return false;
            for (size_t i = 0; i < x.size(); ++i) {
                if (!equals(x[i], y[i], bud, depth + 1)) return false;
            }
            return true;
        }
        case value_kind::dict: return a.same_object(b) || dicts_equal(a.get_dict(), b.get_dict(), bud, depth);
        default: return a.same_object(b);
    }
}

static int sign(double d) { return d < 0 ? -1 : (d > 0 ? 1 : 0); }

[[noreturn]] static void fail_compare(const value & a, const value & b, const char * op) {
    throw_error(error_kind::type, std::string("'") + op + "' not supported between instances of '" +
                                      type_name(a) + "' and '" + type_name(b) + "'");
}

int compare(const value & a, const value & b, budget & bud, const char * op, uint32_t depth) {
    bud.check_depth(depth);
    bud.charge(1);
    if (a.is_undefined()) throw_error(a.undefined_kind(), a.undefined_message());
    if (b.is_undefined()) throw_error(b.undefined_kind(), b.undefined_message());
    if (a.is_number() && b.is_number()) {
        if (a.is_float() || b.is_float()) {
            const double x = a.get_number(), y = b.get_number();
            if (std::isnan(x) || std::isnan(y)) return 2;  // unordered: every comparison false
            return sign(x - y);
        }
        return a.get_int() < b.get_int() ? -1 : (a.get_int() > b.get_int() ? 1 : 0);
    }
    if (a.is_string() && b.is_string()) {
        bud.charge(a.get_string().size() / 256);
        const int c = a.get_string().compare(b.get_string());
        return c < 0 ? -1 : (c > 0 ? 1 : 0);
    }
    if (a.is_list() && b.is_list() && seq_comparable(a, b)) {
        const auto & x = a.get_items();
        const auto & y = b.get_items();
        for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
            if (equals(x[i], y[i], bud, depth + 1)) continue;
            return compare(x[i], y[i], bud, op, depth + 1);
        }
        return x.size() < y.size() ? -1 : (x.size() > y.size() ? 1 : 0);
    }
    fail_compare(a, b, op);
}

value from_json(const nlohmann::ordered_json & j, budget & bud, uint32_t depth) {
    bud.check_depth(depth);
    bud.charge(1);
    using t = nlohmann::ordered_json::value_t;
    switch (j.type()) {
        case t::null: return value::none();
        case t::boolean: return value::boolean(j.get<bool>());
        case t::number_integer: return value::integer(j.get<int64_t>());
        case t::number_unsigned: {
            const uint64_t u = j.get<uint64_t>();
            if (u > static_cast<uint64_t>(INT64_MAX)) return value::floating(static_cast<double>(u));
            return value::integer(static_cast<int64_t>(u));
        }
        case t::number_float: return value::floating(j.get<double>());
        case t::string: return value::string(j.get<std::string>());
        case t::array: {
            check_memory(j.size(), sizeof(value));
            std::vector<value> items;
            items.reserve(j.size());
            for (const auto & e : j) items.push_back(from_json(e, bud, depth + 1));
            return value::list(std::move(items));
        }
        case t::object: {
            check_memory(j.size(), sizeof(std::pair<value, value>));
            std::vector<std::pair<value, value>> items;
            items.reserve(j.size());
            for (const auto & [k, e] : j.items()) items.emplace_back(value::string(k), from_json(e, bud, depth + 1));
            return value::dict(std::move(items));
        }
        default: return value();
    }
}

}  // namespace jinja
