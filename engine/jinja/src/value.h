// value.h — the engine's value model: python's values as jinja2 templates see them.
//
//   undefined   jinja2's Undefined (prints empty, falsy, iterates empty); may carry the message
//               of the miss that made it ("'dict object' has no attribute 'x'") and the error
//               kind to raise when it is used (the sandbox's unsafe attributes are undefined
//               values that raise error_kind::sandbox)
//   none, boolean, integer (int64), floating (double)
//   string      UTF-8 text, shared and immutable; the markup flag makes it a markupsafe Markup
//   list        a shared immutable vector; its flavor says which python type it is: list, tuple,
//               or an iterator (generator, reversed iterator, dict views) that prints and
//               serializes differently
//   dict        shared and immutable, insertion-ordered (python 3.7+ dict)
//   callable    a macro, a global function, a bound method
//   object      a mutable or special object: namespace(), loop, cycler, joiner
//
// Lists and dicts are never mutated after construction (the sandbox is immutable), so copies
// share them; namespaces are the one mutable thing and are shared by reference, as in python.
#pragma once

#include "jinja/jinja.h"

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace jinja {

class interp;
class value;

enum class value_kind : uint8_t { undefined, none, boolean, integer, floating, string, list, dict, callable, object };

enum class seq_flavor : uint8_t { list, tuple, iterator, dict_items, dict_keys, dict_values };

// Walk bounds shared by one render: every recursive walk over values charges steps and checks
// its depth, so cyclic namespaces or deep values end in an error_kind::limit error.
struct budget {
    uint64_t steps = 0;
    uint64_t max_steps = limits{}.max_steps;
    uint32_t max_value_depth = limits{}.max_value_depth;
    size_t max_string = limits{}.max_output_bytes;

    void charge(uint64_t n) {
        steps += n;
        if (steps > max_steps) fail_steps();
    }
    void check_depth(uint32_t depth) const {
        if (depth > max_value_depth) fail_depth();
    }
    void check_string(size_t size) const {
        if (size > max_string) fail_string(size);
    }
    [[noreturn]] void fail_steps() const;
    [[noreturn]] void fail_depth() const;
    [[noreturn]] void fail_string(size_t size) const;
};

// The live memory of one render (limits::max_memory_bytes). While a meter is alive it is its
// thread's active meter (a render runs on one thread; the previous one comes back when it dies).
// What a render makes charges its approximate size to it and gives that back when it is freed:
// the value objects (as charged<T>), the objects with attributes, the text being rendered. An
// operation about to allocate a big buffer checks first that it would fit.
//
// An object gives back to the meter active when it is freed, which is the one it charged: the
// values a render makes are all freed within it (only the interpreter and its stack hold them;
// the parsed template holds nothing but its constants, made outside any render and so never
// charged) and before its meter goes (the interpreter declares it before what holds values). An
// object freed with no meter active gives back nothing, and a meter never goes below zero.
class memory_meter {
public:
    explicit memory_meter(size_t max_bytes) : max_(max_bytes), previous_(active_) { active_ = this; }
    ~memory_meter() { active_ = previous_; }
    memory_meter(const memory_meter &) = delete;
    memory_meter & operator=(const memory_meter &) = delete;

    static memory_meter * active() { return active_; }  // this thread's, or null
    static void give_back(size_t n) {
        if (active_) active_->release(n);
    }
    size_t used() const { return used_; }

    void charge(size_t n) {
        check(n);
        used_ += n;
    }
    void release(size_t n) { used_ -= n < used_ ? n : used_; }
    // Would n more bytes fit? An error_kind::limit error if not; nothing is charged.
    void check(size_t n) const {
        if (n > max_ - used_) fail();
    }
    [[noreturn]] void fail() const;

    // No meter is active while a pause lives: a parse (within a render on the same thread, say)
    // makes constants that are never charged.
    class pause {
    public:
        pause() : saved_(active_) { active_ = nullptr; }
        ~pause() { active_ = saved_; }
        pause(const pause &) = delete;
        pause & operator=(const pause &) = delete;

    private:
        memory_meter * saved_;
    };

private:
    size_t used_ = 0;
    size_t max_;
    memory_meter * previous_;
    static inline thread_local memory_meter * active_ = nullptr;
};

// What a make_shared block costs besides its object (the reference counts), and the heap bytes
// of a string outside its object (none while it fits in the small-string buffer).
constexpr size_t k_block_overhead = 16;
inline size_t heap_bytes(const std::string & s) {
    const auto data = reinterpret_cast<uintptr_t>(s.data()), self = reinterpret_cast<uintptr_t>(&s);
    return data >= self && data < self + sizeof(s) ? 0 : s.capacity() + 1;
}

struct heap_obj {
    heap_obj() = default;
    heap_obj(const heap_obj &) = delete;
    heap_obj & operator=(const heap_obj &) = delete;
    virtual ~heap_obj() = default;
};

// A value object made during a render: its size (charge_of, computed again from the object, which
// does not change) was charged to the meter when it was made and is given back when it is freed.
// The same object made outside a render is a plain T, which gives back nothing.
template <class T>
struct charged final : T {
    using T::T;
    ~charged() override { memory_meter::give_back(charge_of(static_cast<const T &>(*this))); }
};

// Containers hand their elements to this on destruction instead of destroying them in place,
// so freeing a deeply nested value (a list of a list of … built in a loop) takes constant stack
// (python's "trashcan"). The queue is per thread and empty between destructions.
void defer_destruction(std::vector<value> & items);
void defer_destruction(std::vector<std::pair<value, value>> & items);
void defer_destruction(std::vector<std::pair<std::string, value>> & items);

struct string_obj : heap_obj {
    explicit string_obj(std::string t) : text(std::move(t)) {}
    std::string text;
};

struct list_obj : heap_obj {
    ~list_obj() override;
    std::vector<value> items;
    const char * iterator_type = "generator";  // python type name of an iterator flavor
};

struct dict_obj : heap_obj {
    ~dict_obj() override;
    std::vector<std::pair<value, value>> items;
    const value * find(const value & key) const;
    const value * find(std::string_view key) const;
};

struct call_args {
    std::vector<value> pos;
    std::vector<std::pair<std::string, value>> kw;
};

using native_fn = std::function<value(interp &, call_args &)>;

struct callable_obj : heap_obj {
    std::string name;
    std::string repr;  // what str() prints
    native_fn fn;
};

struct undefined_obj : heap_obj {
    std::string message;
    error_kind kind = error_kind::undefined;
};

// Objects with attributes: namespace, loop, cycler, joiner.
struct object_obj : heap_obj {
    ~object_obj() override { memory_meter::give_back(charged_); }
    // n more bytes held by the object, charged to the active meter (an error_kind::limit error,
    // nothing charged, when they do not fit; nothing outside a render).
    void charge(size_t n) {
        if (memory_meter * m = memory_meter::active()) {
            m->charge(n);
            charged_ += n;
        }
    }
    virtual const char * type_name() const = 0;
    // The attribute, or an undefined value when there is none.
    virtual value get_attr(interp & in, std::string_view name);
    // false: the object has no assignable attributes.
    virtual bool set_attr(std::string_view name, value v);
    virtual bool callable() const { return false; }
    virtual value call(interp & in, call_args & args);
    virtual std::string repr(budget & b, uint32_t depth) const;
    // Drops the values the object holds (the end of a render breaks reference cycles so).
    virtual void clear() {}

private:
    size_t charged_ = 0;
};

class value {
public:
    value() = default;  // undefined

    static value none();
    static value boolean(bool b);
    static value integer(int64_t i);
    static value floating(double d);
    static value string(std::string s, bool markup = false);
    static value list(std::vector<value> items, seq_flavor flavor = seq_flavor::list);
    static value iterator(std::vector<value> items, const char * type_name = "generator");
    static value dict(std::vector<std::pair<value, value>> items);
    static value callable(std::string name, native_fn fn, std::string repr = "");
    static value object(std::shared_ptr<object_obj> obj);
    static value undefined(std::string message, error_kind kind = error_kind::undefined);

    value_kind kind() const { return kind_; }
    bool is_undefined() const { return kind_ == value_kind::undefined; }
    bool is_none() const { return kind_ == value_kind::none; }
    bool is_bool() const { return kind_ == value_kind::boolean; }
    bool is_int() const { return kind_ == value_kind::integer; }
    bool is_float() const { return kind_ == value_kind::floating; }
    bool is_number() const { return is_int() || is_float() || is_bool(); }  // bool is an int in python
    bool is_string() const { return kind_ == value_kind::string; }
    bool is_markup() const { return is_string() && flag_ != 0; }
    bool is_list() const { return kind_ == value_kind::list; }
    bool is_dict() const { return kind_ == value_kind::dict; }
    bool is_callable() const;
    bool is_object() const { return kind_ == value_kind::object; }

    bool get_bool() const { return b_; }
    int64_t get_int() const { return is_bool() ? (b_ ? 1 : 0) : i_; }  // integer or boolean
    double get_number() const { return is_float() ? f_ : static_cast<double>(get_int()); }
    const std::string & get_string() const;
    const std::vector<value> & get_items() const;
    seq_flavor flavor() const { return static_cast<seq_flavor>(flag_); }
    const list_obj & get_list() const;
    const dict_obj & get_dict() const;
    const callable_obj & get_callable() const;
    object_obj & get_object() const;
    const undefined_obj * get_undefined() const;  // null for a plain undefined
    // The message to raise when an undefined value is used.
    std::string undefined_message() const;
    error_kind undefined_kind() const;

    bool same_object(const value & other) const { return obj_ && obj_ == other.obj_; }

private:
    value_kind kind_ = value_kind::undefined;
    uint8_t flag_ = 0;  // string: markup; list: seq_flavor
    union {
        bool b_;
        int64_t i_ = 0;
        double f_;
    };
    std::shared_ptr<heap_obj> obj_;
};

// What charged<T> charges for an object (the object, its block, its elements or text).
inline size_t string_charge(const std::string & text) {
    return sizeof(string_obj) + k_block_overhead + heap_bytes(text);
}
inline size_t list_charge(size_t capacity) {
    return sizeof(list_obj) + k_block_overhead + capacity * sizeof(value);
}
inline size_t dict_charge(size_t capacity) {
    return sizeof(dict_obj) + k_block_overhead + capacity * sizeof(std::pair<value, value>);
}
inline size_t callable_charge(const std::string & name, const std::string & repr) {
    return sizeof(callable_obj) + k_block_overhead + heap_bytes(name) + heap_bytes(repr);
}
inline size_t undefined_charge(const std::string & message) {
    return sizeof(undefined_obj) + k_block_overhead + heap_bytes(message);
}
inline size_t charge_of(const string_obj & o) { return string_charge(o.text); }
inline size_t charge_of(const list_obj & o) { return list_charge(o.items.capacity()); }
inline size_t charge_of(const dict_obj & o) { return dict_charge(o.items.capacity()); }
inline size_t charge_of(const callable_obj & o) { return callable_charge(o.name, o.repr); }
inline size_t charge_of(const undefined_obj & o) { return undefined_charge(o.message); }

// python type names: type(x).__name__ ('NoneType', 'int', 'str', 'list', 'dict', ...).
std::string type_name(const value & v);
// jinja2's object_type_repr: "dict object", "None", ...
std::string object_type_repr(const value & v);

bool truthy(const value & v);
bool equals(const value & a, const value & b, budget & bud, uint32_t depth = 0);
// -1, 0, 1; throws error_kind::type where python's < raises.
int compare(const value & a, const value & b, budget & bud, const char * op = "<", uint32_t depth = 0);

// python str() and repr().
std::string to_str(const value & v, budget & bud);
std::string to_repr(const value & v, budget & bud, uint32_t depth = 0);
void append_repr(std::string & out, const value & v, budget & bud, uint32_t depth);
std::string repr_string(std::string_view s);  // python's quoted form of a str
std::string format_float(double d);          // python repr(float)
std::string format_int(int64_t i);

struct json_options {
    bool ensure_ascii = false;
    bool sort_keys = false;
    bool has_indent = false;
    std::string indent;                // the indent unit when has_indent
    std::string item_separator = ", ";
    std::string key_separator = ": ";
};
// python json.dumps; throws error_kind::type for what it cannot serialize.
std::string to_json(const value & v, const json_options & opts, budget & bud);

value from_json(const nlohmann::ordered_json & j, budget & bud, uint32_t depth = 0);

// jinja2's Undefined for a missed attribute or item of obj.
value undefined_attribute(const value & obj, std::string_view name);
value undefined_element(const value & obj, const value & key, budget & bud);

[[noreturn]] void throw_error(error_kind kind, std::string message);

// Concatenation by appending (GCC 12 warns falsely about `"literal" + std::string` at -O3).
inline std::string cat(std::initializer_list<std::string_view> parts) {
    std::string s;
    for (std::string_view p : parts) s.append(p);
    return s;
}

}  // namespace jinja
