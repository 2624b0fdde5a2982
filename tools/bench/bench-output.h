// tools/bench/bench-output.h — inferd-bench's results as a Markdown table, JSON or CSV.
//
// Usage:
//   bench_report rep;  rep.results = …;  rep.bandwidth = {{2, 34.1}};  rep.cpu_isa = "avx512";
//   bench_print(rep, bench_output_format::json, stdout);
//
// md: one row per test like llama-bench (| model | size | params | backend | threads | fa | test |
// t/s | GB/s | % bw |, t/s as "mean ± stddev"), then a line with the bandwidth per thread count
// and the build (commit, CPU kernel path), the CPU's model and each model's MUL_MAT kernels. json: an array with one object per test (the fields
// of bench_result_json). csv: a header line with the scalar fields of the JSON objects and one
// line per test; samples as "v1;v2;…".
#pragma once

#include "bench/bench-options.h"
#include "bench/bench-run.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <map>
#include <string>
#include <utility>
#include <vector>

struct bench_report {
    std::vector<bench_result> results;
    std::map<int, double> bandwidth;   // threads → GB/s
    bool bandwidth_given = false;      // --bandwidth (the same for every thread count)
    std::string gpu_device;            // runs with -ngl != 0: the GPU whose memory they read
    double gpu_bandwidth = 0;          // its read bandwidth, GB/s (probe; 0: not measured)
    std::string cpu_isa;               // the CPU backend's kernel path
    std::string cpu_model;             // ggml_cpu_model_name()
    // model file -> its MUL_MAT kernels on the CPU (bench_model_kernels), in the order run
    std::vector<std::pair<std::string, std::vector<std::string>>> kernels;
    std::string build_commit;          // "unknown" when not known at build time
};

// Field names of a result object, in output order (the CSV header).
const std::vector<std::string> & bench_result_fields();
nlohmann::json bench_result_json(const bench_result & r, const bench_report & rep);
void bench_print(const bench_report & rep, bench_output_format fmt, std::FILE * out);
// "636.00 MiB" / "1.09 GiB"; "1.10 B" / "260.00 K" parameters.
std::string bench_format_size(uint64_t bytes);
std::string bench_format_params(uint64_t n);
