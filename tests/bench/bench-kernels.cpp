// inferd-kernel-bench: CPU kernel speed, measured through the real CPU backend (a graph with one
// MUL_MAT computed by ggml_backend_cpu_init's executor), next to the machine's read bandwidth.
//
//   inferd-kernel-bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
//   inferd-kernel-bench --benchmark_filter='mem_read|mat_vec'
//
// Benchmarks (all real time; threads = the backend's or the probe's thread count):
//   mem_read/threads      a 1 GiB buffer read with 512-bit (or 256/128-bit) loads: the ceiling
//                         that a memory-bound kernel can reach. GB/s.
//   mat_vec_cold/...      y = W x with N = 1 (or 4), cycling over enough copies of W (>= 256 MiB in all)
//                         that W never sits in the 32 MiB L3: the honest generation figure.
//                         GB/s of weights streamed, GFLOP/s, probe_GB/s = mem_read with the same
//                         threads measured just before and after (the bandwidth a VM gets drifts
//                         with its neighbours), and bw_ratio = GB/s / probe_GB/s.
//   mat_vec_warm/...      the same matrix every time (cache-resident where it fits).
//   mat_mat/...           N > 1 (prompt processing): GFLOP/s (for quantized weights: GOP/s,
//                         2 * M * K * N integer and float operations per second alike).
// Arguments of mat_*: type (the ggml_type id: 0 F32, 1 F16, 30 BF16, 2 Q4_0, 3 Q4_1, 6 Q5_0,
// 7 Q5_1, 8 Q8_0, 10 Q2_K … 14 Q6_K), M (rows of W), K, N, threads. The quantized types run
// the shapes of the bar: mat-vec 4096 x 4096 (N = 1) and mat-mat 4096 x 4096 x 512;
// their weights are quantized with the reference (round-to-nearest) quantizers.
//   inferd-kernel-bench --benchmark_filter='mat_vec_cold/type:12/' --benchmark_repetitions=5
#include "cpu/threadpool.h"
#include "ggml/backend.h"
#include "ggml/cpu.h"
#include "ggml/ggml.h"

#include <benchmark/benchmark.h>
// GCC 12's intrinsic headers trip -Wuninitialized where inlined (GCC bug 105593).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <vector>

namespace {

using bench_clock = std::chrono::steady_clock;

// ---- memory read-bandwidth probe ----

constexpr size_t k_probe_bytes = size_t(1) << 30;
constexpr size_t k_cold_bytes = size_t(256) << 20;  // weights cycled by mat_vec_cold, at least

struct aligned_free {
    void operator()(void * p) const { std::free(p); }
};

__attribute__((target("avx512f"))) uint64_t read_avx512(const uint8_t * p, size_t n) {
    __m512i a0 = _mm512_setzero_si512(), a1 = a0, a2 = a0, a3 = a0;
    for (size_t i = 0; i + 256 <= n; i += 256) {
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

read_fn widest_read() {
    const ggml_cpu_features f = ggml_cpu_detect_features();
    if (f.avx512f) return read_avx512;
    if (f.avx2) return read_avx2;
    return read_sse2;
}

// The probe's buffer (touched once, 4 KiB pages like the backend's buffers) and thread pools.
struct probe_state {
    std::unique_ptr<uint8_t, aligned_free> buf;
    std::map<int, std::unique_ptr<ggml_cpu_threadpool>> pools;
    read_fn read = widest_read();

    uint8_t * buffer() {
        if (!buf) {
            buf.reset(static_cast<uint8_t *>(std::aligned_alloc(4096, k_probe_bytes)));
            for (size_t i = 0; i < k_probe_bytes; i += 4096) std::memset(buf.get() + i, int(i >> 12), 4096);
        }
        return buf.get();
    }
    ggml_cpu_threadpool & pool(int nth) {
        auto & p = pools[nth];
        if (!p) p = std::make_unique<ggml_cpu_threadpool>(nth);
        return *p;
    }
    // One pass over the buffer, split in nth contiguous parts; returns the checksum.
    uint64_t pass(int nth) {
        const uint8_t * b = buffer();
        std::vector<uint64_t> sums(size_t(nth) * 8, 0);
        pool(nth).run(nth, [&](int ith, int n) {
            const size_t part = k_probe_bytes / size_t(n) / 256 * 256;
            sums[size_t(ith) * 8] = read(b + part * size_t(ith), part);
        });
        uint64_t s = 0;
        for (uint64_t v : sums) s ^= v;
        return s;
    }
    // Median of `passes` timed passes (after one untimed), in GB/s.
    double measure_gbps(int nth, int passes) {
        pass(nth);
        std::vector<double> v;
        for (int i = 0; i < passes; ++i) {
            const auto t0 = bench_clock::now();
            benchmark::DoNotOptimize(pass(nth));
            v.push_back(double(k_probe_bytes) / std::chrono::duration<double>(bench_clock::now() - t0).count() * 1e-9);
        }
        std::sort(v.begin(), v.end());
        return v[v.size() / 2];
    }
};

probe_state & probe() {
    static probe_state s;
    return s;
}

void BM_mem_read(benchmark::State & state) {
    const int nth = int(state.range(0));
    probe_state & pr = probe();
    pr.pass(nth);
    for (auto _ : state) benchmark::DoNotOptimize(pr.pass(nth));
    state.counters["GB/s"] =
        benchmark::Counter(double(k_probe_bytes) * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

// ---- MUL_MAT through the CPU backend ----

// n_copies graphs y_i = W_i x (W_i: [K, M] of type t, x: [K, N] F32), all in one buffer.
struct mm_setup {
    ggml_type type = GGML_TYPE_F32;
    int64_t m = 0, k = 0, n = 0;
    int n_copies = 0;
    ggml_context_ptr ctx;
    ggml_backend_buffer_ptr buf;
    std::vector<ggml_cgraph *> graphs;

    bool same(ggml_type t, int64_t m_, int64_t k_, int64_t n_, int c) const {
        return ctx && type == t && m == m_ && k == k_ && n == n_ && n_copies == c;
    }
};

// Uniform values in [-1, 1) of type t, n of them.
std::vector<uint8_t> random_row(ggml_type t, int64_t n, uint64_t seed) {
    std::vector<float> f(static_cast<size_t>(n));
    for (auto & v : f) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        v = float(int64_t(seed >> 40) - (int64_t(1) << 23)) / float(1 << 23);
    }
    std::vector<uint8_t> out(ggml_row_size(t, n));
    ggml_get_type_traits(t).from_float(f.data(), out.data(), n);
    return out;
}

// Fills t with a block of random rows repeated (the values do not matter for speed, only that
// they are ordinary numbers).
void fill_tensor(ggml_tensor * t, uint64_t seed) {
    const int64_t block_rows = std::min<int64_t>(t->ne[1], 64);
    const std::vector<uint8_t> block = random_row(t->type, t->ne[0] * block_rows, seed);
    const size_t total = ggml_nbytes(t);
    for (size_t off = 0; off < total; off += block.size()) {
        ggml_backend_tensor_set(t, block.data(), off, std::min(block.size(), total - off));
    }
}

mm_setup & setup_for(ggml_type t, int64_t m, int64_t k, int64_t n, int n_copies) {
    static mm_setup s;
    if (s.same(t, m, k, n, n_copies)) return s;
    s = mm_setup();  // free the previous one first
    s.type = t;
    s.m = m;
    s.k = k;
    s.n = n;
    s.n_copies = n_copies;
    ggml_init_params ip;
    ip.mem_size = size_t(2 * n_copies + 1) * ggml_tensor_overhead() + size_t(n_copies) * ggml_graph_overhead();
    ip.no_alloc = true;
    s.ctx.reset(ggml_init(ip));
    ggml_tensor * x = ggml_new_tensor_2d(s.ctx.get(), GGML_TYPE_F32, k, n);  // [K, N]
    std::vector<ggml_tensor *> ws;
    for (int i = 0; i < n_copies; ++i) {
        ggml_tensor * w = ggml_new_tensor_2d(s.ctx.get(), t, k, m);  // [K, M]
        ggml_tensor * y = ggml_mul_mat(s.ctx.get(), w, x);             // [M, N]
        ggml_set_output(y);
        ggml_cgraph * gf = ggml_new_graph(s.ctx.get());
        ggml_build_forward_expand(gf, y);
        s.graphs.push_back(gf);
        ws.push_back(w);
    }
    s.buf = ggml_backend_alloc_ctx_tensors(s.ctx.get(), ggml_backend_cpu_buffer_type());
    if (!s.buf) return s;
    fill_tensor(x, 1);
    for (size_t i = 0; i < ws.size(); ++i) fill_tensor(ws[i], 100 + i);
    return s;
}

ggml_backend_i * backend_for(int n_threads) {
    static std::map<int, ggml_backend_ptr> list;
    auto & b = list[n_threads];
    if (!b) {
        ggml_cpu_backend_options opt;
        opt.n_threads = n_threads;
        b = ggml_backend_cpu_init(opt);
    }
    return b.get();
}

enum class mm_mode { cold, warm, compute };

void run_mul_mat(benchmark::State & state, mm_mode mode) {
    const ggml_type t = ggml_type(state.range(0));
    const int64_t m = state.range(1), k = state.range(2), n = state.range(3);
    const int nth = int(state.range(4));
    const size_t w_bytes = ggml_row_size(t, k) * size_t(m);
    const int copies = mode == mm_mode::cold ? int(std::max<size_t>(2, (k_cold_bytes + w_bytes - 1) / w_bytes + 1)) : 1;
    mm_setup & s = setup_for(t, m, k, n, copies);
    if (!s.buf) {
        state.SkipWithError("out of memory");
        return;
    }
    ggml_backend_i * be = backend_for(nth);
    for (ggml_cgraph * gf : s.graphs) be->graph_compute(gf);  // warm-up: page-in, work buffer
    // The bandwidth this VM gets drifts with its neighbours: probe it right before and after.
    const bool streams = mode != mm_mode::compute;
    const double probe_before = streams ? probe().measure_gbps(nth, 3) : 0.0;
    size_t i = 0, iters = 0;
    const auto t0 = bench_clock::now();
    for (auto _ : state) {
        if (be->graph_compute(s.graphs[i]) != GGML_STATUS_SUCCESS) {
            state.SkipWithError("graph_compute failed");
            return;
        }
        i = (i + 1) % s.graphs.size();
        ++iters;
    }
    const double secs = std::chrono::duration<double>(bench_clock::now() - t0).count();
    state.counters["GB/s"] = benchmark::Counter(double(w_bytes) * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
    state.counters["GFLOP/s"] =
        benchmark::Counter(2.0 * double(m) * double(k) * double(n) * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
    if (streams && secs > 0) {
        const double probe_gbps = 0.5 * (probe_before + probe().measure_gbps(nth, 3));
        state.counters["probe_GB/s"] = probe_gbps;
        state.counters["bw_ratio"] = double(w_bytes) * double(iters) / secs * 1e-9 / probe_gbps;
    }
    state.SetLabel(std::string(ggml_type_name(t)) + (copies > 1 ? " x" + std::to_string(copies) + " copies" : ""));
}

void BM_mat_vec_cold(benchmark::State & state) { run_mul_mat(state, mm_mode::cold); }
void BM_mat_vec_warm(benchmark::State & state) { run_mul_mat(state, mm_mode::warm); }
void BM_mat_mat(benchmark::State & state) { run_mul_mat(state, mm_mode::compute); }

const int64_t k_types[] = {GGML_TYPE_F32, GGML_TYPE_F16, GGML_TYPE_BF16};
const int64_t k_quant_types[] = {GGML_TYPE_Q4_0, GGML_TYPE_Q4_1, GGML_TYPE_Q5_0, GGML_TYPE_Q5_1, GGML_TYPE_Q8_0,
                                 GGML_TYPE_Q2_K, GGML_TYPE_Q3_K, GGML_TYPE_Q4_K, GGML_TYPE_Q5_K, GGML_TYPE_Q6_K};

void args_mat_vec(benchmark::internal::Benchmark * b) {
    b->ArgNames({"type", "M", "K", "N", "threads"});
    // M x K x N: square, FFN up/gate, FFN down, and 4 sequences generating together
    const int64_t shapes[][3] = {{4096, 4096, 1}, {11008, 4096, 1}, {4096, 11008, 1}, {4096, 4096, 4}};
    for (int64_t t : k_types)
        for (const auto & s : shapes)
            for (int64_t nth : {1, 2}) b->Args({t, s[0], s[1], s[2], nth});
    for (int64_t t : k_quant_types)
        for (int64_t nth : {1, 2}) b->Args({t, 4096, 4096, 1, nth});
}

void args_mat_mat(benchmark::internal::Benchmark * b) {
    b->ArgNames({"type", "M", "K", "N", "threads"});
    const int64_t shapes[][3] = {{4096, 4096, 512}, {4096, 4096, 64}, {11008, 4096, 128}};
    for (int64_t t : k_types)
        for (const auto & s : shapes)
            for (int64_t nth : {1, 2}) b->Args({t, s[0], s[1], s[2], nth});
    for (int64_t t : k_quant_types)
        for (int64_t nth : {1, 2}) b->Args({t, 4096, 4096, 512, nth});
}

BENCHMARK(BM_mem_read)->ArgName("threads")->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_mat_vec_cold)->Apply(args_mat_vec)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_mat_vec_warm)->Apply(args_mat_vec)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_mat_mat)->Apply(args_mat_mat)->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
