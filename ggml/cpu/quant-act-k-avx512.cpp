// AVX-512 quantizer of activations into Q8_K blocks (see quant-dot.h): the kernel of
// quant-act-k-simd.h at 16 lanes, giving exactly the blocks of ggml_quantize_row_q8_K_ref.
#include "quant-act-k-simd.h"
#include "quant-dot.h"

#include <cstdint>

void ggml_quantize_row_q8_K_avx512(const float * x, void * y, int64_t k) {
    quant_act_k::quantize_row_q8_K<simd_avx512>(x, y, k);
}
