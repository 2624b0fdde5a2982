// Repacked weights (ggml/cpu/repack.h and the CPU's repack buffer type): the layout round
// trip (pack -> unpack, set_tensor -> get_tensor give the original bytes), the repacked dot
// kernels of every ISA path this CPU has against the plain dot kernels of the same path and a
// double-precision reference, for 1 … 17 columns and more, row counts that are not a multiple
// of the 16-row groups; whole MUL_MAT graphs with the weight in the repack buffer on CPU
// backends capped to each ISA with 1 to 3 threads; and the CPU device's supports_op for
// operands in that buffer (only MUL_MAT's first operand may be repacked).
// Error measure: NMSE = sum((y - ref)^2) / sum(ref^2): 5e-5 against the double-precision
// product of the dequantized weights and the F32 activations (the activations are quantized
// to 8 bits), 1e-9 against the plain path (the same integer sums, other float rounding).
#include "cpu/mul-mat.h"
#include "cpu/repack.h"
#include "test-devices.h"

#include "ggml/backend.h"
#include "ggml/cpu.h"
#include "ggml/ggml.h"
#include "ggml/quants.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

const ggml_type k_repack_types[] = {GGML_TYPE_Q4_0, GGML_TYPE_Q8_0, GGML_TYPE_IQ4_NL, GGML_TYPE_Q4_K,
                                    GGML_TYPE_Q5_K, GGML_TYPE_Q6_K, GGML_TYPE_IQ4_XS, GGML_TYPE_Q5_0,
                                    GGML_TYPE_Q4_1,   GGML_TYPE_MXFP4,  GGML_TYPE_Q3_K, GGML_TYPE_Q2_K};

struct nmse_acc {
    double err = 0.0, ref = 0.0;
    void add(double y, double r) { err += (y - r) * (y - r); ref += r * r; }
    double value() const { return ref > 0.0 ? err / ref : err; }
};

std::vector<float> random_floats(size_t n, uint32_t seed) {
    std::mt19937 g(seed);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    std::vector<float> v(n);
    for (float & x : v) x = u(g);
    return v;
}

// m rows of k elements quantized to t (rows back to back), and their dequantized values.
struct weights {
    std::vector<uint8_t> bytes;
    std::vector<float> values;
    size_t row_bytes = 0;
};

weights make_weights(ggml_type t, int64_t k, int64_t m, uint32_t seed) {
    weights w;
    const std::vector<float> x = random_floats(size_t(k * m), seed);
    w.row_bytes = ggml_row_size(t, k);
    w.bytes.resize(w.row_bytes * size_t(m));
    ggml_quantize_chunk(t, x.data(), w.bytes.data(), 0, m, k, nullptr);
    w.values.resize(size_t(k * m));
    for (int64_t r = 0; r < m; ++r) {
        ggml_get_type_traits(t).to_float(w.bytes.data() + size_t(r) * w.row_bytes, w.values.data() + r * k, k);
    }
    return w;
}

std::vector<double> reference(const weights & w, const std::vector<float> & x, int64_t k, int64_t m, int64_t n) {
    std::vector<double> ref(size_t(m * n));
    for (int64_t c = 0; c < n; ++c)
        for (int64_t r = 0; r < m; ++r) {
            double s = 0.0;
            for (int64_t i = 0; i < k; ++i) s += double(w.values[size_t(r * k + i)]) * double(x[size_t(c * k + i)]);
            ref[size_t(c * m + r)] = s;
        }
    return ref;
}

struct isa_path {
    const char * name;
    const ggml_mul_mat_kernels * kt;
    const ggml_repack_kernels * rk;
};

std::vector<isa_path> isa_paths() {
    std::vector<isa_path> v = {{"scalar", &ggml_mul_mat_kernels_scalar, &ggml_repack_kernels_scalar}};
    const ggml_cpu_isa best = ggml_cpu_detect_features().best_isa();
    if (int(best) >= int(ggml_cpu_isa::avx2)) v.push_back({"avx2", &ggml_mul_mat_kernels_avx2, &ggml_repack_kernels_avx2});
    if (int(best) >= int(ggml_cpu_isa::avx512)) {
        v.push_back({"avx512", &ggml_mul_mat_kernels_avx512, &ggml_repack_kernels_avx512});
    }
    return v;
}

// The types listed here are exactly those with a repacked layout, and every path has kernels
// for each of them (and for no other type).
TEST(Repack, EveryRepackableTypeCovered) {
    for (int ti = 0; ti < GGML_TYPE_COUNT; ++ti) {
        const ggml_type t = ggml_type(ti);
        bool listed = false;
        for (ggml_type l : k_repack_types) listed = listed || l == t;
        EXPECT_EQ(ggml_repack_type_supported(t), listed) << ti;
        for (const isa_path & path : isa_paths()) {
            EXPECT_EQ(path.rk->dot[t] != nullptr, listed) << ti << " " << path.name;
            EXPECT_EQ(path.rk->act[t] != nullptr, listed) << ti << " " << path.name;
        }
    }
}

TEST(Repack, LayoutRoundTrip) {
    for (ggml_type t : k_repack_types) {
        for (int64_t m : {1, 16, 17, 37}) {
            const int64_t k = 2 * ggml_blck_size(t);
            const weights w = make_weights(t, k, m, uint32_t(m) * 7 + uint32_t(t));
            std::vector<uint8_t> packed(ggml_repack_size(t, k, m), 0xAB);
            ggml_repack_pack(t, k, m, w.bytes.data(), w.row_bytes, packed.data());
            std::vector<uint8_t> back(w.bytes.size(), 0);
            ggml_repack_unpack(t, k, m, packed.data(), back.data(), w.row_bytes);
            EXPECT_EQ(back, w.bytes) << ggml_type_name(t) << " m=" << m;
            EXPECT_EQ(ggml_repack_size(t, k, m), (size_t(m) + 15) / 16 * 16 * ggml_repack_row_bytes(t, k));
        }
    }
}

// Every byte pattern of the scales and codes survives the round trip (all bits are used).
TEST(Repack, LayoutRoundTripRandomBytes) {
    std::mt19937 g(5);
    for (ggml_type t : k_repack_types) {
        const int64_t k = 3 * ggml_blck_size(t), m = 21;
        std::vector<uint8_t> bytes(ggml_row_size(t, k) * size_t(m));
        for (uint8_t & b : bytes) b = uint8_t(g());
        std::vector<uint8_t> packed(ggml_repack_size(t, k, m));
        ggml_repack_pack(t, k, m, bytes.data(), ggml_row_size(t, k), packed.data());
        std::vector<uint8_t> back(bytes.size());
        ggml_repack_unpack(t, k, m, packed.data(), back.data(), ggml_row_size(t, k));
        EXPECT_EQ(back, bytes) << ggml_type_name(t);
    }
}

// The repacked kernels on weights w against the plain ones of the same path and the reference.
void check_kernels_on(ggml_type t, const weights & w, int64_t k, int64_t m, int64_t n, const isa_path & path) {
    SCOPED_TRACE(std::string(ggml_type_name(t)) + " " + path.name + " k=" + std::to_string(k) + " m=" +
                 std::to_string(m) + " n=" + std::to_string(n));
    const std::vector<float> x = random_floats(size_t(k * n), uint32_t(n + 11));
    std::vector<uint8_t> packed(ggml_repack_size(t, k, m));
    ggml_repack_pack(t, k, m, w.bytes.data(), w.row_bytes, packed.data());

    const size_t act_bytes = ggml_repack_act_row_bytes(t, k);
    std::vector<uint8_t> act(act_bytes * size_t(n));
    for (int64_t c = 0; c < n; ++c) path.rk->act[t](x.data() + c * k, act.data() + size_t(c) * act_bytes, k);
    const int64_t ldy = m + 3;
    std::vector<float> y(size_t(ldy * n), -7.0f);
    path.rk->dot[t](k, packed.data(), ggml_repack_row_bytes(t, k), m, act.data(), act_bytes, n, y.data(), ldy);

    const ggml_mul_mat_type_kernels & e = path.kt->of(t);
    const ggml_type vt = e.dot_vec_type;
    const ggml_from_float_fn q = e.dot_vec_from_f32 ? e.dot_vec_from_f32 : ggml_get_type_traits(vt).from_float;
    const size_t plain_bytes = ggml_row_size(vt, k);
    std::vector<uint8_t> plain_act(plain_bytes * size_t(n));
    for (int64_t c = 0; c < n; ++c) q(x.data() + c * k, plain_act.data() + size_t(c) * plain_bytes, k);
    std::vector<float> yp(size_t(m * n));
    e.dot(k, w.bytes.data(), w.row_bytes, m, plain_act.data(), plain_bytes, n, yp.data(), m);

    const std::vector<double> ref = reference(w, x, k, m, n);
    nmse_acc e_ref, e_plain;
    for (int64_t c = 0; c < n; ++c) {
        for (int64_t r = 0; r < m; ++r) {
            e_ref.add(y[size_t(c * ldy + r)], ref[size_t(c * m + r)]);
            e_plain.add(y[size_t(c * ldy + r)], yp[size_t(c * m + r)]);
        }
        for (int64_t r = m; r < ldy; ++r) EXPECT_EQ(y[size_t(c * ldy + r)], -7.0f) << "written past the rows";
    }
    EXPECT_LE(e_ref.value(), 5e-5);
    EXPECT_LE(e_plain.value(), 1e-9);
}

void check_kernels(ggml_type t, int64_t k, int64_t m, int64_t n, const isa_path & path) {
    check_kernels_on(t, make_weights(t, k, m, uint32_t(k + 3 * m + t)), k, m, n, path);
}

// MXFP4 blocks with the smallest exponents (subnormal scales 2^-128, 2^-127) and their
// neighbours: the SIMD paths decode e as ggml_e8m0_to_fp32_half and scale as the plain kernel.
TEST(Repack, Mxfp4SmallExponents) {
    const int64_t k = 8 * QK_MXFP4, m = 19;
    weights w = make_weights(GGML_TYPE_MXFP4, k, m, 77);
    const uint8_t exps[] = {0, 1, 2, 3};
    for (int64_t r = 0; r < m; ++r) {
        block_mxfp4 * blocks = reinterpret_cast<block_mxfp4 *>(w.bytes.data() + size_t(r) * w.row_bytes);
        for (int64_t b = 0; b < k / QK_MXFP4; ++b) blocks[b].e = exps[(r + b) % 4];
        ggml_get_type_traits(GGML_TYPE_MXFP4).to_float(blocks, w.values.data() + r * k, k);
    }
    for (const isa_path & path : isa_paths())
        for (int64_t n : {1, 3, 9}) check_kernels_on(GGML_TYPE_MXFP4, w, k, m, n, path);
}

TEST(Repack, KernelsEveryColumnCount) {
    for (const isa_path & path : isa_paths())
        for (ggml_type t : k_repack_types)
            for (int64_t n = 1; n <= 17; ++n) check_kernels(t, 2 * ggml_blck_size(t), 37, n, path);
}

TEST(Repack, KernelsLargerShapes) {
    for (const isa_path & path : isa_paths())
        for (ggml_type t : k_repack_types) {
            check_kernels(t, 1024, 16, 1, path);
            check_kernels(t, 1024, 67, 24, path);
            check_kernels(t, 768, 5, 40, path);
        }
}

// ---- whole graphs through the repack buffer ----

std::vector<test_devices::entry> & cpu_backends() {
    static std::vector<test_devices::entry> list = [] {
        std::vector<test_devices::entry> all = test_devices::make_list({1, 2, 3});
        std::vector<test_devices::entry> cpu;
        for (test_devices::entry & e : all)
            if (e.is_cpu()) cpu.push_back(std::move(e));
        return cpu;
    }();
    return list;
}

ggml_context_ptr small_context() {
    ggml_init_params ip;
    ip.mem_size = 16 * ggml_tensor_overhead() + ggml_graph_overhead();
    ip.no_alloc = true;
    return ggml_context_ptr(ggml_init(ip));
}

void check_graph(ggml_type t, int64_t k, int64_t m, int64_t n) {
    SCOPED_TRACE(std::string(ggml_type_name(t)) + " k=" + std::to_string(k) + " m=" + std::to_string(m) + " n=" +
                 std::to_string(n));
    const weights w = make_weights(t, k, m, uint32_t(5 * k + m + t));
    const std::vector<float> x = random_floats(size_t(k * n), uint32_t(3 * n + 1));
    ggml_context_ptr ctx_w = small_context(), ctx = small_context();
    ggml_tensor * a_rep = ggml_new_tensor_2d(ctx_w.get(), t, k, m);
    ggml_tensor * a = ggml_new_tensor_2d(ctx.get(), t, k, m);
    ggml_tensor * b = ggml_new_tensor_2d(ctx.get(), GGML_TYPE_F32, k, n);
    ggml_tensor * y_rep = ggml_mul_mat(ctx.get(), a_rep, b);
    ggml_tensor * y = ggml_mul_mat(ctx.get(), a, b);
    ggml_cgraph * gf = ggml_new_graph(ctx.get());
    ggml_build_forward_expand(gf, y_rep);
    ggml_build_forward_expand(gf, y);
    ggml_backend_buffer_ptr buf_w = ggml_backend_alloc_ctx_tensors(ctx_w.get(), ggml_backend_cpu_repack_buffer_type());
    ggml_backend_buffer_ptr buf = ggml_backend_alloc_ctx_tensors(ctx.get(), ggml_backend_cpu_buffer_type());
    ASSERT_TRUE(buf_w && buf);
    ASSERT_TRUE(ggml_backend_cpu_tensor_is_repacked(a_rep));
    ggml_backend_tensor_set(a_rep, w.bytes.data(), 0, w.bytes.size());
    ggml_backend_tensor_set(a, w.bytes.data(), 0, w.bytes.size());
    ggml_backend_tensor_set(b, x.data(), 0, x.size() * sizeof(float));
    std::vector<uint8_t> back(w.bytes.size());
    ggml_backend_tensor_get(a_rep, back.data(), 0, back.size());
    EXPECT_EQ(back, w.bytes) << "get_tensor gives the original layout";

    const std::vector<double> ref = reference(w, x, k, m, n);
    std::vector<float> out_rep(size_t(m * n)), out(size_t(m * n));
    for (test_devices::entry & be : cpu_backends()) {
        ASSERT_TRUE(be.supports_graph(gf)) << be.label;
        ASSERT_EQ(be.compute(gf), GGML_STATUS_SUCCESS) << be.label;
        ggml_backend_tensor_get(y_rep, out_rep.data(), 0, out_rep.size() * sizeof(float));
        ggml_backend_tensor_get(y, out.data(), 0, out.size() * sizeof(float));
        nmse_acc e_ref, e_plain;
        for (size_t i = 0; i < ref.size(); ++i) {
            e_ref.add(out_rep[i], ref[i]);
            e_plain.add(out_rep[i], out[i]);
        }
        EXPECT_LE(e_ref.value(), 5e-5) << be.label;
        EXPECT_LE(e_plain.value(), 1e-9) << be.label;
    }
}

TEST(RepackOp, EveryColumnCount) {
    for (ggml_type t : k_repack_types)
        for (int64_t n = 1; n <= 17; ++n) check_graph(t, 512, 37, n);
}

TEST(RepackOp, ManyRowsAndColumns) {
    for (ggml_type t : k_repack_types) {
        check_graph(t, 256, 300, 3);
        check_graph(t, 512, 130, 70);
    }
}

// Only MUL_MAT reads a repacked tensor, and only as its first operand; views of it go nowhere.
TEST(RepackOp, SupportsOpOnlyForMulMatWeights) {
    ggml_context_ptr ctx_w = small_context(), ctx = small_context();
    ggml_tensor * a = ggml_new_tensor_2d(ctx_w.get(), GGML_TYPE_Q4_K, 256, 32);
    ggml_tensor * ids = ggml_new_tensor_1d(ctx.get(), GGML_TYPE_I32, 4);
    ggml_tensor * b = ggml_new_tensor_2d(ctx.get(), GGML_TYPE_F32, 256, 2);
    ggml_backend_buffer_ptr buf_w = ggml_backend_alloc_ctx_tensors(ctx_w.get(), ggml_backend_cpu_repack_buffer_type());
    ggml_backend_buffer_ptr buf = ggml_backend_alloc_ctx_tensors(ctx.get(), ggml_backend_cpu_buffer_type());
    ASSERT_TRUE(buf_w && buf);
    ggml_backend_device_i * dev = ggml_backend_cpu_buffer_type()->device();
    EXPECT_TRUE(dev->supports_buft(ggml_backend_cpu_repack_buffer_type()));
    EXPECT_FALSE(ggml_backend_cpu_repack_buffer_type()->is_host());
    EXPECT_TRUE(dev->supports_op(ggml_mul_mat(ctx.get(), a, b)));
    EXPECT_FALSE(dev->supports_op(ggml_get_rows(ctx.get(), a, ids)));
    ggml_tensor * half = ggml_view_2d(ctx.get(), a, 256, 16, a->nb[1], 0);
    half->buffer = a->buffer;
    EXPECT_FALSE(dev->supports_op(ggml_mul_mat(ctx.get(), half, b)));
}

// Types without a repacked layout are stored as they are, and read back unchanged.
TEST(RepackOp, OtherTypesStoredAsIs) {
    ggml_context_ptr ctx = small_context();
    ggml_tensor * a = ggml_new_tensor_2d(ctx.get(), GGML_TYPE_F16, 256, 3);
    EXPECT_FALSE(ggml_backend_cpu_repack_supported(a));
    ggml_backend_buffer_ptr buf = ggml_backend_alloc_ctx_tensors(ctx.get(), ggml_backend_cpu_repack_buffer_type());
    ASSERT_TRUE(buf);
    std::vector<uint8_t> bytes(ggml_nbytes(a));
    for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = uint8_t(i * 7);
    ggml_backend_tensor_set(a, bytes.data(), 0, bytes.size());
    EXPECT_FALSE(ggml_backend_cpu_tensor_is_repacked(a));
    std::vector<uint8_t> back(bytes.size());
    ggml_backend_tensor_get(a, back.data(), 0, back.size());
    EXPECT_EQ(back, bytes);
}

// The kernel path a weight gets comes from the op's own plan: repacked weights name their
// layout at every column count, plain F16 takes the dot kernel for one column and the GEMM for
// a prompt (the AMX tiles on the amx path), a type MUL_MAT cannot read is "unsupported".
TEST(RepackOp, KernelPathNamesThePlan) {
    ggml_context_ptr ctx_w = small_context(), ctx = small_context();
    ggml_tensor * q = ggml_new_tensor_2d(ctx_w.get(), GGML_TYPE_Q4_K, 512, 64);
    ggml_tensor * h = ggml_new_tensor_2d(ctx.get(), GGML_TYPE_F16, 512, 64);
    ggml_tensor * i = ggml_new_tensor_2d(ctx.get(), GGML_TYPE_I32, 512, 64);
    ggml_backend_buffer_ptr buf_w = ggml_backend_alloc_ctx_tensors(ctx_w.get(), ggml_backend_cpu_repack_buffer_type());
    ggml_backend_buffer_ptr buf = ggml_backend_alloc_ctx_tensors(ctx.get(), ggml_backend_cpu_buffer_type());
    ASSERT_TRUE(buf_w && buf && ggml_backend_cpu_tensor_is_repacked(q));
    const ggml_cpu_isa best = ggml_cpu_detect_features().best_isa();
    for (int v = 0; v <= int(best); ++v) {
        const ggml_cpu_isa isa = ggml_cpu_isa(v);
        const std::string name = isa == ggml_cpu_isa::amx ? "avx512" : ggml_cpu_isa_name(isa);
        SCOPED_TRACE(name);
        for (int64_t n : {1, 7, 512}) {
            EXPECT_EQ(ggml_backend_cpu_mul_mat_path(isa, q, n), name + " repacked q4_K x q8_K (16-row groups)");
        }
        EXPECT_EQ(ggml_backend_cpu_mul_mat_path(isa, h, 1), name + " dot f16 x f32");
        const std::string pp = ggml_backend_cpu_mul_mat_path(isa, h, 512);
        if (isa == ggml_cpu_isa::amx) {
            EXPECT_EQ(pp, "amx f16 x bf16 tiles");
        } else if (isa != ggml_cpu_isa::scalar) {
            EXPECT_EQ(pp.rfind(name + " gemm f16 -> f32 panels of ", 0), 0u) << pp;
        }
        EXPECT_EQ(ggml_backend_cpu_mul_mat_path(isa, i, 1), "unsupported");
        EXPECT_EQ(ggml_backend_cpu_mul_mat_path(isa, h, 0), "unsupported");
    }
}

// The CPU's name carries CPUID's family and model numbers, and the CPU device is described
// by the same name.
TEST(RepackOp, CpuModelNameHasFamilyAndModel) {
    const std::string name = ggml_cpu_model_name();
    EXPECT_NE(name.find("(family "), std::string::npos) << name;
    EXPECT_NE(name.find(", model "), std::string::npos) << name;
    EXPECT_EQ(name.find('\0'), std::string::npos);
    EXPECT_EQ(std::string(ggml_backend_cpu_buffer_type()->device()->description()), name);
}

}  // namespace
