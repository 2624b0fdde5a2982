// The device's memory read bandwidth (ggml_cuda_device::measure_read_gbps): what inferd-bench
// divides a GPU run's bytes per second by. A kernel reads a device buffer once with 16-byte loads
// (grid-stride, several loads in flight per thread) and folds the words into one value per block
// so that no load can be dropped; the time of each pass comes from CUDA events around the kernel
// alone, and the median of the passes is returned.
#include "backend-cuda.h"

#include <algorithm>
#include <vector>

namespace {

constexpr int k_probe_threads = 256;
constexpr int k_probe_unroll = 4;

__global__ void read_words(const uint4 * __restrict__ src, size_t n, unsigned * __restrict__ sink) {
    const size_t stride = size_t(gridDim.x) * blockDim.x;
    unsigned acc = 0;
    size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
    for (; i + (k_probe_unroll - 1) * stride < n; i += k_probe_unroll * stride) {
        uint4 v[k_probe_unroll];
#pragma unroll
        for (int u = 0; u < k_probe_unroll; ++u) v[u] = src[i + u * stride];
#pragma unroll
        for (int u = 0; u < k_probe_unroll; ++u) acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
    }
    for (; i < n; i += stride) {
        const uint4 v = src[i];
        acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    // One word per block; the xor of garbage is never read, it only keeps the loads alive.
    for (int off = 16; off > 0; off >>= 1) acc ^= __shfl_xor_sync(0xffffffffu, acc, off);
    if ((threadIdx.x & 31) == 0) atomicXor(&sink[blockIdx.x], acc);
}

}  // namespace

double ggml_cuda_device::measure_read_gbps(size_t bytes, int passes) {
    if (bytes < (size_t(1) << 20) || passes < 1 || !ggml_cuda_set_device(info_.index)) return 0.0;
    const size_t n = bytes / sizeof(uint4);
    const int blocks = std::max(1, info_.sm_count) * 8;
    uint4 * src = nullptr;
    unsigned * sink = nullptr;
    cudaEvent_t start = nullptr, stop = nullptr;
    double gbps = 0.0;
    if (GGML_CUDA_CHECK(cudaMalloc(&src, n * sizeof(uint4))) &&
        GGML_CUDA_CHECK(cudaMalloc(&sink, size_t(blocks) * sizeof(unsigned))) &&
        GGML_CUDA_CHECK(cudaMemset(src, 0x5a, n * sizeof(uint4))) &&
        GGML_CUDA_CHECK(cudaMemset(sink, 0, size_t(blocks) * sizeof(unsigned))) &&
        GGML_CUDA_CHECK(cudaEventCreate(&start)) && GGML_CUDA_CHECK(cudaEventCreate(&stop))) {
        read_words<<<blocks, k_probe_threads>>>(src, n, sink);  // warm-up: clocks, TLB
        std::vector<double> seconds;
        bool ok = GGML_CUDA_CHECK(cudaGetLastError()) && GGML_CUDA_CHECK(cudaDeviceSynchronize());
        for (int p = 0; ok && p < passes; ++p) {
            float ms = 0.0f;
            ok = GGML_CUDA_CHECK(cudaEventRecord(start));
            read_words<<<blocks, k_probe_threads>>>(src, n, sink);
            ok = ok && GGML_CUDA_CHECK(cudaGetLastError()) && GGML_CUDA_CHECK(cudaEventRecord(stop)) &&
                 GGML_CUDA_CHECK(cudaEventSynchronize(stop)) && GGML_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
            if (ok && ms > 0.0f) seconds.push_back(ms * 1e-3);
        }
        if (ok && !seconds.empty()) {
            std::sort(seconds.begin(), seconds.end());
            gbps = double(n * sizeof(uint4)) / seconds[seconds.size() / 2] * 1e-9;
        }
    }
    if (start) GGML_CUDA_CHECK(cudaEventDestroy(start));
    if (stop) GGML_CUDA_CHECK(cudaEventDestroy(stop));
    if (sink) GGML_CUDA_CHECK(cudaFree(sink));
    if (src) GGML_CUDA_CHECK(cudaFree(src));
    return gbps;
}
