// Internal helpers of the 32-element quantized formats (Q4_0 … Q8_1), shared by the reference
// code (quants-legacy.cpp) and the quality quantizer (quants-legacy-quantize.cpp).
//
// Usage:
//   uint8_t q[32];                                   // levels, 0..15 (Q4) or 0..31 (Q5)
//   quants_legacy_pack_nibbles(q, block.qs);         // low 4 bits: element j low nibble of qs[j],
//                                                    // element j + 16 high nibble of qs[j]
//   quants_legacy_pack_high_bits(q, block.qh);       // bit 4 of element j -> bit j of qh (LE u32)
//   block.d = ggml_fp32_to_fp16(quants_legacy_clamp_fp16_range(d));   // never inf / NaN
#pragma once

#include "ggml/types.h"

#include <cstdint>

inline constexpr int quants_legacy_block = 32;
// The largest finite fp16 value: scales are clamped to it so that huge inputs stay finite.
inline constexpr float quants_legacy_fp16_max = 65504.0f;

// Packs the low 4 bits of 32 levels into 16 bytes.
void quants_legacy_pack_nibbles(const uint8_t * q, uint8_t * qs);
// Packs bit 4 of 32 levels into 4 bytes (a little-endian 32-bit mask).
void quants_legacy_pack_high_bits(const uint8_t * q, uint8_t * qh);
// Clamps a float scale or offset into [-65504, 65504] (NaN gives 0).
float quants_legacy_clamp_fp16_range(float v);
