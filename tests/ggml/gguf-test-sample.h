// Shared by the GGUF tests: a small file with every metadata value type (nested arrays included)
// and a few tensors, and a byte-level builder for hand-made (corrupted) headers.
#pragma once

#include "ggml/gguf.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

// Tensor bytes live here so that the writer's borrowed pointers stay valid.
struct gguf_test_sample {
    std::vector<float> a;      // f32 [3, 2]
    std::vector<uint16_t> b;   // f16 [5]
    std::vector<uint8_t> c;    // q8_0 [64, 2]: 4 blocks of 34 bytes
    std::vector<int32_t> d;    // i32 [2, 2, 2, 2]
    std::vector<float> e;      // f32 [8] (its size is a multiple of the alignment: no trailing padding)
    gguf_writer w;

    gguf_test_sample() {
        for (int i = 0; i < 6; ++i) a.push_back(0.5f * float(i) - 1.0f);
        for (int i = 0; i < 5; ++i) b.push_back(ggml_fp32_to_fp16(float(i) * 0.25f));
        for (int i = 0; i < 4 * 34; ++i) c.push_back(uint8_t(i * 7 + 3));
        for (int i = 0; i < 16; ++i) d.push_back(i * 1000 - 7000);
        for (int i = 0; i < 8; ++i) e.push_back(float(i));
        add_metadata(w.metadata());
        EXPECT_TRUE(w.add_tensor("a", GGML_TYPE_F32, {3, 2}, a.data()));
        EXPECT_TRUE(w.add_tensor("b", GGML_TYPE_F16, {5}, b.data()));
        EXPECT_TRUE(w.add_tensor("c", GGML_TYPE_Q8_0, {64, 2}, c.data()));
        EXPECT_TRUE(w.add_tensor("empty", GGML_TYPE_F32, {4, 0}, nullptr));
        EXPECT_TRUE(w.add_tensor("d", GGML_TYPE_I32, {2, 2, 2, 2}, d.data()));
        EXPECT_TRUE(w.add_tensor("e", GGML_TYPE_F32, {8}, e.data()));
    }

    static void add_metadata(gguf_metadata & md) {
        md.set("general.architecture", gguf_value::from_string("test"));
        md.set("v.u8", gguf_value::from_u8(200));
        md.set("v.i8", gguf_value::from_i8(-5));
        md.set("v.u16", gguf_value::from_u16(60000));
        md.set("v.i16", gguf_value::from_i16(-30000));
        md.set("v.u32", gguf_value::from_u32(4000000000u));
        md.set("v.i32", gguf_value::from_i32(-2000000000));
        md.set("v.u64", gguf_value::from_u64(0xfedcba9876543210ull));
        md.set("v.i64", gguf_value::from_i64(-(int64_t(1) << 60)));
        md.set("v.f32", gguf_value::from_f32(3.25f));
        md.set("v.f64", gguf_value::from_f64(-1e300));
        md.set("v.bool", gguf_value::from_bool(true));
        md.set("v.str", gguf_value::from_string("h\xc3\xa9llo\n\"world\""));
        md.set("v.str_empty", gguf_value::from_string(""));
        const int16_t i16s[] = {-1, 2, -3};
        md.set("a.i16", gguf_value::from_array(gguf_value_type::int16, i16s, 3));
        const uint64_t u64s[] = {0, ~0ull};
        md.set("a.u64", gguf_value::from_array(gguf_value_type::uint64, u64s, 2));
        const float f32s[] = {1.5f, -0.0f, std::numeric_limits<float>::quiet_NaN(), INFINITY};
        md.set("a.f32", gguf_value::from_array_f32(f32s));
        const bool bools[] = {true, false, true};
        md.set("a.bool", gguf_value::from_array_bool(bools));
        md.set("a.str", gguf_value::from_array_strings({"x", "", "longer string"}));
        md.set("a.empty", gguf_value::from_array_i32({}));
        const int32_t i32a[] = {1, 2, 3};
        const double f64a[] = {0.125};
        std::vector<gguf_value> inner = {gguf_value::from_array_i32(i32a), gguf_value::from_array_f64(f64a),
                                         gguf_value::from_array_strings({"p", "q"}),
                                         gguf_value::from_array_arrays({gguf_value::from_array_u8({})})};
        md.set("a.nested", gguf_value::from_array_arrays(inner));
        md.set("a.nested_empty", gguf_value::from_array_arrays({}));
    }

    std::vector<uint8_t> bytes() const {
        std::vector<uint8_t> out;
        gguf_result r = w.write_to_buffer(&out);
        EXPECT_TRUE(r) << r.message;
        return out;
    }
};

// Byte-level GGUF builder for hand-made headers.
struct gguf_raw {
    std::vector<uint8_t> b;

    explicit gguf_raw(uint64_t n_tensors = 0, uint64_t n_kv = 0, uint32_t version = 3) {
        b = {'G', 'G', 'U', 'F'};
        u32(version).u64(n_tensors).u64(n_kv);
    }
    gguf_raw & u32(uint32_t v) { return put(&v, 4); }
    gguf_raw & u64(uint64_t v) { return put(&v, 8); }
    gguf_raw & str(const std::string & s) { u64(s.size()); return put(s.data(), s.size()); }
    gguf_raw & put(const void * p, size_t n) {
        const auto * c = static_cast<const uint8_t *>(p);
        b.insert(b.end(), c, c + n);
        return *this;
    }
    // A key with a u32 value.
    gguf_raw & kv_u32(const std::string & key, uint32_t v) { return str(key).u32(uint32_t(gguf_value_type::uint32)).u32(v); }
    // A tensor info.
    gguf_raw & tensor(const std::string & name, std::vector<uint64_t> ne, uint32_t type, uint64_t offset) {
        str(name).u32(uint32_t(ne.size()));
        for (uint64_t n : ne) u64(n);
        return u32(type).u64(offset);
    }
    gguf_raw & pad(size_t alignment) {
        while (b.size() % alignment) b.push_back(0);
        return *this;
    }
    gguf_raw & zeros(size_t n) {
        b.insert(b.end(), n, uint8_t(0));
        return *this;
    }
};

inline gguf_result gguf_test_parse(const std::vector<uint8_t> & b, std::unique_ptr<gguf_file> * out = nullptr) {
    std::unique_ptr<gguf_file> f;
    gguf_result r = gguf_file::parse(b.data(), b.size(), gguf_parse_options{}, &f);
    if (out) *out = std::move(f);
    return r;
}

inline std::vector<uint8_t> gguf_test_read_file(const std::string & path) {
    std::ifstream in(path, std::ios::binary);
    return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}
