// ggml/alloc.h — graph allocator: places the tensors of a compute graph in one buffer,
// reusing the memory of a tensor once its last consumer has run, and computing in place
// where the op allows it.
//
// Usage:
//   ggml_gallocr galloc(dev->buffer_type());
//   if (!galloc.reserve(worst_case_graph)) { /* out of memory */ }
//   // every later graph of the same (or smaller) shape allocates nothing new:
//   if (!galloc.alloc_graph(gf)) { /* out of memory */ }
//   size_t bytes = galloc.buffer_size();
//
// What is placed: every node, and every leaf without data (graph inputs). Tensors that already
// have data (weights, user-allocated inputs) are left alone; views point into their source.
// Tensors flagged OUTPUT (or INPUT) are never overwritten by other tensors of the same graph.
#pragma once

#include "ggml/backend.h"

#include <cstddef>
#include <vector>

// Where each tensor of a graph goes, as offsets into one buffer (no memory touched).
struct ggml_galloc_plan {
    struct entry {
        const ggml_tensor * tensor = nullptr;
        size_t offset = 0;
        size_t size = 0;
        bool in_place = false;  // shares its source's memory (computed in place)
    };
    std::vector<entry> entries;  // in allocation order
    size_t peak = 0;             // bytes the buffer must hold
    size_t naive = 0;            // sum of all sizes (no reuse), for comparison
};

// Plans the placement of gf's tensors for a buffer of type buft (alignment, alloc_size).
ggml_galloc_plan ggml_galloc_plan_graph(const ggml_cgraph * gf, const ggml_backend_buffer_type_i * buft);

class ggml_gallocr {
public:
    explicit ggml_gallocr(ggml_backend_buffer_type_i * buft);
    ggml_gallocr(const ggml_gallocr &) = delete;
    ggml_gallocr & operator=(const ggml_gallocr &) = delete;

    // Sizes the buffer for gf (grows it when needed, never shrinks). False when out of memory.
    bool reserve(ggml_cgraph * gf);
    // Places gf's tensors; grows the buffer only when gf needs more than reserved. False when
    // out of memory.
    bool alloc_graph(ggml_cgraph * gf);

    size_t buffer_size() const;
    // How many times a buffer was (re)allocated: stays put after reserve for same-shaped graphs.
    int n_buffer_allocs() const { return n_buffer_allocs_; }
    ggml_backend_buffer_i * buffer() const { return buffer_.get(); }

private:
    bool ensure_buffer(size_t size);

    ggml_backend_buffer_type_i * buft_;
    ggml_backend_buffer_ptr buffer_;
    int n_buffer_allocs_ = 0;
};
