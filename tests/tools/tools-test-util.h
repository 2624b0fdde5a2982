// Helpers shared by the tool tests: a scratch directory, captured output, file reading.
#pragma once

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <unistd.h>
#include <vector>

// A fresh directory under the system temp dir, removed with everything in it at the end.
class tools_scratch_dir {
public:
    tools_scratch_dir() {
        const auto * info = ::testing::UnitTest::GetInstance()->current_test_info();
        std::string name = "inferd-tools-" + std::to_string(::getpid());
        if (info) name += std::string("-") + info->test_suite_name() + "-" + info->name();
        for (char & c : name) {
            if (c == '/') c = '_';
        }
        path_ = std::filesystem::temp_directory_path() / name;
        std::filesystem::remove_all(path_);
        std::filesystem::create_directories(path_);
    }
    ~tools_scratch_dir() {
        std::error_code ec;
        std::filesystem::remove_all(path_, ec);
    }
    std::string file(const std::string & name) const { return (path_ / name).string(); }

private:
    std::filesystem::path path_;
};

// A FILE * whose contents can be read back as a string.
class tools_capture {
public:
    tools_capture() : fp_(std::tmpfile()) {}
    ~tools_capture() {
        if (fp_) std::fclose(fp_);
    }
    std::FILE * get() const { return fp_; }
    std::string text() const {
        std::fflush(fp_);
        std::rewind(fp_);
        std::string s;
        char buf[4096];
        size_t n;
        while ((n = std::fread(buf, 1, sizeof(buf), fp_)) > 0) s.append(buf, n);
        return s;
    }

private:
    std::FILE * fp_;
};

inline std::vector<char> tools_read_file(const std::string & path) {
    std::ifstream f(path, std::ios::binary);
    return std::vector<char>(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

inline std::vector<float> tools_read_f32(const std::string & path) {
    const std::vector<char> bytes = tools_read_file(path);
    std::vector<float> out(bytes.size() / sizeof(float));
    if (!out.empty()) std::memcpy(out.data(), bytes.data(), out.size() * sizeof(float));
    return out;
}
