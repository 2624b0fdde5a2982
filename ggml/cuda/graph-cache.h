// ggml/cuda/graph-cache.h — keys of compute graphs and an LRU cache of captured graphs
// (internal; plain C++ without CUDA calls, so that it is tested on machines without a GPU).
//
// Usage (the CUDA backend's graph_compute):
//   ggml_cuda_graph_cache cache(ggml_cuda_graph_cache_capacity_from_env(),
//                               [](void * h) { destroy_graph_exec(h); });
//   const ggml_cuda_graph_key key = ggml_cuda_graph_key_of(gf);
//   switch (cache.lookup(key).what) {
//       case ggml_cuda_graph_action::run_plain: run the nodes one by one;               break;
//       case ggml_cuda_graph_action::capture:   capture; cache.store(key, handle) or
//                                               cache.mark_uncapturable(key); launch;   break;
//       case ggml_cuda_graph_action::replay:    launch lookup(key).handle;              break;
//   }
//
// The key is everything a captured graph bakes into its kernel launches: the number of nodes
// and, per node in order, its op, type, shape, strides, op parameters and data address, and per
// source the link (which earlier node it is, or an outside tensor), type, shape, strides and data
// address. Two graphs with equal keys queue the same launches. Tensor pointers are not part of
// it (a graph rebuilt every step in a fresh context keeps its key).
//
// Policy: a key seen for the first time runs plain (that run sizes the scratch memory its ops
// need); seen again, it is captured; from then on it is replayed. A key whose capture failed
// runs plain from then on. At most `capacity` captured (or uncapturable) keys are kept; the
// least recently used one is dropped first and its handle destroyed. Capacity 0 disables
// capture: every lookup says run_plain.
#pragma once

#include "ggml/ggml.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <unordered_map>
#include <vector>

struct ggml_cuda_graph_key {
    std::vector<uint64_t> words;
    uint64_t hash = 0;

    bool operator==(const ggml_cuda_graph_key & o) const { return hash == o.hash && words == o.words; }
};

ggml_cuda_graph_key ggml_cuda_graph_key_of(const ggml_cgraph * gf);

// INFERD_CUDA_GRAPH_CACHE: the number of captured graphs to keep (default 12; 0 disables CUDA
// graphs). A value that is not a number in [0, 4096] gives the default, with a warning.
size_t ggml_cuda_graph_cache_capacity_from_env();
constexpr size_t ggml_cuda_graph_cache_default_capacity = 12;

enum class ggml_cuda_graph_action { run_plain, capture, replay };

class ggml_cuda_graph_cache {
public:
    using destroy_fn = std::function<void(void *)>;
    struct lookup_result {
        ggml_cuda_graph_action what = ggml_cuda_graph_action::run_plain;
        void * handle = nullptr;  // replay: the captured graph
    };

    ggml_cuda_graph_cache(size_t capacity, destroy_fn destroy);
    ~ggml_cuda_graph_cache();
    ggml_cuda_graph_cache(const ggml_cuda_graph_cache &) = delete;
    ggml_cuda_graph_cache & operator=(const ggml_cuda_graph_cache &) = delete;

    size_t capacity() const { return capacity_; }
    bool enabled() const { return capacity_ > 0; }
    // Captured and uncapturable keys held (at most capacity()).
    size_t size() const { return entries_.size(); }

    // What to do with a graph of this key (see the policy above); a hit becomes the most
    // recently used entry.
    lookup_result lookup(const ggml_cuda_graph_key & key);
    // After a successful capture: keep handle for key (the least recently used entry is dropped
    // when full). A handle already held for key is destroyed first.
    void store(const ggml_cuda_graph_key & key, void * handle);
    // After a failed capture: key runs plain from now on.
    void mark_uncapturable(const ggml_cuda_graph_key & key);
    // Drops key's entry (destroying its handle), e.g. when its replay failed.
    void erase(const ggml_cuda_graph_key & key);
    // Drops every entry and forgets every key seen.
    void clear();
    // The hashes of the held keys, most recently used first (for tests).
    std::vector<uint64_t> hashes_by_recency() const;

private:
    struct entry {
        ggml_cuda_graph_key key;
        void * handle = nullptr;  // nullptr: uncapturable
    };
    using entry_list = std::list<entry>;

    entry_list::iterator find(const ggml_cuda_graph_key & key);
    void insert(const ggml_cuda_graph_key & key, void * handle);
    void drop(entry_list::iterator it);
    bool seen_before(uint64_t hash);  // records hash; true when it was already recorded

    size_t capacity_;
    destroy_fn destroy_;
    entry_list entries_;  // most recently used first
    std::unordered_multimap<uint64_t, entry_list::iterator> index_;
    // Hashes of keys seen once (not captured yet), most recent first; a hash collision here only
    // makes a graph be captured one call early.
    std::list<uint64_t> seen_;
    std::unordered_map<uint64_t, std::list<uint64_t>::iterator> seen_index_;
};
