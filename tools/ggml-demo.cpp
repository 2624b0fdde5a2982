// inferd-ggml-demo: a short tour of the tensor library on this machine's CPU, until the
// server exists. It builds one attention + feed-forward block on random weights, computes it
// with the CPU backend through the graph allocator, checks it against a plain re-computation,
// and times an F16 mat-vec the size of one projection of a 7B model.
//
// Usage: inferd-ggml-demo [-t THREADS]
#include "ggml/alloc.h"
#include "ggml/backend.h"
#include "ggml/cpu.h"
#include "ggml/ggml.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace {

constexpr int64_t k_embd = 256, k_ff = 512, k_tokens = 16, k_heads = 4, k_head_dim = k_embd / k_heads;

void fill_random(ggml_tensor * t, std::mt19937 & rng, float scale) {
    std::uniform_real_distribution<float> u(-scale, scale);
    std::vector<float> f(size_t(ggml_nelements(t)));
    for (float & v : f) v = u(rng);
    if (t->type == GGML_TYPE_F32) {
        ggml_backend_tensor_set(t, f.data(), 0, ggml_nbytes(t));
    } else {
        std::vector<ggml_fp16_t> h(f.size());
        ggml_fp32_to_fp16_row(f.data(), h.data(), int64_t(f.size()));
        ggml_backend_tensor_set(t, h.data(), 0, ggml_nbytes(t));
    }
}

struct block_weights {
    ggml_tensor *wq, *wk, *wv, *wo, *w_gate, *w_up, *w_down;
};

// One pre-norm transformer block with causal attention: [k_embd, k_tokens] -> same.
ggml_tensor * build_block(ggml_context * ctx, const block_weights & w, ggml_tensor * x, ggml_tensor * pos,
                          ggml_tensor * mask) {
    ggml_tensor * h = ggml_rms_norm(ctx, x, 1e-5f);
    ggml_rope_params rp;
    rp.n_dims = int(k_head_dim);
    ggml_tensor * q = ggml_rope(ctx, ggml_reshape_3d(ctx, ggml_mul_mat(ctx, w.wq, h), k_head_dim, k_heads, k_tokens), pos, rp);
    ggml_tensor * k = ggml_rope(ctx, ggml_reshape_3d(ctx, ggml_mul_mat(ctx, w.wk, h), k_head_dim, k_heads, k_tokens), pos, rp);
    ggml_tensor * v = ggml_reshape_3d(ctx, ggml_mul_mat(ctx, w.wv, h), k_head_dim, k_heads, k_tokens);
    q = ggml_permute(ctx, q, 0, 2, 1, 3);                       // [head_dim, tokens, heads]
    k = ggml_permute(ctx, k, 0, 2, 1, 3);
    ggml_tensor * kq = ggml_mul_mat(ctx, k, q);                 // [tokens(k), tokens(q), heads]
    kq = ggml_soft_max_ext(ctx, kq, mask, 1.0f / std::sqrt(float(k_head_dim)));
    ggml_tensor * vt = ggml_cont(ctx, ggml_permute(ctx, v, 1, 2, 0, 3));  // [tokens, head_dim, heads]
    ggml_tensor * att = ggml_mul_mat(ctx, vt, kq);              // [head_dim, tokens(q), heads]
    att = ggml_cont_2d(ctx, ggml_permute(ctx, att, 0, 2, 1, 3), k_embd, k_tokens);
    x = ggml_add(ctx, x, ggml_mul_mat(ctx, w.wo, att));
    h = ggml_rms_norm(ctx, x, 1e-5f);
    ggml_tensor * ff = ggml_swiglu(ctx, ggml_mul_mat(ctx, w.w_gate, h), ggml_mul_mat(ctx, w.w_up, h));
    return ggml_add(ctx, x, ggml_mul_mat(ctx, w.w_down, ff));
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

int run_block(ggml_backend_i * backend, ggml_backend_i * reference) {
    ggml_context_ptr ctx(ggml_init({64 * ggml_tensor_overhead() + ggml_graph_overhead(), nullptr, true}));
    block_weights w{};
    ggml_tensor ** ws[] = {&w.wq, &w.wk, &w.wv, &w.wo};
    for (ggml_tensor ** p : ws) *p = ggml_new_tensor_2d(ctx.get(), GGML_TYPE_F16, k_embd, k_embd);
    w.w_gate = ggml_new_tensor_2d(ctx.get(), GGML_TYPE_F16, k_embd, k_ff);
    w.w_up = ggml_new_tensor_2d(ctx.get(), GGML_TYPE_F16, k_embd, k_ff);
    w.w_down = ggml_new_tensor_2d(ctx.get(), GGML_TYPE_F16, k_ff, k_embd);
    ggml_tensor * x = ggml_new_tensor_2d(ctx.get(), GGML_TYPE_F32, k_embd, k_tokens);
    ggml_tensor * pos = ggml_new_tensor_1d(ctx.get(), GGML_TYPE_I32, k_tokens);
    ggml_tensor * mask = ggml_new_tensor_2d(ctx.get(), GGML_TYPE_F32, k_tokens, k_tokens);
    ggml_backend_buffer_ptr wbuf = ggml_backend_alloc_ctx_tensors(ctx.get(), ggml_backend_cpu_buffer_type());
    if (!wbuf) { std::fprintf(stderr, "out of memory\n"); return 1; }

    std::mt19937 rng(42);
    for (ggml_tensor * t : {w.wq, w.wk, w.wv, w.wo, w.w_gate, w.w_up, w.w_down}) fill_random(t, rng, 0.1f);
    fill_random(x, rng, 1.0f);
    std::vector<int32_t> p(k_tokens);
    std::vector<float> m(size_t(k_tokens * k_tokens));
    for (int64_t i = 0; i < k_tokens; ++i) {
        p[size_t(i)] = int32_t(i);
        for (int64_t j = 0; j < k_tokens; ++j) m[size_t(i * k_tokens + j)] = j <= i ? 0.0f : -INFINITY;
    }
    ggml_backend_tensor_set(pos, p.data(), 0, ggml_nbytes(pos));
    ggml_backend_tensor_set(mask, m.data(), 0, ggml_nbytes(mask));

    ggml_tensor * out = build_block(ctx.get(), w, x, pos, mask);
    ggml_set_output(out);
    ggml_cgraph * gf = ggml_new_graph(ctx.get());
    ggml_build_forward_expand(gf, out);
    ggml_gallocr galloc(ggml_backend_cpu_buffer_type());
    if (!galloc.alloc_graph(gf)) { std::fprintf(stderr, "out of memory\n"); return 1; }

    std::vector<float> y(size_t(ggml_nelements(out))), y_ref(y.size());
    if (reference->graph_compute(gf) != GGML_STATUS_SUCCESS) return 1;
    ggml_backend_tensor_get(out, y_ref.data(), 0, ggml_nbytes(out));
    const auto t0 = std::chrono::steady_clock::now();
    if (backend->graph_compute(gf) != GGML_STATUS_SUCCESS) return 1;
    const double dt = seconds_since(t0);
    ggml_backend_tensor_get(out, y.data(), 0, ggml_nbytes(out));

    double err = 0, norm = 0;
    for (size_t i = 0; i < y.size(); ++i) {
        err += double(y[i] - y_ref[i]) * double(y[i] - y_ref[i]);
        norm += double(y_ref[i]) * double(y_ref[i]);
    }
    std::printf("transformer block: %d nodes, %zu KiB of activations (graph allocator), %.3f ms\n",
                ggml_graph_n_nodes(gf), galloc.buffer_size() / 1024, dt * 1e3);
    std::printf("  vs the scalar kernels: normalized squared error %.2e %s\n", err / norm,
                err / norm < 1e-6 ? "(agree)" : "(DISAGREE)");
    return err / norm < 1e-6 ? 0 : 1;
}

int run_matvec(ggml_backend_i * backend) {
    const int64_t K = 4096, M = 4096;
    ggml_context_ptr ctx(ggml_init({8 * ggml_tensor_overhead() + ggml_graph_overhead(), nullptr, true}));
    ggml_tensor * wt = ggml_new_tensor_2d(ctx.get(), GGML_TYPE_F16, K, M);
    ggml_tensor * x = ggml_new_tensor_2d(ctx.get(), GGML_TYPE_F32, K, 1);
    ggml_tensor * y = ggml_mul_mat(ctx.get(), wt, x);
    ggml_backend_buffer_ptr buf = ggml_backend_alloc_ctx_tensors(ctx.get(), ggml_backend_cpu_buffer_type());
    if (!buf) { std::fprintf(stderr, "out of memory\n"); return 1; }
    std::mt19937 rng(7);
    fill_random(wt, rng, 0.05f);
    fill_random(x, rng, 1.0f);
    ggml_cgraph * gf = ggml_new_graph(ctx.get());
    ggml_build_forward_expand(gf, y);
    backend->graph_compute(gf);  // warm-up
    const int reps = 20;
    const auto t0 = std::chrono::steady_clock::now();
    for (int r = 0; r < reps; ++r) {
        if (backend->graph_compute(gf) != GGML_STATUS_SUCCESS) return 1;
    }
    const double dt = seconds_since(t0) / reps;
    std::printf("F16 mat-vec %lldx%lld: %.3f ms, %.1f GB/s of weights, %.1f GFLOP/s\n", (long long) M, (long long) K,
                dt * 1e3, double(ggml_nbytes(wt)) / dt / 1e9, 2.0 * double(K * M) / dt / 1e9);
    return 0;
}

}  // namespace

int main(int argc, char ** argv) {
    int n_threads = 0;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if ((a == "-t" || a == "--threads") && i + 1 < argc) {
            n_threads = std::atoi(argv[++i]);
        } else if (a == "-h" || a == "--help") {
            std::printf("usage: %s [-t THREADS]\n", argv[0]);
            return 0;
        } else {
            std::fprintf(stderr, "unknown argument: %s (try --help)\n", a.c_str());
            return 2;
        }
    }
    ggml_backend_registry reg = ggml_backend_registry_default();
    ggml_backend_device_i * cpu = reg.device_by_type(ggml_backend_dev_type::cpu);
    size_t free = 0, total = 0;
    cpu->memory(&free, &total);
    ggml_cpu_backend_options opt;
    opt.n_threads = n_threads;
    ggml_backend_ptr backend = ggml_backend_cpu_init(opt);
    opt.isa = ggml_cpu_isa::scalar;
    ggml_backend_ptr scalar = ggml_backend_cpu_init(opt);
    std::printf("inferd tensor library demo — device %s (%s), %.1f GiB memory, kernels: %s\n", cpu->name(),
                cpu->description(), double(total) / (1 << 30), ggml_cpu_isa_name(ggml_backend_cpu_get_isa(backend.get())));
    if (run_block(backend.get(), scalar.get()) != 0) return 1;
    return run_matvec(backend.get());
}
