// The CUDA kernels of ops-*.cu against the CPU backend, on odd sizes, views with any strides,
// broadcasting, F32/F16/BF16, and the special values each op defines (masked rows, ties, NaN).
// Every test skips with the runtime's reason where there is no usable GPU.
#include "test-cuda-common.h"

#include <limits>

namespace {

using namespace cuda_test;

constexpr double k_exact = 0.0;
constexpr double k_f32_math = 1e-12;  // float math against the CPU's (double or SIMD) paths

const ggml_type k_float_types[] = {GGML_TYPE_F32, GGML_TYPE_F16, GGML_TYPE_BF16};

std::string tn(ggml_type t) { return ggml_type_name(t); }

// a [ne] of type, made non-contiguous when asked: a transposed view of a [ne1, ne0] tensor.
ggml_tensor * maybe_transposed(case_inputs & in, ggml_type type, const shape4 & ne, bool transposed, double lo = -1.0,
                               double hi = 1.0) {
    if (!transposed) return in.random(type, ne, lo, hi);
    return ggml_transpose(in.ctx, in.random(type, {ne[1], ne[0], ne[2], ne[3]}, lo, hi));
}

TEST(cuda_ops, binary_broadcast_types_and_views) {
    SKIP_WITHOUT_GPU();
    const ggml_op ops[] = {GGML_OP_ADD, GGML_OP_MUL, GGML_OP_DIV};
    const shape4 b_shapes[] = {{33, 7, 3, 2}, {33, 1, 3, 1}, {1, 7, 1, 1}, {1, 1, 1, 1}, {11, 7, 3, 2}};
    for (ggml_op op : ops) {
        for (ggml_type ta : k_float_types) {
            for (const shape4 & bs : b_shapes) {
                for (bool tr : {false, true}) {
                    const std::string name = std::string(ggml_op_name(op)) + " " + tn(ta) + (tr ? " transposed" : "");
                    expect_same_as_cpu(name, [&](case_inputs & in) -> ggml_tensor * {
                        ggml_tensor * a = maybe_transposed(in, ta, {33, 7, 3, 2}, tr);
                        ggml_tensor * b = in.random(GGML_TYPE_F32, bs, 0.5, 2.0);
                        if (op == GGML_OP_ADD) return ggml_add(in.ctx, a, b);
                        if (op == GGML_OP_MUL) return ggml_mul(in.ctx, a, b);
                        return ggml_div(in.ctx, a, b);
                    }, ta == GGML_TYPE_F32 ? k_f32_math : 1e-5);
                }
            }
        }
    }
}

TEST(cuda_ops, unary_and_swiglu) {
    SKIP_WITHOUT_GPU();
    for (ggml_type t : k_float_types) {
        const double tol = t == GGML_TYPE_F32 ? 1e-12 : 1e-5;
        for (bool tr : {false, true}) {
            const std::string s = tn(t) + (tr ? " transposed" : "");
            expect_same_as_cpu("silu " + s, [&](case_inputs & in) {
                return ggml_silu(in.ctx, maybe_transposed(in, t, {37, 9, 2, 1}, tr, -20.0, 20.0));
            }, tol);
            expect_same_as_cpu("gelu " + s, [&](case_inputs & in) {
                return ggml_gelu(in.ctx, maybe_transposed(in, t, {37, 9, 2, 1}, tr, -12.0, 12.0));
            }, tol);
            expect_same_as_cpu("tanh " + s, [&](case_inputs & in) {
                return ggml_tanh(in.ctx, maybe_transposed(in, t, {37, 9, 2, 1}, tr, -5.0, 5.0));
            }, tol);
            expect_same_as_cpu("scale_bias " + s, [&](case_inputs & in) {
                return ggml_scale_bias(in.ctx, maybe_transposed(in, t, {37, 9, 2, 1}, tr), -1.75f, 0.25f);
            }, tol);
            expect_same_as_cpu("swiglu " + s, [&](case_inputs & in) {
                return ggml_swiglu(in.ctx, maybe_transposed(in, t, {37, 9, 2, 1}, tr, -8.0, 8.0),
                                   in.random(GGML_TYPE_F32, {37, 9, 2, 1}));
            }, tol);
        }
    }
}

TEST(cuda_ops, norms_and_sum_rows) {
    SKIP_WITHOUT_GPU();
    for (int64_t ne0 : {1, 17, 512, 600, 5000}) {
        for (bool tr : {false, true}) {
            for (int64_t rows : {3, 300}) {
                const std::string s = std::to_string(ne0) + "x" + std::to_string(rows) + (tr ? " transposed" : "");
                expect_same_as_cpu("rms_norm " + s, [&](case_inputs & in) {
                    return ggml_rms_norm(in.ctx, maybe_transposed(in, GGML_TYPE_F32, {ne0, rows, 1, 1}, tr), 1e-6f);
                }, 1e-11);
                expect_same_as_cpu("norm " + s, [&](case_inputs & in) {  // |mean| >> stddev
                    ggml_tensor * a = maybe_transposed(in, GGML_TYPE_F32, {ne0, rows, 1, 1}, tr, 99.0, 101.0);
                    return ggml_norm(in.ctx, a, 1e-5f);
                }, 1e-8);
                expect_same_as_cpu("sum_rows " + s, [&](case_inputs & in) {
                    return ggml_sum_rows(in.ctx, maybe_transposed(in, GGML_TYPE_F32, {ne0, rows, 1, 1}, tr));
                }, 1e-11);
            }
        }
    }
}

TEST(cuda_ops, rope_modes_yarn_factors_large_positions) {
    SKIP_WITHOUT_GPU();
    for (int mode : {GGML_ROPE_TYPE_NORMAL, GGML_ROPE_TYPE_NEOX}) {
        for (bool yarn : {false, true}) {
            for (bool ff : {false, true}) {
                for (int n_dims : {64, 48}) {
                    ggml_rope_params p;
                    p.n_dims = n_dims;
                    p.mode = mode;
                    p.freq_base = 500000.0f;
                    p.n_ctx_orig = 8192;
                    if (yarn) {
                        p.freq_scale = 0.25f;
                        p.ext_factor = 1.0f;
                        p.attn_factor = 1.1f;
                    }
                    const std::string name = "rope mode " + std::to_string(mode) + (yarn ? " yarn" : "") +
                                             (ff ? " ff" : "") + " n_dims " + std::to_string(n_dims);
                    expect_same_as_cpu(name, [=](case_inputs & in) {
                        ggml_tensor * a = in.random(GGML_TYPE_F32, {64, 5, 4, 1});
                        ggml_tensor * pos = in.values(GGML_TYPE_I32, {4, 1, 1, 1}, {0, 17, 40000, 131071});
                        if (!ff) return ggml_rope(in.ctx, a, pos, p);
                        ggml_tensor * f = in.random(GGML_TYPE_F32, {n_dims / 2, 1, 1, 1}, 1.0, 8.0);
                        return ggml_rope_ff(in.ctx, a, pos, f, p);
                    }, 1e-10);
                }
            }
        }
    }
    ggml_rope_params p;
    p.n_dims = 32;
    expect_same_as_cpu("rope permuted view", [=](case_inputs & in) {
        ggml_tensor * a = ggml_permute(in.ctx, in.random(GGML_TYPE_F32, {32, 3, 6, 1}), 0, 2, 1, 3);  // [32, 6, 3]
        return ggml_rope(in.ctx, a, in.values(GGML_TYPE_I32, {3, 1, 1, 1}, {5, 6, 7}), p);
    }, 1e-10);
}

TEST(cuda_ops, soft_max_masks_and_empty_rows) {
    SKIP_WITHOUT_GPU();
    for (ggml_type mt : {GGML_TYPE_COUNT, GGML_TYPE_F32, GGML_TYPE_F16}) {
        for (int64_t ne0 : {7, 600, 3000}) {
            const std::string mask_name = mt == GGML_TYPE_COUNT ? "none" : tn(mt);
            const std::string name = "soft_max " + std::to_string(ne0) + " mask " + mask_name;
            expect_same_as_cpu(name, [&](case_inputs & in) {
                ggml_tensor * a = in.random(GGML_TYPE_F32, {ne0, 5, 4, 2}, -8.0, 8.0);
                if (mt == GGML_TYPE_COUNT) return ggml_soft_max_ext(in.ctx, a, nullptr, 0.7f);
                std::vector<double> m(size_t(ne0 * 6 * 2));
                bops::rng r(3);
                for (double & x : m) x = r.below(4) == 0 ? -INFINITY : r.uniform(-1.0, 1.0);
                for (int64_t i = 0; i < ne0; ++i) m[size_t(2 * ne0 + i)] = -INFINITY;  // row 2: all masked
                return ggml_soft_max_ext(in.ctx, a, in.values(mt, {ne0, 6, 2, 1}, m), 0.7f);
            }, 1e-11);
        }
    }
}

TEST(cuda_ops, copies_between_types_and_layouts) {
    SKIP_WITHOUT_GPU();
    for (ggml_type ts : k_float_types) {
        for (ggml_type td : k_float_types) {
            expect_same_as_cpu("cpy " + tn(ts) + " -> " + tn(td) + " permuted", [&](case_inputs & in) {
                ggml_tensor * a = ggml_permute(in.ctx, in.random(ts, {13, 5, 3, 2}), 1, 2, 0, 3);
                return ggml_cpy(in.ctx, a, in.random(td, {a->ne[0], a->ne[1], a->ne[2], a->ne[3]}));
            }, k_exact);
            expect_same_as_cpu("cpy " + tn(ts) + " -> " + tn(td) + " reshaped", [&](case_inputs & in) {
                ggml_tensor * a = ggml_transpose(in.ctx, in.random(ts, {12, 10, 1, 1}));
                return ggml_cpy(in.ctx, a, in.random(td, {4, 30, 1, 1}));
            }, k_exact);
        }
        expect_same_as_cpu("cont " + tn(ts), [&](case_inputs & in) {
            return ggml_cont(in.ctx, ggml_transpose(in.ctx, in.random(ts, {19, 6, 2, 1})));
        }, k_exact);
    }
    expect_same_as_cpu("cont q8_0 reshaped", [](case_inputs & in) {
        return ggml_cont_2d(in.ctx, in.random(GGML_TYPE_Q8_0, {64, 6, 1, 1}), 128, 3);
    }, k_exact);
}

TEST(cuda_ops, concat_every_dim) {
    SKIP_WITHOUT_GPU();
    for (int dim = 0; dim < 4; ++dim) {
        for (ggml_type t : k_float_types) {
            expect_same_as_cpu("concat dim " + std::to_string(dim) + " " + tn(t), [&](case_inputs & in) {
                shape4 nb{5, 4, 3, 2};
                nb[size_t(dim)] = 3;
                ggml_tensor * a = maybe_transposed(in, t, {5, 4, 3, 2}, dim != 1);
                return ggml_concat(in.ctx, a, in.random(t, nb), dim);
            }, k_exact);
        }
    }
}

TEST(cuda_ops, get_rows_float_and_quantized) {
    SKIP_WITHOUT_GPU();
    for (ggml_type t : k_float_types) {
        expect_same_as_cpu("get_rows " + tn(t), [&](case_inputs & in) {
            ggml_tensor * a = maybe_transposed(in, t, {24, 9, 2, 1}, true);
            return ggml_get_rows(in.ctx, a, in.values(GGML_TYPE_I32, {3, 2, 1, 1}, {8, 0, 8, 1, 1, 5}));
        }, k_exact);
    }
    const ggml_type quant[] = {GGML_TYPE_Q4_0, GGML_TYPE_Q4_1, GGML_TYPE_Q5_0, GGML_TYPE_Q5_1, GGML_TYPE_Q8_0,
                               GGML_TYPE_Q2_K, GGML_TYPE_Q3_K, GGML_TYPE_Q4_K, GGML_TYPE_Q5_K, GGML_TYPE_Q6_K,
                               GGML_TYPE_IQ4_NL, GGML_TYPE_IQ4_XS};
    for (ggml_type t : quant) {
        if (!ggml_get_type_traits(t).from_float) continue;
        expect_same_as_cpu("get_rows " + tn(t), [&](case_inputs & in) {
            ggml_tensor * a = in.random(t, {512, 7, 1, 1});
            return ggml_get_rows(in.ctx, a, in.values(GGML_TYPE_I32, {4, 1, 1, 1}, {6, 0, 6, 3}));
        }, 1e-14);
    }
}

TEST(cuda_ops, set_rows_float_q8_0_and_broadcast_indices) {
    SKIP_WITHOUT_GPU();
    for (ggml_type t : {GGML_TYPE_F32, GGML_TYPE_F16, GGML_TYPE_BF16, GGML_TYPE_Q8_0}) {
        for (ggml_type it : {GGML_TYPE_I32, GGML_TYPE_I64}) {
            expect_same_as_cpu("set_rows " + tn(t) + " " + tn(it), [&](case_inputs & in) {
                ggml_tensor * a = in.random(t, {64, 10, 4, 1});
                ggml_tensor * b = in.random(GGML_TYPE_F32, {64, 3, 4, 1}, -3.0, 3.0);
                // indices [3, 2, 1]: broadcast over a's dim 2 (4 % 2 == 0)
                return ggml_set_rows(in.ctx, a, b, in.values(it, {3, 2, 1, 1}, {9, 0, 4, 2, 7, 1}));
            }, k_exact);
        }
    }
    expect_same_as_cpu("set_rows q8_0 zeros, huge and tiny values", [](case_inputs & in) {
        ggml_tensor * a = in.random(GGML_TYPE_Q8_0, {64, 4, 1, 1});
        std::vector<double> v(128, 0.0);
        for (size_t i = 32; i < 64; ++i) v[i] = (i % 2 ? 1e6 : -3e5);  // scale clamped to the fp16 range
        for (size_t i = 64; i < 96; ++i) v[i] = 1e-9 * double(i);      // scale below fp16: subnormal
        return ggml_set_rows(in.ctx, a, in.values(GGML_TYPE_F32, {64, 2, 1, 1}, v),
                             in.values(GGML_TYPE_I32, {2, 1, 1, 1}, {3, 0}));
    }, k_exact);
}

TEST(cuda_ops, argmax_and_top_k_order) {
    SKIP_WITHOUT_GPU();
    const double nan = std::numeric_limits<double>::quiet_NaN();
    std::vector<double> row = {1.0, 3.0, nan, 3.0, -0.0, 0.0, -INFINITY, 3.0, nan, 2.0};
    expect_same_as_cpu("argmax ties and NaN", [&](case_inputs & in) {
        std::vector<double> v = row;
        v.insert(v.end(), 10, nan);  // a row of NaNs: index 0
        return ggml_argmax(in.ctx, in.values(GGML_TYPE_F32, {10, 2, 1, 1}, v));
    }, k_exact);
    for (int k : {1, 4, 10}) {
        expect_same_as_cpu("top_k ties, zeros, NaN k=" + std::to_string(k), [&](case_inputs & in) {
            return ggml_top_k(in.ctx, in.values(GGML_TYPE_F32, {10, 1, 1, 1}, row), k);
        }, k_exact);
    }
    for (int64_t n : {8, 128, 1024, 1025, 5000, 150000}) {
        for (int k : {1, 8, 40, 1000}) {
            if (k > n) continue;
            expect_same_as_cpu("top_k n=" + std::to_string(n) + " k=" + std::to_string(k), [&](case_inputs & in) {
                return ggml_top_k(in.ctx, in.random(GGML_TYPE_F32, {n, 3, 1, 1}, -4.0, 4.0), k);
            }, k_exact);
        }
    }
    expect_same_as_cpu("top_k of rounded values (ties)", [](case_inputs & in) {
        std::vector<double> v(3000);
        bops::rng r(11);
        for (double & x : v) x = double(r.below(7)) - 3.0;
        return ggml_top_k(in.ctx, in.values(GGML_TYPE_F32, {3000, 1, 1, 1}, v), 700);
    }, k_exact);
}

}  // namespace
