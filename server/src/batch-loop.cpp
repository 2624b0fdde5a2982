// The batch loop's thread, queue and step: admission, one decode, sampling, finishing.
#include "batch-loop-impl.h"

#include "engine/grammar-stage.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <utility>

const char * gen_finish_name(gen_finish f) {
    switch (f) {
        case gen_finish::stop: return "stop";
        case gen_finish::length: return "length";
        case gen_finish::cancelled: return "cancelled";
        case gen_finish::error: return "error";
        case gen_finish::refused: return "refused";
    }
    return "?";
}

namespace {

// The embeddings context: no KV cache, every input within one ubatch (so a ubatch holds the
// longest input: the generation context's size, or the model's training context, capped by
// params.embd_max_tokens), up to n_batch tokens per decode.
std::unique_ptr<context> make_embd_context(const model & m, const batch_loop_params & params, const context * gen,
                                           uint32_t * max_tokens) {
    uint32_t limit = gen ? gen->n_ctx() : (params.ctx.n_ctx > 0 ? params.ctx.n_ctx : m.hparams().n_ctx_train);
    if (limit == 0) limit = params.embd_max_tokens;
    *max_tokens = std::max<uint32_t>(1, std::min(limit, params.embd_max_tokens));
    context_params cp = params.ctx;
    cp.embeddings = true;
    cp.pooling = params.pooling;
    cp.n_seq_max = kv_cache_max_seq;
    cp.n_ubatch = std::max(*max_tokens, params.ctx.n_ubatch);
    cp.n_batch = std::max(cp.n_ubatch, params.ctx.n_batch);
    cp.n_ctx = cp.n_batch;
    return std::make_unique<context>(m, cp);
}

}  // namespace

batch_loop::batch_loop(const model & m, const batch_loop_params & params) : impl_(std::make_unique<impl>(m, params)) {
    impl & s = *impl_;
    if (s.params.n_parallel == 0 || s.params.n_parallel > kv_cache_max_seq) {
        throw std::runtime_error("batch loop: the number of slots must be 1.." + std::to_string(kv_cache_max_seq));
    }
    if (!s.params.generation && !s.params.embeddings) throw std::runtime_error("batch loop: nothing to compute");
    s.params.ctx.n_seq_max = s.params.n_parallel;
    if (s.params.generation) s.ctx = std::make_unique<context>(m, s.params.ctx);
    if (s.spec_enabled()) s.spec_setup();
    if (s.params.embeddings) s.embd_ctx = make_embd_context(m, s.params, s.ctx.get(), &s.embd_max);
    s.slots.resize(s.params.n_parallel);
    for (uint32_t i = 0; i < s.params.n_parallel; ++i) s.slots[i].seq = int32_t(i);
}

batch_loop::~batch_loop() { stop(); }

void batch_loop::start() {
    impl & s = *impl_;
    if (s.thread.joinable()) return;
    s.thread = std::thread([&s] { s.run(); });
}

void batch_loop::stop() {
    impl & s = *impl_;
    {
        std::lock_guard<std::mutex> lk(s.mu);
        s.stopping = true;
    }
    s.cv.notify_all();
    if (s.thread.joinable()) s.thread.join();
    for (batch_slot & sl : s.slots) {
        if (sl.job) s.finish(sl, gen_finish::cancelled, "the server is shutting down");
    }
    std::deque<std::unique_ptr<batch_job>> left;
    {
        std::lock_guard<std::mutex> lk(s.mu);
        left.swap(s.queue);
    }
    for (auto & j : left) {
        gen_usage u;
        u.prompt_tokens = int32_t(j->req.prompt.size());
        u.completion_tokens = int32_t(j->generated.size());
        try {
            j->req.sink->on_finished(gen_finish::cancelled, u, "the server is shutting down");
        } catch (...) {
            // one failing sink does not keep the others from ending
        }
    }
    s.stop_embd();
    s.update_stats();
}

bool batch_loop::submit(gen_request r, std::string * why) {
    std::vector<gen_request> one;
    one.push_back(std::move(r));
    return submit_all(one, why);
}

std::string batch_loop::impl::check(const gen_request & r) const {
    if (!ctx) return "this model does not generate text";
    if (!r.sink) return "no sink";
    if (r.prompt.empty()) return "the prompt is empty";
    if (r.prompt.size() >= ctx->n_ctx()) {
        return "the prompt has " + std::to_string(r.prompt.size()) + " tokens; the context holds " +
               std::to_string(ctx->n_ctx());
    }
    if (r.prompt_logprobs < -1 || r.prompt_logprobs > sampling_max_n_probs) {
        return "prompt_logprobs must be -1.." + std::to_string(sampling_max_n_probs) + ", got " +
               std::to_string(r.prompt_logprobs);
    }
    const int32_t n_vocab = m.hparams().n_vocab;
    for (int32_t id : r.prompt) {
        if (id < 0 || id >= n_vocab) return "token " + std::to_string(id) + " is outside the vocabulary";
    }
    return sampling_params_validate(r.sampling, n_vocab);
}

bool batch_loop::submit_all(std::vector<gen_request> & rs, std::string * why) {
    impl & s = *impl_;
    auto fail = [&](std::string msg) {
        if (why) *why = std::move(msg);
        return false;
    };
    for (const gen_request & r : rs) {
        if (std::string bad = s.check(r); !bad.empty()) return fail(bad);
    }
    std::vector<std::unique_ptr<batch_job>> jobs;
    try {
        for (const gen_request & r : rs) jobs.push_back(s.new_job(r));
    } catch (const std::exception & e) {
        return fail(std::string("the request could not be prepared: ") + e.what());
    }
    {
        std::lock_guard<std::mutex> lk(s.mu);
        if (s.stopping) return fail("the server is shutting down");
        // Room: max_queue waiting requests beyond the slots that are free now.
        const size_t free_slots = s.params.n_parallel - std::min(s.params.n_parallel, s.n_running.load());
        if (s.queue.size() + jobs.size() > s.params.max_queue + free_slots) return fail("the queue is full");
        for (size_t i = 0; i < jobs.size(); ++i) {
            jobs[i]->req = std::move(rs[i]);
            jobs[i]->id = s.next_id++;
            s.queue.push_back(std::move(jobs[i]));
        }
        s.n_waiting = uint32_t(s.queue.size());
    }
    s.cv.notify_all();
    return true;
}

std::shared_ptr<const grammar_vocab> batch_loop::impl::model_grammar_vocab(bool control_as_text) {
    const size_t i = control_as_text ? 1 : 0;
    std::call_once(grammar_vocab_once[i], [this, i, control_as_text] {
        grammar_vocab_[i] = grammar_vocab_from_model(m.get_vocab(), m.get_tokenizer(), control_as_text);
    });
    return grammar_vocab_[i];
}

std::unique_ptr<batch_job> batch_loop::impl::new_job(const gen_request & r) {
    auto job = std::make_unique<batch_job>();
    job->smp = std::make_unique<sampler>(r.sampling, m.hparams().n_vocab);
    if (r.grammar) {
        std::unique_ptr<sampler_stage_i> stage = grammar_stage_new(r.grammar, model_grammar_vocab(r.grammar_control_text));
        job->grammar = grammar_stage_matcher(*stage);  // owned by the sampler from here on
        job->smp->add_stage(std::move(stage));
    }
    return job;
}

void batch_loop::set_step_observer(std::function<void(int32_t)> f) { impl_->step_observer = std::move(f); }

void batch_loop::set_draft_observer(std::function<void(int32_t, int32_t)> f) { impl_->draft_observer = std::move(f); }

void batch_loop::set_spec_observer(std::function<void(const std::string &)> f) { impl_->spec_observer = std::move(f); }

void batch_loop::set_error_observer(std::function<void(uint64_t, const std::string &)> f) {
    impl_->error_observer = std::move(f);
}

batch_loop_stats batch_loop::stats() const {
    const impl & s = *impl_;
    batch_loop_stats st;
    st.running = s.n_running.load();
    st.waiting = s.n_waiting.load();
    st.kv_usage = s.kv_usage.load();
    st.steps = s.n_steps.load();
    st.draft_tokens = s.n_draft_tokens.load();
    st.draft_accepted = s.n_draft_accepted.load();
    st.spec_active = s.spec_active.load();
    st.spec_speedup = s.spec_speedup.load();
    st.spec_turned_off = s.spec_turned_off.load();
    return st;
}

uint32_t batch_loop::n_ctx() const { return impl_->ctx ? impl_->ctx->n_ctx() : impl_->embd_max; }
bool batch_loop::has_generation() const { return impl_->ctx != nullptr; }
uint32_t batch_loop::n_parallel() const { return impl_->params.n_parallel; }

void batch_loop::impl::run() {
    for (;;) {
        {
            std::unique_lock<std::mutex> lk(mu);
            const bool busy = busy_generating();
            cv.wait(lk, [&] { return stopping || busy || !queue.empty() || !embd_queue.empty() || !embd_running.empty(); });
            if (stopping) return;
        }
        try {
            step();
        } catch (const std::exception & e) {
            fail_step(e.what());
        } catch (...) {
            fail_step("an unknown exception");
        }
    }
}

bool batch_loop::impl::busy_generating() const {
    return std::any_of(slots.begin(), slots.end(), [](const batch_slot & s) { return s.job != nullptr; });
}

// A generation step, then (with an embeddings context) one embeddings decode: a generation
// ubatch's worth of tokens while requests generate, a whole n_batch otherwise.
bool batch_loop::impl::step() {
    bool did = ctx && generation_step();
    if (embd_ctx) {
        try {
            drop_cancelled_embd();
            const size_t budget = busy_generating() ? params.ctx.n_ubatch : embd_ctx->params().n_batch;
            did = embd_step(budget) || did;
        } catch (const std::exception & e) {
            embd_fail(std::string("internal error while computing embeddings: ") + e.what());
            did = true;
        }
    }
    return did;
}

bool batch_loop::impl::generation_step() {
    drop_cancelled();
    admit_waiting();
    update_stats();  // the gauges show admitted requests before their first token goes out
    const auto t0 = std::chrono::steady_clock::now();
    const uint32_t n_gen = n_generating();
    step_emitted = 0;
    bool drafted = false;
    if (spec_enabled() && (!governor || governor->allow_drafts(n_gen))) {
        try {
            drafted = propose_drafts();
        } catch (...) {
            drop_drafts();  // speculation is optional: the step goes on without drafts
        }
    }
    llm_batch b;
    for (;;) {
        build_batch(b);
        if (b.size() == 0) {
            update_stats();
            return false;
        }
        fault("step");
        const int st = ctx->decode(b);
        if (st == decode_ok) break;
        // No room: first without drafts, then by evicting or preempting; the batch is rebuilt.
        if (st == decode_no_kv_space && (drop_drafts() || make_room())) continue;
        // Not recoverable for the requests in this batch: they end with an error.
        const std::string msg = ctx->last_error();
        for (batch_slot & s : slots) {
            if (s.job && s.n_added > 0) finish(s, gen_finish::error, msg);
        }
        update_stats();
        return true;
    }
    ++n_steps;
    if (step_observer) step_observer(int32_t(b.size()));
    const bool prompt_in_step = step_prompt_tokens > 0;
    after_decode(b);
    report_drafts();
    govern(n_gen, drafted, prompt_in_step, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    update_stats();
    return true;
}

void batch_loop::impl::build_batch(llm_batch & b) {
    b.clear();
    step_prompt_tokens = 0;
    const size_t budget = params.ctx.n_batch;
    for (batch_slot & s : slots) {
        s.logits_idx = -1;
        s.n_added = 0;
        if (s.job && s.state == slot_state::generate && s.pending >= 0) {
            s.logits_idx = int32_t(b.size());
            b.add(s.pending, int32_t(s.tokens.size()), s.seq, true);
            // Draft tokens follow, each with its logits (verified after the decode).
            for (size_t i = 0; i < s.draft.size(); ++i) b.add(s.draft[i], int32_t(s.tokens.size() + 1 + i), s.seq, true);
            s.n_added = 1 + s.draft.size();
        }
    }
    // Prompt chunks, oldest admission first, within what is left of the budget.
    std::vector<batch_slot *> prefill;
    for (batch_slot & s : slots) {
        if (s.job && s.state == slot_state::prefill) prefill.push_back(&s);
    }
    std::sort(prefill.begin(), prefill.end(), [](const batch_slot * a, const batch_slot * c) { return a->admitted < c->admitted; });
    for (batch_slot * s : prefill) {
        const size_t done = s->tokens.size();
        size_t n = std::min(s->input.size() - done, budget > b.size() ? budget - b.size() : 0);
        // Prompt log-probabilities: every position keeps its logits (n_vocab floats each).
        const bool all_logits = s->job->wants_prompt_logits();
        if (all_logits) n = std::min(n, size_t(batch_loop_prompt_logits_chunk));
        s->chunk_idx = int32_t(b.size());
        for (size_t i = 0; i < n; ++i) {
            const bool last = done + i + 1 == s->input.size();
            if (last) s->logits_idx = int32_t(b.size());
            b.add(s->input[done + i], int32_t(done + i), s->seq, last || all_logits);
        }
        s->n_added = n;
        step_prompt_tokens += n;
    }
}

void batch_loop::impl::after_decode(const llm_batch & b) {
    (void) b;
    for (batch_slot & s : slots) {
        if (!s.job || s.n_added == 0) continue;
        try {
            after_decode_slot(s);
        } catch (const std::exception & e) {
            fail_slot(s, e.what());
        } catch (...) {
            fail_slot(s, "an unknown exception");
        }
    }
}

void batch_loop::impl::after_decode_slot(batch_slot & s) {
    s.last_used = ++clock;
    if (s.state == slot_state::generate && !s.draft.empty()) return verify_draft(s);
    if (s.state == slot_state::generate) {
        s.tokens.push_back(s.pending);
        s.pending = -1;
    } else {
        if (s.job->wants_prompt_logits()) collect_prompt_logprobs(s);
        const size_t done = s.tokens.size();
        s.tokens.insert(s.tokens.end(), s.input.begin() + long(done), s.input.begin() + long(done + s.n_added));
    }
    if (s.logits_idx >= 0) sample_slot(s);
}

// The prompt log-probabilities of the chunk s decoded this step (s.tokens not yet extended):
// position p's logits score prompt[p + 1]; the first prompt token has none. Reported to the sink
// once the last chunk is in.
void batch_loop::impl::collect_prompt_logprobs(batch_slot & s) {
    batch_job & j = *s.job;
    const std::vector<int32_t> & prompt = j.req.prompt;
    const size_t done = s.tokens.size();
    const int32_t n_vocab = ctx->n_vocab();
    for (size_t i = 0; i < s.n_added; ++i) {
        const size_t p = done + i;
        if (p == 0) {
            gen_token first;
            first.id = prompt[0];
            first.logprob = NAN;
            j.prompt_lp.push_back(std::move(first));
        }
        if (p + 1 >= prompt.size()) continue;
        const float * row = ctx->logits(s.chunk_idx + int32_t(i));  // every position asked for it
        sampled_token t = sampling_logprobs(row, n_vocab, prompt[p + 1], j.req.prompt_logprobs);
        gen_token e;
        e.id = t.id;
        e.logprob = t.logprob;
        e.top = std::move(t.top);
        j.prompt_lp.push_back(std::move(e));
    }
    if (done + s.n_added < prompt.size()) return;
    j.prompt_lp_done = true;
    std::vector<gen_token> all = std::move(j.prompt_lp);
    j.prompt_lp = {};
    j.req.sink->on_prompt_logprobs(all);
}

void batch_loop::impl::sample_slot(batch_slot & s) {
    batch_job & j = *s.job;
    if (j.req.max_tokens >= 0 && int32_t(j.generated.size()) >= j.req.max_tokens) {
        return finish(s, gen_finish::length);  // max_tokens 0: the prompt only (echo)
    }
    emit_sampled(s, j.smp->sample(ctx->logits(s.logits_idx)));
}

// A token the request's sampler drew: finishes the request (end of generation, nothing drawable,
// a stop from the sink, max_tokens, a full context) or makes it the slot's pending token.
void batch_loop::impl::emit_sampled(batch_slot & s, const sampled_token & t) {
    batch_job & j = *s.job;
    s.state = slot_state::generate;
    // A grammar that proved too costly to follow allows nothing either: the request is refused.
    if (j.grammar && !j.grammar->error().empty()) return finish(s, gen_finish::refused, j.grammar->error());
    if (t.id < 0 && j.grammar) return finish(s, gen_finish::stop);  // the grammar allows nothing more
    if (t.id < 0) return finish(s, gen_finish::error, "no token could be sampled (every logit was excluded)");
    // Under a grammar an end-of-generation token comes only where the output is complete.
    if ((!j.req.ignore_eos || j.grammar) && m.get_vocab().is_eog(t.id)) return finish(s, gen_finish::stop);
    if (!j.smp->accept(t.id)) {
        if (j.grammar && !j.grammar->error().empty()) return finish(s, gen_finish::refused, j.grammar->error());
        return finish(s, gen_finish::error, "the sampler refused token " + std::to_string(t.id) + " that it sampled");
    }
    j.generated.push_back(t.id);
    ++step_emitted;
    gen_token out;
    out.id = t.id;
    out.logprob = t.logprob;
    out.top = t.top;
    fault("token");
    if (!j.req.sink->on_token(out)) return finish(s, gen_finish::stop);
    if (j.grammar && j.grammar->is_complete()) return finish(s, gen_finish::stop);
    if (j.req.max_tokens >= 0 && int32_t(j.generated.size()) >= j.req.max_tokens) return finish(s, gen_finish::length);
    if (s.tokens.size() + 1 >= ctx->n_ctx()) return finish(s, gen_finish::length);
    s.pending = t.id;
}

void batch_loop::impl::finish(batch_slot & s, gen_finish reason, const std::string & message) {
    std::unique_ptr<batch_job> j = std::move(s.job);
    s.state = slot_state::idle;
    s.pending = -1;
    s.input.clear();
    s.draft.clear();
    s.last_used = ++clock;
    gen_usage u;
    u.prompt_tokens = int32_t(j->req.prompt.size());
    u.completion_tokens = int32_t(j->generated.size());
    u.cached_tokens = std::max(0, j->n_cached_first);
    u.draft_tokens = j->draft_tokens;
    u.draft_accepted = j->draft_accepted;
    // The gauge drops before the answer goes out: a client that has its answer never sees its
    // request still counted as running.
    count_running();
    try {
        j->req.sink->on_finished(reason, u, message);
    } catch (...) {
        // The sink failed to report the end: dropping it unanswered leaves the reply to its owner
        // (the HTTP layer answers 500 for a response dropped without an answer).
    }
}

void batch_loop::impl::drop_cancelled() {
    for (batch_slot & s : slots) {
        if (s.job && s.job->req.sink->cancelled()) finish(s, gen_finish::cancelled);
    }
    std::vector<std::unique_ptr<batch_job>> gone;
    {
        std::lock_guard<std::mutex> lk(mu);
        for (auto it = queue.begin(); it != queue.end();) {
            if ((*it)->req.sink->cancelled()) {
                gone.push_back(std::move(*it));
                it = queue.erase(it);
            } else {
                ++it;
            }
        }
        n_waiting = uint32_t(queue.size());
    }
    for (auto & j : gone) {
        gen_usage u;
        u.prompt_tokens = int32_t(j->req.prompt.size());
        u.completion_tokens = int32_t(j->generated.size());
        try {
            j->req.sink->on_finished(gen_finish::cancelled, u, "");
        } catch (...) {
            // the client is gone anyway
        }
    }
}

void batch_loop::impl::count_running() {
    n_running = uint32_t(std::count_if(slots.begin(), slots.end(), [](const batch_slot & s) { return s.job != nullptr; }));
}

void batch_loop::impl::update_stats() {
    count_running();
    if (ctx) kv_usage = float(ctx->kv().used()) / float(ctx->kv().size());
    std::lock_guard<std::mutex> lk(mu);
    n_waiting = uint32_t(queue.size());
}
