// Parsing and validation of POST /v1/completions bodies (api/completion-request.h).
#include "api/completion-request.h"

#include "api-test-util.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace {

completion_request parse_ok(const std::string & body) {
    completion_request req;
    auto err = completion_request_parse(body, req);
    EXPECT_FALSE(err.has_value()) << body << " → " << (err ? err->message : "");
    return req;
}

// `fields` is inserted into an otherwise valid body.
void expect_rejected(const std::string & fields, const std::string & param) {
    std::string body = R"({"model":"m","prompt":"hi",)" + fields + "}";
    completion_request req;
    expect_invalid(completion_request_parse(body, req), param, body);
}

}  // namespace

TEST(CompletionRequest, DefaultsAreOpenAIs) {
    completion_request req = parse_ok(R"({"model":"tiny","prompt":"Hello"})");
    EXPECT_EQ(req.model, "tiny");
    ASSERT_EQ(req.prompts.size(), 1u);
    EXPECT_FALSE(req.prompts[0].is_tokens);
    EXPECT_EQ(req.prompts[0].text, "Hello");
    EXPECT_EQ(req.max_tokens, 16);
    EXPECT_EQ(req.n, 1);
    EXPECT_FALSE(req.stream);
    EXPECT_FALSE(req.include_usage);
    EXPECT_TRUE(req.stop.empty());
    EXPECT_FALSE(req.logprobs.has_value());
    EXPECT_FALSE(req.echo);
    EXPECT_EQ(req.sampling.temperature, 1.0);
    EXPECT_EQ(req.sampling.top_p, 1.0);
    EXPECT_EQ(req.sampling.top_k, 0);
    EXPECT_EQ(req.sampling.min_p, 0.0);
    EXPECT_EQ(req.sampling.repeat_penalty, 1.0);
    EXPECT_EQ(req.sampling.presence_penalty, 0.0);
    EXPECT_EQ(req.sampling.frequency_penalty, 0.0);
    EXPECT_FALSE(req.sampling.seed.has_value());
    EXPECT_TRUE(req.sampling.logit_bias.empty());
    EXPECT_FALSE(req.ignore_eos);
}

TEST(CompletionRequest, NullMeansDefaultAndUnknownFieldsAreIgnored) {
    completion_request req = parse_ok(
        R"({"prompt":"x","max_tokens":null,"temperature":null,"stop":null,"seed":null,"logprobs":null,
            "suffix":"ignored","best_of":3,"whatever":{"deep":[1,2,3]}})");
    EXPECT_EQ(req.model, "");
    EXPECT_EQ(req.max_tokens, 16);
    EXPECT_EQ(req.sampling.temperature, 1.0);
    EXPECT_TRUE(req.stop.empty());
    EXPECT_FALSE(req.sampling.seed.has_value());
    EXPECT_FALSE(req.logprobs.has_value());
}

TEST(CompletionRequest, EveryFieldIsRead) {
    completion_request req = parse_ok(R"({
        "model":"m","prompt":"p","max_tokens":0,"temperature":0,"top_p":0.5,"n":16,"stream":true,
        "stream_options":{"include_usage":true},"stop":["a","bc"],"seed":-7,"presence_penalty":-2,
        "frequency_penalty":2,"logit_bias":{"15":-100,"7":100,"0":0.5},"logprobs":20,"echo":true,
        "user":"u-1","top_k":40,"min_p":1,"repeat_penalty":1.1,"ignore_eos":true})");
    EXPECT_EQ(req.max_tokens, 0);
    EXPECT_EQ(req.sampling.temperature, 0.0);
    EXPECT_EQ(req.sampling.top_p, 0.5);
    EXPECT_EQ(req.n, 16);
    EXPECT_TRUE(req.stream);
    EXPECT_TRUE(req.include_usage);
    EXPECT_EQ(req.stop, (std::vector<std::string>{"a", "bc"}));
    ASSERT_TRUE(req.sampling.seed.has_value());
    EXPECT_EQ(*req.sampling.seed, -7);
    EXPECT_EQ(req.sampling.presence_penalty, -2.0);
    EXPECT_EQ(req.sampling.frequency_penalty, 2.0);
    ASSERT_EQ(req.sampling.logit_bias.size(), 3u);
    // nlohmann keeps object keys sorted: "0", "15", "7".
    EXPECT_EQ(req.sampling.logit_bias[0].token, 0);
    EXPECT_FLOAT_EQ(req.sampling.logit_bias[0].bias, 0.5f);
    EXPECT_EQ(req.sampling.logit_bias[1].token, 15);
    EXPECT_FLOAT_EQ(req.sampling.logit_bias[1].bias, -100.0f);
    EXPECT_EQ(req.sampling.logit_bias[2].token, 7);
    ASSERT_TRUE(req.logprobs.has_value());
    EXPECT_EQ(*req.logprobs, 20);
    EXPECT_TRUE(req.echo);
    EXPECT_EQ(req.user, "u-1");
    EXPECT_EQ(req.sampling.top_k, 40);
    EXPECT_EQ(req.sampling.min_p, 1.0);
    EXPECT_DOUBLE_EQ(req.sampling.repeat_penalty, 1.1);
    EXPECT_TRUE(req.ignore_eos);
}

TEST(CompletionRequest, StopAsOneString) {
    completion_request req = parse_ok(R"({"prompt":"p","stop":"\n\n"})");
    EXPECT_EQ(req.stop, (std::vector<std::string>{"\n\n"}));
    req = parse_ok(R"({"prompt":"p","stop":[]})");
    EXPECT_TRUE(req.stop.empty());
}

TEST(CompletionRequest, LargeSeedAndStreamWithoutOptions) {
    completion_request req = parse_ok(R"({"prompt":"p","seed":9223372036854775807,"stream":true})");
    EXPECT_EQ(*req.sampling.seed, INT64_MAX);
    EXPECT_TRUE(req.stream);
    EXPECT_FALSE(req.include_usage);
    req = parse_ok(R"({"prompt":"p","stream":false,"stream_options":null})");
    EXPECT_FALSE(req.stream);
}

TEST(CompletionRequest, PromptForms) {
    completion_request req = parse_ok(R"({"prompt":["one","two",""]})");
    ASSERT_EQ(req.prompts.size(), 3u);
    EXPECT_EQ(req.prompts[1].text, "two");
    EXPECT_EQ(req.prompts[2].text, "");
    EXPECT_FALSE(req.prompts[0].is_tokens);

    req = parse_ok(R"({"prompt":[1,2,3]})");
    ASSERT_EQ(req.prompts.size(), 1u);
    EXPECT_TRUE(req.prompts[0].is_tokens);
    EXPECT_EQ(req.prompts[0].tokens, (std::vector<int32_t>{1, 2, 3}));

    req = parse_ok(R"({"prompt":[[5],[6,7]]})");
    ASSERT_EQ(req.prompts.size(), 2u);
    EXPECT_EQ(req.prompts[0].tokens, (std::vector<int32_t>{5}));
    EXPECT_EQ(req.prompts[1].tokens, (std::vector<int32_t>{6, 7}));
    EXPECT_TRUE(req.prompts[1].is_tokens);

    req = parse_ok(R"({"prompt":""})");
    ASSERT_EQ(req.prompts.size(), 1u);
    EXPECT_EQ(req.prompts[0].text, "");
}

TEST(CompletionRequest, InvalidPrompts) {
    const char * bodies[] = {
        R"({})",
        R"({"prompt":null})",
        R"({"prompt":5})",
        R"({"prompt":true})",
        R"({"prompt":{}})",
        R"({"prompt":[]})",
        R"({"prompt":[1,"a"]})",
        R"({"prompt":["a",1]})",
        R"({"prompt":[1.5]})",
        R"({"prompt":[-1]})",
        R"({"prompt":[2147483648]})",
        R"({"prompt":[[1],[]]})",
        R"({"prompt":[[1],2]})",
        R"({"prompt":[[1],["a"]]})",
        R"({"prompt":[true]})",
        R"({"prompt":[null]})",
    };
    for (const char * body : bodies) {
        completion_request req;
        expect_invalid(completion_request_parse(body, req), "prompt", body);
    }
}

TEST(CompletionRequest, InvalidValuesNameTheirField) {
    expect_rejected(R"("model":3)", "model");
    expect_rejected(R"("max_tokens":-1)", "max_tokens");
    expect_rejected(R"("max_tokens":1.5)", "max_tokens");
    expect_rejected(R"("max_tokens":"16")", "max_tokens");
    expect_rejected(R"("max_tokens":4294967296)", "max_tokens");
    expect_rejected(R"("temperature":-0.1)", "temperature");
    expect_rejected(R"("temperature":2.01)", "temperature");
    expect_rejected(R"("temperature":"hot")", "temperature");
    expect_rejected(R"("top_p":0)", "top_p");
    expect_rejected(R"("top_p":1.5)", "top_p");
    expect_rejected(R"("n":0)", "n");
    expect_rejected(R"("n":17)", "n");
    expect_rejected(R"("n":2.0)", "n");
    expect_rejected(R"("stream":1)", "stream");
    expect_rejected(R"("stream":"true")", "stream");
    expect_rejected(R"("stream":true,"stream_options":true)", "stream_options");
    expect_rejected(R"("stream":true,"stream_options":{"include_usage":"yes"})", "stream_options.include_usage");
    expect_rejected(R"("stop":"")", "stop");
    expect_rejected(R"("stop":["a",""])", "stop");
    expect_rejected(R"("stop":["a","b","c","d","e"])", "stop");
    expect_rejected(R"("stop":[1])", "stop");
    expect_rejected(R"("stop":5)", "stop");
    expect_rejected(R"("seed":1.5)", "seed");
    expect_rejected(R"("seed":"42")", "seed");
    expect_rejected(R"("seed":18446744073709551615)", "seed");
    expect_rejected(R"("presence_penalty":-2.5)", "presence_penalty");
    expect_rejected(R"("frequency_penalty":3)", "frequency_penalty");
    expect_rejected(R"("logit_bias":[1])", "logit_bias");
    expect_rejected(R"("logit_bias":{"abc":1})", "logit_bias");
    expect_rejected(R"("logit_bias":{"-1":1})", "logit_bias");
    expect_rejected(R"("logit_bias":{"+1":1})", "logit_bias");
    expect_rejected(R"("logit_bias":{"99999999999":1})", "logit_bias");
    expect_rejected(R"("logit_bias":{"1":101})", "logit_bias");
    expect_rejected(R"("logit_bias":{"1":"5"})", "logit_bias");
    expect_rejected(R"("logprobs":21)", "logprobs");
    expect_rejected(R"("logprobs":-1)", "logprobs");
    expect_rejected(R"("logprobs":true)", "logprobs");
    expect_rejected(R"("echo":"no")", "echo");
    expect_rejected(R"("user":7)", "user");
    expect_rejected(R"("ignore_eos":1)", "ignore_eos");
    expect_rejected(R"("top_k":-1)", "top_k");
    expect_rejected(R"("top_k":0.5)", "top_k");
    expect_rejected(R"("min_p":1.01)", "min_p");
    expect_rejected(R"("min_p":-0.01)", "min_p");
    expect_rejected(R"("repeat_penalty":0)", "repeat_penalty");
    expect_rejected(R"("repeat_penalty":-1)", "repeat_penalty");
}

TEST(CompletionRequest, StreamOptionsNeedStream) {
    expect_rejected(R"("stream_options":{"include_usage":true})", "stream_options");
    expect_rejected(R"("stream":false,"stream_options":{})", "stream_options");
}

TEST(CompletionRequest, MalformedBodies) {
    const char * bodies[] = {"", "   ", "{", "{\"prompt\":\"x\"", "{\"prompt\":\"x\",}", "nul", "[1,2]",
                             "\"text\"", "42", "null", "{\"prompt\":\"\xff\"}", "{\"a\":1}{\"b\":2}",
                             "{\"prompt\":\"x\",\"temperature\":1e999}"};
    for (const char * body : bodies) {
        completion_request req;
        auto err = completion_request_parse(body, req);
        ASSERT_TRUE(err.has_value()) << body;
        EXPECT_EQ(err->status, 400) << body;
        EXPECT_EQ(err->type, "invalid_request_error") << body;
        EXPECT_EQ(err->param, "") << body;
    }
}

TEST(CompletionRequest, SyntaxErrorNamesThePosition) {
    completion_request req;
    auto err = completion_request_parse("{\"prompt\": \"x\",\n \"n\": 2x}", req);
    ASSERT_TRUE(err.has_value());
    EXPECT_NE(err->message.find("line 2"), std::string::npos) << err->message;
    EXPECT_NE(err->message.find("byte"), std::string::npos) << err->message;
}

TEST(CompletionRequest, DeepNestingIsRejectedNotRecursed) {
    std::string body = R"({"prompt":"x","junk":)" + std::string(100000, '[') + std::string(100000, ']') + "}";
    completion_request req;
    auto err = completion_request_parse(body, req);
    ASSERT_TRUE(err.has_value());
    EXPECT_EQ(err->status, 400);
    EXPECT_NE(err->message.find("nested"), std::string::npos) << err->message;
    // Brackets inside strings do not count.
    req = parse_ok(R"({"prompt":")" + std::string(1000, '[') + "\"}");
    EXPECT_EQ(req.prompts[0].text.size(), 1000u);
    // An escaped quote does not end a string.
    req = parse_ok(R"({"prompt":"\")" + std::string(1000, '[') + "\"}");
    EXPECT_EQ(req.prompts[0].text.size(), 1001u);
}

TEST(CompletionRequest, FailedParseLeavesOutputUntouched) {
    completion_request req;
    req.model = "kept";
    ASSERT_TRUE(completion_request_parse(R"({"model":"other","prompt":"x","n":99})", req).has_value());
    EXPECT_EQ(req.model, "kept");
}

TEST(CompletionRequest, VocabularyCheck) {
    completion_request req = parse_ok(R"({"prompt":[[1,2],[3,99]],"logit_bias":{"5":1}})");
    EXPECT_FALSE(completion_request_check_vocab(req, 100).has_value());
    expect_invalid(completion_request_check_vocab(req, 99), "prompt", "token 99 of 99");
    req = parse_ok(R"({"prompt":"text","logit_bias":{"50":1}})");
    EXPECT_FALSE(completion_request_check_vocab(req, 51).has_value());
    expect_invalid(completion_request_check_vocab(req, 50), "logit_bias", "bias token 50 of 50");
}
