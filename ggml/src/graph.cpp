// Compute graphs: topological order of nodes, leafs, and a visited set.
#include "ggml/ggml.h"
#include "ggml-impl.h"

#include <cstdint>
#include <new>
#include <vector>

namespace {

size_t hash_capacity(size_t size) {
    // a power of two at least twice the number of tensors a graph can hold (nodes + leafs)
    size_t cap = 16;
    while (cap < 4 * size) cap <<= 1;
    return cap;
}

size_t hash_of(const ggml_tensor * t, size_t cap) {
    uint64_t x = reinterpret_cast<uintptr_t>(t) >> 4;
    x *= 0x9e3779b97f4a7c15ull;
    return size_t(x >> 17) & (cap - 1);
}

// Inserts t; returns false when it was already there.
bool hash_insert(ggml_cgraph * gf, const ggml_tensor * t) {
    size_t i = hash_of(t, gf->hash_size);
    for (size_t probes = 0; probes < gf->hash_size; ++probes) {
        if (gf->hash_keys[i] == t) return false;
        if (gf->hash_keys[i] == nullptr) {
            gf->hash_keys[i] = const_cast<ggml_tensor *>(t);
            return true;
        }
        i = (i + 1) & (gf->hash_size - 1);
    }
    GGML_ABORT("graph hash set is full (%zu)", gf->hash_size);
}

}  // namespace

size_t ggml_graph_overhead_custom(size_t size) {
    return 64 + ((sizeof(ggml_cgraph) + 63) / 64) * 64 + 2 * size * sizeof(ggml_tensor *) +
           hash_capacity(size) * sizeof(ggml_tensor *) + 64;
}

size_t ggml_graph_overhead() { return ggml_graph_overhead_custom(GGML_DEFAULT_GRAPH_SIZE); }

ggml_cgraph * ggml_new_graph_custom(ggml_context * ctx, size_t size) {
    const size_t hash_size = hash_capacity(size);
    const size_t bytes = sizeof(ggml_cgraph) + 2 * size * sizeof(ggml_tensor *) + hash_size * sizeof(ggml_tensor *);
    auto * mem = static_cast<uint8_t *>(ggml_ctx_alloc_object(ctx, bytes, 1));
    auto * gf = new (mem) ggml_cgraph();
    auto ** ptrs = reinterpret_cast<ggml_tensor **>(mem + sizeof(ggml_cgraph));
    gf->size = int(size);
    gf->nodes = ptrs;
    gf->leafs = ptrs + size;
    gf->hash_keys = ptrs + 2 * size;
    gf->hash_size = hash_size;
    ggml_graph_clear(gf);
    return gf;
}

ggml_cgraph * ggml_new_graph(ggml_context * ctx) { return ggml_new_graph_custom(ctx, GGML_DEFAULT_GRAPH_SIZE); }

void ggml_graph_clear(ggml_cgraph * gf) {
    gf->n_nodes = 0;
    gf->n_leafs = 0;
    for (size_t i = 0; i < gf->hash_size; ++i) gf->hash_keys[i] = nullptr;
}

bool ggml_graph_contains(const ggml_cgraph * gf, const ggml_tensor * t) {
    size_t i = hash_of(t, gf->hash_size);
    for (size_t probes = 0; probes < gf->hash_size; ++probes) {
        if (gf->hash_keys[i] == t) return true;
        if (gf->hash_keys[i] == nullptr) return false;
        i = (i + 1) & (gf->hash_size - 1);
    }
    return false;
}

void ggml_build_forward_expand(ggml_cgraph * gf, ggml_tensor * root) {
    // Iterative depth-first post-order: a tensor is added after all of its sources (and its
    // view source) so that nodes come out in an order in which they can be computed.
    struct frame {
        ggml_tensor * t;
        int next;  // next dependency to visit: 0..GGML_MAX_SRC-1 sources, GGML_MAX_SRC view_src
    };
    std::vector<frame> stack;
    if (!hash_insert(gf, root)) return;
    stack.push_back({root, 0});
    while (!stack.empty()) {
        frame & f = stack.back();
        if (f.next <= GGML_MAX_SRC) {
            ggml_tensor * dep = f.next < GGML_MAX_SRC ? f.t->src[f.next] : f.t->view_src;
            ++f.next;
            if (dep && hash_insert(gf, dep)) stack.push_back({dep, 0});
            continue;
        }
        ggml_tensor * t = f.t;
        stack.pop_back();
        if (t->op == GGML_OP_NONE) {
            GGML_ASSERT(gf->n_leafs < gf->size);
            gf->leafs[gf->n_leafs++] = t;
        } else {
            GGML_ASSERT(gf->n_nodes < gf->size);
            gf->nodes[gf->n_nodes++] = t;
        }
    }
}

int ggml_graph_n_nodes(const ggml_cgraph * gf) { return gf->n_nodes; }

ggml_tensor * ggml_graph_node(const ggml_cgraph * gf, int i) {
    if (i < 0) i += gf->n_nodes;
    GGML_ASSERT(i >= 0 && i < gf->n_nodes);
    return gf->nodes[i];
}
