// MUL_MAT_ID (mixture of experts) on every device: every weight type of the MUL_MAT kernel
// tables (F32, F16, BF16 and the quantized types; entries added to the tables are picked up by
// themselves), every ISA path this CPU has with 1, 2 and 3 threads and every non-CPU device of
// the registry (test-devices.h), against a double-precision reference from the weights as
// stored (decoded by the type traits) and the F32 activations.
//
// Routings: a decode step (one token, 4 of 8 experts), tokens routed unevenly with an expert
// no token chose, a token choosing one expert twice, n_b == 1 and n_b == n_used, one slot per
// token, a batch large enough for the mat-mat paths (64 tokens, 8 experts, 2 used: the GEMM of
// the float types and the K-quants' interleaved path from 9 columns), an expert with more
// columns than one job takes, and 64 experts with 8 used. Layouts: plain tensors, and views
// (experts with padded rows, b with padded rows, ids with padded rows whose padding holds ids
// out of range that must not be read), and b with strided elements.
// Bounds (NMSE): F32 1e-8, F16 1e-6, BF16 5e-5 (activations may be rounded to BF16), quantized
// 1e-4 (the 8-bit activations dominate). Ids out of range make graph_compute fail and leave
// dst untouched.
//
// Also a whole mixture-of-experts feed-forward block (router soft-capped with tanh, soft_max,
// top_k, sum_rows, div, three mul_mat_id, swiglu, mul) placed by the graph allocator, against
// the block in double (INFERD_MOE_VERBOSE=1 prints its NMSE per backend).
#include "cpu/mul-mat.h"
#include "quant-dot-test-data.h"
#include "test-devices.h"

#include "ggml/alloc.h"
#include "ggml/backend.h"
#include "ggml/cpu.h"
#include "ggml/ggml.h"
#include "ggml/quants.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

namespace {

using quant_dot_test::rng;

// Every weight type the MUL_MAT tables hold (the scalar table is the reference of all paths).
std::vector<ggml_type> table_types() {
    std::vector<ggml_type> v;
    for (int t = 0; t < GGML_TYPE_COUNT; ++t) {
        const ggml_type type = ggml_type(t);
        if (ggml_type_is_supported(type) && ggml_mul_mat_kernels_scalar.of(type).dot) v.push_back(type);
    }
    return v;
}

double nmse_bound(ggml_type t) {
    switch (t) {
        case GGML_TYPE_F32: return 1e-8;
        case GGML_TYPE_F16: return 1e-6;
        case GGML_TYPE_BF16: return 5e-5;
        default: return 1e-4;
    }
}

using backend_entry = test_devices::entry;

std::vector<backend_entry> & backends() {
    static std::vector<backend_entry> list = test_devices::make_list({1, 2, 3});
    return list;
}

enum class layout { plain, views, strided_b };

struct moe_case {
    std::string name;
    int64_t k = 0, m = 0, n_expert = 0, n_used = 0, n_t = 0;
    bool shared_b = true;        // n_b == 1 (else n_b == n_used)
    std::vector<int32_t> ids;    // [n_t][n_used]
    layout lay = layout::plain;
    int64_t n_b() const { return shared_b ? 1 : n_used; }
};

// ---- routings ----

// Each token picks n_used distinct experts, low ones far more often than high ones, never
// expert `skip` (-1: none).
std::vector<int32_t> uneven_ids(int64_t n_t, int64_t n_used, int64_t n_expert, int64_t skip, uint64_t seed) {
    rng g{seed};
    std::vector<int32_t> ids;
    for (int64_t t = 0; t < n_t; ++t) {
        std::vector<int32_t> picked;
        while (int64_t(picked.size()) < n_used) {
            const double u = (g.uniform() + 1.0) / 2.0;
            const int32_t e = int32_t(double(n_expert) * u * u * u);
            if (e == skip || std::find(picked.begin(), picked.end(), e) != picked.end()) continue;
            picked.push_back(e);
        }
        ids.insert(ids.end(), picked.begin(), picked.end());
    }
    return ids;
}

// Slot 0 of every token picks expert `all`, the other slots distinct random experts.
std::vector<int32_t> one_popular_ids(int64_t n_t, int64_t n_used, int64_t n_expert, int32_t all, uint64_t seed) {
    rng g{seed};
    std::vector<int32_t> ids;
    for (int64_t t = 0; t < n_t; ++t) {
        std::vector<int32_t> picked = {all};
        while (int64_t(picked.size()) < n_used) {
            const int32_t e = int32_t(g.below(n_expert));
            if (std::find(picked.begin(), picked.end(), e) == picked.end()) picked.push_back(e);
        }
        ids.insert(ids.end(), picked.begin(), picked.end());
    }
    return ids;
}

// ---- one case: tensors, stored values, reference ----

struct moe_setup {
    ggml_context_ptr ctx;
    ggml_backend_buffer_ptr buf;
    ggml_tensor *as_base = nullptr, *b_base = nullptr, *ids_base = nullptr;
    ggml_tensor *as = nullptr, *b = nullptr, *ids = nullptr, *out = nullptr;
    ggml_cgraph * gf = nullptr;
    std::vector<float> w;  // weights as stored, decoded: [n_expert][m][k]
    std::vector<float> x;  // activations [n_t][n_b][k]
};

void build_tensors(const moe_case & c, ggml_type type, moe_setup & s) {
    ggml_context * ctx = s.ctx.get();
    const int64_t n_b = c.n_b();
    if (c.lay == layout::views) {  // experts of m + 3 rows, b rows of k + 5, ids rows of n_used + 2
        s.as_base = ggml_new_tensor_3d(ctx, type, c.k, c.m + 3, c.n_expert);
        s.as = ggml_view_3d(ctx, s.as_base, c.k, c.m, c.n_expert, s.as_base->nb[1], s.as_base->nb[2], s.as_base->nb[1]);
        s.b_base = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, c.k + 5, n_b, c.n_t);
        s.b = ggml_view_3d(ctx, s.b_base, c.k, n_b, c.n_t, s.b_base->nb[1], s.b_base->nb[2], 2 * sizeof(float));
        s.ids_base = ggml_new_tensor_2d(ctx, GGML_TYPE_I32, c.n_used + 2, c.n_t);
        s.ids = ggml_view_2d(ctx, s.ids_base, c.n_used, c.n_t, s.ids_base->nb[1], sizeof(int32_t));
    } else {
        s.as = s.as_base = ggml_new_tensor_3d(ctx, type, c.k, c.m, c.n_expert);
        s.ids = s.ids_base = ggml_new_tensor_2d(ctx, GGML_TYPE_I32, c.n_used, c.n_t);
        if (c.lay == layout::strided_b) {  // [n_b, n_t, k] permuted to [k, n_b, n_t]: elements strided
            s.b_base = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, n_b, c.n_t, c.k);
            s.b = ggml_permute(ctx, s.b_base, 1, 2, 0, 3);
        } else {
            s.b = s.b_base = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, c.k, n_b, c.n_t);
        }
    }
    s.out = ggml_mul_mat_id(ctx, s.as, s.b, s.ids);
    ggml_set_output(s.out);
    s.gf = ggml_new_graph(ctx);
    ggml_build_forward_expand(s.gf, s.out);
}

// Rows of type t from floats: the quality quantizer for quantized types, the reference
// conversion for the float types; returns the bytes and fills `stored` with their decoding.
std::vector<uint8_t> encode_rows(ggml_type t, const std::vector<float> & f, int64_t n_rows, int64_t k,
                                 std::vector<float> & stored) {
    const ggml_type_traits & tt = ggml_get_type_traits(t);
    std::vector<uint8_t> bytes(ggml_row_size(t, k) * size_t(n_rows));
    if (tt.is_quantized) {
        EXPECT_EQ(ggml_quantize_chunk(t, f.data(), bytes.data(), 0, n_rows, k, nullptr), bytes.size());
    } else {
        tt.from_float(f.data(), bytes.data(), n_rows * k);
    }
    stored.resize(f.size());
    tt.to_float(bytes.data(), stored.data(), n_rows * k);
    return bytes;
}

void fill_tensors(const moe_case & c, ggml_type type, moe_setup & s, uint64_t seed) {
    rng g{seed};
    const int64_t n_b = c.n_b();
    std::vector<float> wf(size_t(c.n_expert * c.m * c.k));
    for (float & v : wf) v = float(g.uniform());
    const std::vector<uint8_t> wq = encode_rows(type, wf, c.n_expert * c.m, c.k, s.w);
    std::vector<uint8_t> base(ggml_nbytes(s.as_base));
    for (uint8_t & v : base) v = uint8_t(g.next());  // padding rows: whatever, never read
    const size_t row = ggml_row_size(type, c.k);
    for (int64_t e = 0; e < c.n_expert; ++e)
        for (int64_t r = 0; r < c.m; ++r) {
            std::memcpy(base.data() + s.as->view_offs + size_t(e) * s.as->nb[2] + size_t(r) * s.as->nb[1],
                        wq.data() + size_t(e * c.m + r) * row, row);
        }
    ggml_backend_tensor_set(s.as_base, base.data(), 0, base.size());

    s.x.resize(size_t(c.n_t * n_b * c.k));
    std::vector<float> bb(size_t(ggml_nelements(s.b_base)), std::nanf(""));  // padding: NaN
    for (int64_t t = 0; t < c.n_t; ++t)
        for (int64_t i = 0; i < n_b; ++i)
            for (int64_t kk = 0; kk < c.k; ++kk) {
                const float v = float(g.uniform());
                s.x[size_t((t * n_b + i) * c.k + kk)] = v;
                const size_t off =
                    s.b->view_offs + size_t(kk) * s.b->nb[0] + size_t(i) * s.b->nb[1] + size_t(t) * s.b->nb[2];
                bb[off / sizeof(float)] = v;
            }
    ggml_backend_tensor_set(s.b_base, bb.data(), 0, bb.size() * sizeof(float));

    std::vector<int32_t> ib(size_t(ggml_nelements(s.ids_base)), 12345);  // padding: out of range
    for (int64_t t = 0; t < c.n_t; ++t)
        for (int64_t i = 0; i < c.n_used; ++i) {
            const size_t off = s.ids->view_offs + size_t(i) * sizeof(int32_t) + size_t(t) * s.ids->nb[1];
            ib[off / sizeof(int32_t)] = c.ids[size_t(t * c.n_used + i)];
        }
    ggml_backend_tensor_set(s.ids_base, ib.data(), 0, ib.size() * sizeof(int32_t));
}

moe_setup make_setup(const moe_case & c, ggml_type type, uint64_t seed) {
    moe_setup s;
    ggml_init_params ip;
    ip.mem_size = 16 * ggml_tensor_overhead() + ggml_graph_overhead();
    ip.no_alloc = true;
    s.ctx.reset(ggml_init(ip));
    build_tensors(c, type, s);
    s.buf = ggml_backend_alloc_ctx_tensors(s.ctx.get(), ggml_backend_cpu_buffer_type());
    GGML_ASSERT(s.buf);
    fill_tensors(c, type, s, seed);
    return s;
}

// dst[:, i, t] = W[ids[t][i]] @ x[t][i % n_b], in double: [n_t][n_used][m].
std::vector<double> reference(const moe_case & c, const moe_setup & s) {
    std::vector<double> out(size_t(c.n_t * c.n_used * c.m));
    for (int64_t t = 0; t < c.n_t; ++t)
        for (int64_t i = 0; i < c.n_used; ++i) {
            const int64_t e = c.ids[size_t(t * c.n_used + i)];
            const float * x = s.x.data() + size_t((t * c.n_b() + i % c.n_b()) * c.k);
            for (int64_t r = 0; r < c.m; ++r) {
                const float * w = s.w.data() + size_t((e * c.m + r) * c.k);
                double sum = 0.0;
                for (int64_t kk = 0; kk < c.k; ++kk) sum += double(w[kk]) * double(x[kk]);
                out[size_t((t * c.n_used + i) * c.m + r)] = sum;
            }
        }
    return out;
}

void check_case(const moe_case & c, ggml_type type, uint64_t seed) {
    SCOPED_TRACE(c.name + " " + ggml_type_name(type));
    moe_setup s = make_setup(c, type, seed);
    ASSERT_TRUE(ggml_is_contiguous(s.out));
    const std::vector<double> ref = reference(c, s);
    std::vector<float> got(ref.size());
    for (backend_entry & be : backends()) {
        if (!be.is_cpu()) {
            s.buf = test_devices::move_ctx_tensors(s.ctx.get(), be.buffer_type());
            if (!be.device->supports_op(s.out)) continue;  // a device may lack a weight type
        }
        ASSERT_TRUE(be.device->supports_op(s.out)) << be.label;
        std::vector<float> poison(got.size(), std::nanf(""));
        ggml_backend_tensor_set(s.out, poison.data(), 0, poison.size() * sizeof(float));
        ASSERT_EQ(be.compute(s.gf), GGML_STATUS_SUCCESS) << be.label;
        ggml_backend_tensor_get(s.out, got.data(), 0, got.size() * sizeof(float));
        double err = 0.0, norm = 0.0;
        int64_t n_bad = 0;
        for (size_t i = 0; i < ref.size(); ++i) {
            if (!std::isfinite(got[i])) { ++n_bad; continue; }
            err += (got[i] - ref[i]) * (got[i] - ref[i]);
            norm += ref[i] * ref[i];
        }
        EXPECT_EQ(n_bad, 0) << be.label << ": results not written or not finite";
        EXPECT_LE(err / norm, nmse_bound(type)) << be.label;
    }
}

// K for a type: an odd number of blocks (float types: an odd K).
int64_t k_of(ggml_type t, int64_t blocks) {
    const int64_t bs = ggml_blck_size(t);
    return bs == 1 ? blocks * 32 + 3 : blocks * bs;
}

std::vector<moe_case> moe_cases(ggml_type t) {
    std::vector<moe_case> v;
    const int64_t k1 = k_of(t, ggml_blck_size(t) == 1 ? 2 : 3), k2 = k_of(t, ggml_blck_size(t) >= 256 ? 2 : 5);
    auto add = [&](std::string name, int64_t k, int64_t m, int64_t ne, int64_t nu, int64_t nt, bool shared,
                   std::vector<int32_t> ids, layout lay) {
        v.push_back({std::move(name), k, m, ne, nu, nt, shared, std::move(ids), lay});
    };
    add("decode: 1 token, 4 of 8 experts, n_b 1", k1, 37, 8, 4, 1, true, {5, 2, 7, 0}, layout::plain);
    add("decode: 1 token, 4 of 8 experts, n_b n_used, views", k1, 37, 8, 4, 1, false, {3, 6, 1, 4}, layout::views);
    add("13 tokens routed unevenly, expert 3 unused, n_b n_used", k1, 37, 6, 2, 13, false,
        uneven_ids(13, 2, 6, 3, 11), layout::plain);
    add("13 tokens routed unevenly, expert 3 unused, n_b 1, views", k1, 37, 6, 2, 13, true,
        uneven_ids(13, 2, 6, 3, 12), layout::views);
    add("one expert chosen twice by a token", k1, 21, 4, 3, 3, false, {1, 1, 2, 0, 3, 0, 2, 2, 2}, layout::plain);
    add("one slot per token (n_b == n_used == 1)", k1, 19, 5, 1, 6, true, {4, 0, 4, 2, 4, 1}, layout::plain);
    add("b with strided elements", k1, 24, 4, 2, 5, false, uneven_ids(5, 2, 4, -1, 13), layout::strided_b);
    add("mat-mat: 64 tokens, 8 experts, 2 used, n_b 1", k2, 136, 8, 2, 64, true, uneven_ids(64, 2, 8, -1, 14),
        layout::plain);
    add("mat-mat: 64 tokens, 8 experts, 2 used, n_b n_used, views", k2, 136, 8, 2, 64, false,
        uneven_ids(64, 2, 8, 6, 15), layout::views);
    add("decode: 64 experts, 8 used", k2, 48, 64, 8, 1, true, uneven_ids(1, 8, 64, -1, 16), layout::plain);
    return v;
}

TEST(mul_mat_id, every_table_type_and_routing) {
    const std::vector<ggml_type> types = table_types();
    ASSERT_GE(types.size(), 13u);  // F32, F16, BF16, Q4_0 … Q8_0, Q2_K … Q6_K at least
    std::string names;
    for (ggml_type t : types) names += std::string(names.empty() ? "" : " ") + ggml_type_name(t);
    RecordProperty("weight_types", names);
    uint64_t seed = 100;
    for (ggml_type t : types) {
        for (const moe_case & c : moe_cases(t)) {
            check_case(c, t, seed++);
            if (HasFatalFailure()) return;
        }
    }
}

// One expert takes 300 columns: several column chunks of the dot path and several panel runs
// of the GEMM; the other slot is spread over the rest.
TEST(mul_mat_id, one_expert_with_many_columns) {
    uint64_t seed = 300;
    for (ggml_type t : {GGML_TYPE_F32, GGML_TYPE_BF16, GGML_TYPE_Q8_0, GGML_TYPE_Q4_K}) {
        moe_case c{"one expert with 300 columns", k_of(t, ggml_blck_size(t) >= 256 ? 1 : 2), 40, 5, 2, 300, true,
                   one_popular_ids(300, 2, 5, 1, seed), layout::plain};
        check_case(c, t, seed++);
    }
}

// Ids outside [0, n_expert) fail the compute and leave dst as it was; a good run follows.
TEST(mul_mat_id, ids_out_of_range_fail) {
    const int32_t bad[] = {-1, 8, 12345, std::numeric_limits<int32_t>::max(), std::numeric_limits<int32_t>::min()};
    uint64_t seed = 400;
    for (ggml_type t : {GGML_TYPE_F32, GGML_TYPE_Q4_0}) {
        for (int32_t id : bad) {
            moe_case c{"bad id " + std::to_string(id), k_of(t, 2), 20, 8, 2, 5, false,
                       {0, 1, 2, 3, 4, 5, 6, id, 7, 0}, layout::plain};
            SCOPED_TRACE(c.name + " " + ggml_type_name(t));
            moe_setup s = make_setup(c, t, seed++);
            const std::vector<float> poison(size_t(ggml_nelements(s.out)), 7.5f);
            std::vector<float> got(poison.size());
            for (backend_entry & be : backends()) {
                if (!be.is_cpu()) s.buf = test_devices::move_ctx_tensors(s.ctx.get(), be.buffer_type());
                if (!be.supports_graph(s.gf)) continue;  // never the CPU (checked above)
                ggml_backend_tensor_set(s.out, poison.data(), 0, poison.size() * sizeof(float));
                EXPECT_EQ(be.compute(s.gf), GGML_STATUS_FAILED) << be.label;
                ggml_backend_tensor_get(s.out, got.data(), 0, got.size() * sizeof(float));
                EXPECT_TRUE(got == poison) << be.label << ": dst written although the ids are bad";
            }
            const int32_t good = 6;
            ggml_backend_tensor_set(s.ids, &good, 7 * sizeof(int32_t), sizeof(int32_t));
            for (backend_entry & be : backends()) {
                if (!be.supports_graph(s.gf)) continue;
                EXPECT_EQ(be.compute(s.gf), GGML_STATUS_SUCCESS) << be.label;
            }
        }
    }
}

// Weight types outside the MUL_MAT tables are not claimed; the op records what ggml.h says.
TEST(mul_mat_id, supports_op_and_builder) {
    ggml_init_params ip;
    ip.mem_size = 16 * ggml_tensor_overhead();
    ip.no_alloc = true;
    ggml_context_ptr ctx(ggml_init(ip));
    ggml_tensor * as = ggml_new_tensor_3d(ctx.get(), GGML_TYPE_Q4_K, 256, 32, 8);
    ggml_tensor * b = ggml_new_tensor_3d(ctx.get(), GGML_TYPE_F32, 256, 1, 5);
    ggml_tensor * ids = ggml_new_tensor_2d(ctx.get(), GGML_TYPE_I32, 2, 5);
    ggml_tensor * out = ggml_mul_mat_id(ctx.get(), as, b, ids);
    EXPECT_STREQ(ggml_op_name(out->op), "MUL_MAT_ID");
    EXPECT_EQ(out->ne[0], 32);
    EXPECT_EQ(out->ne[1], 2);
    EXPECT_EQ(out->ne[2], 5);
    const ggml_backend_device_i * dev = backends().front().device;  // a CPU path
    EXPECT_TRUE(dev->supports_op(out));
    ggml_tensor * as8 = ggml_new_tensor_3d(ctx.get(), GGML_TYPE_Q8_1, 256, 32, 8);  // an activation type
    EXPECT_FALSE(dev->supports_op(ggml_mul_mat_id(ctx.get(), as8, b, ids)));
}

// ---- a mixture-of-experts feed-forward block through the graph allocator ----
//
// x [K, T] -> router logits soft-capped with tanh (c * tanh(l / c)) -> soft_max -> top_k ids ->
// the chosen probabilities normalised (sum_rows, div) -> gate/up (mul_mat_id, one input per
// token) -> swiglu -> down (mul_mat_id, one input per slot) -> weighted (mul) and summed over
// the slots (permute, cont, sum_rows). Against the same block in double; the ids must match.

struct ffn_dims {
    static constexpr int64_t k = 256, f = 512, n_expert = 8, n_used = 2;
    static constexpr float cap = 2.0f;
};

// Weights in their own buffer: router F32 [K, E]; up, gate [K, F, E] and down [F, K, E] of type t.
struct ffn_model {
    ggml_context_ptr ctx;
    ggml_backend_buffer_ptr buf;
    ggml_tensor *router = nullptr, *up = nullptr, *gate = nullptr, *down = nullptr;
    std::vector<float> r, u, g, d;  // stored values, row-major as the tensors

    ffn_model(ggml_type t, uint64_t seed, ggml_backend_buffer_type_i * buft = ggml_backend_cpu_buffer_type()) {
        using fd = ffn_dims;
        ggml_init_params ip;
        ip.mem_size = 8 * ggml_tensor_overhead();
        ip.no_alloc = true;
        ctx.reset(ggml_init(ip));
        router = ggml_new_tensor_2d(ctx.get(), GGML_TYPE_F32, fd::k, fd::n_expert);
        up = ggml_new_tensor_3d(ctx.get(), t, fd::k, fd::f, fd::n_expert);
        gate = ggml_new_tensor_3d(ctx.get(), t, fd::k, fd::f, fd::n_expert);
        down = ggml_new_tensor_3d(ctx.get(), t, fd::f, fd::k, fd::n_expert);
        buf = ggml_backend_alloc_ctx_tensors(ctx.get(), buft);
        GGML_ASSERT(buf);
        rng gen{seed};
        auto fill = [&](ggml_tensor * w, std::vector<float> & stored, double scale) {
            std::vector<float> v(size_t(ggml_nelements(w)));
            for (float & x : v) x = float(scale * gen.uniform());
            const std::vector<uint8_t> bytes = encode_rows(w->type, v, ggml_nrows(w), w->ne[0], stored);
            ggml_backend_tensor_set(w, bytes.data(), 0, bytes.size());
        };
        fill(router, r, 0.2);
        fill(up, u, 1.0);
        fill(gate, g, 1.0);
        fill(down, d, 1.0);
    }
};

struct ffn_graph {
    ggml_tensor *x = nullptr, *ids = nullptr, *out = nullptr;
    ggml_cgraph * gf = nullptr;
};

ffn_graph ffn_build(ggml_context * ctx, const ffn_model & m, int64_t n_t) {
    using fd = ffn_dims;
    ffn_graph fg;
    fg.x = ggml_new_tensor_2d(ctx, GGML_TYPE_F32, fd::k, n_t);  // [K, T]
    ggml_set_input(fg.x);
    ggml_tensor * logits = ggml_mul_mat(ctx, m.router, fg.x);  // [E, T]
    logits = ggml_scale(ctx, ggml_tanh(ctx, ggml_scale(ctx, logits, 1.0f / fd::cap)), fd::cap);
    ggml_tensor * probs = ggml_soft_max(ctx, logits);
    fg.ids = ggml_top_k(ctx, probs, int(fd::n_used));  // [U, T]
    ggml_set_output(fg.ids);
    ggml_tensor * chosen = ggml_get_rows(ctx, ggml_reshape_3d(ctx, probs, 1, fd::n_expert, n_t), fg.ids);  // [1, U, T]
    chosen = ggml_reshape_2d(ctx, chosen, fd::n_used, n_t);
    ggml_tensor * weights = ggml_div(ctx, chosen, ggml_sum_rows(ctx, chosen));  // [U, T]
    ggml_tensor * xb = ggml_reshape_3d(ctx, fg.x, fd::k, 1, n_t);
    ggml_tensor * gate = ggml_mul_mat_id(ctx, m.gate, xb, fg.ids);  // [F, U, T]
    ggml_tensor * act = ggml_swiglu(ctx, gate, ggml_mul_mat_id(ctx, m.up, xb, fg.ids));
    ggml_tensor * y = ggml_mul_mat_id(ctx, m.down, act, fg.ids);  // [K, U, T]
    y = ggml_mul(ctx, y, ggml_reshape_3d(ctx, weights, 1, fd::n_used, n_t));
    y = ggml_cont(ctx, ggml_permute(ctx, y, 1, 0, 2, 3));  // [U, K, T]
    fg.out = ggml_sum_rows(ctx, y);                         // [1, K, T]
    ggml_set_output(fg.out);
    fg.gf = ggml_new_graph(ctx);
    ggml_build_forward_expand(fg.gf, fg.out);
    return fg;
}

// The block in double: the output [T][K]; top-k ids into ids_ref [T][U].
std::vector<double> ffn_reference(const ffn_model & m, const std::vector<float> & x, int64_t n_t,
                                  std::vector<int32_t> & ids_ref) {
    using fd = ffn_dims;
    auto dot = [](const float * w, const double * v, int64_t n) {
        double s = 0.0;
        for (int64_t i = 0; i < n; ++i) s += double(w[i]) * v[i];
        return s;
    };
    std::vector<double> out(size_t(n_t * fd::k), 0.0);
    ids_ref.clear();
    for (int64_t t = 0; t < n_t; ++t) {
        std::vector<double> xt(x.begin() + t * fd::k, x.begin() + (t + 1) * fd::k), p(fd::n_expert);
        double mx = -INFINITY, sum = 0.0;
        for (int64_t e = 0; e < fd::n_expert; ++e) {
            p[size_t(e)] = fd::cap * std::tanh(dot(m.r.data() + e * fd::k, xt.data(), fd::k) / fd::cap);
            mx = std::max(mx, p[size_t(e)]);
        }
        for (double & v : p) sum += (v = std::exp(v - mx));
        std::vector<int32_t> order(fd::n_expert);
        std::iota(order.begin(), order.end(), 0);
        std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return p[size_t(a)] > p[size_t(b)]; });
        const double wsum = p[size_t(order[0])] + p[size_t(order[1])];
        for (int64_t i = 0; i < fd::n_used; ++i) {
            const int32_t e = order[size_t(i)];
            ids_ref.push_back(e);
            std::vector<double> act(fd::f);
            for (int64_t j = 0; j < fd::f; ++j) {
                const double gv = dot(m.g.data() + (e * fd::f + j) * fd::k, xt.data(), fd::k);
                const double uv = dot(m.u.data() + (e * fd::f + j) * fd::k, xt.data(), fd::k);
                act[size_t(j)] = gv / (1.0 + std::exp(-gv)) * uv;
            }
            for (int64_t kk = 0; kk < fd::k; ++kk) {
                const double y = dot(m.d.data() + (e * fd::k + kk) * fd::f, act.data(), fd::f);
                out[size_t(t * fd::k + kk)] += p[size_t(e)] / wsum * y;
            }
        }
    }
    return out;
}

// The block on one device, its graph placed by that device's graph allocator; m's weights live
// in the device's memory.
void check_moe_block_on(const backend_entry & be, const ffn_model & m, ggml_type t, int64_t n_t, uint64_t seed) {
    SCOPED_TRACE(std::string(ggml_type_name(t)) + " tokens=" + std::to_string(n_t) + " " + be.label);
    ggml_init_params ip;
    ip.mem_size = 64 * ggml_tensor_overhead() + ggml_graph_overhead();
    ip.no_alloc = true;
    ggml_context_ptr ctx(ggml_init(ip));
    const ffn_graph fg = ffn_build(ctx.get(), m, n_t);
    if (!be.is_cpu() && !be.supports_graph(fg.gf)) return;
    ggml_gallocr galloc(be.buffer_type());
    ASSERT_TRUE(galloc.alloc_graph(fg.gf));
    rng gen{seed};
    std::vector<float> x(size_t(n_t * ffn_dims::k));
    for (float & v : x) v = float(gen.uniform());
    std::vector<int32_t> ids_ref;
    const std::vector<double> ref = ffn_reference(m, x, n_t, ids_ref);
    std::vector<int32_t> ids(ids_ref.size());
    std::vector<float> got(ref.size());
    ggml_backend_tensor_set(fg.x, x.data(), 0, x.size() * sizeof(float));
    ASSERT_EQ(be.compute(fg.gf), GGML_STATUS_SUCCESS);
    ggml_backend_tensor_get(fg.ids, ids.data(), 0, ids.size() * sizeof(int32_t));
    EXPECT_EQ(ids, ids_ref);
    ggml_backend_tensor_get(fg.out, got.data(), 0, got.size() * sizeof(float));
    double err = 0.0, norm = 0.0;
    for (size_t i = 0; i < ref.size(); ++i) {
        err += (got[i] - ref[i]) * (got[i] - ref[i]);
        norm += ref[i] * ref[i];
    }
    EXPECT_LE(err / norm, t == GGML_TYPE_F32 ? 1e-8 : 1e-3);  // two 8-bit activations
    if (std::getenv("INFERD_MOE_VERBOSE")) {
        std::printf("[moe] %s %s nmse %.3e\n", ggml_type_name(t), be.label.c_str(), err / norm);
    }
}

TEST(mul_mat_id, moe_block_through_the_graph_allocator) {
    static_assert(ffn_dims::n_used == 2, "the reference normalises over two slots");
    uint64_t seed = 500;
    for (ggml_type t : {GGML_TYPE_F32, GGML_TYPE_Q8_0, GGML_TYPE_Q4_K}) {
        const uint64_t model_seed = seed++;
        const ffn_model m(t, model_seed);
        for (int64_t n_t : {1, 24}) {
            const uint64_t input_seed = seed++;
            for (const backend_entry & be : backends()) {
                if (be.is_cpu()) {
                    check_moe_block_on(be, m, t, n_t, input_seed);
                } else {
                    const ffn_model on_device(t, model_seed, be.buffer_type());  // the same weights there
                    check_moe_block_on(be, on_device, t, n_t, input_seed);
                }
            }
        }
    }
}

}  // namespace
