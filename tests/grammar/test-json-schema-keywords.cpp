// JSON Schema keywords beyond the basic ones (grammar/json-schema.h), checked with the Earley
// recognizer in compact and spaced serializations: patternProperties, not, pattern with lengths
// and anchors anywhere, formats (dates against the calendar), minProperties / maxProperties,
// dependencies and presence-only anyOf / oneOf, uniqueItems over known values, multipleOf,
// decimal bounds (against every value of a grid), enums filtered by the keywords beside them,
// allOf with additionalProperties, schemas that no value satisfies, and the errors for the forms
// that stay unsupported.
#include "grammar/json-schema-expect.h"
#include "grammar/json-schema.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>

using namespace json_schema_expect;

TEST(json_schema_keywords, pattern_properties) {
    expect_values(R"({"type":"object","patternProperties":{"^x-":{"type":"integer"}},"additionalProperties":false})",
                  {R"({})", R"({"x-a":1})", R"({"x-a":1,"x-b":2})", R"({"x-":0})"}, {R"({"y":1})", R"({"x-a":"s"})", R"({"ax-":1})"});
    // declared properties first; keys matching the pattern take its schema, others anything
    expect_values(R"({"type":"object","properties":{"a":{"type":"string"}},"patternProperties":{"^[0-9]+$":{"type":"integer"}}})",
                  {R"({"a":"s","1":2,"z":true})", R"({"12":3})", R"({"z":[1]})"}, {R"({"1":"x"})", R"({"a":1})", R"({"a":"s","1":2.5})"});
    // a declared key that matches a pattern must satisfy both schemas
    expect_values(R"({"properties":{"x-1":{"type":"integer"}},"patternProperties":{"^x-":{"minimum":5}},"additionalProperties":false})",
                  {R"({"x-1":7})", R"({"x-2":5.5})"}, {R"({"x-1":3})", R"({"x-1":7.5})", R"({"x-2":4})"});
    // a key matching two patterns takes both schemas
    expect_values(R"({"patternProperties":{"a":{"type":"integer"},"b":{"minimum":10}},"additionalProperties":false})",
                  {R"({"ab":12,"a":1,"b":11.5})"}, {R"({"ab":5})", R"({"ab":12.5})", R"({"c":1})"});
    // additionalProperties applies to keys that match no pattern
    expect_values(R"({"patternProperties":{"^i":{"type":"integer"}},"additionalProperties":{"type":"string"}})",
                  {R"({"i1":1,"s":"x"})", R"({})"}, {R"({"i1":"x"})", R"({"s":1})"});
    // keys are matched as decoded text: quotes and backslashes in keys
    expect_values(R"({"patternProperties":{"^q\"":{"type":"null"},"\\\\$":{"type":"boolean"}},"additionalProperties":false})",
                  {R"({"q\"x":null})", R"({"a\\":true})"}, {R"({"q\"x":1})", R"({"qx":null})", R"({"a\\":null})"});
    EXPECT_NE(compile_error(R"J({"patternProperties":{"(?=a)":{}}})J").find("'patternProperties' at /: '(?=a)': lookaround"),
              std::string::npos);
}

TEST(json_schema_keywords, additional_keys_are_exact) {
    // an additional key is never a declared one, however it is escaped
    const json_schema_result r = compile_ok(R"({"type":"object","properties":{"a":{"type":"integer"}}})");
    EXPECT_TRUE(grammar_recognize(r.value, R"({"a":1,"b":"x"})"));
    EXPECT_FALSE(grammar_recognize(r.value, R"({"\u0061":"x"})"));
    EXPECT_FALSE(grammar_recognize(r.value, R"({"a":1,"a":"x"})"));
    EXPECT_TRUE(grammar_recognize(r.value, R"({"\n":"x"})"));
    expect_values(R"({"type":"object","properties":{"a\"b":{"type":"integer"}}})", {R"({"a\"b":1,"ab":"x"})"}, {R"({"a\"b":"x"})"});
}

TEST(json_schema_keywords, not_keyword) {
    expect_values(R"({"type":["string","integer"],"not":{"type":"integer"}})", {R"("a")"}, {"1"});
    expect_values(R"({"not":{"type":"string"}})", {"1", "null", "{}", "[]", "1.5"}, {R"("a")"});
    expect_values(R"({"type":"string","not":{"enum":["a","b"]}})", {R"("c")", R"("ab")", R"("")"}, {R"("a")", R"("b")"});
    expect_values(R"({"type":"integer","not":{"const":3}})", {"2", "4", "30", "-3"}, {"3"});
    expect_values(R"({"type":"number","minimum":0,"maximum":10,"not":{"enum":[5,7.5]}})", {"4.99", "5.01", "7", "10", "7.25"},
                  {"5", "7.5", "5.0", "7.50", "11"});
    expect_values(R"({"type":"boolean","not":{"const":true}})", {"false"}, {"true"});
    expect_values(R"({"type":"object","properties":{"a":{},"b":{}},"not":{"required":["a","b"]}})",
                  {R"({})", R"({"a":1})", R"({"b":1})", R"({"c":1})"}, {R"({"a":1,"b":2})", R"({"a":1,"b":2,"c":3})"});
    // {"required": …} holds for every value that is not an object: not of it only for objects
    expect_values(R"({"not":{"required":["a"]}})", {R"({})", R"({"b":1})"}, {R"({"a":1})", "1", R"("a")"});
    expect_values(R"({"type":"string","not":{"pattern":"^x"}})", {R"("ax")", R"("")"}, {R"("x")", R"("xy")"});
    expect_values(R"({"not":{"not":{"type":"string"}}})", {R"("a")"}, {"1"});
    expect_values(R"({"type":"string","not":{"anyOf":[{"const":"a"},{"pattern":"^b"}]}})", {R"("c")", R"("ab")"}, {R"("a")", R"("bc")"});
    expect_values(R"({"type":"integer","not":{"minimum":5}})", {"4", "-3"}, {"5", "6"});
    expect_values(R"({"type":"string","not":{"maxLength":2}})", {R"("abc")"}, {R"("ab")", R"("")"});
    expect_values(R"({"type":"object","not":{"type":"object","required":["a"]}})", {R"({})"}, {R"({"a":1})"});
    // not of properties: some property present with a value its schema rejects; of
    // additionalProperties false: some key the schema does not declare
    expect_values(R"({"type":"object","not":{"properties":{"a":{"type":"string"}}}})", {R"({"a":1})", R"({"a":null,"b":1})"},
                  {R"({})", R"({"a":"x"})", R"({"b":1})"});
    expect_values(R"({"type":"object","not":{"additionalProperties":false,"properties":{"a":{}}}})", {R"({"b":1})", R"({"a":1,"b":2})"},
                  {R"({})", R"({"a":1})"});
    expect_values(R"({"type":"object","properties":{"a":{},"b":{}},"not":{"properties":{"a":{}},"additionalProperties":false}})",
                  {R"({"b":1})", R"({"z":1})", R"({"a":1,"b":1})"}, {R"({"a":1})", R"({})"});
    EXPECT_EQ(compile_error(R"({"type":"object","not":{"enum":[{"a":1}]}})"), "unsupported keyword 'not' at / (excluding an object value)");
    expect_values(R"({"enum":[{"a":1},{"a":2}],"not":{"enum":[{"a":1}]}})", {R"({"a":2})"}, {R"({"a":1})"});  // listed: checked
    EXPECT_EQ(compile_error(R"({"not":{}})"), "unsupported keyword 'not' at / (it rejects every value)");
    EXPECT_EQ(compile_error(R"({"not":true})"), "unsupported keyword 'not' at / (it rejects every value)");
    EXPECT_EQ(compile_error(R"({"not":{"items":{"type":"string"}}})"), "unsupported keyword 'not' at / (this form of it cannot be enforced)");
    EXPECT_EQ(compile_error(R"({"type":"number","not":{"type":"integer"}})"),
              "unsupported keyword 'not' at / (numbers that are not integers)");
}

TEST(json_schema_keywords, pattern_with_lengths_and_anchors) {
    expect_values(R"({"type":"string","pattern":"^[a-z]+$","minLength":2,"maxLength":4})", {R"("ab")", R"("abcd")"},
                  {R"("a")", R"("abcde")", R"("ab1")"});
    expect_values(R"({"type":"string","pattern":"x","maxLength":3})", {R"("x")", R"("axb")", R"("xx")"}, {R"("abcx")", R"("ab")"});
    // lengths count characters, not the escapes that write them
    expect_values(R"({"type":"string","pattern":"^[^a]+$","maxLength":2})", {R"("\"\\")", R"("\n\t")", R"("é€")"},
                  {R"("\"\\x")", R"("a")"});
    expect_values(R"({"type":"string","pattern":"^a$|^b$"})", {R"("a")", R"("b")"}, {R"("ab")", R"("ba")", R"("c")"});
    expect_values(R"J({"type":"string","pattern":"(^a|b$)"})J", {R"("ax")", R"("xb")", R"("a")"}, {R"("xa")", R"("bx")"});
    expect_values(R"J({"type":"string","pattern":"^(?:a$|b)"})J", {R"("a")", R"("bc")"}, {R"("ac")", R"("cb")"});
    expect_values(R"({"type":"string","pattern":"^$|^[a-z]+$","minLength":1})", {R"("ab")"}, {R"("")", R"("A")"});
    EXPECT_EQ(compile_error(R"({"type":"string","pattern":"a^b"})"), "no string satisfies the constraints at /");
    // two patterns (from allOf) both apply
    expect_values(R"({"type":"string","allOf":[{"pattern":"a"},{"pattern":"b"}]})", {R"("ab")", R"("ba")"}, {R"("a")", R"("b")"});
}

TEST(json_schema_keywords, formats) {
    expect_values(R"({"type":"string","format":"date"})", {R"("2024-02-29")", R"("2000-02-29")", R"("2023-12-31")", R"("0001-01-01")"},
                  {R"("2023-02-29")", R"("1900-02-29")", R"("2023-04-31")", R"("0000-01-01")", R"("2023-02-30")", R"("2023-1-01")"});
    expect_values(R"({"type":"string","format":"date-time"})", {R"("2024-02-29T23:59:60Z")"}, {R"("2023-02-29T10:00:00Z")"});
    expect_values(R"({"type":"string","format":"date","maxLength":10})", {R"("2024-02-29")"}, {R"("2023-02-29")"});
    expect_values(R"({"type":"string","format":"email","minLength":6})", {R"("ab@c.d")"}, {R"("a@b.c")", R"("abcdef")"});
    expect_values(R"({"type":"string","format":"ipv6"})",
                  {R"("::")", R"("::1")", R"("fe80::1:2")", R"("1:2:3:4:5:6:7:8")", R"("::ffff:1.2.3.4")"},
                  {R"("1:2:3:4:5:6:7:8:9")", R"("1::2::3")", R"("12345::")", R"("::1.2.3.256")", R"("fe80::1%eth0")"});
    expect_values(R"({"type":"string","format":"date","pattern":"^2024"})", {R"("2024-01-01")"}, {R"("2023-01-01")", R"("2024-13-01")"});
}

TEST(json_schema_keywords, property_counts) {
    expect_values(R"({"type":"object","minProperties":1})", {R"({"a":1})", R"({"a":1,"b":2})"}, {R"({})"});
    expect_values(R"({"properties":{"a":{},"b":{}},"additionalProperties":false,"minProperties":1,"maxProperties":1})",
                  {R"({"a":1})", R"({"b":2})"}, {R"({})", R"({"a":1,"b":2})"});
    expect_values(R"({"type":"object","properties":{"a":{"type":"integer"}},"required":["a"],"maxProperties":2})",
                  {R"({"a":1})", R"({"a":1,"z":2})"}, {R"({"a":1,"y":1,"z":2})", R"({})"});
    expect_values(R"({"type":"object","minProperties":2,"properties":{"a":{}}})", {R"({"a":1,"b":2})", R"({"x":1,"y":2})"},
                  {R"({"a":1})", R"({"x":1})"});
    expect_values(R"({"type":"object","maxProperties":0})", {R"({})"}, {R"({"a":1})"});
}

TEST(json_schema_keywords, dependencies_and_presence) {
    const std::string abc = R"("properties":{"a":{},"b":{},"c":{}},"additionalProperties":false)";
    expect_values("{" + abc + R"(,"dependencies":{"a":["b"]}})", {R"({})", R"({"b":1})", R"({"a":1,"b":2})", R"({"c":1})"},
                  {R"({"a":1})", R"({"a":1,"c":3})"});
    // the property depended on comes first
    expect_values("{" + abc + R"(,"dependentRequired":{"c":["a"]}})", {R"({"a":1,"c":2})", R"({"a":1})"}, {R"({"c":2})", R"({"b":1,"c":2})"});
    expect_values(R"({"type":"object","properties":{"a":{}},"dependentSchemas":{"a":{"required":["c"]}}})",
                  {R"({"a":1,"c":2})", R"({"c":1})", R"({})"}, {R"({"a":1})"});
    // oneOf of required lists holds exactly one; anyOf at least one
    expect_values("{" + abc + R"(,"oneOf":[{"required":["a"]},{"required":["b"]}]})", {R"({"a":1})", R"({"b":1,"c":1})"},
                  {R"({})", R"({"a":1,"b":2})", "1"});
    expect_values("{" + abc + R"(,"anyOf":[{"required":["a"]},{"required":["b"]}]})", {R"({"a":1})", R"({"a":1,"b":2})"}, {R"({"c":1})"});
    // a dependent schema that constrains values: if the object has "a", "b" must be a string
    expect_values(R"({"type":"object","properties":{"a":{},"b":{}},"dependencies":{"a":{"properties":{"b":{"type":"string"}}}}})",
                  {R"({"a":1,"b":"x"})", R"({"b":2})", R"({"a":1})"}, {R"({"a":1,"b":2})"});
}

TEST(json_schema_keywords, one_of_exactly) {
    // disjoint branches: anyOf is oneOf
    expect_values(R"({"oneOf":[{"type":"string"},{"type":"integer"}]})", {R"("a")", "1"}, {"null"});
    expect_values(R"({"type":"object","oneOf":[{"properties":{"k":{"const":"a"},"n":{"type":"integer"}},"required":["k"]},
                                              {"properties":{"k":{"const":"b"}},"required":["k"]}]})",
                  {R"({"k":"a","n":1})", R"({"k":"b","n":"x"})"}, {R"({"k":"a","n":"x"})", R"({"k":"c"})"});
    // without "type": "object" a value that is not an object satisfies both branches
    expect_values(R"({"oneOf":[{"properties":{"k":{"const":"a"}},"required":["k"]},{"properties":{"k":{"const":"b"}},"required":["k"]}]})",
                  {R"({"k":"a"})", R"({"k":"b"})"}, {"1", R"("x")", R"({"k":"c"})"});
    // overlapping branches: each without the others
    const std::string ab = R"({"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string"}},
        "oneOf":[{"properties":{"a":{"type":"string"}},"required":["a"]},{"properties":{"b":{"type":"string"}},"required":["b"]}]})";
    expect_values(ab, {R"({"a":"x"})", R"({"b":"y"})"}, {R"({"a":"x","b":"y"})", R"({})"});
    expect_values(R"({"type":"integer","oneOf":[{"minimum":0},{"maximum":10}]})", {"-5", "15"}, {"0", "5", "10"});
    expect_values(R"({"type":"string","oneOf":[{"pattern":"a"},{"pattern":"b"}]})", {R"("a")", R"("xb")"}, {R"("ab")", R"("x")"});
    expect_values(R"({"type":"object","oneOf":[{"additionalProperties":false,"properties":{"key":{"type":"string"}}},
                                              {"additionalProperties":false,"properties":{"keys":{"type":"array"}}}]})",
                  {R"({"key":"x"})", R"({"keys":[]})"}, {R"({})", R"({"key":"x","keys":[]})", R"({"z":1})", R"({"key":1})"});
    // a negation that cannot be written in full is left smaller: never more values than oneOf allows
    expect_values(R"({"oneOf":[{"type":"array","items":{"type":"integer"}},{"type":"string"}]})", {"[1]", R"("a")"}, {R"(["a"])", "1"});
}

TEST(json_schema_keywords, if_then_else) {
    const std::string s = R"({"type":"object","properties":{"kind":{"enum":["a","b"]},"n":{"type":"integer"}},"required":["kind"],
        "if":{"properties":{"kind":{"const":"a"}}},"then":{"required":["n"]},"else":{"not":{"required":["n"]}}})";
    expect_values(s, {R"({"kind":"a","n":1})", R"({"kind":"b"})"}, {R"({"kind":"a"})", R"({"kind":"b","n":1})", R"({"kind":"c"})"});
    expect_values(R"({"if":{"type":"string"},"then":{"minLength":2},"else":{"type":"integer"}})", {R"("ab")", "3"},
                  {R"("a")", "1.5", "null"});
    expect_values(R"({"type":"integer","then":{"minimum":5}})", {"1"}, {});  // then without if does nothing
    EXPECT_EQ(compile_error(R"({"if":{"multipleOf":2},"then":{"minimum":0}})"),
              "unsupported keyword 'if' at / (its condition: unsupported keyword 'not' at / (this form of it cannot be enforced))");
}

TEST(json_schema_keywords, unique_items) {
    const std::string abc = R"({"type":"array","items":{"enum":["a","b","c"]},"uniqueItems":true)";
    expect_values(abc + "}", {"[]", R"(["a"])", R"(["c","a"])", R"(["a","b","c"])"}, {R"(["a","a"])", R"(["a","b","a"])", R"(["d"])"});
    expect_values(abc + R"(,"minItems":2})", {R"(["b","a"])"}, {R"(["a"])", "[]"});
    expect_values(R"({"type":"array","items":{"type":"boolean"},"uniqueItems":true})", {"[true,false]", "[false]"}, {"[true,true]"});
    expect_values(R"({"type":"array","items":{"type":"string"},"uniqueItems":true,"maxItems":1})", {"[]", R"(["x"])"}, {R"(["x","y"])"});
    EXPECT_EQ(compile_error(abc + R"(,"minItems":4})"), "'uniqueItems' at /: more items than distinct values are needed");
}

TEST(json_schema_keywords, multiple_of) {
    expect_values(R"({"type":"integer","multipleOf":5})", {"0", "5", "-10", "1005"}, {"3", "12", "-1"});
    expect_values(R"({"type":"number","multipleOf":0.01,"minimum":0})", {"0", "1.5", "2.25", "3.10", "7"}, {"1.005", "-1", "0.001"});
    expect_values(R"({"type":"integer","multipleOf":3,"minimum":1,"maximum":10})", {"3", "6", "9"}, {"1", "12", "0", "4"});
    expect_values(R"({"type":"number","multipleOf":1})", {"3", "3.0", "-2"}, {"3.5"});
    EXPECT_EQ(compile_error(R"({"type":"number","multipleOf":0.3})"), "unsupported 'multipleOf' at / (only integers and powers of ten)");
}

namespace {

// Numbers -3.00 … 3.00 by 0.01 in several spellings, checked against bounds given as decimals.
void expect_number_range(const char * lo, bool lo_excl, const char * hi, bool hi_excl) {
    std::string schema = R"({"type":"number")";
    if (lo) schema += std::string(",\"") + (lo_excl ? "exclusiveMinimum" : "minimum") + "\":" + lo;
    if (hi) schema += std::string(",\"") + (hi_excl ? "exclusiveMaximum" : "maximum") + "\":" + hi;
    schema += "}";
    const json_schema_result r = compile_ok(schema);
    if (!r.ok()) return;
    for (int i = -300; i <= 300; ++i) {
        const double x = i / 100.0;
        bool in = true;
        if (lo) in = in && (lo_excl ? x > std::stod(lo) + 1e-9 : x > std::stod(lo) - 1e-9);
        if (hi) in = in && (hi_excl ? x < std::stod(hi) - 1e-9 : x < std::stod(hi) + 1e-9);
        char a[32], b[32];
        std::snprintf(a, sizeof a, "%.2f", x);
        std::snprintf(b, sizeof b, "%.4f", x);
        for (const char * text : {a, b}) {
            if (std::string(text).rfind("-0.00", 0) == 0) continue;  // "-0" is not written
            EXPECT_EQ(grammar_recognize(r.value, text), in) << schema << " value " << text;
        }
        if (i % 100 == 0) {
            EXPECT_EQ(grammar_recognize(r.value, std::to_string(i / 100)), in) << schema << " value " << i / 100;
        }
    }
}

}  // namespace

TEST(json_schema_keywords, decimal_bounds_exactly) {
    expect_number_range("0.5", false, "2.25", false);
    expect_number_range("0.5", true, "2.25", true);
    expect_number_range("-1.07", false, "-0.5", true);
    expect_number_range("-0.01", true, "0.01", true);
    expect_number_range("-2.5", false, nullptr, false);
    expect_number_range(nullptr, false, "1.1", true);
    expect_number_range("1.25", false, "1.25", false);
    expect_number_range("0", true, "1", false);
    expect_values(R"({"type":"integer","minimum":0.5,"maximum":2.5})", {"1", "2"}, {"0", "3", "1.5"});
    expect_values(R"({"type":"number","maximum":1e300})", {"5", "-100000.5"}, {});
    const json_schema_result big = compile_ok(R"({"type":"integer","minimum":-1e20})");  // past 64 bits
    EXPECT_TRUE(grammar_recognize(big.value, "-99999999999999999999"));
    EXPECT_TRUE(grammar_recognize(big.value, "-100000000000000000000"));
    EXPECT_FALSE(grammar_recognize(big.value, "-100000000000000000001"));
}

TEST(json_schema_keywords, enums_meet_the_other_keywords) {
    expect_values(R"({"type":"string","enum":["a",1,null]})", {R"("a")"}, {"1", "null"});
    expect_values(R"({"enum":["ab","abc",5],"maxLength":2})", {R"("ab")", "5"}, {R"("abc")"});
    expect_values(R"({"const":7,"minimum":5})", {"7"}, {"5"});
    expect_values(R"({"enum":[1,2,3],"not":{"enum":[2]}})", {"1", "3"}, {"2"});
    expect_values(R"({"enum":[0.3,0.35,45],"multipleOf":0.15})", {"0.3", "45"}, {"0.35"});  // decimals, exactly
    expect_values(R"({"enum":[{"a":"bar"},{"a":1}],"patternProperties":{"^a":{"type":"integer"}}})", {R"({"a":1})"},
                  {R"({"a":"bar"})"});
    expect_values(R"({"enum":[[1],[]],"not":{"items":false}})", {"[1]"}, {"[]"});
}

TEST(json_schema_keywords, all_of_combinations) {
    // multipleOf of both branches: their least common multiple
    expect_values(R"({"type":"integer","allOf":[{"multipleOf":4},{"multipleOf":6}]})", {"12", "24", "0"}, {"4", "6", "18"});
    expect_values(R"({"type":"number","allOf":[{"multipleOf":0.5},{"multipleOf":0.2}],"minimum":0,"maximum":2.5})", {"1", "2", "0", "2.0"},
                  {"0.5", "0.2", "1.5", "3"});
    // anyOf and oneOf of both branches all hold
    expect_values(R"({"allOf":[{"anyOf":[{"type":"integer"},{"type":"string"}]},
                               {"anyOf":[{"type":"integer","minimum":3},{"type":"string","minLength":2}]}]})",
                  {"3", R"("ab")"}, {"2", R"("a")", "null"});
    expect_values(R"({"allOf":[{"oneOf":[{"type":"integer"},{"type":"null"}]},{"oneOf":[{"type":"null"},{"type":"string"}]}]})",
                  {"null"}, {"1", R"("a")"});
    // keywords this compiler does not know annotate: branches may differ on them
    expect_values(R"({"allOf":[{"type":"integer","x-tag":1,"_id":"a"},{"minimum":1,"_id":"b"}]})", {"1"}, {"0"});
}

TEST(json_schema_keywords, no_value_satisfies) {
    // an optional property that no value satisfies may not appear; items likewise
    expect_values(R"({"type":"object","properties":{"a":{"type":"string","enum":[1]}}})", {R"({})", R"({"b":1})"},
                  {R"({"a":1})", R"({"a":"x"})"});
    expect_values(R"({"type":"array","items":{"allOf":[{"type":"string"},{"type":"integer"}]}})", {"[]"}, {"[1]", R"(["a"])"});
    expect_values(R"({"anyOf":[{"type":"string","minLength":3,"maxLength":2},{"type":"null"}]})", {"null"}, {R"("abc")"});
    EXPECT_EQ(compile_error(R"({"required":["x"],"additionalProperties":false})"), "required property 'x' at / is never valid");
    EXPECT_EQ(compile_error(R"({"type":"string","enum":[1]})"), "no value of 'enum' / 'const' at / is valid against the other keywords");
}
