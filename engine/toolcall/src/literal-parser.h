// literal-parser.h — an incremental reader of one JSON value written as JSON, as a Python
// literal or in Gemma 4's notation, that writes the same value as JSON text while it reads.
//
//   literal_parser p({.object_only = true});
//   std::string out;
//   size_t used = p.feed("{'a': True, 'b': [1, 'x'", out);   // out == "{\"a\": true, \"b\": [1, \"x\""
//   used += p.feed("]} trailing", out);                      // done after the '}'; stops there
//   p.state() == literal_parser::status::done;              // out == … "]}"
//
// Accepted: JSON; Python literals (single-quoted strings with Python escapes, True / False / None,
// bare identifier keys); Gemma 4 strings delimited by <|"|> (no escapes inside) and bare keys;
// lenient extras: a trailing comma, raw control characters inside strings (escaped on output),
// unknown escapes kept as text. Numbers must be JSON numbers. The output uses ", " and ": "
// separators and is always valid JSON text once the value is complete (or after repair()).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace toolcall::detail {

class literal_parser {
public:
    enum class status : uint8_t { more, done, error };
    struct config {
        bool gemma_strings = false;  // <|"|>…<|"|> strings
        bool object_only = false;    // the value must be an object (error on anything else)
    };

    literal_parser() = default;
    explicit literal_parser(config c) : cfg_(c) {}

    // Reads from `in` until the value is complete (or an error); returns the bytes used (not the
    // byte found wrong). A number or word at the top level is complete only at the first byte
    // after it, which is not used.
    size_t feed(std::string_view in, std::string & out);
    // The input has ended: completes a top-level number or word; error when the value is open.
    status finish(std::string & out);
    // Closes what is open (string, pending word, containers) so that the output is valid JSON;
    // "{}" (object_only) or "null" when nothing was read.
    void repair(std::string & out);

    status state() const { return status_; }
    // Whether the value's first byte has been read and could begin a value.
    bool started() const { return started_; }

private:
    enum class mode : uint8_t { value, key, colon, after, string, escape, hex, number, word, quote_open, quote_close };

    bool step(char c, std::string & out);  // false: c not used (read it again)
    bool step_value(char c, std::string & out);
    bool step_key(char c, std::string & out);
    bool step_after(char c, std::string & out);
    bool step_string(char c, std::string & out);
    bool step_escape(char c, std::string & out);
    bool step_hex(char c, std::string & out);
    bool step_quote(char c, std::string & out);
    bool can_begin(char c, bool key) const;
    void begin_item(std::string & out);
    void open_string(char quote, bool key, std::string & out);
    void end_value();
    void close_container(std::string & out);
    bool finish_word(std::string & out);

    config cfg_;
    status status_ = status::more;
    mode mode_ = mode::value;
    std::vector<char> stack_;  // '{' or '['
    std::string sep_;          // ", " waiting for the next item (dropped before a closing bracket)
    std::string tok_;          // number, word or hex digits being read
    std::string high_;         // the hex digits of a \u high surrogate waiting for its pair
    char quote_ = '"';         // '"', '\'' or 'g' (<|"|>)
    char hex_kind_ = 'u';      // 'u' (4 digits), 'x' (2), 'U' (8)
    int quote_match_ = 0;      // bytes of <|"|> matched
    bool in_key_ = false;
    bool started_ = false;
};

// Whether s is a number as JSON writes it.
bool json_number_text(std::string_view s);
// Appends s as the inside of a JSON string (quotes, backslashes and control characters escaped).
void json_escape_append(std::string_view s, std::string & out);
// Converts a whole text (surrounding whitespace allowed) to JSON text; false when it is not one
// complete value.
bool literal_to_json(std::string_view text, std::string & out);

}  // namespace toolcall::detail
