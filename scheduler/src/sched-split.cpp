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
    const size_t n_max = size_t(gf->n_nodes + gf->n_leafs) * s.backends.size() * size_t(s.params.n_copies) + 1;
    ggml_init_params ip;
    ip.mem_size = n_max * ggml_tensor_overhead();
    ip.no_alloc = true;
    s.plan->copy_ctx.reset(ggml_init(ip));
    return s.plan->copy_ctx != nullptr;
}

// The copies of src in backend b's compute buffer, one per copy slot (one set per source and
// backend per graph). With several slots the copies are flagged OUTPUT: the allocator then never
// gives their memory to another tensor, so a slot's copies may be written while a graph that
// uses another slot still runs.
const sched_copy_set & sched_copy_of(sched_state & s, ggml_tensor * src, int b) {
    sched_graph_plan & p = *s.plan;
    auto key = std::make_pair(static_cast<const ggml_tensor *>(src), b);
    auto it = p.copies.find(key);
    if (it != p.copies.end()) {
        return it->second;
    }
    sched_copy_set set;
    for (int k = 0; k < s.params.n_copies; ++k) {
        ggml_tensor * c = ggml_new_tensor(p.copy_ctx.get(), src->type, GGML_MAX_DIMS, src->ne);
        std::memcpy(c->nb, src->nb, sizeof(c->nb));  // same layout: the copy is one byte range
        ggml_format_name(c, "%s#%s#%d", src->name, s.backends[size_t(b)]->name(), k);
        if (s.params.n_copies > 1) {
            c->flags |= GGML_TENSOR_FLAG_OUTPUT;
        }
        sched_set_id(s, c, b, ggml_sched_cause::inherit_source);
        p.backend_leafs[size_t(b)].push_back(c);
        p.copy_slot.emplace(c, k);
        set.copy[k] = c;
    }
    return p.copies.emplace(key, set).first->second;
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

// The tensor whose memory t is (its view source for a view).
const ggml_tensor * sched_memory_root(const ggml_tensor * t) { return t->view_src != nullptr ? t->view_src : t; }

// last_writer: per memory root, the backend of the last node so far that wrote it.
void sched_add_node(sched_state & s, sched_split & sp, ggml_tensor * node,
                    std::unordered_map<const ggml_tensor *, int> & last_writer) {
    sp.nodes.push_back(node);
    for (int j = 0; j < GGML_MAX_SRC; ++j) {
        ggml_tensor * src = node->src[j];
        if (src == nullptr || sched_src_readable(s, sp.backend, src)) {
            continue;
        }
        const sched_copy_set & c = sched_copy_of(s, src, sp.backend);
        const bool listed = std::any_of(sp.inputs.begin(), sp.inputs.end(),
                                        [src](const auto & in) { return in.first == src; });
        if (!listed) {
            auto w = last_writer.find(sched_memory_root(src));
            sp.inputs.emplace_back(src, c);
            sp.input_writers.push_back(w == last_writer.end() ? -1 : w->second);
        }
        s.plan->rewrites.push_back({node, j, src, c});
    }
    if (!ggml_op_is_metadata(node->op)) {
        last_writer[sched_memory_root(node)] = sp.backend;
    }
}

void sched_finish_graphs(sched_state & s) {
    sched_graph_plan & p = *s.plan;
    for (sched_split & sp : p.splits) {
        sp.graph = ggml_cgraph{};
        sp.graph.size = int(sp.nodes.size());
        sp.graph.n_nodes = int(sp.nodes.size());
        sp.graph.nodes = sp.nodes.data();
    }
    const size_t n = s.backends.size();
    p.backend_graphs.assign(n, ggml_cgraph{});
    for (size_t b = 0; b < n; ++b) {
        ggml_cgraph & g = p.backend_graphs[b];
        g.n_nodes = int(p.backend_nodes[b].size());
        g.n_leafs = int(p.backend_leafs[b].size());
        g.size = std::max(g.n_nodes, g.n_leafs);
        g.nodes = p.backend_nodes[b].data();
        g.leafs = p.backend_leafs[b].data();
    }
}

}  // namespace

bool sched_pass_split(sched_state & s, ggml_cgraph * gf) {
    // A new plan: the previous one may still be held by a copy slot in flight.
    s.plan = std::make_shared<sched_graph_plan>();
    sched_graph_plan & p = *s.plan;
    p.backend_nodes.assign(s.backends.size(), {});
    p.backend_leafs.assign(s.backends.size(), {});
    if (!sched_new_copy_ctx(s, gf)) {
        return false;
    }
    for (int i = 0; i < gf->n_leafs; ++i) {
        ggml_tensor * leaf = gf->leafs[i];
        if (sched_tensor_buffer(leaf) == nullptr) {
            p.backend_leafs[size_t(sched_get_id(s, leaf))].push_back(leaf);
        }
    }
    const int max_inputs = std::max(1, s.params.max_split_inputs);
    std::unordered_map<const ggml_tensor *, int> last_writer;
    for (int i = 0; i < gf->n_nodes; ++i) {
        ggml_tensor * node = gf->nodes[i];
        const int b = sched_get_id(s, node);
        bool cut = p.splits.empty() || p.splits.back().backend != b;
        if (!cut) {
            const sched_split & sp = p.splits.back();
            cut = int(sp.inputs.size()) + sched_count_new_inputs(s, sp, node) > max_inputs;
        }
        if (cut) {
            p.splits.emplace_back();
            p.splits.back().backend = b;
        }
        sched_add_node(s, p.splits.back(), node, last_writer);
        p.backend_nodes[size_t(b)].push_back(node);
    }
    sched_finish_graphs(s);
    return true;
}

void sched_apply_rewrites(sched_graph_plan & p, int c) {
    GGML_ASSERT(c >= 0 && c < sched_max_copies);
    if (p.applied_copy == c) {
        return;
    }
    p.applied_copy = c;
    for (const sched_src_rewrite & r : p.rewrites) {
        r.node->src[r.slot] = r.copies.copy[c];
    }
}

void sched_restore_rewrites(sched_graph_plan & p) {
    if (p.applied_copy < 0) {
        return;
    }
    p.applied_copy = -1;
    for (const sched_src_rewrite & r : p.rewrites) {
        r.node->src[r.slot] = r.original;
    }
}
