// inferd-bench's output formats (see bench-output.h).
#include "bench/bench-output.h"

#include <string_view>

namespace {

std::string format(const char * fmt, double a, double b = 0) {
    char buf[64];
    std::snprintf(buf, sizeof buf, fmt, a, b);
    return buf;
}

void print_md(const bench_report & rep, std::FILE * out) {
    std::fprintf(out, "| model | size | params | backend | threads | fa | test | t/s | GB/s | %% bw |\n");
    std::fprintf(out, "| --- | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |\n");
    for (const bench_result & r : rep.results) {
        const bool tg = r.cfg.n_gen > 0;
        const std::string gbps = tg ? format("%.2f", r.gbps) : "";
        const std::string pct = tg && r.bandwidth_gbps > 0 ? format("%.1f", r.bandwidth_pct) : "";
        std::fprintf(out, "| %s | %s | %s | %s | %d | %d | %s | %s | %s | %s |\n", r.model.type.c_str(),
                     bench_format_size(r.model.size).c_str(), bench_format_params(r.model.n_params).c_str(),
                     r.backends.c_str(), r.cfg.n_threads, r.cfg.flash_attn ? 1 : 0, bench_test_name(r.cfg).c_str(),
                     format("%.2f ± %.2f", r.avg_ts, r.stddev_ts).c_str(), gbps.c_str(), pct.c_str());
    }
    std::string bw;
    for (const auto & [nth, g] : rep.bandwidth) {
        bw += (bw.empty() ? "" : ", ") + std::to_string(nth) + (nth == 1 ? " thread " : " threads ") + format("%.2f GB/s", g);
    }
    if (bw.empty()) bw = "not measured";
    if (!rep.gpu_device.empty()) {
        bw = rep.gpu_device + " " + (rep.gpu_bandwidth > 0 ? format("%.1f GB/s", rep.gpu_bandwidth) : "not measured") +
             " (runs with layers on the GPU)" + (bw == "not measured" ? "" : "; CPU " + bw);
    }
    std::fprintf(out, "\nread bandwidth (%s): %s; build: %s, cpu isa %s\n",
                 rep.bandwidth_given ? "given with --bandwidth" : "probe, median of 5 passes", bw.c_str(),
                 rep.build_commit.c_str(), rep.cpu_isa.c_str());
    if (!rep.cpu_model.empty()) std::fprintf(out, "cpu: %s\n", rep.cpu_model.c_str());
    for (const auto & [file, lines] : rep.kernels) {
        if (lines.empty()) continue;
        std::fprintf(out, "kernels of %s:\n", file.c_str());
        for (const std::string & l : lines) std::fprintf(out, "  %s\n", l.c_str());
    }
}

std::string csv_quote(std::string_view s) {
    std::string q = "\"";
    for (char c : s) {
        if (c == '"') q += '"';
        q += c;
    }
    return q + "\"";
}

std::string csv_value(const nlohmann::json & v) {
    if (v.is_string()) return csv_quote(v.get<std::string>());
    if (v.is_array()) {
        std::string s;
        for (const auto & x : v) {
            if (!s.empty()) s += ';';
            s += x.dump();
        }
        return csv_quote(s);
    }
    return v.dump();
}

void print_csv(const bench_report & rep, std::FILE * out) {
    const std::vector<std::string> & fields = bench_result_fields();
    std::string line;
    for (const std::string & f : fields) {
        if (!line.empty()) line += ',';
        line += f;
    }
    std::fprintf(out, "%s\n", line.c_str());
    for (const bench_result & r : rep.results) {
        const nlohmann::json j = bench_result_json(r, rep);
        line.clear();
        for (size_t i = 0; i < fields.size(); ++i) {
            if (i) line += ',';
            line += csv_value(j.at(fields[i]));
        }
        std::fprintf(out, "%s\n", line.c_str());
    }
}

}  // namespace

const std::vector<std::string> & bench_result_fields() {
    static const std::vector<std::string> fields = {
        "build_commit", "cpu_isa", "cpu_model", "kernels", "backends", "model_filename", "model_type", "model_size",
        "model_n_params", "n_batch", "n_ubatch", "n_threads", "type_k", "type_v", "n_gpu_layers", "flash_attn", "n_prompt", "n_gen",
        "n_depth", "n_parallel", "test_time", "avg_ns", "stddev_ns", "avg_ts", "stddev_ts", "median_ts",
        "samples_ns", "samples_ts", "gbps", "bandwidth_gbps", "bandwidth_pct"};
    return fields;
}

nlohmann::json bench_result_json(const bench_result & r, const bench_report & rep) {
    nlohmann::json j;
    j["build_commit"] = rep.build_commit;
    j["cpu_isa"] = rep.cpu_isa;
    j["cpu_model"] = rep.cpu_model;
    j["kernels"] = nlohmann::json::array();
    for (const auto & [file, lines] : rep.kernels) {
        if (file == r.model.filename) j["kernels"] = lines;
    }
    j["backends"] = r.backends;
    j["model_filename"] = r.model.filename;
    j["model_type"] = r.model.type;
    j["model_size"] = r.model.size;
    j["model_n_params"] = r.model.n_params;
    j["n_batch"] = r.cfg.n_batch;
    j["n_ubatch"] = r.cfg.n_ubatch;
    j["n_threads"] = r.cfg.n_threads;
    j["type_k"] = bench_kv_type_name(r.cfg.type_k);
    j["type_v"] = bench_kv_type_name(r.cfg.type_v);
    j["n_gpu_layers"] = r.cfg.n_gpu_layers;
    j["flash_attn"] = r.cfg.flash_attn;
    j["n_prompt"] = r.cfg.n_prompt;
    j["n_gen"] = r.cfg.n_gen;
    j["n_depth"] = r.cfg.n_depth;
    j["n_parallel"] = r.cfg.n_parallel;
    j["test_time"] = r.test_time;
    j["avg_ns"] = uint64_t(r.avg_ns + 0.5);
    j["stddev_ns"] = uint64_t(r.stddev_ns + 0.5);
    j["avg_ts"] = r.avg_ts;
    j["stddev_ts"] = r.stddev_ts;
    j["median_ts"] = r.median_ts;
    j["samples_ns"] = r.samples_ns;
    j["samples_ts"] = r.samples_ts;
    j["gbps"] = r.gbps;
    j["bandwidth_gbps"] = r.bandwidth_gbps;
    j["bandwidth_pct"] = r.bandwidth_pct;
    return j;
}

void bench_print(const bench_report & rep, bench_output_format fmt, std::FILE * out) {
    if (fmt == bench_output_format::md) {
        print_md(rep, out);
    } else if (fmt == bench_output_format::csv) {
        print_csv(rep, out);
    } else {
        nlohmann::json a = nlohmann::json::array();
        for (const bench_result & r : rep.results) a.push_back(bench_result_json(r, rep));
        std::fprintf(out, "%s\n", a.dump(2).c_str());
    }
    std::fflush(out);
}

std::string bench_format_size(uint64_t bytes) {
    const double mib = double(bytes) / (1024.0 * 1024.0);
    return mib >= 1024.0 ? format("%.2f GiB", mib / 1024.0) : format("%.2f MiB", mib);
}

std::string bench_format_params(uint64_t n) {
    if (n >= 1000000000ull) return format("%.2f B", double(n) / 1e9);
    if (n >= 1000000ull) return format("%.2f M", double(n) / 1e6);
    return format("%.2f K", double(n) / 1e3);
}
