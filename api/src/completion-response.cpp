// api/completion-response.cpp — JSON of /v1/completions responses and chunks.
#include "api/completion-response.h"

#include "json-write.h"
#include "response-json.h"

namespace {

ojson logprobs_json(const std::vector<completion_token_logprob> & lps) {
    ojson tokens = ojson::array();
    ojson token_logprobs = ojson::array();
    ojson top_logprobs = ojson::array();
    ojson text_offset = ojson::array();
    for (const completion_token_logprob & t : lps) {
        tokens.push_back(t.token);
        text_offset.push_back(t.text_offset);
        if (!t.logprob) {
            token_logprobs.push_back(nullptr);
            top_logprobs.push_back(nullptr);
            continue;
        }
        token_logprobs.push_back(json_logprob(*t.logprob));
        ojson top = ojson::object();
        for (const auto & [tok, lp] : t.top) {
            top[tok] = json_logprob(lp);
        }
        top_logprobs.push_back(std::move(top));
    }
    return {{"tokens", std::move(tokens)},
            {"token_logprobs", std::move(token_logprobs)},
            {"top_logprobs", std::move(top_logprobs)},
            {"text_offset", std::move(text_offset)}};
}

ojson choice_json(const completion_choice & c) {
    return {{"index", c.index},
            {"text", c.text},
            {"logprobs", c.logprobs ? logprobs_json(*c.logprobs) : ojson(nullptr)},
            {"finish_reason", api_finish_reason_json(c.finish_reason)}};
}

}  // namespace

std::string completion_response_to_json(const completion_response & res) {
    ojson j = api_meta_json(res.meta, "text_completion");
    ojson choices = ojson::array();
    for (const completion_choice & c : res.choices) {
        choices.push_back(choice_json(c));
    }
    j["choices"] = std::move(choices);
    j["usage"] = api_usage_json(res.usage);
    return json_write(j);
}

std::string completion_chunk_to_json(const api_response_meta & meta, const completion_choice & choice) {
    ojson j = api_meta_json(meta, "text_completion");
    j["choices"] = ojson::array({choice_json(choice)});
    j["usage"] = nullptr;
    return json_write(j);
}

std::string completion_usage_chunk_to_json(const api_response_meta & meta, const api_usage & usage) {
    ojson j = api_meta_json(meta, "text_completion");
    j["choices"] = ojson::array();
    j["usage"] = api_usage_json(usage);
    return json_write(j);
}
