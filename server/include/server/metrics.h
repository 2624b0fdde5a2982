// server/metrics.h — a small thread-safe Prometheus registry (text exposition format 0.0.4) and
// server_metrics, the families inferd exports at GET /metrics.
//
// Usage (the registry):
//   metrics_registry reg;
//   auto & requests = reg.add_counter("app_requests_total", "Requests served.", {"endpoint", "status"});
//   auto & latency = reg.add_histogram("app_latency_seconds", "Request latency.", {0.1, 0.5, 1});
//   metrics_counter & ok = requests.with({"/v1/completions", "200"});  // keep the reference
//   ok.inc();                           // atomic add: cheap, from any thread
//   latency.with({}).observe(0.42);     // no global lock
//   std::string body = reg.render();    // serve with metrics_content_type
//
// Usage (the server's families):
//   server_metrics m;
//   m.set_model_info({"tinyllama", "llama", "Q4_K_M", 4096, 8});
//   m.request_done("/v1/completions", 200, 1.25);
//   m.decode_step(9);  m.set_requests_running(1);  ...
//   res->respond(200, metrics_content_type, m.render());
//
// Errors: registration (add_*) throws std::invalid_argument for an invalid metric or label name,
// a name registered twice, a label called "le" on a histogram, or bucket bounds that are not
// finite and strictly increasing; with() throws std::invalid_argument when the number of label
// values differs from the number of label names. Label values may be any text (escaped on
// output). Updates never throw: a counter ignores negative or NaN increments, a histogram
// ignores NaN. References returned by with() stay valid for the registry's lifetime, also after
// clear() (the series is then simply no longer exported).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

// The Content-Type of render()'s output.
inline constexpr const char * metrics_content_type = "text/plain; version=0.0.4; charset=utf-8";

class metrics_counter {
public:
    void inc(double v = 1.0);  // v < 0 or NaN: ignored
    double value() const { return value_.load(std::memory_order_relaxed); }

private:
    std::atomic<double> value_{0.0};
};

class metrics_gauge {
public:
    void set(double v) { value_.store(v, std::memory_order_relaxed); }
    void add(double v) { value_.fetch_add(v, std::memory_order_relaxed); }
    void sub(double v) { value_.fetch_sub(v, std::memory_order_relaxed); }
    double value() const { return value_.load(std::memory_order_relaxed); }

private:
    std::atomic<double> value_{0.0};
};

class metrics_histogram {
public:
    // bounds: finite, strictly increasing upper bounds (checked by the registry); +Inf is implied.
    explicit metrics_histogram(std::vector<double> bounds);
    void observe(double v);  // NaN: ignored; counted in the first bucket whose bound is >= v

    struct snapshot {
        std::vector<double> bounds;         // as given, without +Inf
        std::vector<uint64_t> cumulative;   // observations <= bounds[i]; one more entry for +Inf
        double sum = 0;
        uint64_t count = 0;                 // == cumulative.back()
    };
    snapshot read() const;

private:
    std::vector<double> bounds_;
    std::unique_ptr<std::atomic<uint64_t>[]> buckets_;  // bounds_.size() + 1, not cumulative
    std::atomic<double> sum_{0.0};
};

enum class metrics_type { counter, gauge, histogram };

// One metric family: a name, a help text, label names and its series.
class metrics_family_base {
public:
    metrics_family_base(std::string name, std::string help, metrics_type type, std::vector<std::string> labels)
        : name_(std::move(name)), help_(std::move(help)), type_(type), label_names_(std::move(labels)) {}
    virtual ~metrics_family_base() = default;
    const std::string & name() const { return name_; }
    const std::string & help() const { return help_; }
    metrics_type type() const { return type_; }
    const std::vector<std::string> & label_names() const { return label_names_; }
    // Appends "# HELP", "# TYPE" and every series' sample lines.
    virtual void render(std::string & out) const = 0;

protected:
    std::string name_, help_;
    metrics_type type_;
    std::vector<std::string> label_names_;
};

template <class T>
class metrics_family final : public metrics_family_base {
public:
    metrics_family(std::string name, std::string help, metrics_type type, std::vector<std::string> labels,
                   std::vector<double> bounds = {});
    // The series with these label values, in label-name order; created at first use.
    T & with(std::initializer_list<std::string_view> values);
    T & with(const std::vector<std::string> & values);
    // Stops exporting every series (references stay valid; with() then makes new series).
    void clear();
    void render(std::string & out) const override;

private:
    T & with_key(std::vector<std::string> key);

    std::vector<double> bounds_;  // histograms only
    mutable std::mutex mutex_;
    std::map<std::vector<std::string>, std::unique_ptr<T>> series_;
    std::vector<std::unique_ptr<T>> retired_;  // cleared series, kept alive for old references
};

class metrics_registry {
public:
    metrics_family<metrics_counter> & add_counter(std::string name, std::string help,
                                                  std::vector<std::string> label_names = {});
    metrics_family<metrics_gauge> & add_gauge(std::string name, std::string help,
                                              std::vector<std::string> label_names = {});
    metrics_family<metrics_histogram> & add_histogram(std::string name, std::string help, std::vector<double> bounds,
                                                      std::vector<std::string> label_names = {});
    // Every family in registration order, in the text exposition format 0.0.4.
    std::string render() const;

private:
    void check_new_family(const std::string & name, const std::vector<std::string> & labels, bool histogram) const;

    mutable std::mutex mutex_;
    std::vector<std::unique_ptr<metrics_family_base>> families_;
};

// Text helpers of the exposition format (exposed for tests).
std::string metrics_format_value(double v);                 // "1", "0.25", "+Inf", "NaN"
std::string metrics_escape_label_value(std::string_view s);  // \ -> \\, " -> \", newline -> \n
std::string metrics_escape_help(std::string_view s);         // \ -> \\, newline -> \n
bool metrics_valid_metric_name(std::string_view s);          // [a-zA-Z_:][a-zA-Z0-9_:]*
bool metrics_valid_label_name(std::string_view s);           // [a-zA-Z_][a-zA-Z0-9_]*, not "__…"

// The labels of inferd_model_info.
struct server_model_info {
    std::string model;         // the id clients use (alias or file name)
    std::string architecture;  // "llama", …
    std::string quantization;  // "Q4_K_M", "F16", …
    int64_t ctx_size = 0;      // KV cache size in tokens
    int64_t parallel = 0;      // slots
};

// Every family of inferd, registered in the constructor, with typed accessors for the HTTP layer
// and the batch loop. All methods are thread-safe.
class server_metrics {
public:
    server_metrics();
    server_metrics(const server_metrics &) = delete;
    server_metrics & operator=(const server_metrics &) = delete;

    // endpoint: the route ("/v1/completions", "/health", …); anything that is not one of inferd's
    // routes is counted as "other" so that clients cannot grow the label set.
    void request_done(std::string_view endpoint, int status, double duration_seconds);
    void observe_time_to_first_token(double seconds);
    void observe_inter_token_latency(double seconds);
    void add_prompt_tokens(uint64_t n);         // prompt tokens of finished or running requests
    void add_prompt_tokens_cached(uint64_t n);  // of which reused from the prefix cache
    void add_generation_tokens(uint64_t n);
    void set_requests_running(size_t n);
    void set_requests_waiting(size_t n);
    void set_kv_cache_usage(double ratio);      // clamped to [0, 1]
    void decode_step(size_t n_tokens);          // one engine batch of n_tokens tokens
    // Speculative decoding: n draft tokens verified, `accepted` of them accepted.
    void add_draft_tokens(uint64_t n, uint64_t accepted);
    // Adaptive speculation: drafting on now, the last measured rate ratio with / without drafts,
    // and the times drafting turned itself off so far (a running total; the counter follows it).
    void set_spec_state(bool active, double speedup, uint64_t turned_off);
    void connection_refused();                  // a connection over --max-connections got 503
    // Generation requests waiting for a compile thread, and being prepared on one.
    void set_compile_jobs(size_t waiting, size_t running);
    // A constraint or tool-call grammar refused (a 400), or a compile job that failed (a 500).
    void compile_error();
    void set_model_info(const server_model_info & info);  // replaces the previous one

    std::string render() const { return registry_.render(); }
    metrics_registry & registry() { return registry_; }

private:
    metrics_registry registry_;
    metrics_family<metrics_counter> * requests_;
    metrics_family<metrics_histogram> * request_duration_;
    metrics_histogram * ttft_;
    metrics_histogram * itl_;
    metrics_counter * prompt_tokens_;
    metrics_counter * generation_tokens_;
    metrics_counter * prompt_tokens_cached_;
    metrics_gauge * running_;
    metrics_gauge * waiting_;
    metrics_gauge * kv_usage_;
    metrics_histogram * batch_tokens_;
    metrics_counter * decode_steps_;
    metrics_counter * draft_tokens_;
    metrics_counter * draft_accepted_;
    metrics_gauge * spec_active_;
    metrics_gauge * spec_speedup_;
    metrics_counter * spec_turned_off_;
    std::atomic<uint64_t> spec_turned_off_seen_{0};
    metrics_counter * connections_refused_;
    metrics_gauge * compile_waiting_;
    metrics_gauge * compile_running_;
    metrics_counter * compile_errors_;
    metrics_family<metrics_gauge> * model_info_;
};

// The route name used as the endpoint label for a request path ("other" for unknown paths).
std::string_view server_metrics_endpoint_label(std::string_view path);
