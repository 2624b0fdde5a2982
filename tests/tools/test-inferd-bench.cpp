// inferd-bench: option parsing (lists, cross product, every bad value), the bandwidth probe on a
// small buffer, and real runs on the shipped tiny models (JSON fields and statistics, KV cells in
// use after --depth / --parallel runs, md and csv shapes, exit codes).
#include "bench/bench-options.h"
#include "bench/bench-output.h"
#include "bench/bench-run.h"
#include "bench/bench.h"
#include "engine/model.h"
#include "mem-bandwidth.h"
#include "testdata.h"
#include "tools/tools-test-util.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <sstream>
#include <thread>

namespace {

struct bench_run {
    int rc;
    std::string out;
    std::string err;
};

bench_run run_bench(const std::vector<std::string> & args) {
    tools_capture out, err;
    const int rc = bench_tool_main(args, out.get(), err.get());
    return {rc, out.text(), err.text()};
}

std::vector<std::string> lines_of(const std::string & s) {
    std::vector<std::string> out;
    std::istringstream in(s);
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
}

// Commas outside double quotes + 1.
size_t csv_columns(const std::string & line) {
    size_t n = 1;
    bool quoted = false;
    for (char c : line) {
        if (c == '"') quoted = !quoted;
        else if (c == ',' && !quoted) ++n;
    }
    return n;
}

bench_options parse_ok(const std::vector<std::string> & args) {
    bench_options o;
    std::string err;
    EXPECT_TRUE(bench_options_parse(args, &o, &err)) << err;
    return o;
}

// Small, fast runs: -r 2 -t 1, the bandwidth given so the 1 GiB probe does not run.
std::vector<std::string> small_args(const std::string & model_path, std::vector<std::string> extra) {
    std::vector<std::string> a = {"-m", model_path, "-p", "16", "-n", "4", "-r", "2", "-t", "1", "--bandwidth", "30"};
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
}

}  // namespace

TEST(inferd_bench_options, defaults) {
    const bench_options o = parse_ok({"-m", "a.gguf"});
    EXPECT_EQ(o.models, std::vector<std::string>{"a.gguf"});
    EXPECT_EQ(o.n_prompt, std::vector<int>{512});
    EXPECT_EQ(o.n_gen, std::vector<int>{128});
    EXPECT_EQ(o.n_threads, std::vector<int>{int(std::max(1u, std::thread::hardware_concurrency()))});
    EXPECT_EQ(o.n_depth, std::vector<int>{0});
    EXPECT_EQ(o.n_parallel, std::vector<int>{1});
    EXPECT_EQ(o.n_batch, std::vector<int>{2048});
    EXPECT_EQ(o.n_ubatch, std::vector<int>{512});
    EXPECT_EQ(o.flash_attn, std::vector<int>{0});
    EXPECT_EQ(o.type_k, std::vector<ggml_type>{GGML_TYPE_F16});
    EXPECT_EQ(o.repetitions, 5);
    EXPECT_EQ(o.n_gpu_layers, 0);
    EXPECT_EQ(o.output, bench_output_format::md);
    EXPECT_EQ(o.bandwidth_gbps, 0.0);
    EXPECT_TRUE(o.warmup);
    EXPECT_FALSE(o.verbose);
    const std::vector<bench_test_config> t = bench_tests_expand(o);
    ASSERT_EQ(t.size(), 2u);
    EXPECT_EQ(bench_test_name(t[0]), "pp512");
    EXPECT_EQ(bench_test_name(t[1]), "tg128");
}

TEST(inferd_bench_options, calibrate_needs_no_model) {
    EXPECT_FALSE(parse_ok({"-m", "a.gguf"}).calibrate);
    const bench_options o = parse_ok({"--calibrate", "-t", "2"});
    EXPECT_TRUE(o.calibrate);
    EXPECT_TRUE(o.models.empty());
    EXPECT_EQ(o.n_threads, std::vector<int>{2});
    EXPECT_TRUE(parse_ok({"--calibrate", "-m", "a.gguf"}).calibrate);
    bench_options bad;
    std::string err;
    EXPECT_FALSE(bench_options_parse({"-t", "2"}, &bad, &err));
    EXPECT_NE(err.find("no model given"), std::string::npos) << err;
}

TEST(inferd_bench_options, lists_accumulate_and_make_a_cross_product) {
    const bench_options o = parse_ok({"-m", "a.gguf,b.gguf", "--model", "c.gguf", "-p", "16,32", "-p", "0", "-n", "4",
                                      "-t", "1,2", "-d", "0,8", "--parallel", "1,3", "-fa", "0,1", "-ctk", "f16,q8_0",
                                      "-b", "64", "-ub", "32", "-r", "3", "-ngl", "-1", "-o", "json", "--no-warmup",
                                      "-v", "--bandwidth=12.5"});
    EXPECT_EQ(o.models, (std::vector<std::string>{"a.gguf", "b.gguf", "c.gguf"}));
    EXPECT_EQ(o.n_prompt, (std::vector<int>{16, 32, 0}));
    EXPECT_EQ(o.type_k, (std::vector<ggml_type>{GGML_TYPE_F16, GGML_TYPE_Q8_0}));
    EXPECT_EQ(o.repetitions, 3);
    EXPECT_EQ(o.n_gpu_layers, -1);
    EXPECT_EQ(o.output, bench_output_format::json);
    EXPECT_DOUBLE_EQ(o.bandwidth_gbps, 12.5);
    EXPECT_FALSE(o.warmup);
    EXPECT_TRUE(o.verbose);
    const std::vector<bench_test_config> t = bench_tests_expand(o);
    // 3 models x 2 ctk x 2 fa x 2 threads x 2 depths x 2 parallel x (2 pp + 1 tg; p = 0 is no test)
    ASSERT_EQ(t.size(), size_t(3 * 2 * 2 * 2 * 2 * 2 * 3));
    EXPECT_EQ(t[0].model, "a.gguf");
    EXPECT_EQ(t[0].n_prompt, 16);
    EXPECT_EQ(t[0].n_gen, 0);
    EXPECT_EQ(t[1].n_prompt, 32);
    EXPECT_EQ(t[2].n_prompt, 0);
    EXPECT_EQ(t[2].n_gen, 4);
    EXPECT_EQ(t[0].n_batch, 64);
    EXPECT_EQ(t[0].n_ubatch, 32);
    EXPECT_EQ(t.back().model, "c.gguf");
    EXPECT_EQ(t.back().n_parallel, 3);
    EXPECT_EQ(t.back().n_depth, 8);
    EXPECT_TRUE(t.back().flash_attn);
    EXPECT_EQ(t.back().type_k, GGML_TYPE_Q8_0);
    EXPECT_EQ(bench_test_name(t.back()), "tg4 @ d8 x3");
}

TEST(inferd_bench_options, test_names) {
    bench_test_config c;
    c.n_prompt = 512;
    EXPECT_EQ(bench_test_name(c), "pp512");
    c.n_depth = 4096;
    EXPECT_EQ(bench_test_name(c), "pp512 @ d4096");
    c.n_prompt = 0;
    c.n_gen = 128;
    c.n_parallel = 8;
    EXPECT_EQ(bench_test_name(c), "tg128 @ d4096 x8");
    c.n_depth = 0;
    EXPECT_EQ(bench_test_name(c), "tg128 x8");
}

TEST(inferd_bench_options, every_bad_value_is_a_usage_error) {
    const std::vector<std::vector<std::string>> bad = {
        {},                                    // no model
        {"-m", ""},                            // empty model name
        {"-m", "a,,b"},
        {"-m", "a", "-p", "x"},
        {"-m", "a", "-p", "1,,2"},
        {"-m", "a", "-p", "-1"},
        {"-m", "a", "-p", "16,"},
        {"-m", "a", "-n", "1.5"},
        {"-m", "a", "-t", "0"},
        {"-m", "a", "-t", "2000"},
        {"-m", "a", "-r", "0"},
        {"-m", "a", "-r", "x"},
        {"-m", "a", "-b", "0"},
        {"-m", "a", "-ub", "0"},
        {"-m", "a", "-d", "-5"},
        {"-m", "a", "--parallel", "0"},
        {"-m", "a", "--parallel", "65"},
        {"-m", "a", "-ngl", "x"},
        {"-m", "a", "-ngl", "-2"},
        {"-m", "a", "-fa", "2"},
        {"-m", "a", "-fa", "yes"},
        {"-m", "a", "-ctk", "q4_0"},
        {"-m", "a", "-ctv", "f16,bf16"},
        {"-m", "a", "-o", "xml"},
        {"-m", "a", "--bandwidth", "0"},
        {"-m", "a", "--bandwidth", "-3"},
        {"-m", "a", "--bandwidth", "fast"},
        {"-m", "a", "--probe-mib", "0"},
        {"-m", "a", "--no-warmup=1"},
        {"-m", "a", "--unknown"},
        {"-m", "a", "stray"},
        {"-m", "a", "-p"},                     // value missing
        {"-m", "a", "-p", "0", "-n", "0"},     // no test at all
    };
    for (const auto & args : bad) {
        std::string joined;
        for (const std::string & a : args) joined += a + " ";
        const bench_run r = run_bench(args);
        EXPECT_EQ(r.rc, 2) << joined;
        EXPECT_NE(r.err.find("inferd-bench: "), std::string::npos) << joined;
        EXPECT_NE(r.err.find("usage: inferd-bench"), std::string::npos) << joined;
        EXPECT_TRUE(r.out.empty()) << joined;
    }
    // The message names the option and the value.
    const bench_run r = run_bench({"-m", "a", "--parallel", "65"});
    EXPECT_NE(r.err.find("'65' for --parallel"), std::string::npos) << r.err;
}

TEST(inferd_bench_options, help_prints_usage_and_what_gbps_counts) {
    const bench_run r = run_bench({"-h"});
    EXPECT_EQ(r.rc, 0);
    EXPECT_NE(r.out.find("usage: inferd-bench"), std::string::npos);
    EXPECT_NE(r.out.find("token-embedding table"), std::string::npos);
    EXPECT_NE(r.out.find("KV cell"), std::string::npos);
}

TEST(inferd_bench_stats, mean_stddev_median) {
    EXPECT_DOUBLE_EQ(bench_mean({1, 2, 3, 6}), 3.0);
    EXPECT_DOUBLE_EQ(bench_stddev({5}), 0.0);
    EXPECT_DOUBLE_EQ(bench_stddev({2, 4, 4, 4, 5, 5, 7, 9}), std::sqrt(32.0 / 7.0));
    EXPECT_DOUBLE_EQ(bench_median({3, 1, 2}), 2.0);
    EXPECT_DOUBLE_EQ(bench_median({4, 1, 2, 3}), 2.5);
    EXPECT_EQ(bench_format_size(uint64_t(636) << 20), "636.00 MiB");
    EXPECT_EQ(bench_format_size(uint64_t(1170) << 20), "1.14 GiB");
    EXPECT_EQ(bench_format_params(1100048384), "1.10 B");
    EXPECT_EQ(bench_format_params(292800), "292.80 K");
}

TEST(inferd_bench_stats, n_ctx_shares_the_depth_and_pads_to_256) {
    bench_test_config c;
    c.n_gen = 16;
    EXPECT_EQ(bench_n_ctx(c), 256u);
    c.n_depth = 4096;
    c.n_parallel = 8;
    EXPECT_EQ(bench_n_ctx(c), 4096u + 256u);  // 4096 + 8 * 16 = 4224 → 4352
    c.n_gen = 0;
    c.n_prompt = 512;
    EXPECT_EQ(bench_n_ctx(c), 4096u + 8u * 512u);
}

TEST(mem_bandwidth, small_probe_measures_and_checksums) {
    mem_bandwidth_probe p(1 << 20);
    EXPECT_EQ(p.bytes(), size_t(1) << 20);
    EXPECT_EQ(p.pass_bytes(1), size_t(1) << 20);
    EXPECT_EQ(p.pass_bytes(3) % (3 * 256), 0u);
    EXPECT_LE(p.pass_bytes(3), size_t(1) << 20);
    EXPECT_EQ(p.pass(2), p.pass(2));
    const std::string path = p.read_path();
    EXPECT_TRUE(path == "avx512" || path == "avx2" || path == "sse2") << path;
    EXPECT_GT(p.measure_gbps(1, 3), 0.0);
    EXPECT_GT(p.measure_gbps(2, 1), 0.0);
    EXPECT_EQ(mem_bandwidth_probe(100).bytes(), 4096u);
    EXPECT_GT(mem_read_bandwidth_gbps(1, 1, 1 << 16), 0.0);
}

TEST(inferd_bench_run, json_has_every_field_and_consistent_statistics) {
    INFERD_REQUIRE_TESTDATA(dir);
    const std::string m = dir + "/models/tiny-llama-q8_0.gguf";
    const bench_run r = run_bench(small_args(m, {"-o", "json"}));
    ASSERT_EQ(r.rc, 0) << r.err;
    const nlohmann::json j = nlohmann::json::parse(r.out, nullptr, false);
    ASSERT_TRUE(j.is_array()) << r.out;
    ASSERT_EQ(j.size(), 2u);
    for (const nlohmann::json & t : j) {
        for (const std::string & f : bench_result_fields()) EXPECT_TRUE(t.contains(f)) << f;
        EXPECT_EQ(t["model_filename"], m);
        EXPECT_EQ(t["n_threads"], 1);
        EXPECT_EQ(t["n_depth"], 0);
        EXPECT_EQ(t["n_parallel"], 1);
        EXPECT_EQ(t["type_k"], "f16");
        EXPECT_NE(t["cpu_model"].get<std::string>().find("(family "), std::string::npos) << t["cpu_model"];
        ASSERT_EQ(t["kernels"].size(), 1u) << t["kernels"];
        EXPECT_EQ(t["kernels"][0].get<std::string>().rfind("q8_0: tg ", 0), 0u) << t["kernels"];
        EXPECT_GT(t["model_size"].get<uint64_t>(), 0u);
        EXPECT_GT(t["model_n_params"].get<uint64_t>(), 0u);
        ASSERT_EQ(t["samples_ts"].size(), 2u);
        ASSERT_EQ(t["samples_ns"].size(), 2u);
        const double avg = t["avg_ts"].get<double>();
        EXPECT_GT(avg, 0.0);
        const double s0 = t["samples_ts"][0].get<double>(), s1 = t["samples_ts"][1].get<double>();
        EXPECT_NEAR(avg, 0.5 * (s0 + s1), 1e-9 * avg);
        EXPECT_NEAR(t["median_ts"].get<double>(), 0.5 * (s0 + s1), 1e-9 * avg);
        EXPECT_NEAR(t["stddev_ts"].get<double>(), std::fabs(s0 - s1) / std::sqrt(2.0), 1e-9 * avg);
        const double tokens = t["n_prompt"].get<double>() + t["n_gen"].get<double>();
        EXPECT_NEAR(s0, tokens * 1e9 / t["samples_ns"][0].get<double>(), 1e-9 * s0);
    }
    EXPECT_EQ(j[0]["n_prompt"], 16);
    EXPECT_EQ(j[0]["n_gen"], 0);
    EXPECT_EQ(j[0]["gbps"], 0.0);
    EXPECT_EQ(j[1]["n_prompt"], 0);
    EXPECT_EQ(j[1]["n_gen"], 4);
    EXPECT_GT(j[1]["gbps"].get<double>(), 0.0);
    EXPECT_EQ(j[1]["bandwidth_gbps"], 30.0);
    EXPECT_NEAR(j[1]["bandwidth_pct"].get<double>(), 100.0 * j[1]["gbps"].get<double>() / 30.0, 1e-9);
}

TEST(inferd_bench_run, depth_and_parallel_leave_the_right_cells_in_use) {
    INFERD_REQUIRE_TESTDATA(dir);
    const std::unique_ptr<model> m = model::load(dir + "/models/stories260K-f32.gguf", model_params{});
    bench_run_options ro;
    ro.repetitions = 2;
    struct shape {
        int depth, parallel, n_prompt, n_gen;
        uint32_t used;
    };
    // The depth is filled into sequence 0 and shared (seq_cp), so it takes its cells once.
    const shape shapes[] = {{0, 1, 0, 4, 4},   {8, 1, 0, 4, 12},   {8, 3, 0, 4, 8 + 3 * 4},
                            {0, 3, 16, 0, 48}, {8, 3, 16, 0, 56}, {300, 2, 0, 3, 306}};
    for (const shape & s : shapes) {
        bench_test_config c;
        c.n_depth = s.depth;
        c.n_parallel = s.parallel;
        c.n_prompt = s.n_prompt;
        c.n_gen = s.n_gen;
        c.n_threads = 1;
        c.n_batch = 64;  // the depth of 300 takes several decode calls
        c.n_ubatch = 32;
        bench_result r;
        std::string err;
        ASSERT_EQ(bench_run_test(*m, c, ro, &r, &err), 0) << err;
        EXPECT_EQ(r.kv_used, s.used) << bench_test_name(c);
        EXPECT_EQ(r.n_ctx, bench_n_ctx(c));
        EXPECT_EQ(r.samples_ns.size(), 2u);
        EXPECT_GT(r.avg_ts, 0.0);
        EXPECT_EQ(r.backends, "CPU");
        if (s.n_gen > 0) {
            EXPECT_NEAR(r.gbps, r.bytes_per_token * r.avg_ts * 1e-9, 1e-9 * r.gbps);
        } else {
            EXPECT_EQ(r.gbps, 0.0);
        }
    }
}

TEST(inferd_bench_run, gbps_counts_weights_without_the_embedding_table_plus_the_kv_cells) {
    INFERD_REQUIRE_TESTDATA(dir);
    const std::unique_ptr<model> m = model::load(dir + "/models/tiny-llama-q8_0.gguf", model_params{});
    const model_weights & w = m->weights();
    const uint64_t expected =
        m->n_weight_bytes() - (w.output == w.tok_embd ? 0 : ggml_nbytes(w.tok_embd));
    EXPECT_EQ(bench_weight_bytes_per_step(*m), expected);
    const model_hparams & hp = m->hparams();
    EXPECT_EQ(bench_kv_bytes_per_cell(*m, GGML_TYPE_F32, GGML_TYPE_F32),
              uint64_t(hp.n_layer) * 4u * (hp.n_embd_k_gqa() + hp.n_embd_v_gqa()));
    bench_run_options ro;
    ro.repetitions = 1;
    ro.warmup = false;
    bench_test_config c;
    c.n_gen = 2;
    c.n_threads = 1;
    bench_result r0, r1;
    std::string err;
    ASSERT_EQ(bench_run_test(*m, c, ro, &r0, &err), 0) << err;
    c.n_depth = 100;
    ASSERT_EQ(bench_run_test(*m, c, ro, &r1, &err), 0) << err;
    // Two steps attending 1 and 2 cells, then 101 and 102: 100 more cells per token.
    const double kv = double(bench_kv_bytes_per_cell(*m, GGML_TYPE_F16, GGML_TYPE_F16));
    EXPECT_DOUBLE_EQ(r0.bytes_per_token, double(expected) + 1.5 * kv);
    EXPECT_DOUBLE_EQ(r1.bytes_per_token, double(expected) + 101.5 * kv);
    const bench_model_info info = bench_model_describe(*m);
    EXPECT_EQ(info.size, m->n_weight_bytes());
    EXPECT_EQ(info.type.rfind("llama ", 0), 0u) << info.type;
    EXPECT_NE(info.type.find("Q8_0"), std::string::npos) << info.type;
}

TEST(inferd_bench_run, md_table_shape) {
    INFERD_REQUIRE_TESTDATA(dir);
    const bench_run r = run_bench(small_args(dir + "/models/tiny-llama-q8_0.gguf", {"-d", "0,8", "--parallel", "1,2"}));
    ASSERT_EQ(r.rc, 0) << r.err;
    const std::vector<std::string> l = lines_of(r.out);
    // table, blank line, bandwidth and build, CPU, the model's kernels (header + one weight type)
    ASSERT_EQ(l.size(), 2u + 8u + 2u + 3u) << r.out;
    EXPECT_EQ(l[0], "| model | size | params | backend | threads | fa | test | t/s | GB/s | % bw |");
    EXPECT_EQ(l[1].rfind("| --- |", 0), 0u);
    const char * names[] = {"pp16", "tg4", "pp16 x2", "tg4 x2", "pp16 @ d8", "tg4 @ d8", "pp16 @ d8 x2", "tg4 @ d8 x2"};
    for (size_t i = 0; i < 8; ++i) {
        const std::string & row = l[2 + i];
        EXPECT_NE(row.find(std::string("| ") + names[i] + " |"), std::string::npos) << row;
        EXPECT_NE(row.find(" ± "), std::string::npos) << row;
        EXPECT_NE(row.find("| llama "), std::string::npos) << row;
        EXPECT_NE(row.find(" MiB |"), std::string::npos) << row;
        EXPECT_NE(row.find("| CPU | 1 | 0 |"), std::string::npos) << row;
        size_t bars = 0;
        for (char ch : row) bars += ch == '|';
        EXPECT_EQ(bars, 11u) << row;
    }
    EXPECT_TRUE(l[10].empty());
    EXPECT_NE(l[11].find("given with --bandwidth"), std::string::npos) << l[11];
    EXPECT_NE(l[11].find("1 thread 30.00 GB/s"), std::string::npos) << l[11];
    EXPECT_NE(l[11].find("cpu isa "), std::string::npos) << l[11];
    EXPECT_NE(l[11].find("build: "), std::string::npos) << l[11];
    EXPECT_EQ(l[12].rfind("cpu: ", 0), 0u) << l[12];
    EXPECT_NE(l[12].find("(family "), std::string::npos) << l[12];
    EXPECT_EQ(l[13], "kernels of " + dir + "/models/tiny-llama-q8_0.gguf:");
    // the tiny model's matrices are all Q8_0, repacked at load: one kernel for tg and pp
    EXPECT_EQ(l[14].rfind("  q8_0: tg ", 0), 0u) << l[14];
    EXPECT_NE(l[14].find(" repacked q8_0 x q8_0 "), std::string::npos) << l[14];
    EXPECT_NE(l[14].find(", pp "), std::string::npos) << l[14];
}

TEST(inferd_bench_run, csv_shape) {
    INFERD_REQUIRE_TESTDATA(dir);
    const std::string m = dir + "/models/tiny-gpt2-q8_0.gguf";
    const bench_run r = run_bench(small_args(m, {"-o", "csv", "-t", "2"}));  // threads 1 and 2
    ASSERT_EQ(r.rc, 0) << r.err;
    const std::vector<std::string> l = lines_of(r.out);
    ASSERT_EQ(l.size(), 1u + 4u) << r.out;
    std::string header;
    for (const std::string & f : bench_result_fields()) header += (header.empty() ? "" : ",") + f;
    EXPECT_EQ(l[0], header);
    for (size_t i = 1; i < l.size(); ++i) {
        EXPECT_EQ(csv_columns(l[i]), bench_result_fields().size()) << l[i];
        EXPECT_NE(l[i].find("\"" + m + "\""), std::string::npos) << l[i];
        // the two samples, ';'-separated inside one quoted field
        EXPECT_NE(l[i].find(";"), std::string::npos) << l[i];
    }
}

TEST(inferd_bench_run, probe_runs_when_no_bandwidth_is_given) {
    INFERD_REQUIRE_TESTDATA(dir);
    const bench_run r = run_bench({"-m", dir + "/models/stories260K-f32.gguf", "-p", "0", "-n", "2", "-r", "1", "-t",
                                   "1", "--probe-mib", "4", "-o", "json", "-v"});
    ASSERT_EQ(r.rc, 0) << r.err;
    const nlohmann::json j = nlohmann::json::parse(r.out, nullptr, false);
    ASSERT_TRUE(j.is_array() && j.size() == 1u) << r.out;
    EXPECT_GT(j[0]["bandwidth_gbps"].get<double>(), 0.0);
    EXPECT_GT(j[0]["bandwidth_pct"].get<double>(), 0.0);
    EXPECT_NE(r.err.find("read bandwidth, 1 threads"), std::string::npos) << r.err;  // -v progress
    EXPECT_NE(r.err.find("rep 1/1"), std::string::npos) << r.err;
}

TEST(inferd_bench_run, missing_model_exits_1_naming_the_file) {
    tools_scratch_dir tmp;
    const std::string missing = tmp.file("no-such-model.gguf");
    const bench_run r = run_bench({"-m", missing, "-p", "4", "-n", "0", "--bandwidth", "30"});
    EXPECT_EQ(r.rc, 1);
    EXPECT_NE(r.err.find(missing), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
}

TEST(inferd_bench_run, failing_decode_exits_1_naming_the_test) {
    INFERD_REQUIRE_TESTDATA(dir);
    // 3 sequences generate together but a decode call takes at most 2 tokens.
    const bench_run r = run_bench({"-m", dir + "/models/stories260K-f32.gguf", "-p", "4", "-n", "2", "-r", "1", "-t",
                                   "1", "-b", "2", "--parallel", "3", "--bandwidth", "30", "-o", "json"});
    EXPECT_EQ(r.rc, 1);
    EXPECT_NE(r.err.find("tg2 x3"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("decode failed"), std::string::npos) << r.err;
    // The pp test before it still printed.
    const nlohmann::json j = nlohmann::json::parse(r.out, nullptr, false);
    ASSERT_TRUE(j.is_array()) << r.out;
    EXPECT_EQ(j.size(), 1u);
}

TEST(inferd_bench_run, quantized_kv_cache_with_flash_attention) {
    INFERD_REQUIRE_TESTDATA(dir);
    const bench_run r = run_bench(small_args(dir + "/models/tiny-qwen2-q8_0.gguf",
                                             {"-fa", "1", "-ctk", "q8_0", "-ctv", "q8_0", "-d", "16", "-o", "json"}));
    ASSERT_EQ(r.rc, 0) << r.err;
    const nlohmann::json j = nlohmann::json::parse(r.out, nullptr, false);
    ASSERT_TRUE(j.is_array() && j.size() == 2u) << r.out;
    EXPECT_EQ(j[1]["type_v"], "q8_0");
    EXPECT_EQ(j[1]["flash_attn"], true);
    // A q8_0 V cache without flash attention is refused by the engine: error naming the test.
    const bench_run bad = run_bench(small_args(dir + "/models/tiny-qwen2-q8_0.gguf", {"-ctv", "q8_0"}));
    EXPECT_EQ(bad.rc, 1);
    EXPECT_NE(bad.err.find("test pp16"), std::string::npos) << bad.err;
}
