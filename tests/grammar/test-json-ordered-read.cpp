// json_read_ordered (grammar/json-ordered-read.h): the same document as nlohmann's own ordered
// parser (key order, repeated keys, numbers, strings), the nesting bound with the place named, the
// errors of invalid text; objects with very many keys read in linear time; the real-world schemas
// of ../shared/testdata/jsonschema read equal to nlohmann's parse.
#include "grammar/json-ordered-read.h"
#include "testdata.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

using ojson = nlohmann::ordered_json;

namespace {

ojson read_ok(const std::string & text, size_t depth = 512) {
    ojson out;
    std::string error;
    EXPECT_TRUE(json_read_ordered(text, depth, &out, &error)) << text << ": " << error;
    return out;
}

std::string read_error(const std::string & text, size_t depth = 512) {
    ojson out;
    std::string error;
    EXPECT_FALSE(json_read_ordered(text, depth, &out, &error)) << text;
    return error;
}

}  // namespace

TEST(json_ordered_read, equals_nlohmanns_parse) {
    for (const std::string text : {R"({"b":1,"a":[true,null,-0.5,1e300,18446744073709551615,-9223372036854775808],"c":{"z":"é\u0041"}})",
                                   R"([])", R"({})", R"("x")", R"(12)", R"({"a":1,"b":2,"a":3})", R"([{"k":1,"k":{"j":2}}])"}) {
        const ojson mine = read_ok(text);
        const ojson theirs = ojson::parse(text);
        EXPECT_EQ(mine, theirs) << text;
        EXPECT_EQ(mine.dump(), theirs.dump()) << text;  // the same key order
    }
    // a repeated key keeps its first place and takes the last value, in large objects too
    std::string many = "{";
    for (int i = 0; i < 100; ++i) many += "\"k" + std::to_string(i % 40) + "\":" + std::to_string(i) + (i < 99 ? "," : "}");
    EXPECT_EQ(read_ok(many).dump(), ojson::parse(many).dump());
}

TEST(json_ordered_read, nesting_bound_names_the_place) {
    EXPECT_TRUE(read_ok(R"({"a":[{"b":[1]}]})", 4).is_object());
    const std::string e = read_error(R"({"a":[{"b":[1]}]})", 3);
    EXPECT_NE(e.find("nested deeper than 3 levels at /a/0/b"), std::string::npos) << e;
    std::string deep(100000, '[');
    EXPECT_NE(read_error(deep + std::string(100000, ']')).find("nested deeper than 512"), std::string::npos);
}

TEST(json_ordered_read, invalid_text_is_an_error) {
    for (const std::string bad : {"", "{", R"({"a":})", "[1,]", "1e999", R"({"a" 1})", "\"\xff\"", "[1] x"}) {
        const std::string e = read_error(bad);
        EXPECT_NE(e.find("not valid JSON"), std::string::npos) << bad << ": " << e;
    }
}

TEST(json_ordered_read, many_keys) {
    std::string text = "{";
    for (int i = 0; i < 200000; ++i) text += (i ? ",\"p" : "\"p") + std::to_string(i) + "\":" + std::to_string(i);
    text += "}";
    const ojson doc = read_ok(text);
    ASSERT_EQ(doc.size(), 200000u);
    EXPECT_EQ(doc.begin().key(), "p0");
    EXPECT_EQ((--doc.end()).key(), "p199999");
}

TEST(json_ordered_read, real_world_schemas) {
    INFERD_REQUIRE_TESTDATA(dir);
    size_t n = 0;
    for (const auto & e : std::filesystem::directory_iterator(dir + "/jsonschema")) {
        if (e.path().extension() != ".json") continue;
        const std::string text = inferd_read_file(e.path().string());
        EXPECT_EQ(read_ok(text).dump(), ojson::parse(text).dump()) << e.path();
        ++n;
    }
    EXPECT_GT(n, 2000u);
}
