// inferd-gguf: inspect a GGUF file (info) or write one tensor as float32 (dequant).
// Usage: inferd-gguf info FILE | inferd-gguf dequant FILE TENSOR OUT.f32 [--threads N] | --help
// The logic lives in tools/common/gguf-inspect.{h,cpp}.
#include "common/gguf-inspect.h"

int main(int argc, char ** argv) {
    const std::vector<std::string> args(argv + 1, argv + argc);
    return gguf_tool_main(args, stdout, stderr);
}
