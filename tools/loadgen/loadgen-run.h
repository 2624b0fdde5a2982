// tools/loadgen/loadgen-run.h — the closed loop of inferd-loadgen: o.concurrency client threads
// send requests (completions, or embeddings with o.embeddings) back to back for
// o.warmup_s + o.duration_s seconds.
//
// Usage:
//   loadgen_run_result run = loadgen_run(options);
//   loadgen_summary s = loadgen_summarize(run.results, run.elapsed_s, options.embeddings);
//
// Counting: a request sent during the warmup is finished but discarded (warmup_requests counts
// them); every request sent in the D seconds after the warmup is finished and counted, also the
// ones still in flight when the D seconds end. elapsed_s runs from the end of the warmup to the
// end of the last counted request, and is at least D. Client i draws the prompts
// loadgen_prompt_gen(o.seed, o.shared_prefix_words).prompt(i, n, o.prompt_words) for its n-th
// request (n counts from 0, warmup included). With o.embeddings a client sends embeddings
// requests instead, their inputs loadgen_embedding_inputs(gen, o, i, n) (loadgen-embeddings.h).
// After a failed request a client sleeps 50 ms, so a refusing server is not flooded.
#pragma once

#include "loadgen/loadgen-options.h"
#include "loadgen/loadgen-stats.h"

#include <cstdint>
#include <vector>

struct loadgen_run_result {
    std::vector<loadgen_request_result> results;  // counted requests, by client then in order
    double elapsed_s = 0;
    int64_t warmup_requests = 0;
    int64_t late_requests = 0;  // sent after the window closed (their body took long to build): not measured
};

loadgen_run_result loadgen_run(const loadgen_options & o);
