// api/chat-request.h — POST /v1/chat/completions: the request parsed from its body text and
// validated field by field.
//
// Usage:
//   chat_request req;
//   if (auto err = chat_request_parse(body, req)) {
//       return respond(err->status, api_error_to_json(*err));   // 400, param names the field
//   }
//   for (const api_chat_message & m : req.messages)               // role, text, calls, … ready
//       template_messages.push_back(to_template_message(m));      // for the chat template
//   int32_t budget = req.max_tokens.value_or(n_ctx - n_prompt);  // nullopt: until the context ends
//
// Fields (absent or null: the default; unknown fields are ignored):
//   model (string), messages (required, non-empty array of message objects, below),
//   max_tokens / max_completion_tokens (integer >= 1; when both are given max_completion_tokens
//   wins), logprobs (bool), top_logprobs (0..20, needs logprobs true), tools, tool_choice,
//   parallel_tool_calls (bool, default true), reasoning_format ("none", "auto" or "deepseek":
//   whether thinking is split into reasoning_content; absent: the server's --reasoning-format),
//   reasoning_effort ("none", "minimal", "low", "medium", "high": passed to the template),
//   chat_template_kwargs (an object: extra variables for the chat template, e.g. enable_thinking),
//   and the shared fields of api_generation_options (request-common.h), structured output
//   (response_format, json_schema, grammar) among them.
//
// A message: role system, developer (= system), user, assistant or tool; content a string or an
//   array of {"type":"text","text":…} parts, joined with "\n" (required except on assistant
//   messages, where null or absent is ""); name (string); an assistant's tool_calls (array of
//   {"id", "type":"function", "function":{"name", "arguments"}}, arguments a JSON text or an
//   object) and reasoning_content (string); a tool message's tool_call_id (string).
//
// tools: an array of {"type":"function","function":{"name","description","parameters","strict"}}
//   (name: 1..64 of A-Z a-z 0-9 _ - ., unique; parameters a JSON Schema object); [] is none.
// tool_choice: "none", "auto" (the default with tools), "required", or
//   {"type":"function","function":{"name"}} naming one of the tools; "required" and a named
//   function need tools.
//
// Return: nullopt on success (`out` filled), otherwise the error to send: always status 400,
// type invalid_request_error, param the field at fault ("messages[2].content[0].type",
// "tools[1].function.name", "tool_choice", "top_logprobs") or empty when the body itself is malformed. Never throws.
#pragma once

#include "api/error.h"
#include "api/request-common.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

enum class api_chat_role { system, user, assistant, tool };

// A call in an assistant message of the history.
struct api_tool_call {
    std::string id = {};           // "" when the client gave none
    std::string name = {};
    // JSON text of the arguments: the object (a client's JSON text parsed); a client's text that
    // is not a JSON object stays a JSON string holding that text.
    std::string arguments = "{}";
};

struct api_chat_message {
    api_chat_role role = api_chat_role::user;
    std::string content = {};  // the text parts joined with "\n"; "" for a null assistant content
    std::string name = {};               // "" when absent
    std::string tool_call_id = {};       // role tool: the call it answers ("" when absent)
    std::string reasoning_content = {};  // assistant: its thinking ("" when absent)
    std::vector<api_tool_call> tool_calls = {};  // assistant
};

enum class api_tool_choice { none, auto_, required, function };

struct chat_request : api_generation_options {
    std::vector<api_chat_message> messages = {};    // at least one
    std::optional<int32_t> max_tokens = {};     // nullopt: until the context ends
    bool logprobs = false;
    int32_t top_logprobs = 0;              // 0..20, only with logprobs
    std::string chat_template_kwargs = "{}";  // extra chat template variables: a JSON object's text
    // The tools as a JSON array's text, each {"type":"function","function":{…}} as the client sent
    // it (keys in its order); "" when the request has none.
    std::string tools = {};
    std::vector<std::string> tool_names = {};  // in the order of tools
    api_tool_choice tool_choice = api_tool_choice::none;  // auto_ by default when there are tools
    std::string tool_choice_function = {};     // tool_choice function: its name (one of tool_names)
    bool parallel_tool_calls = true;
    std::optional<bool> reasoning_split = {};  // reasoning_format: none → false, auto/deepseek → true
    std::string reasoning_effort = {};         // "" when absent
};

// "system", "user", "assistant" or "tool".
const char * api_chat_role_name(api_chat_role role);

std::optional<api_error> chat_request_parse(std::string_view body, chat_request & out);
