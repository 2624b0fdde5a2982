// End-to-end: the real inferd on a loopback port with a shipped model — completions and chat,
// streaming framing, include_usage, n > 1, stop strings, seeds, logprobs, echo, errors,
// tokenize / detokenize, models, prefix-cache hits.
#include "server/inferd-process.h"
#include "server/shared-inferd-suite.h"
#include "testdata.h"

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <cctype>

using nlohmann::json;

namespace {

class server_e2e : public shared_inferd_suite<server_e2e> {
protected:
    // The data: lines of an SSE body, [DONE] included.
    static std::vector<std::string> sse_events(const test_response & r) {
        std::vector<std::string> out;
        const std::string & b = r.body;
        size_t p = 0;
        while (p < b.size()) {
            const size_t e = b.find("\n\n", p);
            EXPECT_NE(e, std::string::npos) << "every event ends with a blank line";
            if (e == std::string::npos) break;
            const std::string ev = b.substr(p, e - p);
            EXPECT_EQ(ev.rfind("data: ", 0), 0u) << ev;
            out.push_back(ev.substr(6));
            p = e + 2;
        }
        return out;
    }
};

}  // namespace

TEST_F(server_e2e, models_health_and_unknown_routes) {
    auto r = inferd_call(proc_->port(), "GET", "/v1/models");
    ASSERT_TRUE(r);
    const json j = json::parse(r->body);
    EXPECT_EQ(j["object"], "list");
    EXPECT_EQ(j["data"][0]["id"], "tiny");
    EXPECT_GT(j["data"][0]["meta"]["n_ctx"].get<int>(), 0);
    EXPECT_GT(j["data"][0]["meta"]["n_vocab"].get<int>(), 0);
    r = inferd_call(proc_->port(), "GET", "/health");
    EXPECT_EQ(json::parse(r->body)["status"], "ok");
    EXPECT_EQ(inferd_call(proc_->port(), "GET", "/nope")->status, 404);
    EXPECT_EQ(inferd_call(proc_->port(), "GET", "/v1/completions")->status, 405);
}

TEST_F(server_e2e, any_model_name_is_served_by_the_loaded_model) {
    int st = 0;
    for (const char * path : {"/v1/completions", "/v1/chat/completions"}) {
        json body = {{"model", "gpt-4o-mini"}, {"max_tokens", 2}};
        if (std::string(path) == "/v1/completions") body["prompt"] = "x";
        else body["messages"] = json::array({{{"role", "user"}, {"content", "x"}}});
        const json j = post(path, body, &st);
        EXPECT_EQ(st, 200) << path << " " << j.dump();
        EXPECT_EQ(j["model"], "tiny") << path;  // the response names the model that served it
    }
}

TEST_F(server_e2e, completion_shape_and_usage) {
    int st = 0;
    const json j = post("/v1/completions", {{"prompt", "Hello there"}, {"max_tokens", 8}, {"temperature", 0}}, &st);
    ASSERT_EQ(st, 200) << j.dump();
    EXPECT_EQ(j["object"], "text_completion");
    EXPECT_EQ(j["id"].get<std::string>().rfind("cmpl-", 0), 0u);
    EXPECT_EQ(j["model"], "tiny");
    ASSERT_EQ(j["choices"].size(), 1u);
    EXPECT_EQ(j["choices"][0]["index"], 0);
    EXPECT_TRUE(j["choices"][0]["text"].is_string());
    EXPECT_EQ(j["choices"][0]["finish_reason"], "length");
    EXPECT_EQ(j["usage"]["completion_tokens"], 8);
    EXPECT_EQ(j["usage"]["total_tokens"], j["usage"]["prompt_tokens"].get<int>() + 8);
    EXPECT_TRUE(j["usage"]["prompt_tokens_details"]["cached_tokens"].is_number());
}

TEST_F(server_e2e, streaming_completion_matches_the_plain_one) {
    const json req = {{"prompt", "Once upon a time"}, {"max_tokens", 12}, {"temperature", 0}};
    const json plain = post("/v1/completions", req);
    json sreq = req;
    sreq["stream"] = true;
    sreq["stream_options"] = {{"include_usage", true}};
    auto r = inferd_call(proc_->port(), "POST", "/v1/completions", sreq.dump());
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200);
    EXPECT_EQ(r->header("content-type").rfind("text/event-stream", 0), 0u);
    const std::vector<std::string> ev = sse_events(*r);
    ASSERT_GE(ev.size(), 3u);
    EXPECT_EQ(ev.back(), "[DONE]");
    std::string text;
    json usage, last_choice;
    for (size_t i = 0; i + 1 < ev.size(); ++i) {
        const json c = json::parse(ev[i]);
        EXPECT_EQ(c["object"], "text_completion");
        if (c["choices"].empty()) {
            usage = c["usage"];
            EXPECT_EQ(i + 2, ev.size()) << "the usage chunk comes last";
            continue;
        }
        text += c["choices"][0]["text"].get<std::string>();
        last_choice = c["choices"][0];
    }
    EXPECT_EQ(text, plain["choices"][0]["text"]);
    EXPECT_EQ(last_choice["finish_reason"], "length");
    EXPECT_EQ(usage["completion_tokens"], 12);
}

TEST_F(server_e2e, chat_streaming_framing) {
    const json req = {{"messages", {{{"role", "system"}, {"content", "Be brief."}}, {{"role", "user"}, {"content", "Hi"}}}},
                      {"max_tokens", 6}, {"temperature", 0}, {"stream", true}};
    auto r = inferd_call(proc_->port(), "POST", "/v1/chat/completions", req.dump());
    ASSERT_TRUE(r);
    const std::vector<std::string> ev = sse_events(*r);
    ASSERT_GE(ev.size(), 3u);
    EXPECT_EQ(ev.back(), "[DONE]");
    const json first = json::parse(ev.front());
    EXPECT_EQ(first["object"], "chat.completion.chunk");
    EXPECT_EQ(first["choices"][0]["delta"]["role"], "assistant");
    const json last = json::parse(ev[ev.size() - 2]);
    EXPECT_EQ(last["choices"][0]["finish_reason"], "length");
    EXPECT_TRUE(last["choices"][0]["delta"].empty()) << last.dump();
    std::string streamed;
    for (size_t i = 1; i + 2 < ev.size(); ++i) {
        const json c = json::parse(ev[i]);
        EXPECT_TRUE(c["choices"][0]["finish_reason"].is_null());
        streamed += c["choices"][0]["delta"].value("content", "");
    }
    json plain_req = req;
    plain_req.erase("stream");
    const json plain = post("/v1/chat/completions", plain_req);
    EXPECT_EQ(plain["object"], "chat.completion");
    EXPECT_EQ(plain["choices"][0]["message"]["role"], "assistant");
    EXPECT_EQ(plain["choices"][0]["message"]["content"], streamed);
}

TEST_F(server_e2e, n_choices_seeds_and_stop_strings) {
    const json two = post("/v1/completions", {{"prompt", "The cat"}, {"max_tokens", 10}, {"n", 2}, {"seed", 7}, {"temperature", 1.0}});
    ASSERT_EQ(two["choices"].size(), 2u) << two.dump();
    EXPECT_EQ(two["choices"][1]["index"], 1);
    EXPECT_EQ(two["usage"]["completion_tokens"], 20);
    const json again = post("/v1/completions", {{"prompt", "The cat"}, {"max_tokens", 10}, {"n", 2}, {"seed", 7}, {"temperature", 1.0}});
    EXPECT_EQ(again["choices"][0]["text"], two["choices"][0]["text"]) << "same seed, same text";
    EXPECT_EQ(again["choices"][1]["text"], two["choices"][1]["text"]);
    // A stop string taken from the middle of a greedy continuation.
    const json base = post("/v1/completions", {{"prompt", "A long story:"}, {"max_tokens", 24}, {"temperature", 0}});
    const std::string text = base["choices"][0]["text"];
    ASSERT_GE(text.size(), 12u);
    size_t at = text.size() / 3;  // three printable ASCII bytes (the text may hold any UTF-8)
    while (at + 3 <= text.size() && !(std::isprint((unsigned char) text[at]) && std::isprint((unsigned char) text[at + 1]) &&
                                      std::isprint((unsigned char) text[at + 2]))) {
        ++at;
    }
    ASSERT_LE(at + 3, text.size()) << text;
    const std::string stop = text.substr(at, 3);
    const size_t cut = text.find(stop);
    for (bool stream : {false, true}) {
        json req = {{"prompt", "A long story:"}, {"max_tokens", 24}, {"temperature", 0}, {"stop", {stop}}, {"stream", stream}};
        auto r = inferd_call(proc_->port(), "POST", "/v1/completions", req.dump());
        ASSERT_TRUE(r);
        std::string got, finish;
        if (stream) {
            for (const std::string & e : sse_events(*r)) {
                if (e == "[DONE]") continue;
                const json c = json::parse(e);
                got += c["choices"][0]["text"].get<std::string>();
                if (!c["choices"][0]["finish_reason"].is_null()) finish = c["choices"][0]["finish_reason"];
            }
        } else {
            const json j = json::parse(r->body);
            got = j["choices"][0]["text"];
            finish = j["choices"][0]["finish_reason"];
        }
        EXPECT_EQ(got, text.substr(0, cut)) << (stream ? "stream" : "plain") << " stop '" << stop << "'";
        EXPECT_EQ(finish, "stop");
    }
}

TEST_F(server_e2e, logprobs_and_echo) {
    const json j = post("/v1/completions", {{"prompt", "Hi"}, {"max_tokens", 5}, {"temperature", 0}, {"logprobs", 3}});
    const json lp = j["choices"][0]["logprobs"];
    ASSERT_TRUE(lp.is_object()) << j.dump();
    EXPECT_EQ(lp["tokens"].size(), 5u);
    EXPECT_EQ(lp["token_logprobs"].size(), 5u);
    EXPECT_EQ(lp["top_logprobs"].size(), 5u);
    EXPECT_EQ(lp["top_logprobs"][0].size(), 3u);
    EXPECT_LE(lp["token_logprobs"][0].get<double>(), 0.0);
    const json c = post("/v1/chat/completions", {{"messages", {{{"role", "user"}, {"content", "Hi"}}}}, {"max_tokens", 3},
                                                 {"temperature", 0}, {"logprobs", true}, {"top_logprobs", 2}});
    EXPECT_EQ(c["choices"][0]["logprobs"]["content"].size(), 3u) << c.dump();
    EXPECT_EQ(c["choices"][0]["logprobs"]["content"][0]["top_logprobs"].size(), 2u);
    const json e = post("/v1/completions", {{"prompt", "Echo me"}, {"max_tokens", 2}, {"echo", true}, {"temperature", 0}});
    EXPECT_EQ(e["choices"][0]["text"].get<std::string>().rfind("Echo me", 0), 0u) << e.dump();
}

TEST_F(server_e2e, errors_have_the_openai_shape) {
    auto r = inferd_call(proc_->port(), "POST", "/v1/completions", "{not json");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 400);
    json j = json::parse(r->body);
    EXPECT_EQ(j["error"]["type"], "invalid_request_error");
    int st = 0;
    j = post("/v1/completions", {{"prompt", "x"}, {"temperature", 5}}, &st);
    EXPECT_EQ(st, 400);
    EXPECT_EQ(j["error"]["param"], "temperature");
    j = post("/v1/completions", {{"prompt", "x"}, {"max_tokens", 5000}}, &st);
    EXPECT_EQ(st, 400) << j.dump();
    j = post("/v1/chat/completions", {{"messages", json::array()}}, &st);
    EXPECT_EQ(st, 400);
    j = post("/v1/completions", {{"prompt", json::array({1, 2, 99999})}}, &st);
    EXPECT_EQ(st, 400) << j.dump();
    // The server is unharmed.
    j = post("/v1/completions", {{"prompt", "ok"}, {"max_tokens", 2}}, &st);
    EXPECT_EQ(st, 200);
}

TEST_F(server_e2e, tokenize_and_detokenize) {
    int st = 0;
    json j = post("/tokenize", {{"content", "Hello world"}, {"with_pieces", true}}, &st);
    ASSERT_EQ(st, 200) << j.dump();
    ASSERT_TRUE(j["tokens"].is_array());
    std::vector<int32_t> ids;
    for (const json & t : j["tokens"]) ids.push_back(t["id"]);
    j = post("/detokenize", {{"tokens", ids}}, &st);
    EXPECT_EQ(st, 200);
    EXPECT_EQ(j["content"], "Hello world");
}

TEST_F(server_e2e, prefix_cache_hits_are_reported) {
    std::string pre;
    for (int i = 0; i < 40; ++i) pre += "word" + std::to_string(i) + " ";
    const json a = post("/v1/completions", {{"prompt", pre + "alpha"}, {"max_tokens", 2}, {"temperature", 0}});
    const json b = post("/v1/completions", {{"prompt", pre + "beta"}, {"max_tokens", 2}, {"temperature", 0}});
    EXPECT_GT(b["usage"]["prompt_tokens_details"]["cached_tokens"].get<int>(), 30) << b.dump();
    EXPECT_LT(b["usage"]["prompt_tokens_details"]["cached_tokens"].get<int>(), b["usage"]["prompt_tokens"].get<int>());
}
