// server/batch-loop.h — the batch loop: one thread that turns queued generation requests into
// engine batches, step after step (continuous batching), over a fixed number of slots.
//
// Usage:
//   batch_loop_params bp; bp.n_parallel = 8; bp.ctx.n_ctx = 4096; bp.ctx.n_threads = 2;
//   batch_loop loop(*model, bp);                 // throws std::runtime_error (bad params, a draft
//                                                // model of another vocabulary)
//   loop.start();
//   auto sink = std::make_shared<my_sink>();     // implements gen_sink (see below)
//   gen_request r; r.prompt = ids; r.max_tokens = 64; r.sampling = sp; r.sink = sink;
//   if (!loop.submit(std::move(r), &why)) { ... }  // queue full (HTTP 503) or invalid
//   ...
//   loop.stop();                                 // finishes nothing new; cancels what is left
//
// Each step: requests waiting in the queue take free slots; every generating slot adds its last
// token; prompts being prefilled add chunks (at most n_batch tokens in the whole batch, so a long
// prompt is spread over several steps and never stalls the generating slots for long); one
// decode; every slot whose logits came back samples a token and reports it to its sink. A
// request leaves its slot at once when it finishes (end-of-generation token, max_tokens, a full
// context, its sink says stop) or is cancelled (sink->cancelled(), e.g. the client went away).
//
// Prefix cache: a slot's tokens stay in the KV cache after its request ends. A new request takes
// the slot whose tokens share the longest prefix with its prompt, or shares the cells of another
// slot's prefix by sequence copy (no recomputation); the reused count is reported as
// n_cached. A request whose prompt shares a long prefix (16+ tokens more than is cached) with a
// prompt being prefilled right now waits for those cells instead of computing them again, while
// requests behind it in the queue go ahead (n > 1; many requests with one preamble). Idle
// slots' cells are evicted least-recently-used when the cache is full.
//
// Preemption: when the KV cache has no room for a step even after evicting idle caches, the
// most recently admitted running request is paused (its cells dropped) and put back at the
// head of the queue with its prompt and the tokens generated so far; it is recomputed later and
// continues where it stopped, so no request fails because another one took the space.
//
// Prompt log-probabilities (gen_request::prompt_logprobs >= 0; echo + logprobs in the API): the
// prompt is computed with logits for every position, in chunks of at most
// batch_loop_prompt_logits_chunk tokens per step (n_vocab floats each), and never taken from the
// prefix cache (cached cells have no logits; n_cached is 0), though its cells stay as a cache for
// later requests. Token i > 0 gets the log-softmax of the raw logits at position i - 1 evaluated at
// prompt[i], with the best alternatives (as sampling_logprobs() computes them; no sampling
// transforms); token 0 has none. The whole list goes to on_prompt_logprobs() once, after the
// prompt is computed and before the first token; a preemption does not repeat it.
//
// Constrained output (gen_request::grammar set): the request's sampler gets a grammar stage
// (engine/grammar-stage.h) over the model's vocabulary as the grammar engine sees it (built once,
// at the first such request; a second one with control tokens as text for grammar_control_text), so every token keeps the output inside the grammar; each request
// (each choice of an API request) has its own stage, and a preempted request keeps it. The
// request finishes with `stop` when the output is complete (no byte can follow), when the grammar
// allows nothing more, or at an end-of-generation token (allowed only where the output is a
// sentence of the grammar; also with ignore_eos); max_tokens and a full context still give
// `length`.
//
// Embeddings (params.embeddings): a second context without a KV cache computes embedding
// requests, whole inputs packed as sequences into one decode per step: at most one ubatch while
// generation requests run (so they wait at most that long), up to n_batch tokens otherwise. An
// input is never split; requests are served in order. With params.generation false there is no
// generation context at all (encoder-only models): submit() refuses every request.
//
// Faults: an exception while serving one request (its sink, its sampler, its prompt
// log-probabilities) ends that request with `error` and a message naming the failure, its
// cells leave the cache, and the other requests go on. An exception that escapes a whole step
// (an allocation in a decode, the draft model) ends the requests of that step the same way;
// a draft model's failure only drops the step's drafts. The loop thread never dies of a
// request; set_error_observer sees each such failure (for the log).
// params.fault_hook, when set, is called at the sites "admit" (a request takes a slot), "token"
// (before a sampled token goes to the sink), "step" (before each decode) and "draft" (before a
// step's drafts are proposed; a throw there drops the step's drafts) and may throw (or stall):
// tests and INFERD_DEBUG_FAULTS use it to inject failures.
//
// Speculative decoding (params.spec): a generating slot may put its pending token plus k draft
// tokens into one step, with logits at each of those positions. Drafts come from n-gram lookup in
// the slot's own tokens (spec.ngram > 0: the tokens that followed the most recent earlier
// occurrence of its last N..1 tokens) or from a draft model (spec.draft: a smaller model of the
// same vocabulary, its own context with one sequence per slot, drafting greedily until its top
// probability falls below spec.p_min), at most spec.n_max tokens, only where the step has room
// (n_batch and n_ubatch: prompt chunks come first). Verification samples each position in order
// with the request's own sampler (grammar stage included): a sample equal to the draft token
// accepts it and goes on, the first one that differs is emitted instead and the rest of the
// draft is removed from the KV cache. The sampler is called once per emitted token, in the same
// order as without speculation, so a request's output (seeded or greedy) is the same token for
// token (up to the float rounding of positions computed together in one step, which can differ
// in the last bit, as between concurrent and lone requests); only the number of steps changes.
// Every emitted token goes through the usual per-token path (sink, cancellation, max_tokens,
// end-of-generation, logprobs of its own position). Pacing: a request's next draft is at most 4
// tokens at first, doubles after a draft accepted whole and falls to one more than was accepted
// otherwise; after a draft with nothing accepted (or a draft model sure of nothing) the request
// drafts nothing for 1, 3, 7, 15 or 31 steps. With spec.adaptive the loop also measures whether
// drafting pays at all: steps of generation only, with and without drafting, are timed (drafting
// included) for the same number of generating requests; when the tokens per second with drafts
// fall below 0.98x those without, drafting stops for the whole loop and is tried again after 128
// steps (doubling up to 8192 while it keeps losing). stats() and set_spec_observer say so.
//
// Sinks are called on the batch loop thread only and must not block.
#pragma once

#include "engine/context.h"
#include "engine/model.h"
#include "engine/sampling.h"

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

class grammar_program;

// error: the server failed; refused: the request's own constraint could not be followed (its
// grammar proved too costly to follow partway), a fault of the request, not of the server.
enum class gen_finish { stop, length, cancelled, error, refused };
const char * gen_finish_name(gen_finish f);  // "stop", "length", "cancelled", "error", "refused"

struct gen_token {
    int32_t id = -1;
    float logprob = 0.0f;                           // NaN unless the request asked for logprobs
    std::vector<std::pair<int32_t, float>> top;     // n_probs alternatives, best first
};

// Most prompt tokens a request with prompt_logprobs puts in one step (each keeps its logits).
constexpr int32_t batch_loop_prompt_logits_chunk = 256;

struct gen_usage {
    int32_t prompt_tokens = 0;
    int32_t completion_tokens = 0;
    int32_t cached_tokens = 0;  // prompt tokens taken from the prefix cache
    int32_t draft_tokens = 0;   // speculative decoding: draft tokens verified for this request
    int32_t draft_accepted = 0; // of which accepted (emitted without a step of their own)
};

// Receives one request's progress (on the batch loop thread).
class gen_sink {
public:
    virtual ~gen_sink() = default;
    // The prompt was admitted to a slot (n_cached of its tokens reused). Called again after a
    // preemption, when the request resumes.
    virtual void on_admitted(int32_t n_prompt, int32_t n_cached) { (void) n_prompt, (void) n_cached; }
    // A generated token; return false to finish the request now (a stop string was met): the
    // finish reason is then `stop`.
    virtual bool on_token(const gen_token & t) = 0;
    // Requests with prompt_logprobs >= 0 only: one entry per prompt token, in order (id = the
    // prompt token; the first has logprob NaN and no alternatives), once, before the first
    // on_token (also when max_tokens is 0).
    virtual void on_prompt_logprobs(const std::vector<gen_token> & prompt) { (void) prompt; }
    // The end, exactly once (also for cancelled requests and errors; message for errors).
    virtual void on_finished(gen_finish reason, const gen_usage & usage, const std::string & message) = 0;
    // Polled every step: true ends the request (reason cancelled).
    virtual bool cancelled() const { return false; }
};

struct gen_request {
    std::vector<int32_t> prompt;  // at least one token
    int32_t max_tokens = -1;      // -1: until an end-of-generation token or the context ends
    bool ignore_eos = false;
    int32_t prompt_logprobs = -1; // -1: off; 0..sampling_max_n_probs: report the prompt's
                                  // log-probabilities with that many alternatives per token
    sampling_params sampling;
    std::shared_ptr<const grammar_program> grammar;  // nullptr: unconstrained (grammar/token-mask.h)
    // The grammar reads control tokens that do not end generation as their text (tool-call
    // markers such as "<|channel|>"; the sink then renders them too), instead of forbidding them.
    bool grammar_control_text = false;
    std::shared_ptr<gen_sink> sink;
};

// Embedding requests: inputs (token ids) in, one vector per input out (pooled by the embeddings
// context: mean, cls, last, or the rank score).
struct embd_request {
    std::vector<std::vector<int32_t>> inputs;  // each non-empty and at most embd_max_tokens()
    // Called once, on the batch loop thread: the vectors in input order (empty with a message on
    // failure or cancellation).
    std::function<void(std::vector<std::vector<float>> vectors, const std::string & error)> done;
    std::function<bool()> cancelled;  // optional: polled between steps; true drops the request
};

// Speculative decoding (see above). Off unless draft or ngram is set; with both, the draft model
// drafts and n-gram lookup is not used.
struct batch_loop_spec_params {
    const model * draft = nullptr;  // draft model, same vocabulary (checked: the loop throws)
    uint32_t ngram = 0;             // n-gram lookup: the longest suffix matched (0: off)
    int32_t n_max = 16;             // most draft tokens per slot and step
    int32_t n_min = 0;              // shorter drafts are not verified
    float p_min = 0.75f;            // draft model: stop drafting below this top probability
    bool adaptive = false;          // drafting turns itself off while it makes generation slower
    bool enabled() const { return draft != nullptr || ngram > 0; }
};

struct batch_loop_params {
    context_params ctx;            // n_ctx, n_batch (tokens per step), n_ubatch, threads, KV types
    uint32_t n_parallel = 4;       // slots
    uint32_t max_queue = 64;       // requests that may wait beyond the free slots; more: refused
    bool generation = true;        // false: no generation context (encoder-only models)
    bool embeddings = false;       // a second context computes embedding requests
    pooling_type pooling = pooling_type::unspecified;  // of the embeddings context
    uint32_t embd_max_tokens = 8192;  // the longest embedding input (also bounded by n_ctx)
    batch_loop_spec_params spec;      // speculative decoding (off by default)
    std::function<void(std::string_view site)> fault_hook;  // see "Faults" above
};

struct batch_loop_stats {
    uint32_t running = 0;       // requests in slots
    uint32_t waiting = 0;       // requests queued
    float kv_usage = 0.0f;      // used cells / cells
    uint64_t steps = 0;         // decode calls so far
    uint64_t draft_tokens = 0;  // draft tokens verified so far (speculative decoding)
    uint64_t draft_accepted = 0;  // of which accepted
    // Adaptive speculation: whether drafting is on now (false without speculation), the last
    // measured tokens-per-second ratio of steps with drafts to steps without (0 before the first
    // verdict), and how often drafting turned itself off.
    bool spec_active = false;
    double spec_speedup = 0.0;
    uint64_t spec_turned_off = 0;
};

class batch_loop {
public:
    batch_loop(const model & m, const batch_loop_params & params);
    ~batch_loop();  // stop()
    batch_loop(const batch_loop &) = delete;
    batch_loop & operator=(const batch_loop &) = delete;

    void start();
    // Ends the thread; requests still queued or running finish with `cancelled`.
    void stop();
    // Queues a request (thread-safe). False with *why when the queue is full or the request is
    // invalid (empty prompt, prompt not shorter than the context, token outside the vocabulary,
    // prompt_logprobs outside -1..sampling_max_n_probs);
    // the sink is not called then.
    bool submit(gen_request r, std::string * why);
    // Several requests at once (the choices of one API request): all are queued or none (when
    // they do not all fit in the queue, or one is invalid); the requests are moved from only
    // when the call succeeds.
    bool submit_all(std::vector<gen_request> & rs, std::string * why);
    // Called after every decode step with the batch size (on the loop thread), for metrics.
    void set_step_observer(std::function<void(int32_t n_tokens)> f);
    // Called after every step that verified drafts (on the loop thread), for metrics: the draft
    // tokens verified in that step and how many of them were accepted.
    void set_draft_observer(std::function<void(int32_t n_drafted, int32_t n_accepted)> f);
    // Called (on the loop thread) when adaptive speculation turns drafting off or on, with a line
    // for the log that says why.
    void set_spec_observer(std::function<void(const std::string & change)> f);
    // Called (on the loop thread) when an exception ended a request: its id and what happened.
    void set_error_observer(std::function<void(uint64_t request_id, const std::string & what)> f);

    // Queues an embedding request (thread-safe). False with *why when the loop has no
    // embeddings context, the queue is full, or an input is empty, too long or outside the
    // vocabulary; `done` is not called then.
    bool submit_embeddings(embd_request r, std::string * why);

    batch_loop_stats stats() const;  // thread-safe
    uint32_t n_ctx() const;          // the generation context's (embeddings only: embd_max_tokens)
    uint32_t n_parallel() const;
    bool has_generation() const;
    bool has_embeddings() const;
    uint32_t embd_max_tokens() const;  // the longest embedding input
    int32_t embd_size() const;         // floats per embedding vector
    pooling_type embd_pooling() const;

private:
    struct impl;
    std::unique_ptr<impl> impl_;
};
