// inferd-quantize's command line: IN.gguf OUT.gguf TYPE [--threads N], usage and exit codes.
#include "quantize-model.h"
#include "tool-args.h"

#include <algorithm>
#include <thread>

namespace {

std::string usage_text() {
    return "usage: inferd-quantize IN.gguf OUT.gguf TYPE [--threads N]\n"
           "\n"
           "  TYPE (case-insensitive): " + quantize_mix_names() + "\n"
           "\n"
           "  Weight matrices get TYPE, or for the _S / _M mixes a higher type in selected tensors\n"
           "  (attention V, feed-forward down, output) the way established quantizers choose them;\n"
           "  1-D tensors (norms, biases) stay as they are; metadata is kept, general.file_type set.\n"
           "  Rows whose length does not fit TYPE's block size fall back to a type that fits.\n"
           "\n"
           "options:\n"
           "  -t, --threads N  threads (default: the number of CPUs)\n"
           "  -h, --help       this text\n"
           "\n"
           "exit codes: 0 success, 1 failure (bad input, unwritable output), 2 usage error\n";
}

int usage_error(std::FILE * err, const std::string & message) {
    std::fprintf(err, "inferd-quantize: %s\n\n%s", message.c_str(), usage_text().c_str());
    return 2;
}

}  // namespace

int quantize_tool_main(const std::vector<std::string> & args, std::FILE * out, std::FILE * err) {
    tool_args parsed;
    std::string error;
    if (!tool_args_parse(args, {{"-t", "--threads"}}, &parsed, &error)) return usage_error(err, error);
    if (parsed.help) {
        std::fprintf(out, "%s", usage_text().c_str());
        return 0;
    }
    quantize_model_params p;
    p.n_threads = int(std::max(1u, std::thread::hardware_concurrency()));
    if (const std::string * v = parsed.option("--threads")) {
        if (!tool_args_parse_int(*v, 1, 1024, &p.n_threads)) return usage_error(err, "--threads wants a number in 1..1024");
    }
    if (parsed.positional.size() != 3) return usage_error(err, "wants IN.gguf OUT.gguf TYPE");
    p.input_path = parsed.positional[0];
    p.output_path = parsed.positional[1];
    p.mix = quantize_mix_find(parsed.positional[2]);
    if (!p.mix) return usage_error(err, "unknown type '" + parsed.positional[2] + "'");
    p.log = out;
    std::fprintf(out, "%s -> %s as %s (file type %d), %d threads\n", p.input_path.c_str(), p.output_path.c_str(),
                 p.mix->name, int(p.mix->file_type), p.n_threads);
    quantize_model_stats stats;
    if (!quantize_model(p, &stats, &error)) {
        std::fprintf(err, "inferd-quantize: %s\n", error.c_str());
        return 1;
    }
    if (stats.n_fallback > 0) {
        std::fprintf(out, "%zu tensor(s) used a fallback type (see the messages above)\n", stats.n_fallback);
    }
    return 0;
}
