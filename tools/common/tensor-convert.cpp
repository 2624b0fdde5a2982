// Whole-tensor conversions for the tools: rows split across std::threads.
#include "tensor-convert.h"

#include "ggml/quants.h"

#include <algorithm>
#include <atomic>
#include <system_error>
#include <thread>
#include <vector>

namespace {

// Rows per claimed chunk: at least ~16K elements, so that small rows do not make the claiming
// the bottleneck, and at least one row.
int64_t rows_per_chunk(int64_t n_per_row) {
    constexpr int64_t k_min_chunk_elements = 16 * 1024;
    return std::max<int64_t>(1, k_min_chunk_elements / std::max<int64_t>(1, n_per_row));
}

bool row_length_fits(ggml_type type, int64_t n_per_row, std::string * error) {
    const int64_t blck = ggml_blck_size(type);
    if (blck > 0 && n_per_row >= 0 && n_per_row % blck == 0) return true;
    if (error) {
        *error = "rows of " + std::to_string(n_per_row) + " elements do not fit the " + ggml_type_name(type) +
                 " block size " + std::to_string(blck);
    }
    return false;
}

}  // namespace

void tools_parallel_for(int64_t n, int64_t chunk, int n_threads, const std::function<void(int64_t, int64_t)> & fn) {
    if (n <= 0) return;
    chunk = std::max<int64_t>(1, chunk);
    const int64_t n_chunks = (n + chunk - 1) / chunk;
    const int workers = int(std::clamp<int64_t>(n_threads, 1, n_chunks));
    std::atomic<int64_t> next{0};
    auto run = [&]() {
        for (;;) {
            const int64_t c = next.fetch_add(1, std::memory_order_relaxed);
            if (c >= n_chunks) return;
            const int64_t begin = c * chunk;
            fn(begin, std::min(n, begin + chunk));
        }
    };
    std::vector<std::thread> threads;
    threads.reserve(size_t(workers - 1));
    try {
        for (int i = 1; i < workers; ++i) threads.emplace_back(run);
    } catch (const std::system_error &) {
        // No more threads available: the ones started and this one do the work.
    }
    run();
    for (std::thread & t : threads) t.join();
}

bool tensor_type_has_to_f32(ggml_type type) {
    return ggml_type_is_valid(type) && ggml_get_type_traits(type).to_float != nullptr;
}

bool tensor_type_has_quantize(ggml_type type) {
    switch (type) {
        case GGML_TYPE_F32:
        case GGML_TYPE_F16:
        case GGML_TYPE_BF16:
        case GGML_TYPE_Q4_0:
        case GGML_TYPE_Q4_1:
        case GGML_TYPE_Q5_0:
        case GGML_TYPE_Q5_1:
        case GGML_TYPE_Q8_0:
        case GGML_TYPE_Q2_K:
        case GGML_TYPE_Q3_K:
        case GGML_TYPE_Q4_K:
        case GGML_TYPE_Q5_K:
        case GGML_TYPE_Q6_K:
        case GGML_TYPE_IQ4_NL:
        case GGML_TYPE_IQ4_XS:
        case GGML_TYPE_MXFP4: return true;
        default: return false;
    }
}

bool tensor_rows_to_f32(ggml_type type, const void * src, int64_t n_per_row, int64_t n_rows, float * dst,
                        int n_threads, std::string * error) {
    if (!tensor_type_has_to_f32(type)) {
        if (error) *error = std::string("tensors of type ") + ggml_type_name(type) + " have no conversion to float";
        return false;
    }
    if (!row_length_fits(type, n_per_row, error)) return false;
    const ggml_to_float_fn to_float = ggml_get_type_traits(type).to_float;
    const size_t row_bytes = ggml_row_size(type, n_per_row);
    const auto * bytes = static_cast<const uint8_t *>(src);
    tools_parallel_for(n_rows, rows_per_chunk(n_per_row), n_threads, [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r) {
            to_float(bytes + size_t(r) * row_bytes, dst + r * n_per_row, n_per_row);
        }
    });
    return true;
}

bool tensor_rows_quantize(ggml_type type, const float * src, void * dst, int64_t n_per_row, int64_t n_rows,
                          int n_threads, std::string * error) {
    if (!tensor_type_has_quantize(type)) {
        if (error) *error = std::string("cannot write tensors of type ") + ggml_type_name(type);
        return false;
    }
    if (!row_length_fits(type, n_per_row, error)) return false;
    const size_t row_bytes = ggml_row_size(type, n_per_row);
    auto * bytes = static_cast<uint8_t *>(dst);
    tools_parallel_for(n_rows, rows_per_chunk(n_per_row), n_threads, [&](int64_t r0, int64_t r1) {
        // Both pointers at the chunk's first row and start_row 0: no reliance on how the
        // function offsets src for a non-zero start row.
        ggml_quantize_chunk(type, src + r0 * n_per_row, bytes + size_t(r0) * row_bytes, 0, r1 - r0, n_per_row,
                            nullptr);
    });
    return true;
}
