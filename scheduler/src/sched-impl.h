// scheduler/src/sched-impl.h — the scheduler's internal state, shared by its source files
// (ggml_scheduler::impl derives from sched_state).
#pragma once

#include "scheduler/scheduler.h"

#include <cstdint>
#include <memory>
#include <unordered_map>
#include <utility>
#include <vector>

constexpr int sched_max_copies = 4;  // most copy slots (ggml_sched_params::n_copies)

// The copies of one split input in one backend's compute buffer: one per copy slot (the first
// n_copies are used).
struct sched_copy_set {
    ggml_tensor * copy[sched_max_copies] = {};
};

// One consecutive run of graph nodes on one backend.
struct sched_split {
    int backend = -1;
    std::vector<ggml_tensor *> nodes;
    // Sources this split reads through a copy in its backend's compute buffer: (source, copies).
    std::vector<std::pair<ggml_tensor *, sched_copy_set>> inputs;
    // Per input: the backend of the last node before this split that wrote its memory (the node
    // computing it, or a set_rows / cpy into the buffer it views), or -1 when no node of the
    // graph writes it (weights, inputs: whatever the buffer's owner holds).
    std::vector<int> input_writers;
    ggml_cgraph graph;  // points into nodes
};

// A source slot of a node that reads a copy instead of the original while the graph is allocated
// or computed (the copy of the copy slot in use).
struct sched_src_rewrite {
    ggml_tensor * node = nullptr;
    int slot = 0;  // index into node->src
    ggml_tensor * original = nullptr;
    sched_copy_set copies;
};

struct sched_copy_key_hash {
    size_t operator()(const std::pair<const ggml_tensor *, int> & k) const {
        return std::hash<const void *>()(k.first) * 31u + size_t(k.second);
    }
};

// Everything planned for one graph (pass 5 and after). The plan of a graph being computed stays
// alive, held by the copy slot it runs in, until that slot is waited for: an asynchronous
// backend may still read its split graphs, its copies and its rewritten sources.
struct sched_graph_plan {
    std::vector<sched_split> splits;
    std::unordered_map<std::pair<const ggml_tensor *, int>, sched_copy_set, sched_copy_key_hash> copies;
    std::unordered_map<const ggml_tensor *, int> copy_slot;  // copy tensor -> its copy slot
    std::vector<sched_src_rewrite> rewrites;
    int applied_copy = -1;  // the slot whose copies the rewritten sources point at; -1: originals
    ggml_context_ptr copy_ctx;

    // Per backend: every node it runs and every leaf it places (copies included), for its gallocr.
    std::vector<std::vector<ggml_tensor *>> backend_nodes;
    std::vector<std::vector<ggml_tensor *>> backend_leafs;
    std::vector<ggml_cgraph> backend_graphs;
};

// What the scheduler knows of one backend's stream of work. Devices with events get a split event
// (recorded after a split that a split on another backend follows; that backend waits on it) and
// one event per copy slot (recorded after the last work a graph queued there; the slot's next user
// waits on it). Devices without events (the CPU) are synchronized after their splits instead.
struct sched_backend_sync {
    bool has_events = false;
    bool on_host = false;  // a CPU device: its work is done when graph_compute returns
    ggml_backend_event_ptr split_event;
    bool split_event_current = false;  // recorded after the backend's latest split
    ggml_backend_event_ptr slot_event[sched_max_copies];
    bool slot_recorded[sched_max_copies] = {};
    bool pending = false;  // work queued since the host last waited for this backend
};

struct sched_state {
    ggml_sched_params params;
    std::vector<ggml_backend_i *> backends;
    std::vector<ggml_backend_buffer_type_i *> bufts;
    std::vector<std::unique_ptr<ggml_gallocr>> gallocs;
    std::vector<sched_backend_sync> sync;  // per backend
    bool debug = false;
    ggml_sched_eval_callback eval_cb;

    // Pins survive until reset(); assignments and causes are rebuilt for each graph.
    std::unordered_map<const ggml_tensor *, int> pins;
    std::unordered_map<const ggml_tensor *, int> ids;
    std::unordered_map<const ggml_tensor *, ggml_sched_cause> causes;

    std::shared_ptr<sched_graph_plan> plan = std::make_shared<sched_graph_plan>();  // the last graph's
    // Per copy slot: the plan of the graph computed with it and not yet waited for (or null).
    std::vector<std::shared_ptr<sched_graph_plan>> in_flight;
    int cur_copy = 0;  // the slot the next compute_async uses

    // The graph last allocated (its node list, to recognise it again).
    const ggml_cgraph * cur_graph = nullptr;
    std::vector<ggml_tensor *> cur_nodes;
    bool allocated = false;
};

// ---- helpers (sched-assign.cpp) ----
// The buffer a tensor's data lives in (its view source's for a view), or nullptr.
ggml_backend_buffer_i * sched_tensor_buffer(const ggml_tensor * t);
// Backend owning buffer: first with the same buffer type, else first whose device supports it; -1.
int sched_buffer_backend(const sched_state & s, const ggml_backend_buffer_i * buf);
bool sched_supports_op(const sched_state & s, int backend, const ggml_tensor * t);
int sched_get_id(const sched_state & s, const ggml_tensor * t);
void sched_set_id(sched_state & s, const ggml_tensor * t, int backend, ggml_sched_cause cause);

// ---- the assignment passes (sched-assign.cpp), each a function of its own ----
void sched_pass_buffers(sched_state & s, ggml_cgraph * gf);       // 1
void sched_pass_expand(sched_state & s, ggml_cgraph * gf);        // 2
void sched_pass_upgrade(sched_state & s, ggml_cgraph * gf);       // 3 (upgrade)
void sched_pass_most_inputs(sched_state & s, ggml_cgraph * gf);   // 3 (leftovers)
void sched_pass_inherit(sched_state & s, ggml_cgraph * gf);       // 4
void sched_assign(sched_state & s, ggml_cgraph * gf);             // 1..4

// ---- splits and copies (sched-split.cpp) ----
// Pass 5: cuts gf into splits, creates the input copies and the per-backend graphs.
// False when the copy context cannot be had.
bool sched_pass_split(sched_state & s, ggml_cgraph * gf);
// Points every rewritten source slot at its copy of slot c / back at the original (no-op when
// already so).
void sched_apply_rewrites(sched_graph_plan & p, int c);
void sched_restore_rewrites(sched_graph_plan & p);

// ---- copy slots (sched-copies.cpp) ----
bool sched_any_in_flight(const sched_state & s);
// Waits until slot c's graph is done with its copies: on every backend its splits ran on, the
// host waits for the slot's event (devices with events) or synchronizes the backend; then points
// its sources back at the originals and frees the slot.
void sched_wait_slot(sched_state & s, int c);
// Synchronizes every backend and frees every slot.
void sched_wait_all(sched_state & s);
// Whether gf is, or shares a tensor with, a graph in flight (its tensors cannot be planned anew).
bool sched_shares_in_flight(const sched_state & s, const ggml_cgraph * gf);
// Whether placing backend b's graph of the current plan as `planned` (not yet allocated) would
// grow b's compute buffer or put the copies of slot c where a graph in flight still reads or
// writes.
bool sched_slot_conflicts(const sched_state & s, size_t b, const ggml_galloc_plan & planned, int c);

// ---- execution (sched-run.cpp) ----
// Creates the events of every backend whose device has them.
void sched_init_sync(sched_state & s);
// Runs the current plan's splits in order with the copies of slot c (graph inputs are copied
// before anything runs), ordering consecutive splits on different backends with events, and
// records slot c's events.
ggml_status sched_run_splits(sched_state & s, int c);
// The host waits for everything queued on backend b (no-op when nothing is).
void sched_host_wait(sched_state & s, int b);

// ---- debug output (sched-debug.cpp) ----
void sched_debug_print(const sched_state & s, const ggml_cgraph * gf);
// One line for a compute_async with slot c, and one per split with inputs naming the copies read.
void sched_debug_print_compute(const sched_state & s, int c);
