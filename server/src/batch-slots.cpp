// Slot management of the batch loop: admission with prefix reuse, eviction of idle caches,
// preemption of the newest request when the KV cache is full.
#include "batch-loop-impl.h"

#include <algorithm>

// Tokens of input that slot s's cells can serve, at most limit: the common prefix, or 0 when
// the sequence cannot go on from there (a sliding-window model dropped that window's cells).
size_t batch_loop::impl::usable_prefix(const batch_slot & s, const std::vector<int32_t> & input, size_t limit) const {
    const size_t n = std::min(tokens_common_prefix(s.tokens, input), limit);
    return n > 0 && ctx->seq_resumable(s.seq, int32_t(n)) ? n : 0;
}

// Longest prefix of input already in some slot's cells (at most all but its last token).
size_t batch_loop::impl::cached_prefix(const std::vector<int32_t> & input) const {
    size_t best = 0;
    for (const batch_slot & s : slots) best = std::max(best, usable_prefix(s, input, input.size() - 1));
    return best;
}

// A job whose prompt shares a long prefix with a prompt being prefilled right now waits until
// those cells exist, then copies them instead of computing them a second time (n > 1, many
// requests with one preamble arriving together).
bool batch_loop::impl::worth_waiting(const std::vector<int32_t> & input, size_t cached) const {
    constexpr size_t k_min_gain = 16;
    for (const batch_slot & s : slots) {
        if (!s.job || s.state != slot_state::prefill) continue;
        const size_t n = std::min(tokens_common_prefix(s.input, input), input.size() - 1);
        if (n >= cached + k_min_gain && n > s.tokens.size()) return true;
    }
    return false;
}

std::unique_ptr<batch_job> batch_loop::impl::next_admissible_job() {
    std::lock_guard<std::mutex> lk(mu);
    for (auto it = queue.begin(); it != queue.end(); ++it) {
        std::vector<int32_t> input = (*it)->req.prompt;
        input.insert(input.end(), (*it)->generated.begin(), (*it)->generated.end());
        // A request that needs the prompt's logits computes it whatever is cached: no waiting.
        if (!(*it)->wants_prompt_logits() && worth_waiting(input, cached_prefix(input))) continue;
        std::unique_ptr<batch_job> job = std::move(*it);
        queue.erase(it);
        n_waiting = uint32_t(queue.size());
        return job;
    }
    return nullptr;
}

void batch_loop::impl::admit_waiting() {
    for (;;) {
        auto free_slot = std::find_if(slots.begin(), slots.end(), [](const batch_slot & s) { return !s.job; });
        if (free_slot == slots.end()) return;
        std::unique_ptr<batch_job> job = next_admissible_job();
        if (!job) return;
        std::vector<int32_t> input = job->req.prompt;
        input.insert(input.end(), job->generated.begin(), job->generated.end());
        // The slot holding the longest prefix of this input (idle ones win ties), at most all but
        // the last token (whose logits are needed); none when every prompt position needs logits.
        const size_t reuse_max = job->wants_prompt_logits() ? 0 : input.size() - 1;
        if (job->wants_prompt_logits()) job->prompt_lp.clear();  // a preempted prefill starts over
        batch_slot * best = nullptr;
        size_t best_n = 0;
        for (batch_slot & s : slots) {
            const size_t n = usable_prefix(s, input, reuse_max);
            if (n > best_n || (n == best_n && n > 0 && best && best->job && !s.job)) best = &s, best_n = n;
        }
        batch_slot * dst = nullptr;
        if (best && !best->job) {
            dst = best;
        } else {  // the least recently used idle slot
            for (batch_slot & s : slots) {
                if (!s.job && (!dst || s.last_used < dst->last_used)) dst = &s;
            }
        }
        batch_slot & d = *dst;
        if (best == dst) {
            ctx->seq_rm(d.seq, int32_t(best_n), -1);
            d.tokens.resize(best_n);
        } else {
            ctx->seq_rm(d.seq, -1, -1);
            d.tokens.clear();
            if (best && best_n > 0) {  // share the other slot's cells for the prefix
                ctx->seq_cp(best->seq, d.seq, 0, int32_t(best_n));
                d.tokens.assign(input.begin(), input.begin() + long(best_n));
            }
        }
        if (job->n_cached_first < 0) job->n_cached_first = int32_t(d.tokens.size());
        const int32_t n_prompt = int32_t(input.size()), n_cached = int32_t(d.tokens.size());
        d.input = std::move(input);
        d.job = std::move(job);
        d.state = slot_state::prefill;
        d.pending = -1;
        d.admitted = ++clock;
        d.last_used = clock;
        try {
            fault("admit");
            d.job->req.sink->on_admitted(n_prompt, n_cached);
        } catch (const std::exception & e) {
            fail_slot(d, e.what());
        } catch (...) {
            fail_slot(d, "an unknown exception");
        }
    }
}

bool batch_loop::impl::make_room() {
    // 1. The least recently used idle slot that still holds cells.
    batch_slot * lru = nullptr;
    for (batch_slot & s : slots) {
        if (!s.job && !s.tokens.empty() && (!lru || s.last_used < lru->last_used)) lru = &s;
    }
    if (lru) {
        ctx->seq_rm(lru->seq, -1, -1);
        lru->tokens.clear();
        return true;
    }
    // 2. Preempt the most recently admitted request, unless it is the only one left.
    batch_slot * newest = nullptr;
    size_t n_active = 0;
    for (batch_slot & s : slots) {
        if (!s.job) continue;
        ++n_active;
        if (!newest || s.admitted > newest->admitted) newest = &s;
    }
    if (!newest || n_active < 2) return false;
    ctx->seq_rm(newest->seq, -1, -1);
    newest->tokens.clear();
    newest->state = slot_state::idle;
    newest->pending = -1;
    newest->input.clear();
    {
        std::lock_guard<std::mutex> lk(mu);
        queue.push_front(std::move(newest->job));
        n_waiting = uint32_t(queue.size());
    }
    return true;
}
