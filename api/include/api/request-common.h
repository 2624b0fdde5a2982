// api/request-common.h — the fields that completions and chat completions share: model, n,
// streaming, stop strings, user, the sampling parameters (OpenAI's plus the extensions
// top_k, min_p, repeat_penalty and ignore_eos), and a constraint on the output (structured
// output: response_format, and llama-server's grammar and json_schema).
// Also api_prompt: one prompt of a completions `prompt` or an embeddings `input`.
//
// Usage (after completion_request_parse / chat_request_parse filled `req`):
//   const api_sampling_params & s = req.sampling;
//   sampler.temperature = s.temperature; sampler.top_k = s.top_k; …
//   if (auto err = api_sampling_check_vocab(s, n_vocab)) return respond(*err);   // 400 logit_bias
//   for (int i = 0; i < req.n; ++i) start_choice(i, req.stop);
//   if (req.constraint.kind == api_constraint_kind::json_schema) compile_schema(req.constraint.text);
//
// Defaults are OpenAI's: a request that sets nothing samples at temperature 1 with top_p 1 and
// no penalties; the extensions default to "off" (top_k 0, min_p 0, repeat_penalty 1).
#pragma once

#include "api/error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

// One prompt (completions' `prompt`, embeddings' `input`): text to tokenize, or token ids
// given by the client.
struct api_prompt {
    bool is_tokens = false;
    std::string text = {};             // when !is_tokens (may be empty)
    std::vector<int32_t> tokens = {};  // when is_tokens (never empty, ids >= 0)
};

struct api_logit_bias {
    int32_t token = 0;  // >= 0; below the vocabulary size (api_sampling_check_vocab)
    float bias = 0.0f;  // -100..100, added to the token's logit
};

struct api_sampling_params {
    double temperature = 1.0;         // 0..2; 0 = greedy
    double top_p = 1.0;               // 0 < top_p <= 1
    int32_t top_k = 0;                // >= 0; 0 = off (extension)
    double min_p = 0.0;               // 0..1; 0 = off (extension)
    double repeat_penalty = 1.0;      // > 0; 1 = off (extension)
    double presence_penalty = 0.0;    // -2..2
    double frequency_penalty = 0.0;   // -2..2
    std::optional<int64_t> seed = {};      // nullopt: the server picks one
    std::vector<api_logit_bias> logit_bias = {};  // in the order of the request's keys
};

// Structured output: the output must follow a grammar. One request gives at most one of
//   response_format {"type":"json_object"}            any JSON object (schema {"type":"object"};
//                                                       llama-server's "schema" member narrows it)
//   response_format {"type":"json_schema","json_schema":{"name","schema","strict","description"}}
//   json_schema (a schema, llama-server's extension)
//   grammar (GBNF text, llama-server's extension; "" is no constraint)
// response_format {"type":"text"} constrains nothing.
enum class api_constraint_kind { none, gbnf, json_schema };

struct api_constraint {
    api_constraint_kind kind = api_constraint_kind::none;
    std::string text = {};          // the GBNF text, or the schema as JSON text with its keys in
                                    // the request's order (properties keep their declared order)
    std::string source_param = {};  // where it came from, for errors: "response_format",
                                    // "json_schema" or "grammar"
};

struct api_generation_options {
    std::string model = {};                // "" when the request names none (the server's only model)
    int32_t n = 1;                    // 1..16 choices per prompt
    bool stream = false;
    bool include_usage = false;       // stream_options.include_usage (only with stream)
    std::vector<std::string> stop = {};    // 0..4 non-empty stop strings
    std::string user = {};                 // opaque end-user id, for logs
    bool ignore_eos = false;          // extension: keep generating past end-of-generation tokens
    api_sampling_params sampling = {};
    api_constraint constraint = {};
};

constexpr int32_t api_max_n = 16;
constexpr size_t api_max_stop = 4;
constexpr int32_t api_max_logprobs = 20;

// nullopt when every logit_bias token is below n_vocab, else a 400 naming "logit_bias".
std::optional<api_error> api_sampling_check_vocab(const api_sampling_params & s, int32_t n_vocab);
