// Quantized mat-vec kernels of the 256-element formats (Q2_K … Q6_K, IQ4_XS).
#include "mul-mat-vec-q.cuh"

bool mmvq_launch_k(ggml_type t, const mmv_params & p, int64_t n_cols, cudaStream_t stream) {
    switch (t) {
        case GGML_TYPE_Q2_K: mmvq_launch_type<GGML_TYPE_Q2_K>(p, n_cols, stream); return true;
        case GGML_TYPE_Q3_K: mmvq_launch_type<GGML_TYPE_Q3_K>(p, n_cols, stream); return true;
        case GGML_TYPE_Q4_K: mmvq_launch_type<GGML_TYPE_Q4_K>(p, n_cols, stream); return true;
        case GGML_TYPE_Q5_K: mmvq_launch_type<GGML_TYPE_Q5_K>(p, n_cols, stream); return true;
        case GGML_TYPE_Q6_K: mmvq_launch_type<GGML_TYPE_Q6_K>(p, n_cols, stream); return true;
        case GGML_TYPE_IQ4_XS: mmvq_launch_type<GGML_TYPE_IQ4_XS>(p, n_cols, stream); return true;
        default: return false;
    }
}
