// Fuzz-ish robustness: random bytes and mutations of valid bodies never throw out of the
// parsers, and every rejection is a well-formed 400.
#include "api/chat-request.h"
#include "api/completion-request.h"
#include "api/embeddings.h"
#include "api/error.h"
#include "api/rerank.h"
#include "api/tokenize.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <random>
#include <string>
#include <vector>

namespace {

const std::vector<std::string> seeds = {
    R"({"model":"m","prompt":["a","b"],"max_tokens":5,"temperature":0.5,"stop":["x"],"logit_bias":{"1":2}})",
    R"({"prompt":[[1,2],[3]],"n":2,"stream":true,"stream_options":{"include_usage":true},"logprobs":3})",
    R"({"messages":[{"role":"system","content":"s"},{"role":"user","content":[{"type":"text","text":"t"}]}],"logprobs":true,"top_logprobs":2})",
    R"({"messages":[{"role":"assistant","content":null}],"max_completion_tokens":4,"seed":-1,"top_k":3})",
    R"({"content":"hello","add_special":false,"with_pieces":true})",
    R"({"tokens":[1,2,3]})",
    R"({"prompt":"p","response_format":{"type":"json_schema","json_schema":{"name":"n","schema":{"type":"object","properties":{"b":{},"a":{}}}}}})",
    R"({"messages":[{"role":"user","content":"u"}],"json_schema":{"enum":[1,2]},"grammar":"root ::= \"a\""})",
    R"({"messages":[{"role":"user","content":"w"},{"role":"assistant","content":null,"reasoning_content":"r",)"
    R"("tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{\"a\":[1,{\"b\":2}]}"}},)"
    R"({"function":{"name":"g","arguments":{"y":1,"x":[]}}}]},{"role":"tool","tool_call_id":"c1","name":"f",)"
    R"("content":"ok"}],"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object",)"
    R"("properties":{"a":{}}}}},{"type":"function","function":{"name":"g","strict":true}}],)"
    R"("tool_choice":{"type":"function","function":{"name":"g"}},"parallel_tool_calls":false})",
    R"({"messages":[{"role":"user","content":"x"}],"tools":[{"type":"function","function":{"name":"f"}}],)"
    R"("tool_choice":"required","reasoning_format":"deepseek","reasoning_effort":"low"})",
    R"({"model":"e","input":["a",""],"encoding_format":"base64","dimensions":8,"user":"u"})",
    R"({"input":[[1,2],[3]],"encoding_format":"float"})",
    R"({"model":"r","query":"q","documents":["a",{"text":"b"}],"top_n":1,"return_documents":true})",
};

const std::string fragments[] = {"{", "}", "[", "]", ",", ":", "\"", "null", "true", "-1", "1e999", "0.5",
                                 "\"prompt\"", "\"messages\"", "\"schema\"", "\"grammar\"", "\"tools\"",
                                 "\"tool_calls\"", "\"function\"", "\"arguments\"", "\\u0000", "\xff", "\xc3", "[[",
                                 "{\"a\":", "\"input\"", "\"documents\"", "\"text\"", "\"base64\""};

// Checks that every parser takes `body` without throwing and answers with a 400 or success.
void parse_all(const std::string & body) {
    completion_request c;
    chat_request ch;
    tokenize_request t;
    detokenize_request d;
    embeddings_request e;
    rerank_request rr;
    std::optional<api_error> errs[6];
    ASSERT_NO_THROW({
        errs[0] = completion_request_parse(body, c);
        errs[1] = chat_request_parse(body, ch);
        errs[2] = tokenize_request_parse(body, t);
        errs[3] = detokenize_request_parse(body, d);
        errs[4] = embeddings_request_parse(body, e);
        errs[5] = rerank_request_parse(body, rr);
    }) << body;
    if (!errs[4]) {  // an accepted embeddings request holds 1..2048 inputs
        ASSERT_FALSE(e.inputs.empty()) << body;
        ASSERT_LE(e.inputs.size(), embeddings_max_inputs) << body;
    }
    if (!errs[5]) {
        ASSERT_FALSE(rr.documents.empty()) << body;
        ASSERT_LE(rr.documents.size(), rerank_max_documents) << body;
    }
    if (!errs[1]) {  // an accepted chat request hands on valid JSON texts
        for (const api_chat_message & m : ch.messages) {
            for (const api_tool_call & call : m.tool_calls) {
                ASSERT_FALSE(nlohmann::json::parse(call.arguments, nullptr, false).is_discarded()) << body;
            }
        }
        if (!ch.tools.empty()) {
            nlohmann::json tools = nlohmann::json::parse(ch.tools, nullptr, false);
            ASSERT_TRUE(tools.is_array()) << body;
            ASSERT_EQ(tools.size(), ch.tool_names.size()) << body;
        }
    }
    for (const auto & e : errs) {
        if (e) {
            ASSERT_EQ(e->status, 400) << body;
            ASSERT_FALSE(e->message.empty()) << body;
            nlohmann::json j = nlohmann::json::parse(api_error_to_json(*e), nullptr, false);
            ASSERT_TRUE(j.is_object()) << body;
        }
    }
}

std::string mutate(std::string s, std::mt19937 & rng) {
    int edits = 1 + static_cast<int>(rng() % 4);
    for (int i = 0; i < edits; ++i) {
        size_t pos = s.empty() ? 0 : rng() % (s.size() + 1);
        switch (rng() % 4) {
            case 0:  // delete a run
                if (!s.empty() && pos < s.size()) {
                    s.erase(pos, 1 + rng() % 6);
                }
                break;
            case 1:  // insert a fragment
                s.insert(pos, fragments[rng() % std::size(fragments)]);
                break;
            case 2:  // overwrite a byte
                if (pos < s.size()) {
                    s[pos] = static_cast<char>(rng() & 0xFF);
                }
                break;
            default:  // duplicate a run
                if (pos < s.size()) {
                    s.insert(pos, s.substr(pos, 1 + rng() % 10));
                }
                break;
        }
    }
    return s;
}

}  // namespace

TEST(ApiFuzz, RandomBytes) {
    std::mt19937 rng(42);
    for (int iter = 0; iter < 2000; ++iter) {
        std::string body(rng() % 64, '\0');
        for (char & c : body) {
            c = static_cast<char>(rng() & 0xFF);
        }
        parse_all(body);
    }
}

TEST(ApiFuzz, MutatedValidBodies) {
    std::mt19937 rng(7);
    for (const std::string & s : seeds) {
        parse_all(s);
    }
    for (int iter = 0; iter < 6000; ++iter) {
        parse_all(mutate(seeds[rng() % seeds.size()], rng));
    }
}

TEST(ApiFuzz, WellFormedJsonOfWrongShapes) {
    // Every field of every request set to values of every JSON type.
    const char * fields[] = {"model", "prompt", "messages", "max_tokens", "max_completion_tokens", "temperature",
                             "top_p", "n", "stream", "stream_options", "stop", "seed", "presence_penalty",
                             "frequency_penalty", "logit_bias", "logprobs", "top_logprobs", "echo", "user",
                             "top_k", "min_p", "repeat_penalty", "content", "add_special", "with_pieces", "tokens",
                             "tools", "tool_choice", "parallel_tool_calls", "reasoning_format", "reasoning_effort",
                             "chat_template_kwargs", "input", "encoding_format", "dimensions", "query",
                             "documents", "top_n", "return_documents"};
    const char * values[] = {"null", "true", "0", "-5", "3.25", "1e308", "18446744073709551615", "\"\"", "\"s\"",
                             "[]", "[1]", "[\"a\"]", "[[]]", "[{}]", "{}", "{\"1\":1}", "{\"type\":\"text\"}",
                             "[{\"role\":\"user\"}]", "[{\"role\":\"user\",\"content\":[{\"type\":\"text\"}]}]",
                             "\"auto\"", "\"required\"", "{\"type\":\"function\",\"function\":{\"name\":\"f\"}}",
                             "[{\"type\":\"function\",\"function\":{\"name\":\"f\"}}]",
                             "[{\"role\":\"assistant\",\"tool_calls\":[{\"function\":{\"name\":\"f\",\"arguments\":\"{}\"}}]}]",
                             "[{\"role\":\"tool\",\"content\":\"r\",\"tool_call_id\":5}]", "\"base64\"",
                             "[{\"text\":\"t\"}]", "[\"a\",{\"text\":1}]"};
    for (const char * f : fields) {
        for (const char * v : values) {
            parse_all(std::string("{\"") + f + "\":" + v + "}");
            parse_all(std::string(seeds[0]).insert(1, std::string("\"") + f + "\":" + v + ","));
            parse_all(std::string(seeds[2]).insert(1, std::string("\"") + f + "\":" + v + ","));
            parse_all(std::string(seeds[8]).insert(1, std::string("\"") + f + "\":" + v + ","));
            parse_all(std::string(seeds[10]).insert(1, std::string("\"") + f + "\":" + v + ","));
            parse_all(std::string(seeds[12]).insert(1, std::string("\"") + f + "\":" + v + ","));
        }
    }
}
