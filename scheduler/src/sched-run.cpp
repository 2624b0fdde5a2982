// scheduler/src/sched-run.cpp — running a planned graph: input copies, splits in order, and the
// events that order splits on different backends without blocking the host.
//
// Between split k-1 on backend P and split k on another backend B:
//   - P has events: P records its split event after split k-1 and B event_waits on it (a device
//     waits on its own queue; a backend without events, the CPU, blocks the host until then);
//   - P has none: P is synchronized after its split (a no-op for the CPU).
// Inputs of split k that live in another device's memory are copied with B's cpy_tensor_async
// when B offers it (ordered on the device queues); every other copy is synchronous, after the
// host has waited for the backend that produced the source. Inputs in host memory are never
// copied asynchronously: the CPU of a later graph rewrites its compute memory at once, while a
// queued copy could still read it.
#include "sched-impl.h"

#include <unordered_set>

namespace {

// Queues gf on backend b: from now on the host has work of b to wait for.
ggml_status sched_compute_on(sched_state & s, int b, ggml_cgraph * gf) {
    sched_backend_sync & bs = s.sync[size_t(b)];
    bs.pending = !bs.on_host;
    bs.split_event_current = false;
    return s.backends[size_t(b)]->graph_compute(gf);
}

ggml_status sched_run_nodes(sched_state & s, int b, ggml_tensor ** nodes, int n) {
    ggml_cgraph g{};
    g.size = n;
    g.n_nodes = n;
    g.nodes = nodes;
    return sched_compute_on(s, b, &g);
}

// Runs one split; with an eval callback, in pieces that end at each node it wants to see.
ggml_status sched_run_split(sched_state & s, sched_split & sp) {
    if (!s.eval_cb) {
        return sched_compute_on(s, sp.backend, &sp.graph);
    }
    const int n = int(sp.nodes.size());
    int start = 0;
    for (int j = 0; j < n; ++j) {
        const bool want = s.eval_cb(sp.nodes[size_t(j)], true);
        if (!want && j + 1 < n) {
            continue;
        }
        const ggml_status st = sched_run_nodes(s, sp.backend, sp.nodes.data() + start, j - start + 1);
        if (st != GGML_STATUS_SUCCESS) {
            return st;
        }
        start = j + 1;
        if (want) {
            sched_host_wait(s, sp.backend);  // the callback reads the node's data
            if (!s.eval_cb(sp.nodes[size_t(j)], false)) {
                return GGML_STATUS_ABORTED;
            }
        }
    }
    return GGML_STATUS_SUCCESS;
}

// The backend whose work last wrote input i of sp: the writer the plan found in the graph, else
// the backend owning t's buffer (what it holds was written before this graph), else -1.
int sched_producer(const sched_state & s, const sched_split & sp, size_t i) {
    if (sp.input_writers[i] >= 0) {
        return sp.input_writers[i];
    }
    return sched_buffer_backend(s, sched_tensor_buffer(sp.inputs[i].first));
}

// Copies every split input whose source is a graph input into its copy of slot c, so the caller
// may reuse its memory as soon as compute_async returns.
void sched_copy_graph_inputs(sched_state & s, int c, std::unordered_set<const ggml_tensor *> & done) {
    for (const sched_split & sp : s.plan->splits) {
        for (const auto & in : sp.inputs) {
            ggml_tensor * copy = in.second.copy[c];
            if ((in.first->flags & GGML_TENSOR_FLAG_INPUT) != 0 && done.insert(copy).second) {
                ggml_backend_tensor_copy(in.first, copy);
            }
        }
    }
}

// Copies the inputs of split sp (those not copied yet) into their copies of slot c.
void sched_copy_split_inputs(sched_state & s, const sched_split & sp, int c,
                             std::unordered_set<const ggml_tensor *> & done) {
    ggml_backend_i * dst_backend = s.backends[size_t(sp.backend)];
    for (size_t i = 0; i < sp.inputs.size(); ++i) {
        ggml_tensor * src = sp.inputs[i].first;
        ggml_tensor * copy = sp.inputs[i].second.copy[c];
        if (!done.insert(copy).second) {
            continue;
        }
        const int producer = sched_producer(s, sp, i);
        const ggml_backend_buffer_i * buf = sched_tensor_buffer(src);
        const bool device_memory = buf != nullptr && !buf->is_host();
        if (device_memory && producer >= 0 && producer != sp.backend &&
            dst_backend->cpy_tensor_async(s.backends[size_t(producer)], src, copy)) {
            continue;
        }
        if (producer >= 0) {
            sched_host_wait(s, producer);
        }
        ggml_backend_tensor_copy(src, copy);
    }
}

// Makes split k's backend wait for the work of split k-1 when that ran on another backend.
void sched_order_after_previous(sched_state & s, size_t k) {
    if (k == 0) {
        return;
    }
    const int prev = s.plan->splits[k - 1].backend;
    const int cur = s.plan->splits[k].backend;
    sched_backend_sync & ps = s.sync[size_t(prev)];
    if (prev == cur || !ps.pending) {
        return;
    }
    if (ps.has_events && ps.split_event_current) {
        s.backends[size_t(cur)]->event_wait(ps.split_event.get());
        if (s.sync[size_t(cur)].on_host) {
            ps.pending = false;  // a CPU backend waits on the host
        }
    } else {
        sched_host_wait(s, prev);
    }
}

// After split k: a split on another backend follows, so the backend records its split event (or,
// without events, is synchronized as the next backend cannot wait for it otherwise).
void sched_mark_split_end(sched_state & s, size_t k) {
    const std::vector<sched_split> & splits = s.plan->splits;
    const int b = splits[k].backend;
    if (k + 1 >= splits.size() || splits[k + 1].backend == b) {
        return;
    }
    sched_backend_sync & bs = s.sync[size_t(b)];
    if (bs.has_events) {
        bs.split_event->record(s.backends[size_t(b)]);
        bs.split_event_current = true;
    } else {
        sched_host_wait(s, b);
    }
}

// Records slot c's event on every backend the plan's splits ran on.
void sched_record_slot(sched_state & s, int c) {
    std::vector<bool> used(s.backends.size(), false);
    for (const sched_split & sp : s.plan->splits) {
        used[size_t(sp.backend)] = true;
    }
    for (size_t b = 0; b < used.size(); ++b) {
        sched_backend_sync & bs = s.sync[b];
        if (used[b] && bs.has_events) {
            bs.slot_event[c]->record(s.backends[b]);
        }
        bs.slot_recorded[c] = used[b] && bs.has_events;
    }
}

ggml_status sched_run_all_splits(sched_state & s, int c) {
    std::vector<sched_split> & splits = s.plan->splits;
    std::unordered_set<const ggml_tensor *> done;
    sched_copy_graph_inputs(s, c, done);
    for (size_t k = 0; k < splits.size(); ++k) {
        sched_order_after_previous(s, k);
        sched_copy_split_inputs(s, splits[k], c, done);
        const ggml_status st = sched_run_split(s, splits[k]);
        if (st != GGML_STATUS_SUCCESS) {
            return st;
        }
        sched_mark_split_end(s, k);
    }
    return GGML_STATUS_SUCCESS;
}

}  // namespace

void sched_init_sync(sched_state & s) {
    s.sync.clear();
    s.sync.resize(s.backends.size());
    for (size_t b = 0; b < s.backends.size(); ++b) {
        sched_backend_sync & bs = s.sync[b];
        ggml_backend_device_i * dev = s.backends[b]->device();
        bs.on_host = dev->type() == ggml_backend_dev_type::cpu;
        bs.split_event = dev->event_new();
        bs.has_events = bs.split_event != nullptr;
        for (int c = 0; bs.has_events && c < s.params.n_copies; ++c) {
            bs.slot_event[c] = dev->event_new();
            bs.has_events = bs.slot_event[c] != nullptr;
        }
    }
}

void sched_host_wait(sched_state & s, int b) {
    sched_backend_sync & bs = s.sync[size_t(b)];
    if (!bs.pending) {
        return;
    }
    if (bs.has_events && bs.split_event_current) {
        bs.split_event->synchronize();
    } else {
        s.backends[size_t(b)]->synchronize();
    }
    bs.pending = false;
}

ggml_status sched_run_splits(sched_state & s, int c) {
    const ggml_status st = sched_run_all_splits(s, c);
    sched_record_slot(s, c);  // also after a failure: the slot's next user waits for what was queued
    return st;
}
