// MUL_MAT on the CPU: dst[m, n, i2, i3] = sum_k a[k, m, i2 / r2, i3 / r3] * b[k, n, i2, i3].
//
// Two phases per node, every thread taking part in both:
//   1. the activations b go into the work buffer when the kernels want another type or layout:
//      converted rows (dot path; for quantized weights the columns quantized into the partner
//      type, Q8_0 / Q8_1 / Q8_K) or zero-padded column panels (GEMM path, see mul-mat.h);
//   2. jobs are claimed with ggml_cpu_parallel_for: (row chunk of a, column chunk of b) for the
//      dot kernel (mat-vec, few columns, and every column count of quantized weights, whose
//      kernels tile rows x columns in registers themselves), or (row block of a, run of B
//      panels) tiles for the GEMM.
// The kernels of the backend's ISA come from the tables in mul-mat.h; weights held in the
// CPU's repack buffer type take the dot path with the repacked kernels of repack.h for every
// column count (their tiles amortize each weight load over up to 8 columns). On the amx path,
// F16 and BF16 weights take the AMX GEMM of mul-mat-amx.h from ggml_amx_min_cols columns on
// (phase 1 packs the activations into its BF16 hi / lo tiles).
#include "mul-mat.h"
#include "mul-mat-amx.h"
#include "mul-mat-plan.h"
#include "repack.h"

#include "convert.h"
#include "ops.h"

#include <algorithm>
#include <cstring>

namespace {

constexpr size_t k_align = 64;
// Job sizes of the quantized dot path (see mul-mat-plan.h).
constexpr size_t k_job_weight_bytes = ggml_mul_mat_job_weight_bytes;
constexpr int64_t k_job_cols = ggml_mul_mat_job_cols;

size_t align_up(size_t x, size_t a) { return (x + a - 1) / a * a; }
int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

const ggml_mul_mat_kernels & ggml_mul_mat_kernels_for(ggml_cpu_isa isa) {
    switch (isa) {
        case ggml_cpu_isa::amx:
        case ggml_cpu_isa::avx512: return ggml_mul_mat_kernels_avx512;
        case ggml_cpu_isa::avx2: return ggml_mul_mat_kernels_avx2;
        default: return ggml_mul_mat_kernels_scalar;
    }
}

namespace {

// What one node does with one kernel table, and where it keeps things in the work buffer.
struct mul_mat_plan {
    const ggml_mul_mat_kernels * kt = nullptr;
    const ggml_mul_mat_type_kernels * ke = nullptr;  // kt's entry of the weight type
    const ggml_repack_kernels * rk = nullptr;  // set: a is repacked, its dot kernel comes from here
    size_t lda = 0;            // bytes per row of a in its layout
    int64_t k = 0, m = 0, n = 0;
    int64_t ne12 = 1, ne13 = 1, r2 = 1, r3 = 1;  // b's batches; a repeats r2 x r3 times
    bool gemm = false;
    bool amx = false;              // the AMX GEMM (b in its packed tile rows, row_bytes each)
    ggml_type vt = GGML_TYPE_F32;  // type the kernels want the activations in
    bool convert = false;          // b goes through the work buffer
    ggml_from_float_fn from_f32 = nullptr;  // dot path: F32 row -> vt row
    size_t row_bytes = 0;          // dot path: bytes per converted row of b
    int64_t job_rows = 0;          // dot path: a job's most rows of a (0: chosen at run time)
    int64_t job_cols = 0;          // dot path: a job's most columns of b
    int nr = 1, kpair = 1;         // GEMM path: panel width, k per 32-bit lane
    int64_t n_panels = 0;          // GEMM path: panels per batch
    size_t panel_bytes = 0;
    size_t b_bytes = 0;            // work-buffer bytes for b (all batches)
    size_t thread_bytes = 0;       // per-thread scratch
};

int64_t mul_mat_n_batches(const mul_mat_plan & pl) { return pl.ne12 * pl.ne13; }

}  // namespace

// The dot path's conversion of F32 activations into vt: the entry's quantizer, else the
// reference quantizer of the type traits; nullptr for the float types (convert.h).
ggml_from_float_fn ggml_mul_mat_from_f32(const ggml_mul_mat_type_kernels & e, ggml_type vt) {
    if (e.dot_vec_from_f32) return e.dot_vec_from_f32;
    if (vt == GGML_TYPE_F32) return nullptr;  // copied or gathered
    return ggml_get_type_traits(vt).is_quantized ? ggml_get_type_traits(vt).from_float : nullptr;
}

namespace {

// Dot path on repacked weights: the activations quantized (and, for Q8_0, summed) per column.
void mul_mat_plan_repacked(mul_mat_plan & pl, const ggml_tensor * a, const ggml_repack_kernels & rk) {
    pl.rk = &rk;
    pl.lda = ggml_repack_row_bytes(a->type, pl.k);
    pl.vt = ggml_repack_act_type(a->type);
    pl.convert = true;
    pl.from_f32 = rk.act[a->type];
    pl.row_bytes = align_up(ggml_repack_act_row_bytes(a->type, pl.k), k_align);
    pl.b_bytes = pl.row_bytes * size_t(pl.n * mul_mat_n_batches(pl));
    pl.thread_bytes = align_up(size_t(pl.k) * sizeof(float), k_align);
    pl.job_cols = std::min(pl.n, k_job_cols);
    pl.job_rows = int64_t(k_job_weight_bytes / std::max<size_t>(1, pl.lda)) / 16 * 16;
    pl.job_rows = std::max<int64_t>(16, pl.job_rows);
}

// The AMX GEMM: b packed into ggml_amx_act_tiles tile rows per batch (phase 1 gathers up to
// 16 columns into the thread's scratch when b's elements are not adjacent).
void mul_mat_plan_amx(mul_mat_plan & pl) {
    pl.amx = true;
    pl.convert = true;
    pl.row_bytes = ggml_amx_act_tile_bytes(pl.k);
    pl.b_bytes = pl.row_bytes * size_t(ggml_amx_act_tiles(pl.n) * mul_mat_n_batches(pl));
    pl.thread_bytes = std::max(ggml_amx_scratch_bytes(), 16 * align_up(size_t(pl.k) * sizeof(float), k_align));
}

mul_mat_plan mul_mat_make_plan(const ggml_tensor * dst, ggml_cpu_isa isa) {
    const ggml_mul_mat_kernels & kt = ggml_mul_mat_kernels_for(isa);
    const ggml_repack_kernels & rk = ggml_repack_kernels_for(isa);
    const ggml_tensor * a = dst->src[0];
    const ggml_tensor * b = dst->src[1];
    mul_mat_plan pl;
    pl.kt = &kt;
    pl.ke = &kt.of(a->type);
    pl.lda = a->nb[1];
    pl.k = a->ne[0];
    pl.m = a->ne[1];
    pl.n = b->ne[1];
    pl.ne12 = b->ne[2];
    pl.ne13 = b->ne[3];
    pl.r2 = b->ne[2] / a->ne[2];
    pl.r3 = b->ne[3] / a->ne[3];
    if (ggml_backend_cpu_tensor_is_repacked(a) && rk.dot[a->type]) {
        mul_mat_plan_repacked(pl, a, rk);
        pl.thread_bytes = align_up(pl.thread_bytes, k_align);
        return pl;
    }
    if (isa == ggml_cpu_isa::amx && ggml_amx_supports(a->type) && pl.n >= ggml_amx_min_cols && pl.m >= 16) {
        mul_mat_plan_amx(pl);
        pl.thread_bytes = align_up(pl.thread_bytes, k_align);
        return pl;
    }
    // the GEMM pads a to its 32-row (16-row) tiles: with fewer rows the dot kernel wastes less
    pl.gemm = pl.ke->gemm != nullptr && pl.n >= kt.gemm_min_n && pl.m >= 16;
    const size_t row_f32 = align_up(size_t(pl.k) * sizeof(float), k_align);
    if (pl.gemm) {
        pl.vt = pl.ke->gemm_vec_type;
        pl.convert = true;
        pl.nr = kt.gemm_nr;
        GGML_ASSERT(pl.nr <= GGML_MUL_MAT_MAX_NR && kt.gemm_pack != nullptr);
        pl.kpair = pl.ke->gemm_kpair;
        pl.n_panels = ceil_div(pl.n, pl.nr);
        pl.panel_bytes = ggml_mul_mat_panel_bytes(kt, a->type, pl.k);
        pl.b_bytes = size_t(pl.n_panels) * pl.panel_bytes * size_t(mul_mat_n_batches(pl));
        // phase 1 needs, per panel column, a gathered F32 row and its BF16 copy; phase 2 the
        // packing space of a
        const size_t row_b16 = align_up(size_t(pl.k + 1) * sizeof(uint16_t), k_align);
        pl.thread_bytes = std::max(kt.gemm_scratch, size_t(pl.nr) * (row_f32 + row_b16));
    } else {
        pl.vt = pl.ke->dot_vec_type;
        pl.convert = pl.vt != GGML_TYPE_F32 || b->nb[0] != sizeof(float);
        pl.from_f32 = ggml_mul_mat_from_f32(*pl.ke, pl.vt);
        pl.row_bytes = align_up(ggml_row_size(pl.vt, pl.k), k_align);
        pl.b_bytes = pl.convert ? pl.row_bytes * size_t(pl.n * mul_mat_n_batches(pl)) : 0;
        pl.thread_bytes = pl.convert ? row_f32 : 0;
        pl.job_cols = pl.n;
        if (ggml_get_type_traits(a->type).is_quantized) {
            pl.job_cols = std::min(pl.n, k_job_cols);
            pl.job_rows = int64_t(k_job_weight_bytes / std::max<size_t>(1, a->nb[1])) / 16 * 16;
            pl.job_rows = std::max<int64_t>(16, pl.job_rows);
        }
    }
    pl.thread_bytes = align_up(pl.thread_bytes, k_align);
    return pl;
}

size_t mul_mat_plan_bytes(const mul_mat_plan & pl, int n_threads) {
    return k_align + align_up(pl.b_bytes, k_align) + pl.thread_bytes * size_t(n_threads);
}

// Work-buffer regions of one run.
struct mul_mat_work {
    char * b = nullptr;        // converted activations
    char * threads = nullptr;  // per-thread scratch, thread_bytes each
};

mul_mat_work mul_mat_work_layout(const ggml_compute_params & p, const mul_mat_plan & pl) {
    GGML_ASSERT(p.wsize >= mul_mat_plan_bytes(pl, p.nth));
    mul_mat_work w;
    w.b = reinterpret_cast<char *>(align_up(reinterpret_cast<uintptr_t>(p.wdata), k_align));
    w.threads = w.b + align_up(pl.b_bytes, k_align);
    return w;
}

}  // namespace

// Row n of batch (i12, i13) of b as F32: a pointer into b when its elements are adjacent,
// otherwise gathered into tmp.
const float * ggml_mul_mat_b_row(const ggml_tensor * b, int64_t n, int64_t i12, int64_t i13, float * tmp) {
    const char * row = static_cast<const char *>(b->data) + n * b->nb[1] + i12 * b->nb[2] + i13 * b->nb[3];
    if (b->nb[0] == sizeof(float)) return reinterpret_cast<const float *>(row);
    for (int64_t k = 0; k < b->ne[0]; ++k) std::memcpy(&tmp[k], row + k * b->nb[0], sizeof(float));
    return tmp;
}

namespace {

// Phase 1, dot path: every row of b converted to the kernels' type (or, for F32, gathered),
// rows back to back.
void mul_mat_convert_rows(const ggml_compute_params & p, const mul_mat_plan & pl, const ggml_tensor * b,
                          const mul_mat_work & w) {
    const ggml_from_float_fn from_f32 =
        pl.from_f32 ? pl.from_f32 : ggml_cpu_convert_for(p.isa).row_from_f32(pl.vt);
    float * tmp = reinterpret_cast<float *>(w.threads + pl.thread_bytes * size_t(p.ith));
    const int64_t n_rows = pl.n * mul_mat_n_batches(pl);
    ggml_cpu_parallel_for(p, n_rows, 16, [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
            const int64_t n = r % pl.n, bi = r / pl.n;
            char * out = w.b + size_t(r) * pl.row_bytes;
            if (pl.vt == GGML_TYPE_F32) {
                float * gathered = reinterpret_cast<float *>(out);
                const float * src = ggml_mul_mat_b_row(b, n, bi % pl.ne12, bi / pl.ne12, gathered);
                if (src != reinterpret_cast<const float *>(out)) std::memcpy(out, src, size_t(pl.k) * sizeof(float));
            } else {
                from_f32(ggml_mul_mat_b_row(b, n, bi % pl.ne12, bi / pl.ne12, tmp), out, pl.k);
            }
        }
    });
}

// Phase 1, GEMM path: b cut into panels of nr columns (see mul-mat.h), zero columns past n.
// Each column becomes a row of 32-bit units (F32 values or BF16 pairs, converted or gathered
// into the thread's scratch when needed) and the ISA's pack function transposes them.
void mul_mat_pack_panels(const ggml_compute_params & p, const mul_mat_plan & pl, const ggml_tensor * b,
                         const mul_mat_work & w) {
    const ggml_from_float_fn from_f32 = ggml_cpu_convert_for(p.isa).row_from_f32(pl.vt);
    char * scratch = w.threads + pl.thread_bytes * size_t(p.ith);
    const size_t row_f32 = align_up(size_t(pl.k) * sizeof(float), k_align);
    const size_t row_b16 = align_up(size_t(pl.k + 1) * sizeof(uint16_t), k_align);
    const int64_t n_units = pl.kpair == 2 ? ceil_div(pl.k, 2) : pl.k;
    const uint32_t * rows[GGML_MUL_MAT_MAX_NR];
    const int64_t n_total = pl.n_panels * mul_mat_n_batches(pl);
    ggml_cpu_parallel_for(p, n_total, 1, [&](int64_t begin, int64_t end) {
        for (int64_t t = begin; t < end; ++t) {
            const int64_t bi = t / pl.n_panels, pi = t % pl.n_panels;
            for (int j = 0; j < pl.nr; ++j) {
                const int64_t n = pi * pl.nr + j;
                rows[j] = nullptr;
                if (n >= pl.n) continue;
                float * gathered = reinterpret_cast<float *>(scratch + size_t(j) * (row_f32 + row_b16));
                const float * src = ggml_mul_mat_b_row(b, n, bi % pl.ne12, bi / pl.ne12, gathered);
                if (pl.kpair == 2) {
                    uint16_t * h = reinterpret_cast<uint16_t *>(reinterpret_cast<char *>(gathered) + row_f32);
                    from_f32(src, h, pl.k);
                    h[pl.k] = 0;  // odd k: the last pair's second half
                    src = reinterpret_cast<const float *>(h);
                }
                rows[j] = reinterpret_cast<const uint32_t *>(src);
            }
            pl.kt->gemm_pack(rows, n_units, reinterpret_cast<uint32_t *>(w.b + size_t(t) * pl.panel_bytes));
        }
    });
}

// Phase 1, AMX path: b in packed tile rows of 16 columns, zero columns up to whole 32-column
// blocks per batch.
void mul_mat_pack_amx(const ggml_compute_params & p, const mul_mat_plan & pl, const ggml_tensor * b,
                      const mul_mat_work & w) {
    char * scratch = w.threads + pl.thread_bytes * size_t(p.ith);
    const size_t col_bytes = align_up(size_t(pl.k) * sizeof(float), k_align);
    const int64_t tiles = ggml_amx_act_tiles(pl.n);
    ggml_cpu_parallel_for(p, tiles * mul_mat_n_batches(pl), 1, [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
            const int64_t u = r % tiles, bi = r / tiles;
            const float * cols[16];
            for (int j = 0; j < 16; ++j) {
                const int64_t n = u * 16 + j;
                float * tmp = reinterpret_cast<float *>(scratch + size_t(j) * col_bytes);
                cols[j] = n < pl.n ? ggml_mul_mat_b_row(b, n, bi % pl.ne12, bi / pl.ne12, tmp) : nullptr;
            }
            ggml_amx_pack_act(cols, pl.k, w.b + size_t(r) * pl.row_bytes);
        }
    });
}

const char * mul_mat_a_batch(const ggml_tensor * a, const mul_mat_plan & pl, int64_t bi) {
    const int64_t i12 = bi % pl.ne12, i13 = bi / pl.ne12;
    return static_cast<const char *>(a->data) + (i12 / pl.r2) * a->nb[2] + (i13 / pl.r3) * a->nb[3];
}

float * mul_mat_dst_batch(ggml_tensor * dst, const mul_mat_plan & pl, int64_t bi) {
    const int64_t i12 = bi % pl.ne12, i13 = bi / pl.ne12;
    return reinterpret_cast<float *>(static_cast<char *>(dst->data) + i12 * dst->nb[2] + i13 * dst->nb[3]);
}

// Phase 2, dot path: jobs are (batch, chunk of rows, chunk of columns); row chunks are
// multiples of 16 rows, so that two threads never write the same cache line of dst.
void mul_mat_run_dot(const ggml_compute_params & p, const mul_mat_plan & pl, ggml_tensor * dst,
                     const mul_mat_work & w) {
    const ggml_tensor * a = dst->src[0];
    const ggml_tensor * b = dst->src[1];
    const int64_t n_batches = mul_mat_n_batches(pl);
    const int64_t cols = std::max<int64_t>(1, pl.job_cols);
    const int64_t n_col_chunks = ceil_div(pl.n, cols);
    // about 8 jobs per thread, so that threads that finish early pick up the rest
    const int64_t chunks_per_batch = std::max<int64_t>(1, ceil_div(8 * p.nth, n_batches * n_col_chunks));
    int64_t rows = int64_t(align_up(size_t(ceil_div(pl.m, chunks_per_batch)), 16));
    if (pl.job_rows > 0) rows = std::min(rows, pl.job_rows);
    const int64_t n_row_chunks = ceil_div(pl.m, rows);
    const ggml_mul_mat_dot_fn dot = pl.rk ? pl.rk->dot[a->type] : pl.ke->dot;
    const int64_t ldy = int64_t(dst->nb[1] / sizeof(float));
    const int64_t jobs_per_batch = n_row_chunks * n_col_chunks;
    const int64_t n_jobs = n_batches * jobs_per_batch;
    // Claims are numbered in the order threads make them; claim i takes job
    // (i % nth) * (n_jobs / nth) + i / nth, so that while the threads take turns each one walks
    // a contiguous run of rows, and its prefetch past the end of one job reads the start of its
    // next one (any order of claims still runs every job once).
    const bool runs = p.nth > 1 && n_jobs % p.nth == 0;
    const int64_t per_thread = n_jobs / p.nth;
    ggml_cpu_parallel_for(p, n_jobs, 1, [&](int64_t begin, int64_t end) {
        for (int64_t claim = begin; claim < end; ++claim) {
            const int64_t job = runs ? (claim % p.nth) * per_thread + claim / p.nth : claim;
            const int64_t bi = job / jobs_per_batch, rest = job % jobs_per_batch;
            const int64_t r0 = (rest % n_row_chunks) * rows, c0 = (rest / n_row_chunks) * cols;
            const int64_t nr = std::min(rows, pl.m - r0), nc = std::min(cols, pl.n - c0);
            const char * pb;
            size_t ldb;
            if (pl.convert) {
                pb = w.b + size_t(bi * pl.n) * pl.row_bytes;
                ldb = pl.row_bytes;
            } else {
                pb = static_cast<const char *>(b->data) + (bi % pl.ne12) * b->nb[2] + (bi / pl.ne12) * b->nb[3];
                ldb = b->nb[1];
            }
            dot(pl.k, mul_mat_a_batch(a, pl, bi) + size_t(r0) * pl.lda, pl.lda, nr, pb + size_t(c0) * ldb, ldb, nc,
                mul_mat_dst_batch(dst, pl, bi) + c0 * ldy + r0, ldy);
        }
    }, 1);
}

// The jobs of a GEMM: (batch, block of mc rows, run of column units), fn(bi, mb, u0, units)
// for each. The columns are split only when the row blocks alone leave threads idle, or a run
// would take more than max_units.
template <typename F>
void mul_mat_gemm_jobs(const ggml_compute_params & p, const mul_mat_plan & pl, int64_t mc, int64_t n_units,
                       int64_t max_units, F && fn) {
    const int64_t m_blocks = ceil_div(pl.m, mc);
    const int64_t jobs_m = m_blocks * mul_mat_n_batches(pl);
    const int64_t min_splits = ceil_div(n_units, max_units);
    const int64_t n_splits = std::min(n_units, std::max(min_splits, ceil_div(4 * p.nth, jobs_m)));
    const int64_t per_job = ceil_div(n_units, n_splits);
    const int64_t n_splits_real = ceil_div(n_units, per_job);
    ggml_cpu_parallel_for(p, jobs_m * n_splits_real, 1, [&](int64_t begin, int64_t end) {
        for (int64_t job = begin; job < end; ++job) {
            const int64_t split = job % n_splits_real, rest = job / n_splits_real;
            fn(rest / m_blocks, rest % m_blocks, split * per_job, per_job);
        }
    }, 1);
}

// Phase 2, GEMM path: jobs are (batch, block of gemm_mc rows, run of panels).
void mul_mat_run_gemm(const ggml_compute_params & p, const mul_mat_plan & pl, ggml_tensor * dst,
                      const mul_mat_work & w) {
    const ggml_tensor * a = dst->src[0];
    const int64_t mc = pl.kt->gemm_mc;
    const int64_t ldd = int64_t(dst->nb[1] / sizeof(float));
    void * scratch = w.threads + pl.thread_bytes * size_t(p.ith);
    mul_mat_gemm_jobs(p, pl, mc, pl.n_panels, pl.n_panels, [&](int64_t bi, int64_t mb, int64_t p0, int64_t panels) {
        ggml_mul_mat_gemm_args g;
        g.a = mul_mat_a_batch(a, pl, bi) + mb * mc * a->nb[1];
        g.lda = a->nb[1];
        g.m = std::min(mc, pl.m - mb * mc);
        g.bp = w.b + size_t(bi * pl.n_panels + p0) * pl.panel_bytes;
        g.bp_stride = pl.panel_bytes;
        g.n = std::min(panels * pl.nr, pl.n - p0 * pl.nr);
        g.k = pl.k;
        g.d = mul_mat_dst_batch(dst, pl, bi) + p0 * pl.nr * ldd + mb * mc;
        g.ldd = ldd;
        g.scratch = scratch;
        pl.ke->gemm(g);
    });
}

// Phase 2, AMX path: jobs are (batch, block of ggml_amx_job_rows rows, run of 32-column
// blocks, at most ggml_amx_job_cols columns).
void mul_mat_run_amx(const ggml_compute_params & p, const mul_mat_plan & pl, ggml_tensor * dst,
                     const mul_mat_work & w) {
    const ggml_tensor * a = dst->src[0];
    const int64_t mc = ggml_amx_job_rows, bc = 32;
    const int64_t ldd = int64_t(dst->nb[1] / sizeof(float));
    const int64_t act_tiles = ggml_amx_act_tiles(pl.n);
    void * scratch = w.threads + pl.thread_bytes * size_t(p.ith);
    mul_mat_gemm_jobs(p, pl, mc, ceil_div(pl.n, bc), ggml_amx_job_cols / bc,
                      [&](int64_t bi, int64_t mb, int64_t b0, int64_t blocks) {
        const int64_t c0 = b0 * bc;
        ggml_amx_gemm_args g;
        g.type = a->type;
        g.a = mul_mat_a_batch(a, pl, bi) + mb * mc * a->nb[1];
        g.lda = a->nb[1];
        g.m = std::min(mc, pl.m - mb * mc);
        g.act = w.b + size_t(bi * act_tiles + c0 / 16) * pl.row_bytes;
        g.act_stride = pl.row_bytes;
        g.n = std::min(blocks * bc, pl.n - c0);
        g.k = pl.k;
        g.d = mul_mat_dst_batch(dst, pl, bi) + c0 * ldd + mb * mc;
        g.ldd = ldd;
        g.scratch = scratch;
        ggml_amx_gemm(g);
    });
}

// K = 0: every dot product is empty.
void mul_mat_zero(const ggml_compute_params & p, ggml_tensor * dst) {
    const int64_t n_rows = ggml_nrows(dst);
    ggml_cpu_parallel_for(p, n_rows, 64, [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
            const int64_t i1 = r % dst->ne[1], i2 = (r / dst->ne[1]) % dst->ne[2], i3 = r / (dst->ne[1] * dst->ne[2]);
            char * row = static_cast<char *>(dst->data) + i1 * dst->nb[1] + i2 * dst->nb[2] + i3 * dst->nb[3];
            std::memset(row, 0, size_t(dst->ne[0]) * sizeof(float));
        }
    });
}

}  // namespace

size_t ggml_mul_mat_panel_bytes(const ggml_mul_mat_kernels & kt, ggml_type wt, int64_t k) {
    const ggml_mul_mat_type_kernels & e = kt.of(wt);
    const int64_t kp = e.gemm_kpair == 2 ? ceil_div(k, 2) * 2 : k;
    return align_up(size_t(kp) * size_t(kt.gemm_nr) * ggml_type_size(e.gemm_vec_type), k_align);
}

bool ggml_cpu_mul_mat_supported(const ggml_tensor * dst) {
    const ggml_tensor * a = dst->src[0];
    const ggml_tensor * b = dst->src[1];
    if (!a || !b || dst->type != GGML_TYPE_F32 || b->type != GGML_TYPE_F32) return false;
    // every path has the same weight types (the scalar table is the reference)
    if (ggml_mul_mat_kernels_scalar.of(a->type).dot == nullptr) return false;
    if (a->nb[0] != ggml_type_size(a->type)) return false;
    if (!ggml_type_is_supported(a->type) || a->ne[0] % ggml_blck_size(a->type) != 0) return false;
    if (a->ne[0] != b->ne[0] || a->ne[2] == 0 || a->ne[3] == 0) return false;
    if (b->ne[2] % a->ne[2] != 0 || b->ne[3] % a->ne[3] != 0) return false;
    if (dst->ne[0] != a->ne[1] || dst->ne[1] != b->ne[1] || dst->ne[2] != b->ne[2] || dst->ne[3] != b->ne[3]) {
        return false;
    }
    return dst->nb[0] == sizeof(float);
}

size_t ggml_cpu_mul_mat_work_size(const ggml_tensor * dst, int n_threads) {
    if (!ggml_cpu_mul_mat_supported(dst)) return 0;
    // the ISA is not known here: enough for whichever path runs
    size_t bytes = 0;
    for (const ggml_cpu_isa isa : {ggml_cpu_isa::scalar, ggml_cpu_isa::avx2, ggml_cpu_isa::avx512, ggml_cpu_isa::amx}) {
        const mul_mat_plan pl = mul_mat_make_plan(dst, isa);
        bytes = std::max(bytes, mul_mat_plan_bytes(pl, std::max(1, n_threads)));
    }
    return bytes;
}

namespace {

void mul_mat_run(const ggml_compute_params & p, ggml_tensor * dst) {
    const mul_mat_plan pl = mul_mat_make_plan(dst, p.isa);
    const mul_mat_work w = mul_mat_work_layout(p, pl);
    if (pl.amx) {
        mul_mat_pack_amx(p, pl, dst->src[1], w);
        p.barrier();
        mul_mat_run_amx(p, pl, dst, w);
        return;
    }
    if (pl.gemm) {
        mul_mat_pack_panels(p, pl, dst->src[1], w);
        p.barrier();
        mul_mat_run_gemm(p, pl, dst, w);
        return;
    }
    if (pl.convert) {
        mul_mat_convert_rows(p, pl, dst->src[1], w);
        p.barrier();
    }
    mul_mat_run_dot(p, pl, dst, w);
}

}  // namespace

void ggml_cpu_op_mul_mat(const ggml_compute_params & p, ggml_tensor * dst) {
    if (ggml_nelements(dst) == 0) return;
    if (dst->src[0]->ne[0] == 0) {
        mul_mat_zero(p, dst);
        return;
    }
    // the calibrated path for this weight type: kernels, conversions and plan all follow it
    ggml_compute_params q = p;
    q.isa = ggml_cpu_mul_mat_isa(p, dst->src[0]->type, dst->src[1]->ne[1]);
    mul_mat_run(q, dst);
}

namespace {

// t as a contiguous F32 tensor of ne0 x ne1 x ne2 x ne3 elements (no data).
void mul_mat_f32_shape(ggml_tensor & t, int64_t ne0, int64_t ne1, int64_t ne2, int64_t ne3) {
    t.type = GGML_TYPE_F32;
    const int64_t ne[4] = {ne0, ne1, ne2, ne3};
    size_t nb = sizeof(float);
    for (int d = 0; d < 4; ++d) {
        t.ne[d] = ne[d];
        t.nb[d] = nb;
        nb *= size_t(ne[d]);
    }
}

}  // namespace

std::string ggml_backend_cpu_mul_mat_path(ggml_cpu_isa isa, const ggml_tensor * w, int64_t n_cols) {
    if (w == nullptr || n_cols < 1) return "unsupported";
    // the node the op would see: dst = w x b, b of n_cols contiguous F32 columns
    ggml_tensor b, dst;
    mul_mat_f32_shape(b, w->ne[0], n_cols, w->ne[2], w->ne[3]);
    mul_mat_f32_shape(dst, w->ne[1], n_cols, w->ne[2], w->ne[3]);
    dst.op = GGML_OP_MUL_MAT;
    dst.src[0] = const_cast<ggml_tensor *>(w);
    dst.src[1] = &b;
    if (!ggml_cpu_mul_mat_supported(&dst)) return "unsupported";
    const mul_mat_plan pl = mul_mat_make_plan(&dst, isa);
    const std::string wt = ggml_type_name(w->type), vt = ggml_type_name(pl.vt);
    if (pl.amx) return "amx " + wt + " x bf16 tiles";
    const std::string path = pl.kt->name;
    if (pl.rk) return path + " repacked " + wt + " x " + vt + " (" + std::to_string(GGML_REPACK_ROWS) + "-row groups)";
    if (pl.gemm) {
        return path + " gemm " + wt + " -> " + (pl.kpair == 2 ? "bf16 pair" : "f32") + " panels of " +
               std::to_string(pl.nr);
    }
    if (pl.ke->dot == nullptr) return "unsupported";
    return path + " dot " + wt + " x " + vt;
}
