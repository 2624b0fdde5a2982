// ggml/gguf.h — GGUF files: reader (mmap or plain read, every size and offset checked) and
// writer (whole file, or header first and then tensor data streamed tensor by tensor).
//
// Usage (read):
//   std::unique_ptr<gguf_file> f;
//   gguf_result r = gguf_file::open("model.gguf", gguf_open_options{}, &f);
//   if (!r) { fprintf(stderr, "%s\n", r.message.c_str()); return 1; }     // names the problem
//   for (const std::string & w : f->warnings()) fprintf(stderr, "warning: %s\n", w.c_str());
//   std::string arch;
//   r = f->metadata().get_string("general.architecture", &arch);          // "llama"
//   const gguf_tensor_info * t = f->find_tensor("token_embd.weight");    // nullptr if absent
//   const void * bytes = f->tensor_data(*t);                              // t->size bytes
//
// Usage (write, streaming: one tensor in memory at a time):
//   gguf_writer w;
//   w.metadata() = f->metadata();                        // copy every key (or set them one by one)
//   w.metadata().set("general.file_type", gguf_value::from_u32(15));
//   w.add_tensor("output.weight", GGML_TYPE_Q6_K, {256, 4096});   // sizes known in advance
//   gguf_result r = w.stream_begin("out.gguf");                    // header + tensor infos
//   r = w.stream_tensor_data(bytes, size);                         // in add_tensor order
//   r = w.stream_end();                                            // checks every tensor came
//
// A gguf_file is immutable once opened: its const accessors may be used from any thread. A
// mapped file must not be truncated by another process while mapped (the OS would raise SIGBUS).
//
// Return codes: every fallible call returns a gguf_result, `status` == GGUF_OK on success,
// otherwise an error status and a message naming the problem (which field, at which byte
// offset, what was expected). Nothing throws across this API (except std::bad_alloc on a real
// out-of-memory). Sizes in the file never drive an allocation larger than the bytes that remain.
//
// Format (little-endian; versions 2 and 3, which share the layout; v1 and big-endian files are
// rejected): magic "GGUF", u32 version, u64 tensor count, u64 key/value count; key/value pairs
// (string key, u32 value type, value); tensor infos (string name, u32 n_dims, u64 ne[n_dims],
// u32 ggml_type, u64 offset relative to the data section); padding to `general.alignment`
// (default 32); the data section. Strings are a u64 byte length and the bytes (no terminator);
// arrays are a u32 element type, a u64 count and the elements (arrays of arrays allowed).
#pragma once

#include "ggml/ggml.h"  // GGML_MAX_DIMS, GGML_MAX_NAME
#include "ggml/types.h"

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#define GGUF_MAGIC "GGUF"
#define GGUF_VERSION 3
#define GGUF_DEFAULT_ALIGNMENT 32
#define GGUF_KEY_GENERAL_ALIGNMENT "general.alignment"
#define GGUF_MAX_ARRAY_DEPTH 16  // arrays of arrays nested deeper than this are rejected

enum gguf_status {
    GGUF_OK = 0,
    GGUF_ERROR_IO,           // the file cannot be opened, read, mapped or written
    GGUF_ERROR_FORMAT,       // not a GGUF file, or truncated / corrupted / inconsistent content
    GGUF_ERROR_UNSUPPORTED,  // a GGUF file this reader does not handle (v1, big-endian)
    GGUF_ERROR_NOT_FOUND,    // no such key or tensor
    GGUF_ERROR_TYPE,         // the key exists with another value type
    GGUF_ERROR_INVALID_ARG,  // bad argument from the caller (writer: bad shape, duplicate name, …)
};
const char * gguf_status_to_string(gguf_status status);

struct gguf_result {
    gguf_status status = GGUF_OK;
    std::string message;  // empty on success

    explicit operator bool() const { return status == GGUF_OK; }
    static gguf_result ok() { return {}; }
    static gguf_result error(gguf_status s, std::string msg) { return {s, std::move(msg)}; }
};

// Value type ids as stored in the file.
enum class gguf_value_type : uint32_t {
    uint8 = 0, int8 = 1, uint16 = 2, int16 = 3, uint32 = 4, int32 = 5, float32 = 6,
    boolean = 7, string = 8, array = 9, uint64 = 10, int64 = 11, float64 = 12,
};
constexpr uint32_t GGUF_VALUE_TYPE_COUNT = 13;

const char * gguf_value_type_name(gguf_value_type t);  // "u8", "i32", "f32", "bool", "str", "arr", …
// Bytes of one element of a fixed-size type (0 for string and array).
size_t gguf_value_type_size(gguf_value_type t);
bool gguf_value_type_is_integer(gguf_value_type t);

// One metadata value: a scalar, a string, or an array (of scalars, of strings, or of arrays,
// each inner array with its own element type). Copyable; == compares bit for bit.
class gguf_value {
public:
    gguf_value() = default;  // u8 0

    static gguf_value from_u8(uint8_t v);
    static gguf_value from_i8(int8_t v);
    static gguf_value from_u16(uint16_t v);
    static gguf_value from_i16(int16_t v);
    static gguf_value from_u32(uint32_t v);
    static gguf_value from_i32(int32_t v);
    static gguf_value from_u64(uint64_t v);
    static gguf_value from_i64(int64_t v);
    static gguf_value from_f32(float v);
    static gguf_value from_f64(double v);
    static gguf_value from_bool(bool v);
    static gguf_value from_string(std::string v);
    // Arrays of fixed-size elements; `data` holds n elements of that type in host (little-endian)
    // order. elem must not be string or array (use the functions below).
    static gguf_value from_array(gguf_value_type elem, const void * data, size_t n);
    static gguf_value from_array_u8(std::span<const uint8_t> v);
    static gguf_value from_array_i32(std::span<const int32_t> v);
    static gguf_value from_array_u32(std::span<const uint32_t> v);
    static gguf_value from_array_i64(std::span<const int64_t> v);
    static gguf_value from_array_f32(std::span<const float> v);
    static gguf_value from_array_f64(std::span<const double> v);
    static gguf_value from_array_bool(std::span<const bool> v);
    static gguf_value from_array_strings(std::vector<std::string> v);
    // An array of arrays: every element must itself be an array value.
    static gguf_value from_array_arrays(std::vector<gguf_value> v);

    gguf_value_type type() const { return type_; }
    bool is_array() const { return type_ == gguf_value_type::array; }

    // Scalars. Each returns false (and leaves *out alone) when the value is not of a fitting type:
    // get_int accepts every integer type whose value fits int64_t, get_uint every integer type
    // whose value is >= 0, get_float f32 and f64.
    bool get_int(int64_t * out) const;
    bool get_uint(uint64_t * out) const;
    bool get_float(double * out) const;
    bool get_bool(bool * out) const;
    const std::string * get_string() const;  // nullptr unless a string

    // Arrays (all 0 / empty / false for a non-array).
    gguf_value_type array_type() const { return arr_type_; }
    size_t array_size() const;
    bool array_get_int(size_t i, int64_t * out) const;   // integer arrays; i < array_size()
    bool array_get_uint(size_t i, uint64_t * out) const;
    bool array_get_float(size_t i, double * out) const;  // f32 / f64 arrays
    bool array_get_bool(size_t i, bool * out) const;
    // The packed elements of a fixed-size array (array_size() * gguf_value_type_size(array_type())
    // bytes, host order); nullptr for string / array arrays.
    const void * array_data() const;
    const std::vector<std::string> & array_strings() const;  // string arrays (else empty)
    const std::vector<gguf_value> & array_values() const;    // arrays of arrays (else empty)
    // Whole-array conversions; false when the element type does not fit (or a value overflows).
    bool array_to_i64(std::vector<int64_t> * out) const;    // any integer type
    bool array_to_f32(std::vector<float> * out) const;      // f32 / f64

    // Short human-readable rendering ("llama", 32, [1, 2, 3, ... (4096)]), for tools and errors.
    std::string to_string(size_t max_array_elems = 8) const;

    bool operator==(const gguf_value & o) const;

private:
    gguf_value_type type_ = gguf_value_type::uint8;
    gguf_value_type arr_type_ = gguf_value_type::uint8;  // arrays: element type
    uint64_t bits_ = 0;                                  // scalars: raw bits, zero-extended
    std::string str_;
    std::vector<uint8_t> raw_;           // fixed-size array elements
    std::vector<std::string> strs_;      // string array elements
    std::vector<gguf_value> values_;     // array-of-arrays elements

    friend class gguf_value_codec;       // the file parser / serializer (gguf-value.cpp)
};

struct gguf_kv {
    std::string key;
    gguf_value value;
};

// Ordered key/value metadata with lookup by key. Keys are unique.
class gguf_metadata {
public:
    size_t size() const { return kvs_.size(); }
    const gguf_kv & at(size_t i) const { return kvs_[i]; }
    const std::vector<gguf_kv> & kvs() const { return kvs_; }

    const gguf_value * find(std::string_view key) const;  // nullptr when absent
    bool contains(std::string_view key) const { return find(key) != nullptr; }
    // Replaces the value of an existing key in place (order kept), appends a new key otherwise.
    void set(std::string_view key, gguf_value value);
    bool remove(std::string_view key);  // false when absent
    void clear();

    // Typed getters: GGUF_ERROR_NOT_FOUND when absent, GGUF_ERROR_TYPE (message names the stored
    // type) when the value does not fit; *out untouched on error.
    gguf_result get_string(std::string_view key, std::string * out) const;
    gguf_result get_int(std::string_view key, int64_t * out) const;     // any integer width
    gguf_result get_uint(std::string_view key, uint64_t * out) const;   // any integer width, >= 0
    gguf_result get_float(std::string_view key, double * out) const;    // f32 or f64
    gguf_result get_bool(std::string_view key, bool * out) const;
    gguf_result get_array(std::string_view key, const gguf_value ** out) const;  // arrays only
    gguf_result get_array_size(std::string_view key, size_t * out) const;

private:
    std::vector<gguf_kv> kvs_;
    std::unordered_map<std::string, size_t> index_;  // key -> position in kvs_
};

struct gguf_tensor_info {
    std::string name;
    ggml_type type = GGML_TYPE_F32;
    uint32_t n_dims = 0;
    int64_t ne[GGML_MAX_DIMS] = {1, 1, 1, 1};  // 1 beyond n_dims
    uint64_t offset = 0;      // in the data section (a multiple of the alignment)
    size_t size = 0;          // bytes: ggml_row_size(type, ne[0]) * ne[1] * ne[2] * ne[3]
    int64_t n_elements = 0;

    int64_t n_rows() const { return ne[1] * ne[2] * ne[3]; }
};

enum class gguf_load_mode {
    mmap,  // map the file read-only (MAP_PRIVATE); falls back to plain reads when mmap fails
    read,  // read the file (or only its header) into memory
};

struct gguf_open_options {
    gguf_load_mode mode = gguf_load_mode::mmap;
    bool load_tensor_data = true;  // false: parse the header only; tensor_data() returns nullptr
    bool populate = false;         // mmap: MAP_POPULATE (pre-fault every page at open)
    bool will_need = false;        // mmap: madvise(MADV_WILLNEED) on the data section
    bool mlock = false;            // lock the file's bytes in RAM (the mapping, or the buffer read);
                                   // a refusal (RLIMIT_MEMLOCK) is a warning
};

struct gguf_parse_options {
    // true: the bytes must hold the whole file (tensor data included), and tensor_data() points
    // into them. false: they may end after the header; tensors are then checked against
    // file_size (which must be given), and tensor_data() returns nullptr.
    bool with_tensor_data = true;
    size_t file_size = 0;          // only with with_tensor_data == false (0: the buffer size)
};

// A parsed GGUF file and (optionally) its bytes.
class gguf_file {
public:
    // Opens and parses a file. *out is set only on success.
    static gguf_result open(const std::string & path, const gguf_open_options & opts,
                            std::unique_ptr<gguf_file> * out);
    // Parses bytes in memory. The bytes are borrowed: they must outlive the gguf_file when
    // tensor data is used (tensor_data points into them); metadata and infos are copied.
    static gguf_result parse(const void * data, size_t size, const gguf_parse_options & opts,
                             std::unique_ptr<gguf_file> * out);

    ~gguf_file();
    gguf_file(const gguf_file &) = delete;
    gguf_file & operator=(const gguf_file &) = delete;

    uint32_t version() const { return version_; }
    size_t alignment() const { return alignment_; }
    size_t file_size() const { return file_size_; }
    // Start of the data section: the end of the header rounded up to the alignment (for a file
    // without tensors it may lie past the end of the file, which then ends with its header).
    size_t data_offset() const { return data_offset_; }
    bool is_mmapped() const { return map_addr_ != nullptr; }
    bool has_tensor_data() const { return data_ != nullptr || n_tensors() == 0; }

    const gguf_metadata & metadata() const { return metadata_; }

    size_t n_tensors() const { return tensors_.size(); }
    const gguf_tensor_info & tensor(size_t i) const { return tensors_[i]; }
    const std::vector<gguf_tensor_info> & tensors() const { return tensors_; }
    const gguf_tensor_info * find_tensor(std::string_view name) const;  // nullptr when absent
    // Start of the tensor's bytes (info.size of them), nullptr without tensor data.
    const void * tensor_data(const gguf_tensor_info & info) const;

    // Non-fatal problems met while opening (mlock refused, mmap fell back to reads, …).
    const std::vector<std::string> & warnings() const { return warnings_; }

private:
    gguf_file() = default;
    friend class gguf_parser;
    friend class gguf_loader;

    uint32_t version_ = 0;
    size_t alignment_ = GGUF_DEFAULT_ALIGNMENT;
    size_t file_size_ = 0;
    size_t data_offset_ = 0;
    gguf_metadata metadata_;
    std::vector<gguf_tensor_info> tensors_;
    std::unordered_map<std::string, size_t> tensor_index_;
    std::vector<std::string> warnings_;

    const uint8_t * data_ = nullptr;       // the whole file's bytes (mapped, read, or borrowed)
    void * map_addr_ = nullptr;            // mmap
    size_t map_size_ = 0;
    bool map_locked_ = false;              // the whole file's bytes (mapped or read) are mlocked
    std::unique_ptr<uint8_t[], void (*)(void *)> owned_{nullptr, nullptr};  // plain read
};

// Builds a v3 GGUF file: metadata, tensor infos, then data, every tensor aligned and padded.
class gguf_writer {
public:
    gguf_writer();
    ~gguf_writer();
    gguf_writer(const gguf_writer &) = delete;
    gguf_writer & operator=(const gguf_writer &) = delete;

    gguf_metadata & metadata() { return metadata_; }
    const gguf_metadata & metadata() const { return metadata_; }

    // Sets general.alignment (u32); a power of two, else GGUF_ERROR_INVALID_ARG. Without it the
    // file uses 32. Setting the key directly works too (checked when the header is built).
    gguf_result set_alignment(uint32_t alignment);
    size_t alignment() const;  // from general.alignment, or 32

    // Declares the next tensor: name unique and at most GGML_MAX_NAME - 1 bytes, 1..4 dims
    // (ne.size()), every ne >= 0, ne[0] a multiple of the type's block size. `data`, when given,
    // is borrowed (must stay valid until write_file / stream_tensor_data has used it) and is
    // what write_file writes; streaming ignores it.
    gguf_result add_tensor(std::string_view name, ggml_type type, std::span<const int64_t> ne,
                           const void * data = nullptr);
    gguf_result add_tensor(std::string_view name, ggml_type type, std::initializer_list<int64_t> ne,
                           const void * data = nullptr) {
        return add_tensor(name, type, std::span<const int64_t>(ne.begin(), ne.size()), data);
    }
    // Same shape, type and data pointer as an info read from a file (its offset is recomputed).
    gguf_result add_tensor(const gguf_tensor_info & info, const void * data = nullptr);
    size_t n_tensors() const;
    const gguf_tensor_info & tensor(size_t i) const;  // offset = where it will be written

    // The header (magic … tensor infos … padding up to the data section) as bytes.
    gguf_result build_header(std::vector<uint8_t> * out) const;
    // The whole file in memory (every tensor needs data).
    gguf_result write_to_buffer(std::vector<uint8_t> * out) const;
    // The whole file on disk (every tensor needs data).
    gguf_result write_file(const std::string & path) const;

    // Streaming: stream_begin writes the header; then stream_tensor_data once per tensor, in
    // add_tensor order, with exactly that tensor's size; stream_end pads, flushes and closes
    // (GGUF_ERROR_INVALID_ARG if tensors are missing). Metadata and tensors must not change
    // between stream_begin and stream_end. Destroying the writer mid-stream closes the file.
    gguf_result stream_begin(const std::string & path);
    gguf_result stream_tensor_data(const void * data, size_t size);
    gguf_result stream_end();
    size_t stream_next_tensor() const;  // index of the tensor stream_tensor_data expects next

private:
    struct stream_state;
    gguf_metadata metadata_;
    std::vector<gguf_tensor_info> tensors_;
    std::vector<const void *> tensor_data_;
    std::unordered_map<std::string, size_t> tensor_index_;
    std::unique_ptr<stream_state> stream_;
};
