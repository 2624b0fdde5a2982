// tests/server/inferd-process.h — starts the real `inferd` binary on a free loopback port for
// end-to-end tests, and stops it (SIGTERM) at the end.
//
// Usage:
//   inferd_process p({"-m", model, "--parallel", "4"});
//   ASSERT_TRUE(p.wait_ready()) << p.log();     // the port from its log, then /health == 200
//   test_conn c(p.port()); ...
//   int status = p.terminate();                  // SIGTERM, waits, exit status
#pragma once

#include "server/http-test-client.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

extern char ** environ;

class inferd_process {
public:
    explicit inferd_process(std::vector<std::string> args, std::vector<std::string> env = {}) {
        log_path_ = (std::filesystem::temp_directory_path() /
                     ("inferd-e2e-" + std::to_string(::getpid()) + "-" + std::to_string(counter()++) + ".log"))
                        .string();
        std::vector<std::string> argv = {INFERD_BIN, "--host", "127.0.0.1", "--port", "0"};
        argv.insert(argv.end(), args.begin(), args.end());
        std::vector<char *> cargv;
        for (std::string & a : argv) cargv.push_back(a.data());
        cargv.push_back(nullptr);
        std::vector<std::string> envs;
        for (char ** e = environ; *e; ++e) envs.emplace_back(*e);
        envs.insert(envs.end(), env.begin(), env.end());
        std::vector<char *> cenv;
        for (std::string & e : envs) cenv.push_back(e.data());
        cenv.push_back(nullptr);
        posix_spawn_file_actions_t fa;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_addopen(&fa, 2, log_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        posix_spawn_file_actions_adddup2(&fa, 2, 1);
        if (posix_spawn(&pid_, INFERD_BIN, &fa, nullptr, cargv.data(), cenv.data()) != 0) pid_ = -1;
        posix_spawn_file_actions_destroy(&fa);
    }
    ~inferd_process() {
        if (pid_ > 0) {
            ::kill(pid_, SIGKILL);
            ::waitpid(pid_, nullptr, 0);
        }
        std::error_code ec;
        std::filesystem::remove(log_path_, ec);
    }

    // Waits for "listening on http://127.0.0.1:PORT" in the log (the model may still be loading).
    bool wait_listening(std::chrono::seconds limit = std::chrono::seconds(60)) {
        const auto end = std::chrono::steady_clock::now() + limit;
        const std::regex re("listening on https?://127\\.0\\.0\\.1:([0-9]+)");
        while (std::chrono::steady_clock::now() < end && port_ == 0) {
            std::smatch m;
            const std::string l = log();
            if (std::regex_search(l, m, re)) port_ = uint16_t(std::stoi(m[1]));
            if (!alive()) return false;
            if (port_ == 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        return port_ != 0;
    }
    // wait_listening, then waits for /health == 200.
    bool wait_ready(std::chrono::seconds limit = std::chrono::seconds(60)) {
        const auto end = std::chrono::steady_clock::now() + limit;
        if (!wait_listening(limit)) return false;
        while (std::chrono::steady_clock::now() < end && port_ != 0) {
            test_conn c(port_);
            if (c.send(test_request("GET", "/health"))) {
                auto r = c.read_response();
                if (r && r->status == 200) return true;
            }
            if (!alive()) return false;
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        return false;
    }
    uint16_t port() const { return port_; }
    pid_t pid() const { return pid_; }
    bool alive() {
        if (pid_ <= 0) return false;
        int st = 0;
        const pid_t r = ::waitpid(pid_, &st, WNOHANG);
        if (r == pid_) {
            exit_status_ = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
            pid_ = -1;
            return false;
        }
        return true;
    }
    // Sends SIGTERM (unless already gone) and waits for the exit status.
    int terminate() {
        if (pid_ > 0) ::kill(pid_, SIGTERM);
        return wait_exit();
    }
    int wait_exit() {
        if (pid_ > 0) {
            int st = 0;
            ::waitpid(pid_, &st, 0);
            exit_status_ = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
            pid_ = -1;
        }
        return exit_status_;
    }
    std::string log() const {
        std::ifstream f(log_path_);
        std::stringstream ss;
        ss << f.rdbuf();
        return ss.str();
    }

private:
    static int & counter() {
        static int n = 0;
        return n;
    }
    pid_t pid_ = -1;
    uint16_t port_ = 0;
    int exit_status_ = -1;
    std::string log_path_;
};

// The value of an unlabelled metric in a /metrics text; -1 when it is not there.
inline double inferd_metric(const std::string & text, const std::string & name) {
    const std::regex re("(^|\\n)" + name + " ([0-9.eE+-]+)");
    std::smatch m;
    return std::regex_search(text, m, re) ? std::stod(m[2]) : -1.0;
}

// One request on a fresh connection.
inline std::optional<test_response> inferd_call(uint16_t port, std::string_view method, std::string_view path,
                                                std::string_view body = {}, std::string_view extra_headers = {}) {
    test_conn c(port, 60);
    if (!c.send(test_request(method, path, body, std::string("Content-Type: application/json\r\n") + std::string(extra_headers)))) {
        return std::nullopt;
    }
    return c.read_response();
}
