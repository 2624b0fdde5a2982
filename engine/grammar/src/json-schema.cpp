// JSON Schema → GBNF → grammar (grammar/json-schema.h). The compiler walks the schema and writes
// one GBNF rule per schema node that needs one (named after its place: "root-properties-name"),
// with shared rules for JSON's own pieces (ws, strings, numbers, any value). $ref targets get a
// rule each, named before they are compiled, so recursive schemas become recursive rules.
#include "grammar/json-schema.h"

#include "grammar/gbnf.h"
#include "json-schema-impl.h"
#include "utf8-decode.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <optional>
#include <map>
#include <set>
#include <vector>

using json = nlohmann::ordered_json;

namespace {

struct schema_failure {
    std::string message;
};

// The rules every compiled schema may use.
const char * const k_json_rules =
    "ws ::= (\" \" | \"\\n\" [ \\t]{0,20})?\n"
    "json-char ::= [^\"\\\\\\x00-\\x1F] | \"\\\\\" ([\"\\\\/bfnrt] | \"u\" [0-9a-fA-F]{4})\n"
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
    "not", "if", "then", "else", "patternProperties", "propertyNames", "minProperties", "maxProperties",
    "dependencies", "dependentRequired", "dependentSchemas", "contains", "minContains", "maxContains",
    "multipleOf", "unevaluatedProperties", "unevaluatedItems", "$dynamicRef", "$recursiveRef"};

// Keywords of each kind of value (a schema without "type" takes its kind from them).
const std::set<std::string> k_object_words = {"properties", "required", "additionalProperties"};
const std::set<std::string> k_array_words = {"items", "prefixItems", "minItems", "maxItems", "additionalItems"};
const std::set<std::string> k_string_words = {"minLength", "maxLength", "pattern", "format"};
const std::set<std::string> k_number_words = {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"};

// Keywords allOf merging understands (any other constraining keyword in two branches fails).
const std::set<std::string> k_annotations = {"title", "description", "default", "examples", "example", "$schema", "$id",
                                             "id", "$comment", "readOnly", "writeOnly", "deprecated", "$anchor",
                                             "markdownDescription", "deprecationMessage", "nullable", "discriminator",
                                             "xml", "externalDocs", "contentMediaType", "contentEncoding"};

std::string rule_name_part(const std::string & s) {
    std::string out;
    for (char c : s) {
        const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
        out += ok ? c : '-';
    }
    if (out.size() > 40) out.resize(40);
    return out.empty() ? "x" : out;
}

class schema_compiler {
public:
    explicit schema_compiler(const json & root) : root_(root) {
        if (root.is_object() && root.contains("$schema") && root["$schema"].is_string()) {
            const std::string draft = root["$schema"].get<std::string>();
            legacy_ref_ = draft.find("draft-0") != std::string::npos;
        }
    }

    std::string compile() {
        const std::string body = visit(root_, "", "root");
        std::string out = "root ::= " + body + "\n";
        for (const std::string & name : order_) out += name + " ::= " + rules_[name] + "\n";
        out += k_json_rules;
        return out;
    }

private:
    const json & root_;
    std::map<std::string, std::string> rules_;
    std::vector<std::string> order_;
    std::map<std::string, std::string> ref_rules_;
    std::set<std::string> used_names_ = {"root", "ws", "json-char", "json-string", "json-int", "json-number",
                                         "json-bool", "json-null", "json-value", "json-object", "json-array"};
    int depth_ = 0;
    bool legacy_ref_ = false;  // $schema is draft 3 to 7

    [[noreturn]] static void fail(const std::string & m) { throw schema_failure{m}; }

    static std::string at(const std::string & path) { return path.empty() ? "/" : path; }

    std::string unique_name(const std::string & hint) {
        std::string base = rule_name_part(hint);
        std::string name = base;
        for (int i = 2; used_names_.count(name); ++i) name = base + "-" + std::to_string(i);
        used_names_.insert(name);
        return name;
    }

    std::string add_rule(const std::string & hint, const std::string & body) {
        const std::string name = unique_name(hint);
        rules_[name] = body;
        order_.push_back(name);
        return name;
    }

    // ---- $ref ----

    const json & resolve_ref(const std::string & ref, const std::string & path) const {
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
                       std::stoul(dec) < cur->size()) {
                cur = &(*cur)[std::stoul(dec)];
            } else {
                fail("$ref '" + ref + "' at " + at(path) + " points at nothing");
            }
            pos = slash + 1;
        }
        return *cur;
    }

    std::string visit_ref(const std::string & ref, const std::string & path) {
        if (auto it = ref_rules_.find(ref); it != ref_rules_.end()) return it->second;
        const json & target = resolve_ref(ref, path);
        const std::string name = unique_name("ref-" + ref.substr(ref.rfind('/') + 1));
        ref_rules_[ref] = name;
        order_.push_back(name);
        rules_[name] = visit(target, ref.substr(1), name);
        return name;
    }

    // ---- allOf ----

    // s with its $ref replaced by the target merged with s's other keywords (for merging).
    json inline_ref(const json & s, const std::string & path, int guard = 0) const {
        if (!s.is_object() || !s.contains("$ref")) return s;
        if (guard > 16) fail("allOf at " + at(path) + ": $ref chain too deep to merge");
        json target = inline_ref(resolve_ref(s["$ref"].get<std::string>(), path), path, guard + 1);
        json rest = s;
        rest.erase("$ref");
        return merge(target, rest, path, guard + 1);
    }

    static bool is_annotation(const std::string & k) { return k_annotations.count(k) || k.rfind("x-", 0) == 0; }

    json merge(json a, const json & b, const std::string & path, int guard = 0) const {
        if (b.is_boolean()) {
            if (!b.get<bool>()) fail("allOf at " + at(path) + ": a branch is false (nothing is valid)");
            return a;
        }
        if (a.is_boolean()) return a.get<bool>() ? b : a;
        const json bb = inline_ref(b, path, guard);
        a = inline_ref(a, path, guard);
        for (auto it = bb.begin(); it != bb.end(); ++it) {
            const std::string & k = it.key();
            const json & v = it.value();
            if (!a.contains(k) || a[k] == v) {
                a[k] = v;
                continue;
            }
            if (is_annotation(k)) continue;
            if (k == "properties" && a[k].is_object() && v.is_object()) {
                for (auto p = v.begin(); p != v.end(); ++p) {
                    a[k][p.key()] = a[k].contains(p.key()) ? merge(a[k][p.key()], p.value(), path + "/properties/" + p.key(), guard + 1)
                                                           : p.value();
                }
            } else if (k == "required" && a[k].is_array() && v.is_array()) {
                for (const json & r : v) {
                    if (std::find(a[k].begin(), a[k].end(), r) == a[k].end()) a[k].push_back(r);
                }
            } else if (k == "type") {
                a[k] = intersect_types(a[k], v, path);
            } else if (k == "enum" && a[k].is_array() && v.is_array()) {
                json both = json::array();
                for (const json & x : a[k]) {
                    if (std::find(v.begin(), v.end(), x) != v.end()) both.push_back(x);
                }
                if (both.empty()) fail("allOf at " + at(path) + ": the enums have no value in common");
                a[k] = both;
            } else if ((k == "minLength" || k == "minItems" || k == "minimum") && a[k].is_number() && v.is_number()) {
                a[k] = std::max(a[k].get<double>(), v.get<double>());
            } else if ((k == "maxLength" || k == "maxItems" || k == "maximum") && a[k].is_number() && v.is_number()) {
                a[k] = std::min(a[k].get<double>(), v.get<double>());
            } else if (k == "additionalProperties" && (a[k] == false || v == false)) {
                a[k] = false;
            } else if (k == "items" && a[k].is_object() && v.is_object()) {
                a[k] = merge(a[k], v, path + "/items", guard + 1);
            } else {
                fail("allOf at " + at(path) + ": cannot merge '" + k + "' of two branches");
            }
        }
        return a;
    }

    static json intersect_types(const json & a, const json & b, const std::string & path) {
        auto list = [](const json & t) {
            std::set<std::string> s;
            if (t.is_string()) s.insert(t.get<std::string>());
            if (t.is_array()) {
                for (const json & x : t) {
                    if (x.is_string()) s.insert(x.get<std::string>());
                }
            }
            return s;
        };
        std::set<std::string> sa = list(a), sb = list(b), out;
        for (const std::string & t : sa) {
            if (sb.count(t)) out.insert(t);
            else if (t == "integer" && sb.count("number")) out.insert("integer");
            else if (t == "number" && sb.count("integer")) out.insert("integer");
        }
        if (out.empty()) fail("allOf at " + at(path) + ": the types have nothing in common");
        json r = json::array();
        for (const std::string & t : out) r.push_back(t);
        return r.size() == 1 ? r[0] : r;
    }

    // ---- nodes ----

    std::string visit(const json & s, const std::string & path, const std::string & hint) {
        if (++depth_ > 200) fail("schema nested too deeply at " + at(path));
        struct leave { int & d; ~leave() { --d; } } guard{depth_};
        if (s.is_boolean()) {
            if (!s.get<bool>()) fail("schema false at " + at(path) + " (no value is valid)");
            return "json-value";
        }
        if (!s.is_object()) fail("the schema at " + at(path) + " is not an object");
        for (auto it = s.begin(); it != s.end(); ++it) {
            if (k_unsupported.count(it.key())) fail("unsupported keyword '" + it.key() + "' at " + at(path));
        }
        if (s.contains("uniqueItems") && s["uniqueItems"] == true) fail("unsupported keyword 'uniqueItems' at " + at(path));
        if (s.contains("$ref")) return visit_with_ref(s, path, hint);
        if (s.contains("allOf")) {
            json merged = s;
            merged.erase("allOf");
            if (!s["allOf"].is_array()) fail("'allOf' at " + at(path) + " is not an array");
            for (const json & b : s["allOf"]) merged = merge(merged, b, path);
            return visit(merged, path, hint);
        }
        for (const char * key : {"anyOf", "oneOf"}) {
            if (!s.contains(key)) continue;
            if (!s[key].is_array() || s[key].empty()) fail(std::string("'") + key + "' at " + at(path) + " is not a non-empty array");
            json rest = s;
            rest.erase(key);
            const bool has_rest = constrains(rest);
            std::string alts;
            for (size_t i = 0; i < s[key].size(); ++i) {
                // the shared keywords first: their properties keep their places, the branch's
                // new ones follow
                const json branch = has_rest ? merge(rest, s[key][i], path + "/" + key + "/" + std::to_string(i)) : s[key][i];
                alts += (i ? " | " : "") + visit(branch, path + "/" + key + "/" + std::to_string(i), hint + "-" + std::to_string(i));
            }
            return add_rule(hint, alts);
        }
        if (s.contains("const")) return add_rule(hint, literal_value(s["const"]));
        if (s.contains("enum")) return visit_enum(s, path, hint);
        return visit_typed(s, path, hint);
    }

    // Whether s has any keyword that constrains values.
    static bool constrains(const json & s) {
        for (auto it = s.begin(); it != s.end(); ++it) {
            if (!is_annotation(it.key())) return true;
        }
        return false;
    }

    std::string visit_with_ref(const json & s, const std::string & path, const std::string & hint) {
        if (!s["$ref"].is_string()) fail("'$ref' at " + at(path) + " is not a string");
        json rest = s;
        rest.erase("$ref");
        // drafts 3 to 7 ignore a $ref's siblings; 2019-09 and later apply them too
        if (!constrains(rest) || legacy_ref_) return visit_ref(s["$ref"].get<std::string>(), path);
        return visit(merge(resolve_ref(s["$ref"].get<std::string>(), path), rest, path), path, hint);
    }

    std::string visit_enum(const json & s, const std::string & path, const std::string & hint) {
        if (!s["enum"].is_array() || s["enum"].empty()) fail("'enum' at " + at(path) + " is not a non-empty array");
        std::string alts;
        for (const json & v : s["enum"]) alts += (alts.empty() ? "" : " | ") + literal_value(v);
        return add_rule(hint, alts);
    }

    // A JSON value written with optional whitespace between its tokens.
    std::string literal_value(const json & v) {
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

    std::vector<std::string> types_of(const json & s, const std::string & path) const {
        std::vector<std::string> types;
        if (s.contains("type")) {
            const json & t = s["type"];
            if (t.is_string()) types.push_back(t.get<std::string>());
            else if (t.is_array()) {
                for (const json & x : t) {
                    if (!x.is_string()) fail("'type' at " + at(path) + " lists a non-string");
                    types.push_back(x.get<std::string>());
                }
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
        if (any_of(k_object_words) || any_of(k_array_words) || any_of(k_string_words) || any_of(k_number_words)) {
            types = {"object", "array", "string", "number", "boolean", "null"};
        }
        return types;
    }

    std::string visit_typed(const json & s, const std::string & path, const std::string & hint) {
        const std::vector<std::string> types = types_of(s, path);
        if (types.empty()) return "json-value";
        std::string alts;
        for (const std::string & t : types) {
            std::string one;
            if (t == "object") one = visit_object(s, path, hint);
            else if (t == "array") one = visit_array(s, path, hint);
            else if (t == "string") one = visit_string(s, path, hint);
            else if (t == "integer") one = visit_integer(s, path);
            else if (t == "number") one = visit_number(s, path);
            else if (t == "boolean") one = "json-bool";
            else if (t == "null") one = "json-null";
            else fail("unknown type '" + t + "' at " + at(path));
            alts += (alts.empty() ? "" : " | ") + one;
        }
        return types.size() == 1 ? alts : add_rule(hint, alts);
    }

    std::string visit_object(const json & s, const std::string & path, const std::string & hint);
    std::string key_not_in(const std::vector<std::string> & keys, const std::string & hint);
    std::string visit_array(const json & s, const std::string & path, const std::string & hint);
    std::string visit_string(const json & s, const std::string & path, const std::string & hint);
    std::string visit_integer(const json & s, const std::string & path);
    std::string visit_number(const json & s, const std::string & path);

    static std::optional<uint64_t> count_of(const json & s, const char * key, const std::string & path) {
        if (!s.contains(key)) return std::nullopt;
        const json & v = s[key];
        if (!v.is_number() || v.get<double>() < 0 || v.get<double>() != std::floor(v.get<double>())) {
            fail("'" + std::string(key) + "' at " + at(path) + " is not a non-negative integer");
        }
        return uint64_t(v.get<double>());
    }

    // x{min,max} in GBNF (x an element).
    static std::string repeat(const std::string & x, uint64_t min, std::optional<uint64_t> max, const std::string & path,
                              const char * key) {
        if (min > grammar_max_repeat || (max && *max > grammar_max_repeat)) {
            fail("'" + std::string(key) + "' at " + at(path) + " is over " + std::to_string(grammar_max_repeat));
        }
        if (max && *max < min) fail("'" + std::string(key) + "' at " + at(path) + ": the maximum is below the minimum");
        if (!max) return "(" + x + "){" + std::to_string(min) + ",}";
        return "(" + x + "){" + std::to_string(min) + "," + std::to_string(*max) + "}";
    }
};

std::string schema_compiler::visit_object(const json & s, const std::string & path, const std::string & hint) {
    std::vector<std::pair<std::string, std::string>> props;  // (key literal, value expression)
    std::vector<bool> required;
    std::set<std::string> req;
    std::vector<std::string> req_order;  // as listed
    if (s.contains("required")) {
        if (!s["required"].is_array()) fail("'required' at " + at(path) + " is not an array");
        for (const json & r : s["required"]) {
            if (r.is_string() && req.insert(r.get<std::string>()).second) req_order.push_back(r.get<std::string>());
        }
    }
    if (s.contains("properties")) {
        if (!s["properties"].is_object()) fail("'properties' at " + at(path) + " is not an object");
        for (auto it = s["properties"].begin(); it != s["properties"].end(); ++it) {
            const std::string value = visit(it.value(), path + "/properties/" + it.key(), hint + "-" + it.key());
            props.emplace_back(grammar_literal_to_gbnf(json(it.key()).dump()), value);
            required.push_back(req.count(it.key()) > 0);
        }
    }
    for (const std::string & r : req_order) {
        if (!s.contains("properties") || !s["properties"].contains(r)) {
            // required but not declared: it must appear; with additional properties allowed it can
            props.emplace_back(grammar_literal_to_gbnf(json(r).dump()), "json-value");
            required.push_back(true);
        }
    }
    std::string extra;  // one additional property, or "" when none may appear
    const json ap = s.contains("additionalProperties") ? s["additionalProperties"] : json(true);
    if (!(ap.is_boolean() && !ap.get<bool>())) {
        const std::string value = ap.is_boolean() ? "json-value" : visit(ap, path + "/additionalProperties", hint + "-additional");
        std::vector<std::string> declared;
        if (s.contains("properties") && s["properties"].is_object()) {
            for (auto it = s["properties"].begin(); it != s["properties"].end(); ++it) declared.push_back(it.key());
        }
        for (const std::string & r : req_order) declared.push_back(r);
        extra = add_rule(hint + "-kv", key_not_in(declared, hint + "-key") + " ws \":\" ws " + value);
    }
    const size_t n = props.size();
    // first_i: properties i.. with nothing written yet; next_i: the same after something was
    std::vector<std::string> first(n + 1), next(n + 1);
    const std::string extras_tail = extra.empty() ? "" : "(ws \",\" ws " + extra + ")*";
    next[n] = extras_tail.empty() ? "\"\"" : extras_tail;
    first[n] = extra.empty() ? "\"\"" : "(" + extra + " " + extras_tail + ")?";
    for (size_t k = n; k-- > 0;) {
        const std::string kv = props[k].first + " ws \":\" ws " + props[k].second;
        const std::string next_name = add_rule(hint + "-next", next[k + 1]);
        const std::string first_name = add_rule(hint + "-first", first[k + 1]);
        next[k] = "ws \",\" ws " + kv + " " + next_name + (required[k] ? "" : " | " + next_name);
        first[k] = kv + " " + next_name + (required[k] ? "" : " | " + first_name);
    }
    return add_rule(hint, "\"{\" ws (" + first[0] + ") ws \"}\"");
}

// A JSON string (with its quotes) that is none of `keys`: a rule per node of the keys' trie,
//   node ::= "" (unless a key ends here) | c child_c (per child) | another json-char json-char*
// Keys holding '"', '\\' or control characters are left out of the exclusion (JSON may write
// them in several ways).
std::string schema_compiler::key_not_in(const std::vector<std::string> & keys, const std::string & hint) {
    struct node {
        std::map<uint32_t, size_t> kids;
        bool end = false;
    };
    std::vector<node> trie(1);
    for (const std::string & k : keys) {
        bool plain = true;
        for (unsigned char c : k) plain = plain && c >= 0x20 && c != '"' && c != '\\';
        if (!plain) continue;
        size_t cur = 0;
        for (size_t pos = 0; pos < k.size();) {
            uint32_t cp = 0;
            if (!grammar_utf8_decode(k, pos, cp)) break;
            auto it = trie[cur].kids.find(cp);
            if (it == trie[cur].kids.end()) {
                trie.push_back({});
                it = trie[cur].kids.emplace(cp, trie.size() - 1).first;
            }
            cur = it->second;
        }
        trie[cur].end = true;
    }
    if (trie[0].kids.empty() && !trie[0].end) return "json-string";
    const std::string any_rest = "json-char*";
    std::vector<std::string> names(trie.size());
    for (size_t i = 0; i < trie.size(); ++i) names[i] = unique_name(hint);
    for (size_t i = 0; i < trie.size(); ++i) {
        std::vector<std::string> alts;
        if (!trie[i].end) alts.push_back("\"\"");
        grammar_char_set others{{{0x20, grammar_max_code_point}}};
        std::vector<grammar_char_range> taken;
        for (const auto & [cp, child] : trie[i].kids) {
            std::string lit;
            grammar_utf8_append(lit, cp);
            alts.push_back(grammar_literal_to_gbnf(lit) + " " + names[child]);
            taken.push_back({cp, cp});
        }
        taken.push_back({'"', '"'});
        taken.push_back({'\\', '\\'});
        grammar_char_set excluded{taken};
        grammar_char_set_normalize(excluded);
        grammar_char_set rest;  // plain characters that leave the trie
        for (const grammar_char_range & r : grammar_char_set_complement(excluded).ranges) {
            if (r.hi >= 0x20) rest.ranges.push_back({std::max<uint32_t>(r.lo, 0x20), r.hi});
        }
        grammar_char_set_normalize(rest);
        std::string leave = "\"\\\\\" ([\"\\\\/bfnrt] | \"u\" [0-9a-fA-F]{4})";  // any escape leaves it too
        if (!rest.ranges.empty()) leave = "(" + grammar_char_set_to_gbnf(rest) + " | " + leave + ")";
        alts.push_back(leave + " " + any_rest);
        std::string body;
        for (size_t a = 0; a < alts.size(); ++a) body += (a ? " | " : "") + alts[a];
        rules_[names[i]] = body;
        order_.push_back(names[i]);
    }
    return "\"\\\"\" " + names[0] + " \"\\\"\"";
}

std::string schema_compiler::visit_array(const json & s, const std::string & path, const std::string & hint) {
    std::vector<std::string> prefix;
    std::string item = "json-value";
    bool more = true;  // items after the prefix may appear
    const json * prefix_items = s.contains("prefixItems") ? &s["prefixItems"] : nullptr;
    if (s.contains("items") && s["items"].is_array()) prefix_items = &s["items"];  // draft 4 tuples
    if (prefix_items) {
        if (!prefix_items->is_array()) fail("'prefixItems' at " + at(path) + " is not an array");
        for (size_t i = 0; i < prefix_items->size(); ++i) {
            prefix.push_back(visit((*prefix_items)[i], path + "/prefixItems/" + std::to_string(i), hint + "-" + std::to_string(i)));
        }
    }
    const json * rest = nullptr;
    if (s.contains("items") && !s["items"].is_array()) rest = &s["items"];
    if (s.contains("items") && s["items"].is_array() && s.contains("additionalItems")) rest = &s["additionalItems"];
    if (rest) {
        if (rest->is_boolean() && !rest->get<bool>()) more = false;
        else if (!rest->is_boolean()) item = visit(*rest, path + "/items", hint + "-item");
    }
    const uint64_t min = count_of(s, "minItems", path).value_or(0);
    const std::optional<uint64_t> max = count_of(s, "maxItems", path);
    if (max && *max < min) fail("'maxItems' at " + at(path) + " is below 'minItems'");
    // the elements in order: prefix[0], prefix[1], …, then item*; counted against min / max
    std::vector<std::string> elems;
    for (size_t i = 0; i < prefix.size() && (!max || i < *max); ++i) elems.push_back(prefix[i]);
    if (min > prefix.size() && !more) fail("'minItems' at " + at(path) + " needs more items than the array may hold");
    // tail(i): the elements from index i on, each preceded by a comma (i > 0)
    const std::string sep = "ws \",\" ws ";
    std::string tail;
    if (more && (!max || *max > elems.size())) {
        const uint64_t need = min > elems.size() ? min - elems.size() : 0;
        std::optional<uint64_t> extra_max;
        if (max) extra_max = *max - elems.size();
        tail = repeat(sep + item, need, extra_max, path, "maxItems");
    }
    // the prefix elements may stop anywhere at or after min
    std::string body = tail.empty() ? "\"\"" : tail;
    for (size_t i = elems.size(); i-- > 0;) {
        const std::string lead = i == 0 ? "" : sep;
        const std::string cont = add_rule(hint + "-tail", body);
        body = lead + elems[i] + " " + cont + (i >= min ? " | \"\"" : "");
    }
    if (elems.empty()) {
        // no prefix: item (sep item){min-1,max-1}, or nothing when min is 0
        if (!more) return add_rule(hint, "\"[\" ws \"]\"");
        const uint64_t first_min = min > 0 ? min - 1 : 0;
        std::optional<uint64_t> first_max;
        if (max) {
            if (*max == 0) return add_rule(hint, "\"[\" ws \"]\"");
            first_max = *max - 1;
        }
        const std::string items = item + " " + repeat(sep + item, first_min, first_max, path, "maxItems");
        return add_rule(hint, "\"[\" ws " + (min > 0 ? items : "(" + items + ")?") + " ws \"]\"");
    }
    return add_rule(hint, "\"[\" ws (" + body + ") ws \"]\"");
}

std::string schema_compiler::visit_string(const json & s, const std::string & path, const std::string & hint) {
    const bool lengths = s.contains("minLength") || s.contains("maxLength");
    if (s.contains("pattern")) {
        if (!s["pattern"].is_string()) fail("'pattern' at " + at(path) + " is not a string");
        if (lengths) fail("'pattern' together with 'minLength' / 'maxLength' at " + at(path) + " is not supported");
        std::string body, why;
        if (!json_schema_regex_to_gbnf(s["pattern"].get<std::string>(), "json-char", &body, &why)) {
            fail("'pattern' at " + at(path) + ": " + why);
        }
        return add_rule(hint, "\"\\\"\" " + body + " \"\\\"\"");
    }
    if (s.contains("format") && s["format"].is_string()) {
        static const std::map<std::string, std::string> formats = {
            {"date", "[0-9]{4} \"-\" (\"0\" [1-9] | \"1\" [0-2]) \"-\" (\"0\" [1-9] | [12] [0-9] | \"3\" [01])"},
            {"time", "([01] [0-9] | \"2\" [0-3]) \":\" [0-5] [0-9] \":\" ([0-5] [0-9] | \"60\") (\".\" [0-9]+)? ([zZ] | [-+] ([01] [0-9] | \"2\" [0-3]) \":\" [0-5] [0-9])"},
            {"uuid", "[0-9a-fA-F]{8} \"-\" [0-9a-fA-F]{4} \"-\" [0-9a-fA-F]{4} \"-\" [0-9a-fA-F]{4} \"-\" [0-9a-fA-F]{12}"},
            {"email", "[A-Za-z0-9!#$%&'*+/=?^_`{|}~.-]+ \"@\" [A-Za-z0-9] [A-Za-z0-9-]* (\".\" [A-Za-z0-9] [A-Za-z0-9-]*)*"},
            {"uri", "[A-Za-z] [A-Za-z0-9+.-]* \":\" [^\"\\\\\\x00-\\x20]*"},
            {"ipv4", "(\"25\" [0-5] | \"2\" [0-4] [0-9] | \"1\" [0-9] [0-9] | [1-9] [0-9] | [0-9]) (\".\" (\"25\" [0-5] | \"2\" [0-4] [0-9] | \"1\" [0-9] [0-9] | [1-9] [0-9] | [0-9])){3}"},
            {"hostname", "[A-Za-z0-9] ([A-Za-z0-9-]{0,61} [A-Za-z0-9])? (\".\" [A-Za-z0-9] ([A-Za-z0-9-]{0,61} [A-Za-z0-9])?)*"},
        };
        std::string f = s["format"].get<std::string>();
        std::string body;
        if (f == "date-time") body = formats.at("date") + " [tT] " + formats.at("time");
        else if (auto it = formats.find(f); it != formats.end()) body = it->second;
        if (!body.empty()) {
            if (lengths) fail("'format' together with 'minLength' / 'maxLength' at " + at(path) + " is not supported");
            return add_rule(hint, "\"\\\"\" " + body + " \"\\\"\"");
        }
        // other formats are annotations for most validators: a plain string
    }
    const uint64_t min = count_of(s, "minLength", path).value_or(0);
    const std::optional<uint64_t> max = count_of(s, "maxLength", path);
    if (!lengths) return "json-string";
    return add_rule(hint, "\"\\\"\" " + repeat("json-char", min, max, path, "maxLength") + " \"\\\"\"");
}

namespace {

// A bound as an integer: ceil for lower bounds, floor for upper ones (exclusive ones moved by 1).
std::optional<int64_t> int_bound(const json & s, bool lower, const std::string & path) {
    const char * incl = lower ? "minimum" : "maximum";
    const char * excl = lower ? "exclusiveMinimum" : "exclusiveMaximum";
    std::optional<double> v;
    bool exclusive = false;
    if (s.contains(incl) && s[incl].is_number()) v = s[incl].get<double>();
    if (s.contains(excl)) {
        if (s[excl].is_boolean()) {
            exclusive = s[excl].get<bool>();  // draft 4: modifies minimum / maximum
        } else if (s[excl].is_number()) {
            const double e = s[excl].get<double>();
            if (!v || (lower ? e >= *v : e <= *v)) {
                v = e;
                exclusive = true;
            }
        }
    }
    if (!v) return std::nullopt;
    if (std::fabs(*v) > 9e18) throw schema_failure{std::string("'") + incl + "' at " + (path.empty() ? "/" : path) + " is out of range"};
    double r = lower ? std::ceil(*v) : std::floor(*v);
    if (exclusive && r == *v) r += lower ? 1 : -1;
    return int64_t(r);
}

}  // namespace

std::string schema_compiler::visit_integer(const json & s, const std::string & path) {
    const std::optional<int64_t> lo = int_bound(s, true, path), hi = int_bound(s, false, path);
    if (!lo && !hi) return "json-int";
    const std::string r = json_schema_int_range(lo, hi);
    if (r.empty()) fail("the integer bounds at " + at(path) + " leave no value");
    return "(" + r + ")";
}

namespace {

// The lower (or upper) bound of s: its value and whether it is strict, from minimum /
// exclusiveMinimum (a number, or draft 4's boolean that makes minimum strict); the tighter one.
std::optional<double> number_bound(const json & s, bool lower, bool * strict) {
    const char * incl = lower ? "minimum" : "maximum";
    const char * excl = lower ? "exclusiveMinimum" : "exclusiveMaximum";
    std::optional<double> v;
    *strict = false;
    if (s.contains(incl) && s[incl].is_number()) v = s[incl].get<double>();
    if (s.contains(excl)) {
        if (s[excl].is_boolean()) {
            *strict = s[excl].get<bool>() && v.has_value();
        } else if (s[excl].is_number()) {
            const double e = s[excl].get<double>();
            if (!v || (lower ? e >= *v : e <= *v)) {
                v = e;
                *strict = true;
            }
        }
    }
    return v;
}

}  // namespace

std::string schema_compiler::visit_number(const json & s, const std::string & path) {
    bool lo_strict = false, hi_strict = false;
    const std::optional<double> lo = number_bound(s, true, &lo_strict), hi = number_bound(s, false, &hi_strict);
    if (!lo && !hi) return "json-number";
    // integer bounds only (the number is then written without an exponent)
    for (const auto & [b, key] : {std::pair{lo, "minimum"}, std::pair{hi, "maximum"}}) {
        if (b && (*b != std::floor(*b) || std::fabs(*b) > 9e18)) {
            fail("unsupported '" + std::string(key) + "' at " + at(path) + " (numbers: integer bounds only)");
        }
    }
    std::optional<int64_t> ilo, ihi;
    if (lo) ilo = int64_t(*lo);
    if (hi) ihi = int64_t(*hi);
    const std::string r = json_schema_number_range(ilo, lo_strict, ihi, hi_strict);
    if (r.empty()) fail("the number bounds at " + at(path) + " leave no value");
    return "(" + r + ")";
}

}  // namespace

json_schema_result json_schema_compile(std::string_view schema_json) {
    json_schema_result r;
    json schema;
    try {
        schema = json::parse(schema_json);
    } catch (const json::parse_error & e) {
        r.error = std::string("the schema is not valid JSON: ") + e.what();
        return r;
    }
    try {
        schema_compiler c(schema);
        r.gbnf = c.compile();
    } catch (const schema_failure & f) {
        r.error = f.message;
        return r;
    } catch (const json::exception & e) {
        r.error = std::string("malformed schema: ") + e.what();
        return r;
    }
    grammar_parse_result g = grammar_parse_gbnf(r.gbnf);
    if (!g.ok()) {
        r.error = "the schema's grammar does not compile: " + g.error.to_string();
        r.gbnf.clear();
        return r;
    }
    r.value = std::move(g.value);
    return r;
}
