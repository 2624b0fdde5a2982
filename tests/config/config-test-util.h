// tests/config/config-test-util.h — helpers shared by the config tests: parse with given
// arguments / environment, temporary files.
#pragma once

#include "config/config.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

struct config_parsed {
    config_status status;
    server_config cfg;
    std::string text;
};

inline config_parsed config_run(const std::vector<std::string> & args, const config_env & env = {}) {
    config_parsed p;
    p.status = config_parse(args, env, &p.cfg, &p.text);
    return p;
}

// Parses args with "-m model.gguf" in front; expects success.
inline server_config config_ok(std::vector<std::string> args, const config_env & env = {}) {
    args.insert(args.begin(), {"-m", "model.gguf"});
    config_parsed p = config_run(args, env);
    EXPECT_EQ(p.status, config_status::ok) << p.text;
    EXPECT_EQ(p.text, "");
    return p.cfg;
}

// Parses args with "-m model.gguf" in front; expects a usage error and returns its message.
inline std::string config_error(std::vector<std::string> args, const config_env & env = {}) {
    args.insert(args.begin(), {"-m", "model.gguf"});
    config_parsed p = config_run(args, env);
    EXPECT_EQ(p.status, config_status::usage_error) << "args parsed without error";
    return p.text;
}

// A file under a per-process temporary directory, removed with the object.
class config_temp_file {
public:
    config_temp_file(const std::string & name, const std::string & content) {
        dir_ = std::filesystem::temp_directory_path() / ("inferd-config-test-" + std::to_string(::getpid()));
        std::filesystem::create_directories(dir_);
        path_ = (dir_ / name).string();
        std::ofstream(path_, std::ios::binary) << content;
    }
    ~config_temp_file() {
        std::error_code ec;
        std::filesystem::remove(path_, ec);
    }
    const std::string & path() const { return path_; }

private:
    std::filesystem::path dir_;
    std::string path_;
};

inline bool config_contains(const std::string & haystack, const std::string & needle) {
    return haystack.find(needle) != std::string::npos;
}
