// Conversion table by ISA.
#include "convert.h"
#include "convert-isa.h"

#include <cstring>

namespace {

void copy_f32(const void * src, float * dst, int64_t n) { std::memmove(dst, src, size_t(n) * 4); }
void copy_to_f32(const float * src, void * dst, int64_t n) { std::memmove(dst, src, size_t(n) * 4); }

template <void (*F)(const uint16_t *, float *, int64_t)>
void to_f32(const void * x, float * y, int64_t n) { F(static_cast<const uint16_t *>(x), y, n); }
template <void (*F)(const float *, uint16_t *, int64_t)>
void from_f32(const float * x, void * y, int64_t n) { F(x, static_cast<uint16_t *>(y), n); }

template <void (*H2F)(const uint16_t *, float *, int64_t), void (*F2H)(const float *, uint16_t *, int64_t),
          void (*B2F)(const uint16_t *, float *, int64_t), void (*F2B)(const float *, uint16_t *, int64_t)>
constexpr ggml_cpu_convert_fns make_fns() {
    return {H2F, F2H, B2F, F2B, to_f32<H2F>, from_f32<F2H>, to_f32<B2F>, from_f32<F2B>};
}

const ggml_cpu_convert_fns k_scalar =
    make_fns<ggml_fp16_to_fp32_row, ggml_fp32_to_fp16_row, ggml_bf16_to_fp32_row, ggml_fp32_to_bf16_row>();
const ggml_cpu_convert_fns k_avx2 =
    make_fns<ggml_cpu_f16_to_f32_avx2, ggml_cpu_f32_to_f16_avx2, ggml_cpu_bf16_to_f32_avx2, ggml_cpu_f32_to_bf16_avx2>();
const ggml_cpu_convert_fns k_avx512 = make_fns<ggml_cpu_f16_to_f32_avx512, ggml_cpu_f32_to_f16_avx512,
                                               ggml_cpu_bf16_to_f32_avx512, ggml_cpu_f32_to_bf16_avx512>();

}  // namespace

ggml_to_float_fn ggml_cpu_convert_fns::row_to_f32(ggml_type t) const {
    switch (t) {
        case GGML_TYPE_F32: return copy_f32;
        case GGML_TYPE_F16: return f16_row_to_f32;
        case GGML_TYPE_BF16: return bf16_row_to_f32;
        default: return nullptr;
    }
}

ggml_from_float_fn ggml_cpu_convert_fns::row_from_f32(ggml_type t) const {
    switch (t) {
        case GGML_TYPE_F32: return copy_to_f32;
        case GGML_TYPE_F16: return f32_row_to_f16;
        case GGML_TYPE_BF16: return f32_row_to_bf16;
        default: return nullptr;
    }
}

const ggml_cpu_convert_fns & ggml_cpu_convert_for(ggml_cpu_isa isa) {
    switch (isa) {
        case ggml_cpu_isa::amx:
        case ggml_cpu_isa::avx512: return k_avx512;
        case ggml_cpu_isa::avx2: return k_avx2;
        default: return k_scalar;
    }
}
