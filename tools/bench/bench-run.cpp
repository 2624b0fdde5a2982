// Runs one inferd-bench test (see bench-run.h).
#include "bench/bench-run.h"

#include "engine/context.h"
#include "ggml/backend.h"
#include "ggml/cpu.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <cctype>
#include <map>
#include <random>
#include <set>
#include <stdexcept>

namespace {

using bench_clock = std::chrono::steady_clock;

std::vector<const ggml_tensor *> all_weights(const model & m) {
    const model_weights & w = m.weights();
    std::set<const ggml_tensor *> seen;
    std::vector<const ggml_tensor *> out;
    auto add = [&](const ggml_tensor * t) {
        if (t && seen.insert(t).second) out.push_back(t);
    };
    // a tied output matrix is the embeddings (a device copy of them is not another weight)
    ggml_tensor * output = m.output_tied() ? w.tok_embd : w.output;
    for (const ggml_tensor * t : {w.tok_embd, w.pos_embd, w.output_norm, w.output_norm_b, output, w.rope_freqs,
                                  w.rope_long, w.rope_short}) {
        add(t);
    }
    for (const model_layer & l : w.layers) {
        for (const ggml_tensor * t : {l.attn_norm, l.attn_norm_b, l.wq, l.wk, l.wv, l.bq, l.bk, l.bv, l.wqkv, l.bqkv,
                                      l.wo, l.bo, l.ffn_norm, l.ffn_norm_b, l.ffn_gate, l.ffn_up, l.ffn_up_b,
                                      l.ffn_down, l.ffn_down_b, l.attn_q_norm, l.attn_k_norm, l.attn_post_norm,
                                      l.ffn_post_norm, l.ffn_gate_inp, l.ffn_gate_exps, l.ffn_up_exps,
                                      l.ffn_down_exps}) {
            add(t);
        }
    }
    return out;
}

std::string upper(std::string s) {
    for (char & c : s) c = char(std::toupper(static_cast<unsigned char>(c)));
    return s;
}

// "1.1B", "260K", "15M".
std::string params_label(uint64_t n) {
    char buf[32];
    if (n >= 1000000000ull) std::snprintf(buf, sizeof buf, "%.1fB", double(n) / 1e9);
    else if (n >= 1000000ull) std::snprintf(buf, sizeof buf, "%.0fM", double(n) / 1e6);
    else std::snprintf(buf, sizeof buf, "%.0fK", double(n) / 1e3);
    return buf;
}

std::string utc_now_iso8601() {
    const std::time_t t = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

// Drives one test's context: depth fill, prompt and generation steps with random tokens.
class bench_driver {
public:
    bench_driver(context & ctx, const bench_test_config & c, uint32_t seed)
        : ctx_(ctx), c_(c), rng_(seed), dist_(0, ctx.n_vocab() - 1) {}

    // The first time: clears the cache, fills the depth into sequence 0 and shares it with the
    // others. Later: removes what the last run added after the depth, so the next run finds
    // the same cells (freed cells are reused first) without decoding the depth again.
    // A model with sliding-window layers drops the window cells behind the depth while it
    // generates: then the depth is decoded again.
    bool prepare(std::string * err) {
        if (filled_) {
            bool resumable = true;
            for (int s = 0; s < c_.n_parallel; ++s) {
                if (!ctx_.seq_rm(s, c_.n_depth, -1)) {
                    *err = "seq_rm of sequence " + std::to_string(s) + " failed";
                    return false;
                }
                resumable = resumable && ctx_.seq_resumable(s, c_.n_depth);
            }
            if (resumable) return true;
        }
        ctx_.clear();
        std::vector<int32_t> seq0(size_t(c_.n_depth), 0);
        if (!decode_chunked(seq0, 0, c_.n_depth, false, "filling the depth", err)) return false;
        for (int s = 1; s < c_.n_parallel; ++s) {
            if (c_.n_depth > 0 && !ctx_.seq_cp(0, s, -1, -1)) {
                *err = "seq_cp to sequence " + std::to_string(s) + " failed";
                return false;
            }
        }
        filled_ = true;
        return true;
    }

    // n_parallel * n_prompt tokens at positions depth.., logits for the last of each sequence.
    bool prompt(std::string * err) {
        std::vector<int32_t> seqs;
        for (int s = 0; s < c_.n_parallel; ++s) seqs.insert(seqs.end(), size_t(c_.n_prompt), s);
        return decode_chunked(seqs, c_.n_depth, c_.n_prompt, true, "prompt", err);
    }

    // Step i of generation: one token per sequence at position depth + i, all with logits.
    bool gen_step(int i, std::string * err) {
        batch_.clear();
        for (int s = 0; s < c_.n_parallel; ++s) batch_.add(dist_(rng_), c_.n_depth + i, s, true);
        return decode(std::string("generation step ") + std::to_string(i), err);
    }

private:
    // Tokens of sequences seqs[k] (runs of per_seq tokens each), positions pos0 + index in the
    // run, decoded in n_batch chunks; the last token of each run asks for logits when last_logits.
    bool decode_chunked(const std::vector<int32_t> & seqs, int pos0, int per_seq, bool last_logits, const char * what,
                        std::string * err) {
        batch_.clear();
        for (size_t k = 0; k < seqs.size(); ++k) {
            const int idx = int(k % size_t(per_seq));
            const bool last = last_logits && idx == per_seq - 1;
            batch_.add(dist_(rng_), pos0 + idx, seqs[k], last);
            if (batch_.size() == size_t(c_.n_batch) || k + 1 == seqs.size()) {
                if (!decode(what, err)) return false;
                batch_.clear();
            }
        }
        return true;
    }

    bool decode(const std::string & what, std::string * err) {
        const int st = ctx_.decode(batch_);
        if (st == decode_ok) return true;
        *err = what + ": decode failed (status " + std::to_string(st) +
               (st == decode_no_kv_space ? ", no KV space" : "") +
               (ctx_.last_error().empty() ? "" : ": " + ctx_.last_error()) + ")";
        return false;
    }

    context & ctx_;
    const bench_test_config & c_;
    std::mt19937 rng_;
    std::uniform_int_distribution<int32_t> dist_;
    llm_batch batch_;
    bool filled_ = false;
};

// One timed repetition (after prepare); nanoseconds in *ns.
bool run_timed(bench_driver & d, const bench_test_config & c, int n_gen, uint64_t * ns, std::string * err) {
    const auto t0 = bench_clock::now();
    if (c.n_prompt > 0) {
        if (!d.prompt(err)) return false;
    } else {
        for (int i = 0; i < n_gen; ++i) {
            if (!d.gen_step(i, err)) return false;
        }
    }
    *ns = uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(bench_clock::now() - t0).count());
    *ns = std::max<uint64_t>(*ns, 1);
    return true;
}

context_params context_params_for(const model & m, const bench_test_config & c) {
    context_params cp;
    cp.n_ctx = bench_n_ctx(c);
    const model_hparams & hp = m.hparams();
    const uint32_t needed = uint32_t(c.n_depth) + uint32_t(c.n_parallel) * uint32_t(c.n_prompt + c.n_gen);
    // Learned positions cannot go past the training context: do not pad beyond it.
    if (!hp.use_rope && cp.n_ctx > hp.n_ctx_train && needed <= hp.n_ctx_train) cp.n_ctx = hp.n_ctx_train;
    cp.n_batch = uint32_t(c.n_batch);
    cp.n_ubatch = uint32_t(c.n_ubatch);
    cp.n_seq_max = uint32_t(c.n_parallel);
    cp.n_threads = c.n_threads;
    cp.flash_attn = c.flash_attn;
    cp.type_k = c.type_k;
    cp.type_v = c.type_v;
    return cp;
}

void fill_statistics(const model & m, const bench_test_config & c, bench_result * r) {
    const double tokens = double(c.n_parallel) * double(c.n_prompt > 0 ? c.n_prompt : c.n_gen);
    std::vector<double> ns;
    for (uint64_t v : r->samples_ns) {
        ns.push_back(double(v));
        r->samples_ts.push_back(tokens * 1e9 / double(v));
    }
    r->avg_ns = bench_mean(ns);
    r->stddev_ns = bench_stddev(ns);
    r->avg_ts = bench_mean(r->samples_ts);
    r->stddev_ts = bench_stddev(r->samples_ts);
    r->median_ts = bench_median(r->samples_ts);
    if (c.n_gen > 0) {
        // Step i (1-based) attends depth + parallel * i cells in the layers that see every cell;
        // each sequence at most its window in the sliding-window layers.
        const model_hparams & hp = m.hparams();
        uint32_t n_full = 0;
        for (uint32_t il = 0; il < hp.n_layer; ++il) n_full += hp.is_swa(il) ? 0 : 1;
        const double per_layer = double(bench_kv_bytes_per_cell(m, c.type_k, c.type_v)) / double(hp.n_layer);
        double total = double(c.n_gen) * double(bench_weight_bytes_per_step(m, c.n_parallel));
        for (int64_t i = 1; i <= c.n_gen; ++i) {
            const double full = double(c.n_depth) + double(c.n_parallel) * double(i);
            const double swa = double(c.n_parallel) * double(std::min<int64_t>(hp.n_swa, c.n_depth + i));
            total += per_layer * (n_full * full + (hp.n_layer - n_full) * swa);
        }
        r->bytes_per_token = total / tokens;
        r->gbps = r->bytes_per_token * r->avg_ts * 1e-9;
    }
}

}  // namespace

bench_model_info bench_model_describe(const model & m) {
    bench_model_info info;
    info.filename = m.path();
    info.size = m.n_weight_bytes();
    info.n_params = m.n_params();
    std::map<ggml_type, uint64_t> bytes_by_type;
    for (const ggml_tensor * t : all_weights(m)) bytes_by_type[t->type] += ggml_nbytes(t);
    ggml_type main_type = GGML_TYPE_F32;
    uint64_t most = 0;
    for (const auto & [t, b] : bytes_by_type) {
        if (b > most) {
            most = b;
            main_type = t;
        }
    }
    const std::string file_type = m.file_type_name();
    info.type = std::string(llm_arch_name(m.hparams().arch)) + " " + params_label(m.n_params()) + " " +
                (file_type.empty() ? upper(ggml_type_name(main_type)) : file_type);
    return info;
}

std::vector<std::string> bench_model_kernels(const model & m, const ggml_backend_i * cpu, int64_t n_prompt) {
    // one weight of each (type, repacked) pair stands for all of that pair
    std::map<std::pair<ggml_type, bool>, std::pair<uint64_t, const ggml_tensor *>> kinds;
    const ggml_tensor * embd = m.output_tied() ? nullptr : m.weights().tok_embd;
    for (const ggml_tensor * t : all_weights(m)) {
        const bool repacked = ggml_backend_cpu_tensor_is_repacked(t);
        if (t == embd || t->ne[1] < 2 || !t->buffer || !(repacked || t->buffer->is_host())) continue;
        auto & k = kinds[{t->type, repacked}];
        k.first += ggml_nbytes(t);
        if (!k.second) k.second = t;
    }
    std::vector<std::pair<uint64_t, std::string>> rows;
    for (const auto & [key, v] : kinds) {
        const ggml_type t = key.first;
        std::string line = std::string(ggml_type_name(t)) + ": tg " +
                           ggml_backend_cpu_mul_mat_path(ggml_backend_cpu_mul_mat_isa(cpu, t, 1), v.second, 1);
        if (n_prompt > 1) {
            line += ", pp " + ggml_backend_cpu_mul_mat_path(ggml_backend_cpu_mul_mat_isa(cpu, t, n_prompt), v.second, n_prompt);
        }
        rows.emplace_back(v.first, std::move(line));
    }
    std::stable_sort(rows.begin(), rows.end(), [](const auto & a, const auto & b) { return a.first > b.first; });
    std::vector<std::string> out;
    for (auto & r : rows) out.push_back(std::move(r.second));
    return out;
}

uint64_t bench_weight_bytes_per_step(const model & m, int n_parallel) {
    const model_weights & w = m.weights();
    const model_hparams & hp = m.hparams();
    uint64_t bytes = m.n_weight_bytes();
    if (w.tok_embd && !m.output_tied()) bytes -= std::min<uint64_t>(bytes, ggml_nbytes(w.tok_embd));
    if (w.pos_embd) bytes -= std::min<uint64_t>(bytes, ggml_nbytes(w.pos_embd));
    if (hp.n_expert > 0) {
        // Experts no sequence of the step chose are not read.
        const double e = hp.n_expert, k = hp.n_expert_used;
        const double used = e * (1.0 - std::pow(1.0 - k / e, std::max(1, n_parallel)));
        for (const model_layer & l : w.layers) {
            for (const ggml_tensor * t : {l.ffn_gate_exps, l.ffn_up_exps, l.ffn_down_exps}) {
                if (t) bytes -= uint64_t(double(ggml_nbytes(t)) * (1.0 - used / e));
            }
        }
    }
    return bytes;
}

uint64_t bench_kv_bytes_per_cell(const model & m, ggml_type type_k, ggml_type type_v) {
    const model_hparams & hp = m.hparams();
    return uint64_t(hp.n_layer) * (ggml_row_size(type_k, hp.n_embd_k_gqa()) + ggml_row_size(type_v, hp.n_embd_v_gqa()));
}

uint32_t bench_n_ctx(const bench_test_config & c) {
    const uint64_t needed = uint64_t(c.n_depth) + uint64_t(c.n_parallel) * uint64_t(c.n_prompt + c.n_gen);
    const uint64_t padded = std::max<uint64_t>(256, (needed + 255) / 256 * 256);
    return uint32_t(std::min<uint64_t>(padded, UINT32_MAX / 2));
}

int bench_run_test(const model & m, const bench_test_config & c, const bench_run_options & ro, bench_result * out,
                   std::string * err) {
    const std::string name = bench_test_name(c);
    bench_result r;
    r.cfg = c;
    r.model = bench_model_describe(m);
    r.test_time = utc_now_iso8601();
    std::unique_ptr<context> ctx;
    try {
        ctx = std::make_unique<context>(m, context_params_for(m, c));
    } catch (const std::exception & e) {
        *err = "test " + name + ": cannot create the context: " + e.what();
        return 1;
    }
    for (const std::string & b : ctx->backend_names()) r.backends += (r.backends.empty() ? "" : ",") + b;
    r.n_ctx = ctx->n_ctx();
    bench_driver d(*ctx, c, ro.seed);
    std::string why;
    if (ro.warmup) {
        uint64_t ns = 0;
        if (!d.prepare(&why) || !run_timed(d, c, std::min(c.n_gen, 1), &ns, &why)) {
            *err = "test " + name + " (warmup): " + why;
            return 1;
        }
    }
    for (int rep = 0; rep < ro.repetitions; ++rep) {
        uint64_t ns = 0;
        if (!d.prepare(&why) || !run_timed(d, c, c.n_gen, &ns, &why)) {
            *err = "test " + name + ": " + why;
            return 1;
        }
        r.samples_ns.push_back(ns);
        if (ro.progress) {
            std::fprintf(ro.progress, "inferd-bench: %s %s rep %d/%d: %.3f ms\n", r.model.filename.c_str(), name.c_str(),
                         rep + 1, ro.repetitions, double(ns) * 1e-6);
        }
    }
    r.kv_used = ctx->kv().used();
    fill_statistics(m, c, &r);
    *out = std::move(r);
    return 0;
}

double bench_mean(const std::vector<double> & v) {
    if (v.empty()) return 0.0;
    double s = 0;
    for (double x : v) s += x;
    return s / double(v.size());
}

double bench_stddev(const std::vector<double> & v) {
    if (v.size() < 2) return 0.0;
    const double mean = bench_mean(v);
    double s = 0;
    for (double x : v) s += (x - mean) * (x - mean);
    return std::sqrt(s / double(v.size() - 1));
}

double bench_median(std::vector<double> v) {
    if (v.empty()) return 0.0;
    std::sort(v.begin(), v.end());
    const size_t h = v.size() / 2;
    return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}
