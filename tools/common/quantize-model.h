// tools/common/quantize-model.h — inferd-quantize's logic: the per-tensor plan of a file under
// a mix, and the streaming conversion of a whole file.
//
// Usage:
//   quantize_model_params p;
//   p.input_path = "in.gguf"; p.output_path = "out.gguf";
//   p.mix = quantize_mix_find("Q4_K_M"); p.n_threads = 4; p.log = stdout;
//   quantize_model_stats stats;
//   std::string err;
//   if (!quantize_model(p, &stats, &err)) fprintf(stderr, "%s\n", err.c_str());
//
//   int rc = quantize_tool_main({"in.gguf", "out.gguf", "q4_k_m", "--threads", "4"}, stdout, stderr);
//
// The output keeps every metadata key of the input (general.file_type set to the mix's number,
// general.quantization_version = 2 for quantized mixes) and the input's tensor order. Weight
// matrices are converted (input F16 / BF16 / quantized tensors are dequantized first); other
// tensors (1-D norms and biases, position embeddings, …) are copied byte for byte. The output is
// written tensor by tensor to OUT.part and renamed to OUT at the end; on failure nothing is left.
// quantize_tool_main exit codes: 0 success, 1 failure (bad input, unwritable output), 2 usage.
#pragma once

#include "ggml/gguf.h"
#include "quantize-mix.h"

#include <cstdio>
#include <string>
#include <vector>

struct quantize_plan_entry {
    size_t index = 0;                 // tensor index in the input file
    ggml_type from = GGML_TYPE_F32;
    ggml_type to = GGML_TYPE_F32;
    bool convert = false;             // false: the bytes are copied unchanged
    bool fallback = false;            // the mix's type did not fit the row length
    std::string note;                 // a message naming the tensor (fallback, kept type), or empty
};

// What the mix rules need to know about a file: block count and GQA from the metadata of
// general.architecture, the output matrix and layer count from the tensor names.
quantize_model_info quantize_model_info_from_file(const gguf_file & f);

// The number of dimensions without trailing 1s (at least 1), as a shape-based rule sees it.
int quantize_tensor_effective_dims(const gguf_tensor_info & t);

// The per-tensor decisions for the file under the mix, in the file's tensor order. False with
// *error when the file cannot be quantized as a whole (a shard of a split model).
bool quantize_plan_build(const gguf_file & f, const quantize_mix & mix, std::vector<quantize_plan_entry> * plan,
                         std::string * error);

struct quantize_model_params {
    std::string input_path;
    std::string output_path;
    const quantize_mix * mix = nullptr;
    int n_threads = 1;
    std::FILE * log = nullptr;  // progress display and messages; nullptr: silent
};

struct quantize_model_stats {
    size_t bytes_in = 0;
    size_t bytes_out = 0;
    size_t n_converted = 0;
    size_t n_copied = 0;
    size_t n_fallback = 0;
    std::vector<std::string> notes;  // every fallback / kept-type message
    double seconds = 0.0;
};

bool quantize_model(const quantize_model_params & p, quantize_model_stats * stats, std::string * error);

// The whole program: args without the program name.
int quantize_tool_main(const std::vector<std::string> & args, std::FILE * out, std::FILE * err);
