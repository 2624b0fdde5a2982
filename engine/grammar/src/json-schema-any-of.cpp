// anyOf and oneOf for the JSON Schema compiler (json-schema-impl.h). anyOf is the union of its
// branches, each merged with the keywords beside it. oneOf is the same union when its branches
// are disjoint (different types, different listed values, or a property both require with
// different listed values); otherwise, for up to four branches, each branch is compiled with
// the negation of the others (when `not` can fold them, and the grammar stays within a bound);
// past that, oneOf is compiled as anyOf (a value matching several branches is accepted).
#include "json-schema-impl.h"

#include <algorithm>

namespace json_schema_detail {

namespace {

constexpr size_t k_max_exact_one_of = 4;
constexpr size_t k_one_of_work = 20000;   // what one attempt at an exact oneOf may spend
constexpr size_t k_one_of_rules = 1500;   // and the rules it may add

std::vector<std::string> type_list(const json & s) {
    std::vector<std::string> out;
    if (!s.is_object() || !s.contains("type")) return {"object", "array", "string", "number", "boolean", "null"};
    for (const json & t : s["type"].is_array() ? s["type"] : json::array({s["type"]})) {
        if (!t.is_string()) continue;
        out.push_back(t == "integer" ? "number" : t.get<std::string>());
    }
    return out;
}

// The values s lists (enum or const), or null when it lists none.
json listed(const json & s) {
    if (!s.is_object()) return nullptr;
    if (s.contains("const")) return json::array({s["const"]});
    if (s.contains("enum") && s["enum"].is_array()) return s["enum"];
    return nullptr;
}

bool no_common_value(const json & a, const json & b) {
    if (a.is_null() || b.is_null()) return false;
    for (const json & x : a) {
        if (std::find(b.begin(), b.end(), x) != b.end()) return false;
    }
    return true;
}

bool requires_name(const json & s, const std::string & name) {
    if (!s.contains("required") || !s["required"].is_array()) return false;
    return std::find(s["required"].begin(), s["required"].end(), name) != s["required"].end();
}

}  // namespace

// Whether no value satisfies both a and b, judged from their types, listed values, and (when
// one of them allows only objects) a property both require whose listed values differ.
bool schema_compiler::disjoint(const json & x, const json & y, const std::string & path) const {
    const json a = inline_ref(x, path), b = inline_ref(y, path);
    if (!a.is_object() || !b.is_object()) return false;
    const std::vector<std::string> ta = type_list(a), tb = type_list(b);
    if (std::none_of(ta.begin(), ta.end(), [&](const std::string & t) { return std::find(tb.begin(), tb.end(), t) != tb.end(); })) {
        return true;
    }
    if (no_common_value(listed(a), listed(b))) return true;
    // a discriminating property tells objects apart; a value that is not an object must fail one
    const bool objects_only = ta == std::vector<std::string>{"object"} || tb == std::vector<std::string>{"object"};
    if (!objects_only || !a.contains("properties") || !b.contains("properties")) return false;
    for (auto it = a["properties"].begin(); it != a["properties"].end(); ++it) {
        if (!b["properties"].contains(it.key()) || !requires_name(a, it.key()) || !requires_name(b, it.key())) continue;
        if (no_common_value(listed(inline_ref(it.value(), path)), listed(inline_ref(b["properties"][it.key()], path)))) return true;
    }
    return false;
}

// The union of the branches, each merged with rest and (others: oneOf) with the negation of
// every other branch.
std::string schema_compiler::any_of_branches(const json & rest, const json & branches, const json * others, const std::string & key,
                                             const std::string & path, const std::string & hint, size_t * dropped) {
    const bool has_rest = constrains(rest);
    std::string alts;
    for (size_t i = 0; i < branches.size(); ++i) {
        const std::string where = path + "/" + key + "/" + std::to_string(i);
        if (branches[i].is_boolean() && !branches[i].get<bool>()) continue;  // a false branch adds nothing
        std::optional<std::string> one;
        try {
            // the shared keywords first: their properties keep their places, the branch's new ones follow
            json branch = has_rest ? merge(rest, branches[i], where) : branches[i];
            json nots = json::array();
            for (size_t j = 0; others && j < others->size(); ++j) {
                if (j != i) nots.push_back((*others)[j]);
            }
            if (!nots.empty()) branch = merge(branch, json{{k_not_any, nots}}, where);
            one = try_visit(branch, where, hint + "-" + std::to_string(i));
        } catch (const schema_failure & f) {
            if (!f.empty) throw;  // the merge itself found no value: the branch adds nothing
        }
        if (one) alts += (alts.empty() ? "" : " | ") + *one;
        else if (dropped) ++*dropped;
    }
    if (alts.empty()) fail_empty("'" + key + "' at " + at(path) + " has no branch that a value satisfies");
    return add_rule(hint, alts);
}

std::string schema_compiler::visit_any_of(const json & s, const char * key, const std::string & path, const std::string & hint) {
    if (!s[key].is_array() || s[key].empty()) fail(std::string("'") + key + "' at " + at(path) + " is not a non-empty array");
    // branches that only say which properties an object has become one formula of the object
    const json folded = fold_presence_branches(s, key, path);
    if (!folded.is_null()) return visit(folded, path, hint);
    json rest = s;
    rest.erase(key);
    const char * more = std::string(key) == "anyOf" ? k_more_any_of : k_more_one_of;
    if (rest.contains(more)) {  // the next list of the same kind that waits
        rest[key] = rest[more][0];
        rest[more].erase(0);
        if (rest[more].empty()) rest.erase(more);
    }
    const json & branches = s[key];
    auto pairwise_disjoint = [&] {
        for (size_t i = 0; i < branches.size(); ++i) {
            for (size_t j = i + 1; j < branches.size(); ++j) {
                if (!disjoint(branches[i], branches[j], path)) return false;
            }
        }
        return true;
    };
    if (std::string(key) == "anyOf" || branches.size() > k_max_exact_one_of || pairwise_disjoint()) {
        return any_of_branches(rest, branches, nullptr, key, path, hint);
    }
    // oneOf with branches that may overlap: each one without the others, when that folds. An
    // attempt that failed is not made again for the same schema at the same depth or deeper (a
    // recursive schema meets the same oneOf at every level: retrying each would be exponential).
    const std::string attempt = s.dump();
    if (auto it = one_of_failed_.find(attempt); it != one_of_failed_.end() && depth_ >= it->second) {
        return any_of_branches(rest, branches, nullptr, key, path, hint);
    }
    const checkpoint c = save();
    const size_t limit = work_limit_;
    const bool outer = approximated_;
    work_limit_ = std::min(limit, work_ + k_one_of_work);
    approximated_ = false;
    size_t dropped = 0;
    std::optional<std::string> r;
    try {
        r = any_of_branches(rest, branches, &branches, key, path, hint, &dropped);
    } catch (const schema_failure & f) {
        if (f.budget) throw;
        if (f.empty && !approximated_) {
            work_limit_ = limit;
            approximated_ = outer;
            throw;
        }
    }
    // a smaller negation may have emptied a branch; too large a grammar is not worth it either
    const bool lossy = (approximated_ && (!r || dropped > 0)) || order_.size() - c.rules > k_one_of_rules;
    work_limit_ = limit;
    approximated_ = outer || (approximated_ && !lossy);
    if (r && !lossy) return *r;
    restore(c);
    work_ = c.work;
    auto & failed_at = one_of_failed_.emplace(attempt, depth_).first->second;
    failed_at = std::min(failed_at, depth_);
    return any_of_branches(rest, branches, nullptr, key, path, hint);
}

}  // namespace json_schema_detail
