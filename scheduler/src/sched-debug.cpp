// scheduler/src/sched-debug.cpp — cause names and the INFERD_SCHED_DEBUG=1 report (the format
// is documented in scheduler/scheduler.h).
#include "sched-impl.h"

#include <cstdio>
#include <string>

const char * ggml_sched_cause_name(ggml_sched_cause cause) {
    switch (cause) {
        case ggml_sched_cause::none: return "none";
        case ggml_sched_cause::pinned: return "pinned";
        case ggml_sched_cause::weights: return "weights";
        case ggml_sched_cause::self_buffer: return "self_buffer";
        case ggml_sched_cause::expand_down: return "expand_down";
        case ggml_sched_cause::expand_up: return "expand_up";
        case ggml_sched_cause::upgrade: return "upgrade";
        case ggml_sched_cause::most_inputs: return "most_inputs";
        case ggml_sched_cause::offload: return "offload";
        case ggml_sched_cause::inherit_view: return "inherit_view";
        case ggml_sched_cause::inherit_source: return "inherit_source";
    }
    return "unknown";
}

namespace {

const char * sched_tensor_name(const ggml_tensor * t) {
    return t->name[0] != '\0' ? t->name : "<unnamed>";
}

const char * sched_backend_name(const sched_state & s, int id) {
    return id >= 0 ? s.backends[size_t(id)]->name() : "none";
}

// Where a source lives: the backend of its buffer, else the backend it is assigned to.
int sched_src_location(const sched_state & s, const ggml_tensor * src) {
    const int own = sched_buffer_backend(s, sched_tensor_buffer(src));
    return own >= 0 ? own : sched_get_id(s, src);
}

ggml_sched_cause sched_cause_of(const sched_state & s, const ggml_tensor * t) {
    auto it = s.causes.find(t);
    return it == s.causes.end() ? ggml_sched_cause::none : it->second;
}

}  // namespace

void sched_debug_print(const sched_state & s, const ggml_cgraph * gf) {
    for (int i = 0; i < gf->n_nodes; ++i) {
        const ggml_tensor * node = gf->nodes[i];
        std::string line = "node " + std::to_string(i) + " " + ggml_op_name(node->op) + " " + sched_tensor_name(node) +
                           " -> " + sched_backend_name(s, sched_get_id(s, node)) + " (" +
                           ggml_sched_cause_name(sched_cause_of(s, node)) + ") [inputs:";
        for (const ggml_tensor * src : node->src) {
            if (src != nullptr) {
                line += std::string(" ") + sched_tensor_name(src) + "@" + sched_backend_name(s, sched_src_location(s, src));
            }
        }
        std::fprintf(stderr, "%s]\n", line.c_str());
    }
    int first = 0;
    for (size_t k = 0; k < s.plan->splits.size(); ++k) {
        const sched_split & sp = s.plan->splits[k];
        const int last = first + int(sp.nodes.size()) - 1;
        std::fprintf(stderr, "split %zu on %s: nodes %d..%d, %zu input copies\n", k,
                     sched_backend_name(s, sp.backend), first, last, sp.inputs.size());
        first = last + 1;
    }
}

void sched_debug_print_compute(const sched_state & s, int c) {
    std::fprintf(stderr, "compute with copy slot %d of %d\n", c, s.params.n_copies);
    for (size_t k = 0; k < s.plan->splits.size(); ++k) {
        const sched_split & sp = s.plan->splits[k];
        if (sp.inputs.empty()) {
            continue;
        }
        std::string line = "split " + std::to_string(k) + " reads";
        for (const auto & in : sp.inputs) {
            line += std::string(" ") + sched_tensor_name(in.second.copy[c]);
        }
        std::fprintf(stderr, "%s\n", line.c_str());
    }
}
