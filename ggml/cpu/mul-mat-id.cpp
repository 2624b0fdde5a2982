// MUL_MAT_ID on the CPU (mixture of experts): dst[:, i, t] = as[:, :, ids[i, t]] @ b[:, i % n_b, t].
//
// The (token t, slot i) pairs of the batch are grouped by expert: every thread sorts the pairs
// by expert in its own scratch (the same counting sort, so no barrier is needed for it; an id
// outside [0, n_expert) fails the node before anything is written). Then three phases, with a
// barrier between two only when the later one reads what the earlier one wrote:
//   1. every row of b is converted once into the activation type of the kernels of mul-mat.h:
//      the dot type (for quantized weights the partner Q8_0 / Q8_1 / Q8_K; dense F32 rows are
//      used where they lie) and, when some expert takes the GEMM, its panel type if it differs
//      (BF16 pairs);
//   2. an expert chosen by several pairs gets their columns side by side: copied into one block
//      for the dot kernels (a row with a single user, n_b == n_used, is converted straight into
//      that block in phase 1), or packed into B panels for the GEMM of the float types;
//   3. jobs over the chosen experts only: (expert, chunk of rows, chunk of columns) for the dot
//      kernels, which tile rows x columns in registers themselves, and (expert, block of rows,
//      run of panels) for the GEMM. The results of several columns go through the thread's
//      scratch and are scattered to their rows of dst; an expert with one column writes its
//      row of dst directly.
// A decode step (one token, one column per expert) has no phase 2: the chosen experts' rows are
// cut in chunks that every thread takes from, so only those experts' weights are read, each
// row once, as a stream. The work buffer is sized for any routing (ids are data).
#include "mul-mat-plan.h"

#include "convert.h"
#include "ops.h"

#include <algorithm>
#include <cstring>

namespace {

constexpr size_t k_align = 64;
constexpr int64_t k_tmp_rows = 512;  // most rows of a dot job with several columns
constexpr int64_t k_tmp_floats = k_tmp_rows * ggml_mul_mat_job_cols;  // one job's results

size_t align_up(size_t x, size_t a) { return (x + a - 1) / a * a; }
int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Columns per dot job of an expert with n columns: at most ggml_mul_mat_job_cols, as even as
// can be (70 columns: 35 + 35, not 64 + 6: the kernels tile columns, a small rest is slow).
int64_t moe_job_cols(int64_t n) { return ceil_div(n, ceil_div(n, ggml_mul_mat_job_cols)); }

// What one node does with one kernel table (from shapes only), and its work buffer:
// [rows P][GEMM rows Pg][expert blocks G][scratch of thread 0][thread 1]...
struct moe_plan {
    const ggml_mul_mat_kernels * kt = nullptr;
    const ggml_mul_mat_type_kernels * ke = nullptr;  // kt's entry of the weight type
    int64_t k = 0, m = 0, n_expert = 0, n_used = 0, n_t = 0, n_b = 0;
    int64_t n_pairs = 0, n_rows = 0;        // (token, slot) pairs; rows of b (n_b * n_t)
    bool single_user = false;               // n_b == n_used: each row of b serves one pair
    ggml_type vt = GGML_TYPE_F32;           // activation type of the dot kernels
    ggml_from_float_fn from_f32 = nullptr;  // F32 -> vt for quantized vt
    size_t row_bytes = 0;                   // one row in vt, 64-byte multiple
    bool dot_direct = false;                // vt is F32 and b's rows are dense: read in place
    int64_t job_rows = 0;                   // quantized weights: most rows per dot job
    bool gemm = false;                      // the GEMM serves experts with gemm_min_n pairs
    ggml_type gvt = GGML_TYPE_F32;          // type in the B panels
    int nr = 1, kpair = 1;
    bool gemm_direct = false;               // panels packed from b's rows in place
    size_t panel_bytes = 0, grow_bytes = 0; // a panel; a row of gvt in Pg (gvt != vt only)
    int64_t gemm_cols = 0;                  // most columns per GEMM job (a multiple of nr)
    size_t p_bytes = 0, pg_bytes = 0, g_bytes = 0;
    size_t group_bytes = 0, row_f32 = 0, tmp_bytes = 0, thread_bytes = 0;
};

moe_plan moe_make_plan(const ggml_tensor * dst, const ggml_mul_mat_kernels & kt) {
    const ggml_tensor * as = dst->src[0];
    const ggml_tensor * b = dst->src[1];
    moe_plan pl;
    pl.kt = &kt;
    pl.ke = &kt.of(as->type);
    pl.k = as->ne[0];
    pl.m = as->ne[1];
    pl.n_expert = as->ne[2];
    pl.n_used = dst->ne[1];
    pl.n_t = dst->ne[2];
    pl.n_b = b->ne[1];
    pl.n_pairs = pl.n_used * pl.n_t;
    pl.n_rows = pl.n_b * pl.n_t;
    pl.single_user = pl.n_b == pl.n_used;
    pl.vt = pl.ke->dot_vec_type;
    pl.from_f32 = ggml_mul_mat_from_f32(*pl.ke, pl.vt);
    pl.row_bytes = align_up(ggml_row_size(pl.vt, pl.k), k_align);
    pl.dot_direct = pl.vt == GGML_TYPE_F32 && b->nb[0] == sizeof(float);
    if (ggml_get_type_traits(as->type).is_quantized) {
        pl.job_rows = int64_t(ggml_mul_mat_job_weight_bytes / std::max<size_t>(1, as->nb[1])) / 16 * 16;
        pl.job_rows = std::max<int64_t>(16, pl.job_rows);
    }
    pl.gemm = pl.ke->gemm != nullptr && pl.m >= 16 && pl.k > 0 && pl.n_pairs >= kt.gemm_min_n;
    pl.row_f32 = align_up(size_t(pl.k) * sizeof(float), k_align);
    size_t tmp_floats = size_t(k_tmp_floats);
    if (pl.gemm) {
        pl.gvt = pl.ke->gemm_vec_type;
        pl.nr = kt.gemm_nr;
        pl.kpair = pl.ke->gemm_kpair;
        GGML_ASSERT(pl.nr <= GGML_MUL_MAT_MAX_NR && kt.gemm_pack != nullptr);
        pl.gemm_direct = pl.gvt == GGML_TYPE_F32 && b->nb[0] == sizeof(float);
        pl.panel_bytes = ggml_mul_mat_panel_bytes(kt, as->type, pl.k);
        // the panels read P when both are F32 rows, else rows of their own (with a zero
        // element past k: the second half of the last pair for odd k)
        if (!pl.gemm_direct && !(pl.gvt == GGML_TYPE_F32 && pl.vt == GGML_TYPE_F32)) {
            pl.grow_bytes = align_up(size_t(pl.k + 1) * ggml_type_size(pl.gvt), k_align);
        }
        pl.gemm_cols = std::max<int64_t>(1, k_tmp_floats / kt.gemm_mc / pl.nr) * pl.nr;
        tmp_floats = std::max(tmp_floats, size_t(kt.gemm_mc * pl.gemm_cols));
    }
    pl.p_bytes = pl.dot_direct ? 0 : pl.row_bytes * size_t(pl.n_rows);
    pl.pg_bytes = pl.grow_bytes * size_t(pl.n_rows);
    // any split of the pairs into experts: every pair in a dot block, or in panels (at most
    // one partial panel per expert)
    pl.g_bytes = pl.row_bytes * size_t(pl.n_pairs);
    if (pl.gemm) {
        pl.g_bytes += pl.panel_bytes * size_t(ceil_div(pl.n_pairs, pl.nr) + std::min(pl.n_expert, pl.n_pairs));
    }
    const size_t n_i32 = size_t(3 * pl.n_expert + 1 + 2 * pl.n_pairs);
    const size_t n_i64 = size_t(2 * pl.n_expert + 1);
    pl.group_bytes = align_up(n_i64 * sizeof(int64_t) + n_i32 * sizeof(int32_t), k_align);
    pl.tmp_bytes = align_up(tmp_floats * sizeof(float), k_align);
    pl.thread_bytes = pl.group_bytes + pl.row_f32 + pl.tmp_bytes + (pl.gemm ? align_up(kt.gemm_scratch, k_align) : 0);
    return pl;
}

size_t moe_plan_bytes(const moe_plan & pl, int n_threads) {
    return k_align + align_up(pl.p_bytes, k_align) + align_up(pl.pg_bytes, k_align) + align_up(pl.g_bytes, k_align) +
           pl.thread_bytes * size_t(n_threads);
}

// Work-buffer regions of one run.
struct moe_work {
    char * p = nullptr;       // rows of b in vt
    char * pg = nullptr;      // rows of b in gvt
    char * g = nullptr;       // expert blocks
    char * group = nullptr;   // this thread's grouping
    float * row = nullptr;    // this thread's F32 row (gathered b rows)
    float * tmp = nullptr;    // this thread's job results
    void * gemm_scratch = nullptr;
};

moe_work moe_work_layout(const ggml_compute_params & p, const moe_plan & pl) {
    GGML_ASSERT(p.wsize >= moe_plan_bytes(pl, p.nth));
    moe_work w;
    w.p = reinterpret_cast<char *>(align_up(reinterpret_cast<uintptr_t>(p.wdata), k_align));
    w.pg = w.p + align_up(pl.p_bytes, k_align);
    w.g = w.pg + align_up(pl.pg_bytes, k_align);
    char * t = w.g + align_up(pl.g_bytes, k_align) + pl.thread_bytes * size_t(p.ith);
    w.group = t;
    w.row = reinterpret_cast<float *>(t + pl.group_bytes);
    w.tmp = reinterpret_cast<float *>(t + pl.group_bytes + pl.row_f32);
    w.gemm_scratch = t + pl.group_bytes + pl.row_f32 + pl.tmp_bytes;
    return w;
}

// ---- grouping of the pairs by expert ----

enum class moe_mode { single, gathered, gemm };

// The pairs q = t * n_used + i grouped by expert (one copy per thread).
struct moe_groups {
    int64_t * slot = nullptr;   // [n_expert] byte offset of the expert's block in G
    int64_t * job0 = nullptr;   // [n_active + 1] first phase-3 job of each active expert
    int32_t * count = nullptr;  // [n_expert] pairs per expert
    int32_t * start = nullptr;  // [n_expert + 1] first position of each expert in order
    int32_t * active = nullptr; // [n_active] experts with pairs, ascending
    int32_t * order = nullptr;  // [n_pairs] pairs by expert, then by q
    int32_t * rank = nullptr;   // [n_pairs] position of pair q within its expert
    int64_t n_active = 0;
    int64_t dot_rows = 0;       // rows per dot job of an expert with several columns
    int64_t dot_rows_1 = 0;     // rows per dot job of an expert with one column (no scratch)
    bool any_dot = false, any_gathered = false, any_gemm = false;
};

moe_mode moe_mode_of(const moe_plan & pl, int64_t count) {
    if (pl.gemm && count >= pl.kt->gemm_min_n) return moe_mode::gemm;
    return count > 1 ? moe_mode::gathered : moe_mode::single;
}

int32_t moe_id(const ggml_tensor * ids, int64_t n_used, int64_t q) {
    int32_t e;
    const char * row = static_cast<const char *>(ids->data) + (q / n_used) * ids->nb[1];
    std::memcpy(&e, row + (q % n_used) * sizeof(int32_t), sizeof(int32_t));
    return e;
}

moe_groups moe_groups_at(const moe_plan & pl, char * mem) {
    moe_groups g;
    g.slot = reinterpret_cast<int64_t *>(mem);
    g.job0 = g.slot + pl.n_expert;
    g.count = reinterpret_cast<int32_t *>(g.job0 + pl.n_expert + 1);
    g.start = g.count + pl.n_expert;
    g.active = g.start + pl.n_expert + 1;
    g.order = g.active + pl.n_expert;
    g.rank = g.order + pl.n_pairs;
    return g;
}

// Counting sort of the pairs by expert; false when an id is out of range.
bool moe_sort_pairs(const moe_plan & pl, const ggml_tensor * ids, moe_groups & g) {
    std::fill(g.count, g.count + pl.n_expert, 0);
    for (int64_t q = 0; q < pl.n_pairs; ++q) {
        const int32_t e = moe_id(ids, pl.n_used, q);
        if (e < 0 || e >= pl.n_expert) return false;
        ++g.count[e];
    }
    g.start[0] = 0;
    for (int64_t e = 0; e < pl.n_expert; ++e) {
        g.start[e + 1] = g.start[e] + g.count[e];
        g.slot[e] = g.start[e];  // cursor while placing
    }
    for (int64_t q = 0; q < pl.n_pairs; ++q) {
        const int32_t e = moe_id(ids, pl.n_used, q);
        const int64_t pos = g.slot[e]++;
        g.order[pos] = int32_t(q);
        g.rank[q] = int32_t(pos - g.start[e]);
    }
    return true;
}

// Experts with pairs, their blocks in G and their phase-3 jobs. Dot jobs are cut so that
// there are about 8 per thread (rows in multiples of 16: no two threads write one cache line
// of dst), at most job_rows rows (quantized weights, see mul-mat-plan.h) and, when their
// results go through the scratch (several columns), k_tmp_rows. (Decode measured: 8 jobs per
// thread stream as fast as a dense mat-vec of the same bytes; 16 or 32 smaller ones do not.)
void moe_place_experts(const moe_plan & pl, moe_groups & g, int nth) {
    int64_t col_chunks = 0, off = 0;
    g.n_active = 0;
    for (int64_t e = 0; e < pl.n_expert; ++e) {
        if (g.count[e] == 0) continue;
        g.active[g.n_active++] = int32_t(e);
        const moe_mode mode = moe_mode_of(pl, g.count[e]);
        g.slot[e] = off;
        if (mode == moe_mode::gemm) {
            off += int64_t(pl.panel_bytes) * ceil_div(g.count[e], pl.nr);
            g.any_gemm = true;
            continue;
        }
        g.any_dot = true;
        col_chunks += ceil_div(g.count[e], ggml_mul_mat_job_cols);
        if (mode == moe_mode::gathered) {
            off += int64_t(pl.row_bytes) * g.count[e];
            g.any_gathered = true;
        }
    }
    GGML_ASSERT(size_t(off) <= pl.g_bytes);
    const int64_t chunks = std::max<int64_t>(1, ceil_div(8 * int64_t(nth), std::max<int64_t>(1, col_chunks)));
    int64_t rows = int64_t(align_up(size_t(ceil_div(pl.m, chunks)), 16));
    if (pl.job_rows > 0) rows = std::min(rows, pl.job_rows);
    g.dot_rows_1 = rows;
    g.dot_rows = std::min(rows, k_tmp_rows);
    const int64_t mc = pl.kt->gemm_mc;
    g.job0[0] = 0;
    for (int64_t a = 0; a < g.n_active; ++a) {
        const int64_t n = g.count[g.active[a]];
        const int64_t jobs = moe_mode_of(pl, n) == moe_mode::gemm
            ? ceil_div(pl.m, mc) * ceil_div(ceil_div(n, pl.nr), pl.gemm_cols / pl.nr)
            : ceil_div(pl.m, n == 1 ? g.dot_rows_1 : g.dot_rows) * ceil_div(n, moe_job_cols(n));
        g.job0[a + 1] = g.job0[a] + jobs;
    }
}

// ---- rows of b and of dst ----

struct moe_args {
    const ggml_tensor * as = nullptr;
    const ggml_tensor * b = nullptr;
    const ggml_tensor * ids = nullptr;
    ggml_tensor * dst = nullptr;
    ggml_from_float_fn to_vt = nullptr;   // F32 -> vt (F16 / BF16 / quantized)
    ggml_from_float_fn to_gvt = nullptr;  // F32 -> gvt (Pg rows)
};

// Row j = t * n_b + ib of b as F32 (in place when dense, else gathered into tmp).
const float * moe_b_row(const moe_plan & pl, const moe_args & a, int64_t j, float * tmp) {
    return ggml_mul_mat_b_row(a.b, j % pl.n_b, j / pl.n_b, 0, tmp);
}

int64_t moe_row_of_pair(const moe_plan & pl, int64_t q) {
    return (q / pl.n_used) * pl.n_b + (q % pl.n_used) % pl.n_b;
}

float * moe_dst_row(const moe_plan & pl, const moe_args & a, int64_t q) {
    char * d = static_cast<char *>(a.dst->data);
    return reinterpret_cast<float *>(d + (q % pl.n_used) * a.dst->nb[1] + (q / pl.n_used) * a.dst->nb[2]);
}

// The dot kernels' column of pair q when its expert has no block (single mode).
const char * moe_dot_col(const moe_plan & pl, const moe_args & a, const moe_work & w, int64_t q) {
    const int64_t j = moe_row_of_pair(pl, q);
    if (pl.dot_direct) return reinterpret_cast<const char *>(moe_b_row(pl, a, j, nullptr));
    return w.p + size_t(j) * pl.row_bytes;
}

// The F32 / BF16-pair row that the GEMM packing reads for pair q.
const uint32_t * moe_gemm_col(const moe_plan & pl, const moe_args & a, const moe_work & w, int64_t q) {
    const int64_t j = moe_row_of_pair(pl, q);
    if (pl.gemm_direct) return reinterpret_cast<const uint32_t *>(moe_b_row(pl, a, j, nullptr));
    const char * r = pl.grow_bytes ? w.pg + size_t(j) * pl.grow_bytes : w.p + size_t(j) * pl.row_bytes;
    return reinterpret_cast<const uint32_t *>(r);
}

void moe_write_vt(const moe_plan & pl, const moe_args & a, const float * x, char * out) {
    if (pl.vt == GGML_TYPE_F32) {
        if (reinterpret_cast<const float *>(out) != x) std::memcpy(out, x, size_t(pl.k) * sizeof(float));
    } else {
        a.to_vt(x, out, pl.k);
    }
}

// ---- phases ----

// What phase 1 writes: the rows P (dot kernels, unless read in place), rows straight into
// expert blocks (single-user rows of gathered experts), rows Pg (GEMM panels of another type).
bool moe_phase1_writes_p(const moe_plan & pl, const moe_groups & g) {
    return !pl.dot_direct && (g.any_dot || (g.any_gemm && !pl.gemm_direct && pl.grow_bytes == 0));
}
bool moe_phase1_writes_g(const moe_plan & pl, const moe_groups & g) { return pl.single_user && g.any_gathered; }
bool moe_phase1_writes_pg(const moe_plan & pl, const moe_groups & g) { return g.any_gemm && pl.grow_bytes > 0; }

void moe_convert_row(const moe_plan & pl, const moe_args & a, const moe_groups & g, const moe_work & w, int64_t j) {
    const float * x = nullptr;
    char * out = nullptr;
    if (pl.single_user) {  // row j serves pair j alone
        const int32_t e = moe_id(a.ids, pl.n_used, j);
        if (moe_mode_of(pl, g.count[e]) == moe_mode::gathered) {
            out = w.g + g.slot[e] + int64_t(g.rank[j]) * int64_t(pl.row_bytes);
        }
    }
    if (!out && moe_phase1_writes_p(pl, g)) out = w.p + size_t(j) * pl.row_bytes;
    if (out) {
        x = moe_b_row(pl, a, j, w.row);
        moe_write_vt(pl, a, x, out);
    }
    if (moe_phase1_writes_pg(pl, g)) {
        if (!x) x = moe_b_row(pl, a, j, w.row);
        char * h = w.pg + size_t(j) * pl.grow_bytes;
        a.to_gvt(x, h, pl.k);
        std::memset(h + size_t(pl.k) * ggml_type_size(pl.gvt), 0, ggml_type_size(pl.gvt));  // odd k: 2nd of a pair
    }
}

// Returns whether anything was written (the same answer on every thread).
bool moe_phase1(const ggml_compute_params & p, const moe_plan & pl, const moe_args & a, const moe_groups & g,
                const moe_work & w) {
    if (!moe_phase1_writes_p(pl, g) && !moe_phase1_writes_g(pl, g) && !moe_phase1_writes_pg(pl, g)) return false;
    const int64_t chunk = std::clamp<int64_t>(ceil_div(pl.n_rows, 4 * int64_t(p.nth)), 1, 16);
    ggml_cpu_parallel_for(p, pl.n_rows, chunk, [&](int64_t j0, int64_t j1) {
        for (int64_t j = j0; j < j1; ++j) moe_convert_row(pl, a, g, w, j);
    }, 0);
    return true;
}

// Panel pi of GEMM expert e: its columns pi * nr ... pi * nr + nr - 1 in the order of its pairs.
void moe_pack_panel(const moe_plan & pl, const moe_args & a, const moe_groups & g, const moe_work & w, int64_t e,
                    int64_t pi) {
    const uint32_t * rows[GGML_MUL_MAT_MAX_NR];
    for (int jj = 0; jj < pl.nr; ++jj) {
        const int64_t c = pi * pl.nr + jj;
        rows[jj] = c < g.count[e] ? moe_gemm_col(pl, a, w, g.order[g.start[e] + c]) : nullptr;
    }
    const int64_t n_units = pl.kpair == 2 ? ceil_div(pl.k, 2) : pl.k;
    uint32_t * panel = reinterpret_cast<uint32_t *>(w.g + g.slot[e] + pi * int64_t(pl.panel_bytes));
    pl.kt->gemm_pack(rows, n_units, panel);
}

// Phase 2 over the ordered pairs: columns of gathered experts copied into their block (rows
// shared by several pairs, n_b == 1), GEMM experts' columns packed panel by panel.
bool moe_phase2(const ggml_compute_params & p, const moe_plan & pl, const moe_args & a, const moe_groups & g,
                const moe_work & w) {
    const bool gather = g.any_gathered && !pl.single_user;
    if (!gather && !g.any_gemm) return false;
    const int64_t chunk = std::clamp<int64_t>(ceil_div(pl.n_pairs, 4 * int64_t(p.nth)), 1, 16);
    ggml_cpu_parallel_for(p, pl.n_pairs, chunk, [&](int64_t s0, int64_t s1) {
        for (int64_t s = s0; s < s1; ++s) {
            const int64_t q = g.order[s];
            const int32_t e = moe_id(a.ids, pl.n_used, q);
            const int64_t c = s - g.start[e];
            const moe_mode mode = moe_mode_of(pl, g.count[e]);
            if (mode == moe_mode::gemm && c % pl.nr == 0) moe_pack_panel(pl, a, g, w, e, c / pl.nr);
            if (mode != moe_mode::gathered || !gather) continue;
            char * out = w.g + g.slot[e] + c * int64_t(pl.row_bytes);
            if (pl.dot_direct) {
                moe_write_vt(pl, a, moe_b_row(pl, a, moe_row_of_pair(pl, q), nullptr), out);
            } else {
                std::memcpy(out, w.p + size_t(moe_row_of_pair(pl, q)) * pl.row_bytes, ggml_row_size(pl.vt, pl.k));
            }
        }
    }, 1);
    return true;
}

const char * moe_expert(const moe_args & a, int64_t e, int64_t row) {
    return static_cast<const char *>(a.as->data) + e * a.as->nb[2] + row * a.as->nb[1];
}

// Results [c * ldy + r] of the columns [c0, c0 + nc) of expert e into rows [r0, r0 + nr) of dst.
void moe_scatter(const moe_plan & pl, const moe_args & a, const moe_groups & g, int64_t e, int64_t c0, int64_t nc,
                 int64_t r0, int64_t nr, const float * y, int64_t ldy) {
    for (int64_t c = 0; c < nc; ++c) {
        std::memcpy(moe_dst_row(pl, a, g.order[g.start[e] + c0 + c]) + r0, y + c * ldy, size_t(nr) * sizeof(float));
    }
}

void moe_dot_job(const moe_plan & pl, const moe_args & a, const moe_groups & g, const moe_work & w, int64_t e,
                 int64_t job) {
    const int64_t count = g.count[e];
    const int64_t rows = count == 1 ? g.dot_rows_1 : g.dot_rows;
    const int64_t n_rc = ceil_div(pl.m, rows);
    const int64_t cols = moe_job_cols(count);
    const int64_t r0 = (job % n_rc) * rows, c0 = (job / n_rc) * cols;
    const int64_t nr = std::min(rows, pl.m - r0), nc = std::min(cols, count - c0);
    const ggml_mul_mat_dot_fn dot = pl.ke->dot;
    const size_t lda = a.as->nb[1];
    if (count == 1) {
        const int64_t q = g.order[g.start[e]];
        dot(pl.k, moe_expert(a, e, r0), lda, nr, moe_dot_col(pl, a, w, q), pl.row_bytes, 1,
            moe_dst_row(pl, a, q) + r0, pl.m);
        return;
    }
    const char * block = w.g + g.slot[e] + c0 * int64_t(pl.row_bytes);
    dot(pl.k, moe_expert(a, e, r0), lda, nr, block, pl.row_bytes, nc, w.tmp, nr);
    moe_scatter(pl, a, g, e, c0, nc, r0, nr, w.tmp, nr);
}

void moe_gemm_job(const moe_plan & pl, const moe_args & a, const moe_groups & g, const moe_work & w, int64_t e,
                  int64_t job) {
    const int64_t mc = pl.kt->gemm_mc;
    const int64_t m_blocks = ceil_div(pl.m, mc), ppj = pl.gemm_cols / pl.nr;
    const int64_t mb = job % m_blocks, p0 = (job / m_blocks) * ppj;
    ggml_mul_mat_gemm_args ga;
    ga.a = moe_expert(a, e, mb * mc);
    ga.lda = a.as->nb[1];
    ga.m = std::min(mc, pl.m - mb * mc);
    ga.bp = w.g + g.slot[e] + p0 * int64_t(pl.panel_bytes);
    ga.bp_stride = pl.panel_bytes;
    ga.n = std::min(ppj * pl.nr, g.count[e] - p0 * pl.nr);
    ga.k = pl.k;
    ga.d = w.tmp;
    ga.ldd = ga.m;
    ga.scratch = w.gemm_scratch;
    pl.ke->gemm(ga);
    moe_scatter(pl, a, g, e, p0 * pl.nr, ga.n, mb * mc, ga.m, w.tmp, ga.m);
}

void moe_phase3(const ggml_compute_params & p, const moe_plan & pl, const moe_args & a, const moe_groups & g,
                const moe_work & w) {
    ggml_cpu_parallel_for(p, g.job0[g.n_active], 1, [&](int64_t j0, int64_t j1) {
        for (int64_t job = j0; job < j1; ++job) {
            const int64_t ai = std::upper_bound(g.job0, g.job0 + g.n_active + 1, job) - g.job0 - 1;
            const int32_t e = g.active[ai];
            if (moe_mode_of(pl, g.count[e]) == moe_mode::gemm) {
                moe_gemm_job(pl, a, g, w, e, job - g.job0[ai]);
            } else {
                moe_dot_job(pl, a, g, w, e, job - g.job0[ai]);
            }
        }
    }, 2);
}

// K = 0: every product is empty (ids are still checked).
void moe_zero(const ggml_compute_params & p, const moe_plan & pl, const moe_args & a) {
    if (p.ith != 0) return;
    for (int64_t q = 0; q < pl.n_pairs; ++q) std::memset(moe_dst_row(pl, a, q), 0, size_t(pl.m) * sizeof(float));
}

}  // namespace

bool ggml_cpu_mul_mat_id_supported(const ggml_tensor * dst) {
    const ggml_tensor * as = dst->src[0];
    const ggml_tensor * b = dst->src[1];
    const ggml_tensor * ids = dst->src[2];
    if (!as || !b || !ids || dst->type != GGML_TYPE_F32 || b->type != GGML_TYPE_F32 || ids->type != GGML_TYPE_I32) {
        return false;
    }
    // every path has the same weight types (the scalar table is the reference)
    if (ggml_mul_mat_kernels_scalar.of(as->type).dot == nullptr || !ggml_type_is_supported(as->type)) return false;
    if (as->nb[0] != ggml_type_size(as->type) || as->ne[0] % ggml_blck_size(as->type) != 0) return false;
    if (as->ne[3] != 1 || as->ne[2] < 1 || b->ne[0] != as->ne[0] || b->ne[3] != 1) return false;
    if (ids->nb[0] != sizeof(int32_t) || ids->ne[2] != 1 || ids->ne[3] != 1 || b->ne[2] != ids->ne[1]) return false;
    if (b->ne[1] != 1 && b->ne[1] != ids->ne[0]) return false;
    if (dst->ne[0] != as->ne[1] || dst->ne[1] != ids->ne[0] || dst->ne[2] != ids->ne[1] || dst->ne[3] != 1) {
        return false;
    }
    return ggml_is_contiguous(dst) && ids->ne[0] * ids->ne[1] < INT32_MAX;
}

size_t ggml_cpu_mul_mat_id_work_size(const ggml_tensor * dst, int n_threads) {
    if (!ggml_cpu_mul_mat_id_supported(dst)) return 0;
    size_t bytes = 0;  // the ISA is not known here: enough for whichever path runs
    for (const ggml_mul_mat_kernels * kt :
         {&ggml_mul_mat_kernels_scalar, &ggml_mul_mat_kernels_avx2, &ggml_mul_mat_kernels_avx512}) {
        bytes = std::max(bytes, moe_plan_bytes(moe_make_plan(dst, *kt), std::max(1, n_threads)));
    }
    return bytes;
}

void ggml_cpu_op_mul_mat_id(const ggml_compute_params & p, ggml_tensor * dst) {
    if (ggml_nelements(dst) == 0) return;
    // the calibrated path for the experts' type, by the number of tokens
    const ggml_cpu_isa isa = ggml_cpu_mul_mat_isa(p, dst->src[0]->type, dst->ne[2]);
    const moe_plan pl = moe_make_plan(dst, ggml_mul_mat_kernels_for(isa));
    const moe_work w = moe_work_layout(p, pl);
    moe_args a;
    a.as = dst->src[0];
    a.b = dst->src[1];
    a.ids = dst->src[2];
    a.dst = dst;
    const ggml_cpu_convert_fns & cv = ggml_cpu_convert_for(isa);
    a.to_vt = pl.from_f32 ? pl.from_f32 : cv.row_from_f32(pl.vt);
    if (pl.grow_bytes) a.to_gvt = cv.row_from_f32(pl.gvt);
    moe_groups g = moe_groups_at(pl, w.group);
    if (!moe_sort_pairs(pl, a.ids, g)) {  // every thread finds it: none goes on to a barrier
        if (p.ith == 0 && p.error) p.error->store(1, std::memory_order_relaxed);
        return;
    }
    if (pl.k == 0) {
        moe_zero(p, pl, a);
        return;
    }
    moe_place_experts(pl, g, p.nth);
    if (moe_phase1(p, pl, a, g, w)) p.barrier();
    if (moe_phase2(p, pl, a, g, w)) p.barrier();
    moe_phase3(p, pl, a, g, w);
}
