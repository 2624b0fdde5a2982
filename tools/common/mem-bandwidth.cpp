// The memory read-bandwidth probe (see mem-bandwidth.h).
#include "mem-bandwidth.h"

#include "ggml/cpu.h"

// GCC 12's intrinsic headers trip -Wuninitialized where inlined (GCC bug 105593).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <new>
#include <thread>
#include <vector>

namespace {

constexpr size_t k_page = 4096;
constexpr size_t k_part_align = 256;  // the widest loop reads 256 bytes per step
// Software prefetch this far ahead, as the mat-vec kernels do: the hardware prefetcher alone
// leaves a part of this machine's bandwidth unused (measured: ~46 instead of ~55 GB/s).
constexpr size_t k_prefetch = 4096;

__attribute__((target("avx512f"))) uint64_t read_avx512(const uint8_t * p, size_t n) {
    __m512i a0 = _mm512_setzero_si512(), a1 = a0, a2 = a0, a3 = a0;
    for (size_t i = 0; i + 256 <= n; i += 256) {
        for (size_t l = 0; l < 256; l += 64) _mm_prefetch(reinterpret_cast<const char *>(p + i + k_prefetch + l), _MM_HINT_T0);
        a0 = _mm512_xor_si512(a0, _mm512_load_si512(p + i));
        a1 = _mm512_xor_si512(a1, _mm512_load_si512(p + i + 64));
        a2 = _mm512_xor_si512(a2, _mm512_load_si512(p + i + 128));
        a3 = _mm512_xor_si512(a3, _mm512_load_si512(p + i + 192));
    }
    const __m512i x = _mm512_xor_si512(_mm512_xor_si512(a0, a1), _mm512_xor_si512(a2, a3));
    return uint64_t(_mm512_reduce_add_epi64(x));
}

__attribute__((target("avx2"))) uint64_t read_avx2(const uint8_t * p, size_t n) {
    __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
    for (size_t i = 0; i + 128 <= n; i += 128) {
        _mm_prefetch(reinterpret_cast<const char *>(p + i + k_prefetch), _MM_HINT_T0);
        _mm_prefetch(reinterpret_cast<const char *>(p + i + k_prefetch + 64), _MM_HINT_T0);
        a0 = _mm256_xor_si256(a0, _mm256_load_si256(reinterpret_cast<const __m256i *>(p + i)));
        a1 = _mm256_xor_si256(a1, _mm256_load_si256(reinterpret_cast<const __m256i *>(p + i + 32)));
        a2 = _mm256_xor_si256(a2, _mm256_load_si256(reinterpret_cast<const __m256i *>(p + i + 64)));
        a3 = _mm256_xor_si256(a3, _mm256_load_si256(reinterpret_cast<const __m256i *>(p + i + 96)));
    }
    alignas(32) uint64_t t[4];
    const __m256i x = _mm256_xor_si256(_mm256_xor_si256(a0, a1), _mm256_xor_si256(a2, a3));
    _mm256_store_si256(reinterpret_cast<__m256i *>(t), x);
    return t[0] ^ t[1] ^ t[2] ^ t[3];
}

uint64_t read_sse2(const uint8_t * p, size_t n) {
    __m128i a0 = _mm_setzero_si128(), a1 = a0, a2 = a0, a3 = a0;
    for (size_t i = 0; i + 64 <= n; i += 64) {
        _mm_prefetch(reinterpret_cast<const char *>(p + i + k_prefetch), _MM_HINT_T0);
        a0 = _mm_xor_si128(a0, _mm_load_si128(reinterpret_cast<const __m128i *>(p + i)));
        a1 = _mm_xor_si128(a1, _mm_load_si128(reinterpret_cast<const __m128i *>(p + i + 16)));
        a2 = _mm_xor_si128(a2, _mm_load_si128(reinterpret_cast<const __m128i *>(p + i + 32)));
        a3 = _mm_xor_si128(a3, _mm_load_si128(reinterpret_cast<const __m128i *>(p + i + 48)));
    }
    alignas(16) uint64_t t[2];
    _mm_store_si128(reinterpret_cast<__m128i *>(t), _mm_xor_si128(_mm_xor_si128(a0, a1), _mm_xor_si128(a2, a3)));
    return t[0] ^ t[1];
}

using read_fn = uint64_t (*)(const uint8_t *, size_t);

struct read_choice {
    read_fn fn;
    const char * name;
};

read_choice widest_read() {
    const ggml_cpu_features f = ggml_cpu_detect_features();
    if (f.avx512f) return {read_avx512, "avx512"};
    if (f.avx2) return {read_avx2, "avx2"};
    return {read_sse2, "sse2"};
}

struct aligned_free {
    void operator()(uint8_t * p) const { std::free(p); }
};

}  // namespace

struct mem_bandwidth_probe::impl {
    std::unique_ptr<uint8_t, aligned_free> buf;
    read_choice read = widest_read();
};

mem_bandwidth_probe::mem_bandwidth_probe(size_t bytes) : impl_(std::make_unique<impl>()) {
    bytes_ = std::max(k_page, (bytes + k_page - 1) / k_page * k_page);
    impl_->buf.reset(static_cast<uint8_t *>(std::aligned_alloc(k_page, bytes_)));
    if (!impl_->buf) throw std::bad_alloc();
    // Touch every page once (a different byte per page) so the timed passes read mapped memory.
    for (size_t i = 0; i < bytes_; i += k_page) std::memset(impl_->buf.get() + i, int(i >> 12), k_page);
}

mem_bandwidth_probe::~mem_bandwidth_probe() = default;

size_t mem_bandwidth_probe::pass_bytes(int n_threads) const {
    const size_t nth = size_t(std::max(1, n_threads));
    return bytes_ / nth / k_part_align * k_part_align * nth;
}

const char * mem_bandwidth_probe::read_path() const { return impl_->read.name; }

uint64_t mem_bandwidth_probe::pass(int n_threads) {
    const int nth = std::max(1, n_threads);
    const size_t part = pass_bytes(nth) / size_t(nth);
    const uint8_t * b = impl_->buf.get();
    const read_fn read = impl_->read.fn;
    // One slot per cache line so the threads do not share a line while they write their sums.
    std::vector<uint64_t> sums(size_t(nth) * 8, 0);
    std::vector<std::thread> workers;
    workers.reserve(size_t(nth - 1));
    for (int i = 1; i < nth; ++i) {
        workers.emplace_back([&, i] { sums[size_t(i) * 8] = read(b + part * size_t(i), part); });
    }
    sums[0] = read(b, part);
    for (std::thread & t : workers) t.join();
    uint64_t s = 0;
    for (uint64_t v : sums) s ^= v;
    return s;
}

double mem_bandwidth_probe::measure_gbps(int n_threads, int passes) {
    using clock = std::chrono::steady_clock;
    const int nth = std::max(1, n_threads);
    volatile uint64_t sink = pass(nth);
    std::vector<double> v;
    for (int i = 0; i < std::max(1, passes); ++i) {
        const auto t0 = clock::now();
        sink = sink ^ pass(nth);
        const double secs = std::chrono::duration<double>(clock::now() - t0).count();
        v.push_back(double(pass_bytes(nth)) / std::max(secs, 1e-9) * 1e-9);
    }
    (void)sink;
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

double mem_read_bandwidth_gbps(int n_threads, int passes, size_t bytes) {
    mem_bandwidth_probe probe(bytes);
    return probe.measure_gbps(n_threads, passes);
}
