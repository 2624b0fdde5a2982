// Sampling: parameter validation, the sampler's state (RNG, penalty window) and the top of the
// chain (penalties, logit bias). The truncation filters, temperature, draw and log-probabilities
// live in sampling-chain.cpp.
#include "engine/sampling.h"

#include <cmath>
#include <cstring>
#include <sstream>
#include <stdexcept>

namespace {

std::string sampling_message(const char * field, const char * rule, double got) {
    std::ostringstream os;
    os << field << " must be " << rule << ", got " << got;
    return os.str();
}

std::string sampling_validate_scalars(const sampling_params & p) {
    if (!std::isfinite(p.temperature) || p.temperature < 0.0f)
        return sampling_message("temperature", "a finite number >= 0", p.temperature);
    if (!(p.top_p > 0.0f && p.top_p <= 1.0f)) return sampling_message("top_p", "in (0, 1]", p.top_p);
    if (!(p.min_p >= 0.0f && p.min_p <= 1.0f)) return sampling_message("min_p", "in [0, 1]", p.min_p);
    if (!std::isfinite(p.repeat_penalty) || p.repeat_penalty <= 0.0f)
        return sampling_message("repeat_penalty", "a finite number > 0", p.repeat_penalty);
    if (!std::isfinite(p.presence_penalty))
        return sampling_message("presence_penalty", "finite", p.presence_penalty);
    if (!std::isfinite(p.frequency_penalty))
        return sampling_message("frequency_penalty", "finite", p.frequency_penalty);
    if (p.penalty_last_n < -1) return sampling_message("penalty_last_n", ">= -1", p.penalty_last_n);
    if (p.n_probs < 0 || p.n_probs > sampling_max_n_probs)
        return sampling_message("n_probs", "in [0, 20]", p.n_probs);
    return {};
}

}  // namespace

std::string sampling_params_validate(const sampling_params & p, int32_t n_vocab) {
    if (n_vocab <= 0) return sampling_message("n_vocab", "> 0", n_vocab);
    if (std::string err = sampling_validate_scalars(p); !err.empty()) return err;
    for (const auto & [id, bias] : p.logit_bias) {
        if (id < 0 || id >= n_vocab) {
            std::ostringstream os;
            os << "logit_bias token id " << id << " is out of range [0, " << n_vocab << ")";
            return os.str();
        }
        if (std::isnan(bias) || bias == INFINITY) {
            std::ostringstream os;
            os << "logit_bias value for token " << id << " must be finite or -inf, got " << bias;
            return os.str();
        }
    }
    return {};
}

sampler::sampler(const sampling_params & params, int32_t n_vocab)
    : params_(params), n_vocab_(n_vocab), rng_(params.seed) {
    if (std::string err = sampling_params_validate(params, n_vocab); !err.empty())
        throw std::invalid_argument("sampling: " + err);
    cand_.reserve(static_cast<size_t>(n_vocab));
    if (params_.penalty_last_n != 0) {
        count_.assign(static_cast<size_t>(n_vocab), 0);
        where_.assign(static_cast<size_t>(n_vocab), -1);
    }
}

int32_t sampler::history_count(int32_t id) const {
    if (id < 0 || id >= n_vocab_ || count_.empty()) return 0;
    return count_[static_cast<size_t>(id)];
}

sampler::sampler(const sampler & o)
    : params_(o.params_), n_vocab_(o.n_vocab_), rng_(o.rng_), cand_(o.cand_), work_(o.work_), ring_(o.ring_),
      ring_head_(o.ring_head_), ring_size_(o.ring_size_), count_(o.count_), distinct_(o.distinct_), where_(o.where_) {
    cand_.reserve(static_cast<size_t>(n_vocab_));
    for (const auto & st : o.stages_) stages_.push_back(st->clone());
}

void sampler::add_stage(std::unique_ptr<sampler_stage_i> stage) {
    if (stage) stages_.push_back(std::move(stage));
}

bool sampler::accept(int32_t id) {
    if (!accept_history(id)) return false;
    for (const auto & st : stages_) {
        if (!st->accept(id)) return false;
    }
    return true;
}

bool sampler::accept_history(int32_t id) {
    if (id < 0 || id >= n_vocab_) return false;
    if (params_.penalty_last_n == 0) return true;
    auto add = [this](int32_t t, int32_t delta) {
        int32_t & c = count_[static_cast<size_t>(t)];
        if (c == 0 && delta > 0) {
            where_[static_cast<size_t>(t)] = static_cast<int32_t>(distinct_.size());
            distinct_.push_back(t);
        }
        c += delta;
        if (c == 0) {
            const int32_t at = where_[static_cast<size_t>(t)];
            const int32_t moved = distinct_.back();
            distinct_[static_cast<size_t>(at)] = moved;
            where_[static_cast<size_t>(moved)] = at;
            distinct_.pop_back();
            where_[static_cast<size_t>(t)] = -1;
        }
    };
    if (params_.penalty_last_n > 0) {
        const size_t cap = static_cast<size_t>(params_.penalty_last_n);
        if (ring_.size() < cap) {
            ring_.push_back(id);
        } else {
            add(ring_[ring_head_], -1);  // the oldest token leaves the window
            ring_[ring_head_] = id;
            ring_head_ = (ring_head_ + 1) % cap;
        }
    }
    add(id, +1);
    return true;
}

void sampler::reset() {
    for (int32_t t : distinct_) {
        count_[static_cast<size_t>(t)] = 0;
        where_[static_cast<size_t>(t)] = -1;
    }
    distinct_.clear();
    ring_.clear();
    ring_head_ = 0;
    rng_.seed(params_.seed);
    for (const auto & st : stages_) st->reset();
}

bool sampler::penalties_active() const {
    return params_.penalty_last_n != 0 && !distinct_.empty() &&
           (params_.repeat_penalty != 1.0f || params_.presence_penalty != 0.0f ||
            params_.frequency_penalty != 0.0f);
}

// Returns logits itself when neither penalties, bias nor stages change anything, else work_
// holding the penalised, biased row that the stages have seen.
const float * sampler::apply_penalties_and_bias(const float * logits) {
    const bool penalise = penalties_active();
    if (!penalise && params_.logit_bias.empty() && stages_.empty()) return logits;
    work_.resize(static_cast<size_t>(n_vocab_));
    std::memcpy(work_.data(), logits, static_cast<size_t>(n_vocab_) * sizeof(float));
    if (penalise) {
        const float rep = params_.repeat_penalty;
        const float pres = params_.presence_penalty;
        const float freq = params_.frequency_penalty;
        for (int32_t t : distinct_) {
            float & l = work_[static_cast<size_t>(t)];
            const float c = static_cast<float>(count_[static_cast<size_t>(t)]);
            if (rep != 1.0f) l = l > 0.0f ? l / rep : l * rep;
            l -= pres + freq * c;
        }
    }
    for (const auto & [id, bias] : params_.logit_bias) work_[static_cast<size_t>(id)] += bias;
    for (const auto & st : stages_) st->apply(work_.data(), n_vocab_);
    return work_.data();
}

const std::vector<sampling_candidate> & sampler::distribution(const float * logits) {
    const float * l = apply_penalties_and_bias(logits);
    if (params_.temperature <= 0.0f) {
        set_greedy(l);
        return cand_;
    }
    if (params_.top_k > 0 && params_.top_k < n_vocab_) {
        select_top_k(l);
        truncate_sorted();
    } else {
        collect_filtered(l);
    }
    apply_temperature();
    return cand_;
}

sampled_token sampler::sample(const float * logits) {
    sampled_token out;
    distribution(logits);
    if (cand_.empty()) {
        out.id = -1;
        out.logprob = -INFINITY;
        return out;
    }
    out.id = params_.temperature <= 0.0f ? cand_.front().id : draw();
    fill_logprobs(logits, out);
    return out;
}
