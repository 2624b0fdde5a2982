// Internal helpers of the non-linear 4-bit formats (IQ4_NL, IQ4_XS) and MXFP4, shared by the
// reference code (quants-iq.cpp) and the quality quantizer (quants-iq-quantize.cpp).
//
// Usage:
//   const int i = quants_iq4_nearest(x / d);          // index of the codebook value nearest x / d
//   int ls[8];
//   quants_iq4_xs_unpack_scales(block, ls);            // 6-bit scales, 0..63 (the scale is ls - 32)
//   quants_iq4_xs_pack_scales(ls, block);
//   quants_legacy_pack_nibbles(idx, block.qs);         // quants-legacy-impl.h: indices of 32 elements
#pragma once

#include "ggml/quants.h"

#include <array>
#include <cstdint>

// quants_iq4_nearest's table: for v in (k / 2 - 1/2, k / 2], k = -256 .. 255, the index of the
// nearest codebook value (at k + 256). Every midpoint of two codebook values is a multiple of
// 1/2, so one lookup on ceil(2 v) decides, a tie (v exactly on a midpoint) going to the lower.
extern const std::array<uint8_t, 512> quants_iq4_nearest_table;

// Index (0..15) of the value of ggml_iq4nl_codebook nearest to v; a tie goes to the lower
// index; v beyond the codebook saturates; NaN gives the value nearest 0 (index 8).
inline int quants_iq4_nearest(float v) {
    if (!(v == v)) return 8;
    v = v < -128.0f ? -128.0f : v;
    v = v > 127.0f ? 127.0f : v;
    const float y = 2.0f * v;
    int c = int(y);          // toward zero: the ceiling for y <= 0, the floor above
    c += float(c) < y;       // ceil(y), -256 .. 254
    return quants_iq4_nearest_table[size_t(c + 256)];
}

// The 8 6-bit scale codes of an IQ4_XS super-block (0..63; sub-block ib has scale ls[ib] - 32).
void quants_iq4_xs_unpack_scales(const block_iq4_xs & b, int * ls);
void quants_iq4_xs_pack_scales(const int * ls, block_iq4_xs & b);

// Nearest E2M1 code (0..15, bit 3 the sign) of v in units of the halved scale, i.e. of v against
// the doubled table {0, 1, 2, 3, 4, 6, 8, 12}; ties go to the smaller magnitude, beyond 12
// saturates, NaN gives 0.
int quants_mxfp4_nearest(float v);
