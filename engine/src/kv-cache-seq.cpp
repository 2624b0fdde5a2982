// The unified KV cache: sequence operations (remove, copy, keep, shift) and usage statistics.
#include "engine/kv-cache.h"

#include <algorithm>
#include <limits>

namespace {

bool kv_cache_in_range(int32_t pos, int32_t p0, int32_t p1) {
    if (p0 < 0) p0 = 0;
    if (p1 < 0) p1 = std::numeric_limits<int32_t>::max();
    return pos >= p0 && pos < p1;
}

}  // namespace

void kv_cache::cell_set_seq(kv_cache_cell & c, uint64_t seq) {
    if (c.empty()) return;
    c.seq = seq;
    if (seq == 0) {
        c.pos = -1;
        c.shift = 0;
        --used_;
    }
}

bool kv_cache::seq_rm(int32_t seq, int32_t p0, int32_t p1) {
    if (seq != -1 && !seq_valid(seq)) return false;
    const uint64_t drop = seq == -1 ? ~uint64_t(0) : uint64_t(1) << seq;
    uint32_t first_freed = params_.n_ctx;
    for (uint32_t i = 0; i < params_.n_ctx; ++i) {
        kv_cache_cell & c = cells_[i];
        if (c.empty() || (c.seq & drop) == 0 || !kv_cache_in_range(c.pos, p0, p1)) continue;
        cell_set_seq(c, c.seq & ~drop);
        if (c.empty() && first_freed == params_.n_ctx) first_freed = i;
    }
    if (first_freed < head_) head_ = first_freed;  // reuse freed cells first
    return true;
}

bool kv_cache::seq_cp(int32_t seq_src, int32_t seq_dst, int32_t p0, int32_t p1) {
    if (!seq_valid(seq_src) || !seq_valid(seq_dst)) return false;
    if (seq_src == seq_dst) return true;
    for (kv_cache_cell & c : cells_)
        if (!c.empty() && c.has_seq(seq_src) && kv_cache_in_range(c.pos, p0, p1))
            c.seq |= uint64_t(1) << seq_dst;
    return true;
}

bool kv_cache::seq_keep(int32_t seq) {
    if (!seq_valid(seq)) return false;
    uint32_t first_freed = params_.n_ctx;
    for (uint32_t i = 0; i < params_.n_ctx; ++i) {
        kv_cache_cell & c = cells_[i];
        if (c.empty()) continue;
        cell_set_seq(c, c.seq & (uint64_t(1) << seq));
        if (c.empty() && first_freed == params_.n_ctx) first_freed = i;
    }
    if (first_freed < head_) head_ = first_freed;
    return true;
}

bool kv_cache::seq_add(int32_t seq, int32_t p0, int32_t p1, int32_t delta) {
    if (!seq_valid(seq)) return false;
    if (delta == 0) return true;
    uint32_t first_freed = params_.n_ctx;
    for (uint32_t i = 0; i < params_.n_ctx; ++i) {
        kv_cache_cell & c = cells_[i];
        if (c.empty() || !c.has_seq(seq) || !kv_cache_in_range(c.pos, p0, p1)) continue;
        const int64_t moved = int64_t(c.pos) + delta;
        if (moved < 0) {
            cell_set_seq(c, 0);
            if (first_freed == params_.n_ctx) first_freed = i;
            continue;
        }
        c.pos = moved > std::numeric_limits<int32_t>::max() ? std::numeric_limits<int32_t>::max() : int32_t(moved);
        const int64_t shift = int64_t(c.shift) + delta;
        c.shift = shift > std::numeric_limits<int32_t>::max() ? std::numeric_limits<int32_t>::max()
                  : shift < std::numeric_limits<int32_t>::min() ? std::numeric_limits<int32_t>::min() : int32_t(shift);
        has_shift_ = true;
    }
    if (first_freed < head_) head_ = first_freed;
    return true;
}

std::vector<int32_t> kv_cache::shift_deltas() const {
    std::vector<int32_t> d(params_.n_ctx, 0);
    for (uint32_t i = 0; i < params_.n_ctx; ++i)
        if (!cells_[i].empty()) d[i] = cells_[i].shift;
    return d;
}

void kv_cache::shift_applied() {
    for (kv_cache_cell & c : cells_) c.shift = 0;
    has_shift_ = false;
}

int32_t kv_cache::seq_pos_min(int32_t seq) const {
    if (!seq_valid(seq)) return -1;
    int32_t r = -1;
    for (const kv_cache_cell & c : cells_)
        if (!c.empty() && c.has_seq(seq) && (r < 0 || c.pos < r)) r = c.pos;
    return r;
}

int32_t kv_cache::seq_pos_max(int32_t seq) const {
    if (!seq_valid(seq)) return -1;
    int32_t r = -1;
    for (const kv_cache_cell & c : cells_)
        if (!c.empty() && c.has_seq(seq) && c.pos > r) r = c.pos;
    return r;
}

void kv_cache::prune_swa(const int32_t * pos, const int32_t * seq_id, int32_t n_tokens, bool all_sequences) {
    if (params_.n_swa == 0) return;
    const uint32_t n_seq = params_.n_seq_max;
    // Per sequence: cells at positions <= limit[s] are out of every future window.
    std::vector<int64_t> limit(n_seq, std::numeric_limits<int64_t>::min());
    if (all_sequences) {
        for (uint32_t s = 0; s < n_seq; ++s) {
            const int32_t pmax = seq_pos_max(int32_t(s));
            if (pmax >= 0) limit[s] = int64_t(pmax) - params_.n_swa;
        }
    }
    std::vector<int64_t> pmin(n_seq, std::numeric_limits<int64_t>::max());
    for (int32_t t = 0; t < n_tokens; ++t) {
        if (seq_valid(seq_id[t])) pmin[size_t(seq_id[t])] = std::min<int64_t>(pmin[size_t(seq_id[t])], pos[t]);
    }
    for (uint32_t s = 0; s < n_seq; ++s) {
        if (pmin[s] != std::numeric_limits<int64_t>::max()) limit[s] = std::max(limit[s], pmin[s] - params_.n_swa);
    }
    uint32_t first_freed = params_.n_ctx;
    for (uint32_t i = 0; i < params_.n_ctx; ++i) {
        kv_cache_cell & c = cells_[i];
        if (c.empty()) continue;
        uint64_t keep = c.seq;
        for (uint32_t s = 0; s < n_seq; ++s) {
            if (c.has_seq(int32_t(s)) && c.pos <= limit[s]) keep &= ~(uint64_t(1) << s);
        }
        if (keep == c.seq) continue;
        cell_set_seq(c, keep);
        if (c.empty() && first_freed == params_.n_ctx) first_freed = i;
    }
    if (first_freed < head_) head_ = first_freed;
}

bool kv_cache::seq_resumable(int32_t seq, int32_t p) const {
    if (params_.n_swa == 0 || p <= 0) return true;
    if (!seq_valid(seq)) return false;
    const int64_t lo = std::max<int64_t>(0, int64_t(p) - params_.n_swa + 1);
    std::vector<uint8_t> seen(size_t(p - lo), 0);
    for (const kv_cache_cell & c : cells_) {
        if (!c.empty() && c.has_seq(seq) && c.pos >= lo && c.pos < p) seen[size_t(c.pos - lo)] = 1;
    }
    return std::all_of(seen.begin(), seen.end(), [](uint8_t x) { return x != 0; });
}
