// api/prompt-read.cpp — the prompt forms shared by completions and embeddings.
#include "prompt-read.h"

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
    out.reserve(v.size());
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

}  // namespace

void api_read_prompts(json_reader & r, const char * field, std::vector<api_prompt> & out) {
    if (r.error()) {
        return;
    }
    const nlohmann::json * v = r.find(field);
    if (!v) {
        r.fail(api_error_invalid_request(api_cat({"'", r.param(field), "' is required."}), r.param(field)));
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
        r.fail(field, std::string(prompt_forms) + " (token ids are integers >= 0; arrays must not be empty)");
        return;
    }
    out = std::move(prompts);
}

std::optional<api_error> api_prompts_check_vocab(const std::vector<api_prompt> & prompts, int32_t n_vocab,
                                                 const std::string & param) {
    for (const api_prompt & p : prompts) {
        for (int32_t t : p.tokens) {
            if (t >= n_vocab) {
                return api_error_invalid_request(api_cat({"'", param, "' holds token ", std::to_string(t),
                                                          ", but the vocabulary has ", std::to_string(n_vocab),
                                                          " tokens."}),
                                                 param);
            }
        }
    }
    return std::nullopt;
}
