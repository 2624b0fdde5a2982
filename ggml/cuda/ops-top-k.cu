// TOP_K: indices (I32) of the k largest elements of each row of F32 a (any strides), largest
// first, the lower index first among equal values (-0 equals +0), NaN below every number (NaNs
// last, by index) — the order of ggml/cpu/ops-rows.cpp. k <= 1024; one block per row.
//
// Each element becomes a 64-bit key whose descending order is that order: the float mapped to
// an unsigned integer that grows with the value (NaN -> 0) in the high half, and the inverted
// index in the low half, so keys are distinct. Rows of at most 1024 elements are sorted whole
// in shared memory (bitonic sort). Longer rows first find the k-th largest key by a radix
// select (8 bits per pass, from the top; it stops as soon as the keys that share the chosen
// prefix are exactly the ones still needed), gather the k keys at or above it, then sort those.
#include "ops-common.cuh"
#include "ops.cuh"

namespace {

constexpr int k_top_k_max = 1024;
constexpr int k_sort_max = 1024;  // rows up to this long are sorted whole
constexpr int k_threads = 256;

__device__ __forceinline__ uint64_t top_k_key(float v, uint32_t i) {
    uint32_t m = 0;  // NaN: below everything
    if (!isnan(v)) {
        const uint32_t bits = v == 0.0f ? 0u : __float_as_uint(v);
        m = (bits & 0x80000000u) ? ~bits : (bits | 0x80000000u);
    }
    return (uint64_t(m) << 32) | uint64_t(0xffffffffu - i);
}

__device__ __forceinline__ int32_t top_k_index(uint64_t key) { return int32_t(0xffffffffu - uint32_t(key)); }

__device__ __forceinline__ float row_elem(const char * row, int64_t nb0, int64_t i) {
    return *reinterpret_cast<const float *>(row + i * nb0);
}

// Sorts keys[0, n) descending; n a power of two; every thread of the block calls it.
__device__ void bitonic_sort_desc(uint64_t * keys, int n) {
    for (int k = 2; k <= n; k <<= 1) {
        for (int j = k >> 1; j > 0; j >>= 1) {
            for (int i = threadIdx.x; i < n; i += blockDim.x) {
                const int ixj = i ^ j;
                if (ixj > i) {
                    const uint64_t a = keys[i], b = keys[ixj];
                    const bool desc = (i & k) == 0;
                    if (desc ? a < b : a > b) {
                        keys[i] = b;
                        keys[ixj] = a;
                    }
                }
            }
            __syncthreads();
        }
    }
}

__host__ __device__ __forceinline__ int pow2_at_least(int n) {
    int p = 1;
    while (p < n) p <<= 1;
    return p;
}

// Finds the bucket (of hist, counted from the top) that holds the need-th largest key; warp 0
// calls it. Writes the bucket and the count still needed within it.
__device__ void radix_pick(const unsigned * hist, unsigned need, int * bucket, unsigned * need_in_bucket) {
    const int lane = threadIdx.x;
    unsigned local = 0;
    for (int b = 0; b < 8; ++b) local += hist[255 - 8 * lane - b];  // lane 0: the highest buckets
    unsigned incl = local;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
        const unsigned v = __shfl_up_sync(0xffffffffu, incl, o);
        if (lane >= o) incl += v;
    }
    const unsigned excl = incl - local;
    if (excl < need && need <= incl) {
        unsigned cum = excl;
        for (int b = 0; b < 8; ++b) {
            const int bin = 255 - 8 * lane - b;
            if (cum + hist[bin] >= need) {
                *bucket = bin;
                *need_in_bucket = need - cum;
                break;
            }
            cum += hist[bin];
        }
    }
}

// The prefix (under mask, top bits) such that the keys with (key & mask) >= prefix are exactly
// the k largest of the row.
__device__ void radix_select(const char * row, int64_t nb0, int64_t n, int k, uint64_t * prefix_out,
                             uint64_t * mask_out) {
    __shared__ unsigned hist[256];
    __shared__ int bucket;
    __shared__ unsigned need;
    uint64_t prefix = 0, mask = 0;
    unsigned want = unsigned(k);
    for (int shift = 56; shift >= 0; shift -= 8) {
        for (int b = threadIdx.x; b < 256; b += blockDim.x) hist[b] = 0;
        __syncthreads();
        for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
            const uint64_t key = top_k_key(row_elem(row, nb0, i), uint32_t(i));
            if ((key & mask) == prefix) atomicAdd(&hist[(key >> shift) & 0xff], 1u);
        }
        __syncthreads();
        if (threadIdx.x < 32) radix_pick(hist, want, &bucket, &need);
        __syncthreads();
        prefix |= uint64_t(bucket) << shift;
        mask |= uint64_t(0xff) << shift;
        const bool done = hist[bucket] == need;
        want = need;
        __syncthreads();  // hist, bucket and need are rewritten by the next pass
        if (done) break;
    }
    *prefix_out = prefix;
    *mask_out = mask;
}

__global__ void k_top_k(cuda_tensor a, cuda_tensor d, int k) {
    __shared__ uint64_t keys[k_sort_max];
    __shared__ int count;
    const int64_t n = a.ne[0], nrows = cuda_nrows(a);
    for (int64_t r = blockIdx.x; r < nrows; r += gridDim.x) {
        const cuda_row_index ri = cuda_unravel_row(a, r);
        const char * row = cuda_row(a, ri);
        int n_sort;
        if (n <= k_sort_max) {
            n_sort = pow2_at_least(int(n));
            for (int i = threadIdx.x; i < n_sort; i += blockDim.x) {
                keys[i] = i < n ? top_k_key(row_elem(row, a.nb[0], i), uint32_t(i)) : 0;  // 0: below every key
            }
        } else {
            uint64_t prefix, mask;
            radix_select(row, a.nb[0], n, k, &prefix, &mask);
            n_sort = pow2_at_least(k);
            if (threadIdx.x == 0) count = 0;
            for (int i = threadIdx.x; i < n_sort; i += blockDim.x) keys[i] = 0;
            __syncthreads();
            for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
                const uint64_t key = top_k_key(row_elem(row, a.nb[0], i), uint32_t(i));
                if ((key & mask) >= prefix) {
                    const int slot = atomicAdd(&count, 1);
                    if (slot < k) keys[slot] = key;
                }
            }
        }
        __syncthreads();
        bitonic_sort_desc(keys, n_sort);
        char * out = cuda_row(d, ri);
        for (int i = threadIdx.x; i < k; i += blockDim.x) {
            *reinterpret_cast<int32_t *>(out + int64_t(i) * d.nb[0]) = top_k_index(keys[i]);
        }
        __syncthreads();  // keys are rewritten for the next row
    }
}

}  // namespace

bool ggml_cuda_top_k_supported(const ggml_tensor * dst) {
    const ggml_tensor * a = dst->src[0];
    if (!a || a->type != GGML_TYPE_F32 || dst->type != GGML_TYPE_I32 || !cuda_shape_ok(a)) return false;
    const int64_t k = dst->ne[0];
    return k > 0 && k <= k_top_k_max && k <= a->ne[0] && ggml_get_top_k(dst) == k &&
           dst->ne[1] == a->ne[1] && dst->ne[2] == a->ne[2] && dst->ne[3] == a->ne[3];
}

void ggml_cuda_op_top_k(ggml_cuda_context & ctx, ggml_tensor * dst) {
    const ggml_tensor * a = dst->src[0];
    const int64_t nrows = ggml_nrows(a);
    if (nrows == 0) return;
    if (!cuda_check_aligned(ctx, a) || !cuda_check_aligned(ctx, dst)) return;
    const int k = int(dst->ne[0]);
    const int n_sort = a->ne[0] <= k_sort_max ? pow2_at_least(int(a->ne[0])) : pow2_at_least(k);
    const int threads = n_sort / 2 < k_threads ? (n_sort / 2 < 32 ? 32 : n_sort / 2) : k_threads;
    const int64_t blocks = nrows < INT32_MAX ? nrows : INT32_MAX;
    k_top_k<<<unsigned(blocks), a->ne[0] > k_sort_max ? k_threads : threads, 0, ctx.stream>>>(cuda_tensor_of(a),
                                                                                             cuda_tensor_of(dst), k);
    GGML_CUDA_CHECK(cudaGetLastError());
}
