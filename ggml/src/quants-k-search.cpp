// Primitives shared by the K-quant scale searches: rounding and F16 super-block scales.
#include "quants-k-impl.h"

#include "ggml/types.h"

#include <cstring>

int quants_k_round_clamp(float v, int lo, int hi) {
    if (!(v > float(lo))) return lo;  // also NaN
    if (v >= float(hi)) return hi;
    // |v| < 2^22 here: adding 1.5 * 2^23 leaves the rounded integer (ties to even) in the
    // low mantissa bits.
    const float t = v + 12582912.0f;
    uint32_t bits;
    std::memcpy(&bits, &t, sizeof bits);
    return int(bits & 0x7fffffu) - 0x400000;
}

uint16_t quants_k_to_fp16(float v, float * decoded) {
    if (!(v == v)) v = 0.0f;
    if (v > 65504.0f) v = 65504.0f;
    if (v < -65504.0f) v = -65504.0f;
    const uint16_t h = ggml_fp32_to_fp16(v);
    *decoded = ggml_fp16_to_fp32(h);
    return h;
}
