// GGUF metadata values and the ordered key/value list.
#include "gguf-impl.h"

#include <bit>
#include <cinttypes>
#include <cstdio>

static_assert(std::endian::native == std::endian::little, "the GGUF code assumes a little-endian host");

const char * gguf_status_to_string(gguf_status status) {
    switch (status) {
        case GGUF_OK: return "ok";
        case GGUF_ERROR_IO: return "i/o error";
        case GGUF_ERROR_FORMAT: return "invalid GGUF file";
        case GGUF_ERROR_UNSUPPORTED: return "unsupported GGUF file";
        case GGUF_ERROR_NOT_FOUND: return "not found";
        case GGUF_ERROR_TYPE: return "type mismatch";
        case GGUF_ERROR_INVALID_ARG: return "invalid argument";
    }
    return "unknown status";
}

const char * gguf_value_type_name(gguf_value_type t) {
    static const char * const names[GGUF_VALUE_TYPE_COUNT] = {
        "u8", "i8", "u16", "i16", "u32", "i32", "f32", "bool", "str", "arr", "u64", "i64", "f64"};
    const uint32_t i = uint32_t(t);
    return i < GGUF_VALUE_TYPE_COUNT ? names[i] : "invalid";
}

size_t gguf_value_type_size(gguf_value_type t) {
    switch (t) {
        case gguf_value_type::uint8: case gguf_value_type::int8: case gguf_value_type::boolean: return 1;
        case gguf_value_type::uint16: case gguf_value_type::int16: return 2;
        case gguf_value_type::uint32: case gguf_value_type::int32: case gguf_value_type::float32: return 4;
        case gguf_value_type::uint64: case gguf_value_type::int64: case gguf_value_type::float64: return 8;
        case gguf_value_type::string: case gguf_value_type::array: return 0;
    }
    return 0;
}

bool gguf_value_type_is_integer(gguf_value_type t) {
    switch (t) {
        case gguf_value_type::uint8: case gguf_value_type::int8: case gguf_value_type::uint16:
        case gguf_value_type::int16: case gguf_value_type::uint32: case gguf_value_type::int32:
        case gguf_value_type::uint64: case gguf_value_type::int64: return true;
        default: return false;
    }
}

namespace {

template <class T>
T load(const uint8_t * p) {
    T v;
    std::memcpy(&v, p, sizeof(T));
    return v;
}

// Decoders of one fixed-size element at p; false when the type does not fit the request.
bool element_as_i64(gguf_value_type t, const uint8_t * p, int64_t * out) {
    switch (t) {
        case gguf_value_type::uint8: *out = load<uint8_t>(p); return true;
        case gguf_value_type::int8: *out = load<int8_t>(p); return true;
        case gguf_value_type::uint16: *out = load<uint16_t>(p); return true;
        case gguf_value_type::int16: *out = load<int16_t>(p); return true;
        case gguf_value_type::uint32: *out = load<uint32_t>(p); return true;
        case gguf_value_type::int32: *out = load<int32_t>(p); return true;
        case gguf_value_type::int64: *out = load<int64_t>(p); return true;
        case gguf_value_type::uint64: {
            const uint64_t u = load<uint64_t>(p);
            if (u > uint64_t(INT64_MAX)) return false;
            *out = int64_t(u);
            return true;
        }
        default: return false;
    }
}

bool element_as_u64(gguf_value_type t, const uint8_t * p, uint64_t * out) {
    if (t == gguf_value_type::uint64) {
        *out = load<uint64_t>(p);
        return true;
    }
    int64_t v = 0;
    if (!element_as_i64(t, p, &v) || v < 0) return false;
    *out = uint64_t(v);
    return true;
}

bool element_as_f64(gguf_value_type t, const uint8_t * p, double * out) {
    if (t == gguf_value_type::float32) { *out = load<float>(p); return true; }
    if (t == gguf_value_type::float64) { *out = load<double>(p); return true; }
    return false;
}

std::string quote(const std::string & s) {
    std::string r = "\"";
    for (unsigned char ch : s) {
        if (ch == '"' || ch == '\\') { r += '\\'; r += char(ch); }
        else if (ch == '\n') r += "\\n";
        else if (ch == '\t') r += "\\t";
        else if (ch == '\r') r += "\\r";
        else if (ch < 0x20 || ch == 0x7f) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\x%02x", ch);
            r += buf;
        } else {
            r += char(ch);
        }
    }
    return r + "\"";
}

std::string element_to_string(gguf_value_type t, const uint8_t * p) {
    char buf[64];
    int64_t i = 0;
    uint64_t u = 0;
    double f = 0;
    if (t == gguf_value_type::boolean) return p[0] ? "true" : "false";
    if (element_as_f64(t, p, &f)) {
        std::snprintf(buf, sizeof buf, "%.9g", f);
    } else if (t == gguf_value_type::uint64 && element_as_u64(t, p, &u)) {
        std::snprintf(buf, sizeof buf, "%" PRIu64, u);
    } else if (element_as_i64(t, p, &i)) {
        std::snprintf(buf, sizeof buf, "%" PRId64, i);
    } else {
        return "?";
    }
    return buf;
}

}  // namespace

// ---- gguf_value: construction ----

// Scalars keep their raw little-endian bits, zero-extended to 64 bits.
#define GGUF_SCALAR_FACTORY(fn, ctype, vtype)                  \
    gguf_value gguf_value::fn(ctype v) {                       \
        gguf_value r;                                          \
        r.type_ = gguf_value_type::vtype;                      \
        std::memcpy(&r.bits_, &v, sizeof(ctype));              \
        return r;                                              \
    }
GGUF_SCALAR_FACTORY(from_u8, uint8_t, uint8)
GGUF_SCALAR_FACTORY(from_i8, int8_t, int8)
GGUF_SCALAR_FACTORY(from_u16, uint16_t, uint16)
GGUF_SCALAR_FACTORY(from_i16, int16_t, int16)
GGUF_SCALAR_FACTORY(from_u32, uint32_t, uint32)
GGUF_SCALAR_FACTORY(from_i32, int32_t, int32)
GGUF_SCALAR_FACTORY(from_u64, uint64_t, uint64)
GGUF_SCALAR_FACTORY(from_i64, int64_t, int64)
GGUF_SCALAR_FACTORY(from_f32, float, float32)
GGUF_SCALAR_FACTORY(from_f64, double, float64)
#undef GGUF_SCALAR_FACTORY

gguf_value gguf_value::from_bool(bool v) {
    gguf_value r;
    r.type_ = gguf_value_type::boolean;
    r.bits_ = v ? 1 : 0;
    return r;
}

gguf_value gguf_value::from_string(std::string v) {
    gguf_value r;
    r.type_ = gguf_value_type::string;
    r.str_ = std::move(v);
    return r;
}

gguf_value gguf_value::from_array(gguf_value_type elem, const void * data, size_t n) {
    const size_t es = gguf_value_type_size(elem);
    GGML_ASSERT(es != 0 && "from_array: element type must be a fixed-size type");
    gguf_value r;
    r.type_ = gguf_value_type::array;
    r.arr_type_ = elem;
    const auto * p = static_cast<const uint8_t *>(data);
    if (n) r.raw_.assign(p, p + n * es);
    return r;
}

gguf_value gguf_value::from_array_u8(std::span<const uint8_t> v) { return from_array(gguf_value_type::uint8, v.data(), v.size()); }
gguf_value gguf_value::from_array_i32(std::span<const int32_t> v) { return from_array(gguf_value_type::int32, v.data(), v.size()); }
gguf_value gguf_value::from_array_u32(std::span<const uint32_t> v) { return from_array(gguf_value_type::uint32, v.data(), v.size()); }
gguf_value gguf_value::from_array_i64(std::span<const int64_t> v) { return from_array(gguf_value_type::int64, v.data(), v.size()); }
gguf_value gguf_value::from_array_f32(std::span<const float> v) { return from_array(gguf_value_type::float32, v.data(), v.size()); }
gguf_value gguf_value::from_array_f64(std::span<const double> v) { return from_array(gguf_value_type::float64, v.data(), v.size()); }

gguf_value gguf_value::from_array_bool(std::span<const bool> v) {
    std::vector<uint8_t> bytes(v.size());
    for (size_t i = 0; i < v.size(); ++i) bytes[i] = v[i] ? 1 : 0;
    return from_array(gguf_value_type::boolean, bytes.data(), bytes.size());
}

gguf_value gguf_value::from_array_strings(std::vector<std::string> v) {
    gguf_value r;
    r.type_ = gguf_value_type::array;
    r.arr_type_ = gguf_value_type::string;
    r.strs_ = std::move(v);
    return r;
}

gguf_value gguf_value::from_array_arrays(std::vector<gguf_value> v) {
    for (const gguf_value & e : v) GGML_ASSERT(e.is_array() && "from_array_arrays: every element must be an array");
    gguf_value r;
    r.type_ = gguf_value_type::array;
    r.arr_type_ = gguf_value_type::array;
    r.values_ = std::move(v);
    return r;
}

// ---- gguf_value: access ----

bool gguf_value::get_int(int64_t * out) const {
    return gguf_value_type_is_integer(type_) && element_as_i64(type_, reinterpret_cast<const uint8_t *>(&bits_), out);
}
bool gguf_value::get_uint(uint64_t * out) const {
    return gguf_value_type_is_integer(type_) && element_as_u64(type_, reinterpret_cast<const uint8_t *>(&bits_), out);
}
bool gguf_value::get_float(double * out) const {
    return element_as_f64(type_, reinterpret_cast<const uint8_t *>(&bits_), out);
}
bool gguf_value::get_bool(bool * out) const {
    if (type_ != gguf_value_type::boolean) return false;
    *out = bits_ != 0;
    return true;
}
const std::string * gguf_value::get_string() const {
    return type_ == gguf_value_type::string ? &str_ : nullptr;
}

size_t gguf_value::array_size() const {
    if (!is_array()) return 0;
    if (arr_type_ == gguf_value_type::string) return strs_.size();
    if (arr_type_ == gguf_value_type::array) return values_.size();
    return raw_.size() / gguf_value_type_size(arr_type_);
}

bool gguf_value::array_get_int(size_t i, int64_t * out) const {
    if (!is_array() || !gguf_value_type_is_integer(arr_type_) || i >= array_size()) return false;
    return element_as_i64(arr_type_, raw_.data() + i * gguf_value_type_size(arr_type_), out);
}
bool gguf_value::array_get_uint(size_t i, uint64_t * out) const {
    if (!is_array() || !gguf_value_type_is_integer(arr_type_) || i >= array_size()) return false;
    return element_as_u64(arr_type_, raw_.data() + i * gguf_value_type_size(arr_type_), out);
}
bool gguf_value::array_get_float(size_t i, double * out) const {
    if (!is_array() || i >= array_size()) return false;
    return element_as_f64(arr_type_, raw_.data() + i * gguf_value_type_size(arr_type_), out);
}
bool gguf_value::array_get_bool(size_t i, bool * out) const {
    if (!is_array() || arr_type_ != gguf_value_type::boolean || i >= raw_.size()) return false;
    *out = raw_[i] != 0;
    return true;
}

const void * gguf_value::array_data() const {
    if (!is_array() || gguf_value_type_size(arr_type_) == 0) return nullptr;
    return raw_.data();
}
const std::vector<std::string> & gguf_value::array_strings() const { return strs_; }
const std::vector<gguf_value> & gguf_value::array_values() const { return values_; }

bool gguf_value::array_to_i64(std::vector<int64_t> * out) const {
    if (!is_array() || !gguf_value_type_is_integer(arr_type_)) return false;
    std::vector<int64_t> r(array_size());
    for (size_t i = 0; i < r.size(); ++i) {
        if (!array_get_int(i, &r[i])) return false;
    }
    *out = std::move(r);
    return true;
}

bool gguf_value::array_to_f32(std::vector<float> * out) const {
    if (!is_array()) return false;
    if (arr_type_ == gguf_value_type::float32) {
        out->resize(array_size());
        if (!out->empty()) std::memcpy(out->data(), raw_.data(), raw_.size());
        return true;
    }
    if (arr_type_ != gguf_value_type::float64) return false;
    std::vector<float> r(array_size());
    for (size_t i = 0; i < r.size(); ++i) r[i] = float(load<double>(raw_.data() + 8 * i));
    *out = std::move(r);
    return true;
}

std::string gguf_value::to_string(size_t max_array_elems) const {
    if (type_ == gguf_value_type::string) return quote(str_);
    if (!is_array()) return element_to_string(type_, reinterpret_cast<const uint8_t *>(&bits_));
    const size_t n = array_size();
    const size_t shown = n < max_array_elems ? n : max_array_elems;
    std::string r = "[";
    for (size_t i = 0; i < shown; ++i) {
        if (i) r += ", ";
        if (arr_type_ == gguf_value_type::string) r += quote(strs_[i]);
        else if (arr_type_ == gguf_value_type::array) r += values_[i].to_string(max_array_elems > 2 ? max_array_elems / 2 : 1);
        else r += element_to_string(arr_type_, raw_.data() + i * gguf_value_type_size(arr_type_));
    }
    if (shown < n) r += (shown ? ", ... (" : "... (") + std::to_string(n) + " elements)";
    return r + "]";
}

bool gguf_value::operator==(const gguf_value & o) const {
    return type_ == o.type_ && arr_type_ == o.arr_type_ && bits_ == o.bits_ && str_ == o.str_ &&
           raw_ == o.raw_ && strs_ == o.strs_ && values_ == o.values_;
}

// ---- gguf_metadata ----

const gguf_value * gguf_metadata::find(std::string_view key) const {
    auto it = index_.find(std::string(key));
    return it == index_.end() ? nullptr : &kvs_[it->second].value;
}

void gguf_metadata::set(std::string_view key, gguf_value value) {
    auto it = index_.find(std::string(key));
    if (it != index_.end()) {
        kvs_[it->second].value = std::move(value);
        return;
    }
    index_.emplace(std::string(key), kvs_.size());
    kvs_.push_back({std::string(key), std::move(value)});
}

bool gguf_metadata::remove(std::string_view key) {
    auto it = index_.find(std::string(key));
    if (it == index_.end()) return false;
    const size_t at = it->second;
    index_.erase(it);
    kvs_.erase(kvs_.begin() + ptrdiff_t(at));
    for (size_t i = at; i < kvs_.size(); ++i) index_[kvs_[i].key] = i;
    return true;
}

void gguf_metadata::clear() {
    kvs_.clear();
    index_.clear();
}

namespace {

gguf_result lookup(const gguf_metadata & md, std::string_view key, const gguf_value ** v) {
    *v = md.find(key);
    if (!*v) return gguf_result::error(GGUF_ERROR_NOT_FOUND, "key '" + std::string(key) + "' not found");
    return gguf_result::ok();
}

gguf_result wrong_type(std::string_view key, const gguf_value & v, const char * expected) {
    std::string stored = gguf_value_type_name(v.type());
    if (v.is_array()) stored += std::string(" of ") + gguf_value_type_name(v.array_type());
    return gguf_result::error(GGUF_ERROR_TYPE, "key '" + std::string(key) + "' holds " + stored +
                                                   " " + v.to_string(4) + ", expected " + expected);
}

}  // namespace

gguf_result gguf_metadata::get_string(std::string_view key, std::string * out) const {
    const gguf_value * v = nullptr;
    if (gguf_result r = lookup(*this, key, &v); !r) return r;
    if (!v->get_string()) return wrong_type(key, *v, "a string");
    *out = *v->get_string();
    return gguf_result::ok();
}

gguf_result gguf_metadata::get_int(std::string_view key, int64_t * out) const {
    const gguf_value * v = nullptr;
    if (gguf_result r = lookup(*this, key, &v); !r) return r;
    return v->get_int(out) ? gguf_result::ok() : wrong_type(key, *v, "an integer that fits int64");
}

gguf_result gguf_metadata::get_uint(std::string_view key, uint64_t * out) const {
    const gguf_value * v = nullptr;
    if (gguf_result r = lookup(*this, key, &v); !r) return r;
    return v->get_uint(out) ? gguf_result::ok() : wrong_type(key, *v, "a non-negative integer");
}

gguf_result gguf_metadata::get_float(std::string_view key, double * out) const {
    const gguf_value * v = nullptr;
    if (gguf_result r = lookup(*this, key, &v); !r) return r;
    return v->get_float(out) ? gguf_result::ok() : wrong_type(key, *v, "f32 or f64");
}

gguf_result gguf_metadata::get_bool(std::string_view key, bool * out) const {
    const gguf_value * v = nullptr;
    if (gguf_result r = lookup(*this, key, &v); !r) return r;
    return v->get_bool(out) ? gguf_result::ok() : wrong_type(key, *v, "bool");
}

gguf_result gguf_metadata::get_array(std::string_view key, const gguf_value ** out) const {
    const gguf_value * v = nullptr;
    if (gguf_result r = lookup(*this, key, &v); !r) return r;
    if (!v->is_array()) return wrong_type(key, *v, "an array");
    *out = v;
    return gguf_result::ok();
}

gguf_result gguf_metadata::get_array_size(std::string_view key, size_t * out) const {
    const gguf_value * v = nullptr;
    if (gguf_result r = get_array(key, &v); !r) return r;
    *out = v->array_size();
    return gguf_result::ok();
}
