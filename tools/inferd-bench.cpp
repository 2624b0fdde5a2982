// inferd-bench: prompt-processing and generation speed of GGUF models, like llama-bench
// (see tools/bench/bench.h; inferd-bench -h lists the options).
#include "bench/bench.h"

int main(int argc, char ** argv) {
    const std::vector<std::string> args(argv + 1, argv + argc);
    return bench_tool_main(args, stdout, stderr);
}
