// JSON Schema → GBNF → grammar (grammar/json-schema.h). The compiler walks the schema and writes
// one GBNF rule per schema node that needs one (named after its place: "root-properties-name"),
// with shared rules for JSON's own pieces (ws, strings, numbers, any value). $ref targets get a
// rule each, named before they are compiled, so recursive schemas become recursive rules. This
// file holds the walk itself ($ref, allOf, anyOf / oneOf, not, enum / const, types); objects,
// arrays, strings and numbers have files of their own.
#include "grammar/json-schema.h"

#include "grammar/gbnf.h"
#include "grammar/json-ordered-read.h"
#include "json-schema-impl.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <optional>
#include <vector>

namespace json_schema_detail {

const char * const k_not_values = "\x01not-values";
const char * const k_not_patterns = "\x01not-patterns";
const char * const k_presence = "\x01presence";
const char * const k_patterns = "\x01patterns";
const char * const k_more_any_of = "\x01more-anyOf";
const char * const k_more_one_of = "\x01more-oneOf";
const char * const k_not_any = "\x01not-any";
const char * const k_key_outside = "\x01key-outside";

namespace {

// The rules every compiled schema may use.
const char * const k_json_rules =
    "ws ::= (\" \" | \"\\n\" [ \\t]{0,20})?\n"
    "json-char ::= [^\"\\\\\\x00-\\x1F] | \"\\\\\" ([\"\\\\/bfnrt] | \"u\" ([0-9a-cA-CefEF] [0-9a-fA-F]{3} | [dD] [0-7] [0-9a-fA-F]{2}))\n"
    "json-string ::= \"\\\"\" json-char* \"\\\"\"\n"
    "json-int ::= \"-\"? (\"0\" | [1-9] [0-9]*)\n"
    "json-number ::= json-int (\".\" [0-9]+)? ([eE] [-+]? [0-9]+)?\n"
    "json-bool ::= \"true\" | \"false\"\n"
    "json-null ::= \"null\"\n"
    "json-value ::= json-object | json-array | json-string | json-number | json-bool | json-null\n"
    "json-object ::= \"{\" ws (json-string ws \":\" ws json-value (ws \",\" ws json-string ws \":\" ws json-value)*)? ws \"}\"\n"
    "json-array ::= \"[\" ws (json-value (ws \",\" ws json-value)*)? ws \"]\"\n";

// Keywords that constrain values and that this compiler cannot enforce.
const std::set<std::string> k_unsupported = {
    "propertyNames", "contains", "minContains", "maxContains",
    "unevaluatedProperties", "unevaluatedItems", "$dynamicRef", "$recursiveRef"};

// The total work allowed, attempts that were undone included, as a multiple of max_work.
constexpr size_t k_total_work_factor = 4;

// A place for a budget's message: long paths (a schema nested thousands of levels) cut short.
std::string short_at(const std::string & path) {
    const std::string p = at(path);
    return p.size() > 200 ? p.substr(0, 200) + "…" : p;
}

std::string rule_name_part(const std::string & s) {
    std::string out;
    for (char c : s) {
        const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
        out += ok ? c : '-';
    }
    if (out.size() > 40) out.resize(40);
    return out.empty() ? "x" : out;
}

// The name of the rule defined on line `line` (1-based) of compiled GBNF text: named after the
// place in the schema it comes from.
std::string rule_at_line(const std::string & gbnf, uint32_t line) {
    size_t pos = 0;
    for (uint32_t l = 1; l < line && pos != std::string::npos; ++l) {
        pos = gbnf.find('\n', pos);
        if (pos != std::string::npos) ++pos;
    }
    if (pos == std::string::npos) return "?";
    return gbnf.substr(pos, std::min(gbnf.find(' ', pos), pos + 80) - pos);
}

// Keys that start with \x01 are the compiler's own internal keywords (k_not_values, …): in a
// schema they are unknown keywords, ignored like any other, so they are taken out before compiling
// (walked with a work list, not recursion). Listed values (enum, const) and annotations are data,
// not schemas: their keys are kept.
void drop_internal_keys(json & doc) {
    static const std::set<std::string> data = {"enum", "const", "default", "examples"};
    std::vector<json *> todo = {&doc};
    while (!todo.empty()) {
        json * v = todo.back();
        todo.pop_back();
        if (v->is_object()) {
            std::vector<std::string> internal;
            for (auto it = v->begin(); it != v->end(); ++it) {
                if (!it.key().empty() && it.key()[0] == '\x01') internal.push_back(it.key());
            }
            for (const std::string & k : internal) v->erase(k);
            for (auto it = v->begin(); it != v->end(); ++it) {
                if (!data.count(it.key())) todo.push_back(&it.value());
            }
        } else if (v->is_array()) {
            for (json & kid : *v) todo.push_back(&kid);
        }
    }
}

}  // namespace

void fail(const std::string & m) { throw schema_failure{m, false}; }

void fail_empty(const std::string & m) { throw schema_failure{m, true}; }

void fail_budget(const std::string & m) { throw schema_failure{m, false, true}; }

std::string at(const std::string & path) { return path.empty() ? "/" : path; }

bool constrains(const json & s) {
    if (!s.is_object()) return !(s.is_boolean() && s.get<bool>());
    for (auto it = s.begin(); it != s.end(); ++it) {
        if (constraining_keyword(it.key()) || it.key() == "$ref") return true;
    }
    return false;
}

const std::set<std::string> & object_words() {
    static const std::set<std::string> w = {"properties", "required", "additionalProperties", "patternProperties",
                                            "minProperties", "maxProperties", "dependencies", "dependentRequired",
                                            "dependentSchemas", k_presence, k_key_outside};
    return w;
}
const std::set<std::string> & array_words() {
    static const std::set<std::string> w = {"items", "prefixItems", "minItems", "maxItems", "additionalItems", "uniqueItems"};
    return w;
}
const std::set<std::string> & string_words() {
    static const std::set<std::string> w = {"minLength", "maxLength", "pattern", "format", k_not_patterns, k_patterns};
    return w;
}
const std::set<std::string> & number_words() {
    static const std::set<std::string> w = {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"};
    return w;
}

schema_compiler::schema_compiler(const json & root, const json_schema_options & options)
    : schema_compiler(root, options, std::chrono::steady_clock::now()) {}

schema_compiler::schema_compiler(const json & root, const json_schema_options & options,
                                 std::chrono::steady_clock::time_point start)
    : root_(root), opts_(options), work_limit_(options.max_work) {
    deadline_ = start + std::chrono::milliseconds(opts_.max_time_ms);
    used_names_ = {"root", "ws", "json-char", "json-string", "json-int", "json-number",
                   "json-bool", "json-null", "json-value", "json-object", "json-array"};
    if (root.is_object() && root.contains("$schema") && root["$schema"].is_string()) {
        const std::string draft = root["$schema"].get<std::string>();
        legacy_ref_ = draft.find("draft-0") != std::string::npos;
    }
}

std::string schema_compiler::compile() {
    const std::string body = visit(root_, "", "root");
    std::string out = "root ::= " + body + "\n";
    for (const std::string & name : order_) out += name + " ::= " + rules_[name] + "\n";
    out += k_json_rules;
    return out;
}

std::string schema_compiler::unique_name(const std::string & hint) {
    const std::string base = rule_name_part(hint);
    std::string name = base;
    int & next = name_counters_[base];  // the next suffix to try for this base
    if (next == 0) next = 2;
    while (used_names_.count(name)) name = base + "-" + std::to_string(next++);
    used_names_.insert(name);
    return name;
}

void schema_compiler::define(const std::string & name, const std::string & body) {
    gbnf_bytes_ += name.size() + body.size();
    if (rules_.size() >= opts_.max_rules) {  // the rules now: an attempt that is undone gives them back
        fail("the schema is too large to compile at " + short_at(where_ ? *where_ : "") + " (over " +
             std::to_string(opts_.max_rules) + " grammar rules)");
    }
    if (gbnf_bytes_ > opts_.max_gbnf_bytes) {  // every rule ever written, undone ones included
        fail_budget_at("its grammar is over " + std::to_string(opts_.max_gbnf_bytes >> 20) + " MiB", where_ ? *where_ : "");
    }
    rules_[name] = body;
    order_.push_back(name);
}

std::string schema_compiler::add_rule(const std::string & hint, const std::string & body) {
    const std::string name = unique_name(hint);
    define(name, body);
    return name;
}

gbnf_sink schema_compiler::sink() {
    return {[this](const std::string & hint) { return unique_name(hint); },
            [this](const std::string & name, const std::string & body) { define(name, body); }};
}

// ---- $ref ----

const json & schema_compiler::resolve_ref(const std::string & ref, const std::string & path) const {
    if (ref == "#") return root_;
    if (ref.rfind("#/", 0) != 0) fail("unsupported $ref '" + ref + "' at " + at(path) + " (only references into this schema)");
    const json * cur = &root_;
    size_t pos = 2;
    while (pos <= ref.size()) {
        size_t slash = ref.find('/', pos);
        if (slash == std::string::npos) slash = ref.size();
        std::string token = ref.substr(pos, slash - pos);
        std::string dec;
        for (size_t i = 0; i < token.size(); ++i) {  // ~1 → /, ~0 → ~, %XX
            if (token[i] == '~' && i + 1 < token.size() && (token[i + 1] == '0' || token[i + 1] == '1')) {
                dec += token[i + 1] == '0' ? '~' : '/';
                ++i;
            } else if (token[i] == '%' && i + 2 < token.size() && std::isxdigit(uint8_t(token[i + 1])) &&
                       std::isxdigit(uint8_t(token[i + 2]))) {
                dec += char(std::stoi(token.substr(i + 1, 2), nullptr, 16));
                i += 2;
            } else {
                dec += token[i];
            }
        }
        if (cur->is_object() && cur->contains(dec)) {
            cur = &(*cur)[dec];
        } else if (cur->is_array() && !dec.empty() && dec.find_first_not_of("0123456789") == std::string::npos &&
                   dec.size() < 9 && std::stoul(dec) < cur->size()) {
            cur = &(*cur)[std::stoul(dec)];
        } else {
            fail("$ref '" + ref + "' at " + at(path) + " points at nothing");
        }
        pos = slash + 1;
    }
    return *cur;
}

std::string schema_compiler::visit_ref(const std::string & ref, const std::string & path) {
    if (auto it = ref_rules_.find(ref); it != ref_rules_.end()) return it->second;
    const json & target = resolve_ref(ref, path);
    const std::string name = unique_name("ref-" + ref.substr(ref.rfind('/') + 1));
    ref_rules_[ref] = name;
    ref_order_.push_back(ref);
    order_.push_back(name);
    rules_[name] = visit(target, ref.substr(1), name);
    return name;
}

// {"not": {"$ref": r}} alone: one rule for it, named before it is compiled, so a negated
// reference that leads back to itself (not of a tree schema) becomes a recursive rule instead of
// a fold without end. The key "!r" cannot clash with a reference (those start with '#').
std::string schema_compiler::visit_not_ref(const json & s, const std::string & path) {
    const std::string ref = s["not"]["$ref"].get<std::string>();
    const std::string key = "!" + ref;
    if (auto it = ref_rules_.find(key); it != ref_rules_.end()) return it->second;
    const std::string name = unique_name("not-ref-" + ref.substr(ref.rfind('/') + 1));
    ref_rules_[key] = name;
    ref_order_.push_back(key);
    order_.push_back(name);
    rules_[name] = visit(fold_not(s, path), path, name);
    return name;
}

// Whether s is {"not": {"$ref": …}} and nothing else that constrains.
bool schema_compiler::lone_negated_ref(const json & s) {
    if (!s.is_object() || !s.contains("not") || !s["not"].is_object() || s["not"].size() != 1 || !s["not"].contains("$ref") ||
        !s["not"]["$ref"].is_string()) {
        return false;
    }
    for (auto it = s.begin(); it != s.end(); ++it) {
        if (it.key() != "not" && (constraining_keyword(it.key()) || it.key() == "$ref")) return false;
    }
    return true;
}

schema_compiler::checkpoint schema_compiler::save() const { return {order_.size(), ref_order_.size(), work_}; }

void schema_compiler::restore(const checkpoint & c) {
    for (size_t i = c.rules; i < order_.size(); ++i) rules_.erase(order_[i]);
    order_.resize(c.rules);
    for (size_t i = c.refs; i < ref_order_.size(); ++i) ref_rules_.erase(ref_order_[i]);
    ref_order_.resize(c.refs);
}

std::optional<std::string> schema_compiler::try_visit(const json & s, const std::string & path, const std::string & hint) {
    const checkpoint c = save();
    try {
        return visit(s, path, hint);
    } catch (const schema_failure & f) {
        if (!f.empty) throw;
        restore(c);
        return std::nullopt;
    }
}

std::string schema_compiler::visit_with_ref(const json & s, const std::string & path, const std::string & hint) {
    if (!s["$ref"].is_string()) fail("'$ref' at " + at(path) + " is not a string");
    json rest = s;
    rest.erase("$ref");
    // drafts 3 to 7 ignore a $ref's siblings; 2019-09 and later apply them too
    if (!constrains(rest) || legacy_ref_) return visit_ref(s["$ref"].get<std::string>(), path);
    return visit(merge(resolve_ref(s["$ref"].get<std::string>(), path), rest, path), path, hint);
}

// ---- nodes ----

std::string schema_compiler::visit(const json & s, const std::string & path, const std::string & hint) {
    const nesting level(*this, path);
    count_work(path);
    struct innermost {  // where_ names this visit until it returns
        const std::string *& where;
        const std::string * outer;
        ~innermost() { where = outer; }
    } place{where_, where_};
    where_ = &path;
    if (s.is_boolean()) {
        if (!s.get<bool>()) fail_empty("schema false at " + at(path) + " (no value is valid)");
        return "json-value";
    }
    if (!s.is_object()) fail("the schema at " + at(path) + " is not an object");
    for (auto it = s.begin(); it != s.end(); ++it) {
        if (k_unsupported.count(it.key())) fail("unsupported keyword '" + it.key() + "' at " + at(path));
    }
    if (s.contains("$ref")) return visit_with_ref(s, path, hint);
    if (s.contains("allOf")) {
        json merged = s;
        merged.erase("allOf");
        if (!s["allOf"].is_array()) fail("'allOf' at " + at(path) + " is not an array");
        for (const json & b : s["allOf"]) merged = merge(merged, b, path);
        return visit(merged, path, hint);
    }
    if (has_dependent_schemas(s)) {
        json folded = fold_dependent_schemas(s, path);
        if (folded != s) return visit(folded, path, hint);
    }
    if (s.contains("if") || s.contains("then") || s.contains("else")) return visit(fold_if(s, path), path, hint);
    // listed values are checked against every other keyword here (oneOf and not included)
    const bool listed = s.contains("const") || s.contains("enum");
    if (listed && (s.contains("not") || s.contains("anyOf") || s.contains("oneOf"))) {
        if (auto r = visit_enum(s, path, hint, false)) return *r;
    }
    if (lone_negated_ref(s)) return visit_not_ref(s, path);
    if (s.contains("not")) return visit(fold_not(s, path), path, hint);
    if (s.contains(k_not_any)) {  // oneOf's other branches
        json out = s;
        out.erase(k_not_any);
        for (const json & x : s[k_not_any]) out = fold_not(merge(out, json{{"not", x}}, path), path, true);
        return visit(out, path, hint);
    }
    for (const char * key : {"anyOf", "oneOf"}) {
        if (s.contains(key)) return visit_any_of(s, key, path, hint);
    }
    if (listed) return *visit_enum(s, path, hint, true);
    return visit_typed(s, path, hint);
}

bool schema_compiler::has_dependent_schemas(const json & s) {
    for (const char * key : {"dependencies", "dependentSchemas"}) {
        if (!s.contains(key) || !s[key].is_object()) continue;
        for (auto it = s[key].begin(); it != s[key].end(); ++it) {
            if (it.value().is_object() || it.value().is_boolean()) return true;
        }
    }
    return false;
}

schema_compiler::nesting::nesting(const schema_compiler & c, const std::string & path) : c_(c) {
    if (++c_.depth_ > c_.opts_.max_depth) {
        --c_.depth_;
        const std::string & where = path.empty() && c_.where_ ? *c_.where_ : path;
        fail("the schema is nested too deeply at " + short_at(where) + " (over " + std::to_string(c_.opts_.max_depth) +
                    " levels of subschemas, references, merges and negations)");
    }
}

void schema_compiler::fail_budget_at(const std::string & what, const std::string & path) const {
    fail_budget("the schema is too large to compile at " + short_at(path) + " (" + what + ")");
}

void schema_compiler::count_work(const std::string & path) const {
    const std::string & where = path.empty() && where_ ? *where_ : path;
    if (++total_work_ > opts_.max_work * k_total_work_factor) {
        fail_budget_at("over " + std::to_string(opts_.max_work * k_total_work_factor) + " steps of work", where);
    }
    // the clock at every step (a step may copy a large part of the schema: tens of ms at 100,000
    // properties), so the compile ends within about one step of its deadline
    if (opts_.max_time_ms && std::chrono::steady_clock::now() > deadline_) {
        fail_budget_at("over its time budget of " + std::to_string(opts_.max_time_ms) + " ms", where);
    }
    if (++work_ > work_limit_) {
        const std::string m = "over " + std::to_string(opts_.max_work) + " subschemas once combined";
        if (work_limit_ >= opts_.max_work) fail_budget_at(m, where);
        fail("the schema is too large to compile at " + short_at(where) + " (" + m + ")");  // an attempt's own limit
    }
}

std::optional<std::string> schema_compiler::visit_enum(const json & s, const std::string & path, const std::string & hint,
                                                       bool must) {
    json values = json::array();
    if (s.contains("enum")) {
        if (!s["enum"].is_array() || s["enum"].empty()) fail("'enum' at " + at(path) + " is not a non-empty array");
        values = s["enum"];
    }
    if (s.contains("const")) {
        if (s.contains("enum") && std::find(values.begin(), values.end(), s["const"]) == values.end()) values = json::array();
        else values = json::array({s["const"]});
    }
    // the other keywords still apply: keep the values they accept
    json rest = s;
    rest.erase("enum");
    rest.erase("const");
    std::string alts;
    for (const json & v : values) {
        const std::optional<bool> ok = json_schema_validate(*this, rest, v);
        if (!ok && !must) return std::nullopt;
        if (!ok) fail("'enum' / 'const' at " + at(path) + ": cannot check the values against the other keywords");
        if (*ok) alts += (alts.empty() ? "" : " | ") + literal_value(v);
    }
    if (alts.empty()) fail_empty("no value of 'enum' / 'const' at " + at(path) + " is valid against the other keywords");
    return add_rule(hint, alts);
}

// A JSON value written with optional whitespace between its tokens.
std::string schema_compiler::literal_value(const json & v) {
    if (v.is_object()) {
        if (v.empty()) return "\"{\" ws \"}\"";
        std::string out = "\"{\" ws ";
        bool first = true;
        for (auto it = v.begin(); it != v.end(); ++it) {
            if (!first) out += " ws \",\" ws ";
            first = false;
            out += grammar_literal_to_gbnf(json(it.key()).dump()) + " ws \":\" ws " + literal_value(it.value());
        }
        return out + " ws \"}\"";
    }
    if (v.is_array()) {
        if (v.empty()) return "\"[\" ws \"]\"";
        std::string out = "\"[\" ws ";
        for (size_t i = 0; i < v.size(); ++i) out += (i ? " ws \",\" ws " : "") + literal_value(v[i]);
        return out + " ws \"]\"";
    }
    return grammar_literal_to_gbnf(v.dump(-1, ' ', false, json::error_handler_t::replace));
}

std::vector<std::string> schema_compiler::types_of(const json & s, const std::string & path) const {
    std::vector<std::string> types;
    if (s.contains("type")) {
        const json & t = s["type"];
        if (t.is_string()) {
            types.push_back(t.get<std::string>());
        } else if (t.is_array()) {
            for (const json & x : t) {
                if (!x.is_string()) fail("'type' at " + at(path) + " lists a non-string");
                if (std::find(types.begin(), types.end(), x.get<std::string>()) == types.end()) types.push_back(x.get<std::string>());
            }
            if (types.empty()) fail_empty("'type' at " + at(path) + " is an empty list (no value is valid)");
        } else {
            fail("'type' at " + at(path) + " is not a string or a list");
        }
        return types;
    }
    // No "type": every kind of value is valid, and the keywords of a kind constrain only the
    // values of that kind. Without any such keyword: any value (types empty).
    auto any_of = [&](const std::set<std::string> & words) {
        return std::any_of(words.begin(), words.end(), [&](const std::string & w) { return s.contains(w); });
    };
    if (any_of(object_words()) || any_of(array_words()) || any_of(string_words()) || any_of(number_words()) ||
        s.contains(k_not_values)) {
        types = {"object", "array", "string", "number", "boolean", "null"};
    }
    return types;
}

// Booleans or null: the shared rule, or the literals that `not` left.
std::string schema_compiler::literal_type(const json & s, const std::string & t) {
    if (!s.contains(k_not_values)) return t == "boolean" ? "json-bool" : "json-null";
    const std::vector<std::string> lits = t == "boolean" ? std::vector<std::string>{"true", "false"} : std::vector<std::string>{"null"};
    std::string out;
    for (const std::string & lit : lits) {
        const json & gone = s[k_not_values];
        if (std::find(gone.begin(), gone.end(), json::parse(lit)) == gone.end()) out += (out.empty() ? "" : " | ") + ("\"" + lit + "\"");
    }
    return out;
}

std::string schema_compiler::visit_typed(const json & s, const std::string & path, const std::string & hint) {
    const std::vector<std::string> types = types_of(s, path);
    if (types.empty()) return "json-value";
    const bool has_number = std::find(types.begin(), types.end(), "number") != types.end();
    std::vector<std::string> alts;
    for (const std::string & t : types) {
        std::string one;
        if (s.contains(k_not_values) && (t == "object" || t == "array")) {  // values `not` excluded: only scalars
            for (const json & v : s[k_not_values]) {
                if ((t == "object" && v.is_object()) || (t == "array" && v.is_array())) {
                    fail("unsupported keyword 'not' at " + at(path) + " (excluding an " + t + " value)");
                }
            }
        }
        if (t == "object") one = visit_object(s, path, hint);
        else if (t == "array") one = visit_array(s, path, hint);
        else if (t == "string") one = visit_string(s, path, hint);
        else if (t == "integer") one = has_number ? "" : visit_integer(s, path);  // numbers hold the integers
        else if (t == "number") one = visit_number(s, path);
        else if (t == "boolean" || t == "null") one = literal_type(s, t);
        else fail("unknown type '" + t + "' at " + at(path));
        if (!one.empty()) alts.push_back(one);
    }
    if (alts.empty()) fail_empty("no value of the types at " + at(path) + " is left");
    if (alts.size() == 1) return alts[0].find(' ') == std::string::npos ? alts[0] : add_rule(hint, alts[0]);
    std::string body;
    for (const std::string & a : alts) body += (body.empty() ? "" : " | ") + a;
    return add_rule(hint, body);
}

std::optional<uint64_t> schema_compiler::count_of(const json & s, const char * key, const std::string & path) {
    if (!s.contains(key)) return std::nullopt;
    const json & v = s[key];
    if (!v.is_number() || v.get<double>() < 0 || v.get<double>() != std::floor(v.get<double>())) {
        fail("'" + std::string(key) + "' at " + at(path) + " is not a non-negative integer");
    }
    if (v.get<double>() > 1e15) return uint64_t(1e15);
    return uint64_t(v.get<double>());
}

// x{min,max} in GBNF (x an element).
std::string schema_compiler::repeat(const std::string & x, uint64_t min, std::optional<uint64_t> max, const std::string & path,
                                    const char * key) {
    if (min > grammar_max_repeat) fail("'" + std::string(key) + "' at " + at(path) + " is over " + std::to_string(grammar_max_repeat));
    if (max && *max > grammar_max_repeat) fail("'" + std::string(key) + "' at " + at(path) + " is over " + std::to_string(grammar_max_repeat));
    if (max && *max < min) fail("'" + std::string(key) + "' at " + at(path) + ": the maximum is below the minimum");
    if (!max) return "(" + x + "){" + std::to_string(min) + ",}";
    return "(" + x + "){" + std::to_string(min) + "," + std::to_string(*max) + "}";
}

}  // namespace json_schema_detail

namespace {

std::chrono::steady_clock::time_point budget_start(const json_schema_options & options) {
    return options.started == std::chrono::steady_clock::time_point{} ? std::chrono::steady_clock::now()
                                                                        : options.started;
}

// Whether a document nests arrays and objects deeper than `limit` (walked with a work list: its
// copy, which recurses, must not meet a document nested a million deep).
bool depth_over(const nlohmann::ordered_json & doc, size_t limit) {
    std::vector<std::pair<const nlohmann::ordered_json *, size_t>> pending = {{&doc, 1}};
    while (!pending.empty()) {
        auto [v, depth] = pending.back();
        pending.pop_back();
        if (!v->is_structured()) continue;
        if (depth > limit) return true;
        for (const auto & kid : *v) pending.emplace_back(&kid, depth + 1);
    }
    return false;
}

// The compile of a document read (its internal keys are dropped here), then its GBNF's parse.
json_schema_result compile_document(nlohmann::ordered_json schema, const json_schema_options & options,
                                    std::chrono::steady_clock::time_point start) {
    using namespace json_schema_detail;
    json_schema_result r;
    drop_internal_keys(schema);
    try {
        schema_compiler c(schema, options, start);
        r.gbnf = c.compile();
    } catch (const schema_failure & f) {
        r.error = f.message;
        return r;
    } catch (const json::exception & e) {
        r.error = std::string("malformed schema: ") + e.what();
        return r;
    }
    grammar_parse_result g = grammar_parse_gbnf(r.gbnf);
    if (!g.ok() && g.error.message.find("too large") != std::string::npos) {  // the place: the rule's name
        r.error = "the schema is too large to compile at rule '" + rule_at_line(r.gbnf, g.error.line) + "' (" + g.error.message + ")";
        r.gbnf.clear();
        return r;
    }
    if (!g.ok()) {
        r.error = "the schema's grammar does not compile: " + g.error.to_string();
        r.gbnf.clear();
        return r;
    }
    r.value = std::move(g.value);
    return r;
}

}  // namespace

json_schema_result json_schema_compile(std::string_view schema_json, const json_schema_options & options) {
    const auto start = budget_start(options);  // reading the text counts towards the time budget
    nlohmann::ordered_json schema;
    std::string error;
    if (!json_read_ordered(schema_json, options.max_document_depth, &schema, &error)) {
        json_schema_result r;
        r.error = error.rfind("the text ", 0) == 0 ? "the schema " + error.substr(9) : "the schema is " + error;
        return r;
    }
    return compile_document(std::move(schema), options, start);
}

json_schema_result json_schema_compile_document(const nlohmann::ordered_json & schema, const json_schema_options & options) {
    const auto start = budget_start(options);
    json_schema_result r;
    if (depth_over(schema, options.max_document_depth)) {
        r.error = "the schema is nested deeper than " + std::to_string(options.max_document_depth) + " levels";
        return r;
    }
    return compile_document(schema, options, start);
}
