// ggml/cpu/threadpool.h — persistent worker threads for the CPU backend.
//
// Usage:
//   ggml_cpu_threadpool pool(4);                  // 3 workers + the calling thread
//   pool.run(4, [&](int ith, int nth) {           // blocks until every thread returned
//       ... part ith of nth ...
//       pool.barrier(nth);                       // all nth threads of this run meet here
//       ... next part ...
//   });
//
// Workers are created once. Between runs they spin for spin_us microseconds, then sleep
// (std::atomic wait) until the next run; barrier() spins (with pause, then yields when the
// machine is oversubscribed) and never sleeps in the kernel, so the nodes of one graph follow
// each other without a wake-up. run() must not be called concurrently from two threads, and
// fn must not throw.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <thread>
#include <vector>

class ggml_cpu_threadpool {
public:
    explicit ggml_cpu_threadpool(int max_threads, int spin_us = 200);
    ~ggml_cpu_threadpool();
    ggml_cpu_threadpool(const ggml_cpu_threadpool &) = delete;
    ggml_cpu_threadpool & operator=(const ggml_cpu_threadpool &) = delete;

    int max_threads() const { return max_threads_; }
    // Runs fn(ith, nth) for ith in [0, nth) with nth = min(n_threads, max_threads()); the
    // calling thread is ith 0. Returns when all have returned.
    void run(int n_threads, const std::function<void(int ith, int nth)> & fn);
    // Called by every one of the nth threads of the current run; returns once all arrived.
    void barrier(int nth);

private:
    void worker_main(int ith);
    // Waits (spin, then sleep) until a run newer than last_seq is published or stop_ is set;
    // returns the run word (seq << 16 | nth). spin_until_ns: end of the spinning phase.
    uint64_t worker_wait(uint64_t last_seq, int64_t spin_until_ns);
    // Caller side: waits until the n_workers workers of the current run have returned.
    void wait_workers_done(int n_workers);

    int max_threads_;
    int spin_us_;
    bool oversubscribed_ = false;   // more threads than hardware threads: yield sooner
    std::vector<std::thread> workers_;
    const std::function<void(int, int)> * fn_ = nullptr;  // valid for participants of a run
    uint64_t run_seq_ = 0;          // caller only: sequence number of the last published run
    // Published run: (sequence << 16) | nth in one word, so a worker reads a run's number and
    // its size together; a 48-bit sequence cannot wrap around within the life of a process.
    alignas(64) std::atomic<uint64_t> run_word_{0};
    alignas(64) std::atomic<uint32_t> generation_{0};   // bumped per run; workers wait on it
    alignas(64) std::atomic<int> n_done_{0};            // workers finished with this run
    alignas(64) std::atomic<int> barrier_count_{0};
    alignas(64) std::atomic<uint32_t> barrier_phase_{0};
    std::atomic<bool> stop_{false};
};
