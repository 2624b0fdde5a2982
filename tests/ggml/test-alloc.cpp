// tests/ggml/test-alloc.cpp — the graph allocator (ggml/alloc.h).
//
// Every plan is checked against live ranges that the test computes on its own from the graph:
// a tensor's memory is needed from the node that computes it (or before the first node, for
// graph inputs) to the last node that reads it directly or through a view, and to the end when
// it is flagged INPUT/OUTPUT or when it (or a view of it) has no consumer at all. Two tensors
// whose ranges meet must not share a byte, unless one runs in place of the other as the last
// reader of it.
#include "alloc-test-graphs.h"
#include "ggml/alloc.h"
#include "ggml/cpu.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace {

using namespace alloc_test;

constexpr int k_forever = INT_MAX;
constexpr int k_before_first_node = -1;

const ggml_tensor * mem_root(const ggml_tensor * t) { return t->view_src != nullptr ? t->view_src : t; }

bool is_flagged(const ggml_tensor * t) {
    return (t->flags & (GGML_TENSOR_FLAG_INPUT | GGML_TENSOR_FLAG_OUTPUT)) != 0;
}

// When the memory of each tensor that owns memory (not a view) is first and last needed.
struct live_range {
    int begin = 0;
    int end = 0;
};

std::unordered_map<const ggml_tensor *, live_range> graph_live_ranges(const ggml_cgraph * gf) {
    std::unordered_map<const ggml_tensor *, live_range> ranges;
    std::unordered_set<const ggml_tensor *> consumed;  // read by some node as a source
    std::unordered_map<const ggml_tensor *, int> last_touch;
    for (int i = 0; i < gf->n_leafs; ++i) {
        ranges[gf->leafs[i]] = {k_before_first_node, k_before_first_node};
    }
    for (int i = 0; i < gf->n_nodes; ++i) {
        const ggml_tensor * n = gf->nodes[i];
        const bool input = (n->flags & GGML_TENSOR_FLAG_INPUT) != 0;
        ranges[n] = {input ? k_before_first_node : i, input ? k_before_first_node : i};
        for (const ggml_tensor * s : n->src) {
            if (s != nullptr) {
                consumed.insert(s);
                last_touch[mem_root(s)] = i;
            }
        }
        if (n->view_src != nullptr) {
            last_touch[n->view_src] = i;  // views compute into (CPY, SET_ROWS) or alias it
        }
    }
    for (auto & [t, r] : ranges) {
        auto it = last_touch.find(t);
        if (it != last_touch.end()) {
            r.end = std::max(r.end, it->second);
        }
    }
    // Results (no consumer), flagged tensors and views that are results keep memory to the end.
    auto keep = [&](const ggml_tensor * t) {
        if (is_flagged(t) || consumed.count(t) == 0) {
            ranges[mem_root(t)].end = k_forever;
        }
    };
    for (int i = 0; i < gf->n_leafs; ++i) {
        keep(gf->leafs[i]);
    }
    for (int i = 0; i < gf->n_nodes; ++i) {
        keep(gf->nodes[i]);
    }
    return ranges;
}

bool ranges_meet(const live_range & a, const live_range & b) { return a.begin <= b.end && b.begin <= a.end; }

// Checks that plan places exactly the tensors it should, aligned and inside the peak, and that
// no two tensors needed at the same time share memory.
testing::AssertionResult check_plan(const ggml_cgraph * gf, const ggml_galloc_plan & plan,
                                    const ggml_backend_buffer_type_i * buft) {
    std::unordered_map<const ggml_tensor *, size_t> index;  // tensor → entry
    for (size_t i = 0; i < plan.entries.size(); ++i) {
        if (!index.emplace(plan.entries[i].tensor, i).second) {
            return testing::AssertionFailure() << "placed twice: " << plan.entries[i].tensor->name;
        }
    }
    size_t naive = 0;
    auto expect_placed = [&](const ggml_tensor * t) {
        const bool should = t->data == nullptr && t->view_src == nullptr;
        return should == (index.count(t) == 1);
    };
    for (int i = 0; i < gf->n_leafs; ++i) {
        if (!expect_placed(gf->leafs[i])) return testing::AssertionFailure() << "leaf " << gf->leafs[i]->name;
    }
    for (int i = 0; i < gf->n_nodes; ++i) {
        if (!expect_placed(gf->nodes[i])) return testing::AssertionFailure() << "node " << gf->nodes[i]->name;
    }
    for (const auto & e : plan.entries) {
        naive += e.size;
        if (e.offset % buft->alignment() != 0 || e.size < buft->alloc_size(e.tensor) ||
            e.offset + e.size > plan.peak) {
            return testing::AssertionFailure() << "bad placement of " << e.tensor->name << " at " << e.offset
                                               << " size " << e.size << " peak " << plan.peak;
        }
    }
    if (naive != plan.naive || plan.peak > plan.naive) {
        return testing::AssertionFailure() << "naive " << plan.naive << " (sum " << naive << "), peak " << plan.peak;
    }
    const auto ranges = graph_live_ranges(gf);
    // In place: the node's src[0] (or its view_src) is a node whose memory is last needed here.
    auto in_place_parent = [&](const ggml_galloc_plan::entry & e) -> const ggml_tensor * {
        return e.in_place ? mem_root(e.tensor->src[0]) : nullptr;
    };
    for (const auto & e : plan.entries) {
        const ggml_tensor * p = in_place_parent(e);
        if (p == nullptr) continue;
        const live_range & rp = ranges.at(p);
        const live_range & re = ranges.at(e.tensor);
        // Computing in place means dst and src[0] are the same memory, element for element.
        const size_t src_offset = index.count(p) ? plan.entries[index.at(p)].offset + e.tensor->src[0]->view_offs : 0;
        if (index.count(p) == 0 || src_offset != e.offset || rp.end != re.begin ||
            rp.begin == k_before_first_node || !ggml_are_same_layout(e.tensor, e.tensor->src[0])) {
            return testing::AssertionFailure() << "bad in-place " << e.tensor->name << " over " << p->name;
        }
    }
    for (size_t i = 0; i < plan.entries.size(); ++i) {
        for (size_t j = i + 1; j < plan.entries.size(); ++j) {
            const auto & a = plan.entries[i];
            const auto & b = plan.entries[j];
            const bool share = a.offset < b.offset + b.size && b.offset < a.offset + a.size;
            if (!share || !ranges_meet(ranges.at(a.tensor), ranges.at(b.tensor))) continue;
            if (in_place_parent(a) == b.tensor || in_place_parent(b) == a.tensor) continue;
            return testing::AssertionFailure() << a.tensor->name << " and " << b.tensor->name << " overlap while live";
        }
    }
    return testing::AssertionSuccess();
}

// Checks that alloc_graph gave every planned tensor the planned address and every view its
// source's address.
testing::AssertionResult check_placed(const ggml_cgraph * gf, const ggml_galloc_plan & plan,
                                      const ggml_gallocr & galloc) {
    const char * base = static_cast<const char *>(galloc.buffer()->base());
    for (const auto & e : plan.entries) {
        if (e.tensor->data != base + e.offset || e.tensor->buffer != galloc.buffer()) {
            return testing::AssertionFailure() << e.tensor->name << " not where planned";
        }
    }
    auto view_ok = [](const ggml_tensor * t) {
        return t->view_src == nullptr || (t->view_src->data != nullptr && t->buffer == t->view_src->buffer &&
                                          t->data == static_cast<const char *>(t->view_src->data) + t->view_offs);
    };
    for (int i = 0; i < gf->n_nodes; ++i) {
        if (!view_ok(gf->nodes[i])) return testing::AssertionFailure() << "view " << gf->nodes[i]->name;
    }
    return testing::AssertionSuccess();
}

const ggml_galloc_plan::entry * find_entry(const ggml_galloc_plan & plan, const ggml_tensor * t) {
    for (const auto & e : plan.entries) {
        if (e.tensor == t) return &e;
    }
    return nullptr;
}

// ---- tests ----

TEST(GallocPlan, RandomGraphsHaveNoOverlapWhileLive) {
    padded_buffer_type padded;
    for (unsigned seed = 1; seed <= 60; ++seed) {
        random_graph_builder builder(seed);
        ggml_context_ptr ctx = make_context(512);
        ggml_cgraph * gf = builder.build(ctx.get(), 20 + int(seed % 40));
        const ggml_galloc_plan plan = ggml_galloc_plan_graph(gf, ggml_backend_cpu_buffer_type());
        EXPECT_TRUE(check_plan(gf, plan, ggml_backend_cpu_buffer_type())) << "seed " << seed;
        EXPECT_TRUE(check_plan(gf, ggml_galloc_plan_graph(gf, &padded), &padded)) << "seed " << seed;
    }
}

TEST(GallocPlan, TransformerBlockReusesMemoryAndComputesInPlace) {
    transformer_block block;
    ggml_context_ptr ctx = make_context(256);
    ggml_cgraph * gf = block.build(ctx.get(), 8);
    const ggml_galloc_plan plan = ggml_galloc_plan_graph(gf, ggml_backend_cpu_buffer_type());
    ASSERT_TRUE(check_plan(gf, plan, ggml_backend_cpu_buffer_type()));
    EXPECT_LT(plan.peak, plan.naive / 2);
    for (const char * name : {"q_rope", "k_rope", "kq_soft_max", "swiglu", "y", "x1"}) {
        const ggml_galloc_plan::entry * e = find_entry(plan, ggml_get_tensor(ctx.get(), name));
        ASSERT_NE(e, nullptr) << name;
        EXPECT_TRUE(e->in_place) << name;
    }
    // Nothing is planned for weights, nor for the cache the K copy writes into.
    for (const auto & e : plan.entries) {
        EXPECT_EQ(e.tensor->data, nullptr);
        EXPECT_NE(mem_root(e.tensor), block.k_cache);
    }
}

TEST(GallocPlan, ChainPeakIsTwoTensors) {
    ggml_context_ptr ctx = make_context(64);
    ggml_tensor * x = ggml_new_tensor_2d(ctx.get(), GGML_TYPE_F32, 64, 64);
    ggml_tensor * cur = x;
    for (int i = 0; i < 20; ++i) cur = i % 2 ? ggml_cont(ctx.get(), cur) : ggml_mul_mat(ctx.get(), cur, x);
    ggml_cgraph * gf = ggml_new_graph(ctx.get());
    ggml_build_forward_expand(gf, cur);
    const ggml_galloc_plan plan = ggml_galloc_plan_graph(gf, ggml_backend_cpu_buffer_type());
    ASSERT_TRUE(check_plan(gf, plan, ggml_backend_cpu_buffer_type()));
    EXPECT_EQ(plan.entries.size(), 21u);
    // x is read by every mul_mat, so it stays; the rest alternate between two blocks at most.
    size_t largest = 0;
    for (const auto & e : plan.entries) largest = std::max(largest, e.size);
    EXPECT_LE(plan.peak, ggml_nbytes(x) + 2 * largest);
    EXPECT_LT(plan.peak, plan.naive / 4);
}

TEST(GallocPlan, InPlaceChainUsesOneBlock) {
    ggml_context_ptr ctx = make_context(64);
    ggml_tensor * x = ggml_new_tensor_2d(ctx.get(), GGML_TYPE_F32, 64, 4);
    ggml_tensor * row = ggml_new_tensor_1d(ctx.get(), GGML_TYPE_F32, 64);
    ggml_tensor * first = ggml_silu(ctx.get(), x);  // x is a graph input: never overwritten
    ggml_tensor * cur = first;
    std::vector<ggml_tensor *> in_place;
    cur = ggml_scale(ctx.get(), cur, 3.0f); in_place.push_back(cur);
    cur = ggml_gelu(ctx.get(), cur); in_place.push_back(cur);
    cur = ggml_rms_norm(ctx.get(), cur, 1e-5f); in_place.push_back(cur);
    cur = ggml_add(ctx.get(), cur, row); in_place.push_back(cur);
    cur = ggml_mul(ctx.get(), cur, cur); in_place.push_back(cur);
    cur = ggml_div(ctx.get(), cur, row); in_place.push_back(cur);
    cur = ggml_tanh(ctx.get(), cur); in_place.push_back(cur);
    cur = ggml_soft_max(ctx.get(), ggml_reshape_2d(ctx.get(), cur, 32, 8)); in_place.push_back(cur);
    ggml_cgraph * gf = ggml_new_graph(ctx.get());
    ggml_build_forward_expand(gf, cur);
    const ggml_galloc_plan plan = ggml_galloc_plan_graph(gf, ggml_backend_cpu_buffer_type());
    ASSERT_TRUE(check_plan(gf, plan, ggml_backend_cpu_buffer_type()));
    EXPECT_FALSE(find_entry(plan, first)->in_place);
    for (ggml_tensor * t : in_place) {
        EXPECT_TRUE(find_entry(plan, t)->in_place) << ggml_op_name(t->op);
        EXPECT_EQ(find_entry(plan, t)->offset, find_entry(plan, first)->offset);
    }
    EXPECT_EQ(plan.peak, 2 * ggml_nbytes(x) + ggml_nbytes(row));
}

TEST(GallocPlan, InPlaceOnlyWhereSafe) {
    ggml_context_ptr ctx = make_context(64);
    ggml_tensor * x = ggml_new_tensor_2d(ctx.get(), GGML_TYPE_F32, 16, 4);
    ggml_tensor * a = ggml_silu(ctx.get(), x);
    ggml_tensor * read_later = ggml_scale(ctx.get(), a, 2.0f);          // a is read again below
    ggml_tensor * sum = ggml_add(ctx.get(), read_later, a);              // last reader of a: in place
    ggml_tensor * out = ggml_gelu(ctx.get(), sum);
    ggml_set_output(out);
    ggml_tensor * after_output = ggml_scale(ctx.get(), out, 2.0f);      // out must survive
    ggml_tensor * tr = ggml_add(ctx.get(), ggml_transpose(ctx.get(), after_output),
                                ggml_new_tensor_2d(ctx.get(), GGML_TYPE_F32, 4, 16));  // other layout
    ggml_tensor * half = ggml_view_1d(ctx.get(), tr, 32, 32 * sizeof(float));
    ggml_tensor * off_view = ggml_silu(ctx.get(), half);                // view not at the start
    ggml_tensor * on_input = ggml_silu(ctx.get(), x);                   // x is a leaf (input)
    ggml_tensor * f16 = ggml_cpy(ctx.get(), off_view, ggml_new_tensor_1d(ctx.get(), GGML_TYPE_F16, 32));
    ggml_tensor * f16_scaled = ggml_scale(ctx.get(), f16, 0.5f);       // src is a copy (a view of its dst)
    ggml_cgraph * gf = ggml_new_graph(ctx.get());
    ggml_build_forward_expand(gf, ggml_add(ctx.get(), off_view, ggml_view_1d(ctx.get(), on_input, 32, 0)));
    ggml_build_forward_expand(gf, f16_scaled);
    const ggml_galloc_plan plan = ggml_galloc_plan_graph(gf, ggml_backend_cpu_buffer_type());
    ASSERT_TRUE(check_plan(gf, plan, ggml_backend_cpu_buffer_type()));
    EXPECT_FALSE(find_entry(plan, read_later)->in_place);
    EXPECT_TRUE(find_entry(plan, sum)->in_place);
    EXPECT_TRUE(find_entry(plan, out)->in_place);
    EXPECT_FALSE(find_entry(plan, after_output)->in_place);
    EXPECT_FALSE(find_entry(plan, tr)->in_place);
    EXPECT_FALSE(find_entry(plan, off_view)->in_place);
    EXPECT_FALSE(find_entry(plan, on_input)->in_place);
    // The copy's destination is a leaf: a graph input, never computed over.
    EXPECT_FALSE(find_entry(plan, f16_scaled)->in_place);
}

TEST(GallocPlan, OutputsAreNeverReused) {
    ggml_context_ptr ctx = make_context(64);
    ggml_tensor * cur = ggml_new_tensor_2d(ctx.get(), GGML_TYPE_F32, 32, 32);
    std::vector<ggml_tensor *> outputs;
    for (int i = 0; i < 12; ++i) {
        cur = ggml_cont(ctx.get(), ggml_transpose(ctx.get(), cur));
        if (i % 3 == 0) {
            ggml_set_output(cur);
            outputs.push_back(cur);
        }
    }
    ggml_cgraph * gf = ggml_new_graph(ctx.get());
    ggml_build_forward_expand(gf, cur);
    const ggml_galloc_plan plan = ggml_galloc_plan_graph(gf, ggml_backend_cpu_buffer_type());
    ASSERT_TRUE(check_plan(gf, plan, ggml_backend_cpu_buffer_type()));
    for (ggml_tensor * o : outputs) {
        const ggml_galloc_plan::entry * eo = find_entry(plan, o);
        bool later = false;
        for (const auto & e : plan.entries) {
            if (&e == eo) { later = true; continue; }
            if (later) {
                EXPECT_TRUE(e.offset >= eo->offset + eo->size || eo->offset >= e.offset + e.size) << e.tensor->name;
            }
        }
    }
}

TEST(GallocPlan, FreedNeighboursMerge) {
    for (bool lower_first : {true, false}) {  // a and b are freed in either address order
        ggml_context_ptr ctx = make_context(16);
        ggml_tensor * x = ggml_new_tensor_1d(ctx.get(), GGML_TYPE_F32, 64);
        ggml_set_input(x);
        const size_t s = ggml_nbytes(x);
        ggml_cgraph * gf = ggml_new_graph(ctx.get());
        ggml_tensor * a = ggml_silu(ctx.get(), x);
        ggml_tensor * b = ggml_gelu(ctx.get(), x);
        ggml_build_forward_expand(gf, a);
        ggml_build_forward_expand(gf, b);
        // a and b die here, side by side; d fits only in both together.
        ggml_tensor * c = lower_first ? ggml_concat(ctx.get(), a, b, 0) : ggml_concat(ctx.get(), b, a, 0);
        ggml_tensor * d = ggml_cont(ctx.get(), c);
        ggml_build_forward_expand(gf, d);
        const ggml_galloc_plan plan = ggml_galloc_plan_graph(gf, ggml_backend_cpu_buffer_type());
        ASSERT_TRUE(check_plan(gf, plan, ggml_backend_cpu_buffer_type()));
        EXPECT_EQ(find_entry(plan, d)->offset, find_entry(plan, a)->offset) << lower_first;
        EXPECT_EQ(plan.peak, 5 * s) << lower_first;
        EXPECT_EQ(plan.naive, 7 * s);
    }
}

TEST(GallocPlan, FreedTopIsReused) {
    ggml_context_ptr ctx = make_context(16);
    ggml_tensor * l1 = ggml_new_tensor_1d(ctx.get(), GGML_TYPE_F32, 64);
    ggml_tensor * l2 = ggml_new_tensor_1d(ctx.get(), GGML_TYPE_F32, 64);
    const size_t s = ggml_nbytes(l1);
    ggml_tensor * a = ggml_cont(ctx.get(), l2);  // above both leafs
    ggml_tensor * b = ggml_cont(ctx.get(), a);   // where l2 was; a, on top, dies
    ggml_tensor * c = ggml_concat(ctx.get(), b, l1, 0);
    ggml_cgraph * gf = ggml_new_graph(ctx.get());
    ggml_build_forward_expand(gf, c);
    const ggml_galloc_plan plan = ggml_galloc_plan_graph(gf, ggml_backend_cpu_buffer_type());
    ASSERT_TRUE(check_plan(gf, plan, ggml_backend_cpu_buffer_type()));
    EXPECT_EQ(find_entry(plan, c)->offset, find_entry(plan, a)->offset);
    EXPECT_EQ(plan.peak, 4 * s);
}

TEST(Gallocr, RandomGraphsArePlacedAsPlanned) {
    for (unsigned seed = 100; seed < 120; ++seed) {
        random_graph_builder builder(seed);
        ggml_context_ptr ctx = make_context(512);
        ggml_cgraph * gf = builder.build(ctx.get(), 40);
        ggml_gallocr galloc(ggml_backend_cpu_buffer_type());
        const ggml_galloc_plan plan = ggml_galloc_plan_graph(gf, ggml_backend_cpu_buffer_type());
        ASSERT_TRUE(galloc.alloc_graph(gf));
        EXPECT_TRUE(check_placed(gf, plan, galloc)) << "seed " << seed;
        EXPECT_GE(galloc.buffer_size(), plan.peak);
        // Again: the allocator takes its own placements back and gives the same ones.
        ASSERT_TRUE(galloc.alloc_graph(gf));
        EXPECT_TRUE(check_placed(gf, plan, galloc)) << "seed " << seed;
        EXPECT_EQ(galloc.n_buffer_allocs(), 1);
    }
}

TEST(Gallocr, ReserveThenAllocAllocatesNothingNew) {
    transformer_block block;
    ggml_gallocr galloc(ggml_backend_cpu_buffer_type());
    ggml_context_ptr worst_ctx = make_context(256);
    ASSERT_TRUE(galloc.reserve(block.build(worst_ctx.get(), 16)));
    EXPECT_EQ(galloc.n_buffer_allocs(), 1);
    const size_t reserved = galloc.buffer_size();
    for (int64_t n_tokens : {16, 3, 16, 1}) {
        ggml_context_ptr ctx = make_context(256);  // same shape, built again
        ggml_cgraph * gf = block.build(ctx.get(), n_tokens);
        const ggml_galloc_plan plan = ggml_galloc_plan_graph(gf, ggml_backend_cpu_buffer_type());
        ASSERT_TRUE(check_plan(gf, plan, ggml_backend_cpu_buffer_type()));
        ASSERT_TRUE(galloc.alloc_graph(gf));
        EXPECT_EQ(galloc.n_buffer_allocs(), 1) << n_tokens;
        EXPECT_EQ(galloc.buffer_size(), reserved);
        EXPECT_TRUE(check_placed(gf, plan, galloc));
    }
    // A bigger graph grows the buffer once; reserving a smaller one never shrinks it.
    ggml_context_ptr big_ctx = make_context(256);
    ggml_cgraph * big = block.build(big_ctx.get(), 32);
    const ggml_galloc_plan big_plan = ggml_galloc_plan_graph(big, ggml_backend_cpu_buffer_type());
    ASSERT_GT(big_plan.peak, reserved);
    ASSERT_TRUE(galloc.alloc_graph(big));
    EXPECT_EQ(galloc.n_buffer_allocs(), 2);
    EXPECT_GE(galloc.buffer_size(), big_plan.peak);
    EXPECT_TRUE(check_placed(big, big_plan, galloc));
    ggml_context_ptr small_ctx = make_context(256);
    ASSERT_TRUE(galloc.reserve(block.build(small_ctx.get(), 2)));
    EXPECT_EQ(galloc.n_buffer_allocs(), 2);
    EXPECT_GE(galloc.buffer_size(), big_plan.peak);
    // Reserving the graph it just placed sizes it as if it had no data yet.
    ASSERT_TRUE(galloc.reserve(big));
    EXPECT_EQ(galloc.n_buffer_allocs(), 2);
    EXPECT_TRUE(check_placed(big, big_plan, galloc));
}

// A chain x → cont → … of n_conts, with a concat of the last two at the end when wide.
ggml_cgraph * build_cont_chain(ggml_context * ctx, int n_conts, bool wide) {
    ggml_tensor * cur = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, 64, 16);
    ggml_tensor * prev = cur;
    ggml_cgraph * gf = ggml_new_graph(ctx);
    for (int i = 0; i < n_conts; ++i) {
        prev = cur;
        cur = ggml_cont(ctx, cur);
        ggml_build_forward_expand(gf, cur);
    }
    if (wide) ggml_build_forward_expand(gf, ggml_concat(ctx, prev, cur, 1));
    return gf;
}

// Offsets of the tensors of gf, by position in the graph, as a fresh plan of an equal graph has them.
testing::AssertionResult placed_like_fresh(const ggml_cgraph * gf, const ggml_cgraph * fresh, const ggml_gallocr & galloc) {
    const ggml_galloc_plan plan = ggml_galloc_plan_graph(fresh, ggml_backend_cpu_buffer_type());
    const char * base = static_cast<const char *>(galloc.buffer()->base());
    for (int i = 0; i < fresh->n_nodes; ++i) {
        const ggml_galloc_plan::entry * e = find_entry(plan, fresh->nodes[i]);
        if (e != nullptr && gf->nodes[i]->data != base + e->offset) {
            return testing::AssertionFailure() << "node " << i << " not where a fresh plan puts it";
        }
    }
    return testing::AssertionSuccess();
}

TEST(Gallocr, GrownGraphIsPlacedAgainFromScratch) {
    ggml_gallocr galloc(ggml_backend_cpu_buffer_type());
    ggml_context_ptr ctx = make_context(64);
    ggml_cgraph * gf = build_cont_chain(ctx.get(), 4, false);
    ASSERT_TRUE(galloc.alloc_graph(gf));
    // More nodes on the same graph: its earlier tensors are this allocator's, not user data.
    ggml_tensor * cur = gf->nodes[gf->n_nodes - 1];
    for (int i = 0; i < 4; ++i) {
        cur = ggml_cont(ctx.get(), cur);
        ggml_build_forward_expand(gf, cur);
    }
    ASSERT_TRUE(galloc.alloc_graph(gf));
    ggml_context_ptr fresh_ctx = make_context(64);
    EXPECT_TRUE(placed_like_fresh(gf, build_cont_chain(fresh_ctx.get(), 8, false), galloc));
    EXPECT_EQ(galloc.n_buffer_allocs(), 1);
}

TEST(Gallocr, ReserveCountsTensorsItPlacedBefore) {
    ggml_gallocr galloc(ggml_backend_cpu_buffer_type());
    ggml_context_ptr ctx = make_context(64);
    ggml_cgraph * gf = build_cont_chain(ctx.get(), 2, false);
    ASSERT_TRUE(galloc.alloc_graph(gf));
    const size_t small = galloc.buffer_size();
    // The concat keeps two chain tensors alive with it: more than the buffer holds.
    ggml_build_forward_expand(gf, ggml_concat(ctx.get(), gf->nodes[0], gf->nodes[1], 1));
    ASSERT_TRUE(galloc.reserve(gf));
    EXPECT_EQ(galloc.n_buffer_allocs(), 2);
    EXPECT_GT(galloc.buffer_size(), small);
    ASSERT_TRUE(galloc.alloc_graph(gf));
    EXPECT_EQ(galloc.n_buffer_allocs(), 2);
    ggml_context_ptr fresh_ctx = make_context(64);
    EXPECT_TRUE(placed_like_fresh(gf, build_cont_chain(fresh_ctx.get(), 2, true), galloc));
}

TEST(Gallocr, TensorsWithDataAreLeftAlone) {
    weights w;
    ggml_tensor * weight = w.add(GGML_TYPE_F32, 16, 16, "weight");
    w.allocate();
    void * const weight_data = weight->data;
    ggml_context_ptr ctx = make_context(64);
    ggml_context_ptr user_ctx = make_context(8);
    ggml_tensor * x = ggml_new_tensor_2d(ctx.get(), GGML_TYPE_F32, 16, 4);
    ggml_tensor * h = ggml_mul_mat(ctx.get(), weight, x);
    ggml_tensor * user_node = ggml_add(user_ctx.get(), h, x);  // a node with user-provided memory
    ggml_backend_buffer_ptr user_buffer = ggml_backend_alloc_ctx_tensors(user_ctx.get(), ggml_backend_cpu_buffer_type());
    ASSERT_NE(user_buffer, nullptr);
    void * const user_data = user_node->data;
    ggml_tensor * weight_rows = ggml_view_2d(ctx.get(), weight, 16, 4, weight->nb[1], 4 * weight->nb[1]);
    ggml_tensor * y = ggml_add(ctx.get(), user_node, weight_rows);
    ggml_cgraph * gf = ggml_new_graph(ctx.get());
    ggml_build_forward_expand(gf, y);
    ggml_gallocr galloc(ggml_backend_cpu_buffer_type());
    const ggml_galloc_plan plan = ggml_galloc_plan_graph(gf, ggml_backend_cpu_buffer_type());
    ASSERT_TRUE(check_plan(gf, plan, ggml_backend_cpu_buffer_type()));
    EXPECT_EQ(find_entry(plan, weight), nullptr);
    EXPECT_EQ(find_entry(plan, user_node), nullptr);
    for (int round = 0; round < 2; ++round) {
        ASSERT_TRUE(galloc.alloc_graph(gf));
        EXPECT_EQ(weight->data, weight_data);
        EXPECT_EQ(weight->buffer, w.buffer.get());
        EXPECT_EQ(user_node->data, user_data);
        EXPECT_EQ(user_node->buffer, user_buffer.get());
        EXPECT_EQ(weight_rows->buffer, w.buffer.get());
        EXPECT_EQ(weight_rows->data, static_cast<char *>(weight_data) + 4 * weight->nb[1]);
        EXPECT_TRUE(check_placed(gf, plan, galloc));
    }
}

// ---- computing a graph that the allocator placed ----

float silu_ref(double v) { return float(v / (1.0 + std::exp(-v))); }

// x [32, 5] → h = silu(W x + b) → o1 = 0.5 h (OUTPUT) → r = rms_norm(o1)^2 → y = softmax(rᵀ) (OUTPUT)
struct small_net {
    static constexpr int64_t k = 32, m = 24, n = 5;
    ggml_context_ptr ctx = make_context(64);
    ggml_tensor *x, *o1, *y;
    ggml_cgraph * gf;

    small_net(ggml_tensor * w, ggml_tensor * b) {
        ggml_context * c = ctx.get();
        x = ggml_new_tensor_2d(c, GGML_TYPE_F32, k, n);
        ggml_set_input(x);
        ggml_tensor * h = ggml_silu(c, ggml_add(c, ggml_mul_mat(c, w, x), b));
        o1 = ggml_scale(c, h, 0.5f);
        ggml_set_output(o1);
        ggml_tensor * r = ggml_rms_norm(c, o1, 1e-5f);
        r = ggml_mul(c, r, r);
        y = ggml_soft_max(c, ggml_cont(c, ggml_transpose(c, r)));
        ggml_set_output(y);
        gf = ggml_new_graph(c);
        ggml_build_forward_expand(gf, y);
    }
};

void small_net_reference(const std::vector<float> & w, const std::vector<float> & b, const std::vector<float> & x,
                         std::vector<float> & o1, std::vector<float> & y) {
    const int64_t k = small_net::k, m = small_net::m, n = small_net::n;
    o1.assign(size_t(m * n), 0.0f);
    y.assign(size_t(m * n), 0.0f);
    std::vector<double> r(size_t(m * n));
    for (int64_t j = 0; j < n; ++j) {
        double ss = 0.0;
        for (int64_t i = 0; i < m; ++i) {
            double acc = b[size_t(i)];
            for (int64_t l = 0; l < k; ++l) acc += double(w[size_t(i * k + l)]) * x[size_t(j * k + l)];
            o1[size_t(j * m + i)] = 0.5f * silu_ref(acc);
            ss += double(o1[size_t(j * m + i)]) * o1[size_t(j * m + i)];
        }
        const double scale = 1.0 / std::sqrt(ss / double(m) + 1e-5);
        for (int64_t i = 0; i < m; ++i) r[size_t(j * m + i)] = std::pow(o1[size_t(j * m + i)] * scale, 2.0);
    }
    for (int64_t i = 0; i < m; ++i) {  // rows of the transposed r: over j
        double mx = -INFINITY, sum = 0.0;
        for (int64_t j = 0; j < n; ++j) mx = std::max(mx, r[size_t(j * m + i)]);
        for (int64_t j = 0; j < n; ++j) sum += std::exp(r[size_t(j * m + i)] - mx);
        for (int64_t j = 0; j < n; ++j) y[size_t(i * n + j)] = float(std::exp(r[size_t(j * m + i)] - mx) / sum);
    }
}

TEST(Gallocr, ComputedGraphMatchesReference) {
    weights wts;
    ggml_tensor * w = wts.add(GGML_TYPE_F32, small_net::k, small_net::m, "w");
    ggml_tensor * b = wts.add(GGML_TYPE_F32, small_net::m, 1, "b");
    wts.allocate();
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    auto random_vector = [&](size_t count) {
        std::vector<float> v(count);
        for (float & f : v) f = dist(rng);
        return v;
    };
    const std::vector<float> wv = random_vector(size_t(ggml_nelements(w)));
    const std::vector<float> bv = random_vector(size_t(ggml_nelements(b)));
    ggml_backend_tensor_set(w, wv.data(), 0, ggml_nbytes(w));
    ggml_backend_tensor_set(b, bv.data(), 0, ggml_nbytes(b));
    ggml_cpu_backend_options opt;
    opt.n_threads = 2;
    ggml_backend_ptr backend = ggml_backend_cpu_init(opt);
    ggml_gallocr galloc(ggml_backend_cpu_buffer_type());
    for (int round = 0; round < 3; ++round) {  // a new graph each time, same buffer
        small_net net(w, b);
        const ggml_galloc_plan plan = ggml_galloc_plan_graph(net.gf, ggml_backend_cpu_buffer_type());
        EXPECT_LT(plan.peak, plan.naive);
        ASSERT_TRUE(galloc.alloc_graph(net.gf));
        EXPECT_TRUE(check_placed(net.gf, plan, galloc));
        const std::vector<float> xv = random_vector(size_t(ggml_nelements(net.x)));
        ggml_backend_tensor_set(net.x, xv.data(), 0, ggml_nbytes(net.x));
        ASSERT_EQ(backend->graph_compute(net.gf), GGML_STATUS_SUCCESS);
        std::vector<float> o1_ref, y_ref;
        small_net_reference(wv, bv, xv, o1_ref, y_ref);
        std::vector<float> o1(o1_ref.size()), y(y_ref.size());
        ggml_backend_tensor_get(net.o1, o1.data(), 0, ggml_nbytes(net.o1));
        ggml_backend_tensor_get(net.y, y.data(), 0, ggml_nbytes(net.y));
        for (size_t i = 0; i < o1.size(); ++i) EXPECT_NEAR(o1[i], o1_ref[i], 1e-4f) << i;
        for (size_t i = 0; i < y.size(); ++i) EXPECT_NEAR(y[i], y_ref[i], 1e-4f) << i;
        EXPECT_EQ(galloc.n_buffer_allocs(), 1);
    }
}

}  // namespace
