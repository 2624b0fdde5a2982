// The unified KV cache: sequence operations (remove, copy, keep, shift) and usage statistics.
#include "engine/kv-cache.h"

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
