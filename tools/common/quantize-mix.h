// tools/common/quantize-mix.h — quantization mixes: which type each tensor of a model gets.
//
// Usage:
//   const quantize_mix * mix = quantize_mix_find("q4_k_m");          // case-insensitive; nullptr if unknown
//   quantize_model_info info = quantize_model_info_from_names(names, n_layers_from_metadata, n_gqa);
//   if (quantize_tensor_is_quantizable(name, n_dims)) {
//       quantize_tensor_choice c = quantize_mix_choose(*mix, info, name, ne0);
//       // c.type: the type to write; c.fallback: true when the row length forced another type,
//       // c.message then says why (name the tensor when you print it).
//   }
//
// The rules follow the per-tensor choices of the established quantizer (llama.cpp's
// llama-quantize) for dense models: the output matrix (or the token embeddings when the output
// is tied to them) gets Q6_K unless the mix is Q8_0; attention V and feed-forward down get a
// higher type in some layers for the _M / _S K mixes; the IQ4_NL / IQ4_XS mixes (quantized
// without an importance matrix) keep attention V in Q5_K when 4 or more query heads share a KV
// head, and feed-forward down of the first eighth of the layers in Q5_K; everything else gets
// the mix's base type. F16 / BF16 mixes apply no rules. The rules themselves live in a table in
// quantize-mix.cpp.
#pragma once

#include "ggml/types.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

// The standard file-type numbers (general.file_type) of the mixes.
enum quantize_file_type : int32_t {
    QUANTIZE_FTYPE_ALL_F32 = 0,
    QUANTIZE_FTYPE_MOSTLY_F16 = 1,
    QUANTIZE_FTYPE_MOSTLY_Q4_0 = 2,
    QUANTIZE_FTYPE_MOSTLY_Q4_1 = 3,
    QUANTIZE_FTYPE_MOSTLY_Q8_0 = 7,
    QUANTIZE_FTYPE_MOSTLY_Q5_0 = 8,
    QUANTIZE_FTYPE_MOSTLY_Q5_1 = 9,
    QUANTIZE_FTYPE_MOSTLY_Q2_K = 10,
    QUANTIZE_FTYPE_MOSTLY_Q3_K_S = 11,
    QUANTIZE_FTYPE_MOSTLY_Q3_K_M = 12,
    QUANTIZE_FTYPE_MOSTLY_Q3_K_L = 13,
    QUANTIZE_FTYPE_MOSTLY_Q4_K_S = 14,
    QUANTIZE_FTYPE_MOSTLY_Q4_K_M = 15,
    QUANTIZE_FTYPE_MOSTLY_Q5_K_S = 16,
    QUANTIZE_FTYPE_MOSTLY_Q5_K_M = 17,
    QUANTIZE_FTYPE_MOSTLY_Q6_K = 18,
    QUANTIZE_FTYPE_MOSTLY_IQ4_NL = 25,
    QUANTIZE_FTYPE_MOSTLY_IQ4_XS = 30,
    QUANTIZE_FTYPE_MOSTLY_BF16 = 32,
};

struct quantize_mix {
    const char * name;             // "Q4_K_M"
    quantize_file_type file_type;  // written to general.file_type
    ggml_type base_type;           // the type most tensors get
};

// Every mix inferd-quantize offers, in the order of the help text.
const std::vector<quantize_mix> & quantize_mix_all();
// The mix called name (case-insensitive), or nullptr.
const quantize_mix * quantize_mix_find(std::string_view name);
// "F16, BF16, Q8_0, …": the names for help and error messages.
std::string quantize_mix_names();

// What the rules need to know about the model.
struct quantize_model_info {
    int64_t n_layers = 0;     // number of blocks (blk.N.*)
    int64_t n_gqa = 1;        // attention heads per KV head
    bool has_output = false;  // an output.weight of its own (else it is tied to token_embd.weight)
};

// Builds the info from the tensor names: n_layers is the larger of metadata_n_layers and the
// highest blk.N index + 1; has_output when a tensor is called output.weight.
quantize_model_info quantize_model_info_from_names(const std::vector<std::string> & names,
                                                   int64_t metadata_n_layers, int64_t n_gqa);

// The layer index of a tensor called blk.N.…, or -1.
int64_t quantize_tensor_layer(std::string_view name);

// Whether a tensor is a weight matrix to quantize (the others are copied unchanged): its name
// ends in "weight", it has two or more dimensions, and it is not a norm, a position or token
// type embedding, an expert router or one of the small special matrices kept as they are.
bool quantize_tensor_is_quantizable(std::string_view name, int n_dims);

struct quantize_tensor_choice {
    ggml_type type = GGML_TYPE_COUNT;
    bool fallback = false;  // the row length did not fit the chosen type's block size
    std::string message;    // why the fallback happened (empty otherwise)
};

// The type a quantizable tensor gets under the mix; ne0 is its row length.
quantize_tensor_choice quantize_mix_choose(const quantize_mix & mix, const quantize_model_info & info,
                                           std::string_view name, int64_t ne0);

// The type used instead of t when rows of ne0 elements do not fit t's block size (t itself when
// they fit): K-quants → Q4_0 / Q5_0 / Q5_1 / Q8_0, IQ4_XS → IQ4_NL, and F16 when no 32-element
// block fits either.
ggml_type quantize_fallback_type(ggml_type t, int64_t ne0);
