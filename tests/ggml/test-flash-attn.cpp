// FLASH_ATTN_EXT on every device — the CPU backend on every ISA path this CPU has (scalar, avx2,
// avx512) with 1, 2 and 3 threads, and every non-CPU device of the registry (test-devices.h;
// "no GPU device: <reason>" otherwise) — against a naive double-precision reference (full
// scores, softmax, weighted sum) computed from the K/V values as stored (F16 and Q8_0 decoded
// here, independently of the library). Cases cover head sizes 64/128/40 (and Dv != D), 1..1000
// cells, 1..64 query rows, grouped-query attention (n_head 8 over 8, 4 or 1 kv heads), masks
// (none, F32, F16; random, causal, causal within a sliding window, fully masked rows, a visible
// prefix only), q as a contiguous, permuted or transposed tensor, and K/V as tensors of their
// own or strided views into a bigger KV-cache tensor.
//
// INFERD_FLASH_ATTN_VERBOSE=1 prints the relative error of every case and backend.
//
// Soft-capped scores (Gemma 2): the reference applies c * tanh(s / c) to s = scale * q . k before
// the mask, for caps that bite hard (1) to barely (50), on the decode, chunked and prompt paths.
//
// Query heads per kv head from 1 to 16 and head sizes up to 256 (the rows of one kv head are
// scored together, in blocks of rows), and masks of several sequences in one decode step (each
// row sees its own sequence's cells of a unified cache, with or without a shared prefix, next to
// the causal rows of a prompt chunk).
//
// Also: the fused op against the unfused attention (mul_mat, soft_max_ext, mul_mat) in one
// graph placed by the graph allocator.
//
// Bound: max |result - reference| <= 1e-5 * max |reference| per case (F32 arithmetic), and
// rows that see no cell must be exactly zero.
#include "backend-ops-values.h"
#include "test-devices.h"

#include "ggml/alloc.h"
#include "ggml/cpu.h"
#include "ggml/quants.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

using bops::rng;

enum class mask_kind { none, random, causal, rows_masked, prefix, window, sequences };
enum class q_layout { contiguous, permuted, transposed };

struct fa_case {
    int64_t d = 64, dv = 64, n_q = 1, n_kv = 7, n_head = 8, n_head_kv = 8;
    ggml_type kv_type = GGML_TYPE_F16;
    ggml_type mask_type = GGML_TYPE_F32;
    mask_kind mask = mask_kind::none;
    q_layout q = q_layout::contiguous;
    bool kv_views = false;  // k, v: views into [n_head_kv * D, n_ctx] cache tensors
    float scale = 0.125f;
    float softcap = 0.0f;
    int64_t window = 16;  // cells a row sees under mask_kind::window
    // mask_kind::sequences (a unified KV cache of several sequences): cells [0, shared) belong to
    // every sequence (a copied prefix), the others to sequence (j - shared) % n_seq_cells in turn;
    // query row i belongs to sequence i % n_seq and sees its sequence's cells, except the first
    // chunk_rows rows: a prompt chunk of sequence 0, causal over its cells (the last row sees all).
    int64_t n_seq = 4, n_seq_cells = 4, shared = 0, chunk_rows = 0;
    uint64_t seed = 1;

    std::string name() const {
        static const char * masks[] = {"none", "random", "causal", "rows-masked", "prefix", "window", "sequences"};
        static const char * qs[] = {"q", "q-permuted", "q-transposed"};
        std::string s = "D=" + std::to_string(d) + " Dv=" + std::to_string(dv) + " n_q=" + std::to_string(n_q) +
                        " n_kv=" + std::to_string(n_kv) + " heads=" + std::to_string(n_head) + "/" +
                        std::to_string(n_head_kv) + " kv=" + ggml_type_name(kv_type) + " mask=" +
                        masks[static_cast<int>(mask)];
        if (mask != mask_kind::none) s += std::string("(") + ggml_type_name(mask_type) + ")";
        s.append(" ").append(qs[static_cast<int>(q)]).append(kv_views ? " kv-views" : "");
        if (mask == mask_kind::sequences) {
            s += " seqs=" + std::to_string(n_seq) + "/" + std::to_string(n_seq_cells) + " shared=" +
                 std::to_string(shared) + " chunk=" + std::to_string(chunk_rows);
        }
        if (softcap > 0.0f) {
            s.append(" scale=").append(std::to_string(scale)).append(" softcap=").append(std::to_string(softcap));
        }
        return s;
    }
};

// ---- the devices under test ----

using backend_entry = test_devices::entry;

std::vector<backend_entry> & backends() {
    static std::vector<backend_entry> list = test_devices::make_list({1, 2, 3});
    return list;
}

// ---- stored values: bytes of a tensor of type t and what they decode to (independently) ----

struct stored {
    std::vector<uint8_t> bytes;
    std::vector<double> values;  // decoded, in element order
};

double q8_0_value(const uint8_t * row, int64_t e) {
    const uint8_t * block = row + (e / 32) * 34;
    uint16_t h;
    std::memcpy(&h, block, 2);
    return bops::f16_bits_to_double(h) * static_cast<double>(static_cast<int8_t>(block[2 + e % 32]));
}

// n random values in [lo, hi) stored as type t (Q8_0: n % 32 == 0).
stored make_stored(ggml_type t, int64_t n, rng & r, double lo, double hi) {
    std::vector<float> f(static_cast<size_t>(n));
    for (float & x : f) x = static_cast<float>(r.uniform(lo, hi));
    stored s;
    s.values.resize(f.size());
    if (t == GGML_TYPE_Q8_0) {
        s.bytes.resize(static_cast<size_t>(n / 32) * sizeof(block_q8_0));
        ggml_quantize_row_q8_0_ref(f.data(), reinterpret_cast<block_q8_0 *>(s.bytes.data()), n);
        for (int64_t e = 0; e < n; ++e) s.values[static_cast<size_t>(e)] = q8_0_value(s.bytes.data(), e);
        return s;
    }
    const size_t es = t == GGML_TYPE_F32 ? 4 : 2;
    s.bytes.resize(f.size() * es);
    for (size_t e = 0; e < f.size(); ++e) {
        bops::encode_element(s.bytes.data() + e * es, t, f[e]);
        s.values[e] = bops::decode_element(s.bytes.data() + e * es, t);
    }
    return s;
}

// ---- one case: tensors, host data and reference ----

struct fa_setup {
    ggml_context_ptr ctx;
    ggml_backend_buffer_ptr buf;
    ggml_tensor *q_base = nullptr, *k_base = nullptr, *v_base = nullptr, *mask = nullptr, *out = nullptr;
    ggml_cgraph * gf = nullptr;
    int64_t n_ctx = 0, cell_off = 0;  // kv views: cells [cell_off, cell_off + n_kv) of n_ctx
    std::vector<double> q, mask_values;  // q logical [D][n_q][n_head]; mask [n_kv][n_q]
    stored k, v;                         // of the base tensors
};

// K (or V) value (e, cell j, kv head g) of the case, from the base tensor's decoded values.
double kv_at(const fa_case & c, const fa_setup & s, const stored & st, int64_t width, int64_t e, int64_t j, int64_t g) {
    if (c.kv_views) return st.values[static_cast<size_t>((s.cell_off + j) * c.n_head_kv * width + g * width + e)];
    return st.values[static_cast<size_t>((g * c.n_kv + j) * width + e)];
}

// Under mask_kind::sequences: whether row i sees cell j.
bool sequence_sees(const fa_case & c, int64_t i, int64_t j) {
    auto seq_of_cell = [&](int64_t x) { return x < c.shared ? -1 : (x - c.shared) % c.n_seq_cells; };
    const int64_t sc = seq_of_cell(j);
    if (i >= c.chunk_rows) return sc < 0 || sc == i % c.n_seq;
    if (sc > 0) return false;
    int64_t n0 = 0, rank = 0;  // cells of sequence 0, and j's place among them
    for (int64_t x = 0; x < c.n_kv; ++x) {
        if (seq_of_cell(x) <= 0) {
            if (x < j) ++rank;
            ++n0;
        }
    }
    return rank <= n0 - c.chunk_rows + i;
}

std::vector<double> make_mask(const fa_case & c, rng & r) {
    std::vector<double> m(static_cast<size_t>(c.n_kv * c.n_q), 0.0);
    for (int64_t i = 0; i < c.n_q; ++i) {
        for (int64_t j = 0; j < c.n_kv; ++j) {
            double x = 0.0;
            switch (c.mask) {
                case mask_kind::none: break;
                case mask_kind::random: x = r.uniform(0, 1) < 0.25 ? -INFINITY : r.uniform(-2, 2); break;
                case mask_kind::causal: x = j <= i + c.n_kv - c.n_q ? 0.0 : -INFINITY; break;  // last row sees all
                case mask_kind::rows_masked: x = i % 3 == 1 ? -INFINITY : r.uniform(-1, 1); break;
                case mask_kind::prefix: x = j < std::max<int64_t>(c.n_kv / 5, 1) ? 0.0 : -INFINITY; break;
                case mask_kind::sequences: x = sequence_sees(c, i, j) ? 0.0 : -INFINITY; break;
                case mask_kind::window: {  // causal, and only the window of c.window cells ending at the row's own
                    const int64_t p = i + c.n_kv - c.n_q;
                    x = j <= p && p - j < c.window ? 0.0 : -INFINITY;
                    break;
                }
            }
            m[static_cast<size_t>(i * c.n_kv + j)] = bops::round_to_type(x, c.mask_type);
        }
    }
    return m;
}

void build_tensors(const fa_case & c, fa_setup & s) {
    ggml_context * ctx = s.ctx.get();
    switch (c.q) {
        case q_layout::contiguous: s.q_base = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, c.d, c.n_q, c.n_head); break;
        case q_layout::permuted: s.q_base = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, c.d, c.n_head, c.n_q); break;
        case q_layout::transposed: s.q_base = ggml_new_tensor_3d(ctx, GGML_TYPE_F32, c.n_q, c.d, c.n_head); break;
    }
    ggml_tensor * q = s.q_base;
    if (c.q == q_layout::permuted) q = ggml_permute(ctx, q, 0, 2, 1, 3);
    if (c.q == q_layout::transposed) q = ggml_transpose(ctx, q);
    ggml_tensor *k, *v;
    if (c.kv_views) {
        s.n_ctx = c.n_kv + 5;
        s.cell_off = 3;
        s.k_base = ggml_new_tensor_2d(ctx, c.kv_type, c.n_head_kv * c.d, s.n_ctx);
        s.v_base = ggml_new_tensor_2d(ctx, c.kv_type, c.n_head_kv * c.dv, s.n_ctx);
        k = ggml_view_3d(ctx, s.k_base, c.d, c.n_kv, c.n_head_kv, s.k_base->nb[1], ggml_row_size(c.kv_type, c.d),
                         size_t(s.cell_off) * s.k_base->nb[1]);
        v = ggml_view_3d(ctx, s.v_base, c.dv, c.n_kv, c.n_head_kv, s.v_base->nb[1], ggml_row_size(c.kv_type, c.dv),
                         size_t(s.cell_off) * s.v_base->nb[1]);
    } else {
        k = s.k_base = ggml_new_tensor_3d(ctx, c.kv_type, c.d, c.n_kv, c.n_head_kv);
        v = s.v_base = ggml_new_tensor_3d(ctx, c.kv_type, c.dv, c.n_kv, c.n_head_kv);
    }
    // two rows more than n_q: they hold NaN and must never be read
    if (c.mask != mask_kind::none) s.mask = ggml_new_tensor_2d(ctx, c.mask_type, c.n_kv, c.n_q + 2);
    s.out = ggml_flash_attn_ext(ctx, q, k, v, s.mask, c.scale, c.softcap);
    ggml_set_output(s.out);
    s.gf = ggml_new_graph(ctx);
    ggml_build_forward_expand(s.gf, s.out);
}

void fill_tensors(const fa_case & c, fa_setup & s) {
    rng r(c.seed);
    s.q.resize(static_cast<size_t>(c.d * c.n_q * c.n_head));
    std::vector<float> qb(s.q.size());
    for (int64_t h = 0; h < c.n_head; ++h)
        for (int64_t i = 0; i < c.n_q; ++i)
            for (int64_t e = 0; e < c.d; ++e) {
                const float x = static_cast<float>(r.uniform(-2, 2));
                s.q[static_cast<size_t>((h * c.n_q + i) * c.d + e)] = x;
                int64_t at = (h * c.n_q + i) * c.d + e;                                  // [D, n_q, n_head]
                if (c.q == q_layout::permuted) at = (i * c.n_head + h) * c.d + e;       // [D, n_head, n_q]
                if (c.q == q_layout::transposed) at = (h * c.d + e) * c.n_q + i;        // [n_q, D, n_head]
                qb[static_cast<size_t>(at)] = x;
            }
    ggml_backend_tensor_set(s.q_base, qb.data(), 0, qb.size() * sizeof(float));
    s.k = make_stored(c.kv_type, ggml_nelements(s.k_base), r, -2, 2);
    s.v = make_stored(c.kv_type, ggml_nelements(s.v_base), r, -1, 1);
    ggml_backend_tensor_set(s.k_base, s.k.bytes.data(), 0, s.k.bytes.size());
    ggml_backend_tensor_set(s.v_base, s.v.bytes.data(), 0, s.v.bytes.size());
    if (!s.mask) return;
    s.mask_values = make_mask(c, r);
    std::vector<double> mv = s.mask_values;
    mv.resize(static_cast<size_t>(ggml_nelements(s.mask)), NAN);
    bops::write_tensor(s.mask, mv);
}

fa_setup make_setup(const fa_case & c) {
    fa_setup s;
    ggml_init_params ip;
    ip.mem_size = 16 * ggml_tensor_overhead() + ggml_graph_overhead();
    ip.no_alloc = true;
    s.ctx.reset(ggml_init(ip));
    build_tensors(c, s);
    s.buf = ggml_backend_alloc_ctx_tensors(s.ctx.get(), ggml_backend_cpu_buffer_type());
    GGML_ASSERT(s.buf);
    fill_tensors(c, s);
    return s;
}

// Reference [Dv][n_head][n_q] in double; rows that see no cell are zero.
std::vector<double> reference(const fa_case & c, const fa_setup & s) {
    std::vector<double> out(static_cast<size_t>(c.dv * c.n_head * c.n_q), 0.0);
    std::vector<double> w(static_cast<size_t>(c.n_kv));
    for (int64_t i = 0; i < c.n_q; ++i)
        for (int64_t h = 0; h < c.n_head; ++h) {
            const int64_t g = h / (c.n_head / c.n_head_kv);
            double big = -INFINITY;
            for (int64_t j = 0; j < c.n_kv; ++j) {
                const double m = s.mask ? s.mask_values[static_cast<size_t>(i * c.n_kv + j)] : 0.0;
                double dot = 0.0;
                for (int64_t e = 0; e < c.d; ++e) {
                    dot += s.q[static_cast<size_t>((h * c.n_q + i) * c.d + e)] * kv_at(c, s, s.k, c.d, e, j, g);
                }
                double x = static_cast<double>(c.scale) * dot;
                if (c.softcap > 0.0f) x = c.softcap * std::tanh(x / c.softcap);
                w[static_cast<size_t>(j)] = m == -INFINITY ? -INFINITY : x + m;
                big = std::max(big, w[static_cast<size_t>(j)]);
            }
            if (big == -INFINITY) continue;
            double sum = 0.0;
            for (double & x : w) sum += (x = std::exp(x - big));
            for (int64_t e = 0; e < c.dv; ++e) {
                double acc = 0.0;
                for (int64_t j = 0; j < c.n_kv; ++j) acc += w[static_cast<size_t>(j)] * kv_at(c, s, s.v, c.dv, e, j, g);
                out[static_cast<size_t>((i * c.n_head + h) * c.dv + e)] = acc / sum;
            }
        }
    return out;
}

void check_case(const fa_case & c) {
    SCOPED_TRACE(c.name());
    fa_setup s = make_setup(c);
    ASSERT_EQ(s.out->ne[0], c.dv);
    ASSERT_EQ(s.out->ne[1], c.n_head);
    ASSERT_EQ(s.out->ne[2], c.n_q);
    ASSERT_TRUE(ggml_is_contiguous(s.out));
    const std::vector<double> ref = reference(c, s);
    double ref_max = 0.0;
    for (double x : ref) ref_max = std::max(ref_max, std::fabs(x));
    std::vector<float> got(ref.size());
    for (backend_entry & be : backends()) {
        if (!be.is_cpu()) {
            s.buf = test_devices::move_ctx_tensors(s.ctx.get(), be.buffer_type());
            if (!be.device->supports_op(s.out)) continue;  // a device may lack a K/V type or head size
        }
        EXPECT_TRUE(be.device->supports_op(s.out)) << be.label;
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
        if (std::getenv("INFERD_FLASH_ATTN_VERBOSE")) {
            std::printf("[fa] %-95s %-22s rel err %.2e\n", c.name().c_str(), be.label.c_str(), err / ref_max);
        }
        EXPECT_EQ(n_bad, 0) << be.label << ": non-finite results, or non-zero where no cell is visible";
        EXPECT_LE(err, 1e-5 * ref_max) << be.label << ": max error " << err << " (reference max " << ref_max << ")";
    }
}

// ---- cases ----

// The grid: n_kv x n_q x n_head_kv, with head size, K/V type, mask and layouts
// rotating through their options so that each appears with every shape class.
TEST(flash_attn, grid) {
    const int64_t n_kvs[] = {1, 7, 33, 300};
    const int64_t n_qs[] = {1, 5, 64};
    const int64_t hkvs[] = {8, 4, 1};
    const int64_t ds[] = {64, 128, 40};
    const ggml_type types[] = {GGML_TYPE_F16, GGML_TYPE_F32, GGML_TYPE_Q8_0};
    const mask_kind masks[] = {mask_kind::causal, mask_kind::none, mask_kind::random, mask_kind::rows_masked};
    uint64_t k = 0;
    for (int64_t n_kv : n_kvs)
        for (int64_t n_q : n_qs)
            for (int64_t hkv : hkvs) {
                fa_case c;
                c.n_kv = n_kv;
                c.n_q = n_q;
                c.n_head_kv = hkv;
                c.d = c.dv = ds[k % 3];
                c.kv_type = types[(k / 3) % 3];
                if (c.kv_type == GGML_TYPE_Q8_0 && c.d % 32 != 0) c.kv_type = GGML_TYPE_F16;
                c.mask = masks[k % 4];
                c.mask_type = (k / 4) % 2 ? GGML_TYPE_F16 : GGML_TYPE_F32;
                c.q = static_cast<q_layout>((k / 2) % 3);
                c.kv_views = k % 2 == 0;
                c.scale = 1.0f / std::sqrt(static_cast<float>(c.d));
                c.seed = 100 + k++;
                check_case(c);
            }
}

// Every K/V type with every head size it allows, as cache views under a causal F16 mask.
TEST(flash_attn, types_and_head_sizes) {
    uint64_t seed = 200;
    for (ggml_type t : {GGML_TYPE_F16, GGML_TYPE_F32, GGML_TYPE_Q8_0})
        for (int64_t d : {64, 128, 40}) {
            if (t == GGML_TYPE_Q8_0 && d % 32 != 0) continue;
            fa_case c;
            c.d = c.dv = d;
            c.n_q = 5;
            c.n_kv = 33;
            c.n_head_kv = 4;
            c.kv_type = t;
            c.mask = mask_kind::causal;
            c.mask_type = GGML_TYPE_F16;
            c.q = q_layout::permuted;
            c.kv_views = true;
            c.seed = seed++;
            check_case(c);
        }
}

// V rows of another size than K's; scores large enough that the row maximum matters.
TEST(flash_attn, value_head_size_differs) {
    fa_case c;
    c.d = 80;
    c.dv = 48;
    c.n_q = 5;
    c.n_kv = 70;
    c.n_head_kv = 2;
    c.mask = mask_kind::random;
    c.scale = 3.0f;
    c.seed = 300;
    check_case(c);
    c.kv_type = GGML_TYPE_Q8_0;
    c.d = 96;
    c.dv = 32;
    c.kv_views = true;
    c.seed = 301;
    check_case(c);
    c.kv_type = GGML_TYPE_F16;  // rows that are no multiple of 8 elements
    c.d = 36;
    c.dv = 20;
    c.mask_type = GGML_TYPE_F16;
    c.seed = 302;
    check_case(c);
}

// Decode shape at a longer context: with 2 threads the cells are split in chunks whose
// partial results are merged; a mask that shows only a prefix leaves some chunks empty.
TEST(flash_attn, decode_long_context_chunks) {
    uint64_t seed = 400;
    for (mask_kind m : {mask_kind::none, mask_kind::prefix, mask_kind::random}) {
        for (int64_t hkv : {1, 4}) {
            fa_case c;
            c.n_q = 1;
            c.n_kv = 1000;
            c.n_head_kv = hkv;
            c.mask = m;
            c.kv_views = true;
            c.seed = seed++;
            check_case(c);
        }
    }
}

// Head groups that do not fill a unit evenly: 3 query heads per kv head, and 40 query heads on
// one kv head (more than one unit's worth of rows: the group is split in head blocks).
TEST(flash_attn, odd_head_groups) {
    uint64_t seed = 600;
    for (int64_t n_q : {1, 5}) {
        fa_case c;
        c.n_q = n_q;
        c.n_kv = 300;
        c.n_head = 6;
        c.n_head_kv = 2;
        c.mask = mask_kind::causal;
        c.kv_views = true;
        c.seed = seed++;
        check_case(c);
        c.n_head = 40;
        c.n_head_kv = 1;
        c.d = c.dv = 40;
        c.q = q_layout::permuted;
        c.seed = seed++;
        check_case(c);
    }
}

// Soft-capped scores: caps that bite hard to barely, every K/V type, masks, decode (with and
// without chunks of the cells) and prompt shapes.
TEST(flash_attn, softcap) {
    struct sc { int64_t n_q, n_kv, hkv; float scale, cap; ggml_type t; mask_kind m; };
    const sc list[] = {
        {1, 7, 8, 0.125f, 1.0f, GGML_TYPE_F16, mask_kind::none},
        {1, 1000, 4, 1.0f, 5.0f, GGML_TYPE_F16, mask_kind::prefix},
        {1, 300, 1, 0.125f, 50.0f, GGML_TYPE_Q8_0, mask_kind::random},
        {5, 33, 4, 1.0f, 30.0f, GGML_TYPE_F32, mask_kind::causal},
        {64, 70, 8, 0.5f, 2.0f, GGML_TYPE_F16, mask_kind::causal},
        {64, 300, 2, 1.0f, 50.0f, GGML_TYPE_Q8_0, mask_kind::rows_masked},
    };
    uint64_t seed = 800;
    for (const sc & e : list) {
        fa_case c;
        c.n_q = e.n_q;
        c.n_kv = e.n_kv;
        c.n_head_kv = e.hkv;
        c.scale = e.scale;
        c.softcap = e.cap;
        c.kv_type = e.t;
        c.mask = e.m;
        c.mask_type = seed % 2 ? GGML_TYPE_F16 : GGML_TYPE_F32;
        c.kv_views = seed % 2 == 0;
        c.q = static_cast<q_layout>(seed % 3);
        c.seed = seed++;
        check_case(c);
    }
}

// Sliding-window masks (Gemma, Phi-3 local layers): each query row sees the window of cells
// ending at its own position, so the cells before the window are masked in every row — on the
// decode path (with and without chunks of the cells), a chunk of queries and a prompt, with and
// without a soft-cap.
TEST(flash_attn, sliding_window) {
    struct sw { int64_t n_q, n_kv, hkv, window; float cap; ggml_type t; };
    const sw list[] = {
        {1, 40, 4, 16, 0.0f, GGML_TYPE_F16},  {1, 1000, 1, 512, 0.0f, GGML_TYPE_F16},
        {1, 1000, 4, 7, 10.0f, GGML_TYPE_Q8_0}, {5, 70, 2, 16, 0.0f, GGML_TYPE_F32},
        {64, 300, 4, 16, 10.0f, GGML_TYPE_F16}, {64, 64, 8, 1, 0.0f, GGML_TYPE_F16},
    };
    uint64_t seed = 900;
    for (const sw & e : list) {
        fa_case c;
        c.n_q = e.n_q;
        c.n_kv = e.n_kv;
        c.n_head_kv = e.hkv;
        c.window = e.window;
        c.softcap = e.cap;
        c.kv_type = e.t;
        c.mask = mask_kind::window;
        c.mask_type = seed % 2 ? GGML_TYPE_F16 : GGML_TYPE_F32;
        c.kv_views = true;
        c.q = q_layout::permuted;
        c.seed = seed++;
        check_case(c);
    }
}

// Every query row masked, and masks whose rows past n_q are NaN (never read).
TEST(flash_attn, fully_masked) {
    fa_case c;
    c.n_q = 4;
    c.n_kv = 20;
    c.mask = mask_kind::causal;
    c.seed = 500;
    fa_setup s = make_setup(c);
    std::vector<double> all_inf(static_cast<size_t>(ggml_nelements(s.mask)), -INFINITY);
    bops::write_tensor(s.mask, all_inf);
    std::vector<float> got(static_cast<size_t>(ggml_nelements(s.out)));
    for (backend_entry & be : backends()) {
        if (!be.is_cpu()) s.buf = test_devices::move_ctx_tensors(s.ctx.get(), be.buffer_type());
        if (!be.supports_graph(s.gf)) continue;  // never the CPU
        ASSERT_EQ(be.compute(s.gf), GGML_STATUS_SUCCESS) << be.label;
        ggml_backend_tensor_get(s.out, got.data(), 0, got.size() * sizeof(float));
        EXPECT_TRUE(std::all_of(got.begin(), got.end(), [](float x) { return x == 0.0f; })) << be.label;
    }
}

// In a graph placed by the graph allocator, next to the unfused attention of the same inputs
// (mul_mat k.q, soft_max_ext with the mask, mul_mat with v transposed): the same result.
TEST(flash_attn, equals_unfused_attention_in_a_graph) {
    const int64_t d = 32, n_head = 4, n_head_kv = 2, n_tok = 9;
    const float scale = 0.3f;
    ggml_init_params ip;
    ip.mem_size = 32 * ggml_tensor_overhead() + ggml_graph_overhead();
    ip.no_alloc = true;
    ggml_context_ptr ctx(ggml_init(ip));
    ggml_context * c = ctx.get();
    ggml_tensor * q = ggml_new_tensor_3d(c, GGML_TYPE_F32, d, n_head, n_tok);     // as after rope
    ggml_tensor * k = ggml_new_tensor_3d(c, GGML_TYPE_F32, d, n_head_kv, n_tok);
    ggml_tensor * v = ggml_new_tensor_3d(c, GGML_TYPE_F32, d, n_head_kv, n_tok);
    ggml_tensor * mask = ggml_new_tensor_2d(c, GGML_TYPE_F16, n_tok, n_tok);
    for (ggml_tensor * t : {q, k, v, mask}) ggml_set_input(t);
    ggml_tensor * qp = ggml_permute(c, q, 0, 2, 1, 3);                          // [d, n_tok, n_head]
    ggml_tensor * kp = ggml_permute(c, k, 0, 2, 1, 3);                          // [d, n_tok, n_head_kv]
    ggml_tensor * vp = ggml_permute(c, v, 0, 2, 1, 3);
    ggml_tensor * kq = ggml_soft_max_ext(c, ggml_mul_mat(c, kp, qp), mask, scale);  // [n_kv, n_tok, n_head]
    ggml_tensor * vt = ggml_cont(c, ggml_permute(c, v, 1, 2, 0, 3));            // [n_kv, d, n_head_kv]
    ggml_tensor * unfused = ggml_cont(c, ggml_permute(c, ggml_mul_mat(c, vt, kq), 0, 2, 1, 3));  // [d, n_head, n_tok]
    ggml_tensor * fused = ggml_flash_attn_ext(c, qp, kp, vp, mask, scale);
    ggml_set_output(unfused);
    ggml_set_output(fused);
    ggml_cgraph * gf = ggml_new_graph(c);
    ggml_build_forward_expand(gf, unfused);
    ggml_build_forward_expand(gf, fused);
    std::vector<std::vector<double>> inputs;
    rng r(700);
    for (ggml_tensor * t : {q, k, v}) {
        inputs.emplace_back(static_cast<size_t>(ggml_nelements(t)));
        for (double & e : inputs.back()) e = static_cast<float>(r.uniform(-2, 2));
    }
    inputs.emplace_back(static_cast<size_t>(n_tok * n_tok));
    for (int64_t i = 0; i < n_tok; ++i)
        for (int64_t j = 0; j < n_tok; ++j) inputs.back()[static_cast<size_t>(i * n_tok + j)] = j <= i ? 0.0 : -INFINITY;
    for (backend_entry & be : backends()) {
        if (!be.is_cpu() && !be.supports_graph(gf)) continue;
        for (ggml_tensor * t = ggml_get_first_tensor(c); t; t = ggml_get_next_tensor(c, t)) {
            t->data = nullptr;  // placed anew in this device's memory
            t->buffer = nullptr;
        }
        ggml_gallocr galloc(be.buffer_type());
        ASSERT_TRUE(galloc.alloc_graph(gf)) << be.label;
        ggml_tensor * const in[] = {q, k, v, mask};
        for (size_t i = 0; i < 4; ++i) bops::write_tensor(in[i], inputs[i]);
        ASSERT_EQ(be.compute(gf), GGML_STATUS_SUCCESS) << be.label;
        const bops::dt a = bops::read_tensor(unfused), b = bops::read_tensor(fused);
        ASSERT_EQ(a.ne, b.ne);
        double err = 0.0, big = 0.0;
        for (size_t e = 0; e < a.v.size(); ++e) {
            err = std::max(err, std::fabs(a.v[e] - b.v[e]));
            big = std::max(big, std::fabs(a.v[e]));
        }
        EXPECT_LE(err, 1e-5 * big) << be.label;
    }
}

// Query heads per kv head 1..16 (powers of two and not), head sizes 64, 80, 96, 128, 256 and 40,
// every K/V type, decode (one row; 1000 cells: chunks of the cells on several threads) and a few
// query rows, with and without a soft-cap: the GEMM rows of one kv head in every block shape.
TEST(flash_attn, gqa_ratios_and_head_sizes) {
    const int64_t ratios[] = {1, 2, 3, 4, 5, 6, 7, 8, 12, 16};
    const int64_t ds[] = {64, 80, 96, 128, 256, 40};
    const ggml_type types[] = {GGML_TYPE_F16, GGML_TYPE_Q8_0, GGML_TYPE_F32};
    uint64_t k = 0;
    for (int64_t hpg : ratios)
        for (int64_t n_q : {1, 3}) {
            fa_case c;
            c.n_head_kv = hpg > 8 ? 1 : 2;
            c.n_head = hpg * c.n_head_kv;
            c.n_q = n_q;
            c.n_kv = n_q == 1 && k % 3 == 0 ? 1000 : 70 + int64_t(k % 4) * 41;
            c.d = c.dv = ds[k % 6];
            c.kv_type = types[(k / 2) % 3];
            if (c.kv_type == GGML_TYPE_Q8_0 && c.d % 32 != 0) c.kv_type = GGML_TYPE_F16;
            c.mask = k % 2 ? mask_kind::causal : mask_kind::none;
            c.mask_type = (k / 4) % 2 ? GGML_TYPE_F16 : GGML_TYPE_F32;
            c.kv_views = k % 3 != 1;
            c.q = static_cast<q_layout>(k % 3);
            c.scale = 1.0f / std::sqrt(static_cast<float>(c.d));
            if (k % 5 == 2) {
                c.scale = 1.0f;
                c.softcap = 20.0f;
            }
            c.seed = 1000 + k++;
            check_case(c);
        }
}

// One decode step of several sequences in a unified KV cache: each query row sees only its
// sequence's cells (disjoint), or a copied prefix shared by all and its own cells after it; a
// prompt chunk of one sequence next to decode rows of the others; a sequence with no cell at all
// (its rows are zero); few cells (not a multiple of the tile) and many (chunks of the cells).
TEST(flash_attn, sequences_in_one_step) {
    struct sq { int64_t n_q, n_kv, n_seq, n_seq_cells, shared, chunk_rows, hkv, hpg; ggml_type t; float cap; };
    const sq list[] = {
        {8, 300, 8, 8, 0, 0, 4, 8, GGML_TYPE_F16, 0.0f},      // disjoint decode rows
        {8, 300, 8, 8, 200, 0, 4, 8, GGML_TYPE_F16, 0.0f},    // shared prefix + own cells
        {8, 37, 8, 8, 16, 0, 2, 4, GGML_TYPE_F32, 0.0f},      // few cells
        {8, 1000, 8, 8, 512, 0, 4, 8, GGML_TYPE_Q8_0, 0.0f},  // long prefix
        {4, 1000, 4, 4, 0, 0, 2, 5, GGML_TYPE_F16, 10.0f},    // disjoint, soft-capped, 5 heads per kv head
        {8, 120, 8, 7, 0, 0, 2, 8, GGML_TYPE_F16, 0.0f},      // sequence 7 has no cell
        {8, 120, 8, 7, 40, 0, 1, 3, GGML_TYPE_F32, 0.0f},     // ... but the shared prefix
        {20, 400, 5, 5, 100, 16, 2, 4, GGML_TYPE_F16, 0.0f},  // a prompt chunk of 16 rows + decode rows
        {12, 90, 3, 3, 30, 9, 4, 2, GGML_TYPE_Q8_0, 5.0f},    // same, fewer cells, soft-capped
    };
    uint64_t seed = 1100;
    for (const sq & e : list) {
        fa_case c;
        c.n_q = e.n_q;
        c.n_kv = e.n_kv;
        c.n_head_kv = e.hkv;
        c.n_head = e.hkv * e.hpg;
        c.kv_type = e.t;
        c.softcap = e.cap;
        c.scale = e.cap > 0.0f ? 1.0f : 0.125f;
        c.mask = mask_kind::sequences;
        c.n_seq = e.n_seq;
        c.n_seq_cells = e.n_seq_cells;
        c.shared = e.shared;
        c.chunk_rows = e.chunk_rows;
        c.mask_type = seed % 2 ? GGML_TYPE_F16 : GGML_TYPE_F32;
        c.kv_views = true;
        c.q = q_layout::permuted;
        c.seed = seed++;
        check_case(c);
    }
}

// The op is recorded as documented: name, sources, scale, result shape.
TEST(flash_attn, builder_records_op) {
    ggml_init_params ip;
    ip.mem_size = 8 * ggml_tensor_overhead();
    ip.no_alloc = true;
    ggml_context_ptr ctx(ggml_init(ip));
    ggml_tensor * q = ggml_new_tensor_3d(ctx.get(), GGML_TYPE_F32, 64, 3, 8);
    ggml_tensor * k = ggml_new_tensor_3d(ctx.get(), GGML_TYPE_F16, 64, 10, 2);
    ggml_tensor * v = ggml_new_tensor_3d(ctx.get(), GGML_TYPE_Q8_0, 96, 10, 2);
    ggml_tensor * m = ggml_new_tensor_2d(ctx.get(), GGML_TYPE_F16, 10, 4);
    ggml_tensor * r = ggml_flash_attn_ext(ctx.get(), q, k, v, m, 0.5f);
    EXPECT_STREQ(ggml_op_name(r->op), "FLASH_ATTN_EXT");
    EXPECT_EQ(r->type, GGML_TYPE_F32);
    EXPECT_EQ(r->ne[0], 96);
    EXPECT_EQ(r->ne[1], 8);
    EXPECT_EQ(r->ne[2], 3);
    EXPECT_EQ(r->ne[3], 1);
    EXPECT_EQ(r->src[0], q);
    EXPECT_EQ(r->src[1], k);
    EXPECT_EQ(r->src[2], v);
    EXPECT_EQ(r->src[3], m);
    EXPECT_EQ(ggml_get_flash_attn_scale(r), 0.5f);
    EXPECT_EQ(ggml_get_flash_attn_softcap(r), 0.0f);  // no soft-cap
    EXPECT_FALSE(ggml_op_is_metadata(r->op));
    EXPECT_EQ(ggml_get_flash_attn_softcap(ggml_flash_attn_ext(ctx.get(), q, k, v, m, 0.5f, 30.0f)), 30.0f);
}

}  // namespace
