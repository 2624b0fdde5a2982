// GGUF encoding: the bounds-checked cursor, metadata value (de)serialisation, tensor shape checks.
#include "gguf-impl.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>

std::string gguf_format_bytes(uint64_t n) {
    char buf[64];
    if (n < 10 * 1024) std::snprintf(buf, sizeof buf, "%" PRIu64 " bytes", n);
    else if (n < 10ull * 1024 * 1024) std::snprintf(buf, sizeof buf, "%.1f KiB", double(n) / 1024.0);
    else if (n < 10ull * 1024 * 1024 * 1024) std::snprintf(buf, sizeof buf, "%.1f MiB", double(n) / 1048576.0);
    else std::snprintf(buf, sizeof buf, "%.1f GiB", double(n) / 1073741824.0);
    return buf;
}

// ---- gguf_cursor ----

namespace {

std::string join(std::string_view what, std::string_view field) {
    std::string s(what);
    s += field;
    return s;
}

}  // namespace

gguf_result gguf_cursor::take(size_t n, const uint8_t ** p, std::string_view what, std::string_view field) {
    if (n > remaining()) {
        return gguf_result::error(GGUF_ERROR_FORMAT,
                                  "truncated file: " + join(what, field) + " at offset " + std::to_string(pos_) +
                                      " needs " + std::to_string(n) + " bytes, but only " +
                                      std::to_string(remaining()) + " remain (file size " +
                                      std::to_string(file_size_) + ")");
    }
    if (n > avail_ - pos_) {
        need_more_ = true;
        return gguf_result::error(GGUF_ERROR_FORMAT, join(what, field) + " at offset " + std::to_string(pos_) +
                                                         " lies beyond the " + std::to_string(avail_) +
                                                         " bytes read so far");
    }
    *p = data_ + pos_;
    pos_ += n;
    return gguf_result::ok();
}

gguf_result gguf_cursor::read_string(std::string * out, std::string_view what, std::string_view field) {
    const size_t at = pos_;
    uint64_t len = 0;
    if (gguf_result r = read(&len, join(what, field), " length"); !r) return r;
    if (len > remaining()) {
        return gguf_result::error(GGUF_ERROR_FORMAT, join(what, field) + ": string length " + std::to_string(len) +
                                                         " at offset " + std::to_string(at) + " exceeds the " +
                                                         std::to_string(remaining()) + " bytes left in the file");
    }
    const uint8_t * p = nullptr;
    if (gguf_result r = take(size_t(len), &p, what, field); !r) return r;
    out->assign(reinterpret_cast<const char *>(p), size_t(len));
    return gguf_result::ok();
}

gguf_result gguf_cursor::check_count(uint64_t count, size_t min_size, std::string_view what, std::string_view field) {
    if (count > remaining() / min_size) {
        return gguf_result::error(
            GGUF_ERROR_FORMAT, join(what, field) + ": count " + std::to_string(count) + " (read before offset " +
                                   std::to_string(pos_) + ") cannot fit: that many entries of at least " +
                                   std::to_string(min_size) + " bytes need more than the " +
                                   std::to_string(remaining()) + " bytes left in the file");
    }
    if (count > (avail_ - pos_) / min_size) {
        need_more_ = true;
        return gguf_result::error(GGUF_ERROR_FORMAT, join(what, field) + ": entries lie beyond the bytes read so far");
    }
    return gguf_result::ok();
}

// ---- values ----

namespace {

gguf_result read_type_id(gguf_cursor & c, gguf_value_type * out, std::string_view what, std::string_view field = {}) {
    const size_t at = c.pos();
    uint32_t id = 0;
    if (gguf_result r = c.read(&id, what, field); !r) {
        r.message += " (reading its value type id)";
        return r;
    }
    if (id >= GGUF_VALUE_TYPE_COUNT) {
        return gguf_result::error(GGUF_ERROR_FORMAT, join(what, field) + ": unknown value type id " + std::to_string(id) +
                                                         " at offset " + std::to_string(at) + " (valid ids are 0..12)");
    }
    *out = gguf_value_type(id);
    return gguf_result::ok();
}

// Reservation for a list whose count has been bounded by the file size: never more than a
// modest number up front, the rest grows with the entries actually read.
size_t initial_reserve(uint64_t count) { return size_t(std::min<uint64_t>(count, 4096)); }

gguf_result with_element(gguf_result r, uint64_t i, uint64_t n) {
    r.message += " (element " + std::to_string(i) + " of " + std::to_string(n) + ")";
    return r;
}

}  // namespace

gguf_result gguf_value_codec::read(gguf_cursor & c, gguf_value_type type, gguf_value * out,
                                   const std::string & what, int depth) {
    gguf_value v;
    v.type_ = type;
    if (type == gguf_value_type::string) {
        if (gguf_result r = c.read_string(&v.str_, what); !r) return r;
    } else if (type == gguf_value_type::array) {
        if (gguf_result r = read_array(c, &v, what, depth); !r) return r;
    } else {
        const size_t n = gguf_value_type_size(type);
        const uint8_t * p = nullptr;
        if (gguf_result r = c.take(n, &p, what, " value"); !r) return r;
        std::memcpy(&v.bits_, p, n);
    }
    *out = std::move(v);
    return gguf_result::ok();
}

gguf_result gguf_value_codec::read_typed(gguf_cursor & c, gguf_value * out, const std::string & what) {
    gguf_value_type type{};
    if (gguf_result r = read_type_id(c, &type, what); !r) return r;
    return read(c, type, out, what);
}

gguf_result gguf_value_codec::read_array(gguf_cursor & c, gguf_value * out, const std::string & what, int depth) {
    if (depth >= GGUF_MAX_ARRAY_DEPTH) {
        return gguf_result::error(GGUF_ERROR_FORMAT, what + ": arrays nested deeper than " +
                                                         std::to_string(GGUF_MAX_ARRAY_DEPTH) + " levels at offset " +
                                                         std::to_string(c.pos()));
    }
    gguf_value_type elem{};
    if (gguf_result r = read_type_id(c, &elem, what, " array element"); !r) return r;
    uint64_t n = 0;
    if (gguf_result r = c.read(&n, what, " array count"); !r) return r;
    out->arr_type_ = elem;
    const size_t es = gguf_value_type_size(elem);
    if (es != 0) {
        if (gguf_result r = c.check_count(n, es, what, " array"); !r) return r;
        const uint8_t * p = nullptr;
        if (gguf_result r = c.take(size_t(n) * es, &p, what, " array elements"); !r) return r;
        out->raw_.assign(p, p + size_t(n) * es);
    } else if (elem == gguf_value_type::string) {
        if (gguf_result r = c.check_count(n, sizeof(uint64_t), what, " string array"); !r) return r;
        out->strs_.reserve(initial_reserve(n));
        for (uint64_t i = 0; i < n; ++i) {
            out->strs_.emplace_back();
            if (gguf_result r = c.read_string(&out->strs_.back(), what, " string"); !r) return with_element(r, i, n);
        }
    } else {
        // Each inner array holds at least its element type id and its count.
        if (gguf_result r = c.check_count(n, sizeof(uint32_t) + sizeof(uint64_t), what, " array of arrays"); !r) {
            return r;
        }
        out->values_.reserve(initial_reserve(n));
        for (uint64_t i = 0; i < n; ++i) {
            gguf_value inner;
            inner.type_ = gguf_value_type::array;
            if (gguf_result r = read_array(c, &inner, what, depth + 1); !r) return with_element(r, i, n);
            out->values_.push_back(std::move(inner));
        }
    }
    return gguf_result::ok();
}

void gguf_value_codec::write(std::vector<uint8_t> & out, const gguf_value & v) {
    if (v.type_ == gguf_value_type::string) {
        gguf_append_string(out, v.str_);
    } else if (v.type_ == gguf_value_type::array) {
        gguf_append<uint32_t>(out, uint32_t(v.arr_type_));
        gguf_append<uint64_t>(out, v.array_size());
        if (v.arr_type_ == gguf_value_type::string) {
            for (const std::string & s : v.strs_) gguf_append_string(out, s);
        } else if (v.arr_type_ == gguf_value_type::array) {
            for (const gguf_value & e : v.values_) write(out, e);
        } else {
            out.insert(out.end(), v.raw_.begin(), v.raw_.end());
        }
    } else {
        const size_t n = gguf_value_type_size(v.type_);
        const auto * p = reinterpret_cast<const uint8_t *>(&v.bits_);
        out.insert(out.end(), p, p + n);
    }
}

int gguf_value_codec::depth(const gguf_value & v) {
    if (!v.is_array()) return 0;
    int deepest = 0;
    for (const gguf_value & e : v.values_) deepest = std::max(deepest, depth(e));
    return 1 + deepest;
}

// ---- tensor shapes ----

namespace {

std::string shape_string(uint32_t n_dims, const int64_t * ne) {
    std::string s = "[";
    for (uint32_t d = 0; d < n_dims; ++d) s += (d ? ", " : "") + std::to_string(ne[d]);
    return s + "]";
}

}  // namespace

gguf_result gguf_tensor_shape_check(ggml_type type, uint32_t n_dims, const int64_t * ne, int64_t * n_elements,
                                    size_t * size) {
    for (uint32_t d = 0; d < GGML_MAX_DIMS; ++d) {
        if (ne[d] < 0) {
            return gguf_result::error(GGUF_ERROR_FORMAT, "ne[" + std::to_string(d) + "] = " + std::to_string(ne[d]) +
                                                             " is negative");
        }
    }
    const int64_t blck = ggml_blck_size(type);
    const size_t type_size = ggml_type_size(type);
    if (blck <= 0 || type_size == 0) {
        return gguf_result::error(GGUF_ERROR_FORMAT, std::string("type ") + ggml_type_name(type) + " has no block geometry");
    }
    if (ne[0] % blck != 0) {
        return gguf_result::error(GGUF_ERROR_FORMAT, "row length ne[0] = " + std::to_string(ne[0]) +
                                                         " is not a multiple of the block size " + std::to_string(blck) +
                                                         " of type " + ggml_type_name(type));
    }
    const bool any_zero = ne[0] == 0 || ne[1] == 0 || ne[2] == 0 || ne[3] == 0;
    int64_t count = 1;
    uint64_t bytes = uint64_t(ne[0] / blck);
    if (!any_zero) {
        if (bytes > SIZE_MAX / type_size) {
            return gguf_result::error(GGUF_ERROR_FORMAT, "row size overflows: ne = " + shape_string(n_dims, ne));
        }
        bytes *= type_size;
        count = ne[0];
        for (int d = 1; d < GGML_MAX_DIMS; ++d) {
            if (count > INT64_MAX / ne[d] || bytes > SIZE_MAX / uint64_t(ne[d])) {
                return gguf_result::error(GGUF_ERROR_FORMAT, "element count or byte size overflows: ne = " +
                                                                 shape_string(n_dims, ne));
            }
            count *= ne[d];
            bytes *= uint64_t(ne[d]);
        }
    } else {
        count = 0;
        bytes = 0;
    }
    *n_elements = count;
    // bytes was checked for overflow above; ggml_row_size gives the same figure.
    *size = any_zero ? 0 : ggml_row_size(type, ne[0]) * size_t(ne[1] * ne[2] * ne[3]);
    return gguf_result::ok();
}
