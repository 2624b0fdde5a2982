// tests/grammar/json-schema-expect.h — helpers for the JSON Schema compiler's tests: the two
// serializations an instance is checked in (compact, and Python's json.dumps with single
// spaces), and expectations on compiled schemas.
//
// Usage (inside a TEST body):
//   expect_values(R"({"type":"integer","minimum":1})", {"1", "7"}, {"0", "\"1\""});
//   EXPECT_EQ(compile_error(R"({"not":{}})"), "unsupported keyword 'not' at / (it rejects every value)");
#pragma once

#include "grammar/json-schema.h"

#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace json_schema_expect {

using ojson = nlohmann::ordered_json;

// json.dumps(v, ensure_ascii=False): ", " and ": " separators.
inline std::string spaced(const ojson & v) {
    if (v.is_object()) {
        std::string out = "{";
        bool first = true;
        for (auto it = v.begin(); it != v.end(); ++it) {
            if (!first) out += ", ";
            first = false;
            out += ojson(it.key()).dump() + ": " + spaced(it.value());
        }
        return out + "}";
    }
    if (v.is_array()) {
        std::string out = "[";
        for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + spaced(v[i]);
        return out + "]";
    }
    return v.dump(-1, ' ', false, ojson::error_handler_t::replace);
}

inline std::string compact(const ojson & v) { return v.dump(-1, ' ', false, ojson::error_handler_t::replace); }

inline json_schema_result compile_ok(const std::string & schema) {
    json_schema_result r = json_schema_compile(schema);
    EXPECT_TRUE(r.ok()) << r.error << "\n" << schema;
    return r;
}

// Every value of `yes` is accepted in both serializations, none of `no`.
inline void expect_values(const std::string & schema, const std::vector<std::string> & yes, const std::vector<std::string> & no) {
    const json_schema_result r = compile_ok(schema);
    if (!r.ok()) return;
    for (const std::string & v : yes) {
        const ojson j = ojson::parse(v);
        EXPECT_TRUE(grammar_recognize(r.value, compact(j))) << schema << "\nshould accept " << compact(j) << "\n" << r.gbnf;
        EXPECT_TRUE(grammar_recognize(r.value, spaced(j))) << schema << "\nshould accept " << spaced(j);
    }
    for (const std::string & v : no) {
        const ojson j = ojson::parse(v);
        EXPECT_FALSE(grammar_recognize(r.value, compact(j))) << schema << "\nshould reject " << compact(j) << "\n" << r.gbnf;
        EXPECT_FALSE(grammar_recognize(r.value, spaced(j))) << schema << "\nshould reject " << spaced(j);
    }
}

inline std::string compile_error(const std::string & schema) {
    const json_schema_result r = json_schema_compile(schema);
    EXPECT_FALSE(r.ok()) << "compiled: " << schema;
    return r.error;
}

}  // namespace json_schema_expect
