// ggml_cpu_calibrate: MUL_MAT timed per weight type on each vector path (see ggml/cpu.h).
#include "cpu/ops.h"

#include "ggml/backend.h"
#include "ggml/cpu.h"
#include "ggml/ggml.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <vector>

namespace {

constexpr int64_t k_k = 4096;                     // row length of every weight matrix
constexpr size_t k_decode_bytes = size_t(96) << 20;  // decode weights: well past the caches
constexpr int64_t k_prompt_rows = 1024;
constexpr int64_t k_prompt_cols = 128;
constexpr int k_reps = 7;  // timed runs per path, after one untimed

// Values in [-1, 1) from a fixed linear congruential sequence (the timing does not depend on them).
std::vector<float> pattern(size_t n) {
    std::vector<float> v(n);
    uint32_t s = 12345;
    for (float & x : v) {
        s = s * 1664525u + 1013904223u;
        x = float(int32_t(s >> 8) - (1 << 23)) / float(1 << 23);
    }
    return v;
}

// One MUL_MAT y = w x b, weights placed as the engine places them.
struct mm_case {
    ggml_context_ptr ctx_w, ctx;
    ggml_backend_buffer_ptr buf_w, buf;
    ggml_cgraph * gf = nullptr;
    bool ok = false;

    mm_case(ggml_type t, int64_t m, int64_t n, const std::vector<float> & src) {
        ggml_init_params ip;
        ip.mem_size = 8 * ggml_tensor_overhead() + ggml_graph_overhead();
        ip.no_alloc = true;
        ctx_w.reset(ggml_init(ip));
        ctx.reset(ggml_init(ip));
        if (!ctx_w || !ctx) return;
        ggml_tensor * w = ggml_new_tensor_2d(ctx_w.get(), t, k_k, m);
        ggml_tensor * b = ggml_new_tensor_2d(ctx.get(), GGML_TYPE_F32, k_k, n);
        ggml_tensor * y = ggml_mul_mat(ctx.get(), w, b);
        if (!ggml_cpu_mul_mat_supported(y)) return;
        gf = ggml_new_graph(ctx.get());
        ggml_build_forward_expand(gf, y);
        buf_w = ggml_backend_alloc_ctx_tensors(ctx_w.get(), ggml_backend_cpu_repack_supported(w)
                                                                 ? ggml_backend_cpu_repack_buffer_type()
                                                                 : ggml_backend_cpu_buffer_type());
        buf = ggml_backend_alloc_ctx_tensors(ctx.get(), ggml_backend_cpu_buffer_type());
        if (!buf_w || !buf) return;
        const ggml_type_traits & tt = ggml_get_type_traits(t);
        const size_t row = ggml_row_size(t, k_k);
        std::vector<uint8_t> bytes(row * size_t(m));
        for (int64_t r = 0; r < m; ++r) {
            const float * x = src.data() + size_t(r % 64) * size_t(k_k);  // 64 distinct rows repeated
            if (t == GGML_TYPE_F32) {
                std::copy(x, x + k_k, reinterpret_cast<float *>(bytes.data() + size_t(r) * row));
            } else {
                tt.from_float(x, bytes.data() + size_t(r) * row, k_k);
            }
        }
        ggml_backend_tensor_set(w, bytes.data(), 0, bytes.size());
        std::vector<float> xb(size_t(k_k * n));
        for (size_t i = 0; i < xb.size(); ++i) xb[i] = src[i % src.size()];
        ggml_backend_tensor_set(b, xb.data(), 0, xb.size() * sizeof(float));
        ok = true;
    }
};

double time_us(ggml_backend_i & be, ggml_cgraph * gf) {
    const auto t0 = std::chrono::steady_clock::now();
    const ggml_status st = be.graph_compute(gf);
    const auto t1 = std::chrono::steady_clock::now();
    if (st != GGML_STATUS_SUCCESS) return -1.0;
    return std::chrono::duration<double, std::micro>(t1 - t0).count();
}

// Median microseconds per run on each backend, runs interleaved so that drift hits all alike.
std::vector<double> measure(std::vector<ggml_backend_ptr> & backends, ggml_cgraph * gf) {
    std::vector<std::vector<double>> runs(backends.size());
    for (int rep = 0; rep <= k_reps; ++rep) {
        for (size_t i = 0; i < backends.size(); ++i) {
            const double us = time_us(*backends[i], gf);
            if (us < 0) runs[i].push_back(1e30);  // a failed path never wins
            else if (rep > 0) runs[i].push_back(us);
        }
    }
    std::vector<double> med;
    for (auto & r : runs) {
        std::sort(r.begin(), r.end());
        med.push_back(r[r.size() / 2]);
    }
    return med;
}

}  // namespace

ggml_cpu_calibration ggml_cpu_calibrate(int n_threads, std::vector<ggml_cpu_calibration_row> * rows,
                                        const std::vector<ggml_type> & types) {
    ggml_cpu_calibration c;
    c.cpu = ggml_cpu_model_name();
    const ggml_cpu_isa best = ggml_cpu_detect_features().best_isa();
    std::vector<ggml_cpu_isa> paths;
    std::vector<ggml_backend_ptr> backends;
    for (ggml_cpu_isa i : {ggml_cpu_isa::avx2, ggml_cpu_isa::avx512, ggml_cpu_isa::amx}) {
        if (int(i) > int(best)) break;
        ggml_cpu_backend_options opt;
        opt.n_threads = n_threads;
        opt.isa = i;  // an explicit path: no calibration applies to it
        paths.push_back(i);
        backends.push_back(ggml_backend_cpu_init(opt));
    }
    if (paths.size() < 2) return c;  // one path or none: nothing to choose
    const std::vector<float> src = pattern(size_t(64 * k_k));
    for (int t = 0; t < GGML_TYPE_COUNT; ++t) {
        const ggml_type type = ggml_type(t);
        if (!ggml_type_is_supported(type)) continue;
        if (!types.empty() && std::find(types.begin(), types.end(), type) == types.end()) continue;
        const ggml_type_traits & tt = ggml_get_type_traits(type);
        if (type != GGML_TYPE_F32 && !tt.from_float) continue;
        if (k_k % tt.blck_size != 0) continue;
        for (int regime = 0; regime < 2; ++regime) {
            const size_t row = ggml_row_size(type, k_k);
            const int64_t m = regime == 0 ? std::clamp<int64_t>(int64_t(k_decode_bytes / row) / 16 * 16, 256, 65536)
                                          : k_prompt_rows;
            mm_case mc(type, m, regime == 0 ? 1 : k_prompt_cols, src);
            if (!mc.ok) break;  // the CPU kernels have no MUL_MAT for this type
            const std::vector<double> us = measure(backends, mc.gf);
            size_t fastest = paths.size() - 1;  // the default: the best path by CPUID
            for (size_t i = 0; i < paths.size(); ++i) {
                if (us[i] < 0.95 * us[paths.size() - 1] && us[i] < us[fastest]) fastest = i;
            }
            c.mul_mat[t][regime] = paths[fastest];
            if (rows) {
                ggml_cpu_calibration_row r{type, regime, {0, 0, 0, 0}, paths[fastest]};
                for (size_t i = 0; i < paths.size(); ++i) r.us[int(paths[i])] = us[i];
                rows->push_back(r);
            }
        }
    }
    return c;
}
