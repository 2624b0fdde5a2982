// inferd-bench's driver (see bench.h).
#include "bench/bench.h"

#include "bench/bench-options.h"
#include "bench/bench-output.h"
#include "bench/bench-run.h"
#include "ggml/cpu.h"
#include "mem-bandwidth.h"

#include <algorithm>
#include <exception>
#include <memory>
#include <set>

#ifndef INFERD_GIT_COMMIT
#define INFERD_GIT_COMMIT "unknown"
#endif

namespace {

// A CPU backend as the engine makes one: CPUID's path capped by INFERD_CPU_ISA, with the
// calibrated choice per weight type where this CPU has one.
ggml_backend_ptr default_cpu() {
    ggml_cpu_backend_options opt;
    opt.n_threads = 1;
    return ggml_backend_cpu_init(opt);
}

// --calibrate: the measured table, then the cache written. 0 ok, 1 when it cannot be written.
int calibrate(const bench_options & o, std::FILE * out, std::FILE * err) {
    const int n_threads = o.n_threads.empty() ? 1 : o.n_threads.front();
    std::fprintf(out, "CPU: %s, %d threads\n\n", ggml_cpu_model_name().c_str(), n_threads);
    std::vector<ggml_cpu_calibration_row> rows;
    const ggml_cpu_calibration c = ggml_cpu_calibrate(n_threads, &rows);
    if (rows.empty()) {
        std::fprintf(out, "one kernel path on this CPU (%s): nothing to choose\n",
                     ggml_cpu_isa_name(ggml_cpu_detect_features().best_isa()));
    } else {
        std::fprintf(out, "| type | regime | avx2 us | avx512 us | amx us | chosen |\n| --- | --- | --- | --- | --- | --- |\n");
        for (const ggml_cpu_calibration_row & r : rows) {
            std::fprintf(out, "| %s | %s |", ggml_type_name(r.type), r.regime == 0 ? "decode (1 col)" : "prompt (128 cols)");
            for (int i = 1; i <= 3; ++i) {
                if (r.us[i] > 0) std::fprintf(out, " %.0f |", r.us[i]);
                else std::fprintf(out, " - |");
            }
            std::fprintf(out, " %s |\n", ggml_cpu_isa_name(r.chosen));
        }
    }
    const std::string path = ggml_cpu_calibration_path();
    std::string why;
    if (!ggml_cpu_calibration_write(path, c, &why)) {
        std::fprintf(err, "inferd-bench: the calibration was not saved: %s\n", why.c_str());
        return 1;
    }
    std::fprintf(out, "\nwritten to %s (read by CPU backends started after this)\n", path.c_str());
    return 0;
}

// The bandwidth for every thread count a tg test uses: given, or probed once per count.
void measure_bandwidth(const bench_options & o, const std::vector<bench_test_config> & tests, bench_report * rep,
                       std::FILE * err) {
    std::set<int> counts;
    for (const bench_test_config & t : tests) {
        if (t.n_gen > 0) counts.insert(t.n_threads);
    }
    rep->bandwidth_given = o.bandwidth_gbps > 0;
    if (counts.empty()) return;
    if (o.n_gpu_layers != 0 && !rep->bandwidth_given) {
        // Runs with layers on a GPU read the weights from its memory (the first GPU's, which the
        // placement fills first when there is one; several GPUs run their layers in turn).
        const ggml_backend_registry reg = ggml_backend_registry_default();
        if (ggml_backend_device_i * gpu = reg.device_by_type(ggml_backend_dev_type::gpu)) {
            rep->gpu_device = gpu->name();
            rep->gpu_bandwidth = gpu->measure_read_gbps(o.probe_bytes, 5);
            if (o.verbose) std::fprintf(err, "inferd-bench: %s read bandwidth: %.1f GB/s\n", gpu->name(), rep->gpu_bandwidth);
        }
    }
    if (rep->bandwidth_given) {
        for (int n : counts) rep->bandwidth[n] = o.bandwidth_gbps;
        return;
    }
    try {
        mem_bandwidth_probe probe(o.probe_bytes);
        for (int n : counts) {
            rep->bandwidth[n] = probe.measure_gbps(n, 5);
            if (o.verbose) std::fprintf(err, "inferd-bench: read bandwidth, %d threads: %.2f GB/s\n", n, rep->bandwidth[n]);
        }
    } catch (const std::exception & e) {
        std::fprintf(err, "inferd-bench: the bandwidth probe failed (%s); %% bw not shown\n", e.what());
        rep->bandwidth.clear();
    }
}

// Runs every test of one model (loaded once); cpu reports the kernel paths. 0 ok, 1 on the first failure.
int run_model(const std::string & path, const std::vector<bench_test_config> & tests, const bench_options & o,
              const ggml_backend_i * cpu, bench_report * rep, std::FILE * err) {
    model_params mp;
    mp.n_gpu_layers = o.n_gpu_layers;
    for (const bench_test_config & t : tests) {  // the largest context a test makes
        mp.memory.n_ctx = std::max(mp.memory.n_ctx, bench_n_ctx(t));
        mp.memory.n_ubatch = std::max(mp.memory.n_ubatch, uint32_t(t.n_ubatch));
        mp.memory.n_seq_max = std::max(mp.memory.n_seq_max, uint32_t(t.n_parallel));
    }
    std::unique_ptr<model> m;
    try {
        m = model::load(path, mp);
    } catch (const std::exception & e) {
        std::fprintf(err, "inferd-bench: cannot load model: %s\n", e.what());
        return 1;
    }
    for (const std::string & w : m->warnings()) std::fprintf(err, "inferd-bench: %s: warning: %s\n", path.c_str(), w.c_str());
    int64_t n_prompt = 0;
    for (const bench_test_config & t : tests) {
        if (t.model == path) n_prompt = std::max<int64_t>(n_prompt, std::min<int64_t>(t.n_prompt, t.n_ubatch));
    }
    rep->kernels.emplace_back(path, bench_model_kernels(*m, cpu, n_prompt));
    bench_run_options ro;
    ro.repetitions = o.repetitions;
    ro.warmup = o.warmup;
    ro.progress = o.verbose ? err : nullptr;
    for (const bench_test_config & t : tests) {
        if (t.model != path) continue;
        bench_result r;
        std::string why;
        if (bench_run_test(*m, t, ro, &r, &why) != 0) {
            std::fprintf(err, "inferd-bench: %s: %s\n", path.c_str(), why.c_str());
            return 1;
        }
        const auto bw = rep->bandwidth.find(t.n_threads);
        double ceiling = bw != rep->bandwidth.end() ? bw->second : 0.0;
        if (t.n_gpu_layers != 0 && !rep->gpu_device.empty()) ceiling = rep->gpu_bandwidth;
        if (t.n_gen > 0 && ceiling > 0) {
            r.bandwidth_gbps = ceiling;
            r.bandwidth_pct = 100.0 * r.gbps / ceiling;
        }
        rep->results.push_back(std::move(r));
    }
    return 0;
}

}  // namespace

int bench_tool_main(const std::vector<std::string> & args, std::FILE * out, std::FILE * err) {
    bench_options o;
    std::string why;
    if (!bench_options_parse(args, &o, &why)) {
        std::fprintf(err, "inferd-bench: %s\n\n%s", why.c_str(), bench_usage().c_str());
        return 2;
    }
    if (o.help) {
        std::fprintf(out, "%s", bench_usage().c_str());
        return 0;
    }
    if (o.calibrate) {
        const int rc = calibrate(o, out, err);
        if (rc != 0 || o.models.empty()) return rc;
        std::fprintf(out, "\n");
    }
    const std::vector<bench_test_config> tests = bench_tests_expand(o);
    if (tests.empty()) {
        std::fprintf(err, "inferd-bench: no test to run (every -p and -n is 0)\n\n%s", bench_usage().c_str());
        return 2;
    }
    bench_report rep;
    const ggml_backend_ptr cpu = default_cpu();
    rep.cpu_isa = ggml_cpu_isa_name(ggml_backend_cpu_get_isa(cpu.get()));
    rep.cpu_model = ggml_cpu_model_name();
    rep.build_commit = INFERD_GIT_COMMIT;
    measure_bandwidth(o, tests, &rep, err);
    std::vector<std::string> done;
    int rc = 0;
    for (const std::string & path : o.models) {
        if (std::find(done.begin(), done.end(), path) != done.end()) continue;
        done.push_back(path);
        rc = run_model(path, tests, o, cpu.get(), &rep, err);
        if (rc != 0) break;
    }
    if (!rep.results.empty() || rc == 0) bench_print(rep, o.output, out);
    return rc;
}
