// tools/bench/bench-run.h — runs one inferd-bench test on a loaded model.
//
// Usage:
//   std::unique_ptr<model> m = model::load(path, mp);                // once per model
//   bench_model_info info = bench_model_describe(*m);
//   bench_run_options ro; ro.repetitions = 5;
//   bench_result r;
//   std::string err;
//   if (bench_run_test(*m, cfg, ro, &r, &err) != 0) { exit 1: err names the test }
//   r.avg_ts, r.stddev_ts, r.samples_ts, r.kv_used …
//
// A test creates its own context: n_ctx = depth + parallel * (n_prompt + n_gen) cells rounded up
// to 256 (the depth tokens are shared by all sequences through seq_cp), n_seq_max = parallel.
// Before the first run the KV cache gets `depth` random tokens in sequence 0 (decoded in n_batch
// chunks, untimed), copied to the other sequences; before every later run what the last run
// added after the depth is removed again (seq_rm: the next run gets the same cells, since freed
// cells are reused first) — the depth is decoded once per test (again before a run when a
// sliding-window model dropped the window cells behind it). A run times either the prompt
// (parallel * n_prompt random tokens in n_batch chunks, logits for the last token of each
// sequence) or n_gen steps of one random token per sequence with logits. An untimed warmup (the
// whole prompt, or one generation step) runs first unless disabled.
// Return codes: 0 ok; 1 the context cannot be created or a decode fails (*err says which test
// and why).
#pragma once

#include "bench/bench-options.h"
#include "engine/model.h"
#include "ggml/cpu.h"

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

struct bench_model_info {
    std::string filename;   // as given
    std::string type;       // "llama 1.1B Q4_K_M": architecture, parameters, the file type (else the type of most weight bytes)
    uint64_t size = 0;      // weight bytes
    uint64_t n_params = 0;
};

struct bench_run_options {
    int repetitions = 5;
    bool warmup = true;
    uint32_t seed = 1234;
    std::FILE * progress = nullptr;  // verbose: one line per repetition
};

struct bench_result {
    bench_test_config cfg;
    bench_model_info model;
    std::string backends;                // "CPU" or "CUDA0,CPU"
    std::string test_time;               // ISO 8601 UTC, when the test started
    std::vector<uint64_t> samples_ns;    // one per repetition
    std::vector<double> samples_ts;      // tokens per second of each repetition
    double avg_ns = 0, stddev_ns = 0;
    double avg_ts = 0, stddev_ts = 0, median_ts = 0;
    double bytes_per_token = 0;          // tg: bytes streamed per generated token (0 for pp)
    double gbps = 0;                     // tg: bytes_per_token * avg_ts / 1e9 (0 for pp)
    double bandwidth_gbps = 0;           // the ceiling compared with (0: not known)
    double bandwidth_pct = 0;            // 100 * gbps / bandwidth_gbps (0 for pp)
    uint32_t kv_used = 0;                // KV cells in use after the last repetition
    uint32_t n_ctx = 0;                  // KV cells of the test's context
};

bench_model_info bench_model_describe(const model & m);
// The MUL_MAT kernels the CPU backend cpu runs (its path, or its calibrated choice per weight
// type) for the model's weight matrices in
// host memory, one entry per weight type and placement, for generation (one column) and for
// prompts of n_prompt tokens: "q4_K: tg avx512 repacked q4_K x q8_K (16-row groups), pp …".
// Entries are in order of weight bytes, most first; empty when no matrix is in host memory.
std::vector<std::string> bench_model_kernels(const model & m, const ggml_backend_i * cpu, int64_t n_prompt);
// Bytes of weights one generation step of n_parallel sequences reads: all weights except the
// token-embedding table and the learned position table (only rows of them are read), the
// embedding table counted when the output layer is tied to it; of a mixture of experts only the
// experts the step uses: expert_used_count of expert_count for one sequence, for several the
// expected number of distinct experts when each picks uniformly, E * (1 - (1 - k/E)^n_parallel).
uint64_t bench_weight_bytes_per_step(const model & m, int n_parallel = 1);
// K and V bytes of one KV cell over all layers, at the given cache types.
uint64_t bench_kv_bytes_per_cell(const model & m, ggml_type type_k, ggml_type type_v);
// KV cells a test's context gets (see above).
uint32_t bench_n_ctx(const bench_test_config & c);

int bench_run_test(const model & m, const bench_test_config & c, const bench_run_options & ro, bench_result * out,
                   std::string * err);

// Mean, sample standard deviation (0 for fewer than 2 values) and median.
double bench_mean(const std::vector<double> & v);
double bench_stddev(const std::vector<double> & v);
double bench_median(std::vector<double> v);
