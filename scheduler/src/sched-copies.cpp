// scheduler/src/sched-copies.cpp — copy slots: with n_copies > 1 every split input has one copy
// per slot, consecutive graphs use consecutive slots, and a slot is waited for (its graph's
// backends synchronized) only before its copies are written again.
#include "sched-impl.h"

#include <unordered_set>

namespace {

struct sched_range {
    size_t begin = 0;
    size_t end = 0;
};

bool sched_ranges_overlap(const sched_range & a, const sched_range & b) {
    return a.begin < b.end && b.begin < a.end;
}

// The byte ranges of backend b's compute buffer that graph plan p (in flight with slot c) reads
// or writes: every tensor placed there, less the copies of the slots it does not use.
std::vector<sched_range> sched_used_ranges(const sched_state & s, const sched_graph_plan & p, size_t b, int c) {
    std::vector<sched_range> out;
    const ggml_backend_buffer_i * buf = s.gallocs[b]->buffer();
    if (buf == nullptr || b >= p.backend_graphs.size()) {
        return out;
    }
    auto * base = static_cast<const char *>(const_cast<ggml_backend_buffer_i *>(buf)->base());
    auto add = [&](const ggml_tensor * t) {
        if (t->view_src != nullptr || t->buffer != buf || t->data == nullptr) {
            return;
        }
        auto slot = p.copy_slot.find(t);
        if (slot != p.copy_slot.end() && slot->second != c) {
            return;
        }
        const size_t begin = size_t(static_cast<const char *>(t->data) - base);
        out.push_back({begin, begin + s.bufts[b]->alloc_size(t)});
    };
    for (const ggml_tensor * t : p.backend_nodes[b]) {
        add(t);
    }
    for (const ggml_tensor * t : p.backend_leafs[b]) {
        add(t);
    }
    return out;
}

}  // namespace

bool sched_any_in_flight(const sched_state & s) {
    for (const auto & p : s.in_flight) {
        if (p) {
            return true;
        }
    }
    return false;
}

void sched_wait_slot(sched_state & s, int c) {
    std::shared_ptr<sched_graph_plan> & p = s.in_flight[size_t(c)];
    if (!p) {
        return;
    }
    std::vector<bool> used(s.backends.size(), false);
    for (const sched_split & sp : p->splits) {
        used[size_t(sp.backend)] = true;
    }
    for (size_t b = 0; b < used.size(); ++b) {
        sched_backend_sync & bs = s.sync[b];
        if (!used[b]) {
            continue;
        }
        if (bs.slot_recorded[c]) {
            bs.slot_event[c]->synchronize();  // that graph's work only: later graphs keep running
        } else {
            s.backends[b]->synchronize();
            bs.pending = false;
        }
    }
    sched_restore_rewrites(*p);
    p.reset();
}

void sched_wait_all(sched_state & s) {
    for (size_t b = 0; b < s.backends.size(); ++b) {
        s.backends[b]->synchronize();
        s.sync[b].pending = false;
    }
    for (auto & p : s.in_flight) {
        if (p) {
            sched_restore_rewrites(*p);
            p.reset();
        }
    }
}

bool sched_shares_in_flight(const sched_state & s, const ggml_cgraph * gf) {
    if (!sched_any_in_flight(s)) {
        return false;
    }
    if (s.cur_graph == gf && s.allocated) {
        for (const auto & p : s.in_flight) {
            if (p && p == s.plan) {
                return true;  // the graph in flight itself
            }
        }
    }
    std::unordered_set<const ggml_tensor *> busy;
    for (const auto & p : s.in_flight) {
        if (!p) {
            continue;
        }
        for (size_t b = 0; b < p->backend_nodes.size(); ++b) {
            busy.insert(p->backend_nodes[b].begin(), p->backend_nodes[b].end());
            busy.insert(p->backend_leafs[b].begin(), p->backend_leafs[b].end());
        }
    }
    for (int i = 0; i < gf->n_nodes; ++i) {
        if (busy.count(gf->nodes[i]) != 0) {
            return true;
        }
    }
    for (int i = 0; i < gf->n_leafs; ++i) {
        if (busy.count(gf->leafs[i]) != 0) {
            return true;
        }
    }
    return false;
}

bool sched_slot_conflicts(const sched_state & s, size_t b, const ggml_galloc_plan & planned, int c) {
    if (planned.peak > s.gallocs[b]->buffer_size()) {
        return true;  // the buffer would be replaced under the graphs in flight
    }
    std::vector<sched_range> mine;
    for (const ggml_galloc_plan::entry & e : planned.entries) {
        auto slot = s.plan->copy_slot.find(e.tensor);
        if (slot != s.plan->copy_slot.end() && slot->second == c) {
            mine.push_back({e.offset, e.offset + e.size});
        }
    }
    if (mine.empty()) {
        return false;
    }
    for (size_t k = 0; k < s.in_flight.size(); ++k) {
        const auto & p = s.in_flight[k];
        if (!p) {
            continue;
        }
        for (const sched_range & r : sched_used_ranges(s, *p, b, int(k))) {
            for (const sched_range & m : mine) {
                if (sched_ranges_overlap(r, m)) {
                    return true;
                }
            }
        }
    }
    return false;
}
