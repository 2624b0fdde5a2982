// The unified KV cache: tensors, slot search and attention masks (sequence operations and
// statistics are in kv-cache-seq.cpp).
#include "engine/kv-cache.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace {

bool kv_cache_type_ok(ggml_type type, int64_t n_embd) {
    if (type != GGML_TYPE_F16 && type != GGML_TYPE_F32 && type != GGML_TYPE_Q8_0) return false;
    return n_embd > 0 && n_embd % ggml_blck_size(type) == 0;
}

void kv_cache_check_params(const kv_cache_params & p) {
    if (p.n_ctx == 0) throw std::runtime_error("kv cache: n_ctx must be positive");
    if (p.n_ctx > uint32_t(std::numeric_limits<int32_t>::max()))
        throw std::runtime_error("kv cache: n_ctx too large");
    if (p.n_layer == 0) throw std::runtime_error("kv cache: n_layer must be positive");
    if (p.n_seq_max == 0 || p.n_seq_max > kv_cache_max_seq)
        throw std::runtime_error("kv cache: n_seq_max must be in 1.." + std::to_string(kv_cache_max_seq));
    if (!kv_cache_type_ok(p.type_k, p.n_embd_k_gqa))
        throw std::runtime_error(std::string("kv cache: K type ") + ggml_type_name(p.type_k) +
                                 " unsupported or row size " + std::to_string(p.n_embd_k_gqa) +
                                 " not a multiple of its block");
    if (!kv_cache_type_ok(p.type_v, p.n_embd_v_gqa))
        throw std::runtime_error(std::string("kv cache: V type ") + ggml_type_name(p.type_v) +
                                 " unsupported or row size " + std::to_string(p.n_embd_v_gqa) +
                                 " not a multiple of its block");
}

}  // namespace

kv_cache::kv_cache(const kv_cache_params & params, ggml_backend_buffer_type_i * buft) : params_(params) {
    kv_cache_check_params(params_);
    if (buft == nullptr) throw std::runtime_error("kv cache: no buffer type");
    cells_.assign(params_.n_ctx, kv_cache_cell{});
    layers_ = params_.layers;
    if (layers_.empty()) {
        for (uint32_t il = 0; il < params_.n_layer; ++il) layers_.push_back(il);
    }
    slot_.assign(params_.n_layer, -1);
    // One tensor context (and later one buffer) per buffer type, the constructor's first.
    std::vector<ggml_backend_buffer_type_i *> bufts = {buft};
    auto ctx_for = [&](uint32_t il) -> ggml_context * {
        ggml_backend_buffer_type_i * b = il < params_.layer_buft.size() && params_.layer_buft[il] ? params_.layer_buft[il] : buft;
        size_t i = 0;
        while (i < bufts.size() && bufts[i] != b) ++i;
        if (i == bufts.size()) bufts.push_back(b);
        while (ctxs_.size() <= i) {
            ggml_init_params ip{2 * size_t(params_.n_layer) * ggml_tensor_overhead(), nullptr, true};
            ctxs_.emplace_back(ggml_init(ip));
            if (!ctxs_.back()) throw std::runtime_error("kv cache: cannot create the tensor context");
        }
        return ctxs_[i].get();
    };
    for (uint32_t il : layers_) {
        if (il >= params_.n_layer || slot_[il] >= 0) throw std::runtime_error("kv cache: bad layer list");
        slot_[il] = int32_t(k_.size());
        ggml_context * ctx = ctx_for(il);
        ggml_tensor * k = ggml_new_tensor_2d(ctx, params_.type_k, params_.n_embd_k_gqa, params_.n_ctx);
        ggml_tensor * v = ggml_new_tensor_2d(ctx, params_.type_v, params_.n_embd_v_gqa, params_.n_ctx);
        ggml_set_name(k, ("cache_k_l" + std::to_string(il)).c_str());
        ggml_set_name(v, ("cache_v_l" + std::to_string(il)).c_str());
        k_.push_back(k);
        v_.push_back(v);
    }
    for (size_t i = 0; i < ctxs_.size(); ++i) {
        if (!ggml_get_first_tensor(ctxs_[i].get())) continue;
        ggml_backend_buffer_ptr b = ggml_backend_alloc_ctx_tensors(ctxs_[i].get(), bufts[i]);
        if (!b) {
            size_t bytes = 0;
            for (ggml_tensor * t = ggml_get_first_tensor(ctxs_[i].get()); t; t = ggml_get_next_tensor(ctxs_[i].get(), t)) {
                bytes += ggml_nbytes(t);
            }
            throw std::runtime_error("kv cache: cannot allocate " + std::to_string(bytes >> 20) + " MiB for K/V on " +
                                     bufts[i]->name());
        }
        b->clear(0);
        bufs_.push_back(std::move(b));
    }
}

size_t kv_cache::bytes(const ggml_backend_buffer_type_i * buft) const {
    size_t n = 0;
    for (const ggml_backend_buffer_ptr & b : bufs_) {
        if (!buft || b->buffer_type() == buft) n += b->size();
    }
    return n;
}

void kv_cache::clear() {
    cells_.assign(params_.n_ctx, kv_cache_cell{});
    head_ = 0;
    used_ = 0;
    has_shift_ = false;
}

kv_cache_status kv_cache::find_slot(int32_t n_tokens, std::vector<int64_t> & cells) const {
    cells.clear();
    if (n_tokens <= 0) return kv_cache_status::invalid;
    const uint32_t n = uint32_t(n_tokens), n_ctx = params_.n_ctx;
    if (n > n_ctx - used_) return kv_cache_status::no_space;
    // A contiguous run, starting at head_ and wrapping to 0 once.
    for (uint32_t pass = 0; pass < 2; ++pass) {
        uint32_t start = pass == 0 ? head_ : 0;
        const uint32_t end = pass == 0 ? n_ctx : std::min(head_ + n, n_ctx);
        uint32_t run = 0;
        for (uint32_t i = start; i < end; ++i) {
            run = cells_[i].empty() ? run + 1 : 0;
            if (run == n) {
                for (uint32_t c = i + 1 - n; c <= i; ++c) cells.push_back(c);
                return kv_cache_status::ok;
            }
        }
    }
    // Any free cells, from head_ on and wrapping.
    for (uint32_t k = 0; k < n_ctx && cells.size() < n; ++k) {
        const uint32_t i = (head_ + k) % n_ctx;
        if (cells_[i].empty()) cells.push_back(i);
    }
    return kv_cache_status::ok;  // used_ guarantees enough free cells
}

bool kv_cache::apply_slot(const std::vector<int64_t> & cells, const int32_t * pos, const int32_t * seq_id) {
    std::vector<uint64_t> masks(cells.size());
    for (size_t i = 0; i < cells.size(); ++i) {
        if (!seq_valid(seq_id[i])) return false;
        masks[i] = uint64_t(1) << seq_id[i];
    }
    return apply_slot_multi(cells, pos, masks.data());
}

bool kv_cache::apply_slot_multi(const std::vector<int64_t> & cells, const int32_t * pos, const uint64_t * seq_mask) {
    const uint64_t allowed = params_.n_seq_max >= 64 ? ~uint64_t(0) : (uint64_t(1) << params_.n_seq_max) - 1;
    for (size_t i = 0; i < cells.size(); ++i) {
        if (cells[i] < 0 || cells[i] >= int64_t(params_.n_ctx) || !cells_[size_t(cells[i])].empty()) return false;
        if (pos[i] < 0 || seq_mask[i] == 0 || (seq_mask[i] & ~allowed) != 0) return false;
    }
    size_t placed = 0;
    for (; placed < cells.size(); ++placed) {
        kv_cache_cell & c = cells_[size_t(cells[placed])];
        if (!c.empty()) break;  // the same cell twice
        c.pos = pos[placed];
        c.shift = 0;
        c.seq = seq_mask[placed];
    }
    if (placed < cells.size()) {  // undo
        for (size_t i = 0; i < placed; ++i) cells_[size_t(cells[i])] = kv_cache_cell{};
        return false;
    }
    used_ += uint32_t(cells.size());
    if (!cells.empty()) head_ = uint32_t(cells.back() + 1) % params_.n_ctx;
    return true;
}

uint32_t kv_cache::n_kv() const {
    for (uint32_t i = params_.n_ctx; i > 0; --i)
        if (!cells_[i - 1].empty()) return i;
    return 0;
}

template <typename T, typename F>
bool kv_cache::build_mask_t(const int32_t * pos, const int32_t * seq_id, int32_t n_tokens, uint32_t n_kv,
                            int32_t n_tokens_pad, T * out, F convert) const {
    if (n_kv > params_.n_ctx || n_tokens < 0 || n_tokens > n_tokens_pad) return false;
    for (int32_t t = 0; t < n_tokens; ++t) if (!seq_valid(seq_id[t])) return false;
    const T zero = convert(0.0f), neg_inf = convert(-INFINITY);
    for (int32_t t = 0; t < n_tokens_pad; ++t) {
        T * row = out + size_t(t) * n_kv;
        for (uint32_t c = 0; c < n_kv; ++c) {
            const kv_cache_cell & cell = cells_[c];
            const bool visible = t < n_tokens && !cell.empty() && cell.has_seq(seq_id[t]) && cell.pos <= pos[t] &&
                                 (params_.n_swa == 0 || int64_t(pos[t]) - cell.pos < int64_t(params_.n_swa));
            row[c] = visible ? zero : neg_inf;
        }
    }
    return true;
}

bool kv_cache::build_mask(const int32_t * pos, const int32_t * seq_id, int32_t n_tokens, uint32_t n_kv,
                          int32_t n_tokens_pad, float * out) const {
    return build_mask_t(pos, seq_id, n_tokens, n_kv, n_tokens_pad, out, [](float x) { return x; });
}

bool kv_cache::build_mask_f16(const int32_t * pos, const int32_t * seq_id, int32_t n_tokens, uint32_t n_kv,
                              int32_t n_tokens_pad, ggml_fp16_t * out) const {
    return build_mask_t(pos, seq_id, n_tokens, n_kv, n_tokens_pad, out,
                        [](float x) { return ggml_fp32_to_fp16(x); });
}
