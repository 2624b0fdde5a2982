// AVX2 activation quantizers Q8_0 / Q8_1 (see quant-dot.h): the kernels of quant-act-simd.h at
// 8 lanes, giving the same blocks, bit for bit, as ggml_quantize_row_q8_0_ref / _q8_1_ref.
#include "quant-act-simd.h"
#include "quant-dot.h"

#include <cstdint>

void ggml_quantize_row_q8_0_avx2(const float * x, void * y, int64_t k) {
    quant_act::quantize_row_q8_0<simd_avx2>(x, y, k);
}

void ggml_quantize_row_q8_1_avx2(const float * x, void * y, int64_t k) {
    quant_act::quantize_row_q8_1<simd_avx2>(x, y, k);
}
