// server_metrics: the families inferd exports at /metrics and their typed accessors.
#include "server/metrics.h"

#include <algorithm>
#include <cmath>

namespace {

// Seconds of a whole request (non-streamed completions up to minutes on a CPU).
const std::vector<double> k_request_seconds = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5,
                                               5,     10,   20,    30,   60,  120,  300, 600};
// Seconds until the first generated token (prompt processing plus queueing).
const std::vector<double> k_ttft_seconds = {0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 0.75, 1, 1.5,
                                            2,    3,     5,    7.5, 10,   20,  30,  60};
// Seconds between two generated tokens of one request.
const std::vector<double> k_itl_seconds = {0.001, 0.0025, 0.005, 0.01, 0.02, 0.03, 0.05, 0.075,
                                           0.1,   0.15,   0.2,   0.3,  0.5,  0.75, 1,    2.5};
// Tokens in one decode step: powers of two up to a large prefill batch.
const std::vector<double> k_batch_tokens = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192};

const std::string_view k_endpoints[] = {"/v1/completions", "/v1/chat/completions", "/v1/models", "/health",
                                        "/metrics",        "/tokenize",            "/detokenize"};

}  // namespace

std::string_view server_metrics_endpoint_label(std::string_view path) {
    for (std::string_view e : k_endpoints) {
        if (path == e) return e;
    }
    return "other";
}

server_metrics::server_metrics() {
    metrics_registry & r = registry_;
    requests_ = &r.add_counter("inferd_requests_total", "HTTP requests answered, by endpoint and status code.",
                               {"endpoint", "status"});
    request_duration_ = &r.add_histogram("inferd_request_duration_seconds",
                                         "Time from a request's arrival to the end of its response.",
                                         k_request_seconds, {"endpoint"});
    ttft_ = &r.add_histogram("inferd_time_to_first_token_seconds",
                             "Time from a generation request's arrival to its first generated token.",
                             k_ttft_seconds)
                 .with({});
    itl_ = &r.add_histogram("inferd_inter_token_latency_seconds",
                            "Time between two consecutive generated tokens of one request.", k_itl_seconds)
                .with({});
    prompt_tokens_ = &r.add_counter("inferd_prompt_tokens_total", "Prompt tokens of generation requests.").with({});
    generation_tokens_ = &r.add_counter("inferd_generation_tokens_total", "Tokens generated.").with({});
    prompt_tokens_cached_ = &r.add_counter("inferd_prompt_tokens_cached_total",
                                           "Prompt tokens reused from the prefix cache instead of computed.")
                                 .with({});
    running_ = &r.add_gauge("inferd_requests_running", "Requests holding a slot (prefilling or generating).").with({});
    waiting_ = &r.add_gauge("inferd_requests_waiting", "Requests queued for a slot.").with({});
    kv_usage_ = &r.add_gauge("inferd_kv_cache_usage_ratio", "Fraction of KV cache cells in use (0..1).").with({});
    batch_tokens_ = &r.add_histogram("inferd_batch_tokens", "Tokens in one decode step (all slots together).",
                                     k_batch_tokens)
                         .with({});
    decode_steps_ = &r.add_counter("inferd_decode_steps_total", "Decode steps (engine batches) run.").with({});
    draft_tokens_ = &r.add_counter("inferd_draft_tokens_total",
                                   "Draft tokens verified by speculative decoding (n-gram lookup or a draft model).")
                         .with({});
    draft_accepted_ = &r.add_counter("inferd_draft_accepted_total",
                                     "Draft tokens accepted: the model sampled the drafted token at its position.")
                           .with({});
    spec_active_ = &r.add_gauge("inferd_spec_active",
                                "1 while speculative decoding drafts; 0 without speculation or while drafting is "
                                "turned off because it made generation slower.")
                      .with({});
    spec_speedup_ = &r.add_gauge("inferd_spec_speedup_ratio",
                                 "Tokens per second of generation steps with drafts over steps without, as last "
                                 "measured (0 before the first measurement).")
                       .with({});
    spec_turned_off_ = &r.add_counter("inferd_spec_turned_off_total",
                                      "Times speculative decoding turned itself off because steps with drafts were "
                                      "slower than steps without.")
                           .with({});
    connections_refused_ = &r.add_counter("inferd_http_connections_refused_total",
                                          "Connections answered 503 because --max-connections were open.")
                                .with({});
    compile_waiting_ = &r.add_gauge("inferd_compile_jobs_waiting",
                                    "Generation requests waiting for a compile thread (a constraint or tool-call "
                                    "grammar not in the cache).")
                            .with({});
    compile_running_ = &r.add_gauge("inferd_compile_jobs_running",
                                    "Generation requests being prepared on a compile thread.")
                            .with({});
    compile_errors_ = &r.add_counter("inferd_compile_errors_total",
                                     "Constraints and tool-call grammars refused (answered 400), and compile jobs "
                                     "that failed (answered 500).")
                           .with({});
    model_info_ = &r.add_gauge("inferd_model_info", "The served model; the value is always 1.",
                               {"model", "architecture", "quantization", "ctx_size", "parallel"});
}

void server_metrics::request_done(std::string_view endpoint, int status, double duration_seconds) {
    std::string_view label = server_metrics_endpoint_label(endpoint);
    requests_->with({label, std::to_string(status)}).inc();
    request_duration_->with({label}).observe(duration_seconds);
}

void server_metrics::observe_time_to_first_token(double seconds) { ttft_->observe(seconds); }

void server_metrics::observe_inter_token_latency(double seconds) { itl_->observe(seconds); }

void server_metrics::add_prompt_tokens(uint64_t n) { prompt_tokens_->inc(static_cast<double>(n)); }

void server_metrics::add_prompt_tokens_cached(uint64_t n) { prompt_tokens_cached_->inc(static_cast<double>(n)); }

void server_metrics::add_generation_tokens(uint64_t n) { generation_tokens_->inc(static_cast<double>(n)); }

void server_metrics::set_requests_running(size_t n) { running_->set(static_cast<double>(n)); }

void server_metrics::set_requests_waiting(size_t n) { waiting_->set(static_cast<double>(n)); }

void server_metrics::set_kv_cache_usage(double ratio) {
    if (std::isnan(ratio)) ratio = 0;
    kv_usage_->set(std::clamp(ratio, 0.0, 1.0));
}

void server_metrics::decode_step(size_t n_tokens) {
    batch_tokens_->observe(static_cast<double>(n_tokens));
    decode_steps_->inc();
}

void server_metrics::add_draft_tokens(uint64_t n, uint64_t accepted) {
    draft_tokens_->inc(static_cast<double>(n));
    draft_accepted_->inc(static_cast<double>(accepted));
}

void server_metrics::set_spec_state(bool active, double speedup, uint64_t turned_off) {
    spec_active_->set(active ? 1.0 : 0.0);
    spec_speedup_->set(std::isfinite(speedup) ? speedup : 0.0);
    const uint64_t seen = spec_turned_off_seen_.exchange(turned_off);
    if (turned_off > seen) spec_turned_off_->inc(static_cast<double>(turned_off - seen));
}

void server_metrics::connection_refused() { connections_refused_->inc(); }

void server_metrics::set_compile_jobs(size_t waiting, size_t running) {
    compile_waiting_->set(static_cast<double>(waiting));
    compile_running_->set(static_cast<double>(running));
}

void server_metrics::compile_error() { compile_errors_->inc(); }

void server_metrics::set_model_info(const server_model_info & info) {
    model_info_->clear();
    model_info_
        ->with({info.model, info.architecture, info.quantization, std::to_string(info.ctx_size),
                std::to_string(info.parallel)})
        .set(1);
}
