// parser-stmt.cpp — statements: the template body, if/for/set/macro/call/filter/with/block/
// generation/print/break/continue, following jinja2's parser.
#include "parser.h"

namespace jinja {

stmt_list parser::parse_template() {
    stmt_list body = parse_body({}, nullptr);
    if (cur().type != token_type::eof) fail_unexpected(cur());
    return body;
}

static std::string tag_list(std::initializer_list<const char *> tags) {
    std::string s;
    size_t i = 0;
    for (const char * t : tags) {
        if (i++) s += i == tags.size() ? " or " : ", ";
        s += cat({"'", t, "'"});
    }
    return s;
}

// Statements up to (not including) one of end_tags: the current token is then the tag's name,
// just after its `{%`. Without end tags, up to the end of the template.
stmt_list parser::parse_body(std::initializer_list<const char *> end_tags, const char * innermost) {
    stmt_list body;
    enter(cur());
    while (true) {
        const token & t = cur();
        if (t.type == token_type::eof) {
            if (end_tags.size() == 0) break;
            fail(t, "Unexpected end of template. Jinja was looking for the following tags: " + tag_list(end_tags) +
                        ". The innermost block that needs to be closed is '" + innermost + "'.");
        }
        if (t.type == token_type::data) {
            auto s = std::make_unique<text_stmt>();
            s->loc = {t.line, t.column};
            s->text = t.text;
            next();
            body.push_back(std::move(s));
        } else if (t.type == token_type::var_begin) {
            auto s = std::make_unique<print_stmt>();
            s->loc = {t.line, t.column};
            next();
            s->e = parse_tuple();
            if (cur().type != token_type::var_end)
                fail(cur(), "expected token 'end of print statement', got '" + describe(cur()) + "'");
            next();
            body.push_back(std::move(s));
        } else if (t.type == token_type::block_begin) {
            next();
            for (const char * tag : end_tags) {
                if (is_name(tag)) {
                    leave();
                    return body;
                }
            }
            parse_statement(body);
            expect_block_end();
        } else {
            fail_unexpected(t);
        }
    }
    leave();
    return body;
}

stmt_list parser::parse_statements(std::initializer_list<const char *> end_tags, const char * innermost,
                                   bool drop_needle) {
    skip_op(":");
    expect_block_end();
    stmt_list body = parse_body(end_tags, innermost);
    if (drop_needle) next();
    return body;
}

void parser::parse_statement(stmt_list & out) {
    const token & t = cur();
    if (t.type != token_type::name) fail(t, "tag name expected");
    const std::string & n = t.text;
    stmt_ptr s;
    if (n == "for") {
        s = parse_for();
    } else if (n == "if") {
        s = parse_if();
    } else if (n == "set") {
        s = parse_set();
    } else if (n == "macro") {
        s = parse_macro();
    } else if (n == "call") {
        s = parse_call_block();
    } else if (n == "filter") {
        s = parse_filter_block();
    } else if (n == "with") {
        s = parse_with();
    } else if (n == "block") {
        s = parse_block("endblock");
    } else if (n == "generation") {
        s = parse_block("endgeneration");
    } else if (n == "print") {
        s = parse_print();
    } else if (n == "break") {
        s = parse_loop_control(stmt_kind::break_);
    } else if (n == "continue") {
        s = parse_loop_control(stmt_kind::continue_);
    } else if (n == "extends" || n == "include" || n == "import" || n == "from" || n == "autoescape") {
        fail(t, "tag '" + n + "' is not supported (templates are rendered standalone)");
    } else {
        fail(t, "Encountered unknown tag '" + n + "'.");
    }
    out.push_back(std::move(s));
}

stmt_ptr parser::parse_if() {
    auto node = std::make_unique<if_stmt>();
    const token start = next();
    node->loc = {start.line, start.column};
    while (true) {
        expr_ptr test = parse_tuple(false, false);
        stmt_list body = parse_statements({"elif", "else", "endif"}, "if", false);
        node->branches.emplace_back(std::move(test), std::move(body));
        const token tag = next();
        if (tag.text == "elif") continue;
        if (tag.text == "else") node->otherwise = parse_statements({"endif"}, "if", true);
        break;
    }
    return node;
}

stmt_ptr parser::parse_for() {
    auto node = std::make_unique<for_stmt>();
    const token start = next();
    node->loc = {start.line, start.column};
    node->tgt = parse_assign_target(true, false, {"in"});
    expect_name("in");
    node->iter = parse_tuple(false, false, {"recursive"});
    if (skip_name("if")) node->filter = parse_expression();
    node->recursive = skip_name("recursive");
    ++loop_depth_;
    node->body = parse_statements({"endfor", "else"}, "for", false);
    --loop_depth_;
    if (next().text == "else") node->otherwise = parse_statements({"endfor"}, "for", true);
    return node;
}

stmt_ptr parser::parse_set() {
    const token start = next();
    target tgt = parse_assign_target(true, false, {}, true);
    if (skip_op("=")) {
        auto node = std::make_unique<set_stmt>();
        node->loc = {start.line, start.column};
        node->tgt = std::move(tgt);
        node->e = parse_tuple();
        return node;
    }
    auto node = std::make_unique<set_block_stmt>();
    node->loc = {start.line, start.column};
    node->tgt = std::move(tgt);
    node->filter = parse_filter(nullptr, false);
    node->body = parse_statements({"endset"}, "set", true);
    return node;
}

void parser::parse_signature(macro_params & params) {
    expect_op("(");
    while (!is_op(")")) {
        if (!params.names.empty()) expect_op(",");
        const token name = cur();
        target t = parse_assign_target(true, true);
        params.names.push_back(t.name);
        params.locs.push_back({name.line, name.column});
        if (skip_op("=")) {
            params.defaults.push_back(parse_expression());
        } else {
            for (const auto & d : params.defaults) {
                if (d) fail(name, "non-default argument follows default argument");
            }
            params.defaults.push_back(nullptr);
        }
    }
    expect_op(")");
}

static void note_special_names(macro_stmt & m) {
    m.uses_varargs = mentions_name(m.body, "varargs");
    m.uses_kwargs = mentions_name(m.body, "kwargs");
    m.uses_caller = mentions_name(m.body, "caller");
}

stmt_ptr parser::parse_macro() {
    auto node = std::make_unique<macro_stmt>();
    const token start = next();
    node->loc = {start.line, start.column};
    node->name = parse_assign_target(true, true).name;
    parse_signature(node->params);
    const uint32_t saved_loops = loop_depth_;
    loop_depth_ = 0;
    node->body = parse_statements({"endmacro"}, "macro", true);
    loop_depth_ = saved_loops;
    note_special_names(*node);
    return node;
}

stmt_ptr parser::parse_call_block() {
    auto node = std::make_unique<call_block_stmt>();
    const token start = next();
    node->loc = {start.line, start.column};
    node->caller.loc = node->loc;
    node->caller.name = "caller";
    if (is_op("(")) parse_signature(node->caller.params);
    const token call_tok = cur();
    expr_ptr call = parse_expression();
    if (call->kind != expr_kind::call) fail(call_tok, "expected call");
    node->call.reset(static_cast<call_expr *>(call.release()));
    const uint32_t saved_loops = loop_depth_;
    loop_depth_ = 0;
    node->caller.body = parse_statements({"endcall"}, "call", true);
    loop_depth_ = saved_loops;
    note_special_names(node->caller);
    return node;
}

stmt_ptr parser::parse_filter_block() {
    auto node = std::make_unique<filter_block_stmt>();
    const token start = next();
    node->loc = {start.line, start.column};
    node->filter = parse_filter(nullptr, true);
    node->body = parse_statements({"endfilter"}, "filter", true);
    return node;
}

stmt_ptr parser::parse_with() {
    auto node = std::make_unique<with_stmt>();
    const token start = next();
    node->loc = {start.line, start.column};
    while (cur().type != token_type::block_end) {
        if (!node->assignments.empty()) expect_op(",");
        target t = parse_assign_target();
        expect_op("=");
        node->assignments.emplace_back(std::move(t), parse_expression());
    }
    node->body = parse_statements({"endwith"}, "with", true);
    return node;
}

// {% block name %}…{% endblock %} and {% generation %}…{% endgeneration %}: the body in place.
stmt_ptr parser::parse_block(const char * end_tag) {
    auto node = std::make_unique<block_stmt>();
    const token start = next();
    node->loc = {start.line, start.column};
    const bool is_block = start.text == "block";
    if (is_block) {
        expect_name();
        skip_name("scoped");
        skip_name("required");
    }
    node->body = parse_statements({end_tag}, start.text.c_str(), true);
    if (is_block && cur().type == token_type::name) next();  // {% endblock name %}
    return node;
}

stmt_ptr parser::parse_print() {
    auto node = std::make_unique<print_stmt>();
    const token start = next();
    node->loc = {start.line, start.column};
    node->e = parse_tuple();
    return node;
}

stmt_ptr parser::parse_loop_control(stmt_kind kind) {
    const token start = next();
    if (loop_depth_ == 0) fail(start, "'" + start.text + "' outside of a loop");
    auto node = std::make_unique<loop_control_stmt>(kind);
    node->loc = {start.line, start.column};
    return node;
}

}  // namespace jinja
