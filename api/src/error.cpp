// api/error.cpp — constructors of the OpenAI error classes and their JSON.
#include "api/error.h"

#include "json-write.h"

#include <nlohmann/json.hpp>

#include <utility>

namespace {

api_error error_make(int status, std::string message, std::string type, std::string param,
                     std::string code) {
    api_error e;
    e.status = status;
    e.message = std::move(message);
    e.type = std::move(type);
    e.param = std::move(param);
    e.code = std::move(code);
    return e;
}

ojson string_or_null(const std::string & s) {
    return s.empty() ? ojson(nullptr) : ojson(s);
}

}  // namespace

api_error api_error_invalid_request(std::string message, std::string param, std::string code) {
    return error_make(400, std::move(message), "invalid_request_error", std::move(param), std::move(code));
}

api_error api_error_context_exceeded(int64_t n_prompt_tokens, int64_t n_max_tokens, int64_t n_ctx,
                                     std::string param) {
    std::string msg = "This model's maximum context length is " + std::to_string(n_ctx) +
                      " tokens, however you requested " + std::to_string(n_prompt_tokens + n_max_tokens) +
                      " tokens (" + std::to_string(n_prompt_tokens) + " in the prompt, " +
                      std::to_string(n_max_tokens) + " for the completion). Please reduce the prompt or the "
                      "number of tokens to generate.";
    return error_make(400, std::move(msg), "invalid_request_error", std::move(param), "context_length_exceeded");
}

api_error api_error_authentication(std::string message) {
    return error_make(401, std::move(message), "authentication_error", "", "invalid_api_key");
}

api_error api_error_not_found(std::string message, std::string code) {
    return error_make(404, std::move(message), "not_found_error", "", std::move(code));
}

api_error api_error_model_not_found(std::string_view model) {
    std::string msg = api_cat({"The model '", model, "' does not exist."});
    return error_make(404, std::move(msg), "not_found_error", "model", "model_not_found");
}

api_error api_error_method_not_allowed(std::string_view method, std::string_view path) {
    std::string msg = api_cat({"Method ", method, " is not allowed for ", path, "."});
    return error_make(405, std::move(msg), "invalid_request_error", "", "method_not_allowed");
}

api_error api_error_payload_too_large(uint64_t max_body_bytes) {
    std::string msg = "The request body is larger than the limit of " + std::to_string(max_body_bytes) + " bytes.";
    return error_make(413, std::move(msg), "invalid_request_error", "", "request_too_large");
}

api_error api_error_internal(std::string message) {
    return error_make(500, std::move(message), "server_error", "", "");
}

api_error api_error_unavailable(std::string message, int retry_after_seconds, std::string code) {
    api_error e = error_make(503, std::move(message), "unavailable_error", "", std::move(code));
    e.retry_after_seconds = retry_after_seconds > 0 ? retry_after_seconds : 1;
    return e;
}

std::string api_error_to_json(const api_error & e) {
    ojson body = {{"error",
                            {{"message", e.message},
                             {"type", string_or_null(e.type)},
                             {"param", string_or_null(e.param)},
                             {"code", string_or_null(e.code)}}}};
    return json_write(body);
}
