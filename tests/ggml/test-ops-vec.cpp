// Tests of the SIMD row functions of ggml/cpu/ops-vec.h: every function of every path this CPU
// supports against the scalar path (odd lengths, misaligned pointers, in place, nothing written
// past n), and the accuracy of exp / silu / gelu / swiglu / tanh against double precision.
#include "cpu/ops-vec.h"

#include "ggml/cpu.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace {

constexpr float inf = std::numeric_limits<float>::infinity();
constexpr float qnan = std::numeric_limits<float>::quiet_NaN();
constexpr float eps = std::numeric_limits<float>::epsilon();

const int64_t test_lengths[] = {0, 1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 32, 33, 47, 63, 64, 65, 100, 129, 1023, 1024, 4099};
const int test_offsets[] = {0, 1, 3};  // floats past a 64-byte boundary

// Own names, so this test needs nothing of the CPU backend but ops-vec.
const char * isa_name(ggml_cpu_isa isa) {
    switch (isa) {
        case ggml_cpu_isa::avx2: return "avx2";
        case ggml_cpu_isa::avx512: return "avx512";
        default: return "scalar";
    }
}

bool isa_supported(ggml_cpu_isa isa) {
    switch (isa) {
        case ggml_cpu_isa::avx2:
            return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c");
        case ggml_cpu_isa::avx512:
            return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                   __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
                   __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
        default:
            return true;
    }
}

// A float array at a chosen misalignment with guard zones on both sides: check() says whether
// anything outside [0, n) was written.
class guarded {
public:
    guarded(int64_t n, int offset) : n_(n), mem_(n + offset + 2 * guard + 16) {
        const uintptr_t raw = reinterpret_cast<uintptr_t>(mem_.data() + guard);
        const uintptr_t aligned = (raw + 63) & ~uintptr_t(63);
        begin_ = reinterpret_cast<float *>(aligned) + offset;
        for (float & v : mem_) v = sentinel();
    }
    float * data() { return begin_; }
    float & operator[](int64_t i) { return begin_[i]; }
    bool guards_intact() const {
        for (const float * p = mem_.data(); p < mem_.data() + mem_.size(); ++p) {
            if (p >= begin_ && p < begin_ + n_) continue;
            if (std::memcmp(p, &sentinel_bits, 4) != 0) return false;
        }
        return true;
    }

private:
    static constexpr int guard = 32;
    static constexpr uint32_t sentinel_bits = 0x7fc0dead;  // a NaN no function produces
    static float sentinel() { float f; std::memcpy(&f, &sentinel_bits, 4); return f; }
    int64_t n_;
    std::vector<float> mem_;
    float * begin_ = nullptr;
};

std::vector<float> random_floats(int64_t n, float lo, float hi, uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(lo, hi);
    std::vector<float> v(n);
    for (float & x : v) x = dist(rng);
    return v;
}

bool same_bits(float a, float b) {
    return std::memcmp(&a, &b, 4) == 0 || (std::isnan(a) && std::isnan(b));
}

// |got - want| <= rel * |want| + abs_tol, NaN only where NaN is expected.
::testing::AssertionResult close(double got, double want, double rel, double abs_tol = 0.0) {
    if (std::isnan(want) || std::isnan(got)) {
        if (std::isnan(want) && std::isnan(got)) return ::testing::AssertionSuccess();
        return ::testing::AssertionFailure() << "got " << got << ", want " << want;
    }
    if (std::isinf(want) || std::isinf(got)) {
        if (got == want) return ::testing::AssertionSuccess();
        return ::testing::AssertionFailure() << "got " << got << ", want " << want;
    }
    const double err = std::fabs(got - want);
    if (err <= rel * std::fabs(want) + abs_tol) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "got " << got << ", want " << want << " (error " << err << ")";
}

std::string sci(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3g", v);
    return buf;
}

double silu_ref(double x) { return x / (1.0 + std::exp(-x)); }
double gelu_tanh_ref(double x) { return 0.5 * x * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x))); }
// The same function as x * sigmoid(2u): no cancellation for negative x (see ops-vec-scalar.cpp).
double gelu_ref(double x) { return x / (1.0 + std::exp(-2.0 * std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x))); }

// ---- one element-wise function under test, run through every length and offset ----

enum class ew_kind { unary, binary };
struct ew_case {
    const char * name;
    ew_kind kind;
    float lo, hi;            // input range
    double rel, abs_tol;     // tolerance against the scalar path
    void (*run)(const ggml_cpu_vec_fns & f, const float * a, const float * b, float * y, int64_t n);
};

const ew_case ew_cases[] = {
    {"add", ew_kind::binary, -10, 10, 0, 0, [](const ggml_cpu_vec_fns & f, const float * a, const float * b, float * y, int64_t n) { f.add(a, b, y, n); }},
    {"mul", ew_kind::binary, -10, 10, 0, 0, [](const ggml_cpu_vec_fns & f, const float * a, const float * b, float * y, int64_t n) { f.mul(a, b, y, n); }},
    // IEEE division everywhere: bit-identical (the divisors are never 0 in these inputs)
    {"div", ew_kind::binary, -10, 10, 0, 0, [](const ggml_cpu_vec_fns & f, const float * a, const float * b, float * y, int64_t n) { f.div(a, b, y, n); }},
    // FMA rounds once where the scalar path rounds twice: allow an ulp of each part.
    {"scale", ew_kind::unary, -10, 10, 0, 2e-6, [](const ggml_cpu_vec_fns & f, const float * a, const float *, float * y, int64_t n) { f.scale(a, 0.37f, -1.25f, y, n); }},
    {"scale_add", ew_kind::binary, -10, 10, 0, 4e-6, [](const ggml_cpu_vec_fns & f, const float * a, const float * b, float * y, int64_t n) { f.scale_add(a, 1.7f, b, y, n); }},
    {"exp", ew_kind::unary, -80, 80, 2e-7, 0, [](const ggml_cpu_vec_fns & f, const float * a, const float *, float * y, int64_t n) { f.exp(a, y, n); }},
    {"silu", ew_kind::unary, -60, 60, 1e-6, 1e-30, [](const ggml_cpu_vec_fns & f, const float * a, const float *, float * y, int64_t n) { f.silu(a, y, n); }},
    {"swiglu", ew_kind::binary, -20, 20, 1e-6, 1e-30, [](const ggml_cpu_vec_fns & f, const float * a, const float * b, float * y, int64_t n) { f.swiglu(a, b, y, n); }},
    {"gelu", ew_kind::unary, -8, 8, 1e-5, 1e-30, [](const ggml_cpu_vec_fns & f, const float * a, const float *, float * y, int64_t n) { f.gelu(a, y, n); }},
    {"tanh", ew_kind::unary, -12, 12, 4e-7, 0, [](const ggml_cpu_vec_fns & f, const float * a, const float *, float * y, int64_t n) { f.tanh(a, y, n); }},
};

class ops_vec_simd : public ::testing::TestWithParam<ggml_cpu_isa> {
protected:
    void SetUp() override {
        if (!isa_supported(GetParam())) GTEST_SKIP() << "this CPU lacks " << isa_name(GetParam());
    }
    const ggml_cpu_vec_fns & simd() const { return ggml_cpu_vec_for(GetParam()); }
    const ggml_cpu_vec_fns & ref() const { return ggml_cpu_vec_fns_scalar(); }
};

TEST_P(ops_vec_simd, path_name_matches) {
    EXPECT_STREQ(simd().name, isa_name(GetParam()));
}

void check_elementwise(const ggml_cpu_vec_fns & simd, const ggml_cpu_vec_fns & ref, const ew_case & c, int64_t n, int off) {
    SCOPED_TRACE(std::string(c.name) + " n=" + std::to_string(n) + " offset=" + std::to_string(off));
    const std::vector<float> av = random_floats(n, c.lo, c.hi, 17 + (uint32_t)n);
    const std::vector<float> bv = random_floats(n, c.lo, c.hi, 91 + (uint32_t)n);
    guarded a(n, off), b(n, (off + 1) % 4), y(n, (off + 2) % 4), inplace(n, off);
    for (int64_t i = 0; i < n; ++i) {
        a[i] = av[i];
        b[i] = bv[i];
        inplace[i] = av[i];
    }
    std::vector<float> want(n);
    c.run(ref, av.data(), bv.data(), want.data(), n);
    c.run(simd, a.data(), b.data(), y.data(), n);
    c.run(simd, inplace.data(), b.data(), inplace.data(), n);  // y == a
    EXPECT_TRUE(y.guards_intact());
    EXPECT_TRUE(inplace.guards_intact());
    for (int64_t i = 0; i < n; ++i) {
        ASSERT_EQ(a[i], av[i]) << "input modified at " << i;
        ASSERT_TRUE(close(y[i], want[i], c.rel, c.abs_tol)) << "at " << i << ", x = " << av[i];
        ASSERT_TRUE(same_bits(inplace[i], y[i])) << "in place differs at " << i;
    }
}

TEST_P(ops_vec_simd, elementwise_match_scalar) {
    for (const ew_case & c : ew_cases) {
        for (int64_t n : test_lengths) {
            for (int off : test_offsets) check_elementwise(simd(), ref(), c, n, off);
        }
    }
}

// Inputs with few significant bits, so that every partial sum is exact in float whatever the
// order: the SIMD and scalar sums must then be equal.
TEST_P(ops_vec_simd, sums_exact_on_exactly_summable_input) {
    std::mt19937 rng(5);
    std::uniform_int_distribution<int> k(-40, 40);
    for (int64_t n : test_lengths) {
        for (int off : test_offsets) {
            guarded x(n, off);
            for (int64_t i = 0; i < n; ++i) x[i] = k(rng) / 4.0f;  // x^2 has 4 fraction bits, sums < 2^19
            double s = 0, ss = 0;
            for (int64_t i = 0; i < n; ++i) {
                s += x[i];
                ss += (double)x[i] * x[i];
            }
            EXPECT_EQ(simd().sum(x.data(), n), (float)s) << "n=" << n;
            EXPECT_EQ(simd().sum_sq(x.data(), n), (float)ss) << "n=" << n;
            EXPECT_EQ(ref().sum(x.data(), n), (float)s) << "n=" << n;
            EXPECT_EQ(ref().sum_sq(x.data(), n), (float)ss) << "n=" << n;
        }
    }
}

TEST_P(ops_vec_simd, sums_close_on_random_input) {
    for (int64_t n : test_lengths) {
        const std::vector<float> x = random_floats(n, -3, 5, 7 + (uint32_t)n);
        double s = 0, ss = 0, sabs = 0;
        for (float v : x) {
            s += v;
            ss += (double)v * v;
            sabs += std::fabs(v);
        }
        // Float accumulation in any order: error <= (n_terms per accumulator + tree depth) eps sum|x|.
        const double bound = (n / 8.0 + 8.0) * eps;
        EXPECT_TRUE(close(simd().sum(x.data(), n), s, 0, bound * sabs)) << "n=" << n;
        EXPECT_TRUE(close(simd().sum_sq(x.data(), n), ss, 0, bound * ss)) << "n=" << n;
    }
}

TEST_P(ops_vec_simd, max_and_argmax) {
    std::mt19937 rng(11);
    for (int64_t n : test_lengths) {
        for (int off : test_offsets) {
            guarded x(n, off);
            const std::vector<float> v = random_floats(n, -100, 100, 3 + (uint32_t)n);
            for (int64_t i = 0; i < n; ++i) x[i] = v[i];
            EXPECT_EQ(simd().max(x.data(), n), ref().max(x.data(), n)) << "n=" << n;
            EXPECT_EQ(simd().argmax(x.data(), n), ref().argmax(x.data(), n)) << "n=" << n;
            if (n < 2) continue;
            // NaNs are ignored; ties give the first index; the maximum may sit in the tail.
            const int64_t first = std::uniform_int_distribution<int64_t>(0, n - 1)(rng);
            const int64_t second = std::uniform_int_distribution<int64_t>(first, n - 1)(rng);
            x[first] = 500.0f;
            x[second] = 500.0f;
            x[(first + 1) % n] = qnan;
            if (first + 1 == n) x[first] = 500.0f;  // the NaN landed on index 0; keep the max
            EXPECT_EQ(simd().max(x.data(), n), 500.0f) << "n=" << n;
            EXPECT_EQ(simd().argmax(x.data(), n), ref().argmax(x.data(), n)) << "n=" << n;
            EXPECT_EQ(ref().argmax(x.data(), n), x[first] == 500.0f ? first : second) << "n=" << n;
            x[n - 1] = 1000.0f;
            EXPECT_EQ(simd().argmax(x.data(), n), n - 1) << "n=" << n;
        }
    }
}

TEST_P(ops_vec_simd, max_special_rows) {
    for (int64_t n : test_lengths) {
        std::vector<float> ninf(n, -inf), nan(n, qnan);
        EXPECT_EQ(simd().max(ninf.data(), n), -inf);
        EXPECT_EQ(simd().argmax(ninf.data(), n), 0);
        EXPECT_EQ(simd().max(nan.data(), n), -inf);
        EXPECT_EQ(simd().argmax(nan.data(), n), 0);
        EXPECT_EQ(ref().argmax(nan.data(), n), 0);
        if (n > 1) {
            nan[n - 1] = -5.0f;
            EXPECT_EQ(simd().argmax(nan.data(), n), n - 1);
            EXPECT_EQ(ref().argmax(nan.data(), n), n - 1);
        }
    }
}

TEST_P(ops_vec_simd, exp_sum_matches_double) {
    for (int64_t n : test_lengths) {
        for (int off : test_offsets) {
            guarded x(n, off), y(n, (off + 1) % 4), inplace(n, off);
            const std::vector<float> v = random_floats(n, -30, 10, 23 + (uint32_t)n);
            for (int64_t i = 0; i < n; ++i) x[i] = inplace[i] = v[i];
            const float m = 7.5f;
            const float s = simd().exp_sum(x.data(), m, y.data(), n);
            const float s_inplace = simd().exp_sum(inplace.data(), m, inplace.data(), n);
            double want_sum = 0;
            for (int64_t i = 0; i < n; ++i) {
                const double e = std::exp((double)(v[i] - m));  // x - m is a float subtraction
                want_sum += e;
                ASSERT_TRUE(close(y[i], e, 2.5e-7, 1e-37)) << "n=" << n << " i=" << i;
                ASSERT_TRUE(same_bits(inplace[i], y[i]));
            }
            EXPECT_TRUE(close(s, want_sum, 1e-6, 1e-37)) << "n=" << n;
            EXPECT_EQ(s, s_inplace);
            EXPECT_TRUE(close(ref().exp_sum(x.data(), m, y.data(), n), want_sum, 3e-6, 1e-37));
            EXPECT_TRUE(y.guards_intact());
            EXPECT_TRUE(inplace.guards_intact());
        }
    }
}

// Dense sweep of exp: relative error < 2e-7 wherever the result is a normal float, correct
// subnormals (within one subnormal step), inf / 0 at the ends, NaN only for NaN.
TEST_P(ops_vec_simd, exp_accuracy) {
    const int64_t n = 1 << 20;
    std::vector<float> x(n), y(n);
    const double lo = -104.0, hi = 89.0;
    for (int64_t i = 0; i < n; ++i) x[i] = (float)(lo + (hi - lo) * (double)i / (double)(n - 1));
    simd().exp(x.data(), y.data(), n);
    double worst = 0;
    for (int64_t i = 0; i < n; ++i) {
        const double want = std::exp((double)x[i]);
        if (want > std::numeric_limits<float>::max()) {
            ASSERT_EQ(y[i], inf) << "x = " << x[i];
        } else if (want >= std::numeric_limits<float>::min()) {
            worst = std::max(worst, std::fabs(y[i] - want) / want);
        } else {
            ASSERT_LE(std::fabs(y[i] - want), std::numeric_limits<float>::denorm_min()) << "x = " << x[i];
        }
    }
    EXPECT_LT(worst, 2e-7);
    RecordProperty("worst_exp_rel_error", sci(worst));
    const float special[] = {0.0f, -0.0f, inf, -inf, qnan, 1e-30f, -1e-30f, 88.72f, 88.73f, -87.3f, -103.9f, -200.0f, 200.0f, 3e38f, -3e38f};
    const int ns = (int)(sizeof(special) / sizeof(special[0]));
    float ys[ns];
    simd().exp(special, ys, ns);
    for (int i = 0; i < ns; ++i) {
        const double want = std::exp((double)special[i]);
        if (std::isnan(special[i])) {
            EXPECT_TRUE(std::isnan(ys[i]));
        } else {
            EXPECT_FALSE(std::isnan(ys[i])) << "x = " << special[i];
            EXPECT_TRUE(close(ys[i], (float)want, 2e-7, 1.5e-45)) << "x = " << special[i];
        }
    }
}

// silu and gelu against double precision over the range that matters, plus extreme inputs.
TEST_P(ops_vec_simd, activation_accuracy) {
    const int64_t n = 1 << 18;
    std::vector<float> x(n), ys(n), yg(n), ones(n, 1.0f), yw(n);
    for (int64_t i = 0; i < n; ++i) x[i] = (float)(-80.0 + 160.0 * (double)i / (double)(n - 1));
    simd().silu(x.data(), ys.data(), n);
    simd().gelu(x.data(), yg.data(), n);
    simd().swiglu(x.data(), ones.data(), yw.data(), n);
    double worst_silu = 0, worst_gelu = 0;
    for (int64_t i = 0; i < n; ++i) {
        const double s = silu_ref(x[i]);
        worst_silu = std::max(worst_silu, std::fabs(ys[i] - s) / std::fabs(s));
        ASSERT_TRUE(same_bits(yw[i], ys[i])) << "swiglu(x, 1) != silu(x) at x = " << x[i];
        const double g = gelu_ref(x[i]);
        if (x[i] >= -5.0f) {
            ASSERT_TRUE(close(g, gelu_tanh_ref(x[i]), 1e-9)) << "x = " << x[i];
        }
        if (std::fabs(g) >= std::numeric_limits<float>::min()) {
            worst_gelu = std::max(worst_gelu, std::fabs(yg[i] - g) / std::fabs(g));
        } else {
            ASSERT_LE(std::fabs(yg[i] - g), std::numeric_limits<float>::min()) << "x = " << x[i];
        }
    }
    EXPECT_LT(worst_silu, 1e-6);
    EXPECT_LT(worst_gelu, 1e-5);
    RecordProperty("worst_silu_rel_error", sci(worst_silu));
    RecordProperty("worst_gelu_rel_error", sci(worst_gelu));
    const float special[] = {0.0f, -0.0f, 1e-30f, -1e-30f, 200.0f, -200.0f, 3e38f, -3e38f, inf};
    const int ns = (int)(sizeof(special) / sizeof(special[0]));
    float s_out[ns], g_out[ns];
    simd().silu(special, s_out, ns);
    simd().gelu(special, g_out, ns);
    for (int i = 0; i < ns; ++i) {
        EXPECT_FALSE(std::isnan(s_out[i])) << "silu(" << special[i] << ")";
        EXPECT_FALSE(std::isnan(g_out[i])) << "gelu(" << special[i] << ")";
        EXPECT_TRUE(close(s_out[i], silu_ref(special[i]), 1e-6, 1e-37)) << "silu(" << special[i] << ")";
        EXPECT_TRUE(close(g_out[i], gelu_ref(special[i]), 1e-5, 1e-37)) << "gelu(" << special[i] << ")";
    }
}

// Distance in units in the last place between two finite floats of the same sign (or zeros).
int64_t ulp_distance(float a, float b) {
    int32_t ia, ib;
    std::memcpy(&ia, &a, 4);
    std::memcpy(&ib, &b, 4);
    if (ia < 0) ia = int32_t(0x80000000u) - ia;  // ordered integers across the sign
    if (ib < 0) ib = int32_t(0x80000000u) - ib;
    return std::llabs(int64_t(ia) - int64_t(ib));
}

// tanh against the correctly rounded double tanh: a dense sweep of [-20, 20], tiny and
// subnormal magnitudes (tanh(x) = x there), and the special values.
TEST_P(ops_vec_simd, tanh_accuracy) {
    std::vector<float> x;
    const int64_t n_lin = 1 << 20;
    for (int64_t i = 0; i < n_lin; ++i) x.push_back((float)(-20.0 + 40.0 * (double)i / (double)(n_lin - 1)));
    for (double e = -45.0; e < 0.0; e += 0.001) {
        x.push_back((float)std::pow(10.0, e));
        x.push_back(-(float)std::pow(10.0, e));
    }
    std::vector<float> y(x.size());
    simd().tanh(x.data(), y.data(), (int64_t)x.size());
    int64_t worst = 0;
    float worst_x = 0.0f;
    for (size_t i = 0; i < x.size(); ++i) {
        const float want = (float)std::tanh((double)x[i]);
        const int64_t d = ulp_distance(y[i], want);
        if (d > worst) { worst = d; worst_x = x[i]; }
    }
    EXPECT_LE(worst, 3) << "at x = " << worst_x;
    RecordProperty("worst_tanh_ulp", (int)worst);
    const float special[] = {0.0f, -0.0f, inf, -inf, qnan, 3e38f, -3e38f, 1e-45f, -1e-45f, 20.0f, -100.0f};
    const int ns = (int)(sizeof(special) / sizeof(special[0]));
    float ys[ns];
    simd().tanh(special, ys, ns);
    for (int i = 0; i < ns; ++i) {
        EXPECT_TRUE(same_bits(ys[i], (float)std::tanh((double)special[i]))) << "tanh(" << special[i] << ") = " << ys[i];
    }
}

// Buffers of exactly n floats on the heap, so AddressSanitizer sees any access past the end.
TEST_P(ops_vec_simd, exact_size_buffers) {
    for (int64_t n : test_lengths) {
        std::vector<float> a = random_floats(n, -5, 5, 1), b = random_floats(n, -5, 5, 2), y(n);
        const ggml_cpu_vec_fns & f = simd();
        f.add(a.data(), b.data(), y.data(), n);
        f.mul(a.data(), b.data(), y.data(), n);
        f.scale(a.data(), 2.0f, 1.0f, y.data(), n);
        f.scale_add(a.data(), 2.0f, b.data(), y.data(), n);
        f.exp(a.data(), y.data(), n);
        f.silu(a.data(), y.data(), n);
        f.swiglu(a.data(), b.data(), y.data(), n);
        f.gelu(a.data(), y.data(), n);
        f.div(a.data(), b.data(), y.data(), n);
        f.tanh(a.data(), y.data(), n);
        EXPECT_TRUE(close(f.exp_sum(a.data(), 5.0f, y.data(), n), ref().exp_sum(a.data(), 5.0f, b.data(), n), 1e-6));
        EXPECT_EQ(f.max(a.data(), n), ref().max(a.data(), n));
        EXPECT_EQ(f.argmax(a.data(), n), ref().argmax(a.data(), n));
        EXPECT_TRUE(close(f.sum(a.data(), n), ref().sum(a.data(), n), 0, 1e-4));
        EXPECT_TRUE(close(f.sum_sq(a.data(), n), ref().sum_sq(a.data(), n), 1e-5, 1e-6));
    }
}

// RoPE rotations: even lengths, both cache layouts, in place, nothing touched past n_dims.
TEST_P(ops_vec_simd, rope_rotations_match_scalar) {
    const int64_t dims[] = {0, 2, 4, 6, 14, 16, 18, 30, 32, 34, 64, 96, 128, 130, 256};
    for (const bool neox : {false, true}) {
        for (int64_t n : dims) {
            for (int off : test_offsets) {
                SCOPED_TRACE(std::string(neox ? "neox" : "norm") + " n_dims=" + std::to_string(n) + " offset=" + std::to_string(off));
                const std::vector<float> xv = random_floats(n, -4, 4, 41 + (uint32_t)n);
                const std::vector<float> cs = random_floats(n, -1.5f, 1.5f, 43 + (uint32_t)n);  // mscale * (cos, sin)
                guarded x(n, off), y(n, (off + 1) % 4), inplace(n, off);
                for (int64_t i = 0; i < n; ++i) x[i] = inplace[i] = xv[i];
                std::vector<float> want(n);
                auto rot = [&](const ggml_cpu_vec_fns & f, const float * in, float * out) {
                    (neox ? f.rope_neox : f.rope_norm)(in, cs.data(), out, n);
                };
                rot(ref(), xv.data(), want.data());
                rot(simd(), x.data(), y.data());
                rot(simd(), inplace.data(), inplace.data());
                EXPECT_TRUE(y.guards_intact());
                EXPECT_TRUE(inplace.guards_intact());
                const int64_t h = n / 2;
                for (int64_t i = 0; i < n; ++i) {
                    // partner element and its coefficient bound: |x0 c| + |x1 s| <= 2 * 4 * 1.5
                    const int64_t j = neox ? (i < h ? i + h : i - h) : (i ^ 1);
                    const double c = neox ? cs[i % h] : cs[i & ~int64_t(1)];
                    const double sn = neox ? cs[h + i % h] : cs[i | 1];
                    const double exact = i % (neox ? n : 2) < (neox ? h : 1) ? xv[i] * c - xv[j] * sn : xv[j] * sn + xv[i] * c;
                    ASSERT_TRUE(close(y[i], exact, 0, 4 * eps * 12)) << "at " << i;
                    ASSERT_TRUE(close(want[i], exact, 0, 4 * eps * 12)) << "scalar at " << i;
                    ASSERT_TRUE(same_bits(inplace[i], y[i])) << "in place differs at " << i;
                }
            }
        }
    }
}

INSTANTIATE_TEST_SUITE_P(isa, ops_vec_simd, ::testing::Values(ggml_cpu_isa::avx2, ggml_cpu_isa::avx512),
                         [](const ::testing::TestParamInfo<ggml_cpu_isa> & info) {
                             return std::string(isa_name(info.param));
                         });

// ---- the scalar path itself (the reference of the tests above) ----

TEST(ops_vec_scalar, reference_values) {
    const ggml_cpu_vec_fns & f = ggml_cpu_vec_fns_scalar();
    EXPECT_STREQ(f.name, "scalar");
    const float x[] = {-2.0f, 0.0f, 1.0f, 3.0f};
    float y[4];
    f.exp(x, y, 4);
    for (int i = 0; i < 4; ++i) EXPECT_EQ(y[i], (float)std::exp((double)x[i]));
    f.silu(x, y, 4);
    for (int i = 0; i < 4; ++i) EXPECT_TRUE(close(y[i], silu_ref(x[i]), 1e-7));
    f.gelu(x, y, 4);
    for (int i = 0; i < 4; ++i) EXPECT_TRUE(close(y[i], gelu_ref(x[i]), 1e-7));
    EXPECT_EQ(f.max(x, 0), -inf);
    EXPECT_EQ(f.argmax(x, 4), 3);
    EXPECT_EQ(f.sum(x, 4), 2.0f);
    EXPECT_EQ(f.sum_sq(x, 4), 14.0f);
    EXPECT_EQ(&ggml_cpu_vec_for(ggml_cpu_isa::scalar), &f);
}

TEST(ops_vec_scalar, best_is_a_supported_path) {
    const ggml_cpu_vec_fns & best = ggml_cpu_vec_for(ggml_cpu_isa::best);
    const std::string name = best.name;
    if (isa_supported(ggml_cpu_isa::avx512)) {
        EXPECT_EQ(name, "avx512");
    } else if (isa_supported(ggml_cpu_isa::avx2)) {
        EXPECT_EQ(name, "avx2");
    } else {
        EXPECT_EQ(name, "scalar");
    }
}

}  // namespace
