// The JSON Schema compiler against the generated hostile suite (grammar/hostile-schemas.h):
// every case compiles within the compiler's budgets, or is refused with an error that names
// the place in the schema where it gave up — never a crash, a hang or unbounded memory. A
// grammar that compiles is also prepared for token masks (grammar_program_build), which must
// stay bounded too. Per-case times are printed (the budgets are what is asserted, not a speed).
#include "grammar/hostile-schemas.h"
#include "grammar/json-schema.h"
#include "grammar/token-mask.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// An error a user can act on: it says where ("at /…") or what (a limit, a keyword, a reference).
bool names_a_place(const std::string & error) {
    return error.find("at /") != std::string::npos || error.find("at rule '") != std::string::npos ||
           error.find("not valid JSON") != std::string::npos;
}

}  // namespace

// The server's time budget (the library's default is longer, for `inferd-cli grammar bench`).
json_schema_options server_budgets() {
    json_schema_options o;
    o.max_time_ms = 500;
    return o;
}

TEST(json_schema_hostile, every_case_compiles_within_budget_or_is_refused) {
    struct outcome {
        std::string name;
        double seconds;
        bool ok;
        std::string what;
    };
    std::vector<outcome> all;
    size_t compiled = 0, refused = 0;
    for (const hostile_schema & h : hostile_schemas()) {
        SCOPED_TRACE(h.name);
        const auto t0 = std::chrono::steady_clock::now();
        json_schema_result r = json_schema_compile(h.schema, server_budgets());
        std::string what = r.error;
        bool ok = r.ok();
        if (ok) {
            const grammar_program_result p = grammar_program_build(r.value);
            if (!p.ok()) {
                ok = false;
                what = "program: " + p.error;
            }
        }
        const double s = seconds_since(t0);
        if (ok) {
            ++compiled;
            EXPECT_FALSE(r.gbnf.empty());
        } else {
            ++refused;
            EXPECT_FALSE(what.empty());
            EXPECT_TRUE(names_a_place(what) || what.rfind("program: ", 0) == 0) << what;
        }
        all.push_back({h.name, s, ok, what});
    }
    std::sort(all.begin(), all.end(), [](const outcome & a, const outcome & b) { return a.seconds > b.seconds; });
    std::printf("hostile schemas: %zu cases, %zu compiled, %zu refused; slowest:\n", all.size(), compiled, refused);
    for (size_t i = 0; i < std::min<size_t>(12, all.size()); ++i) {
        std::printf("  %8.3f s  %-40s %s\n", all[i].seconds, all[i].name.c_str(),
                    all[i].ok ? "compiled" : all[i].what.substr(0, 160).c_str());
    }
    EXPECT_GT(compiled, 0u);
    EXPECT_GT(refused, 0u);
}

// The cases that used to take the process down: `not` folded through a reference that leads back
// to itself. Alone, the negated reference is one recursive rule (exact); where it must be folded
// into the schema beside it (oneOf's "this branch and not the others") the fold stops at the
// cycle, and the oneOf is compiled as documented (anyOf) or refused naming the place.
TEST(json_schema_hostile, not_through_a_recursive_ref) {
    // n: objects whose "x", when present, is an n again; not n: a value that is no object, or an
    // object whose chain of "x" ends in a value that is no object
    const json_schema_result r = json_schema_compile(
        R"({"$defs":{"n":{"type":"object","properties":{"x":{"$ref":"#/$defs/n"}}}},"not":{"$ref":"#/$defs/n"}})");
    ASSERT_TRUE(r.ok()) << r.error;
    for (const char * yes : {"1", "\"a\"", "null", "[]", R"({"x":1})", R"({"x":{"x":"a"}})", R"({"x":[],"y":{}})"}) {
        EXPECT_TRUE(grammar_recognize(r.value, yes)) << yes;
    }
    for (const char * no : {"{}", R"({"x":{}})", R"({"x":{"x":{}}})", R"({"y":1})"}) EXPECT_FALSE(grammar_recognize(r.value, no)) << no;

    const json_schema_result one_of = json_schema_compile(
        R"({"$defs":{"n":{"type":"object","properties":{"x":{"$ref":"#/$defs/n"}}}},"oneOf":[{"$ref":"#/$defs/n"},{"required":["b"]}]})");
    if (one_of.ok()) {
        EXPECT_TRUE(grammar_recognize(one_of.value, R"({"x":{}})"));
        EXPECT_TRUE(grammar_recognize(one_of.value, "1")) << "valid against the second branch alone";
    } else {
        EXPECT_NE(one_of.error.find("at /"), std::string::npos) << one_of.error;
    }

    // a reference that is only followed a bounded number of times folds as before
    const json_schema_result ok = json_schema_compile(
        R"({"$defs":{"s":{"type":"string"}},"type":["string","integer"],"not":{"$ref":"#/$defs/s"}})");
    ASSERT_TRUE(ok.ok()) << ok.error;
    EXPECT_TRUE(grammar_recognize(ok.value, "12"));
    EXPECT_FALSE(grammar_recognize(ok.value, "\"a\""));
}

// Budgets of one compile: an explicit nesting bound, a work bound and a deadline, each an error
// that names the place.
TEST(json_schema_hostile, budgets_are_errors_naming_the_place) {
    std::string deep;
    for (int i = 0; i < 10000; ++i) deep += R"({"type":"array","items":)";
    deep += "{}";
    for (int i = 0; i < 10000; ++i) deep += "}";
    json_schema_result r = json_schema_compile(deep);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error.find("nested"), std::string::npos) << r.error;
    EXPECT_NE(r.error.find("/items/items"), std::string::npos) << r.error.substr(0, 300);

    json_schema_options o;
    o.max_time_ms = 1;  // a deadline far too short for this schema
    std::string wide = R"({"type":"object","properties":{)";
    for (int i = 0; i < 2000; ++i) wide += (i ? "," : "") + ("\"p" + std::to_string(i) + "\":{\"type\":\"string\",\"maxLength\":3}");
    wide += R"(},"additionalProperties":false,"required":[)";
    for (int i = 0; i < 2000; ++i) wide += (i ? ",\"p" : "\"p") + std::to_string(i) + "\"";
    wide += "]}";
    r = json_schema_compile(wide, o);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error.find("time"), std::string::npos) << r.error;
    EXPECT_NE(r.error.find("at /"), std::string::npos) << r.error;

    json_schema_options small;
    small.max_rules = 50;
    r = json_schema_compile(wide, small);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error.find("rules"), std::string::npos) << r.error;
    EXPECT_TRUE(json_schema_compile(wide).ok()) << "within the default budgets";
}

// Keys spelled like the compiler's internal keywords are unknown keywords: ignored.
TEST(json_schema_hostile, internal_keyword_names_are_ignored) {
    const json_schema_result r = json_schema_compile(R"({"type":"string","\u0001patterns":["^a$"],"\u0001not-any":[{}]})");
    ASSERT_TRUE(r.ok()) << r.error;
    EXPECT_TRUE(grammar_recognize(r.value, "\"b\""));
    // a listed value is data: its keys are kept
    const json_schema_result listed = json_schema_compile(R"({"const":{"\u0001k":1}})");
    ASSERT_TRUE(listed.ok()) << listed.error;
    EXPECT_TRUE(grammar_recognize(listed.value, R"({"\u0001k":1})"));
    EXPECT_FALSE(grammar_recognize(listed.value, "{}"));
}

// A parsed schema compiles to the grammar its text compiles to; a document nested past the
// budget is refused before it is copied (the copy recurses).
TEST(json_schema_hostile, a_parsed_document_compiles_as_its_text_does) {
    for (const char * text : {R"({"type":"object","properties":{"z":{"type":"integer"},"a":{"enum":["x",1]}},"required":["z"]})",
                              R"({"not":{"type":"object","properties":{"b":{"type":"string"},"a":{"type":"boolean"}}}})",
                              R"({"$defs":{"n":{"anyOf":[{"type":"null"},{"type":"array","items":{"$ref":"#/$defs/n"}}]}},"$ref":"#/$defs/n"})",
                              "true"}) {
        const json_schema_result from_text = json_schema_compile(text);
        const json_schema_result from_doc = json_schema_compile_document(nlohmann::ordered_json::parse(text));
        ASSERT_TRUE(from_text.ok()) << text << ": " << from_text.error;
        EXPECT_EQ(from_doc.error, "") << text;
        EXPECT_EQ(from_doc.gbnf, from_text.gbnf) << text;
    }
    nlohmann::ordered_json deep = nlohmann::ordered_json::object();
    nlohmann::ordered_json * at = &deep;
    for (int i = 0; i < 20000; ++i) at = &((*at)["items"] = nlohmann::ordered_json::object());
    const json_schema_result r = json_schema_compile_document(deep);
    EXPECT_NE(r.error.find("nested deeper"), std::string::npos) << r.error.substr(0, 200);
    // nlohmann's destructor of `deep` would recurse 20,000 deep: take it apart from the leaf up
    while (deep.is_object() && deep.contains("items")) {
        nlohmann::ordered_json next = std::move(deep["items"]);
        deep = std::move(next);
    }
}

// The time budget counts from `started` when it is given (a server counts the request's own
// reading and rendering): a start long ago leaves no time at all.
TEST(json_schema_hostile, the_time_budget_counts_from_the_given_start) {
    json_schema_options o = server_budgets();
    o.started = std::chrono::steady_clock::now() - std::chrono::seconds(2);
    const json_schema_result late = json_schema_compile(R"({"type":"object","properties":{"a":{"type":"string"}}})", o);
    ASSERT_FALSE(late.ok());
    EXPECT_NE(late.error.find("time budget of 500 ms"), std::string::npos) << late.error;
    o.started = std::chrono::steady_clock::now();
    EXPECT_TRUE(json_schema_compile(R"({"type":"object","properties":{"a":{"type":"string"}}})", o).ok());
    EXPECT_TRUE(json_schema_compile(R"({"type":"string"})", server_budgets()).ok()) << "no start: the call's own";
}
