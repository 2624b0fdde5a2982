// tools/bench/bench.h — inferd-bench: prompt-processing and generation speed, like llama-bench.
//
// Usage (from main or a test):
//   int rc = bench_tool_main({"-m", "m.gguf", "-p", "64", "-n", "16", "-r", "2", "-t", "1", "-o", "json",
//                             "--bandwidth", "30"}, stdout, stderr);
//
// Loads each model once (in the order given) and runs its tests (bench_tests_expand), then
// prints the results in the chosen format. Unless --bandwidth is given, the read bandwidth is
// probed once per thread count used by a tg test (mem-bandwidth.h) before the first model loads.
// Exit codes: 0 success; 1 a model does not load (the message names the file) or a test fails
// (the message names the test; the results so far are still printed and the run stops);
// 2 usage error (unknown option, bad value, no model).
#pragma once

#include <cstdio>
#include <string>
#include <vector>

int bench_tool_main(const std::vector<std::string> & args, std::FILE * out, std::FILE * err);
