// engine/sampling.h — the sampling chain: from one row of logits to one token id.
//
// Usage:
//   sampling_params sp; sp.temperature = 0.7f; sp.top_k = 40; sp.seed = 42; sp.n_probs = 5;
//   if (auto err = sampling_params_validate(sp, n_vocab); !err.empty()) reject(err);  // names the field
//   sampler smp(sp, n_vocab);                 // throws std::invalid_argument with the same message
//   for (int32_t t : prompt) smp.accept_history(t);   // optional: let penalties see the prompt
//   for (;;) {
//       sampled_token tok = smp.sample(logits);   // logits: n_vocab floats of the last position
//       if (tok.id < 0) break;                    // nothing drawable (every logit -inf or NaN)
//       smp.accept(tok.id);                       // feeds the penalty window and the stages
//       ...                                       // decode tok.id, next logits
//   }
//
// One sampler per sequence (per request in the server); it knows nothing of models or text and
// is not thread-safe (use one per thread).
//
// The chain, in this order, on a working copy of the logits row:
//   1. penalties over the last penalty_last_n accepted tokens (all when -1, none when 0), each
//      distinct token t with count c > 0 in that window:
//        repeat:    logit = logit > 0 ? logit / repeat_penalty : logit * repeat_penalty
//        presence:  logit -= presence_penalty
//        frequency: logit -= frequency_penalty * c
//   2. logit bias: each (id, b) adds b to logit[id]; b = -INFINITY bans id. Repeated ids add up.
//   2b. the stages added with add_stage, in order (sampler_stage_i: e.g. a grammar's mask).
//   Candidates: the tokens whose logit is now finite (NaN and +-inf are never drawn).
//   3. top-k (top_k > 0): keeps the k best candidates.
//   4. top-p (top_p < 1): with p_i the softmax at temperature 1 over the remaining candidates,
//      keeps the smallest best-first prefix whose mass sum(p_i) reaches top_p (>=); always at
//      least one.
//   5. min-p (min_p > 0): keeps the candidates with p_i >= min_p * max p_i, p_i again the softmax
//      at temperature 1 (the ratio does not depend on which candidates remain).
//   6. temperature: the draw uses p_i proportional to exp((logit_i - max logit) / temperature)
//      over the survivors. Temperature is applied last (as in llama.cpp): the filters above see
//      temperature-1 probabilities, so a high temperature flattens only what survived them.
//   7. a draw with the sampler's RNG. temperature == 0 is greedy: the best candidate (highest
//      logit after penalties and bias), no RNG drawn.
// "Best" is everywhere: higher logit first, equal logits → lower token id first. So greedy
// picks the lowest id among tied maxima, and top-k keeps the lowest ids among ties at the cut.
//
// Randomness: std::mt19937_64 seeded with `seed` (its output sequence is fixed by the C++
// standard); one 64-bit output per non-greedy draw, u = (x >> 11) * 2^-53 in [0, 1), and the
// token is the first survivor in token id order whose running weight sum exceeds u * total
// (total: the sum of the survivors' p). Id order rather than best first: a tiny difference in
// the logits (another batch split, another kernel) that swaps two nearly equal candidates
// changes the token only when u falls within that difference of a boundary. No std:: distribution is used and the
// exponentials come from the engine's own exp (not libm), so a seed gives the same tokens on
// every platform for the same logits. reset() reseeds.
//
// Log-probabilities (as OpenAI / vLLM report them): log-softmax of the raw logits row as given
// to sample() — before penalties, bias, truncation and temperature. Non-finite raw logits count
// as -inf (probability 0, log-probability -inf). sampling_logprobs() computes the same for any
// row and token.
//
// Cost (n_vocab 128256, one x86-64 core, AVX2 chosen at run time; measured on a busy machine):
// defaults (top-k 40) ~0.15-0.25 ms per sample(), of which all but ~0.05 ms is the log-softmax
// pass that params.logprob = false skips; no filters at all ~0.8-1.6 ms (every token is a
// candidate). No pass sorts the vocabulary: top-k keeps a k-element heap, min-p / top-p first
// find a logit floor and sort only what is above it (a flat distribution with top-p alone can
// still leave tens of thousands to sort). Buffers are reused; sample() allocates only the
// returned top list.
//
// Errors: sampler's constructor throws std::invalid_argument for invalid params (the message of
// sampling_params_validate). sample() never throws on logits contents; it returns id -1 (with
// logprob -inf) when no candidate is left after penalties and bias. accept() returns false and
// changes nothing for an id outside [0, n_vocab).
#pragma once

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

struct sampling_params {
    float temperature = 0.8f;        // >= 0; 0: greedy
    int32_t top_k = 40;              // <= 0: off
    float top_p = 0.95f;             // (0, 1]; 1: off
    float min_p = 0.05f;             // [0, 1]; 0: off
    float repeat_penalty = 1.0f;     // > 0; 1: off
    float presence_penalty = 0.0f;   // finite; 0: off
    float frequency_penalty = 0.0f;  // finite; 0: off
    int32_t penalty_last_n = 64;     // window of accepted tokens the penalties see; -1: all, 0: none
    std::vector<std::pair<int32_t, float>> logit_bias;  // (id, added); -INFINITY bans; not NaN / +inf
    uint64_t seed = 0;               // same seed + same logits → same tokens
    int32_t n_probs = 0;             // 0..sampling_max_n_probs best log-probabilities to report
    bool logprob = true;             // false (and n_probs 0): skip the log-softmax pass over the
                                     // row (~0.1 ms at 128k tokens); sampled_token.logprob is NaN
};

constexpr int32_t sampling_max_n_probs = 20;

struct sampled_token {
    int32_t id = -1;                 // -1: nothing drawable
    float logprob = 0.0f;            // log-probability of id under the raw logits row (NaN when
                                     // params.logprob is false and n_probs is 0)
    std::vector<std::pair<int32_t, float>> top;  // n_probs best (id, logprob), best first
};

// Log-probabilities under a raw logits row (n_vocab floats), exactly as sample() reports them:
// the log-softmax of the row (non-finite entries count as -inf) at id (-inf for an id outside
// [0, n_vocab)), and the n_top best (id, logprob), best first, ties to the lower id (n_top is
// clamped to 0..sampling_max_n_probs). The result's id is id. For scoring given tokens (prompt
// log-probabilities) without a sampler:
//   sampled_token lp = sampling_logprobs(ctx.logits(i), n_vocab, prompt[i + 1], 5);
sampled_token sampling_logprobs(const float * logits, int32_t n_vocab, int32_t id, int32_t n_top);

// One token that survived the chain, with its drawing probability.
struct sampling_candidate {
    int32_t id;
    float logit;  // after penalties and bias
    float p;      // probability used by the draw (at temperature); sums to 1 over the survivors
};

// Empty string when p is usable with a vocabulary of n_vocab tokens, else one message naming
// the offending field, e.g. "top_p must be in (0, 1], got 1.5".
std::string sampling_params_validate(const sampling_params & p, int32_t n_vocab);

// A stage of the chain that the caller adds (a grammar's token mask, for one): it sees the
// working row of logits after penalties and logit bias, before top-k and the other filters, and
// the tokens the sequence goes on with.
//   apply:  changes the row in place (n_vocab floats); a stage forbids a token by setting its
//           logit to -INFINITY (forbidden tokens are never drawn; when every token is, sample()
//           returns id -1).
//   accept: the token the sequence continues with; false when the stage cannot take it (the
//           sampler then stops and returns false).
//   reset:  back to the state before any accept.
//   clone:  an independent copy in the same state (a sampler copied for another choice).
class sampler_stage_i {
public:
    virtual ~sampler_stage_i() = default;
    virtual const char * name() const = 0;
    virtual void apply(float * logits, int32_t n_vocab) = 0;
    virtual bool accept(int32_t id) = 0;
    virtual void reset() = 0;
    virtual std::unique_ptr<sampler_stage_i> clone() const = 0;
};

class sampler {
public:
    sampler(const sampling_params & params, int32_t n_vocab);  // throws std::invalid_argument
    // A copy in the same state: penalty window, RNG position, and a clone of every stage.
    sampler(const sampler & other);
    sampler & operator=(const sampler &) = delete;

    // Appends a stage (applied in the order added, after penalties and bias).
    void add_stage(std::unique_ptr<sampler_stage_i> stage);
    size_t n_stages() const { return stages_.size(); }

    // Draws a token from logits (n_vocab floats). Advances the RNG (unless greedy); does not
    // change the penalty history.
    sampled_token sample(const float * logits);

    // The survivors of the chain for logits and their drawing probabilities, without drawing:
    // best first when top-k cuts (0 < top_k < number of candidates), top_p < 1 or min_p > 0,
    // else in token id order; one candidate with p = 1 when greedy; empty when nothing is
    // drawable. Valid until the next call.
    const std::vector<sampling_candidate> & distribution(const float * logits);

    // The sequence continues with id: appends it to the penalty history and passes it to every
    // stage in order. Returns false when id is out of range (nothing changes) or a stage refuses
    // it (the stages before it have taken it: reset() or discard the sampler).
    bool accept(int32_t id);
    // Appends id to the penalty history only (prompt tokens the penalties should see; stages do
    // not see them). Returns false and changes nothing when id is out of range.
    bool accept_history(int32_t id);

    // Clears the penalty history, resets every stage and reseeds the RNG with params().seed.
    void reset();

    const sampling_params & params() const { return params_; }
    int32_t n_vocab() const { return n_vocab_; }
    // Number of times id occurs in the current penalty window (0 when out of range).
    int32_t history_count(int32_t id) const;

private:
    bool penalties_active() const;
    const float * apply_penalties_and_bias(const float * logits);
    void select_top_k(const float * logits);
    void truncate_sorted();
    void collect_filtered(const float * logits);
    void apply_temperature();
    void set_greedy(const float * logits);
    int32_t draw();
    void fill_logprobs(const float * logits, sampled_token & out) const;

    sampling_params params_;
    int32_t n_vocab_;
    std::mt19937_64 rng_;

    std::vector<sampling_candidate> cand_;  // reusable candidate buffer (capacity n_vocab)
    std::vector<float> work_;               // penalised / biased copy of the row (when needed)

    // penalty window: ring_ holds the last penalty_last_n accepted ids (unused for -1);
    // count_[t] its multiplicity, distinct_ the ids with count > 0, where_[t] t's index there.
    std::vector<int32_t> ring_;
    size_t ring_head_ = 0;
    size_t ring_size_ = 0;
    std::vector<int32_t> count_;
    std::vector<int32_t> distinct_;
    std::vector<int32_t> where_;

    std::vector<std::unique_ptr<sampler_stage_i>> stages_;
};
