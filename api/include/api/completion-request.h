// api/completion-request.h — POST /v1/completions: the request parsed from its body text and
// validated field by field.
//
// Usage:
//   completion_request req;
//   if (auto err = completion_request_parse(body, req)) {      // malformed or invalid
//       return respond(err->status, api_error_to_json(*err));   // 400, param names the field
//   }
//   if (auto err = completion_request_check_vocab(req, n_vocab)) return respond(…);  // token ids
//   for (const api_prompt & p : req.prompts)                    // one or more prompts,
//       for (int i = 0; i < req.n; ++i) …                       // n choices each
//
// Fields (absent or null: the default; unknown fields are ignored):
//   model (string), prompt (required: string | array of strings | array of token ids | array of
//   arrays of token ids), max_tokens (integer >= 0, default 16), logprobs (integer 0..20 or
//   null), echo (bool), and the shared fields of api_generation_options (request-common.h),
//   structured output (response_format, json_schema, grammar) among them.
//
// Return: nullopt on success (`out` filled), otherwise the error to send: always status 400,
// type invalid_request_error, param the field at fault ("prompt", "stream_options.include_usage")
// or empty when the body itself is malformed (its message names the line, column and byte).
// Never throws.
#pragma once

#include "api/error.h"
#include "api/request-common.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

struct completion_request : api_generation_options {
    std::vector<api_prompt> prompts = {};   // at least one
    int32_t max_tokens = 16;           // OpenAI's default for completions
    std::optional<int32_t> logprobs = {};   // 0..20 top alternatives per token; nullopt: none
    bool echo = false;                 // prepend the prompt to the text
};

std::optional<api_error> completion_request_parse(std::string_view body, completion_request & out);

// nullopt when every prompt token and logit_bias token is below n_vocab, else a 400 naming
// "prompt" or "logit_bias".
std::optional<api_error> completion_request_check_vocab(const completion_request & req, int32_t n_vocab);
