// Every op of ggml/ggml.h on every device of the build — the CPU backend on each ISA path this
// CPU has (scalar, avx2, avx512) with 1 and 3 threads, and every non-CPU device of
// ggml_backend_registry_default() (a CUDA GPU where there is one; "no GPU device: <reason>" is
// printed otherwise) — against a double-precision reference on random inputs: odd sizes, views,
// permuted/transposed inputs, broadcasting, F32/F16/BF16. A failure names the case (op, types,
// shapes) and the device (ISA and thread count). The scheduler tests' mock device, a non-CPU
// device with its own memory and a deferred queue, checks that the harness's non-CPU path works.
// (MUL_MAT_ID with every weight type: test-mul-mat-id.cpp; FLASH_ATTN_EXT: test-flash-attn.cpp.)
//
// Set INFERD_BACKEND_OPS_VERBOSE=1 to print the NMSE of every case and device.

#include "backend-ops-block.h"
#include "backend-ops-cases-rows.h"
#include "scheduler/mock-backend.h"

#include "ggml/alloc.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace {

using namespace bops;

TEST(backend_ops, backends_cover_every_isa_path_and_every_device) {
    const ggml_cpu_isa best = ggml_cpu_detect_features().best_isa();
    const size_t n_cpu = 2u * (static_cast<size_t>(best) + 1);
    const std::vector<ggml_backend_device_i *> gpus = test_devices::gpu_devices();
    ASSERT_EQ(backends().size(), n_cpu + gpus.size());
    for (size_t i = 0; i < backends().size(); ++i) {
        const backend_entry & be = backends()[i];
        ASSERT_TRUE(be.backend) << be.label;
        EXPECT_EQ(be.backend->device(), be.device) << be.label;
        if (i < n_cpu) {
            EXPECT_TRUE(ggml_backend_is_cpu(be.backend.get())) << be.label;
            EXPECT_EQ(ggml_backend_cpu_get_isa(be.backend.get()), be.isa) << be.label;
        } else {
            EXPECT_EQ(be.device, gpus[i - n_cpu]) << be.label;
            EXPECT_FALSE(be.is_cpu()) << be.label;
        }
    }
}

// The harness's non-CPU path, through the mock device: its own memory (the CPU may not read
// it: every node and source must be placed there, or its graph_compute fails) and a deferred
// queue (the result exists only once the harness has synchronized). Cases it does not support
// are skipped, not failed.
TEST(backend_ops, non_cpu_path_runs_cases_in_the_device_memory) {
    mock_device dev("MOCKGPU");
    dev.set_deferred(true);
    std::vector<backend_entry> list;
    list.push_back(test_devices::make_entry(&dev));
    EXPECT_FALSE(list[0].is_cpu());
    EXPECT_EQ(list[0].label, "MOCKGPU");
    std::vector<op_case> cases = cases_binary(GGML_OP_ADD);
    cases.resize(std::min<size_t>(cases.size(), 6));
    for (const op_case & c : cases_soft_max()) {
        if (cases.size() < 9) cases.push_back(c);
    }
    const std::vector<op_case> rows = cases_get_rows();
    cases.insert(cases.end(), rows.begin(), rows.begin() + std::min<std::ptrdiff_t>(3, std::ssize(rows)));
    const bool any_in_place = std::any_of(cases.begin(), cases.end(), [](const op_case & c) { return c.in_place; });
    check_cases(cases, list);
    EXPECT_TRUE(any_in_place);
    EXPECT_GE(dev.count().graphs_computed, int64_t(cases.size()));
    EXPECT_EQ(dev.count().foreign_reads, 0);
    EXPECT_GT(dev.count().host_syncs, 0);

    const int skipped = skipped_on_devices();
    const int64_t computed = dev.count().graphs_computed;
    dev.set_unsupported({GGML_OP_SOFT_MAX});
    const std::vector<op_case> soft_max = cases_soft_max();
    int runs = 0;  // one per case, two for in-place cases
    for (const op_case & c : soft_max) runs += c.in_place ? 2 : 1;
    check_cases(soft_max, list);
    EXPECT_EQ(skipped_on_devices(), skipped + runs);
    EXPECT_EQ(dev.count().graphs_computed, computed);
}

TEST(backend_ops, get_rows) { check_cases(cases_get_rows()); }
TEST(backend_ops, set_rows) { check_cases(cases_set_rows()); }
TEST(backend_ops, index_out_of_range_fails) { check_cases(cases_index_errors()); }
TEST(backend_ops, add) { check_cases(cases_binary(GGML_OP_ADD)); }
TEST(backend_ops, mul) { check_cases(cases_binary(GGML_OP_MUL)); }
TEST(backend_ops, div) { check_cases(cases_binary(GGML_OP_DIV)); }
TEST(backend_ops, scale) { check_cases(cases_scale()); }
TEST(backend_ops, rms_norm) { check_cases(cases_norm(true)); }
TEST(backend_ops, norm) { check_cases(cases_norm(false)); }
TEST(backend_ops, mul_mat) { check_cases(cases_mul_mat()); }
TEST(backend_ops, rope) { check_cases(cases_rope()); }
TEST(backend_ops, rope_freq_factors_by_hand) { check_cases(cases_rope_freq_factors_by_hand()); }
TEST(backend_ops, rope_freq_factor_errors) { check_cases(cases_rope_freq_factor_errors()); }

// The CPU takes ROPE's src[2] only as F32, contiguous, with at least n_dims/2 factors.
TEST(backend_ops, rope_freq_factors_supports_op) {
    ggml_init_params ip;
    ip.mem_size = 16 * ggml_tensor_overhead();
    ip.no_alloc = true;
    ggml_context_ptr ctx(ggml_init(ip));
    ggml_tensor * a = ggml_new_tensor_3d(ctx.get(), GGML_TYPE_F32, 16, 2, 3);
    ggml_tensor * pos = ggml_new_tensor_1d(ctx.get(), GGML_TYPE_I32, 3);
    ggml_tensor * ff = ggml_new_tensor_1d(ctx.get(), GGML_TYPE_F32, 6);
    ggml_tensor * node = ggml_rope_ff(ctx.get(), a, pos, ff, rope_params(12, GGML_ROPE_TYPE_NEOX));
    ASSERT_EQ(node->src[2], ff);
    EXPECT_EQ(ggml_rope(ctx.get(), a, pos, rope_params(12, GGML_ROPE_TYPE_NEOX))->src[2], nullptr);
    const ggml_backend_device_i * dev = backends().front().backend->device();
    EXPECT_TRUE(dev->supports_op(node));
    node->src[2] = ggml_new_tensor_1d(ctx.get(), GGML_TYPE_F16, 6);
    EXPECT_FALSE(dev->supports_op(node));
    node->src[2] = ggml_new_tensor_1d(ctx.get(), GGML_TYPE_F32, 5);
    EXPECT_FALSE(dev->supports_op(node));
    ggml_tensor * wide = ggml_new_tensor_1d(ctx.get(), GGML_TYPE_F32, 12);
    node->src[2] = ggml_view_1d(ctx.get(), wide, 6, 0);
    EXPECT_TRUE(dev->supports_op(node));
    node->src[2] = ggml_view_2d(ctx.get(), wide, 1, 6, 2 * sizeof(float), 0);  // every other float
    EXPECT_FALSE(dev->supports_op(node));
}
TEST(backend_ops, soft_max) { check_cases(cases_soft_max()); }
TEST(backend_ops, silu) { check_cases(cases_activation(GGML_OP_SILU)); }
TEST(backend_ops, gelu) { check_cases(cases_activation(GGML_OP_GELU)); }
TEST(backend_ops, tanh) { check_cases(cases_activation(GGML_OP_TANH)); }
TEST(backend_ops, swiglu) { check_cases(cases_activation(GGML_OP_SWIGLU)); }
TEST(backend_ops, cpy) { check_cases(cases_cpy()); }
TEST(backend_ops, cont) { check_cases(cases_cont()); }
TEST(backend_ops, concat) { check_cases(cases_concat()); }
TEST(backend_ops, argmax) { check_cases(cases_argmax()); }
TEST(backend_ops, sum_rows) { check_cases(cases_sum_rows()); }
TEST(backend_ops, top_k) { check_cases(cases_top_k()); }

// The reference itself, on values worked out by hand.
TEST(backend_ops_reference, f16_bf16_conversions) {
    EXPECT_EQ(double_to_f16_bits(1.0), 0x3c00);
    EXPECT_EQ(double_to_f16_bits(65504.0), 0x7bff);
    EXPECT_EQ(double_to_f16_bits(65520.0), 0x7c00);             // halfway to 2^16 rounds to even: inf
    EXPECT_EQ(double_to_f16_bits(1.0 + std::ldexp(1.0, -11)), 0x3c00);      // tie to even
    EXPECT_EQ(double_to_f16_bits(1.0 + 3 * std::ldexp(1.0, -11)), 0x3c02);  // tie to even (up)
    EXPECT_EQ(double_to_f16_bits(std::ldexp(1.0, -24)), 0x0001);            // smallest subnormal
    EXPECT_EQ(double_to_f16_bits(std::ldexp(1.0, -25)), 0x0000);            // tie to even: 0
    EXPECT_EQ(double_to_f16_bits(-2.0), 0xc000);
    EXPECT_EQ(f16_bits_to_double(0x3555), 0.333251953125);
    EXPECT_EQ(f16_bits_to_double(0x0001), std::ldexp(1.0, -24));
    EXPECT_EQ(float_to_bf16_bits(1.0f), 0x3f80);
    EXPECT_EQ(float_to_bf16_bits(1.0f + std::ldexp(1.0f, -8)), 0x3f80);     // tie to even
    EXPECT_EQ(float_to_bf16_bits(1.0f + 3 * std::ldexp(1.0f, -8)), 0x3f82);
    EXPECT_EQ(bf16_bits_to_double(0xc040), -3.0);
}

TEST(backend_ops_reference, rope_yarn_ramp) {
    // n_dims 32, n_ctx_orig 4096, base 1e4: the ramp runs from pair 5 (floor 5.236) to 12 (ceil 11.257).
    ggml_rope_params p = rope_yarn(32, GGML_ROPE_TYPE_NORMAL, 4096, 0.25f, 1.0f, 1.0f, 32.0f, 1.0f);
    EXPECT_NEAR(rope_yarn_pair_index(32.0, 32, 4096, 1e4), 5.23612, 1e-4);
    EXPECT_NEAR(rope_yarn_pair_index(1.0, 32, 4096, 1e4), 11.25672, 1e-4);
    double theta, mscale;
    ref_rope_angle(p, 100.0, 3, &theta, &mscale);           // below the ramp: extrapolated
    EXPECT_NEAR(theta, 100.0 * std::pow(1e4, -6.0 / 32), 1e-12);
    EXPECT_NEAR(mscale, 1.0 + 0.1 * std::log(4.0), 1e-7);
    ref_rope_angle(p, 100.0, 14, &theta, &mscale);          // past the ramp: interpolated
    EXPECT_NEAR(theta, 25.0 * std::pow(1e4, -28.0 / 32), 1e-12);
    ref_rope_angle(p, 100.0, 8, &theta, &mscale);           // 3/7 of the way: gamma = 4/7
    const double ext = 100.0 * std::pow(1e4, -16.0 / 32);
    EXPECT_NEAR(theta, ext * 0.25 * (3.0 / 7.0) + ext * (4.0 / 7.0), 1e-12);
}

TEST(backend_ops_reference, rope_freq_factors_divide_theta_before_yarn) {
    // The same ramp as above (pairs 5 .. 12); factor 4 on every pair divides the extrapolated
    // angle, and the interpolated one with it; the ramp position and mscale do not change.
    ggml_rope_params p = rope_yarn(32, GGML_ROPE_TYPE_NORMAL, 4096, 0.25f, 1.0f, 1.0f, 32.0f, 1.0f);
    double theta, mscale;
    ref_rope_angle(p, 100.0, 3, &theta, &mscale, 4.0);      // below the ramp: extrapolated
    EXPECT_NEAR(theta, 25.0 * std::pow(1e4, -6.0 / 32), 1e-12);
    EXPECT_NEAR(mscale, 1.0 + 0.1 * std::log(4.0), 1e-7);
    ref_rope_angle(p, 100.0, 14, &theta, &mscale, 4.0);     // past the ramp: interpolated
    EXPECT_NEAR(theta, 6.25 * std::pow(1e4, -28.0 / 32), 1e-12);
    ref_rope_angle(p, 100.0, 8, &theta, &mscale, 4.0);      // 3/7 of the way: gamma = 4/7
    const double ext = 25.0 * std::pow(1e4, -16.0 / 32);
    EXPECT_NEAR(theta, ext * 0.25 * (3.0 / 7.0) + ext * (4.0 / 7.0), 1e-12);
    ggml_rope_params plain = rope_params(4, GGML_ROPE_TYPE_NEOX, 100.0f);  // the by-hand case
    ref_rope_angle(plain, 5.0, 1, &theta, &mscale, 0.25);
    EXPECT_NEAR(theta, 2.0, 1e-12);
    EXPECT_EQ(mscale, 1.0);
}

TEST(backend_ops_reference, rope_llama3_freq_factors) {
    // Llama 3.1 8B: n_dims 128, base 5e5, factor 8, low 1, high 4, original context 8192.
    const std::vector<double> ff = rope_llama3_freq_factors(128, 500000.0, 8.0, 1.0, 4.0, 8192.0);
    ASSERT_EQ(ff.size(), 64u);
    EXPECT_EQ(ff[0], 1.0);    // wavelength 2 pi < 2048
    EXPECT_EQ(ff[63], 8.0);   // wavelength ~ 2.5e6 > 8192
    // pair 30: wavelength w = 2 pi * 5e5^(60/128); s = 8192 / w - 1 over (4 - 1)
    const double w = 2.0 * std::numbers::pi * std::pow(500000.0, 60.0 / 128.0);
    ASSERT_GT(w, 2048.0);
    ASSERT_LT(w, 8192.0);
    const double s = (8192.0 / w - 1.0) / 3.0;
    EXPECT_NEAR(ff[30], 1.0 / ((1.0 - s) / 8.0 + s), 1e-12);
    for (size_t i = 1; i < ff.size(); ++i) EXPECT_GE(ff[i], ff[i - 1]) << i;  // rises with the wavelength
}

// Computes the block with every tensor allocated separately, and through the graph allocator.
struct block_result {
    std::vector<uint8_t> bytes;
    dt value;
    bool unsupported = false;  // a non-CPU device that does not run every node
};

block_result block_run(const backend_entry & be, const block_model & m, bool use_gallocr, dt * ref) {
    ggml_init_params ip;
    ip.mem_size = 128 * ggml_tensor_overhead() + ggml_graph_overhead();
    ip.no_alloc = true;
    ggml_context_ptr ctx(ggml_init(ip));
    const block_io io = block_build(ctx.get(), m);
    ggml_cgraph * gf = ggml_new_graph(ctx.get());
    ggml_build_forward_expand(gf, io.out);
    if (!be.is_cpu() && !be.supports_graph(gf)) return {{}, {}, true};
    ggml_gallocr galloc(be.buffer_type());
    ggml_backend_buffer_ptr buffer;
    if (use_gallocr) {
        // the comparison only means something when the allocator shares memory
        const ggml_galloc_plan plan = ggml_galloc_plan_graph(gf, be.buffer_type());
        EXPECT_LT(plan.peak, plan.naive) << be.label << ": the allocator reused no memory";
        EXPECT_TRUE(std::any_of(plan.entries.begin(), plan.entries.end(), [](const auto & e) { return e.in_place; }))
            << be.label << ": the allocator computed nothing in place";
        EXPECT_TRUE(galloc.reserve(gf)) << be.label;
        EXPECT_TRUE(galloc.alloc_graph(gf)) << be.label;
    } else {
        buffer = ggml_backend_alloc_ctx_tensors(ctx.get(), be.buffer_type());
        EXPECT_TRUE(buffer) << be.label;
    }
    const block_inputs in;
    in.set(io);
    if (ref) *ref = block_reference(m, read_tensor(io.x), read_tensor(io.pos), read_tensor(io.mask));
    EXPECT_EQ(be.compute(gf), GGML_STATUS_SUCCESS) << be.label;
    block_result r{read_bytes(io.out), read_tensor(io.out)};
    if (use_gallocr) {  // the same graph again, placed again: the same result
        EXPECT_TRUE(galloc.alloc_graph(gf)) << be.label;
        in.set(io);
        EXPECT_EQ(be.compute(gf), GGML_STATUS_SUCCESS) << be.label;
        EXPECT_TRUE(read_bytes(io.out) == r.bytes) << be.label << ": second run through the allocator differs";
    }
    return r;
}

// A block's nodes on one device (the CPU, or all of them on a non-CPU device that runs them).
void check_block_on(const backend_entry & be, const block_model & m, dt & ref) {
    op_case cmp;  // comparison settings: BF16 FFN weights dominate the rounding error
    cmp.name = "mini transformer block";
    cmp.max_nmse = 5e-5;
    const block_result separate = block_run(be, m, false, ref.v.empty() ? &ref : nullptr);
    if (separate.unsupported) {
        ++skipped_on_devices();
        return;
    }
    const block_result pooled = block_run(be, m, true, nullptr);
    EXPECT_TRUE(separate.bytes == pooled.bytes) << be.label << ": graph allocator result differs from separate allocation";
    ASSERT_EQ(separate.value.ne, ref.ne);
    const compare_stats s = compare_values(cmp, ref, separate.value, GGML_TYPE_F32);
    if (verbose()) std::printf("[bops] %-70s %-22s nmse=%.3e\n", cmp.name.c_str(), be.label.c_str(), s.nmse);
    EXPECT_EQ(s.n_nonfinite, 0) << be.label;
    EXPECT_LE(s.nmse, cmp.max_nmse) << be.label << ": block differs from the double reference";
}

TEST(backend_ops, transformer_block_gallocr_matches_separate_allocation) {
    const block_model m;
    dt ref;
    for (const backend_entry & be : backends()) {
        if (be.is_cpu()) {
            check_block_on(be, m, ref);
            continue;
        }
        const block_model on_device(be.buffer_type());  // the same weights in the device's memory
        check_block_on(be, on_device, ref);
    }
}

TEST(backend_ops, transformer_block_on_a_non_cpu_device) {
    mock_device dev("MOCKGPU");
    dev.set_deferred(true);
    const backend_entry be = test_devices::make_entry(&dev);
    const block_model m(be.buffer_type());
    dt ref;
    check_block_on(be, m, ref);
    EXPECT_GT(dev.count().graphs_computed, 0);
    EXPECT_EQ(dev.count().foreign_reads, 0);
}

}  // namespace
