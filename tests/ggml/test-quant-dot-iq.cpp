// Quantized MUL_MAT with the codebook formats on the CPU: the dot kernels IQ4_NL x Q8_0,
// MXFP4 x Q8_0 and IQ4_XS x Q8_K of every ISA this CPU runs, and whole MUL_MAT graphs with
// these weight types through the CPU backend.
//
//   - kernels: random blocks (every index, scales of both signs, zero, subnormal and extreme
//     exponents) against (1) the exact value of the block formula in double precision, (2) a
//     double dot of the blocks dequantized by ggml/quants.h, and (3) the scalar kernel; odd
//     block counts, rows / columns 1, 2, 3, 4, 5, 17 (edges of the register tiles), up to 37 rows
//     x 23 columns (the 16-row interleaved mat-mat), k long enough for the kernels' chunking of k,
//     and k = 0;
//   - tables: the type index and every path's entries (partner type, kernel, quantizer);
//   - graphs: CPU backends capped to each ISA, 1 and 3 threads, and every non-CPU device of the
//     registry (test-devices.h), against a double reference from the dequantized weights and
//     the F32 activations (NMSE bound: the 8-bit activations dominate it).
#include "cpu/mul-mat.h"
#include "cpu/quant-dot.h"
#include "quant-dot-test-data.h"
#include "test-devices.h"

#include "ggml/backend.h"
#include "ggml/cpu.h"
#include "ggml/ggml.h"
#include "ggml/quants.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace {

using quant_dot_test::best_isa;
using quant_dot_test::random_acts;
using quant_dot_test::rng;
const char * const k_isa_names[3] = {"scalar", "avx2", "avx512"};

const int k_cb[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};
const int k_mx[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};

struct iq_type {
    ggml_type wt, at;  // weight type and activation (partner) type
    int64_t qk;        // elements per weight block
    ggml_mul_mat_dot_fn fn[3];  // scalar, avx2, avx512
};

const iq_type k_types[] = {
    {GGML_TYPE_IQ4_NL, GGML_TYPE_Q8_0, 32,
     {ggml_dot_iq4_nl_q8_0_scalar, ggml_dot_iq4_nl_q8_0_avx2, ggml_dot_iq4_nl_q8_0_avx512}},
    {GGML_TYPE_MXFP4, GGML_TYPE_Q8_0, 32,
     {ggml_dot_mxfp4_q8_0_scalar, ggml_dot_mxfp4_q8_0_avx2, ggml_dot_mxfp4_q8_0_avx512}},
    {GGML_TYPE_IQ4_XS, GGML_TYPE_Q8_K, 256,
     {ggml_dot_iq4_xs_q8_K_scalar, ggml_dot_iq4_xs_q8_K_avx2, ggml_dot_iq4_xs_q8_K_avx512}},
};

uint16_t read_u16(const uint8_t * p) { return uint16_t(p[0] | p[1] << 8); }
void write_u16(uint8_t * p, uint16_t v) {
    p[0] = uint8_t(v);
    p[1] = uint8_t(v >> 8);
}
int nibble(const uint8_t * qs, int e) { return e < 16 ? qs[e] & 0xF : qs[e - 16] >> 4; }

// Sub-block s (32 elements) of weight block b decoded: codebook values and the scale.
struct sub_vals {
    int q[32];
    double scale;
};

sub_vals decode_weight(ggml_type t, const uint8_t * b, int s) {
    sub_vals v{};
    if (t == GGML_TYPE_IQ4_NL) {
        v.scale = ggml_fp16_to_fp32(read_u16(b));
        for (int e = 0; e < 32; ++e) v.q[e] = k_cb[nibble(b + 2, e)];
    } else if (t == GGML_TYPE_MXFP4) {
        v.scale = std::ldexp(1.0, int(b[0]) - 128);
        for (int e = 0; e < 32; ++e) v.q[e] = k_mx[nibble(b + 1, e)];
    } else {  // IQ4_XS
        const int ls = ((b[4 + s / 2] >> (4 * (s % 2))) & 0xF) | ((read_u16(b + 2) >> (2 * s)) & 3) << 4;
        v.scale = double(ggml_fp16_to_fp32(read_u16(b))) * (ls - 32);
        for (int e = 0; e < 32; ++e) v.q[e] = k_cb[nibble(b + 8 + 16 * s, e)];
    }
    return v;
}

// Activation codes of elements [32 s, 32 s + 32) of block b and their scale.
sub_vals decode_act(ggml_type t, const uint8_t * b, int s) {
    sub_vals v{};
    if (t == GGML_TYPE_Q8_0) {
        v.scale = ggml_fp16_to_fp32(read_u16(b));
        for (int e = 0; e < 32; ++e) v.q[e] = int8_t(b[2 + e]);
    } else {  // Q8_K: float d, then 256 codes
        float d;
        std::memcpy(&d, b, 4);
        v.scale = d;
        for (int e = 0; e < 32; ++e) v.q[e] = int8_t(b[4 + 32 * s + e]);
    }
    return v;
}

// Random weight blocks: every byte random (so every index), then the scale fields set to a
// random value of random sign and magnitude (some zero or subnormal; MXFP4 exponents near 1 and
// at both ends of the usual range).
std::vector<uint8_t> random_weights(const iq_type & it, int64_t nb, int64_t rows, size_t ld, rng & g) {
    std::vector<uint8_t> mem(ld * size_t(rows) + 64);
    for (auto & c : mem) c = uint8_t(g.next());
    const size_t bs = ggml_type_size(it.wt);
    for (int64_t r = 0; r < rows; ++r) {
        for (int64_t i = 0; i < nb; ++i) {
            uint8_t * b = mem.data() + size_t(r) * ld + size_t(i) * bs;
            const uint64_t kind = g.next() % 16;
            if (it.wt == GGML_TYPE_MXFP4) {
                b[0] = uint8_t(kind == 0 ? g.next() % 3 : kind == 1 ? 160 + g.next() % 20 : 110 + g.next() % 30);
                continue;
            }
            const float d = kind == 0 ? 0.0f : float(g.uniform() * std::pow(10.0, -1.0 - 2.0 * std::fabs(g.uniform())));
            write_u16(b, kind == 1 ? uint16_t(0x8001) : ggml_fp32_to_fp16(d));
        }
    }
    return mem;
}

struct ref_out {
    double exact = 0.0, magnitude = 0.0, dequant = 0.0, dequant_slack = 0.0;
};

ref_out reference(const iq_type & it, int64_t k, const uint8_t * arow, const uint8_t * brow) {
    ref_out o;
    const size_t wbs = ggml_type_size(it.wt), abs_ = ggml_type_size(it.at);
    const int64_t abk = ggml_blck_size(it.at);
    for (int64_t s = 0; s < k / 32; ++s) {
        const int64_t e0 = 32 * s;
        const sub_vals w = decode_weight(it.wt, arow + size_t(e0 / it.qk) * wbs, int((e0 % it.qk) / 32));
        const sub_vals a = decode_act(it.at, brow + size_t(e0 / abk) * abs_, int((e0 % abk) / 32));
        double isum = 0.0, iabs = 0.0;
        for (int j = 0; j < 32; ++j) {
            isum += double(w.q[j]) * a.q[j];
            iabs += std::fabs(double(w.q[j]) * a.q[j]);
        }
        o.exact += w.scale * a.scale * isum;
        o.magnitude += std::fabs(w.scale * a.scale) * iabs;
    }
    std::vector<float> xa(static_cast<size_t>(k)), xb(static_cast<size_t>(k));
    ggml_get_type_traits(it.wt).to_float(arow, xa.data(), k);
    ggml_get_type_traits(it.at).to_float(brow, xb.data(), k);
    double mag = 0.0;
    for (size_t i = 0; i < xa.size(); ++i) {
        o.dequant += double(xa[i]) * xb[i];
        mag += std::fabs(double(xa[i]) * xb[i]);
    }
    o.dequant_slack = 4e-7 * mag;  // dequantized Q8_K values are rounded to float
    return o;
}

// Float accumulation over n sub-blocks in any order: |error| <= (n + 8) * 2^-23 * magnitude.
double float_bound(int64_t n_sub, double magnitude) { return double(n_sub + 8) * 1.2e-7 * magnitude + 1e-30; }

void check_kernel(const iq_type & it, int isa, int64_t k, const std::vector<uint8_t> & a, size_t lda,
                  const std::vector<uint8_t> & b, size_t ldb, int64_t nr, int64_t nc, const std::vector<ref_out> & ref,
                  int64_t max_rc) {
    const int64_t ldy = nr + 3;
    std::vector<float> y(size_t(ldy * nc), 1e30f), ys(size_t(ldy * nc), 1e30f);
    it.fn[isa](k, a.data(), lda, nr, b.data(), ldb, nc, y.data(), ldy);
    it.fn[0](k, a.data(), lda, nr, b.data(), ldb, nc, ys.data(), ldy);
    for (int64_t c = 0; c < nc; ++c) {
        for (int64_t r = 0; r < ldy; ++r) {
            const float v = y[size_t(c * ldy + r)], vs = ys[size_t(c * ldy + r)];
            if (r >= nr) {
                ASSERT_EQ(v, 1e30f) << "written outside the rows";
                continue;
            }
            const ref_out & o = ref[size_t(c * max_rc + r)];
            const double tol = float_bound(k / 32, o.magnitude);
            ASSERT_LE(std::fabs(v - o.exact), tol) << "r=" << r << " c=" << c << " y=" << v << " exact=" << o.exact;
            ASSERT_LE(std::fabs(v - o.dequant), tol + o.dequant_slack) << "r=" << r << " c=" << c;
            ASSERT_LE(std::fabs(double(v) - vs), 2 * tol) << "r=" << r << " c=" << c << " scalar=" << vs;
        }
    }
}

TEST(QuantDotIq, KernelsMatchReference) {
    const int64_t nbs[] = {1, 2, 3, 4, 5, 7, 8, 9, 13, 33};
    const int64_t sizes[] = {1, 2, 3, 4, 5, 17};
    constexpr int64_t max_rc = 17;
    rng g{7};
    for (const iq_type & it : k_types) {
        for (int64_t nb : nbs) {
            const int64_t k = nb * it.qk;
            const size_t lda = ggml_row_size(it.wt, k) + 2 * ggml_type_size(it.wt);  // padded rows
            // not 64-aligned (but aligned for the block type: Q8_K holds a float)
            const size_t ldb = ggml_row_size(it.at, k) + (it.at == GGML_TYPE_Q8_K ? 4 : 6);
            const std::vector<uint8_t> a = random_weights(it, nb, max_rc, lda, g);
            const std::vector<uint8_t> b = random_acts(it.at, k, max_rc, ldb, g);
            std::vector<ref_out> ref(size_t(max_rc * max_rc));
            for (int64_t c = 0; c < max_rc; ++c)
                for (int64_t r = 0; r < max_rc; ++r) {
                    ref[size_t(c * max_rc + r)] = reference(it, k, a.data() + size_t(r) * lda, b.data() + size_t(c) * ldb);
                }
            for (int isa = 0; isa <= best_isa(); ++isa)
                for (int64_t nr : sizes)
                    for (int64_t nc : sizes) {
                        SCOPED_TRACE(std::string(k_isa_names[isa]) + " " + ggml_type_name(it.wt) + " blocks=" +
                                     std::to_string(nb) + " nr=" + std::to_string(nr) + " nc=" + std::to_string(nc));
                        check_kernel(it, isa, k, a, lda, b, ldb, nr, nc, ref, max_rc);
                        if (HasFatalFailure()) return;
                    }
        }
    }
}

// Enough rows and columns for the 16-row interleaved mat-mat of the AVX-512 path (with rows left
// over for the small tiles), and block counts that end in a partial group.
TEST(QuantDotIq, ManyRowsAndColumnsMatchReference) {
    const int64_t sizes_r[] = {16, 37}, sizes_c[] = {9, 16, 23};
    constexpr int64_t max_r = 37, max_c = 23;
    rng g{23};
    for (const iq_type & it : k_types) {
        for (int64_t nb : {1, 3, 6, 13}) {
            const int64_t k = nb * it.qk;
            const size_t lda = ggml_row_size(it.wt, k) + ggml_type_size(it.wt);
            const size_t ldb = ggml_row_size(it.at, k) + (it.at == GGML_TYPE_Q8_K ? 4 : 2);
            const std::vector<uint8_t> a = random_weights(it, nb, max_r, lda, g);
            const std::vector<uint8_t> b = random_acts(it.at, k, max_c, ldb, g);
            std::vector<ref_out> ref(size_t(max_r * max_c));
            for (int64_t c = 0; c < max_c; ++c)
                for (int64_t r = 0; r < max_r; ++r) {
                    ref[size_t(c * max_r + r)] = reference(it, k, a.data() + size_t(r) * lda, b.data() + size_t(c) * ldb);
                }
            for (int isa = 0; isa <= best_isa(); ++isa)
                for (int64_t nr : sizes_r)
                    for (int64_t nc : sizes_c) {
                        SCOPED_TRACE(std::string(k_isa_names[isa]) + " " + ggml_type_name(it.wt) + " blocks=" +
                                     std::to_string(nb) + " nr=" + std::to_string(nr) + " nc=" + std::to_string(nc));
                        const int64_t ldy = nr + 1;
                        std::vector<float> y(size_t(ldy * nc), 1e30f);
                        it.fn[isa](k, a.data(), lda, nr, b.data(), ldb, nc, y.data(), ldy);
                        for (int64_t c = 0; c < nc; ++c) {
                            ASSERT_EQ(y[size_t(c * ldy + nr)], 1e30f) << "written outside the rows";
                            for (int64_t r = 0; r < nr; ++r) {
                                const ref_out & o = ref[size_t(c * max_r + r)];
                                ASSERT_LE(std::fabs(y[size_t(c * ldy + r)] - o.exact), float_bound(k / 32, o.magnitude))
                                    << "r=" << r << " c=" << c;
                            }
                        }
                    }
        }
    }
}

// k long enough that every kernel works through it in several chunks of packed activations,
// with column counts that leave partial passes.
TEST(QuantDotIq, LongRowsMatchReference) {
    rng g{17};
    for (const iq_type & it : k_types) {
        const int64_t nb = it.qk == 32 ? 1563 : 203;  // odd; not a multiple of the 4-block groups
        const int64_t k = nb * it.qk;
        const size_t lda = ggml_row_size(it.wt, k), ldb = ggml_row_size(it.at, k);
        const std::vector<uint8_t> a = random_weights(it, nb, 3, lda, g);
        const std::vector<uint8_t> b = random_acts(it.at, k, 19, ldb, g);
        for (int isa = 0; isa <= best_isa(); ++isa) {
            for (int64_t nc : {1, 2, 5, 19}) {
                SCOPED_TRACE(std::string(k_isa_names[isa]) + " " + ggml_type_name(it.wt) + " nc=" + std::to_string(nc));
                std::vector<float> y(size_t(3 * nc));
                it.fn[isa](k, a.data(), lda, 3, b.data(), ldb, nc, y.data(), 3);
                for (int64_t c = 0; c < nc; ++c)
                    for (int64_t r = 0; r < 3; ++r) {
                        const ref_out o = reference(it, k, a.data() + size_t(r) * lda, b.data() + size_t(c) * ldb);
                        ASSERT_LE(std::fabs(y[size_t(c * 3 + r)] - o.exact), float_bound(k / 32, o.magnitude));
                    }
            }
        }
    }
}

TEST(QuantDotIq, EmptyRowsGiveZeros) {
    const uint8_t none[64] = {};
    for (const iq_type & it : k_types) {
        for (int isa = 0; isa <= best_isa(); ++isa) {
            float y[6] = {1, 2, 3, 4, 5, 6};
            it.fn[isa](0, none, 0, 3, none, 0, 2, y, 3);
            for (float v : y) EXPECT_EQ(v, 0.0f) << k_isa_names[isa] << " " << ggml_type_name(it.wt);
        }
    }
}

TEST(QuantDotIq, TablesHoldTheTypes) {
    const ggml_mul_mat_kernels * tables[3] = {&ggml_mul_mat_kernels_scalar, &ggml_mul_mat_kernels_avx2,
                                              &ggml_mul_mat_kernels_avx512};
    for (const iq_type & it : k_types) {
        for (int isa = 0; isa < 3; ++isa) {
            SCOPED_TRACE(std::string(k_isa_names[isa]) + " " + ggml_type_name(it.wt));
            const ggml_mul_mat_type_kernels & e = tables[isa]->of(it.wt);
            EXPECT_EQ(e.dot_vec_type, it.at);
            EXPECT_EQ(e.dot, it.fn[isa]);
            EXPECT_EQ(e.gemm, nullptr);
            EXPECT_EQ(e.dot_vec_from_f32 == nullptr, isa == 0);  // scalar: the traits' reference
        }
    }
}

// ---- whole MUL_MAT graphs ----

using backend_entry = test_devices::entry;

std::vector<backend_entry> & backends() {
    static std::vector<backend_entry> list = test_devices::make_list({1, 3});
    return list;
}

struct graph_case {
    ggml_type t;
    int64_t k, m, n;
    int64_t a2, b2;     // batches of a and b (b's a multiple of a's)
    bool b_transposed;  // b is the transpose of an [n, k] tensor
};

void run_graph_case(const graph_case & c, rng & g) {
    SCOPED_TRACE(std::string(ggml_type_name(c.t)) + " k=" + std::to_string(c.k) + " m=" + std::to_string(c.m) +
                 " n=" + std::to_string(c.n) + " a2=" + std::to_string(c.a2) + " b2=" + std::to_string(c.b2) +
                 (c.b_transposed ? " b transposed" : ""));
    ggml_context_ptr ctx(ggml_init({8 * ggml_tensor_overhead() + ggml_graph_overhead(), nullptr, true}));
    ASSERT_TRUE(ctx);
    ggml_tensor * a = ggml_new_tensor_3d(ctx.get(), c.t, c.k, c.m, c.a2);
    ggml_tensor * bm = c.b_transposed ? ggml_new_tensor_3d(ctx.get(), GGML_TYPE_F32, c.n, c.k, c.b2)
                                      : ggml_new_tensor_3d(ctx.get(), GGML_TYPE_F32, c.k, c.n, c.b2);
    ggml_tensor * b = c.b_transposed ? ggml_transpose(ctx.get(), bm) : bm;
    ggml_tensor * y = ggml_mul_mat(ctx.get(), a, b);
    ggml_set_output(y);
    ggml_cgraph * gf = ggml_new_graph(ctx.get());
    ggml_build_forward_expand(gf, y);
    ggml_backend_buffer_ptr buf = ggml_backend_alloc_ctx_tensors(ctx.get(), ggml_backend_cpu_buffer_type());
    ASSERT_TRUE(buf);

    const int64_t a_rows = c.m * c.a2;
    std::vector<float> wf(size_t(a_rows * c.k)), wd(wf.size());
    for (auto & v : wf) v = float(g.uniform());
    std::vector<uint8_t> wq(ggml_nbytes(a));
    ASSERT_EQ(ggml_quantize_chunk(c.t, wf.data(), wq.data(), 0, a_rows, c.k, nullptr), wq.size());
    ggml_get_type_traits(c.t).to_float(wq.data(), wd.data(), int64_t(wd.size()));
    ggml_backend_tensor_set(a, wq.data(), 0, wq.size());
    std::vector<float> bf(size_t(ggml_nelements(bm)));
    for (auto & v : bf) v = float(g.uniform());
    ggml_backend_tensor_set(bm, bf.data(), 0, bf.size() * sizeof(float));

    const int64_t r2 = c.b2 / c.a2;
    std::vector<double> ref(size_t(ggml_nelements(y)));
    for (int64_t i2 = 0; i2 < c.b2; ++i2)
        for (int64_t j = 0; j < c.n; ++j)
            for (int64_t i = 0; i < c.m; ++i) {
                const float * w = wd.data() + size_t(((i2 / r2) * c.m + i) * c.k);
                double s = 0.0;
                for (int64_t e = 0; e < c.k; ++e) {
                    const size_t bi = c.b_transposed ? size_t((i2 * c.k + e) * c.n + j) : size_t((i2 * c.n + j) * c.k + e);
                    s += double(w[e]) * bf[bi];
                }
                ref[size_t((i2 * c.n + j) * c.m + i)] = s;
            }
    std::vector<float> out(ref.size());
    for (backend_entry & be : backends()) {
        if (!be.is_cpu()) buf = test_devices::move_ctx_tensors(ctx.get(), be.buffer_type());
        if (!be.supports_graph(gf)) {
            EXPECT_FALSE(be.is_cpu()) << be.label;
            continue;
        }
        std::fill(out.begin(), out.end(), std::nanf(""));
        ggml_backend_tensor_set(y, out.data(), 0, out.size() * sizeof(float));
        ASSERT_EQ(be.compute(gf), GGML_STATUS_SUCCESS) << be.label;
        ggml_backend_tensor_get(y, out.data(), 0, out.size() * sizeof(float));
        double err = 0.0, norm = 0.0;
        for (size_t i = 0; i < ref.size(); ++i) {
            err += (out[i] - ref[i]) * (out[i] - ref[i]);
            norm += ref[i] * ref[i];
        }
        // the 8-bit quantization of the activations: ~2e-5 for uniform values
        EXPECT_LE(err / norm, 1e-4) << be.label;
    }
}

TEST(QuantDotIq, MulMatThroughTheBackend) {
    rng g{99};
    for (const iq_type & it : k_types) {
        const int64_t k1 = it.qk == 256 ? 256 : 96, k2 = it.qk == 256 ? 768 : 32 * 37;
        const graph_case cases[] = {
            {it.wt, k1, 17, 1, 1, 1, false},   // mat-vec
            {it.wt, k2, 37, 3, 1, 1, false},   // a few columns
            {it.wt, k1, 40, 70, 1, 1, false},  // more columns than one job takes
            {it.wt, k2, 19, 6, 2, 4, false},   // a broadcast over b's batches
            {it.wt, k1, 21, 5, 1, 1, true},    // b gathered from a transposed view
        };
        for (const graph_case & c : cases) run_graph_case(c, g);
    }
}

}  // namespace
