// http-test-util.h — helpers for the HTTP server tests: a log sink that keeps lines in memory,
// a hand-off of responses from handlers to the test thread (as the batch loop receives them),
// and a bounded wait for a condition.
#pragma once

#include "server/http-server.h"

#include <spdlog/sinks/base_sink.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

// Keeps every formatted message (the payload only) in memory.
class memory_sink final : public spdlog::sinks::base_sink<std::mutex> {
public:
    std::vector<std::string> lines() {
        std::lock_guard<std::mutex> lk(mutex_);
        return lines_;
    }

protected:
    void sink_it_(const spdlog::details::log_msg & msg) override {
        lines_.emplace_back(msg.payload.data(), msg.payload.size());
    }
    void flush_() override {}

private:
    std::vector<std::string> lines_;
};

// Responses parked by handlers, taken by the test thread.
class response_parking {
public:
    void put(std::shared_ptr<http_response> r) {
        {
            std::lock_guard<std::mutex> lk(mu_);
            list_.push_back(std::move(r));
        }
        cv_.notify_all();
    }
    // The oldest parked response, nullptr when none arrives within 10 s.
    std::shared_ptr<http_response> take() {
        std::unique_lock<std::mutex> lk(mu_);
        if (!cv_.wait_for(lk, std::chrono::seconds(10), [&] { return !list_.empty(); })) {
            return nullptr;
        }
        auto r = std::move(list_.front());
        list_.pop_front();
        return r;
    }

private:
    std::mutex mu_;
    std::condition_variable cv_;
    std::deque<std::shared_ptr<http_response>> list_;
};

// Polls cond until it holds, at most 10 s; the result of the last poll.
inline bool wait_until(const std::function<bool()> & cond) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!cond()) {
        if (std::chrono::steady_clock::now() > deadline) {
            return false;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return true;
}

// A flag set from any thread (on_close callbacks), waited on by the test.
class test_flag {
public:
    void set() {
        {
            std::lock_guard<std::mutex> lk(mu_);
            ++count_;
        }
        cv_.notify_all();
    }
    bool wait() {
        std::unique_lock<std::mutex> lk(mu_);
        return cv_.wait_for(lk, std::chrono::seconds(10), [&] { return count_ > 0; });
    }
    int count() {
        std::lock_guard<std::mutex> lk(mu_);
        return count_;
    }

private:
    std::mutex mu_;
    std::condition_variable cv_;
    int count_ = 0;
};
