// inferd-loadgen — closed-loop load generator for inferd (or any OpenAI-compatible server):
// C clients stream completions for D seconds; prints tokens/s, requests/s, TTFT and
// inter-token latency percentiles and errors. With --embeddings they request embeddings instead
// and it prints inputs/s, prompt tokens/s and latency percentiles. `inferd-loadgen --help`
// describes it all.
#include "loadgen/loadgen-options.h"
#include "loadgen/loadgen-run.h"
#include "loadgen/loadgen-stats.h"

#include <cstdio>
#include <string>

int main(int argc, char ** argv) {
    loadgen_options o;
    std::string error;
    if (!loadgen_parse_args(argc, argv, &o, &error)) {
        std::fprintf(stderr, "inferd-loadgen: %s\n", error.c_str());
        return 2;
    }
    if (o.help) {
        std::fputs(loadgen_usage().c_str(), stdout);
        return 0;
    }
    if (o.embeddings) {
        std::fprintf(stderr,
                     "inferd-loadgen: %s, %d clients, %.1f s (+%.1f s warmup), embeddings, "
                     "%d inputs of %d + %d words\n",
                     o.url.c_str(), o.concurrency, o.duration_s, o.warmup_s, o.inputs, o.shared_prefix_words,
                     o.prompt_words);
    } else {
        std::fprintf(stderr,
                     "inferd-loadgen: %s, %d clients, %.1f s (+%.1f s warmup), %d + %d prompt words, max_tokens %d%s\n",
                     o.url.c_str(), o.concurrency, o.duration_s, o.warmup_s, o.shared_prefix_words, o.prompt_words,
                     o.max_tokens, o.chat ? ", chat" : "");
    }
    const loadgen_run_result run = loadgen_run(o);
    const loadgen_summary s = loadgen_summarize(run.results, run.elapsed_s, o.embeddings);
    if (o.json) {
        std::printf("%s\n", loadgen_format_json(s).c_str());
    } else {
        std::fputs(loadgen_format_table(s).c_str(), stdout);
    }
    return s.ok == s.requests ? 0 : 1;
}
