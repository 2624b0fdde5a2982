// inferd-cli devices: the compute devices of this build (name, type, description, free / total
// memory), and why there is no GPU device when there is none. Takes no options.
#include "cli-common.h"

#include "ggml/backend.h"

int cli_devices_main(const std::vector<std::string> & args, const cli_env & env) {
    if (!args.empty()) return cli_usage_error(env, "devices takes no options, got '" + args[0] + "'");
    const ggml_backend_registry reg = ggml_backend_registry_default();
    std::fputs(ggml_backend_registry_describe(reg).c_str(), env.out);
    return 0;
}
