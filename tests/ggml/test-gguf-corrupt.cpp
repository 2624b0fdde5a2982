// GGUF reader robustness: truncation at every byte, targeted corruptions (each error names the
// problem), random mutations. Never a crash, never a huge allocation.
#include "ggml/gguf.h"
#include "gguf-test-sample.h"
#include "testdata.h"

#include <gtest/gtest.h>

#include <random>

namespace {

constexpr uint32_t k_str = uint32_t(gguf_value_type::string);
constexpr uint32_t k_arr = uint32_t(gguf_value_type::array);
constexpr uint32_t k_u32 = uint32_t(gguf_value_type::uint32);

// Expects a parse error of the given status whose message contains every needle.
void expect_error(const std::vector<uint8_t> & b, gguf_status status, std::initializer_list<const char *> needles) {
    std::unique_ptr<gguf_file> f;
    gguf_result r = gguf_test_parse(b, &f);
    EXPECT_EQ(r.status, status) << r.message;
    EXPECT_EQ(f, nullptr);
    for (const char * n : needles) EXPECT_NE(r.message.find(n), std::string::npos) << "'" << n << "' not in: " << r.message;
}

// One F32 [16] tensor (64 bytes) per entry at the given data offsets, data section of data_bytes.
std::vector<uint8_t> f32_tensors(std::initializer_list<uint64_t> offsets, size_t data_bytes) {
    gguf_raw g(offsets.size(), 0);
    int i = 0;
    for (uint64_t off : offsets) {
        std::string name = "t";  // (not "t" + to_string: GCC 12 warns falsely, -Wrestrict)
        name += std::to_string(i++);
        g.tensor(name, {16}, GGML_TYPE_F32, off);
    }
    return g.pad(32).zeros(data_bytes).b;
}

}  // namespace

TEST(GgufTruncation, EveryPrefixOfASmallFileFails) {
    gguf_test_sample s;
    const std::vector<uint8_t> bytes = s.bytes();
    std::unique_ptr<gguf_file> full;
    ASSERT_TRUE(gguf_test_parse(bytes, &full));
    const gguf_tensor_info & last = full->tensors().back();
    const size_t end = full->data_offset() + last.offset + last.size;
    ASSERT_EQ(end, bytes.size());  // the sample ends with its last tensor
    size_t first_header_ok = SIZE_MAX;
    for (size_t n = 0; n < bytes.size(); ++n) {
        std::vector<uint8_t> prefix(bytes.begin(), bytes.begin() + ptrdiff_t(n));
        std::unique_ptr<gguf_file> f;
        gguf_result r = gguf_test_parse(prefix, &f);
        ASSERT_EQ(r.status, GGUF_ERROR_FORMAT) << "prefix of " << n << " bytes: " << r.message;
        ASSERT_FALSE(r.message.empty());
        ASSERT_EQ(f, nullptr);
        // Header-only parsing of the same prefix, told the real file size, fails exactly while
        // the header is incomplete.
        gguf_parse_options ho;
        ho.with_tensor_data = false;
        ho.file_size = bytes.size();
        r = gguf_file::parse(prefix.data(), prefix.size(), ho, &f);
        if (r && first_header_ok == SIZE_MAX) first_header_ok = n;
        ASSERT_EQ(bool(r), first_header_ok != SIZE_MAX) << "prefix of " << n << " bytes: " << r.message;
        if (r) {
            EXPECT_EQ(f->tensor_data(f->tensor(0)), nullptr);
        }
    }
    // The header ends in the last alignment step before the data section.
    EXPECT_LE(first_header_ok, full->data_offset());
    EXPECT_GT(first_header_ok + full->alignment(), full->data_offset());
}

TEST(GgufTruncation, EveryPrefixOfARealHeaderFails) {
    INFERD_REQUIRE_TESTDATA(dir);
    const std::vector<uint8_t> bytes = gguf_test_read_file(dir + "/models/stories260K-f32.gguf");
    std::unique_ptr<gguf_file> full;
    ASSERT_TRUE(gguf_test_parse(bytes, &full));
    const size_t header = full->data_offset();
    ASSERT_LT(header, size_t(64 * 1024));
    for (size_t n = 0; n <= header; ++n) {
        gguf_result r = gguf_file::parse(bytes.data(), n, gguf_parse_options{}, &full);
        ASSERT_EQ(r.status, GGUF_ERROR_FORMAT) << n;
    }
    // Cut inside the data: the error names the tensor that no longer fits.
    gguf_result r = gguf_file::parse(bytes.data(), bytes.size() - 1, gguf_parse_options{}, &full);
    EXPECT_EQ(r.status, GGUF_ERROR_FORMAT);
    EXPECT_NE(r.message.find("extends beyond the end of the file"), std::string::npos) << r.message;
    EXPECT_NE(r.message.find("tensor '"), std::string::npos) << r.message;
}

TEST(GgufCorrupt, PreambleProblems) {
    expect_error({}, GGUF_ERROR_FORMAT, {"truncated", "magic"});
    std::vector<uint8_t> b = gguf_raw().b;
    b[0] = 'X';
    expect_error(b, GGUF_ERROR_FORMAT, {"not a GGUF file", "0x58475546"});
    expect_error(gguf_raw(0, 0, 1).b, GGUF_ERROR_UNSUPPORTED, {"version 1"});
    expect_error(gguf_raw(0, 0, 7).b, GGUF_ERROR_UNSUPPORTED, {"version 7"});
    expect_error(gguf_raw(0, 0, 0x03000000u).b, GGUF_ERROR_UNSUPPORTED, {"big-endian"});
    expect_error(gguf_raw(uint64_t(1) << 62, 0).b, GGUF_ERROR_FORMAT, {"tensor count 4611686018427387904", "cannot fit"});
    expect_error(gguf_raw(0, uint64_t(1) << 62).b, GGUF_ERROR_FORMAT, {"key/value count", "cannot fit"});
    expect_error(gguf_raw(0, 1).b, GGUF_ERROR_FORMAT, {"cannot fit"});
    std::unique_ptr<gguf_file> f;
    ASSERT_TRUE(gguf_test_parse(gguf_raw(0, 0).b, &f));  // an empty but valid file
    EXPECT_EQ(f->n_tensors(), 0u);
}

TEST(GgufCorrupt, MetadataProblems) {
    expect_error(gguf_raw(0, 1).u64(uint64_t(1) << 62).zeros(16).b, GGUF_ERROR_FORMAT,
                 {"key of key/value 0", "string length 4611686018427387904", "exceeds"});
    expect_error(gguf_raw(0, 1).str("k").u32(k_str).u64(~0ull).zeros(8).b, GGUF_ERROR_FORMAT,
                 {"key 'k'", "string length 18446744073709551615"});
    expect_error(gguf_raw(0, 1).str("k").u32(13).zeros(8).b, GGUF_ERROR_FORMAT, {"key 'k'", "unknown value type id 13"});
    expect_error(gguf_raw(0, 1).str("a").u32(k_arr).u32(99).u64(1).zeros(8).b, GGUF_ERROR_FORMAT,
                 {"key 'a'", "unknown value type id 99"});
    expect_error(gguf_raw(0, 1).str("a").u32(k_arr).u32(k_u32).u64(uint64_t(1) << 61).zeros(64).b, GGUF_ERROR_FORMAT,
                 {"key 'a'", "count 2305843009213693952", "cannot fit"});
    expect_error(gguf_raw(0, 1).str("a").u32(k_arr).u32(k_str).u64(uint64_t(1) << 60).zeros(64).b, GGUF_ERROR_FORMAT,
                 {"key 'a' string array", "cannot fit"});
    expect_error(gguf_raw(0, 1).str("a").u32(k_arr).u32(k_arr).u64(uint64_t(1) << 60).zeros(64).b, GGUF_ERROR_FORMAT,
                 {"key 'a' array of arrays", "cannot fit"});
    // A string element that runs past the end, deep inside an array.
    expect_error(gguf_raw(0, 1).str("a").u32(k_arr).u32(k_str).u64(2).str("ok").u64(1000).zeros(10).b, GGUF_ERROR_FORMAT,
                 {"key 'a' string", "element 1 of 2"});
    // Arrays nested one level deeper than the limit.
    gguf_raw deep(0, 1);
    deep.str("deep").u32(k_arr);
    for (int d = 0; d < GGUF_MAX_ARRAY_DEPTH; ++d) deep.u32(k_arr).u64(1);
    deep.u32(k_u32).u64(0);
    expect_error(deep.b, GGUF_ERROR_FORMAT, {"key 'deep'", "nested deeper than 16"});
    // Exactly at the limit it reads.
    gguf_raw ok(0, 1);
    ok.str("deep").u32(k_arr);
    for (int d = 0; d < GGUF_MAX_ARRAY_DEPTH - 1; ++d) ok.u32(k_arr).u64(1);
    ok.u32(k_u32).u64(0);
    std::unique_ptr<gguf_file> f;
    gguf_result r = gguf_test_parse(ok.b, &f);
    EXPECT_TRUE(r) << r.message;

    expect_error(gguf_raw(0, 2).kv_u32("dup", 1).kv_u32("dup", 2).b, GGUF_ERROR_FORMAT, {"duplicate key 'dup'", "key/value 1"});
}

TEST(GgufCorrupt, AlignmentProblems) {
    expect_error(gguf_raw(0, 1).kv_u32(GGUF_KEY_GENERAL_ALIGNMENT, 48).b, GGUF_ERROR_FORMAT, {"general.alignment = 48", "power of two"});
    expect_error(gguf_raw(0, 1).kv_u32(GGUF_KEY_GENERAL_ALIGNMENT, 0).b, GGUF_ERROR_FORMAT, {"general.alignment = 0"});
    expect_error(gguf_raw(0, 1).str(GGUF_KEY_GENERAL_ALIGNMENT).u32(k_str).str("32").b, GGUF_ERROR_FORMAT,
                 {"general.alignment", "str", "expected an unsigned integer"});
    // A valid unusual alignment is honoured.
    std::vector<uint8_t> b = gguf_raw(1, 1).kv_u32(GGUF_KEY_GENERAL_ALIGNMENT, 64).tensor("t", {16}, GGML_TYPE_F32, 0).pad(64).zeros(64).b;
    std::unique_ptr<gguf_file> f;
    gguf_result r = gguf_test_parse(b, &f);
    ASSERT_TRUE(r) << r.message;
    EXPECT_EQ(f->alignment(), 64u);
    EXPECT_EQ(f->data_offset() % 64, 0u);
}

TEST(GgufCorrupt, TensorInfoProblems) {
    auto one = [](std::vector<uint64_t> ne, uint32_t type, uint64_t offset = 0) {
        return gguf_raw(1, 0).tensor("w", std::move(ne), type, offset).pad(32).zeros(256).b;
    };
    expect_error(one({16, 1, 1, 1, 1}, GGML_TYPE_F32), GGUF_ERROR_FORMAT, {"tensor 0 'w'", "n_dims = 5", "at most 4"});
    expect_error(one({16}, 4), GGUF_ERROR_FORMAT, {"tensor 0 'w'", "unknown tensor type id 4"});
    expect_error(one({16}, 0xffffffffu), GGUF_ERROR_FORMAT, {"unknown tensor type id 4294967295"});
    expect_error(one({uint64_t(1) << 63}, GGML_TYPE_F32), GGUF_ERROR_FORMAT, {"ne[0] = 9223372036854775808", "INT64_MAX"});
    const uint64_t big = uint64_t(1) << 20;
    expect_error(one({big, big, big, big}, GGML_TYPE_F32), GGUF_ERROR_FORMAT, {"tensor 0 'w'", "overflows"});
    expect_error(one({uint64_t(1) << 62, 4}, GGML_TYPE_F64), GGUF_ERROR_FORMAT, {"overflows"});
    expect_error(one({33}, GGML_TYPE_Q4_0), GGUF_ERROR_FORMAT, {"ne[0] = 33", "block size 32", "q4_0"});
    expect_error(one({128}, GGML_TYPE_Q4_K), GGUF_ERROR_FORMAT, {"block size 256"});
    expect_error(gguf_raw(1, 0).tensor(std::string(64, 'n'), {16}, GGML_TYPE_F32, 0).pad(32).zeros(64).b,
                 GGUF_ERROR_FORMAT, {"64 bytes long", "at most 63"});
    expect_error(gguf_raw(2, 0).tensor("w", {16}, GGML_TYPE_F32, 0).tensor("w", {16}, GGML_TYPE_F32, 64).pad(32).zeros(128).b,
                 GGUF_ERROR_FORMAT, {"duplicate tensor name 'w'", "tensor 1"});
    // Valid: a scalar-like 0-dim tensor and an empty one.
    std::unique_ptr<gguf_file> f;
    gguf_result r = gguf_test_parse(one({}, GGML_TYPE_F32), &f);
    ASSERT_TRUE(r) << r.message;
    EXPECT_EQ(f->tensor(0).n_elements, 1);
    r = gguf_test_parse(one({0, 5}, GGML_TYPE_F32), &f);
    ASSERT_TRUE(r) << r.message;
    EXPECT_EQ(f->tensor(0).size, 0u);
}

TEST(GgufCorrupt, TensorDataPlacementProblems) {
    std::unique_ptr<gguf_file> f;
    ASSERT_TRUE(gguf_test_parse(f32_tensors({0, 64}, 128), &f));
    expect_error(f32_tensors({8}, 128), GGUF_ERROR_FORMAT, {"tensor 't0'", "data offset 8", "alignment 32"});
    expect_error(f32_tensors({0, 32}, 128), GGUF_ERROR_FORMAT, {"'t0'", "'t1'", "overlap"});
    expect_error(f32_tensors({64, 0, 32}, 192), GGUF_ERROR_FORMAT, {"overlap"});
    expect_error(f32_tensors({1024}, 64), GGUF_ERROR_FORMAT, {"tensor 't0'", "extends beyond the end of the file"});
    expect_error(f32_tensors({0}, 63), GGUF_ERROR_FORMAT, {"tensor 't0'", "extends beyond"});
    expect_error(f32_tensors({~0ull - 31}, 64), GGUF_ERROR_FORMAT, {"extends beyond"});
    // Tensors but no data section at all (the file ends inside the header padding).
    expect_error(gguf_raw(1, 0).tensor("t", {16}, GGML_TYPE_F32, 0).b, GGUF_ERROR_FORMAT, {"data section starts at offset"});
}

TEST(GgufCorrupt, RandomMutationsNeverCrash) {
    gguf_test_sample s;
    const std::vector<uint8_t> bytes = s.bytes();
    std::mt19937 rng(1234);
    int n_ok = 0;
    for (int iter = 0; iter < 3000; ++iter) {
        std::vector<uint8_t> b = bytes;
        const int n_mut = 1 + int(rng() % 4);
        for (int m = 0; m < n_mut; ++m) {
            const size_t at = rng() % b.size();
            switch (rng() % 4) {
                case 0: b[at] ^= uint8_t(1u << (rng() % 8)); break;
                case 1: b[at] = uint8_t(rng()); break;
                case 2: b[at] = 0xff; break;
                default: b.resize(at); break;
            }
            if (b.empty()) break;
        }
        std::unique_ptr<gguf_file> f;
        gguf_result r = gguf_test_parse(b, &f);
        if (r) {
            ++n_ok;
            for (const gguf_tensor_info & t : f->tensors()) {
                ASSERT_LE(f->data_offset() + t.offset + t.size, b.size());
            }
        } else {
            ASSERT_FALSE(r.message.empty());
        }
    }
    EXPECT_LT(n_ok, 3000);  // most mutations are caught
}
