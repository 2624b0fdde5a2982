// MUL_MAT of F16 and BF16 weights on AMX BF16 tiles; see mul-mat-amx.h for the arithmetic.
//
// TDPBF16PS C += A * B takes A as 16 rows of 32 BF16 values (16 pairs of k) and B as 16 rows,
// row p holding pair p of 16 columns. Here A is a 16-row tile of the weights (their rows are
// already k-contiguous, so packing only converts) and B a 16-column tile of the activations
// (transposed once per node, in phase 1). C is then [weight row][column]; it is transposed
// when it goes to d (d[column * ldd + row]).
//
// Register blocking: tmm0..1 hold a 32 x 16 block (two row tiles x one column tile), tmm2..5
// the hi and lo tiles of the two weight tiles, tmm6..7 those of the activation tile: each
// operand is loaded once per 32-k step, which runs 6 (BF16 weights: 4) TDPBF16PS. (Two x two
// blocks, reloading operands within a step, measured 10-15% slower.)
//
// Packed activations (phase 1): per 16-column tile, for each 32-k step, the hi tile then the
// lo tile (1 KiB each), steps back to back: ggml_amx_act_tile_bytes(k) per column tile.
// Packed weights (per job, one k-slice of k_kc at a time): per 16-row tile, for each step of
// the slice, the hi tile then the lo tile.
// A job's partial sums across slices wait in its scratch as C tiles.
#include "mul-mat-amx.h"
#include "simd-traits.h"

#include <cstring>

namespace {

constexpr int64_t k_step = 32;         // k per tile instruction (16 BF16 pairs)
constexpr int64_t k_kc = 256;          // k per packed slice of a
constexpr int64_t k_kc_steps = k_kc / k_step;
constexpr size_t k_tile_bytes = 1024;  // 16 rows x 64 bytes
constexpr int64_t k_max_row_tiles = ggml_amx_job_rows / 16;
constexpr int64_t k_max_col_tiles = ggml_amx_job_cols / 16;

inline int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
inline int64_t n_steps(int64_t k) { return (k + k_step - 1) / k_step; }
// Bytes of `steps` steps of hi + lo tiles, rounded up to an odd number of steps: tiles this far
// apart fall on the other half of the L1 sets (a multiple of 4 KiB would put the tiles that a
// step reads together into the same sets).
constexpr size_t odd_steps_bytes(int64_t steps) { return size_t(steps | 1) * 2 * k_tile_bytes; }

// 32 floats (f0: the first 16) -> their BF16 roundings (hi) and those of the remainders (lo).
inline void split_bf16(__m512 f0, __m512 f1, __m512i & hi, __m512i & lo) {
    hi = (__m512i) _mm512_cvtne2ps_pbh(f1, f0);
    const __m512 r0 = _mm512_sub_ps(f0, simd_bf16_to_f32(_mm512_castsi512_si256(hi)));
    const __m512 r1 = _mm512_sub_ps(f1, simd_bf16_to_f32(_mm512_extracti64x4_epi64(hi, 1)));
    lo = (__m512i) _mm512_cvtne2ps_pbh(r1, r0);
}

struct tile_config {
    uint8_t palette = 1;
    uint8_t start_row = 0;
    uint8_t reserved[14] = {};
    uint16_t colsb[16] = {};
    uint8_t rows[16] = {};
};

// Every tile 16 rows x 64 bytes.
void load_tile_config() {
    tile_config c;
    for (int i = 0; i < 8; ++i) {
        c.colsb[i] = 64;
        c.rows[i] = 16;
    }
    _tile_loadconfig(&c);
}

// ---- packing of a: one k-slice of the job's rows, converted, not transposed ----

// Rows [0, m) of a, elements [k0, k0 + steps * 32) (elements at or past k read as 0) into
// n_tiles 16-row tiles; rows past m are 0.
void pack_a_slice(ggml_type type, const char * a, size_t lda, int64_t m, int64_t k, int64_t k0, int64_t steps,
                  int64_t n_tiles, char * out) {
    const bool f16 = type == GGML_TYPE_F16;
    const size_t tile_stride = odd_steps_bytes(k_kc_steps);
    for (int64_t row = 0; row < n_tiles * 16; ++row) {
        char * dst = out + size_t(row / 16) * tile_stride + size_t(row % 16) * 64;
        const char * src = a + row * lda;
        // the row's part of the next slice, on its way to L2 while this slice is used
        if (row < m)
            for (int64_t e = k0 + k_kc; e < k0 + 2 * k_kc && e < k; e += 32) _mm_prefetch(src + e * 2, _MM_HINT_T1);
        for (int64_t c = 0; c < steps; ++c, dst += 2 * k_tile_bytes) {
            const int64_t e0 = k0 + c * k_step;
            const __m512i raw = row < m ? _mm512_maskz_loadu_epi16(simd_mask32(k - e0), src + e0 * 2) : _mm512_setzero_si512();
            if (f16) {
                __m512i hi, lo;
                split_bf16(_mm512_cvtph_ps(_mm512_castsi512_si256(raw)), _mm512_cvtph_ps(_mm512_extracti64x4_epi64(raw, 1)),
                           hi, lo);
                _mm512_store_si512(dst, hi);
                _mm512_store_si512(dst + k_tile_bytes, lo);
            } else {
                _mm512_store_si512(dst, raw);
            }
        }
    }
}

// ---- blocks of 32 rows x 16 columns ----

struct job_state {
    const ggml_amx_gemm_args * g;
    const char * wp;      // packed weight slice
    char * acc;           // partial sums: C tile (row tile t, column tile u) at (t * k_max_col_tiles + u) KiB
    float * tmp;          // 16 x 16 floats
    bool first, last;     // slice
};

// C tile -> d: tmp holds C[i][j] (rows i of a, columns j); d[j * ldd + i] for the valid part.
void store_transposed(const job_state & s, int64_t t, int64_t u) {
    const ggml_amx_gemm_args & g = *s.g;
    const int64_t mv = min64(16, g.m - t * 16), nv = min64(16, g.n - u * 16);
    if (mv <= 0 || nv <= 0) return;
    __m512i v[16];
    for (int i = 0; i < 16; ++i) v[i] = _mm512_load_si512(s.tmp + i * 16);
    simd_transpose16x16(v);
    float * d = g.d + u * 16 * g.ldd + t * 16;
    for (int j = 0; j < nv; ++j) _mm512_mask_storeu_ps(d + j * g.ldd, simd_mask16(mv), _mm512_castsi512_ps(v[j]));
}

inline char * acc_tile(const job_state & s, int64_t t, int64_t u) {
    return s.acc + size_t(t * k_max_col_tiles + u) * k_tile_bytes;
}

// The tile intrinsics take the register number as a literal.
#define AMX_C_BEGIN(T, s, t, u)                              \
    do {                                                     \
        if ((s).first) _tile_zero(T);                        \
        else _tile_loadd(T, acc_tile(s, t, u), 64);          \
    } while (0)
#define AMX_C_END(T, s, t, u)                                \
    do {                                                     \
        if ((s).last) {                                      \
            _tile_stored(T, (s).tmp, 64);                    \
            store_transposed(s, t, u);                       \
        } else {                                             \
            _tile_stored(T, acc_tile(s, t, u), 64);          \
        }                                                    \
    } while (0)

// Steps of 32 k on the block of row tiles (t, t + 1) and column tile u: w is the packed
// slice's tile t at the block's first step (tile t + 1 follows tile_stride bytes on), x column
// tile u's tiles at that step. Operand tiles: tmm2 / tmm3 hi / lo of row tile t, tmm4 / tmm5
// of row tile t + 1, tmm6 / tmm7 hi / lo of the column tile; each is loaded once per step.
template <bool kLoW>
void block_steps(const char * w, size_t tile_stride, const char * x, int64_t steps) {
    for (int64_t c = 0; c < steps; ++c) {
        _tile_loadd(2, w, 64);
        _tile_loadd(4, w + tile_stride, 64);
        _tile_loadd(6, x, 64);
        _tile_dpbf16ps(0, 2, 6);
        _tile_dpbf16ps(1, 4, 6);
        _tile_loadd(7, x + k_tile_bytes, 64);
        _tile_dpbf16ps(0, 2, 7);
        _tile_dpbf16ps(1, 4, 7);
        if constexpr (kLoW) {
            _tile_loadd(3, w + k_tile_bytes, 64);
            _tile_loadd(5, w + tile_stride + k_tile_bytes, 64);
            _tile_dpbf16ps(0, 3, 6);
            _tile_dpbf16ps(1, 5, 6);
        }
        w += 2 * k_tile_bytes;
        x += 2 * k_tile_bytes;
    }
}

void run_block(const job_state & s, int64_t t, int64_t u, int64_t c0, int64_t steps) {
    const ggml_amx_gemm_args & g = *s.g;
    const size_t tile_stride = odd_steps_bytes(k_kc_steps);
    AMX_C_BEGIN(0, s, t, u);
    AMX_C_BEGIN(1, s, t + 1, u);
    const char * w = s.wp + size_t(t) * tile_stride;
    const char * x = static_cast<const char *>(g.act) + size_t(u) * g.act_stride + size_t(c0) * 2 * k_tile_bytes;
    if (g.type == GGML_TYPE_F16) block_steps<true>(w, tile_stride, x, steps);
    else block_steps<false>(w, tile_stride, x, steps);
    AMX_C_END(0, s, t, u);
    AMX_C_END(1, s, t + 1, u);
}

constexpr size_t k_wp_bytes = size_t(k_max_row_tiles) * odd_steps_bytes(k_kc_steps);
constexpr size_t k_acc_bytes = size_t(k_max_row_tiles) * size_t(k_max_col_tiles) * k_tile_bytes;

}  // namespace

size_t ggml_amx_act_tile_bytes(int64_t k) { return odd_steps_bytes(n_steps(k)); }

void ggml_amx_pack_act(const float * const * cols, int64_t k, void * tile_row) {
    char * out = static_cast<char *>(tile_row);
    for (int64_t e = 0; e < n_steps(k) * k_step; e += k_step, out += 2 * k_tile_bytes) {
        __m512i hi[16], lo[16];
        for (int j = 0; j < 16; ++j) {
            if (!cols[j]) {
                hi[j] = lo[j] = _mm512_setzero_si512();
                continue;
            }
            const __m512 f0 = _mm512_maskz_loadu_ps(simd_mask16(k - e), cols[j] + e);
            const __m512 f1 = _mm512_maskz_loadu_ps(simd_mask16(k - e - 16), cols[j] + e + 16);
            split_bf16(f0, f1, hi[j], lo[j]);
        }
        // hi[j] lane p is pair p of column j; tile row p wants pair p of every column
        simd_transpose16x16(hi);
        simd_transpose16x16(lo);
        for (int p = 0; p < 16; ++p) {
            _mm512_store_si512(out + p * 64, hi[p]);
            _mm512_store_si512(out + k_tile_bytes + p * 64, lo[p]);
        }
    }
}

size_t ggml_amx_scratch_bytes() { return k_wp_bytes + k_acc_bytes + 16 * 16 * sizeof(float); }

void ggml_amx_gemm(const ggml_amx_gemm_args & g) {
    const int64_t total_steps = n_steps(g.k);
    const int64_t row_tiles = (g.m + 31) / 32 * 2;  // an even count
    const int64_t col_tiles = (g.n + 15) / 16;
    job_state s;
    s.g = &g;
    s.wp = static_cast<const char *>(g.scratch);
    s.acc = static_cast<char *>(g.scratch) + k_wp_bytes;
    s.tmp = reinterpret_cast<float *>(s.acc + k_acc_bytes);
    load_tile_config();
    for (int64_t c0 = 0; c0 < total_steps; c0 += k_kc_steps) {
        const int64_t steps = min64(k_kc_steps, total_steps - c0);
        pack_a_slice(g.type, static_cast<const char *>(g.a), g.lda, g.m, g.k, c0 * k_step, steps, row_tiles,
                     static_cast<char *>(g.scratch));
        s.first = c0 == 0;
        s.last = c0 + steps == total_steps;
        // the pair of row tiles stays in L1 while the column tiles stream past it
        for (int64_t t = 0; t < row_tiles; t += 2)
            for (int64_t u = 0; u < col_tiles; ++u) run_block(s, t, u, c0, steps);
    }
    _tile_release();
}
