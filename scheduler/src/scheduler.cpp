// scheduler/src/scheduler.cpp — ggml_scheduler: planning and allocation of the split graph, the
// compute entry points (running the splits: sched-run.cpp).
#include "sched-impl.h"

#include <cstdlib>
#include <cstring>

namespace {

bool sched_env_debug() {
    const char * v = std::getenv("INFERD_SCHED_DEBUG");
    return v != nullptr && v[0] != '\0' && std::strcmp(v, "0") != 0;
}

bool sched_is_own_buffer(const sched_state & s, const ggml_backend_buffer_i * buf) {
    if (buf == nullptr) {
        return false;
    }
    for (const auto & g : s.gallocs) {
        if (g->buffer() == buf) {
            return true;
        }
    }
    return false;
}

// Forgets where the compute buffers put gf's tensors, so that assignment sees only the data
// that lives outside the scheduler (weights, user inputs) and allocation places them anew.
void sched_forget_allocations(sched_state & s, ggml_cgraph * gf) {
    auto forget = [&s](ggml_tensor * t) {
        if (t->data != nullptr && sched_is_own_buffer(s, t->buffer)) {
            t->data = nullptr;
            t->buffer = nullptr;
        }
    };
    for (int i = 0; i < gf->n_leafs; ++i) {
        forget(gf->leafs[i]);
    }
    for (int i = 0; i < gf->n_nodes; ++i) {
        forget(gf->nodes[i]);
    }
    s.allocated = false;
    s.cur_graph = nullptr;
}

// Assign (passes 1..4) and split (pass 5); prints the debug report when asked. The caller has
// waited for every graph in flight that gf shares tensors with.
bool sched_plan(sched_state & s, ggml_cgraph * gf) {
    sched_forget_allocations(s, gf);
    sched_assign(s, gf);
    if (!sched_pass_split(s, gf)) {
        return false;
    }
    if (s.debug) {
        sched_debug_print(s, gf);
    }
    return true;
}

// Runs the per-backend allocation step (reserve or alloc_graph) with the copies in place and
// the copied compute tensors flagged OUTPUT, so that no backend reuses their memory before
// the split that copies them has run.
template <typename F> bool sched_for_each_galloc(sched_state & s, F && step) {
    sched_graph_plan & p = *s.plan;
    std::vector<ggml_tensor *> flagged;
    for (const auto & kv : p.copies) {
        auto * src = const_cast<ggml_tensor *>(kv.first.first);
        if (sched_tensor_buffer(src) == nullptr && (src->flags & GGML_TENSOR_FLAG_OUTPUT) == 0) {
            src->flags |= GGML_TENSOR_FLAG_OUTPUT;
            flagged.push_back(src);
        }
    }
    sched_apply_rewrites(p, 0);  // the copies of every slot are leafs: any slot gives the same layout
    bool ok = true;
    for (size_t b = 0; b < s.backends.size() && ok; ++b) {
        ggml_cgraph & g = p.backend_graphs[b];
        if (g.n_nodes > 0 || g.n_leafs > 0) {
            ok = step(b, &g);
        }
    }
    sched_restore_rewrites(p);
    for (ggml_tensor * t : flagged) {
        t->flags &= ~GGML_TENSOR_FLAG_OUTPUT;
    }
    return ok;
}

bool sched_is_current(const sched_state & s, const ggml_cgraph * gf) {
    if (!s.allocated || s.cur_graph != gf || size_t(gf->n_nodes) != s.cur_nodes.size()) {
        return false;
    }
    for (int i = 0; i < gf->n_nodes; ++i) {
        const ggml_tensor * node = gf->nodes[i];
        if (node != s.cur_nodes[size_t(i)] || (node->data == nullptr && ggml_nelements(node) > 0)) {
            return false;
        }
    }
    return true;
}

}  // namespace

// The state lives in sched_state (sched-impl.h) so the passes in other files can reach it.
struct ggml_scheduler::impl : sched_state {};

ggml_scheduler::ggml_scheduler(const ggml_sched_params & params) : impl_(std::make_unique<impl>()) {
    GGML_ASSERT(!params.backends.empty());
    GGML_ASSERT(params.n_copies >= 1 && params.n_copies <= 4);
    GGML_ASSERT(params.backends.back().backend != nullptr &&
                params.backends.back().backend->device()->type() == ggml_backend_dev_type::cpu);
    impl & s = *impl_;
    s.params = params;
    for (const ggml_sched_backend & sb : params.backends) {
        GGML_ASSERT(sb.backend != nullptr);
        ggml_backend_buffer_type_i * buft = sb.buft ? sb.buft : sb.backend->device()->buffer_type();
        s.backends.push_back(sb.backend);
        s.bufts.push_back(buft);
        s.gallocs.push_back(std::make_unique<ggml_gallocr>(buft));
    }
    s.in_flight.assign(size_t(params.n_copies), nullptr);
    sched_init_sync(s);
    s.debug = sched_env_debug();
}

ggml_scheduler::~ggml_scheduler() = default;

bool ggml_scheduler::reserve(ggml_cgraph * gf) {
    impl & s = *impl_;
    if (sched_any_in_flight(s)) {
        sched_wait_all(s);  // a compute buffer may grow (be replaced)
    }
    if (!sched_plan(s, gf)) {
        return false;
    }
    const bool ok = sched_for_each_galloc(s, [&s](size_t b, ggml_cgraph * bg) { return s.gallocs[b]->reserve(bg); });
    sched_forget_allocations(s, gf);
    return ok;
}

bool ggml_scheduler::alloc_graph(ggml_cgraph * gf) {
    impl & s = *impl_;
    if (s.params.n_copies == 1 ? sched_any_in_flight(s) : sched_shares_in_flight(s, gf)) {
        sched_wait_all(s);
    }
    if (!sched_plan(s, gf)) {
        return false;
    }
    if (sched_any_in_flight(s)) {
        // Graphs of other slots still run: gf may be placed alongside only where its copies of
        // the next slot lie apart from everything they use (always so for the same shapes).
        bool conflict = false;
        sched_for_each_galloc(s, [&s, &conflict](size_t b, ggml_cgraph * bg) {
            conflict = conflict || sched_slot_conflicts(s, b, ggml_galloc_plan_graph(bg, s.bufts[b]), s.cur_copy);
            return true;
        });
        if (conflict) {
            sched_wait_all(s);
        }
    }
    if (!sched_for_each_galloc(s, [&s](size_t b, ggml_cgraph * bg) { return s.gallocs[b]->alloc_graph(bg); })) {
        return false;
    }
    s.cur_graph = gf;
    s.cur_nodes.assign(gf->nodes, gf->nodes + gf->n_nodes);
    s.allocated = true;
    return true;
}

ggml_status ggml_scheduler::compute_async(ggml_cgraph * gf) {
    impl & s = *impl_;
    const int c = s.cur_copy;
    if (s.params.n_copies == 1 ? sched_any_in_flight(s) : sched_shares_in_flight(s, gf)) {
        // The previous graph may still run on an asynchronous backend: with one copy of the
        // inputs, or when it is gf itself (its nodes cannot hold two computations), wait for it.
        synchronize();
    }
    sched_wait_slot(s, c);  // the last graph that used slot c is done with its copies
    if (!sched_is_current(s, gf) && !alloc_graph(gf)) {
        return GGML_STATUS_ALLOC_FAILED;
    }
    // The copies stay in the nodes' sources until the slot is waited for: a backend may still
    // be reading them.
    sched_apply_rewrites(*s.plan, c);
    s.in_flight[size_t(c)] = s.plan;
    s.cur_copy = (c + 1) % s.params.n_copies;
    if (s.debug) {
        sched_debug_print_compute(s, c);
    }
    return sched_run_splits(s, c);
}

ggml_status ggml_scheduler::compute(ggml_cgraph * gf) {
    const ggml_status st = compute_async(gf);
    synchronize();
    return st;
}

void ggml_scheduler::synchronize() { sched_wait_all(*impl_); }

void ggml_scheduler::reset() {
    impl & s = *impl_;
    synchronize();
    s.pins.clear();
    s.ids.clear();
    s.causes.clear();
    s.plan = std::make_shared<sched_graph_plan>();
    s.cur_graph = nullptr;
    s.cur_nodes.clear();
    s.allocated = false;
}

void ggml_scheduler::set_tensor_backend(ggml_tensor * node, ggml_backend_i * backend) {
    impl & s = *impl_;
    for (size_t i = 0; i < s.backends.size(); ++i) {
        if (s.backends[i] == backend) {
            s.pins[node] = int(i);
            s.allocated = false;
            return;
        }
    }
    GGML_ABORT("set_tensor_backend: backend %s is not one of the scheduler's", backend ? backend->name() : "(null)");
}

ggml_backend_i * ggml_scheduler::tensor_backend(const ggml_tensor * node) const {
    const int id = sched_get_id(*impl_, node);
    return id >= 0 ? impl_->backends[size_t(id)] : nullptr;
}

ggml_sched_cause ggml_scheduler::tensor_cause(const ggml_tensor * node) const {
    auto it = impl_->causes.find(node);
    return it == impl_->causes.end() ? ggml_sched_cause::none : it->second;
}

int ggml_scheduler::n_splits() const { return int(impl_->plan->splits.size()); }
int ggml_scheduler::n_copies() const { return int(impl_->plan->copies.size()); }
int ggml_scheduler::cur_copy() const { return impl_->cur_copy; }
int ggml_scheduler::n_backends() const { return int(impl_->backends.size()); }

ggml_backend_i * ggml_scheduler::backend(int i) const {
    GGML_ASSERT(i >= 0 && i < n_backends());
    return impl_->backends[size_t(i)];
}

size_t ggml_scheduler::buffer_size(const ggml_backend_i * backend) const {
    for (size_t i = 0; i < impl_->backends.size(); ++i) {
        if (impl_->backends[i] == backend) {
            return impl_->gallocs[i]->buffer_size();
        }
    }
    return 0;
}

int ggml_scheduler::n_buffer_allocs() const {
    int n = 0;
    for (const auto & g : impl_->gallocs) {
        n += g->n_buffer_allocs();
    }
    return n;
}

void ggml_scheduler::set_eval_callback(ggml_sched_eval_callback cb) { impl_->eval_cb = std::move(cb); }
