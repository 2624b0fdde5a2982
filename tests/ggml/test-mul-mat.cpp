// MUL_MAT on the CPU: every kernel path (scalar, AVX2, AVX-512 where the CPU has them) and
// weight type (F32, F16, BF16) against a double-precision reference, on odd sizes, broadcast
// batches and non-contiguous operands. Two levels:
//   - the kernels of mul-mat.h called directly (dot kernel, GEMM on hand-built B panels);
//   - whole graphs with one MUL_MAT on CPU backends capped to each ISA, 1 to 3 threads, and on
//     every non-CPU device of the registry (test-devices.h; "no GPU device: <reason>" otherwise).
// Error measure: NMSE = sum((y - ref)^2) / sum(ref^2), inputs uniform in [-1, 1]; bounds
// F32 1e-8, F16 1e-6, BF16 5e-5 (the activations may be rounded to BF16 for BF16 weights).
#include "cpu/mul-mat.h"
#include "test-devices.h"

#include "ggml/backend.h"
#include "ggml/cpu.h"
#include "ggml/ggml.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace {

const ggml_type k_types[] = {GGML_TYPE_F32, GGML_TYPE_F16, GGML_TYPE_BF16};

double nmse_bound(ggml_type t) { return t == GGML_TYPE_F32 ? 1e-8 : t == GGML_TYPE_F16 ? 1e-6 : 5e-5; }

// splitmix64: reproducible uniform values in [-1, 1).
struct rng {
    uint64_t s;
    double uniform() {
        uint64_t z = (s += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        z ^= z >> 31;
        return double(z >> 11) / double(1ull << 53) * 2.0 - 1.0;
    }
};

// Stores v as type t at p; returns the value actually stored.
double store_as(ggml_type t, void * p, double v) {
    const float f = float(v);
    switch (t) {
        case GGML_TYPE_F32: std::memcpy(p, &f, 4); return f;
        case GGML_TYPE_F16: {
            const ggml_fp16_t h = ggml_fp32_to_fp16(f);
            std::memcpy(p, &h, 2);
            return ggml_fp16_to_fp32(h);
        }
        case GGML_TYPE_BF16: {
            const ggml_bf16_t h = ggml_fp32_to_bf16(f);
            std::memcpy(p, &h, 2);
            return ggml_bf16_to_fp32(h);
        }
        default: ADD_FAILURE() << "unexpected type"; return 0.0;
    }
}

double load_as(ggml_type t, const void * p) {
    switch (t) {
        case GGML_TYPE_F32: { float f; std::memcpy(&f, p, 4); return f; }
        case GGML_TYPE_F16: { ggml_fp16_t h; std::memcpy(&h, p, 2); return ggml_fp16_to_fp32(h); }
        case GGML_TYPE_BF16: { ggml_bf16_t h; std::memcpy(&h, p, 2); return ggml_bf16_to_fp32(h); }
        default: ADD_FAILURE() << "unexpected type"; return 0.0;
    }
}

struct nmse_acc {
    double err = 0.0, ref = 0.0;
    void add(double y, double r) { err += (y - r) * (y - r); ref += r * r; }
    double value() const { return ref > 0.0 ? err / ref : err; }
};

// A matrix of `rows` rows of k elements of type t, rows `ld` bytes apart; vals[r * k + i] holds
// the stored values.
struct host_matrix {
    ggml_type t;
    int64_t k, rows;
    size_t ld;
    std::vector<uint8_t> bytes;
    std::vector<double> vals;

    host_matrix(ggml_type type, int64_t k_, int64_t rows_, int64_t pad, rng & g)
        : t(type), k(k_), rows(rows_), ld(ggml_type_size(type) * size_t(k_ + pad)),
          bytes(ld * size_t(rows_) + 64), vals(size_t(k_ * rows_)) {
        for (int64_t r = 0; r < rows; ++r)
            for (int64_t i = 0; i < k; ++i) vals[size_t(r * k + i)] = store_as(t, at(r, i), g.uniform());
    }
    void * at(int64_t r, int64_t i) { return bytes.data() + size_t(r) * ld + size_t(i) * ggml_type_size(t); }
    const void * row(int64_t r) const { return bytes.data() + size_t(r) * ld; }
};

// The same F32 values in another type (the activations as the kernels want them).
host_matrix convert_matrix(const host_matrix & src, ggml_type t) {
    rng unused{0};
    host_matrix out(t, src.k, src.rows, 0, unused);
    for (int64_t r = 0; r < src.rows; ++r)
        for (int64_t i = 0; i < src.k; ++i) {
            out.vals[size_t(r * src.k + i)] = store_as(t, out.at(r, i), src.vals[size_t(r * src.k + i)]);
        }
    return out;
}

double ref_dot(const host_matrix & a, int64_t r, const host_matrix & b, int64_t c) {
    double s = 0.0;
    for (int64_t i = 0; i < a.k; ++i) s += a.vals[size_t(r * a.k + i)] * b.vals[size_t(c * b.k + i)];
    return s;
}

// Checks of one kernel output y (row r, column c):
//   - against the dot product of the values the kernel was given (b as rounded to the type it
//     wants): only F32 accumulation error remains, so |y - ref| <= 1e-5 * sum |a_i * b_i| holds
//     for every single output, small ones included;
//   - against the exact dot product with the F32 activations, summed over many outputs into
//     one NMSE (a single short dot product can cancel to near zero; many cannot).
struct output_check {
    nmse_acc exact;
    void add(float y, const host_matrix & a, int64_t r, const host_matrix & b_seen, const host_matrix & b32, int64_t c) {
        double s = 0.0, abs_s = 0.0;
        for (int64_t i = 0; i < a.k; ++i) {
            const double p = a.vals[size_t(r * a.k + i)] * b_seen.vals[size_t(c * b_seen.k + i)];
            s += p;
            abs_s += std::fabs(p);
        }
        ASSERT_LE(std::fabs(double(y) - s), 1e-5 * abs_s + 1e-30) << "row " << r << " column " << c;
        exact.add(y, ref_dot(a, r, b32, c));
    }
};

std::vector<const ggml_mul_mat_kernels *> kernel_paths() {
    const ggml_cpu_isa best = ggml_cpu_detect_features().best_isa();
    std::vector<const ggml_mul_mat_kernels *> v = {&ggml_mul_mat_kernels_scalar};
    if (int(best) >= int(ggml_cpu_isa::avx2)) v.push_back(&ggml_mul_mat_kernels_avx2);
    if (int(best) >= int(ggml_cpu_isa::avx512)) v.push_back(&ggml_mul_mat_kernels_avx512);
    return v;
}

// The tables are indexed by ggml_type: the float types hold their kernels, the activation-only
// and integer types none, and a value outside the enum gives the empty entry.
TEST(MulMatKernels, TablesByType) {
    for (const ggml_mul_mat_kernels * kt : kernel_paths()) {
        SCOPED_TRACE(kt->name);
        for (ggml_type t : k_types) {
            EXPECT_NE(kt->of(t).dot, nullptr) << ggml_type_name(t);
            EXPECT_EQ(kt->of(t).dot_vec_type, GGML_TYPE_F32);
        }
        for (ggml_type t : {GGML_TYPE_Q8_1, GGML_TYPE_Q8_K, GGML_TYPE_I32, GGML_TYPE_F64}) {
            EXPECT_EQ(kt->of(t).dot, nullptr) << ggml_type_name(t);
            EXPECT_EQ(kt->of(t).gemm, nullptr) << ggml_type_name(t);
        }
        EXPECT_EQ(kt->of(GGML_TYPE_COUNT).dot, nullptr);
        EXPECT_EQ(kt->of(ggml_type(-1)).dot, nullptr);
        EXPECT_EQ(kt->of(GGML_TYPE_Q4_1).dot_vec_type, GGML_TYPE_Q8_1);
        EXPECT_EQ(kt->of(GGML_TYPE_IQ4_XS).dot_vec_type, GGML_TYPE_Q8_K);
    }
}

// dot kernel: y[c * ldy + r] for every row count, column count and k around the vector widths.
TEST(MulMatKernels, DotMatchesReference) {
    // 8200: rows past k_dot_long_k, which the ISA paths walk 4 rows at a time even for 1 column
    const int64_t ks[] = {1, 5, 8, 15, 16, 17, 31, 32, 33, 63, 100, 257, 1000, 8200};
    const std::vector<int64_t> nrs_all = {1, 2, 3, 4, 5, 17, 67}, ncs_all = {1, 2, 3, 4, 5, 7};
    const std::vector<int64_t> nrs_long = {3, 9}, ncs_long = {1, 2};
    rng g{11};
    for (const ggml_mul_mat_kernels * kt : kernel_paths()) {
        for (ggml_type t : k_types) {
            const ggml_mul_mat_type_kernels & e = kt->of(t);
            for (int64_t k : ks) {
                host_matrix a(t, k, 67, 3, g);
                host_matrix b32(GGML_TYPE_F32, k, 7, 0, g);
                const host_matrix b = convert_matrix(b32, e.dot_vec_type);
                output_check check;
                for (int64_t nr : k > 1000 ? nrs_long : nrs_all) {
                    for (int64_t nc : k > 1000 ? ncs_long : ncs_all) {
                        SCOPED_TRACE(std::string(kt->name) + " " + ggml_type_name(t) + " k=" + std::to_string(k) +
                                     " nr=" + std::to_string(nr) + " nc=" + std::to_string(nc));
                        const int64_t ldy = nr + 2;
                        std::vector<float> y(size_t(ldy * nc), 1e30f);
                        e.dot(k, a.row(0), a.ld, nr, b.row(0), b.ld, nc, y.data(), ldy);
                        for (int64_t c = 0; c < nc; ++c) {
                            for (int64_t r = 0; r < ldy; ++r) {
                                const float v = y[size_t(c * ldy + r)];
                                if (r >= nr) {
                                    ASSERT_EQ(v, 1e30f) << "written outside the rows";
                                    continue;
                                }
                                check.add(v, a, r, b, b32, c);
                                if (HasFatalFailure()) return;
                            }
                        }
                    }
                }
                EXPECT_LE(check.exact.value(), nmse_bound(t)) << kt->name << " " << ggml_type_name(t) << " k=" << k;
            }
        }
    }
}

// B panels as mul-mat.h lays them out, from F32 columns.
std::vector<uint8_t> make_panels(const ggml_mul_mat_kernels & kt, ggml_type t, const host_matrix & b32,
                                 size_t * stride) {
    const int nr = kt.gemm_nr;
    const int64_t n_panels = (b32.rows + nr - 1) / nr;
    const ggml_type vt = kt.of(t).gemm_vec_type;
    *stride = ggml_mul_mat_panel_bytes(kt, t, b32.k);
    std::vector<uint8_t> out(*stride * size_t(n_panels) + 64, 0);
    for (int64_t p = 0; p < n_panels; ++p) {
        uint8_t * panel = out.data() + size_t(p) * *stride;
        for (int j = 0; j < nr; ++j) {
            const int64_t col = p * nr + j;
            if (col >= b32.rows) continue;  // padding stays zero
            for (int64_t k = 0; k < b32.k; ++k) {
                const size_t idx = kt.of(t).gemm_kpair == 2 ? size_t((k / 2) * nr * 2 + j * 2 + k % 2) : size_t(k * nr + j);
                store_as(vt, panel + idx * ggml_type_size(vt), b32.vals[size_t(col * b32.k + k)]);
            }
        }
    }
    return out;
}

// Panel packing: rows of 32-bit units transposed into the panel, missing columns zero.
TEST(MulMatKernels, PackMatchesLayout) {
    rng g{31};
    for (const ggml_mul_mat_kernels * kt : kernel_paths()) {
        if (!kt->gemm_pack) continue;
        ASSERT_LE(kt->gemm_nr, GGML_MUL_MAT_MAX_NR);
        for (int64_t n : {1, 3, 8, 15, 16, 17, 33, 100}) {
            SCOPED_TRACE(std::string(kt->name) + " n=" + std::to_string(n));
            std::vector<std::vector<uint32_t>> data(size_t(kt->gemm_nr), std::vector<uint32_t>(size_t(n)));
            const uint32_t * rows[GGML_MUL_MAT_MAX_NR] = {};
            for (int j = 0; j < kt->gemm_nr; ++j) {
                for (auto & v : data[size_t(j)]) v = uint32_t(g.uniform() * 2e9) | 1u;  // never 0
                rows[j] = j % 5 == 3 ? nullptr : data[size_t(j)].data();
            }
            const size_t units = size_t(n * kt->gemm_nr);
            std::vector<uint32_t> panel(units + 16, 0xdeadbeefu);
            kt->gemm_pack(rows, n, panel.data());
            for (int64_t e = 0; e < n; ++e) {
                for (int j = 0; j < kt->gemm_nr; ++j) {
                    const uint32_t want = rows[j] ? rows[j][e] : 0u;
                    ASSERT_EQ(panel[size_t(e * kt->gemm_nr + j)], want) << "e=" << e << " j=" << j;
                }
            }
            for (size_t i = units; i < panel.size(); ++i) ASSERT_EQ(panel[i], 0xdeadbeefu) << "written past the panel";
        }
    }
}

// GEMM job: d[j * ldd + i] on row counts up to gemm_mc, column counts around the panel width
// and k across the packing blocks; cells outside the job stay untouched.
TEST(MulMatKernels, GemmMatchesReference) {
    const int64_t ks[] = {1, 2, 7, 16, 17, 255, 256, 257, 600};
    const int64_t ns[] = {1, 2, 5, 6, 7, 12, 13, 25};
    rng g{23};
    for (const ggml_mul_mat_kernels * kt : kernel_paths()) {
        if (!kt->of(GGML_TYPE_F32).gemm) continue;  // this path has no GEMM
        const int64_t ms[] = {1, 2, 3, 5, 17, 33, kt->gemm_mc};
        struct aligned_free { void operator()(void * p) const { std::free(p); } };
        std::unique_ptr<void, aligned_free> scratch(std::aligned_alloc(64, (kt->gemm_scratch + 63) / 64 * 64));
        for (ggml_type t : k_types) {
            const ggml_mul_mat_type_kernels & e = kt->of(t);
            for (int64_t k : ks) {
                host_matrix a(t, k, kt->gemm_mc, 5, g);
                host_matrix b32(GGML_TYPE_F32, k, 25, 0, g);
                const host_matrix b_seen = convert_matrix(b32, e.gemm_vec_type);
                size_t stride = 0;
                const std::vector<uint8_t> panels = make_panels(*kt, t, b32, &stride);
                output_check check;
                for (int64_t m : ms) {
                    for (int64_t n : ns) {
                        SCOPED_TRACE(std::string(kt->name) + " " + ggml_type_name(t) + " k=" + std::to_string(k) +
                                     " m=" + std::to_string(m) + " n=" + std::to_string(n));
                        const int64_t ldd = m + 3;
                        std::vector<float> d(size_t(ldd * (n + 1)), 1e30f);
                        ggml_mul_mat_gemm_args ga;
                        ga.a = a.row(0);
                        ga.lda = a.ld;
                        ga.m = m;
                        ga.bp = panels.data();
                        ga.bp_stride = stride;
                        ga.n = n;
                        ga.k = k;
                        ga.d = d.data();
                        ga.ldd = ldd;
                        ga.scratch = scratch.get();
                        e.gemm(ga);
                        for (int64_t j = 0; j <= n; ++j) {
                            for (int64_t i = 0; i < ldd; ++i) {
                                const float v = d[size_t(j * ldd + i)];
                                if (i >= m || j >= n) {
                                    ASSERT_EQ(v, 1e30f) << "written outside the job";
                                    continue;
                                }
                                check.add(v, a, i, b_seen, b32, j);
                                if (HasFatalFailure()) return;
                            }
                        }
                    }
                }
                EXPECT_LE(check.exact.value(), nmse_bound(t)) << kt->name << " " << ggml_type_name(t) << " k=" << k;
            }
        }
    }
}

// ---- whole graphs on every device ----

using backend_entry = test_devices::entry;

std::vector<backend_entry> & backends() {
    static std::vector<backend_entry> list = test_devices::make_list({1, 2, 3});
    return list;
}

// Element (i0, i1, i2, i3) of t, read from the host copy of t's (or its view source's) memory.
double host_elem(const ggml_tensor * t, const std::vector<uint8_t> & mem, int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
    const size_t off = (t->view_src ? t->view_offs : 0) + size_t(i0) * t->nb[0] + size_t(i1) * t->nb[1] +
                       size_t(i2) * t->nb[2] + size_t(i3) * t->nb[3];
    return load_as(t->type, mem.data() + off);
}

// Builds a and b from the memory tensors a_mem and b_mem (a view, permutation, transposition
// or the tensor itself), given by the two callbacks.
struct mm_case {
    std::string name;
    ggml_type ta;
    std::vector<int64_t> a_mem, b_mem;  // shapes of the allocated tensors
    ggml_tensor * (*make_a)(ggml_context *, ggml_tensor *);
    ggml_tensor * (*make_b)(ggml_context *, ggml_tensor *);
    double cpu_bound = 0.0;  // > 0: a tighter NMSE bound for the CPU paths
};

ggml_tensor * same(ggml_context *, ggml_tensor * t) { return t; }

void fill_random(ggml_tensor * t, std::vector<uint8_t> & mem, rng & g) {
    mem.assign(ggml_nbytes(t), 0);
    const size_t es = ggml_type_size(t->type);
    for (size_t i = 0; i < mem.size() / es; ++i) store_as(t->type, mem.data() + i * es, g.uniform());
    ggml_backend_tensor_set(t, mem.data(), 0, mem.size());
}

void run_case(const mm_case & c, uint64_t seed) {
    SCOPED_TRACE(c.name);
    ggml_init_params ip;
    ip.mem_size = 16 * ggml_tensor_overhead() + ggml_graph_overhead();
    ip.no_alloc = true;
    ggml_context_ptr ctx(ggml_init(ip));
    ASSERT_TRUE(ctx);
    ggml_tensor * am = ggml_new_tensor(ctx.get(), c.ta, 4, c.a_mem.data());
    ggml_tensor * bm = ggml_new_tensor(ctx.get(), GGML_TYPE_F32, 4, c.b_mem.data());
    ggml_tensor * a = c.make_a(ctx.get(), am);
    ggml_tensor * b = c.make_b(ctx.get(), bm);
    ggml_tensor * y = ggml_mul_mat(ctx.get(), a, b);
    ggml_set_output(y);
    ggml_cgraph * gf = ggml_new_graph(ctx.get());
    ggml_build_forward_expand(gf, y);
    ggml_backend_buffer_ptr buf = ggml_backend_alloc_ctx_tensors(ctx.get(), ggml_backend_cpu_buffer_type());
    ASSERT_TRUE(buf);
    rng g{seed};
    std::vector<uint8_t> amem, bmem;
    fill_random(am, amem, g);
    fill_random(bm, bmem, g);

    const int64_t K = a->ne[0], M = a->ne[1], N = b->ne[1];
    const int64_t r2 = b->ne[2] / a->ne[2], r3 = b->ne[3] / a->ne[3];
    std::vector<double> ref(size_t(ggml_nelements(y)));
    for (int64_t i3 = 0; i3 < b->ne[3]; ++i3)
        for (int64_t i2 = 0; i2 < b->ne[2]; ++i2)
            for (int64_t n = 0; n < N; ++n)
                for (int64_t m = 0; m < M; ++m) {
                    double s = 0.0;
                    for (int64_t k = 0; k < K; ++k) {
                        s += host_elem(a, amem, k, m, i2 / r2, i3 / r3) * host_elem(b, bmem, k, n, i2, i3);
                    }
                    ref[size_t(((i3 * b->ne[2] + i2) * N + n) * M + m)] = s;
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
        nmse_acc e;
        for (size_t i = 0; i < ref.size(); ++i) e.add(out[i], ref[i]);
        EXPECT_LE(e.value(), be.is_cpu() && c.cpu_bound > 0.0 ? c.cpu_bound : nmse_bound(c.ta)) << be.label;
    }
}

std::string shape_name(const char * what, ggml_type t, int64_t k, int64_t m) {
    return std::string(what) + "=" + ggml_type_name(t) + "[" + std::to_string(k) + "," + std::to_string(m) + "]";
}

// Odd sizes on both the mat-vec (few columns) and the GEMM path.
TEST(MulMatOp, OddSizes) {
    const int64_t ks[] = {7, 33, 300};
    const int64_t sizes[] = {1, 2, 3, 5, 17, 67};
    uint64_t seed = 100;
    for (ggml_type t : k_types)
        for (int64_t k : ks)
            for (int64_t m : sizes)
                for (int64_t n : sizes) {
                    run_case({shape_name("a", t, k, m) + " " + shape_name("b", GGML_TYPE_F32, k, n), t, {k, m, 1, 1},
                              {k, n, 1, 1}, same, same},
                             seed++);
                }
}

// Several row blocks, panels and packing blocks of k in one node.
TEST(MulMatOp, LargerGemm) {
    uint64_t seed = 200;
    for (ggml_type t : k_types) {
        run_case({shape_name("a", t, 520, 131) + " b[520,70]", t, {520, 131, 1, 1}, {520, 70, 1, 1}, same, same}, seed++);
    }
}

// a broadcast over b's batches: ne12 = 4 * ne02, ne13 = 2 * ne03.
TEST(MulMatOp, BroadcastBatches) {
    uint64_t seed = 300;
    for (ggml_type t : k_types) {
        for (int64_t n : {1, 3, 20, 70}) {
            run_case({"broadcast " + std::string(ggml_type_name(t)) + " n=" + std::to_string(n), t, {37, 19, 2, 3},
                      {37, n, 8, 6}, same, same},
                     seed++);
        }
    }
}

// Shapes of the amx path's jobs and blocks: several 512-k slices with a partial 32-k step,
// row blocks of 128 with a partial 16-row tile, partial 32-column blocks, and the smallest
// column count it takes (16). Every CPU path runs them; on one without AMX they are GEMM cases.
// F16 weights are held to 1e-9 on the CPU: the amx path's hi / lo split must keep F32
// activations to ~16 bits (activations rounded to F16 or BF16 would give ~1e-7 / ~5e-6).
TEST(MulMatOp, AmxBlocks) {
    uint64_t seed = 250;
    const int64_t shapes[][3] = {{1100, 300, 77}, {64, 40, 16}, {96, 16, 33}};
    for (ggml_type t : k_types) {
        for (const auto & s : shapes) {
            const int64_t k = s[0], m = s[1], n = s[2];
            run_case({shape_name("a", t, k, m) + " " + shape_name("b", GGML_TYPE_F32, k, n), t, {k, m, 1, 1},
                      {k, n, 1, 1}, same, same, t == GGML_TYPE_F16 ? 1e-9 : 0.0},
                     seed++);
        }
    }
}

ggml_tensor * transpose_01(ggml_context * ctx, ggml_tensor * t) { return ggml_transpose(ctx, t); }
ggml_tensor * permute_12(ggml_context * ctx, ggml_tensor * t) { return ggml_permute(ctx, t, 0, 2, 1, 3); }
// rows 0..ne0-3 of every row, starting at element 1: rows with padding between them
ggml_tensor * inner_view(ggml_context * ctx, ggml_tensor * t) {
    return ggml_view_4d(ctx, t, t->ne[0] - 3, t->ne[1], t->ne[2], t->ne[3], t->nb[1], t->nb[2], t->nb[3], t->nb[0]);
}

// Non-contiguous operands: transposed and permuted b, permuted and padded a.
TEST(MulMatOp, NonContiguous) {
    uint64_t seed = 400;
    for (ggml_type t : k_types) {
        const std::string tn = ggml_type_name(t);
        for (int64_t n : {3, 20}) {
            const std::string ns = " n=" + std::to_string(n);
            // b = transpose of [n, 41]: elements of a column of b are n floats apart
            run_case({tn + " b transposed" + ns, t, {41, 13, 1, 1}, {n, 41, 1, 1}, same, transpose_01}, seed++);
            // attention-like: a [K, ne2, M] and b [K, ne12, N] permuted to [K, M, ne2] / [K, N, ne12]
            run_case({tn + " a and b permuted" + ns, t, {64, 2, 11, 1}, {64, 8, n, 1}, permute_12, permute_12}, seed++);
            // views whose rows are not adjacent
            run_case({tn + " a and b inner views" + ns, t, {43, 9, 2, 1}, {43, n, 4, 1}, inner_view, inner_view}, seed++);
        }
    }
}

}  // namespace
