// tests/grammar/hostile-schemas.h — a generated suite of hostile JSON Schemas: valid JSON Schema
// documents built to exhaust a compiler (recursion through $ref at every keyword that takes a
// schema, `not` folded through recursive references, very deep nesting, very wide objects and
// enums, alternations of alternations, patterns with nested quantifiers, huge counts). Each must
// compile within the compiler's budgets or be refused with an error; none may crash or hang.
//
// Usage:
//   for (const hostile_schema & h : hostile_schemas()) {
//       json_schema_result r = json_schema_compile(h.schema);   // ok, or an error naming a place
//   }
//   hostile_schemas_write(dir);   // one file per case, in ../shared/testdata/jsonschema's format
#pragma once

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

struct hostile_schema {
    std::string name;    // what it attacks: "ref-cycle-not-properties", "nest-10000-items", …
    std::string schema;  // the schema as JSON text
};

namespace hostile_schemas_detail {

using json = nlohmann::ordered_json;

// `depth` levels of prefix … suffix around `leaf`, as text (no recursive JSON value is built).
inline std::string nest(const std::string & prefix, const std::string & suffix, const std::string & leaf, int depth) {
    std::string out;
    out.reserve((prefix.size() + suffix.size()) * size_t(depth) + leaf.size());
    for (int i = 0; i < depth; ++i) out += prefix;
    out += leaf;
    for (int i = 0; i < depth; ++i) out += suffix;
    return out;
}

// The text of a JSON object or array of n members, member(i) each (large documents are built as
// text: ordered_json inserts a key by a linear search).
template <typename F> std::string members_text(int n, char open, F member) {
    std::string out(1, open);
    for (int i = 0; i < n; ++i) out += (i ? "," : "") + member(i);
    return out + (open == '{' ? "}" : "]");
}

// A recursive $ref to the root placed at each keyword that takes a schema.
inline void add_ref_at_every_keyword(std::vector<hostile_schema> & out) {
    const json r = {{"$ref", "#"}};
    const std::vector<std::pair<std::string, json>> places = {
        {"properties", {{"type", "object"}, {"properties", {{"a", r}}}}},
        {"properties-required", {{"type", "object"}, {"properties", {{"a", r}}}, {"required", {"a"}}}},
        {"additionalProperties", {{"type", "object"}, {"additionalProperties", r}}},
        {"patternProperties", {{"type", "object"}, {"patternProperties", {{"^x", r}}}}},
        {"items", {{"type", "array"}, {"items", r}}},
        {"items-min", {{"type", "array"}, {"items", r}, {"minItems", 1}}},
        {"prefixItems", {{"type", "array"}, {"prefixItems", json::array({r})}}},
        {"additionalItems", {{"type", "array"}, {"items", json::array({{{"type", "integer"}}})}, {"additionalItems", r}}},
        {"not", {{"not", r}}},
        {"allOf", {{"allOf", json::array({r})}}},
        {"allOf-typed", {{"type", "object"}, {"allOf", json::array({r, {{"required", {"a"}}}})}}},
        {"anyOf", {{"anyOf", json::array({r, {{"type", "null"}}})}}},
        {"anyOf-self", {{"anyOf", json::array({r})}}},
        {"oneOf", {{"oneOf", json::array({r, {{"type", "null"}}})}}},
        {"oneOf-overlap", {{"oneOf", json::array({r, {{"type", "object"}}, {{"required", {"a"}}}})}}},
        {"if", {{"if", r}, {"then", {{"type", "string"}}}}},
        {"then", {{"if", {{"type", "object"}}}, {"then", r}}},
        {"else", {{"if", {{"type", "object"}}}, {"else", r}}},
        {"dependentSchemas", {{"type", "object"}, {"dependentSchemas", {{"a", r}}}}},
        {"dependencies", {{"type", "object"}, {"dependencies", {{"a", r}}}}},
        {"contains", {{"type", "array"}, {"contains", r}}},
        {"propertyNames", {{"type", "object"}, {"propertyNames", r}}},
    };
    for (const auto & [where, s] : places) {
        out.push_back({"ref-cycle-" + where, s.dump()});
        // the same under `not` and under `not not`, where a fold follows the reference
        out.push_back({"ref-cycle-not-" + where, json{{"$defs", {{"n", s}}}, {"not", {{"$ref", "#/$defs/n"}}}}.dump()});
        out.push_back({"ref-cycle-not-not-" + where,
                       json{{"$defs", {{"n", s}}}, {"not", {{"not", {{"$ref", "#/$defs/n"}}}}}}.dump()});
        out.push_back({"ref-cycle-oneOf-" + where,
                       json{{"$defs", {{"n", s}}}, {"oneOf", json::array({{{"$ref", "#/$defs/n"}}, {{"required", {"b"}}}})}}.dump()});
    }
}

// References that cycle without consuming input, and long chains.
inline void add_ref_loops(std::vector<hostile_schema> & out) {
    out.push_back({"ref-self", R"({"$defs":{"a":{"$ref":"#/$defs/a"}},"$ref":"#/$defs/a"})"});
    out.push_back({"ref-root-self", R"({"$ref":"#"})"});
    out.push_back({"ref-mutual", R"({"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}},"$ref":"#/$defs/a"})"});
    out.push_back({"ref-self-siblings",
                   R"({"$schema":"https://json-schema.org/draft/2020-12/schema","$defs":{"a":{"$ref":"#/$defs/a","minLength":1}},"$ref":"#/$defs/a"})"});
    out.push_back({"ref-allOf-self", R"({"$defs":{"a":{"allOf":[{"$ref":"#/$defs/a"},{"type":"object"}]}},"$ref":"#/$defs/a"})"});
    out.push_back({"ref-not-not-self", R"({"$defs":{"a":{"not":{"not":{"$ref":"#/$defs/a"}}}},"$ref":"#/$defs/a"})"});
    out.push_back({"ref-not-self", R"({"$defs":{"a":{"not":{"$ref":"#/$defs/a"}}},"$ref":"#/$defs/a"})"});
    out.push_back({"ref-not-anyOf-self", R"({"$defs":{"a":{"not":{"anyOf":[{"$ref":"#/$defs/a"},{"type":"string"}]}}},"$ref":"#/$defs/a"})"});
    out.push_back({"ref-if-self", R"({"$defs":{"a":{"if":{"$ref":"#/$defs/a"},"then":{"type":"string"}}},"$ref":"#/$defs/a"})"});
    // the shape of a tree schema negated: not (object whose child is the same schema)
    out.push_back({"not-recursive-tree",
                   R"({"$defs":{"node":{"type":"object","properties":{"value":{"type":"integer"},"left":{"$ref":"#/$defs/node"},"right":{"$ref":"#/$defs/node"}},"required":["value"],"additionalProperties":false}},"not":{"$ref":"#/$defs/node"}})"});
    out.push_back({"oneOf-recursive-tree",
                   R"({"$defs":{"node":{"type":"object","properties":{"kids":{"type":"array","items":{"$ref":"#/$defs/node"}},"name":{"type":"string"}}}},"oneOf":[{"$ref":"#/$defs/node"},{"type":"object","properties":{"kids":{"not":{"$ref":"#/$defs/node"}}}}]})"});
    for (int n : {1000, 10000}) {  // a chain of definitions, each referring to the next
        const std::string k = std::to_string(n);
        auto ref = [](int i) { return R"({"$ref":"#/$defs/d)" + std::to_string(i) + "\"}"; };
        auto def = [&](int i, const std::string & body) { return "\"d" + std::to_string(i) + "\":" + body; };
        const std::string chain = members_text(n + 1, '{', [&](int i) { return def(i, i < n ? ref(i + 1) : R"({"type":"integer"})"); });
        out.push_back({"ref-chain-" + k, R"({"$defs":)" + chain + R"(,"$ref":"#/$defs/d0"})"});
        const std::string objects = members_text(n + 1, '{', [&](int i) {
            return def(i, i < n ? R"({"type":"object","properties":{"x":)" + ref(i + 1) + "}}" : R"({"type":"integer"})");
        });
        out.push_back({"ref-chain-objects-" + k, R"({"$defs":)" + objects + R"(,"$ref":"#/$defs/d0"})"});
        out.push_back({"ref-chain-objects-not-" + k, R"({"$defs":)" + objects + R"(,"not":{"$ref":"#/$defs/d0"}})"});
    }
}

// Deep nesting through every keyword that nests.
inline void add_deep_nests(std::vector<hostile_schema> & out) {
    for (int d : {100, 1000, 10000}) {
        const std::string n = std::to_string(d);
        out.push_back({"nest-" + n + "-properties", nest(R"({"type":"object","properties":{"a":)", "}}", "{}", d)});
        out.push_back({"nest-" + n + "-items", nest(R"({"type":"array","items":)", "}", R"({"type":"integer"})", d)});
        out.push_back({"nest-" + n + "-not", nest(R"({"not":)", "}", R"({"type":"string"})", d)});
        out.push_back({"nest-" + n + "-anyOf", nest(R"({"anyOf":[{"type":"null"},)", "]}", R"({"type":"string"})", d)});
        out.push_back({"nest-" + n + "-oneOf", nest(R"({"oneOf":[{"type":"null"},)", "]}", R"({"type":"string"})", d)});
        out.push_back({"nest-" + n + "-allOf", nest(R"({"allOf":[{"type":"object"},)", "]}", R"({"required":["a"]})", d)});
        out.push_back({"nest-" + n + "-if", nest(R"({"if":{"type":"object"},"then":)", "}", R"({"required":["a"]})", d)});
        out.push_back({"nest-" + n + "-not-properties", nest(R"({"not":{"type":"object","properties":{"a":)", "}}}", R"({"type":"string"})", d)});
        out.push_back({"nest-" + n + "-dependentSchemas", nest(R"({"type":"object","dependentSchemas":{"a":)", "}}", R"({"required":["b"]})", d)});
        out.push_back({"nest-" + n + "-arrays", nest("[", "]", "1", d)});  // not a schema at all
        out.push_back({"nest-" + n + "-enum", R"({"enum":[)" + nest("[", "]", "1", d) + "]}"});
    }
}

// Wide documents: many properties, huge enums, many patterns.
inline void add_wide(std::vector<hostile_schema> & out) {
    for (int n : {1000, 100000}) {
        auto str = [](const std::string & s) { return "\"" + s + "\""; };
        const std::string props = members_text(n, '{', [&](int i) { return str("p" + std::to_string(i)) + R"(:{"type":"integer"})"; });
        const std::string req = members_text(n, '[', [&](int i) { return str("p" + std::to_string(i)); });
        const std::string strings = members_text(n, '[', [&](int i) { return str("value-" + std::to_string(i)); });
        const std::string numbers = members_text(n, '[', [&](int i) { return std::to_string(i * 7); });
        const std::string objects = members_text(n, '[', [&](int i) { return R"({"id":)" + std::to_string(i) + R"(,"tags":["a",)" + std::to_string(i) + "]}"; });
        const std::string pats = members_text(std::min(n, 5000), '{', [&](int i) { return str("^k" + std::to_string(i) + "[a-z]*$") + R"(:{"type":"integer"})"; });
        const std::string k = std::to_string(n);
        out.push_back({"properties-" + k, R"({"type":"object","properties":)" + props + "}"});
        out.push_back({"properties-required-" + k, R"({"type":"object","properties":)" + props + R"(,"required":)" + req + "}"});
        out.push_back({"properties-counted-" + k, R"({"type":"object","properties":)" + props + R"(,"minProperties":)" +
                                                      std::to_string(n / 2) + R"(,"maxProperties":)" + std::to_string(n / 2 + 1) + "}"});
        out.push_back({"not-properties-" + k, R"({"not":{"type":"object","properties":)" + props + R"(,"required":)" + req + "}}"});
        out.push_back({"enum-strings-" + k, R"({"enum":)" + strings + "}"});
        out.push_back({"enum-numbers-" + k, R"({"type":"integer","minimum":5,"enum":)" + numbers + "}"});
        out.push_back({"enum-objects-" + k, R"({"enum":)" + objects + "}"});
        out.push_back({"not-enum-" + k, R"({"type":"string","not":{"enum":)" + strings + "}}"});
        out.push_back({"string-not-enum-pattern-" + k, R"({"type":"string","pattern":"^v","not":{"enum":)" + strings + "}}"});
        out.push_back({"unique-enum-" + k, R"({"type":"array","uniqueItems":true,"items":{"enum":)" + strings + "}}"});
        out.push_back({"patternProperties-" + k, R"({"type":"object","additionalProperties":false,"patternProperties":)" + pats + "}"});
        out.push_back({"duplicate-keys-" + k, R"({"type":"object","properties":)" +
                                                  members_text(n, '{', [&](int i) { return str("p" + std::to_string(i % 7)) + R"(:{"type":"integer"})"; }) + "}"});
    }
    json props = json::object();
    for (int i = 0; i < 64; ++i) props["o" + std::to_string(i)] = {{"type", "boolean"}};
    out.push_back({"optional-64-counted", json{{"type", "object"}, {"properties", props}, {"minProperties", 20}, {"maxProperties", 40}}.dump()});
    json deps = json::object();
    for (int i = 0; i < 63; ++i) deps["o" + std::to_string(i)] = json::array({"o" + std::to_string(i + 1)});
    out.push_back({"optional-64-dependencies", json{{"type", "object"}, {"properties", props}, {"dependentRequired", deps}}.dump()});
}

// Alternations of alternations and products of them.
inline void add_alternations(std::vector<hostile_schema> & out) {
    for (const char * key : {"anyOf", "oneOf"}) {
        for (int width : {4, 10}) {  // width^depth leaves
            json s = {{"type", "integer"}, {"minimum", 0}};
            for (int d = 0; d < 5; ++d) {
                json branches = json::array();
                for (int i = 0; i < width; ++i) {
                    json b = s;
                    if (b.contains("minimum")) b["minimum"] = i;
                    branches.push_back(b);
                }
                s = {{key, branches}};
            }
            out.push_back({std::string(key) + "-of-" + key + "-" + std::to_string(width), s.dump()});
        }
        // allOf of many alternations: the branches multiply when merged
        json all = json::array();
        for (int i = 0; i < 24; ++i) {
            all.push_back({{key, json::array({{{"required", {"a" + std::to_string(i)}}}, {{"required", {"b" + std::to_string(i)}}}})}});
        }
        out.push_back({std::string("allOf-of-") + key + "-24", json{{"type", "object"}, {"allOf", all}}.dump()});
        json typed = json::array();
        for (int i = 0; i < 24; ++i) {
            typed.push_back({{key, json::array({{{"type", "object"}, {"properties", {{"x" + std::to_string(i), {{"type", "string"}}}}}},
                                                {{"type", "object"}, {"properties", {{"y" + std::to_string(i), {{"type", "integer"}}}}}}})}});
        }
        out.push_back({std::string("allOf-of-typed-") + key + "-24", json{{"allOf", typed}}.dump()});
        json conds = json::array();
        for (int i = 0; i < 24; ++i) {
            conds.push_back({{"if", {{"required", {"c" + std::to_string(i)}}}}, {"then", {{"required", {"d" + std::to_string(i)}}}},
                             {"else", {{"properties", {{"e" + std::to_string(i), {{"type", "string"}}}}}}}});
        }
        out.push_back({std::string("allOf-of-if-24-") + key, json{{"type", "object"}, {"allOf", conds}}.dump()});
    }
    json overlapping = json::array();
    for (int i = 0; i < 64; ++i) overlapping.push_back({{"type", "string"}, {"minLength", i}});
    out.push_back({"oneOf-overlapping-64", json{{"oneOf", overlapping}}.dump()});
    json nots = json::array();
    for (int i = 0; i < 64; ++i) nots.push_back({{"not", {{"type", "object"}, {"properties", {{"p" + std::to_string(i), {{"minimum", i}}}}}}}});
    out.push_back({"allOf-of-not-properties-64", json{{"allOf", nots}}.dump()});
}

// Patterns with nested quantifiers, and lengths that make automata large.
inline void add_patterns(std::vector<hostile_schema> & out) {
    const std::vector<std::string> patterns = {
        "(a+)+$", "^(a+)+$", "((a*)*)*b", "(a|aa)+$", "^(a|a?)+$", "(.*a){20}", "^(.*,){30}x$", "([a-z]{1,100}){1,100}",
        "(a{0,1000}){0,1000}", "^(a{1,1000}){1,1000}$", "((((((((((a*)*)*)*)*)*)*)*)*)*)*", "(a|b)*a(a|b){20}$",
        "^(\\w+\\s?)*$", "^([a-zA-Z0-9])(([\\-.]|[_]+)?([a-zA-Z0-9]+))*(@){1}[a-z0-9]+[.]{1}(([a-z]{2,3})|([a-z]{2,3}[.]{1}[a-z]{2,3}))$",
        "x{1000000}", "(x{1000}){1000}", "[\\u0000-\\uFFFF]{65535}", "^(?:a|b|c|d|e|f|g|h|i|j|k|l|m|n|o|p|q|r|s|t|u|v|w|x|y|z){1,64}$",
        "(?=a)b", "(a)\\1", "[", "(((", "a{2,1}", "\\",
    };
    int i = 0;
    for (const std::string & p : patterns) {
        const std::string n = std::to_string(i++);
        out.push_back({"pattern-" + n, json{{"type", "string"}, {"pattern", p}}.dump()});
        out.push_back({"pattern-lengths-" + n, json{{"type", "string"}, {"pattern", p}, {"minLength", 10}, {"maxLength", 5000}}.dump()});
        out.push_back({"pattern-not-" + n, json{{"type", "string"}, {"pattern", "^[ab]*$"}, {"not", {{"pattern", p}}}}.dump()});
        out.push_back({"pattern-key-" + n, json{{"type", "object"}, {"patternProperties", {{p, {{"type", "integer"}}}}},
                                               {"properties", {{"aaaa", {{"type", "string"}}}}}, {"additionalProperties", false}}.dump()});
    }
    out.push_back({"pattern-deep-groups-10000", json{{"type", "string"}, {"pattern", nest("(", ")", "a", 10000)}}.dump()});
    out.push_back({"pattern-deep-groups-lengths-10000",
                   json{{"type", "string"}, {"pattern", nest("(", ")*", "a", 10000)}, {"maxLength", 10}}.dump()});
    out.push_back({"pattern-alternation-10000", json{{"type", "string"}, {"pattern", [] {
                                                        std::string p = "^(";
                                                        for (int k = 0; k < 10000; ++k) p += (k ? "|w" : "w") + std::to_string(k);
                                                        return p + ")$";
                                                    }()}}.dump()});
    json pats = json::array();
    for (int k = 0; k < 64; ++k) pats.push_back({{"pattern", "(a|b)*a(a|b){" + std::to_string(k % 16 + 4) + "}"}});
    out.push_back({"allOf-of-patterns-64", json{{"type", "string"}, {"allOf", pats}, {"maxLength", 64}}.dump()});
}

// Counts and numbers at the edges.
inline void add_counts(std::vector<hostile_schema> & out) {
    out.push_back({"string-maxLength-huge", R"({"type":"string","maxLength":1000000000000})"});
    out.push_back({"string-minLength-million", R"({"type":"string","minLength":1000000})"});
    out.push_back({"string-lengths-format-huge", R"({"type":"string","format":"email","minLength":1000,"maxLength":100000})"});
    out.push_back({"array-minItems-million", R"({"type":"array","items":{"type":"object","properties":{"a":{"type":"integer"}}},"minItems":1000000})"});
    out.push_back({"array-maxItems-huge", R"({"type":"array","maxItems":1e300})"});
    out.push_back({"array-nested-counts", R"({"type":"array","minItems":1000,"items":{"type":"array","minItems":1000,"items":{"type":"array","minItems":1000}}})"});
    out.push_back({"prefixItems-10000", json{{"type", "array"}, {"prefixItems", json(std::vector<json>(10000, {{"type", "integer"}}))}}.dump()});
    out.push_back({"number-multipleOf-tiny", R"({"type":"number","multipleOf":1e-300})"});
    out.push_back({"number-multipleOf-tiny-bounded", R"({"type":"number","multipleOf":0.0000001,"minimum":-1e300,"maximum":1e300})"});
    out.push_back({"number-bounds-huge", R"({"type":"number","minimum":-1e308,"maximum":1e308,"exclusiveMinimum":-1e307})"});
    out.push_back({"integer-range-wide", R"({"type":"integer","minimum":-9007199254740991,"maximum":9007199254740991,"multipleOf":3})"});
    out.push_back({"integer-bounds-long", R"({"type":"integer","minimum":1e200,"maximum":1.0000000000000001e200})"});
    out.push_back({"object-min-max-properties", R"({"type":"object","minProperties":100000,"maxProperties":1000000})"});
    out.push_back({"unique-items-many", R"({"type":"array","items":{"enum":[1,2,3,4,5,6,7,8]},"uniqueItems":true,"maxItems":1000000})"});
}

}  // namespace hostile_schemas_detail

// The whole suite (a few hundred cases, some of them megabytes of JSON), built on each call.
inline std::vector<hostile_schema> hostile_schemas() {
    using namespace hostile_schemas_detail;
    std::vector<hostile_schema> out;
    add_ref_at_every_keyword(out);
    add_ref_loops(out);
    add_deep_nests(out);
    add_wide(out);
    add_alternations(out);
    add_patterns(out);
    add_counts(out);
    return out;
}

// Writes the suite into dir as NAME.json files of the shape {"schema": …, "tests": []} (the
// format of ../shared/testdata/jsonschema, for `inferd-cli grammar bench`), each schema's text
// embedded as it is; returns how many files were written.
inline size_t hostile_schemas_write(const std::filesystem::path & dir) {
    std::filesystem::create_directories(dir);
    size_t n = 0;
    for (const hostile_schema & h : hostile_schemas()) {
        std::ofstream f(dir / (h.name + ".json"), std::ios::binary);
        f << "{\"schema\":" << h.schema << ",\"tests\":[],\"description\":\"hostile: " << h.name << "\"}";
        ++n;
    }
    return n;
}
