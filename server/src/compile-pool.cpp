// The compile threads of the server: a bounded queue of jobs, refused when the pool stops.
#include "compile-pool.h"

#include <algorithm>

compile_pool::compile_pool(size_t n_threads, size_t max_waiting)
    : n_threads_(std::max<size_t>(1, n_threads)), max_waiting_(max_waiting) {
    threads_.reserve(n_threads_);
    for (size_t i = 0; i < n_threads_; ++i) threads_.emplace_back([this] { work(); });
}

compile_pool::~compile_pool() { stop(); }

compile_pool::submit_status compile_pool::submit(job run, job refuse) {
    {
        std::lock_guard<std::mutex> lk(mu_);
        if (stopping_) return submit_status::stopped;
        // Room: max_waiting jobs beyond the threads that are idle now.
        if (queue_.size() + n_running_ >= n_threads_ + max_waiting_) return submit_status::full;
        queue_.push_back({std::move(run), std::move(refuse)});
    }
    cv_.notify_one();
    return submit_status::queued;
}

void compile_pool::stop() {
    std::lock_guard<std::mutex> stop_lk(stop_mu_);
    std::deque<entry> refused;
    {
        std::lock_guard<std::mutex> lk(mu_);
        stopping_ = true;
        refused.swap(queue_);
    }
    cv_.notify_all();
    for (entry & e : refused) guarded(e.refuse);
    for (std::thread & t : threads_) {
        if (t.joinable()) t.join();
    }
    threads_.clear();
}

size_t compile_pool::waiting() const {
    std::lock_guard<std::mutex> lk(mu_);
    return queue_.size();
}

size_t compile_pool::running() const {
    std::lock_guard<std::mutex> lk(mu_);
    return n_running_;
}

void compile_pool::guarded(const job & f) {
    if (!f) return;
    try {
        f();
    } catch (...) {
        ++failures_;  // the server's jobs catch their own; this is the last line
    }
}

void compile_pool::work() {
    std::unique_lock<std::mutex> lk(mu_);
    for (;;) {
        cv_.wait(lk, [this] { return stopping_ || !queue_.empty(); });
        if (queue_.empty()) return;  // stopping, and stop() refuses what is left
        entry e = std::move(queue_.front());
        queue_.pop_front();
        ++n_running_;
        lk.unlock();
        guarded(e.run);
        e = entry{};  // what the job holds (a response, a request) is released before the count drops
        lk.lock();
        --n_running_;
    }
}
