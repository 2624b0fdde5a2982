// api/response-common.cpp — usage, response heads, finish reasons and SSE framing.
#include "api/response-common.h"

#include "response-json.h"

const char * api_finish_reason_name(api_finish_reason r) {
    switch (r) {
        case api_finish_reason::stop: return "stop";
        case api_finish_reason::length: return "length";
        case api_finish_reason::tool_calls: return "tool_calls";
        case api_finish_reason::none: return "";
    }
    return "";
}

ojson api_usage_json(const api_usage & u) {
    return {{"prompt_tokens", u.prompt_tokens},
            {"completion_tokens", u.completion_tokens},
            {"total_tokens", u.prompt_tokens + u.completion_tokens},
            {"prompt_tokens_details", {{"cached_tokens", u.cached_tokens}}}};
}

ojson api_meta_json(const api_response_meta & m, const char * object) {
    return {{"id", m.id}, {"object", object}, {"created", m.created}, {"model", m.model}};
}

ojson api_finish_reason_json(api_finish_reason r) {
    if (r == api_finish_reason::none) {
        return nullptr;
    }
    return api_finish_reason_name(r);
}

ojson api_bytes_json(const std::string & s) {
    ojson bytes = ojson::array();
    for (unsigned char c : s) {
        bytes.push_back(static_cast<int>(c));
    }
    return bytes;
}

std::string sse_data(std::string_view json) {
    std::string out;
    out.reserve(json.size() + 8);
    out += "data: ";
    out += json;
    out += "\n\n";
    return out;
}

std::string sse_done() {
    return "data: [DONE]\n\n";
}
