// tools/loadgen/loadgen-stats.cpp — percentiles, aggregation and the report formats.
#include "loadgen/loadgen-stats.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>

std::optional<double> loadgen_percentile(std::vector<double> samples, double p) {
    if (samples.empty() || !(p > 0.0) || p > 100.0) {
        return std::nullopt;
    }
    std::sort(samples.begin(), samples.end());
    const double n = double(samples.size());
    // ceil(p/100 * N) computed with a small tolerance so that, e.g., p=50, N=10 gives 5 and not 6
    // from rounding noise in p/100.
    size_t rank = size_t(std::ceil(p / 100.0 * n - 1e-9));
    rank = std::clamp<size_t>(rank, 1, samples.size());
    return samples[rank - 1];
}

loadgen_summary loadgen_summarize(const std::vector<loadgen_request_result> & results, double elapsed_s,
                                  bool embeddings) {
    loadgen_summary s;
    s.elapsed_s = elapsed_s;
    s.embeddings = embeddings;
    std::vector<double> ttft, itl, latency;
    for (const loadgen_request_result & r : results) {
        ++s.requests;
        if (!r.error.empty()) {
            if (++s.errors[r.error] == 1) {
                s.error_examples[r.error] = r.detail;
            }
            continue;
        }
        ++s.ok;
        s.completion_tokens += r.completion_tokens;
        s.prompt_tokens += r.prompt_tokens;
        s.cached_tokens += r.cached_tokens;
        s.inputs += r.inputs;
        latency.push_back(r.end_s - r.start_s);
        if (r.ttft_s) {
            ttft.push_back(*r.ttft_s);
        }
        itl.insert(itl.end(), r.itl_s.begin(), r.itl_s.end());
    }
    if (elapsed_s > 0) {
        s.tokens_per_s = double(s.completion_tokens) / elapsed_s;
        s.requests_per_s = double(s.ok) / elapsed_s;
        s.inputs_per_s = double(s.inputs) / elapsed_s;
        s.prompt_tokens_per_s = double(s.prompt_tokens) / elapsed_s;
    }
    s.ttft_samples = int64_t(ttft.size());
    s.itl_samples = int64_t(itl.size());
    s.ttft_p50_s = loadgen_percentile(ttft, 50);
    s.ttft_p99_s = loadgen_percentile(ttft, 99);
    s.itl_p50_s = loadgen_percentile(itl, 50);
    s.itl_p99_s = loadgen_percentile(std::move(itl), 99);
    s.latency_samples = int64_t(latency.size());
    s.latency_p50_s = loadgen_percentile(latency, 50);
    s.latency_p99_s = loadgen_percentile(std::move(latency), 99);
    return s;
}

namespace {

std::string ms_text(const std::optional<double> & v) {
    if (!v) {
        return "-";
    }
    char b[64];
    std::snprintf(b, sizeof b, "%.1f ms", *v * 1000.0);
    return b;
}

nlohmann::json ms_json(const std::optional<double> & v) {
    if (!v) {
        return nullptr;
    }
    return *v * 1000.0;
}

int64_t error_count(const loadgen_summary & s) {
    int64_t n = 0;
    for (const auto & kv : s.errors) {
        n += kv.second;
    }
    return n;
}

}  // namespace

std::string loadgen_format_table(const loadgen_summary & s) {
    std::string out;
    char line[160];
    auto row = [&](const char * name, const std::string & value) {
        std::snprintf(line, sizeof line, "%-22s %s\n", name, value.c_str());
        out += line;
    };
    auto rate = [](double v) {
        char b[64];
        std::snprintf(b, sizeof b, "%.2f", v);
        return std::string(b);
    };
    char b[64];
    std::snprintf(b, sizeof b, "%.2f s", s.elapsed_s);
    row("elapsed", b);
    row("requests", std::to_string(s.requests) + " (" + std::to_string(s.ok) + " ok)");
    row("requests/s", rate(s.requests_per_s));
    if (s.embeddings) {
        row("inputs", std::to_string(s.inputs));
        row("inputs/s", rate(s.inputs_per_s));
        row("prompt tokens", std::to_string(s.prompt_tokens));
        row("prompt tokens/s", rate(s.prompt_tokens_per_s));
        row("latency p50", ms_text(s.latency_p50_s));
        row("latency p99", ms_text(s.latency_p99_s) + " (" + std::to_string(s.latency_samples) + " samples)");
    } else {
        row("completion tokens", std::to_string(s.completion_tokens));
        row("generated tokens/s", rate(s.tokens_per_s));
        row("prompt tokens", std::to_string(s.prompt_tokens) + " (" + std::to_string(s.cached_tokens) + " cached)");
        row("TTFT p50", ms_text(s.ttft_p50_s));
        row("TTFT p99", ms_text(s.ttft_p99_s) + " (" + std::to_string(s.ttft_samples) + " samples)");
        row("ITL p50", ms_text(s.itl_p50_s));
        row("ITL p99", ms_text(s.itl_p99_s) + " (" + std::to_string(s.itl_samples) + " samples)");
    }
    row("errors", std::to_string(error_count(s)));
    for (const auto & [kind, n] : s.errors) {
        const auto ex = s.error_examples.find(kind);
        const bool has_detail = ex != s.error_examples.end() && !ex->second.empty();
        const std::string detail = has_detail ? "  first: " + ex->second.substr(0, 120) : "";
        row(("  " + kind).c_str(), std::to_string(n) + detail);
    }
    return out;
}

std::string loadgen_format_json(const loadgen_summary & s) {
    nlohmann::json errors = nlohmann::json::object();
    for (const auto & [kind, n] : s.errors) {
        errors[kind] = n;
    }
    nlohmann::json j = {
        {"elapsed_s", s.elapsed_s},
        {"requests", s.requests},
        {"ok", s.ok},
        {"errors", errors},
        {"error_count", error_count(s)},
        {"completion_tokens", s.completion_tokens},
        {"prompt_tokens", s.prompt_tokens},
        {"cached_tokens", s.cached_tokens},
        {"tokens_per_s", s.tokens_per_s},
        {"requests_per_s", s.requests_per_s},
        {"ttft_p50_ms", ms_json(s.ttft_p50_s)},
        {"ttft_p99_ms", ms_json(s.ttft_p99_s)},
        {"itl_p50_ms", ms_json(s.itl_p50_s)},
        {"itl_p99_ms", ms_json(s.itl_p99_s)},
        {"ttft_samples", s.ttft_samples},
        {"itl_samples", s.itl_samples},
        {"error_examples", s.error_examples},
    };
    if (s.embeddings) {
        j["mode"] = "embeddings";
        j["inputs"] = s.inputs;
        j["inputs_per_s"] = s.inputs_per_s;
        j["prompt_tokens_per_s"] = s.prompt_tokens_per_s;
        j["latency_p50_ms"] = ms_json(s.latency_p50_s);
        j["latency_p99_ms"] = ms_json(s.latency_p99_s);
        j["latency_samples"] = s.latency_samples;
    }
    return j.dump();
}
