// api/chat-request.h — POST /v1/chat/completions: the request parsed from its body text and
// validated field by field.
//
// Usage:
//   chat_request req;
//   if (auto err = chat_request_parse(body, req)) {
//       return respond(err->status, api_error_to_json(*err));   // 400, param names the field
//   }
//   for (const api_chat_message & m : req.messages)                  // role + text, ready for the
//       template_messages.push_back({api_chat_role_name(m.role), m.content});   // chat template
//   int32_t budget = req.max_tokens.value_or(n_ctx - n_prompt);  // nullopt: until the context ends
//
// Fields (absent or null: the default; unknown fields are ignored):
//   model (string), messages (required, non-empty array of {role, content, name}: role system,
//   user, assistant or developer (= system); content a string or an array of
//   {"type":"text","text":…} parts, joined with "\n"; an assistant's content may be null; name
//   is ignored), max_tokens / max_completion_tokens (integer >= 1; when both are given
//   max_completion_tokens wins), logprobs (bool), top_logprobs (0..20, needs logprobs true),
//   chat_template_kwargs (an object: extra variables for the chat template, e.g. enable_thinking),
//   and the shared fields of api_generation_options (request-common.h), structured output
//   (response_format, json_schema, grammar) among them.
//
// Return: nullopt on success (`out` filled), otherwise the error to send: always status 400,
// type invalid_request_error, param the field at fault ("messages[2].content[0].type",
// "top_logprobs") or empty when the body itself is malformed. Never throws.
#pragma once

#include "api/error.h"
#include "api/request-common.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

enum class api_chat_role { system, user, assistant };

struct api_chat_message {
    api_chat_role role = api_chat_role::user;
    std::string content = {};  // the text parts joined with "\n"; "" for a null assistant content
};

struct chat_request : api_generation_options {
    std::vector<api_chat_message> messages = {};    // at least one
    std::optional<int32_t> max_tokens = {};     // nullopt: until the context ends
    bool logprobs = false;
    int32_t top_logprobs = 0;              // 0..20, only with logprobs
    std::string chat_template_kwargs = "{}";  // extra chat template variables: a JSON object's text
};

// "system", "user" or "assistant".
const char * api_chat_role_name(api_chat_role role);

std::optional<api_error> chat_request_parse(std::string_view body, chat_request & out);
