// ggml/cpu/ops-attn.h — SIMD inner loops of the fused attention kernel (internal).
//
// Usage (inside ops-attn.cpp, on one tile of n cells):
//   const ggml_cpu_attn_fns & fa = ggml_cpu_attn_for(p.isa);
//   fa.mask_bits(mask_row, f16, n_cells, bits);                 // visible cells as bits
//   fa.rows_f16_to_f32(v_base, nb1, cells, n, dv, v_tile, dvp);  // gathers F16 rows as F32
//   if (fa.group_tile) {                                         // AVX2 / AVX-512
//       fa.rows_f16_to_f32_t(k_base, nb1, cells, n, d, k_pairs, 2 * k_tile);  // K in pairs
//       fa.group_tile(g);  // every row of one kv head over the tile (ggml_cpu_attn_group)
//   } else {                                                     // scalar: row by row
//       float mx = fa.scores(q, k_tile, dp, n, scale, mask_row, s);  // s[t] = scale q.k_t + mask[t]
//       fa.accumulate(acc, v_tile, dvp, w, n);                       // acc += sum_t w[t] v_tile[t]
//   }
//
// Layout shared by every function: rows of a tile are padded to a multiple of 16 floats
// (dp, dvp), the padding holds zeros, and K tiles hold a multiple of 16 cells (zeros past n),
// so the SIMD loops need no tail handling. Weights of cells masked for a query row are exactly
// 0: those V rows add nothing (they hold ordinary values: the cell is visible to another row).
// scores, scores_softcap and accumulate are the row-by-row loops of the scalar path (scores
// nullptr on the SIMD paths, which have group_tile; accumulate also merges the chunks of a
// chunked plan on every path).
//
// One table per instruction-set path, as in ops-vec.h: scalar (ops-attn-scalar.cpp), AVX2+FMA
// (ops-attn-avx2.cpp), AVX-512 (ops-attn-avx512.cpp); the AVX files include this header, so it
// holds declarations and plain structs only.
#pragma once

#include <cstddef>
#include <cstdint>

enum class ggml_cpu_isa;  // ggml/cpu.h

// The rows of one kv head over one tile of n cells (group_tile): nr query rows (heads of one or
// more query positions) that share the tile's K and V. Rows are contiguous in q, s, m, l, acc;
// row r's mask values are mask + (r / rows_per_mask) * k_tile (nullptr: no mask).
struct ggml_cpu_attn_group {
    const float * q = nullptr;     // [nr][dp]      query rows, zero-padded
    const float * kt = nullptr;    // [dp / 2][2 k_tile] K of the tile in pairs of elements:
                                   //    kt[p * 2 k_tile + 2 t + j] = K[t][2 p + j] (cells n ..
                                   //    pad16(n) zero)
    const float * v = nullptr;     // [n][dvp]      V rows of the tile
    const float * mask = nullptr;  // [nr / rows_per_mask][k_tile]
    float * s = nullptr;           // [nr][k_tile]  scratch: scores, then weights
    float * m = nullptr;           // [nr]          running maximum
    float * l = nullptr;           // [nr]          running sum of weights
    float * acc = nullptr;         // [nr][dvp]     unnormalised outputs
    float * alpha = nullptr;       // [nr]          scratch: rescaling of acc
    int64_t nr = 0, n = 0, dp = 0, dvp = 0, k_tile = 0, rows_per_mask = 1;
    float scale = 1.0f;
    float cap = 0.0f;  // > 0: soft-capped scores (scale already divided by cap)
};

struct ggml_cpu_attn_fns {
    const char * name;  // "scalar", "avx2", "avx512"
    // s[t] = scale * (sum_d q[d] * k[t*dp + d]) + mask[t] (mask nullptr: + 0) for t in [0, n);
    // returns max_t s[t] (-inf when n == 0; NaN ignored). dp % 16 == 0; k holds pad16(n) rows
    // (rows past n zero), s room for pad16(n) floats; mask is read for t < n only.
    float (*scores)(const float * q, const float * k, int64_t dp, int64_t n, float scale, const float * mask,
                    float * s);
    // The same with the scores soft-capped (cap > 0): s[t] = cap * tanh(scale * q.k_t) + mask[t]
    // (the caller passes scale already divided by cap); tanh as in ops-vec.h.
    float (*scores_softcap)(const float * q, const float * k, int64_t dp, int64_t n, float scale, float cap,
                            const float * mask, float * s);
    // acc[d] += sum_t w[t] * v[t*dvp + d] for d in [0, dvp); dvp % 16 == 0.
    void (*accumulate)(float * acc, const float * v, int64_t dvp, const float * w, int64_t n);
    // F16 rows (d elements each) at base + cells[t] * stride into y[t*dp ..], t in [0, n), each
    // zero-padded from d to dp (dp = d rounded up to a multiple of 16).
    void (*rows_f16_to_f32)(const uint8_t * base, size_t stride, const int64_t * cells, int64_t n, int64_t d,
                            float * y, int64_t dp);
    // The same for Q8_0 rows (d % 32 == 0, so dp == d): bit-identical to ggml_dequantize_row_q8_0.
    void (*rows_q8_0_to_f32)(const uint8_t * base, size_t stride, const int64_t * cells, int64_t n, int64_t d,
                             float * y, int64_t dp);
    // Bits of the mask values that are not -inf: bit j % 64 of bits[j / 64] for element j of the
    // n elements at row (F16 when f16, else F32); the bits past n in the last word are zero.
    void (*mask_bits)(const void * row, bool f16, int64_t n, uint64_t * bits);
    // The online-softmax step of every row of g over its tile, scores as a small GEMM (no
    // horizontal sums): s = q kt, then m, l, acc updated as in ops-attn.cpp. nullptr on the
    // scalar path (it scores row by row with the functions above).
    void (*group_tile)(const ggml_cpu_attn_group & g);
    // Rows k[t * dp + e] into the pair layout of ggml_cpu_attn_group::kt: kt[e / 2 * ks + 2 t +
    // e % 2] for e < dp, t < n16 (n16 % 16 == 0; nullptr: scalar path).
    void (*transpose)(const float * k, int64_t dp, int64_t n16, float * kt, int64_t ks);
    // F16 rows as rows_f16_to_f32, written in that pair layout for e < dp (zeros past d) and
    // t < pad16(n) (zeros past n) (nullptr: scalar path).
    void (*rows_f16_to_f32_t)(const uint8_t * base, size_t stride, const int64_t * cells, int64_t n, int64_t d,
                              float * kt, int64_t ks);
};

// The table of one path (avx2 / avx512 only when the CPU has them; ggml_cpu_isa::best: the
// fastest this CPU supports).
const ggml_cpu_attn_fns & ggml_cpu_attn_for(ggml_cpu_isa isa);

const ggml_cpu_attn_fns & ggml_cpu_attn_fns_scalar();  // ops-attn-scalar.cpp
const ggml_cpu_attn_fns & ggml_cpu_attn_fns_avx2();    // ops-attn-avx2.cpp
const ggml_cpu_attn_fns & ggml_cpu_attn_fns_avx512();  // ops-attn-avx512.cpp
