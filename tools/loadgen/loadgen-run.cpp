// tools/loadgen/loadgen-run.cpp — client threads and the measurement window.
#include "loadgen/loadgen-run.h"

#include "loadgen/loadgen-client.h"
#include "loadgen/loadgen-embeddings.h"
#include "loadgen/loadgen-prompt.h"

#include <algorithm>
#include <chrono>
#include <thread>

namespace {

struct client_log {
    std::vector<loadgen_request_result> counted;
    int64_t warmup = 0;
    int64_t late = 0;
};

void client_loop(const loadgen_options & o, const loadgen_prompt_gen & gen, int index,
                 std::chrono::steady_clock::time_point t0, client_log * log) {
    loadgen_client client(o);
    const double end_s = o.warmup_s + o.duration_s;
    for (int64_t n = 0;; ++n) {
        const double now = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (now >= end_s) {
            break;
        }
        loadgen_request_result r;
        if (o.embeddings) {
            const std::string body = loadgen_embeddings_body(o, loadgen_embedding_inputs(gen, o, index, n));
            r = client.embed(body, o.inputs, t0);
        } else {
            r = client.stream(loadgen_request_body(o, gen.prompt(index, n, o.prompt_words)), t0);
        }
        const bool failed = !r.error.empty();
        if (r.start_s >= end_s) {
            ++log->late;
            break;  // sent after the window closed (the body took time to build): not measured
        }
        if (r.start_s < o.warmup_s) {
            ++log->warmup;
        } else {
            log->counted.push_back(std::move(r));
        }
        if (failed) {
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
    }
}

}  // namespace

loadgen_run_result loadgen_run(const loadgen_options & o) {
    const loadgen_prompt_gen gen(o.seed, o.shared_prefix_words);
    std::vector<client_log> logs(size_t(std::max(o.concurrency, 1)));
    const auto t0 = std::chrono::steady_clock::now();
    {
        std::vector<std::jthread> threads;
        for (size_t i = 0; i < logs.size(); ++i) {
            threads.emplace_back(client_loop, std::cref(o), std::cref(gen), int(i), t0, &logs[i]);
        }
    }
    loadgen_run_result run;
    double last_end = 0;
    for (client_log & l : logs) {
        run.warmup_requests += l.warmup;
        run.late_requests += l.late;
        for (loadgen_request_result & r : l.counted) {
            last_end = std::max(last_end, r.end_s);
            run.results.push_back(std::move(r));
        }
    }
    run.elapsed_s = std::max(o.duration_s, last_end - o.warmup_s);
    return run;
}
