// tools/loadgen/loadgen-sse.h — incremental Server-Sent Events parsing for inferd-loadgen: bytes
// arrive in arbitrary pieces (a line, an event or a JSON object may be split anywhere), events
// come out whole; then each event's data is classified as an OpenAI streaming chunk.
//
// Usage:
//   sse_parser p;
//   p.feed(bytes, [&](const std::string & data) {           // once per complete event
//       sse_chunk c = sse_classify_chunk(data, /*chat=*/false);
//       if (c.kind == sse_chunk_kind::content) ...;            // c.text, c.usage...
//   });
//   bool clean = p.at_event_boundary();                      // nothing half-received
//
// Framing (the WHATWG event-stream rules that matter here): lines end with "\n", "\r\n" or "\r";
// a blank line ends an event; "data:" lines (one optional space after the colon is dropped) are
// joined with "\n"; comment lines (":" first) and other fields (event, id, retry) are ignored; an
// event without data lines is not reported.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

class sse_parser {
public:
    using event_fn = std::function<void(const std::string & data)>;

    // Consumes bytes, calling on_event for each event completed by them (in order).
    void feed(std::string_view bytes, const event_fn & on_event);
    // True when no partial line or unfinished event is buffered.
    bool at_event_boundary() const { return line_.empty() && !has_data_; }

private:
    void end_line(const event_fn & on_event);

    std::string line_;       // the current, unfinished line
    std::string data_;       // the data lines of the current event, joined
    bool has_data_ = false;  // the current event has at least one data line
    bool last_cr_ = false;   // the previous byte was '\r' (a following '\n' belongs to it)
};

enum class sse_chunk_kind {
    done,       // "[DONE]"
    content,    // a chunk whose first choice carries text (completions: text; chat: delta.content)
    other,      // a valid chunk without text (the role delta, finish_reason, ...)
    usage,      // the usage chunk (choices empty, usage set)
    error,      // an {"error": ...} object in the stream
    malformed,  // not JSON, or JSON that is not a chunk object
};

struct sse_chunk {
    sse_chunk_kind kind = sse_chunk_kind::malformed;
    std::string text;                 // content: the text
    int64_t completion_tokens = 0;    // usage (also read when a content chunk carries usage)
    int64_t prompt_tokens = 0;
    int64_t cached_tokens = 0;
    bool has_usage = false;
};

// Classifies one event's data. chat selects choices[0].delta.content over choices[0].text.
sse_chunk sse_classify_chunk(const std::string & data, bool chat);
