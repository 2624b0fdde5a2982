// ast-walk.cpp — mentions_name: whether a statement list reads a name (jinja2 gives a macro its
// `varargs`, `kwargs` and `caller` only when its body uses them).
#include "parser.h"

namespace jinja {

static bool expr_mentions(const expr * e, std::string_view name);

static bool args_mention(const arg_list & a, std::string_view name) {
    for (const auto & p : a.pos) {
        if (expr_mentions(p.get(), name)) return true;
    }
    for (const auto & [k, v] : a.kw) {
        if (expr_mentions(v.get(), name)) return true;
    }
    return expr_mentions(a.star_args.get(), name) || expr_mentions(a.star_kwargs.get(), name);
}

static bool expr_mentions(const expr * e, std::string_view name) {
    if (!e) return false;
    switch (e->kind) {
        case expr_kind::name: return static_cast<const name_expr *>(e)->name == name;
        case expr_kind::list:
        case expr_kind::tuple:
        case expr_kind::concat:
            for (const auto & i : static_cast<const seq_expr *>(e)->items) {
                if (expr_mentions(i.get(), name)) return true;
            }
            return false;
        case expr_kind::dict:
            for (const auto & [k, v] : static_cast<const dict_expr *>(e)->items) {
                if (expr_mentions(k.get(), name) || expr_mentions(v.get(), name)) return true;
            }
            return false;
        case expr_kind::getattr: return expr_mentions(static_cast<const getattr_expr *>(e)->obj.get(), name);
        case expr_kind::getitem: {
            auto * g = static_cast<const getitem_expr *>(e);
            return expr_mentions(g->obj.get(), name) || expr_mentions(g->index.get(), name);
        }
        case expr_kind::slice: {
            auto * s = static_cast<const slice_expr *>(e);
            return expr_mentions(s->obj.get(), name) || expr_mentions(s->start.get(), name) ||
                   expr_mentions(s->stop.get(), name) || expr_mentions(s->step.get(), name);
        }
        case expr_kind::call: {
            auto * c = static_cast<const call_expr *>(e);
            return expr_mentions(c->callee.get(), name) || args_mention(c->args, name);
        }
        case expr_kind::filter: {
            auto * f = static_cast<const filter_expr *>(e);
            return expr_mentions(f->input.get(), name) || args_mention(f->args, name);
        }
        case expr_kind::test: {
            auto * t = static_cast<const test_expr *>(e);
            return expr_mentions(t->input.get(), name) || args_mention(t->args, name);
        }
        case expr_kind::negate:
        case expr_kind::plus:
        case expr_kind::not_: return expr_mentions(static_cast<const unary_expr *>(e)->operand.get(), name);
        case expr_kind::binary:
        case expr_kind::and_:
        case expr_kind::or_: {
            auto * b = static_cast<const binary_expr *>(e);
            return expr_mentions(b->left.get(), name) || expr_mentions(b->right.get(), name);
        }
        case expr_kind::compare: {
            auto * c = static_cast<const compare_expr *>(e);
            if (expr_mentions(c->first.get(), name)) return true;
            for (const auto & [op, x] : c->rest) {
                if (expr_mentions(x.get(), name)) return true;
            }
            return false;
        }
        case expr_kind::cond: {
            auto * c = static_cast<const cond_expr *>(e);
            return expr_mentions(c->test.get(), name) || expr_mentions(c->then.get(), name) ||
                   expr_mentions(c->otherwise.get(), name);
        }
        default: return false;
    }
}

static bool stmt_mentions(const stmt & s, std::string_view name) {
    switch (s.kind) {
        case stmt_kind::print: return expr_mentions(static_cast<const print_stmt &>(s).e.get(), name);
        case stmt_kind::if_: {
            auto & n = static_cast<const if_stmt &>(s);
            for (const auto & [test, body] : n.branches) {
                if (expr_mentions(test.get(), name) || mentions_name(body, name)) return true;
            }
            return mentions_name(n.otherwise, name);
        }
        case stmt_kind::for_: {
            auto & n = static_cast<const for_stmt &>(s);
            return expr_mentions(n.iter.get(), name) || expr_mentions(n.filter.get(), name) ||
                   mentions_name(n.body, name) || mentions_name(n.otherwise, name);
        }
        case stmt_kind::set: return expr_mentions(static_cast<const set_stmt &>(s).e.get(), name);
        case stmt_kind::set_block: {
            auto & n = static_cast<const set_block_stmt &>(s);
            return expr_mentions(n.filter.get(), name) || mentions_name(n.body, name);
        }
        case stmt_kind::macro: return false;  // a nested macro has its own
        case stmt_kind::call_block: {
            auto & n = static_cast<const call_block_stmt &>(s);
            return expr_mentions(n.call.get(), name) || mentions_name(n.caller.body, name);
        }
        case stmt_kind::filter_block: {
            auto & n = static_cast<const filter_block_stmt &>(s);
            return expr_mentions(n.filter.get(), name) || mentions_name(n.body, name);
        }
        case stmt_kind::with: {
            auto & n = static_cast<const with_stmt &>(s);
            for (const auto & [t, e] : n.assignments) {
                if (expr_mentions(e.get(), name)) return true;
            }
            return mentions_name(n.body, name);
        }
        case stmt_kind::block: return mentions_name(static_cast<const block_stmt &>(s).body, name);
        default: return false;
    }
}

bool mentions_name(const stmt_list & body, std::string_view name) {
    for (const auto & s : body) {
        if (stmt_mentions(*s, name)) return true;
    }
    return false;
}

}  // namespace jinja
