// tools/common/quantize-progress.h — the progress display of inferd-quantize.
//
// Usage:
//   quantize_progress progress(stderr, n_tensors);      // nullptr: silent
//   progress.tensor_done({name, GGML_TYPE_F32, GGML_TYPE_Q4_K, 1048576, 147456, 0.012, true});
//   progress.note("blk.0.ffn_down.weight: rows of 100 elements … using q4_0 instead");
//   progress.finish(total_seconds);
//
// One line per tensor: "[ 3/39] blk.0.attn_q.weight  [256, 256]  f32 -> q4_K  256.0 KiB -> 36.0 KiB  1.2 ms",
// then a total line with the sizes before and after, their ratio and bits per weight.
#pragma once

#include "ggml/types.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

struct quantize_progress_tensor {
    std::string name;
    std::vector<int64_t> shape;  // ne[0..n_dims)
    ggml_type from = GGML_TYPE_F32;
    ggml_type to = GGML_TYPE_F32;
    size_t bytes_in = 0;
    size_t bytes_out = 0;
    double seconds = 0.0;
    bool converted = false;  // false: copied unchanged
};

// "1.5 MiB", "36.0 KiB", "512 B".
std::string quantize_format_bytes(size_t bytes);
// "[256, 4096]".
std::string quantize_format_shape(const std::vector<int64_t> & shape);
// The per-tensor line (no newline); index counts from 1.
std::string quantize_progress_line(size_t index, size_t count, const quantize_progress_tensor & t);
// The total line (no newline).
std::string quantize_progress_total_line(size_t bytes_in, size_t bytes_out, int64_t n_elements, double seconds);

class quantize_progress {
public:
    quantize_progress(std::FILE * out, size_t n_tensors) : out_(out), count_(n_tensors) {}

    void tensor_done(const quantize_progress_tensor & t);
    void note(const std::string & message);  // a message of its own line, e.g. a fallback
    void finish(double seconds);

    size_t bytes_in() const { return bytes_in_; }
    size_t bytes_out() const { return bytes_out_; }

private:
    std::FILE * out_;
    size_t count_;
    size_t done_ = 0;
    size_t bytes_in_ = 0;
    size_t bytes_out_ = 0;
    int64_t n_elements_ = 0;
};
