// Faults in the batch loop: a request whose serving threw ends with an error while the others
// go on (see "Faults" in batch-loop.h).
#include "batch-loop-impl.h"

void batch_loop::impl::fault(std::string_view site) const {
    if (params.fault_hook) params.fault_hook(site);
}

// The slot's cells may not match s.tokens after a failure part-way through its step: they leave
// the cache (as the slot's draft-model cells do at its next sync), so no later request reuses them.
void batch_loop::impl::fail_slot(batch_slot & s, const std::string & what) {
    if (!s.job) return;
    const uint64_t id = s.job->id;
    try {
        ctx->seq_rm(s.seq, -1, -1);
    } catch (...) {
        // the cache keeps the cells; s.tokens is cleared below, so nothing reuses them
    }
    s.tokens.clear();
    const std::string message = "internal error while generating: " + what;
    finish(s, gen_finish::error, message);
    if (error_observer) {
        try {
            error_observer(id, message);
        } catch (...) {
            // the observer only logs
        }
    }
}

void batch_loop::impl::fail_step(const std::string & what) {
    for (batch_slot & s : slots) {
        if (s.job) fail_slot(s, what);
    }
    try {
        embd_fail("internal error while computing embeddings: " + what);
    } catch (...) {
        embd_running.clear();  // their results are dropped unanswered: the HTTP layer answers 500
    }
    update_stats();
}
