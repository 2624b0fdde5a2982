// inferd-quantize: convert a GGUF model to F16 / BF16 / a quantized mix.
// Usage: inferd-quantize IN.gguf OUT.gguf TYPE [--threads N] | --help
// The logic lives in tools/common/quantize-{model,mix,progress}.{h,cpp}.
#include "common/quantize-model.h"

int main(int argc, char ** argv) {
    const std::vector<std::string> args(argv + 1, argv + argc);
    return quantize_tool_main(args, stdout, stderr);
}
