// scheduler/src/sched-split.cpp — pass 5: cut the assigned graph into splits of consecutive
// nodes on one backend, and give every split input that lives where the split's backend cannot
// read it a copy in that backend's compute buffer.
#include "sched-impl.h"

#include <algorithm>
#include <cstring>

namespace {

// Whether backend b can read src where it lives (or will live, once allocated). Compute tensors
// placed by the scheduler on another backend are always copied: each backend's compute buffer
// is planned on its own, so a direct read across backends would not keep the tensor alive.
bool sched_src_readable(const sched_state & s, int b, const ggml_tensor * src) {
    const ggml_backend_buffer_i * buf = sched_tensor_buffer(src);
    if (buf != nullptr) {
        return s.backends[size_t(b)]->device()->supports_buft(buf->buffer_type());
    }
    const ggml_tensor * root = src->view_src != nullptr ? src->view_src : src;
    const int home = sched_get_id(s, root);
    return (home < 0 ? sched_get_id(s, src) : home) == b;
}

bool sched_new_copy_ctx(sched_state & s, const ggml_cgraph * gf) {
    const size_t n_max = size_t(gf->n_nodes + gf->n_leafs) * s.backends.size() + 1;
    ggml_init_params ip;
    ip.mem_size = n_max * ggml_tensor_overhead();
    ip.no_alloc = true;
    s.copy_ctx.reset(ggml_init(ip));
    return s.copy_ctx != nullptr;
}

// The copy of src in backend b's compute buffer (one per source and backend per graph).
ggml_tensor * sched_copy_of(sched_state & s, ggml_tensor * src, int b) {
    auto key = std::make_pair(static_cast<const ggml_tensor *>(src), b);
    auto it = s.copies.find(key);
    if (it != s.copies.end()) {
        return it->second;
    }
    ggml_tensor * c = ggml_new_tensor(s.copy_ctx.get(), src->type, GGML_MAX_DIMS, src->ne);
    std::memcpy(c->nb, src->nb, sizeof(c->nb));  // same layout: the copy is one byte range
    ggml_format_name(c, "%s#%s#%d", src->name, s.backends[size_t(b)]->name(), 0);
    s.copies.emplace(key, c);
    sched_set_id(s, c, b, ggml_sched_cause::inherit_source);
    s.backend_leafs[size_t(b)].push_back(c);
    return c;
}

// Sources of node that split `sp` would need copies of and does not have yet.
int sched_count_new_inputs(const sched_state & s, const sched_split & sp, const ggml_tensor * node) {
    int n = 0;
    for (int j = 0; j < GGML_MAX_SRC; ++j) {
        const ggml_tensor * src = node->src[j];
        if (src == nullptr || sched_src_readable(s, sp.backend, src)) {
            continue;
        }
        bool seen = false;
        for (const auto & in : sp.inputs) {
            seen = seen || in.first == src;
        }
        for (int k = 0; k < j; ++k) {
            seen = seen || node->src[k] == src;
        }
        n += seen ? 0 : 1;
    }
    return n;
}

void sched_add_node(sched_state & s, sched_split & sp, ggml_tensor * node) {
    sp.nodes.push_back(node);
    for (int j = 0; j < GGML_MAX_SRC; ++j) {
        ggml_tensor * src = node->src[j];
        if (src == nullptr || sched_src_readable(s, sp.backend, src)) {
            continue;
        }
        ggml_tensor * c = sched_copy_of(s, src, sp.backend);
        const bool listed = std::any_of(sp.inputs.begin(), sp.inputs.end(),
                                        [src](const auto & in) { return in.first == src; });
        if (!listed) {
            sp.inputs.emplace_back(src, c);
        }
        s.rewrites.push_back({node, j, src, c});
    }
}

void sched_finish_graphs(sched_state & s) {
    for (sched_split & sp : s.splits) {
        sp.graph = ggml_cgraph{};
        sp.graph.size = int(sp.nodes.size());
        sp.graph.n_nodes = int(sp.nodes.size());
        sp.graph.nodes = sp.nodes.data();
    }
    const size_t n = s.backends.size();
    s.backend_graphs.assign(n, ggml_cgraph{});
    for (size_t b = 0; b < n; ++b) {
        ggml_cgraph & g = s.backend_graphs[b];
        g.n_nodes = int(s.backend_nodes[b].size());
        g.n_leafs = int(s.backend_leafs[b].size());
        g.size = std::max(g.n_nodes, g.n_leafs);
        g.nodes = s.backend_nodes[b].data();
        g.leafs = s.backend_leafs[b].data();
    }
}

}  // namespace

bool sched_pass_split(sched_state & s, ggml_cgraph * gf) {
    s.splits.clear();
    s.copies.clear();
    s.rewrites.clear();
    s.backend_nodes.assign(s.backends.size(), {});
    s.backend_leafs.assign(s.backends.size(), {});
    if (!sched_new_copy_ctx(s, gf)) {
        return false;
    }
    for (int i = 0; i < gf->n_leafs; ++i) {
        ggml_tensor * leaf = gf->leafs[i];
        if (sched_tensor_buffer(leaf) == nullptr) {
            s.backend_leafs[size_t(sched_get_id(s, leaf))].push_back(leaf);
        }
    }
    const int max_inputs = std::max(1, s.params.max_split_inputs);
    for (int i = 0; i < gf->n_nodes; ++i) {
        ggml_tensor * node = gf->nodes[i];
        const int b = sched_get_id(s, node);
        bool cut = s.splits.empty() || s.splits.back().backend != b;
        if (!cut) {
            const sched_split & sp = s.splits.back();
            cut = int(sp.inputs.size()) + sched_count_new_inputs(s, sp, node) > max_inputs;
        }
        if (cut) {
            s.splits.emplace_back();
            s.splits.back().backend = b;
        }
        sched_add_node(s, s.splits.back(), node);
        s.backend_nodes[size_t(b)].push_back(node);
    }
    sched_finish_graphs(s);
    return true;
}

void sched_apply_rewrites(sched_state & s) {
    if (s.rewrites_applied) {
        return;
    }
    s.rewrites_applied = true;
    for (const sched_src_rewrite & r : s.rewrites) {
        r.node->src[r.slot] = r.copy;
    }
}

void sched_restore_rewrites(sched_state & s) {
    if (!s.rewrites_applied) {
        return;
    }
    s.rewrites_applied = false;
    for (const sched_src_rewrite & r : s.rewrites) {
        r.node->src[r.slot] = r.original;
    }
}
