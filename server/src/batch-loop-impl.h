// The state behind server/batch-loop.h (internal).
#pragma once

#include "server/batch-loop.h"

#include "grammar/token-mask.h"
#include "spec-draft.h"
#include "spec-governor.h"

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>

// A request between submit() and its end: what it asked for and how far it got (a preempted
// request keeps its sampler and generated tokens and resumes).
struct batch_job {
    gen_request req;
    std::unique_ptr<sampler> smp;
    const grammar_matcher * grammar = nullptr;  // the grammar stage's state in smp, when constrained
    std::vector<int32_t> generated;  // every token reported to the sink so far
    int32_t n_cached_first = -1;     // prefix-cache hits at the first admission
    uint64_t id = 0;
    std::vector<gen_token> prompt_lp;  // prompt log-probabilities computed so far
    bool prompt_lp_done = false;       // reported to the sink (never again)
    int32_t draft_tokens = 0;          // speculative decoding: draft tokens verified
    int32_t draft_accepted = 0;        // of which the sampler drew at their position
    // Draft pacing: the longest draft to verify next (doubles after a draft accepted whole, falls
    // to one more than accepted otherwise), verifications in a row that accepted nothing, and
    // steps left without a draft (1, 3, 7, ... 31 after 1, 2, 3, ... such misses).
    int32_t draft_cap = 4;
    int32_t draft_misses = 0;
    int32_t draft_wait = 0;
    // The prompt still needs logits at every position (no prefix cache, small chunks).
    bool wants_prompt_logits() const { return req.prompt_logprobs >= 0 && !prompt_lp_done; }
};

// An embedding request between submit_embeddings() and its end.
struct embd_job {
    embd_request req;
    std::vector<std::vector<float>> out;  // one vector per input, filled as they are computed
    size_t next = 0;                      // inputs put into a decode so far
    size_t done = 0;                      // inputs computed
};

enum class slot_state { idle, prefill, generate };

struct batch_slot {
    int32_t seq = 0;
    slot_state state = slot_state::idle;
    std::vector<int32_t> tokens;  // what the KV cache holds for this sequence, in position order
    std::unique_ptr<batch_job> job;
    std::vector<int32_t> input;   // the admitted prompt: the request's prompt + generated so far
    int32_t pending = -1;         // sampled token still to decode (generate state)
    int32_t logits_idx = -1;      // batch index of this slot's logits in the current step
    int32_t chunk_idx = -1;       // batch index of this slot's first prompt token this step
    size_t n_added = 0;           // tokens this slot put in the current batch
    std::vector<int32_t> draft;   // draft tokens after pending in the current batch (speculation)
    uint64_t admitted = 0;        // admission order (preemption takes the newest)
    uint64_t last_used = 0;       // LRU of idle caches
};

struct batch_loop::impl {
    const model & m;
    batch_loop_params params;
    std::unique_ptr<context> ctx;       // generation (nullptr without params.generation)
    std::unique_ptr<context> embd_ctx;  // embeddings (nullptr without params.embeddings)
    uint32_t embd_max = 0;              // the longest embedding input
    std::vector<batch_slot> slots;

    std::mutex mu;
    std::condition_variable cv;
    std::deque<std::unique_ptr<batch_job>> queue;  // guarded by mu
    std::deque<std::unique_ptr<embd_job>> embd_queue;    // guarded by mu
    std::deque<std::unique_ptr<embd_job>> embd_running;  // loop thread only
    bool stopping = false;                          // guarded by mu
    std::thread thread;
    std::function<void(int32_t)> step_observer;
    std::function<void(int32_t, int32_t)> draft_observer;
    std::function<void(uint64_t, const std::string &)> error_observer;
    std::function<void(const std::string &)> spec_observer;
    std::unique_ptr<spec_draft_model> drafter;  // params.spec.draft's context, when set
    int32_t step_drafted = 0, step_accepted = 0;  // draft tokens verified / accepted this step
    uint32_t step_emitted = 0;                    // tokens sent to sinks this step
    size_t step_prompt_tokens = 0;                // prompt tokens in this step's batch
    std::unique_ptr<spec_governor> governor;      // params.spec.adaptive
    std::atomic<bool> spec_active{false};
    std::atomic<double> spec_speedup{0.0};
    std::atomic<uint64_t> spec_turned_off{0};

    // The model's vocabulary for grammars, built on first use: [1] with control tokens as text.
    std::once_flag grammar_vocab_once[2];
    std::shared_ptr<const grammar_vocab> grammar_vocab_[2];

    std::atomic<uint32_t> n_running{0}, n_waiting{0};
    std::atomic<float> kv_usage{0.0f};
    std::atomic<uint64_t> n_steps{0};
    std::atomic<uint64_t> n_draft_tokens{0}, n_draft_accepted{0};
    uint64_t next_id = 1, clock = 0;

    impl(const model & mm, const batch_loop_params & p) : m(mm), params(p) {}

    std::string check(const gen_request & r) const;  // "" when the request may be queued
    std::unique_ptr<batch_job> new_job(const gen_request & r);  // its sampler (and grammar stage)
    std::shared_ptr<const grammar_vocab> model_grammar_vocab(bool control_as_text);  // thread-safe
    void run();
    bool step();  // false when there was nothing to do
    bool generation_step();
    bool busy_generating() const;  // a slot has a request
    // One decode of embedding inputs (at most `budget` tokens, at least one input); false when
    // none waited.
    bool embd_step(size_t budget);
    void embd_fail(const std::string & message);  // every running embedding request ends with it
    void drop_cancelled_embd();
    void stop_embd();  // at shutdown: every embedding request ends
    void admit_waiting();
    std::unique_ptr<batch_job> next_admissible_job();
    size_t usable_prefix(const batch_slot & s, const std::vector<int32_t> & input, size_t limit) const;
    size_t cached_prefix(const std::vector<int32_t> & input) const;
    bool worth_waiting(const std::vector<int32_t> & input, size_t cached) const;
    void admit(batch_slot & s, std::unique_ptr<batch_job> job);
    void build_batch(llm_batch & b);
    bool make_room();  // evict an idle cache or preempt the newest request; false when neither
    void after_decode(const llm_batch & b);
    void collect_prompt_logprobs(batch_slot & s);  // before s.tokens takes the step's chunk
    void sample_slot(batch_slot & s);
    void emit_sampled(batch_slot & s, const sampled_token & t);  // the sampled token's way out

    // Speculative decoding (batch-spec.cpp).
    bool spec_enabled() const;
    void spec_setup();            // the draft model's context; throws when it cannot draft
    bool propose_drafts();        // fills slots' drafts within the step's room; false: no drafting ran
    uint32_t n_generating() const;  // slots with a pending token to decode
    // The step's rate to the governor (n_gen: n_generating() before the step).
    void govern(uint32_t n_gen, bool drafted, bool prompt_in_step, double seconds);
    size_t draft_room() const;    // tokens the step can add beyond pending tokens and prompt chunks
    int32_t draft_limit(const batch_slot & s) const;  // most draft tokens s can use now
    bool drop_drafts();           // false when no slot had one
    void verify_draft(batch_slot & s);  // after the decode: accept, correct, roll back
    void report_drafts();         // the step's counts to the stats and the observer
    void finish(batch_slot & s, gen_finish reason, const std::string & message = "");
    // Faults (batch-faults.cpp): the request in s ends with an error, its cells leave the cache.
    void fail_slot(batch_slot & s, const std::string & what);
    void fail_step(const std::string & what);  // every request in a slot, and the embeddings
    void fault(std::string_view site) const;   // params.fault_hook, when set
    void after_decode_slot(batch_slot & s);
    void drop_cancelled();
    void update_stats();
    void count_running();  // n_running from the slots
};
