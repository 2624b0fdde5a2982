// scheduler/src/sched-assign.cpp — assignment passes 1..4: which backend runs each node, and why.
#include "sched-impl.h"

ggml_backend_buffer_i * sched_tensor_buffer(const ggml_tensor * t) {
    return t->view_src != nullptr ? t->view_src->buffer : t->buffer;
}

int sched_buffer_backend(const sched_state & s, const ggml_backend_buffer_i * buf) {
    if (buf == nullptr) {
        return -1;
    }
    const ggml_backend_buffer_type_i * bt = buf->buffer_type();
    const int n = int(s.backends.size());
    for (int i = 0; i < n; ++i) {
        if (s.bufts[size_t(i)] == bt) {
            return i;
        }
    }
    for (int i = 0; i < n; ++i) {
        if (s.backends[size_t(i)]->device()->supports_buft(bt)) {
            return i;
        }
    }
    return -1;
}

bool sched_supports_op(const sched_state & s, int backend, const ggml_tensor * t) {
    return s.backends[size_t(backend)]->device()->supports_op(t);
}

int sched_get_id(const sched_state & s, const ggml_tensor * t) {
    auto it = s.ids.find(t);
    return it == s.ids.end() ? -1 : it->second;
}

void sched_set_id(sched_state & s, const ggml_tensor * t, int backend, ggml_sched_cause cause) {
    s.ids[t] = backend;
    s.causes[t] = cause;
}

namespace {

bool sched_is_last(const sched_state & s, int backend) {
    return backend == int(s.backends.size()) - 1;
}

// With op_offload: a higher-priority backend whose device asks for node although its weights
// live in the buffer of backend `home`, or -1.
int sched_offload_target(const sched_state & s, int home, const ggml_tensor * node) {
    if (!s.params.op_offload) {
        return -1;
    }
    for (int b = 0; b < home; ++b) {
        const ggml_backend_device_i * dev = s.backends[size_t(b)]->device();
        if (dev->offload_op(node) && dev->supports_op(node)) {
            return b;
        }
    }
    return -1;
}

// Pass 1 for one node: pinned, own data in a buffer, or a source (weight) in a buffer.
void sched_assign_from_buffers(sched_state & s, ggml_tensor * node) {
    auto pin = s.pins.find(node);
    if (pin != s.pins.end()) {
        sched_set_id(s, node, pin->second, ggml_sched_cause::pinned);
        return;
    }
    const int own = sched_buffer_backend(s, sched_tensor_buffer(node));
    if (own >= 0) {
        sched_set_id(s, node, own, ggml_sched_cause::self_buffer);
        return;
    }
    for (const ggml_tensor * src : node->src) {
        if (src == nullptr) {
            continue;
        }
        const int home = sched_buffer_backend(s, sched_tensor_buffer(src));
        if (home < 0) {
            continue;
        }
        const int off = sched_offload_target(s, home, node);
        if (off >= 0) {
            sched_set_id(s, node, off, ggml_sched_cause::offload);
            return;
        }
        if (sched_supports_op(s, home, node)) {
            sched_set_id(s, node, home, ggml_sched_cause::weights);
            return;
        }
    }
}

// One sweep of pass 2 over the nodes in the order given by `step`.
void sched_expand_sweep(sched_state & s, ggml_cgraph * gf, bool down) {
    int cur = -1;
    const ggml_sched_cause cause = down ? ggml_sched_cause::expand_down : ggml_sched_cause::expand_up;
    for (int k = 0; k < gf->n_nodes; ++k) {
        ggml_tensor * node = gf->nodes[down ? k : gf->n_nodes - 1 - k];
        const int id = sched_get_id(s, node);
        if (id >= 0) {
            cur = sched_is_last(s, id) ? -1 : id;
        } else if (cur >= 0 && sched_supports_op(s, cur, node)) {
            sched_set_id(s, node, cur, cause);
        } else {
            cur = -1;
        }
    }
}

// How many of node's sources are (or will be) where backend b can read them.
int sched_inputs_in_place(const sched_state & s, int b, const ggml_tensor * node) {
    int n = 0;
    for (const ggml_tensor * src : node->src) {
        if (src == nullptr) {
            continue;
        }
        const ggml_backend_buffer_i * buf = sched_tensor_buffer(src);
        if (buf != nullptr) {
            n += s.backends[size_t(b)]->device()->supports_buft(buf->buffer_type()) ? 1 : 0;
        } else {
            n += sched_get_id(s, src) == b ? 1 : 0;
        }
    }
    return n;
}

// The backend a view (or a node writing into another tensor's memory) must run on, or -1.
int sched_view_home(const sched_state & s, const ggml_tensor * t) {
    if (t->view_src == nullptr) {
        return -1;
    }
    const int own = sched_buffer_backend(s, t->view_src->buffer);
    return own >= 0 ? own : sched_get_id(s, t->view_src);
}

void sched_inherit_views(sched_state & s, ggml_tensor * const * tensors, int n) {
    for (int i = 0; i < n; ++i) {
        ggml_tensor * t = tensors[i];
        if (s.pins.count(t) != 0) {
            continue;
        }
        const int home = sched_view_home(s, t);
        if (home >= 0 && sched_buffer_backend(s, t->view_src->buffer) < 0) {
            sched_set_id(s, t, home, ggml_sched_cause::inherit_view);
        }
    }
}

}  // namespace

void sched_pass_buffers(sched_state & s, ggml_cgraph * gf) {
    for (int i = 0; i < gf->n_leafs; ++i) {
        ggml_tensor * leaf = gf->leafs[i];
        const int own = sched_buffer_backend(s, sched_tensor_buffer(leaf));
        auto pin = s.pins.find(leaf);
        if (pin != s.pins.end()) {
            sched_set_id(s, leaf, pin->second, ggml_sched_cause::pinned);
        } else if (own >= 0) {
            sched_set_id(s, leaf, own, ggml_sched_cause::self_buffer);
        }
    }
    for (int i = 0; i < gf->n_nodes; ++i) {
        sched_assign_from_buffers(s, gf->nodes[i]);
    }
}

void sched_pass_expand(sched_state & s, ggml_cgraph * gf) {
    sched_expand_sweep(s, gf, true);
    sched_expand_sweep(s, gf, false);
}

void sched_pass_upgrade(sched_state & s, ggml_cgraph * gf) {
    for (int i = 0; i < gf->n_nodes; ++i) {
        ggml_tensor * node = gf->nodes[i];
        const int id = sched_get_id(s, node);
        if (id <= 0 || s.pins.count(node) != 0 || sched_buffer_backend(s, sched_tensor_buffer(node)) >= 0) {
            continue;
        }
        for (int b = 0; b < id; ++b) {
            if (s.backends[size_t(b)]->device()->supports_buft(s.bufts[size_t(id)]) &&
                sched_supports_op(s, b, node)) {
                sched_set_id(s, node, b, ggml_sched_cause::upgrade);
                break;
            }
        }
    }
}

void sched_pass_most_inputs(sched_state & s, ggml_cgraph * gf) {
    const int n_backends = int(s.backends.size());
    for (int i = 0; i < gf->n_nodes; ++i) {
        ggml_tensor * node = gf->nodes[i];
        if (sched_get_id(s, node) >= 0) {
            continue;
        }
        int best = -1;
        int best_n = -1;
        for (int b = 0; b < n_backends; ++b) {
            if (!sched_supports_op(s, b, node)) {
                continue;
            }
            const int n = sched_inputs_in_place(s, b, node);
            if (n > best_n) {
                best = b;
                best_n = n;
            }
        }
        sched_set_id(s, node, best >= 0 ? best : n_backends - 1, ggml_sched_cause::most_inputs);
    }
}

void sched_pass_inherit(sched_state & s, ggml_cgraph * gf) {
    sched_inherit_views(s, gf->nodes, gf->n_nodes);
    for (int i = 0; i < gf->n_nodes; ++i) {
        ggml_tensor * node = gf->nodes[i];
        const int id = sched_get_id(s, node);
        for (ggml_tensor * src : node->src) {
            if (src != nullptr && sched_get_id(s, src) < 0) {
                sched_set_id(s, src, id, ggml_sched_cause::inherit_source);
            }
        }
        if (node->view_src != nullptr && sched_get_id(s, node->view_src) < 0 &&
            sched_buffer_backend(s, node->view_src->buffer) < 0) {
            sched_set_id(s, node->view_src, id, ggml_sched_cause::inherit_source);
        }
    }
    sched_inherit_views(s, gf->leafs, gf->n_leafs);
    sched_inherit_views(s, gf->nodes, gf->n_nodes);
    const int last = int(s.backends.size()) - 1;
    for (int i = 0; i < gf->n_leafs; ++i) {
        if (sched_get_id(s, gf->leafs[i]) < 0) {
            sched_set_id(s, gf->leafs[i], last, ggml_sched_cause::inherit_source);
        }
    }
}

void sched_assign(sched_state & s, ggml_cgraph * gf) {
    s.ids.clear();
    s.causes.clear();
    sched_pass_buffers(s, gf);
    sched_pass_expand(s, gf);
    sched_pass_upgrade(s, gf);
    sched_pass_most_inputs(s, gf);
    sched_pass_inherit(s, gf);
}
