// tools/loadgen/loadgen-sse.cpp — event-stream framing and OpenAI chunk classification.
#include "loadgen/loadgen-sse.h"

#include <nlohmann/json.hpp>

void sse_parser::feed(std::string_view bytes, const event_fn & on_event) {
    for (char c : bytes) {
        if (last_cr_) {
            last_cr_ = false;
            if (c == '\n') {
                continue;  // the second half of "\r\n"
            }
        }
        if (c == '\r') {
            last_cr_ = true;
            end_line(on_event);
        } else if (c == '\n') {
            end_line(on_event);
        } else {
            line_.push_back(c);
        }
    }
}

void sse_parser::end_line(const event_fn & on_event) {
    if (line_.empty()) {
        if (has_data_) {
            on_event(data_);
        }
        data_.clear();
        has_data_ = false;
        return;
    }
    const size_t colon = line_.find(':');
    const std::string_view field = std::string_view(line_).substr(0, colon);
    if (colon != 0 && field == "data") {
        std::string_view value;
        if (colon != std::string::npos) {
            value = std::string_view(line_).substr(colon + 1);
            if (!value.empty() && value.front() == ' ') {
                value.remove_prefix(1);
            }
        }
        if (has_data_) {
            data_.push_back('\n');
        }
        data_.append(value);
        has_data_ = true;
    }
    line_.clear();
}

namespace {

void read_usage(const nlohmann::json & u, sse_chunk * c) {
    if (!u.is_object()) {
        return;
    }
    c->has_usage = true;
    if (u.contains("completion_tokens") && u["completion_tokens"].is_number_integer()) {
        c->completion_tokens = u["completion_tokens"].get<int64_t>();
    }
    if (u.contains("prompt_tokens") && u["prompt_tokens"].is_number_integer()) {
        c->prompt_tokens = u["prompt_tokens"].get<int64_t>();
    }
    const auto d = u.find("prompt_tokens_details");
    if (d != u.end() && d->is_object() && d->contains("cached_tokens") && (*d)["cached_tokens"].is_number_integer()) {
        c->cached_tokens = (*d)["cached_tokens"].get<int64_t>();
    }
}

// The text of the first choice; false when the choice is not shaped like a chunk choice.
bool choice_text(const nlohmann::json & choice, bool chat, std::string * text) {
    if (!choice.is_object()) {
        return false;
    }
    const nlohmann::json * t = nullptr;
    if (chat) {
        const auto d = choice.find("delta");
        if (d == choice.end() || !d->is_object()) {
            return false;
        }
        const auto c = d->find("content");
        if (c != d->end()) {
            t = &*c;
        }
    } else {
        const auto c = choice.find("text");
        if (c != choice.end()) {
            t = &*c;
        }
    }
    if (t && t->is_string()) {
        *text = t->get<std::string>();
    } else if (t && !t->is_null()) {
        return false;
    }
    return true;
}

}  // namespace

sse_chunk sse_classify_chunk(const std::string & data, bool chat) {
    sse_chunk c;
    if (data == "[DONE]") {
        c.kind = sse_chunk_kind::done;
        return c;
    }
    const nlohmann::json j = nlohmann::json::parse(data, nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
        return c;
    }
    if (j.contains("error")) {
        c.kind = sse_chunk_kind::error;
        return c;
    }
    const auto usage = j.find("usage");
    if (usage != j.end()) {
        read_usage(*usage, &c);
    }
    const auto choices = j.find("choices");
    if (choices == j.end() || !choices->is_array()) {
        return c;
    }
    if (choices->empty()) {
        c.kind = c.has_usage ? sse_chunk_kind::usage : sse_chunk_kind::other;
        return c;
    }
    if (!choice_text((*choices)[0], chat, &c.text)) {
        return c;
    }
    c.kind = c.text.empty() ? sse_chunk_kind::other : sse_chunk_kind::content;
    return c;
}
