// server/server-app.h — the inferd daemon assembled: configuration, model loading, the batch
// loop, the OpenAI API routes on the HTTP server, metrics, API keys, graceful shutdown.
//
// Usage (server/main.cpp):
//   server_app app(cfg, logger);
//   std::string err;
//   if (!app.start(&err)) { logger->error(err); return 1; }   // the port is bound, loading begins
//   app.wait_until_stopped();                                 // returns after shutdown()
//   // a signal handler thread calls app.shutdown();
//
// /health answers 503 {"status":"loading"} until the model is loaded and 200 {"status":"ok"}
// after; every other API route answers 503 (with Retry-After) while loading. A model that fails
// to load ends the daemon (wait_until_stopped returns, failed() is true).
//
// Routes: POST /v1/completions, POST /v1/chat/completions, GET /v1/models, GET /health,
// GET /metrics, POST /tokenize, POST /detokenize. API keys (config api_keys) guard /v1/*,
// /tokenize and /detokenize (Authorization: Bearer KEY, compared in constant time); /metrics is
// public unless metrics_key is set; /health is always public.
#pragma once

#include "config/config.h"

#include <cstdint>
#include <memory>
#include <string>

namespace spdlog {
class logger;
}

class server_app {
public:
    server_app(const server_config & cfg, std::shared_ptr<spdlog::logger> log);
    ~server_app();
    server_app(const server_app &) = delete;
    server_app & operator=(const server_app &) = delete;

    // Binds the HTTP port and starts loading the model in the background. False with *error
    // when the port cannot be bound.
    bool start(std::string * error);
    uint16_t port() const;
    bool ready() const;   // the model is loaded
    bool failed() const;  // loading failed (the reason was logged)
    // Stops accepting, lets in-flight requests finish within the configured drain time, stops
    // the batch loop. Idempotent; callable from any thread.
    void shutdown();
    void wait_until_stopped();

    struct impl;  // the route files' shared state (server/src/server-app-impl.h)

private:
    std::unique_ptr<impl> impl_;
};
