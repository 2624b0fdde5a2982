// The sampler's row passes (maximum, masked exponential sums) on eight lanes through the
// compiler's vector extension; see sampling-math.h.
#include "sampling-math.h"

// The helpers below pass eight-lane vectors by value; they are always inlined, so the ABI note
// about AVX vectors without AVX enabled does not concern them.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace {

typedef float sampling_v8f __attribute__((vector_size(32)));
typedef int32_t sampling_v8i __attribute__((vector_size(32)));

#define SAMPLING_INLINE inline __attribute__((always_inline))

SAMPLING_INLINE sampling_v8f sampling_load8(const float * p) {
    sampling_v8f v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

SAMPLING_INLINE sampling_v8i sampling_finite8(const sampling_v8f & x) { return (x >= -FLT_MAX) & (x <= FLT_MAX); }

// sampling_exp on eight lanes, the same operations in the same order, for lanes in [-inf, 0]
// (the callers subtract the row maximum; at or below 0, the upper clamp never applies).
SAMPLING_INLINE sampling_v8f sampling_exp8(const sampling_v8f & arg) {
    sampling_v8f x = arg;
    const sampling_v8f lo = sampling_v8f{} - 87.0f;
    x = x < lo ? lo : x;
    const float shifter = 12582912.0f;
    const sampling_v8f n = (x * 1.44269504088896341f + shifter) - shifter;
    const sampling_v8f r = (x - n * 0.693359375f) + n * 2.12194440e-4f;
    sampling_v8f p = sampling_v8f{} + 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * r * r + r + 1.0f;
    const sampling_v8i bits = (__builtin_convertvector(n, sampling_v8i) + 127) << 23;
    return p * reinterpret_cast<sampling_v8f>(bits);
}

}  // namespace

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__)
#define SAMPLING_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define SAMPLING_CLONES
#endif

SAMPLING_CLONES float sampling_row_max(const float * row, int32_t n) {
    const sampling_v8f ninf = sampling_v8f{} - INFINITY;
    sampling_v8f acc = ninf;
    int32_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const sampling_v8f l = sampling_load8(row + i);
        const sampling_v8f v = sampling_finite8(l) ? l : ninf;
        acc = v > acc ? v : acc;
    }
    float m = -INFINITY;
    for (; i < n; ++i)
        if (sampling_finite(row[i]) && row[i] > m) m = row[i];
    for (int j = 0; j < 8; ++j) m = acc[j] > m ? acc[j] : m;
    return m;
}

SAMPLING_CLONES double sampling_row_exp_sum(const float * row, int32_t n, float m, float scale, float floor) {
    const sampling_v8f zero = {}, low = zero - 87.0f;
    double total = 0.0;
    int32_t i = 0;
    while (i < n) {
        const int32_t block_end = n - i > 1024 ? i + 1024 : n;
        sampling_v8f acc = zero;
        for (; i + 8 <= block_end; i += 8) {
            const sampling_v8f l = sampling_load8(row + i);
            const sampling_v8i keep = sampling_finite8(l) & (l >= floor);
            const sampling_v8f e = sampling_exp8(keep ? (l - m) * scale : low);
            acc += keep ? e : zero;
        }
        for (; i < block_end; ++i) {
            const float l = row[i];
            if (sampling_finite(l) && l >= floor) total += sampling_exp((l - m) * scale);
        }
        for (int j = 0; j < 8; ++j) total += acc[j];
    }
    return total;
}

SAMPLING_CLONES double sampling_candidates_exp(sampling_candidate * c, size_t n, float m, float scale) {
    double total = 0.0;
    size_t i = 0;
    while (i < n) {
        const size_t block_end = n - i > 1024 ? i + 1024 : n;
        sampling_v8f acc = {};
        for (; i + 8 <= block_end; i += 8) {
            sampling_v8f l;
            for (int j = 0; j < 8; ++j) l[j] = c[i + size_t(j)].logit;
            const sampling_v8f e = sampling_exp8((l - m) * scale);
            for (int j = 0; j < 8; ++j) c[i + size_t(j)].p = e[j];
            acc += e;
        }
        for (; i < block_end; ++i) {
            c[i].p = sampling_exp((c[i].logit - m) * scale);
            total += c[i].p;
        }
        for (int j = 0; j < 8; ++j) total += acc[j];
    }
    return total;
}
