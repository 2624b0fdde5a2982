// tests/api/api-test-util.h — helpers shared by the api/ tests.
#pragma once

#include "api/error.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <optional>
#include <string>

// Checks that `err` is a 400 invalid_request_error whose param is `param` and whose message
// names it (when the param is not empty).
inline void expect_invalid(const std::optional<api_error> & err, const std::string & param,
                           const std::string & context) {
    ASSERT_TRUE(err.has_value()) << "accepted: " << context;
    EXPECT_EQ(err->status, 400) << context;
    EXPECT_EQ(err->type, "invalid_request_error") << context;
    EXPECT_EQ(err->param, param) << context << " → " << err->message;
    if (!param.empty()) {
        EXPECT_NE(err->message.find(param), std::string::npos) << context << " → " << err->message;
    }
}

// Parses JSON text that a serialiser produced; fails the test when it is not JSON.
inline nlohmann::json parse_output(const std::string & text) {
    nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << text;
    return j;
}
