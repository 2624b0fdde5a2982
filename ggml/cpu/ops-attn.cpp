// FLASH_ATTN_EXT: fused attention with an online softmax (see ggml_flash_attn_ext in ggml.h).
//
// Work is cut into units: a batch entry (dim 3: independent problems of one shape), a block of
// kv heads (gb; more than one only when their query rows are few, as in decode, so that a unit
// reads whole cache rows), a block of their query heads (hb per kv head), a block of query rows
// (qb) and a range of KV cells (a chunk). The unit's
// (query, head) "rows" of one kv head share every K/V row they read: each tile of up to
// k_tile visible cells is converted to F32 once (rows zero-padded to 16 floats) and then used
// by all those rows (the K/V rows of one kv head at a time, so that the tile stays in L1).
// Per row and tile (blocked online softmax, one pass over the cells):
//   s_t   = scale * q . k_t + mask_t            (-inf where the mask excludes the cell)
//           (with a soft-cap c > 0: c * tanh(scale * q . k_t / c) + mask_t, its own inner loop)
//   m'    = max(m, max_t s_t);  alpha = exp(m - m')
//   w_t   = exp(s_t - m');  l = alpha * l + sum_t w_t;  acc = alpha * acc + sum_t w_t v_t
// and at the end dst = acc / l (zeros when no cell was visible). Cells that the mask excludes
// for every query row of a unit are skipped without reading K or V.
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

int64_t pad16(int64_t n) { return (n + 15) / 16 * 16; }
int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

struct attn_plan {
    int64_t d = 0, dv = 0, dp = 0, dvp = 0;
    int64_t n_q = 0, n_head = 0, n_head_kv = 0, n_kv = 0, hpg = 0;  // hpg: heads per kv head
    int64_t n_batch = 1;             // dim 3 of q, k, v and dst
    int64_t hb = 0, qb = 0, gb = 1;  // query heads (of one kv head), query rows, kv heads per unit
    int64_t n_hblk = 0, n_qblk = 0, n_gblk = 0;
    int64_t n_chunks = 1, chunk_cells = 0;
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

    const int64_t rows = pl.gb * pl.hb * pl.qb;
    const int64_t seg = rows * pl.dp + rows * k_tile + rows * pl.dvp + 2 * rows + k_tile * (pl.dp + pl.dvp) +
                        pl.qb * k_tile + 2 * k_tile + pl.dvp + pl.n_chunks;
    pl.thread_floats = size_t(seg) + 16 * 10;  // + alignment slack of the ten segments
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
    float * kt = nullptr;    // [k_tile][dp]    K rows of the tile as F32 (one kv head at a time)
    float * vt = nullptr;    // [k_tile][dvp]   V rows of the tile as F32
    float * mt = nullptr;    // [qb][k_tile]    mask values of the tile per query row
    int64_t * cells = nullptr;  // [k_tile]     cell index of each tile row
    float * red = nullptr;   // [dvp + n_chunks] merging of chunks (chunked plans)
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
    sc.kt = take(k_tile * pl.dp);
    sc.vt = take(k_tile * pl.dvp);
    sc.mt = take(pl.qb * k_tile);
    sc.cells = reinterpret_cast<int64_t *>(take(2 * k_tile));
    sc.red = take(pl.dvp + pl.n_chunks);
    return sc;
}

// The unit's coordinates. Row r of a unit = (query ii, kv head g0 + gi, query head hh of its block):
// r = (ii * ng + gi) * nh + hh, and the query head is (g0 + gi) * hpg + h_off + hh.
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

// Whether mask element j of a mask row is not -inf (F16 -inf is the one pattern 0xfc00).
bool attn_mask_visible(ggml_type type, const char * row, int64_t j) {
    if (type == GGML_TYPE_F32) {
        float x;
        std::memcpy(&x, row + size_t(j) * 4, 4);
        return x != -INFINITY;
    }
    uint16_t h;
    std::memcpy(&h, row + size_t(j) * 2, 2);
    return h != 0xfc00;
}

// Next tile: up to k_tile cells from *j on (below c1) that some query row of the unit sees,
// into sc.cells; returns the number of cells.
int64_t attn_gather_tile(const attn_args & a, const attn_unit & un, const attn_scratch & sc, int64_t * j) {
    int64_t n = 0;
    if (!a.mask) {
        for (; n < k_tile && *j < un.c1; ++*j) sc.cells[n++] = *j;
        return n;
    }
    const char * row0 = attn_mask_row(a.mask, un.i0, un.b);
    const size_t nb1 = a.mask->nb[1];
    for (; n < k_tile && *j < un.c1; ++*j) {
        bool visible = false;
        for (int64_t ii = 0; ii < un.ni && !visible; ++ii) {
            visible = attn_mask_visible(a.mask->type, row0 + size_t(ii) * nb1, *j);
        }
        if (visible) sc.cells[n++] = *j;
    }
    return n;
}

// Mask values of the tile's cells for each query row of the unit, into sc.mt (converted in
// one go when the cells are consecutive, as they are unless cells were skipped).
void attn_load_mask_tile(const attn_args & a, const attn_unit & un, const attn_scratch & sc, int64_t n) {
    const bool consecutive = sc.cells[n - 1] - sc.cells[0] == n - 1;
    const size_t es = ggml_type_size(a.mask->type);
    for (int64_t ii = 0; ii < un.ni; ++ii) {
        const char * row = attn_mask_row(a.mask, un.i0 + ii, un.b);
        float * mt = sc.mt + ii * k_tile;
        if (consecutive) {
            a.mask_to_f32(row + size_t(sc.cells[0]) * es, mt, n);
            continue;
        }
        for (int64_t t = 0; t < n; ++t) a.mask_to_f32(row + size_t(sc.cells[t]) * es, mt + t, 1);
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

// K and V rows of kv head g for the tile's cells as F32 (padding zeroed; K rows up to a
// multiple of 16). One kv head at a time keeps the tile in L1 for the rows that use it.
void attn_load_tile(const attn_args & a, const attn_plan & pl, const attn_scratch & sc, int64_t g, int64_t b,
                    int64_t n) {
    attn_load_rows(a, a.k, a.k_to_f32, g, b, sc.cells, n, sc.kt, pl.dp);
    attn_load_rows(a, a.v, a.v_to_f32, g, b, sc.cells, n, sc.vt, pl.dvp);
    std::fill(sc.kt + n * pl.dp, sc.kt + pad16(n) * pl.dp, 0.0f);
}

// Prefetches the K and V rows of kv head g for the k_tile cells from j on: the next tile
// reads them, after this tile's compute, which hides the latency of the strided rows.
void attn_prefetch_tile(const attn_args & a, const attn_unit & un, int64_t g, int64_t j) {
    const size_t k_bytes = ggml_row_size(a.k->type, a.k->ne[0]);
    const size_t v_bytes = ggml_row_size(a.v->type, a.v->ne[0]);
    const char * kb = static_cast<const char *>(a.k->data) + size_t(g) * a.k->nb[2] + size_t(un.b) * a.k->nb[3];
    const char * vb = static_cast<const char *>(a.v->data) + size_t(g) * a.v->nb[2] + size_t(un.b) * a.v->nb[3];
    for (const int64_t end = std::min(un.c1, j + k_tile); j < end; ++j) {
        const char * kr = kb + size_t(j) * a.k->nb[1];
        const char * vr = vb + size_t(j) * a.v->nb[1];
        for (size_t o = 0; o < k_bytes; o += 64) __builtin_prefetch(kr + o);
        for (size_t o = 0; o < v_bytes; o += 64) __builtin_prefetch(vr + o);
    }
}

// One row r (query ii of the unit) over the current tile of n cells (K/V of its kv head).
void attn_row_tile(const attn_args & a, const attn_plan & pl, const attn_scratch & sc, int64_t r, int64_t ii,
                   int64_t n) {
    float * s = sc.s + r * k_tile;
    const float * mrow = a.mask ? sc.mt + ii * k_tile : nullptr;  // -inf in the mask stays -inf
    const float * q = sc.q + r * pl.dp;
    const float mx = a.softcap > 0.0f ? a.fa->scores_softcap(q, sc.kt, pl.dp, n, a.scale, a.softcap, mrow, s)
                                      : a.fa->scores(q, sc.kt, pl.dp, n, a.scale, mrow, s);
    const float m_new = std::max(sc.m[r], mx);
    if (m_new == -INFINITY) return;  // nothing visible to this row yet
    const float alpha = sc.m[r] == -INFINITY ? 0.0f : std::exp(sc.m[r] - m_new);
    const float sum = a.vec->exp_sum(s, m_new, s, n);
    float * acc = sc.acc + r * pl.dvp;
    if (alpha != 1.0f) a.vec->scale(acc, alpha, 0.0f, acc, pl.dvp);
    sc.l[r] = sc.l[r] * alpha + sum;
    sc.m[r] = m_new;
    a.fa->accumulate(acc, sc.vt, pl.dvp, s, n);
}

int64_t attn_unit_head(const attn_plan & pl, const attn_unit & un, int64_t gi, int64_t hh) {
    return (un.g0 + gi) * pl.hpg + un.h_off + hh;
}

// The unit's query rows into scratch, and the running state reset.
void attn_unit_init(const attn_args & a, const attn_plan & pl, const attn_unit & un, const attn_scratch & sc) {
    const int64_t rows = un.ni * un.ng * un.nh;
    for (int64_t ii = 0; ii < un.ni; ++ii) {
        for (int64_t gi = 0; gi < un.ng; ++gi) {
            for (int64_t hh = 0; hh < un.nh; ++hh) {
                float * qr = sc.q + ((ii * un.ng + gi) * un.nh + hh) * pl.dp;
                load_elems_f32(a.q, row_ptr(a.q, un.i0 + ii, attn_unit_head(pl, un, gi, hh), un.b), qr, pl.d, *a.cv);
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
        const int64_t hh = r % un.nh, gi = r / un.nh % un.ng, ii = r / (un.nh * un.ng);
        const int64_t i = un.i0 + ii, h = attn_unit_head(pl, un, gi, hh);
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

void attn_run_unit(const ggml_compute_params & p, const attn_args & a, const attn_plan & pl, const attn_scratch & sc,
                   int64_t u) {
    const attn_unit un = attn_unit_of(pl, u);
    attn_unit_init(a, pl, un, sc);
    int64_t j = un.c0;
    while (j < un.c1) {
        const int64_t n = attn_gather_tile(a, un, sc, &j);
        if (n == 0) continue;
        if (a.mask) attn_load_mask_tile(a, un, sc, n);
        for (int64_t gi = 0; gi < un.ng; ++gi) {
            attn_load_tile(a, pl, sc, un.g0 + gi, un.b, n);
            attn_prefetch_tile(a, un, un.g0 + gi, j);
            for (int64_t ii = 0; ii < un.ni; ++ii) {
                for (int64_t hh = 0; hh < un.nh; ++hh) attn_row_tile(a, pl, sc, (ii * un.ng + gi) * un.nh + hh, ii, n);
            }
        }
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

// ---- scalar inner loops (the reference path) ----

float attn_scores_scalar(const float * q, const float * k, int64_t dp, int64_t n, float scale, const float * mask,
                         float * s) {
    float mx = -INFINITY;
    for (int64_t t = 0; t < n; ++t) {
        const float * kr = k + t * dp;
        double sum = 0.0;
        for (int64_t d = 0; d < dp; ++d) sum += double(q[d]) * double(kr[d]);
        s[t] = float(sum) * scale + (mask ? mask[t] : 0.0f);
        mx = s[t] > mx ? s[t] : mx;
    }
    return mx;
}

float attn_scores_softcap_scalar(const float * q, const float * k, int64_t dp, int64_t n, float scale, float cap,
                                 const float * mask, float * s) {
    float mx = -INFINITY;
    for (int64_t t = 0; t < n; ++t) {
        const float * kr = k + t * dp;
        double sum = 0.0;
        for (int64_t d = 0; d < dp; ++d) sum += double(q[d]) * double(kr[d]);
        s[t] = float(double(cap) * std::tanh(double(float(sum) * scale))) + (mask ? mask[t] : 0.0f);
        mx = s[t] > mx ? s[t] : mx;
    }
    return mx;
}

void attn_accumulate_scalar(float * acc, const float * v, int64_t dvp, const float * w, int64_t n) {
    for (int64_t t = 0; t < n; ++t) {
        if (w[t] == 0.0f) continue;
        const float * vr = v + t * dvp;
        for (int64_t d = 0; d < dvp; ++d) acc[d] += w[t] * vr[d];
    }
}

void attn_rows_f16_to_f32_scalar(const uint8_t * base, size_t stride, const int64_t * cells, int64_t n, int64_t d,
                                 float * y, int64_t dp) {
    for (int64_t t = 0; t < n; ++t) {
        ggml_fp16_to_fp32_row(reinterpret_cast<const ggml_fp16_t *>(base + size_t(cells[t]) * stride), y + t * dp, d);
        std::fill(y + t * dp + d, y + (t + 1) * dp, 0.0f);
    }
}

void attn_rows_q8_0_to_f32_scalar(const uint8_t * base, size_t stride, const int64_t * cells, int64_t n, int64_t d,
                                  float * y, int64_t dp) {
    for (int64_t t = 0; t < n; ++t) {
        ggml_dequantize_row_q8_0(reinterpret_cast<const block_q8_0 *>(base + size_t(cells[t]) * stride), y + t * dp, d);
    }
}

const ggml_cpu_attn_fns attn_fns_scalar = {"scalar", attn_scores_scalar, attn_scores_softcap_scalar,
                                           attn_accumulate_scalar, attn_rows_f16_to_f32_scalar,
                                           attn_rows_q8_0_to_f32_scalar};

}  // namespace

const ggml_cpu_attn_fns & ggml_cpu_attn_fns_scalar() { return attn_fns_scalar; }

const ggml_cpu_attn_fns & ggml_cpu_attn_for(ggml_cpu_isa isa) {
    switch (isa) {
        case ggml_cpu_isa::avx512: return ggml_cpu_attn_fns_avx512();
        case ggml_cpu_isa::avx2: return ggml_cpu_attn_fns_avx2();
        case ggml_cpu_isa::best: {
            const ggml_cpu_isa best = ggml_cpu_detect_features().best_isa();
            return best == ggml_cpu_isa::best ? attn_fns_scalar : ggml_cpu_attn_for(best);
        }
        case ggml_cpu_isa::scalar: break;
    }
    return attn_fns_scalar;
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
