// The cached CPU kernel calibration a default backend reads (once per process, so this test
// runs in a process of its own).
#include "ggml/backend.h"
#include "ggml/cpu.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <unistd.h>

namespace {

TEST(CpuCalibrationCache, DefaultBackendsFollowItExplicitPathsIgnoreIt) {
    ggml_cpu_calibration c;
    c.cpu = ggml_cpu_model_name();
    c.mul_mat[GGML_TYPE_Q4_0][0] = ggml_cpu_isa::scalar;
    const std::string path = testing::TempDir() + "inferd-calib-cache-" + std::to_string(getpid()) + ".txt";
    std::string err;
    ASSERT_TRUE(ggml_cpu_calibration_write(path, c, &err)) << err;
    ASSERT_EQ(setenv("INFERD_CPU_CALIBRATION", path.c_str(), 1), 0);
    EXPECT_EQ(ggml_cpu_calibration_path(), path);
    const ggml_cpu_calibration * d = ggml_cpu_calibration_default();
    ASSERT_NE(d, nullptr);
    EXPECT_EQ(d->cpu, c.cpu);

    ggml_cpu_backend_options opt;
    opt.n_threads = 1;
    ggml_backend_ptr def = ggml_backend_cpu_init(opt);
    const ggml_cpu_isa path_isa = ggml_backend_cpu_get_isa(def.get());
    EXPECT_EQ(ggml_backend_cpu_mul_mat_isa(def.get(), GGML_TYPE_Q4_0, 1), ggml_cpu_isa::scalar);
    EXPECT_EQ(ggml_backend_cpu_mul_mat_isa(def.get(), GGML_TYPE_Q4_0, 128), path_isa);
    opt.isa = path_isa;  // the same path named: no calibration
    ggml_backend_ptr named = ggml_backend_cpu_init(opt);
    EXPECT_EQ(ggml_backend_cpu_mul_mat_isa(named.get(), GGML_TYPE_Q4_0, 1), path_isa);

    ASSERT_EQ(setenv("INFERD_CPU_CALIBRATION", "off", 1), 0);
    EXPECT_EQ(ggml_cpu_calibration_path(), "");
    EXPECT_EQ(ggml_cpu_calibration_default(), d) << "read once per process";
    std::remove(path.c_str());
}

}  // namespace
