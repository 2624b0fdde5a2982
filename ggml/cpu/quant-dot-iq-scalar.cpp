// Scalar reference dot kernels of the codebook formats (see quant-dot.h): IQ4_NL x Q8_0,
// MXFP4 x Q8_0, IQ4_XS x Q8_K.
//
// The weight indices are looked up in their int8 codebook, the products with the activation
// codes are summed exactly in integers per block (IQ4_XS: per sub-block, weighted by the integer
// sub-block scales ls - 32), and only then scaled:
//   IQ4_NL x Q8_0:  sum += (d_a * d_b) * sum_j codebook[q_j] * b_j
//   MXFP4  x Q8_0:  sum += (d_b * sum_j codebook[q_j] * b_j) * 2^(e - 128)   (codebook doubled)
//   IQ4_XS x Q8_K:  sum += (y.d * d) * sum_ib (ls_ib - 32) * sum_j codebook[q_j] * b_j
// The SIMD kernels compute the same integer sums and may only differ in the order of the float
// operations.
#include "quant-dot.h"

#include "ggml/quants.h"

namespace {

// sum_j codebook[q_j] * y_j over 32 elements whose indices are nibbles of qs (Q4_0 layout).
int32_t dot_nibbles(const int8_t * codebook, const uint8_t * qs, const int8_t * y) {
    int32_t s = 0;
    for (int j = 0; j < 16; ++j) {
        s += int32_t(codebook[qs[j] & 0x0F]) * int32_t(y[j]);
        s += int32_t(codebook[qs[j] >> 4]) * int32_t(y[j + 16]);
    }
    return s;
}

struct dot_iq4_nl {
    using weight = block_iq4_nl;
    using act = block_q8_0;
    static constexpr int qk = QK4_NL;
    static float block(const weight & x, const act & y) {
        const int32_t s = dot_nibbles(ggml_iq4nl_codebook, x.qs, y.qs);
        return (ggml_fp16_to_fp32(x.d) * ggml_fp16_to_fp32(y.d)) * float(s);
    }
};

struct dot_mxfp4 {
    using weight = block_mxfp4;
    using act = block_q8_0;
    static constexpr int qk = QK_MXFP4;
    static float block(const weight & x, const act & y) {
        const int32_t s = dot_nibbles(ggml_mxfp4_codebook, x.qs, y.qs);
        return (ggml_fp16_to_fp32(y.d) * float(s)) * ggml_e8m0_to_fp32_half(x.e);
    }
};

struct dot_iq4_xs {
    using weight = block_iq4_xs;
    using act = block_q8_K;
    static constexpr int qk = QK_K;
    static float block(const weight & x, const act & y) {
        int32_t s = 0;
        for (int ib = 0; ib < QK_K / 32; ++ib) {
            const int lo = (x.scales_l[ib / 2] >> (4 * (ib % 2))) & 0xF;
            const int hi = (x.scales_h >> (2 * ib)) & 3;
            s += ((lo | hi << 4) - 32) * dot_nibbles(ggml_iq4nl_codebook, x.qs + 16 * ib, y.qs + 32 * ib);
        }
        return (y.d * ggml_fp16_to_fp32(x.d)) * float(s);
    }
};

template <typename D>
void dot_rows(int64_t k, const void * a, size_t lda, int64_t nr, const void * b, size_t ldb, int64_t nc, float * y,
              int64_t ldy) {
    const int64_t nb = k / D::qk;
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

void ggml_dot_iq4_nl_q8_0_scalar(int64_t k, const void * a, size_t lda, int64_t nr, const void * b, size_t ldb,
                                 int64_t nc, float * y, int64_t ldy) {
    dot_rows<dot_iq4_nl>(k, a, lda, nr, b, ldb, nc, y, ldy);
}

void ggml_dot_mxfp4_q8_0_scalar(int64_t k, const void * a, size_t lda, int64_t nr, const void * b, size_t ldb,
                                int64_t nc, float * y, int64_t ldy) {
    dot_rows<dot_mxfp4>(k, a, lda, nr, b, ldb, nc, y, ldy);
}

void ggml_dot_iq4_xs_q8_K_scalar(int64_t k, const void * a, size_t lda, int64_t nr, const void * b, size_t ldb,
                                 int64_t nc, float * y, int64_t ldy) {
    dot_rows<dot_iq4_xs>(k, a, lda, nr, b, ldb, nc, y, ldy);
}
