// Sampling: the lower part of the chain — candidates, top-k / top-p / min-p, temperature, the
// seeded draw — and the log-probabilities of the raw row. See engine/sampling.h for the rules.
//
// Speed (n_vocab ~128k, one call per generated token): no pass sorts the whole vocabulary.
// top-k selects with a k-element heap in one scan; without top-k, min-p and top-p first find a
// logit floor from masked exponential sums over the row (vectorizable), collect only the
// candidates at or above it, and sort those.
#include "engine/sampling.h"
#include "sampling-math.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>

namespace {

// Higher logit first; equal logits: lower id first. A strict total order, so every sort and
// selection below has one possible result whatever the library's algorithm.
bool sampling_better(const sampling_candidate & a, const sampling_candidate & b) {
    return a.logit > b.logit || (a.logit == b.logit && a.id < b.id);
}

bool sampling_better(float la, int32_t ia, float lb, int32_t ib) {
    return la > lb || (la == lb && ia < ib);
}

void sampling_sort(std::vector<sampling_candidate> & c) {
    std::sort(c.begin(), c.end(), [](const auto & a, const auto & b) { return sampling_better(a, b); });
}

// c sorted best first, m its best logit, z the temperature-1 denominator of the set top-p
// measures against: keeps the smallest prefix whose mass reaches top_p (at least one).
void sampling_top_p_walk(std::vector<sampling_candidate> & c, float top_p, float m, double z) {
    const double target = static_cast<double>(top_p) * z;
    double cum = 0.0;
    for (size_t i = 0; i < c.size(); ++i) {
        cum += sampling_exp(c[i].logit - m);
        if (cum >= target) {
            c.resize(i + 1);
            return;
        }
    }
}

// The best logit floor (of m - 1, m - 2, m - 4, ... m - 64) above which the row's temperature-1
// mass already reaches top_p * z; -INFINITY when none does. The candidates at or above it are a
// best-first prefix holding the whole top-p prefix.
float sampling_top_p_floor(const float * row, int32_t n, float m, double z, float top_p, float floor) {
    const double target = static_cast<double>(top_p) * z;
    for (float d = 1.0f; d <= 64.0f; d *= 2.0f) {
        const float t = m - d;
        if (t <= floor) break;
        if (sampling_row_exp_sum(row, n, m, 1.0f, t) >= target) return t;
    }
    return -INFINITY;
}

}  // namespace

void sampler::set_greedy(const float * logits) {
    cand_.clear();
    const float m = sampling_row_max(logits, n_vocab_);
    if (m == -INFINITY) return;
    for (int32_t i = 0; i < n_vocab_; ++i)
        if (logits[i] == m) {  // the first maximum: ties keep the lowest id
            cand_.push_back({i, m, 1.0f});
            return;
        }
}

// cand_ = the top_k best finite entries, sorted best first. A heap of the k best so far (its
// front the worst of them) costs one comparison per entry once it is full.
void sampler::select_top_k(const float * logits) {
    auto better = [](const sampling_candidate & a, const sampling_candidate & b) { return sampling_better(a, b); };
    const size_t k = static_cast<size_t>(params_.top_k);
    cand_.clear();
    int32_t i = 0;
    for (; i < n_vocab_ && cand_.size() < k; ++i)
        if (sampling_finite(logits[i])) cand_.push_back({i, logits[i], 0.0f});
    std::make_heap(cand_.begin(), cand_.end(), better);
    for (; i < n_vocab_; ++i) {
        const float l = logits[i];
        if (!(l > cand_.front().logit) || !sampling_finite(l)) continue;  // ties: the lower id stays
        std::pop_heap(cand_.begin(), cand_.end(), better);
        cand_.back() = {i, l, 0.0f};
        std::push_heap(cand_.begin(), cand_.end(), better);
    }
    sampling_sort(cand_);
}

// min-p then top-p on cand_ (sorted best first, what top-k left): both on temperature-1
// probabilities of this set. min-p keeps a best-first prefix and top-p's mass is measured with
// the denominator of the whole set, so applying min-p first gives the same result.
void sampler::truncate_sorted() {
    if (cand_.empty()) return;
    const float m = cand_.front().logit;
    double z = 0.0;
    if (params_.top_p < 1.0f)
        for (const auto & c : cand_) z += sampling_exp(c.logit - m);
    if (params_.min_p > 0.0f) {
        const float floor = m + std::log(params_.min_p);
        std::erase_if(cand_, [floor](const sampling_candidate & c) { return c.logit < floor; });
    }
    if (params_.top_p < 1.0f) sampling_top_p_walk(cand_, params_.top_p, m, z);
}

// Without top-k: cand_ = the finite entries at or above the min-p floor and a top-p floor,
// sorted best first when a filter is active (else in id order), then cut by top-p.
void sampler::collect_filtered(const float * logits) {
    cand_.clear();
    const float m = sampling_row_max(logits, n_vocab_);
    if (m == -INFINITY) return;
    const bool use_p = params_.top_p < 1.0f;
    const bool use_min = params_.min_p > 0.0f;
    float floor = use_min ? m + std::log(params_.min_p) : -INFINITY;
    double z = 0.0;
    if (use_p) {
        z = sampling_row_exp_sum(logits, n_vocab_, m, 1.0f, -INFINITY);
        floor = std::max(floor, sampling_top_p_floor(logits, n_vocab_, m, z, params_.top_p, floor));
    }
    for (int32_t i = 0; i < n_vocab_; ++i) {
        const float l = logits[i];
        if (l >= floor && sampling_finite(l)) cand_.push_back({i, l, 0.0f});
    }
    if (!use_p && !use_min) return;
    sampling_sort(cand_);
    if (use_p) sampling_top_p_walk(cand_, params_.top_p, m, z);
}

void sampler::apply_temperature() {
    if (cand_.empty()) return;
    float m = -INFINITY;
    for (const auto & c : cand_) m = std::max(m, c.logit);
    const double sum = sampling_candidates_exp(cand_.data(), cand_.size(), m, 1.0f / params_.temperature);
    const float inv_sum = static_cast<float>(1.0 / sum);
    for (auto & c : cand_) c.p *= inv_sum;
}

// The survivors are walked in token id order, not best first: two candidates of nearly equal
// logits then change places (another batch split or kernel rounds the logits differently) without
// changing the token drawn, unless u falls within that difference of a boundary.
int32_t sampler::draw() {
    const auto by_id = [](const auto & a, const auto & b) { return a.id < b.id; };
    if (!std::is_sorted(cand_.begin(), cand_.end(), by_id)) std::sort(cand_.begin(), cand_.end(), by_id);  // filtered: best first
    double total = 0.0;
    for (const auto & c : cand_) total += c.p;
    const double u = static_cast<double>(rng_() >> 11) * 0x1.0p-53;  // [0, 1), 53 bits
    const double target = u * total;
    double cum = 0.0;
    for (const auto & c : cand_) {
        cum += c.p;
        if (cum > target) return c.id;
    }
    for (auto it = cand_.rbegin(); it != cand_.rend(); ++it)  // rounding: the last with p > 0
        if (it->p > 0.0f) return it->id;
    return cand_.back().id;
}

// Log-softmax of the raw row (non-finite entries count as -inf): the sampled token's value and
// the n_probs best, best first.
void sampler::fill_logprobs(const float * logits, sampled_token & out) const {
    if (!params_.logprob && params_.n_probs == 0) {
        out.top.clear();
        out.logprob = NAN;
        return;
    }
    out = sampling_logprobs(logits, n_vocab_, out.id, params_.n_probs);
}

sampled_token sampling_logprobs(const float * logits, int32_t n_vocab, int32_t id, int32_t n_top) {
    sampled_token out;
    out.id = id;
    const float m = sampling_row_max(logits, n_vocab);
    const double lse = static_cast<double>(m) + std::log(sampling_row_exp_sum(logits, n_vocab, m, 1.0f, -INFINITY));
    auto logprob = [lse](float l) { return sampling_finite(l) ? static_cast<float>(l - lse) : -INFINITY; };
    out.logprob = id >= 0 && id < n_vocab ? logprob(logits[id]) : -INFINITY;
    n_top = std::clamp(n_top, 0, sampling_max_n_probs);
    if (n_top == 0) return out;
    std::array<std::pair<int32_t, float>, sampling_max_n_probs> top{};
    int32_t n_have = 0;
    float worst = -INFINITY;  // the last kept logit once the list is full; ties: lower id stays
    for (int32_t i = 0; i < n_vocab; ++i) {
        const float l = logits[i];
        if (!(l > worst) || l == INFINITY) continue;  // also drops NaN and -inf
        int32_t at = n_have < n_top ? n_have++ : n_top - 1;  // insertion into the sorted list
        while (at > 0 && sampling_better(l, i, top[size_t(at - 1)].second, top[size_t(at - 1)].first)) {
            top[size_t(at)] = top[size_t(at - 1)];
            --at;
        }
        top[size_t(at)] = {i, l};
        if (n_have == n_top) worst = top[size_t(n_top - 1)].second;
    }
    out.top.reserve(static_cast<size_t>(n_have));
    for (int32_t j = 0; j < n_have; ++j) out.top.emplace_back(top[size_t(j)].first, logprob(top[size_t(j)].second));
    return out;
}
