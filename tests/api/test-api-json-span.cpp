// A value's compact text cut from a JSON text by a JSON pointer (api/src/json-span.h): it must
// name the value the request's parse reads (the last of a repeated key, keys with escapes), keep
// the written key order, and drop only the whitespace outside strings.
#include "api/src/json-span.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>

namespace {

std::string at(const std::string & text, const std::string & pointer) {
    return json_compact_text_at(text, pointer).value_or("<none>");
}

TEST(JsonSpan, FindsMembersAndElementsAndKeepsTheirOrder) {
    const std::string text = R"( { "z" : 1 , "tools" : [ { "b" : [ 1 , 2 ] , "a" : "x" } , 7 ] , "e" : { } } )";
    EXPECT_EQ(at(text, ""), R"({"z":1,"tools":[{"b":[1,2],"a":"x"},7],"e":{}})");
    EXPECT_EQ(at(text, "/tools"), R"([{"b":[1,2],"a":"x"},7])");
    EXPECT_EQ(at(text, "/tools/0"), R"({"b":[1,2],"a":"x"})");
    EXPECT_EQ(at(text, "/tools/0/b/1"), "2");
    EXPECT_EQ(at(text, "/tools/1"), "7");
    EXPECT_EQ(at(text, "/e"), "{}");
    EXPECT_EQ(at(text, "/z"), "1");
}

TEST(JsonSpan, StringsKeepTheirSpacesAndEscapes) {
    const std::string text = "{\"s\": [ \"a b\\\" ,} ]\" , \"\\\\\" ,\"\\u00e9\\n\" ], \"n\": -1.5e+3 }";
    EXPECT_EQ(at(text, "/s"), "[\"a b\\\" ,} ]\",\"\\\\\",\"\\u00e9\\n\"]");
    EXPECT_EQ(at(text, "/n"), "-1.5e+3");
    // the text cut out reads as the same value the whole text holds there
    const nlohmann::json whole = nlohmann::json::parse(text);
    EXPECT_EQ(nlohmann::json::parse(at(text, "/s")), whole["s"]);
}

TEST(JsonSpan, ARepeatedKeyIsItsLastValueAsTheParserReadsIt) {
    const std::string text = R"({"a":{"x":1},"b":2,"a":{"y":[3]}})";
    EXPECT_EQ(at(text, "/a"), R"({"y":[3]})");
    EXPECT_EQ(nlohmann::json::parse(at(text, "/a")), nlohmann::json::parse(text)["a"]);
    EXPECT_EQ(at(text, "/a/x"), "<none>") << "the first value is not the one read";
}

TEST(JsonSpan, KeysWithEscapesMatchWhatTheyDecodeTo) {
    EXPECT_EQ(at(R"({"\u0074ools":[1],"t\"q":2})", "/tools"), "[1]");
    EXPECT_EQ(at(R"({"\u0074ools":[1],"t\"q":2})", "/t\"q"), "2");
    EXPECT_EQ(at(R"({"a/b":1,"m~n":2})", "/a~1b"), "1") << "JSON pointer escapes";
    EXPECT_EQ(at(R"({"a/b":1,"m~n":2})", "/m~0n"), "2");
}

TEST(JsonSpan, WhatIsNotThereIsNothing) {
    const std::string text = R"({"a":[1,2],"b":"s","c":{}})";
    EXPECT_EQ(at(text, "/x"), "<none>");
    EXPECT_EQ(at(text, "/a/2"), "<none>");
    EXPECT_EQ(at(text, "/a/01"), "<none>") << "no leading zeros in an index";
    EXPECT_EQ(at(text, "/a/-"), "<none>");
    EXPECT_EQ(at(text, "/b/0"), "<none>") << "a string has no members";
    EXPECT_EQ(at(text, "/c/k"), "<none>");
    EXPECT_EQ(at("[]", "/0"), "<none>");
    EXPECT_EQ(at(text, "a"), "<none>") << "a pointer starts with /";
}

TEST(JsonSpan, TextThatIsNotJsonNeverReadsPastItsEnd) {
    for (const char * bad : {"{", "{\"a\"", "{\"a\":", "{\"a\":[1,", "{\"a\":\"x", "{\"a\":{\"b\":1", "[1,2", "\"", "{\"\\u00\":1}"}) {
        EXPECT_FALSE(json_compact_text_at(bad, "/a/b").has_value()) << bad;
        (void) json_compact_text_at(bad, "");  // a value or nothing, never a crash
    }
}

TEST(JsonSpan, FindsAMemberAfterAWideObject) {
    std::string text = "{\"schema\":{\"properties\":{";
    for (int i = 0; i < 200000; ++i) text += (i ? ",\"p" : "\"p") + std::to_string(i) + "\":{\"type\":\"integer\"}";
    text += "}},\"tail\":true}";
    EXPECT_EQ(at(text, "/tail"), "true");
    EXPECT_EQ(at(text, "/schema/properties/p199999"), R"({"type":"integer"})");
}

}  // namespace
