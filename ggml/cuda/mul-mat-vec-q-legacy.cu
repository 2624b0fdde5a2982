// Quantized mat-vec kernels of the 32-element formats (Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, IQ4_NL,
// MXFP4), and the dispatch over every quantized type (the K-quants live in mul-mat-vec-q-k.cu).
#include "mul-mat-vec-q.cuh"

bool mmvq_launch(ggml_type t, const mmv_params & p, int64_t n_cols, cudaStream_t stream) {
    switch (t) {
        case GGML_TYPE_Q4_0: mmvq_launch_type<GGML_TYPE_Q4_0>(p, n_cols, stream); return true;
        case GGML_TYPE_Q4_1: mmvq_launch_type<GGML_TYPE_Q4_1>(p, n_cols, stream); return true;
        case GGML_TYPE_Q5_0: mmvq_launch_type<GGML_TYPE_Q5_0>(p, n_cols, stream); return true;
        case GGML_TYPE_Q5_1: mmvq_launch_type<GGML_TYPE_Q5_1>(p, n_cols, stream); return true;
        case GGML_TYPE_Q8_0: mmvq_launch_type<GGML_TYPE_Q8_0>(p, n_cols, stream); return true;
        case GGML_TYPE_IQ4_NL: mmvq_launch_type<GGML_TYPE_IQ4_NL>(p, n_cols, stream); return true;
        case GGML_TYPE_MXFP4: mmvq_launch_type<GGML_TYPE_MXFP4>(p, n_cols, stream); return true;
        default: return mmvq_launch_k(t, p, n_cols, stream);
    }
}
