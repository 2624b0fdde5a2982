// ast.h — the parsed template: expression and statement nodes, each with its place in the
// source (line and column of the token that starts it).
#pragma once

#include "value.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace jinja {

struct location {
    uint32_t line = 0;
    uint32_t column = 0;
};

enum class expr_kind : uint8_t {
    literal, name, list, tuple, dict, getattr, getitem, slice, call, filter, test, negate, plus,
    not_, binary, concat, compare, and_, or_, cond,
};

enum class binary_op : uint8_t { add, sub, mul, div, floordiv, mod, pow };
enum class compare_op : uint8_t { eq, ne, lt, le, gt, ge, in, not_in };

struct expr {
    explicit expr(expr_kind k) : kind(k) {}
    virtual ~expr() = default;
    expr_kind kind;
    location loc;
    uint32_t depth = 1;  // the height of the subtree
};
using expr_ptr = std::unique_ptr<expr>;

struct literal_expr final : expr {
    literal_expr() : expr(expr_kind::literal) {}
    value val;
};

struct name_expr final : expr {
    name_expr() : expr(expr_kind::name) {}
    std::string name;
};

struct seq_expr final : expr {  // list and tuple displays, concat operands
    explicit seq_expr(expr_kind k) : expr(k) {}
    std::vector<expr_ptr> items;
};

struct dict_expr final : expr {
    dict_expr() : expr(expr_kind::dict) {}
    std::vector<std::pair<expr_ptr, expr_ptr>> items;
};

struct getattr_expr final : expr {
    getattr_expr() : expr(expr_kind::getattr) {}
    expr_ptr obj;
    std::string name;
};

struct getitem_expr final : expr {
    getitem_expr() : expr(expr_kind::getitem) {}
    expr_ptr obj;
    expr_ptr index;
};

struct slice_expr final : expr {  // obj[start:stop:step]; absent parts are null
    slice_expr() : expr(expr_kind::slice) {}
    expr_ptr obj, start, stop, step;
};

struct arg_list {
    std::vector<expr_ptr> pos;
    std::vector<std::pair<std::string, expr_ptr>> kw;
    expr_ptr star_args;    // *args
    expr_ptr star_kwargs;  // **kwargs
};

struct call_expr final : expr {
    call_expr() : expr(expr_kind::call) {}
    expr_ptr callee;
    arg_list args;
};

struct filter_expr final : expr {  // input | name(args); a null input is a filter block's body
    filter_expr() : expr(expr_kind::filter) {}
    expr_ptr input;
    std::string name;
    arg_list args;
};

struct test_expr final : expr {  // input is name(args)
    test_expr() : expr(expr_kind::test) {}
    expr_ptr input;
    std::string name;
    arg_list args;
};

struct unary_expr final : expr {  // negate, plus, not_
    explicit unary_expr(expr_kind k) : expr(k) {}
    expr_ptr operand;
};

struct binary_expr final : expr {  // binary (op), and_, or_
    explicit binary_expr(expr_kind k) : expr(k) {}
    binary_op op = binary_op::add;
    expr_ptr left, right;
};

struct compare_expr final : expr {
    compare_expr() : expr(expr_kind::compare) {}
    expr_ptr first;
    std::vector<std::pair<compare_op, expr_ptr>> rest;
};

struct cond_expr final : expr {  // then if test else otherwise (otherwise may be null)
    cond_expr() : expr(expr_kind::cond) {}
    expr_ptr test, then, otherwise;
};

// ---- statements ----

enum class stmt_kind : uint8_t {
    text, print, if_, for_, set, set_block, macro, call_block, filter_block, with, block, break_, continue_,
};

struct stmt {
    explicit stmt(stmt_kind k) : kind(k) {}
    virtual ~stmt() = default;
    stmt_kind kind;
    location loc;
};
using stmt_ptr = std::unique_ptr<stmt>;
using stmt_list = std::vector<stmt_ptr>;

// An assignment target: a name, ns.attr, or a (nested) tuple of names.
struct target {
    enum class kind_t : uint8_t { name, ns_attr, tuple } kind = kind_t::name;
    std::string name;
    std::string attr;
    std::vector<target> items;
    location loc;
};

struct text_stmt final : stmt {
    text_stmt() : stmt(stmt_kind::text) {}
    std::string text;
};

struct print_stmt final : stmt {
    print_stmt() : stmt(stmt_kind::print) {}
    expr_ptr e;
};

struct if_stmt final : stmt {
    if_stmt() : stmt(stmt_kind::if_) {}
    std::vector<std::pair<expr_ptr, stmt_list>> branches;
    stmt_list otherwise;
};

struct for_stmt final : stmt {
    for_stmt() : stmt(stmt_kind::for_) {}
    target tgt;
    expr_ptr iter;
    expr_ptr filter;  // for x in y if filter
    stmt_list body;
    stmt_list otherwise;
    bool recursive = false;
};

struct set_stmt final : stmt {
    set_stmt() : stmt(stmt_kind::set) {}
    target tgt;
    expr_ptr e;
};

struct set_block_stmt final : stmt {
    set_block_stmt() : stmt(stmt_kind::set_block) {}
    target tgt;
    expr_ptr filter;  // a filter chain over the body (innermost input null), or null
    stmt_list body;
};

struct macro_params {
    std::vector<std::string> names;
    std::vector<expr_ptr> defaults;  // one per name; null where there is no default
    std::vector<location> locs;
};

struct macro_stmt final : stmt {
    macro_stmt() : stmt(stmt_kind::macro) {}
    std::string name;
    macro_params params;
    stmt_list body;
    bool uses_varargs = false, uses_kwargs = false, uses_caller = false;
};

struct call_block_stmt final : stmt {
    call_block_stmt() : stmt(stmt_kind::call_block) {}
    std::unique_ptr<call_expr> call;
    macro_stmt caller;  // the body as the macro `caller`
};

struct filter_block_stmt final : stmt {
    filter_block_stmt() : stmt(stmt_kind::filter_block) {}
    expr_ptr filter;
    stmt_list body;
};

struct with_stmt final : stmt {
    with_stmt() : stmt(stmt_kind::with) {}
    std::vector<std::pair<target, expr_ptr>> assignments;
    stmt_list body;
};

struct block_stmt final : stmt {  // {% block %} and {% generation %}: the body, rendered in place
    block_stmt() : stmt(stmt_kind::block) {}
    stmt_list body;
};

struct loop_control_stmt final : stmt {
    explicit loop_control_stmt(stmt_kind k) : stmt(k) {}
};

}  // namespace jinja

namespace jinja {
struct program {
    std::string source_name;
    stmt_list root;
};
}  // namespace jinja
