// api/src/json-write.h — private helpers for serialising responses (not installed).
#pragma once

#include <nlohmann/json.hpp>

#include <cmath>
#include <initializer_list>
#include <string>
#include <string_view>

// Responses are built as ordered_json so that their keys keep OpenAI's order ("id", "object", …).
using ojson = nlohmann::ordered_json;

// Compact JSON text; invalid UTF-8 in strings is replaced by U+FFFD instead of throwing.
inline std::string json_write(const ojson & j) {
    return j.dump(-1, ' ', false, ojson::error_handler_t::replace);
}
inline std::string json_write(const nlohmann::json & j) {
    return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// JSON has no infinities: a log-probability of -inf (a token the sampler excluded) is written
// as -9999.0, as OpenAI does; NaN likewise.
inline double json_logprob(double lp) {
    return std::isfinite(lp) ? lp : -9999.0;
}

// Concatenation without `"literal" + std::string&&` chains (GCC 12 warns falsely on those, bug 105329).
inline std::string api_cat(std::initializer_list<std::string_view> parts) {
    std::string out;
    for (std::string_view p : parts) {
        out.append(p);
    }
    return out;
}
