// tests/ggml/backend-ops-harness.h — runs one op case on every device (every CPU path, every
// non-CPU device of the registry) and compares it with its double-precision reference.
//
// Usage:
//   bops::op_case c;
//   c.name = "add f32 [7,3,1,1]";
//   c.build = [](bops::case_inputs & in) {
//       return ggml_add(in.ctx, in.uniform(GGML_TYPE_F32, {7, 3, 1, 1}), in.uniform(GGML_TYPE_F32, {7, 1, 1, 1}));
//   };
//   c.ref = [](const bops::ref_args & r) { return bops::ref_binary(r.src[0], r.src[1], std::plus<>()); };
//   c.max_nmse = 1e-12;
//   bops::check_case(c);     // gtest failures name the case and the device (ISA and threads)
//
// Every case runs on each (ISA path the CPU has) x (1, 3 threads) CPU backend and on every
// non-CPU device of ggml_backend_registry_default() (test-devices.h), its tensors placed with
// ggml_backend_alloc_ctx_tensors in that device's buffer type; cases marked in_place run a
// second time with the result sharing src[0]'s memory (what the graph allocator may do for those
// ops). A CPU must support every case; a case another device does not support (supports_op) is
// skipped there and counted (skipped_on_devices(); INFERD_BACKEND_OPS_VERBOSE=1 names them).
#pragma once

#include "backend-ops-values.h"
#include "test-devices.h"

#include "ggml/cpu.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace bops {

// One device of the test matrix: a CPU path (isa, n_threads) or a non-CPU device.
using backend_entry = test_devices::entry;

// Every (ISA path this CPU has) x (1, 3 threads), then every non-CPU device, created once for
// the whole program.
inline std::vector<backend_entry> & backends() {
    static std::vector<backend_entry> list = test_devices::make_list({1, 3});
    return list;
}

// Cases skipped on a non-CPU device that does not support them, so far.
inline int & skipped_on_devices() {
    static int n = 0;
    return n;
}

inline bool verbose() { return std::getenv("INFERD_BACKEND_OPS_VERBOSE") != nullptr; }

// The graph inputs a case creates; each is filled with its own values before compute.
struct case_inputs {
    struct input {
        ggml_tensor * t = nullptr;
        double lo = -1.0, hi = 1.0;
        std::vector<double> values;  // used when not empty
    };
    ggml_context * ctx = nullptr;
    std::vector<input> list;

    // A contiguous input of uniform random values in [lo, hi) (rounded to the type).
    ggml_tensor * uniform(ggml_type type, const shape4 & ne, double lo = -1.0, double hi = 1.0) {
        ggml_tensor * t = ggml_new_tensor(ctx, type, 4, ne.data());
        ggml_format_name(t, "in%zu", list.size());
        ggml_set_input(t);
        list.push_back({t, lo, hi, {}});
        return t;
    }
    // A contiguous input with the given row-major values (indices, masks, special values).
    ggml_tensor * values(ggml_type type, const shape4 & ne, std::vector<double> v) {
        ggml_tensor * t = ggml_new_tensor(ctx, type, 4, ne.data());
        GGML_ASSERT(static_cast<int64_t>(v.size()) == ggml_nelements(t));
        ggml_format_name(t, "in%zu", list.size());
        ggml_set_input(t);
        list.push_back({t, 0.0, 0.0, std::move(v)});
        return t;
    }

    void fill(uint64_t seed) const {
        for (size_t k = 0; k < list.size(); ++k) {
            const input & in = list[k];
            if (!in.values.empty()) {
                write_tensor(in.t, in.values);
                continue;
            }
            rng r(seed * 1000003u + k);
            std::vector<double> v(static_cast<size_t>(ggml_nelements(in.t)));
            for (double & x : v) x = r.uniform(in.lo, in.hi);
            write_tensor(in.t, v);
        }
    }
};

// What a reference gets: the op's sources and the result tensor's contents before compute
// (for ops that write into an existing tensor: cpy, set_rows), read back from the backend.
struct ref_args {
    const ggml_tensor * out = nullptr;
    std::vector<dt> src;  // src[i] of out (empty dt where there is none)
    dt out_before;
};

struct op_case {
    std::string name;
    std::function<ggml_tensor *(case_inputs &)> build;
    std::function<dt(const ref_args &)> ref;
    double max_nmse = 0.0;        // bound when !exact
    bool exact = false;           // must equal the reference rounded to the result type
    bool zeros_exact = false;     // where the reference is 0 the result must be exactly 0
    bool allow_nonfinite = false; // the reference itself has inf/NaN (exact cases only)
    bool in_place = false;        // also run with the result in src[0]'s memory
    bool expect_failure = false;  // a data error: graph_compute must return GGML_STATUS_FAILED
    uint64_t seed = 1;
};

// One built and allocated case.
struct case_run {
    ggml_context_ptr ctx;
    case_inputs inputs;
    ggml_tensor * out = nullptr;
    ggml_cgraph * gf = nullptr;
    ggml_backend_buffer_ptr buffer;
};

inline case_run build_case(const op_case & c, bool in_place, ggml_backend_buffer_type_i * buft) {
    case_run r;
    ggml_init_params ip;
    ip.mem_size = 256 * ggml_tensor_overhead() + ggml_graph_overhead();
    ip.no_alloc = true;
    r.ctx.reset(ggml_init(ip));
    GGML_ASSERT(r.ctx);
    r.inputs.ctx = r.ctx.get();
    r.out = c.build(r.inputs);
    ggml_set_output(r.out);
    r.gf = ggml_new_graph(r.ctx.get());
    ggml_build_forward_expand(r.gf, r.out);
    r.buffer = ggml_backend_alloc_ctx_tensors(r.ctx.get(), buft);
    GGML_ASSERT(r.buffer);
    if (in_place) {
        ggml_tensor * s0 = r.out->src[0];
        GGML_ASSERT(s0 && s0->view_src == nullptr && ggml_are_same_layout(r.out, s0));
        r.out->data = s0->data;  // what the allocator does when it computes the op in place
    }
    r.inputs.fill(c.seed);
    return r;
}

struct compare_stats {
    double nmse = 0.0;
    int64_t n_nonfinite = 0;  // non-finite results where the reference is finite
    int64_t n_mismatch = 0;   // exact / zeros_exact mismatches
    int64_t first_bad = -1;
};

inline compare_stats compare_values(const op_case & c, const dt & ref, const dt & got, ggml_type out_type) {
    compare_stats s;
    double num = 0.0, den = 0.0;
    for (int64_t i = 0; i < ref.size(); ++i) {
        const double r = ref.v[i], g = got.v[i];
        const double e = c.exact ? round_to_type(r, out_type) : r;  // what the result must hold
        bool bad = false;
        if (!std::isfinite(g) && std::isfinite(e)) { ++s.n_nonfinite; bad = true; }
        if (c.exact) {
            if (!(e == g || (std::isnan(e) && std::isnan(g)))) { ++s.n_mismatch; bad = true; }
        } else if (c.zeros_exact && r == 0.0 && g != 0.0) {
            ++s.n_mismatch;
            bad = true;
        }
        if (std::isfinite(r) && std::isfinite(g)) { num += (g - r) * (g - r); den += r * r; }
        if (bad && s.first_bad < 0) s.first_bad = i;
    }
    s.nmse = den > 0.0 ? num / den : num;
    return s;
}

inline void expect_matches(const op_case & c, const dt & ref, const ggml_tensor * out, const std::string & where) {
    const dt got = read_tensor(out);
    ASSERT_EQ(got.ne, ref.ne) << where << ": reference shape differs from the result's";
    const compare_stats s = compare_values(c, ref, got, out->type);
    if (verbose()) std::printf("[bops] %-70s %-22s nmse=%.3e\n", c.name.c_str(), where.c_str(), s.nmse);
    const std::string bad = s.first_bad < 0 ? std::string()
        : " (first at flat index " + std::to_string(s.first_bad) + ": got " + std::to_string(got.v[s.first_bad]) +
          ", expected " + std::to_string(ref.v[s.first_bad]) + ")";
    EXPECT_EQ(s.n_nonfinite, 0) << c.name << " | " << where << ": non-finite results" << bad;
    EXPECT_EQ(s.n_mismatch, 0) << c.name << " | " << where << ": " << (c.exact ? "inexact" : "non-zero")
                               << " results" << bad;
    if (!c.exact) {
        EXPECT_LE(s.nmse, c.max_nmse) << c.name << " | " << where << ": NMSE too large";
    }
}

// Bytes of base that the view out does not cover must be equal in before and after.
inline void expect_outside_view_untouched(const ggml_tensor * out, const std::vector<uint8_t> & before,
                                          const std::vector<uint8_t> & after, const std::string & where) {
    std::vector<char> covered(before.size(), 0);
    const size_t es = ggml_element_size(out);
    for (int64_t i3 = 0; i3 < out->ne[3]; ++i3)
        for (int64_t i2 = 0; i2 < out->ne[2]; ++i2)
            for (int64_t i1 = 0; i1 < out->ne[1]; ++i1)
                for (int64_t i0 = 0; i0 < out->ne[0]; ++i0) {
                    const size_t o = out->view_offs + element_offset(out, i0, i1, i2, i3);
                    for (size_t b = 0; b < es && o + b < covered.size(); ++b) covered[o + b] = 1;
                }
    int64_t n_changed = 0;
    for (size_t i = 0; i < before.size(); ++i) n_changed += !covered[i] && before[i] != after[i];
    EXPECT_EQ(n_changed, 0) << where << ": bytes outside the destination view were written";
}

// Runs c on one device (optionally in place) and checks it; ref is computed on first use.
inline void run_case_on(const op_case & c, const backend_entry & be, bool in_place, std::optional<dt> & ref) {
    const std::string where = be.label + (in_place ? " in-place" : "");
    case_run r = build_case(c, in_place, be.buffer_type());
    if (!be.is_cpu() && !be.supports_graph(r.gf)) {
        ++skipped_on_devices();
        if (verbose()) std::printf("[bops] %-70s %-22s not supported\n", c.name.c_str(), where.c_str());
        return;
    }
    for (int i = 0; i < ggml_graph_n_nodes(r.gf); ++i) {
        const ggml_tensor * node = ggml_graph_node(r.gf, i);
        if (!ggml_op_is_metadata(node->op)) {
            EXPECT_TRUE(be.device->supports_op(node)) << c.name << " | " << where << ": CPU does not support " << ggml_op_name(node->op);
        }
    }
    ref_args args;
    args.out = r.out;
    for (const ggml_tensor * s : r.out->src) args.src.push_back(s ? read_tensor(s) : dt());
    args.out_before = read_tensor(r.out);
    const ggml_tensor * base = r.out->view_src;
    std::vector<std::vector<uint8_t>> snap;  // inputs that the op must leave alone
    for (const case_inputs::input & in : r.inputs.list)
        snap.push_back(in.t == base || in.t->data == r.out->data ? std::vector<uint8_t>() : read_bytes(in.t));
    const std::vector<uint8_t> base_before = base ? read_bytes(base) : std::vector<uint8_t>();

    const ggml_status st = be.compute(r.gf);
    const ggml_status want = c.expect_failure ? GGML_STATUS_FAILED : GGML_STATUS_SUCCESS;
    EXPECT_EQ(st, want) << c.name << " | " << where << ": graph_compute returned " << ggml_status_to_string(st);
    for (size_t k = 0; k < snap.size(); ++k)
        if (!snap[k].empty()) {
            EXPECT_TRUE(read_bytes(r.inputs.list[k].t) == snap[k]) << c.name << " | " << where << ": input " << k << " was modified";
        }
    if (base) expect_outside_view_untouched(r.out, base_before, read_bytes(base), c.name + " | " + where);
    if (c.expect_failure || st != GGML_STATUS_SUCCESS) return;
    if (!ref) ref = c.ref(args);
    expect_matches(c, *ref, r.out, where);
}

// Runs c on every device of the list (the whole matrix by default).
inline void check_case(const op_case & c, const std::vector<backend_entry> & list = backends()) {
    std::optional<dt> ref;
    for (const backend_entry & be : list) {
        run_case_on(c, be, false, ref);
        if (c.in_place) run_case_on(c, be, true, ref);
    }
}

inline void check_cases(const std::vector<op_case> & cases, const std::vector<backend_entry> & list = backends()) {
    for (const op_case & c : cases) check_case(c, list);
}

}  // namespace bops
