// get_rows from quantized matrices (quantized token embeddings) and set_rows into quantized
// rows (a Q8_0 KV cache), through the CPU backend on every ISA path and every non-CPU device of
// the registry (test-devices.h): results must equal the type's own dequantization / reference
// quantization exactly.
#include "test-devices.h"

#include "ggml/backend.h"
#include "ggml/cpu.h"
#include "ggml/ggml.h"
#include "ggml/quants.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

namespace {

std::vector<float> random_floats(size_t n, uint32_t seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> g(0.0f, 1.0f);
    std::vector<float> v(n);
    for (float & x : v) x = g(rng);
    return v;
}

// Every CPU path (with `threads` threads) and every non-CPU device.
std::vector<test_devices::entry> & devices(int threads) {
    static std::vector<test_devices::entry> one = test_devices::make_list({1});
    static std::vector<test_devices::entry> two = test_devices::make_list({2});
    return threads == 1 ? one : two;
}

}  // namespace

class quant_rows : public ::testing::TestWithParam<ggml_type> {};

TEST_P(quant_rows, get_rows_equals_dequantization) {
    const ggml_type type = GetParam();
    const int64_t ne0 = 2 * QK_K, n_rows = 37;
    const size_t row_bytes = ggml_row_size(type, ne0);
    const std::vector<float> src = random_floats(size_t(ne0 * n_rows), 11);
    std::vector<uint8_t> q(row_bytes * size_t(n_rows));
    ASSERT_EQ(ggml_quantize_chunk(type, src.data(), q.data(), 0, n_rows, ne0, nullptr), q.size());

    ggml_context_ptr ctx(ggml_init({8 * ggml_tensor_overhead() + ggml_graph_overhead(), nullptr, true}));
    ggml_tensor * a = ggml_new_tensor_2d(ctx.get(), type, ne0, n_rows);
    ggml_tensor * idx = ggml_new_tensor_1d(ctx.get(), GGML_TYPE_I32, 5);
    ggml_tensor * out = ggml_get_rows(ctx.get(), a, idx);
    ggml_cgraph * gf = ggml_new_graph(ctx.get());
    ggml_build_forward_expand(gf, out);
    ggml_backend_buffer_ptr buf = ggml_backend_alloc_ctx_tensors(ctx.get(), ggml_backend_cpu_buffer_type());
    ASSERT_NE(buf, nullptr);
    ggml_backend_tensor_set(a, q.data(), 0, q.size());
    const int32_t rows[5] = {0, 36, 7, 7, 20};
    ggml_backend_tensor_set(idx, rows, 0, sizeof(rows));

    const ggml_type_traits & tt = ggml_get_type_traits(type);
    for (test_devices::entry & be : devices(2)) {
        if (!be.is_cpu()) buf = test_devices::move_ctx_tensors(ctx.get(), be.buffer_type());
        if (!be.supports_graph(gf)) {
            EXPECT_FALSE(be.is_cpu()) << be.label;
            continue;
        }
        ASSERT_EQ(be.compute(gf), GGML_STATUS_SUCCESS) << be.label;
        std::vector<float> got(size_t(ne0) * 5), expect(static_cast<size_t>(ne0));
        ggml_backend_tensor_get(out, got.data(), 0, got.size() * sizeof(float));
        for (int i = 0; i < 5; ++i) {
            tt.to_float(q.data() + size_t(rows[i]) * row_bytes, expect.data(), ne0);
            EXPECT_EQ(std::memcmp(got.data() + i * ne0, expect.data(), size_t(ne0) * sizeof(float)), 0)
                << ggml_type_name(type) << " row " << rows[i] << " " << be.label;
        }
    }
}

TEST_P(quant_rows, set_rows_equals_reference_quantization) {
    const ggml_type type = GetParam();
    const int64_t ne0 = QK_K, n_cells = 16, n_new = 3;
    const size_t row_bytes = ggml_row_size(type, ne0);
    const std::vector<float> vals = random_floats(size_t(ne0 * n_new), 5);

    ggml_context_ptr ctx(ggml_init({8 * ggml_tensor_overhead() + ggml_graph_overhead(), nullptr, true}));
    ggml_tensor * cache = ggml_new_tensor_2d(ctx.get(), type, ne0, n_cells);
    ggml_tensor * b = ggml_new_tensor_2d(ctx.get(), GGML_TYPE_F32, ne0, n_new);
    ggml_tensor * idx = ggml_new_tensor_1d(ctx.get(), GGML_TYPE_I64, n_new);
    ggml_tensor * out = ggml_set_rows(ctx.get(), cache, b, idx);
    ggml_cgraph * gf = ggml_new_graph(ctx.get());
    ggml_build_forward_expand(gf, out);
    ggml_backend_buffer_ptr buf = ggml_backend_alloc_ctx_tensors(ctx.get(), ggml_backend_cpu_buffer_type());
    ASSERT_NE(buf, nullptr);
    ggml_backend_tensor_set(b, vals.data(), 0, vals.size() * sizeof(float));
    const int64_t cells[3] = {9, 0, 15};
    ggml_backend_tensor_set(idx, cells, 0, sizeof(cells));

    const ggml_type_traits & tt = ggml_get_type_traits(type);
    for (test_devices::entry & be : devices(1)) {
        if (!be.is_cpu()) buf = test_devices::move_ctx_tensors(ctx.get(), be.buffer_type());
        if (!be.supports_graph(gf)) {
            EXPECT_FALSE(be.is_cpu()) << be.label;
            continue;
        }
        ggml_backend_tensor_memset(cache, 0, 0, ggml_nbytes(cache));
        ASSERT_EQ(be.compute(gf), GGML_STATUS_SUCCESS) << be.label;
        std::vector<uint8_t> got(ggml_nbytes(cache)), expect(row_bytes), zero(row_bytes, 0);
        ggml_backend_tensor_get(cache, got.data(), 0, got.size());
        for (int i = 0; i < 3; ++i) {
            tt.from_float(vals.data() + i * ne0, expect.data(), ne0);
            EXPECT_EQ(std::memcmp(got.data() + size_t(cells[i]) * row_bytes, expect.data(), row_bytes), 0)
                << ggml_type_name(type) << " cell " << cells[i] << " " << be.label;
        }
        EXPECT_EQ(std::memcmp(got.data() + 1 * row_bytes, zero.data(), row_bytes), 0) << "untouched cell changed";
    }
}

INSTANTIATE_TEST_SUITE_P(types, quant_rows,
                         ::testing::Values(GGML_TYPE_Q4_0, GGML_TYPE_Q4_1, GGML_TYPE_Q5_0, GGML_TYPE_Q5_1,
                                           GGML_TYPE_Q8_0, GGML_TYPE_Q2_K, GGML_TYPE_Q3_K, GGML_TYPE_Q4_K,
                                           GGML_TYPE_Q5_K, GGML_TYPE_Q6_K, GGML_TYPE_IQ4_NL, GGML_TYPE_IQ4_XS,
                                           GGML_TYPE_MXFP4),
                         [](const ::testing::TestParamInfo<ggml_type> & i) { return std::string(ggml_type_name(i.param)); });
