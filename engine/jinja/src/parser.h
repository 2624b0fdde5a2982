// parser.h — tokens to the syntax tree, a recursive-descent parser with jinja2's grammar and
// operator precedence (condexpr < or < and < not < compare < + - < ~ < * / // % < ** < unary <
// postfix, filters and tests). Nesting (recursion and tree height) is bounded.
#pragma once

#include "ast.h"
#include "lexer.h"

#include <initializer_list>
#include <string_view>

namespace jinja {

class parser {
public:
    parser(std::vector<token> tokens, const parse_options & opts);

    stmt_list parse_template();

    // ---- expressions (parser-expr.cpp) ----
    expr_ptr parse_expression(bool with_condexpr = true);
    expr_ptr parse_tuple(bool simplified = false, bool with_condexpr = true,
                         std::initializer_list<const char *> extra_end = {}, bool explicit_parens = false);
    expr_ptr parse_primary();
    expr_ptr parse_postfix(expr_ptr node);
    expr_ptr parse_filter(expr_ptr node, bool start_inline);
    void parse_call_args(arg_list & args);
    target parse_assign_target(bool with_tuple = true, bool name_only = false,
                               std::initializer_list<const char *> extra_end = {}, bool with_namespace = false);

private:
    std::vector<token> toks_;
    size_t pos_ = 0;
    parse_options opts_;
    uint32_t nesting_ = 0;    // current recursion depth (expressions and statement bodies)
    uint32_t loop_depth_ = 0; // for break/continue

    // ---- token stream ----
    const token & cur() const { return toks_[pos_]; }
    const token & look() const { return toks_[pos_ + 1 < toks_.size() ? pos_ + 1 : pos_]; }
    const token & next() { return toks_[pos_ < toks_.size() - 1 ? pos_++ : pos_]; }
    bool is_op(const char * op) const { return cur().type == token_type::op && cur().text == op; }
    bool is_name(const char * name) const { return cur().type == token_type::name && cur().text == name; }
    bool skip_op(const char * op);
    bool skip_name(const char * name);
    void expect_op(const char * op);
    const token & expect_name();
    void expect_name(const char * name);
    void expect_block_end();
    [[noreturn]] void fail(const token & at, const std::string & msg) const;
    [[noreturn]] void fail_unexpected(const token & at) const;
    std::string describe(const token & t) const;
    void enter(const token & at);
    void leave() { --nesting_; }
    void seal(expr & e, const token & at);
    bool is_tuple_end(std::initializer_list<const char *> extra_end) const;

    expr_ptr parse_condexpr();
    expr_ptr parse_or();
    expr_ptr parse_and();
    expr_ptr parse_not();
    expr_ptr parse_compare();
    expr_ptr parse_math1();
    expr_ptr parse_concat();
    expr_ptr parse_math2();
    expr_ptr parse_pow();
    expr_ptr parse_unary(bool with_filter);
    expr_ptr parse_filter_expr(expr_ptr node);
    expr_ptr parse_test(expr_ptr node);
    expr_ptr parse_subscript(expr_ptr node);
    expr_ptr parse_subscribed();
    expr_ptr parse_list_or_dict();
    expr_ptr parse_call(expr_ptr callee);

    // ---- statements (parser-stmt.cpp) ----
    stmt_list parse_body(std::initializer_list<const char *> end_tags, const char * innermost);
    stmt_list parse_statements(std::initializer_list<const char *> end_tags, const char * innermost,
                               bool drop_needle);
    void parse_statement(stmt_list & out);
    stmt_ptr parse_if();
    stmt_ptr parse_for();
    stmt_ptr parse_set();
    stmt_ptr parse_macro();
    void parse_signature(macro_params & params);
    stmt_ptr parse_call_block();
    stmt_ptr parse_filter_block();
    stmt_ptr parse_with();
    stmt_ptr parse_block(const char * end_tag);
    stmt_ptr parse_print();
    stmt_ptr parse_loop_control(stmt_kind kind);
};

// Whether a name is read anywhere in the statements (macro bodies: varargs, kwargs, caller).
bool mentions_name(const stmt_list & body, std::string_view name);

}  // namespace jinja
