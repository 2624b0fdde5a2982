// FLASH_ATTN_EXT with a batch dimension (dim 3: independent attention problems of one shape, as
// an embeddings context lays out one sequence per batch entry): q [D, n_q, n_head, n_batch] as a
// permuted view of token-major rows [D, n_head, n_q, n_batch], K and V F32 or F16 permuted
// views of token-major rows as well, a mask per batch entry [n_kv, n_q, 1, n_batch] or one mask
// for all [n_kv, n_q], grouped-query attention, and a plan that splits the cells into chunks
// (one query row, many cells). Every CPU path and thread count of test-devices.h (and every
// other device that supports the node) against a double-precision reference computed here.
//
// Bound: max |result - reference| <= 1e-5 * max |reference|; rows that see no cell are zero.
#include "backend-ops-values.h"
#include "test-devices.h"

#include "ggml/cpu.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace {

using bops::rng;

struct batch_case {
    int64_t d = 64, n_q = 8, n_kv = 8, n_head = 4, n_head_kv = 4, n_batch = 3;
    ggml_type kv_type = GGML_TYPE_F32;
    bool mask_per_batch = true;  // false: one [n_kv, n_q] mask for every batch entry
    bool causal = false;
    uint64_t seed = 1;

    std::string name() const {
        return "D=" + std::to_string(d) + " n_q=" + std::to_string(n_q) + " n_kv=" + std::to_string(n_kv) +
               " heads=" + std::to_string(n_head) + "/" + std::to_string(n_head_kv) + " batch=" +
               std::to_string(n_batch) + " kv=" + ggml_type_name(kv_type) + (mask_per_batch ? " mask/batch" : " mask") +
               (causal ? " causal" : "");
    }
};

std::vector<test_devices::entry> & backends() {
    static std::vector<test_devices::entry> list = test_devices::make_list({1, 2, 3});
    return list;
}

// Values [D][n_head][n_tokens][n_batch] (token-major rows, as a projection writes them), stored
// as type t and decoded back.
std::vector<double> random_rows(ggml_tensor * t, rng & r, double lo, double hi) {
    std::vector<double> v(static_cast<size_t>(ggml_nelements(t)));
    for (double & x : v) x = bops::round_to_type(r.uniform(lo, hi), t->type);
    bops::write_tensor(t, v);
    return v;
}

struct batch_setup {
    ggml_context_ptr ctx;
    ggml_backend_buffer_ptr buf;
    ggml_tensor * out = nullptr;
    ggml_cgraph * gf = nullptr;
    std::vector<double> q, k, v, mask;  // q/k/v [D][heads][tokens][batch]; mask [n_kv][n_q][mask batches]
};

double mask_value(const batch_case & c, rng & r, int64_t i, int64_t j, int64_t b) {
    const int64_t visible = c.mask_per_batch ? c.n_kv - b % std::max<int64_t>(c.n_kv, 1) : c.n_kv;  // a padded tail
    if (j >= std::max<int64_t>(visible, 1)) return -INFINITY;
    if (c.causal && j > i) return -INFINITY;
    return b == 1 && i == 0 && c.n_q > 1 ? -INFINITY : r.uniform(-1, 1);  // one row sees nothing
}

batch_setup make_setup(const batch_case & c) {
    batch_setup s;
    ggml_init_params ip;
    ip.mem_size = 16 * ggml_tensor_overhead() + ggml_graph_overhead();
    ip.no_alloc = true;
    s.ctx.reset(ggml_init(ip));
    ggml_context * ctx = s.ctx.get();
    ggml_tensor * qb = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, c.d, c.n_head, c.n_q, c.n_batch);
    ggml_tensor * kb = ggml_new_tensor_4d(ctx, c.kv_type, c.d, c.n_head_kv, c.n_kv, c.n_batch);
    ggml_tensor * vb = ggml_new_tensor_4d(ctx, c.kv_type, c.d, c.n_head_kv, c.n_kv, c.n_batch);
    const int64_t mb = c.mask_per_batch ? c.n_batch : 1;
    ggml_tensor * mask = ggml_new_tensor_4d(ctx, GGML_TYPE_F32, c.n_kv, c.n_q, 1, mb);
    ggml_tensor * q = ggml_permute(ctx, qb, 0, 2, 1, 3);  // [D, n_q, n_head, n_batch]
    ggml_tensor * k = ggml_permute(ctx, kb, 0, 2, 1, 3);
    ggml_tensor * v = ggml_permute(ctx, vb, 0, 2, 1, 3);
    s.out = ggml_flash_attn_ext(ctx, q, k, v, mask, 1.0f / std::sqrt(float(c.d)));
    ggml_set_output(s.out);
    s.gf = ggml_new_graph(ctx);
    ggml_build_forward_expand(s.gf, s.out);
    s.buf = ggml_backend_alloc_ctx_tensors(ctx, ggml_backend_cpu_buffer_type());
    GGML_ASSERT(s.buf);
    rng r(c.seed);
    s.q = random_rows(qb, r, -2, 2);
    s.k = random_rows(kb, r, -2, 2);
    s.v = random_rows(vb, r, -1, 1);
    s.mask.resize(static_cast<size_t>(ggml_nelements(mask)));
    for (int64_t b = 0; b < mb; ++b)
        for (int64_t i = 0; i < c.n_q; ++i)
            for (int64_t j = 0; j < c.n_kv; ++j) s.mask[static_cast<size_t>((b * c.n_q + i) * c.n_kv + j)] = mask_value(c, r, i, j, b);
    bops::write_tensor(mask, s.mask);
    return s;
}

// Reference [Dv][n_head][n_q][n_batch].
std::vector<double> reference(const batch_case & c, const batch_setup & s) {
    const double scale = 1.0 / std::sqrt(double(float(c.d)));
    auto at = [&](const std::vector<double> & x, int64_t heads, int64_t tokens, int64_t e, int64_t h, int64_t t, int64_t b) {
        return x[static_cast<size_t>(((b * tokens + t) * heads + h) * c.d + e)];
    };
    std::vector<double> out(static_cast<size_t>(c.d * c.n_head * c.n_q * c.n_batch), 0.0);
    std::vector<double> w(static_cast<size_t>(c.n_kv));
    for (int64_t b = 0; b < c.n_batch; ++b)
        for (int64_t i = 0; i < c.n_q; ++i)
            for (int64_t h = 0; h < c.n_head; ++h) {
                const int64_t g = h / (c.n_head / c.n_head_kv);
                const int64_t mb = c.mask_per_batch ? b : 0;
                double big = -INFINITY;
                for (int64_t j = 0; j < c.n_kv; ++j) {
                    const double m = s.mask[static_cast<size_t>((mb * c.n_q + i) * c.n_kv + j)];
                    double dot = 0.0;
                    for (int64_t e = 0; e < c.d; ++e) dot += at(s.q, c.n_head, c.n_q, e, h, i, b) * at(s.k, c.n_head_kv, c.n_kv, e, g, j, b);
                    w[static_cast<size_t>(j)] = m == -INFINITY ? -INFINITY : double(float(scale)) * dot + m;
                    big = std::max(big, w[static_cast<size_t>(j)]);
                }
                if (big == -INFINITY) continue;
                double sum = 0.0;
                for (double & x : w) sum += (x = std::exp(x - big));
                for (int64_t e = 0; e < c.d; ++e) {
                    double acc = 0.0;
                    for (int64_t j = 0; j < c.n_kv; ++j) acc += w[static_cast<size_t>(j)] * at(s.v, c.n_head_kv, c.n_kv, e, g, j, b);
                    out[static_cast<size_t>(((b * c.n_q + i) * c.n_head + h) * c.d + e)] = acc / sum;
                }
            }
    return out;
}

void check_case(const batch_case & c) {
    SCOPED_TRACE(c.name());
    batch_setup s = make_setup(c);
    ASSERT_EQ(s.out->ne[3], c.n_batch);
    const std::vector<double> ref = reference(c, s);
    double ref_max = 0.0;
    for (double x : ref) ref_max = std::max(ref_max, std::fabs(x));
    std::vector<float> got(ref.size());
    for (test_devices::entry & be : backends()) {
        if (!be.is_cpu()) {
            s.buf = test_devices::move_ctx_tensors(s.ctx.get(), be.buffer_type());
            if (!be.device->supports_op(s.out)) continue;
        }
        std::vector<float> poison(got.size(), NAN);
        ggml_backend_tensor_set(s.out, poison.data(), 0, poison.size() * sizeof(float));
        ASSERT_EQ(be.compute(s.gf), GGML_STATUS_SUCCESS) << be.label;
        ggml_backend_tensor_get(s.out, got.data(), 0, got.size() * sizeof(float));
        double err = 0.0;
        int64_t n_bad = 0;
        for (size_t e = 0; e < ref.size(); ++e) {
            if (!std::isfinite(got[e]) || (ref[e] == 0.0 && got[e] != 0.0f)) ++n_bad;
            else err = std::max(err, std::fabs(got[e] - ref[e]));
        }
        EXPECT_EQ(n_bad, 0) << be.label << ": non-finite results, or non-zero where no cell is visible";
        EXPECT_LE(err, 1e-5 * ref_max) << be.label << ": max error " << err << " (reference max " << ref_max << ")";
    }
}

TEST(flash_attn_batch, shapes) {
    uint64_t seed = 1;
    for (ggml_type t : {GGML_TYPE_F32, GGML_TYPE_F16})
        for (bool per_batch : {true, false})
            for (bool causal : {false, true})
                for (int64_t hkv : {4, 2, 1}) {
                    batch_case c;
                    c.kv_type = t;
                    c.mask_per_batch = per_batch;
                    c.causal = causal;
                    c.n_head_kv = hkv;
                    c.n_q = c.n_kv = 5 + int64_t(seed % 4) * 7;
                    c.d = seed % 2 ? 64 : 40;
                    c.seed = seed++;
                    check_case(c);
                }
}

// Many batch entries of short sequences (the embeddings layout) and one query row over many
// cells per entry (a plan that cuts the cells into chunks).
TEST(flash_attn_batch, many_entries_and_chunks) {
    batch_case many;
    many.n_batch = 32;
    many.n_q = many.n_kv = 12;
    many.seed = 50;
    check_case(many);
    batch_case chunked;
    chunked.n_batch = 2;
    chunked.n_q = 1;
    chunked.n_kv = 1100;
    chunked.n_head = 8;
    chunked.n_head_kv = 2;
    chunked.seed = 51;
    check_case(chunked);
}

}  // namespace
