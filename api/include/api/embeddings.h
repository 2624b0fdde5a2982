// api/embeddings.h — POST /v1/embeddings (OpenAI's shape): the request parsed from its body
// text and validated, and the response body.
//
// Usage:
//   embeddings_request req;
//   if (auto err = embeddings_request_parse(body, req)) return respond(err->status, api_error_to_json(*err));
//   if (auto err = embeddings_request_check_vocab(req, n_vocab)) return respond(…);  // token ids
//   embeddings_response res{.model = model_name, .base64 = req.base64};
//   for (const api_prompt & p : req.inputs) {                  // one vector per input, in order
//       res.data.push_back(embed(p, req.dimensions));          // cut to `dimensions` by the caller
//       res.prompt_tokens += n_tokens(p);
//   }
//   respond(200, embeddings_response_to_json(res));
//
// Request fields (absent or null: the default; unknown fields are ignored):
//   model (string), input (required: string | array of strings | array of token ids | array of
//   arrays of token ids, the forms of a completions prompt; at most embeddings_max_inputs
//   inputs; "" is read as an input with no text), encoding_format ("float", the default, or
//   "base64"), dimensions (integer >= 1), user (string).
// Return: the parse and check functions give nullopt on success, otherwise a 400
// invalid_request_error whose param names the field ("input", "encoding_format"), or is empty
// when the body itself is malformed. Never throw.
//
// Response: {"object":"list","data":[{"object":"embedding","index":i,"embedding":E}],"model":…,
// "usage":{"prompt_tokens":n,"total_tokens":n}} where E is an array of numbers, each the
// shortest text that reads back as the same float (read as a float, or as a double then
// rounded to a float), or with base64 a string: the vector's float32 values as little-endian
// bytes, in standard base64 with padding (what OpenAI's clients decode into a Float32Array).
// A value that is not finite is written as 0 in both forms.
#pragma once

#include "api/error.h"
#include "api/request-common.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

// OpenAI's limit on the inputs of one request.
constexpr size_t embeddings_max_inputs = 2048;

struct embeddings_request {
    std::string model = {};                    // "" when the request names none
    std::vector<api_prompt> inputs = {};       // 1..embeddings_max_inputs
    bool base64 = false;                       // encoding_format "base64"
    std::optional<int32_t> dimensions = {};    // >= 1; nullopt: the model's own size
    std::string user = {};                     // opaque end-user id, for logs
};

struct embeddings_response {
    std::string model = {};
    std::vector<std::vector<float>> data = {};  // one vector per input, in the inputs' order
    bool base64 = false;                        // write each vector as a base64 string
    int64_t prompt_tokens = 0;                  // tokens over all inputs
};

std::optional<api_error> embeddings_request_parse(std::string_view body, embeddings_request & out);

// nullopt when every token id of every input is below n_vocab, else a 400 naming "input".
std::optional<api_error> embeddings_request_check_vocab(const embeddings_request & req, int32_t n_vocab);

std::string embeddings_response_to_json(const embeddings_response & res);
