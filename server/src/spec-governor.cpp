// spec-governor.cpp — the verdict on speculative decoding from measured step rates (see the
// header).
#include "spec-governor.h"

#include <algorithm>
#include <cstdio>

spec_governor::spec_governor(const spec_governor_params & p) : p_(p) {
    p_.min_samples = std::max<uint32_t>(p_.min_samples, 2);
    p_.plain_every = std::max<uint32_t>(p_.plain_every, 2);
    p_.first_retry = std::max<uint32_t>(p_.first_retry, 1);
    p_.max_retry = std::max(p_.max_retry, p_.first_retry);
    p_.smoothing = std::clamp(p_.smoothing, 0.01, 1.0);
}

spec_governor::bucket & spec_governor::at(uint32_t n_gen) {
    if (buckets_.size() <= n_gen) buckets_.resize(size_t(n_gen) + 1);
    return buckets_[n_gen];
}

bool spec_governor::allow_drafts(uint32_t n_gen) {
    ++step_;
    if (!on_) {
        if (step_ < off_until_) return false;
        // Tried again: a fresh round of drafting samples, judged against the plain rates, which
        // the steps while off kept up to date.
        on_ = true;
        for (bucket & b : buckets_) {
            b.n_spec = 0;
            b.spec_rate = 0;
        }
        char line[160];
        std::snprintf(line, sizeof line, "speculative decoding: trying drafts again after %u steps without", retry_);
        change_ = line;
    }
    if (n_gen == 0) return true;
    const bucket & b = at(n_gen);
    // The first round: about one plain step for two drafting ones until the plain rate has its
    // samples; then a plain step whenever the last one is plain_every steps old.
    const bool need_plain = b.n_plain < p_.min_samples ? b.n_spec >= 2 * b.n_plain + 1
                                                       : step_ - b.plain_at >= p_.plain_every;
    return !need_plain;
}

void spec_governor::observe(uint32_t n_gen, bool drafted, double seconds, uint32_t emitted) {
    if (n_gen == 0 || emitted == 0 || !(seconds > 0)) return;
    bucket & b = at(n_gen);
    const double rate = double(emitted) / seconds;
    // The plain mean over a round's first samples, then a moving average: the first step of a
    // round (a draft model catching up after steps without drafts) weighs no more than the others.
    auto mix = [&](double & avg, uint32_t n) { avg += std::max(p_.smoothing, 1.0 / double(n + 1)) * (rate - avg); };
    if (drafted) {
        mix(b.spec_rate, b.n_spec);
        ++b.n_spec;
        if (on_) verdict(n_gen, b);
    } else {
        mix(b.plain_rate, b.n_plain);
        ++b.n_plain;
        b.plain_at = step_;
    }
}

void spec_governor::verdict(uint32_t n_gen, bucket & b) {
    if (b.n_spec < p_.min_samples || b.n_plain < p_.min_samples / 2 || !(b.plain_rate > 0)) return;
    speedup_ = b.spec_rate / b.plain_rate;
    if (speedup_ < p_.keep_ratio) {
        turn_off(n_gen, b);
    } else if (retry_ > 0) {
        retry_ = 0;  // drafting wins again: a later loss waits the shortest time again
        char line[160];
        std::snprintf(line, sizeof line, "speculative decoding: drafts pay again (%.2fx the tokens per second)", speedup_);
        change_ = line;
    }
}

void spec_governor::turn_off(uint32_t n_gen, const bucket & b) {
    on_ = false;
    ++n_disabled_;
    retry_ = retry_ == 0 ? p_.first_retry : std::min(p_.max_retry, 2 * retry_);
    off_until_ = step_ + retry_;
    char line[256];
    std::snprintf(line, sizeof line,
                  "speculative decoding turned off: steps with drafts gave %.1f tokens/s, steps without %.1f "
                  "(%.2fx, %u generating requests); trying again in %u steps",
                  b.spec_rate, b.plain_rate, speedup_, n_gen, retry_);
    change_ = line;
}

std::string spec_governor::take_change() {
    std::string out;
    out.swap(change_);
    return out;
}
