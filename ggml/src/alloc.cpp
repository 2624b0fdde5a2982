// ggml/src/alloc.cpp — the graph allocator (alloc.h).
//
// The plan walks the graph's nodes in order, the way a backend computes them:
//   - graph inputs (leafs without data, and nodes flagged INPUT) get memory first, so that
//     nothing computed later can overlap what the user writes before compute;
//   - each node without data that is not a view gets memory when it is reached, either the
//     memory of its src[0] (in place, for the ops whose kernels allow it) or a block of a free
//     list over one virtual buffer;
//   - after a node, each of its sources loses one use; a tensor whose uses drop to zero gives
//     its block back (a view gives back its hold on its view_src instead).
// A view counts as one use of its view_src for as long as the view itself has uses left, so a
// consumer of a view keeps the view's source alive. Tensors with no consumers at all are
// results of the graph and keep their memory to the end, as do tensors flagged INPUT/OUTPUT.
#include "ggml/alloc.h"

#include <algorithm>
#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

namespace {

size_t galloc_align_up(size_t n, size_t alignment) {
    return (n + alignment - 1) / alignment * alignment;
}

bool galloc_is_flagged(const ggml_tensor * t) {
    return (t->flags & (GGML_TENSOR_FLAG_INPUT | GGML_TENSOR_FLAG_OUTPUT)) != 0;
}

// Ops whose CPU kernels give the same result when dst is src[0]'s memory (cpu/ops.h).
bool galloc_op_can_be_in_place(ggml_op op) {
    switch (op) {
        case GGML_OP_ADD:
        case GGML_OP_MUL:
        case GGML_OP_DIV:
        case GGML_OP_SCALE:
        case GGML_OP_RMS_NORM:
        case GGML_OP_NORM:
        case GGML_OP_ROPE:
        case GGML_OP_SOFT_MAX:
        case GGML_OP_SILU:
        case GGML_OP_GELU:
        case GGML_OP_TANH:
        case GGML_OP_SWIGLU:
            return true;
        default:
            return false;
    }
}

// Free blocks of one virtual buffer, sorted by offset, never adjacent to each other nor to the
// top (the end of the highest block in use), which shrinks when the highest block is freed.
class galloc_free_list {
public:
    size_t allocate(size_t size) {
        size_t best = free_.size();
        for (size_t i = 0; i < free_.size(); ++i) {
            if (free_[i].size >= size && (best == free_.size() || free_[i].size < free_[best].size)) {
                best = i;
            }
        }
        if (best == free_.size()) {
            const size_t offset = top_;
            top_ += size;
            peak_ = std::max(peak_, top_);
            return offset;
        }
        block & b = free_[best];
        const size_t offset = b.offset;
        b.offset += size;
        b.size -= size;
        if (b.size == 0) {
            free_.erase(free_.begin() + std::ptrdiff_t(best));
        }
        return offset;
    }

    void release(size_t offset, size_t size) {
        GGML_ASSERT(offset + size <= top_);
        auto next = std::lower_bound(free_.begin(), free_.end(), offset,
                                     [](const block & b, size_t off) { return b.offset < off; });
        GGML_ASSERT(next == free_.end() || offset + size <= next->offset);
        if (next != free_.begin()) {
            const block & prev = *(next - 1);
            GGML_ASSERT(prev.offset + prev.size <= offset);
        }
        auto it = free_.insert(next, block{offset, size});
        if (it + 1 != free_.end() && it->offset + it->size == (it + 1)->offset) {
            it->size += (it + 1)->size;
            free_.erase(it + 1);
        }
        if (it != free_.begin() && (it - 1)->offset + (it - 1)->size == it->offset) {
            (it - 1)->size += it->size;
            it = free_.erase(it) - 1;
        }
        if (it->offset + it->size == top_) {
            top_ = it->offset;
            free_.erase(it);
        }
    }

    size_t peak() const { return peak_; }

private:
    struct block {
        size_t offset;
        size_t size;
    };
    std::vector<block> free_;
    size_t top_ = 0;
    size_t peak_ = 0;
};

struct galloc_tensor_state {
    int uses = 0;             // consumers that have not run yet (views: until their uses end)
    bool owns_block = false;  // holds a block of the free list right now
    bool is_input = false;    // placed before the first node (leafs, INPUT nodes)
    size_t offset = 0;
    size_t block_size = 0;
};

class galloc_planner {
public:
    // own: the buffer of the allocator asking, whose earlier placements count as no data.
    galloc_planner(const ggml_cgraph * gf, const ggml_backend_buffer_type_i * buft,
                   const ggml_backend_buffer_i * own)
        : gf_(gf), buft_(buft), own_(own), alignment_(buft->alignment()) {
        GGML_ASSERT(alignment_ > 0);
    }

    ggml_galloc_plan run() {
        count_uses();
        place_inputs();
        for (int i = 0; i < gf_->n_nodes; ++i) {
            ggml_tensor * node = gf_->nodes[i];
            if (needs_block(node) && !state(node).owns_block && !try_in_place(node)) {
                place_new(node, false);
            }
            for (ggml_tensor * s : node->src) {
                if (s != nullptr) {
                    release_use(s);
                }
            }
        }
        plan_.peak = free_list_.peak();
        return std::move(plan_);
    }

private:
    bool has_data(const ggml_tensor * t) const {
        return t->data != nullptr && (own_ == nullptr || t->buffer != own_);
    }

    bool needs_block(const ggml_tensor * t) const { return t->view_src == nullptr && !has_data(t); }

    galloc_tensor_state & state(const ggml_tensor * t) { return states_[t]; }

    size_t block_size_of(const ggml_tensor * t) const {
        const size_t size = galloc_align_up(buft_->alloc_size(t), alignment_);
        return size == 0 ? alignment_ : size;
    }

    void count_uses() {
        for (int i = 0; i < gf_->n_nodes; ++i) {
            const ggml_tensor * node = gf_->nodes[i];
            for (const ggml_tensor * s : node->src) {
                if (s != nullptr) {
                    state(s).uses += 1;
                }
            }
            if (node->view_src != nullptr) {
                state(node->view_src).uses += 1;
            }
        }
        for (int i = 0; i < gf_->n_leafs; ++i) {
            const ggml_tensor * leaf = gf_->leafs[i];
            if (leaf->view_src != nullptr) {
                state(leaf->view_src).uses += 1;
            }
        }
    }

    void place_inputs() {
        for (int i = 0; i < gf_->n_leafs; ++i) {
            if (needs_block(gf_->leafs[i])) {
                place_new(gf_->leafs[i], true);
            }
        }
        for (int i = 0; i < gf_->n_nodes; ++i) {
            ggml_tensor * node = gf_->nodes[i];
            if ((node->flags & GGML_TENSOR_FLAG_INPUT) != 0 && needs_block(node)) {
                place_new(node, true);
            }
        }
    }

    void place_new(const ggml_tensor * t, bool is_input) {
        galloc_tensor_state & st = state(t);
        st.block_size = block_size_of(t);
        st.offset = free_list_.allocate(st.block_size);
        st.owns_block = true;
        st.is_input = is_input;
        plan_.entries.push_back({t, st.offset, st.block_size, false});
        plan_.naive += st.block_size;
    }

    // The tensor whose block node would take over, or nullptr when node cannot run in place.
    const ggml_tensor * in_place_owner(const ggml_tensor * node) {
        const ggml_tensor * parent = node->src[0];
        if (parent == nullptr || galloc_is_flagged(parent) || !ggml_are_same_layout(node, parent)) {
            return nullptr;
        }
        int slots = 0;
        for (const ggml_tensor * s : node->src) {
            slots += s == parent;
        }
        if (state(parent).uses != slots) {
            return nullptr;  // read again later, or through a view still alive
        }
        const ggml_tensor * owner = parent;
        if (parent->view_src != nullptr) {
            owner = parent->view_src;
            // The view must start at its source and be the source's only remaining use.
            if (parent->view_offs != 0 || galloc_is_flagged(owner) || state(owner).uses != 1) {
                return nullptr;
            }
        }
        const galloc_tensor_state & os = state(owner);
        if (!os.owns_block || os.is_input || os.block_size < block_size_of(node)) {
            return nullptr;
        }
        return owner;
    }

    bool try_in_place(const ggml_tensor * node) {
        if (!galloc_op_can_be_in_place(node->op)) {
            return false;
        }
        const ggml_tensor * owner = in_place_owner(node);
        if (owner == nullptr) {
            return false;
        }
        galloc_tensor_state & os = state(owner);
        galloc_tensor_state & ns = state(node);
        ns.owns_block = true;
        ns.offset = os.offset;
        ns.block_size = os.block_size;
        os.owns_block = false;
        const size_t size = block_size_of(node);
        plan_.entries.push_back({node, ns.offset, size, true});
        plan_.naive += size;
        return true;
    }

    void release_use(const ggml_tensor * t) {
        galloc_tensor_state & st = state(t);
        GGML_ASSERT(st.uses > 0);
        st.uses -= 1;
        if (st.uses > 0 || galloc_is_flagged(t)) {
            return;
        }
        if (t->view_src != nullptr) {
            release_use(t->view_src);
        } else if (st.owns_block) {
            free_list_.release(st.offset, st.block_size);
            st.owns_block = false;
        }
    }

    const ggml_cgraph * gf_;
    const ggml_backend_buffer_type_i * buft_;
    const ggml_backend_buffer_i * own_;
    size_t alignment_;
    std::unordered_map<const ggml_tensor *, galloc_tensor_state> states_;
    galloc_free_list free_list_;
    ggml_galloc_plan plan_;
};

ggml_galloc_plan galloc_plan(const ggml_cgraph * gf, const ggml_backend_buffer_type_i * buft,
                             const ggml_backend_buffer_i * own) {
    GGML_ASSERT(gf != nullptr && buft != nullptr);
    return galloc_planner(gf, buft, own).run();
}

// Forget where this allocator put gf's tensors on an earlier call (they get placed again).
// Recognised by their buffer: a graph placed in a buffer that has since been replaced by a
// bigger one (alloc_graph of another graph) is not recognised; it must be built again.
void galloc_reset_own_tensors(ggml_cgraph * gf, const ggml_backend_buffer_i * own) {
    auto reset = [own](ggml_tensor * t) {
        if (own != nullptr && t->data != nullptr && t->buffer == own) {
            t->data = nullptr;
            t->buffer = nullptr;
        }
    };
    for (int i = 0; i < gf->n_leafs; ++i) {
        reset(gf->leafs[i]);
    }
    for (int i = 0; i < gf->n_nodes; ++i) {
        reset(gf->nodes[i]);
    }
}

bool galloc_init_views(ggml_tensor * const * tensors, int n) {
    for (int i = 0; i < n; ++i) {
        ggml_tensor * t = tensors[i];
        if (t->view_src == nullptr || t->data != nullptr) {
            continue;
        }
        if (t->view_src->data == nullptr || ggml_backend_view_init(t) != GGML_STATUS_SUCCESS) {
            return false;
        }
    }
    return true;
}

}  // namespace

ggml_galloc_plan ggml_galloc_plan_graph(const ggml_cgraph * gf, const ggml_backend_buffer_type_i * buft) {
    return galloc_plan(gf, buft, nullptr);
}

ggml_gallocr::ggml_gallocr(ggml_backend_buffer_type_i * buft) : buft_(buft) {
    GGML_ASSERT(buft_ != nullptr);
}

bool ggml_gallocr::reserve(ggml_cgraph * gf) {
    const ggml_galloc_plan plan = galloc_plan(gf, buft_, buffer_.get());
    const ggml_backend_buffer_i * old = buffer_.get();
    if (!ensure_buffer(plan.peak)) {
        return false;
    }
    if (buffer_.get() != old) {
        // gf's tensors placed in the old buffer would point into freed memory: forget them, so
        // that the next alloc_graph(gf) places them again.
        galloc_reset_own_tensors(gf, old);
    }
    return true;
}

bool ggml_gallocr::alloc_graph(ggml_cgraph * gf) {
    GGML_ASSERT(gf != nullptr);
    galloc_reset_own_tensors(gf, buffer_.get());
    const ggml_galloc_plan plan = galloc_plan(gf, buft_, nullptr);
    if (!ensure_buffer(plan.peak)) {
        return false;
    }
    char * base = plan.entries.empty() ? nullptr : static_cast<char *>(buffer_->base());
    for (const ggml_galloc_plan::entry & e : plan.entries) {
        ggml_tensor * t = const_cast<ggml_tensor *>(e.tensor);
        if (ggml_backend_tensor_alloc(buffer_.get(), t, base + e.offset) != GGML_STATUS_SUCCESS) {
            return false;
        }
    }
    return galloc_init_views(gf->leafs, gf->n_leafs) && galloc_init_views(gf->nodes, gf->n_nodes);
}

size_t ggml_gallocr::buffer_size() const {
    return buffer_ ? buffer_->size() : 0;
}

bool ggml_gallocr::ensure_buffer(size_t size) {
    if (size == 0 || (buffer_ && buffer_->size() >= size)) {
        return true;
    }
    if (size > buft_->max_size()) {
        return false;
    }
    ggml_backend_buffer_ptr buffer = buft_->alloc_buffer(size);
    if (!buffer) {
        return false;
    }
    buffer->set_usage(ggml_backend_buffer_usage::compute);
    buffer_ = std::move(buffer);
    n_buffer_allocs_ += 1;
    return true;
}
