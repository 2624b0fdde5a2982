// Host-side parts of the CUDA matrix products and attention (ggml/cuda/*-plan.h,
// mul-mat-id-group.cuh): the launch plans the kernels rely on, and host emulations of the
// kernels' index arithmetic with the same __host__ __device__ code:
//   - the quantized mat-vec: rows staged stage by stage as the kernel copies them, thread t of a
//     stage decoding run t from the staged bytes, dp4a against Q8 activations — equal to the
//     double-precision product of the dequantized rows and activations, for every type and for
//     k of one partial stage, one full stage and several stages;
//   - the grouping of MUL_MAT_ID pairs by expert (counts, offsets, permutation, active experts,
//     GEMM tiles), with ids out of range;
//   - the GEMM row tiles and the flash-attention split plans.
// Nothing here needs a GPU.
#include "cuda/flash-attn-plan.h"
#include "cuda/mul-mat-id-group.cuh"
#include "cuda/mul-mat-plan.h"
#include "cuda/quants-decode.cuh"

#include "ggml/quants.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

namespace {

constexpr ggml_type k_quant_types[] = {GGML_TYPE_Q4_0, GGML_TYPE_Q4_1, GGML_TYPE_Q5_0,  GGML_TYPE_Q5_1,  GGML_TYPE_Q8_0,
                                       GGML_TYPE_Q2_K, GGML_TYPE_Q3_K, GGML_TYPE_Q4_K,  GGML_TYPE_Q5_K,  GGML_TYPE_Q6_K,
                                       GGML_TYPE_IQ4_NL, GGML_TYPE_IQ4_XS, GGML_TYPE_MXFP4};

TEST(CudaPlan, TypeGeometryMatchesGgml) {
    for (ggml_type t : k_quant_types) {
        const mm_type_geom g = mm_type_geom_of(t);
        EXPECT_EQ(g.qk, ggml_blck_size(t)) << ggml_type_name(t);
        EXPECT_EQ(size_t(g.bytes), ggml_type_size(t)) << ggml_type_name(t);
        EXPECT_TRUE(g.quantized);
        qd_dispatch_quant(t, [&](auto blk) {
            using B = decltype(blk);
            EXPECT_EQ(B::qk, g.qk);
            EXPECT_EQ(B::bytes, g.bytes);
            EXPECT_EQ(B::type, t);
        });
    }
    for (ggml_type t : {GGML_TYPE_F32, GGML_TYPE_F16, GGML_TYPE_BF16}) {
        EXPECT_EQ(size_t(mm_type_geom_of(t).bytes), ggml_type_size(t));
        EXPECT_FALSE(mm_type_geom_of(t).quantized);
    }
    EXPECT_EQ(mm_type_geom_of(GGML_TYPE_Q8_K).qk, 0);
    EXPECT_EQ(mm_type_geom_of(GGML_TYPE_I32).qk, 0);
}

TEST(CudaPlan, MatVecColumnsAndInstances) {
    EXPECT_EQ(mmv_nc_for(1), 1);
    EXPECT_EQ(mmv_nc_for(2), 2);
    EXPECT_EQ(mmv_nc_for(3), 4);
    EXPECT_EQ(mmv_nc_for(5), 8);
    EXPECT_EQ(mmv_nc_for(16), 8);
    EXPECT_TRUE(mm_use_mat_vec(GGML_TYPE_Q4_K, 16));
    EXPECT_FALSE(mm_use_mat_vec(GGML_TYPE_Q4_K, 17));
    EXPECT_TRUE(mm_use_mat_vec(GGML_TYPE_F16, 8));
    EXPECT_FALSE(mm_use_mat_vec(GGML_TYPE_F16, 9));
    for (int nc : {1, 2, 4, 8}) EXPECT_GE(mmv_rows_for(nc) * nc, 1);
    EXPECT_EQ(mmvf_grid_x(1000, 1), mm_ceil_div(1000, 8));
    EXPECT_TRUE(moe_use_mat_vec(GGML_TYPE_Q4_K, 1));
    EXPECT_TRUE(moe_use_mat_vec(GGML_TYPE_Q4_K, 8));
    EXPECT_FALSE(moe_use_mat_vec(GGML_TYPE_Q4_K, 9));
    EXPECT_FALSE(moe_use_mat_vec(GGML_TYPE_F16, 64));
    EXPECT_TRUE(moe_use_mat_vec(GGML_TYPE_F32, 64));
    EXPECT_TRUE(moe_use_mat_vec(GGML_TYPE_BF16, 64));
}

TEST(CudaPlan, QuantizedMatVecStages) {
    for (ggml_type t : k_quant_types) {
        const mm_type_geom g = mm_type_geom_of(t);
        for (int64_t k : {int64_t(g.qk), int64_t(256), int64_t(4096), int64_t(4096 + 256), int64_t(14336)}) {
            for (int64_t nc : {1, 3, 8, 16}) {
                const mmvq_plan pl = mmvq_make_plan(t, k, 77, nc);
                const std::string what = std::string(ggml_type_name(t)) + " k=" + std::to_string(k);
                EXPECT_EQ((int64_t(mmvq_stage_runs) * 32) % g.qk, 0) << what;  // stages hold whole blocks
                EXPECT_EQ(pl.row_bytes, int64_t(ggml_row_size(t, k))) << what;
                EXPECT_GE(pl.n_stages * pl.stage_bytes, pl.row_bytes) << what;
                EXPECT_LT((pl.n_stages - 1) * pl.stage_bytes, pl.row_bytes) << what;
                EXPECT_GE(pl.n_stages * mmvq_stage_runs, pl.n_runs) << what;
                EXPECT_GE(pl.n_buffers, 1);
                EXPECT_LE(pl.n_buffers, std::min<int64_t>(mmvq_max_buffers, pl.n_stages));
                EXPECT_EQ(pl.smem_row_bytes % 16, 0);
                EXPECT_GE(pl.smem_row_bytes, std::min(pl.stage_bytes, pl.row_bytes) + 16);
                EXPECT_LE(pl.smem_bytes, size_t(48 * 1024)) << what;  // no opt-in needed
                EXPECT_GE(pl.grid_x * pl.rows, 77);
                EXPECT_EQ(pl.nc, mmv_nc_for(nc));
            }
        }
    }
}

// Activations as mm_quantize_q8 makes them.
struct q8_rows {
    std::vector<int8_t> q;
    std::vector<float> d, s;
};

q8_rows quantize_q8(const std::vector<float> & x) {
    q8_rows r;
    r.q.resize(x.size());
    for (size_t b = 0; b < x.size() / 32; ++b) {
        float amax = 0.0f;
        for (int j = 0; j < 32; ++j) amax = std::fmax(amax, std::fabs(x[32 * b + j]));
        const float d = amax / 127.0f, id = d > 0.0f ? 1.0f / d : 0.0f;
        int sum = 0;
        for (int j = 0; j < 32; ++j) {
            const int q = std::clamp(int(std::round(x[32 * b + j] * id)), -127, 127);
            r.q[32 * b + j] = int8_t(q);
            sum += q;
        }
        r.d.push_back(d);
        r.s.push_back(d * float(sum));
    }
    return r;
}

// One row's product as the quantized mat-vec kernel computes it: stage by stage into an aligned
// buffer (as cp.async lays it out), thread t decoding run t of the stage from there.
template <typename B> double emulate_row(const mmvq_plan & pl, const uint8_t * row, const q8_rows & a) {
    constexpr int runs_per_block = B::qk / 32;
    std::vector<uint8_t> smem(size_t(pl.smem_row_bytes) + 16);
    uint8_t * buf = smem.data() + (16 - reinterpret_cast<uintptr_t>(smem.data()) % 16) % 16;
    double total = 0.0;
    for (int64_t st = 0; st < pl.n_stages; ++st) {
        const int64_t off = st * pl.stage_bytes, n = std::min(pl.stage_bytes, pl.row_bytes - off);
        std::memset(buf, 0xAB, size_t(pl.smem_row_bytes));
        std::memcpy(buf, row + off, size_t(n));
        for (int t = 0; t < mmvq_stage_runs; ++t) {
            const int64_t run = st * mmvq_stage_runs + t;
            if (run >= pl.n_runs) continue;
            qd_wq w;
            B::run(buf + (t / runs_per_block) * B::bytes, t % runs_per_block, w);
            int aw[8];
            std::memcpy(aw, a.q.data() + 32 * run, 32);
            total += qd_dot_run<B::sub16, B::has_m>(w, aw, a.d[size_t(run)], a.s[size_t(run)]);
        }
    }
    return total;
}

TEST(CudaPlan, QuantizedMatVecEmulationMatchesReference) {
    std::mt19937 rng(42);
    std::normal_distribution<float> nd(0.0f, 1.0f);
    for (ggml_type t : k_quant_types) {
        const int64_t qk = ggml_blck_size(t);
        for (int64_t k : {qk * 3, int64_t(4096), int64_t(4096 * 2 + 512)}) {
            const size_t nk = static_cast<size_t>(k);
            std::vector<float> wf(nk), x(nk), wd(nk);
            for (auto & v : wf) v = nd(rng);
            for (auto & v : x) v = nd(rng);
            std::vector<uint8_t> w(ggml_row_size(t, k));
            ASSERT_GT(ggml_quantize_chunk(t, wf.data(), w.data(), 0, 1, k, nullptr), 0u);
            ggml_get_type_traits(t).to_float(w.data(), wd.data(), k);
            const q8_rows a = quantize_q8(x);
            double ref = 0.0, mag = 0.0;
            for (int64_t i = 0; i < k; ++i) {
                const double xa = double(a.d[size_t(i / 32)]) * a.q[size_t(i)];
                ref += double(wd[size_t(i)]) * xa;
                mag += std::fabs(double(wd[size_t(i)]) * xa);
            }
            const mmvq_plan pl = mmvq_make_plan(t, k, 1, 1);
            double got = 0.0;
            qd_dispatch_quant(t, [&](auto blk) { got = emulate_row<decltype(blk)>(pl, w.data(), a); });
            EXPECT_NEAR(got, ref, 1e-5 * mag + 1e-6) << ggml_type_name(t) << " k=" << k;
        }
    }
}

TEST(CudaPlan, GemmTiles) {
    for (int64_t m : {int64_t(1), int64_t(63), int64_t(64), int64_t(1000), int64_t(4096), int64_t(14336),
                      int64_t(128256)}) {
        for (int64_t k : {int64_t(32), int64_t(4096), int64_t(14336), int64_t(1) << 20}) {
            const mm_gemm_tiles t = mm_gemm_plan_tiles(m, k, mm_gemm_weight_budget);
            EXPECT_GE(t.rows * t.count, m);
            EXPECT_LT((t.count - 1) * t.rows, m);
            EXPECT_TRUE(t.rows == m || t.rows % 64 == 0);
            if (t.rows > 64) {
                EXPECT_LE(size_t(t.rows * k * 2), mm_gemm_weight_budget + size_t(64 * k * 2));
            }
        }
    }
    EXPECT_EQ(mm_gemm_plan_tiles(14336, 4096, mm_gemm_weight_budget).count, 4);
    EXPECT_EQ(mm_gemm_plan_tiles(4096, 4096, mm_gemm_weight_budget).count, 1);
}

// The grouping kernel's three steps, run one thread after the other.
struct grouping {
    std::vector<int32_t> count, offset, perm, active;
    std::vector<moe_tile> tiles;
    int32_t n_active = 0, n_tiles = 0;
    bool valid = false;
};

grouping group_pairs(const std::vector<int32_t> & ids, int64_t ids_ld, int n_used, int64_t n_t, int n_expert,
                     int tile_cols, std::mt19937 & rng) {
    const int64_t n_pairs = n_used * n_t;
    grouping g;
    g.count.assign(size_t(n_expert + 1), 0);
    g.offset.assign(size_t(n_expert + 1), -1);
    g.perm.assign(size_t(n_pairs), -1);
    g.active.assign(size_t(n_expert), -1);
    g.tiles.resize(size_t(moe_max_tiles(n_pairs, n_expert, tile_cols)));
    for (int64_t p = 0; p < n_pairs; ++p) g.count[size_t(moe_bucket(ids.data(), ids_ld, n_used, n_expert, p))]++;
    g.valid = moe_plan_groups(g.count.data(), n_expert, tile_cols, g.offset.data(), g.active.data(), &g.n_active,
                              g.tiles.data(), &g.n_tiles);
    // the atomics of step 3 run in any order: a shuffled order of the pairs
    std::vector<int64_t> order(static_cast<size_t>(n_pairs));
    for (int64_t p = 0; p < n_pairs; ++p) order[size_t(p)] = p;
    std::shuffle(order.begin(), order.end(), rng);
    std::vector<int32_t> fill(size_t(n_expert + 1), 0);
    for (int64_t p : order) {
        const int e = moe_bucket(ids.data(), ids_ld, n_used, n_expert, p);
        g.perm[size_t(g.offset[size_t(e)] + fill[size_t(e)]++)] = int32_t(p);
    }
    return g;
}

TEST(CudaPlan, ExpertGrouping) {
    std::mt19937 rng(5);
    struct shape {
        int n_used;
        int64_t n_t;
        int n_expert;
        int bad_every;  // every bad_every-th id out of range (0: none)
    };
    for (const shape & sh : {shape{8, 1, 64, 0}, shape{2, 100, 8, 0}, shape{8, 512, 128, 0}, shape{4, 37, 16, 7},
                             shape{1, 3, 1, 0}, shape{6, 70, 64, 0}}) {
        const int64_t ids_ld = sh.n_used + 3;  // padded rows: the padding must not be read
        std::vector<int32_t> ids(size_t(ids_ld * sh.n_t), 999999);
        int64_t n_bad = 0;
        for (int64_t t = 0; t < sh.n_t; ++t) {
            for (int i = 0; i < sh.n_used; ++i) {
                int32_t e = int32_t(rng() % uint32_t(sh.n_expert));
                if (sh.n_expert > 4) e = e % (sh.n_expert / 2);  // some experts never chosen
                if (sh.bad_every && (t * sh.n_used + i) % sh.bad_every == 0) {
                    e = (t % 2) ? -1 : sh.n_expert + 5;
                    ++n_bad;
                }
                ids[size_t(t * ids_ld + i)] = e;
            }
        }
        const int64_t n_pairs = sh.n_used * sh.n_t;
        const grouping g = group_pairs(ids, ids_ld, sh.n_used, sh.n_t, sh.n_expert, moe_gemm_tile_cols, rng);
        EXPECT_EQ(g.count[size_t(sh.n_expert)], n_bad);
        EXPECT_EQ(g.offset[size_t(sh.n_expert)], n_pairs - n_bad);
        // perm: a permutation, expert by expert
        std::vector<int> seen(size_t(n_pairs), 0);
        for (int32_t p : g.perm) {
            ASSERT_GE(p, 0);
            ASSERT_LT(p, n_pairs);
            seen[size_t(p)]++;
        }
        for (int v : seen) EXPECT_EQ(v, 1);
        for (int e = 0; e <= sh.n_expert; ++e) {
            for (int32_t j = g.offset[size_t(e)]; j < g.offset[size_t(e)] + g.count[size_t(e)]; ++j) {
                EXPECT_EQ(moe_bucket(ids.data(), ids_ld, sh.n_used, sh.n_expert, g.perm[size_t(j)]), e);
            }
        }
        if (n_bad > 0) {  // an id out of range: nothing to compute, dst stays as it was
            EXPECT_FALSE(g.valid);
            EXPECT_EQ(g.n_active, 0);
            EXPECT_EQ(g.n_tiles, 0);
            continue;
        }
        EXPECT_TRUE(g.valid);
        // active experts, ascending; tiles cover each expert's pairs once, in order
        int32_t na = 0, covered = 0;
        for (int e = 0; e < sh.n_expert; ++e) {
            if (g.count[size_t(e)] > 0) {
                EXPECT_EQ(g.active[size_t(na++)], e);
            }
        }
        EXPECT_EQ(g.n_active, na);
        EXPECT_LE(g.n_tiles, moe_max_tiles(n_pairs, sh.n_expert, moe_gemm_tile_cols));
        for (int32_t i = 0; i < g.n_tiles; ++i) {
            const moe_tile & t = g.tiles[size_t(i)];
            EXPECT_EQ(t.col0, covered);
            EXPECT_GT(t.n_cols, 0);
            EXPECT_LE(t.n_cols, moe_gemm_tile_cols);
            EXPECT_GE(t.col0, g.offset[size_t(t.expert)]);
            EXPECT_LE(t.col0 + t.n_cols, g.offset[size_t(t.expert)] + g.count[size_t(t.expert)]);
            covered += t.n_cols;
        }
        EXPECT_EQ(covered, n_pairs - n_bad);
    }
}

TEST(CudaPlan, ExpertGroupingLayout) {
    const moe_group_layout l = moe_group_layout_of(128, 4096, moe_max_tiles(4096, 128, moe_gemm_tile_cols));
    const size_t offs[] = {l.count, l.offset, l.perm, l.active, l.n_active, l.n_tiles, l.tiles, l.bytes};
    for (size_t i = 0; i + 1 < sizeof(offs) / sizeof(offs[0]); ++i) {
        EXPECT_EQ(offs[i] % 16, 0u);
        EXPECT_LT(offs[i], offs[i + 1]);
    }
    EXPECT_GE(l.offset - l.count, 129 * 4u);
    EXPECT_GE(l.active - l.perm, 4096 * 4u);
    EXPECT_GE(l.bytes - l.tiles, size_t(moe_max_tiles(4096, 128, moe_gemm_tile_cols)) * sizeof(moe_tile));
}

TEST(CudaPlan, FlashAttentionPlans) {
    struct shape {
        int64_t d, dv, n_q, n_head, n_head_kv, n_kv;
    };
    for (const shape & s : {shape{128, 128, 1, 32, 8, 4096}, shape{128, 128, 512, 32, 8, 512}, shape{64, 64, 1, 16, 16, 100},
                            shape{80, 80, 3, 32, 32, 33}, shape{256, 256, 1, 8, 4, 1 << 20}, shape{192, 128, 7, 16, 1, 1000},
                            shape{96, 96, 1, 24, 8, 0}, shape{128, 128, 8, 32, 4, 8192}}) {
        const fa_plan pl = fa_make_plan(s.d, s.dv, s.n_q, s.n_head, s.n_head_kv, s.n_kv, 132);
        const int64_t rows = s.n_head / s.n_head_kv * s.n_q;
        EXPECT_EQ(pl.rows, rows);
        EXPECT_GE(pl.row_blocks * (fa_threads / 32) * pl.rw, rows);
        EXPECT_LT((pl.row_blocks - 1) * (fa_threads / 32) * pl.rw, std::max<int64_t>(rows, 1));
        EXPECT_GE(32 * pl.nv, s.dv);
        EXPECT_EQ(pl.split_cells % fa_tile, 0);
        EXPECT_GE(pl.n_splits, 1);
        EXPECT_LE(pl.n_splits, fa_max_splits);
        EXPECT_GE(pl.n_splits * pl.split_cells, s.n_kv);
        if (s.n_kv > 0) {
            EXPECT_LT((pl.n_splits - 1) * pl.split_cells, s.n_kv);  // no empty split
        }
        EXPECT_LE(pl.smem_bytes, size_t(227 * 1024));
        EXPECT_EQ(pl.partial_floats, pl.n_splits > 1 ? size_t(s.n_q * s.n_head * pl.n_splits * (s.dv + 2)) : 0u);
    }
    // decode fills the GPU by splitting the cells; a prompt has blocks enough
    const fa_plan dec = fa_make_plan(128, 128, 1, 32, 8, 4096, 132);
    EXPECT_GE(8 * dec.row_blocks * dec.n_splits, 132);
    EXPECT_EQ(fa_make_plan(128, 128, 512, 32, 8, 512, 132).n_splits, 1);
    EXPECT_TRUE(fa_head_sizes_supported(64, 64));
    EXPECT_TRUE(fa_head_sizes_supported(80, 80));
    EXPECT_TRUE(fa_head_sizes_supported(96, 96));
    EXPECT_TRUE(fa_head_sizes_supported(192, 128));
    EXPECT_TRUE(fa_head_sizes_supported(256, 256));
    EXPECT_FALSE(fa_head_sizes_supported(512, 512));
    EXPECT_FALSE(fa_head_sizes_supported(66, 64));
}

}  // namespace
