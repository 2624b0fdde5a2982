// Scalar reference dot kernels of the 32-element formats (see quant-dot.h).
//
// Per block the weight codes are decoded to integers, the products with the activation codes
// are summed exactly, and only then scaled:
//   Q4_0, Q5_0, Q8_0 x Q8_0:  sum += (d_a * d_b) * sum_j (q_a[j] - zero) * q_b[j]
//   Q4_1, Q5_1 x Q8_1:        sum += (d_a * d_b) * sum_j q_a[j] * q_b[j] + m_a * s_b
// (zero = 8, 16, 0; s_b is the block's stored d_b * sum_j q_b[j]). The SIMD kernels compute the
// same integer sums and may only differ in the order of the float additions.
#include "quant-dot.h"

#include "ggml/quants.h"

namespace {

constexpr int k_qk = 32;  // elements per block (all five formats and both partners)

// The 32 codes of one block as integers: low nibbles are elements 0..15, high nibbles 16..31;
// bit 4 of element j (Q5 formats) is bit j of qh (little-endian).
void decode_nibbles(const uint8_t * qs, int zero, int32_t * q) {
    for (int j = 0; j < k_qk / 2; ++j) {
        q[j] = int32_t(qs[j] & 0x0F) - zero;
        q[j + k_qk / 2] = int32_t(qs[j] >> 4) - zero;
    }
}

void decode_nibbles_high(const uint8_t * qs, const uint8_t * qh, int zero, int32_t * q) {
    const uint32_t h = uint32_t(qh[0]) | uint32_t(qh[1]) << 8 | uint32_t(qh[2]) << 16 | uint32_t(qh[3]) << 24;
    for (int j = 0; j < k_qk / 2; ++j) {
        q[j] = int32_t((qs[j] & 0x0F) | ((h >> j) & 1u) << 4) - zero;
        q[j + k_qk / 2] = int32_t((qs[j] >> 4) | ((h >> (j + k_qk / 2)) & 1u) << 4) - zero;
    }
}

int32_t dot_codes(const int32_t * q, const int8_t * y) {
    int32_t s = 0;
    for (int j = 0; j < k_qk; ++j) s += q[j] * int32_t(y[j]);
    return s;
}

// One block of each weight format against its partner block.
struct dot_q4_0 {
    using weight = block_q4_0;
    using act = block_q8_0;
    static float block(const weight & x, const act & y) {
        int32_t q[k_qk];
        decode_nibbles(x.qs, 8, q);
        return (ggml_fp16_to_fp32(x.d) * ggml_fp16_to_fp32(y.d)) * float(dot_codes(q, y.qs));
    }
};

struct dot_q4_1 {
    using weight = block_q4_1;
    using act = block_q8_1;
    static float block(const weight & x, const act & y) {
        int32_t q[k_qk];
        decode_nibbles(x.qs, 0, q);
        return (ggml_fp16_to_fp32(x.d) * ggml_fp16_to_fp32(y.d)) * float(dot_codes(q, y.qs)) +
               ggml_fp16_to_fp32(x.m) * ggml_fp16_to_fp32(y.s);
    }
};

struct dot_q5_0 {
    using weight = block_q5_0;
    using act = block_q8_0;
    static float block(const weight & x, const act & y) {
        int32_t q[k_qk];
        decode_nibbles_high(x.qs, x.qh, 16, q);
        return (ggml_fp16_to_fp32(x.d) * ggml_fp16_to_fp32(y.d)) * float(dot_codes(q, y.qs));
    }
};

struct dot_q5_1 {
    using weight = block_q5_1;
    using act = block_q8_1;
    static float block(const weight & x, const act & y) {
        int32_t q[k_qk];
        decode_nibbles_high(x.qs, x.qh, 0, q);
        return (ggml_fp16_to_fp32(x.d) * ggml_fp16_to_fp32(y.d)) * float(dot_codes(q, y.qs)) +
               ggml_fp16_to_fp32(x.m) * ggml_fp16_to_fp32(y.s);
    }
};

struct dot_q8_0 {
    using weight = block_q8_0;
    using act = block_q8_0;
    static float block(const weight & x, const act & y) {
        int32_t q[k_qk];
        for (int j = 0; j < k_qk; ++j) q[j] = x.qs[j];
        return (ggml_fp16_to_fp32(x.d) * ggml_fp16_to_fp32(y.d)) * float(dot_codes(q, y.qs));
    }
};

template <typename D>
void dot_rows(int64_t k, const void * a, size_t lda, int64_t nr, const void * b, size_t ldb, int64_t nc, float * y,
              int64_t ldy) {
    const int64_t nb = k / k_qk;
    const char * pa = static_cast<const char *>(a);
    const char * pb = static_cast<const char *>(b);
    for (int64_t c = 0; c < nc; ++c) {
        const auto * yb = reinterpret_cast<const typename D::act *>(pb + size_t(c) * ldb);
        for (int64_t r = 0; r < nr; ++r) {
            const auto * xb = reinterpret_cast<const typename D::weight *>(pa + size_t(r) * lda);
            float s = 0.0f;
            for (int64_t i = 0; i < nb; ++i) s += D::block(xb[i], yb[i]);
            y[c * ldy + r] = s;
        }
    }
}

}  // namespace

void ggml_dot_q4_0_q8_0_scalar(int64_t k, const void * a, size_t lda, int64_t nr, const void * b, size_t ldb,
                               int64_t nc, float * y, int64_t ldy) {
    dot_rows<dot_q4_0>(k, a, lda, nr, b, ldb, nc, y, ldy);
}

void ggml_dot_q4_1_q8_1_scalar(int64_t k, const void * a, size_t lda, int64_t nr, const void * b, size_t ldb,
                               int64_t nc, float * y, int64_t ldy) {
    dot_rows<dot_q4_1>(k, a, lda, nr, b, ldb, nc, y, ldy);
}

void ggml_dot_q5_0_q8_0_scalar(int64_t k, const void * a, size_t lda, int64_t nr, const void * b, size_t ldb,
                               int64_t nc, float * y, int64_t ldy) {
    dot_rows<dot_q5_0>(k, a, lda, nr, b, ldb, nc, y, ldy);
}

void ggml_dot_q5_1_q8_1_scalar(int64_t k, const void * a, size_t lda, int64_t nr, const void * b, size_t ldb,
                               int64_t nc, float * y, int64_t ldy) {
    dot_rows<dot_q5_1>(k, a, lda, nr, b, ldb, nc, y, ldy);
}

void ggml_dot_q8_0_q8_0_scalar(int64_t k, const void * a, size_t lda, int64_t nr, const void * b, size_t ldb,
                               int64_t nc, float * y, int64_t ldy) {
    dot_rows<dot_q8_0>(k, a, lda, nr, b, ldb, nc, y, ldy);
}
