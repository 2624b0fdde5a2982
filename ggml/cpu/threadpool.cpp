// ggml/cpu/threadpool.cpp — persistent worker threads, run() hand-off and the run barrier.
//
// Hand-off protocol (one publisher: the thread calling run()):
//   caller: fn_ = &fn; n_done_ = 0; run_word_ = (seq << 16 | nth)  [release];
//           generation_ += 1 [release]; generation_.notify_all()
//   worker: spins on run_word_ [acquire] for spin_us after its last run, then sleeps in
//           generation_.wait(); a worker with ith < nth runs fn, then n_done_ += 1 [release]
//   caller: runs fn(0, nth), then waits until n_done_ == nth - 1 [acquire].
// A worker re-reads run_word_ after loading generation_ and before sleeping on that value, so
// a run published in between changes generation_ and the wait returns at once (no lost
// wake-up). The sequence and nth share one word so that a worker skipping a run never pairs
// one run's number with another run's size.
#include "cpu/threadpool.h"

#include <cassert>
#include <chrono>
#include <system_error>

namespace {

constexpr int      k_nth_bits = 16;
constexpr uint64_t k_nth_mask = (uint64_t(1) << k_nth_bits) - 1;
constexpr int      k_max_threads = int(k_nth_mask);
// Pause iterations before a waiting thread starts yielding its core (fewer when the pool has
// more threads than the machine has hardware threads: the thread it waits for needs the core).
constexpr int k_spin_before_yield = 1024;
constexpr int k_spin_before_yield_oversubscribed = 16;
// Pause iterations between two clock reads in the idle spin of a worker.
constexpr int k_idle_spin_check = 64;

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

inline int64_t now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch()).count();
}

inline uint64_t run_word_seq(uint64_t word) { return word >> k_nth_bits; }
inline int run_word_nth(uint64_t word) { return int(word & k_nth_mask); }

// Spins with pause while the wait is young, then yields the core on every further round.
class spin_backoff {
public:
    explicit spin_backoff(bool oversubscribed)
        : limit_(oversubscribed ? k_spin_before_yield_oversubscribed : k_spin_before_yield) {}
    void wait() {
        if (count_ < limit_) {
            ++count_;
            cpu_relax();
        } else {
            std::this_thread::yield();
        }
    }

private:
    int limit_;
    int count_ = 0;
};

}  // namespace

ggml_cpu_threadpool::ggml_cpu_threadpool(int max_threads, int spin_us)
    : max_threads_(max_threads < 1 ? 1 : (max_threads > k_max_threads ? k_max_threads : max_threads)),
      spin_us_(spin_us < 0 ? 0 : spin_us) {
    const unsigned hw = std::thread::hardware_concurrency();
    oversubscribed_ = hw != 0 && unsigned(max_threads_) > hw;
    workers_.reserve(size_t(max_threads_ - 1));
    try {
        for (int ith = 1; ith < max_threads_; ++ith) {
            workers_.emplace_back([this, ith] { worker_main(ith); });
        }
    } catch (...) {
        // Thread creation failed: stop and join the workers already started, then report.
        stop_.store(true, std::memory_order_release);
        generation_.fetch_add(1, std::memory_order_release);
        generation_.notify_all();
        for (std::thread & t : workers_) {
            t.join();
        }
        throw;
    }
}

ggml_cpu_threadpool::~ggml_cpu_threadpool() {
    stop_.store(true, std::memory_order_release);
    generation_.fetch_add(1, std::memory_order_release);
    generation_.notify_all();
    for (std::thread & t : workers_) {
        t.join();
    }
}

void ggml_cpu_threadpool::run(int n_threads, const std::function<void(int ith, int nth)> & fn) {
    const int nth = n_threads < 1 ? 1 : (n_threads > max_threads_ ? max_threads_ : n_threads);
    if (nth == 1) {
        fn(0, 1);  // no worker takes part: nothing to publish or wake
        return;
    }
    fn_ = &fn;
    n_done_.store(0, std::memory_order_relaxed);  // ordered before the release below
    ++run_seq_;
    run_word_.store((run_seq_ << k_nth_bits) | uint64_t(nth), std::memory_order_release);
    generation_.fetch_add(1, std::memory_order_release);
    generation_.notify_all();

    fn(0, nth);
    wait_workers_done(nth - 1);
    fn_ = nullptr;
}

void ggml_cpu_threadpool::wait_workers_done(int n_workers) {
    spin_backoff backoff(oversubscribed_);
    while (n_done_.load(std::memory_order_acquire) != n_workers) {
        backoff.wait();
    }
}

void ggml_cpu_threadpool::barrier(int nth) {
    if (nth <= 1) {
        return;
    }
    // The phase cannot move before this thread arrives, so this is the phase of this barrier.
    const uint32_t phase = barrier_phase_.load(std::memory_order_acquire);
    const int arrived = barrier_count_.fetch_add(1, std::memory_order_acq_rel);
    assert(arrived < nth && "more threads in barrier() than nth: mismatched nth in one run");
    if (arrived == nth - 1) {
        // Last to arrive: every other thread's writes were acquired through the count's
        // release sequence; reset the count before opening the next phase.
        barrier_count_.store(0, std::memory_order_relaxed);
        barrier_phase_.fetch_add(1, std::memory_order_release);
        return;
    }
    spin_backoff backoff(oversubscribed_);
    while (barrier_phase_.load(std::memory_order_acquire) == phase) {
        backoff.wait();
    }
}

uint64_t ggml_cpu_threadpool::worker_wait(uint64_t last_seq, int64_t spin_until_ns) {
    // Spinning phase: a run published soon after the last one starts without a wake-up.
    for (int i = 0;; ++i) {
        const uint64_t word = run_word_.load(std::memory_order_acquire);
        if (run_word_seq(word) != last_seq || stop_.load(std::memory_order_acquire)) {
            return word;
        }
        if (i % k_idle_spin_check == 0 && now_ns() >= spin_until_ns) {
            break;
        }
        if (oversubscribed_) {
            std::this_thread::yield();
        } else {
            cpu_relax();
        }
    }
    // Sleeping phase.
    for (;;) {
        const uint32_t gen = generation_.load(std::memory_order_acquire);
        const uint64_t word = run_word_.load(std::memory_order_acquire);
        if (run_word_seq(word) != last_seq || stop_.load(std::memory_order_acquire)) {
            return word;
        }
        generation_.wait(gen, std::memory_order_acquire);
    }
}

void ggml_cpu_threadpool::worker_main(int ith) {
    uint64_t last_seq = 0;
    int64_t spin_until_ns = now_ns() + int64_t(spin_us_) * 1000;
    for (;;) {
        const uint64_t word = worker_wait(last_seq, spin_until_ns);
        if (stop_.load(std::memory_order_acquire)) {
            return;
        }
        last_seq = run_word_seq(word);
        const int nth = run_word_nth(word);
        if (ith >= nth) {
            continue;  // not part of this run; keep the spin deadline of the last real run
        }
        (*fn_)(ith, nth);
        n_done_.fetch_add(1, std::memory_order_release);
        spin_until_ns = now_ns() + int64_t(spin_us_) * 1000;
    }
}
