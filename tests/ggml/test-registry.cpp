// The default registry: every device with name, type, description and memory (the CPU's from
// /proc/meminfo), the text --list-devices and `inferd-cli devices` print, and the reason given
// when there is no GPU device.
#include "ggml/backend.h"
#include "ggml/cpu.h"
#ifdef INFERD_HAVE_CUDA
#include "ggml/cuda.h"
#endif

#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>

namespace {

// A field of /proc/meminfo in bytes, or 0.
uint64_t meminfo_bytes(const std::string & key) {
    std::ifstream in("/proc/meminfo");
    std::string name;
    uint64_t kib = 0;
    std::string unit;
    while (in >> name >> kib) {
        std::getline(in, unit);
        if (name == key + ":") return kib * 1024;
    }
    return 0;
}

TEST(registry, lists_the_cpu_first_with_its_memory) {
    const ggml_backend_registry reg = ggml_backend_registry_default();
    const std::vector<ggml_backend_device_info> devs = reg.devices();
    ASSERT_EQ(devs.size(), reg.device_count());
    ASSERT_GE(devs.size(), 1u);
    const ggml_backend_device_info & cpu = devs[0];
    EXPECT_EQ(cpu.device, reg.device(0));
    EXPECT_EQ(cpu.name, "CPU");
    EXPECT_EQ(cpu.type, ggml_backend_dev_type::cpu);
    EXPECT_FALSE(cpu.description.empty());
    const uint64_t total = meminfo_bytes("MemTotal");
    if (total == 0) GTEST_SKIP() << "no /proc/meminfo";
    EXPECT_EQ(cpu.memory_total, total);
    EXPECT_GT(cpu.memory_free, 0u);
    EXPECT_LE(cpu.memory_free, cpu.memory_total);
    // MemAvailable moves while the test runs: the device's reading is within a few percent of ours.
    const double avail = double(meminfo_bytes("MemAvailable"));
    EXPECT_NEAR(double(cpu.memory_free), avail, 0.05 * double(total));
    for (size_t i = 1; i < devs.size(); ++i) {
        EXPECT_NE(devs[i].type, ggml_backend_dev_type::cpu) << devs[i].name;
        EXPECT_GT(devs[i].memory_total, 0u) << devs[i].name;
        EXPECT_LE(devs[i].memory_free, devs[i].memory_total) << devs[i].name;
    }
}

TEST(registry, type_names) {
    EXPECT_STREQ(ggml_backend_dev_type_name(ggml_backend_dev_type::cpu), "cpu");
    EXPECT_STREQ(ggml_backend_dev_type_name(ggml_backend_dev_type::gpu), "gpu");
    EXPECT_STREQ(ggml_backend_dev_type_name(ggml_backend_dev_type::accel), "accel");
}

TEST(registry, describe_has_a_line_per_device_and_the_gpu_status) {
    const ggml_backend_registry reg = ggml_backend_registry_default();
    const std::string text = ggml_backend_registry_describe(reg);
    std::istringstream in(text);
    std::string line;
    size_t n = 0;
    for (const ggml_backend_device_info & d : reg.devices()) {
        ASSERT_TRUE(std::getline(in, line)) << text;
        const std::string head = std::to_string(n++) + ": " + d.name + " (" + ggml_backend_dev_type_name(d.type) + ") ";
        EXPECT_EQ(line.rfind(head, 0), 0u) << line;
        EXPECT_NE(line.find(" GiB free of "), std::string::npos) << line;
    }
    const std::string why = ggml_backend_registry_gpu_status(reg);
    const bool has_gpu = reg.device_by_type(ggml_backend_dev_type::gpu) != nullptr;
    EXPECT_EQ(why.empty(), has_gpu);
    if (!has_gpu) {
        ASSERT_TRUE(std::getline(in, line)) << text;
        EXPECT_EQ(line, "no GPU device: " + why);
#ifdef INFERD_HAVE_CUDA
        EXPECT_NE(why.find(ggml_backend_cuda_status()), std::string::npos);
#else
        EXPECT_NE(why.find("no GPU backend"), std::string::npos) << why;
#endif
    }
    EXPECT_FALSE(std::getline(in, line)) << "extra line: " << line;
}

}  // namespace
