// Element types: the traits table and scalar F16/BF16 conversions.
#include "ggml/types.h"
#include "ggml/quants.h"

#include <array>
#include <cstring>

namespace {

uint32_t float_bits(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
}

float bits_float(uint32_t u) {
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}

void f32_to_f32_row(const void * src, float * dst, int64_t n) {
    std::memcpy(dst, src, size_t(n) * sizeof(float));
}
void f32_from_f32_row(const float * src, void * dst, int64_t n) {
    std::memcpy(dst, src, size_t(n) * sizeof(float));
}
void f16_to_f32_row(const void * src, float * dst, int64_t n) {
    ggml_fp16_to_fp32_row(static_cast<const ggml_fp16_t *>(src), dst, n);
}
void f16_from_f32_row(const float * src, void * dst, int64_t n) {
    ggml_fp32_to_fp16_row(src, static_cast<ggml_fp16_t *>(dst), n);
}
void bf16_to_f32_row(const void * src, float * dst, int64_t n) {
    ggml_bf16_to_fp32_row(static_cast<const ggml_bf16_t *>(src), dst, n);
}
void bf16_from_f32_row(const float * src, void * dst, int64_t n) {
    ggml_fp32_to_bf16_row(src, static_cast<ggml_bf16_t *>(dst), n);
}

ggml_type_traits plain(const char * name, size_t size, bool is_float, ggml_to_float_fn to, ggml_from_float_fn from,
                       ggml_type vec_dot) {
    ggml_type_traits t;
    t.name = name;
    t.blck_size = 1;
    t.type_size = size;
    t.is_quantized = false;
    t.is_float = is_float;
    t.to_float = to;
    t.from_float = from;
    t.vec_dot_type = vec_dot;
    return t;
}

// Untyped views of the block functions of quants.h, for the traits table.
template <typename B, void (*F)(const B *, float *, int64_t)>
void block_to_float(const void * x, float * y, int64_t k) { F(static_cast<const B *>(x), y, k); }
template <typename B, void (*F)(const float *, B *, int64_t)>
void block_from_float(const float * x, void * y, int64_t k) { F(x, static_cast<B *>(y), k); }

template <typename B, void (*TO)(const B *, float *, int64_t), void (*FROM)(const float *, B *, int64_t)>
ggml_type_traits quant(const char * name, int64_t blck, ggml_type vec_dot) {
    static_assert(sizeof(B) > 0);
    ggml_type_traits t;
    t.name = name;
    t.blck_size = blck;
    t.type_size = sizeof(B);
    t.is_quantized = true;
    t.to_float = block_to_float<B, TO>;
    t.from_float = block_from_float<B, FROM>;
    t.vec_dot_type = vec_dot;
    return t;
}

std::array<ggml_type_traits, GGML_TYPE_COUNT> make_traits() {
    std::array<ggml_type_traits, GGML_TYPE_COUNT> t{};
    t[GGML_TYPE_F32] = plain("f32", 4, true, f32_to_f32_row, f32_from_f32_row, GGML_TYPE_F32);
    t[GGML_TYPE_F16] = plain("f16", 2, true, f16_to_f32_row, f16_from_f32_row, GGML_TYPE_F16);
    t[GGML_TYPE_BF16] = plain("bf16", 2, true, bf16_to_f32_row, bf16_from_f32_row, GGML_TYPE_BF16);
    t[GGML_TYPE_F64] = plain("f64", 8, true, nullptr, nullptr, GGML_TYPE_COUNT);
    t[GGML_TYPE_I8] = plain("i8", 1, false, nullptr, nullptr, GGML_TYPE_COUNT);
    t[GGML_TYPE_I16] = plain("i16", 2, false, nullptr, nullptr, GGML_TYPE_COUNT);
    t[GGML_TYPE_I32] = plain("i32", 4, false, nullptr, nullptr, GGML_TYPE_COUNT);
    t[GGML_TYPE_I64] = plain("i64", 8, false, nullptr, nullptr, GGML_TYPE_COUNT);
    t[GGML_TYPE_Q4_0] = quant<block_q4_0, ggml_dequantize_row_q4_0, ggml_quantize_row_q4_0_ref>("q4_0", QK4_0, GGML_TYPE_Q8_0);
    t[GGML_TYPE_Q4_1] = quant<block_q4_1, ggml_dequantize_row_q4_1, ggml_quantize_row_q4_1_ref>("q4_1", QK4_1, GGML_TYPE_Q8_1);
    t[GGML_TYPE_Q5_0] = quant<block_q5_0, ggml_dequantize_row_q5_0, ggml_quantize_row_q5_0_ref>("q5_0", QK5_0, GGML_TYPE_Q8_0);
    t[GGML_TYPE_Q5_1] = quant<block_q5_1, ggml_dequantize_row_q5_1, ggml_quantize_row_q5_1_ref>("q5_1", QK5_1, GGML_TYPE_Q8_1);
    t[GGML_TYPE_Q8_0] = quant<block_q8_0, ggml_dequantize_row_q8_0, ggml_quantize_row_q8_0_ref>("q8_0", QK8_0, GGML_TYPE_Q8_0);
    t[GGML_TYPE_Q8_1] = quant<block_q8_1, ggml_dequantize_row_q8_1, ggml_quantize_row_q8_1_ref>("q8_1", QK8_1, GGML_TYPE_Q8_1);
    t[GGML_TYPE_Q2_K] = quant<block_q2_K, ggml_dequantize_row_q2_K, ggml_quantize_row_q2_K_ref>("q2_K", QK_K, GGML_TYPE_Q8_K);
    t[GGML_TYPE_Q3_K] = quant<block_q3_K, ggml_dequantize_row_q3_K, ggml_quantize_row_q3_K_ref>("q3_K", QK_K, GGML_TYPE_Q8_K);
    t[GGML_TYPE_Q4_K] = quant<block_q4_K, ggml_dequantize_row_q4_K, ggml_quantize_row_q4_K_ref>("q4_K", QK_K, GGML_TYPE_Q8_K);
    t[GGML_TYPE_Q5_K] = quant<block_q5_K, ggml_dequantize_row_q5_K, ggml_quantize_row_q5_K_ref>("q5_K", QK_K, GGML_TYPE_Q8_K);
    t[GGML_TYPE_Q6_K] = quant<block_q6_K, ggml_dequantize_row_q6_K, ggml_quantize_row_q6_K_ref>("q6_K", QK_K, GGML_TYPE_Q8_K);
    t[GGML_TYPE_Q8_K] = quant<block_q8_K, ggml_dequantize_row_q8_K, ggml_quantize_row_q8_K_ref>("q8_K", QK_K, GGML_TYPE_Q8_K);
    t[GGML_TYPE_IQ4_NL] =
        quant<block_iq4_nl, ggml_dequantize_row_iq4_nl, ggml_quantize_row_iq4_nl_ref>("iq4_nl", QK4_NL, GGML_TYPE_Q8_0);
    t[GGML_TYPE_IQ4_XS] =
        quant<block_iq4_xs, ggml_dequantize_row_iq4_xs, ggml_quantize_row_iq4_xs_ref>("iq4_xs", QK_K, GGML_TYPE_Q8_K);
    t[GGML_TYPE_MXFP4] =
        quant<block_mxfp4, ggml_dequantize_row_mxfp4, ggml_quantize_row_mxfp4_ref>("mxfp4", QK_MXFP4, GGML_TYPE_Q8_0);
    return t;
}

const std::array<ggml_type_traits, GGML_TYPE_COUNT> k_traits = make_traits();

}  // namespace

bool ggml_type_is_valid(int32_t type) {
    return type >= 0 && type < GGML_TYPE_COUNT && k_traits[size_t(type)].name != nullptr;
}

const ggml_type_traits & ggml_get_type_traits(ggml_type type) {
    static const ggml_type_traits none{};
    return ggml_type_is_valid(type) ? k_traits[size_t(type)] : none;
}

bool ggml_type_is_supported(ggml_type type) {
    if (!ggml_type_is_valid(type)) return false;
    const ggml_type_traits & t = k_traits[size_t(type)];
    return !t.is_quantized || (t.to_float != nullptr && t.from_float != nullptr);
}

const char * ggml_type_name(ggml_type type) {
    return ggml_type_is_valid(type) ? k_traits[size_t(type)].name : "invalid";
}

int64_t ggml_blck_size(ggml_type type) { return ggml_get_type_traits(type).blck_size; }
size_t ggml_type_size(ggml_type type) { return ggml_get_type_traits(type).type_size; }

size_t ggml_row_size(ggml_type type, int64_t ne) {
    const ggml_type_traits & t = ggml_get_type_traits(type);
    return t.blck_size ? t.type_size * size_t(ne / t.blck_size) : 0;
}

float ggml_fp16_to_fp32(ggml_fp16_t h) {
    const uint32_t sign = uint32_t(h & 0x8000u) << 16;
    const uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t mant = h & 0x3ffu;
    if (exp == 0x1f) return bits_float(sign | 0x7f800000u | (mant ? 0x400000u : 0u) | (mant << 13));  // inf / quiet NaN
    if (exp != 0) return bits_float(sign | ((exp + 112u) << 23) | (mant << 13));
    if (mant == 0) return bits_float(sign);  // signed zero
    // subnormal: normalise
    int e = -1;
    do { mant <<= 1; ++e; } while ((mant & 0x400u) == 0);
    mant &= 0x3ffu;
    return bits_float(sign | uint32_t(112 - e) << 23 | (mant << 13));
}

ggml_fp16_t ggml_fp32_to_fp16(float f) {
    const uint32_t x = float_bits(f);
    const uint32_t sign = (x >> 16) & 0x8000u;
    const uint32_t abs = x & 0x7fffffffu;
    if (abs > 0x7f800000u) return ggml_fp16_t(sign | 0x7e00u | ((abs >> 13) & 0x3ffu));  // NaN, quiet
    if (abs >= 0x477ff000u) return ggml_fp16_t(sign | 0x7c00u);  // rounds to >= 65520: inf
    if (abs < 0x38800000u) {
        // result is subnormal (or zero): value / 2^-24, rounded to nearest even
        if (abs < 0x33000000u) return ggml_fp16_t(sign);  // below half the smallest subnormal
        const uint32_t e = abs >> 23;
        const uint32_t m = (abs & 0x7fffffu) | 0x800000u;
        const uint32_t shift = 126u - e;  // 14 + (113 - e) - 1 … gives m >> (126 - e)
        const uint32_t q = m >> shift;
        const uint32_t rem = m & ((1u << shift) - 1u);
        const uint32_t half = 1u << (shift - 1u);
        const uint32_t r = q + ((rem > half || (rem == half && (q & 1u))) ? 1u : 0u);
        return ggml_fp16_t(sign | r);
    }
    // normal: rebias exponent, round mantissa to 10 bits (carry may bump the exponent)
    const uint32_t rebased = abs - (112u << 23);
    const uint32_t q = rebased >> 13;
    const uint32_t rem = rebased & 0x1fffu;
    const uint32_t r = q + ((rem > 0x1000u || (rem == 0x1000u && (q & 1u))) ? 1u : 0u);
    return ggml_fp16_t(sign | r);
}

float ggml_bf16_to_fp32(ggml_bf16_t h) { return bits_float(uint32_t(h) << 16); }

ggml_bf16_t ggml_fp32_to_bf16(float f) {
    const uint32_t x = float_bits(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) return ggml_bf16_t((x >> 16) | 0x40u);  // NaN stays NaN (quiet)
    const uint32_t r = x + 0x7fffu + ((x >> 16) & 1u);  // round to nearest even
    return ggml_bf16_t(r >> 16);
}

void ggml_fp16_to_fp32_row(const ggml_fp16_t * x, float * y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = ggml_fp16_to_fp32(x[i]);
}
void ggml_fp32_to_fp16_row(const float * x, ggml_fp16_t * y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = ggml_fp32_to_fp16(x[i]);
}
void ggml_bf16_to_fp32_row(const ggml_bf16_t * x, float * y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = ggml_bf16_to_fp32(x[i]);
}
void ggml_fp32_to_bf16_row(const float * x, ggml_bf16_t * y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = ggml_fp32_to_bf16(x[i]);
}
