// Internals shared by the GGUF reader, loader and writer: a bounds-checked byte cursor and the
// encoding of metadata values.
#pragma once

#include "ggml/gguf.h"

#include <cstring>
#include <string>
#include <vector>

// Reads little-endian fields from bytes[0, avail) of a file of file_size bytes (avail <=
// file_size: the header-only loader reads a prefix and grows it when the parser needs more).
// Every read checks the bytes that remain first; a read past `avail` but within the file sets
// need_more() so the caller can retry with more bytes.
class gguf_cursor {
public:
    gguf_cursor(const uint8_t * data, size_t avail, size_t file_size)
        : data_(data), avail_(avail), file_size_(file_size) {}

    size_t pos() const { return pos_; }
    size_t file_size() const { return file_size_; }
    size_t remaining() const { return file_size_ - pos_; }  // bytes left in the file
    bool need_more() const { return need_more_; }

    // Each read names what it reads for the error message as what + field (two parts, so that
    // callers need not build a string per element; they are only joined on error).

    // Points *p at the next n bytes and advances.
    gguf_result take(size_t n, const uint8_t ** p, std::string_view what, std::string_view field = {});

    template <class T>
    gguf_result read(T * out, std::string_view what, std::string_view field = {}) {
        const uint8_t * p = nullptr;
        gguf_result r = take(sizeof(T), &p, what, field);
        if (r) std::memcpy(out, p, sizeof(T));
        return r;
    }

    // A u64 length and that many bytes.
    gguf_result read_string(std::string * out, std::string_view what, std::string_view field = {});

    // Checks that `count` elements of at least `min_size` bytes each can still fit in the file
    // (and in the bytes available), before anything is allocated for them.
    gguf_result check_count(uint64_t count, size_t min_size, std::string_view what, std::string_view field = {});

private:
    const uint8_t * data_;
    size_t avail_;
    size_t file_size_;
    size_t pos_ = 0;
    bool need_more_ = false;
};

// Encoding and decoding of metadata values (the friend of gguf_value).
class gguf_value_codec {
public:
    // Reads a value of type `type` at the cursor; `what` names it ("key 'x'") for errors;
    // depth counts the arrays around it.
    static gguf_result read(gguf_cursor & c, gguf_value_type type, gguf_value * out,
                            const std::string & what, int depth = 0);
    // Reads a u32 value type id (checked) and then the value.
    static gguf_result read_typed(gguf_cursor & c, gguf_value * out, const std::string & what);
    // Appends the value's encoding (without its type id).
    static void write(std::vector<uint8_t> & out, const gguf_value & v);
    // Deepest array nesting inside v (0 for a scalar, 1 for a flat array).
    static int depth(const gguf_value & v);

private:
    static gguf_result read_array(gguf_cursor & c, gguf_value * out, const std::string & what, int depth);
};

// Parses the header of a GGUF file held (at least up to the end of its header) in bytes[0, avail)
// into a gguf_file: metadata, alignment, tensor infos, data section placement, every tensor
// checked against file_size. *need_more is set when parsing failed only because avail < file_size
// cut the header short.
class gguf_parser {
public:
    static gguf_result parse(const uint8_t * data, size_t avail, size_t file_size, gguf_file * f, bool * need_more);

private:
    static gguf_result parse_preamble(gguf_cursor & c, gguf_file * f, uint64_t * n_tensors, uint64_t * n_kv);
    static gguf_result parse_kvs(gguf_cursor & c, gguf_file * f, uint64_t n_kv);
    static gguf_result resolve_alignment(gguf_file * f);
    static gguf_result parse_tensor_info(gguf_cursor & c, gguf_file * f, uint64_t i, gguf_tensor_info * info);
    static gguf_result place_tensors(gguf_file * f, size_t header_end);
};

// Little-endian appends for the writer.
template <class T>
inline void gguf_append(std::vector<uint8_t> & out, T v) {
    const size_t at = out.size();
    out.resize(at + sizeof(T));
    std::memcpy(out.data() + at, &v, sizeof(T));
}
inline void gguf_append_string(std::vector<uint8_t> & out, const std::string & s) {
    gguf_append<uint64_t>(out, s.size());
    out.insert(out.end(), s.begin(), s.end());
}

std::string gguf_format_bytes(uint64_t n);  // "123 bytes" / "4.2 MiB"

// Checks an ne[] / type combination: every ne >= 0, ne[0] a multiple of the block size, the
// element count and byte size free of overflow. Fills *n_elements and *size; the message names
// what is wrong (without the tensor's name: callers prefix it).
gguf_result gguf_tensor_shape_check(ggml_type type, uint32_t n_dims, const int64_t * ne,
                                    int64_t * n_elements, size_t * size);

// Round up to a power-of-two alignment; false on overflow.
inline bool gguf_align_up(uint64_t x, uint64_t alignment, uint64_t * out) {
    if (x > UINT64_MAX - (alignment - 1)) return false;
    *out = (x + alignment - 1) & ~(alignment - 1);
    return true;
}
