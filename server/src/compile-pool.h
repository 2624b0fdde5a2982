// A few threads for the slow part of preparing a generation request: compiling its output
// constraint or tool-call grammar (tens of milliseconds to seconds), so that it never runs on an
// HTTP I/O thread, where it would stall every connection that thread serves (internal).
//
// Usage:
//   compile_pool pool(2, 64);                          // 2 threads; at most 64 jobs waiting beyond them
//   switch (pool.submit([=] { compile_and_submit(); }, [=] { answer_503("shutting down"); })) {
//       case compile_pool::submit_status::queued: return;          // the job answers the request
//       case compile_pool::submit_status::full: return answer_503("queue full");
//       case compile_pool::submit_status::stopped: return answer_503("shutting down");
//   }
//   pool.stop();   // queued jobs get their refusal instead; running ones finish; threads joined
//
// A job runs exactly once, or, when the pool stops before its turn, its refusal runs instead
// (on the thread calling stop()). Exceptions from either are caught and counted in failures():
// none leaves a pool thread. All methods are thread-safe.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

class compile_pool {
public:
    using job = std::function<void()>;
    enum class submit_status { queued, full, stopped };

    // n_threads >= 1 (0 counts as 1); max_waiting: jobs that may wait beyond the idle threads.
    compile_pool(size_t n_threads, size_t max_waiting);
    ~compile_pool();  // stop()
    compile_pool(const compile_pool &) = delete;
    compile_pool & operator=(const compile_pool &) = delete;

    submit_status submit(job run, job refuse);
    // Idempotent. Queued jobs are refused, running ones finish, the threads are joined.
    void stop();

    size_t waiting() const;   // jobs queued, not started
    size_t running() const;   // jobs running now
    uint64_t failures() const { return failures_.load(); }  // jobs (or refusals) that threw

private:
    struct entry {
        job run, refuse;
    };

    void work();
    void guarded(const job & f);

    const size_t n_threads_;
    const size_t max_waiting_;
    mutable std::mutex mu_;
    std::condition_variable cv_;
    std::deque<entry> queue_;  // guarded by mu_
    size_t n_running_ = 0;     // guarded by mu_
    bool stopping_ = false;    // guarded by mu_
    std::atomic<uint64_t> failures_{0};
    std::mutex stop_mu_;       // one stop() at a time
    std::vector<std::thread> threads_;
};
