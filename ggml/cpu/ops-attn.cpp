// FLASH_ATTN_EXT: fused attention with an online softmax (see ggml_flash_attn_ext in ggml.h).
//
// Work is cut into units: a batch entry (dim 3: independent problems of one shape), a block of
// kv heads (gb; more than one only when their query rows are few, as in decode, so that a unit
// reads whole cache rows), a block of their query heads (hb per kv head), a block of query rows
// (qb) and a range of KV cells (a chunk). The unit's (query, head) "rows" of one kv head share
// every K/V row they read.
//
// Groups: with a mask, each query row's visible cells become bits (64 cells a word, found with
// SIMD compares of the mask row), and the unit's query rows are grouped greedily by the cells
// they see (attn_group_rows): the tokens of one sequence share a group, decode rows of
// different sequences of a unified cache (disjoint cells) get groups of their own, rows whose
// sequences share a long copied prefix stay together. A group then walks only the union of its
// rows' cells, in tiles of up to k_tile cells gathered from the bits; cells that no row of the
// group sees are never read.
//
// Tiles: the K and V rows of the unit's kv heads for the tile's cells are first copied in cell
// order (attn_stage: one contiguous run per cell, or one for the whole tile; memory read in
// order, which the hardware prefetchers follow), then converted to F32 one kv head at a time
// (so that they stay in L1 for the rows that use them): V as rows of dvp floats, K in the
// layout of the group step (ops-attn.h: pairs of elements with cells across SIMD lanes) on the
// AVX2 / AVX-512 paths, as rows on the scalar path.
// Per row and tile (blocked online softmax, one pass over the cells):
//   s_t   = scale * q . k_t + mask_t            (-inf where the mask excludes the cell)
//           (with a soft-cap c > 0: c * tanh(scale * q . k_t / c) + mask_t)
//   m'    = max(m, max_t s_t);  alpha = exp(m - m')
//   w_t   = exp(s_t - m');  l = alpha * l + sum_t w_t;  acc = alpha * acc + sum_t w_t v_t
// and at the end dst = acc / l (zeros when no cell was visible). The SIMD paths do this for all
// the rows of one kv head and group at once (group_tile, ops-attn-tile.h: scores as a small
// GEMM of the rows' q and the tile's K, then the softmax and the accumulation over row
// blocks); the scalar path row by row.
//
// When there are few units for the threads (decode: one query row), the cells are split into
// chunks as well; each unit then leaves (m, l, acc) of its chunk in the shared part of the work
// buffer, and after a barrier every (query, head) pair merges its chunks:
//   M = max_c m_c;  out = sum_c exp(m_c - M) acc_c / sum_c exp(m_c - M) l_c.
//
// Work buffer: [partials (chunked plans only)][scratch of thread 0][scratch of thread 1]...,
// sized by ggml_cpu_flash_attn_work_size from the same plan the kernel makes.
#include "cpu/ops-attn.h"
#include "cpu/ops-common.h"
#include "ggml/quants.h"

#include <algorithm>
#include <cmath>
#include <cstring>

using namespace ggml_cpu_ops;

namespace {

constexpr int64_t k_tile = 64;             // visible cells per tile (a multiple of 16)
constexpr int64_t k_rows_max = 32;         // (query, head) rows per unit
constexpr int64_t k_min_chunk_cells = 256; // smallest KV chunk worth a unit of its own
constexpr int64_t k_stage_bytes = 128 << 10;  // K and V rows of a tile, copied in cell order  // K/V tiles of the kv heads loaded together (L2)

int64_t pad16(int64_t n) { return (n + 15) / 16 * 16; }
int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

struct attn_plan {
    int64_t d = 0, dv = 0, dp = 0, dvp = 0;
    int64_t n_q = 0, n_head = 0, n_head_kv = 0, n_kv = 0, hpg = 0;  // hpg: heads per kv head
    int64_t n_batch = 1;             // dim 3 of q, k, v and dst
    int64_t hb = 0, qb = 0, gb = 1;  // query heads (of one kv head), query rows, kv heads per unit
    int64_t n_hblk = 0, n_qblk = 0, n_gblk = 0;
    int64_t n_chunks = 1, chunk_cells = 0;
    int64_t n_words = 0;  // 64-bit words of visible-cell bits per query row (one chunk of cells)
    int64_t n_units = 0;
    size_t thread_floats = 0;   // scratch of one thread
    size_t partial_floats = 0;  // shared partial results (n_chunks > 1)
};

attn_plan attn_make_plan(const ggml_tensor * dst, int nth) {
    const ggml_tensor * q = dst->src[0];
    const ggml_tensor * k = dst->src[1];
    const ggml_tensor * v = dst->src[2];
    attn_plan pl;
    pl.d = q->ne[0];
    pl.dv = v->ne[0];
    pl.dp = pad16(pl.d);
    pl.dvp = pad16(pl.dv);
    pl.n_q = q->ne[1];
    pl.n_head = q->ne[2];
    pl.n_head_kv = k->ne[2];
    pl.n_kv = k->ne[1];
    pl.n_batch = q->ne[3];
    pl.hpg = pl.n_head / pl.n_head_kv;
    pl.hb = std::min(pl.hpg, k_rows_max);
    pl.n_hblk = ceil_div(pl.hpg, pl.hb);
    pl.qb = std::clamp<int64_t>(k_rows_max / pl.hb, 1, std::max<int64_t>(pl.n_q, 1));
    // About four units per thread: smaller query blocks first, then chunks of the cells.
    const int64_t want = nth > 1 ? 4 * int64_t(nth) : 1;
    auto units_without_chunks = [&] {
        return pl.n_batch * ceil_div(pl.n_head_kv, pl.gb) * pl.n_hblk * ceil_div(pl.n_q, pl.qb);
    };
    while (pl.qb > 1 && units_without_chunks() < want) pl.qb = (pl.qb + 1) / 2;
    pl.n_qblk = ceil_div(pl.n_q, pl.qb);
    // Few rows per kv head (decode): a unit takes several kv heads, so that it reads whole
    // cache rows (all heads of a cell are adjacent) as long as chunks still give every thread
    // its units.
    const int64_t max_chunks = std::max<int64_t>(pl.n_kv / k_min_chunk_cells, 1);
    if (pl.n_hblk == 1) {
        pl.gb = std::clamp<int64_t>(k_rows_max / (pl.hb * pl.qb), 1, pl.n_head_kv);
        while (pl.gb > 1 && units_without_chunks() * max_chunks < want) pl.gb = (pl.gb + 1) / 2;
    }
    pl.n_gblk = ceil_div(pl.n_head_kv, pl.gb);
    const int64_t base = units_without_chunks();
    if (base < want) pl.n_chunks = std::clamp<int64_t>(ceil_div(want, base), 1, max_chunks);
    pl.chunk_cells = ceil_div(pl.n_kv, pl.n_chunks);
    if (pl.chunk_cells > 0) pl.n_chunks = ceil_div(pl.n_kv, pl.chunk_cells);  // no empty chunk
    pl.n_units = base * pl.n_chunks;
    pl.n_words = ceil_div(pl.chunk_cells, 64);

    const int64_t rows = pl.gb * pl.hb * pl.qb;
    const int64_t seg = rows * pl.dp + rows * k_tile + rows * pl.dvp + 3 * rows + k_tile * (2 * pl.dp + pl.dvp) +
                        pl.qb * k_tile + 2 * 2 * k_tile + pl.dvp + pl.n_chunks + 2 * 2 * pl.qb * pl.n_words +
                        2 * (2 * pl.qb + 1) + k_stage_bytes / 4;
    pl.thread_floats = size_t(seg) + 16 * 16;  // + alignment slack of the segments
    if (pl.n_chunks > 1) pl.partial_floats = size_t(pl.n_chunks * pl.n_batch * pl.n_q * pl.n_head * (pl.dvp + 2));
    return pl;
}

size_t attn_thread_bytes(const attn_plan & pl) { return (pl.thread_floats * sizeof(float) + 63) / 64 * 64; }
size_t attn_partial_bytes(const attn_plan & pl) { return (pl.partial_floats * sizeof(float) + 63) / 64 * 64; }

// The tensors and the functions a kernel run uses.
struct attn_args {
    const ggml_tensor * q = nullptr;
    const ggml_tensor * k = nullptr;
    const ggml_tensor * v = nullptr;
    const ggml_tensor * mask = nullptr;
    ggml_tensor * dst = nullptr;
    float scale = 1.0f;
    float softcap = 0.0f;  // > 0: scores are soft-capped (scale is then divided by it)
    ggml_tensor k_stage, v_stage;
    ggml_to_float_fn k_to_f32 = nullptr;
    ggml_to_float_fn v_to_f32 = nullptr;
    ggml_to_float_fn mask_to_f32 = nullptr;
    const ggml_cpu_vec_fns * vec = nullptr;
    const ggml_cpu_attn_fns * fa = nullptr;
    const ggml_cpu_convert_fns * cv = nullptr;
};

// One thread's scratch, cut from its part of the work buffer (64-byte aligned segments).
struct attn_scratch {
    float * q = nullptr;     // [rows][dp]      the unit's query rows, zero-padded
    float * s = nullptr;     // [rows][k_tile]  scores, then weights
    float * acc = nullptr;   // [rows][dvp]     unnormalised outputs
    float * m = nullptr;     // [rows]          running maximum
    float * l = nullptr;     // [rows]          running sum of weights
    float * alpha = nullptr; // [rows]          rescaling of acc in a tile (group_tile)
    float * kt = nullptr;    // [k_tile][dp]    K rows as F32 before they are put in pairs
    float * ktt = nullptr;   // [dp / 2][2 k_tile] K of the tile (one kv head), in pairs of
                             //                 elements (group_tile), or rows (scalar path)
    float * vt = nullptr;    // [k_tile][dvp]   V rows of the tile (one kv head) as F32
    float * mt = nullptr;    // [qb][k_tile]    mask values of the tile per query row
    int64_t * cells = nullptr;  // [2][k_tile]  cell index of each tile row: this tile, the next
    char * stage = nullptr;     // K rows then V rows of the unit's kv heads for the tile's cells
    float * red = nullptr;   // [dvp + n_chunks] merging of chunks (chunked plans)
    uint64_t * bits = nullptr;   // [qb][n_words] visible cells of each query row of the unit
    uint64_t * ubits = nullptr;  // [qb][n_words] visible cells of each group of query rows
    int64_t * perm = nullptr;    // [qb]          the unit's query rows in group order
    int64_t * gend = nullptr;    // [qb + 1]      end of each group in perm
};

attn_scratch attn_scratch_of(const ggml_compute_params & p, const attn_plan & pl) {
    char * base = static_cast<char *>(p.wdata) + attn_partial_bytes(pl) + attn_thread_bytes(pl) * size_t(p.ith);
    float * f = reinterpret_cast<float *>(base);
    auto take = [&f](int64_t n) { float * r = f; f += pad16(n); return r; };
    const int64_t rows = pl.gb * pl.hb * pl.qb;
    attn_scratch sc;
    sc.q = take(rows * pl.dp);
    sc.s = take(rows * k_tile);
    sc.acc = take(rows * pl.dvp);
    sc.m = take(rows);
    sc.l = take(rows);
    sc.alpha = take(rows);
    sc.kt = take(k_tile * pl.dp);
    sc.ktt = take(k_tile * pl.dp);
    sc.vt = take(k_tile * pl.dvp);
    sc.mt = take(pl.qb * k_tile);
    sc.cells = reinterpret_cast<int64_t *>(take(2 * 2 * k_tile));
    sc.red = take(pl.dvp + pl.n_chunks);
    sc.bits = reinterpret_cast<uint64_t *>(take(2 * pl.qb * pl.n_words));
    sc.ubits = reinterpret_cast<uint64_t *>(take(2 * pl.qb * pl.n_words));
    sc.perm = reinterpret_cast<int64_t *>(take(2 * pl.qb));
    sc.gend = reinterpret_cast<int64_t *>(take(2 * (pl.qb + 1)));
    sc.stage = reinterpret_cast<char *>(take(k_stage_bytes / 4));
    return sc;
}

// The unit's coordinates (its rows: attn_unit_row).
struct attn_unit {
    int64_t b = 0;              // batch entry
    int64_t g0 = 0, ng = 0;     // kv heads [g0, g0 + ng)
    int64_t h_off = 0, nh = 0;  // query heads [h_off, h_off + nh) of each kv head's group
    int64_t i0 = 0, ni = 0;  // query rows [i0, i0 + ni)
    int64_t chunk = 0, c0 = 0, c1 = 0;  // cells [c0, c1)
};

attn_unit attn_unit_of(const attn_plan & pl, int64_t u) {
    attn_unit un;
    un.chunk = u % pl.n_chunks;
    u /= pl.n_chunks;
    const int64_t qblk = u % pl.n_qblk;
    u /= pl.n_qblk;
    const int64_t hblk = u % pl.n_hblk;
    u /= pl.n_hblk;
    un.b = u / pl.n_gblk;
    un.g0 = u % pl.n_gblk * pl.gb;
    un.ng = std::min(pl.gb, pl.n_head_kv - un.g0);
    un.h_off = hblk * pl.hb;
    un.nh = std::min(pl.hb, pl.hpg - un.h_off);
    un.i0 = qblk * pl.qb;
    un.ni = std::min(pl.qb, pl.n_q - un.i0);
    un.c0 = un.chunk * pl.chunk_cells;
    un.c1 = std::min(pl.n_kv, un.c0 + pl.chunk_cells);
    return un;
}

// Mask row of query i of batch entry b (a mask with one entry serves every b).
const char * attn_mask_row(const ggml_tensor * mask, int64_t i, int64_t b) {
    return static_cast<const char *>(mask->data) + size_t(i) * mask->nb[1] + size_t(b % mask->ne[3]) * mask->nb[3];
}

// ---- which cells a unit reads: visible-cell bits, groups of query rows, tiles ----

int64_t attn_popcount(const uint64_t * x, int64_t n) {
    int64_t c = 0;
    for (int64_t w = 0; w < n; ++w) c += __builtin_popcountll(x[w]);
    return c;
}

int64_t attn_popcount_or(const uint64_t * x, const uint64_t * y, int64_t n) {
    int64_t c = 0;
    for (int64_t w = 0; w < n; ++w) c += __builtin_popcountll(x[w] | y[w]);
    return c;
}

// Visible-cell bits over [c0, c1) of the unit's query row ii, into bits (words of 64 cells).
void attn_row_bits(const attn_args & a, const attn_unit & un, int64_t ii, uint64_t * bits) {
    const bool f16 = a.mask->type == GGML_TYPE_F16;
    const char * row = attn_mask_row(a.mask, un.i0 + ii, un.b) + size_t(un.c0) * (f16 ? 2 : 4);
    a.fa->mask_bits(row, f16, un.c1 - un.c0, bits);
}

// Greedy grouping of the unit's query rows by the cells they see: a row joins the first group
// where scoring it with the group's cells wastes little, (rows + 1) |U + B| <= 9/8 (rows |U| + |B|)
// + a tile's worth of slack (U: the group's cells, B: the row's); otherwise it starts a group.
// Tokens of one sequence (causal rows) share a group; decode rows of different sequences, which
// see disjoint cells, get groups of their own. Fills sc.perm, sc.gend and sc.ubits; returns the
// number of groups.
int64_t attn_group_rows(const attn_plan & pl, const attn_unit & un, const attn_scratch & sc) {
    const int64_t nw = ceil_div(un.c1 - un.c0, 64);
    int64_t group_of[k_rows_max], rows_in[k_rows_max], cells_in[k_rows_max];
    int64_t n_groups = 0;
    for (int64_t ii = 0; ii < un.ni; ++ii) {
        const uint64_t * b = sc.bits + ii * pl.n_words;
        const int64_t nb = attn_popcount(b, nw);
        int64_t g = 0;
        for (; g < n_groups; ++g) {
            const int64_t u = attn_popcount_or(sc.ubits + g * pl.n_words, b, nw);
            if (8 * (rows_in[g] + 1) * u <= 9 * (rows_in[g] * cells_in[g] + nb) + 8 * k_tile) break;
        }
        uint64_t * ub = sc.ubits + g * pl.n_words;
        if (g == n_groups) {
            ++n_groups;
            rows_in[g] = 0;
            std::fill(ub, ub + nw, uint64_t(0));
        }
        for (int64_t w = 0; w < nw; ++w) ub[w] |= b[w];
        cells_in[g] = attn_popcount(ub, nw);
        ++rows_in[g];
        group_of[ii] = g;
    }
    int64_t k = 0;
    for (int64_t g = 0; g < n_groups; ++g) {
        for (int64_t ii = 0; ii < un.ni; ++ii) {
            if (group_of[ii] == g) sc.perm[k++] = ii;
        }
        sc.gend[g] = k;
    }
    return n_groups;
}

// The unit's groups of query rows (one group of every row without a mask); with a mask, the
// cells each group sees as bits in sc.ubits.
int64_t attn_unit_groups(const attn_args & a, const attn_plan & pl, const attn_unit & un, const attn_scratch & sc) {
    if (!a.mask || un.ni == 1) {
        for (int64_t ii = 0; ii < un.ni; ++ii) sc.perm[ii] = ii;
        sc.gend[0] = un.ni;
        if (a.mask) attn_row_bits(a, un, 0, sc.ubits);
        return 1;
    }
    for (int64_t ii = 0; ii < un.ni; ++ii) attn_row_bits(a, un, ii, sc.bits + ii * pl.n_words);
    return attn_group_rows(pl, un, sc);
}

// Walks the visible cells of a group (bits nullptr: every cell of [j, c1)).
struct attn_cursor {
    const uint64_t * bits = nullptr;
    int64_t nw = 0, w = 0;
    uint64_t cur = 0;
    int64_t c0 = 0, j = 0, c1 = 0;
};

// The next tile: up to k_tile visible cells into cells; returns their number (0: none left).
int64_t attn_gather_tile(attn_cursor & it, int64_t * cells) {
    int64_t n = 0;
    if (!it.bits) {
        for (; n < k_tile && it.j < it.c1; ++it.j) cells[n++] = it.j;
        return n;
    }
    while (n < k_tile) {
        while (it.cur == 0) {
            if (++it.w >= it.nw) return n;
            it.cur = it.bits[it.w];
        }
        cells[n++] = it.c0 + it.w * 64 + __builtin_ctzll(it.cur);
        it.cur &= it.cur - 1;
    }
    return n;
}

// Mask values of the tile's cells for the group's query rows perm[k0 .. k1), row k - k0 of
// sc.mt (converted in one go when the cells are consecutive, as they are unless cells were
// skipped).
void attn_load_mask_tile(const attn_args & a, const attn_unit & un, const attn_scratch & sc, const int64_t * cells,
                         int64_t n, int64_t k0, int64_t k1) {
    const bool consecutive = cells[n - 1] - cells[0] == n - 1;
    const size_t es = ggml_type_size(a.mask->type);
    for (int64_t k = k0; k < k1; ++k) {
        const char * row = attn_mask_row(a.mask, un.i0 + sc.perm[k], un.b);
        float * mt = sc.mt + (k - k0) * k_tile;
        if (consecutive) {
            a.mask_to_f32(row + size_t(cells[0]) * es, mt, n);
            continue;
        }
        for (int64_t t = 0; t < n; ++t) a.mask_to_f32(row + size_t(cells[t]) * es, mt + t, 1);
    }
}

// Rows of kv head g of batch entry b of t (K or V) for the n cells, as F32 rows of dp floats
// (zero-padded).
void attn_load_rows(const attn_args & a, const ggml_tensor * t, ggml_to_float_fn to_f32, int64_t g, int64_t b,
                    const int64_t * cells, int64_t n, float * y, int64_t dp) {
    const uint8_t * base = static_cast<const uint8_t *>(t->data) + size_t(g) * t->nb[2] + size_t(b) * t->nb[3];
    const int64_t d = t->ne[0];
    if (t->type == GGML_TYPE_F16) {
        a.fa->rows_f16_to_f32(base, t->nb[1], cells, n, d, y, dp);
        return;
    }
    if (t->type == GGML_TYPE_Q8_0) {
        a.fa->rows_q8_0_to_f32(base, t->nb[1], cells, n, d, y, dp);
        return;
    }
    for (int64_t i = 0; i < n; ++i) {
        float * yr = y + i * dp;
        to_f32(base + size_t(cells[i]) * t->nb[1], yr, d);
        std::fill(yr + d, yr + dp, 0.0f);
    }
}

// K of kv head g for cells[0 .. n) (n <= 16) into the tile kt from cell t0 on: in pairs of
// elements (group_tile; F16 rows straight, others as rows first), or as rows (scalar path;
// rows up to 16 zero-padded).
void attn_load_k_block(const attn_args & a, const attn_plan & pl, const attn_scratch & sc, int64_t g, int64_t b,
                       const int64_t * cells, int64_t n, float * kt, int64_t t0) {
    if (!a.fa->group_tile) {
        attn_load_rows(a, a.k, a.k_to_f32, g, b, cells, n, kt + t0 * pl.dp, pl.dp);
        std::fill(kt + (t0 + n) * pl.dp, kt + (t0 + 16) * pl.dp, 0.0f);
        return;
    }
    if (a.k->type == GGML_TYPE_F16) {
        const uint8_t * base = static_cast<const uint8_t *>(a.k->data) + size_t(g) * a.k->nb[2] + size_t(b) * a.k->nb[3];
        a.fa->rows_f16_to_f32_t(base, a.k->nb[1], cells, n, a.k->ne[0], kt + 2 * t0, 2 * k_tile);
        return;
    }
    attn_load_rows(a, a.k, a.k_to_f32, g, b, cells, n, sc.kt, pl.dp);
    std::fill(sc.kt + n * pl.dp, sc.kt + 16 * pl.dp, 0.0f);
    a.fa->transpose(sc.kt, pl.dp, 16, kt + 2 * t0, 2 * k_tile);
}

// 0, 1, .. k_tile - 1: the cells of a staged tile.
const int64_t * attn_iota() {
    static const struct iota {
        int64_t v[k_tile];
        iota() {
            for (int64_t i = 0; i < k_tile; ++i) v[i] = i;
        }
    } list;
    return list.v;
}

// Copies the K and V rows of every kv head of the unit for the n cells into sc.stage in cell
// order (one copy for a run of whole cache rows): reads that run through memory in order, which
// the hardware prefetchers follow far better than rows of one kv head at a stride. st gets the
// same tensors over the staged rows (cell t at row t). Returns false when they do not fit.
bool attn_stage(const attn_args & a, const attn_unit & un, const attn_scratch & sc, const int64_t * cells, int64_t n,
                attn_args & st) {
    size_t off = 0;
    ggml_tensor * out[2] = {&st.k_stage, &st.v_stage};
    const ggml_tensor * in[2] = {a.k, a.v};
    for (int i = 0; i < 2; ++i) {
        const ggml_tensor * t = in[i];
        const size_t span = size_t(un.ng - 1) * t->nb[2] + ggml_row_size(t->type, t->ne[0]);
        if (off + span * size_t(n) > size_t(k_stage_bytes)) return false;
        const char * base = static_cast<const char *>(t->data) + size_t(un.g0) * t->nb[2] + size_t(un.b) * t->nb[3];
        char * y = sc.stage + off;
        if (span == t->nb[1] && cells[n - 1] - cells[0] == n - 1) {
            std::memcpy(y, base + size_t(cells[0]) * t->nb[1], span * size_t(n));
        } else {
            for (int64_t c = 0; c < n; ++c) std::memcpy(y + size_t(c) * span, base + size_t(cells[c]) * t->nb[1], span);
        }
        *out[i] = *t;
        // the loaders add g * nb[2] + b * nb[3] for kv head g of batch entry b: kv head g0 at y
        out[i]->data = reinterpret_cast<void *>(reinterpret_cast<uintptr_t>(y) - size_t(un.g0) * t->nb[2] -
                                                size_t(un.b) * t->nb[3]);
        out[i]->nb[1] = span;
        off += span * size_t(n);
    }
    st.k = &st.k_stage;
    st.v = &st.v_stage;
    return true;
}

// K and V tiles of kv head g for the tile's n cells, as F32 (K in pairs of elements for
// group_tile, or rows; padding zeroed up to a multiple of 16 cells).
void attn_load_tile(const attn_args & a, const attn_plan & pl, const attn_scratch & sc, int64_t g, int64_t b,
                    const int64_t * cells, int64_t n) {
    for (int64_t t0 = 0; t0 < n; t0 += 16) {
        attn_load_k_block(a, pl, sc, g, b, cells + t0, std::min<int64_t>(16, n - t0), sc.ktt, t0);
    }
    attn_load_rows(a, a.v, a.v_to_f32, g, b, cells, n, sc.vt, pl.dvp);
}

// Prefetches the K and V rows of kv head g for the n cells of the next tile: it reads them
// after this tile's compute (of every kv head of the unit), which hides the latency of the
// strided rows.
void attn_prefetch_tile(const attn_args & a, const attn_unit & un, int64_t g, const int64_t * cells, int64_t n) {
    for (const ggml_tensor * t : {a.k, a.v}) {
        const size_t bytes = ggml_row_size(t->type, t->ne[0]);
        const char * base = static_cast<const char *>(t->data) + size_t(g) * t->nb[2] + size_t(un.b) * t->nb[3];
        for (int64_t i = 0; i < n; ++i) {
            const char * row = base + size_t(cells[i]) * t->nb[1];
            for (size_t o = 0; o < bytes; o += 64) __builtin_prefetch(row + o);
        }
    }
}

// One row r (mask row mi of the tile) over the current tile of n cells (K/V of its kv head):
// the scalar path, row by row.
void attn_row_tile(const attn_args & a, const attn_plan & pl, const attn_scratch & sc, const float * kt,
                   const float * vt, int64_t r, int64_t mi, int64_t n) {
    float * s = sc.s + r * k_tile;
    const float * mrow = a.mask ? sc.mt + mi * k_tile : nullptr;  // -inf in the mask stays -inf
    const float * q = sc.q + r * pl.dp;
    const float mx = a.softcap > 0.0f ? a.fa->scores_softcap(q, kt, pl.dp, n, a.scale, a.softcap, mrow, s)
                                      : a.fa->scores(q, kt, pl.dp, n, a.scale, mrow, s);
    const float m_new = std::max(sc.m[r], mx);
    if (m_new == -INFINITY) return;  // nothing visible to this row yet
    const float alpha = sc.m[r] == -INFINITY ? 0.0f : std::exp(sc.m[r] - m_new);
    const float sum = a.vec->exp_sum(s, m_new, s, n);
    float * acc = sc.acc + r * pl.dvp;
    if (alpha != 1.0f) a.vec->scale(acc, alpha, 0.0f, acc, pl.dvp);
    sc.l[r] = sc.l[r] * alpha + sum;
    sc.m[r] = m_new;
    a.fa->accumulate(acc, vt, pl.dvp, s, n);
}

// Rows [r0, r0 + nr) (one kv head, its tiles kt and vt; mask row (r - r0) / nh) over the
// current tile of n cells.
void attn_rows_tile(const attn_args & a, const attn_plan & pl, const attn_scratch & sc, const float * kt,
                    const float * vt, int64_t r0, int64_t nr, int64_t nh, int64_t n) {
    if (!a.fa->group_tile) {
        for (int64_t r = r0; r < r0 + nr; ++r) attn_row_tile(a, pl, sc, kt, vt, r, (r - r0) / nh, n);
        return;
    }
    ggml_cpu_attn_group g;
    g.q = sc.q + r0 * pl.dp;
    g.kt = kt;
    g.v = vt;
    g.mask = a.mask ? sc.mt : nullptr;
    g.s = sc.s + r0 * k_tile;
    g.m = sc.m + r0;
    g.l = sc.l + r0;
    g.acc = sc.acc + r0 * pl.dvp;
    g.alpha = sc.alpha + r0;
    g.nr = nr;
    g.n = n;
    g.dp = pl.dp;
    g.dvp = pl.dvp;
    g.k_tile = k_tile;
    g.rows_per_mask = nh;
    g.scale = a.scale;
    g.cap = a.softcap;
    a.fa->group_tile(g);
}

// ---- units ----

int64_t attn_unit_head(const attn_plan & pl, const attn_unit & un, int64_t gi, int64_t hh) {
    return (un.g0 + gi) * pl.hpg + un.h_off + hh;
}

// Row r of a unit = (kv head g0 + gi, k-th query row in group order, query head hh of its
// block): r = (gi * ni + k) * nh + hh, so that the rows of one kv head and one group are
// consecutive; the query row is i0 + perm[k], the query head (g0 + gi) * hpg + h_off + hh.
int64_t attn_unit_row(const attn_unit & un, int64_t gi, int64_t k, int64_t hh) {
    return (gi * un.ni + k) * un.nh + hh;
}

// The unit's query rows into scratch (in group order), and the running state reset.
void attn_unit_init(const attn_args & a, const attn_plan & pl, const attn_unit & un, const attn_scratch & sc) {
    const int64_t rows = un.ni * un.ng * un.nh;
    for (int64_t gi = 0; gi < un.ng; ++gi) {
        for (int64_t k = 0; k < un.ni; ++k) {
            for (int64_t hh = 0; hh < un.nh; ++hh) {
                float * qr = sc.q + attn_unit_row(un, gi, k, hh) * pl.dp;
                const int64_t i = un.i0 + sc.perm[k];
                load_elems_f32(a.q, row_ptr(a.q, i, attn_unit_head(pl, un, gi, hh), un.b), qr, pl.d, *a.cv);
                std::fill(qr + pl.d, qr + pl.dp, 0.0f);
            }
        }
    }
    std::fill(sc.m, sc.m + rows, -INFINITY);
    std::fill(sc.l, sc.l + rows, 0.0f);
    std::fill(sc.acc, sc.acc + rows * pl.dvp, 0.0f);
}

float * attn_partial_acc(const ggml_compute_params & p, const attn_plan & pl, int64_t pair, int64_t chunk) {
    return static_cast<float *>(p.wdata) + (pair * pl.n_chunks + chunk) * pl.dvp;
}
float * attn_partial_ml(const ggml_compute_params & p, const attn_plan & pl, int64_t pair, int64_t chunk) {
    return static_cast<float *>(p.wdata) + pl.n_batch * pl.n_q * pl.n_head * pl.n_chunks * pl.dvp +
           2 * (pair * pl.n_chunks + chunk);
}

// (query, head) pairs are numbered (b * n_q + i) * n_head + h.
float * attn_dst_row(const ggml_tensor * dst, int64_t i, int64_t h, int64_t b) {
    return reinterpret_cast<float *>(static_cast<char *>(dst->data) + size_t(h) * dst->nb[1] + size_t(i) * dst->nb[2] +
                                     size_t(b) * dst->nb[3]);
}

// The unit's results: normalised into dst, or its chunk's (m, l, acc) into the partials.
void attn_unit_finish(const ggml_compute_params & p, const attn_args & a, const attn_plan & pl, const attn_unit & un,
                      const attn_scratch & sc) {
    for (int64_t r = 0; r < un.ni * un.ng * un.nh; ++r) {
        const int64_t hh = r % un.nh, k = r / un.nh % un.ni, gi = r / (un.nh * un.ni);
        const int64_t i = un.i0 + sc.perm[k], h = attn_unit_head(pl, un, gi, hh);
        const float * acc = sc.acc + r * pl.dvp;
        if (pl.n_chunks > 1) {
            const int64_t pair = (un.b * pl.n_q + i) * pl.n_head + h;
            std::memcpy(attn_partial_acc(p, pl, pair, un.chunk), acc, size_t(pl.dvp) * sizeof(float));
            float * ml = attn_partial_ml(p, pl, pair, un.chunk);
            ml[0] = sc.m[r];
            ml[1] = sc.l[r];
            continue;
        }
        float * out = attn_dst_row(a.dst, i, h, un.b);
        if (sc.l[r] > 0.0f) {
            a.vec->scale(acc, 1.0f / sc.l[r], 0.0f, out, pl.dv);
        } else {
            std::fill(out, out + pl.dv, 0.0f);
        }
    }
}

// The query rows perm[k0 .. k1) of the unit over the cells they see (ubits; nullptr: all of
// [c0, c1)), tile by tile: the tile's K/V rows staged in cell order (or, when they do not fit,
// read in place with the next tile's rows prefetched), then converted and used one kv head at
// a time.
void attn_run_group(const attn_args & a, const attn_plan & pl, const attn_unit & un, const attn_scratch & sc,
                    int64_t k0, int64_t k1, const uint64_t * ubits) {
    attn_cursor it;
    it.bits = ubits;
    it.nw = ceil_div(un.c1 - un.c0, 64);
    it.cur = ubits && it.nw > 0 ? ubits[0] : 0;
    it.c0 = it.j = un.c0;
    it.c1 = un.c1;
    int64_t * cur = sc.cells;
    int64_t * nxt = sc.cells + k_tile;
    int64_t n = attn_gather_tile(it, cur);
    attn_args st = a;
    while (n > 0) {
        const int64_t nn = attn_gather_tile(it, nxt);
        if (a.mask) attn_load_mask_tile(a, un, sc, cur, n, k0, k1);
        const bool staged = attn_stage(a, un, sc, cur, n, st);
        for (int64_t gi = 0; gi < un.ng; ++gi) {
            if (staged) {
                attn_load_tile(st, pl, sc, un.g0 + gi, un.b, attn_iota(), n);
            } else {
                attn_load_tile(a, pl, sc, un.g0 + gi, un.b, cur, n);
                attn_prefetch_tile(a, un, un.g0 + gi, nxt, nn);
            }
            attn_rows_tile(a, pl, sc, sc.ktt, sc.vt, attn_unit_row(un, gi, k0, 0), (k1 - k0) * un.nh, un.nh, n);
        }
        std::swap(cur, nxt);
        n = nn;
    }
}

void attn_run_unit(const ggml_compute_params & p, const attn_args & a, const attn_plan & pl, const attn_scratch & sc,
                   int64_t u) {
    const attn_unit un = attn_unit_of(pl, u);
    const int64_t n_groups = attn_unit_groups(a, pl, un, sc);
    attn_unit_init(a, pl, un, sc);
    for (int64_t g = 0; g < n_groups; ++g) {
        const int64_t k0 = g == 0 ? 0 : sc.gend[g - 1];
        attn_run_group(a, pl, un, sc, k0, sc.gend[g], a.mask ? sc.ubits + g * pl.n_words : nullptr);
    }
    attn_unit_finish(p, a, pl, un, sc);
}

// Merges the chunks of (query, head) pairs [pair0, pair1) into dst; tmp holds dvp + n_chunks floats.
void attn_reduce_pairs(const ggml_compute_params & p, const attn_args & a, const attn_plan & pl, float * tmp,
                       int64_t pair0, int64_t pair1) {
    float * w = tmp + pl.dvp;
    for (int64_t pair = pair0; pair < pair1; ++pair) {
        const float * ml = attn_partial_ml(p, pl, pair, 0);
        float big = -INFINITY;
        for (int64_t c = 0; c < pl.n_chunks; ++c) big = std::max(big, ml[2 * c]);
        float * out = attn_dst_row(a.dst, pair / pl.n_head % pl.n_q, pair % pl.n_head, pair / (pl.n_head * pl.n_q));
        float l = 0.0f;
        if (big != -INFINITY) {
            for (int64_t c = 0; c < pl.n_chunks; ++c) {
                w[c] = ml[2 * c] == -INFINITY ? 0.0f : std::exp(ml[2 * c] - big);
                l += w[c] * ml[2 * c + 1];
            }
        }
        if (!(l > 0.0f)) {
            std::fill(out, out + pl.dv, 0.0f);
            continue;
        }
        std::fill(tmp, tmp + pl.dvp, 0.0f);
        a.fa->accumulate(tmp, attn_partial_acc(p, pl, pair, 0), pl.dvp, w, pl.n_chunks);
        a.vec->scale(tmp, 1.0f / l, 0.0f, out, pl.dv);
    }
}

ggml_to_float_fn attn_row_converter(ggml_type t, const ggml_cpu_convert_fns & cv) {
    ggml_to_float_fn f = cv.row_to_f32(t);
    return f ? f : ggml_get_type_traits(t).to_float;
}

}  // namespace

const ggml_cpu_attn_fns & ggml_cpu_attn_for(ggml_cpu_isa isa) {
    switch (isa) {
        case ggml_cpu_isa::amx:
        case ggml_cpu_isa::avx512: return ggml_cpu_attn_fns_avx512();
        case ggml_cpu_isa::avx2: return ggml_cpu_attn_fns_avx2();
        case ggml_cpu_isa::best: {
            const ggml_cpu_isa best = ggml_cpu_detect_features().best_isa();
            return best == ggml_cpu_isa::best ? ggml_cpu_attn_fns_scalar() : ggml_cpu_attn_for(best);
        }
        case ggml_cpu_isa::scalar: break;
    }
    return ggml_cpu_attn_fns_scalar();
}

size_t ggml_cpu_flash_attn_work_size(const ggml_tensor * dst, int n_threads) {
    const attn_plan pl = attn_make_plan(dst, n_threads);
    return attn_partial_bytes(pl) + attn_thread_bytes(pl) * size_t(n_threads);
}

bool ggml_cpu_flash_attn_supported(const ggml_tensor * dst) {
    auto kv_ok = [](const ggml_tensor * t) {
        return (t->type == GGML_TYPE_F32 || t->type == GGML_TYPE_F16 || t->type == GGML_TYPE_Q8_0) && rows_dense(t);
    };
    const ggml_tensor * q = dst->src[0];
    const ggml_tensor * mask = dst->src[3];
    const bool mask_ok = !mask || ((mask->type == GGML_TYPE_F32 || mask->type == GGML_TYPE_F16) && rows_dense(mask));
    return dst->type == GGML_TYPE_F32 && is_dense(dst) && q->type == GGML_TYPE_F32 && kv_ok(dst->src[1]) &&
           kv_ok(dst->src[2]) && mask_ok;
}

void ggml_cpu_op_flash_attn_ext(const ggml_compute_params & p, ggml_tensor * dst) {
    const attn_plan pl = attn_make_plan(dst, p.nth);
    GGML_ASSERT(p.wsize >= ggml_cpu_flash_attn_work_size(dst, p.nth));
    const ggml_cpu_convert_fns & cv = ggml_cpu_convert_for(p.isa);
    attn_args a;
    a.q = dst->src[0];
    a.k = dst->src[1];
    a.v = dst->src[2];
    a.mask = dst->src[3];
    a.dst = dst;
    a.scale = ggml_get_flash_attn_scale(dst);
    a.softcap = ggml_get_flash_attn_softcap(dst);
    if (a.softcap > 0.0f) a.scale /= a.softcap;
    a.k_to_f32 = attn_row_converter(a.k->type, cv);
    a.v_to_f32 = attn_row_converter(a.v->type, cv);
    if (a.mask) a.mask_to_f32 = attn_row_converter(a.mask->type, cv);
    a.vec = &ggml_cpu_vec_for(p.isa);
    a.fa = &ggml_cpu_attn_for(p.isa);
    a.cv = &cv;
    const attn_scratch sc = attn_scratch_of(p, pl);
    ggml_cpu_parallel_for(p, pl.n_units, 1, [&](int64_t u0, int64_t u1) {
        for (int64_t u = u0; u < u1; ++u) attn_run_unit(p, a, pl, sc, u);
    });
    if (pl.n_chunks == 1) return;
    p.barrier();
    const int64_t n_pairs = pl.n_batch * pl.n_q * pl.n_head;
    const int64_t chunk = std::max<int64_t>(1, n_pairs / (4 * int64_t(p.nth)));
    auto reduce = [&](int64_t r0, int64_t r1) { attn_reduce_pairs(p, a, pl, sc.red, r0, r1); };
    ggml_cpu_parallel_for(p, n_pairs, chunk, reduce, 1);
}
