// inferd-cli: generate, tokenize, detokenize and chat from the command line (see tools/cli/cli.h).
#include "cli/cli.h"

int main(int argc, char ** argv) {
    const std::vector<std::string> args(argv + 1, argv + argc);
    return cli_tool_main(args, stdin, stdout, stderr);
}
