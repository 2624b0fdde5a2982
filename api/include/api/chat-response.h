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
//   // a reasoning piece, and a tool call: first its id and name, then pieces of its arguments
//   write(sse_data(chat_chunk_to_json(meta, {.index = 0, .kind = chat_delta_kind::reasoning, .content = piece})));
//   write(sse_data(chat_chunk_to_json(meta, {.index = 0, .kind = chat_delta_kind::tool_call,
//                                            .call = {.index = 0, .id = "call_…", .name = "get_weather"}})));
//   write(sse_data(chat_chunk_to_json(meta, {.index = 0, .kind = chat_delta_kind::tool_call,
//                                            .call = {.index = 0, .arguments = "{\"location\": "}})));
//
// JSON: choices [{"index","message":{"role":"assistant","content","reasoning_content",
// "tool_calls"},"logprobs": null | {"content":[{"token","logprob","bytes","top_logprobs":
// [{"token","logprob","bytes"}]}]}, "finish_reason"}] and "usage". The message's content is null
// when it is empty and there are tool calls; reasoning_content appears only when non-empty,
// tool_calls only when there are any: [{"id","type":"function","function":{"name","arguments"}}].
// Chunk deltas: role → {"role":"assistant","content":""}, content → {"content": piece},
// reasoning → {"reasoning_content": piece}, tool_call → {"tool_calls":[{"index","id","type":
// "function","function":{"name","arguments"}}]} (id, type and name only in a call's first delta),
// finish → {} with the finish reason; chunks carry "usage": null, the usage chunk "choices": [].
// Log-probabilities that are not finite are written as -9999.0.
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

// A tool call the model made.
struct chat_tool_call {
    std::string id = {};
    std::string name = {};
    std::string arguments = "{}";  // JSON text of the arguments object
};

struct chat_choice {
    int32_t index = 0;
    std::string content = {};
    std::string reasoning_content = {};            // "" when none
    std::vector<chat_tool_call> tool_calls = {};
    std::optional<std::vector<chat_token_logprob>> logprobs = std::nullopt;  // JSON null
    api_finish_reason finish_reason = api_finish_reason::none;
};

struct chat_response {
    api_response_meta meta = {};
    std::vector<chat_choice> choices = {};
    api_usage usage = {};
};

enum class chat_delta_kind { role, content, reasoning, tool_call, finish };

// A piece of a streamed tool call: the first of a call has its id and name (and arguments ""),
// the later ones only fragments of its arguments' JSON text.
struct chat_tool_call_delta {
    int32_t index = 0;  // the call's place among the choice's calls: 0, 1, …
    std::string id = {};
    std::string name = {};
    std::string arguments = {};
};

struct chat_chunk {
    int32_t index = 0;
    chat_delta_kind kind = chat_delta_kind::content;
    std::string content = {};                                 // kinds content and reasoning
    std::optional<std::vector<chat_token_logprob>> logprobs = std::nullopt;  // kinds content, reasoning, tool_call
    chat_tool_call_delta call = {};                           // kind tool_call
    api_finish_reason finish_reason = api_finish_reason::none;  // kind finish
};

std::string chat_response_to_json(const chat_response & res);
std::string chat_chunk_to_json(const api_response_meta & meta, const chat_chunk & chunk);
std::string chat_usage_chunk_to_json(const api_response_meta & meta, const api_usage & usage);
