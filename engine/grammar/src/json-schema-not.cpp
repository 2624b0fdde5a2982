// `not`, presence formulas, if / then / else and dependent schemas for the JSON Schema compiler
// (json-schema-impl.h). A `not` is folded into the schema beside it where its form allows an
// exact result:
//   not {type: T}                 the types of T are taken away
//   not {enum: […]} / {const: x}  the values are excluded (k_not_values)
//   not {pattern: p}              a string that p does not match (k_not_patterns)
//   not {required: […]} and other presence-only forms (anyOf / oneOf / allOf / not of them)
//                                 a formula over the object's properties (k_presence)
//   not {minimum …} / {minLength …} / {maxItems …} … one bound: the opposite bound
//   not {properties: {p: S}, required, additionalProperties: false}
//                                 an anyOf: p present with a value S rejects, a required
//                                 property missing, a key outside the declared ones
//   not {not: S}                  S; not {anyOf: [A, B]}: not A and not B
// Every other form is an error naming `not` and its place. For oneOf (each branch without the
// others), `under` allows a smaller negation: parts that cannot be written are left out, so the
// result only rejects more. if / then / else becomes (if and then) or (not if and else); a
// dependent schema that is not presence-only becomes if {required} then the schema.
#include "json-schema-impl.h"

#include <algorithm>

namespace json_schema_detail {

namespace {

// The keywords of s that constrain values (annotations and unknown keywords left out).
json constraining(const json & s) {
    json out = json::object();
    if (!s.is_object()) return out;
    for (auto it = s.begin(); it != s.end(); ++it) {
        if (constraining_keyword(it.key())) out[it.key()] = it.value();
    }
    return out;
}

[[noreturn]] void unsupported(const std::string & path, const std::string & why) {
    fail("unsupported keyword 'not' at " + at(path) + " (" + why + ")");
}

// The types s allows (all six when it has no "type").
std::vector<std::string> allowed_types(const json & s) {
    std::vector<std::string> out;
    if (!s.contains("type")) return {"object", "array", "string", "number", "integer", "boolean", "null"};
    const json & t = s["type"];
    for (const json & x : t.is_array() ? t : json::array({t})) {
        if (x.is_string()) out.push_back(x.get<std::string>());
    }
    return out;
}

json as_type(const std::vector<std::string> & types) {
    if (types.size() == 1) return types[0];
    json t = json::array();
    for (const std::string & x : types) t.push_back(x);
    return t;
}

// s restricted to the types in `keep` (and integers where numbers are kept).
void keep_types(json & s, const std::vector<std::string> & keep, const std::string & path) {
    std::vector<std::string> out;
    for (const std::string & t : allowed_types(s)) {
        const bool kept = std::find(keep.begin(), keep.end(), t) != keep.end() ||
                          (t == "integer" && std::find(keep.begin(), keep.end(), "number") != keep.end());
        if (kept) out.push_back(t);
    }
    if (out.empty()) fail_empty("no value is left at " + at(path) + " once 'not' is applied");
    s["type"] = as_type(out);
}

void append(json & s, const char * key, const json & v) {
    if (!s.contains(key)) s[key] = json::array();
    s[key].push_back(v);
}

// A bound's opposite: not {minimum: m} is a number below m, and so on.
bool fold_bound(json & s, const json & n, const std::string & path) {
    static const std::map<std::string, std::pair<std::string, std::string>> opposite = {
        {"minimum", {"exclusiveMaximum", "number"}}, {"maximum", {"exclusiveMinimum", "number"}},
        {"exclusiveMinimum", {"maximum", "number"}}, {"exclusiveMaximum", {"minimum", "number"}},
        {"minLength", {"maxLength", "string"}},      {"maxLength", {"minLength", "string"}},
        {"minItems", {"maxItems", "array"}},         {"maxItems", {"minItems", "array"}},
        {"minProperties", {"maxProperties", "object"}}, {"maxProperties", {"minProperties", "object"}}};
    if (n.size() != 1) return false;
    const std::string k = n.begin().key();
    const json & v = n.begin().value();
    auto it = opposite.find(k);
    if (it == opposite.end() || !v.is_number()) return false;
    const auto & [other, type] = it->second;
    if (s.contains(other) && !s[other].is_number()) return false;
    for (const char * e : {"exclusiveMinimum", "exclusiveMaximum"}) {
        if (type == "number" && s.contains(e) && s[e].is_boolean()) return false;  // draft 4's form: kept apart
    }
    keep_types(s, {type}, path);
    json bound = v;
    if (type != "number") {  // counts: the opposite of >= m is <= m - 1
        const double m = v.get<double>();
        if (k.rfind("min", 0) == 0 && m < 1) fail_empty("no value is left at " + at(path) + " once 'not' is applied");
        bound = k.rfind("min", 0) == 0 ? m - 1 : m + 1;
    }
    if (s.contains(other) && s[other].is_number()) {  // the tighter of the two
        const bool upper = other.find("ax") != std::string::npos;
        const double a = s[other].get<double>(), b = bound.get<double>();
        bound = upper ? std::min(a, b) : std::max(a, b);
    }
    s[other] = bound;
    return true;
}

}  // namespace

std::optional<json> presence_formula(const schema_compiler & c, const json & s, const std::string & path, int depth) {
    if (depth > 16) return std::nullopt;
    const schema_compiler::nesting level(c, path);
    c.count_work(path);
    if (s.is_boolean()) return json(s.get<bool>());
    if (!s.is_object()) return std::nullopt;
    if (s.contains("$ref") && s["$ref"].is_string()) return presence_formula(c, c.inline_ref(s, path), path, depth + 1);
    json all = json::array({"and"});
    for (auto it = s.begin(); it != s.end(); ++it) {
        const std::string & k = it.key();
        const json & v = it.value();
        if (!constraining_keyword(k)) continue;
        if (k == "required" && v.is_array()) {
            for (const json & r : v) {
                if (!r.is_string()) return std::nullopt;
                all.push_back(json::array({"has", r}));
            }
        } else if (k == "not") {
            const auto f = presence_formula(c, v, path, depth + 1);
            if (!f) return std::nullopt;
            all.push_back(json::array({"not", *f}));
        } else if ((k == "anyOf" || k == "oneOf" || k == "allOf") && v.is_array() && !v.empty()) {
            json g = json::array({k == "anyOf" ? "or" : k == "oneOf" ? "one" : "and"});
            for (const json & b : v) {
                const auto f = presence_formula(c, b, path, depth + 1);
                if (!f) return std::nullopt;
                g.push_back(*f);
            }
            all.push_back(g);
        } else if (k == "type" && v == "object") {
            all.push_back(json::array({"object"}));
        } else {
            return std::nullopt;
        }
    }
    return all.size() == 1 ? json(true) : all.size() == 2 ? all[1] : all;
}

bool presence_eval(const json & f, const std::function<bool(const std::string &)> & has) {
    if (f.is_boolean()) return f.get<bool>();
    const std::string op = f[0].get<std::string>();
    if (op == "object") return has != nullptr;
    if (op == "has") return !has || has(f[1].get<std::string>());
    if (op == "not") return !presence_eval(f[1], has);
    size_t n = 0;
    for (size_t i = 1; i < f.size(); ++i) n += presence_eval(f[i], has) ? 1 : 0;
    if (op == "and") return n == f.size() - 1;
    if (op == "or") return n > 0;
    return n == 1;  // one
}

void presence_names(const json & f, std::set<std::string> & out) {
    if (!f.is_array()) return;
    if (f[0] == "has") {
        out.insert(f[1].get<std::string>());
        return;
    }
    for (size_t i = 1; i < f.size(); ++i) presence_names(f[i], out);
}

json schema_compiler::fold_presence_branches(const json & s, const char * key, const std::string & path) const {
    json formula = json::array({std::string(key) == "anyOf" ? "or" : "one"});
    for (const json & b : s[key]) {
        const auto f = presence_formula(*this, b, path);
        if (!f) return nullptr;
        formula.push_back(*f);
    }
    json out = s;
    out.erase(key);
    append(out, k_presence, formula);
    // how the branches read for a value that is not an object decides whether one may be valid
    if (!presence_eval(formula, nullptr)) keep_types(out, {"object"}, path);
    return out;
}

json schema_compiler::fold_not(const json & s, const std::string & path, bool under) const {
    const nesting level(*this, path);
    count_work(path);
    // copies of the parts only (s["not"] may be large: one copy of it is one step)
    json out = json::object();
    for (auto it = s.begin(); it != s.end(); ++it) {
        if (it.key() != "not") out[it.key()] = it.value();
    }
    const json & given = s["not"];
    // a reference whose negation is being folded already: folding it again would not end
    const bool ref = given.is_object() && given.contains("$ref") && given["$ref"].is_string();
    if (ref && std::find(negating_.begin(), negating_.end(), given["$ref"].get<std::string>()) != negating_.end()) {
        unsupported(path, "the negation of a recursive $ref '" + given["$ref"].get<std::string>() + "'");
    }
    struct negating {  // n's reference while it is folded
        std::vector<std::string> & refs;
        bool pushed;
        ~negating() {
            if (pushed) refs.pop_back();
        }
    } held{negating_, ref};
    if (ref) negating_.push_back(given["$ref"].get<std::string>());
    if (given.is_boolean()) {
        if (given.get<bool>() && under) fail_empty("'not' at " + at(path) + " rejects every value");
        if (given.get<bool>()) unsupported(path, "it rejects every value");
        return out;
    }
    json n = given.is_object() && given.contains("$ref") ? constraining(inline_ref(given, path)) : constraining(given);
    if (n.empty() && under) fail_empty("'not' at " + at(path) + " rejects every value");
    if (n.empty()) unsupported(path, "it rejects every value");
    if (n.size() == 1 && n.contains("not")) return merge(out, n["not"], path);
    if (n.size() == 1 && n.contains("anyOf") && n["anyOf"].is_array()) {
        for (const json & b : n["anyOf"]) {  // not (A or B): not A and not B
            json t = out;
            t["not"] = b;
            out = fold_not(t, path, under);
        }
        return out;
    }
    for (const char * key : {"allOf", "oneOf"}) {
        if (n.size() == 1 && n.contains(key) && n[key].is_array() && n[key].size() == 1) {
            json t = out;
            t["not"] = n[key][0];
            return fold_not(t, path, under);
        }
    }
    // presence-only forms: required lists and combinations of them
    if (const auto f = presence_formula(*this, n, path)) {
        const json negated = json::array({"not", *f});
        append(out, k_presence, negated);
        // a value that is not an object may fail n (then it passes not n) or satisfy it
        if (!presence_eval(negated, nullptr)) keep_types(out, {"object"}, path);
        return out;
    }
    if (n.size() == 1 && n.contains("type")) {
        std::vector<std::string> keep;
        const std::vector<std::string> gone = allowed_types(n);
        for (const std::string & t : allowed_types(out)) {
            const bool removed = std::find(gone.begin(), gone.end(), t) != gone.end() ||
                                 (t == "integer" && std::find(gone.begin(), gone.end(), "number") != gone.end());
            if (t == "number" && !removed && std::find(gone.begin(), gone.end(), "integer") != gone.end()) {
                unsupported(path, "numbers that are not integers");
            }
            if (!removed) keep.push_back(t);
        }
        if (keep.empty()) fail_empty("no value is left at " + at(path) + " once 'not' is applied");
        out["type"] = as_type(keep);
        return out;
    }
    const bool typed = n.contains("type");
    if ((n.contains("enum") || n.contains("const")) && n.size() == (typed ? 2u : 1u)) {
        json values = n.contains("enum") ? n["enum"] : json::array({n["const"]});
        if (!values.is_array()) unsupported(path, "'enum' is not an array");
        const json type_only = typed ? json{{"type", n["type"]}} : json::object();
        for (const json & v : values) {
            if (json_schema_validate(*this, type_only, v).value_or(false)) append(out, k_not_values, v);
        }
        return out;
    }
    if (n.contains("pattern") && n["pattern"].is_string() && n.size() == (typed ? 2u : 1u) && (!typed || n["type"] == "string")) {
        if (!typed) keep_types(out, {"string"}, path);  // a value that is not a string matches the pattern
        append(out, k_not_patterns, n["pattern"]);
        return out;
    }
    if (fold_bound(out, n, path)) return out;
    if (auto f = fold_not_properties(out, n, path, under)) return std::move(*f);  // it may be large: not copied
    if (under && n.size() > 1) return fold_not_conjuncts(out, n, path);
    unsupported(path, "this form of it cannot be enforced");
}

// not {properties: {p: S, …}, required: […]}: for an object, some p present with a value that
// S rejects, or a required property missing — an anyOf of those branches.
std::optional<json> schema_compiler::fold_not_properties(const json & out, const json & n, const std::string & path, bool under) const {
    for (auto it = n.begin(); it != n.end(); ++it) {
        const bool ok = (it.key() == "properties" && it.value().is_object()) || (it.key() == "required" && it.value().is_array()) ||
                        (it.key() == "type" && it.value() == "object") || (it.key() == "additionalProperties" && it.value() == false);
        if (!ok) return std::nullopt;
    }
    if (!n.contains("properties") && !n.contains("additionalProperties")) return std::nullopt;
    const json props = n.contains("properties") ? n["properties"] : json::object();
    json branches = json::array();
    if (n.contains("additionalProperties")) {  // some key that n does not declare
        json names = json::array();
        for (auto it = props.begin(); it != props.end(); ++it) names.push_back(it.key());
        branches.push_back({{k_key_outside, json::array({names})}});
    }
    for (auto it = props.begin(); it != props.end(); ++it) {
        count_work(path);
        if (it.value().is_boolean() && it.value().get<bool>()) continue;  // never fails
        if (it.value().is_object() && !constrains(it.value())) continue;
        if (under && !negatable(it.value(), path)) {  // a part of "not n" left out: a subset of it
            approximated_ = true;
            continue;
        }
        const char * negation = under ? k_not_any : "not";
        const json value_negated = under ? json{{negation, json::array({it.value()})}} : json{{negation, it.value()}};
        branches.push_back({{"required", json::array({it.key()})}, {"properties", {{it.key(), value_negated}}}});
    }
    if (n.contains("required") && !n["required"].empty()) branches.push_back({{"not", {{"required", n["required"]}}}});
    json result = out;
    if (!n.contains("type")) keep_types(result, {"object"}, path);  // a value that is not an object satisfies n
    if (branches.empty()) {
        if (!n.contains("type")) fail_empty("no value is left at " + at(path) + " once 'not' is applied");
        keep_types(result, {"array", "string", "number", "boolean", "null"}, path);
        return result;
    }
    json alternatives = json::object();
    alternatives["anyOf"] = std::move(branches);  // one per property: not copied
    return merge(std::move(result), alternatives, path);
}

// A subset of "not n" for n's keywords taken one by one (n holds when all of them do, so a value
// that fails one fails n): the union of the negations that fold, the others left out.
json schema_compiler::fold_not_conjuncts(const json & out, const json & n, const std::string & path) const {
    json alts = json::array();
    for (auto it = n.begin(); it != n.end(); ++it) {
        const json single = {{it.key(), it.value()}};
        if (negatable(single, path)) alts.push_back({{k_not_any, json::array({single})}});
        else approximated_ = true;
    }
    if (alts.empty()) unsupported(path, "this form of it cannot be enforced");
    return merge(out, json{{"anyOf", alts}}, path);
}

// Whether `not s` folds (its form is one fold_not accepts).
bool schema_compiler::negatable(const json & s, const std::string & path) const {
    const nesting level(*this, path);
    try {
        fold_not(json{{"not", s}}, path, true);
        return true;
    } catch (const schema_failure & f) {
        if (f.budget) throw;
        return f.empty;  // no value is left: that folds too
    }
}

// if / then / else: (if and then) or (not if and else); then / else without if do nothing.
json schema_compiler::fold_if(const json & s, const std::string & path) const {
    const nesting level(*this, path);
    json rest = s;
    for (const char * k : {"if", "then", "else"}) rest.erase(k);
    if (!s.contains("if")) return rest;
    const json cond = s["if"];
    try {
        fold_not(json{{"not", cond}}, path);  // the condition must be negatable
    } catch (const schema_failure & f) {
        if (f.budget) throw;
        if (!f.empty) fail("unsupported keyword 'if' at " + at(path) + " (its condition: " + f.message + ")");
    }
    const json yes = merge(cond, s.contains("then") ? s["then"] : json(true), path);
    const json no = merge(json{{"not", cond}}, s.contains("else") ? s["else"] : json(true), path);
    return merge(rest, json{{"anyOf", json::array({yes, no})}}, path);
}

// dependencies / dependentSchemas whose schema says more than which properties are present:
// "if the object has a, then S", folded as if / then (the other entries stay).
json schema_compiler::fold_dependent_schemas(const json & s, const std::string & path) const {
    const nesting level(*this, path);
    json out = s;
    for (const char * key : {"dependencies", "dependentSchemas"}) {
        if (!s.contains(key) || !s[key].is_object()) continue;
        for (auto it = s[key].begin(); it != s[key].end(); ++it) {
            if (it.value().is_array() || presence_formula(*this, it.value(), path)) continue;
            out[key].erase(it.key());
            const json cond = {{"type", "object"}, {"required", json::array({it.key()})}};
            out = merge(out, json{{"if", cond}, {"then", it.value()}}, path + "/" + key + "/" + it.key());
        }
        if (out[key].empty()) out.erase(key);
    }
    return out;
}

}  // namespace json_schema_detail
