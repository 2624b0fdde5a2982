// parser-expr.cpp — expressions: jinja2's parse_tuple … parse_primary, filters, tests, calls,
// subscripts and slices, assignment targets; and the token-stream helpers.
#include "parser.h"

#include <algorithm>
#include <cstring>

namespace jinja {

parser::parser(std::vector<token> tokens, const parse_options & opts) : toks_(std::move(tokens)), opts_(opts) {}

bool parser::skip_op(const char * op) {
    if (!is_op(op)) return false;
    next();
    return true;
}

bool parser::skip_name(const char * name) {
    if (!is_name(name)) return false;
    next();
    return true;
}

std::string parser::describe(const token & t) const {
    switch (t.type) {
        case token_type::var_end: return "end of print statement";
        case token_type::block_end: return "end of statement block";
        case token_type::var_begin: return "begin of print statement";
        case token_type::block_begin: return "begin of statement block";
        case token_type::eof: return "end of template";
        case token_type::data: return "template data";
        case token_type::string: return "string";
        case token_type::integer: return "integer";
        case token_type::floating: return "float";
        default: return t.text;
    }
}

void parser::fail(const token & at, const std::string & msg) const {
    throw error(error_kind::syntax, msg, opts_.source_name, at.line, at.column);
}

void parser::fail_unexpected(const token & at) const { fail(at, "unexpected '" + describe(at) + "'"); }

void parser::expect_op(const char * op) {
    if (!skip_op(op)) fail(cur(), std::string("expected token '") + op + "', got '" + describe(cur()) + "'");
}

const token & parser::expect_name() {
    if (cur().type != token_type::name) fail(cur(), "expected token 'name', got '" + describe(cur()) + "'");
    return next();
}

void parser::expect_name(const char * name) {
    if (!skip_name(name)) fail(cur(), std::string("expected token '") + name + "', got '" + describe(cur()) + "'");
}

void parser::expect_block_end() {
    if (cur().type != token_type::block_end)
        fail(cur(), "expected token 'end of statement block', got '" + describe(cur()) + "'");
    next();
}

void parser::enter(const token & at) {
    if (++nesting_ > opts_.max_nesting_depth) {
        throw error(error_kind::limit, "template nesting exceeds the limit of " + std::to_string(opts_.max_nesting_depth),
                    opts_.source_name, at.line, at.column);
    }
}

static uint32_t height(const expr_ptr & e) { return e ? e->depth : 0; }

static uint32_t args_height(const arg_list & a) {
    uint32_t h = std::max(height(a.star_args), height(a.star_kwargs));
    for (const auto & p : a.pos) h = std::max(h, height(p));
    for (const auto & [k, v] : a.kw) h = std::max(h, height(v));
    return h;
}

// Sets the node's place and height; a tree taller than the nesting limit is an error (chains
// like a.b.c… or 1+1+… are built by loops, not recursion, so the height is checked here).
void parser::seal(expr & e, const token & at) {
    e.loc = {at.line, at.column};
    uint32_t h = 0;
    switch (e.kind) {
        case expr_kind::list:
        case expr_kind::tuple:
        case expr_kind::concat:
            for (const auto & i : static_cast<seq_expr &>(e).items) h = std::max(h, height(i));
            break;
        case expr_kind::dict:
            for (const auto & [k, v] : static_cast<dict_expr &>(e).items) h = std::max({h, height(k), height(v)});
            break;
        case expr_kind::getattr: h = height(static_cast<getattr_expr &>(e).obj); break;
        case expr_kind::getitem: {
            auto & g = static_cast<getitem_expr &>(e);
            h = std::max(height(g.obj), height(g.index));
            break;
        }
        case expr_kind::slice: {
            auto & s = static_cast<slice_expr &>(e);
            h = std::max({height(s.obj), height(s.start), height(s.stop), height(s.step)});
            break;
        }
        case expr_kind::call: {
            auto & c = static_cast<call_expr &>(e);
            h = std::max(height(c.callee), args_height(c.args));
            break;
        }
        case expr_kind::filter: {
            auto & f = static_cast<filter_expr &>(e);
            h = std::max(height(f.input), args_height(f.args));
            break;
        }
        case expr_kind::test: {
            auto & t = static_cast<test_expr &>(e);
            h = std::max(height(t.input), args_height(t.args));
            break;
        }
        case expr_kind::negate:
        case expr_kind::plus:
        case expr_kind::not_: h = height(static_cast<unary_expr &>(e).operand); break;
        case expr_kind::binary:
        case expr_kind::and_:
        case expr_kind::or_: {
            auto & b = static_cast<binary_expr &>(e);
            h = std::max(height(b.left), height(b.right));
            break;
        }
        case expr_kind::compare: {
            auto & c = static_cast<compare_expr &>(e);
            h = height(c.first);
            for (const auto & [op, x] : c.rest) h = std::max(h, height(x));
            break;
        }
        case expr_kind::cond: {
            auto & c = static_cast<cond_expr &>(e);
            h = std::max({height(c.test), height(c.then), height(c.otherwise)});
            break;
        }
        default: break;
    }
    e.depth = h + 1;
    if (e.depth > opts_.max_nesting_depth) {
        throw error(error_kind::limit, "expression nesting exceeds the limit of " + std::to_string(opts_.max_nesting_depth),
                    opts_.source_name, at.line, at.column);
    }
}

template <class T, class... A>
static std::unique_ptr<T> make(A &&... a) {
    return std::make_unique<T>(std::forward<A>(a)...);
}

bool parser::is_tuple_end(std::initializer_list<const char *> extra_end) const {
    const token_type t = cur().type;
    if (t == token_type::var_end || t == token_type::block_end || t == token_type::eof) return true;
    if (is_op(")")) return true;
    for (const char * name : extra_end) {
        if (is_name(name)) return true;
    }
    return false;
}

expr_ptr parser::parse_tuple(bool simplified, bool with_condexpr, std::initializer_list<const char *> extra_end,
                             bool explicit_parens) {
    const token start = cur();
    std::vector<expr_ptr> args;
    bool is_tuple = false;
    while (true) {
        if (!args.empty()) expect_op(",");
        if (is_tuple_end(extra_end)) break;
        if (simplified) {
            args.push_back(parse_primary());
        } else {
            args.push_back(parse_expression(with_condexpr));
        }
        if (is_op(",")) {
            is_tuple = true;
        } else {
            break;
        }
    }
    if (!is_tuple) {
        if (!args.empty()) return std::move(args[0]);
        if (!explicit_parens) fail(cur(), "Expected an expression, got '" + describe(cur()) + "'");
    }
    auto node = make<seq_expr>(expr_kind::tuple);
    node->items = std::move(args);
    seal(*node, start);
    return node;
}

expr_ptr parser::parse_expression(bool with_condexpr) {
    enter(cur());
    expr_ptr e = with_condexpr ? parse_condexpr() : parse_or();
    leave();
    return e;
}

expr_ptr parser::parse_condexpr() {
    const token start = cur();
    expr_ptr expr1 = parse_or();
    while (skip_name("if")) {
        auto node = make<cond_expr>();
        node->test = parse_or();
        if (skip_name("else")) {
            enter(cur());
            node->otherwise = parse_condexpr();
            leave();
        }
        node->then = std::move(expr1);
        seal(*node, start);
        expr1 = std::move(node);
    }
    return expr1;
}

expr_ptr parser::parse_or() {
    const token start = cur();
    expr_ptr left = parse_and();
    while (skip_name("or")) {
        auto node = make<binary_expr>(expr_kind::or_);
        node->left = std::move(left);
        node->right = parse_and();
        seal(*node, start);
        left = std::move(node);
    }
    return left;
}

expr_ptr parser::parse_and() {
    const token start = cur();
    expr_ptr left = parse_not();
    while (skip_name("and")) {
        auto node = make<binary_expr>(expr_kind::and_);
        node->left = std::move(left);
        node->right = parse_not();
        seal(*node, start);
        left = std::move(node);
    }
    return left;
}

expr_ptr parser::parse_not() {
    const token start = cur();
    if (skip_name("not")) {
        enter(start);
        auto node = make<unary_expr>(expr_kind::not_);
        node->operand = parse_not();
        seal(*node, start);
        leave();
        return node;
    }
    return parse_compare();
}

expr_ptr parser::parse_compare() {
    const token start = cur();
    expr_ptr first = parse_math1();
    std::unique_ptr<compare_expr> node;
    while (true) {
        compare_op op;
        if (is_op("==")) {
            op = compare_op::eq;
        } else if (is_op("!=")) {
            op = compare_op::ne;
        } else if (is_op("<")) {
            op = compare_op::lt;
        } else if (is_op("<=")) {
            op = compare_op::le;
        } else if (is_op(">")) {
            op = compare_op::gt;
        } else if (is_op(">=")) {
            op = compare_op::ge;
        } else if (is_name("in")) {
            op = compare_op::in;
        } else if (is_name("not") && look().type == token_type::name && look().text == "in") {
            next();
            op = compare_op::not_in;
        } else {
            break;
        }
        next();
        if (!node) {
            node = make<compare_expr>();
            node->first = std::move(first);
        }
        node->rest.emplace_back(op, parse_math1());
    }
    if (!node) return first;
    seal(*node, start);
    return node;
}

static expr_ptr make_binary(expr_ptr left, binary_op op, expr_ptr right) {
    auto node = make<binary_expr>(expr_kind::binary);
    node->op = op;
    node->left = std::move(left);
    node->right = std::move(right);
    return node;
}

expr_ptr parser::parse_math1() {
    expr_ptr left = parse_concat();
    while (is_op("+") || is_op("-")) {
        const binary_op op = cur().text == "+" ? binary_op::add : binary_op::sub;
        const token at = next();
        left = make_binary(std::move(left), op, parse_concat());
        seal(*left, at);
    }
    return left;
}

expr_ptr parser::parse_concat() {
    const token start = cur();
    expr_ptr first = parse_math2();
    if (!is_op("~")) return first;
    auto node = make<seq_expr>(expr_kind::concat);
    node->items.push_back(std::move(first));
    while (skip_op("~")) node->items.push_back(parse_math2());
    seal(*node, start);
    return node;
}

expr_ptr parser::parse_math2() {
    expr_ptr left = parse_pow();
    while (is_op("*") || is_op("/") || is_op("//") || is_op("%")) {
        const std::string & t = cur().text;
        const binary_op op = t == "*" ? binary_op::mul : t == "/" ? binary_op::div : t == "//" ? binary_op::floordiv : binary_op::mod;
        const token at = next();
        left = make_binary(std::move(left), op, parse_pow());
        seal(*left, at);
    }
    return left;
}

expr_ptr parser::parse_pow() {
    expr_ptr left = parse_unary(true);
    while (is_op("**")) {
        const token at = next();
        left = make_binary(std::move(left), binary_op::pow, parse_unary(true));
        seal(*left, at);
    }
    return left;
}

expr_ptr parser::parse_unary(bool with_filter) {
    const token start = cur();
    expr_ptr node;
    if (is_op("-") || is_op("+")) {
        enter(start);
        next();
        auto u = make<unary_expr>(start.text == "-" ? expr_kind::negate : expr_kind::plus);
        u->operand = parse_unary(false);
        seal(*u, start);
        leave();
        node = std::move(u);
    } else {
        node = parse_primary();
    }
    node = parse_postfix(std::move(node));
    if (with_filter) node = parse_filter_expr(std::move(node));
    return node;
}

expr_ptr parser::parse_primary() {
    const token start = cur();
    switch (start.type) {
        case token_type::name: {
            next();
            const std::string & n = start.text;
            if (n == "true" || n == "false" || n == "True" || n == "False" || n == "none" || n == "None") {
                auto lit = make<literal_expr>();
                lit->val = (n == "none" || n == "None") ? value::none() : value::boolean(n == "true" || n == "True");
                seal(*lit, start);
                return lit;
            }
            auto name = make<name_expr>();
            name->name = n;
            seal(*name, start);
            return name;
        }
        case token_type::string: {
            std::string text;
            while (cur().type == token_type::string) text += next().text;
            auto lit = make<literal_expr>();
            lit->val = value::string(std::move(text));
            seal(*lit, start);
            return lit;
        }
        case token_type::integer:
        case token_type::floating: {
            next();
            auto lit = make<literal_expr>();
            lit->val = start.type == token_type::integer ? value::integer(start.ival) : value::floating(start.fval);
            seal(*lit, start);
            return lit;
        }
        case token_type::op:
            if (start.text == "(") {
                enter(start);
                next();
                expr_ptr e = parse_tuple(false, true, {}, true);
                expect_op(")");
                leave();
                return e;
            }
            if (start.text == "[" || start.text == "{") return parse_list_or_dict();
            break;
        default: break;
    }
    fail_unexpected(start);
}

expr_ptr parser::parse_list_or_dict() {
    const token start = cur();
    enter(start);
    next();
    expr_ptr result;
    if (start.text == "[") {
        auto node = make<seq_expr>(expr_kind::list);
        while (!is_op("]")) {
            if (!node->items.empty()) expect_op(",");
            if (is_op("]")) break;
            node->items.push_back(parse_expression());
        }
        expect_op("]");
        result = std::move(node);
    } else {
        auto node = make<dict_expr>();
        while (!is_op("}")) {
            if (!node->items.empty()) expect_op(",");
            if (is_op("}")) break;
            expr_ptr key = parse_expression();
            expect_op(":");
            node->items.emplace_back(std::move(key), parse_expression());
        }
        expect_op("}");
        result = std::move(node);
    }
    seal(*result, start);
    leave();
    return result;
}

expr_ptr parser::parse_postfix(expr_ptr node) {
    while (true) {
        if (is_op(".") || is_op("[")) {
            node = parse_subscript(std::move(node));
        } else if (is_op("(")) {
            node = parse_call(std::move(node));
        } else {
            return node;
        }
    }
}

expr_ptr parser::parse_filter_expr(expr_ptr node) {
    while (true) {
        if (is_op("|")) {
            node = parse_filter(std::move(node), false);
        } else if (is_name("is")) {
            node = parse_test(std::move(node));
        } else if (is_op("(")) {
            node = parse_call(std::move(node));
        } else {
            return node;
        }
    }
}

expr_ptr parser::parse_subscript(expr_ptr node) {
    const token at = next();
    if (at.text == ".") {
        const token attr = next();
        if (attr.type == token_type::name) {
            auto g = make<getattr_expr>();
            g->obj = std::move(node);
            g->name = attr.text;
            seal(*g, at);
            return g;
        }
        if (attr.type != token_type::integer) fail(attr, "expected name or number");
        auto lit = make<literal_expr>();
        lit->val = value::integer(attr.ival);
        seal(*lit, attr);
        auto g = make<getitem_expr>();
        g->obj = std::move(node);
        g->index = std::move(lit);
        seal(*g, at);
        return g;
    }
    enter(at);
    std::vector<expr_ptr> args;
    while (!is_op("]")) {
        if (!args.empty()) expect_op(",");
        args.push_back(parse_subscribed());
    }
    expect_op("]");
    leave();
    if (args.size() == 1 && args[0] && args[0]->kind == expr_kind::slice &&
        !static_cast<slice_expr &>(*args[0]).obj) {
        auto & s = static_cast<slice_expr &>(*args[0]);
        s.obj = std::move(node);
        seal(s, at);
        return std::move(args[0]);
    }
    if (args.empty()) fail(at, "expected subscript expression");
    auto g = make<getitem_expr>();
    g->obj = std::move(node);
    if (args.size() == 1) {
        g->index = std::move(args[0]);
    } else {
        auto tup = make<seq_expr>(expr_kind::tuple);
        for (auto & a : args) {
            if (a->kind == expr_kind::slice) fail(at, "slices inside a tuple subscript are not supported");
            tup->items.push_back(std::move(a));
        }
        seal(*tup, at);
        g->index = std::move(tup);
    }
    seal(*g, at);
    return g;
}

// One subscript: an expression, or a slice (returned as a slice_expr without obj).
expr_ptr parser::parse_subscribed() {
    const token start = cur();
    auto s = make<slice_expr>();
    if (is_op(":")) {
        next();
    } else {
        expr_ptr e = parse_expression();
        if (!is_op(":")) return e;
        next();
        s->start = std::move(e);
    }
    if (!is_op(":") && !is_op("]") && !is_op(",")) s->stop = parse_expression();
    if (skip_op(":")) {
        if (!is_op("]") && !is_op(",")) s->step = parse_expression();
    }
    seal(*s, start);
    return s;
}

void parser::parse_call_args(arg_list & args) {
    const token start = cur();
    expect_op("(");
    enter(start);
    bool require_comma = false;
    auto ensure = [&](bool ok) {
        if (!ok) fail(start, "invalid syntax for function call expression");
    };
    while (!is_op(")")) {
        if (require_comma) {
            expect_op(",");
            if (is_op(")")) break;
        }
        if (is_op("*")) {
            ensure(!args.star_args && !args.star_kwargs);
            next();
            args.star_args = parse_expression();
        } else if (is_op("**")) {
            ensure(!args.star_kwargs);
            next();
            args.star_kwargs = parse_expression();
        } else if (cur().type == token_type::name && look().type == token_type::op && look().text == "=") {
            ensure(!args.star_kwargs);
            std::string key = next().text;
            next();
            args.kw.emplace_back(std::move(key), parse_expression());
        } else {
            ensure(!args.star_args && !args.star_kwargs && args.kw.empty());
            args.pos.push_back(parse_expression());
        }
        require_comma = true;
    }
    expect_op(")");
    leave();
}

expr_ptr parser::parse_call(expr_ptr callee) {
    token at = cur();
    at.line = callee->loc.line, at.column = callee->loc.column;  // a call is where its callee starts
    auto c = make<call_expr>();
    c->callee = std::move(callee);
    parse_call_args(c->args);
    seal(*c, at);
    return c;
}

expr_ptr parser::parse_filter(expr_ptr node, bool start_inline) {
    while (is_op("|") || start_inline) {
        if (!start_inline) next();
        start_inline = false;
        const token name_tok = expect_name();
        auto f = make<filter_expr>();
        f->name = name_tok.text;
        while (skip_op(".")) f->name += "." + expect_name().text;
        if (is_op("(")) parse_call_args(f->args);
        f->input = std::move(node);
        seal(*f, name_tok);
        node = std::move(f);
    }
    return node;
}

expr_ptr parser::parse_test(expr_ptr node) {
    const token is_tok = next();
    const bool negated = skip_name("not");
    const token name_tok = expect_name();
    auto t = make<test_expr>();
    t->name = name_tok.text;
    while (skip_op(".")) t->name += "." + expect_name().text;
    const token & c = cur();
    const bool arg_start = c.type == token_type::name || c.type == token_type::string ||
                           c.type == token_type::integer || c.type == token_type::floating ||
                           (c.type == token_type::op && (c.text == "[" || c.text == "{"));
    if (is_op("(")) {
        parse_call_args(t->args);
    } else if (arg_start && !is_name("else") && !is_name("or") && !is_name("and")) {
        if (is_name("is")) fail(cur(), "You cannot chain multiple tests with is");
        t->args.pos.push_back(parse_postfix(parse_primary()));
    }
    t->input = std::move(node);
    seal(*t, is_tok);
    if (!negated) return t;
    auto n = make<unary_expr>(expr_kind::not_);
    n->operand = std::move(t);
    seal(*n, is_tok);
    return n;
}

static void to_target(expr_ptr & e, target & out, const std::string & source_name) {
    if (e->kind == expr_kind::name) {
        out.kind = target::kind_t::name;
        out.name = static_cast<name_expr &>(*e).name;
        out.loc = e->loc;
        return;
    }
    if (e->kind == expr_kind::tuple) {
        out.kind = target::kind_t::tuple;
        out.loc = e->loc;
        for (auto & item : static_cast<seq_expr &>(*e).items) {
            out.items.emplace_back();
            to_target(item, out.items.back(), source_name);
        }
        return;
    }
    throw error(error_kind::syntax, "can't assign to this expression", source_name, e->loc.line, e->loc.column);
}

target parser::parse_assign_target(bool with_tuple, bool name_only, std::initializer_list<const char *> extra_end,
                                   bool with_namespace) {
    const token start = cur();
    target t;
    t.loc = {start.line, start.column};
    if (with_namespace && look().type == token_type::op && look().text == ".") {
        t.kind = target::kind_t::ns_attr;
        t.name = expect_name().text;
        next();
        t.attr = expect_name().text;
        return t;
    }
    if (name_only) {
        t.name = expect_name().text;
        return t;
    }
    expr_ptr e = with_tuple ? parse_tuple(true, true, extra_end) : parse_primary();
    to_target(e, t, opts_.source_name);
    const std::string & n = t.name;
    if (t.kind == target::kind_t::name && (n == "true" || n == "false" || n == "none" || n == "True" ||
                                           n == "False" || n == "None")) {
        fail(start, "can't assign to special constant '" + n + "'");
    }
    return t;
}

}  // namespace jinja
