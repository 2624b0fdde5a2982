// Quantization into the K-quant formats: the packers (the inverse of the element order
// documented in quants-k-dequant.cpp), the reference quantizers (ggml_quantize_row_*_ref) and the
// quality quantizers (ggml_quantize_q2_K … q6_K), and Q8_K for activations.
//
// Both kinds use the searches of quants-k-search-affine.cpp / quants-k-search-symmetric.cpp
// and minimise the (importance-weighted) squared error of the stored block; the quality effort
// searches further (codes and super-block scales). Values beyond what an F16 super-block scale
// can reach saturate; NaN or infinite inputs give a finite block.
#include "ggml/quants.h"
#include "quants-k-impl.h"

#include <cmath>
#include <cstring>

// ---------------------------------------------------------------- scale packing

void quants_k_pack_scale_min(const uint8_t * sc, const uint8_t * m, uint8_t * packed) {
    for (int j = 0; j < 4; ++j) {
        packed[j] = uint8_t(sc[j] & 63);
        packed[j + 4] = uint8_t(m[j] & 63);
    }
    for (int j = 4; j < 8; ++j) {
        packed[j + 4] = uint8_t((sc[j] & 0xF) | ((m[j] & 0xF) << 4));
        packed[j - 4] = uint8_t(packed[j - 4] | ((sc[j] >> 4) << 6));
        packed[j] = uint8_t(packed[j] | ((m[j] >> 4) << 6));
    }
}

void quants_k_pack_q3_scales(const int8_t * sc, uint8_t * packed) {
    std::memset(packed, 0, 12);
    for (int j = 0; j < 16; ++j) {
        const int u = (sc[j] + 32) & 63;
        if (j < 8) {
            packed[j] = uint8_t(packed[j] | (u & 0xF));
        } else {
            packed[j - 8] = uint8_t(packed[j - 8] | ((u & 0xF) << 4));
        }
        packed[8 + j % 4] = uint8_t(packed[8 + j % 4] | ((u >> 4) << (2 * (j / 4))));
    }
}

namespace {

// ---------------------------------------------------------------- block packers

void pack_q2_K(const quants_k_affine_fit & f, block_q2_K & b) {
    b.d = f.d;
    b.dmin = f.dmin;
    for (int j = 0; j < 16; ++j) b.scales[j] = uint8_t((f.sc[j] & 0xF) | ((f.m[j] & 0xF) << 4));
    std::memset(b.qs, 0, sizeof b.qs);
    for (int e = 0; e < QK_K; ++e) {
        b.qs[32 * (e / 128) + e % 32] |= uint8_t((f.q[e] & 3) << (2 * ((e % 128) / 32)));
    }
}

void pack_q3_K(const quants_k_symmetric_fit & f, block_q3_K & b) {
    b.d = f.d;
    quants_k_pack_q3_scales(f.sc, b.scales);
    std::memset(b.qs, 0, sizeof b.qs);
    std::memset(b.hmask, 0, sizeof b.hmask);
    for (int e = 0; e < QK_K; ++e) {
        const int u = f.q[e] + 4;  // 0..7: low 2 bits, and the high bit set for q >= 0
        b.qs[32 * (e / 128) + e % 32] |= uint8_t((u & 3) << (2 * ((e % 128) / 32)));
        b.hmask[e % 32] |= uint8_t((u >> 2) << (e / 32));
    }
}

void pack_q4_K(const quants_k_affine_fit & f, block_q4_K & b) {
    b.d = f.d;
    b.dmin = f.dmin;
    quants_k_pack_scale_min(f.sc, f.m, b.scales);
    std::memset(b.qs, 0, sizeof b.qs);
    for (int e = 0; e < QK_K; ++e) {
        b.qs[32 * (e / 64) + e % 32] |= uint8_t((f.q[e] & 0xF) << (4 * ((e % 64) / 32)));
    }
}

void pack_q5_K(const quants_k_affine_fit & f, block_q5_K & b) {
    b.d = f.d;
    b.dmin = f.dmin;
    quants_k_pack_scale_min(f.sc, f.m, b.scales);
    std::memset(b.qs, 0, sizeof b.qs);
    std::memset(b.qh, 0, sizeof b.qh);
    for (int e = 0; e < QK_K; ++e) {
        b.qs[32 * (e / 64) + e % 32] |= uint8_t((f.q[e] & 0xF) << (4 * ((e % 64) / 32)));
        b.qh[e % 32] |= uint8_t(((f.q[e] >> 4) & 1) << (e / 32));
    }
}

void pack_q6_K(const quants_k_symmetric_fit & f, block_q6_K & b) {
    b.d = f.d;
    for (int j = 0; j < 16; ++j) b.scales[j] = f.sc[j];
    std::memset(b.ql, 0, sizeof b.ql);
    std::memset(b.qh, 0, sizeof b.qh);
    for (int e = 0; e < QK_K; ++e) {
        const int u = f.q[e] + 32;  // 0..63
        b.ql[64 * (e / 128) + e % 64] |= uint8_t((u & 0xF) << (4 * ((e % 128) / 64)));
        b.qh[32 * (e / 128) + e % 32] |= uint8_t((u >> 4) << (2 * ((e % 128) / 32)));
    }
}

// ---------------------------------------------------------------- per-block quantizers

void quantize_block_q2_K(const float * x, const float * w, quants_k_effort effort, block_q2_K & b) {
    quants_k_affine_fit f;
    quants_k_fit_affine_superblock(x, w, quants_k_spec_q2_K, effort, &f);
    pack_q2_K(f, b);
}
void quantize_block_q3_K(const float * x, const float * w, quants_k_effort effort, block_q3_K & b) {
    quants_k_symmetric_fit f;
    quants_k_fit_symmetric_superblock(x, w, quants_k_spec_q3_K, effort, &f);
    pack_q3_K(f, b);
}
void quantize_block_q4_K(const float * x, const float * w, quants_k_effort effort, block_q4_K & b) {
    quants_k_affine_fit f;
    quants_k_fit_affine_superblock(x, w, quants_k_spec_q4_K, effort, &f);
    pack_q4_K(f, b);
}
void quantize_block_q5_K(const float * x, const float * w, quants_k_effort effort, block_q5_K & b) {
    quants_k_affine_fit f;
    quants_k_fit_affine_superblock(x, w, quants_k_spec_q5_K, effort, &f);
    pack_q5_K(f, b);
}
void quantize_block_q6_K(const float * x, const float * w, quants_k_effort effort, block_q6_K & b) {
    quants_k_symmetric_fit f;
    quants_k_fit_symmetric_superblock(x, w, quants_k_spec_q6_K, effort, &f);
    pack_q6_K(f, b);
}

const float * unit_weights() {
    static const struct ones {
        float v[QK_K];
        ones() {
            for (float & x : v) x = 1.0f;
        }
    } w;
    return w.v;
}

template <typename Block, void (*QuantizeBlock)(const float *, const float *, quants_k_effort, Block &)>
void quantize_row_ref(const float * x, Block * y, int64_t k) {
    for (int64_t i = 0; i < k / QK_K; ++i) QuantizeBlock(x + i * QK_K, unit_weights(), quants_k_effort::ref, y[i]);
}

// Error weights of one super-block from the importance matrix: the importance of each column
// (negative or NaN entries count as 0), plus a small share of the mean so that no sub-block
// is left without weight.
void importance_weights(const float * imatrix, float mean, float * w) {
    for (int e = 0; e < QK_K; ++e) {
        const float v = imatrix[e];
        w[e] = (v > 0 && std::isfinite(v) ? v : 0.0f) + 1e-6f * mean;
    }
}

float importance_mean(const float * imatrix, int64_t n) {
    double sum = 0;
    for (int64_t i = 0; i < n; ++i) {
        if (imatrix[i] > 0 && std::isfinite(imatrix[i])) sum += imatrix[i];
    }
    const float mean = n > 0 ? float(sum / double(n)) : 0.0f;
    return mean > 0 ? mean : 1.0f;
}

template <typename Block, void (*QuantizeBlock)(const float *, const float *, quants_k_effort, Block &)>
size_t quantize_rows(const float * src, void * dst, int64_t n_rows, int64_t n_per_row, const float * imatrix) {
    if (n_rows < 0 || n_per_row < 0 || n_per_row % QK_K != 0) return 0;
    const int64_t nb = n_per_row / QK_K;
    Block * out = static_cast<Block *>(dst);
    const float mean = imatrix ? importance_mean(imatrix, n_per_row) : 1.0f;
    float w[QK_K];
    for (int64_t r = 0; r < n_rows; ++r) {
        for (int64_t i = 0; i < nb; ++i) {
            const float * wi = unit_weights();
            if (imatrix) {
                importance_weights(imatrix + i * QK_K, mean, w);
                wi = w;
            }
            QuantizeBlock(src + r * n_per_row + i * QK_K, wi, quants_k_effort::quality, out[r * nb + i]);
        }
    }
    return size_t(n_rows) * size_t(nb) * sizeof(Block);
}

}  // namespace

// ---------------------------------------------------------------- public entry points

void ggml_quantize_row_q2_K_ref(const float * x, block_q2_K * y, int64_t k) {
    quantize_row_ref<block_q2_K, quantize_block_q2_K>(x, y, k);
}
void ggml_quantize_row_q3_K_ref(const float * x, block_q3_K * y, int64_t k) {
    quantize_row_ref<block_q3_K, quantize_block_q3_K>(x, y, k);
}
void ggml_quantize_row_q4_K_ref(const float * x, block_q4_K * y, int64_t k) {
    quantize_row_ref<block_q4_K, quantize_block_q4_K>(x, y, k);
}
void ggml_quantize_row_q5_K_ref(const float * x, block_q5_K * y, int64_t k) {
    quantize_row_ref<block_q5_K, quantize_block_q5_K>(x, y, k);
}
void ggml_quantize_row_q6_K_ref(const float * x, block_q6_K * y, int64_t k) {
    quantize_row_ref<block_q6_K, quantize_block_q6_K>(x, y, k);
}

size_t ggml_quantize_q2_K(const float * src, void * dst, int64_t n_rows, int64_t n_per_row, const float * imatrix) {
    return quantize_rows<block_q2_K, quantize_block_q2_K>(src, dst, n_rows, n_per_row, imatrix);
}
size_t ggml_quantize_q3_K(const float * src, void * dst, int64_t n_rows, int64_t n_per_row, const float * imatrix) {
    return quantize_rows<block_q3_K, quantize_block_q3_K>(src, dst, n_rows, n_per_row, imatrix);
}
size_t ggml_quantize_q4_K(const float * src, void * dst, int64_t n_rows, int64_t n_per_row, const float * imatrix) {
    return quantize_rows<block_q4_K, quantize_block_q4_K>(src, dst, n_rows, n_per_row, imatrix);
}
size_t ggml_quantize_q5_K(const float * src, void * dst, int64_t n_rows, int64_t n_per_row, const float * imatrix) {
    return quantize_rows<block_q5_K, quantize_block_q5_K>(src, dst, n_rows, n_per_row, imatrix);
}
size_t ggml_quantize_q6_K(const float * src, void * dst, int64_t n_rows, int64_t n_per_row, const float * imatrix) {
    return quantize_rows<block_q6_K, quantize_block_q6_K>(src, dst, n_rows, n_per_row, imatrix);
}

// Q8_K (activations): the element of largest magnitude maps to -128 (d = -max / 128, with the
// sign of that element), every other one to round(x / d) clamped to 127; bsums are the sums of
// each 16 quants. An all-zero block gives d = 0.
void ggml_quantize_row_q8_K_ref(const float * x, block_q8_K * y, int64_t k) {
    for (int64_t i = 0; i < k / QK_K; ++i) {
        const float * xb = x + i * QK_K;
        block_q8_K & b = y[i];
        float amax = 0, max = 0;
        for (int j = 0; j < QK_K; ++j) {
            if (std::fabs(xb[j]) > amax) {
                amax = std::fabs(xb[j]);
                max = xb[j];
            }
        }
        if (!(amax > 0) || !std::isfinite(amax)) {
            b.d = 0;
            std::memset(b.qs, 0, sizeof b.qs);
            std::memset(b.bsums, 0, sizeof b.bsums);
            continue;
        }
        const float iscale = -128.0f / max;
        if (!std::isfinite(iscale)) {  // |max| below ~1e-38: the block is zero to within that
            b.d = 0;
            std::memset(b.qs, 0, sizeof b.qs);
            std::memset(b.bsums, 0, sizeof b.bsums);
            continue;
        }
        for (int j = 0; j < QK_K; ++j) b.qs[j] = int8_t(quants_k_round_clamp(iscale * xb[j], -128, 127));
        for (int g = 0; g < QK_K / 16; ++g) {
            int sum = 0;
            for (int l = 0; l < 16; ++l) sum += b.qs[16 * g + l];
            b.bsums[g] = int16_t(sum);
        }
        b.d = 1.0f / iscale;
    }
}
