// api/error.h — OpenAI-shaped error objects: an HTTP status plus the body
// {"error":{"message":…,"type":…,"param":…,"code":…}} (null where a field is empty).
//
// Usage:
//   api_error e = api_error_invalid_request("'temperature' must be between 0 and 2", "temperature");
//   send(e.status, api_error_to_json(e));                 // 400, {"error":{…,"param":"temperature",…}}
//   api_error busy = api_error_unavailable("the request queue is full", 1, "queue_full");
//   if (busy.retry_after_seconds > 0) add_header("Retry-After", std::to_string(busy.retry_after_seconds));
//
// Classes (status, type, code):
//   api_error_invalid_request      400 invalid_request_error  (code as given, often empty)
//   api_error_context_exceeded     400 invalid_request_error  context_length_exceeded
//   api_error_authentication       401 authentication_error   invalid_api_key
//   api_error_not_found            404 not_found_error        (code as given)
//   api_error_model_not_found      404 not_found_error        model_not_found (param "model")
//   api_error_method_not_allowed   405 invalid_request_error  method_not_allowed
//   api_error_payload_too_large    413 invalid_request_error  request_too_large
//   api_error_internal             500 server_error           (only for real internal faults)
//   api_error_unavailable          503 unavailable_error      (code as given; retry hint in seconds)
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

struct api_error {
    int status = 500;             // HTTP status
    std::string message = {};          // for people; names the field when a field is at fault
    std::string type = {};             // "invalid_request_error", "not_found_error", …
    std::string param = {};            // the field at fault ("messages[1].content"), "" when none
    std::string code = {};             // machine-readable detail ("model_not_found"), "" when none
    int retry_after_seconds = 0;  // > 0: the server adds Retry-After (503 only)
};

api_error api_error_invalid_request(std::string message, std::string param = "", std::string code = "");
// The prompt plus the tokens asked for do not fit in the context window.
api_error api_error_context_exceeded(int64_t n_prompt_tokens, int64_t n_max_tokens, int64_t n_ctx,
                                     std::string param);
api_error api_error_authentication(std::string message = "Invalid or missing API key.");
api_error api_error_not_found(std::string message, std::string code = "");
api_error api_error_model_not_found(std::string_view model);
api_error api_error_method_not_allowed(std::string_view method, std::string_view path);
api_error api_error_payload_too_large(uint64_t max_body_bytes);
api_error api_error_internal(std::string message);
api_error api_error_unavailable(std::string message, int retry_after_seconds, std::string code = "");

// The body {"error":{"message","type","param","code"}} as compact JSON text; empty strings
// become null. Never throws (invalid UTF-8 in a message is replaced by U+FFFD).
std::string api_error_to_json(const api_error & e);
