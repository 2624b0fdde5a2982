// /tokenize and /detokenize bodies (api/tokenize.h).
#include "api/tokenize.h"

#include "api-test-util.h"

#include <gtest/gtest.h>

TEST(TokenizeRequest, DefaultsAndFields) {
    tokenize_request req;
    ASSERT_FALSE(tokenize_request_parse(R"({"content":"Hello world"})", req).has_value());
    EXPECT_EQ(req.content, "Hello world");
    EXPECT_TRUE(req.add_special);
    EXPECT_FALSE(req.with_pieces);
    ASSERT_FALSE(tokenize_request_parse(R"({"content":"","add_special":false,"with_pieces":true,"x":1})", req));
    EXPECT_EQ(req.content, "");
    EXPECT_FALSE(req.add_special);
    EXPECT_TRUE(req.with_pieces);
}

TEST(TokenizeRequest, Invalid) {
    tokenize_request req;
    expect_invalid(tokenize_request_parse(R"({})", req), "content", "missing");
    expect_invalid(tokenize_request_parse(R"({"content":null})", req), "content", "null");
    expect_invalid(tokenize_request_parse(R"({"content":[1]})", req), "content", "array");
    expect_invalid(tokenize_request_parse(R"({"content":"x","add_special":"yes"})", req), "add_special", "str");
    expect_invalid(tokenize_request_parse(R"({"content":"x","with_pieces":1})", req), "with_pieces", "int");
    expect_invalid(tokenize_request_parse(R"(["content"])", req), "", "array body");
    expect_invalid(tokenize_request_parse(R"({"content":)", req), "", "truncated");
}

TEST(DetokenizeRequest, FieldsAndErrors) {
    detokenize_request req;
    ASSERT_FALSE(detokenize_request_parse(R"({"tokens":[1,2,32000]})", req).has_value());
    EXPECT_EQ(req.tokens, (std::vector<int32_t>{1, 2, 32000}));
    ASSERT_FALSE(detokenize_request_parse(R"({"tokens":[]})", req).has_value());
    EXPECT_TRUE(req.tokens.empty());
    expect_invalid(detokenize_request_parse(R"({})", req), "tokens", "missing");
    expect_invalid(detokenize_request_parse(R"({"tokens":"1 2"})", req), "tokens", "string");
    expect_invalid(detokenize_request_parse(R"({"tokens":[1,-2]})", req), "tokens", "negative");
    expect_invalid(detokenize_request_parse(R"({"tokens":[1,2.5]})", req), "tokens", "float");
    expect_invalid(detokenize_request_parse(R"({"tokens":[[1]]})", req), "tokens", "nested");
    expect_invalid(detokenize_request_parse(R"({"tokens":[4294967296]})", req), "tokens", "too big");
}

TEST(DetokenizeRequest, VocabularyCheck) {
    EXPECT_FALSE(api_check_token_ids({0, 5, 9}, 10, "tokens").has_value());
    expect_invalid(api_check_token_ids({0, 10}, 10, "tokens"), "tokens", "10 of 10");
    expect_invalid(api_check_token_ids({-1}, 10, "tokens"), "tokens", "negative");
}

TEST(TokenizeResponse, IdsOrPieces) {
    tokenize_response res;
    res.tokens = {{1, "<s>"}, {15043, " Hello"}, {229, "\xe2\x96"}};
    EXPECT_EQ(parse_output(tokenize_response_to_json(res, false)),
              nlohmann::json::parse(R"({"tokens":[1,15043,229]})"));
    EXPECT_EQ(parse_output(tokenize_response_to_json(res, true)), nlohmann::json::parse(R"({"tokens":[
        {"id":1,"piece":"<s>"},{"id":15043,"piece":" Hello"},{"id":229,"piece":[226,150]}]})"));
    EXPECT_EQ(parse_output(tokenize_response_to_json({}, true)), nlohmann::json::parse(R"({"tokens":[]})"));
}

TEST(DetokenizeResponse, Content) {
    EXPECT_EQ(parse_output(detokenize_response_to_json("Hi \"you\"\n")),
              nlohmann::json::parse(R"({"content":"Hi \"you\"\n"})"));
    // Invalid UTF-8 is replaced, never thrown.
    EXPECT_EQ(parse_output(detokenize_response_to_json("a\xff")), nlohmann::json::parse("{\"content\":\"a\xef\xbf\xbd\"}"));
}

TEST(Utf8Valid, Cases) {
    EXPECT_TRUE(api_utf8_valid(""));
    EXPECT_TRUE(api_utf8_valid("plain"));
    EXPECT_TRUE(api_utf8_valid("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"));  // é € 😀
    EXPECT_FALSE(api_utf8_valid("\xc3"));                                  // cut
    EXPECT_FALSE(api_utf8_valid("\x80"));                                  // stray continuation
    EXPECT_FALSE(api_utf8_valid("\xc0\xaf"));                              // overlong
    EXPECT_FALSE(api_utf8_valid("\xed\xa0\x80"));                          // surrogate
    EXPECT_FALSE(api_utf8_valid("\xf4\x90\x80\x80"));                      // above U+10FFFF
    EXPECT_FALSE(api_utf8_valid("\xff"));
}
