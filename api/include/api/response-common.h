// api/response-common.h — what every generation response shares: the id/created/model header,
// finish reasons, token usage, and the Server-Sent-Events framing of streamed chunks.
//
// Usage:
//   api_response_meta meta{"cmpl-" + random_id(), unix_seconds_now(), model_name};
//   api_usage usage{.prompt_tokens = 12, .completion_tokens = 16, .cached_tokens = 8};
//   stream.write(sse_data(completion_chunk_to_json(meta, choice)));   // "data: {…}\n\n"
//   stream.write(sse_done());                                          // "data: [DONE]\n\n"
//   stream.write(sse_data(api_error_to_json(err)));                    // an error mid-stream
//
// Usage JSON: {"prompt_tokens","completion_tokens","total_tokens" (their sum),
// "prompt_tokens_details":{"cached_tokens"}}.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

// Why a choice ended: none while it is still streaming (JSON null), stop (end-of-generation
// token or a stop string), length (max_tokens or the end of the context), tool_calls (a chat
// answer that ended after calling tools).
enum class api_finish_reason { none, stop, length, tool_calls };

// "stop", "length", "tool_calls", or "" for none.
const char * api_finish_reason_name(api_finish_reason r);

struct api_usage {
    int64_t prompt_tokens = 0;      // every prompt token, cached ones included
    int64_t completion_tokens = 0;  // generated tokens over all choices
    int64_t cached_tokens = 0;      // prompt tokens reused from the prefix cache
};

struct api_response_meta {
    std::string id = {};         // "cmpl-…" or "chatcmpl-…", chosen by the caller
    int64_t created = 0;    // unix seconds, chosen by the caller
    std::string model = {};
};

// "data: " + json + "\n\n": one SSE event. `json` must not hold a newline (compact JSON has none).
std::string sse_data(std::string_view json);
// "data: [DONE]\n\n": the end of an OpenAI stream.
std::string sse_done();
