// Whether speculative decoding pays on this machine and this traffic (internal to the batch
// loop): it compares the tokens per second of generation steps that drafted with those of steps
// that did not, for the same number of generating requests, and turns drafting off when it
// loses. Drafting is tried again later (after 128 steps, doubling up to 8192 while it keeps
// losing), since the acceptance rate depends on what is being generated.
//
// Usage (once per step, on the loop thread):
//   spec_governor g;
//   const bool may_draft = g.allow_drafts(n_generating);
//   ... propose drafts only when may_draft, decode, verify ...
//   if (only generation in the step) g.observe(n_generating, drafting_ran, seconds, tokens_emitted);
//
// Measurements: a step "drafts" when drafting ran for at least one request (its cost is paid
// whether or not a draft came out); a plain step is one where it did not. While drafting is on,
// one step in plain_every is kept plain whenever the plain rate for that number of requests is
// older than that, so the comparison stays fresh as the context grows.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

struct spec_governor_params {
    uint32_t min_samples = 8;     // drafting and plain steps each needed before a verdict
    uint32_t plain_every = 32;    // while on: a plain step when the plain rate is older than this
    double keep_ratio = 0.98;     // drafting stays on while its rate is at least this times plain
    uint32_t first_retry = 128;   // steps off before drafting is tried again; doubles each time
    uint32_t max_retry = 8192;
    double smoothing = 0.125;     // weight of a new step in the moving rates (after 1/smoothing)
};

class spec_governor {
public:
    explicit spec_governor(const spec_governor_params & p = {});

    // Whether this step may draft, for n_gen generating requests (counts the step).
    bool allow_drafts(uint32_t n_gen);
    // After a step of generation only (no prompt tokens): n_gen generating requests, whether
    // drafting ran, its wall time (drafting included) and the tokens it emitted.
    void observe(uint32_t n_gen, bool drafted, double seconds, uint32_t emitted);

    bool active() const { return on_; }
    // The last verdict's rate with drafts / without (0 before the first verdict).
    double speedup() const { return speedup_; }
    uint64_t times_disabled() const { return n_disabled_; }
    // One line on the last change of state ("" when there was none), for the log; cleared.
    std::string take_change();

private:
    struct bucket {
        double plain_rate = 0, spec_rate = 0;   // tokens per second, moving averages
        uint32_t n_plain = 0, n_spec = 0;       // samples in the current round
        uint64_t plain_at = 0;                  // the step of the last plain sample
    };
    bucket & at(uint32_t n_gen);
    void verdict(uint32_t n_gen, bucket & b);
    void turn_off(uint32_t n_gen, const bucket & b);

    spec_governor_params p_;
    std::vector<bucket> buckets_;  // by number of generating requests
    bool on_ = true;
    uint64_t step_ = 0;
    uint64_t off_until_ = 0;       // while off: the step at which drafting is tried again
    uint32_t retry_ = 0;           // the current wait when off
    double speedup_ = 0;
    uint64_t n_disabled_ = 0;
    std::string change_;
};
