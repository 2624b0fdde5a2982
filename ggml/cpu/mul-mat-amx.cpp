// MUL_MAT of F16 and BF16 weights on AMX BF16 tiles; see mul-mat-amx.h for the arithmetic.
//
// Register blocking: 8 tile registers, tmm0..3 hold a 32 x 32 block of d (two 16-column tiles
// of b times two 16-row tiles of a), tmm4..5 two activation tiles (16 columns x 32 k, the
// packed rows read in place), tmm6..7 two weight tiles (16 pairs of k x 16 rows, packed per
// job into the scratch). Each 32-k step runs 12 (BF16 weights: 8) TDPBF16PS.
//
// Packed activation row (ggml_amx_act_row_bytes): x_hi[kp] then x_lo[kp] as BF16, kp = k
// rounded up to 32 (zeros past k), 64 bytes of padding so that rows are not 4 KiB apart.
// Packed weights of one k-slice: for each 32-k step c and 16-row tile t, the hi tile then the
// lo tile, 1 KiB each: row p of a tile holds (a_i[2p], a_i[2p + 1]) for the tile's 16 rows i.
#include "mul-mat-amx.h"
#include "simd-traits.h"

#include <cstring>

namespace {

constexpr int64_t k_step = 32;        // k per tile instruction (16 BF16 pairs)
constexpr int64_t k_kc = 512;         // k per packed slice of a
constexpr size_t k_tile_bytes = 1024; // 16 rows x 64 bytes
constexpr int64_t k_max_tiles = ggml_amx_job_rows / 16;

inline int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
inline int64_t padded_k(int64_t k) { return (k + k_step - 1) / k_step * k_step; }
inline __mmask16 mask16(int64_t n) {
    return n >= 16 ? __mmask16(0xffff) : n <= 0 ? __mmask16(0) : __mmask16((1u << n) - 1u);
}
inline __mmask32 mask32(int64_t n) {
    return n >= 32 ? __mmask32(0xffffffffu) : n <= 0 ? __mmask32(0) : __mmask32((1u << n) - 1u);
}

// The 16 BF16 values of h as F32.
inline __m512 bf16_to_f32(__m256i h) { return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16)); }

// 32 floats (f0: the first 16) -> their BF16 roundings (hi) and those of the remainders (lo).
inline void split_bf16(__m512 f0, __m512 f1, __m512i & hi, __m512i & lo) {
    hi = (__m512i) _mm512_cvtne2ps_pbh(f1, f0);
    const __m512 r0 = _mm512_sub_ps(f0, bf16_to_f32(_mm512_castsi512_si256(hi)));
    const __m512 r1 = _mm512_sub_ps(f1, bf16_to_f32(_mm512_extracti64x4_epi64(hi, 1)));
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

// ---- packing of a: one k-slice of the job's rows ----

// Rows [0, m) of a, elements [k0, k0 + kc) (kc a multiple of 32; elements at or past k read
// as 0) into tiles of 16 rows (n_tiles of them; rows past m are 0).
void pack_a_slice(ggml_type type, const char * a, size_t lda, int64_t m, int64_t k, int64_t k0, int64_t kc,
                  int64_t n_tiles, char * out) {
    const bool f16 = type == GGML_TYPE_F16;
    for (int64_t c = 0; c < kc / k_step; ++c) {
        const int64_t e0 = k0 + c * k_step;
        const __mmask32 msk = mask32(k - e0);
        for (int64_t t = 0; t < n_tiles; ++t) {
            __m512i hi[16], lo[16];
            for (int i = 0; i < 16; ++i) {
                const int64_t row = t * 16 + i;
                const __m512i raw = row < m ? _mm512_maskz_loadu_epi16(msk, a + row * lda + e0 * 2) : _mm512_setzero_si512();
                if (f16) {
                    split_bf16(_mm512_cvtph_ps(_mm512_castsi512_si256(raw)), _mm512_cvtph_ps(_mm512_extracti64x4_epi64(raw, 1)),
                               hi[i], lo[i]);
                } else {
                    hi[i] = raw;
                }
            }
            char * dst = out + size_t(c * n_tiles + t) * 2 * k_tile_bytes;
            simd_transpose16x16(hi);
            for (int p = 0; p < 16; ++p) _mm512_store_si512(dst + p * 64, hi[p]);
            if (f16) {
                simd_transpose16x16(lo);
                for (int p = 0; p < 16; ++p) _mm512_store_si512(dst + k_tile_bytes + p * 64, lo[p]);
            }
        }
    }
}

// ---- accumulator tiles: d[j * ldd + i] for a 16 x 16 block, partial at the edges ----

struct c_block {
    float * d;      // element (j0, i0) of the 32 x 32 block
    int64_t ldd;
    int64_t nv, mv; // valid columns (j) and rows (i) of the block, may exceed 32 or be <= 0
    float * tmp;    // 16 x 16 floats for an edge tile
};

// Where tile (jt, it) of the block is loaded from: d itself, or (at an edge) tmp holding the
// valid part and zeros; nullptr: start from zero.
const float * c_load_src(const c_block & b, int jt, int it, bool first) {
    const int64_t nv = min64(16, b.nv - 16 * jt), mv = min64(16, b.mv - 16 * it);
    const float * d = b.d + 16 * jt * b.ldd + 16 * it;
    if (first || nv <= 0 || mv <= 0) return nullptr;
    if (nv == 16 && mv == 16) return d;
    for (int j = 0; j < 16; ++j)
        _mm512_store_ps(b.tmp + j * 16, j < nv ? _mm512_maskz_loadu_ps(mask16(mv), d + j * b.ldd) : _mm512_setzero_ps());
    return b.tmp;
}
inline size_t c_stride(const c_block & b, const float * p) { return p == b.tmp ? 64 : size_t(b.ldd) * sizeof(float); }

// Where tile (jt, it) is stored to (nullptr: nothing of it is valid); c_store_done copies an
// edge tile from tmp into d.
float * c_store_dst(const c_block & b, int jt, int it) {
    const int64_t nv = min64(16, b.nv - 16 * jt), mv = min64(16, b.mv - 16 * it);
    if (nv <= 0 || mv <= 0) return nullptr;
    return nv == 16 && mv == 16 ? b.d + 16 * jt * b.ldd + 16 * it : b.tmp;
}
void c_store_done(const c_block & b, int jt, int it, const float * p) {
    if (p != b.tmp) return;
    const int64_t nv = min64(16, b.nv - 16 * jt), mv = min64(16, b.mv - 16 * it);
    float * d = b.d + 16 * jt * b.ldd + 16 * it;
    for (int j = 0; j < nv; ++j) _mm512_mask_storeu_ps(d + j * b.ldd, mask16(mv), _mm512_load_ps(b.tmp + j * 16));
}

// The tile intrinsics take the register number as a literal.
#define AMX_C_BEGIN(T, b, jt, it, first)                                   \
    do {                                                                   \
        const float * src_ = c_load_src(b, jt, it, first);                 \
        if (src_) _tile_loadd(T, src_, c_stride(b, src_));                 \
        else _tile_zero(T);                                                \
    } while (0)
#define AMX_C_END(T, b, jt, it)                                            \
    do {                                                                   \
        float * dst_ = c_store_dst(b, jt, it);                             \
        if (dst_) {                                                        \
            _tile_stored(T, dst_, c_stride(b, dst_));                      \
            c_store_done(b, jt, it, dst_);                                 \
        }                                                                  \
    } while (0)

// A 32 x 32 block over n_steps steps of 32 k: xh / xl the hi / lo parts of the first column's
// packed row at the slice's first k (columns act_stride apart), w the packed slice's first
// tile of the block's rows (tiles of a step n_tiles apart).
template <bool kLoW>
void block_steps(const char * xh, const char * xl, size_t act_stride, const char * w, int64_t n_tiles,
                 int64_t n_steps) {
    const size_t step_w = size_t(n_tiles) * 2 * k_tile_bytes;
    const size_t col16 = 16 * act_stride;
    for (int64_t c = 0; c < n_steps; ++c) {
        const char * wt = w + c * step_w;
        _tile_loadd(4, xh, act_stride);
        _tile_loadd(5, xh + col16, act_stride);
        _tile_loadd(6, wt, 64);
        _tile_loadd(7, wt + 2 * k_tile_bytes, 64);
        _tile_dpbf16ps(0, 4, 6);
        _tile_dpbf16ps(1, 4, 7);
        _tile_dpbf16ps(2, 5, 6);
        _tile_dpbf16ps(3, 5, 7);
        _tile_loadd(4, xl, act_stride);
        _tile_loadd(5, xl + col16, act_stride);
        _tile_dpbf16ps(0, 4, 6);
        _tile_dpbf16ps(1, 4, 7);
        _tile_dpbf16ps(2, 5, 6);
        _tile_dpbf16ps(3, 5, 7);
        if constexpr (kLoW) {
            _tile_loadd(4, xh, act_stride);
            _tile_loadd(5, xh + col16, act_stride);
            _tile_loadd(6, wt + k_tile_bytes, 64);
            _tile_loadd(7, wt + 3 * k_tile_bytes, 64);
            _tile_dpbf16ps(0, 4, 6);
            _tile_dpbf16ps(1, 4, 7);
            _tile_dpbf16ps(2, 5, 6);
            _tile_dpbf16ps(3, 5, 7);
        }
        xh += k_step * 2;
        xl += k_step * 2;
    }
}

}  // namespace

size_t ggml_amx_act_row_bytes(int64_t k) { return size_t(padded_k(k)) * 2 * sizeof(uint16_t) + 64; }

void ggml_amx_pack_act(const float * x, int64_t k, void * row) {
    const int64_t kp = padded_k(k);
    char * hi = static_cast<char *>(row);
    char * lo = hi + kp * 2;
    for (int64_t e = 0; e < kp; e += k_step) {
        __m512i h = _mm512_setzero_si512(), l = _mm512_setzero_si512();
        if (x) {
            const __m512 f0 = _mm512_maskz_loadu_ps(mask16(k - e), x + e);
            const __m512 f1 = _mm512_maskz_loadu_ps(mask16(k - e - 16), x + e + 16);
            split_bf16(f0, f1, h, l);
        }
        _mm512_storeu_si512(hi + e * 2, h);
        _mm512_storeu_si512(lo + e * 2, l);
    }
    std::memset(lo + kp * 2, 0, 64);
}

size_t ggml_amx_scratch_bytes() {
    return size_t(k_kc / k_step) * size_t(k_max_tiles) * 2 * k_tile_bytes + 16 * 16 * sizeof(float);
}

void ggml_amx_gemm(const ggml_amx_gemm_args & g) {
    const int64_t kp = padded_k(g.k);
    const int64_t n_tiles = (g.m + 31) / 32 * 2;  // 16-row tiles, an even count
    char * wp = static_cast<char *>(g.scratch);
    float * tmp = reinterpret_cast<float *>(wp + size_t(k_kc / k_step) * size_t(k_max_tiles) * 2 * k_tile_bytes);
    const char * act = static_cast<const char *>(g.act);
    const bool lo_w = g.type == GGML_TYPE_F16;
    load_tile_config();
    for (int64_t k0 = 0; k0 < kp; k0 += k_kc) {
        const int64_t kc = min64(k_kc, kp - k0);
        pack_a_slice(g.type, static_cast<const char *>(g.a), g.lda, g.m, g.k, k0, kc, n_tiles, wp);
        for (int64_t j0 = 0; j0 < g.n; j0 += ggml_amx_block_cols) {
            const char * xh = act + size_t(j0) * g.act_stride + k0 * 2;
            const char * xl = xh + kp * 2;
            for (int64_t t = 0; t < n_tiles; t += 2) {
                const c_block b{g.d + j0 * g.ldd + t * 16, g.ldd, g.n - j0, g.m - t * 16, tmp};
                const bool first = k0 == 0;
                AMX_C_BEGIN(0, b, 0, 0, first);
                AMX_C_BEGIN(1, b, 0, 1, first);
                AMX_C_BEGIN(2, b, 1, 0, first);
                AMX_C_BEGIN(3, b, 1, 1, first);
                const char * w = wp + size_t(t) * 2 * k_tile_bytes;
                if (lo_w) block_steps<true>(xh, xl, g.act_stride, w, n_tiles, kc / k_step);
                else block_steps<false>(xh, xl, g.act_stride, w, n_tiles, kc / k_step);
                AMX_C_END(0, b, 0, 0);
                AMX_C_END(1, b, 0, 1);
                AMX_C_END(2, b, 1, 0);
                AMX_C_END(3, b, 1, 1);
            }
        }
    }
    _tile_release();
}
