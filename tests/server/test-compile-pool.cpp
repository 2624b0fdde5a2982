// The server's compile threads (server/src/compile-pool.h): jobs run off the caller's thread, the
// queue is bounded, a stop refuses what has not started and finishes what runs, and no exception
// leaves a pool thread.
#include "server/src/compile-pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>

namespace {

// A gate that holds jobs until it opens.
struct gate {
    std::promise<void> p;
    std::shared_future<void> f{p.get_future().share()};
    void open() { p.set_value(); }
    void wait() const { f.wait(); }
};

void wait_for(const std::function<bool()> & cond) {
    for (int i = 0; i < 5000 && !cond(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

}  // namespace

TEST(compile_pool, jobs_run_on_pool_threads) {
    compile_pool pool(2, 8);
    std::promise<std::thread::id> where;
    ASSERT_EQ(pool.submit([&] { where.set_value(std::this_thread::get_id()); }, nullptr), compile_pool::submit_status::queued);
    EXPECT_NE(where.get_future().get(), std::this_thread::get_id());
}

TEST(compile_pool, the_queue_is_bounded_and_counted) {
    compile_pool pool(2, 1);
    gate g;
    std::atomic<int> ran{0};
    auto held = [&] {
        g.wait();
        ++ran;
    };
    for (int i = 0; i < 3; ++i) ASSERT_EQ(pool.submit(held, nullptr), compile_pool::submit_status::queued) << i;
    wait_for([&] { return pool.running() == 2; });
    EXPECT_EQ(pool.running(), 2u);
    EXPECT_EQ(pool.waiting(), 1u);
    EXPECT_EQ(pool.submit(held, nullptr), compile_pool::submit_status::full);
    g.open();
    wait_for([&] { return ran == 3 && pool.running() == 0; });
    EXPECT_EQ(ran, 3);
    EXPECT_EQ(pool.waiting(), 0u);
    EXPECT_EQ(pool.running(), 0u);
    EXPECT_EQ(pool.submit([] {}, nullptr), compile_pool::submit_status::queued) << "room again";
}

TEST(compile_pool, stop_refuses_what_has_not_started_and_finishes_what_runs) {
    auto pool = std::make_unique<compile_pool>(1, 4);
    gate g;
    std::atomic<int> ran{0}, refused{0};
    ASSERT_EQ(pool->submit([&] { g.wait(); ++ran; }, [&] { ++refused; }), compile_pool::submit_status::queued);
    wait_for([&] { return pool->running() == 1; });
    for (int i = 0; i < 3; ++i) pool->submit([&] { ++ran; }, [&] { ++refused; });
    std::thread stopper([&] { pool->stop(); });
    wait_for([&] { return refused == 3; });
    EXPECT_EQ(refused, 3) << "queued jobs are refused at once, while one still runs";
    EXPECT_EQ(ran, 0);
    g.open();
    stopper.join();
    EXPECT_EQ(ran, 1);
    EXPECT_EQ(pool->submit([&] { ++ran; }, [&] { ++refused; }), compile_pool::submit_status::stopped);
    pool->stop();  // again: nothing happens
    pool.reset();
    EXPECT_EQ(ran, 1);
    EXPECT_EQ(refused, 3);
}

TEST(compile_pool, exceptions_stay_in_the_pool) {
    compile_pool pool(1, 4);
    pool.submit([] { throw std::runtime_error("boom"); }, nullptr);
    pool.submit([] { throw 42; }, nullptr);
    std::promise<void> after;
    pool.submit([&] { after.set_value(); }, nullptr);
    after.get_future().wait();
    EXPECT_EQ(pool.failures(), 2u);
}
