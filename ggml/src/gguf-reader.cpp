// GGUF reader: parses the header (metadata, tensor infos) and checks every count, size and
// offset against the file before it is used.
#include "gguf-impl.h"

#include <algorithm>
#include <cstdio>
#include <numeric>

namespace {

constexpr size_t k_min_kv_bytes = 8 + 4 + 1;          // key length, type id, smallest value
constexpr size_t k_min_tensor_info_bytes = 8 + 4 + 4 + 8;  // name length, n_dims, type, offset

gguf_result format_error(std::string msg) { return gguf_result::error(GGUF_ERROR_FORMAT, std::move(msg)); }

std::string at_offset(size_t pos) { return " at offset " + std::to_string(pos); }

std::string printable_magic(const uint8_t * p) {
    std::string s;
    char hex[16];
    for (int i = 0; i < 4; ++i) {
        std::snprintf(hex, sizeof hex, "%02x", p[i]);
        s += hex;
    }
    return s;
}

}  // namespace

gguf_result gguf_parser::parse_preamble(gguf_cursor & c, gguf_file * f, uint64_t * n_tensors, uint64_t * n_kv) {
    const uint8_t * magic = nullptr;
    if (gguf_result r = c.take(4, &magic, "magic"); !r) return r;
    if (std::memcmp(magic, GGUF_MAGIC, 4) != 0) {
        return format_error("not a GGUF file: the first 4 bytes are 0x" + printable_magic(magic) +
                            ", expected \"GGUF\" (0x47475546)");
    }
    uint32_t version = 0;
    if (gguf_result r = c.read(&version, "version"); !r) return r;
    if (version == 1) {
        return gguf_result::error(GGUF_ERROR_UNSUPPORTED,
                                  "GGUF version 1 is not supported (it used 32-bit counts; v2 and v3 are "
                                  "read): convert the file with a current tool");
    }
    if (version == 0x02000000u || version == 0x03000000u) {
        return gguf_result::error(GGUF_ERROR_UNSUPPORTED, "big-endian GGUF file (version field 0x" +
                                                              printable_magic(magic + 4) + "): only little-endian files are read");
    }
    if (version != 2 && version != 3) {
        return gguf_result::error(GGUF_ERROR_UNSUPPORTED, "unsupported GGUF version " + std::to_string(version) +
                                                              " at offset 4 (supported: 2 and 3)");
    }
    f->version_ = version;
    if (gguf_result r = c.read(n_tensors, "tensor count"); !r) return r;
    if (gguf_result r = c.read(n_kv, "key/value count"); !r) return r;
    // Both lists follow: bound each by the bytes left before anything is read or allocated.
    if (*n_tensors > c.remaining() / k_min_tensor_info_bytes) {
        return format_error("tensor count " + std::to_string(*n_tensors) + at_offset(8) +
                            " cannot fit: tensor infos of at least 24 bytes each need more than the " +
                            std::to_string(c.remaining()) + " bytes left in the file");
    }
    return c.check_count(*n_kv, k_min_kv_bytes, "key/value count at offset 16");
}

gguf_result gguf_parser::parse_kvs(gguf_cursor & c, gguf_file * f, uint64_t n_kv) {
    for (uint64_t i = 0; i < n_kv; ++i) {
        const size_t at = c.pos();
        const std::string which = "key/value " + std::to_string(i);
        std::string key;
        if (gguf_result r = c.read_string(&key, "key of ", which); !r) return r;
        if (f->metadata_.contains(key)) {
            return format_error("duplicate key '" + key + "'" + at_offset(at) + " (" + which + ")");
        }
        gguf_value value;
        if (gguf_result r = gguf_value_codec::read_typed(c, &value, "key '" + key + "'"); !r) return r;
        f->metadata_.set(key, std::move(value));
    }
    return gguf_result::ok();
}

gguf_result gguf_parser::resolve_alignment(gguf_file * f) {
    f->alignment_ = GGUF_DEFAULT_ALIGNMENT;
    const gguf_value * v = f->metadata_.find(GGUF_KEY_GENERAL_ALIGNMENT);
    if (!v) return gguf_result::ok();
    uint64_t a = 0;
    if (!v->get_uint(&a)) {
        return format_error(std::string(GGUF_KEY_GENERAL_ALIGNMENT) + " holds " + gguf_value_type_name(v->type()) +
                            " " + v->to_string(4) + ", expected an unsigned integer");
    }
    if (a == 0 || (a & (a - 1)) != 0 || a > (uint64_t(1) << 31)) {
        return format_error(std::string(GGUF_KEY_GENERAL_ALIGNMENT) + " = " + std::to_string(a) +
                            " is not a power of two between 1 and 2^31");
    }
    f->alignment_ = size_t(a);
    return gguf_result::ok();
}

gguf_result gguf_parser::parse_tensor_info(gguf_cursor & c, gguf_file * f, uint64_t i, gguf_tensor_info * info) {
    const size_t at = c.pos();
    if (gguf_result r = c.read_string(&info->name, "name of tensor " + std::to_string(i)); !r) return r;
    const std::string who = "tensor " + std::to_string(i) + " '" + info->name + "'";
    if (info->name.size() >= GGML_MAX_NAME) {
        return format_error(who + at_offset(at) + ": the name is " + std::to_string(info->name.size()) +
                            " bytes long, at most " + std::to_string(GGML_MAX_NAME - 1) + " are allowed");
    }
    if (f->tensor_index_.count(info->name)) {
        return format_error("duplicate tensor name '" + info->name + "'" + at_offset(at) + " (tensor " +
                            std::to_string(i) + ")");
    }
    const size_t dims_at = c.pos();
    if (gguf_result r = c.read(&info->n_dims, who, " n_dims"); !r) return r;
    if (info->n_dims > GGML_MAX_DIMS) {
        return format_error(who + ": n_dims = " + std::to_string(info->n_dims) + at_offset(dims_at) + ", at most " +
                            std::to_string(GGML_MAX_DIMS) + " dimensions are supported");
    }
    for (uint32_t d = 0; d < info->n_dims; ++d) {
        const size_t ne_at = c.pos();
        uint64_t ne = 0;
        if (gguf_result r = c.read(&ne, who + " ne[" + std::to_string(d) + "]"); !r) return r;
        if (ne > uint64_t(INT64_MAX)) {
            return format_error(who + ": ne[" + std::to_string(d) + "] = " + std::to_string(ne) + at_offset(ne_at) +
                                " exceeds INT64_MAX");
        }
        info->ne[d] = int64_t(ne);
    }
    const size_t type_at = c.pos();
    uint32_t type = 0;
    if (gguf_result r = c.read(&type, who, " type"); !r) return r;
    if (type > uint32_t(INT32_MAX) || !ggml_type_is_valid(int32_t(type))) {
        return format_error(who + ": unknown tensor type id " + std::to_string(type) + at_offset(type_at));
    }
    info->type = ggml_type(type);
    if (gguf_result r = c.read(&info->offset, who, " data offset"); !r) return r;
    if (gguf_result r = gguf_tensor_shape_check(info->type, info->n_dims, info->ne, &info->n_elements, &info->size); !r) {
        return format_error(who + " (type " + ggml_type_name(info->type) + "): " + r.message);
    }
    return gguf_result::ok();
}

gguf_result gguf_parser::place_tensors(gguf_file * f, size_t header_end) {
    uint64_t data_offset = 0;
    if (!gguf_align_up(header_end, f->alignment_, &data_offset)) {
        return format_error("data section offset overflows (header end " + std::to_string(header_end) +
                            ", alignment " + std::to_string(f->alignment_) + ")");
    }
    f->data_offset_ = size_t(data_offset);
    if (f->tensors_.empty()) return gguf_result::ok();  // files without tensors may end at their header
    if (data_offset > f->file_size_) {
        return format_error("truncated file: the data section starts at offset " + std::to_string(data_offset) +
                            " (header end " + std::to_string(header_end) + " aligned to " +
                            std::to_string(f->alignment_) + "), beyond the end of the file (" +
                            std::to_string(f->file_size_) + " bytes)");
    }
    const uint64_t data_size = f->file_size_ - data_offset;
    for (const gguf_tensor_info & t : f->tensors_) {
        const std::string who = "tensor '" + t.name + "'";
        if (t.offset % f->alignment_ != 0) {
            return format_error(who + ": data offset " + std::to_string(t.offset) + " is not a multiple of the alignment " +
                                std::to_string(f->alignment_));
        }
        if (t.offset > data_size || t.size > data_size - t.offset) {
            return format_error(who + ": data at offset " + std::to_string(t.offset) + " (+" + std::to_string(t.size) +
                                " bytes) of the data section extends beyond the end of the file: the data section "
                                "(from offset " + std::to_string(data_offset) + ") holds " + std::to_string(data_size) +
                                " bytes");
        }
    }
    std::vector<size_t> order(f->tensors_.size());
    std::iota(order.begin(), order.end(), size_t(0));
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return f->tensors_[a].offset < f->tensors_[b].offset; });
    for (size_t k = 1; k < order.size(); ++k) {
        const gguf_tensor_info & a = f->tensors_[order[k - 1]];
        const gguf_tensor_info & b = f->tensors_[order[k]];
        if (a.size != 0 && b.size != 0 && a.offset + a.size > b.offset) {
            return format_error("tensors '" + a.name + "' (data offset " + std::to_string(a.offset) + ", " +
                                std::to_string(a.size) + " bytes) and '" + b.name + "' (data offset " +
                                std::to_string(b.offset) + ") overlap");
        }
    }
    return gguf_result::ok();
}

gguf_result gguf_parser::parse(const uint8_t * data, size_t avail, size_t file_size, gguf_file * f, bool * need_more) {
    f->metadata_.clear();
    f->tensors_.clear();
    f->tensor_index_.clear();
    f->file_size_ = file_size;
    gguf_cursor c(data, avail, file_size);
    gguf_result r;
    uint64_t n_tensors = 0;
    uint64_t n_kv = 0;
    r = parse_preamble(c, f, &n_tensors, &n_kv);
    if (r) r = parse_kvs(c, f, n_kv);
    if (r) r = resolve_alignment(f);
    if (r) r = c.check_count(n_tensors, k_min_tensor_info_bytes, "tensor count at offset 8");
    if (r) {
        f->tensors_.reserve(size_t(std::min<uint64_t>(n_tensors, 4096)));
        for (uint64_t i = 0; i < n_tensors && r; ++i) {
            gguf_tensor_info info;
            r = parse_tensor_info(c, f, i, &info);
            if (r) {
                f->tensor_index_.emplace(info.name, f->tensors_.size());
                f->tensors_.push_back(std::move(info));
            }
        }
    }
    if (r) r = place_tensors(f, c.pos());
    *need_more = !r && c.need_more();
    return r;
}

// ---- gguf_file: parsing from memory and accessors ----

gguf_result gguf_file::parse(const void * data, size_t size, const gguf_parse_options & opts,
                             std::unique_ptr<gguf_file> * out) {
    size_t file_size = size;
    if (!opts.with_tensor_data && opts.file_size != 0) {
        if (opts.file_size < size) {
            return gguf_result::error(GGUF_ERROR_INVALID_ARG, "file_size " + std::to_string(opts.file_size) +
                                                                  " is smaller than the " + std::to_string(size) +
                                                                  " bytes given");
        }
        file_size = opts.file_size;
    }
    if (size != 0 && data == nullptr) return gguf_result::error(GGUF_ERROR_INVALID_ARG, "null data");
    std::unique_ptr<gguf_file> f(new gguf_file);
    bool need_more = false;
    gguf_result r = gguf_parser::parse(static_cast<const uint8_t *>(data), size, file_size, f.get(), &need_more);
    if (!r) return r;
    if (opts.with_tensor_data) f->data_ = static_cast<const uint8_t *>(data);
    *out = std::move(f);
    return r;
}

const gguf_tensor_info * gguf_file::find_tensor(std::string_view name) const {
    auto it = tensor_index_.find(std::string(name));
    return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

const void * gguf_file::tensor_data(const gguf_tensor_info & info) const {
    return data_ ? data_ + data_offset_ + info.offset : nullptr;
}
