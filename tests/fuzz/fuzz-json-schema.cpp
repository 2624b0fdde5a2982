// libFuzzer target for the JSON Schema compiler (built with clang, -fsanitize=fuzzer,address,undefined;
// see tests/fuzz/run-fuzz.sh). Each input is schema text: json_schema_compile() with the default
// budgets but a 2 s deadline and, when it succeeds, grammar_program_build() of the grammar. An
// error result is a fine answer; a crash (a stack overflow included), a sanitizer report, an
// exception, a run past libFuzzer's -timeout (run-fuzz.sh: 10 s, so five times the deadline: a
// compile that does not look at its clock) or a runaway allocation (-rss_limit_mb) is a finding,
// and so is a compiled schema whose GBNF does not parse back for a reason other than a size
// budget ("the schema's grammar does not compile: …").
//
// Structure-aware: LLVMFuzzerCustomMutator parses the input as JSON and applies one structural
// change to a random object of the document: wrap it in `not`, replace it (or a property's
// schema) by a `$ref` to the root or to another object of the document (so reference cycles
// arise, under `not` too), wrap it in allOf / anyOf / oneOf with a copy of another object, give it
// if / then / else or dependentSchemas, nest it under properties or items, copy a subtree into
// it, set a keyword to an extreme value, delete a keyword. Inputs that do not parse, documents
// nested too deep and results past max_size go to libFuzzer's own byte mutations instead.
// LLVMFuzzerCustomCrossOver splices an object of one input into another.
#include "grammar/json-schema.h"
#include "grammar/token-mask.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <random>
#include <string>
#include <string_view>
#include <vector>

extern "C" size_t LLVMFuzzerMutate(uint8_t * data, size_t size, size_t max_size);

namespace {

using json = nlohmann::ordered_json;

[[noreturn]] void finding(const char * what, std::string_view detail) {
    std::fprintf(stderr, "fuzz-json-schema: %s: %.*s\n", what, int(detail.size()), detail.data());
    std::abort();
}

// ---- the structural mutator ----

constexpr uint32_t k_deadline_ms = 2000;  // the compile's own deadline (-timeout is 10 s)

constexpr size_t k_max_walk_depth = 200;  // deeper documents: byte mutations only (dump recurses)
constexpr size_t k_max_nodes = 20000;

struct node_ref {
    json * node;
    std::string pointer;  // JSON pointer from the root ("" for the root)
};

std::string pointer_escape(const std::string & key) {
    std::string out;
    for (char c : key) {
        if (c == '~') out += "~0";
        else if (c == '/') out += "~1";
        else out += c;
    }
    return out;
}

// The objects of the document (and the root, whatever it is), without recursion. False when the
// document is nested deeper than k_max_walk_depth.
bool collect_objects(json & root, std::vector<node_ref> & out) {
    struct item {
        json * node;
        std::string pointer;
        size_t depth;
    };
    std::vector<item> stack{{&root, "", 0}};
    out.push_back({&root, ""});
    while (!stack.empty()) {
        item it = std::move(stack.back());
        stack.pop_back();
        if (it.depth > k_max_walk_depth) return false;
        if (it.node->is_object()) {
            for (auto kv = it.node->begin(); kv != it.node->end(); ++kv) {
                json * child = &kv.value();
                std::string p = it.pointer + "/" + pointer_escape(kv.key());
                if (child->is_object() && out.size() < k_max_nodes) out.push_back({child, p});
                if (child->is_structured()) stack.push_back({child, std::move(p), it.depth + 1});
            }
        } else if (it.node->is_array()) {
            for (size_t i = 0; i < it.node->size(); ++i) {
                json * child = &(*it.node)[i];
                std::string p = it.pointer + "/" + std::to_string(i);
                if (child->is_object() && out.size() < k_max_nodes) out.push_back({child, p});
                if (child->is_structured()) stack.push_back({child, std::move(p), it.depth + 1});
            }
        }
    }
    return true;
}

// A small schema of every kind, for the places where a mutation needs a fresh one.
json small_schema(std::mt19937 & rng) {
    static const char * const schemas[] = {
        R"({"type":"string"})",
        R"({"type":"integer","minimum":0,"maximum":10})",
        R"({"type":"object","properties":{"a":{"type":"string"}},"required":["a"]})",
        R"({"type":"array","items":{"type":"number"},"maxItems":3})",
        R"({"enum":[1,"a",null,true,[1],{"k":1}]})",
        R"({"const":"x"})",
        R"({"required":["a","b"]})",
        R"({"type":"string","pattern":"^[a-z]+$"})",
        R"({"type":["string","null"]})",
        R"({"not":{"type":"null"}})",
        R"({"anyOf":[{"type":"integer"},{"type":"boolean"}]})",
        R"({"additionalProperties":false})",
        R"({"$ref":"#"})",
        "true",
        "false",
        "{}",
    };
    return json::parse(schemas[rng() % (sizeof schemas / sizeof schemas[0])]);
}

json extreme_value(std::mt19937 & rng, std::string * key) {
    switch (rng() % 18) {
        case 0: *key = "minLength"; return 1000000000;
        case 1: *key = "maxLength"; return 0;
        case 2: *key = "maxItems"; return 0;
        case 3: *key = "minItems"; return 1000000000;
        case 4: *key = "multipleOf"; return 1e-9;
        case 5: *key = "pattern"; return "(a+)+$";
        case 6: *key = "minimum"; return -1e308;
        case 7: *key = "maximum"; return 1e308;
        case 8: *key = "exclusiveMinimum"; return 0.1;
        case 9: *key = "minProperties"; return 1000000000;
        case 10: *key = "maxProperties"; return 0;
        case 11: *key = "pattern"; return "([a-z]{1,100}){1,100}";
        case 12: *key = "multipleOf"; return 7;
        case 13: *key = "maxLength"; return 1000000;
        case 14: {
            *key = "enum";
            json e = json::array();
            const size_t n = 1 + rng() % 2000;
            for (size_t i = 0; i < n; ++i) {
                if (i % 3 == 0) e.push_back(int64_t(i));
                else if (i % 3 == 1) e.push_back("v" + std::to_string(i));
                else e.push_back(json{{"k", int64_t(i)}});
            }
            return e;
        }
        case 15: {
            *key = "required";
            json r = json::array();
            const size_t n = 1 + rng() % 64;
            for (size_t i = 0; i < n; ++i) r.push_back("p" + std::to_string(i));
            return r;
        }
        case 16: *key = "uniqueItems"; return true;
        default: *key = "format"; return (rng() % 2) ? "date-time" : "ipv6";
    }
}

void mutate_node(json & doc, std::vector<node_ref> & nodes, std::mt19937 & rng) {
    node_ref & target = nodes[rng() % nodes.size()];
    json & n = *target.node;
    const node_ref & other = nodes[rng() % nodes.size()];
    const std::string ref_other = "#" + other.pointer;
    const json other_copy = *other.node;  // taken first: changing n may free the other node
    auto ensure_object = [&] {
        if (!n.is_object()) n = json::object();
    };
    // n[key] as an object (a keyword such as "properties" may hold a string in the input)
    auto object_at = [&](const char * key) -> json & {
        json & slot = n[key];
        if (!slot.is_object()) slot = json::object();
        return slot;
    };
    switch (rng() % 16) {
        case 0:  // wrap in not
            n = json{{"not", n}};
            break;
        case 1:  // replace by a reference to the root
            n = json{{"$ref", "#"}};
            break;
        case 2:  // replace by a reference to another object (a cycle where it is above)
            n = json{{"$ref", ref_other}};
            break;
        case 3: {  // a property's schema becomes a reference
            ensure_object();
            json & props = n["properties"];
            if (!props.is_object() || props.empty()) props = json{{"x", json::object()}};
            auto it = props.begin();
            std::advance(it, long(rng() % props.size()));
            it.value() = json{{"$ref", (rng() % 3 == 0) ? std::string("#") : ref_other}};
            break;
        }
        case 4: {  // allOf / anyOf / oneOf with a copy of another object
            static const char * const words[] = {"allOf", "anyOf", "oneOf"};
            n = json{{words[rng() % 3], json::array({n, other_copy})}};
            break;
        }
        case 5: {  // if / then / else
            ensure_object();
            n["if"] = (rng() % 2) ? other_copy : small_schema(rng);
            if (rng() % 2) n["then"] = small_schema(rng);
            if (rng() % 2) n["else"] = (rng() % 2) ? json{{"$ref", ref_other}} : small_schema(rng);
            break;
        }
        case 6: {  // dependentSchemas
            ensure_object();
            n["dependentSchemas"] = json{{(rng() % 2) ? "a" : "x", (rng() % 2) ? other_copy : small_schema(rng)}};
            break;
        }
        case 7:  // nest deeper
            if (rng() % 2) n = json{{"type", "object"}, {"properties", json{{"p", n}}}, {"required", json::array({"p"})}};
            else n = json{{"type", "array"}, {"items", n}, {"minItems", 1}};
            break;
        case 8: {  // copy a subtree into this one
            static const char * const slots[] = {"not", "items", "additionalProperties", "contains", "propertyNames"};
            ensure_object();
            if (rng() % 3 == 0) object_at("properties")["c" + std::to_string(rng() % 4)] = other_copy;
            else if (rng() % 2) object_at("$defs")["d" + std::to_string(rng() % 4)] = other_copy;
            else n[slots[rng() % 5]] = other_copy;
            break;
        }
        case 9:
        case 10: {  // a keyword at an extreme
            std::string key;
            json v = extreme_value(rng, &key);
            ensure_object();
            n[key] = std::move(v);
            break;
        }
        case 11:  // delete a keyword
            if (n.is_object() && !n.empty()) {
                auto it = n.begin();
                std::advance(it, long(rng() % n.size()));
                n.erase(it);
            } else {
                n = json::object();
            }
            break;
        case 12: {  // a recursive definition, negated where it stands
            ensure_object();
            const std::string d = "r" + std::to_string(rng() % 3);
            object_at("$defs")[d] = json{{"type", "object"}, {"properties", json{{"x", json{{"$ref", "#" + target.pointer + "/$defs/" + d}}}}}};
            n["not"] = json{{"$ref", "#" + target.pointer + "/$defs/" + d}};
            break;
        }
        case 13: {  // a type, or a list of them
            static const char * const types[] = {"object", "array", "string", "number", "integer", "boolean", "null"};
            ensure_object();
            if (rng() % 3 == 0) n["type"] = json::array({types[rng() % 7], types[rng() % 7]});
            else n["type"] = types[rng() % 7];
            break;
        }
        case 14:  // the whole document: one object as a definition, both required and negated
            doc = json{{"$defs", json{{"s", other_copy}}},
                       {"allOf", json::array({json{{"$ref", "#/$defs/s"}}, json{{"not", json{{"$ref", "#/$defs/s"}}}}})}};
            break;
        default:  // replace by a fresh small schema
            n = small_schema(rng);
            break;
    }
}

// The document of `text` changed once, or "" when it is not JSON or too deep to change safely.
std::string mutate_json(std::string_view text, std::mt19937 & rng) {
    json doc = json::parse(text.begin(), text.end(), nullptr, false);
    if (doc.is_discarded()) return "";
    std::vector<node_ref> nodes;
    if (!collect_objects(doc, nodes)) return "";
    const int changes = 1 + int(rng() % 4 == 0);  // now and then two at once
    for (int i = 0; i < changes; ++i) {
        if (i > 0) {
            nodes.clear();
            if (!collect_objects(doc, nodes)) return "";
        }
        mutate_node(doc, nodes, rng);
    }
    return doc.dump(-1, ' ', false, json::error_handler_t::replace);
}

size_t write_out(const std::string & s, uint8_t * out, size_t max_size) {
    if (s.empty() || s.size() > max_size) return 0;
    std::memcpy(out, s.data(), s.size());
    return s.size();
}

}  // namespace

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t * data, size_t size, size_t max_size, unsigned int seed) {
    std::mt19937 rng(seed);
    // One time in five libFuzzer's byte mutations anyway: the JSON reader's error paths, numbers,
    // keys and strings that no structural change writes.
    if (rng() % 5 != 0) {
        const std::string s = mutate_json(std::string_view(reinterpret_cast<const char *>(data), size), rng);
        if (const size_t n = write_out(s, data, max_size)) return n;
    }
    return LLVMFuzzerMutate(data, size, max_size);
}

extern "C" size_t LLVMFuzzerCustomCrossOver(const uint8_t * data1, size_t size1, const uint8_t * data2, size_t size2,
                                            uint8_t * out, size_t max_out_size, unsigned int seed) {
    std::mt19937 rng(seed);
    json a = json::parse(data1, data1 + size1, nullptr, false);
    json b = json::parse(data2, data2 + size2, nullptr, false);
    if (a.is_discarded() || b.is_discarded()) return 0;
    std::vector<node_ref> na, nb;
    if (!collect_objects(a, na) || !collect_objects(b, nb)) return 0;
    json & into = *na[rng() % na.size()].node;
    const json & from = *nb[rng() % nb.size()].node;
    if (rng() % 2 && into.is_object()) into["c" + std::to_string(rng() % 4)] = from;  // beside, as a keyword's value
    else into = from;
    return write_out(a.dump(-1, ' ', false, json::error_handler_t::replace), out, max_out_size);
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t * data, size_t size) {
    const std::string_view text(reinterpret_cast<const char *>(data), size);
    json_schema_options options;
    options.max_time_ms = k_deadline_ms;
    json_schema_result r;
    try {
        r = json_schema_compile(text, options);
    } catch (const std::exception & e) {
        finding("json_schema_compile threw", e.what());
    }
    if (!r.ok()) {
        static constexpr std::string_view not_compiled = "the schema's grammar does not compile";
        const std::string & e = r.error;
        // the generated GBNF failed to parse: fine for its size budgets, a bug for anything else
        if (e.rfind(not_compiled, 0) == 0 && e.find("too large") == std::string::npos &&
            e.find("repetition count over") == std::string::npos && e.find("nested more than") == std::string::npos) {
            finding("the compiled grammar does not parse", e);
        }
        return 0;
    }
    if (r.gbnf.empty()) finding("a compiled schema without GBNF text", text);
    try {
        const grammar_program_result p = grammar_program_build(r.value, grammar_matcher_work_budget / 10);
        (void)p;
    } catch (const std::exception & e) {
        finding("grammar_program_build threw", e.what());
    }
    return 0;
}
