// Quantized MUL_MAT on the CPU: the dot kernels of the 32-element formats (quant-dot.h), the
// Q8_0 / Q8_1 activation quantizers, and whole MUL_MAT graphs with quantized weights (every
// quantized type the tables of mul-mat.h hold, K-quants included).
//
//   - kernels: every legacy kernel of every ISA this CPU runs, on random blocks (all codes,
//     extreme ones included, scales of both signs, zero scales) against (1) the exact value of
//     the block formula in double precision, (2) a double dot of the blocks dequantized by
//     ggml/quants.h, and (3) the scalar kernel; odd block counts, rows / columns 1, 2, 3, 5, 17
//     (edges of the register tiles), k long enough for the kernels' chunking of k;
//   - activation quantizers: byte for byte against the _ref quantizers, special values included;
//   - graphs: CPU backends capped to each ISA, 1 and 3 threads, and every non-CPU device of the
//     registry (test-devices.h), against a double reference from the dequantized weights and
//     the F32 activations; the bound is an NMSE per type (the 8-bit quantization of the
//     activations dominates it).
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
#include <limits>
#include <string>
#include <vector>

namespace {

using quant_dot_test::best_isa;
using quant_dot_test::random_acts;
using quant_dot_test::rng;

// ---- the legacy kernels ----

struct legacy_type {
    ggml_type wt, at;          // weight type and activation (partner) type
    int zero;                  // offset of the weight codes (Q8_0 codes are signed)
    bool has_min;
    ggml_mul_mat_dot_fn fn[3];  // scalar, avx2, avx512
};

const legacy_type k_legacy[] = {
    {GGML_TYPE_Q4_0, GGML_TYPE_Q8_0, 8, false,
     {ggml_dot_q4_0_q8_0_scalar, ggml_dot_q4_0_q8_0_avx2, ggml_dot_q4_0_q8_0_avx512}},
    {GGML_TYPE_Q4_1, GGML_TYPE_Q8_1, 0, true,
     {ggml_dot_q4_1_q8_1_scalar, ggml_dot_q4_1_q8_1_avx2, ggml_dot_q4_1_q8_1_avx512}},
    {GGML_TYPE_Q5_0, GGML_TYPE_Q8_0, 16, false,
     {ggml_dot_q5_0_q8_0_scalar, ggml_dot_q5_0_q8_0_avx2, ggml_dot_q5_0_q8_0_avx512}},
    {GGML_TYPE_Q5_1, GGML_TYPE_Q8_1, 0, true,
     {ggml_dot_q5_1_q8_1_scalar, ggml_dot_q5_1_q8_1_avx2, ggml_dot_q5_1_q8_1_avx512}},
    {GGML_TYPE_Q8_0, GGML_TYPE_Q8_0, 0, false,
     {ggml_dot_q8_0_q8_0_scalar, ggml_dot_q8_0_q8_0_avx2, ggml_dot_q8_0_q8_0_avx512}},
};
const char * const k_isa_names[3] = {"scalar", "avx2", "avx512"};

uint16_t read_u16(const uint8_t * p) { return uint16_t(p[0] | p[1] << 8); }
void write_u16(uint8_t * p, uint16_t v) { p[0] = uint8_t(v); p[1] = uint8_t(v >> 8); }

// A block decoded to numbers: codes (offset removed), d, and m (weights) or s (Q8_1).
struct block_vals {
    int32_t q[32];
    double d = 0.0, ms = 0.0;
};

// Decodes block i of a row of type t (the layouts of ggml/quants.h, written out independently).
block_vals decode_block(ggml_type t, const uint8_t * row, int64_t i) {
    block_vals v;
    const uint8_t * b = row + size_t(i) * ggml_type_size(t);
    v.d = ggml_fp16_to_fp32(read_u16(b));
    const bool q5 = t == GGML_TYPE_Q5_0 || t == GGML_TYPE_Q5_1;
    const bool with_m = t == GGML_TYPE_Q4_1 || t == GGML_TYPE_Q5_1 || t == GGML_TYPE_Q8_1;
    if (with_m) v.ms = ggml_fp16_to_fp32(read_u16(b + 2));
    const uint8_t * p = b + (with_m ? 4 : 2);
    if (t == GGML_TYPE_Q8_0 || t == GGML_TYPE_Q8_1) {
        for (int j = 0; j < 32; ++j) v.q[j] = int8_t(p[j]);
        return v;
    }
    uint32_t qh = 0;
    if (q5) {
        qh = uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24;
        p += 4;
    }
    const int zero = t == GGML_TYPE_Q4_0 ? 8 : t == GGML_TYPE_Q5_0 ? 16 : 0;
    for (int j = 0; j < 16; ++j) {
        v.q[j] = int32_t((p[j] & 0x0F) | (q5 ? ((qh >> j) & 1u) << 4 : 0u)) - zero;
        v.q[j + 16] = int32_t((p[j] >> 4) | (q5 ? ((qh >> (j + 16)) & 1u) << 4 : 0u)) - zero;
    }
    return v;
}

// Random weight blocks: every byte random (so every code, extremes included), then d (and m)
// set to a random value of random sign and magnitude; some blocks get d = 0 or constant codes.
std::vector<uint8_t> random_weights(ggml_type t, int64_t nb, int64_t rows, size_t ld, rng & g) {
    std::vector<uint8_t> mem(ld * size_t(rows) + 64);
    for (auto & c : mem) c = uint8_t(g.next());
    const size_t bs = ggml_type_size(t);
    const bool with_m = t == GGML_TYPE_Q4_1 || t == GGML_TYPE_Q5_1;
    for (int64_t r = 0; r < rows; ++r) {
        for (int64_t i = 0; i < nb; ++i) {
            uint8_t * b = mem.data() + size_t(r) * ld + size_t(i) * bs;
            const uint64_t kind = g.next() % 16;
            const float d = kind == 0 ? 0.0f : float(g.uniform() * std::pow(10.0, -1.0 - 2.0 * std::fabs(g.uniform())));
            write_u16(b, ggml_fp32_to_fp16(d));
            if (with_m) write_u16(b + 2, ggml_fp32_to_fp16(float(g.uniform() * 0.5)));
            if (kind == 1 || kind == 2) {  // all codes at one end of the range
                const size_t head = with_m ? 4 : 2;
                const bool q8 = t == GGML_TYPE_Q8_0;
                std::memset(b + head, kind == 1 ? (q8 ? 0x7F : 0xFF) : (q8 ? 0x80 : 0x00), bs - head);
            }
        }
    }
    return mem;
}

// Reference values of one output: the block formula exactly, its magnitude, and a double dot
// of the dequantized blocks with the difference that the Q8_1 sum field s may make.
struct ref_out {
    double exact = 0.0, magnitude = 0.0, dequant = 0.0, dequant_slack = 0.0;
};

ref_out reference(const legacy_type & lt, int64_t nb, const uint8_t * arow, const uint8_t * brow) {
    ref_out o;
    std::vector<float> xa(size_t(nb * 32)), xb(size_t(nb * 32));
    ggml_get_type_traits(lt.wt).to_float(arow, xa.data(), nb * 32);
    ggml_get_type_traits(lt.at).to_float(brow, xb.data(), nb * 32);
    for (int64_t i = 0; i < nb; ++i) {
        const block_vals a = decode_block(lt.wt, arow, i), b = decode_block(lt.at, brow, i);
        double isum = 0.0, iabs = 0.0, bsum = 0.0;
        for (int j = 0; j < 32; ++j) {
            isum += double(a.q[j]) * b.q[j];
            iabs += std::fabs(double(a.q[j]) * b.q[j]);
            bsum += b.q[j];
        }
        o.exact += a.d * b.d * isum + (lt.has_min ? a.ms * b.ms : 0.0);
        o.magnitude += std::fabs(a.d * b.d) * iabs + (lt.has_min ? std::fabs(a.ms * b.ms) : 0.0);
        if (lt.has_min) o.dequant_slack += std::fabs(a.ms) * std::fabs(b.ms - b.d * bsum);
    }
    double mag = 0.0;
    for (size_t i = 0; i < xa.size(); ++i) {
        o.dequant += double(xa[i]) * xb[i];
        mag += std::fabs(double(xa[i]) * xb[i]);
    }
    o.dequant_slack += 4e-7 * mag;  // dequantized values are rounded to float
    return o;
}

// Float accumulation over nb blocks in any order: |error| <= (nb + 8) * 2^-23 * magnitude.
double float_bound(int64_t nb, double magnitude) { return double(nb + 8) * 1.2e-7 * magnitude + 1e-30; }

// Runs one kernel on the first nr rows and nc columns and checks every output (ref holds the
// references of max_rc x max_rc outputs) and that nothing outside the outputs is written.
void check_kernel(const legacy_type & lt, int isa, int64_t nb, const std::vector<uint8_t> & a, size_t lda,
                  const std::vector<uint8_t> & b, size_t ldb, int64_t nr, int64_t nc, const std::vector<ref_out> & ref,
                  int64_t max_rc) {
    const int64_t k = nb * 32, ldy = nr + 3;
    std::vector<float> y(size_t(ldy * nc), 1e30f), ys(size_t(ldy * nc), 1e30f);
    lt.fn[isa](k, a.data(), lda, nr, b.data(), ldb, nc, y.data(), ldy);
    lt.fn[0](k, a.data(), lda, nr, b.data(), ldb, nc, ys.data(), ldy);
    for (int64_t c = 0; c < nc; ++c) {
        for (int64_t r = 0; r < ldy; ++r) {
            const float v = y[size_t(c * ldy + r)], vs = ys[size_t(c * ldy + r)];
            if (r >= nr) {
                ASSERT_EQ(v, 1e30f) << "written outside the rows";
                continue;
            }
            const ref_out & o = ref[size_t(c * max_rc + r)];
            const double tol = float_bound(nb, o.magnitude);
            ASSERT_LE(std::fabs(v - o.exact), tol) << "r=" << r << " c=" << c << " y=" << v << " exact=" << o.exact;
            ASSERT_LE(std::fabs(v - o.dequant), tol + o.dequant_slack) << "r=" << r << " c=" << c;
            ASSERT_LE(std::fabs(double(v) - vs), 2 * tol) << "r=" << r << " c=" << c << " scalar=" << vs;
        }
    }
}

TEST(QuantDotLegacy, KernelsMatchReference) {
    const int64_t nbs[] = {1, 2, 3, 4, 5, 7, 8, 9, 13, 33, 129};
    const int64_t sizes[] = {1, 2, 3, 5, 17};
    constexpr int64_t max_rc = 17;
    rng g{7};
    for (const legacy_type & lt : k_legacy) {
        for (int64_t nb : nbs) {
            const int64_t k = nb * 32;
            const size_t lda = ggml_row_size(lt.wt, k) + 2 * ggml_type_size(lt.wt);  // padded rows
            const size_t ldb = ggml_row_size(lt.at, k) + 6;                           // not 64-aligned
            const std::vector<uint8_t> a = random_weights(lt.wt, nb, max_rc, lda, g);
            const std::vector<uint8_t> b = random_acts(lt.at, k, max_rc, ldb, g);
            std::vector<ref_out> ref(size_t(max_rc * max_rc));
            for (int64_t c = 0; c < max_rc; ++c)
                for (int64_t r = 0; r < max_rc; ++r) {
                    const uint8_t * arow = a.data() + size_t(r) * lda;
                    ref[size_t(c * max_rc + r)] = reference(lt, nb, arow, b.data() + size_t(c) * ldb);
                }
            for (int isa = 0; isa <= best_isa(); ++isa)
                for (int64_t nr : sizes)
                    for (int64_t nc : sizes) {
                        SCOPED_TRACE(std::string(k_isa_names[isa]) + " " + ggml_type_name(lt.wt) + " blocks=" +
                                     std::to_string(nb) + " nr=" + std::to_string(nr) + " nc=" + std::to_string(nc));
                        check_kernel(lt, isa, nb, a, lda, b, ldb, nr, nc, ref, max_rc);
                        if (HasFatalFailure()) return;
                    }
        }
    }
}

// k long enough that every kernel works through it in several chunks of packed activations,
// with column counts that leave partial passes.
TEST(QuantDotLegacy, LongRowsMatchReference) {
    const int64_t nb = 1563;  // 50016 elements: odd, not a multiple of the 4-block groups
    const int64_t k = nb * 32;
    rng g{17};
    for (const legacy_type & lt : k_legacy) {
        const size_t lda = ggml_row_size(lt.wt, k), ldb = ggml_row_size(lt.at, k);
        const std::vector<uint8_t> a = random_weights(lt.wt, nb, 3, lda, g);
        const std::vector<uint8_t> b = random_acts(lt.at, k, 5, ldb, g);
        for (int isa = 0; isa <= best_isa(); ++isa) {
            for (int64_t nc : {1, 2, 5}) {
                SCOPED_TRACE(std::string(k_isa_names[isa]) + " " + ggml_type_name(lt.wt) + " nc=" + std::to_string(nc));
                std::vector<float> y(size_t(3 * nc));
                lt.fn[isa](k, a.data(), lda, 3, b.data(), ldb, nc, y.data(), 3);
                for (int64_t c = 0; c < nc; ++c)
                    for (int64_t r = 0; r < 3; ++r) {
                        const ref_out o = reference(lt, nb, a.data() + size_t(r) * lda, b.data() + size_t(c) * ldb);
                        ASSERT_LE(std::fabs(y[size_t(c * 3 + r)] - o.exact), float_bound(nb, o.magnitude));
                    }
            }
        }
    }
}

TEST(QuantDotLegacy, EmptyRowsGiveZeros) {
    const uint8_t none[64] = {};
    for (const legacy_type & lt : k_legacy) {
        for (int isa = 0; isa <= best_isa(); ++isa) {
            float y[6] = {1, 2, 3, 4, 5, 6};
            lt.fn[isa](0, none, 0, 3, none, 0, 2, y, 3);
            for (float v : y) EXPECT_EQ(v, 0.0f) << k_isa_names[isa] << " " << ggml_type_name(lt.wt);
        }
    }
}

// ---- activation quantizers ----

// Rows with the awkward values: ties of the rounding (x * id exactly n + 0.5), NaN, infinities,
// huge and subnormal values, zeros, and plain random blocks.
std::vector<float> special_rows(rng & g) {
    std::vector<float> x;
    const float inf = std::numeric_limits<float>::infinity();
    for (int blk = 0; blk < 64; ++blk) {
        for (int j = 0; j < 32; ++j) {
            float v = float(g.uniform());
            switch (blk % 8) {
                case 0: v = j == 0 ? 127.0f : float(int(g.next() % 253) - 126) + 0.5f; break;  // d = 1: ties
                case 1: v = j == 3 ? std::nanf("") : v; break;
                case 2: v = j == 5 ? (blk & 8 ? inf : -inf) : v; break;
                case 3: v = v * 1e30f; break;
                case 4: v = v * 1e-40f; break;  // subnormal: 1 / d overflows
                case 5: v = 0.0f; break;
                case 6: v = j == 9 ? -1e6f : v; break;
                default: v = v * float(std::pow(10.0, 3.0 * g.uniform())); break;
            }
            x.push_back(v);
        }
    }
    return x;
}

TEST(QuantAct, MatchesReferenceBytes) {
    struct act_fn {
        const char * name;
        ggml_type t;
        int isa;
        void (*fn)(const float *, void *, int64_t);
    };
    const act_fn fns[] = {
        {"q8_0 avx2", GGML_TYPE_Q8_0, 1, ggml_quantize_row_q8_0_avx2},
        {"q8_1 avx2", GGML_TYPE_Q8_1, 1, ggml_quantize_row_q8_1_avx2},
        {"q8_0 avx512", GGML_TYPE_Q8_0, 2, ggml_quantize_row_q8_0_avx512},
        {"q8_1 avx512", GGML_TYPE_Q8_1, 2, ggml_quantize_row_q8_1_avx512},
    };
    rng g{5};
    const std::vector<float> x = special_rows(g);
    const int64_t k = int64_t(x.size());
    for (const act_fn & f : fns) {
        if (f.isa > best_isa()) continue;
        const size_t bytes = ggml_row_size(f.t, k);
        std::vector<uint8_t> want(bytes), got(bytes + 16, 0xCD);
        ggml_get_type_traits(f.t).from_float(x.data(), want.data(), k);
        f.fn(x.data(), got.data(), k);
        const size_t bs = ggml_type_size(f.t);
        for (size_t i = 0; i < bytes; i += bs) {
            ASSERT_EQ(0, std::memcmp(want.data() + i, got.data() + i, bs)) << f.name << " block " << i / bs;
        }
        for (size_t i = bytes; i < got.size(); ++i) ASSERT_EQ(got[i], 0xCD) << f.name << ": written past the row";
    }
}

// ---- whole MUL_MAT graphs ----

std::vector<ggml_type> quant_weight_types() {
    std::vector<ggml_type> v;
    for (ggml_type t : {GGML_TYPE_Q4_0, GGML_TYPE_Q4_1, GGML_TYPE_Q5_0, GGML_TYPE_Q5_1, GGML_TYPE_Q8_0, GGML_TYPE_Q2_K,
                        GGML_TYPE_Q3_K, GGML_TYPE_Q4_K, GGML_TYPE_Q5_K, GGML_TYPE_Q6_K}) {
        if (ggml_mul_mat_kernels_scalar.of(t).dot) v.push_back(t);
    }
    return v;
}

using backend_entry = test_devices::entry;

std::vector<backend_entry> & backends() {
    static std::vector<backend_entry> list = test_devices::make_list({1, 3});
    return list;
}

struct graph_case {
    ggml_type t;
    int64_t k, m, n;
    int64_t a2, a3, b2, b3;  // batches of a and b (b's are multiples of a's)
    bool b_transposed;       // b is the transpose of an [n, k] tensor (elements n floats apart)
};

std::string case_name(const graph_case & c) {
    return std::string(ggml_type_name(c.t)) + " k=" + std::to_string(c.k) + " m=" + std::to_string(c.m) +
           " n=" + std::to_string(c.n) + " batches a " + std::to_string(c.a2) + "x" + std::to_string(c.a3) + " b " +
           std::to_string(c.b2) + "x" + std::to_string(c.b3) + (c.b_transposed ? " b transposed" : "");
}

// NMSE against the F32 activations: the 8-bit activations dominate (~2e-5 for uniform values).
constexpr double k_graph_nmse = 1e-4;

void run_graph_case(const graph_case & c, rng & g) {
    SCOPED_TRACE(case_name(c));
    ggml_init_params ip;
    ip.mem_size = 8 * ggml_tensor_overhead() + ggml_graph_overhead();
    ip.no_alloc = true;
    ggml_context_ptr ctx(ggml_init(ip));
    ASSERT_TRUE(ctx);
    ggml_tensor * a = ggml_new_tensor_4d(ctx.get(), c.t, c.k, c.m, c.a2, c.a3);
    ggml_tensor * bm = c.b_transposed ? ggml_new_tensor_4d(ctx.get(), GGML_TYPE_F32, c.n, c.k, c.b2, c.b3)
                                      : ggml_new_tensor_4d(ctx.get(), GGML_TYPE_F32, c.k, c.n, c.b2, c.b3);
    ggml_tensor * b = c.b_transposed ? ggml_transpose(ctx.get(), bm) : bm;
    ggml_tensor * y = ggml_mul_mat(ctx.get(), a, b);
    ggml_set_output(y);
    ggml_cgraph * gf = ggml_new_graph(ctx.get());
    ggml_build_forward_expand(gf, y);
    ggml_backend_buffer_ptr buf = ggml_backend_alloc_ctx_tensors(ctx.get(), ggml_backend_cpu_buffer_type());
    ASSERT_TRUE(buf);

    // weights: random F32 quantized by the library, and their dequantized values
    const int64_t a_rows = c.m * c.a2 * c.a3;
    std::vector<float> wf(size_t(a_rows * c.k)), wd(wf.size());
    for (auto & v : wf) v = float(g.uniform());
    std::vector<uint8_t> wq(ggml_nbytes(a));
    ggml_quantize_chunk(c.t, wf.data(), wq.data(), 0, a_rows, c.k, nullptr);
    ggml_get_type_traits(c.t).to_float(wq.data(), wd.data(), int64_t(wd.size()));
    ggml_backend_tensor_set(a, wq.data(), 0, wq.size());
    std::vector<float> bf(size_t(ggml_nelements(bm)));
    for (auto & v : bf) v = float(g.uniform());
    ggml_backend_tensor_set(bm, bf.data(), 0, bf.size() * sizeof(float));

    const int64_t r2 = c.b2 / c.a2, r3 = c.b3 / c.a3;
    std::vector<double> ref(size_t(ggml_nelements(y)));
    for (int64_t i3 = 0; i3 < c.b3; ++i3)
        for (int64_t i2 = 0; i2 < c.b2; ++i2)
            for (int64_t j = 0; j < c.n; ++j)
                for (int64_t i = 0; i < c.m; ++i) {
                    const float * w = wd.data() + size_t((((i3 / r3) * c.a2 + i2 / r2) * c.m + i) * c.k);
                    double s = 0.0;
                    for (int64_t e = 0; e < c.k; ++e) {
                        const size_t bi = c.b_transposed ? size_t(((i3 * c.b2 + i2) * c.k + e) * c.n + j)
                                                         : size_t(((i3 * c.b2 + i2) * c.n + j) * c.k + e);
                        s += double(w[e]) * bf[bi];
                    }
                    ref[size_t(((i3 * c.b2 + i2) * c.n + j) * c.m + i)] = s;
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
        EXPECT_LE(err / norm, k_graph_nmse) << be.label;
    }
}

TEST(QuantMulMatOp, AllTypesThroughTheBackend) {
    rng g{99};
    const std::vector<ggml_type> types = quant_weight_types();
    ASSERT_GE(types.size(), 5u);
    for (ggml_type t : types) {
        const bool kq = ggml_blck_size(t) == QK_K;
        const int64_t k1 = kq ? 256 : 96, k2 = kq ? 768 : 32 * 37;
        const graph_case cases[] = {
            {t, k1, 17, 1, 1, 1, 1, 1, false},    // mat-vec
            {t, k2, 37, 3, 1, 1, 1, 1, false},    // a few columns
            {t, k1, 40, 70, 1, 1, 1, 1, false},   // more columns than one job takes
            {t, k2, 19, 6, 2, 1, 4, 2, false},    // a broadcast over b's batches
            {t, k1, 21, 5, 1, 1, 1, 1, true},     // b gathered from a transposed view
        };
        for (const graph_case & c : cases) run_graph_case(c, g);
    }
}

}  // namespace
