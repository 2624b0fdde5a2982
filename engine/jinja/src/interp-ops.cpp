// interp-ops.cpp — python's operators on values: + - * / // % ** (with str/list/Markup rules
// and python's TypeError messages), ~, in, comparisons, unary minus; slicing; printf-style %.
#include "interp.h"
#include "utf8.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace jinja {

std::string escape_html(std::string_view s) {
    std::string out;
    out.reserve(s.size());
    for (char c : s) {
        switch (c) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '"': out += "&#34;"; break;
            case '\'': out += "&#39;"; break;
            default: out += c;
        }
    }
    return out;
}

static const char * op_symbol(binary_op op) {
    switch (op) {
        case binary_op::add: return "+";
        case binary_op::sub: return "-";
        case binary_op::mul: return "*";
        case binary_op::div: return "/";
        case binary_op::floordiv: return "//";
        case binary_op::mod: return "%";
        case binary_op::pow: return "** or pow()";
    }
    return "?";
}

[[noreturn]] static void fail_operands(binary_op op, const value & a, const value & b) {
    throw_error(error_kind::type, std::string("unsupported operand type(s) for ") + op_symbol(op) + ": '" +
                                      type_name(a) + "' and '" + type_name(b) + "'");
}

[[noreturn]] static void fail_overflow() { throw_error(error_kind::value, "integer result too large (64-bit overflow)"); }

static value add_values(interp & in, const value & a, const value & b) {
    if (a.is_string() && b.is_string()) {
        const bool markup = a.is_markup() || b.is_markup();
        std::string s;
        if (!markup) {
            s.reserve(a.get_string().size() + b.get_string().size());
            s += a.get_string();
        } else {
            s = a.is_markup() ? a.get_string() : escape_html(a.get_string());
        }
        s += (markup && !b.is_markup()) ? escape_html(b.get_string()) : b.get_string();
        in.check_string(s);
        return value::string(std::move(s), markup);
    }
    if (a.is_list() && b.is_list() && a.flavor() == b.flavor() &&
        (a.flavor() == seq_flavor::list || a.flavor() == seq_flavor::tuple)) {
        in.check_list(uint64_t(a.get_items().size()) + b.get_items().size(), "sequence concatenation");
        std::vector<value> items;
        items.reserve(a.get_items().size() + b.get_items().size());
        items.insert(items.end(), a.get_items().begin(), a.get_items().end());
        items.insert(items.end(), b.get_items().begin(), b.get_items().end());
        return value::list(std::move(items), a.flavor());
    }
    if (a.is_string() && !a.is_markup()) {
        throw_error(error_kind::type, "can only concatenate str (not \"" + type_name(b) + "\") to str");
    }
    if (a.is_list() && (a.flavor() == seq_flavor::list || a.flavor() == seq_flavor::tuple)) {
        throw_error(error_kind::type, "can only concatenate " + type_name(a) + " (not \"" + type_name(b) + "\") to " +
                                          type_name(a));
    }
    fail_operands(binary_op::add, a, b);
}

static value repeat(interp & in, const value & seq, int64_t n) {
    if (n < 0) n = 0;
    if (seq.is_string()) {
        const std::string & s = seq.get_string();
        if (!s.empty() && static_cast<uint64_t>(n) > in.bud.max_string / s.size()) in.bud.fail_string(s.size() * 2);
        in.mem.check(s.size() * static_cast<size_t>(n));
        std::string out;
        out.reserve(s.size() * static_cast<size_t>(n));
        for (int64_t i = 0; i < n; ++i) out += s;
        in.check_string(out);
        return value::string(std::move(out), seq.is_markup());
    }
    const auto & items = seq.get_items();
    if (!items.empty() && static_cast<uint64_t>(n) > in.opts.bounds.max_range_length / items.size()) {
        throw_error(error_kind::limit, "sequence repetition longer than " + std::to_string(in.opts.bounds.max_range_length));
    }
    in.check_items_memory(static_cast<uint64_t>(n) * items.size());
    std::vector<value> out;
    for (int64_t i = 0; i < n; ++i) out.insert(out.end(), items.begin(), items.end());
    in.bud.charge(out.size());
    return value::list(std::move(out), seq.flavor());
}

static bool is_repeatable(const value & v) {
    return v.is_string() || (v.is_list() && (v.flavor() == seq_flavor::list || v.flavor() == seq_flavor::tuple));
}

static value int_pow(int64_t base, int64_t exp) {
    if (exp < 0) return value::floating(std::pow(static_cast<double>(base), static_cast<double>(exp)));
    int64_t result = 1;
    while (exp > 0) {
        if (exp & 1) {
            if (__builtin_mul_overflow(result, base, &result)) fail_overflow();
        }
        exp >>= 1;
        if (exp > 0 && __builtin_mul_overflow(base, base, &base)) fail_overflow();
    }
    return value::integer(result);
}

static value arith_int(binary_op op, int64_t x, int64_t y) {
    int64_t r = 0;
    switch (op) {
        case binary_op::add:
            if (__builtin_add_overflow(x, y, &r)) fail_overflow();
            return value::integer(r);
        case binary_op::sub:
            if (__builtin_sub_overflow(x, y, &r)) fail_overflow();
            return value::integer(r);
        case binary_op::mul:
            if (__builtin_mul_overflow(x, y, &r)) fail_overflow();
            return value::integer(r);
        case binary_op::div:
            if (y == 0) throw_error(error_kind::value, "division by zero");
            return value::floating(static_cast<double>(x) / static_cast<double>(y));
        case binary_op::floordiv:
        case binary_op::mod: {
            if (y == 0) {
                throw_error(error_kind::value, op == binary_op::mod ? "integer modulo by zero"
                                                                    : "integer division or modulo by zero");
            }
            if (x == INT64_MIN && y == -1) {
                if (op == binary_op::mod) return value::integer(0);
                fail_overflow();
            }
            int64_t q = x / y, m = x % y;
            if (m != 0 && ((m < 0) != (y < 0))) --q, m += y;
            return value::integer(op == binary_op::floordiv ? q : m);
        }
        case binary_op::pow:
            if (x == 0 && y < 0) throw_error(error_kind::value, "0.0 cannot be raised to a negative power");
            return int_pow(x, y);
    }
    return value();
}

static value arith_float(binary_op op, double x, double y) {
    switch (op) {
        case binary_op::add: return value::floating(x + y);
        case binary_op::sub: return value::floating(x - y);
        case binary_op::mul: return value::floating(x * y);
        case binary_op::div:
            if (y == 0) throw_error(error_kind::value, "float division by zero");
            return value::floating(x / y);
        case binary_op::floordiv:
        case binary_op::mod: {
            if (y == 0) throw_error(error_kind::value, op == binary_op::mod ? "float modulo" : "float floor division by zero");
            // CPython's float_divmod: exact for cases like 1.0 // 0.1 == 9.0
            double mod = std::fmod(x, y);
            double div = (x - mod) / y;
            if (mod != 0) {
                if ((y < 0) != (mod < 0)) mod += y, div -= 1.0;
            } else {
                mod = std::copysign(0.0, y);
            }
            double floordiv;
            if (div != 0) {
                floordiv = std::floor(div);
                if (div - floordiv > 0.5) floordiv += 1.0;
            } else {
                floordiv = std::copysign(0.0, x / y);
            }
            return value::floating(op == binary_op::mod ? mod : floordiv);
        }
        case binary_op::pow:
            if (x == 0 && y < 0) throw_error(error_kind::value, "0.0 cannot be raised to a negative power");
            return value::floating(std::pow(x, y));
    }
    return value();
}

value interp::binary(binary_op op, const value & a, const value & b) {
    if (a.is_undefined()) raise_undefined(a);
    if (op == binary_op::mod && a.is_string()) {  // str % x formats even an undefined x
        std::string s = py_format(*this, a.get_string(), b);
        check_string(s);
        return value::string(std::move(s), a.is_markup());
    }
    if (b.is_undefined()) raise_undefined(b);
    if (a.is_number() && b.is_number()) {
        if (a.is_float() || b.is_float()) return arith_float(op, a.get_number(), b.get_number());
        return arith_int(op, a.get_int(), b.get_int());
    }
    switch (op) {
        case binary_op::add: return add_values(*this, a, b);
        case binary_op::mul:
            if (is_repeatable(a) && (b.is_int() || b.is_bool())) return repeat(*this, a, b.get_int());
            if (is_repeatable(b) && (a.is_int() || a.is_bool())) return repeat(*this, b, a.get_int());
            if (is_repeatable(a) || is_repeatable(b)) {
                throw_error(error_kind::type, "can't multiply sequence by non-int of type '" +
                                                  type_name(is_repeatable(a) ? b : a) + "'");
            }
            break;
        case binary_op::mod:
            if (a.is_string()) {
                std::string s = py_format(*this, a.get_string(), b);
                check_string(s);
                return value::string(std::move(s), a.is_markup());
            }
            break;
        default: break;
    }
    fail_operands(op, a, b);
}

value interp::concat(const std::vector<value> & parts) {
    size_t size = 0;  // about the result's size (a number prints in 24 bytes at most): allocated
                      // at once rather than doubled as it grows
    for (const auto & p : parts) size += p.is_string() ? p.get_string().size() : 24;
    std::string s;
    s.reserve(std::min(size, bud.max_string + 1));
    for (const auto & p : parts) {
        if (p.is_string()) {
            s += p.get_string();
        } else {
            s += to_str(p, bud);
        }
        check_string(s);
    }
    return value::string(std::move(s));
}

bool interp::contains(const value & container, const value & item) {
    switch (container.kind()) {
        case value_kind::string:
            if (!item.is_string()) {
                throw_error(error_kind::type, "'in <string>' requires string as left operand, not " + type_name(item));
            }
            bud.charge(container.get_string().size() / 256);
            return container.get_string().find(item.get_string()) != std::string::npos;
        case value_kind::list:
            for (const auto & v : container.get_items()) {
                if (equals(v, item, bud)) return true;
            }
            return false;
        case value_kind::dict:
            if ((item.is_list() && item.flavor() != seq_flavor::tuple) || item.is_dict()) {
                throw_error(error_kind::type, "unhashable type: '" + type_name(item) + "'");
            }
            return container.get_dict().find(item) != nullptr;
        case value_kind::undefined: return false;
        default: break;
    }
    throw_error(error_kind::type, "argument of type '" + type_name(container) + "' is not iterable");
}

bool interp::compare_values(compare_op op, const value & a, const value & b) {
    switch (op) {
        case compare_op::eq: return equals(a, b, bud);
        case compare_op::ne: return !equals(a, b, bud);
        case compare_op::lt: return compare(a, b, bud, "<") == -1;
        case compare_op::le: {
            const int c = compare(a, b, bud, "<=");
            return c == -1 || c == 0;
        }
        case compare_op::gt: return compare(a, b, bud, ">") == 1;
        case compare_op::ge: {
            const int c = compare(a, b, bud, ">=");
            return c == 1 || c == 0;
        }
        case compare_op::in: return contains(b, a);
        case compare_op::not_in: return !contains(b, a);
    }
    return false;
}

value interp::negate(const value & v, bool minus) {
    if (v.is_undefined()) raise_undefined(v);
    if (v.is_float()) return value::floating(minus ? -v.get_number() : v.get_number());
    if (v.is_int() || v.is_bool()) {
        const int64_t i = v.get_int();
        if (minus && i == INT64_MIN) fail_overflow();
        return value::integer(minus ? -i : i);
    }
    throw_error(error_kind::type, std::string("bad operand type for unary ") + (minus ? "-" : "+") + ": '" +
                                      type_name(v) + "'");
}

// ---- slicing (python's PySlice_AdjustIndices) ----

static int64_t slice_part(const value & v, int64_t def) {
    if (v.is_none() || v.is_undefined()) return def;
    if (v.is_int() || v.is_bool()) return v.get_int();
    throw_error(error_kind::type, "slice indices must be integers or None or have an __index__ method");
}

static std::vector<size_t> slice_indices(size_t size, const value & start_v, const value & stop_v, const value & step_v) {
    const int64_t step = slice_part(step_v, 1);
    if (step == 0) throw_error(error_kind::value, "slice step cannot be zero");
    const int64_t len = static_cast<int64_t>(size);
    auto adjust = [&](const value & v, bool is_start) {
        int64_t i = slice_part(v, 0);
        if (v.is_none() || v.is_undefined()) {
            if (is_start) return step < 0 ? len - 1 : int64_t(0);
            return step < 0 ? int64_t(-1) : len;
        }
        if (i < 0) {
            i = i < -len ? -1 : i + len;
            if (i < 0) i = step < 0 ? -1 : 0;
        } else if (i >= len) {
            i = step < 0 ? len - 1 : len;
        }
        return i;
    };
    const int64_t start = adjust(start_v, true), stop = adjust(stop_v, false);
    std::vector<size_t> out;
    if (step > 0) {
        for (int64_t i = start; i < stop; i += step) out.push_back(static_cast<size_t>(i));
    } else {
        for (int64_t i = start; i > stop; i += step) out.push_back(static_cast<size_t>(i));
    }
    return out;
}

std::vector<value> slice_items(const std::vector<value> & items, const value & start, const value & stop,
                               const value & step) {
    std::vector<value> out;
    for (size_t i : slice_indices(items.size(), start, stop, step)) out.push_back(items[i]);
    return out;
}

std::string slice_string(const std::string & s, const value & start, const value & stop, const value & step) {
    std::string out;
    if (utf8_is_ascii(s)) {
        for (size_t i : slice_indices(s.size(), start, stop, step)) out += s[i];
        return out;
    }
    const auto offsets = utf8_offsets(s);
    for (size_t i : slice_indices(offsets.size() - 1, start, stop, step)) out.append(s, offsets[i], offsets[i + 1] - offsets[i]);
    return out;
}

}  // namespace jinja
