// The state behind server/server-app.h (internal), shared by the route files.
#pragma once

#include "api/error.h"
#include "api/request-common.h"
#include "compile-pool.h"
#include "grammar-cache.h"
#include "engine/model.h"
#include "server/batch-loop.h"
#include "server/http-server.h"
#include "server/metrics.h"
#include "server/server-app.h"

#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

class chat_renderer;
struct chat_special_texts;

struct server_app::impl {
    server_config cfg;
    std::shared_ptr<spdlog::logger> log;
    server_metrics metrics;
    http_router router;
    std::unique_ptr<http_server> http;
    std::unique_ptr<model> mdl;
    std::unique_ptr<model> draft_mdl;  // --model-draft (speculative decoding); nullptr: none
    std::unique_ptr<batch_loop> loop;
    std::shared_ptr<const chat_renderer> chat;  // renders chat requests' prompts
    std::shared_ptr<const chat_renderer> chat_tools;  // the model's tool_use variant; nullptr: none
    nlohmann::ordered_json template_kwargs;     // --chat-template-kwargs, parsed once
    std::string model_id;
    grammar_program_cache grammars;  // compiled output constraints (structured output)
    int64_t created = 0;
    std::thread loader;
    std::atomic<bool> is_ready{false}, is_failed{false};
    std::mutex mu;
    std::condition_variable cv;
    bool stopped = false;  // guarded by mu
    bool shutting_down = false;
    // Compile threads (--compile-threads): constraints and tool-call grammars not in `grammars`
    // are compiled there, never on an I/O thread. Last, so that its jobs (which use the members
    // above) are finished or refused before anything else goes.
    std::unique_ptr<compile_pool> compiles;

    void load_model();
    void load_draft_model(const model_params & mp);
    void set_spec_params(batch_loop_params & bp) const;
    void load_tool_template(const chat_special_texts & sp);
    void set_embedding_params(batch_loop_params & bp) const;
    void debug_load_delay();
    void add_routes();
    bool add_webui(std::string * error);
    // A request naming another model than the served one is refused (404) with --strict-model-name;
    // otherwise any name is served by the loaded model.
    bool refuses_model(const std::string & name) const {
        return cfg.strict_model_name && !name.empty() && name != model_id;
    }
    bool check_auth(const http_request & req, const std::shared_ptr<http_response> & res);
    // Responds with an API error (JSON, Retry-After for 503) and counts it.
    void respond_error(const http_request & req, const std::shared_ptr<http_response> & res, const api_error & e,
                       std::chrono::steady_clock::time_point t0);
    void respond_json(const http_request & req, const std::shared_ptr<http_response> & res, int status,
                      std::string body, std::chrono::steady_clock::time_point t0);
    // false after responding 503 when the model is not loaded yet.
    bool require_ready(const http_request & req, const std::shared_ptr<http_response> & res,
                       std::chrono::steady_clock::time_point t0);
    void refresh_gauges();

    // Runs prepare(meta) on a compile thread (meta: req without its body, which is gone by then);
    // prepare answers the request. 503 (queue_full) when the compile queue is full, 503 when the
    // server stops before its turn, 500 when prepare throws; nothing for a client already gone.
    void run_on_compile_thread(const http_request & req, const std::shared_ptr<http_response> & res,
                               std::chrono::steady_clock::time_point t0,
                               std::function<void(const http_request & meta)> prepare);
    void handle_completions(const http_request & req, std::shared_ptr<http_response> res);
    void handle_chat(const http_request & req, std::shared_ptr<http_response> res);
    void handle_embeddings(const http_request & req, std::shared_ptr<http_response> res);
    void handle_rerank(const http_request & req, std::shared_ptr<http_response> res);
    // false after responding 400 when the model does not generate text (an encoder).
    bool require_generation(const http_request & req, const std::shared_ptr<http_response> & res,
                            std::chrono::steady_clock::time_point t0);

    // Embedding requests (server-routes-embeddings.cpp).
    struct embd_reply;
    std::optional<api_error> embedding_inputs(const std::vector<api_prompt> & prompts, const char * param,
                                              std::vector<std::vector<int32_t>> * out);
    std::shared_ptr<embd_reply> embd_reply_for(const http_request & req, const std::shared_ptr<http_response> & res,
                                               std::chrono::steady_clock::time_point t0, embd_request & r);
    bool embd_reply_failed(embd_reply & reply, const std::string & error);
    void embd_reply_ok(embd_reply & reply, std::string body);
    void submit_embd(const http_request & req, const std::shared_ptr<http_response> & res, embd_request r,
                     const char * param, std::chrono::steady_clock::time_point t0);
};

// Seconds from t0 to now (request durations for the metrics).
inline double server_seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// A random id with a prefix: "cmpl-" + 24 hex digits.
std::string server_make_id(const char * prefix);
