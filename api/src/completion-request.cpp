// api/completion-request.cpp — parsing and validating POST /v1/completions bodies.
#include "api/completion-request.h"

#include "generation-read.h"

#include <limits>

namespace {

constexpr int64_t token_id_max = std::numeric_limits<int32_t>::max();

const char * prompt_forms =
    "a string, an array of strings, an array of token ids or an array of arrays of token ids";

// A non-empty array of token ids (integers >= 0); false when `v` is anything else.
bool read_token_array(const nlohmann::json & v, std::vector<int32_t> & out) {
    if (!v.is_array() || v.empty()) {
        return false;
    }
    out.clear();
    out.reserve(v.size());
    for (const auto & t : v) {
        int64_t id = 0;
        if (!json_integer_in(t, 0, token_id_max, id)) {
            return false;
        }
        out.push_back(static_cast<int32_t>(id));
    }
    return true;
}

// The prompt forms that are arrays: of strings, of token ids, or of arrays of token ids.
bool read_prompt_array(const nlohmann::json & v, std::vector<api_prompt> & out) {
    const nlohmann::json & first = v.front();
    if (first.is_number()) {
        api_prompt p;
        p.is_tokens = true;
        if (!read_token_array(v, p.tokens)) {
            return false;
        }
        out.push_back(std::move(p));
        return true;
    }
    for (const auto & item : v) {
        api_prompt p;
        if (first.is_string() && item.is_string()) {
            p.text = item.get<std::string>();
        } else if (first.is_array() && item.is_array()) {
            p.is_tokens = true;
            if (!read_token_array(item, p.tokens)) {
                return false;
            }
        } else {
            return false;
        }
        out.push_back(std::move(p));
    }
    return true;
}

void read_prompt(json_reader & r, std::vector<api_prompt> & out) {
    if (r.error()) {
        return;
    }
    const nlohmann::json * v = r.find("prompt");
    if (!v) {
        r.fail(api_error_invalid_request("'prompt' is required.", "prompt"));
        return;
    }
    std::vector<api_prompt> prompts;
    bool ok = false;
    if (v->is_string()) {
        api_prompt p;
        p.text = v->get<std::string>();
        prompts.push_back(std::move(p));
        ok = true;
    } else if (v->is_array() && !v->empty()) {
        ok = read_prompt_array(*v, prompts);
    }
    if (!ok) {
        r.fail("prompt", std::string(prompt_forms) + " (token ids are integers >= 0; arrays must not be empty)");
        return;
    }
    out = std::move(prompts);
}

}  // namespace

std::optional<api_error> completion_request_parse(std::string_view body, completion_request & out) {
    try {
        nlohmann::json j;
        if (auto err = json_parse_object(body, j)) {
            return err;
        }
        completion_request req;
        json_reader r(j);
        api_read_generation_options(r, body, req);
        read_prompt(r, req.prompts);
        r.integer("max_tokens", 0, token_id_max, req.max_tokens);
        r.integer("logprobs", 0, api_max_logprobs, req.logprobs);
        r.boolean("echo", req.echo);
        if (r.error()) {
            return r.error();
        }
        out = std::move(req);
        return std::nullopt;
    } catch (const nlohmann::json::exception & e) {
        return api_error_invalid_request(std::string("The request could not be read: ") + e.what());
    }
}

std::optional<api_error> completion_request_check_vocab(const completion_request & req, int32_t n_vocab) {
    for (const api_prompt & p : req.prompts) {
        for (int32_t t : p.tokens) {
            if (t >= n_vocab) {
                return api_error_invalid_request("'prompt' holds token " + std::to_string(t) +
                                                     ", but the vocabulary has " + std::to_string(n_vocab) +
                                                     " tokens.",
                                                 "prompt");
            }
        }
    }
    return api_sampling_check_vocab(req.sampling, n_vocab);
}
