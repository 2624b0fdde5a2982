// tests/ggml/test-threadpool.cpp — stress tests of ggml_cpu_threadpool: run hand-off, barrier,
// memory visibility, sleeping workers, construction and destruction.
//
// Shared data written between barriers is plain (non-atomic) on purpose: it is only race-free
// when run() and barrier() order memory correctly, which ThreadSanitizer checks.
#include "cpu/threadpool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

namespace {

struct alignas(64) padded_i64 {
    int64_t value = 0;
};

// Every thread writes its phase number into its slot of one of two alternating arrays, passes
// the barrier and checks every slot of that array: a thread passing a barrier before all have
// arrived sees an old value. The next phase writes the other array, so no slot is written while
// another thread may still read it (the barrier in between orders them).
void run_barrier_phases(ggml_cpu_threadpool & pool, int n_threads, int n_phases,
                        std::vector<padded_i64> (&slots)[2], std::vector<padded_i64> & work,
                        std::atomic<int> & errors) {
    pool.run(n_threads, [&](int ith, int nth) {
        int local_errors = 0;
        for (int phase = 0; phase < n_phases; ++phase) {
            std::vector<padded_i64> & cur = slots[phase % 2];
            cur[size_t(ith)].value = phase;
            work[size_t(ith)].value += 1;
            pool.barrier(nth);
            for (int j = 0; j < nth; ++j) {
                local_errors += cur[size_t(j)].value != phase;
            }
        }
        if (local_errors != 0) {
            errors.fetch_add(local_errors, std::memory_order_relaxed);
        }
    });
}

void check_barrier_stress(int n_threads, int n_runs, int n_phases) {
    ggml_cpu_threadpool pool(n_threads);
    ASSERT_EQ(pool.max_threads(), n_threads);
    std::vector<padded_i64> slots[2] = {std::vector<padded_i64>(size_t(n_threads)),
                                        std::vector<padded_i64>(size_t(n_threads))};
    std::vector<padded_i64> work(static_cast<size_t>(n_threads));
    std::atomic<int> errors{0};
    for (int r = 0; r < n_runs; ++r) {
        run_barrier_phases(pool, n_threads, n_phases, slots, work, errors);
        // Everything the workers wrote is visible to the caller once run() returned.
        for (int i = 0; i < n_threads; ++i) {
            ASSERT_EQ(work[size_t(i)].value, int64_t(r + 1) * n_phases) << "thread " << i;
        }
    }
    EXPECT_EQ(errors.load(), 0) << "threads passed a barrier before all arrived";
}

// Sums f(i) = 3i + 1 over [0, n) with chunks claimed from an atomic counter, marking every
// element claimed; returns the total. Marks are plain writes read by the caller after run().
int64_t sum_by_chunks(ggml_cpu_threadpool & pool, int n_threads, int64_t n, int64_t chunk,
                      std::vector<uint8_t> & marks, int & observed_nth) {
    std::atomic<int64_t> next{0};
    std::atomic<int64_t> total{0};
    pool.run(n_threads, [&](int ith, int nth) {
        if (ith == 0) {
            observed_nth = nth;
        }
        int64_t local = 0;
        for (;;) {
            const int64_t begin = next.fetch_add(chunk, std::memory_order_relaxed);
            if (begin >= n) {
                break;
            }
            const int64_t end = begin + chunk < n ? begin + chunk : n;
            for (int64_t i = begin; i < end; ++i) {
                marks[size_t(i)] += 1;
                local += 3 * i + 1;
            }
        }
        total.fetch_add(local, std::memory_order_relaxed);
    });
    return total.load();
}

// Records, per run, which ith values were called, with which nth and on which thread.
struct run_record {
    std::vector<int> calls;
    std::vector<int> nth_seen;
    std::vector<std::thread::id> ids;
};

void record_run(ggml_cpu_threadpool & pool, int n_threads, run_record & rec) {
    const int max = pool.max_threads();
    rec.calls.assign(size_t(max), 0);
    rec.nth_seen.assign(size_t(max), -1);
    rec.ids.assign(size_t(max), std::thread::id());
    pool.run(n_threads, [&](int ith, int nth) {
        rec.calls[size_t(ith)] += 1;
        rec.nth_seen[size_t(ith)] = nth;
        rec.ids[size_t(ith)] = std::this_thread::get_id();
        pool.barrier(nth);  // barrier with the run's own size, whatever the pool's size
        pool.barrier(nth);
    });
}

int expected_nth(int requested, int max) {
    return requested < 1 ? 1 : (requested > max ? max : requested);
}

}  // namespace

TEST(threadpool, barrier_stress_one_to_eight_threads) {
    for (int n = 1; n <= 8; ++n) {
        SCOPED_TRACE(testing::Message() << "threads " << n);
        check_barrier_stress(n, 100, 1000);
    }
}

TEST(threadpool, barrier_stress_many_short_runs) {
    check_barrier_stress(4, 3000, 3);
}

TEST(threadpool, chunked_sum_is_exact) {
    ggml_cpu_threadpool pool(6);
    const int64_t n = 100003;  // odd size: the last chunk is partial
    const int64_t expected = 3 * (n * (n - 1) / 2) + n;
    for (int r = 0; r < 60; ++r) {
        const int n_threads = 1 + r % 6;
        const int64_t chunk = int64_t(1) + (r * 37) % 500;
        std::vector<uint8_t> marks(size_t(n), 0);
        int observed_nth = 0;
        ASSERT_EQ(sum_by_chunks(pool, n_threads, n, chunk, marks, observed_nth), expected)
            << "run " << r;
        EXPECT_EQ(observed_nth, n_threads);
        int64_t bad = 0;
        for (uint8_t m : marks) {
            bad += m != 1;
        }
        ASSERT_EQ(bad, 0) << "elements not claimed exactly once, run " << r;
    }
}

TEST(threadpool, smaller_and_alternating_run_sizes) {
    ggml_cpu_threadpool pool(8);
    const int sizes[] = {8, 1, 3, 8, 2, 7, 5, 8, 4, 6, 1, 8, 12, 0, -3, 2, 8};
    run_record first;
    record_run(pool, 8, first);
    const std::thread::id caller = std::this_thread::get_id();
    ASSERT_EQ(first.ids[0], caller);
    for (int i = 1; i < 8; ++i) {
        ASSERT_NE(first.ids[size_t(i)], caller);
        for (int j = 1; j < i; ++j) {
            ASSERT_NE(first.ids[size_t(i)], first.ids[size_t(j)]);
        }
    }
    for (int rep = 0; rep < 40; ++rep) {
        for (int requested : sizes) {
            const int nth = expected_nth(requested, 8);
            run_record rec;
            record_run(pool, requested, rec);
            for (int i = 0; i < 8; ++i) {
                SCOPED_TRACE(testing::Message() << "requested " << requested << " ith " << i);
                ASSERT_EQ(rec.calls[size_t(i)], i < nth ? 1 : 0);
                if (i < nth) {
                    ASSERT_EQ(rec.nth_seen[size_t(i)], nth);
                    ASSERT_EQ(rec.ids[size_t(i)], first.ids[size_t(i)]);  // workers persist
                }
            }
        }
    }
}

TEST(threadpool, runs_after_workers_went_to_sleep) {
    for (int spin_us : {0, 50, 300}) {
        SCOPED_TRACE(testing::Message() << "spin_us " << spin_us);
        ggml_cpu_threadpool pool(4, spin_us);
        std::vector<padded_i64> slots[2] = {std::vector<padded_i64>(4), std::vector<padded_i64>(4)};
        std::vector<padded_i64> work(4);
        std::atomic<int> errors{0};
        for (int r = 0; r < 12; ++r) {
            // Longer than the spin time: the workers are asleep when the next run comes.
            std::this_thread::sleep_for(std::chrono::microseconds(spin_us + 2000));
            const int n_threads = r % 3 == 2 ? 2 : 4;
            for (auto & w : work) {
                w.value = 0;
            }
            run_barrier_phases(pool, n_threads, 50, slots, work, errors);
            for (int i = 0; i < 4; ++i) {
                ASSERT_EQ(work[size_t(i)].value, i < n_threads ? 50 : 0) << "run " << r;
            }
        }
        EXPECT_EQ(errors.load(), 0);
    }
}

TEST(threadpool, caller_writes_visible_to_workers) {
    ggml_cpu_threadpool pool(5);
    std::vector<int64_t> input(5 * 64);
    std::vector<int64_t> output(5, 0);
    for (int r = 0; r < 200; ++r) {
        for (size_t k = 0; k < input.size(); ++k) {
            input[k] = int64_t(k) * r;  // plain writes before run()
        }
        pool.run(5, [&](int ith, int) {
            int64_t s = 0;
            for (size_t k = size_t(ith) * 64; k < size_t(ith + 1) * 64; ++k) {
                s += input[k];
            }
            output[size_t(ith)] = s;
        });
        for (int i = 0; i < 5; ++i) {
            const int64_t lo = int64_t(i) * 64;
            const int64_t expected = r * (64 * lo + 64 * 63 / 2);
            ASSERT_EQ(output[size_t(i)], expected) << "run " << r << " thread " << i;
        }
    }
}

TEST(threadpool, construct_and_destroy_repeatedly) {
    for (int k = 0; k < 100; ++k) {
        ggml_cpu_threadpool pool(1 + k % 8);  // destroyed right after construction
    }
    for (int k = 0; k < 60; ++k) {
        const int n = 1 + k % 8;
        ggml_cpu_threadpool pool(n, k % 2 == 0 ? 0 : 100000);  // asleep, or still spinning
        std::atomic<int> calls{0};
        pool.run(n, [&](int, int nth) {
            calls.fetch_add(1, std::memory_order_relaxed);
            pool.barrier(nth);
        });
        EXPECT_EQ(calls.load(), n);
        if (k % 6 == 0) {
            std::this_thread::sleep_for(std::chrono::milliseconds(1));  // workers fall asleep
        }
    }
}

TEST(threadpool, thread_count_is_clamped) {
    ggml_cpu_threadpool none(0);
    EXPECT_EQ(none.max_threads(), 1);
    int calls = 0;
    none.run(4, [&](int ith, int nth) {
        EXPECT_EQ(ith, 0);
        EXPECT_EQ(nth, 1);
        none.barrier(nth);
        ++calls;
    });
    EXPECT_EQ(calls, 1);
}
