// JSON Schema compilation (grammar/json-schema.h), checked with the Earley recognizer: each
// supported keyword accepts the values it should and rejects the others, in compact and spaced
// serializations; unsupported keywords are errors that name the keyword and the place; integer
// ranges against every value of an interval; patterns; and the real-world collection of
// ../shared/testdata/jsonschema (whole texts; token masks come later), with a floor on the number
// of schemas that pass.
#include "grammar/json-schema-expect.h"
#include "grammar/json-schema.h"
#include "testdata.h"

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

using namespace json_schema_expect;

namespace {

// The sanitizer build (about 10x slower here) checks every 8th schema of the collection: memory
// errors, not the pass count, are what it is for.
#if defined(__SANITIZE_ADDRESS__)
constexpr size_t k_collection_stride = 8;
#else
constexpr size_t k_collection_stride = 1;
#endif

}  // namespace

TEST(json_schema, types) {
    expect_values(R"({"type":"string"})", {R"("")", R"("a\"b\\c\n\u0001é")"}, {"1", "null", "[]"});
    expect_values(R"({"type":"integer"})", {"0", "-7", "123456789012"}, {"1.5", "\"1\"", "true"});
    expect_values(R"({"type":"number"})", {"0", "-7.25", "1e-05", "3.0"}, {"\"1\"", "null"});
    expect_values(R"({"type":"boolean"})", {"true", "false"}, {"0", "null"});
    expect_values(R"({"type":"null"})", {"null"}, {"false"});
    expect_values(R"({"type":["string","null"]})", {"null", "\"x\""}, {"1"});
    expect_values(R"({})", {"null", "1", "{\"a\":[1,{}]}"}, {});
    expect_values("true", {"[]"}, {});
    // without "type", a keyword constrains only values of its kind
    expect_values(R"({"minLength":2})", {"\"ab\"", "5", "null", "{}"}, {"\"a\""});
    expect_values(R"({"format":"positiveInteger","minimum":0,"maximum":3})", {"1", "\"x\"", "2.5"}, {"4", "-1"});
}

TEST(json_schema, objects) {
    const std::string s = R"({"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"string"},"c":{"type":"boolean"}},
        "required":["b"],"additionalProperties":false})";
    expect_values(s, {R"({"b":"x"})", R"({"a":1,"b":"x"})", R"({"b":"x","c":true})", R"({"a":1,"b":"x","c":false})"},
                  {R"({})", R"({"a":1})", R"({"b":1})", R"({"b":"x","d":1})", R"({"a":1,"c":true})"});
    // additional properties: allowed by default (after the declared ones), or by a schema
    expect_values(R"({"type":"object","properties":{"a":{"type":"integer"}}})", {R"({})", R"({"a":1,"z":[1]})", R"({"z":null})"},
                  {R"({"a":"x"})"});
    expect_values(R"({"type":"object","additionalProperties":{"type":"integer"}})", {R"({})", R"({"x":1,"y":2})"},
                  {R"({"x":"1"})"});
    expect_values(R"({"type":"object","properties":{},"additionalProperties":false})", {R"({})"}, {R"({"a":1})"});
    // all optional
    expect_values(R"({"properties":{"a":{"const":1},"b":{"const":2}},"additionalProperties":false})",
                  {R"({})", R"({"a":1})", R"({"b":2})", R"({"a":1,"b":2})"}, {R"({"b":2,"a":1})"});
}

TEST(json_schema, arrays) {
    expect_values(R"({"type":"array","items":{"type":"integer"}})", {"[]", "[1]", "[1,2,3]"}, {"[\"a\"]", "{}"});
    const json_schema_result r = compile_ok(R"({"type":"array","items":{"type":"integer"}})");
    EXPECT_FALSE(grammar_recognize(r.value, "[1,]"));
    EXPECT_FALSE(grammar_recognize(r.value, "[1  ,2]")) << "at most one space";
    EXPECT_TRUE(grammar_recognize(r.value, "[\n  1,\n  2\n]")) << "a newline and indentation";
    expect_values(R"({"type":"array","items":{"type":"integer"},"minItems":2,"maxItems":3})", {"[1,2]", "[1,2,3]"},
                  {"[]", "[1]", "[1,2,3,4]"});
    expect_values(R"({"type":"array","prefixItems":[{"type":"string"},{"type":"integer"}],"items":false})",
                  {"[]", "[\"a\"]", "[\"a\",1]"}, {"[1]", "[\"a\",1,2]"});
    expect_values(R"({"type":"array","prefixItems":[{"type":"string"}],"items":{"type":"null"},"minItems":2})",
                  {"[\"a\",null]", "[\"a\",null,null]"}, {"[\"a\"]", "[\"a\",1]"});
    expect_values(R"({"type":"array","items":[{"type":"string"}],"additionalItems":false})", {"[\"a\"]", "[]"}, {"[\"a\",\"b\"]"});
    expect_values(R"({"type":"array","maxItems":0})", {"[]"}, {"[1]"});
}

TEST(json_schema, enum_const_any_of_all_of) {
    expect_values(R"({"enum":["a",1,null,{"k":[true]}]})", {"\"a\"", "1", "null", R"({"k":[true]})"}, {"\"b\"", "2", R"({"k":[]})"});
    expect_values(R"({"const":"x"})", {"\"x\""}, {"\"y\""});
    expect_values(R"({"anyOf":[{"type":"integer"},{"type":"string","maxLength":1}]})", {"1", "\"a\""}, {"\"ab\"", "null"});
    expect_values(R"({"oneOf":[{"type":"integer"},{"type":"null"}]})", {"1", "null"}, {"\"1\""});
    expect_values(R"({"allOf":[{"type":"object","properties":{"a":{"type":"integer"}},"required":["a"]},
                               {"properties":{"b":{"type":"string"}},"required":["b"]}],"properties":{"a":true,"b":true},
                      "additionalProperties":false})",
                  {R"({"a":1,"b":"x"})"}, {R"({"a":1})", R"({"b":"x"})", R"({"a":1,"b":"x","c":2})"});
    // additionalProperties false beside allOf forbids what only the branches declare
    EXPECT_EQ(compile_error(R"({"allOf":[{"properties":{"a":{}},"required":["a"]}],"additionalProperties":false})"),
              "required property 'a' at / is never valid");
    expect_values(R"({"type":"object","properties":{"a":{"type":"integer"}},"anyOf":[{"required":["a"]},{"properties":{"a":{"const":5}}}],"additionalProperties":false})",
                  {R"({"a":1})", R"({})", R"({"a":5})"}, {R"({"a":"x"})"});
}

TEST(json_schema, refs_and_recursion) {
    expect_values(R"({"$defs":{"n":{"type":"integer"}},"type":"object","properties":{"x":{"$ref":"#/$defs/n"}},"additionalProperties":false})",
                  {R"({"x":1})", R"({})"}, {R"({"x":"1"})"});
    const std::string tree = R"({"definitions":{"node":{"type":"object","properties":{"v":{"type":"integer"},
        "kids":{"type":"array","items":{"$ref":"#/definitions/node"}}},"required":["v"],"additionalProperties":false}},
        "$ref":"#/definitions/node"})";
    expect_values(tree, {R"({"v":1})", R"({"v":1,"kids":[{"v":2},{"v":3,"kids":[]}]})"}, {R"({"v":1,"kids":[{}]})"});
    expect_values(R"({"type":"array","items":{"$ref":"#"},"maxItems":2})", {"[]", "[[],[[]]]"}, {"[1]", "[[],[],[]]"});
    EXPECT_EQ(compile_error(R"({"$ref":"#/$defs/missing"})"), "$ref '#/$defs/missing' at / points at nothing");
    EXPECT_NE(compile_error(R"({"$ref":"other.json#/a"})").find("unsupported $ref 'other.json#/a'"), std::string::npos);
}

TEST(json_schema, strings) {
    expect_values(R"({"type":"string","minLength":2,"maxLength":3})", {"\"ab\"", "\"abc\"", "\"a\\nb\"", "\"éé\""},
                  {"\"a\"", "\"abcd\""});
    expect_values(R"({"type":"string","pattern":"^[a-z]+-\\d{2}$"})", {"\"ab-12\""}, {"\"ab-1\"", "\"Ab-12\"", "\"x ab-12\""});
    expect_values(R"({"type":"string","pattern":"b+"})", {"\"b\"", "\"abbc\""}, {"\"ac\""});
    expect_values(R"({"type":"string","pattern":"^(cat|dog)s?$"})", {"\"cat\"", "\"dogs\""}, {"\"cow\""});
    expect_values(R"({"type":"string","pattern":"^[^a]\"$"})", {"\"b\\\"\""}, {"\"a\\\"\""});
    expect_values(R"({"type":"string","format":"date"})", {"\"2024-02-29\""}, {"\"2024-13-01\"", "\"24-01-01\""});
    expect_values(R"({"type":"string","format":"date-time"})", {"\"2024-02-29T12:30:00Z\"", "\"2024-02-29T12:30:00.5+01:00\""},
                  {"\"2024-02-29 12:30\""});
    expect_values(R"({"type":"string","format":"uuid"})", {"\"123e4567-e89b-12d3-a456-426614174000\""}, {"\"123e4567\""});
    expect_values(R"({"type":"string","format":"email"})", {"\"a.b@example.com\""}, {"\"ab\"", "\"a@b@c\""});
    expect_values(R"({"type":"string","format":"uri"})", {"\"https://example.com/a?b=c\""}, {"\"no scheme\""});
    EXPECT_NE(compile_error(R"J({"type":"string","pattern":"^(?=a)"})J").find("'pattern' at /: lookaround"), std::string::npos);
    EXPECT_NE(compile_error(R"({"type":"string","pattern":"(a)\\1"})").find("backreferences"), std::string::npos);
}

TEST(json_schema, integer_ranges_exactly) {
    const std::vector<std::pair<int64_t, int64_t>> ranges = {{0, 0}, {0, 9}, {1, 100}, {-15, 7}, {-300, -42}, {5, 1234}, {99, 101}};
    for (const auto & [lo, hi] : ranges) {
        const std::string schema = R"({"type":"integer","minimum":)" + std::to_string(lo) + R"(,"maximum":)" + std::to_string(hi) + "}";
        const json_schema_result r = compile_ok(schema);
        for (int64_t v = lo - 150; v <= hi + 150; ++v) {
            EXPECT_EQ(grammar_recognize(r.value, std::to_string(v)), v >= lo && v <= hi) << schema << " value " << v;
        }
    }
    expect_values(R"({"type":"integer","minimum":10})", {"10", "11", "99999"}, {"9", "-10", "0"});
    expect_values(R"({"type":"integer","exclusiveMinimum":0,"exclusiveMaximum":3})", {"1", "2"}, {"0", "3"});
    expect_values(R"({"type":"integer","maximum":-2})", {"-2", "-1000"}, {"-1", "0"});
    expect_values(R"({"type":"number","minimum":0,"maximum":100})", {"0", "0.5", "99.99", "100", "100.0"}, {"-1", "100.5", "101"});
    expect_values(R"({"type":"number","minimum":-90,"maximum":90})", {"-90", "-45.5", "0", "0.25", "90", "90.0", "-90.00"},
                  {"-90.5", "91", "90.1", "-100"});
    expect_values(R"({"type":"number","exclusiveMinimum":0})", {"0.5", "1", "123.25"}, {"0", "0.0", "-1", "-0.5"});
    expect_values(R"({"type":"number","exclusiveMinimum":-2,"exclusiveMaximum":-1})", {"-1.5", "-1.01"}, {"-2", "-1", "-2.5", "0"});
    expect_values(R"({"type":"number","minimum":1,"exclusiveMinimum":true,"maximum":2})", {"1.5", "2"}, {"1", "1.0", "2.5"});
    expect_values(R"({"type":"number","minimum":0.5})", {"0.5", "0.51", "7"}, {"0.49", "0", "-1"});
}

TEST(json_schema, unsupported_keywords_are_named) {
    EXPECT_EQ(compile_error(R"({"type":"object","properties":{"a":{"not":{"multipleOf":3}}}})"),
              "unsupported keyword 'not' at /properties/a (this form of it cannot be enforced)");
    EXPECT_EQ(compile_error(R"({"type":"object","properties":{"a":{"not":{}}}})"),
              "unsupported keyword 'not' at /properties/a (it rejects every value)");
    EXPECT_EQ(compile_error(R"({"type":"array","items":{"type":"string"},"uniqueItems":true})"),
              "unsupported keyword 'uniqueItems' at / (only for at most one item, or items from at most 8 known values)");
    EXPECT_EQ(compile_error(R"({"type":"array","contains":{"type":"string"}})"), "unsupported keyword 'contains' at /");
    EXPECT_EQ(compile_error(R"({"type":"string","allOf":[{"maxLength":2},{"format":"date"}],"format":"uuid"})"),
              "allOf at /: cannot merge 'format' of two branches");
    EXPECT_NE(compile_error("{").find("not valid JSON"), std::string::npos);
    EXPECT_EQ(compile_error(R"({"type":"strin"})"), "unknown type 'strin' at /");
    EXPECT_EQ(compile_error("false"), "schema false at / (no value is valid)");
}

TEST(json_schema, real_world_collection) {
    INFERD_REQUIRE_TESTDATA(dir);
    std::vector<std::filesystem::path> files;
    for (const auto & e : std::filesystem::directory_iterator(dir + "/jsonschema")) {
        if (e.path().extension() == ".json") files.push_back(e.path());
    }
    std::sort(files.begin(), files.end());
    ASSERT_GT(files.size(), 2500u);
    size_t checked = 0, compiled = 0, passing = 0, valid_rejected = 0, invalid_accepted = 0;
    const bool verbose = std::getenv("INFERD_TEST_VERBOSE") != nullptr;  // every failure, for debugging
    const auto t0 = std::chrono::steady_clock::now();
    for (size_t fi = 0; fi < files.size(); fi += k_collection_stride) {
        const std::filesystem::path & f = files[fi];
        ++checked;
        std::ifstream in(f);
        std::stringstream ss;
        ss << in.rdbuf();
        const ojson doc = ojson::parse(ss.str());
        const json_schema_result r = json_schema_compile(doc["schema"].dump());
        if (!r.ok()) {
            if (verbose) std::printf("%s: compile error: %s\n", f.filename().c_str(), r.error.c_str());
            continue;
        }
        ++compiled;
        bool pass = true;
        for (const ojson & t : doc["tests"]) {
            const bool valid = t["valid"].get<bool>();
            for (const std::string & text : {compact(t["data"]), spaced(t["data"])}) {
                const bool accepted = grammar_recognize(r.value, text);
                if (accepted != valid) pass = false;
                if (valid && !accepted) ++valid_rejected;
                if (!valid && accepted) ++invalid_accepted;
                if (verbose && accepted != valid) {
                    std::printf("%s: %s %s\n", f.filename().c_str(), valid ? "valid rejected:" : "invalid accepted:",
                                text.substr(0, 300).c_str());
                }
            }
        }
        passing += pass ? 1 : 0;
        if (verbose) {
            const double s1 = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            std::printf("%s: done at %.3f s\n", f.filename().c_str(), s1);
        }
    }
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("jsonschema: %zu schemas, %zu compile, %zu pass (%.1f%%), %zu valid texts rejected, %zu invalid texts accepted, %.1f s\n",
                checked, compiled, passing, 100.0 * double(passing) / double(checked), valid_rejected, invalid_accepted, secs);
    if (k_collection_stride != 1) {
        std::printf("jsonschema: every %zu-th schema only (sanitizer build); no floor checked\n", k_collection_stride);
        return;
    }
    // Measured: 2,483 compile and 2,437 of 2,568 pass (whole texts, both serializations); no
    // invalid instance is accepted. The floor keeps a change from losing schemas unnoticed;
    // raise it as the compiler learns more.
    EXPECT_GE(passing, 2432u);
    EXPECT_GE(compiled, 2478u);
    // Schemas are never loosened: an invalid text accepted is a defect (oneOf compiled as anyOf,
    // where it cannot be made exact, is the one documented exception; the collection has none).
    EXPECT_EQ(invalid_accepted, 0u);
}
