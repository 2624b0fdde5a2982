// tests.cpp — the tests of `x is name(args)`: defined, none, string, mapping, iterable, number,
// sequence, boolean, true/false, integer, float, odd/even, divisibleby, equalto/eq, comparisons,
// in, sameas, lower/upper, callable, escaped, filter, test.
#include "builtins.h"
#include "utf8.h"

#include <cmath>

namespace jinja {

namespace {

const value & one_arg(call_args & args, const char * name) {
    if (args.pos.size() + args.kw.size() != 1) {
        throw_error(error_kind::type, std::string(name) + "() takes exactly 1 argument");
    }
    return args.pos.empty() ? args.kw[0].second : args.pos[0];
}

void no_args(call_args & args, const char * name) {
    if (!args.pos.empty() || !args.kw.empty()) throw_error(error_kind::type, std::string(name) + "() takes no arguments");
}

#define SIMPLE_TEST(fn, name, expr)                                  \
    bool fn(interp & in, const value & v, call_args & args) {         \
        (void)in;                                                     \
        no_args(args, name);                                          \
        return (expr);                                                \
    }

SIMPLE_TEST(t_defined, "defined", !v.is_undefined())
SIMPLE_TEST(t_undefined, "undefined", v.is_undefined())
SIMPLE_TEST(t_none, "none", v.is_none())
SIMPLE_TEST(t_boolean, "boolean", v.is_bool())
SIMPLE_TEST(t_false, "false", v.is_bool() && !v.get_bool())
SIMPLE_TEST(t_true, "true", v.is_bool() && v.get_bool())
SIMPLE_TEST(t_integer, "integer", v.is_int())
SIMPLE_TEST(t_float, "float", v.is_float())
SIMPLE_TEST(t_number, "number", v.is_number())
SIMPLE_TEST(t_string, "string", v.is_string())
SIMPLE_TEST(t_mapping, "mapping", v.is_dict())
SIMPLE_TEST(t_escaped, "escaped", v.is_markup())
// Undefined has __call__ (it raises), so python's callable() says true
SIMPLE_TEST(t_callable, "callable",
            v.is_undefined() || v.is_callable() || (v.is_object() && std::string(v.get_object().type_name()) == "LoopContext"))

bool t_iterable(interp &, const value & v, call_args & args) {
    no_args(args, "iterable");
    if (v.is_object()) return std::string(v.get_object().type_name()) == "LoopContext";
    return v.is_undefined() || v.is_string() || v.is_list() || v.is_dict();
}

bool t_sequence(interp &, const value & v, call_args & args) {
    no_args(args, "sequence");
    if (v.is_list()) return v.flavor() == seq_flavor::list || v.flavor() == seq_flavor::tuple;
    return v.is_undefined() || v.is_string() || v.is_dict();
}

// python's `value % m == want` (floats compare by value: 2.5 % 2 is 0.5, neither odd nor even)
bool mod_is(interp & in, const value & v, const value & m, int64_t want) {
    return equals(in.binary(binary_op::mod, v, m), value::integer(want), in.bud);
}

bool t_odd(interp & in, const value & v, call_args & args) {
    no_args(args, "odd");
    return mod_is(in, v, value::integer(2), 1);
}

bool t_even(interp & in, const value & v, call_args & args) {
    no_args(args, "even");
    return mod_is(in, v, value::integer(2), 0);
}

bool t_divisibleby(interp & in, const value & v, call_args & args) {
    return mod_is(in, v, one_arg(args, "divisibleby"), 0);
}

bool t_eq(interp & in, const value & v, call_args & args) { return in.compare_values(compare_op::eq, v, one_arg(args, "eq")); }
bool t_ne(interp & in, const value & v, call_args & args) { return in.compare_values(compare_op::ne, v, one_arg(args, "ne")); }
bool t_lt(interp & in, const value & v, call_args & args) { return in.compare_values(compare_op::lt, v, one_arg(args, "lt")); }
bool t_le(interp & in, const value & v, call_args & args) { return in.compare_values(compare_op::le, v, one_arg(args, "le")); }
bool t_gt(interp & in, const value & v, call_args & args) { return in.compare_values(compare_op::gt, v, one_arg(args, "gt")); }
bool t_ge(interp & in, const value & v, call_args & args) { return in.compare_values(compare_op::ge, v, one_arg(args, "ge")); }
bool t_in(interp & in, const value & v, call_args & args) { return in.contains(one_arg(args, "in"), v); }

bool t_sameas(interp & in, const value & v, call_args & args) {
    const value & other = one_arg(args, "sameas");
    if (v.kind() != other.kind()) return false;
    switch (v.kind()) {
        case value_kind::none:
        case value_kind::undefined: return true;
        case value_kind::boolean: return v.get_bool() == other.get_bool();
        case value_kind::integer: return v.get_int() == other.get_int() && v.get_int() >= -5 && v.get_int() <= 256;
        default: return v.same_object(other) || (v.is_string() && equals(v, other, in.bud) && v.get_string().size() <= 1);
    }
}

bool t_lower(interp & in, const value & v, call_args & args) {
    no_args(args, "lower");
    call_args none;
    return truthy(call_method(in, value::string(in.str(v)), "islower", none));
}

bool t_upper(interp & in, const value & v, call_args & args) {
    no_args(args, "upper");
    call_args none;
    return truthy(call_method(in, value::string(in.str(v)), "isupper", none));
}

bool t_filter(interp &, const value & v, call_args & args) {
    no_args(args, "filter");
    return v.is_string() && find_filter(v.get_string()) != nullptr;
}

bool t_test(interp &, const value & v, call_args & args) {
    no_args(args, "test");
    return v.is_string() && find_test(v.get_string()) != nullptr;
}

}  // namespace

test_fn find_test(std::string_view name) {
    static const std::pair<std::string_view, test_fn> table[] = {
        {"defined", t_defined},   {"undefined", t_undefined}, {"none", t_none},         {"boolean", t_boolean},
        {"false", t_false},       {"true", t_true},           {"integer", t_integer},   {"float", t_float},
        {"number", t_number},     {"string", t_string},       {"mapping", t_mapping},   {"iterable", t_iterable},
        {"sequence", t_sequence}, {"callable", t_callable},   {"escaped", t_escaped},   {"odd", t_odd},
        {"even", t_even},         {"divisibleby", t_divisibleby}, {"equalto", t_eq},    {"eq", t_eq},
        {"==", t_eq},             {"ne", t_ne},               {"!=", t_ne},             {"lt", t_lt},
        {"lessthan", t_lt},       {"<", t_lt},                {"le", t_le},             {"<=", t_le},
        {"gt", t_gt},             {"greaterthan", t_gt},      {">", t_gt},              {"ge", t_ge},
        {">=", t_ge},             {"in", t_in},               {"sameas", t_sameas},     {"lower", t_lower},
        {"upper", t_upper},       {"filter", t_filter},       {"test", t_test},
    };
    for (const auto & [n, f] : table) {
        if (n == name) return f;
    }
    return nullptr;
}

bool interp::apply_test(std::string_view name, const value & input, call_args & args) {
    depth_guard guard(*this);
    bud.charge(1 + (input.is_string() ? input.get_string().size() / 256 : 0));
    const test_fn t = find_test(name);
    if (!t) throw_error(error_kind::unknown_name, "No test named '" + std::string(name) + "' found.");
    return t(*this, input, args);
}

}  // namespace jinja
