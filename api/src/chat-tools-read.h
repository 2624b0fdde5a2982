// api/src/chat-tools-read.h — reading a chat request's tools, tool_choice and parallel_tool_calls,
// and the tool calls in its assistant messages (private).
#pragma once

#include "api/chat-request.h"
#include "json-read.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

// The request body's text, from which tools and arguments objects are taken with their keys in
// the order the client wrote them (the body's parse sorts them). It must be the text the reader's
// object was parsed from. The first lookups cut the value from the text (each scans the body up
// to it: a request has its tools and maybe a call or two); past those, the body is parsed once,
// in order, and the rest are read from that document, so that a conversation of many calls with
// object arguments costs one more parse, not a scan per call.
class json_ordered_body {
public:
    explicit json_ordered_body(std::string_view text) : text_(text) {}

    // The compact JSON text (no whitespace outside strings) of the value at a JSON pointer ("/tools", "/messages/2/tool_calls/0").
    std::string text_at(const std::string & pointer);

private:
    std::string_view text_;
    int scans_ = 0;                                // lookups answered by a scan of the text
    std::optional<nlohmann::ordered_json> doc_;   // the body in order, once scans_ reached its limit
};

// An assistant message's tool_calls: `calls` is the member's value (not null), `r` reads the
// message (its prefix "messages[i].") and `pointer` is the message's place in the body
// ("/messages/i"). The first invalid field is left in r.error().
void chat_read_tool_calls(json_reader & r, const nlohmann::json & calls, json_ordered_body & body,
                          const std::string & pointer, std::vector<api_tool_call> & out);

// tools, tool_choice and parallel_tool_calls of the request's object.
void chat_read_tools(json_reader & r, json_ordered_body & body, chat_request & req);
