// The CUDA matrix products and attention on a GPU, against the CPU backend on the same graphs,
// on the kernel paths the generic op tests may not reach: every quantized type at every column
// count of the mat-vec passes (1 … 16) and past them (the dequantize + cuBLAS GEMM), k over
// several shared-memory stages, rows not 16-byte aligned (the byte-copy staging), float weights
// with k % 8 != 0, broadcast batches (merged and batched GEMMs), MUL_MAT_ID in each mode (one
// token per pair, grouped mat-vec, grouped tensor-core GEMM; F32 experts in passes) with ids
// out of range, and FLASH_ATTN_EXT with head sizes 64 … 256 (D != Dv), F16 / F32 / Q8_0 K/V,
// masks with fully masked rows, soft-capping, decode splits.
//
// Bounds compare the GPU with the CPU backend (both quantize activations, differently): NMSE
// 4e-4 for quantized weights, 2e-6 for F16, 2e-4 for BF16, 1e-9 for F32; attention
// max |gpu - cpu| <= 2e-5 max |cpu|. Without a GPU every test skips, naming the reason.
#include "test-devices.h"

#include "ggml/backend.h"
#include "ggml/cpu.h"
#include "ggml/ggml.h"
#include "ggml/quants.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace {

struct rng {
    uint64_t s;
    double uniform() {  // [-1, 1)
        uint64_t z = (s += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        z ^= z >> 31;
        return double(z >> 11) / double(1ull << 53) * 2.0 - 1.0;
    }
};

constexpr ggml_type k_quant_types[] = {GGML_TYPE_Q4_0, GGML_TYPE_Q4_1, GGML_TYPE_Q5_0,  GGML_TYPE_Q5_1,  GGML_TYPE_Q8_0,
                                       GGML_TYPE_Q2_K, GGML_TYPE_Q3_K, GGML_TYPE_Q4_K,  GGML_TYPE_Q5_K,  GGML_TYPE_Q6_K,
                                       GGML_TYPE_IQ4_NL, GGML_TYPE_IQ4_XS, GGML_TYPE_MXFP4};

double bound_of(ggml_type t) {
    switch (t) {
        case GGML_TYPE_F32: return 1e-9;
        case GGML_TYPE_F16: return 2e-6;
        case GGML_TYPE_BF16: return 2e-4;
        default: return 4e-4;
    }
}

#define REQUIRE_GPU()                                                                              \
    do {                                                                                           \
        if (test_devices::gpu_devices().empty()) GTEST_SKIP() << "no GPU device: " << test_devices::no_gpu_reason(); \
    } while (0)

test_devices::entry & cpu_entry() {
    static test_devices::entry e = [] {
        test_devices::entry x;
        x.backend = ggml_backend_cpu_init();
        x.device = x.backend->device();
        x.label = "cpu";
        return x;
    }();
    return e;
}

test_devices::entry & gpu_entry() {
    static test_devices::entry e = test_devices::make_entry(test_devices::gpu_devices().front());
    return e;
}

// A graph with one result, its context, and the bytes of every tensor that holds data.
struct op_graph {
    ggml_context_ptr ctx;
    ggml_cgraph * gf = nullptr;
    ggml_tensor * out = nullptr;
    std::vector<std::pair<ggml_tensor *, std::vector<uint8_t>>> data;
};

op_graph new_graph() {
    ggml_init_params ip;
    ip.mem_size = 64 * ggml_tensor_overhead() + ggml_graph_overhead();
    ip.no_alloc = true;
    op_graph g;
    g.ctx.reset(ggml_init(ip));
    return g;
}

// Random values in [-1, 1) (scaled) stored as t's type (quantized with the quality quantizer).
std::vector<uint8_t> random_bytes(ggml_type t, int64_t n_rows, int64_t n_per_row, rng & r, float scale = 1.0f) {
    std::vector<float> x(size_t(n_rows * n_per_row));
    for (float & v : x) v = float(r.uniform()) * scale;
    std::vector<uint8_t> out(ggml_row_size(t, n_per_row) * size_t(n_rows));
    ggml_quantize_chunk(t, x.data(), out.data(), 0, n_rows, n_per_row, nullptr);
    return out;
}

// A new tensor with random contents (rows of ne[0]).
ggml_tensor * random_tensor(op_graph & g, ggml_type t, std::initializer_list<int64_t> ne, rng & r, float scale = 1.0f) {
    int64_t n[4] = {1, 1, 1, 1};
    int i = 0;
    for (int64_t v : ne) n[i++] = v;
    ggml_tensor * x = ggml_new_tensor(g.ctx.get(), t, 4, n);
    g.data.emplace_back(x, random_bytes(t, n[1] * n[2] * n[3], n[0], r, scale));
    return x;
}

void finish(op_graph & g, ggml_tensor * out) {
    g.out = out;
    g.gf = ggml_new_graph(g.ctx.get());
    ggml_build_forward_expand(g.gf, out);
}

// Runs g on the CPU, then on the GPU; the results, and the GPU's status.
ggml_status run_both(op_graph & g, std::vector<float> & ref, std::vector<float> & got) {
    ggml_backend_buffer_ptr buf = ggml_backend_alloc_ctx_tensors(g.ctx.get(), cpu_entry().buffer_type());
    EXPECT_NE(buf, nullptr);
    for (auto & [t, bytes] : g.data) ggml_backend_tensor_set(t, bytes.data(), 0, bytes.size());
    EXPECT_EQ(cpu_entry().compute(g.gf), GGML_STATUS_SUCCESS);
    ref.resize(size_t(ggml_nelements(g.out)));
    ggml_backend_tensor_get(g.out, ref.data(), 0, ref.size() * sizeof(float));
    ggml_backend_buffer_ptr gbuf = test_devices::move_ctx_tensors(g.ctx.get(), gpu_entry().buffer_type());
    EXPECT_TRUE(gpu_entry().supports_graph(g.gf)) << "the GPU declines the graph";
    const std::vector<float> poison(ref.size(), 7.5f);
    ggml_backend_tensor_set(g.out, poison.data(), 0, poison.size() * sizeof(float));
    const ggml_status st = gpu_entry().compute(g.gf);
    got.resize(ref.size());
    ggml_backend_tensor_get(g.out, got.data(), 0, got.size() * sizeof(float));
    return st;
}

double nmse(const std::vector<float> & ref, const std::vector<float> & got) {
    double num = 0.0, den = 0.0;
    for (size_t i = 0; i < ref.size(); ++i) {
        num += (double(got[i]) - ref[i]) * (double(got[i]) - ref[i]);
        den += double(ref[i]) * ref[i];
    }
    return den > 0.0 ? num / den : num;
}

void expect_close(op_graph & g, double bound, const std::string & what) {
    std::vector<float> ref, got;
    ASSERT_EQ(run_both(g, ref, got), GGML_STATUS_SUCCESS) << what;
    const double e = nmse(ref, got);
    EXPECT_LE(e, bound) << what << ": nmse " << e;
}

// ---- MUL_MAT ----

void mul_mat_case(ggml_type t, int64_t k, int64_t m, int64_t n, uint64_t seed) {
    rng r{seed};
    op_graph g = new_graph();
    ggml_tensor * a = random_tensor(g, t, {k, m}, r);
    ggml_tensor * b = random_tensor(g, GGML_TYPE_F32, {k, n}, r);
    finish(g, ggml_mul_mat(g.ctx.get(), a, b));
    expect_close(g, bound_of(t), std::string(ggml_type_name(t)) + " k=" + std::to_string(k) + " m=" +
                                     std::to_string(m) + " n=" + std::to_string(n));
}

TEST(CudaMatMul, MulMatQuantizedEveryColumnCount) {
    REQUIRE_GPU();
    uint64_t seed = 1;
    for (ggml_type t : k_quant_types) {
        for (int64_t n : {1, 2, 3, 4, 5, 8, 9, 13, 16, 17, 40}) mul_mat_case(t, 4352, 67, n, seed++);
        mul_mat_case(t, 256 * 57, 9, 1, seed++);  // several stages in flight
    }
}

TEST(CudaMatMul, MulMatFloatWeights) {
    REQUIRE_GPU();
    uint64_t seed = 100;
    for (ggml_type t : {GGML_TYPE_F32, GGML_TYPE_F16, GGML_TYPE_BF16}) {
        for (int64_t k : {4096, 4100, 31}) {
            for (int64_t n : {1, 3, 8, 9, 33}) mul_mat_case(t, k, 45, n, seed++);
        }
    }
}

// Rows starting off 16-byte boundaries: a view from row 1 of a matrix with odd row sizes.
TEST(CudaMatMul, MulMatUnalignedRows) {
    REQUIRE_GPU();
    uint64_t seed = 200;
    for (ggml_type t : k_quant_types) {
        const int64_t k = ggml_blck_size(t) == 32 ? 96 : 768, m = 30;
        for (int64_t n : {1, 4, 20}) {
            rng r{seed++};
            op_graph g = new_graph();
            ggml_tensor * base = random_tensor(g, t, {k, m + 1}, r);
            ggml_tensor * a = ggml_view_2d(g.ctx.get(), base, k, m, base->nb[1], base->nb[1]);
            ggml_tensor * b = random_tensor(g, GGML_TYPE_F32, {k, n}, r);
            finish(g, ggml_mul_mat(g.ctx.get(), a, b));
            expect_close(g, bound_of(t), std::string("unaligned ") + ggml_type_name(t) + " n=" + std::to_string(n));
        }
    }
}

// a [128, 75, 4, 2] broadcast over b [128, n, 8, 4] (b a permuted view), as attention does.
TEST(CudaMatMul, MulMatBroadcastBatches) {
    REQUIRE_GPU();
    uint64_t seed = 300;
    for (ggml_type t : {GGML_TYPE_F16, GGML_TYPE_F32, GGML_TYPE_Q8_0}) {
        for (int64_t n : {1, 7, 20}) {
            rng r{seed++};
            op_graph g = new_graph();
            ggml_tensor * a = random_tensor(g, t, {128, 75, 4, 2}, r);
            ggml_tensor * bb = random_tensor(g, GGML_TYPE_F32, {128, 8, n, 4}, r);
            ggml_tensor * b = ggml_permute(g.ctx.get(), bb, 0, 2, 1, 3);  // [128, n, 8, 4]
            finish(g, ggml_mul_mat(g.ctx.get(), a, b));
            expect_close(g, bound_of(t), std::string("broadcast ") + ggml_type_name(t) + " n=" + std::to_string(n));
        }
    }
}

// ---- MUL_MAT_ID ----

ggml_tensor * ids_tensor(op_graph & g, int64_t n_used, int64_t n_t, int64_t n_expert, rng & r, int32_t bad_at = -1) {
    ggml_tensor * ids = ggml_new_tensor_2d(g.ctx.get(), GGML_TYPE_I32, n_used, n_t);
    std::vector<int32_t> v(size_t(n_used * n_t));
    for (int64_t t = 0; t < n_t; ++t) {
        // distinct experts per token, skewed towards the low ones
        for (int64_t i = 0; i < n_used; ++i) {
            int32_t e;
            bool dup;
            do {
                e = int32_t(std::fabs(r.uniform()) * std::fabs(r.uniform()) * double(n_expert)) % int32_t(n_expert);
                dup = false;
                for (int64_t j = 0; j < i; ++j) dup = dup || v[size_t(t * n_used + j)] == e;
            } while (dup);
            v[size_t(t * n_used + i)] = e;
        }
    }
    if (bad_at >= 0) v[size_t(bad_at)] = int32_t(n_expert + 3);
    std::vector<uint8_t> bytes(v.size() * 4);
    std::memcpy(bytes.data(), v.data(), bytes.size());
    g.data.emplace_back(ids, std::move(bytes));
    return ids;
}

TEST(CudaMatMul, MulMatIdEveryMode) {
    REQUIRE_GPU();
    uint64_t seed = 400;
    const int64_t n_expert = 16, n_used = 4, k = 512, m = 70;
    for (ggml_type t : {GGML_TYPE_Q4_K, GGML_TYPE_Q8_0, GGML_TYPE_MXFP4, GGML_TYPE_F16, GGML_TYPE_F32}) {
        for (int64_t n_t : {1, 3, 8, 9, 40}) {
            for (int64_t n_b : {int64_t(1), n_used}) {
                rng r{seed++};
                op_graph g = new_graph();
                ggml_tensor * as = random_tensor(g, t, {k, m, n_expert}, r);
                ggml_tensor * b = random_tensor(g, GGML_TYPE_F32, {k, n_b, n_t}, r);
                ggml_tensor * ids = ids_tensor(g, n_used, n_t, n_expert, r);
                finish(g, ggml_mul_mat_id(g.ctx.get(), as, b, ids));
                expect_close(g, bound_of(t), std::string("moe ") + ggml_type_name(t) + " n_t=" + std::to_string(n_t) +
                                                 " n_b=" + std::to_string(n_b));
            }
        }
    }
}

TEST(CudaMatMul, MulMatIdBadIdsWriteNothing) {
    REQUIRE_GPU();
    uint64_t seed = 500;
    for (ggml_type t : {GGML_TYPE_Q4_0, GGML_TYPE_F16}) {
        for (int64_t n_t : {1, 5, 20}) {
            rng r{seed++};
            op_graph g = new_graph();
            ggml_tensor * as = random_tensor(g, t, {64, 24, 8}, r);
            ggml_tensor * b = random_tensor(g, GGML_TYPE_F32, {64, 1, n_t}, r);
            ggml_tensor * ids = ids_tensor(g, 2, n_t, 8, r, int32_t(2 * n_t - 1));
            finish(g, ggml_mul_mat_id(g.ctx.get(), as, b, ids));
            ggml_backend_buffer_ptr gbuf = ggml_backend_alloc_ctx_tensors(g.ctx.get(), gpu_entry().buffer_type());
            for (auto & [x, bytes] : g.data) ggml_backend_tensor_set(x, bytes.data(), 0, bytes.size());
            const std::vector<float> poison(size_t(ggml_nelements(g.out)), 7.5f);
            ggml_backend_tensor_set(g.out, poison.data(), 0, poison.size() * sizeof(float));
            EXPECT_EQ(gpu_entry().compute(g.gf), GGML_STATUS_FAILED) << ggml_type_name(t) << " n_t=" << n_t;
            std::vector<float> got(poison.size());
            ggml_backend_tensor_get(g.out, got.data(), 0, got.size() * sizeof(float));
            EXPECT_TRUE(got == poison) << ggml_type_name(t) << " n_t=" << n_t << ": dst written";
        }
    }
}

// ---- FLASH_ATTN_EXT ----

struct fa_case {
    int64_t d, dv, n_q, n_head, n_head_kv, n_kv;
    ggml_type kv_type;
    bool mask;
    float softcap;
};

void flash_attn_case(const fa_case & c, uint64_t seed) {
    rng r{seed};
    op_graph g = new_graph();
    ggml_tensor * q = random_tensor(g, GGML_TYPE_F32, {c.d, c.n_q, c.n_head}, r);
    ggml_tensor * k = random_tensor(g, c.kv_type, {c.d, c.n_kv, c.n_head_kv}, r);
    ggml_tensor * v = random_tensor(g, c.kv_type, {c.dv, c.n_kv, c.n_head_kv}, r);
    ggml_tensor * mask = nullptr;
    if (c.mask) {
        // causal over the last n_q cells, random offsets elsewhere; query row 0 sees nothing
        const int64_t rows = c.n_q + 3;
        mask = ggml_new_tensor_2d(g.ctx.get(), GGML_TYPE_F16, c.n_kv, rows);
        std::vector<ggml_fp16_t> mv(size_t(c.n_kv * rows));
        for (int64_t i = 0; i < rows; ++i) {
            for (int64_t j = 0; j < c.n_kv; ++j) {
                const bool visible = i > 0 && j <= c.n_kv - c.n_q + i;
                mv[size_t(i * c.n_kv + j)] = ggml_fp32_to_fp16(visible ? float(r.uniform()) : -INFINITY);
            }
        }
        std::vector<uint8_t> bytes(mv.size() * 2);
        std::memcpy(bytes.data(), mv.data(), bytes.size());
        g.data.emplace_back(mask, std::move(bytes));
    }
    finish(g, ggml_flash_attn_ext(g.ctx.get(), q, k, v, mask, 1.0f / std::sqrt(float(c.d)), c.softcap));
    const std::string what = "fa d=" + std::to_string(c.d) + " dv=" + std::to_string(c.dv) + " n_q=" +
                             std::to_string(c.n_q) + " n_kv=" + std::to_string(c.n_kv) + " " + ggml_type_name(c.kv_type) +
                             (c.mask ? " mask" : "") + (c.softcap > 0 ? " softcap" : "");
    std::vector<float> ref, got;
    ASSERT_EQ(run_both(g, ref, got), GGML_STATUS_SUCCESS) << what;
    double big = 0.0, diff = 0.0;
    for (size_t i = 0; i < ref.size(); ++i) {
        big = std::max(big, std::fabs(double(ref[i])));
        diff = std::max(diff, std::fabs(double(got[i]) - ref[i]));
    }
    EXPECT_LE(diff, 2e-5 * big) << what;
    if (c.mask) {  // query row 0 sees no cell: exact zeros
        for (int64_t e = 0; e < c.dv * c.n_head; ++e) EXPECT_EQ(got[size_t(e)], 0.0f) << what;
    }
}

TEST(CudaMatMul, FlashAttention) {
    REQUIRE_GPU();
    uint64_t seed = 600;
    const std::pair<int64_t, int64_t> heads[] = {{64, 64}, {80, 80}, {96, 96}, {128, 128}, {256, 256}, {192, 128}, {40, 40}};
    for (auto [d, dv] : heads) {
        for (ggml_type kv : {GGML_TYPE_F16, GGML_TYPE_Q8_0, GGML_TYPE_F32}) {
            if (kv == GGML_TYPE_Q8_0 && (d % 32 != 0 || dv % 32 != 0)) continue;
            flash_attn_case({d, dv, 1, 8, 2, 5000, kv, true, 0.0f}, seed++);   // decode: splits
            flash_attn_case({d, dv, 5, 8, 8, 300, kv, true, 30.0f}, seed++);  // few rows, soft-cap
            flash_attn_case({d, dv, 40, 4, 1, 77, kv, false, 0.0f}, seed++);  // prompt, no mask
        }
    }
}

}  // namespace
