// tools/bench/bench-options.h — inferd-bench's command line and the tests it expands into.
//
// Usage:
//   bench_options o;
//   std::string err;
//   if (!bench_options_parse({"-m", "a.gguf", "-p", "64,128", "-n", "16"}, &o, &err)) { exit 2: err }
//   for (const bench_test_config & t : bench_tests_expand(o)) …   // pp64, pp128, tg16
//
// List options ("-p 64,128", or repeated "-p 64 -p 128") accumulate; the tests are the cross
// product of every list, like llama-bench: per model, per combination of the other lists, one
// pp test per n_prompt (> 0) and then one tg test per n_gen (> 0).
// bench_options_parse returns false (nothing usable in *out) with a message in *err on an unknown
// option, a missing or malformed value, a value out of range, or no model.
#pragma once

#include "ggml/ggml.h"

#include <string>
#include <vector>

enum class bench_output_format { md, json, csv };

struct bench_options {
    std::vector<std::string> models;
    std::vector<int> n_prompt;      // default {512}
    std::vector<int> n_gen;         // default {128}
    std::vector<int> n_threads;     // default {hardware threads}
    std::vector<int> n_depth;       // default {0}
    std::vector<int> n_parallel;    // default {1}
    std::vector<int> n_batch;       // default {2048}
    std::vector<int> n_ubatch;      // default {512}
    std::vector<int> flash_attn;    // 0/1; default {the engine's default}
    std::vector<ggml_type> type_k;  // default {F16}
    std::vector<ggml_type> type_v;  // default {F16}
    int repetitions = 5;
    int n_gpu_layers = 0;
    bench_output_format output = bench_output_format::md;
    double bandwidth_gbps = 0.0;    // > 0: --bandwidth given, no probe
    size_t probe_bytes = size_t(1) << 30;
    bool warmup = true;
    bool verbose = false;
    bool calibrate = false;         // --calibrate: time the CPU's MUL_MAT paths, write the cache
    bool help = false;
};

// One test: pp (n_prompt > 0, n_gen = 0) or tg (n_prompt = 0, n_gen > 0).
struct bench_test_config {
    std::string model;
    int n_prompt = 0;
    int n_gen = 0;
    int n_depth = 0;
    int n_parallel = 1;
    int n_threads = 1;
    int n_batch = 2048;
    int n_ubatch = 512;
    int n_gpu_layers = 0;
    bool flash_attn = false;
    ggml_type type_k = GGML_TYPE_F16;
    ggml_type type_v = GGML_TYPE_F16;
};

bool bench_options_parse(const std::vector<std::string> & args, bench_options * out, std::string * err);
std::vector<bench_test_config> bench_tests_expand(const bench_options & o);
// "pp512", "tg128 @ d4096", "tg128 @ d4096 x8".
std::string bench_test_name(const bench_test_config & t);
// "f16", "f32", "q8_0" for the KV cache types; nullptr-free.
const char * bench_kv_type_name(ggml_type t);
std::string bench_usage();
