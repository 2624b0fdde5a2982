// api/request-common.h — the fields that completions and chat completions share: model, n,
// streaming, stop strings, user, and the sampling parameters (OpenAI's plus the extensions
// top_k, min_p, repeat_penalty and ignore_eos).
//
// Usage (after completion_request_parse / chat_request_parse filled `req`):
//   const api_sampling_params & s = req.sampling;
//   sampler.temperature = s.temperature; sampler.top_k = s.top_k; …
//   if (auto err = api_sampling_check_vocab(s, n_vocab)) return respond(*err);   // 400 logit_bias
//   for (int i = 0; i < req.n; ++i) start_choice(i, req.stop);
//
// Defaults are OpenAI's: a request that sets nothing samples at temperature 1 with top_p 1 and
// no penalties; the extensions default to "off" (top_k 0, min_p 0, repeat_penalty 1).
#pragma once

#include "api/error.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

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

struct api_generation_options {
    std::string model = {};                // "" when the request names none (the server's only model)
    int32_t n = 1;                    // 1..16 choices per prompt
    bool stream = false;
    bool include_usage = false;       // stream_options.include_usage (only with stream)
    std::vector<std::string> stop = {};    // 0..4 non-empty stop strings
    std::string user = {};                 // opaque end-user id, for logs
    bool ignore_eos = false;          // extension: keep generating past end-of-generation tokens
    api_sampling_params sampling = {};
};

constexpr int32_t api_max_n = 16;
constexpr size_t api_max_stop = 4;
constexpr int32_t api_max_logprobs = 20;

// nullopt when every logit_bias token is below n_vocab, else a 400 naming "logit_bias".
std::optional<api_error> api_sampling_check_vocab(const api_sampling_params & s, int32_t n_vocab);
