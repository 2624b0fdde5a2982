// POST /v1/embeddings (api/embeddings.h): parsing and validation of the request.
#include "api/embeddings.h"

#include "api-test-util.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

embeddings_request parse_ok(const std::string & body) {
    embeddings_request req;
    auto err = embeddings_request_parse(body, req);
    EXPECT_FALSE(err.has_value()) << body << " → " << (err ? err->message : "");
    return req;
}

// `fields` is inserted into an otherwise valid body.
void expect_rejected(const std::string & fields, const std::string & param) {
    std::string body = R"({"model":"m","input":"hi",)";
    body += fields;
    body += "}";
    embeddings_request req;
    expect_invalid(embeddings_request_parse(body, req), param, body);
}

// A body whose input is an array of `n` items, each `item`.
std::string input_array(size_t n, const std::string & item) {
    std::string body = R"({"input":[)";
    for (size_t i = 0; i < n; ++i) {
        if (i > 0) {
            body += ',';
        }
        body += item;
    }
    body += "]}";
    return body;
}

}  // namespace

TEST(EmbeddingsRequest, DefaultsAndEveryField) {
    embeddings_request req = parse_ok(R"({"input":"Hello"})");
    EXPECT_EQ(req.model, "");
    ASSERT_EQ(req.inputs.size(), 1u);
    EXPECT_FALSE(req.inputs[0].is_tokens);
    EXPECT_EQ(req.inputs[0].text, "Hello");
    EXPECT_FALSE(req.base64);
    EXPECT_FALSE(req.dimensions.has_value());
    EXPECT_EQ(req.user, "");

    req = parse_ok(R"({"model":"emb","input":"x","encoding_format":"base64","dimensions":256,"user":"u-1"})");
    EXPECT_EQ(req.model, "emb");
    EXPECT_TRUE(req.base64);
    ASSERT_TRUE(req.dimensions.has_value());
    EXPECT_EQ(*req.dimensions, 256);
    EXPECT_EQ(req.user, "u-1");
}

TEST(EmbeddingsRequest, NullMeansDefaultAndUnknownFieldsAreIgnored) {
    embeddings_request req = parse_ok(
        R"({"input":"x","model":null,"encoding_format":null,"dimensions":null,"user":null,
            "temperature":"ignored","prompt":5,"whatever":{"deep":[1,2,3]}})");
    EXPECT_EQ(req.model, "");
    EXPECT_FALSE(req.base64);
    EXPECT_FALSE(req.dimensions.has_value());
    EXPECT_EQ(req.inputs[0].text, "x");
}

TEST(EmbeddingsRequest, InputForms) {
    embeddings_request req = parse_ok(R"({"input":["one","two",""]})");
    ASSERT_EQ(req.inputs.size(), 3u);
    EXPECT_EQ(req.inputs[0].text, "one");
    EXPECT_EQ(req.inputs[1].text, "two");
    EXPECT_EQ(req.inputs[2].text, "");
    EXPECT_FALSE(req.inputs[2].is_tokens);

    req = parse_ok(R"({"input":[1,2,3]})");
    ASSERT_EQ(req.inputs.size(), 1u);
    EXPECT_TRUE(req.inputs[0].is_tokens);
    EXPECT_EQ(req.inputs[0].tokens, (std::vector<int32_t>{1, 2, 3}));

    req = parse_ok(R"({"input":[[5],[6,7],[2147483647]]})");
    ASSERT_EQ(req.inputs.size(), 3u);
    EXPECT_TRUE(req.inputs[1].is_tokens);
    EXPECT_EQ(req.inputs[0].tokens, (std::vector<int32_t>{5}));
    EXPECT_EQ(req.inputs[1].tokens, (std::vector<int32_t>{6, 7}));
    EXPECT_EQ(req.inputs[2].tokens, (std::vector<int32_t>{2147483647}));

    req = parse_ok(R"({"input":""})");
    ASSERT_EQ(req.inputs.size(), 1u);
    EXPECT_FALSE(req.inputs[0].is_tokens);
    EXPECT_EQ(req.inputs[0].text, "");
}

TEST(EmbeddingsRequest, InvalidInputsNameInput) {
    const char * bodies[] = {
        R"({})",
        R"({"input":null})",
        R"({"prompt":"x"})",
        R"({"input":5})",
        R"({"input":true})",
        R"({"input":{}})",
        R"({"input":{"text":"x"}})",
        R"({"input":[]})",
        R"({"input":[1,"a"]})",
        R"({"input":["a",1]})",
        R"({"input":["a",null]})",
        R"({"input":[1.5]})",
        R"({"input":[-1]})",
        R"({"input":[2147483648]})",
        R"({"input":[[1],[]]})",
        R"({"input":[[]]})",
        R"({"input":[[1],2]})",
        R"({"input":[[1],["a"]]})",
        R"({"input":[true]})",
        R"({"input":[null]})",
        R"({"input":[{}]})",
    };
    for (const char * body : bodies) {
        embeddings_request req;
        auto err = embeddings_request_parse(body, req);
        expect_invalid(err, "input", body);
        if (err) {
            EXPECT_EQ(err->message.find("prompt"), std::string::npos) << err->message;
        }
    }
}

TEST(EmbeddingsRequest, AtMost2048Inputs) {
    EXPECT_EQ(embeddings_max_inputs, 2048u);
    embeddings_request req = parse_ok(input_array(2048, R"("t")"));
    EXPECT_EQ(req.inputs.size(), 2048u);
    req = parse_ok(input_array(2048, "[1,2]"));
    EXPECT_EQ(req.inputs.size(), 2048u);
    // One array of token ids is one input, however long.
    req = parse_ok(input_array(5000, "7"));
    ASSERT_EQ(req.inputs.size(), 1u);
    EXPECT_EQ(req.inputs[0].tokens.size(), 5000u);

    for (const std::string & body : {input_array(2049, R"("t")"), input_array(2049, "[3]")}) {
        auto err = embeddings_request_parse(body, req);
        expect_invalid(err, "input", "2049 inputs");
        if (err) {
            EXPECT_NE(err->message.find("2048"), std::string::npos) << err->message;
            EXPECT_NE(err->message.find("2049"), std::string::npos) << err->message;
        }
    }
}

TEST(EmbeddingsRequest, EncodingFormat) {
    EXPECT_FALSE(parse_ok(R"({"input":"x","encoding_format":"float"})").base64);
    EXPECT_TRUE(parse_ok(R"({"input":"x","encoding_format":"base64"})").base64);
    for (const char * v : {R"("Float")", R"("BASE64")", R"("")", R"("binary")", R"("ubinary")", "1", "true", "[]",
                           R"(["float"])", "{}"}) {
        expect_rejected(std::string(R"("encoding_format":)") + v, "encoding_format");
    }
}

TEST(EmbeddingsRequest, Dimensions) {
    EXPECT_EQ(*parse_ok(R"({"input":"x","dimensions":1})").dimensions, 1);
    EXPECT_EQ(*parse_ok(R"({"input":"x","dimensions":2147483647})").dimensions, 2147483647);
    for (const char * v : {"0", "-1", "1.5", "2.0", R"("256")", "true", "[256]", "2147483648", "1e3"}) {
        expect_rejected(std::string(R"("dimensions":)") + v, "dimensions");
    }
}

TEST(EmbeddingsRequest, OtherInvalidFields) {
    expect_rejected(R"("model":3)", "model");
    expect_rejected(R"("model":["m"])", "model");
    expect_rejected(R"("user":7)", "user");
    expect_rejected(R"("user":{})", "user");
}

TEST(EmbeddingsRequest, MalformedBodies) {
    const char * bodies[] = {"", "   ", "{", "{\"input\":\"x\"", "{\"input\":\"x\",}", "[1,2]", "\"text\"", "null",
                             "{\"input\":\"\xff\"}", "{\"a\":1}{\"b\":2}", "{\"input\":\"x\",\"dimensions\":1e999}"};
    for (const char * body : bodies) {
        embeddings_request req;
        expect_invalid(embeddings_request_parse(body, req), "", body);
    }
    std::string deep = R"({"input":"x","junk":)" + std::string(100000, '[') + std::string(100000, ']') + "}";
    embeddings_request req;
    expect_invalid(embeddings_request_parse(deep, req), "", "deep nesting");
}

TEST(EmbeddingsRequest, FailedParseLeavesOutputUntouched) {
    embeddings_request req;
    req.model = "kept";
    ASSERT_TRUE(embeddings_request_parse(R"({"model":"other","input":"x","dimensions":0})", req).has_value());
    EXPECT_EQ(req.model, "kept");
    EXPECT_TRUE(req.inputs.empty());
}

TEST(EmbeddingsRequest, VocabularyCheck) {
    embeddings_request req = parse_ok(R"({"input":[[1,2],[3,99]]})");
    EXPECT_FALSE(embeddings_request_check_vocab(req, 100).has_value());
    auto err = embeddings_request_check_vocab(req, 99);
    expect_invalid(err, "input", "token 99 of 99");
    if (err) {
        EXPECT_NE(err->message.find("99"), std::string::npos) << err->message;
    }
    req = parse_ok(R"({"input":[0,5]})");
    EXPECT_FALSE(embeddings_request_check_vocab(req, 6).has_value());
    expect_invalid(embeddings_request_check_vocab(req, 5), "input", "token 5 of 5");
    req = parse_ok(R"({"input":["text with any words"]})");  // text is tokenized later
    EXPECT_FALSE(embeddings_request_check_vocab(req, 1).has_value());
}
