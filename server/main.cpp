// inferd: the daemon. Flags > INFERD_* environment > --config file > defaults (inferd --help).
// SIGTERM / SIGINT: stop accepting, finish requests in flight within --shutdown-timeout, exit 0.
#include "config/config.h"
#include "ggml/backend.h"
#include "server/log.h"
#include "server/server-app.h"

#include <spdlog/spdlog.h>

#include <csignal>
#include <cstdio>
#include <pthread.h>
#include <thread>

namespace {

// --list-devices: every device of the build's registry (name, type, description, free / total
// memory), and why there is no GPU device when there is none.
void list_devices() {
    const ggml_backend_registry reg = ggml_backend_registry_default();
    std::fputs(ggml_backend_registry_describe(reg).c_str(), stdout);
}

}  // namespace

int main(int argc, char ** argv) {
    server_config cfg;
    std::string text;
    const config_status st = config_parse(config_args_from_argv(argc, argv), config_env_from_process(), &cfg, &text);
    if (st != config_status::ok) {
        std::fputs(text.c_str(), st == config_status::usage_error ? stderr : stdout);
        if (!text.empty() && text.back() != '\n') std::fputc('\n', st == config_status::usage_error ? stderr : stdout);
        return config_exit_code(st);
    }
    if (cfg.list_devices) {
        list_devices();
        return 0;
    }
    // Signals are taken by one thread with sigwait; every other thread has them blocked.
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &set, nullptr);
    std::signal(SIGPIPE, SIG_IGN);

    std::shared_ptr<spdlog::logger> log = server_make_logger(cfg.log_format == config_log_format::json);
    server_app app(cfg, log);
    std::string err;
    if (!app.start(&err)) {
        log->error("{}", err);
        return 1;
    }
    std::thread signals([&app, &log, set] {
        int sig = 0;
        sigwait(&set, &sig);
        log->info("received {}", sig == SIGTERM ? "SIGTERM" : "SIGINT");
        app.shutdown();
    });
    app.wait_until_stopped();
    if (app.failed()) {
        app.shutdown();
        pthread_kill(signals.native_handle(), SIGTERM);  // wake the signal thread
        signals.join();
        return 1;
    }
    signals.join();
    log->info("stopped");
    return 0;
}
