// interp.h — the interpreter: scopes, evaluation of expressions and statements, and the
// operations filters, tests and methods share (attribute and item access, iteration, calls).
//
// Scoping follows jinja2: the template's top level is one scope (its parent holds the render
// context and the globals); every for-loop iteration, macro call and with-block gets a child
// scope, so a `set` inside them is not seen outside (hence namespace()); `if` opens no scope.
// Macros see their defining scope as it is when they are called.
#pragma once

#include "ast.h"
#include "value.h"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace jinja {

struct scope {
    ~scope() { defer_destruction(vars); }
    std::shared_ptr<scope> parent;
    std::vector<std::pair<std::string, value>> vars;

    value * find_local(std::string_view name);
    void set(std::string_view name, value v);
};

enum class flow : uint8_t { normal, break_, continue_ };

// The steps a macro call costs besides its nodes (and one per parameter): a new frame, the
// parameters bound, the text captured take about as long as this many expression nodes.
constexpr uint64_t k_macro_call_steps = 16;

class interp {
public:
    interp(const program & prog, const render_options & opts);
    ~interp();
    interp(const interp &) = delete;
    interp & operator=(const interp &) = delete;

    std::string run(const nlohmann::ordered_json & context);
    std::string run(const render_vars & vars);

    const render_options & opts;
    budget bud;
    memory_meter mem;  // before every member that holds values: they are freed while it is active

    // ---- evaluation (interp-expr.cpp) ----
    value eval(const expr & e);
    call_args eval_args(const arg_list & args);
    value lookup(std::string_view name);
    value getattr(const value & obj, std::string_view name);
    value getitem(const value & obj, const value & key);
    value call(const value & callee, call_args & args);
    std::vector<value> iterate(const value & v);
    std::string str(const value & v) { return to_str(v, bud); }
    [[noreturn]] void raise_undefined(const value & v);
    // A string an operation made: within the size limit, and its bytes charged as work.
    void check_string(const std::string & s) {
        bud.check_string(s.size());
        bud.charge(s.size() / 256);
    }
    // A list an operation is about to make of n elements (what): within max_range_length, its
    // elements charged as work, and within the memory limit, before anything is allocated.
    void check_list(uint64_t n, const char * what) {
        if (n > opts.bounds.max_range_length) {
            throw_error(error_kind::limit, std::string(what) + " longer than " + std::to_string(opts.bounds.max_range_length));
        }
        bud.charge(n);
        check_items_memory(n);
    }
    // Would n more values fit in the memory limit (checked before a big allocation)?
    void check_items_memory(uint64_t n) const {
        mem.check(n > SIZE_MAX / sizeof(value) ? SIZE_MAX : static_cast<size_t>(n) * sizeof(value));
    }

    // ---- operators (interp-ops.cpp) ----
    value binary(binary_op op, const value & a, const value & b);
    value concat(const std::vector<value> & parts);
    bool contains(const value & container, const value & item);
    bool compare_values(compare_op op, const value & a, const value & b);
    value negate(const value & v, bool minus);

    // ---- filters and tests (filters*.cpp, tests.cpp) ----
    value apply_filter(std::string_view name, const value & input, call_args & args);
    bool apply_test(std::string_view name, const value & input, call_args & args);

    // ---- statements (interp-stmt.cpp) ----
    flow exec(const stmt_list & body);
    flow exec(const stmt & s);
    std::string capture(const stmt_list & body);  // renders into a string of its own
    std::string capture_scoped(const stmt_list & body);  // … in a child scope
    void write(std::string_view text);
    value call_macro(const macro_stmt & m, const std::shared_ptr<scope> & closure, call_args & args);
    void count_loop_iteration();
    std::string recurse_loop(const for_stmt & s, std::vector<value> items, uint32_t depth0,
                             const std::shared_ptr<scope> & outer);
    // Keeps sight of obj (without holding it) so the end of the render can break the cycles it
    // is in; an object nothing holds is freed at once (a loop's copy of its items when the loop
    // ends, a namespace made in every iteration of a loop with the iteration).
    void track(const std::shared_ptr<object_obj> & obj) {
        if (objects_.size() >= sweep_at_) sweep_objects();
        objects_.emplace_back(obj);
    }

    std::shared_ptr<scope> cur;
    std::string now_text(std::string_view fmt);  // strftime_now

private:
    const program & prog_;
    std::string * out_ = nullptr;
    uint32_t eval_depth_ = 0;
    uint32_t macro_depth_ = 0;
    uint64_t loop_iterations_ = 0;
    const value * block_input_ = nullptr;  // the body text a filter block's filters apply to
    std::vector<std::shared_ptr<scope>> closure_scopes_;      // scopes that hold macros
    std::vector<std::weak_ptr<object_obj>> objects_;          // namespaces, loops, cyclers
    size_t sweep_at_ = 64;                                    // objects_'s size that calls for a sweep
    void sweep_objects();                                     // forgets the freed ones

    friend struct depth_guard;
    void enter();
    void leave() { --eval_depth_; }

    value eval_inner(const expr & e);
    value eval_call(const call_expr & c);
    value eval_filter(const filter_expr & f);
    value eval_slice(const slice_expr & s);
    value eval_compare(const compare_expr & c);
    value eval_cond(const cond_expr & c);

    flow exec_inner(const stmt & s);
    flow exec_if(const if_stmt & s);
    flow exec_for(const for_stmt & s);
    void run_loop(const for_stmt & s, std::vector<value> items, uint32_t depth0);
    std::vector<value> filter_loop_items(const for_stmt & s, std::vector<value> items);
    void assign(const target & t, const value & v);
    void exec_set_block(const set_block_stmt & s);
    void exec_macro(const macro_stmt & s);
    void exec_call_block(const call_block_stmt & s);
    void exec_filter_block(const filter_block_stmt & s);
    flow exec_with(const with_stmt & s);
    void bind_macro_args(const macro_stmt & m, call_args & args);
    value make_macro(const macro_stmt & m);
    void install_globals(scope & globals);
};

// RAII nesting counter for recursive evaluation.
struct depth_guard {
    explicit depth_guard(interp & in) : in_(in) { in_.enter(); }
    ~depth_guard() { in_.leave(); }
    interp & in_;
};

// Reads the arguments of a builtin (filter, test, method, global) by position or keyword, as
// python binds them; unknown keywords and surplus positionals are TypeErrors.
class arg_reader {
public:
    arg_reader(call_args & args, std::string_view fn, std::initializer_list<const char *> names);
    const value * get(size_t i) const { return i < slots_.size() ? slots_[i] : nullptr; }
    value get_or(size_t i, value def) const {
        const value * v = get(i);
        return v ? *v : std::move(def);
    }
    bool has(size_t i) const { return get(i) != nullptr; }

private:
    std::vector<const value *> slots_;
};

// python-style helpers the builtins share.
int64_t to_index_int(const value & v, std::string_view what);  // int or bool; TypeError otherwise
std::string escape_html(std::string_view s);
value str_method(interp & in, const value & self, std::string_view name, call_args & args, bool & found);
value list_method(interp & in, const value & self, std::string_view name, call_args & args, bool & found);
value dict_method(interp & in, const value & self, std::string_view name, call_args & args, bool & found);
bool has_method(const value & obj, std::string_view name);
bool is_unsafe_method(const value & obj, std::string_view name);
value call_method(interp & in, const value & self, std::string_view name, call_args & args);
value bound_method(const value & self, std::string_view name);
std::string py_format(interp & in, const std::string & fmt, const value & args);  // str % args
std::string py_str_format(interp & in, const std::string & fmt, call_args & args);  // str.format
std::string strftime_c(const std::tm & t, std::string_view fmt);
std::vector<value> slice_items(const std::vector<value> & items, const value & start, const value & stop,
                               const value & step);
std::string slice_string(const std::string & s, const value & start, const value & stop, const value & step);

}  // namespace jinja
