// ggml/cpu/repack.h — weights in an interleaved layout for MUL_MAT (internal).
//
// A 2-D weight matrix of a repackable type (Q4_0, Q8_0, IQ4_NL, Q4_K, Q5_K, Q6_K, IQ4_XS, Q5_0,
// Q4_1, MXFP4, Q3_K, Q2_K) is stored as groups of GGML_REPACK_ROWS = 16 rows; within a group, block b of the
// 16 rows forms one "group block",
// and the group blocks of a group follow each other along k. Inside a group block the codes
// sit in 32-bit lanes, one lane per row: lane r of a 64-byte vector holds 4 consecutive
// elements of row r, so that one VPDPBUSD against a broadcast activation dword computes
// 16 rows x 4 k. Scales are decoded once, in the order the kernels consume them.
//
//   Q8_0 (32 elements, 544 bytes = 16 x 34):
//     d[16] f16 | qs[8 steps][16 rows][4] u8, code + 128 (element 4 * step + byte)
//   Q4_0 (32 elements, 288 bytes = 16 x 18):
//     d[16] f16 | qs[4 steps][16 rows][4]: low nibble element 4 s + b, high nibble 16 + 4 s + b
//   IQ4_NL: as Q4_0 (the nibbles index ggml_iq4nl_codebook)
//   Q5_0 (32 elements, 352 bytes = 16 x 22): Q4_0's 288 bytes (the low 4 bits of each code)
//     | qh[16 rows][4]: bit s of byte b = fifth bit of element 4 s + b (codes q + 16, 0..31)
//   Q4_1 (32 elements, 320 bytes = 16 x 20): m[16] f16 | Q4_0's 288 bytes (d, codes q in 0..15)
//   MXFP4 (32 elements, 272 bytes = 16 x 17): e[16] u8 (E8M0) | qs as Q4_0's (offset 16), the
//     nibbles index ggml_mxfp4_codebook (the doubled E2M1 values; scale 2^(e - 128))
//   Q4_K (256 elements, 2368 bytes = 16 x 148):
//     d[16] f16 | dmin[16] f16 | sc[8][16] u8 | mn[4][16][2] u8 (mins 2p, 2p+1 of row r)
//     | qs[4 chunks][8 steps][16 rows][4]: low nibble element 64 t + 4 s + b,
//       high nibble element 64 t + 32 + 4 s + b
//   Q5_K (256 elements, 2880 bytes = 16 x 180): Q4_K's 2368 bytes (the low 4 bits of each code)
//     | qh[4 chunks][2 halves][16 rows][4]: bit s of byte b = fifth bit of element
//       64 t + 32 half + 4 s + b
//   Q6_K (256 elements, 3360 bytes = 16 x 210):
//     d[16] f16 | sc[8][16][2] s8 (scales 2p, 2p+1 of row r, one per 16 elements)
//     | 4 units of 64 elements (e = 64 t + 16 u + 4 s + b), each
//       lo[2][4 steps][16 rows][4]: low nibble = low 4 bits of code (u = v, s, b),
//                                   high nibble = low 4 bits of code (u = v + 2, s, b)
//       hi[4 steps][16 rows][4]:   bits 2u, 2u+1 = high 2 bits of code (u, s, b)
//     codes are q + 32, in 0..63.
//   Q2_K (256 elements, 1344 bytes = 16 x 84):
//     d[16] f16 | dmin[16] f16 | sm[8][16][2] u8 (scale | min << 4 of sub-blocks 2p, 2p+1 of
//     row r, one per 16 elements) | 4 units of 64 elements (e = 64 t + 16 u + 4 s + b), each
//       q[4 steps][16 rows][4]: bits 2u, 2u+1 = code (u, s, b), 0..3
//   Q3_K (256 elements, 1856 bytes = 16 x 116):
//     d[16] f16 | sc[8][16][2] s8 (scales 2p, 2p+1 of row r, minus 32, one per 16 elements)
//     | 32 zero bytes | 4 units of 64 elements (e = 64 t + 16 u + 4 s + b), each
//       lo[4 steps][16 rows][4]: bits 2u, 2u+1 = low 2 bits of code (u, s, b)
//       hi[2][16 rows][4]:       bit 4 (u % 2) + s of vector u / 2 = bit 2 of code (u, s, b)
//     codes are q + 4, in 0..7.
//   IQ4_XS (256 elements, 2240 bytes = 16 x 140):
//     d[16] f16 | sc[8][16] s8 (ls - 32 of sub-block j of row r) | 32 zero bytes
//     | qs as Q4_K's (offset 192, so that the code vectors stay 64-byte aligned), the nibbles
//       index ggml_iq4nl_codebook
// Rows past the matrix's last row (the last group's padding) are zero.
//
// A repacked matrix of m rows and k columns takes ggml_repack_row_bytes(t, k) bytes per row
// and ceil(m / 16) * 16 rows; row r0 (a multiple of 16) starts at r0 * row bytes.
//
// Kernels: the ggml_mul_mat_dot_fn contract of mul-mat.h with a = the first row of a group,
// lda = ggml_repack_row_bytes(t, k), nr any count (the last group is read whole, only nr
// rows written), b = activations from the table's act function (ggml_repack_act_row_bytes
// bytes per column: Q8_K for the K-quants and IQ4_XS (for the SIMD Q4_K and Q5_K kernels with
// the sub-blocks' code sums in bsums[0..7], ggml_repack_q8_K_pair_sums); Q8_0 blocks followed
// by one int32 per block, -128 * sum of the block's codes, for Q8_0, Q4_0, Q5_0, IQ4_NL and
// MXFP4; plain Q8_1 rows for Q4_1, whose stored s = d * sum of the codes carries the min term
// as in the plain kernels).
#pragma once

#include "mul-mat.h"

#include "ggml/cpu.h"
#include "ggml/types.h"

#include <xmmintrin.h>

#include <cstddef>
#include <cstdint>

#define GGML_REPACK_ROWS 16

// True when weights of type t have a repacked layout.
bool ggml_repack_type_supported(ggml_type t);
// Bytes per row of the repacked layout for rows of k elements (k a multiple of the block size).
size_t ggml_repack_row_bytes(ggml_type t, int64_t k);
// Bytes of a repacked matrix of m rows of k elements (rows padded to groups of 16).
size_t ggml_repack_size(ggml_type t, int64_t k, int64_t m);
// m rows of k elements, rows lds bytes apart in the original layout -> the repacked layout.
void ggml_repack_pack(ggml_type t, int64_t k, int64_t m, const void * src, size_t lds, void * dst);
// The inverse: the repacked matrix back into m original rows, ldd bytes apart.
void ggml_repack_unpack(ggml_type t, int64_t k, int64_t m, const void * src, void * dst, size_t ldd);

// The activation type of the repacked kernels of t (Q8_0 or Q8_K), and its bytes per column.
ggml_type ggml_repack_act_type(ggml_type t);
size_t ggml_repack_act_row_bytes(ggml_type t, int64_t k);
// Appends the per-block sums of a Q8_0 activation row (see above) after its blocks.
void ggml_repack_q8_0_sums(void * row, int64_t k);
// In each block of a Q8_K activation row, bsums[j] (j < 8) becomes the sum of the 32 codes of
// sub-block j (bsums[2j] + bsums[2j+1]) and bsums[8..15] zero: the activations of the SIMD
// Q4_K and Q5_K kernels, whose mins term weights these sums (see above).
void ggml_repack_q8_K_pair_sums(void * row, int64_t k);

// Indexed by the weight's ggml_type.
struct ggml_repack_kernels {
    ggml_mul_mat_dot_fn dot[GGML_TYPE_COUNT] = {};   // nullptr: no repacked layout
    ggml_from_float_fn act[GGML_TYPE_COUNT] = {};    // F32 column -> activation row
};

// One weight type's kernels of a path, for ggml_repack_make_kernels.
struct ggml_repack_entry {
    ggml_type type;
    ggml_mul_mat_dot_fn dot;
    ggml_from_float_fn act;
};

// A path's table from its entries (any order; types not listed have no kernels).
template <size_t N>
constexpr ggml_repack_kernels ggml_repack_make_kernels(const ggml_repack_entry (&entries)[N]) {
    ggml_repack_kernels k;
    for (const ggml_repack_entry & e : entries) {
        k.dot[e.type] = e.dot;
        k.act[e.type] = e.act;
    }
    return k;
}

extern const ggml_repack_kernels ggml_repack_kernels_scalar;
extern const ggml_repack_kernels ggml_repack_kernels_avx2;
extern const ggml_repack_kernels ggml_repack_kernels_avx512;

// The table of one ISA path.
const ggml_repack_kernels & ggml_repack_kernels_for(ggml_cpu_isa isa);

// Software prefetch for the SIMD kernels, the group block ggml_repack_prefetch_ahead bytes on:
// one sequential stream per thread gets far less memory-level parallelism from the hardware
// prefetchers than the row streams of the plain layout did. A group block's prefetch is
// issued in `parts` parts, one before each sub-block's products: issued all at once, the
// prefetches wait for free fill buffers and hold back the arithmetic behind them (measured:
// 8 columns of Q4_K read from memory 27% faster spread out).
constexpr size_t ggml_repack_prefetch_ahead = 8192;

template <int parts>
inline void ggml_repack_prefetch_part(const uint8_t * g, size_t bytes, int part) {
    const size_t lines = (bytes + 63) / 64, per = (lines + parts - 1) / parts;
    const size_t end = lines < per * size_t(part + 1) ? lines : per * size_t(part + 1);
    for (size_t l = per * size_t(part); l < end; ++l) {
        _mm_prefetch(reinterpret_cast<const char *>(g + ggml_repack_prefetch_ahead + 64 * l), _MM_HINT_T0);
    }
}

// Group-block sizes (bytes for 16 rows and one block).
constexpr size_t ggml_repack_q8_0_group_bytes = 544;
constexpr size_t ggml_repack_q4_0_group_bytes = 288;
constexpr size_t ggml_repack_q4_K_group_bytes = 2368;
constexpr size_t ggml_repack_q5_K_group_bytes = 2880;
constexpr size_t ggml_repack_q6_K_group_bytes = 3360;
constexpr size_t ggml_repack_iq4_xs_group_bytes = 2240;
constexpr size_t ggml_repack_q5_0_group_bytes = 352;
constexpr size_t ggml_repack_q4_1_group_bytes = 320;
constexpr size_t ggml_repack_mxfp4_group_bytes = 272;
constexpr size_t ggml_repack_q3_K_group_bytes = 1856;
constexpr size_t ggml_repack_q2_K_group_bytes = 1344;
// Offsets inside a group block.
constexpr size_t ggml_repack_q8_0_qs = 32;
constexpr size_t ggml_repack_q4_0_qs = 32;
constexpr size_t ggml_repack_q4_K_dmin = 32;
constexpr size_t ggml_repack_q4_K_sc = 64;
constexpr size_t ggml_repack_q4_K_mn = 192;
constexpr size_t ggml_repack_q4_K_qs = 320;
constexpr size_t ggml_repack_q5_K_qh = 2368;
constexpr size_t ggml_repack_q6_K_sc = 32;
constexpr size_t ggml_repack_q6_K_qs = 288;
constexpr size_t ggml_repack_q6_K_unit = 768;  // bytes of one 64-element unit
constexpr size_t ggml_repack_iq4_xs_sc = 32;
constexpr size_t ggml_repack_iq4_xs_qs = 192;
constexpr size_t ggml_repack_q5_0_qh = 288;
constexpr size_t ggml_repack_mxfp4_qs = 16;
constexpr size_t ggml_repack_q3_K_sc = 32;
constexpr size_t ggml_repack_q3_K_qs = 320;
constexpr size_t ggml_repack_q3_K_unit = 384;  // bytes of one 64-element unit
constexpr size_t ggml_repack_q2_K_dmin = 32;
constexpr size_t ggml_repack_q2_K_sm = 64;
constexpr size_t ggml_repack_q2_K_qs = 320;
constexpr size_t ggml_repack_q4_1_inner = 32;  // Q4_1: where the Q4_0 group block starts
