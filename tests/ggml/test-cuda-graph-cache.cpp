// The CUDA backend's graph keys and LRU cache of captured graphs (ggml/cuda/graph-cache.h):
// plain C++, so these run on machines without a GPU. Graph tensors get made-up data addresses;
// nothing is computed.
#include "cuda/graph-cache.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

// Builds small graphs whose tensors have fake data addresses (no memory behind them).
struct graph_builder {
    ggml_context_ptr ctx;
    uintptr_t next_addr = 0x10000;

    graph_builder() {
        ggml_init_params ip;
        ip.mem_size = 64 * ggml_tensor_overhead() + 4 * ggml_graph_overhead();
        ip.no_alloc = true;
        ctx.reset(ggml_init(ip));
    }
    ggml_tensor * input(int64_t ne0, int64_t ne1) {
        ggml_tensor * t = ggml_new_tensor_2d(ctx.get(), GGML_TYPE_F32, ne0, ne1);
        return place(t);
    }
    ggml_tensor * place(ggml_tensor * t) {
        t->data = reinterpret_cast<void *>(next_addr);
        next_addr += 0x10000;
        return t;
    }
    ggml_cgraph * graph(ggml_tensor * out) {
        ggml_cgraph * gf = ggml_new_graph(ctx.get());
        ggml_build_forward_expand(gf, out);
        return gf;
    }
};

// x [64, n] -> rms_norm -> scale(s) -> + w: a small "layer" graph; every node gets an address.
struct layer_graph {
    graph_builder b;
    ggml_tensor *x = nullptr, *w = nullptr, *norm = nullptr, *scaled = nullptr, *out = nullptr;
    ggml_cgraph * gf = nullptr;

    explicit layer_graph(int64_t n = 4, float s = 0.5f, uintptr_t base = 0x10000) {
        b.next_addr = base;
        x = b.input(64, n);
        w = b.input(64, 1);
        norm = b.place(ggml_rms_norm(b.ctx.get(), x, 1e-5f));
        scaled = b.place(ggml_scale(b.ctx.get(), norm, s));
        out = b.place(ggml_add(b.ctx.get(), scaled, w));
        gf = b.graph(out);
    }
    ggml_cuda_graph_key key() const { return ggml_cuda_graph_key_of(gf); }
};

TEST(cuda_graph_key, same_graph_rebuilt_gives_the_same_key) {
    layer_graph g1, g2;  // two contexts, different tensor pointers, same addresses and shapes
    EXPECT_EQ(g1.key(), g2.key());
    EXPECT_EQ(g1.key().hash, g2.key().hash);
}

TEST(cuda_graph_key, shape_change_is_a_different_key) {
    layer_graph g1(4), g2(5);
    EXPECT_FALSE(g1.key() == g2.key());
}

TEST(cuda_graph_key, address_change_is_a_different_key) {
    layer_graph g1;
    const ggml_cuda_graph_key k1 = g1.key();
    g1.scaled->data = reinterpret_cast<void *>(0x990000);
    EXPECT_FALSE(k1 == g1.key());
    layer_graph g2(4, 0.5f, 0x20000);  // every address moved
    EXPECT_FALSE(k1 == g2.key());
}

TEST(cuda_graph_key, op_parameter_change_is_a_different_key) {
    layer_graph g1(4, 0.5f), g2(4, 0.25f);
    EXPECT_FALSE(g1.key() == g2.key());
}

TEST(cuda_graph_key, stride_change_is_a_different_key) {
    layer_graph g1;
    const ggml_cuda_graph_key k1 = g1.key();
    g1.x->nb[1] += 4;
    EXPECT_FALSE(k1 == g1.key());
}

// Two nodes that share an address and a layout: only the source link tells them apart.
TEST(cuda_graph_key, source_link_change_is_a_different_key) {
    auto build = [](bool second_from_n1) {
        auto b = std::make_unique<graph_builder>();
        ggml_tensor * x = b->input(32, 2);
        ggml_tensor * n0 = ggml_silu(b->ctx.get(), x);
        ggml_tensor * n1 = ggml_silu(b->ctx.get(), x);
        n0->data = n1->data = reinterpret_cast<void *>(0x500000);
        ggml_tensor * sum = b->place(ggml_add(b->ctx.get(), n0, second_from_n1 ? n1 : n0));
        ggml_cgraph * gf = ggml_new_graph(b->ctx.get());
        ggml_build_forward_expand(gf, n0);
        ggml_build_forward_expand(gf, n1);
        ggml_build_forward_expand(gf, sum);
        return std::make_pair(std::move(b), ggml_cuda_graph_key_of(gf));
    };
    auto a = build(false), c = build(true), a2 = build(false);
    EXPECT_FALSE(a.second == c.second);
    EXPECT_EQ(a.second, a2.second);
}

TEST(cuda_graph_key, node_type_change_is_a_different_key) {
    layer_graph g1;
    const ggml_cuda_graph_key k1 = g1.key();
    g1.out->type = GGML_TYPE_F16;
    EXPECT_FALSE(k1 == g1.key());
}

// A graph key of n fake words (only the hash and the words matter to the cache).
ggml_cuda_graph_key fake_key(uint64_t id) {
    ggml_cuda_graph_key k;
    k.words = {id, id * 3 + 1};
    k.hash = id * 0x9e3779b97f4a7c15ull;
    return k;
}

struct destroy_log {
    std::vector<uintptr_t> destroyed;
    ggml_cuda_graph_cache::destroy_fn fn() {
        return [this](void * h) { destroyed.push_back(reinterpret_cast<uintptr_t>(h)); };
    }
};

void * handle(uintptr_t v) { return reinterpret_cast<void *>(v); }

TEST(cuda_graph_cache, first_sight_runs_plain_second_captures_then_replays) {
    destroy_log log;
    ggml_cuda_graph_cache cache(4, log.fn());
    const ggml_cuda_graph_key k = fake_key(1);
    EXPECT_EQ(cache.lookup(k).what, ggml_cuda_graph_action::run_plain);
    EXPECT_EQ(cache.lookup(k).what, ggml_cuda_graph_action::capture);
    cache.store(k, handle(0x11));
    for (int i = 0; i < 3; ++i) {
        const auto r = cache.lookup(k);
        EXPECT_EQ(r.what, ggml_cuda_graph_action::replay);
        EXPECT_EQ(r.handle, handle(0x11));
    }
    EXPECT_TRUE(log.destroyed.empty());
}

TEST(cuda_graph_cache, same_hash_different_words_is_a_miss) {
    destroy_log log;
    ggml_cuda_graph_cache cache(4, log.fn());
    ggml_cuda_graph_key k1 = fake_key(1), k2 = fake_key(1);
    k2.words.push_back(7);  // a hash collision: same hash, different key
    cache.lookup(k1);
    cache.lookup(k1);
    cache.store(k1, handle(0x11));
    EXPECT_EQ(cache.lookup(k2).what, ggml_cuda_graph_action::run_plain);  // not k1's graph
    EXPECT_EQ(cache.lookup(k1).what, ggml_cuda_graph_action::replay);
    EXPECT_EQ(cache.lookup(k2).what, ggml_cuda_graph_action::capture);  // seen before: captured
    cache.store(k2, handle(0x22));
    EXPECT_EQ(cache.lookup(k1).handle, handle(0x11));
    EXPECT_EQ(cache.lookup(k2).handle, handle(0x22));
}

TEST(cuda_graph_cache, least_recently_used_is_evicted_first) {
    destroy_log log;
    ggml_cuda_graph_cache cache(2, log.fn());
    const ggml_cuda_graph_key a = fake_key(1), b = fake_key(2), c = fake_key(3);
    cache.store(a, handle(0xa));
    cache.store(b, handle(0xb));
    EXPECT_EQ(cache.hashes_by_recency(), (std::vector<uint64_t>{b.hash, a.hash}));
    EXPECT_EQ(cache.lookup(a).what, ggml_cuda_graph_action::replay);  // a becomes the most recent
    EXPECT_EQ(cache.hashes_by_recency(), (std::vector<uint64_t>{a.hash, b.hash}));
    cache.store(c, handle(0xc));  // full: b goes
    EXPECT_EQ(log.destroyed, (std::vector<uintptr_t>{0xb}));
    EXPECT_EQ(cache.size(), 2u);
    EXPECT_EQ(cache.lookup(a).what, ggml_cuda_graph_action::replay);
    EXPECT_EQ(cache.lookup(c).what, ggml_cuda_graph_action::replay);
    EXPECT_NE(cache.lookup(b).what, ggml_cuda_graph_action::replay);
}

TEST(cuda_graph_cache, uncapturable_key_runs_plain_for_good) {
    destroy_log log;
    ggml_cuda_graph_cache cache(4, log.fn());
    const ggml_cuda_graph_key k = fake_key(5);
    cache.lookup(k);
    EXPECT_EQ(cache.lookup(k).what, ggml_cuda_graph_action::capture);
    cache.mark_uncapturable(k);
    for (int i = 0; i < 3; ++i) EXPECT_EQ(cache.lookup(k).what, ggml_cuda_graph_action::run_plain);
    EXPECT_EQ(cache.size(), 1u);
}

TEST(cuda_graph_cache, store_again_and_erase_and_clear_destroy_handles) {
    destroy_log log;
    {
        ggml_cuda_graph_cache cache(4, log.fn());
        cache.store(fake_key(1), handle(0x1));
        cache.store(fake_key(1), handle(0x2));  // replaces 0x1
        cache.store(fake_key(2), handle(0x3));
        cache.store(fake_key(3), handle(0x4));
        cache.erase(fake_key(2));
        EXPECT_EQ(log.destroyed, (std::vector<uintptr_t>{0x1, 0x3}));
        cache.clear();
        EXPECT_EQ(cache.size(), 0u);
        EXPECT_EQ(log.destroyed.size(), 4u);
        cache.store(fake_key(9), handle(0x9));
    }
    EXPECT_EQ(log.destroyed.back(), 0x9u);  // the destructor destroys what is left
}

TEST(cuda_graph_cache, clear_forgets_keys_seen_once) {
    destroy_log log;
    ggml_cuda_graph_cache cache(4, log.fn());
    const ggml_cuda_graph_key k = fake_key(1);
    cache.lookup(k);
    cache.clear();
    EXPECT_EQ(cache.lookup(k).what, ggml_cuda_graph_action::run_plain);
}

TEST(cuda_graph_cache, capacity_zero_disables_graphs) {
    destroy_log log;
    ggml_cuda_graph_cache cache(0, log.fn());
    EXPECT_FALSE(cache.enabled());
    const ggml_cuda_graph_key k = fake_key(1);
    for (int i = 0; i < 4; ++i) EXPECT_EQ(cache.lookup(k).what, ggml_cuda_graph_action::run_plain);
    cache.store(k, handle(0x7));  // nothing is kept: the handle is destroyed at once
    EXPECT_EQ(cache.size(), 0u);
    EXPECT_EQ(log.destroyed, (std::vector<uintptr_t>{0x7}));
}

// Restores an environment variable at the end of a test.
struct env_guard {
    std::string name, old;
    bool had = false;
    explicit env_guard(const char * n) : name(n) {
        const char * v = std::getenv(n);
        had = v != nullptr;
        if (had) old = v;
    }
    ~env_guard() {
        if (had) {
            setenv(name.c_str(), old.c_str(), 1);
        } else {
            unsetenv(name.c_str());
        }
    }
};

TEST(cuda_graph_cache, capacity_from_the_environment) {
    env_guard guard("INFERD_CUDA_GRAPH_CACHE");
    unsetenv("INFERD_CUDA_GRAPH_CACHE");
    EXPECT_EQ(ggml_cuda_graph_cache_capacity_from_env(), 12u);
    setenv("INFERD_CUDA_GRAPH_CACHE", "3", 1);
    EXPECT_EQ(ggml_cuda_graph_cache_capacity_from_env(), 3u);
    setenv("INFERD_CUDA_GRAPH_CACHE", "0", 1);
    EXPECT_EQ(ggml_cuda_graph_cache_capacity_from_env(), 0u);
    for (const char * bad : {"-1", "abc", "12x", "100000"}) {
        setenv("INFERD_CUDA_GRAPH_CACHE", bad, 1);
        EXPECT_EQ(ggml_cuda_graph_cache_capacity_from_env(), 12u) << bad;
    }
}

TEST(cuda_graph_cache, many_keys_seen_once_do_not_evict_captured_graphs) {
    destroy_log log;
    ggml_cuda_graph_cache cache(2, log.fn());
    const ggml_cuda_graph_key k = fake_key(1);
    cache.store(k, handle(0x1));
    for (uint64_t i = 100; i < 200; ++i) EXPECT_EQ(cache.lookup(fake_key(i)).what, ggml_cuda_graph_action::run_plain);
    EXPECT_EQ(cache.lookup(k).what, ggml_cuda_graph_action::replay);
    EXPECT_TRUE(log.destroyed.empty());
}

}  // namespace
