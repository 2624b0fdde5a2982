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
//   Weights of the types with a repacked layout (Q4_0, Q4_1, Q5_0, Q8_0, Q2_K … Q6_K,
//   IQ4_NL, IQ4_XS, MXFP4) sit in the CPU's repack buffer type, as the engine loads them;
//   INFERD_NO_REPACK=1 keeps them in a plain CPU buffer.
//   mat_mat/...           N > 1 (prompt processing): GFLOP/s (for quantized weights: GOP/s,
//                         2 * M * K * N integer and float operations per second alike).
// Arguments of mat_*: type (the ggml_type id: 0 F32, 1 F16, 30 BF16, 2 Q4_0, 3 Q4_1, 6 Q5_0,
// 7 Q5_1, 8 Q8_0, 10 Q2_K … 14 Q6_K, 20 IQ4_NL, 23 IQ4_XS, 39 MXFP4), M (rows of W), K, N,
// threads. The quantized types run the shapes of the README's figures: mat-vec 4096 x 4096 (N = 1)
// and mat-mat 4096 x 4096 x 512;
// their weights are quantized with the reference (round-to-nearest) quantizers.
//   inferd-kernel-bench --benchmark_filter='mat_vec_cold/type:12/' --benchmark_repetitions=5
//   mul_mat_id/...        a mixture-of-experts layer (MUL_MAT_ID) shaped like Qwen3-30B-A3B's,
//                         scaled to this machine: 64 experts of [K, M], 8 used per token, copies
//                         cycled (>= 256 MiB in all) so that experts are read from memory. With
//                         one token (decode; new random experts every call): GB/s of the ACTIVE
//                         weights (the 8 chosen experts' bytes per call), probe_GB/s and bw_ratio
//                         as for mat_vec_cold. With 512 tokens (prompt, random routing): GOP/s.
//                         Arguments: type, M, K, experts, used, tokens, n_b (1: every slot sees
//                         the same input, as gate/up; else n_b == used, as down), threads.
//   inferd-kernel-bench --benchmark_filter='mem_read|mul_mat_id' --benchmark_repetitions=5
#include "ggml/backend.h"
#include "ggml/cpu.h"
#include "ggml/ggml.h"
#include "mem-bandwidth.h"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>
#include <vector>

namespace {

using bench_clock = std::chrono::steady_clock;

// ---- memory read-bandwidth probe (tools/common/mem-bandwidth.h) ----

constexpr size_t k_cold_bytes = size_t(256) << 20;  // weights cycled by mat_vec_cold, at least

mem_bandwidth_probe & probe() {
    static mem_bandwidth_probe s;  // 1 GiB, touched once
    return s;
}

void BM_mem_read(benchmark::State & state) {
    const int nth = int(state.range(0));
    mem_bandwidth_probe & pr = probe();
    pr.pass(nth);
    for (auto _ : state) benchmark::DoNotOptimize(pr.pass(nth));
    state.counters["GB/s"] =
        benchmark::Counter(double(pr.pass_bytes(nth)) * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

// ---- MUL_MAT through the CPU backend ----

// n_copies graphs y_i = W_i x (W_i: [K, M] of type t, x: [K, N] F32), all in one buffer.
struct mm_setup {
    ggml_type type = GGML_TYPE_F32;
    int64_t m = 0, k = 0, n = 0;
    int n_copies = 0;
    ggml_context_ptr ctx, ctx_w;          // activations and results; weights
    ggml_backend_buffer_ptr buf, buf_w;
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
    std::vector<uint8_t> whole(total);  // one set_tensor: a repack buffer repacks whole tensors
    for (size_t off = 0; off < total; off += block.size()) {
        std::memcpy(whole.data() + off, block.data(), std::min(block.size(), total - off));
    }
    ggml_backend_tensor_set(t, whole.data(), 0, total);
}

// The weights' buffer type: the CPU's repack buffer type unless INFERD_NO_REPACK=1.
ggml_backend_buffer_type_i * weight_buffer_type() {
    const char * v = std::getenv("INFERD_NO_REPACK");
    const bool off = v && *v && std::string(v) != "0";
    return off ? ggml_backend_cpu_buffer_type() : ggml_backend_cpu_repack_buffer_type();
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
    s.ctx_w.reset(ggml_init(ip));
    ggml_tensor * x = ggml_new_tensor_2d(s.ctx.get(), GGML_TYPE_F32, k, n);  // [K, N]
    std::vector<ggml_tensor *> ws;
    for (int i = 0; i < n_copies; ++i) {
        ggml_tensor * w = ggml_new_tensor_2d(s.ctx_w.get(), t, k, m);  // [K, M]
        ggml_tensor * y = ggml_mul_mat(s.ctx.get(), w, x);             // [M, N]
        ggml_set_output(y);
        ggml_cgraph * gf = ggml_new_graph(s.ctx.get());
        ggml_build_forward_expand(gf, y);
        s.graphs.push_back(gf);
        ws.push_back(w);
    }
    s.buf = ggml_backend_alloc_ctx_tensors(s.ctx.get(), ggml_backend_cpu_buffer_type());
    s.buf_w = ggml_backend_alloc_ctx_tensors(s.ctx_w.get(), weight_buffer_type());
    if (!s.buf || !s.buf_w) {
        s.buf.reset();
        return s;
    }
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

// ---- MUL_MAT_ID (mixture of experts) through the CPU backend ----

struct moe_shape {
    ggml_type type = GGML_TYPE_Q4_K;
    int64_t m = 0, k = 0, n_expert = 0, n_used = 0, n_t = 0, n_b = 0;
    bool operator==(const moe_shape &) const = default;
    size_t expert_bytes() const { return ggml_row_size(type, k) * size_t(m); }
};

// Copies of the layer (as [K, M, n_expert]), each with its own ids [n_used, n_t]; one b.
struct moe_setup {
    moe_shape shape;
    ggml_context_ptr ctx, ctx_w;          // activations and results; weights
    ggml_backend_buffer_ptr buf, buf_w;
    std::vector<ggml_cgraph *> graphs;
    std::vector<ggml_tensor *> ids;
};

// n_used distinct random experts for each of n_t tokens.
std::vector<int32_t> moe_random_ids(const moe_shape & sh, uint64_t & seed) {
    std::vector<int32_t> ids;
    std::vector<int32_t> all(static_cast<size_t>(sh.n_expert));
    for (int64_t t = 0; t < sh.n_t; ++t) {
        for (size_t e = 0; e < all.size(); ++e) all[e] = int32_t(e);
        for (int64_t i = 0; i < sh.n_used; ++i) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            std::swap(all[size_t(i)], all[size_t(i) + size_t((seed >> 33) % uint64_t(sh.n_expert - i))]);
            ids.push_back(all[size_t(i)]);
        }
    }
    return ids;
}

moe_setup & moe_setup_for(const moe_shape & sh) {
    static moe_setup s;
    if (s.ctx && s.shape == sh) return s;
    s = moe_setup();
    s.shape = sh;
    const size_t layer_bytes = sh.expert_bytes() * size_t(sh.n_expert);
    const int copies = int(std::max<size_t>(2, (k_cold_bytes + layer_bytes - 1) / layer_bytes + 1));
    ggml_init_params ip;
    ip.mem_size = size_t(3 * copies + 1) * ggml_tensor_overhead() + size_t(copies) * ggml_graph_overhead();
    ip.no_alloc = true;
    s.ctx.reset(ggml_init(ip));
    ggml_tensor * b = ggml_new_tensor_3d(s.ctx.get(), GGML_TYPE_F32, sh.k, sh.n_b, sh.n_t);
    std::vector<ggml_tensor *> ws;
    for (int i = 0; i < copies; ++i) {
        ggml_tensor * w = ggml_new_tensor_3d(s.ctx.get(), sh.type, sh.k, sh.m, sh.n_expert);
        ggml_tensor * ids = ggml_new_tensor_2d(s.ctx.get(), GGML_TYPE_I32, sh.n_used, sh.n_t);
        ggml_tensor * y = ggml_mul_mat_id(s.ctx.get(), w, b, ids);  // [M, n_used, n_t]
        ggml_set_output(y);
        ggml_cgraph * gf = ggml_new_graph(s.ctx.get());
        ggml_build_forward_expand(gf, y);
        s.graphs.push_back(gf);
        s.ids.push_back(ids);
        ws.push_back(w);
    }
    s.buf = ggml_backend_alloc_ctx_tensors(s.ctx.get(), ggml_backend_cpu_buffer_type());
    if (!s.buf) return s;
    fill_tensor(b, 1);
    uint64_t seed = 7;
    for (size_t i = 0; i < ws.size(); ++i) {
        fill_tensor(ws[i], 100 + i);
        const std::vector<int32_t> ids = moe_random_ids(sh, seed);
        ggml_backend_tensor_set(s.ids[i], ids.data(), 0, ids.size() * sizeof(int32_t));
    }
    return s;
}

void BM_mul_mat_id(benchmark::State & state) {
    moe_shape sh;
    sh.type = ggml_type(state.range(0));
    sh.m = state.range(1);
    sh.k = state.range(2);
    sh.n_expert = state.range(3);
    sh.n_used = state.range(4);
    sh.n_t = state.range(5);
    sh.n_b = state.range(6) == 1 ? 1 : sh.n_used;
    const int nth = int(state.range(7));
    moe_setup & s = moe_setup_for(sh);
    if (!s.buf) {
        state.SkipWithError("out of memory");
        return;
    }
    ggml_backend_i * be = backend_for(nth);
    for (ggml_cgraph * gf : s.graphs) be->graph_compute(gf);  // warm-up: page-in, work buffer
    const bool decode = sh.n_t == 1;
    // decode: fresh experts every call (what generation does), drawn before the timing
    uint64_t seed = 11;
    std::vector<std::vector<int32_t>> id_sets(decode ? 4096 : 0);
    for (auto & v : id_sets) v = moe_random_ids(sh, seed);
    const double probe_before = decode ? probe().measure_gbps(nth, 3) : 0.0;
    size_t i = 0, iters = 0;
    const auto t0 = bench_clock::now();
    for (auto _ : state) {
        if (decode) {
            const std::vector<int32_t> & ids = id_sets[iters % id_sets.size()];
            ggml_backend_tensor_set(s.ids[i], ids.data(), 0, ids.size() * sizeof(int32_t));
        }
        if (be->graph_compute(s.graphs[i]) != GGML_STATUS_SUCCESS) {
            state.SkipWithError("graph_compute failed");
            return;
        }
        i = (i + 1) % s.graphs.size();
        ++iters;
    }
    const double secs = std::chrono::duration<double>(bench_clock::now() - t0).count();
    const double ops = 2.0 * double(sh.m) * double(sh.k) * double(sh.n_used * sh.n_t);
    state.counters["GOP/s"] = benchmark::Counter(ops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
    if (decode && secs > 0) {
        const double active = double(sh.expert_bytes()) * double(sh.n_used);  // distinct experts
        const double gbps = active * double(iters) / secs * 1e-9;
        const double probe_gbps = 0.5 * (probe_before + probe().measure_gbps(nth, 3));
        state.counters["GB/s"] = gbps;
        state.counters["probe_GB/s"] = probe_gbps;
        state.counters["bw_ratio"] = gbps / probe_gbps;
    }
    state.SetLabel(std::string(ggml_type_name(sh.type)) + " x" + std::to_string(s.graphs.size()) + " copies");
}

void args_mul_mat_id(benchmark::internal::Benchmark * b) {
    b->ArgNames({"type", "M", "K", "experts", "used", "tokens", "n_b", "threads"});
    // gate/up [K 2048 -> M 768] with one input per token; down [768 -> 2048] with one per slot
    for (int64_t tokens : {1, 512})
        for (int64_t nth : {1, 2}) {
            b->Args({GGML_TYPE_Q4_K, 768, 2048, 64, 8, tokens, 1, nth});
            b->Args({GGML_TYPE_Q4_K, 2048, 768, 64, 8, tokens, 8, nth});
        }
}

const int64_t k_types[] = {GGML_TYPE_F32, GGML_TYPE_F16, GGML_TYPE_BF16};
const int64_t k_quant_types[] = {GGML_TYPE_Q4_0, GGML_TYPE_Q4_1, GGML_TYPE_Q5_0,   GGML_TYPE_Q5_1,
                                 GGML_TYPE_Q8_0, GGML_TYPE_Q2_K, GGML_TYPE_Q3_K,   GGML_TYPE_Q4_K,
                                 GGML_TYPE_Q5_K, GGML_TYPE_Q6_K, GGML_TYPE_IQ4_NL, GGML_TYPE_IQ4_XS,
                                 GGML_TYPE_MXFP4};

void args_mat_vec(benchmark::internal::Benchmark * b) {
    b->ArgNames({"type", "M", "K", "N", "threads"});
    // M x K x N: square, FFN up/gate, FFN down, and 4 sequences generating together
    const int64_t shapes[][3] = {{4096, 4096, 1}, {11008, 4096, 1}, {4096, 11008, 1}, {4096, 4096, 4}};
    for (int64_t t : k_types)
        for (const auto & s : shapes)
            for (int64_t nth : {1, 2}) b->Args({t, s[0], s[1], s[2], nth});
    for (int64_t t : k_quant_types)
        for (int64_t nth : {1, 2}) b->Args({t, 4096, 4096, 1, nth});
    // few columns (several sequences generating together)
    for (int64_t t : k_types)
        for (int64_t n : {8, 16, 32}) b->Args({t, 4096, 4096, n, 1});
    for (int64_t t : k_quant_types)
        for (int64_t n : {2, 4, 8, 16}) b->Args({t, 4096, 4096, n, 1});
    // one decode step's matrices of the TinyLlama-shaped Q4_K_M model (K/V, Q/O, gate/up, down,
    // output), two threads: small ones show the cost of starting each product
    const int64_t tiny[][3] = {{GGML_TYPE_Q4_K, 256, 2048},  {GGML_TYPE_Q4_K, 2048, 2048}, {GGML_TYPE_Q4_K, 5632, 2048},
                               {GGML_TYPE_Q4_K, 2048, 5632}, {GGML_TYPE_Q6_K, 2048, 5632}, {GGML_TYPE_Q6_K, 32000, 2048}};
    for (const auto & s : tiny) b->Args({s[0], s[1], s[2], 1, 2});
    // ... and of the F16 model, whose weights are read as they are (no repacked layout)
    const int64_t tiny_f16[][2] = {{256, 2048}, {2048, 2048}, {5632, 2048}, {2048, 5632}, {32000, 2048}};
    for (const auto & s : tiny_f16) b->Args({GGML_TYPE_F16, s[0], s[1], 1, 2});
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
BENCHMARK(BM_mul_mat_id)->Apply(args_mul_mat_id)->UseRealTime()->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
