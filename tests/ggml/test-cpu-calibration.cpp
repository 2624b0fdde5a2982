// The CPU kernel calibration: its cache file, the choice it makes per weight type and regime,
// and a backend running the chosen path exactly.
#include "ggml/backend.h"
#include "ggml/cpu.h"
#include "ggml/ggml.h"
#include "ggml/quants.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

std::string temp_path(const std::string & name) {
    return testing::TempDir() + "inferd-calib-" + std::to_string(getpid()) + "-" + name;
}

void write_text(const std::string & path, const std::string & text) {
    std::ofstream f(path, std::ios::trunc);
    f << text;
}

TEST(CpuCalibration, WrittenAndReadBack) {
    ggml_cpu_calibration c;
    c.cpu = "Test CPU (family 25, model 17: Zen 4)";
    c.mul_mat[GGML_TYPE_F16][0] = ggml_cpu_isa::avx2;
    c.mul_mat[GGML_TYPE_F16][1] = ggml_cpu_isa::avx512;
    c.mul_mat[GGML_TYPE_Q4_K][0] = ggml_cpu_isa::scalar;
    const std::string path = temp_path("dir") + "/sub/cpu-kernels.txt";  // directories made
    std::string err;
    ASSERT_TRUE(ggml_cpu_calibration_write(path, c, &err)) << err;
    ggml_cpu_calibration r;
    ASSERT_TRUE(ggml_cpu_calibration_read(path, &r, &err)) << err;
    EXPECT_EQ(r.cpu, c.cpu);
    for (int t = 0; t < GGML_TYPE_COUNT; ++t) {
        for (int g = 0; g < 2; ++g) EXPECT_EQ(r.mul_mat[t][g], c.mul_mat[t][g]) << ggml_type_name(ggml_type(t)) << " " << g;
    }
    std::ifstream f(path);
    const std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    EXPECT_EQ(text, "inferd-cpu-kernels 1\ncpu Test CPU (family 25, model 17: Zen 4)\n"
                    "mul_mat f16 decode avx2\nmul_mat f16 prompt avx512\nmul_mat q4_K decode scalar\n");
}

TEST(CpuCalibration, MalformedFilesAreRefusedWithTheLine) {
    const std::string path = temp_path("bad.txt");
    const std::string head = "inferd-cpu-kernels 1\ncpu X\n";
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"", "not a inferd-cpu-kernels 1 file"},
        {"inferd-cpu-kernels 2\ncpu X\n", "not a inferd-cpu-kernels 1 file"},
        {"inferd-cpu-kernels 1\n", "line 2"},
        {"inferd-cpu-kernels 1\ncpu \n", "line 2"},
        {head + "mul_mat q4_0 decode\n", ":3: expected"},
        {head + "mul_mat q4_0 decode avx2 extra\n", ":3: expected"},
        {head + "\nsoftmax q4_0 decode avx2\n", ":4: expected"},
        {head + "mul_mat q9_9 decode avx2\n", "unknown type q9_9"},
        {head + "mul_mat q4_0 decode sse4\n", "unknown path sse4"},
        {head + "mul_mat q4_0 decode best\n", "unknown path best"},
        {head + "mul_mat q4_0 both avx2\n", "decode or prompt, not both"},
    };
    for (const auto & [text, want] : cases) {
        write_text(path, text);
        ggml_cpu_calibration c;
        c.cpu = "untouched";
        std::string err;
        EXPECT_FALSE(ggml_cpu_calibration_read(path, &c, &err)) << text;
        EXPECT_NE(err.find(want), std::string::npos) << text << " -> " << err;
        EXPECT_EQ(c.cpu, "untouched") << "a refused file leaves the calibration as it was";
    }
    std::string err;
    ggml_cpu_calibration c;
    EXPECT_FALSE(ggml_cpu_calibration_read(temp_path("missing.txt"), &c, &err));
    EXPECT_NE(err.find("cannot be opened"), std::string::npos) << err;
    EXPECT_FALSE(ggml_cpu_calibration_write("", c, &err)) << "no path";
}

TEST(CpuCalibration, ChoiceByRegimeCappedByThePath) {
    ggml_cpu_calibration c;
    c.mul_mat[GGML_TYPE_Q8_0][0] = ggml_cpu_isa::avx2;
    c.mul_mat[GGML_TYPE_Q8_0][1] = ggml_cpu_isa::amx;
    for (int64_t n : {1, 2, int(ggml_cpu_prompt_min_cols) - 1}) {
        EXPECT_EQ(c.choose(GGML_TYPE_Q8_0, n, ggml_cpu_isa::avx512), ggml_cpu_isa::avx2) << n;
    }
    EXPECT_EQ(c.choose(GGML_TYPE_Q8_0, ggml_cpu_prompt_min_cols, ggml_cpu_isa::avx512), ggml_cpu_isa::avx512);
    EXPECT_EQ(c.choose(GGML_TYPE_Q8_0, 512, ggml_cpu_isa::amx), ggml_cpu_isa::amx);
    EXPECT_EQ(c.choose(GGML_TYPE_Q8_0, 1, ggml_cpu_isa::scalar), ggml_cpu_isa::scalar) << "the cap wins";
    EXPECT_EQ(c.choose(GGML_TYPE_F16, 1, ggml_cpu_isa::avx512), ggml_cpu_isa::avx512) << "not measured";
    EXPECT_EQ(c.choose(ggml_type(GGML_TYPE_COUNT), 1, ggml_cpu_isa::avx2), ggml_cpu_isa::avx2);
}

// y = w x b for weights of type t (k x m) and n columns, on the backend be.
std::vector<float> run_mul_mat(ggml_backend_i & be, ggml_type t, int64_t k, int64_t m, int64_t n) {
    std::mt19937 g(7);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    std::vector<float> wf(size_t(k * m)), x(size_t(k * n));
    for (float & v : wf) v = u(g);
    for (float & v : x) v = u(g);
    std::vector<uint8_t> wq(ggml_row_size(t, k) * size_t(m));
    ggml_quantize_chunk(t, wf.data(), wq.data(), 0, m, k, nullptr);
    ggml_init_params ip;
    ip.mem_size = 8 * ggml_tensor_overhead() + ggml_graph_overhead();
    ip.no_alloc = true;
    ggml_context_ptr ctx(ggml_init(ip));
    ggml_tensor * w = ggml_new_tensor_2d(ctx.get(), t, k, m);
    ggml_tensor * b = ggml_new_tensor_2d(ctx.get(), GGML_TYPE_F32, k, n);
    ggml_tensor * y = ggml_mul_mat(ctx.get(), w, b);
    ggml_cgraph * gf = ggml_new_graph(ctx.get());
    ggml_build_forward_expand(gf, y);
    ggml_backend_buffer_ptr buf = ggml_backend_alloc_ctx_tensors(ctx.get(), ggml_backend_cpu_buffer_type());
    EXPECT_TRUE(buf != nullptr);
    if (!buf) return {};
    ggml_backend_tensor_set(w, wq.data(), 0, wq.size());
    ggml_backend_tensor_set(b, x.data(), 0, x.size() * sizeof(float));
    EXPECT_EQ(be.graph_compute(gf), GGML_STATUS_SUCCESS);
    std::vector<float> out(size_t(m * n));
    ggml_backend_tensor_get(y, out.data(), 0, out.size() * sizeof(float));
    return out;
}

ggml_backend_ptr cpu_on(ggml_cpu_isa isa, const ggml_cpu_calibration * c = nullptr) {
    ggml_cpu_backend_options opt;
    opt.n_threads = 2;
    opt.isa = isa;
    opt.calibration = c;
    return ggml_backend_cpu_init(opt);
}

TEST(CpuCalibration, BackendRunsTheChosenPathExactly) {
    // the scalar path: one that every CPU has
    ggml_cpu_calibration c;
    c.cpu = ggml_cpu_model_name();
    c.mul_mat[GGML_TYPE_Q4_0][0] = ggml_cpu_isa::scalar;
    ggml_backend_ptr calibrated = cpu_on(ggml_cpu_isa::best, &c);
    ggml_backend_ptr scalar = cpu_on(ggml_cpu_isa::scalar), best = cpu_on(ggml_cpu_isa::best);
    const ggml_cpu_isa path = ggml_backend_cpu_get_isa(best.get());
    EXPECT_EQ(ggml_backend_cpu_mul_mat_isa(calibrated.get(), GGML_TYPE_Q4_0, 1), ggml_cpu_isa::scalar);
    EXPECT_EQ(ggml_backend_cpu_mul_mat_isa(calibrated.get(), GGML_TYPE_Q4_0, 64), path);
    EXPECT_EQ(ggml_backend_cpu_mul_mat_isa(calibrated.get(), GGML_TYPE_Q8_0, 1), path);
    EXPECT_EQ(ggml_backend_cpu_mul_mat_isa(best.get(), GGML_TYPE_Q4_0, 1), path) << "INFERD_CPU_CALIBRATION=off";
    EXPECT_EQ(ggml_backend_cpu_mul_mat_isa(nullptr, GGML_TYPE_Q4_0, 1), ggml_cpu_isa::scalar);
    EXPECT_EQ(run_mul_mat(*calibrated, GGML_TYPE_Q4_0, 256, 48, 1), run_mul_mat(*scalar, GGML_TYPE_Q4_0, 256, 48, 1));
    EXPECT_EQ(run_mul_mat(*calibrated, GGML_TYPE_Q4_0, 256, 48, 64), run_mul_mat(*best, GGML_TYPE_Q4_0, 256, 48, 64));
    EXPECT_EQ(run_mul_mat(*calibrated, GGML_TYPE_Q8_0, 256, 48, 1), run_mul_mat(*best, GGML_TYPE_Q8_0, 256, 48, 1));
    // an explicit path under the choice: the path caps it
    ggml_backend_ptr capped = cpu_on(ggml_cpu_isa::scalar, &c);
    EXPECT_EQ(ggml_backend_cpu_mul_mat_isa(capped.get(), GGML_TYPE_Q8_0, 1), ggml_cpu_isa::scalar);
}

TEST(CpuCalibration, MeasuresEveryPathOfAType) {
    const ggml_cpu_isa best = ggml_cpu_detect_features().best_isa();
    std::vector<ggml_cpu_calibration_row> rows;
    const ggml_cpu_calibration c = ggml_cpu_calibrate(2, &rows, {GGML_TYPE_Q4_0});
    EXPECT_EQ(c.cpu, ggml_cpu_model_name());
    if (int(best) < int(ggml_cpu_isa::avx512)) {
        EXPECT_TRUE(rows.empty()) << "one vector path: nothing to choose";
        return;
    }
    ASSERT_EQ(rows.size(), 2u);
    for (const ggml_cpu_calibration_row & r : rows) {
        EXPECT_EQ(r.type, GGML_TYPE_Q4_0);
        EXPECT_EQ(r.us[0], 0.0) << "the scalar path is not a candidate";
        for (int i = 1; i <= int(best); ++i) EXPECT_GT(r.us[i], 0.0) << i;
        EXPECT_GE(int(r.chosen), int(ggml_cpu_isa::avx2));
        EXPECT_LE(int(r.chosen), int(best));
        EXPECT_EQ(c.mul_mat[GGML_TYPE_Q4_0][r.regime], r.chosen);
    }
    EXPECT_NE(rows[0].regime, rows[1].regime);
    EXPECT_EQ(c.mul_mat[GGML_TYPE_F16][0], ggml_cpu_isa::best) << "types not asked for are not measured";
}

}  // namespace
