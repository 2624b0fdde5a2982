// inferd-grammar-bench: token-mask speed of the grammar engine on a real vocabulary (deepseek-llm's
// 102,400 tokens from ../shared/testdata/vocab), one thread, run from the repository root.
//
//   build/tests/inferd-grammar-bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
//
// Benchmarks:
//   mask_cold/<case>   the first mask of a state no walk has seen: each iteration builds the
//                      program again (not timed), accepts the case's prefix (not timed) and times
//                      one fill_mask. This is what the slowest masks of `inferd-cli grammar bench`
//                      are made of. nodes_per_us: trie nodes of the vocabulary per microsecond.
//   mask_warm/<case>   fill_mask again in the same state (cached walks: a copy of the bits).
// Cases: string (inside a free JSON string: nearly every token allowed, the whole trie walked),
// counted (inside a string with maxLength 200, 20 characters in), key (the key position of an
// object of 24 optional properties).
#include "cli/cli-common.h"
#include "cli/cli-grammar.h"
#include "grammar/json-schema.h"
#include "grammar/token-mask.h"

#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdio>
#include <string>

namespace {

const cli_grammar_vocab * vocab() {
    static cli_grammar_vocab v;
    static bool tried = false;
    if (!tried) {
        tried = true;
        const cli_env env{stdin, stdout, stderr};
        if (!cli_grammar_load_vocab("../shared/testdata/vocab/ggml-vocab-deepseek-llm.gguf", env, &v)) v.gv.reset();
    }
    return v.gv ? &v : nullptr;
}

struct bench_case {
    const char * schema;
    const char * prefix;  // output accepted before the timed mask
};

const bench_case k_cases[] = {
    {R"({"type":"object","properties":{"text":{"type":"string"}},"required":["text"]})", R"({"text":"abc)"},
    {R"({"type":"object","properties":{"text":{"type":"string","maxLength":200}},"required":["text"]})",
     R"({"text":"abcdefghijklmnopqrst)"},
    {R"({"type":"object","properties":{"p00":{},"p01":{},"p02":{},"p03":{},"p04":{},"p05":{},"p06":{},"p07":{},
        "p08":{},"p09":{},"p10":{},"p11":{},"p12":{},"p13":{},"p14":{},"p15":{},"p16":{},"p17":{},"p18":{},
        "p19":{},"p20":{},"p21":{},"p22":{},"p23":{}}})",
     R"({"p03":1,)"},
};
const char * const k_case_names[] = {"string", "counted", "key"};

std::shared_ptr<const grammar_program> program_for(const bench_case & c, std::string * err) {
    json_schema_result r = json_schema_compile(c.schema);
    if (!r.ok()) return *err = r.error, nullptr;
    grammar_program_result p = grammar_program_build(r.value);
    if (!p.ok()) return *err = p.error, nullptr;
    return p.value;
}

size_t allowed(const grammar_token_mask & m) {
    size_t n = 0;
    for (uint64_t w : m) n += size_t(__builtin_popcountll(w));
    return n;
}

void mask_cold(benchmark::State & state) {
    const cli_grammar_vocab * v = vocab();
    if (!v) return state.SkipWithError("../shared/testdata/vocab/ggml-vocab-deepseek-llm.gguf not loaded");
    const bench_case & c = k_cases[state.range(0)];
    grammar_token_mask mask;
    std::string err;
    for (auto _ : state) {
        state.PauseTiming();
        auto prog = program_for(c, &err);
        if (!prog) return state.SkipWithError(err.c_str());
        grammar_matcher m(prog, v->gv);
        if (!m.accept_bytes(c.prefix)) return state.SkipWithError("prefix not accepted");
        state.ResumeTiming();
        m.fill_mask(mask);
        benchmark::DoNotOptimize(mask.data());
    }
    state.SetLabel(k_case_names[state.range(0)]);
    state.counters["allowed"] = double(allowed(mask));
    state.counters["nodes_per_us"] = benchmark::Counter(double(v->gv->get_trie().byte.size()) * double(state.iterations()) / 1e6,
                                                        benchmark::Counter::kIsRate);
}

void mask_warm(benchmark::State & state) {
    const cli_grammar_vocab * v = vocab();
    if (!v) return state.SkipWithError("../shared/testdata/vocab/ggml-vocab-deepseek-llm.gguf not loaded");
    const bench_case & c = k_cases[state.range(0)];
    std::string err;
    auto prog = program_for(c, &err);
    if (!prog) return state.SkipWithError(err.c_str());
    grammar_matcher m(prog, v->gv);
    if (!m.accept_bytes(c.prefix)) return state.SkipWithError("prefix not accepted");
    grammar_token_mask mask;
    m.fill_mask(mask);
    for (auto _ : state) {
        m.fill_mask(mask);
        benchmark::DoNotOptimize(mask.data());
    }
    state.SetLabel(k_case_names[state.range(0)]);
    state.counters["allowed"] = double(allowed(mask));
}

}  // namespace

BENCHMARK(mask_cold)->DenseRange(0, 2)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(mask_warm)->DenseRange(0, 2)->Unit(benchmark::kMicrosecond)->UseRealTime();

BENCHMARK_MAIN();
