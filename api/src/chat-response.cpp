// api/chat-response.cpp — JSON of /v1/chat/completions responses and chunks.
#include "api/chat-response.h"

#include "json-write.h"
#include "response-json.h"

namespace {

ojson logprobs_json(const std::optional<std::vector<chat_token_logprob>> & lps) {
    if (!lps) {
        return nullptr;
    }
    ojson content = ojson::array();
    for (const chat_token_logprob & t : *lps) {
        ojson top = ojson::array();
        for (const chat_top_logprob & alt : t.top) {
            top.push_back({{"token", alt.token},
                           {"logprob", json_logprob(alt.logprob)},
                           {"bytes", api_bytes_json(alt.token)}});
        }
        content.push_back({{"token", t.token},
                           {"logprob", json_logprob(t.logprob)},
                           {"bytes", api_bytes_json(t.token)},
                           {"top_logprobs", std::move(top)}});
    }
    return {{"content", std::move(content)}};
}

// {"role":"assistant","content","reasoning_content","tool_calls"}: content null when empty and
// there are calls, reasoning_content and tool_calls only when there are any.
ojson message_json(const chat_choice & c) {
    ojson m = {{"role", "assistant"}};
    m["content"] = c.content.empty() && !c.tool_calls.empty() ? ojson(nullptr) : ojson(c.content);
    if (!c.reasoning_content.empty()) {
        m["reasoning_content"] = c.reasoning_content;
    }
    if (!c.tool_calls.empty()) {
        ojson calls = ojson::array();
        for (const chat_tool_call & call : c.tool_calls) {
            calls.push_back({{"id", call.id},
                             {"type", "function"},
                             {"function", {{"name", call.name}, {"arguments", call.arguments}}}});
        }
        m["tool_calls"] = std::move(calls);
    }
    return m;
}

// {"tool_calls":[{"index","id","type","function":{"name","arguments"}}]} for a call's first piece
// (it has the id), {"tool_calls":[{"index","function":{"arguments"}}]} for the later ones.
ojson tool_call_delta_json(const chat_tool_call_delta & d) {
    ojson call = {{"index", d.index}};
    if (!d.id.empty()) {
        call["id"] = d.id;
        call["type"] = "function";
        call["function"] = {{"name", d.name}, {"arguments", d.arguments}};
    } else {
        call["function"] = {{"arguments", d.arguments}};
    }
    return {{"tool_calls", ojson::array({std::move(call)})}};
}

ojson delta_json(const chat_chunk & c) {
    switch (c.kind) {
        case chat_delta_kind::role: return {{"role", "assistant"}, {"content", ""}};
        case chat_delta_kind::content: return {{"content", c.content}};
        case chat_delta_kind::reasoning: return {{"reasoning_content", c.content}};
        case chat_delta_kind::tool_call: return tool_call_delta_json(c.call);
        case chat_delta_kind::finish: return ojson::object();
    }
    return ojson::object();
}

bool delta_has_logprobs(chat_delta_kind kind) {
    return kind == chat_delta_kind::content || kind == chat_delta_kind::reasoning ||
           kind == chat_delta_kind::tool_call;
}

}  // namespace

std::string chat_response_to_json(const chat_response & res) {
    ojson j = api_meta_json(res.meta, "chat.completion");
    ojson choices = ojson::array();
    for (const chat_choice & c : res.choices) {
        choices.push_back({{"index", c.index},
                           {"message", message_json(c)},
                           {"logprobs", logprobs_json(c.logprobs)},
                           {"finish_reason", api_finish_reason_json(c.finish_reason)}});
    }
    j["choices"] = std::move(choices);
    j["usage"] = api_usage_json(res.usage);
    return json_write(j);
}

std::string chat_chunk_to_json(const api_response_meta & meta, const chat_chunk & chunk) {
    ojson j = api_meta_json(meta, "chat.completion.chunk");
    const bool finish = chunk.kind == chat_delta_kind::finish;
    ojson choice = {
        {"index", chunk.index},
        {"delta", delta_json(chunk)},
        {"logprobs", delta_has_logprobs(chunk.kind) ? logprobs_json(chunk.logprobs) : ojson(nullptr)},
        {"finish_reason", finish ? api_finish_reason_json(chunk.finish_reason) : ojson(nullptr)}};
    j["choices"] = ojson::array({std::move(choice)});
    j["usage"] = nullptr;
    return json_write(j);
}

std::string chat_usage_chunk_to_json(const api_response_meta & meta, const api_usage & usage) {
    ojson j = api_meta_json(meta, "chat.completion.chunk");
    j["choices"] = ojson::array();
    j["usage"] = api_usage_json(usage);
    return json_write(j);
}
