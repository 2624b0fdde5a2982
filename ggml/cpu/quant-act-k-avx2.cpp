// AVX2 quantizer of activations into Q8_K blocks (see quant-dot.h): the kernel of
// quant-act-k-simd.h at 8 lanes, giving exactly the blocks of ggml_quantize_row_q8_K_ref.
#include "quant-act-k-simd.h"
#include "quant-dot.h"

#include <cstdint>

void ggml_quantize_row_q8_K_avx2(const float * x, void * y, int64_t k) {
    quant_act_k::quantize_row_q8_K<simd_avx2>(x, y, k);
}
