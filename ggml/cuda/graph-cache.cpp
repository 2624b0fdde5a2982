// Keys of compute graphs and the LRU cache of captured graphs (see graph-cache.h).
#include "graph-cache.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
namespace {

// How many seen-once keys are remembered, as a multiple of the capacity.
constexpr size_t k_seen_per_entry = 4;

uint64_t mix64(uint64_t h, uint64_t w) {
    h ^= w + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    h *= 0xff51afd7ed558ccdull;
    return h ^ (h >> 33);
}

uint64_t pointer_word(const void * p) { return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(p)); }

void push_layout(std::vector<uint64_t> & w, const ggml_tensor * t) {
    for (int d = 0; d < GGML_MAX_DIMS; ++d) w.push_back(static_cast<uint64_t>(t->ne[d]));
    for (int d = 0; d < GGML_MAX_DIMS; ++d) w.push_back(static_cast<uint64_t>(t->nb[d]));
    w.push_back(pointer_word(t->data));
}

// Node index by tensor pointer: open addressing over a power-of-two table (faster than a node
// map per call; a decode graph has about a thousand nodes).
class node_index_map {
public:
    explicit node_index_map(int n_nodes) {
        size_t size = 16;
        while (size < static_cast<size_t>(n_nodes) * 2) size *= 2;
        slots_.assign(size, slot{});
        mask_ = size - 1;
    }
    void insert(const ggml_tensor * t, int index) {
        size_t i = hash(t);
        while (slots_[i].key && slots_[i].key != t) i = (i + 1) & mask_;
        slots_[i] = slot{t, index};
    }
    // The node's index, or -1 for a tensor that is not (yet) a node.
    int find(const ggml_tensor * t) const {
        for (size_t i = hash(t); slots_[i].key; i = (i + 1) & mask_) {
            if (slots_[i].key == t) return slots_[i].index;
        }
        return -1;
    }

private:
    struct slot {
        const ggml_tensor * key = nullptr;
        int index = -1;
    };
    size_t hash(const ggml_tensor * t) const {
        return static_cast<size_t>((pointer_word(t) >> 4) * 0x9e3779b97f4a7c15ull >> 20) & mask_;
    }
    std::vector<slot> slots_;
    size_t mask_ = 0;
};

void push_node(std::vector<uint64_t> & w, const ggml_tensor * t, const node_index_map & nodes) {
    w.push_back(static_cast<uint64_t>(static_cast<uint32_t>(t->op)) << 32 | static_cast<uint32_t>(t->type));
    push_layout(w, t);
    static_assert(GGML_MAX_OP_PARAMS % 8 == 0);
    for (size_t i = 0; i < GGML_MAX_OP_PARAMS / 8; ++i) {
        uint64_t v;
        std::memcpy(&v, reinterpret_cast<const char *>(t->op_params) + 8 * i, 8);
        w.push_back(v);
    }
    for (const ggml_tensor * s : t->src) {
        if (!s) {
            w.push_back(0);
            continue;
        }
        // link: 1 + index of the node that computes it, or 0 for a tensor from outside the graph's nodes
        const uint64_t link = static_cast<uint64_t>(nodes.find(s) + 1);
        w.push_back((link + 1) << 32 | static_cast<uint32_t>(s->type));
        push_layout(w, s);
    }
}

}  // namespace

ggml_cuda_graph_key ggml_cuda_graph_key_of(const ggml_cgraph * gf) {
    ggml_cuda_graph_key key;
    node_index_map nodes(gf->n_nodes);
    key.words.reserve(static_cast<size_t>(gf->n_nodes) * 48 + 1);
    key.words.push_back(static_cast<uint64_t>(gf->n_nodes));
    for (int i = 0; i < gf->n_nodes; ++i) {
        const ggml_tensor * t = gf->nodes[i];
        push_node(key.words, t, nodes);
        nodes.insert(t, i);
    }
    uint64_t h = 0x243f6a8885a308d3ull;
    for (uint64_t w : key.words) h = mix64(h, w);
    key.hash = h;
    return key;
}

size_t ggml_cuda_graph_cache_capacity_from_env() {
    const char * v = std::getenv("INFERD_CUDA_GRAPH_CACHE");
    if (!v || !*v) return ggml_cuda_graph_cache_default_capacity;
    errno = 0;
    char * end = nullptr;
    const long n = std::strtol(v, &end, 10);
    if (errno != 0 || *end != '\0' || n < 0 || n > 4096) {
        std::fprintf(stderr, "inferd: INFERD_CUDA_GRAPH_CACHE=%s is not a number in [0, 4096]; using %zu\n", v,
                     ggml_cuda_graph_cache_default_capacity);
        return ggml_cuda_graph_cache_default_capacity;
    }
    return static_cast<size_t>(n);
}

ggml_cuda_graph_cache::ggml_cuda_graph_cache(size_t capacity, destroy_fn destroy)
    : capacity_(capacity), destroy_(std::move(destroy)) {}

ggml_cuda_graph_cache::~ggml_cuda_graph_cache() { clear(); }

ggml_cuda_graph_cache::entry_list::iterator ggml_cuda_graph_cache::find(const ggml_cuda_graph_key & key) {
    auto range = index_.equal_range(key.hash);
    for (auto it = range.first; it != range.second; ++it) {
        if (it->second->key == key) return it->second;
    }
    return entries_.end();
}

void ggml_cuda_graph_cache::drop(entry_list::iterator it) {
    auto range = index_.equal_range(it->key.hash);
    for (auto i = range.first; i != range.second; ++i) {
        if (i->second == it) {
            index_.erase(i);
            break;
        }
    }
    void * handle = it->handle;
    entries_.erase(it);
    if (handle && destroy_) destroy_(handle);
}

bool ggml_cuda_graph_cache::seen_before(uint64_t hash) {
    auto it = seen_index_.find(hash);
    if (it != seen_index_.end()) {
        seen_.erase(it->second);
        seen_index_.erase(it);
        return true;
    }
    seen_.push_front(hash);
    seen_index_[hash] = seen_.begin();
    while (seen_.size() > capacity_ * k_seen_per_entry) {
        seen_index_.erase(seen_.back());
        seen_.pop_back();
    }
    return false;
}

ggml_cuda_graph_cache::lookup_result ggml_cuda_graph_cache::lookup(const ggml_cuda_graph_key & key) {
    lookup_result r;
    if (!enabled()) return r;
    auto it = find(key);
    if (it != entries_.end()) {
        entries_.splice(entries_.begin(), entries_, it);  // most recently used; iterators stay valid
        if (it->handle) {
            r.what = ggml_cuda_graph_action::replay;
            r.handle = it->handle;
        }
        return r;
    }
    if (seen_before(key.hash)) r.what = ggml_cuda_graph_action::capture;
    return r;
}

void ggml_cuda_graph_cache::insert(const ggml_cuda_graph_key & key, void * handle) {
    auto old = find(key);
    if (old != entries_.end()) drop(old);
    if (!enabled()) {
        if (handle && destroy_) destroy_(handle);
        return;
    }
    while (entries_.size() >= capacity_) drop(std::prev(entries_.end()));
    entries_.push_front(entry{key, handle});
    index_.emplace(key.hash, entries_.begin());
}

void ggml_cuda_graph_cache::store(const ggml_cuda_graph_key & key, void * handle) { insert(key, handle); }

void ggml_cuda_graph_cache::mark_uncapturable(const ggml_cuda_graph_key & key) { insert(key, nullptr); }

void ggml_cuda_graph_cache::erase(const ggml_cuda_graph_key & key) {
    auto it = find(key);
    if (it != entries_.end()) drop(it);
}

void ggml_cuda_graph_cache::clear() {
    while (!entries_.empty()) drop(entries_.begin());
    seen_.clear();
    seen_index_.clear();
}

std::vector<uint64_t> ggml_cuda_graph_cache::hashes_by_recency() const {
    std::vector<uint64_t> out;
    out.reserve(entries_.size());
    for (const entry & e : entries_) out.push_back(e.key.hash);
    return out;
}
