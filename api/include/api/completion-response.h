// api/completion-response.h — responses of POST /v1/completions (object "text_completion"),
// whole and streamed.
//
// Usage:
//   completion_response res;
//   res.meta = {"cmpl-abc", 1700000000, "tinyllama"};
//   res.choices.push_back({.index = 0, .text = "Hello", .finish_reason = api_finish_reason::length});
//   res.usage = {.prompt_tokens = 5, .completion_tokens = 16};
//   respond(200, completion_response_to_json(res));
//
//   // streaming: one chunk per text delta, finish_reason none until the last of each choice
//   write(sse_data(completion_chunk_to_json(meta, {.index = 0, .text = piece})));
//   write(sse_data(completion_chunk_to_json(meta, {.index = 0, .finish_reason = api_finish_reason::stop})));
//   if (req.include_usage) write(sse_data(completion_usage_chunk_to_json(meta, usage)));
//   write(sse_done());
//
// JSON: {"id","object":"text_completion","created","model","choices":[{"index","text",
// "logprobs": null | {"tokens","token_logprobs","top_logprobs":[{token: logprob}],"text_offset"},
// "finish_reason"}],"usage":{…}}. A chunk has one choice and "usage": null; the usage chunk has
// "choices": [] and the usage. Log-probabilities that are not finite are written as -9999.0.
// Serialisation never throws; invalid UTF-8 in text becomes U+FFFD.
#pragma once

#include "api/response-common.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

// One token of a choice with legacy (completions-style) log-probabilities.
struct completion_token_logprob {
    std::string token = {};
    std::optional<double> logprob = {};                     // nullopt: the first echoed prompt token
    std::vector<std::pair<std::string, double>> top = {};   // the best alternatives, best first
    int64_t text_offset = 0;                           // characters before this token in the text
};

struct completion_choice {
    int32_t index = 0;
    std::string text = {};
    std::optional<std::vector<completion_token_logprob>> logprobs = std::nullopt;  // JSON null
    api_finish_reason finish_reason = api_finish_reason::none;
};

struct completion_response {
    api_response_meta meta = {};
    std::vector<completion_choice> choices = {};
    api_usage usage = {};
};

std::string completion_response_to_json(const completion_response & res);
std::string completion_chunk_to_json(const api_response_meta & meta, const completion_choice & choice);
std::string completion_usage_chunk_to_json(const api_response_meta & meta, const api_usage & usage);
