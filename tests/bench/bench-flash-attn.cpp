// inferd-kernel-bench: FLASH_ATTN_EXT through the real CPU backend (one graph per copy).
//
//   inferd-kernel-bench --benchmark_filter='mem_read|flash_attn' --benchmark_repetitions=5
//
// Benchmarks (real time):
//   flash_attn_decode_cold/...  one query row against a KV cache of n_kv cells (the engine's
//                          layout: row c of the K and V cache tensors holds every kv head of
//                          cell c; k and v are views into them; F16 mask of zeros), cycling
//                          over enough copies (>= 256 MiB of K/V in all, like the layers of a
//                          model) that K/V never sit in the 32 MiB L3. GB/s of K/V read = bytes
//                          of the K and V rows / time: compare with mem_read at the same threads.
//   flash_attn_decode_warm/...  the same graph every time (4 MiB for the default shape: L3).
//   flash_attn_prefill/...  n_q query rows under a causal mask, K/V of n_q cells: GFLOP/s of the
//                          visible part (2 * (D + Dv) per visible (query, cell, head)).
//   flash_attn_seqs/...    one decode step of n_q sequences in a unified cache of n_kv cells, cold
//                          as decode_cold: cells [0, shared) are a prefix every sequence sees,
//                          the others belong to the sequences in turn (each row sees its own).
//                          GB/s of the K/V rows in the cache.
// Arguments: type (ggml_type id of K/V: 0 F32, 1 F16, 8 Q8_0), D, n_head, n_head_kv, n_q,
// n_kv, threads (and shared for seqs).
#include "ggml/alloc.h"
#include "ggml/backend.h"
#include "ggml/cpu.h"
#include "ggml/ggml.h"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <vector>

namespace {

constexpr size_t k_fa_cold_bytes = size_t(256) << 20;

struct fa_shape {
    ggml_type type = GGML_TYPE_F16;
    int64_t d = 64, n_head = 32, n_head_kv = 4, n_q = 1, n_kv = 4096;
    int mask = 0;        // 0 zeros, 1 causal, 2 sequences
    int64_t shared = 0;  // mask 2: cells every sequence sees
    bool operator==(const fa_shape &) const = default;
    size_t kv_bytes() const { return 2 * ggml_row_size(type, d) * size_t(n_kv * n_head_kv); }
};

struct fa_setup {
    fa_shape shape;
    int n_copies = 0;
    ggml_context_ptr ctx;
    ggml_backend_buffer_ptr buf;
    std::vector<ggml_cgraph *> graphs;
};

// Values of type t in [-1, 1) for a whole tensor (written row block by row block).
void fa_fill(ggml_tensor * t, uint64_t seed) {
    const int64_t n = ggml_nelements(t);
    const int64_t blk = std::min<int64_t>(n, 1 << 16);
    std::vector<float> f(static_cast<size_t>(blk));
    std::vector<uint8_t> row(ggml_row_size(t->type, blk));
    const size_t blk_bytes = row.size();
    for (int64_t off = 0; off < n; off += blk) {
        for (auto & x : f) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            x = float(int64_t(seed >> 40) - (int64_t(1) << 23)) / float(1 << 23);
        }
        ggml_get_type_traits(t->type).from_float(f.data(), row.data(), blk);
        const size_t at = size_t(off / blk) * blk_bytes;
        ggml_backend_tensor_set(t, row.data(), at, std::min(blk_bytes, ggml_nbytes(t) - at));
    }
}

// Mask [n_kv, n_q]: zeros; causal with the last query row seeing every cell; or sequences (row i
// sees cells [0, shared) and the cells j >= shared with (j - shared) % n_q == i).
void fa_fill_mask(ggml_tensor * m, const fa_shape & sh) {
    const int64_t n_kv = m->ne[0], n_q = m->ne[1];
    std::vector<ggml_fp16_t> v(size_t(n_kv * n_q));
    for (int64_t i = 0; i < n_q; ++i)
        for (int64_t j = 0; j < n_kv; ++j) {
            bool seen = true;
            if (sh.mask == 1) seen = j <= i + n_kv - n_q;
            if (sh.mask == 2) seen = j < sh.shared || (j - sh.shared) % n_q == i;
            v[size_t(i * n_kv + j)] = ggml_fp32_to_fp16(seen ? 0.0f : -INFINITY);
        }
    ggml_backend_tensor_set(m, v.data(), 0, v.size() * sizeof(ggml_fp16_t));
}

fa_setup & fa_setup_for(const fa_shape & sh, int n_copies) {
    static fa_setup s;
    if (s.ctx && s.shape == sh && s.n_copies == n_copies) return s;
    s = fa_setup();
    s.shape = sh;
    s.n_copies = n_copies;
    ggml_init_params ip;
    ip.mem_size = size_t(n_copies) * (12 * ggml_tensor_overhead() + ggml_graph_overhead());
    ip.no_alloc = true;
    s.ctx.reset(ggml_init(ip));
    ggml_context * ctx = s.ctx.get();
    std::vector<ggml_tensor *> fill, masks;
    for (int c = 0; c < n_copies; ++c) {
        ggml_tensor * kc = ggml_new_tensor_2d(ctx, sh.type, sh.d * sh.n_head_kv, sh.n_kv);  // [n_embd_kv, n_ctx]
        ggml_tensor * vc = ggml_new_tensor_2d(ctx, sh.type, sh.d * sh.n_head_kv, sh.n_kv);
        ggml_tensor * q = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, sh.d, sh.n_head, sh.n_q);  // as after rope
        ggml_tensor * mask = ggml_new_tensor_2d(ctx, GGML_TYPE_F16, sh.n_kv, sh.n_q);
        const size_t head = ggml_row_size(sh.type, sh.d);
        ggml_tensor * k = ggml_view_3d(ctx, kc, sh.d, sh.n_kv, sh.n_head_kv, kc->nb[1], head, 0);
        ggml_tensor * v = ggml_view_3d(ctx, vc, sh.d, sh.n_kv, sh.n_head_kv, vc->nb[1], head, 0);
        ggml_tensor * qp = ggml_permute(ctx, q, 0, 2, 1, 3);  // [D, n_q, n_head]
        ggml_tensor * out = ggml_flash_attn_ext(ctx, qp, k, v, mask, 1.0f / std::sqrt(float(sh.d)));
        ggml_set_output(out);
        ggml_cgraph * gf = ggml_new_graph_custom(ctx, 16);
        ggml_build_forward_expand(gf, out);
        s.graphs.push_back(gf);
        fill.insert(fill.end(), {kc, vc, q});
        masks.push_back(mask);
    }
    s.buf = ggml_backend_alloc_ctx_tensors(ctx, ggml_backend_cpu_buffer_type());
    if (!s.buf) return s;
    for (size_t i = 0; i < fill.size(); ++i) fa_fill(fill[i], 1 + i);
    for (ggml_tensor * m : masks) fa_fill_mask(m, sh);
    return s;
}

ggml_backend_i * fa_backend(int n_threads) {
    static std::map<int, ggml_backend_ptr> list;
    auto & b = list[n_threads];
    if (!b) {
        ggml_cpu_backend_options opt;
        opt.n_threads = n_threads;
        b = ggml_backend_cpu_init(opt);
    }
    return b.get();
}

enum class fa_mode { cold, warm, prefill, seqs };

void run_flash_attn(benchmark::State & state, fa_mode mode) {
    fa_shape sh;
    sh.type = ggml_type(state.range(0));
    sh.d = state.range(1);
    sh.n_head = state.range(2);
    sh.n_head_kv = state.range(3);
    sh.n_q = state.range(4);
    sh.n_kv = state.range(5);
    const int nth = int(state.range(6));
    if (mode == fa_mode::prefill) sh.mask = 1;
    if (mode == fa_mode::seqs) {
        sh.mask = 2;
        sh.shared = state.range(7);
    }
    const bool cold = mode == fa_mode::cold || mode == fa_mode::seqs;
    const int copies = cold ? int(k_fa_cold_bytes / sh.kv_bytes() + 2) : 1;
    fa_setup & s = fa_setup_for(sh, copies);
    if (!s.buf) {
        state.SkipWithError("out of memory");
        return;
    }
    ggml_backend_i * be = fa_backend(nth);
    for (ggml_cgraph * gf : s.graphs) be->graph_compute(gf);  // warm-up: page-in, work buffer
    size_t i = 0;
    for (auto _ : state) {
        if (be->graph_compute(s.graphs[i]) != GGML_STATUS_SUCCESS) {
            state.SkipWithError("graph_compute failed");
            return;
        }
        i = (i + 1) % s.graphs.size();
    }
    if (mode == fa_mode::prefill) {
        // visible (query, cell) pairs of the causal mask with n_kv == n_q: n (n + 1) / 2
        const double pairs = double(sh.n_q) * double(sh.n_q + 1) / 2.0 * double(sh.n_kv) / double(sh.n_q);
        state.counters["GFLOP/s"] = benchmark::Counter(pairs * double(sh.n_head) * 4.0 * double(sh.d) * 1e-9,
                                                       benchmark::Counter::kIsIterationInvariantRate);
    } else {
        state.counters["GB/s"] =
            benchmark::Counter(double(sh.kv_bytes()) * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
    }
    const std::string copies_label = copies > 1 ? " x" + std::to_string(copies) + " copies" : "";
    state.SetLabel(std::string(ggml_type_name(sh.type)) + copies_label);
}

void BM_flash_attn_decode_cold(benchmark::State & state) { run_flash_attn(state, fa_mode::cold); }
void BM_flash_attn_decode_warm(benchmark::State & state) { run_flash_attn(state, fa_mode::warm); }
void BM_flash_attn_prefill(benchmark::State & state) { run_flash_attn(state, fa_mode::prefill); }
void BM_flash_attn_seqs(benchmark::State & state) { run_flash_attn(state, fa_mode::seqs); }

void args_decode(benchmark::internal::Benchmark * b) {
    b->ArgNames({"type", "D", "n_head", "n_head_kv", "n_q", "n_kv", "threads"});
    for (int64_t nth : {1, 2}) b->Args({GGML_TYPE_F16, 64, 32, 4, 1, 4096, nth});
    for (int64_t nth : {1, 2}) b->Args({GGML_TYPE_F16, 64, 32, 4, 1, 512, nth});
    b->Args({GGML_TYPE_F16, 128, 32, 8, 1, 4096, 2});
    b->Args({GGML_TYPE_Q8_0, 64, 32, 4, 1, 4096, 2});
    b->Args({GGML_TYPE_F32, 64, 32, 4, 1, 4096, 2});
}

void args_prefill(benchmark::internal::Benchmark * b) {
    b->ArgNames({"type", "D", "n_head", "n_head_kv", "n_q", "n_kv", "threads"});
    for (int64_t nth : {1, 2}) b->Args({GGML_TYPE_F16, 64, 32, 4, 512, 512, nth});
}

BENCHMARK(BM_flash_attn_decode_cold)->Apply(args_decode)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_flash_attn_decode_warm)->Apply(args_decode)->UseRealTime()->Unit(benchmark::kMicrosecond);
// 8 sequences of a server's slots: 64 cells each and nothing shared; a 512-cell prefix shared by
// all and 32 cells each; 512 cells each.
void args_seqs(benchmark::internal::Benchmark * b) {
    b->ArgNames({"type", "D", "n_head", "n_head_kv", "n_q", "n_kv", "threads", "shared"});
    for (int64_t nth : {1, 2}) b->Args({GGML_TYPE_F16, 64, 32, 4, 8, 512, nth, 0});
    for (int64_t nth : {1, 2}) b->Args({GGML_TYPE_F16, 64, 32, 4, 8, 768, nth, 512});
    b->Args({GGML_TYPE_F16, 64, 32, 4, 8, 4096, 2, 0});
}

BENCHMARK(BM_flash_attn_prefill)->Apply(args_prefill)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_flash_attn_seqs)->Apply(args_seqs)->UseRealTime()->Unit(benchmark::kMicrosecond);

}  // namespace
