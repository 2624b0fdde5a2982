// Scalar reference dot kernels of the K-quants against Q8_K activations (see quant-dot.h).
//
// Per super-block: the weight codes are decoded to small integers, the products with the Q8_K
// codes are summed exactly in integers per sub-block, weighted by the integer sub-block scales,
// and only then scaled by the float super-block factors:
//   Q2_K, Q4_K, Q5_K:  sum += y.d * d * sum_s(sc_s * dot_s) - y.d * dmin * sum_s(m_s * ysum_s)
//   Q3_K, Q6_K:        sum += y.d * d * sum_s(sc_s * dot_s)      (codes already centred)
// where dot_s is the integer dot product of sub-block s and ysum_s the sum of its Q8_K codes.
// Element order of each format: see ggml/src/quants-k-dequant.cpp.
#include "quant-dot.h"

#include "ggml/quants.h"


namespace {

using ggml_dot_block_fn = float (*)(const void * x, const block_q8_K & y);

// Integer dot products of n consecutive codes.
int32_t dot_codes(const int8_t * q, const int8_t * y, int n) {
    int32_t s = 0;
    for (int i = 0; i < n; ++i) s += int32_t(q[i]) * int32_t(y[i]);
    return s;
}

int32_t sum_codes(const int8_t * y, int n) {
    int32_t s = 0;
    for (int i = 0; i < n; ++i) s += y[i];
    return s;
}

// The 8 6-bit scales and 8 6-bit mins of Q4_K / Q5_K (12 packed bytes).
void unpack_scale_min_k4(const uint8_t * p, int32_t * sc, int32_t * m) {
    for (int j = 0; j < 4; ++j) {
        sc[j] = p[j] & 63;
        m[j] = p[j + 4] & 63;
        sc[j + 4] = (p[j + 8] & 0xF) | ((p[j] >> 6) << 4);
        m[j + 4] = (p[j + 8] >> 4) | ((p[j + 4] >> 6) << 4);
    }
}

// Weighted sums over sub-blocks of n codes: sum_s sc_s * dot_s and sum_s m_s * ysum_s.
void weighted_sums(const int8_t * q, const int8_t * y, int n, int n_sub, const int32_t * sc, const int32_t * m,
                   int32_t & isum, int32_t & imin) {
    isum = 0;
    imin = 0;
    for (int s = 0; s < n_sub; ++s) {
        isum += sc[s] * dot_codes(q + s * n, y + s * n, n);
        if (m) imin += m[s] * sum_codes(y + s * n, n);
    }
}

float dot_block_q2_K(const void * xv, const block_q8_K & y) {
    const block_q2_K & x = *static_cast<const block_q2_K *>(xv);
    int8_t q[QK_K];
    for (int e = 0; e < QK_K; ++e) q[e] = int8_t((x.qs[32 * (e / 128) + e % 32] >> (2 * ((e % 128) / 32))) & 3);
    int32_t sc[16], m[16];
    for (int s = 0; s < 16; ++s) {
        sc[s] = x.scales[s] & 0xF;
        m[s] = x.scales[s] >> 4;
    }
    int32_t isum, imin;
    weighted_sums(q, y.qs, 16, 16, sc, m, isum, imin);
    return y.d * ggml_fp16_to_fp32(x.d) * float(isum) - y.d * ggml_fp16_to_fp32(x.dmin) * float(imin);
}

float dot_block_q3_K(const void * xv, const block_q8_K & y) {
    const block_q3_K & x = *static_cast<const block_q3_K *>(xv);
    int8_t q[QK_K];
    for (int e = 0; e < QK_K; ++e) {
        const int lo = (x.qs[32 * (e / 128) + e % 32] >> (2 * ((e % 128) / 32))) & 3;
        const int hi = (x.hmask[e % 32] >> (e / 32)) & 1;
        q[e] = int8_t(lo - (hi ? 0 : 4));
    }
    int32_t sc[16];
    for (int j = 0; j < 16; ++j) {
        const int lo = j < 8 ? (x.scales[j] & 0xF) : (x.scales[j - 8] >> 4);
        const int hi = (x.scales[8 + j % 4] >> (2 * (j / 4))) & 3;
        sc[j] = (lo | (hi << 4)) - 32;
    }
    int32_t isum, imin;
    weighted_sums(q, y.qs, 16, 16, sc, nullptr, isum, imin);
    return y.d * ggml_fp16_to_fp32(x.d) * float(isum);
}

float dot_block_q4_K(const void * xv, const block_q8_K & y) {
    const block_q4_K & x = *static_cast<const block_q4_K *>(xv);
    int8_t q[QK_K];
    for (int e = 0; e < QK_K; ++e) {
        const uint8_t b = x.qs[32 * (e / 64) + e % 32];
        q[e] = int8_t((e % 64) < 32 ? (b & 0xF) : (b >> 4));
    }
    int32_t sc[8], m[8];
    unpack_scale_min_k4(x.scales, sc, m);
    int32_t isum, imin;
    weighted_sums(q, y.qs, 32, 8, sc, m, isum, imin);
    return y.d * ggml_fp16_to_fp32(x.d) * float(isum) - y.d * ggml_fp16_to_fp32(x.dmin) * float(imin);
}

float dot_block_q5_K(const void * xv, const block_q8_K & y) {
    const block_q5_K & x = *static_cast<const block_q5_K *>(xv);
    int8_t q[QK_K];
    for (int e = 0; e < QK_K; ++e) {
        const uint8_t b = x.qs[32 * (e / 64) + e % 32];
        const int lo = (e % 64) < 32 ? (b & 0xF) : (b >> 4);
        const int hi = (x.qh[e % 32] >> (e / 32)) & 1;
        q[e] = int8_t(lo | (hi << 4));
    }
    int32_t sc[8], m[8];
    unpack_scale_min_k4(x.scales, sc, m);
    int32_t isum, imin;
    weighted_sums(q, y.qs, 32, 8, sc, m, isum, imin);
    return y.d * ggml_fp16_to_fp32(x.d) * float(isum) - y.d * ggml_fp16_to_fp32(x.dmin) * float(imin);
}

float dot_block_q6_K(const void * xv, const block_q8_K & y) {
    const block_q6_K & x = *static_cast<const block_q6_K *>(xv);
    int8_t q[QK_K];
    for (int e = 0; e < QK_K; ++e) {
        const uint8_t l = x.ql[64 * (e / 128) + e % 64];
        const int lo = (e % 128) < 64 ? (l & 0xF) : (l >> 4);
        const int hi = (x.qh[32 * (e / 128) + e % 32] >> (2 * ((e % 128) / 32))) & 3;
        q[e] = int8_t((lo | (hi << 4)) - 32);
    }
    int32_t sc[16];
    for (int s = 0; s < 16; ++s) sc[s] = x.scales[s];
    int32_t isum, imin;
    weighted_sums(q, y.qs, 16, 16, sc, nullptr, isum, imin);
    return y.d * ggml_fp16_to_fp32(x.d) * float(isum);
}

// The ggml_mul_mat_dot_fn contract over blocks of block_bytes weight bytes.
void dot_rows(ggml_dot_block_fn dot_block, size_t block_bytes, int64_t k, const void * a, size_t lda, int64_t nr,
              const void * b, size_t ldb, int64_t nc, float * y, int64_t ldy) {
    const int64_t nb = k / QK_K;
    for (int64_t c = 0; c < nc; ++c) {
        const block_q8_K * yb = reinterpret_cast<const block_q8_K *>(static_cast<const char *>(b) + c * ldb);
        for (int64_t r = 0; r < nr; ++r) {
            const char * xr = static_cast<const char *>(a) + r * lda;
            float sum = 0.0f;
            for (int64_t i = 0; i < nb; ++i) sum += dot_block(xr + i * block_bytes, yb[i]);
            y[c * ldy + r] = sum;
        }
    }
}

}  // namespace

void ggml_dot_q2_K_q8_K_scalar(int64_t k, const void * a, size_t lda, int64_t nr, const void * b, size_t ldb,
                               int64_t nc, float * y, int64_t ldy) {
    dot_rows(dot_block_q2_K, sizeof(block_q2_K), k, a, lda, nr, b, ldb, nc, y, ldy);
}

void ggml_dot_q3_K_q8_K_scalar(int64_t k, const void * a, size_t lda, int64_t nr, const void * b, size_t ldb,
                               int64_t nc, float * y, int64_t ldy) {
    dot_rows(dot_block_q3_K, sizeof(block_q3_K), k, a, lda, nr, b, ldb, nc, y, ldy);
}

void ggml_dot_q4_K_q8_K_scalar(int64_t k, const void * a, size_t lda, int64_t nr, const void * b, size_t ldb,
                               int64_t nc, float * y, int64_t ldy) {
    dot_rows(dot_block_q4_K, sizeof(block_q4_K), k, a, lda, nr, b, ldb, nc, y, ldy);
}

void ggml_dot_q5_K_q8_K_scalar(int64_t k, const void * a, size_t lda, int64_t nr, const void * b, size_t ldb,
                               int64_t nc, float * y, int64_t ldy) {
    dot_rows(dot_block_q5_K, sizeof(block_q5_K), k, a, lda, nr, b, ldb, nc, y, ldy);
}

void ggml_dot_q6_K_q8_K_scalar(int64_t k, const void * a, size_t lda, int64_t nr, const void * b, size_t ldb,
                               int64_t nc, float * y, int64_t ldy) {
    dot_rows(dot_block_q6_K, sizeof(block_q6_K), k, a, lda, nr, b, ldb, nc, y, ldy);
}
