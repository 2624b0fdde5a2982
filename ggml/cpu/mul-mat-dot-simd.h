// ggml/cpu/mul-mat-dot-simd.h — the dot kernels of the float weight types (F32, F16, BF16) written
// once over the vector width (internal; instantiated by mul-mat-avx2.cpp and mul-mat-avx512.cpp
// with the traits of simd-traits.h and the ISA file's weight loaders).
//
// A weight loader W gives S::lanes floats from element i of a row: W::full(p, i), and
// W::part(p, i, n) reading only n < S::lanes elements (the other lanes 0); W::size is the
// bytes per element. The activations are F32 rows read with loader B.
#pragma once

#include "simd-traits.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <utility>

namespace {

namespace mul_mat_dot {

// Bytes ahead in a weight row that the dot kernels prefetch: one row at a time (mat-vec)
// or 4 interleaved rows (measured best on the reference machine).
constexpr int64_t k_prefetch_1 = 4096, k_prefetch_4 = 2048;
// Past this k a column of F32 activations (> 32 KiB) no longer stays in L1 next to the weight
// stream, and 4 rows sharing each load of it beat the single stream (measured: k = 8192 one
// row is faster, k = 11008 and 14336 four rows are).
constexpr int64_t k_long_k = 8192;

// R weight rows against C columns of activations, U steps of S::lanes k unrolled so that
// U * R * C independent accumulators hide the FMA latency, and a software prefetch
// k_prefetch_R bytes ahead in each row (running on into the next rows of a contiguous matrix).
// With several column blocks over the same R rows (n_passes > 1, this is pass `pass`), only the
// first pass would read the rows from memory and the others would leave the memory idle; each
// pass instead prefetches its share (1 / n_passes of k) of the next R rows, so the loads of the
// next rows overlap the arithmetic of every pass.
template <typename S, typename W, typename B, int R, int C>
void dot_block(int64_t k, const char * a, size_t lda, const char * b, size_t ldb, float * y, int64_t ldy, int pass,
               int n_passes) {
    using vf = typename S::vf;
    constexpr int L = S::lanes;
    constexpr int U = R * C >= 4 ? 1 : 4 / (R * C);
    constexpr int64_t step = L * U;
    vf acc[U][R][C];
#pragma GCC unroll 16
    for (int u = 0; u < U; ++u)
#pragma GCC unroll 16
        for (int r = 0; r < R; ++r)
#pragma GCC unroll 16
            for (int c = 0; c < C; ++c) acc[u][r][c] = S::zero();
    int64_t i = 0;
    for (; i + step <= k; i += step) {
        if (n_passes == 1) {
#pragma GCC unroll 16
            for (int r = 0; r < R; ++r) {
#pragma GCC unroll 16
                for (int64_t off = 0; off < step * W::size; off += 64) {
                    _mm_prefetch(a + r * lda + i * W::size + (R == 1 ? k_prefetch_1 : k_prefetch_4) + off, _MM_HINT_T0);
                }
            }
        } else {
            const int64_t e = (pass * k + i) / n_passes;  // element of the next rows this step covers
#pragma GCC unroll 16
            for (int r = 0; r < R; ++r) _mm_prefetch(a + (R + r) * lda + e * W::size, _MM_HINT_T0);
        }
#pragma GCC unroll 16
        for (int u = 0; u < U; ++u) {
            vf bv[C];
#pragma GCC unroll 16
            for (int c = 0; c < C; ++c) bv[c] = B::full(b + c * ldb, i + L * u);
#pragma GCC unroll 16
            for (int r = 0; r < R; ++r) {
                const vf av = W::full(a + r * lda, i + L * u);
#pragma GCC unroll 16
                for (int c = 0; c < C; ++c) acc[u][r][c] = S::fmadd(av, bv[c], acc[u][r][c]);
            }
        }
    }
    for (; i < k; i += L) {
        const int64_t n = k - i;
        vf bv[C];
#pragma GCC unroll 16
        for (int c = 0; c < C; ++c) bv[c] = n >= L ? B::full(b + c * ldb, i) : B::part(b + c * ldb, i, n);
#pragma GCC unroll 16
        for (int r = 0; r < R; ++r) {
            const vf av = n >= L ? W::full(a + r * lda, i) : W::part(a + r * lda, i, n);
#pragma GCC unroll 16
            for (int c = 0; c < C; ++c) acc[0][r][c] = S::fmadd(av, bv[c], acc[0][r][c]);
        }
    }
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r) {
#pragma GCC unroll 16
        for (int c = 0; c < C; ++c) {
            vf s = acc[0][r][c];
#pragma GCC unroll 16
            for (int u = 1; u < U; ++u) s = S::add(s, acc[u][r][c]);
            y[c * ldy + r] = S::reduce_add(s);
        }
    }
}

using dot_block_fn = void (*)(int64_t, const char *, size_t, const char *, size_t, float *, int64_t, int, int);

// Blocks of R rows x 1 … sizeof...(C) columns, by column count - 1.
template <typename S, typename W, typename B, int R, int... C>
constexpr std::array<dot_block_fn, sizeof...(C)> blocks(std::integer_sequence<int, C...>) {
    return {dot_block<S, W, B, R, C + 1>...};
}

// The ggml_mul_mat_dot_fn contract of mul-mat.h. Mat-vec (nc == 1) takes one row at a time up
// to k_long_k: a single sequential stream per thread reads memory markedly faster than several
// interleaved row streams. With more columns (or longer rows) 4 rows share each load of b.
// Columns go in blocks of up to Cols.
template <typename S, typename W, typename B, int Cols>
void dot_rows(int64_t k, const void * a, size_t lda, int64_t nr, const void * b, size_t ldb, int64_t nc, float * y,
              int64_t ldy) {
    static constexpr auto rows4 = blocks<S, W, B, 4>(std::make_integer_sequence<int, Cols>{});
    static constexpr auto rows1 = blocks<S, W, B, 1>(std::make_integer_sequence<int, Cols>{});
    const char * pa = static_cast<const char *>(a);
    const char * pb = static_cast<const char *>(b);
    const int n_passes = int((nc + Cols - 1) / Cols);
    for (int64_t r = 0; r < nr;) {
        const bool four = (nc > 1 || k > k_long_k) && nr - r >= 4;
        for (int64_t c = 0; c < nc; c += Cols) {
            const int64_t cn = nc - c < Cols ? nc - c : Cols;
            (four ? rows4 : rows1)[cn - 1](k, pa + r * lda, lda, pb + c * ldb, ldb, y + c * ldy + r, ldy,
                                           int(c / Cols), n_passes);
        }
        r += four ? 4 : 1;
    }
}

}  // namespace mul_mat_dot

}  // namespace
