// ggml_quantize_chunk: quantization of rows into any supported type. F32 / F16 / BF16 go through
// the scalar conversions of types.h, the block types through the quality quantizers of quants.h
// (Q8_1 and Q8_K, the activation formats, and MXFP4 through their reference quantizers).
#include "ggml/quants.h"

#include <cstring>

namespace {

using quantize_rows_fn = size_t (*)(const float * src, void * dst, int64_t n_rows, int64_t n_per_row,
                                    const float * imatrix);

quantize_rows_fn quantize_rows_of(ggml_type type) {
    switch (type) {
        case GGML_TYPE_Q4_0: return ggml_quantize_q4_0;
        case GGML_TYPE_Q4_1: return ggml_quantize_q4_1;
        case GGML_TYPE_Q5_0: return ggml_quantize_q5_0;
        case GGML_TYPE_Q5_1: return ggml_quantize_q5_1;
        case GGML_TYPE_Q8_0: return ggml_quantize_q8_0;
        case GGML_TYPE_Q2_K: return ggml_quantize_q2_K;
        case GGML_TYPE_Q3_K: return ggml_quantize_q3_K;
        case GGML_TYPE_Q4_K: return ggml_quantize_q4_K;
        case GGML_TYPE_Q5_K: return ggml_quantize_q5_K;
        case GGML_TYPE_Q6_K: return ggml_quantize_q6_K;
        case GGML_TYPE_IQ4_NL: return ggml_quantize_iq4_nl;
        case GGML_TYPE_IQ4_XS: return ggml_quantize_iq4_xs;
        default: return nullptr;
    }
}

// Types converted row by row with a plain (reference) conversion; nullptr for the others.
ggml_from_float_fn convert_row_of(ggml_type type) {
    switch (type) {
        case GGML_TYPE_F32:
            return [](const float * src, void * dst, int64_t n) { std::memcpy(dst, src, size_t(n) * sizeof(float)); };
        case GGML_TYPE_F16:
            return [](const float * src, void * dst, int64_t n) {
                ggml_fp32_to_fp16_row(src, static_cast<ggml_fp16_t *>(dst), n);
            };
        case GGML_TYPE_BF16:
            return [](const float * src, void * dst, int64_t n) {
                ggml_fp32_to_bf16_row(src, static_cast<ggml_bf16_t *>(dst), n);
            };
        case GGML_TYPE_Q8_1:
            return [](const float * src, void * dst, int64_t n) {
                ggml_quantize_row_q8_1_ref(src, static_cast<block_q8_1 *>(dst), n);
            };
        case GGML_TYPE_Q8_K:
            return [](const float * src, void * dst, int64_t n) {
                ggml_quantize_row_q8_K_ref(src, static_cast<block_q8_K *>(dst), n);
            };
        case GGML_TYPE_MXFP4:
            return [](const float * src, void * dst, int64_t n) {
                ggml_quantize_row_mxfp4_ref(src, static_cast<block_mxfp4 *>(dst), n);
            };
        default: return nullptr;
    }
}

}  // namespace

size_t ggml_quantize_chunk(ggml_type type, const float * src, void * dst, int64_t start_row, int64_t n_rows,
                           int64_t n_per_row, const float * imatrix) {
    const int64_t blck = ggml_blck_size(type);
    if (blck <= 0 || start_row < 0 || n_rows < 0 || n_per_row <= 0 || n_per_row % blck != 0) return 0;
    if (n_rows == 0) return 0;
    const size_t row_size = ggml_row_size(type, n_per_row);
    char * out = static_cast<char *>(dst) + size_t(start_row) * row_size;

    if (const quantize_rows_fn quantize = quantize_rows_of(type)) {
        return quantize(src, out, n_rows, n_per_row, imatrix);
    }
    if (const ggml_from_float_fn convert = convert_row_of(type)) {
        for (int64_t r = 0; r < n_rows; ++r) convert(src + r * n_per_row, out + size_t(r) * row_size, n_per_row);
        return size_t(n_rows) * row_size;
    }
    return 0;
}
