// api/completion-request.cpp — parsing and validating POST /v1/completions bodies.
#include "api/completion-request.h"

#include "generation-read.h"
#include "prompt-read.h"

#include <limits>

namespace {

constexpr int64_t token_id_max = std::numeric_limits<int32_t>::max();

}  // namespace

std::optional<api_error> completion_request_parse(std::string_view body, completion_request & out) {
    return json_parse_request(body, out, [&](json_reader & r, completion_request & req) {
        api_read_generation_options(r, body, req);
        api_read_prompts(r, "prompt", req.prompts);
        r.integer("max_tokens", 0, token_id_max, req.max_tokens);
        r.integer("logprobs", 0, api_max_logprobs, req.logprobs);
        r.boolean("echo", req.echo);
    });
}

std::optional<api_error> completion_request_check_vocab(const completion_request & req, int32_t n_vocab) {
    if (auto err = api_prompts_check_vocab(req.prompts, n_vocab, "prompt")) {
        return err;
    }
    return api_sampling_check_vocab(req.sampling, n_vocab);
}
