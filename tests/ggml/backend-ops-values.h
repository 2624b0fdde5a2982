// tests/ggml/backend-ops-values.h — host-side values for the backend-ops harness.
//
// Usage:
//   bops::dt a = bops::read_tensor(t);          // every element of t (any strides) as double
//   double x = a.at(i0, i1, i2, i3);
//   bops::write_tensor(t, values);              // row-major values into contiguous t, in t's type
//
// The F16/BF16 conversions here are written independently of the library, so that the
// reference never relies on the code under test: decoding is exact, encoding rounds to
// nearest, ties to even (what the library promises for every stored value).
#pragma once

#include "ggml/backend.h"

#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace bops {

// ---- independent F16 / BF16 conversions ----

inline double f16_bits_to_double(uint16_t h) {
    const int sign = (h >> 15) & 1;
    const int exp = (h >> 10) & 0x1f;
    const int mant = h & 0x3ff;
    double v;
    if (exp == 0) {
        v = std::ldexp(static_cast<double>(mant), -24);
    } else if (exp == 31) {
        v = mant == 0 ? INFINITY : NAN;
    } else {
        v = std::ldexp(static_cast<double>(1024 + mant), exp - 25);
    }
    return sign ? -v : v;
}

// Rounds x (any double) to the nearest binary16, ties to even.
inline uint16_t double_to_f16_bits(double x) {
    const uint16_t sign = std::signbit(x) ? 0x8000 : 0;
    if (std::isnan(x)) return sign | 0x7e00;
    const double a = std::fabs(x);
    if (std::isinf(a)) return sign | 0x7c00;
    if (a < std::ldexp(1.0, -14)) {  // subnormal range: multiples of 2^-24
        const double m = std::nearbyint(std::ldexp(a, 24));  // 1024 becomes the smallest normal
        return static_cast<uint16_t>(sign | static_cast<uint16_t>(m));
    }
    int e = std::ilogb(a);                                   // 2^e <= a < 2^(e+1)
    double m = std::nearbyint(std::ldexp(a, 10 - e));        // in [1024, 2048]
    if (m == 2048.0) { m = 1024.0; ++e; }
    if (e > 15) return sign | 0x7c00;
    return static_cast<uint16_t>(sign | ((e + 15) << 10) | (static_cast<int>(m) - 1024));
}

inline double bf16_bits_to_double(uint16_t h) {
    const uint32_t u = static_cast<uint32_t>(h) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}

// Rounds a float to the nearest bfloat16, ties to even (NaN stays a quiet NaN).
inline uint16_t float_to_bf16_bits(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40);
    u += 0x7fffu + ((u >> 16) & 1u);
    return static_cast<uint16_t>(u >> 16);
}

// The value x becomes once stored as type t (x must be a float value for BF16).
inline double round_to_type(double x, ggml_type t) {
    switch (t) {
        case GGML_TYPE_F32: return static_cast<float>(x);
        case GGML_TYPE_F16: return f16_bits_to_double(double_to_f16_bits(x));
        case GGML_TYPE_BF16: return bf16_bits_to_double(float_to_bf16_bits(static_cast<float>(x)));
        default: return x;
    }
}

// ---- a dense double tensor (row-major over ne, dim 0 innermost) ----

using shape4 = std::array<int64_t, 4>;

struct dt {
    shape4 ne{1, 1, 1, 1};
    std::vector<double> v;

    dt() = default;
    explicit dt(const shape4 & n, double fill = 0.0) : ne(n), v(static_cast<size_t>(n[0] * n[1] * n[2] * n[3]), fill) {}

    int64_t size() const { return static_cast<int64_t>(v.size()); }
    size_t idx(int64_t i0, int64_t i1, int64_t i2, int64_t i3) const {
        return static_cast<size_t>(((i3 * ne[2] + i2) * ne[1] + i1) * ne[0] + i0);
    }
    double & at(int64_t i0, int64_t i1 = 0, int64_t i2 = 0, int64_t i3 = 0) { return v[idx(i0, i1, i2, i3)]; }
    double at(int64_t i0, int64_t i1 = 0, int64_t i2 = 0, int64_t i3 = 0) const { return v[idx(i0, i1, i2, i3)]; }
};

inline shape4 shape_of(const ggml_tensor * t) { return {t->ne[0], t->ne[1], t->ne[2], t->ne[3]}; }

// ---- element access to tensors through the backend ----

inline double decode_element(const uint8_t * p, ggml_type type) {
    switch (type) {
        case GGML_TYPE_F32: { float f; std::memcpy(&f, p, 4); return f; }
        case GGML_TYPE_F16: { uint16_t h; std::memcpy(&h, p, 2); return f16_bits_to_double(h); }
        case GGML_TYPE_BF16: { uint16_t h; std::memcpy(&h, p, 2); return bf16_bits_to_double(h); }
        case GGML_TYPE_I32: { int32_t i; std::memcpy(&i, p, 4); return i; }
        case GGML_TYPE_I64: { int64_t i; std::memcpy(&i, p, 8); return static_cast<double>(i); }
        default: GGML_ABORT("backend-ops: cannot decode type %d", static_cast<int>(type));
    }
}

inline void encode_element(uint8_t * p, ggml_type type, double x) {
    switch (type) {
        case GGML_TYPE_F32: { const float f = static_cast<float>(x); std::memcpy(p, &f, 4); break; }
        case GGML_TYPE_F16: { const uint16_t h = double_to_f16_bits(x); std::memcpy(p, &h, 2); break; }
        case GGML_TYPE_BF16: { const uint16_t h = float_to_bf16_bits(static_cast<float>(x)); std::memcpy(p, &h, 2); break; }
        case GGML_TYPE_I32: { const int32_t i = static_cast<int32_t>(x); std::memcpy(p, &i, 4); break; }
        case GGML_TYPE_I64: { const int64_t i = static_cast<int64_t>(x); std::memcpy(p, &i, 8); break; }
        default: GGML_ABORT("backend-ops: cannot encode type %d", static_cast<int>(type));
    }
}

// The bytes spanned by t (a view: from its first to its last element).
inline std::vector<uint8_t> read_bytes(const ggml_tensor * t) {
    std::vector<uint8_t> bytes(ggml_nbytes(t));
    if (!bytes.empty()) ggml_backend_tensor_get(t, bytes.data(), 0, bytes.size());
    return bytes;
}

inline size_t element_offset(const ggml_tensor * t, int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
    return static_cast<size_t>(i0) * t->nb[0] + static_cast<size_t>(i1) * t->nb[1] +
           static_cast<size_t>(i2) * t->nb[2] + static_cast<size_t>(i3) * t->nb[3];
}

// Every element of t, by its strides, in row-major order of t's shape.
inline dt read_tensor(const ggml_tensor * t) {
    const std::vector<uint8_t> bytes = read_bytes(t);
    dt out(shape_of(t));
    for (int64_t i3 = 0; i3 < t->ne[3]; ++i3)
        for (int64_t i2 = 0; i2 < t->ne[2]; ++i2)
            for (int64_t i1 = 0; i1 < t->ne[1]; ++i1)
                for (int64_t i0 = 0; i0 < t->ne[0]; ++i0)
                    out.at(i0, i1, i2, i3) = decode_element(bytes.data() + element_offset(t, i0, i1, i2, i3), t->type);
    return out;
}

// Writes row-major values into t (contiguous), converted to t's type.
inline void write_tensor(ggml_tensor * t, const std::vector<double> & values) {
    GGML_ASSERT(ggml_is_contiguous(t) && static_cast<int64_t>(values.size()) == ggml_nelements(t));
    const size_t es = ggml_element_size(t);
    std::vector<uint8_t> bytes(values.size() * es);
    for (size_t i = 0; i < values.size(); ++i) encode_element(bytes.data() + i * es, t->type, values[i]);
    ggml_backend_tensor_set(t, bytes.data(), 0, bytes.size());
}

// ---- deterministic random numbers (splitmix64; the same on every platform) ----

class rng {
public:
    explicit rng(uint64_t seed) : state_(seed) {}
    uint64_t next() {
        uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
    }
    double uniform(double lo, double hi) { return lo + (hi - lo) * (static_cast<double>(next() >> 11) * 0x1.0p-53); }
    int64_t below(int64_t n) { return static_cast<int64_t>(next() % static_cast<uint64_t>(n)); }

private:
    uint64_t state_;
};

inline std::string shape_str(const int64_t * ne) {
    return "[" + std::to_string(ne[0]) + "," + std::to_string(ne[1]) + "," + std::to_string(ne[2]) + "," +
           std::to_string(ne[3]) + "]";
}

// "f16[7,3,2,1]", with " nc" for a non-contiguous tensor.
inline std::string tensor_str(const ggml_tensor * t) {
    std::string s = std::string(ggml_type_name(t->type)) + shape_str(t->ne);
    if (!ggml_is_contiguous(t)) s += ggml_is_transposed(t) ? " transposed" : ggml_is_permuted(t) ? " permuted" : " nc";
    return s;
}

}  // namespace bops
