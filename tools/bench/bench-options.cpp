// inferd-bench's command line (see bench-options.h).
#include "bench/bench-options.h"

#include "engine/context.h"
#include "tool-args.h"

#include <algorithm>
#include <charconv>
#include <thread>

namespace {

constexpr int k_max_tokens = 1 << 20;

// "1,2,3" → ints in [min, max]; false on an empty item, a non-number or a value out of range.
bool parse_int_list(const std::string & s, int min, int max, std::vector<int> * out) {
    size_t start = 0;
    while (true) {
        const size_t comma = s.find(',', start);
        const std::string item = s.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        int v = 0;
        if (!tool_args_parse_int(item, min, max, &v)) return false;
        out->push_back(v);
        if (comma == std::string::npos) return true;
        start = comma + 1;
    }
}

bool parse_kv_type(const std::string & s, ggml_type * out) {
    if (s == "f16") *out = GGML_TYPE_F16;
    else if (s == "f32") *out = GGML_TYPE_F32;
    else if (s == "q8_0") *out = GGML_TYPE_Q8_0;
    else return false;
    return true;
}

bool parse_kv_type_list(const std::string & s, std::vector<ggml_type> * out) {
    size_t start = 0;
    while (true) {
        const size_t comma = s.find(',', start);
        ggml_type t = GGML_TYPE_F16;
        if (!parse_kv_type(s.substr(start, comma == std::string::npos ? std::string::npos : comma - start), &t)) {
            return false;
        }
        out->push_back(t);
        if (comma == std::string::npos) return true;
        start = comma + 1;
    }
}

bool parse_positive_double(const std::string & s, double * out) {
    double v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size() || s.empty() || !(v > 0) || v > 1e6) return false;
    *out = v;
    return true;
}

struct int_list_spec {
    const char * name;
    int min, max;
    std::vector<int> bench_options::*field;
};

const int_list_spec k_int_lists[] = {
    {"--n-prompt", 0, k_max_tokens, &bench_options::n_prompt},
    {"--n-gen", 0, k_max_tokens, &bench_options::n_gen},
    {"--threads", 1, 1024, &bench_options::n_threads},
    {"--depth", 0, k_max_tokens, &bench_options::n_depth},
    {"--parallel", 1, int(kv_cache_max_seq), &bench_options::n_parallel},
    {"--batch-size", 1, k_max_tokens, &bench_options::n_batch},
    {"--ubatch-size", 1, k_max_tokens, &bench_options::n_ubatch},
    {"--flash-attn", 0, 1, &bench_options::flash_attn},
};

// One option's value into *o; false with a message naming the option on a bad value.
bool apply_option(const std::string & name, const std::string & v, bench_options * o, std::string * err) {
    for (const int_list_spec & s : k_int_lists) {
        if (name != s.name) continue;
        if (parse_int_list(v, s.min, s.max, &(o->*s.field))) return true;
        *err = "bad value '" + v + "' for " + name + " (integers " + std::to_string(s.min) + ".." +
               std::to_string(s.max) + ", comma-separated)";
        return false;
    }
    bool ok = true;
    std::string want;
    if (name == "--model") {
        size_t start = 0;
        while (ok) {
            const size_t comma = v.find(',', start);
            const std::string f = v.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
            ok = !f.empty();
            if (ok) o->models.push_back(f);
            if (comma == std::string::npos) break;
            start = comma + 1;
        }
        want = "file names, comma-separated";
    } else if (name == "--repetitions") {
        ok = tool_args_parse_int(v, 1, 100000, &o->repetitions);
        want = "an integer 1..100000";
    } else if (name == "--n-gpu-layers") {
        ok = tool_args_parse_int(v, -1, 100000, &o->n_gpu_layers);
        want = "an integer, -1 for all layers";
    } else if (name == "--cache-type-k" || name == "--cache-type-v") {
        ok = parse_kv_type_list(v, name == "--cache-type-k" ? &o->type_k : &o->type_v);
        want = "f16, f32 or q8_0, comma-separated";
    } else if (name == "--output") {
        ok = v == "md" || v == "json" || v == "csv";
        o->output = v == "json" ? bench_output_format::json : v == "csv" ? bench_output_format::csv : bench_output_format::md;
        want = "md, json or csv";
    } else if (name == "--bandwidth") {
        ok = parse_positive_double(v, &o->bandwidth_gbps);
        want = "a positive number of GB/s";
    } else if (name == "--probe-mib") {
        int mib = 0;
        ok = tool_args_parse_int(v, 1, 65536, &mib);
        o->probe_bytes = size_t(mib) << 20;
        want = "an integer 1..65536";
    } else if (name == "--no-warmup") {
        o->warmup = false;
    } else if (name == "--verbose") {
        o->verbose = true;
    } else if (name == "--calibrate") {
        o->calibrate = true;
    }
    if (!ok) *err = "bad value '" + v + "' for " + name + " (" + want + ")";
    return ok;
}

template <class T>
void default_if_empty(std::vector<T> & v, T d) {
    if (v.empty()) v.push_back(d);
}

}  // namespace

bool bench_options_parse(const std::vector<std::string> & args, bench_options * out, std::string * err) {
    tool_args a;
    if (!tool_args_parse(args,
                         {{"-m", "--model"}, {"-p", "--n-prompt"}, {"-n", "--n-gen"}, {"-t", "--threads"},
                          {"-r", "--repetitions"}, {"-b", "--batch-size"}, {"-ub", "--ubatch-size"},
                          {"-d", "--depth"}, {nullptr, "--parallel"}, {"-ngl", "--n-gpu-layers"},
                          {"-fa", "--flash-attn"}, {"-ctk", "--cache-type-k"}, {"-ctv", "--cache-type-v"},
                          {"-o", "--output"}, {nullptr, "--bandwidth"}, {nullptr, "--probe-mib"},
                          {nullptr, "--no-warmup", true}, {"-v", "--verbose", true},
                          {nullptr, "--calibrate", true}},
                         &a, err)) {
        return false;
    }
    bench_options o;
    o.help = a.help;
    if (!a.positional.empty()) {
        *err = "unexpected argument '" + a.positional.front() + "'";
        return false;
    }
    for (const auto & [name, value] : a.options) {
        if (!apply_option(name, value, &o, err)) return false;
    }
    if (o.models.empty() && !o.help && !o.calibrate) {
        *err = "no model given (-m FILE)";
        return false;
    }
    default_if_empty(o.n_prompt, 512);
    default_if_empty(o.n_gen, 128);
    default_if_empty(o.n_threads, int(std::max(1u, std::thread::hardware_concurrency())));
    default_if_empty(o.n_depth, 0);
    default_if_empty(o.n_parallel, 1);
    default_if_empty(o.n_batch, 2048);
    default_if_empty(o.n_ubatch, 512);
    default_if_empty(o.flash_attn, context_params{}.flash_attn ? 1 : 0);
    default_if_empty(o.type_k, GGML_TYPE_F16);
    default_if_empty(o.type_v, GGML_TYPE_F16);
    *out = std::move(o);
    return true;
}

std::vector<bench_test_config> bench_tests_expand(const bench_options & o) {
    std::vector<bench_test_config> out;
    for (const std::string & m : o.models)
        for (ggml_type tk : o.type_k)
            for (ggml_type tv : o.type_v)
                for (int fa : o.flash_attn)
                    for (int nth : o.n_threads)
                        for (int d : o.n_depth)
                            for (int np : o.n_parallel)
                                for (int nb : o.n_batch)
                                    for (int nub : o.n_ubatch) {
                                        bench_test_config c;
                                        c.model = m;
                                        c.type_k = tk;
                                        c.type_v = tv;
                                        c.flash_attn = fa != 0;
                                        c.n_threads = nth;
                                        c.n_depth = d;
                                        c.n_parallel = np;
                                        c.n_batch = nb;
                                        c.n_ubatch = nub;
                                        c.n_gpu_layers = o.n_gpu_layers;
                                        for (int p : o.n_prompt) {
                                            if (p == 0) continue;
                                            c.n_prompt = p;
                                            c.n_gen = 0;
                                            out.push_back(c);
                                        }
                                        for (int n : o.n_gen) {
                                            if (n == 0) continue;
                                            c.n_prompt = 0;
                                            c.n_gen = n;
                                            out.push_back(c);
                                        }
                                    }
    return out;
}

std::string bench_test_name(const bench_test_config & t) {
    std::string s = t.n_prompt > 0 ? "pp" + std::to_string(t.n_prompt) : "tg" + std::to_string(t.n_gen);
    if (t.n_depth > 0) s += " @ d" + std::to_string(t.n_depth);
    if (t.n_parallel > 1) s += " x" + std::to_string(t.n_parallel);
    return s;
}

const char * bench_kv_type_name(ggml_type t) {
    switch (t) {
        case GGML_TYPE_F32: return "f32";
        case GGML_TYPE_Q8_0: return "q8_0";
        default: return "f16";
    }
}

std::string bench_usage() {
    return "usage: inferd-bench -m MODEL[,MODEL...] [options]\n"
           "       inferd-bench --calibrate [-t N]\n"
           "\n"
           "Measures prompt processing (pp: N tokens decoded in batches, t/s) and token generation\n"
           "(tg: one token per step per sequence, t/s) like llama-bench. Options with N[,...] take\n"
           "comma-separated lists (or repeat the option); the tests are their cross product.\n"
           "\n"
           "  -m,   --model FILE[,...]      GGUF model(s); repeatable\n"
           "  -p,   --n-prompt N[,...]      prompt tokens of a pp test (default 512; 0: none)\n"
           "  -n,   --n-gen N[,...]         generated tokens of a tg test (default 128; 0: none)\n"
           "  -t,   --threads N[,...]       CPU threads (default: hardware threads)\n"
           "  -r,   --repetitions N         timed repetitions per test (default 5)\n"
           "  -b,   --batch-size N[,...]    most tokens per decode call (default 2048)\n"
           "  -ub,  --ubatch-size N[,...]   most tokens per graph (default 512)\n"
           "  -d,   --depth D[,...]         tokens already in the KV cache before each repetition\n"
           "                                (random tokens, decoded once per test, untimed; default 0)\n"
           "        --parallel N[,...]      sequences decoded together (1..64; default 1); each gets\n"
           "                                the depth tokens (shared cells) and its own p / n tokens\n"
           "  -ngl, --n-gpu-layers N        layers on a GPU device (default 0; -1 all)\n"
           "  -fa,  --flash-attn 0|1[,...]  fused attention (default: the engine's, 0)\n"
           "  -ctk, --cache-type-k T[,...]  K cache type: f16 (default), f32, q8_0\n"
           "  -ctv, --cache-type-v T[,...]  V cache type: f16 (default), f32, q8_0 (needs -fa 1)\n"
           "  -o,   --output md|json|csv    output format (default md)\n"
           "        --bandwidth GBPS        memory read bandwidth to compare with (skips the probe)\n"
           "        --probe-mib N           size of the bandwidth probe's buffer (default 1024)\n"
           "        --no-warmup             no untimed warmup run before each test\n"
           "  -v,   --verbose               progress on stderr\n"
           "        --calibrate             time MUL_MAT of every weight type on each of the CPU's\n"
           "                                kernel paths (decode and prompt shapes, -t's first count\n"
           "                                of threads), print the table and write the choice to the\n"
           "                                cache that CPU backends read (INFERD_CPU_CALIBRATION, or\n"
           "                                ~/.cache/inferd/cpu-kernels.txt); with -m, then benchmark\n"
           "  -h,   --help                  this text\n"
           "\n"
           "t/s: tokens of all sequences per second (mean ± sample stddev over the repetitions).\n"
           "GB/s (tg only): bytes one generation step reads from memory × steps per second, where a\n"
           "step reads every weight of the model except the token-embedding table (and the learned\n"
           "position table), of which only a few rows are read; the table counts when the output layer\n"
           "is tied to it, and of a mixture of experts only the experts in use (k of E per sequence);\n"
           "plus the K and V rows (at the cache types) of every KV cell in use, all layers (at most\n"
           "each sequence's window in sliding-window layers). % bw: GB/s over the machine's read\n"
           "bandwidth with the same threads, measured once per thread count (median of 5 passes over\n"
           "a 1 GiB buffer) unless --bandwidth is given; with -ngl other than 0, the first GPU's\n"
           "memory read bandwidth, measured the same way on the device.\n"
           "\n"
           "Exit codes: 0 ok; 1 a model does not load or a test fails; 2 usage error.\n";
}
