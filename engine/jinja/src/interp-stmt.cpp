// interp-stmt.cpp — execution of statements: output, if, for (with the loop object), set,
// macros and their calls, call/filter/with blocks; and the render entry point.
#include "interp.h"

#include <algorithm>
#include <ctime>

namespace jinja {

namespace {

// jinja2's LoopContext.
struct loop_obj final : object_obj, std::enable_shared_from_this<loop_obj> {
    ~loop_obj() override { defer_destruction(items); }
    std::vector<value> items;
    size_t index0 = 0;
    uint32_t depth0 = 0;
    const for_stmt * stmt = nullptr;
    std::shared_ptr<scope> outer;  // where a recursive loop(...) call runs its body
    value last_changed;
    bool has_changed = false;

    const char * type_name() const override { return "LoopContext"; }
    bool callable() const override { return stmt->recursive; }
    void clear() override {
        items.clear();
        outer.reset();
        last_changed = value();
    }
    std::string repr(budget &, uint32_t) const override {
        return "<LoopContext " + std::to_string(index0 + 1) + "/" + std::to_string(items.size()) + ">";
    }
    value get_attr(interp & in, std::string_view name) override;
    value call(interp & in, call_args & args) override;
};

value loop_obj::get_attr(interp & in, std::string_view name) {
    const int64_t n = static_cast<int64_t>(items.size()), i = static_cast<int64_t>(index0);
    if (name == "index") return value::integer(i + 1);
    if (name == "index0") return value::integer(i);
    if (name == "revindex") return value::integer(n - i);
    if (name == "revindex0") return value::integer(n - i - 1);
    if (name == "first") return value::boolean(i == 0);
    if (name == "last") return value::boolean(i == n - 1);
    if (name == "length") return value::integer(n);
    if (name == "depth") return value::integer(depth0 + 1);
    if (name == "depth0") return value::integer(depth0);
    if (name == "previtem") return i > 0 ? items[static_cast<size_t>(i - 1)] : value::undefined("there is no previous item");
    if (name == "nextitem") return i + 1 < n ? items[static_cast<size_t>(i + 1)] : value::undefined("there is no next item");
    if (name == "cycle") {
        return value::callable("cycle", [i](interp &, call_args & args) {
            if (args.pos.empty()) throw_error(error_kind::type, "no items for cycling given");
            return args.pos[static_cast<size_t>(i) % args.pos.size()];
        });
    }
    if (name == "changed") {
        auto self = shared_from_this();
        return value::callable("changed", [self](interp & inner, call_args & args) {
            value now = value::list(args.pos, seq_flavor::tuple);
            if (self->has_changed && equals(self->last_changed, now, inner.bud)) return value::boolean(false);
            self->last_changed = std::move(now);
            self->has_changed = true;
            return value::boolean(true);
        });
    }
    return object_obj::get_attr(in, name);
}

value loop_obj::call(interp & in, call_args & args) {
    if (args.pos.size() != 1 || !args.kw.empty()) throw_error(error_kind::type, "loop() takes exactly one argument");
    return value::string(in.recurse_loop(*stmt, in.iterate(args.pos[0]), depth0 + 1, outer));
}

}  // namespace

void interp::write(std::string_view text) {
    bud.charge(text.size() / 256);
    if (out_->size() + text.size() > opts.bounds.max_output_bytes) {
        throw_error(error_kind::limit, "output exceeds the limit of " + std::to_string(opts.bounds.max_output_bytes) + " bytes");
    }
    mem.charge(text.size());  // given back when a capture's text becomes a value (or is dropped)
    out_->append(text);
}

void interp::count_loop_iteration() {
    if (++loop_iterations_ > opts.bounds.max_loop_iterations) {
        throw_error(error_kind::limit, "more than " + std::to_string(opts.bounds.max_loop_iterations) + " loop iterations");
    }
}

std::string interp::capture(const stmt_list & body) {
    std::string buf;
    std::string * saved = out_;
    out_ = &buf;
    exec(body);
    out_ = saved;
    mem.release(buf.size());
    return buf;
}

// The body of a set or filter block renders in a scope of its own (jinja2's inner frame).
std::string interp::capture_scoped(const stmt_list & body) {
    auto inner = std::make_shared<scope>();
    inner->parent = cur;
    std::swap(cur, inner);
    std::string text = capture(body);
    std::swap(cur, inner);
    return text;
}

flow interp::exec(const stmt_list & body) {
    for (const auto & s : body) {
        const flow f = exec(*s);
        if (f != flow::normal) return f;
    }
    return flow::normal;
}

flow interp::exec(const stmt & s) {
    depth_guard guard(*this);
    bud.charge(1);
    try {
        return exec_inner(s);
    } catch (const error & err) {
        if (err.line() != 0) throw;
        throw error(err.kind(), err.message(), prog_.source_name, s.loc.line, s.loc.column);
    }
}

flow interp::exec_inner(const stmt & s) {
    switch (s.kind) {
        case stmt_kind::text: write(static_cast<const text_stmt &>(s).text); return flow::normal;
        case stmt_kind::print: {
            const value v = eval(*static_cast<const print_stmt &>(s).e);
            if (v.is_string()) {
                write(v.get_string());
            } else {
                write(str(v));
            }
            return flow::normal;
        }
        case stmt_kind::if_: return exec_if(static_cast<const if_stmt &>(s));
        case stmt_kind::for_: return exec_for(static_cast<const for_stmt &>(s));
        case stmt_kind::set: {
            const auto & n = static_cast<const set_stmt &>(s);
            assign(n.tgt, eval(*n.e));
            return flow::normal;
        }
        case stmt_kind::set_block: exec_set_block(static_cast<const set_block_stmt &>(s)); return flow::normal;
        case stmt_kind::macro: exec_macro(static_cast<const macro_stmt &>(s)); return flow::normal;
        case stmt_kind::call_block: exec_call_block(static_cast<const call_block_stmt &>(s)); return flow::normal;
        case stmt_kind::filter_block: exec_filter_block(static_cast<const filter_block_stmt &>(s)); return flow::normal;
        case stmt_kind::with: return exec_with(static_cast<const with_stmt &>(s));
        case stmt_kind::block: {
            auto inner = std::make_shared<scope>();
            inner->parent = cur;
            std::swap(cur, inner);
            const flow f = exec(static_cast<const block_stmt &>(s).body);
            std::swap(cur, inner);
            return f;
        }
        case stmt_kind::break_: return flow::break_;
        case stmt_kind::continue_: return flow::continue_;
    }
    return flow::normal;
}

flow interp::exec_if(const if_stmt & s) {
    for (const auto & [test, body] : s.branches) {
        if (truthy(eval(*test))) return exec(body);
    }
    return exec(s.otherwise);
}

void interp::assign(const target & t, const value & v) {
    switch (t.kind) {
        case target::kind_t::name: cur->set(t.name, v); return;
        case target::kind_t::ns_attr: {
            value ns = lookup(t.name);
            if (!ns.is_object() || !ns.get_object().set_attr(t.attr, v)) {
                throw_error(error_kind::type, "cannot assign attribute on non-namespace object");
            }
            return;
        }
        case target::kind_t::tuple: {
            std::vector<value> items = iterate(v);
            if (items.size() < t.items.size()) {
                throw_error(error_kind::value, "not enough values to unpack (expected " + std::to_string(t.items.size()) +
                                                   ", got " + std::to_string(items.size()) + ")");
            }
            if (items.size() > t.items.size()) {
                throw_error(error_kind::value, "too many values to unpack (expected " + std::to_string(t.items.size()) + ")");
            }
            for (size_t i = 0; i < items.size(); ++i) assign(t.items[i], items[i]);
            return;
        }
    }
}

std::string interp::recurse_loop(const for_stmt & s, std::vector<value> items, uint32_t depth0,
                                 const std::shared_ptr<scope> & outer) {
    const std::shared_ptr<scope> saved = cur;
    cur = outer;
    items = filter_loop_items(s, std::move(items));
    std::string buf;
    std::string * saved_out = out_;
    out_ = &buf;
    run_loop(s, std::move(items), depth0);
    out_ = saved_out;
    cur = saved;
    mem.release(buf.size());
    return buf;
}

std::vector<value> interp::filter_loop_items(const for_stmt & s, std::vector<value> items) {
    if (s.filter) {
        std::vector<value> kept;
        const std::shared_ptr<scope> outer = cur;
        for (auto & item : items) {
            count_loop_iteration();
            cur = std::make_shared<scope>();
            cur->parent = outer;
            assign(s.tgt, item);
            const bool keep = truthy(eval(*s.filter));
            cur = outer;
            if (keep) kept.push_back(std::move(item));
        }
        items = std::move(kept);
    }
    return items;
}

flow interp::exec_for(const for_stmt & s) {
    std::vector<value> items = filter_loop_items(s, iterate(eval(*s.iter)));
    if (items.empty()) {
        auto inner = std::make_shared<scope>();
        inner->parent = cur;
        std::swap(cur, inner);
        const flow f = exec(s.otherwise);
        std::swap(cur, inner);
        return f == flow::normal ? flow::normal : f;
    }
    run_loop(s, std::move(items), 0);
    return flow::normal;
}

void interp::run_loop(const for_stmt & s, std::vector<value> items, uint32_t depth0) {
    auto loop = std::make_shared<loop_obj>();
    loop->items = std::move(items);
    loop->depth0 = depth0;
    loop->stmt = &s;
    loop->outer = cur;
    loop->charge(sizeof(loop_obj) + k_block_overhead + loop->items.capacity() * sizeof(value));
    track(loop);
    const value loop_value = value::object(loop);
    const std::shared_ptr<scope> outer = cur;
    for (size_t i = 0; i < loop->items.size(); ++i) {
        count_loop_iteration();
        loop->index0 = i;
        cur = std::make_shared<scope>();
        cur->parent = outer;
        cur->set("loop", loop_value);
        assign(s.tgt, loop->items[i]);
        const flow f = exec(s.body);
        cur = outer;
        if (f == flow::break_) break;
    }
}

void interp::sweep_objects() {
    std::erase_if(objects_, [](const std::weak_ptr<object_obj> & o) { return o.expired(); });
    sweep_at_ = std::max<size_t>(64, 2 * objects_.size());
}

void interp::exec_set_block(const set_block_stmt & s) {
    const value text = value::string(capture_scoped(s.body));
    if (!s.filter) {
        assign(s.tgt, text);
        return;
    }
    const value * saved = block_input_;
    block_input_ = &text;
    const value result = eval(*s.filter);
    block_input_ = saved;
    assign(s.tgt, result);
}

void interp::exec_filter_block(const filter_block_stmt & s) {
    const value text = value::string(capture_scoped(s.body));
    const value * saved = block_input_;
    block_input_ = &text;
    const value result = eval(*s.filter);
    block_input_ = saved;
    write(str(result));
}

flow interp::exec_with(const with_stmt & s) {
    std::vector<value> vals;
    for (const auto & [t, e] : s.assignments) vals.push_back(eval(*e));
    auto inner = std::make_shared<scope>();
    inner->parent = cur;
    std::swap(cur, inner);
    for (size_t i = 0; i < vals.size(); ++i) assign(s.assignments[i].first, vals[i]);
    const flow f = exec(s.body);
    std::swap(cur, inner);
    return f;
}

value interp::make_macro(const macro_stmt & m) {
    std::shared_ptr<scope> closure = cur;
    closure_scopes_.push_back(closure);
    const macro_stmt * node = &m;
    return value::callable(
        m.name, [node, closure](interp & in, call_args & args) { return in.call_macro(*node, closure, args); },
        "<Macro '" + m.name + "'>");
}

void interp::exec_macro(const macro_stmt & s) { cur->set(s.name, make_macro(s)); }

void interp::exec_call_block(const call_block_stmt & s) {
    value callee = eval(*s.call->callee);
    call_args args = eval_args(s.call->args);
    args.kw.emplace_back("caller", make_macro(s.caller));
    write(str(call(callee, args)));
}

void interp::bind_macro_args(const macro_stmt & m, call_args & args) {
    const auto & names = m.params.names;
    const std::string who = "macro '" + m.name + "'";
    std::vector<bool> bound(names.size(), false);
    std::vector<value> extra;
    // every parameter is a local of the macro from the start: a default that names a parameter
    // not yet bound sees an undefined value, not a variable of the same name outside
    for (const auto & n : names) cur->set(n, value::undefined(repr_string(n) + " is undefined"));
    for (size_t i = 0; i < args.pos.size(); ++i) {
        if (i < names.size()) {
            cur->set(names[i], args.pos[i]);
            bound[i] = true;
        } else {
            extra.push_back(args.pos[i]);
        }
    }
    if (!extra.empty() && !m.uses_varargs) {
        throw_error(error_kind::type, who + " takes not more than " + std::to_string(names.size()) + " argument(s)");
    }
    value caller;
    std::vector<std::pair<value, value>> kwargs;
    for (auto & [k, v] : args.kw) {
        const auto it = std::find(names.begin(), names.end(), k);
        if (it != names.end()) {
            const size_t j = static_cast<size_t>(it - names.begin());
            if (bound[j]) throw_error(error_kind::type, who + " got multiple values for argument '" + k + "'");
            cur->set(k, v);
            bound[j] = true;
        } else if (k == "caller" && m.uses_caller) {
            caller = v;
        } else if (m.uses_kwargs) {
            kwargs.emplace_back(value::string(k), v);
        } else {
            throw_error(error_kind::type, who + " takes no keyword argument '" + k + "'");
        }
    }
    for (size_t j = 0; j < names.size(); ++j) {
        if (bound[j]) continue;
        if (m.params.defaults[j]) {
            cur->set(names[j], eval(*m.params.defaults[j]));
        } else {
            cur->set(names[j], value::undefined("parameter '" + names[j] + "' was not provided"));
        }
    }
    if (m.uses_varargs) cur->set("varargs", value::list(std::move(extra), seq_flavor::tuple));
    if (m.uses_kwargs) cur->set("kwargs", value::dict(std::move(kwargs)));
    if (m.uses_caller) cur->set("caller", caller.is_undefined() ? value::undefined("No caller defined") : caller);
}

value interp::call_macro(const macro_stmt & m, const std::shared_ptr<scope> & closure, call_args & args) {
    if (++macro_depth_ > opts.bounds.max_macro_depth) {
        --macro_depth_;
        throw_error(error_kind::limit, "macro calls nested deeper than " + std::to_string(opts.bounds.max_macro_depth));
    }
    // a call's frame, its parameters bound and its text captured: some ten nodes' worth of work
    bud.charge(k_macro_call_steps + m.params.names.size());
    auto frame = std::make_shared<scope>();
    frame->parent = closure;
    std::swap(cur, frame);
    bind_macro_args(m, args);
    std::string text = capture(m.body);
    std::swap(cur, frame);
    --macro_depth_;
    return value::string(std::move(text));
}

interp::interp(const program & prog, const render_options & o)
    : opts(o), mem(o.bounds.max_memory_bytes), prog_(prog) {
    bud.max_steps = o.bounds.max_steps;
    bud.max_value_depth = o.bounds.max_value_depth;
    bud.max_string = o.bounds.max_output_bytes;
}

// Macros hold their defining scope and scopes hold macros, namespaces can hold themselves: the
// end of a render breaks those cycles, and cuts scope chains so none is freed recursively.
interp::~interp() {
    for (auto & s : closure_scopes_) {
        defer_destruction(s->vars);
        s->parent.reset();
    }
    for (auto & o : objects_) {
        if (const auto obj = o.lock()) obj->clear();
    }
}

std::string interp::run(const nlohmann::ordered_json & context) {
    if (!context.is_null() && !context.is_object()) throw_error(error_kind::type, "the render context must be a JSON object");
    render_vars vars;
    if (context.is_object()) {
        for (const auto & [k, v] : context.items()) vars.emplace_back(k, &v);
    }
    return run(vars);
}

std::string interp::run(const render_vars & given) {
    auto builtins = std::make_shared<scope>();
    install_globals(*builtins);
    auto vars = std::make_shared<scope>();
    vars->parent = builtins;
    for (const auto & [k, v] : given) vars->set(k, from_json(*v, bud));
    cur = std::make_shared<scope>();
    cur->parent = vars;
    std::string out;
    out_ = &out;
    exec(prog_.root);
    return out;
}

std::string interp::now_text(std::string_view fmt) {
    std::tm t{};
    if (opts.clock) {
        t = opts.clock();
    } else {
        const std::time_t now = std::time(nullptr);
        localtime_r(&now, &t);
    }
    return strftime_c(t, fmt);
}

}  // namespace jinja
