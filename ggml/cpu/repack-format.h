// ggml/cpu/repack-format.h — the conversion of whole matrices between the original rows and
// the groups of 16 rows of repack.h, for one format given by its codes (internal to
// repack-layout*.cpp).
//
//   using fmt_q4_0 = ggml_repack_format<block_q4_0, q4_0_codes, q4_0_decode, q4_0_encode,
//                                       q4_0_put, q4_0_get, ggml_repack_q4_0_group_bytes, QK4_0>;
//   fmt_q4_0::pack(k, m, src, lds, dst);
#pragma once

#include "repack.h"

#include <cstdint>
#include <cstring>

inline int64_t ggml_repack_n_groups(int64_t m) { return (m + GGML_REPACK_ROWS - 1) / GGML_REPACK_ROWS; }

// Per format: its block struct, codes struct (a member q[] of codes when pad_code is set: the
// padding rows' codes), the four conversions.
template <typename Block, typename Codes, void (*decode)(const Block &, Codes &), void (*encode)(const Codes &, Block &),
          void (*put)(const Codes *, uint8_t *), void (*get)(const uint8_t *, Codes *), size_t group_bytes, int blck,
          uint8_t pad_code = 0>
struct ggml_repack_format {
    static void pack(int64_t k, int64_t m, const void * src, size_t lds, void * dst) {
        const int64_t nb = k / blck;
        Codes c[GGML_REPACK_ROWS];
        uint8_t * out = static_cast<uint8_t *>(dst);
        for (int64_t gi = 0; gi < ggml_repack_n_groups(m); ++gi) {
            for (int64_t b = 0; b < nb; ++b) {
                for (int r = 0; r < GGML_REPACK_ROWS; ++r) {
                    const int64_t row = gi * GGML_REPACK_ROWS + r;
                    c[r] = Codes{};
                    if (row < m) {
                        const Block * blocks = reinterpret_cast<const Block *>(static_cast<const uint8_t *>(src) + size_t(row) * lds);
                        decode(blocks[b], c[r]);
                    } else if constexpr (pad_code != 0) {
                        std::memset(c[r].q, pad_code, sizeof c[r].q);  // the code of 0
                    }
                }
                put(c, out + (size_t(gi) * size_t(nb) + size_t(b)) * group_bytes);
            }
        }
    }
    static void unpack(int64_t k, int64_t m, const void * src, void * dst, size_t ldd) {
        const int64_t nb = k / blck;
        Codes c[GGML_REPACK_ROWS];
        const uint8_t * in = static_cast<const uint8_t *>(src);
        for (int64_t gi = 0; gi < ggml_repack_n_groups(m); ++gi) {
            for (int64_t b = 0; b < nb; ++b) {
                get(in + (size_t(gi) * size_t(nb) + size_t(b)) * group_bytes, c);
                for (int r = 0; r < GGML_REPACK_ROWS; ++r) {
                    const int64_t row = gi * GGML_REPACK_ROWS + r;
                    if (row >= m) break;
                    Block * blocks = reinterpret_cast<Block *>(static_cast<uint8_t *>(dst) + size_t(row) * ldd);
                    encode(c[r], blocks[b]);
                }
            }
        }
    }
};

// The 256-element formats (repack-layout-k.cpp): false when t is not one of them.
bool ggml_repack_k_pack(ggml_type t, int64_t k, int64_t m, const void * src, size_t lds, void * dst);
bool ggml_repack_k_unpack(ggml_type t, int64_t k, int64_t m, const void * src, void * dst, size_t ldd);
