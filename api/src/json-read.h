// api/src/json-read.h — private field readers that validate request bodies (not installed).
//
// Usage:
//   nlohmann::json body;
//   if (auto err = json_parse_object(text, body)) return err;     // 400: malformed or not an object
//   json_reader r(body);
//   r.number("temperature", 0.0, 2.0, out.temperature);          // absent or null: left as is
//   r.integer("n", 1, 16, out.n);
//   if (r.error()) return r.error();                              // the first failure, naming the field
//
// After the first failure every further read does nothing, so a parser reads all its fields
// and checks error() once. `prefix` names nested objects in messages ("stream_options.").
#pragma once

#include "api/error.h"
#include "json-write.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

// Parses `text` into `out`; nullopt when it is a JSON object, else a 400 naming the position of
// the syntax error, or saying the body is not an object or is nested too deeply.
std::optional<api_error> json_parse_object(std::string_view text, nlohmann::json & out);

// The deepest nesting of arrays and objects allowed in a request body.
constexpr int json_max_depth = 128;

// The deepest nesting of [ and { outside strings in `text`, stopping early past `limit`. The JSON
// parser itself is iterative, but a value nested a million deep would still be costly to walk
// later (its dump recurses).
int json_nesting_depth(std::string_view text, int limit);

// A description of a value's JSON type for messages: "a string", "null", "an array", ….
const char * json_type_name(const nlohmann::json & v);
// A short rendering of a value for messages: numbers and booleans as written, a string as
// the string "…" (cut at 40 bytes), others by type ("an object").
std::string json_value_text(const nlohmann::json & v);

class json_reader {
public:
    explicit json_reader(const nlohmann::json & obj, std::string prefix = "") :
        obj_(obj), prefix_(std::move(prefix)) {}

    // The value of `key`, nullptr when absent or null.
    const nlohmann::json * find(const char * key) const;

    void boolean(const char * key, bool & out);
    void boolean(const char * key, std::optional<bool> & out);
    void string(const char * key, std::string & out);
    // An integer in [lo, hi]; floats with a fraction, booleans and strings are rejected.
    void integer(const char * key, int64_t lo, int64_t hi, int32_t & out);
    void integer(const char * key, int64_t lo, int64_t hi, std::optional<int32_t> & out);
    void integer(const char * key, std::optional<int64_t> & out);  // any 64-bit signed integer
    // A number in [lo, hi]; lo_open: lo itself excluded.
    void number(const char * key, double lo, double hi, double & out, bool lo_open = false);

    void fail(api_error e);
    void fail(const std::string & key, const std::string & what);  // "'key' must be what"
    const std::optional<api_error> & error() const { return error_; }
    std::string param(const std::string & key) const { return prefix_ + key; }

private:
    bool integer_value(const char * key, int64_t lo, int64_t hi, int64_t & out);

    const nlohmann::json & obj_;
    std::string prefix_;
    std::optional<api_error> error_;
};

// An integer in [lo, hi] from `v`; false (out untouched) when v is anything else.
bool json_integer_in(const nlohmann::json & v, int64_t lo, int64_t hi, int64_t & out);

// A request body parsed into a fresh T by read(json_reader &, T &): `out` is assigned only when
// the body is a JSON object and read() left no error; otherwise the error to send (the reader's
// first failure, or a 400 for a malformed body). Never throws.
template <class T, class Read>
std::optional<api_error> json_parse_request(std::string_view body, T & out, Read && read) {
    try {
        nlohmann::json j;
        if (auto err = json_parse_object(body, j)) {
            return err;
        }
        T req;
        json_reader r(j);
        read(r, req);
        if (r.error()) {
            return r.error();
        }
        out = std::move(req);
        return std::nullopt;
    } catch (const nlohmann::json::exception & e) {
        return api_error_invalid_request(std::string("The request could not be read: ") + e.what());
    }
}
