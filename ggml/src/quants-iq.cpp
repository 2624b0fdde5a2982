// IQ4_NL, IQ4_XS and MXFP4: dequantization (bit-exact with the readers of the established
// engines) and the round-to-nearest reference quantizers.
//
// Formula shapes matter for bit-exactness (one float rounding per element, no fused multiply-add:
// the build is ISO C++, so the compiler does not contract):
//   IQ4_NL  y = d * float(codebook[q])                      d widened from fp16
//   IQ4_XS  y = (d * float(ls - 32)) * float(codebook[q])   the sub-block scale rounded first
//   MXFP4   y = float(codebook[q]) * 2^(e - 128)             exact (or infinite for e = 255)
//
// The reference quantizers give finite blocks for any input: scales are clamped to the fp16
// range, NaN elements quantize to the codebook value nearest 0, infinities saturate.
#include "quants-iq-impl.h"
#include "quants-legacy-impl.h"

#include "ggml/quants.h"

#include <array>
#include <cmath>
#include <cstring>

namespace {

// See quants_iq4_nearest_table (quants-iq-impl.h).
constexpr std::array<uint8_t, 512> make_iq4_table() {
    std::array<uint8_t, 512> t{};
    for (int k = -256; k < 256; ++k) {
        // the cell of v = k / 2: compare 2 v with the doubled midpoints
        int idx = 0;
        for (int i = 0; i < 15; ++i) {
            if (k > ggml_iq4nl_codebook[i] + ggml_iq4nl_codebook[i + 1]) idx = i + 1;
        }
        t[size_t(k + 256)] = uint8_t(idx);
    }
    return t;
}

float bits_float(uint32_t u) {
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}

// Signed value of largest magnitude (the first one on ties) and that magnitude; NaN ignored,
// an infinity counts as the largest finite float.
float signed_absmax(const float * x, int n, float & amax) {
    float max = 0.0f;
    amax = 0.0f;
    for (int j = 0; j < n; ++j) {
        float v = x[j];
        if (std::isinf(v)) v = v > 0 ? 3.40282347e38f : -3.40282347e38f;
        const float a = std::fabs(v);
        if (amax < a) {
            amax = a;
            max = v;
        }
    }
    return max;
}

float inverse_or_zero(float d) {
    if (d == 0.0f) return 0.0f;
    const float id = 1.0f / d;
    return std::isfinite(id) ? id : 0.0f;
}

// Codebook indices of n elements for the stored scale d (decoded): each the nearest value.
void iq4_levels(const float * x, int n, float d, uint8_t * idx) {
    const float id = inverse_or_zero(d);
    for (int j = 0; j < n; ++j) idx[j] = uint8_t(quants_iq4_nearest(x[j] * id));
}

}  // namespace

const std::array<uint8_t, 512> quants_iq4_nearest_table = make_iq4_table();

int quants_mxfp4_nearest(float v) {
    if (!(v == v)) return 0;
    const float a = std::fabs(v);
    // midpoints of {0, 1, 2, 3, 4, 6, 8, 12}
    int m = 0;
    m += a > 0.5f;
    m += a > 1.5f;
    m += a > 2.5f;
    m += a > 3.5f;
    m += a > 5.0f;
    m += a > 7.0f;
    m += a > 10.0f;
    return m != 0 && v < 0 ? m | 8 : m;
}

void quants_iq4_xs_unpack_scales(const block_iq4_xs & b, int * ls) {
    for (int ib = 0; ib < QK_K / 32; ++ib) {
        const int lo = (b.scales_l[ib / 2] >> (4 * (ib % 2))) & 0xF;
        const int hi = (b.scales_h >> (2 * ib)) & 3;
        ls[ib] = lo | hi << 4;
    }
}

void quants_iq4_xs_pack_scales(const int * ls, block_iq4_xs & b) {
    uint16_t h = 0;
    for (int j = 0; j < QK_K / 64; ++j) b.scales_l[j] = uint8_t((ls[2 * j] & 0xF) | (ls[2 * j + 1] & 0xF) << 4);
    for (int ib = 0; ib < QK_K / 32; ++ib) h = uint16_t(h | ((ls[ib] >> 4) & 3) << (2 * ib));
    b.scales_h = h;
}

float ggml_e8m0_to_fp32_half(uint8_t e) {
    // 2^(e - 128): subnormal for e = 0 (bit 21) and e = 1 (bit 22), else exponent field e - 1
    return bits_float(e < 2 ? uint32_t(0x00200000u) << e : uint32_t(e - 1) << 23);
}

// ---- dequantization ----

void ggml_dequantize_row_iq4_nl(const block_iq4_nl * x, float * y, int64_t k) {
    for (int64_t i = 0; i < k / QK4_NL; ++i, y += QK4_NL) {
        const float d = ggml_fp16_to_fp32(x[i].d);
        for (int j = 0; j < QK4_NL / 2; ++j) {
            y[j] = d * float(ggml_iq4nl_codebook[x[i].qs[j] & 0x0F]);
            y[j + QK4_NL / 2] = d * float(ggml_iq4nl_codebook[x[i].qs[j] >> 4]);
        }
    }
}

void ggml_dequantize_row_iq4_xs(const block_iq4_xs * x, float * y, int64_t k) {
    for (int64_t i = 0; i < k / QK_K; ++i) {
        const float d = ggml_fp16_to_fp32(x[i].d);
        int ls[QK_K / 32];
        quants_iq4_xs_unpack_scales(x[i], ls);
        for (int ib = 0; ib < QK_K / 32; ++ib, y += 32) {
            const float dl = d * float(ls[ib] - 32);
            const uint8_t * qs = x[i].qs + 16 * ib;
            for (int j = 0; j < 16; ++j) {
                y[j] = dl * float(ggml_iq4nl_codebook[qs[j] & 0x0F]);
                y[j + 16] = dl * float(ggml_iq4nl_codebook[qs[j] >> 4]);
            }
        }
    }
}

void ggml_dequantize_row_mxfp4(const block_mxfp4 * x, float * y, int64_t k) {
    for (int64_t i = 0; i < k / QK_MXFP4; ++i, y += QK_MXFP4) {
        const float d = ggml_e8m0_to_fp32_half(x[i].e);
        for (int j = 0; j < QK_MXFP4 / 2; ++j) {
            y[j] = float(ggml_mxfp4_codebook[x[i].qs[j] & 0x0F]) * d;
            y[j + QK_MXFP4 / 2] = float(ggml_mxfp4_codebook[x[i].qs[j] >> 4]) * d;
        }
    }
}

// ---- reference quantization ----

void ggml_quantize_row_iq4_nl_ref(const float * x, block_iq4_nl * y, int64_t k) {
    uint8_t idx[QK4_NL];
    for (int64_t i = 0; i < k / QK4_NL; ++i, x += QK4_NL) {
        float amax = 0.0f;
        const float max = signed_absmax(x, QK4_NL, amax);
        const float d = quants_legacy_clamp_fp16_range(max / float(ggml_iq4nl_codebook[0]));
        y[i].d = ggml_fp32_to_fp16(d);
        iq4_levels(x, QK4_NL, ggml_fp16_to_fp32(y[i].d), idx);
        quants_legacy_pack_nibbles(idx, y[i].qs);
    }
}

void ggml_quantize_row_iq4_xs_ref(const float * x, block_iq4_xs * y, int64_t k) {
    constexpr int n_sub = QK_K / 32;
    uint8_t idx[32];
    for (int64_t i = 0; i < k / QK_K; ++i, x += QK_K) {
        float s[n_sub];
        float s_ref = 0.0f;
        for (int ib = 0; ib < n_sub; ++ib) {
            float amax = 0.0f;
            s[ib] = signed_absmax(x + 32 * ib, 32, amax) / float(ggml_iq4nl_codebook[0]);
            if (std::fabs(s[ib]) > std::fabs(s_ref)) s_ref = s[ib];
        }
        y[i].d = ggml_fp32_to_fp16(quants_legacy_clamp_fp16_range(s_ref / -32.0f));
        const float d = ggml_fp16_to_fp32(y[i].d);
        const float id = inverse_or_zero(d);
        int ls[n_sub];
        for (int ib = 0; ib < n_sub; ++ib) {
            float l = std::nearbyint(s[ib] * id);  // ties to even
            l = l < -32.0f ? -32.0f : l > 31.0f ? 31.0f : l;
            ls[ib] = int(l) + 32;
            iq4_levels(x + 32 * ib, 32, d * float(ls[ib] - 32), idx);
            quants_legacy_pack_nibbles(idx, y[i].qs + 16 * ib);
        }
        quants_iq4_xs_pack_scales(ls, y[i]);
    }
}

void ggml_quantize_row_mxfp4_ref(const float * x, block_mxfp4 * y, int64_t k) {
    for (int64_t i = 0; i < k / QK_MXFP4; ++i, x += QK_MXFP4) {
        float amax = 0.0f;
        signed_absmax(x, QK_MXFP4, amax);
        int e = 0;
        if (amax > 0.0f) {
            int ex = 0;
            std::frexp(amax, &ex);          // amax = m 2^ex, m in [0.5, 1): floor(log2 amax) = ex - 1
            e = (ex - 1) - 2 + 127;
            e = e < 0 ? 0 : e > 254 ? 254 : e;
        }
        y[i].e = uint8_t(e);
        uint8_t q[QK_MXFP4];
        for (int j = 0; j < QK_MXFP4; ++j) {
            float v = x[j];
            if (std::isinf(v)) v = v > 0 ? 3.40282347e38f : -3.40282347e38f;
            q[j] = uint8_t(quants_mxfp4_nearest(std::ldexp(v, 128 - e)));  // v / 2^(e - 128), exact
        }
        quants_legacy_pack_nibbles(q, y[i].qs);
    }
}
