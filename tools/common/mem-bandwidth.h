// tools/common/mem-bandwidth.h — the machine's memory read bandwidth: the ceiling of a
// memory-bound kernel (token generation streams every weight once per token).
//
// Usage:
//   double gbps = mem_read_bandwidth_gbps(2);          // 1 GiB buffer, 2 threads, median of 5
//   mem_bandwidth_probe probe(64 << 20);                // or keep one buffer for many probes
//   double g1 = probe.measure_gbps(1, 3), g2 = probe.measure_gbps(2, 3);
//
// The probe allocates a buffer (4 KiB pages, like the CPU backend's buffers) and writes every
// page once, so the timed passes read memory that is already mapped. One pass splits the buffer
// in n_threads contiguous parts (each a multiple of 256 bytes) and reads each part on its own
// thread with the widest loads the CPU has (512-bit with AVX-512F, 256-bit with AVX2, else
// 128-bit SSE2), xor-folding them into a checksum so the reads cannot be elided.
// measure_gbps runs one untimed pass, then `passes` timed ones, and returns the median in GB/s
// (1e9 bytes per second). Errors: the constructor throws std::bad_alloc when the buffer cannot
// be allocated; n_threads < 1 counts as 1 and passes < 1 as 1.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

constexpr size_t mem_bandwidth_default_bytes = size_t(1) << 30;

class mem_bandwidth_probe {
public:
    // bytes is rounded up to a multiple of 4096 (at least 4096).
    explicit mem_bandwidth_probe(size_t bytes = mem_bandwidth_default_bytes);
    ~mem_bandwidth_probe();
    mem_bandwidth_probe(const mem_bandwidth_probe &) = delete;
    mem_bandwidth_probe & operator=(const mem_bandwidth_probe &) = delete;

    size_t bytes() const { return bytes_; }
    // Bytes one pass with n_threads reads (bytes() rounded down to n_threads parts of 256 bytes).
    size_t pass_bytes(int n_threads) const;
    // "avx512", "avx2" or "sse2": the loads the passes use.
    const char * read_path() const;
    // One pass over the buffer; returns the checksum.
    uint64_t pass(int n_threads);
    // Median GB/s of `passes` timed passes after one untimed pass.
    double measure_gbps(int n_threads, int passes = 5);

private:
    struct impl;
    std::unique_ptr<impl> impl_;
    size_t bytes_ = 0;
};

// A probe of its own (a buffer of `bytes`), measured once: median GB/s of `passes` passes.
double mem_read_bandwidth_gbps(int n_threads, int passes = 5, size_t bytes = mem_bandwidth_default_bytes);
