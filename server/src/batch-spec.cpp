// Speculative decoding in the batch loop: drafts proposed before the batch is built, verified
// with the request's own sampler after the decode, rejected cells removed again.
#include "batch-loop-impl.h"

#include <algorithm>
#include <stdexcept>

namespace {

// After a verification of k draft tokens of which `accepted` were accepted: the next draft's
// length and the steps to go without one (a draft the sampler rejects costs a step with more
// tokens for nothing).
void draft_miss(batch_job & j) {
    ++j.draft_misses;
    j.draft_wait = (1 << std::min(j.draft_misses, 5)) - 1;
}

void draft_pace(batch_job & j, int32_t k, int32_t accepted, int32_t n_max) {
    if (accepted == k && k >= j.draft_cap) {
        j.draft_cap = std::min(n_max, 2 * j.draft_cap);
    } else if (accepted < k) {
        j.draft_cap = std::max(1, accepted + 1);
    }
    if (accepted == 0) {
        draft_miss(j);
    } else {
        j.draft_misses = 0;
    }
}

}  // namespace

bool batch_loop::impl::spec_enabled() const { return ctx != nullptr && params.spec.enabled(); }

void batch_loop::impl::spec_setup() {
    const batch_loop_spec_params & sp = params.spec;
    if (sp.n_max < 1) throw std::runtime_error("batch loop: draft-max must be at least 1");
    if (sp.n_min < 0 || sp.n_min > sp.n_max) throw std::runtime_error("batch loop: draft-min must be 0..draft-max");
    if (!(sp.p_min >= 0.0f && sp.p_min <= 1.0f)) throw std::runtime_error("batch loop: draft-p-min must be in [0, 1]");
    if (sp.adaptive) governor = std::make_unique<spec_governor>();
    spec_active = true;
    if (!sp.draft) return;
    if (std::string why = spec_vocab_mismatch(m, *sp.draft); !why.empty()) {
        throw std::runtime_error("the draft model's vocabulary does not match the model's: " + why);
    }
    drafter = std::make_unique<spec_draft_model>(*sp.draft, ctx->params(), params.n_parallel, ctx->n_ctx(), sp.n_max,
                                                 sp.p_min);
}

// Tokens a step may add as drafts: the batch stays within one ubatch (and n_batch) after every
// generating slot's pending token and the prompt chunks build_batch will add.
size_t batch_loop::impl::draft_room() const {
    const context_params & cp = ctx->params();
    const size_t limit = std::min(cp.n_batch, cp.n_ubatch);
    size_t used = 0;
    for (const batch_slot & s : slots) {
        if (!s.job) continue;
        if (s.state == slot_state::generate && s.pending >= 0) {
            used += 1;
        } else if (s.state == slot_state::prefill) {
            size_t n = s.input.size() - s.tokens.size();
            if (s.job->wants_prompt_logits()) n = std::min(n, size_t(batch_loop_prompt_logits_chunk));
            used += n;
        }
        if (used >= limit) return 0;
    }
    return limit - used;
}

// Most draft tokens s can use: the tokens it may still emit beyond the one its pending token's
// logits give, and the context (the last draft position stays below n_ctx - 1).
int32_t batch_loop::impl::draft_limit(const batch_slot & s) const {
    int64_t lim = params.spec.n_max;
    const batch_job & j = *s.job;
    if (j.req.max_tokens >= 0) lim = std::min<int64_t>(lim, int64_t(j.req.max_tokens) - int64_t(j.generated.size()) - 1);
    lim = std::min<int64_t>(lim, int64_t(ctx->n_ctx()) - int64_t(s.tokens.size()) - 2);
    return int32_t(std::max<int64_t>(lim, 0));
}

uint32_t batch_loop::impl::n_generating() const {
    uint32_t n = 0;
    for (const batch_slot & s : slots) n += s.job && s.state == slot_state::generate && s.pending >= 0;
    return n;
}

// After a step: its rate goes to the governor when the step was generation only (a prompt chunk
// would make it slower for reasons that are not the drafts'), and its verdict to the stats.
void batch_loop::impl::govern(uint32_t n_gen, bool drafted, bool prompt_in_step, double seconds) {
    if (!governor) return;
    if (!prompt_in_step) governor->observe(n_gen, drafted, seconds, step_emitted);
    spec_active = governor->active();
    spec_speedup = governor->speedup();
    spec_turned_off = governor->times_disabled();
    if (std::string change = governor->take_change(); !change.empty() && spec_observer) spec_observer(change);
}

bool batch_loop::impl::propose_drafts() {
    for (batch_slot & s : slots) s.draft.clear();
    std::vector<batch_slot *> cand;
    for (batch_slot & s : slots) {
        if (!s.job || s.state != slot_state::generate || s.pending < 0 || draft_limit(s) == 0) continue;
        if (s.job->draft_wait > 0) {
            --s.job->draft_wait;
            continue;
        }
        cand.push_back(&s);
    }
    const size_t room = draft_room();
    if (cand.empty() || room < cand.size()) return false;
    fault("draft");
    const int32_t share = int32_t(std::min<size_t>(room / cand.size(), size_t(params.spec.n_max)));
    if (drafter) {
        std::vector<spec_draft_job> jobs(cand.size());
        for (size_t i = 0; i < cand.size(); ++i) {
            jobs[i].seq = cand[i]->seq;
            jobs[i].tokens = &cand[i]->tokens;
            jobs[i].pending = cand[i]->pending;
            jobs[i].n_max = std::min({share, draft_limit(*cand[i]), cand[i]->job->draft_cap});
        }
        drafter->draft(jobs);
        for (size_t i = 0; i < cand.size(); ++i) {
            cand[i]->draft = std::move(jobs[i].draft);
            // The draft model was not sure of even one token: its decodes cost time for nothing,
            // so the slot waits as after a rejected draft (and catches up in one decode later).
            if (cand[i]->draft.empty()) draft_miss(*cand[i]->job);
        }
    } else {
        std::vector<int32_t> history;
        for (batch_slot * s : cand) {
            history.assign(s->tokens.begin(), s->tokens.end());
            history.push_back(s->pending);
            s->draft = spec_ngram_draft(history, params.spec.ngram, std::min({share, draft_limit(*s), s->job->draft_cap}));
        }
    }
    for (batch_slot * s : cand) {
        if (int32_t(s->draft.size()) < params.spec.n_min) s->draft.clear();
    }
    return true;
}

bool batch_loop::impl::drop_drafts() {
    bool any = false;
    for (batch_slot & s : slots) {
        any = any || !s.draft.empty();
        s.draft.clear();
    }
    return any;
}

// After the decode of s's pending token and its draft: the sampler draws at each position in
// order; a draw equal to the draft token accepts it and goes on, the first one that differs is
// the slot's next pending token (the correction). Every draw goes out through emit_sampled, so
// the request sees exactly the tokens it would see without a draft. Cells past what is accepted
// are removed, so that s.tokens is again what the cache holds.
void batch_loop::impl::verify_draft(batch_slot & s) {
    const std::vector<int32_t> draft = std::move(s.draft);
    s.draft.clear();
    int32_t accepted = 0;
    bool paced = false;
    const int32_t first = s.logits_idx;
    const size_t end = s.tokens.size() + 1 + draft.size();  // the cells this step wrote for s
    s.tokens.push_back(s.pending);
    s.pending = -1;
    s.job->draft_tokens += int32_t(draft.size());
    step_drafted += int32_t(draft.size());
    for (size_t i = 0; i <= draft.size(); ++i) {
        // Between two tokens, as between two steps: a cancelled request emits nothing more.
        if (i > 0 && s.job->req.sink->cancelled()) {
            finish(s, gen_finish::cancelled);
            break;
        }
        const sampled_token t = s.job->smp->sample(ctx->logits(first + int32_t(i)));
        const bool hit = i < draft.size() && t.id == draft[i];
        if (hit) {
            ++s.job->draft_accepted;
            ++step_accepted;
            ++accepted;
        }
        if (!paced && (!hit || size_t(accepted) == draft.size())) {  // the verification's outcome is known
            draft_pace(*s.job, int32_t(draft.size()), accepted, params.spec.n_max);
            paced = true;
        }
        emit_sampled(s, t);
        if (!s.job || !hit) break;
        s.tokens.push_back(s.pending);  // the draft token's cells hold the accepted token
        s.pending = -1;
    }
    if (s.tokens.size() < end) ctx->seq_rm(s.seq, int32_t(s.tokens.size()), -1);
}

void batch_loop::impl::report_drafts() {
    if (step_drafted > 0) {
        n_draft_tokens += uint64_t(step_drafted);
        n_draft_accepted += uint64_t(step_accepted);
        if (draft_observer) draft_observer(step_drafted, step_accepted);
    }
    step_drafted = step_accepted = 0;
}
