// inferd-cli devices: the registry's devices, the CPU first; no options.
#include "cli/cli.h"
#include "tools/tools-test-util.h"

#include "ggml/backend.h"

#include <gtest/gtest.h>

#include <string>

namespace {

TEST(inferd_cli_devices, prints_the_registry) {
    tools_capture in, out, err;
    ASSERT_EQ(cli_tool_main({"devices"}, in.get(), out.get(), err.get()), 0);
    const std::string text = out.text();
    const ggml_backend_registry reg = ggml_backend_registry_default();
    EXPECT_EQ(text.rfind("0: CPU (cpu) ", 0), 0u) << text;
    for (size_t i = 0; i < reg.device_count(); ++i) {
        const std::string head = std::to_string(i) + ": " + reg.device(i)->name() + " (";
        EXPECT_NE(text.find(head), std::string::npos) << head << " in " << text;
    }
    const std::string why = ggml_backend_registry_gpu_status(reg);
    EXPECT_EQ(text.find("\nno GPU device: " + why + "\n") != std::string::npos, !why.empty()) << text;
    EXPECT_TRUE(err.text().empty());
}

TEST(inferd_cli_devices, takes_no_options_and_is_in_the_usage) {
    tools_capture in, out, err;
    EXPECT_EQ(cli_tool_main({"devices", "-m", "x.gguf"}, in.get(), out.get(), err.get()), 2);
    EXPECT_NE(err.text().find("devices takes no options"), std::string::npos) << err.text();
    tools_capture in2, out2, err2;
    ASSERT_EQ(cli_tool_main({"--help"}, in2.get(), out2.get(), err2.get()), 0);
    EXPECT_NE(out2.text().find("inferd-cli devices"), std::string::npos);
}

}  // namespace
