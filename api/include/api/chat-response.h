// api/chat-response.h — responses of POST /v1/chat/completions: "chat.completion" whole, and
// "chat.completion.chunk" when streamed.
//
// Usage:
//   chat_response res;
//   res.meta = {"chatcmpl-abc", 1700000000, "tinyllama"};
//   res.choices.push_back({.index = 0, .content = "Hi!", .finish_reason = api_finish_reason::stop});
//   res.usage = {.prompt_tokens = 20, .completion_tokens = 3};
//   respond(200, chat_response_to_json(res));
//
//   // streaming, per choice: the role first, then the pieces, then the finish reason
//   write(sse_data(chat_chunk_to_json(meta, {.index = 0, .kind = chat_delta_kind::role})));
//   write(sse_data(chat_chunk_to_json(meta, {.index = 0, .kind = chat_delta_kind::content, .content = piece})));
//   write(sse_data(chat_chunk_to_json(meta, {.index = 0, .kind = chat_delta_kind::finish,
//                                            .finish_reason = api_finish_reason::length})));
//   if (req.include_usage) write(sse_data(chat_usage_chunk_to_json(meta, usage)));
//   write(sse_done());
//
// JSON: choices [{"index","message":{"role":"assistant","content"},"logprobs": null |
// {"content":[{"token","logprob","bytes","top_logprobs":[{"token","logprob","bytes"}]}]},
// "finish_reason"}] and "usage". Chunk deltas: role → {"role":"assistant","content":""},
// content → {"content": piece}, finish → {} with the finish reason; chunks carry "usage": null,
// the usage chunk "choices": []. Log-probabilities that are not finite are written as -9999.0.
// Serialisation never throws; invalid UTF-8 in text becomes U+FFFD ("bytes" keeps the truth).
#pragma once

#include "api/response-common.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

struct chat_top_logprob {
    std::string token = {};  // the token's bytes
    double logprob = 0.0;
};

struct chat_token_logprob {
    std::string token = {};
    double logprob = 0.0;
    std::vector<chat_top_logprob> top = {};  // top_logprobs alternatives, best first
};

struct chat_choice {
    int32_t index = 0;
    std::string content = {};
    std::optional<std::vector<chat_token_logprob>> logprobs = std::nullopt;  // JSON null
    api_finish_reason finish_reason = api_finish_reason::none;
};

struct chat_response {
    api_response_meta meta = {};
    std::vector<chat_choice> choices = {};
    api_usage usage = {};
};

enum class chat_delta_kind { role, content, finish };

struct chat_chunk {
    int32_t index = 0;
    chat_delta_kind kind = chat_delta_kind::content;
    std::string content = {};                                 // kind content
    std::optional<std::vector<chat_token_logprob>> logprobs = std::nullopt;  // kind content
    api_finish_reason finish_reason = api_finish_reason::none;  // kind finish
};

std::string chat_response_to_json(const chat_response & res);
std::string chat_chunk_to_json(const api_response_meta & meta, const chat_chunk & chunk);
std::string chat_usage_chunk_to_json(const api_response_meta & meta, const api_usage & usage);
