// inferd --list-devices: prints every device of the registry (name, type, description, memory)
// and why there is no GPU device when there is none, then exits 0 without a model.
#include "ggml/backend.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <sys/wait.h>

namespace {

TEST(list_devices, prints_the_registry_and_exits) {
    FILE * p = ::popen((std::string(INFERD_BIN) + " --list-devices").c_str(), "r");
    ASSERT_NE(p, nullptr);
    std::string out;
    char buf[4096];
    for (size_t n; (n = std::fread(buf, 1, sizeof(buf), p)) > 0;) out.append(buf, n);
    const int status = ::pclose(p);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0) << out;
    const ggml_backend_registry reg = ggml_backend_registry_default();
    EXPECT_EQ(out.rfind("0: CPU (cpu) ", 0), 0u) << out;
    EXPECT_NE(out.find(" GiB free of "), std::string::npos) << out;
    const std::string why = ggml_backend_registry_gpu_status(reg);
    if (!why.empty()) {
        EXPECT_NE(out.find("no GPU device: " + why + "\n"), std::string::npos) << out;
    }
    // one line per device of the registry (+ the GPU status line)
    size_t lines = 0;
    for (char c : out) lines += c == '\n';
    EXPECT_EQ(lines, reg.device_count() + (why.empty() ? 0 : 1)) << out;
}

}  // namespace
