// allOf merging for the JSON Schema compiler (json-schema-impl.h): two schemas become one that
// accepts exactly the values both accept, where their keywords can be combined (properties and
// required lists, types that intersect, enums, tighter bounds, patterns kept side by side, the
// object words with each side's additionalProperties applied to the other side's properties);
// anything else is an error naming the keyword.
#include "json-schema-impl.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace json_schema_detail {

namespace {

json intersect_types(const json & a, const json & b, const std::string & path) {
    auto list = [](const json & t) {
        std::vector<std::string> s;
        if (t.is_string()) s.push_back(t.get<std::string>());
        if (t.is_array()) {
            for (const json & x : t) {
                if (x.is_string()) s.push_back(x.get<std::string>());
            }
        }
        return s;
    };
    const std::vector<std::string> sa = list(a), sb = list(b);
    std::vector<std::string> out;
    auto has = [](const std::vector<std::string> & v, const char * t) { return std::find(v.begin(), v.end(), t) != v.end(); };
    for (const std::string & t : sa) {
        std::string keep;
        if (has(sb, t.c_str())) keep = t;
        else if (t == "integer" && has(sb, "number")) keep = "integer";
        else if (t == "number" && has(sb, "integer")) keep = "integer";
        if (!keep.empty() && !has(out, keep.c_str())) out.push_back(keep);
    }
    if (out.empty()) fail_empty("allOf at " + at(path) + ": the types have nothing in common");
    json r = json::array();
    for (const std::string & t : out) r.push_back(t);
    return r.size() == 1 ? r[0] : r;
}

bool is_false(const json & s) { return s.is_boolean() && !s.get<bool>(); }
bool is_true(const json & s) { return (s.is_boolean() && s.get<bool>()) || (s.is_object() && !constrains(s)); }

json words_of(const json & s, const char * key, const json & otherwise) { return s.contains(key) ? s[key] : otherwise; }

// Concatenated arrays (internal keywords and lists that both apply).
json concat(const json & a, const json & b) {
    json out = a.is_array() ? a : json::array({a});
    for (const json & x : b.is_array() ? b : json::array({b})) out.push_back(x);
    return out;
}

}  // namespace

// s with its $ref replaced by the target merged with s's other keywords (for merging).
json schema_compiler::inline_ref(const json & s, const std::string & path, int guard) const {
    if (!s.is_object() || !s.contains("$ref")) return s;
    if (guard > 16) fail("allOf at " + at(path) + ": $ref chain too deep to merge");
    const nesting level(*this, path);
    count_work(path);
    if (!s["$ref"].is_string()) fail("'$ref' at " + at(path) + " is not a string");
    json target = inline_ref(resolve_ref(s["$ref"].get<std::string>(), path), path, guard + 1);
    json rest = s;
    rest.erase("$ref");
    if (legacy_ref_ || !constrains(rest)) return target;
    return merge(target, rest, path, guard + 1);
}

namespace {

struct object_merge {
    const schema_compiler & c;
    const std::string & path;
    int guard;

    // The object words of a and b as one: each side's additionalProperties applies to the other
    // side's properties that it does not declare itself.
    void run(json & a, const json & b) const {
        const json pa = words_of(a, "properties", json::object()), pb = words_of(b, "properties", json::object());
        const json apa = words_of(a, "additionalProperties", true), apb = words_of(b, "additionalProperties", true);
        const json ppa = words_of(a, "patternProperties", json::object()), ppb = words_of(b, "patternProperties", json::object());
        if ((!ppa.empty() || !ppb.empty()) && ppa != ppb && (!is_true(apa) || !is_true(apb))) {
            fail("allOf at " + at(path) + ": cannot merge 'patternProperties' with another branch's 'additionalProperties'");
        }
        if ((!ppa.empty() && !pb.empty() && !is_true(apa)) || (!ppb.empty() && !pa.empty() && !is_true(apb))) {
            fail("allOf at " + at(path) + ": cannot merge 'properties' with another branch's 'patternProperties'");
        }
        json props = json::object();
        for (auto it = pa.begin(); it != pa.end(); ++it) {
            const json & other = pb.contains(it.key()) ? pb[it.key()] : apb;
            props[it.key()] = both(it.value(), other, "/properties/" + it.key());
        }
        for (auto it = pb.begin(); it != pb.end(); ++it) {
            if (!pa.contains(it.key())) props[it.key()] = both(apa, it.value(), "/properties/" + it.key());
        }
        if (!props.empty()) a["properties"] = props;
        if (!is_true(apa) || !is_true(apb)) a["additionalProperties"] = both(apa, apb, "/additionalProperties");
        json pp = ppa;
        for (auto it = ppb.begin(); it != ppb.end(); ++it) {
            pp[it.key()] = pp.contains(it.key()) ? both(pp[it.key()], it.value(), "/patternProperties") : it.value();
        }
        if (!pp.empty()) a["patternProperties"] = pp;
    }

    json both(const json & x, const json & y, const std::string & where) const {
        if (is_false(x) || is_false(y)) return false;
        if (is_true(x)) return y;
        if (is_true(y)) return x;
        return c.merge(x, y, path + where, guard + 1);
    }
};

const std::set<std::string> k_merged_object_words = {"properties", "additionalProperties", "patternProperties"};

}  // namespace

json schema_compiler::merge(json a, const json & b, const std::string & path, int guard) const {
    if (guard > 64) fail("allOf at " + at(path) + ": nested too deeply to merge");
    const nesting level(*this, path);
    count_work(path);
    if (b.is_boolean()) {
        if (!b.get<bool>()) fail_empty("allOf at " + at(path) + ": a branch is false (nothing is valid)");
        return a;
    }
    if (a.is_boolean()) {
        if (!a.get<bool>()) fail_empty("allOf at " + at(path) + ": a branch is false (nothing is valid)");
        return b;
    }
    // b itself unless it must change (a $ref inlined, a second condition folded): b may be large,
    // and a copy of it is one step of work however large it is.
    json b_changed;
    const json * pb = &b;
    auto has_ref = [](const json & s) { return s.is_object() && s.contains("$ref"); };
    if (has_ref(b)) pb = &(b_changed = inline_ref(b, path, guard));
    if (has_ref(a)) a = inline_ref(a, path, guard);
    if (a.is_object() && pb->is_object() && a.contains("if") && pb->contains("if")) pb = &(b_changed = fold_if(*pb, path));  // two conditions
    const json & bb = *pb;
    if (!bb.is_object() || !a.is_object()) fail("allOf at " + at(path) + ": a branch is not a schema");
    auto has_object_words = [](const json & s) {
        return std::any_of(k_merged_object_words.begin(), k_merged_object_words.end(), [&](const std::string & w) { return s.contains(w); });
    };
    const bool objects = has_object_words(a) && has_object_words(bb);
    if (objects) object_merge{*this, path, guard}.run(a, bb);
    for (auto it = bb.begin(); it != bb.end(); ++it) {
        const std::string & k = it.key();
        if (objects && k_merged_object_words.count(k)) continue;
        if (!a.contains(k) || a[k] == it.value()) {
            a[k] = it.value();
        } else if (constraining_keyword(k)) {
            combine(a, k, it.value(), path, guard);
        }
    }
    return a;
}

// Keyword k of both schemas, different: a's becomes what both say, or an error.
void schema_compiler::combine(json & a, const std::string & k, const json & v, const std::string & path, int guard) const {
    json & x = a[k];
    if (combine_lists(a, k, v) || combine_bounds(k, x, v)) return;
    if (k == "const") fail_empty("allOf at " + at(path) + ": the consts differ (no value is valid)");
    if (k == "type") {
        x = intersect_types(x, v, path);
    } else if (k == "enum" && x.is_array() && v.is_array()) {
        json kept = json::array();
        for (const json & e : x) {
            if (std::find(v.begin(), v.end(), e) != v.end()) kept.push_back(e);
        }
        if (kept.empty()) fail_empty("allOf at " + at(path) + ": the enums have no value in common");
        x = kept;
    } else if (k == "additionalProperties" && (is_false(x) || is_false(v))) {
        x = false;
    } else if ((k == "items" || k == "additionalProperties" || k == "additionalItems") && x.is_object() && v.is_object()) {
        x = merge(x, v, path + "/" + k, guard + 1);
    } else if (k == "not") {
        x = json{{"anyOf", json::array({x, v})}};
    } else if (k == "multipleOf" && x.is_number() && v.is_number()) {
        x = common_multiple(x, v, path);
    } else if (k == "dependencies" || k == "dependentRequired" || k == "dependentSchemas") {
        for (auto d = v.begin(); d != v.end(); ++d) {
            if (x.contains(d.key()) && x[d.key()] != d.value()) fail("allOf at " + at(path) + ": cannot merge '" + k + "' of two branches");
            x[d.key()] = d.value();
        }
    } else {
        fail("allOf at " + at(path) + ": cannot merge '" + k + "' of two branches");
    }
}

// Lists that all apply: required names, excluded values, patterns, allOf, and anyOf / oneOf
// (the second list waits beside the first, combined branch by branch when visited).
bool schema_compiler::combine_lists(json & a, const std::string & k, const json & v) const {
    json & x = a[k];
    static const std::set<std::string> sets = {"required", "allOf", k_not_values, k_not_patterns, k_patterns, k_not_any, k_key_outside};
    if (sets.count(k) && x.is_array() && v.is_array()) {
        for (const json & r : v) {
            if (std::find(x.begin(), x.end(), r) == x.end()) x.push_back(r);
        }
        return true;
    }
    if (k == k_presence) {
        x = concat(x, v);
        return true;
    }
    if (k == "pattern" && x.is_string() && v.is_string()) {
        json extra = a.contains(k_patterns) ? a[k_patterns] : json::array();
        extra.push_back(v);
        a[k_patterns] = extra;
        return true;
    }
    for (const auto & [list, more] : {std::pair{"anyOf", k_more_any_of}, std::pair{"oneOf", k_more_one_of}}) {
        if ((k != list && k != more) || !v.is_array()) continue;
        json waiting = a.contains(more) ? a[more] : json::array();
        if (k == more) {
            for (const json & l : v) waiting.push_back(l);
        } else {
            waiting.push_back(v);
        }
        a[more] = waiting;
        return true;
    }
    return false;
}

// Bounds: the tighter one.
bool schema_compiler::combine_bounds(const std::string & k, json & x, const json & v) {
    if (k == "uniqueItems" && x.is_boolean() && v.is_boolean()) {
        x = x.get<bool>() || v.get<bool>();
        return true;
    }
    if (!x.is_number() || !v.is_number()) return false;
    static const std::set<std::string> lower = {"minLength", "minItems", "minimum", "minProperties", "exclusiveMinimum"};
    static const std::set<std::string> upper = {"maxLength", "maxItems", "maximum", "maxProperties", "exclusiveMaximum"};
    if (lower.count(k)) x = std::max(x.get<double>(), v.get<double>());
    else if (upper.count(k)) x = std::min(x.get<double>(), v.get<double>());
    else return false;
    return true;
}

// Two multipleOf steps: their least common multiple (steps as decimals scaled to integers).
json schema_compiler::common_multiple(const json & x, const json & v, const std::string & path) {
    const auto a = json_decimal::parse(x.dump()), b = json_decimal::parse(v.dump());
    const size_t digits = std::max(a ? a->frac.size() : 0, b ? b->frac.size() : 0);
    auto scaled = [&](const json_decimal & d) -> uint64_t {
        const std::string all = d.whole + d.frac + std::string(digits - d.frac.size(), '0');
        return all.size() > 17 || d.negative ? 0 : std::stoull(all);
    };
    const uint64_t p = a ? scaled(*a) : 0, q = b ? scaled(*b) : 0;
    if (p == 0 || q == 0) fail("allOf at " + at(path) + ": cannot merge 'multipleOf' of two branches");
    const uint64_t l = p / std::gcd(p, q) * q;
    if (l / q != p / std::gcd(p, q) || l > uint64_t(1e17)) fail("allOf at " + at(path) + ": cannot merge 'multipleOf' of two branches");
    std::string text = std::to_string(l);
    if (digits > 0) {
        if (text.size() <= digits) text.insert(0, digits - text.size() + 1, '0');
        text.insert(text.size() - digits, ".");
    }
    return json::parse(text);
}

}  // namespace json_schema_detail
