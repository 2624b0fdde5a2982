// inferd-cli grammar bench: JSON Schemas with valid and invalid instances (the format of
// ../shared/testdata/jsonschema: each file {"schema", "tests": [{"valid", "data"}]}) checked
// token by token with a model's vocabulary. A schema passes when it compiles and every valid
// instance is accepted and every invalid one rejected, in both serializations (compact and
// spaced, as Python's json.dumps writes them). Prints the counts, the time of each mask (fill_mask
// alone, one thread) and of each compile (json_schema_compile + grammar_program_build).
#include "cli-grammar.h"
#include "cli-grammar-json.h"

#include "grammar/json-ordered-read.h"
#include "grammar/json-schema.h"

#include <algorithm>
#include <cmath>
#include <filesystem>

namespace {

using clock_type = std::chrono::steady_clock;
using ojson = nlohmann::ordered_json;

struct bench_options {
    std::string dir;
    std::string vocab;
    bool json = false;
    bool verbose = false;
    size_t limit = SIZE_MAX;
    int budget_s = 10;
};

struct bench_totals {
    size_t files = 0;  // in the folder, before --limit
    int32_t n_vocab = 0;
    size_t schemas = 0, compile_errors = 0, passing = 0;
    std::vector<double> mask_us, compile_us;
    std::vector<std::string> timed_out;
};

enum class bench_verdict { pass, compile_error, fail, timed_out };

struct bench_schema_run {
    bench_verdict verdict = bench_verdict::pass;
    std::string why;  // for a failure: the instance and where the walk went wrong
};

double elapsed_us(clock_type::time_point t0) {
    return std::chrono::duration<double, std::micro>(clock_type::now() - t0).count();
}

// Nearest-rank percentile of sorted values (0 for none).
double percentile(const std::vector<double> & sorted, double p) {
    if (sorted.empty()) return 0;
    const size_t rank = size_t(std::ceil(p * double(sorted.size())));
    return sorted[std::min(sorted.size() - 1, rank == 0 ? 0 : rank - 1)];
}

// Why one text came out other than expected, for --verbose.
std::string describe_miss(bool valid, const std::string & text, const std::vector<int32_t> & ids,
                          const cli_grammar_walk & w, const grammar & g, const grammar_vocab & gv) {
    std::string s = valid ? "valid instance rejected" : "invalid instance accepted";
    if (valid && w.token_index < ids.size()) {
        const int32_t t = ids[w.token_index];
        s += " at token " + std::to_string(w.token_index) + " (id " + std::to_string(t) + ", \"" +
             cli_grammar_escape(gv.token_bytes(t)) + "\") byte " + std::to_string(w.byte_offset);
    } else if (valid) {
        s += " at the end";
    }
    if (!w.detail.empty()) s += " (" + w.detail + ")";
    s += std::string("; whole text ") + (grammar_recognize(g, text) ? "accepted" : "rejected") + " by the recognizer: ";
    return s + cli_grammar_escape(text.size() > 300 ? text.substr(0, 300) + "..." : text);
}

// The instances of one schema file, each text through a fresh matcher; why a schema fails is
// worked out (with the recognizer's verdict on the whole text) only when verbose.
bench_schema_run bench_instances(const ojson & tests, const grammar & g, const std::shared_ptr<const grammar_program> & program,
                                 const cli_grammar_vocab & v, clock_type::time_point deadline, bool verbose,
                                 bench_totals * totals) {
    bench_schema_run run;
    if (!tests.is_array()) return run;
    for (const ojson & t : tests) {
        const bool valid = t.at("valid").get<bool>();
        for (const std::string & text : {json_dumps_compact(t.at("data")), json_dumps_spaced(t.at("data"))}) {
            // Tokenizing is not interruptible: the deadline is checked before it and between tokens.
            if (clock_type::now() > deadline) return {bench_verdict::timed_out, "over the time budget"};
            const std::vector<int32_t> ids = cli_grammar_tokenize(v, text);
            grammar_matcher m(program, v.gv);
            const cli_grammar_walk w = cli_grammar_walk_tokens(m, ids, &totals->mask_us, deadline);
            if (w.outcome == cli_grammar_outcome::timed_out) return {bench_verdict::timed_out, "over the time budget"};
            const bool accepted = w.outcome == cli_grammar_outcome::accepted;
            if (accepted != valid || w.outcome == cli_grammar_outcome::inconsistent) {
                return {bench_verdict::fail, verbose ? describe_miss(valid, text, ids, w, g, *v.gv) : ""};
            }
        }
    }
    return run;
}

bench_schema_run bench_schema(const std::filesystem::path & f, const cli_grammar_vocab & v, const bench_options & o,
                              bench_totals * totals) {
    const clock_type::time_point deadline = clock_type::now() + std::chrono::seconds(o.budget_s);
    std::string text;
    if (!cli_read_file(f.string(), &text)) return {bench_verdict::compile_error, "cannot read the file"};
    try {
        ojson doc;
        std::string error;  // read in linear time and within a nesting bound (a file may be hostile too)
        if (!json_read_ordered(text, json_schema_options{}.max_document_depth + 8, &doc, &error)) {
            return {bench_verdict::compile_error, "malformed file: " + error};
        }
        const clock_type::time_point t0 = clock_type::now();
        json_schema_options budgets;  // the compile within the schema's time budget
        budgets.max_time_ms = uint32_t(o.budget_s) * 1000;
        const json_schema_result r = json_schema_compile(doc.at("schema").dump(), budgets);
        if (!r.ok()) return {bench_verdict::compile_error, r.error};
        const grammar_program_result p = grammar_program_build(r.value);
        if (!p.ok()) return {bench_verdict::compile_error, p.error};
        totals->compile_us.push_back(elapsed_us(t0));
        return bench_instances(doc.contains("tests") ? doc["tests"] : ojson::array(), r.value, p.value, v, deadline, o.verbose,
                               totals);
    } catch (const std::exception & e) {
        return {bench_verdict::compile_error, std::string("malformed file: ") + e.what()};
    }
}

void print_summary(const bench_options & o, bench_totals & t, double wall_s, const cli_env & env) {
    std::sort(t.mask_us.begin(), t.mask_us.end());
    std::sort(t.compile_us.begin(), t.compile_us.end());
    double sum = 0;
    for (const double x : t.mask_us) sum += x;
    const double mean = t.mask_us.empty() ? 0 : sum / double(t.mask_us.size());
    if (o.json) {
        ojson j = {{"schemas", t.schemas},
                   {"compile_errors", t.compile_errors},
                   {"passing", t.passing},
                   {"mask_us", {{"mean", mean}, {"p50", percentile(t.mask_us, 0.5)}, {"p99", percentile(t.mask_us, 0.99)},
                                {"p999", percentile(t.mask_us, 0.999)}}},
                   {"compile_us", {{"p50", percentile(t.compile_us, 0.5)}, {"p99", percentile(t.compile_us, 0.99)}}},
                   {"timed_out", t.timed_out},
                   {"masks", t.mask_us.size()},
                   {"wall_s", wall_s}};
        std::fprintf(env.out, "%s\n", j.dump().c_str());
        return;
    }
    std::fprintf(env.out, "folder:         %s (%zu schema files%s)\n", o.dir.c_str(), t.files,
                 t.schemas < t.files ? ", --limit: the first ones in name order" : "");
    std::fprintf(env.out, "vocabulary:     %s (%d tokens)\n", o.vocab.c_str(), t.n_vocab);
    std::fprintf(env.out, "schemas:        %zu\n", t.schemas);
    std::fprintf(env.out, "compile errors: %zu\n", t.compile_errors);
    std::fprintf(env.out, "passing:        %zu (%.1f%%)\n", t.passing, t.schemas ? 100.0 * double(t.passing) / double(t.schemas) : 0.0);
    std::fprintf(env.out, "timed out:      %zu (over %d s each)\n", t.timed_out.size(), o.budget_s);
    for (const std::string & n : t.timed_out) std::fprintf(env.out, "  %s\n", n.c_str());
    std::fprintf(env.out, "mask µs:        mean %.1f  p50 %.1f  p99 %.1f  p99.9 %.1f  (%zu masks, one thread)\n", mean,
                 percentile(t.mask_us, 0.5), percentile(t.mask_us, 0.99), percentile(t.mask_us, 0.999), t.mask_us.size());
    std::fprintf(env.out, "compile µs:     p50 %.0f  p99 %.0f  (%zu grammars)\n", percentile(t.compile_us, 0.5),
                 percentile(t.compile_us, 0.99), t.compile_us.size());
    std::fprintf(env.out, "wall:           %.1f s\n", wall_s);
}

// False after a usage error.
bool read_options(const std::vector<std::string> & args, const cli_env & env, bench_options * o, int * rc) {
    tool_args a;
    std::string e;
    if (!tool_args_parse(args, {{nullptr, "--vocab"}, {nullptr, "--json", true}, {nullptr, "--verbose", true},
                                {nullptr, "--limit"}, {nullptr, "--budget-s"}},
                         &a, &e)) {
        return *rc = cli_usage_error(env, e), false;
    }
    if (a.help) return cli_print_usage(env.out), *rc = 0, false;
    if (a.positional.size() != 1) return *rc = cli_usage_error(env, "grammar bench needs one folder of schema files"), false;
    o->dir = a.positional[0];
    const std::string * vocab = a.option("--vocab");
    if (!vocab) return *rc = cli_usage_error(env, "grammar bench needs --vocab FILE.gguf"), false;
    o->vocab = *vocab;
    o->json = tool_args_has(a, "--json");
    o->verbose = tool_args_has(a, "--verbose");
    int n = 0;
    if (const std::string * v = a.option("--limit")) {
        if (!tool_args_parse_int(*v, 1, INT32_MAX, &n)) return *rc = cli_usage_error(env, "--limit wants a positive integer, got '" + *v + "'"), false;
        o->limit = size_t(n);
    }
    if (const std::string * v = a.option("--budget-s")) {
        if (!tool_args_parse_int(*v, 1, 86400, &o->budget_s)) return *rc = cli_usage_error(env, "--budget-s wants seconds in [1, 86400], got '" + *v + "'"), false;
    }
    return true;
}

}  // namespace

int cli_grammar_bench_main(const std::vector<std::string> & args, const cli_env & env) {
    bench_options o;
    int rc = 0;
    if (!read_options(args, env, &o, &rc)) return rc;
    std::vector<std::filesystem::path> files;
    std::error_code ec;
    for (const auto & entry : std::filesystem::directory_iterator(o.dir, ec)) {
        if (entry.path().extension() == ".json") files.push_back(entry.path());
    }
    if (ec) return std::fprintf(env.err, "inferd-cli: cannot read %s: %s\n", o.dir.c_str(), ec.message().c_str()), 2;
    std::sort(files.begin(), files.end());
    cli_grammar_vocab v;
    if (!cli_grammar_load_vocab(o.vocab, env, &v)) return 2;
    bench_totals t;
    t.files = files.size();
    t.n_vocab = v.gv->n_vocab();
    std::FILE * log = o.json ? env.err : env.out;
    const clock_type::time_point t0 = clock_type::now();
    for (size_t i = 0; i < files.size() && i < o.limit; ++i) {
        const clock_type::time_point s0 = clock_type::now();
        const size_t masks0 = t.mask_us.size();
        const bench_schema_run r = bench_schema(files[i], v, o, &t);
        const double secs = std::chrono::duration<double>(clock_type::now() - s0).count();
        const std::string name = files[i].filename().string();
        if (o.verbose && secs >= 1.0) std::fprintf(log, "%s: took %.1f s\n", name.c_str(), secs);
        double mask_ms = 0;
        size_t slow = 0;
        for (size_t k = masks0; k < t.mask_us.size(); ++k) mask_ms += t.mask_us[k] / 1000.0, slow += t.mask_us[k] > 500 ? 1 : 0;
        if (o.verbose && mask_ms >= 100.0) {
            std::fprintf(log, "%s: %zu masks, %.0f ms in all, %zu over 500 us\n", name.c_str(), t.mask_us.size() - masks0, mask_ms, slow);
        }
        ++t.schemas;
        t.compile_errors += r.verdict == bench_verdict::compile_error ? 1 : 0;
        t.passing += r.verdict == bench_verdict::pass ? 1 : 0;
        if (r.verdict == bench_verdict::timed_out) t.timed_out.push_back(name);
        if (o.verbose && r.verdict != bench_verdict::pass) std::fprintf(log, "%s: %s\n", name.c_str(), r.why.c_str());
    }
    print_summary(o, t, std::chrono::duration<double>(clock_type::now() - t0).count(), env);
    return 0;
}
