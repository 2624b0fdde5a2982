// tests/testdata.h — where the shared golden data is, for tests that use it.
//
// Usage (inside a TEST body):
//   INFERD_REQUIRE_TESTDATA(dir);                 // skips (fails when CI=true) without it
//   std::string model = dir + "/models/tiny-llama-f32.gguf";
//   std::string text = inferd_read_file(dir + "/chat/templates/Qwen-Qwen3-0.6B.jinja");
//
// The data lives in ../shared/testdata relative to the repository root (ctest runs tests from
// there); INFERD_TESTDATA overrides the location.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

inline std::string inferd_testdata_dir() {
    if (const char * env = std::getenv("INFERD_TESTDATA")) return env;
    for (const char * c : {"../shared/testdata", "../../shared/testdata", "../../../shared/testdata"}) {
        if (std::filesystem::exists(std::filesystem::path(c) / "README.md")) return c;
    }
    return "";
}

// A whole file's bytes ("" when it cannot be read).
inline std::string inferd_read_file(const std::string & path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

inline bool inferd_running_in_ci() {
    const char * ci = std::getenv("CI");
    return ci && std::string(ci) == "true";
}

#define INFERD_REQUIRE_TESTDATA(dir)                                                             \
    const std::string dir = inferd_testdata_dir();                                               \
    if (dir.empty()) {                                                                           \
        if (inferd_running_in_ci()) {                                                            \
            FAIL() << "../shared/testdata is missing (required under CI=true)";                  \
        } else {                                                                                 \
            GTEST_SKIP() << "../shared/testdata not found next to the repository: skipped";      \
        }                                                                                        \
    }
