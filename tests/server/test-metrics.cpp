// The Prometheus registry (exposition text, escaping, registration checks, concurrency) and
// server_metrics (every metric family the server exports), checked by promtool when it is installed.
#include "server/metrics.h"

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

bool contains(const std::string & s, const std::string & part) { return s.find(part) != std::string::npos; }

size_t count_of(const std::string & s, const std::string & part) {
    size_t n = 0;
    for (size_t p = s.find(part); p != std::string::npos; p = s.find(part, p + 1)) ++n;
    return n;
}

// The path of an executable on PATH, "" when there is none.
std::string find_on_path(const std::string & name) {
    const char * path = std::getenv("PATH");
    std::string rest = path ? path : "";
    while (!rest.empty()) {
        size_t colon = rest.find(':');
        std::string dir = rest.substr(0, colon);
        rest = colon == std::string::npos ? "" : rest.substr(colon + 1);
        std::string candidate = (dir.empty() ? "." : dir) + "/" + name;
        if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    }
    return "";
}

// Runs `promtool check metrics` on text; returns its exit status, *output its messages.
int promtool_check(const std::string & promtool, const std::string & text, std::string * output) {
    std::filesystem::path file =
        std::filesystem::temp_directory_path() / ("inferd-metrics-" + std::to_string(::getpid()) + ".txt");
    std::ofstream(file, std::ios::binary) << text;
    std::string cmd = "'" + promtool + "' check metrics < '" + file.string() + "' 2>&1";
    FILE * p = ::popen(cmd.c_str(), "r");
    if (!p) return -1;
    char buf[512];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) output->append(buf, n);
    int status = ::pclose(p);
    std::filesystem::remove(file);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

TEST(metrics, counter_and_gauge) {
    metrics_counter c;
    c.inc();
    c.inc(2.5);
    c.inc(-1);                                       // ignored: a counter never goes down
    c.inc(std::numeric_limits<double>::quiet_NaN());  // ignored
    EXPECT_EQ(c.value(), 3.5);
    metrics_gauge g;
    g.set(5);
    g.add(2);
    g.sub(10);
    EXPECT_EQ(g.value(), -3);
}

TEST(metrics, histogram_buckets_are_inclusive_and_cumulative) {
    metrics_histogram h({1, 2, 5});
    for (double v : {0.5, 1.0, 1.5, 2.0, 7.0, -3.0}) h.observe(v);
    h.observe(std::numeric_limits<double>::quiet_NaN());  // ignored
    metrics_histogram::snapshot s = h.read();
    EXPECT_EQ(s.cumulative, (std::vector<uint64_t>{3, 5, 5, 6}));
    EXPECT_EQ(s.count, 6u);
    EXPECT_EQ(s.sum, 9.0);
    EXPECT_EQ(s.bounds, (std::vector<double>{1, 2, 5}));
}

TEST(metrics, value_formatting_and_escaping) {
    EXPECT_EQ(metrics_format_value(0), "0");
    EXPECT_EQ(metrics_format_value(42), "42");
    EXPECT_EQ(metrics_format_value(-2), "-2");
    EXPECT_EQ(metrics_format_value(0.25), "0.25");
    EXPECT_EQ(metrics_format_value(0.005), "0.005");
    EXPECT_EQ(metrics_format_value(1e300), "1e+300");
    EXPECT_EQ(metrics_format_value(std::numeric_limits<double>::infinity()), "+Inf");
    EXPECT_EQ(metrics_format_value(-std::numeric_limits<double>::infinity()), "-Inf");
    EXPECT_EQ(metrics_format_value(std::numeric_limits<double>::quiet_NaN()), "NaN");
    EXPECT_EQ(metrics_escape_label_value("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
    EXPECT_EQ(metrics_escape_help("x\\y\nz\"q"), "x\\\\y\\nz\"q");
    EXPECT_TRUE(metrics_valid_metric_name("a:b_c9"));
    EXPECT_FALSE(metrics_valid_metric_name("9a"));
    EXPECT_FALSE(metrics_valid_metric_name("a-b"));
    EXPECT_FALSE(metrics_valid_metric_name(""));
    EXPECT_TRUE(metrics_valid_label_name("_x1"));
    EXPECT_FALSE(metrics_valid_label_name("__reserved"));
    EXPECT_FALSE(metrics_valid_label_name("a:b"));
}

TEST(metrics, render_exposition_text) {
    metrics_registry reg;
    auto & req = reg.add_counter("app_requests_total", "Requests.\nSecond line \\ here.", {"path", "code"});
    auto & temp = reg.add_gauge("app_temperature", "Temperature.");
    auto & lat = reg.add_histogram("app_latency_seconds", "Latency.", {0.1, 1}, {"path"});
    auto & empty = reg.add_gauge("app_unused", "Never set.", {"x"});
    (void)empty;
    req.with({"/b", "200"}).inc(2);
    req.with({"/a", "404"}).inc();
    req.with({"/q\"\\\n", "500"}).inc();
    temp.with({}).set(-1.5);
    lat.with({"/a"}).observe(0.0625);
    lat.with({"/a"}).observe(0.5);
    lat.with({"/a"}).observe(3);
    const std::string expected =
        "# HELP app_requests_total Requests.\\nSecond line \\\\ here.\n"
        "# TYPE app_requests_total counter\n"
        "app_requests_total{path=\"/a\",code=\"404\"} 1\n"
        "app_requests_total{path=\"/b\",code=\"200\"} 2\n"
        "app_requests_total{path=\"/q\\\"\\\\\\n\",code=\"500\"} 1\n"
        "# HELP app_temperature Temperature.\n"
        "# TYPE app_temperature gauge\n"
        "app_temperature -1.5\n"
        "# HELP app_latency_seconds Latency.\n"
        "# TYPE app_latency_seconds histogram\n"
        "app_latency_seconds_bucket{path=\"/a\",le=\"0.1\"} 1\n"
        "app_latency_seconds_bucket{path=\"/a\",le=\"1\"} 2\n"
        "app_latency_seconds_bucket{path=\"/a\",le=\"+Inf\"} 3\n"
        "app_latency_seconds_sum{path=\"/a\"} 3.5625\n"
        "app_latency_seconds_count{path=\"/a\"} 3\n"
        "# HELP app_unused Never set.\n"
        "# TYPE app_unused gauge\n";
    EXPECT_EQ(reg.render(), expected);
}

TEST(metrics, unlabelled_histogram_renders_from_the_start) {
    metrics_registry reg;
    reg.add_histogram("h_seconds", "H.", {1});
    EXPECT_EQ(reg.render(),
              "# HELP h_seconds H.\n# TYPE h_seconds histogram\n"
              "h_seconds_bucket{le=\"1\"} 0\nh_seconds_bucket{le=\"+Inf\"} 0\nh_seconds_sum 0\nh_seconds_count 0\n");
}

TEST(metrics, registration_errors) {
    metrics_registry reg;
    reg.add_counter("ok_total", "x");
    reg.add_histogram("lat_seconds", "x", {1});
    EXPECT_THROW(reg.add_counter("ok_total", "again"), std::invalid_argument);
    EXPECT_THROW(reg.add_gauge("lat_seconds_count", "clash"), std::invalid_argument);
    EXPECT_THROW(reg.add_gauge("1bad", "x"), std::invalid_argument);
    EXPECT_THROW(reg.add_gauge("bad-name", "x"), std::invalid_argument);
    EXPECT_THROW(reg.add_gauge("g1", "x", {"__reserved"}), std::invalid_argument);
    EXPECT_THROW(reg.add_gauge("g2", "x", {"a", "a"}), std::invalid_argument);
    EXPECT_THROW(reg.add_histogram("h1", "x", {1}, {"le"}), std::invalid_argument);
    EXPECT_THROW(reg.add_histogram("h2", "x", {}), std::invalid_argument);
    EXPECT_THROW(reg.add_histogram("h3", "x", {2, 1}), std::invalid_argument);
    EXPECT_THROW(reg.add_histogram("h4", "x", {1, 1}), std::invalid_argument);
    EXPECT_THROW(reg.add_histogram("h5", "x", {1, std::numeric_limits<double>::infinity()}), std::invalid_argument);
    EXPECT_THROW(reg.add_histogram("h6", "x", {std::numeric_limits<double>::quiet_NaN()}), std::invalid_argument);
    auto & g = reg.add_gauge("g3", "x", {"a", "b"});
    EXPECT_THROW(g.with({"only-one"}), std::invalid_argument);
    EXPECT_THROW(g.with(std::vector<std::string>{"1", "2", "3"}), std::invalid_argument);
    EXPECT_NO_THROW(g.with({"1", "2"}).set(1));
    // A failed registration leaves the registry as it was.
    EXPECT_EQ(count_of(reg.render(), "# TYPE"), 3u);
}

TEST(metrics, clear_keeps_references_valid) {
    metrics_registry reg;
    auto & info = reg.add_gauge("info", "x", {"v"});
    metrics_gauge & old = info.with({"1"});
    old.set(1);
    info.clear();
    old.set(2);  // still a valid object, no longer exported
    info.with({"2"}).set(1);
    std::string text = reg.render();
    EXPECT_FALSE(contains(text, "info{v=\"1\"}")) << text;
    EXPECT_TRUE(contains(text, "info{v=\"2\"} 1")) << text;
    EXPECT_EQ(&info.with({"2"}), &info.with({"2"}));
}

TEST(metrics, concurrent_updates_are_exact) {
    metrics_registry reg;
    auto & counter = reg.add_counter("c_total", "x", {"t"});
    auto & gauge = reg.add_gauge("g", "x");
    auto & hist = reg.add_histogram("h", "x", {10, 100});
    constexpr int n_threads = 8, n_iter = 20000;
    std::vector<std::thread> threads;
    std::atomic<bool> done{false};
    std::thread reader([&] {
        while (!done.load()) {
            std::string text = reg.render();
            ASSERT_TRUE(contains(text, "# TYPE h histogram"));
        }
    });
    for (int t = 0; t < n_threads; ++t) {
        threads.emplace_back([&, t] {
            metrics_counter & mine = counter.with({std::to_string(t % 2)});
            for (int i = 0; i < n_iter; ++i) {
                mine.inc();
                gauge.with({}).add(1);
                gauge.with({}).sub(1);
                hist.with({}).observe(double(i % 200));
            }
        });
    }
    for (auto & th : threads) th.join();
    done = true;
    reader.join();
    EXPECT_EQ(counter.with({"0"}).value() + counter.with({"1"}).value(), double(n_threads) * n_iter);
    EXPECT_EQ(counter.with({"0"}).value(), double(n_threads / 2) * n_iter);
    EXPECT_EQ(gauge.with({}).value(), 0);
    metrics_histogram::snapshot s = hist.with({}).read();
    EXPECT_EQ(s.count, uint64_t(n_threads) * n_iter);
    EXPECT_EQ(s.cumulative[0], uint64_t(n_threads) * (n_iter / 200) * 11);   // 0..10
    EXPECT_EQ(s.cumulative[1], uint64_t(n_threads) * (n_iter / 200) * 101);  // 0..100
    EXPECT_EQ(s.sum, double(n_threads) * (n_iter / 200) * (199.0 * 200 / 2));
}

TEST(server_metrics, exports_every_family) {
    server_metrics m;
    std::string text = m.render();
    const char * families[][2] = {
        {"inferd_requests_total", "counter"},
        {"inferd_request_duration_seconds", "histogram"},
        {"inferd_time_to_first_token_seconds", "histogram"},
        {"inferd_inter_token_latency_seconds", "histogram"},
        {"inferd_prompt_tokens_total", "counter"},
        {"inferd_generation_tokens_total", "counter"},
        {"inferd_prompt_tokens_cached_total", "counter"},
        {"inferd_requests_running", "gauge"},
        {"inferd_requests_waiting", "gauge"},
        {"inferd_kv_cache_usage_ratio", "gauge"},
        {"inferd_batch_tokens", "histogram"},
        {"inferd_decode_steps_total", "counter"},
        {"inferd_draft_tokens_total", "counter"},
        {"inferd_draft_accepted_total", "counter"},
        {"inferd_spec_active", "gauge"},
        {"inferd_spec_speedup_ratio", "gauge"},
        {"inferd_spec_turned_off_total", "counter"},
        {"inferd_http_connections_refused_total", "counter"},
        {"inferd_compile_jobs_waiting", "gauge"},
        {"inferd_compile_jobs_running", "gauge"},
        {"inferd_compile_errors_total", "counter"},
        {"inferd_model_info", "gauge"},
    };
    for (auto & f : families) {
        std::string type_line = std::string("# TYPE ") + f[0] + " " + f[1] + "\n";
        EXPECT_EQ(count_of(text, type_line), 1u) << f[0];
        EXPECT_EQ(count_of(text, std::string("# HELP ") + f[0] + " "), 1u) << f[0];
    }
    EXPECT_EQ(count_of(text, "# TYPE "), std::size(families));
    EXPECT_TRUE(contains(text, "\ninferd_requests_running 0\n"));
    EXPECT_TRUE(contains(text, "\ninferd_time_to_first_token_seconds_count 0\n"));
}

TEST(server_metrics, accessors_update_their_families) {
    server_metrics m;
    m.request_done("/v1/completions", 200, 1.2);
    m.request_done("/v1/completions", 200, 0.3);
    m.request_done("/v1/chat/completions", 400, 0.001);
    m.request_done("/wp-admin/../../etc/passwd", 404, 0.0001);  // unknown path: "other"
    m.observe_time_to_first_token(0.8);
    m.observe_inter_token_latency(0.12);
    m.add_prompt_tokens(100);
    m.add_prompt_tokens_cached(64);
    m.add_generation_tokens(32);
    m.set_requests_running(3);
    m.set_requests_waiting(2);
    m.set_kv_cache_usage(1.7);  // clamped
    m.decode_step(9);
    m.decode_step(1);
    m.add_draft_tokens(12, 9);
    m.add_draft_tokens(4, 0);
    m.connection_refused();
    m.connection_refused();
    m.set_spec_state(true, 1.5, 2);
    m.set_spec_state(false, 0.75, 3);  // a running total: the counter follows it
    m.set_spec_state(false, 0.75, 3);
    m.set_compile_jobs(5, 2);
    m.compile_error();
    m.set_model_info({"old", "llama", "F32", 64, 1});
    m.set_model_info({"tiny \"chat\"", "llama", "Q4_K_M", 4096, 8});
    std::string t = m.render();
    EXPECT_TRUE(contains(t, "inferd_requests_total{endpoint=\"/v1/completions\",status=\"200\"} 2\n")) << t;
    EXPECT_TRUE(contains(t, "inferd_requests_total{endpoint=\"/v1/chat/completions\",status=\"400\"} 1\n"));
    EXPECT_TRUE(contains(t, "inferd_requests_total{endpoint=\"other\",status=\"404\"} 1\n"));
    EXPECT_FALSE(contains(t, "passwd"));
    EXPECT_TRUE(contains(t, "inferd_request_duration_seconds_count{endpoint=\"/v1/completions\"} 2\n"));
    EXPECT_TRUE(contains(t, "inferd_request_duration_seconds_sum{endpoint=\"/v1/completions\"} 1.5\n"));
    EXPECT_TRUE(contains(t, "inferd_time_to_first_token_seconds_bucket{le=\"0.75\"} 0\n"));
    EXPECT_TRUE(contains(t, "inferd_time_to_first_token_seconds_bucket{le=\"1\"} 1\n"));
    EXPECT_TRUE(contains(t, "inferd_inter_token_latency_seconds_count 1\n"));
    EXPECT_TRUE(contains(t, "inferd_prompt_tokens_total 100\n"));
    EXPECT_TRUE(contains(t, "inferd_prompt_tokens_cached_total 64\n"));
    EXPECT_TRUE(contains(t, "inferd_generation_tokens_total 32\n"));
    EXPECT_TRUE(contains(t, "inferd_requests_running 3\n"));
    EXPECT_TRUE(contains(t, "inferd_requests_waiting 2\n"));
    EXPECT_TRUE(contains(t, "inferd_kv_cache_usage_ratio 1\n"));
    EXPECT_TRUE(contains(t, "inferd_batch_tokens_bucket{le=\"8\"} 1\n"));
    EXPECT_TRUE(contains(t, "inferd_batch_tokens_bucket{le=\"16\"} 2\n"));
    EXPECT_TRUE(contains(t, "inferd_batch_tokens_sum 10\n"));
    EXPECT_TRUE(contains(t, "inferd_decode_steps_total 2\n"));
    EXPECT_TRUE(contains(t, "inferd_draft_tokens_total 16\n"));
    EXPECT_TRUE(contains(t, "inferd_draft_accepted_total 9\n"));
    EXPECT_TRUE(contains(t, "inferd_spec_active 0\n"));
    EXPECT_TRUE(contains(t, "inferd_spec_speedup_ratio 0.75\n"));
    EXPECT_TRUE(contains(t, "inferd_spec_turned_off_total 3\n"));
    EXPECT_TRUE(contains(t, "inferd_http_connections_refused_total 2\n"));
    EXPECT_TRUE(contains(t, "inferd_compile_jobs_waiting 5\n"));
    EXPECT_TRUE(contains(t, "inferd_compile_jobs_running 2\n"));
    EXPECT_TRUE(contains(t, "inferd_compile_errors_total 1\n"));
    EXPECT_TRUE(contains(t, "inferd_model_info{model=\"tiny \\\"chat\\\"\",architecture=\"llama\","
                            "quantization=\"Q4_K_M\",ctx_size=\"4096\",parallel=\"8\"} 1\n"))
        << t;
    EXPECT_FALSE(contains(t, "model=\"old\""));
    // Idle again: the gauges return to 0.
    m.set_requests_running(0);
    m.set_requests_waiting(0);
    m.set_kv_cache_usage(-0.5);
    t = m.render();
    EXPECT_TRUE(contains(t, "inferd_requests_running 0\n"));
    EXPECT_TRUE(contains(t, "inferd_requests_waiting 0\n"));
    EXPECT_TRUE(contains(t, "inferd_kv_cache_usage_ratio 0\n"));
    EXPECT_EQ(server_metrics_endpoint_label("/health"), "/health");
    EXPECT_EQ(server_metrics_endpoint_label("/v1/models/x"), "other");
}

TEST(server_metrics, promtool_accepts_the_output) {
    std::string promtool = find_on_path("promtool");
    if (promtool.empty()) {
        std::printf("promtool not on PATH (Debian package 'prometheus'): output not checked by it\n");
        GTEST_SKIP() << "promtool not on PATH (apt-get install prometheus)";
    }
    server_metrics m;
    std::string output;
    EXPECT_EQ(promtool_check(promtool, m.render(), &output), 0) << output;  // fresh: mostly empty families
    EXPECT_EQ(output, "");
    m.request_done("/v1/completions", 200, 1.2);
    m.request_done("/nope", 404, 0.01);
    m.observe_time_to_first_token(0.5);
    m.observe_inter_token_latency(0.05);
    m.add_prompt_tokens(10);
    m.add_generation_tokens(5);
    m.add_prompt_tokens_cached(3);
    m.set_requests_running(1);
    m.set_kv_cache_usage(0.25);
    m.decode_step(17);
    m.set_model_info({"a \"quoted\\ model\nname", "llama", "Q8_0", 2048, 4});
    output.clear();
    EXPECT_EQ(promtool_check(promtool, m.render(), &output), 0) << output << "\n" << m.render();
    EXPECT_EQ(output, "");
    // promtool really checks: a counter without _total is reported.
    metrics_registry bad;
    bad.add_counter("requests", "x").with({}).inc();
    output.clear();
    EXPECT_NE(promtool_check(promtool, bad.render(), &output), 0);
    EXPECT_TRUE(contains(output, "_total")) << output;
}
