// scheduler/scheduler.h — runs one compute graph across several backends.
//
// Usage:
//   ggml_sched_params sp;
//   sp.backends = {{gpu.get(), nullptr}, {cpu.get(), nullptr}};  // priority order, CPU last
//   ggml_scheduler sched(sp);
//   if (!sched.reserve(worst_case_graph)) { /* out of memory */ }
//   ggml_status st = sched.compute(gf);       // assign, split, allocate, copy, run, wait
//   int splits = sched.n_splits();            // consecutive runs of nodes on one backend
//   // with sp.n_copies = 2, distinct graphs of one shape (e.g. consecutive ubatches) pipeline:
//   sched.compute_async(gf_a); gpu->get_tensor_async(out_a, host_a, 0, n);
//   sched.compute_async(gf_b); gpu->get_tensor_async(out_b, host_b, 0, n);
//   sched.synchronize();
//
// The scheduler knows nothing of models or requests. It assigns every node of a graph to one
// backend in passes (each a function of its own, each decision recording its cause):
//   1. nodes whose inputs or weights already live in a backend's buffer go there, and user pins
//      (set_tensor_backend) are honoured;
//   2. GPU (non-last) assignments spread to neighbouring unassigned nodes, down the graph and
//      then up, skipping the last (CPU) backend;
//   3. nodes move to a higher-priority backend that can use the same buffer type; each node
//      still unassigned goes to the backend that supports it with the most inputs in place;
//   4. views and sources without an assignment inherit from the node that uses them;
//   5. the node list is cut into splits of consecutive nodes on one backend; every split input
//      that lives in a buffer the split's backend cannot use gets a copy in that backend's
//      compute buffer (at most max_split_inputs inputs per split: a split with more is cut).
// Execution runs the splits in order; the host waits only where it must. Between a split on
// backend P and the next split on another backend B: when P's device has events (event_new),
// P records an event after its split and B event_waits on it — a device waits on its own queue
// without blocking the host, while a backend whose device has no events (the CPU) blocks the
// host until the event is reached; when P's device has none, P is synchronized after its split
// (a no-op for the CPU). Split inputs that live in another device's memory are copied with B's
// cpy_tensor_async where B offers it (ordered on the device queues); every other input copy is
// synchronous, after the host has waited for the backend that last wrote the source (the
// node's backend, or the backend of the set_rows / cpy that wrote into the buffer it views) —
// inputs in host memory included, so a later graph may rewrite the CPU's memory at once. Graph
// inputs are copied before compute_async returns (the caller may reuse their memory at once).
// Until synchronize() (compute does it), the sources of nodes that read a copy point at the copy.
// With op_offload, a node whose weights are in host memory runs on a higher-priority backend
// when that backend's device says offload_op.
//
// Copy slots (n_copies > 1, pipelining): every split input has n_copies copies, one per slot,
// named <source>#<backend>#<slot>. Each compute_async uses slot cur_copy() and advances it
// (mod n_copies), so graph i+1 writes its inputs into another slot while a backend may still
// read graph i's. Before writing a slot's copies, compute_async waits only for the graph that
// last used that slot — on each backend its splits ran on, the host waits for the slot's event
// recorded after that graph's work (devices with events: later graphs keep running) or
// synchronizes the backend (devices without) — then points that graph's sources back at the
// originals. The copies of all slots live in the compute buffers for the
// whole graph (reserve sizes them; graphs of the same shape allocate nothing new). Pipelining
// needs distinct graph objects: computing a graph that is still in flight (or one sharing a
// node or scheduler-placed leaf with it) waits for everything first, and so does a graph whose
// layout would grow a compute buffer or put its copies where a graph in flight still works.
// A graph's results live in compute memory that the next graph may reuse: read them right after
// compute_async with the computing backend's get_tensor_async (in order on its queue), or
// after synchronize(). With n_copies == 1 each compute_async first waits for the previous graph.
//
// INFERD_SCHED_DEBUG=1 in the environment prints, for every graph assigned, one line per node:
//   node <index> <op> <name> -> <backend> (<cause>) [inputs: <name>@<backend> …]
// and one line per split: split <i> on <backend>: nodes <first>..<last>, <n> input copies.
// Every compute_async then prints the copy slot it uses and, per split with inputs, the copies:
//   compute with copy slot <c> of <n_copies>
//   split <i> reads <source>#<backend>#<c> …
//
// Return codes: reserve / alloc_graph return false when a buffer cannot be had; compute
// returns the first non-success ggml_status of a backend (GGML_STATUS_ALLOC_FAILED when
// allocation fails, GGML_STATUS_ABORTED when the eval callback asked to stop).
#pragma once

#include "ggml/alloc.h"
#include "ggml/backend.h"
#include "ggml/ggml.h"

#include <functional>
#include <memory>
#include <vector>

// Why a node runs where it runs.
enum class ggml_sched_cause {
    none,            // not assigned (yet)
    pinned,          // set_tensor_backend
    weights,         // pass 1: a source (weight / input) lives in this backend's buffer
    self_buffer,     // pass 1: the node's own data already lives in this backend's buffer
    expand_down,     // pass 2: spread from the node above
    expand_up,       // pass 2: spread from the node below
    upgrade,         // pass 3: moved to a higher-priority backend using the same buffer type
    most_inputs,     // pass 3: the supporting backend with the most inputs in place
    offload,         // pass 1 with op_offload: weights in host memory, device asks for the op
    inherit_view,    // pass 4: a view takes its source's backend
    inherit_source,  // pass 4: a source takes its consumer's backend
};
const char * ggml_sched_cause_name(ggml_sched_cause cause);

struct ggml_sched_backend {
    ggml_backend_i * backend = nullptr;
    ggml_backend_buffer_type_i * buft = nullptr;  // nullptr: the device's default buffer type
};

struct ggml_sched_params {
    std::vector<ggml_sched_backend> backends;  // priority order; the last one must be a CPU backend
    size_t graph_size = GGML_DEFAULT_GRAPH_SIZE;  // most nodes (and leafs) of a graph
    // Copies of split inputs (copy slots, 1..4) so that consecutive graphs pipeline; see above.
    int n_copies = 1;
    int max_split_inputs = 10;  // a split with more inputs than this is cut
    bool op_offload = true;
};

// Debug hook: called with ask == true for every node before it runs (return true to observe
// it), then with ask == false after it ran (its data is then readable; return false to stop).
using ggml_sched_eval_callback = std::function<bool(ggml_tensor * t, bool ask)>;

class ggml_scheduler {
public:
    explicit ggml_scheduler(const ggml_sched_params & params);
    ~ggml_scheduler();
    ggml_scheduler(const ggml_scheduler &) = delete;
    ggml_scheduler & operator=(const ggml_scheduler &) = delete;

    // Sizes every backend's compute buffer for gf (the worst case); later graphs of the same
    // shape allocate nothing new. Leaves gf unallocated. False when out of memory.
    bool reserve(ggml_cgraph * gf);
    // Assigns backends, cuts splits, inserts copies and allocates gf. False when out of memory.
    bool alloc_graph(ggml_cgraph * gf);
    // alloc_graph when needed, then runs every split; compute waits for the backends.
    ggml_status compute(ggml_cgraph * gf);
    // Runs every split and returns once the work is queued; the host has waited only where a
    // backend without events (the CPU) needed another's results, and for the copy slot's reuse.
    ggml_status compute_async(ggml_cgraph * gf);
    // Waits for every backend (and everything queued on them: get_tensor_async reads included).
    void synchronize();
    // Forgets the current graph's assignments and allocations (pins included).
    void reset();

    // Pins node to backend (before alloc_graph / compute of its graph).
    void set_tensor_backend(ggml_tensor * node, ggml_backend_i * backend);
    // Where node runs (nullptr if unassigned) and why, for the last assigned graph.
    ggml_backend_i * tensor_backend(const ggml_tensor * node) const;
    ggml_sched_cause tensor_cause(const ggml_tensor * node) const;

    int n_splits() const;   // of the last assigned graph
    int n_copies() const;   // split inputs copied for the last assigned graph (copies per slot)
    int cur_copy() const;   // the copy slot the next compute_async uses (0..params.n_copies-1)
    int n_backends() const;
    ggml_backend_i * backend(int i) const;
    size_t buffer_size(const ggml_backend_i * backend) const;  // its compute buffer's bytes
    int n_buffer_allocs() const;  // compute-buffer (re)allocations so far, all backends together

    void set_eval_callback(ggml_sched_eval_callback cb);

private:
    struct impl;
    std::unique_ptr<impl> impl_;
};
