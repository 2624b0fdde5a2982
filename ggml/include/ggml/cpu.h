// ggml/cpu.h — the CPU backend.
//
// Usage:
//   ggml_cpu_backend_options opt; opt.n_threads = 2;             // opt.isa: fastest the CPU has
//   ggml_backend_ptr cpu = ggml_backend_cpu_init(opt);
//   ggml_status st = cpu->graph_compute(gf);                      // GGML_STATUS_SUCCESS
//
// Kernels have a scalar reference and AVX2 / AVX-512 paths; the amx path is the AVX-512 one
// with F16 and BF16 matrix products on AMX tiles. The path is chosen when the backend is
// created, from CPUID, capped by opt.isa (or INFERD_CPU_ISA=scalar|avx2|avx512|amx in the
// environment when opt.isa is ggml_cpu_isa::best), so tests can run every path on one CPU.
// A backend with opt.isa == best also follows this CPU's calibration (ggml_cpu_calibration):
// MUL_MAT's path per weight type, measured by inferd-bench --calibrate.
#pragma once

#include "ggml/backend.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

enum class ggml_cpu_isa { scalar = 0, avx2 = 1, avx512 = 2, amx = 3, best = 4 };
const char * ggml_cpu_isa_name(ggml_cpu_isa isa);
// "scalar", "avx2", "avx512" or "amx" (not "best"); false for anything else.
bool ggml_cpu_isa_from_name(const std::string & s, ggml_cpu_isa * out);

// What this CPU and OS support (CPUID + XGETBV).
struct ggml_cpu_features {
    bool avx2 = false, fma = false, f16c = false;
    bool avx512f = false, avx512bw = false, avx512vl = false, avx512dq = false;
    bool avx512_vnni = false, avx512_bf16 = false, avx_vnni = false;
    bool amx_bf16 = false;  // AMX tiles with BF16, enabled by the OS for this process
    // Best path whose requirements are all met.
    ggml_cpu_isa best_isa() const;
};
ggml_cpu_features ggml_cpu_detect_features();
// The CPU as CPUID names it, with its family and model numbers and, where they identify one, the
// microarchitecture: "AMD EPYC (family 26, model 2: Zen 5)".
std::string ggml_cpu_model_name();

// MUL_MAT's path per weight type, chosen by measurement on one CPU (inferd-bench --calibrate):
// where AVX-512 runs on 256-bit units, or a type's AVX2 kernel happens to be the faster one, the
// best path by CPUID is not the fastest. Two regimes: decode (fewer than
// ggml_cpu_prompt_min_cols columns: a mat-vec bound by memory) and prompt (a GEMM bound by
// arithmetic). Every path computes the same product within the kernels' tolerances, and
// repacked weights have the same layout on every path, so choosing per type is safe.
inline constexpr int64_t ggml_cpu_prompt_min_cols = 16;
struct ggml_cpu_calibration {
    std::string cpu;  // ggml_cpu_model_name() of the CPU it was measured on
    // best: nothing measured for that type and regime (the backend's path applies)
    ggml_cpu_isa mul_mat[GGML_TYPE_COUNT][2];
    ggml_cpu_calibration();
    // The path for weights of type t against n_cols columns, at most cap.
    ggml_cpu_isa choose(ggml_type t, int64_t n_cols, ggml_cpu_isa cap) const;
};
// The cache file: INFERD_CPU_CALIBRATION when set ("off": none, ""), otherwise
// $XDG_CACHE_HOME/inferd/cpu-kernels.txt or ~/.cache/inferd/cpu-kernels.txt.
std::string ggml_cpu_calibration_path();
// A text file: a format line, the CPU's name, then "mul_mat <type> <decode|prompt> <isa>" lines.
// Reading checks every line; false with err set for a missing or malformed file.
bool ggml_cpu_calibration_read(const std::string & path, ggml_cpu_calibration * out, std::string * err);
bool ggml_cpu_calibration_write(const std::string & path, const ggml_cpu_calibration & c, std::string * err);
// The cache of this CPU, read once per process; nullptr when there is none, it is malformed or
// it was measured on another CPU model.
const ggml_cpu_calibration * ggml_cpu_calibration_default();
// One measured choice: microseconds per MUL_MAT on each path tried (0: not tried).
struct ggml_cpu_calibration_row {
    ggml_type type;
    int regime;  // 0 decode, 1 prompt
    double us[4];  // by ggml_cpu_isa scalar..amx
    ggml_cpu_isa chosen;
};
// Times MUL_MAT of every weight type the CPU kernels have on each vector path the CPU supports
// (avx2, avx512, amx), placed as the engine places weights (repacked where the type can be),
// with n_threads threads; a path is chosen over the default (the best by CPUID) only when it is
// faster by more than 5%. rows, when given, receives every measurement; types, when not empty,
// limits it to those weight types. Runs for tens of seconds with every type.
ggml_cpu_calibration ggml_cpu_calibrate(int n_threads, std::vector<ggml_cpu_calibration_row> * rows = nullptr,
                                        const std::vector<ggml_type> & types = {});

struct ggml_cpu_backend_options {
    int n_threads = 0;                     // 0: the number of cores
    ggml_cpu_isa isa = ggml_cpu_isa::best; // cap on the kernel path
    int spin_us = 200;                     // how long idle workers spin before sleeping
    // MUL_MAT's path per weight type (copied), capped by isa. nullptr: with isa == best, the
    // cache of this CPU (ggml_cpu_calibration_default); with an explicit isa, none, so a backend
    // made for one path runs exactly that path.
    const ggml_cpu_calibration * calibration = nullptr;
};

// Creates a CPU backend (own thread pool). The isa is capped to what the CPU supports.
ggml_backend_ptr ggml_backend_cpu_init(const ggml_cpu_backend_options & opt = {});
// The CPU backend family: one device ("CPU"), host buffer type.
std::unique_ptr<ggml_backend_reg_i> ggml_backend_cpu_reg();
// The host-memory buffer type of the CPU device (lives for the whole program).
ggml_backend_buffer_type_i * ggml_backend_cpu_buffer_type();

// Weights in the interleaved layout of the CPU's MUL_MAT kernels (ggml/cpu/repack.h), for
// 2-D matrices used only as the first operand of MUL_MAT:
//   ggml_backend_buffer_ptr buf = ggml_backend_alloc_ctx_tensors(ctx, ggml_backend_cpu_repack_buffer_type());
//   ggml_backend_tensor_set(w, file_bytes, 0, ggml_nbytes(w));   // repacked here, whole tensors only
//   ggml_backend_tensor_get(w, out, 0, ggml_nbytes(w));          // the original bytes again
// Tensors that ggml_backend_cpu_repack_supported rejects are stored as they are. The buffer
// type is not "host": nothing reads such tensors in place except the CPU's MUL_MAT (the CPU
// device's supports_op says so), and copies to other backends go through get_tensor.
ggml_backend_buffer_type_i * ggml_backend_cpu_repack_buffer_type();
// True when t (not a view) would be repacked in that buffer type: a repackable weight type
// (Q4_0, Q4_1, Q5_0, Q8_0, Q2_K … Q6_K, IQ4_NL, IQ4_XS, MXFP4), 2-D, contiguous.
bool ggml_backend_cpu_repack_supported(const ggml_tensor * t);
// True when t lives repacked in a buffer of that type.
bool ggml_backend_cpu_tensor_is_repacked(const ggml_tensor * t);

// A CPU buffer over memory the caller owns (an mmapped model file: weights used in place, no
// copy). The memory must outlive the buffer and is never freed by it; tensors placed in it
// with ggml_backend_tensor_alloc must not be written when the memory is read-only.
// nullptr when ptr is nullptr.
ggml_backend_buffer_ptr ggml_backend_cpu_buffer_from_ptr(void * ptr, size_t size);
// Settings of a CPU backend (nullptr-safe: false / no-op for other backends).
bool ggml_backend_is_cpu(const ggml_backend_i * backend);
void ggml_backend_cpu_set_n_threads(ggml_backend_i * backend, int n_threads);
ggml_cpu_isa ggml_backend_cpu_get_isa(const ggml_backend_i * backend);
// The MUL_MAT kernel the CPU backend runs on the `isa` path for the weights w, as they are placed
// (repacked or not), against n_cols columns of F32 activations, from the same plan the op makes:
// "avx512 dot f16 x f32", "avx512 gemm f16 -> f32 panels of 12", "avx512 repacked q4_K x q8_K",
// "amx f16 x bf16 tiles"; "unsupported" when the path has no kernel for w's type.
std::string ggml_backend_cpu_mul_mat_path(ggml_cpu_isa isa, const ggml_tensor * w, int64_t n_cols);
// The path the backend runs MUL_MAT on for weights of type t against n_cols columns: its isa,
// or the calibrated choice under it.
ggml_cpu_isa ggml_backend_cpu_mul_mat_isa(const ggml_backend_i * backend, ggml_type t, int64_t n_cols);
