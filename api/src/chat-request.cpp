// api/chat-request.cpp — parsing and validating POST /v1/chat/completions bodies.
#include "api/chat-request.h"

#include "chat-tools-read.h"
#include "generation-read.h"

#include <limits>

namespace {

bool role_from_string(const std::string & s, api_chat_role & out) {
    if (s == "system" || s == "developer") {
        out = api_chat_role::system;
    } else if (s == "user") {
        out = api_chat_role::user;
    } else if (s == "assistant") {
        out = api_chat_role::assistant;
    } else if (s == "tool") {
        out = api_chat_role::tool;
    } else {
        return false;
    }
    return true;
}

// content as an array of parts: only {"type":"text","text":string} is understood.
void read_content_parts(json_reader & r, const nlohmann::json & parts, std::string & out) {
    std::string text;
    for (size_t j = 0; j < parts.size(); ++j) {
        const nlohmann::json & part = parts[j];
        std::string at = "content[" + std::to_string(j) + "]";
        if (!part.is_object()) {
            r.fail(at, "an object {\"type\":\"text\",\"text\":…}");
            return;
        }
        auto type = part.find("type");
        if (type == part.end() || !type->is_string() || type->get_ref<const std::string &>() != "text") {
            r.fail(api_error_invalid_request(api_cat({"'", r.param(at + ".type"),
                                                      "' must be \"text\": this model only reads text content parts."}),
                                             r.param(at + ".type")));
            return;
        }
        auto t = part.find("text");
        if (t == part.end() || !t->is_string()) {
            r.fail(at + ".text", "a string");
            return;
        }
        if (j > 0) {
            text += '\n';
        }
        text += t->get_ref<const std::string &>();
    }
    out = std::move(text);
}

// content: required except on assistant messages (null or absent is "" there).
void read_content(json_reader & r, api_chat_message & out) {
    const nlohmann::json * content = r.error() ? nullptr : r.find("content");
    if (!r.error() && !content && out.role != api_chat_role::assistant) {
        r.fail(api_error_invalid_request(api_cat({"'", r.param("content"), "' is required."}), r.param("content")));
    } else if (content && content->is_string()) {
        out.content = content->get<std::string>();
    } else if (content && content->is_array()) {
        read_content_parts(r, *content, out.content);
    } else if (content) {
        r.fail("content", "a string or an array of text parts");
    }
}

// name, tool_call_id, reasoning_content and an assistant's tool_calls. `pointer` is the message's
// place in the body ("/messages/2").
void read_message_extras(json_reader & r, json_ordered_body & body, const std::string & pointer,
                         api_chat_message & out) {
    r.string("name", out.name);
    r.string("tool_call_id", out.tool_call_id);
    r.string("reasoning_content", out.reasoning_content);
    const nlohmann::json * calls = r.error() ? nullptr : r.find("tool_calls");
    if (calls && out.role != api_chat_role::assistant) {
        r.fail(api_error_invalid_request(
            api_cat({"'", r.param("tool_calls"), "' is only allowed on assistant messages, this one is a ",
                     api_chat_role_name(out.role), " message."}),
            r.param("tool_calls")));
    } else if (calls) {
        chat_read_tool_calls(r, *calls, body, pointer, out.tool_calls);
    }
}

void read_message(json_reader & outer, json_ordered_body & body, const nlohmann::json & m, size_t i,
                  api_chat_message & out) {
    const std::string index = std::to_string(i);
    const std::string at = api_cat({"messages[", index, "]"});
    if (!m.is_object()) {
        outer.fail(at, "an object with 'role' and 'content'");
        return;
    }
    json_reader r(m, outer.param(at + "."));
    std::string role;
    r.string("role", role);
    if (!r.error() && !role_from_string(role, out.role)) {
        r.fail("role", "one of \"system\", \"developer\", \"user\", \"assistant\" or \"tool\"");
    }
    read_content(r, out);
    read_message_extras(r, body, api_cat({"/messages/", index}), out);
    if (r.error()) {
        outer.fail(*r.error());
    }
}

void read_messages(json_reader & r, json_ordered_body & body, std::vector<api_chat_message> & out) {
    if (r.error()) {
        return;
    }
    const nlohmann::json * v = r.find("messages");
    if (!v) {
        r.fail(api_error_invalid_request("'messages' is required.", "messages"));
        return;
    }
    if (!v->is_array() || v->empty()) {
        r.fail("messages", "a non-empty array of messages");
        return;
    }
    std::vector<api_chat_message> messages(v->size());
    for (size_t i = 0; i < v->size() && !r.error(); ++i) {
        read_message(r, body, (*v)[i], i, messages[i]);
    }
    out = std::move(messages);
}

void read_limits(json_reader & r, chat_request & req) {
    constexpr int64_t max = std::numeric_limits<int32_t>::max();
    std::optional<int32_t> max_tokens;
    std::optional<int32_t> max_completion_tokens;
    r.integer("max_tokens", 1, max, max_tokens);
    r.integer("max_completion_tokens", 1, max, max_completion_tokens);
    req.max_tokens = max_completion_tokens ? max_completion_tokens : max_tokens;
    r.boolean("logprobs", req.logprobs);
    r.integer("top_logprobs", 0, api_max_logprobs, req.top_logprobs);
    if (!r.error() && r.find("top_logprobs") && !req.logprobs) {
        r.fail(api_error_invalid_request("'top_logprobs' requires 'logprobs' to be true.", "top_logprobs"));
    }
}

void read_template_kwargs(json_reader & r, chat_request & req) {
    const nlohmann::json * v = r.error() ? nullptr : r.find("chat_template_kwargs");
    if (!v || v->is_null()) return;
    if (!v->is_object()) return r.fail("chat_template_kwargs", "an object of chat template variables");
    req.chat_template_kwargs = v->dump();
}

// reasoning_format ("none", "auto", "deepseek") and reasoning_effort.
void read_reasoning(json_reader & r, chat_request & req) {
    const nlohmann::json * format = r.error() ? nullptr : r.find("reasoning_format");
    const std::string f = format && format->is_string() ? format->get<std::string>() : "";
    if (f == "none") {
        req.reasoning_split = false;
    } else if (f == "auto" || f == "deepseek") {
        req.reasoning_split = true;
    } else if (format) {
        r.fail("reasoning_format",
               api_cat({"one of \"none\", \"auto\" or \"deepseek\", got ", json_value_text(*format)}));
    }
    const nlohmann::json * effort = r.error() ? nullptr : r.find("reasoning_effort");
    const std::string e = effort && effort->is_string() ? effort->get<std::string>() : "";
    if (e == "none" || e == "minimal" || e == "low" || e == "medium" || e == "high") {
        req.reasoning_effort = e;
    } else if (effort) {
        r.fail("reasoning_effort", api_cat({"one of \"none\", \"minimal\", \"low\", \"medium\" or \"high\", got ",
                                            json_value_text(*effort)}));
    }
}

}  // namespace

const char * api_chat_role_name(api_chat_role role) {
    switch (role) {
        case api_chat_role::system: return "system";
        case api_chat_role::user: return "user";
        case api_chat_role::assistant: return "assistant";
        case api_chat_role::tool: return "tool";
    }
    return "user";
}

std::optional<api_error> chat_request_parse(std::string_view body, chat_request & out) {
    return json_parse_request(body, out, [&](json_reader & r, chat_request & req) {
        json_ordered_body ordered(body);
        api_read_generation_options(r, body, req);
        read_messages(r, ordered, req.messages);
        read_limits(r, req);
        read_template_kwargs(r, req);
        chat_read_tools(r, ordered, req);
        read_reasoning(r, req);
    });
}
