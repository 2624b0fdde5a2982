// GGUF writer: v3 files, whole or streamed tensor by tensor, every tensor aligned and padded.
#include "gguf-impl.h"

#include <cerrno>
#include <cstdio>

struct gguf_writer::stream_state {
    std::FILE * fp = nullptr;
    std::string path;
    size_t next = 0;         // index of the next tensor to write
    size_t alignment = GGUF_DEFAULT_ALIGNMENT;

    ~stream_state() {
        if (fp) std::fclose(fp);
    }
};

namespace {

gguf_result invalid(std::string msg) { return gguf_result::error(GGUF_ERROR_INVALID_ARG, std::move(msg)); }

bool is_power_of_two(uint64_t a) { return a != 0 && (a & (a - 1)) == 0; }

const uint8_t k_zeros[256] = {};

gguf_result write_bytes(std::FILE * fp, const void * data, size_t n, const std::string & path) {
    if (n != 0 && std::fwrite(data, 1, n, fp) != n) {
        return gguf_result::error(GGUF_ERROR_IO, "'" + path + "': write failed: " + std::strerror(errno));
    }
    return gguf_result::ok();
}

gguf_result write_padding(std::FILE * fp, size_t n, const std::string & path) {
    while (n > 0) {
        const size_t k = n < sizeof(k_zeros) ? n : sizeof(k_zeros);
        if (gguf_result r = write_bytes(fp, k_zeros, k, path); !r) return r;
        n -= k;
    }
    return gguf_result::ok();
}

size_t padding_after(uint64_t end, size_t alignment) {
    uint64_t aligned = 0;
    gguf_align_up(end, alignment, &aligned);
    return size_t(aligned - end);
}

}  // namespace

gguf_writer::gguf_writer() = default;
gguf_writer::~gguf_writer() = default;

gguf_result gguf_writer::set_alignment(uint32_t alignment) {
    if (!is_power_of_two(alignment)) {
        return invalid("alignment " + std::to_string(alignment) + " is not a power of two");
    }
    if (stream_) return invalid("cannot change the alignment while streaming");
    metadata_.set(GGUF_KEY_GENERAL_ALIGNMENT, gguf_value::from_u32(alignment));
    uint64_t offset = 0;
    for (gguf_tensor_info & t : tensors_) {
        gguf_align_up(offset, alignment, &offset);
        t.offset = offset;
        offset += t.size;
    }
    return gguf_result::ok();
}

size_t gguf_writer::alignment() const {
    uint64_t a = 0;
    const gguf_value * v = metadata_.find(GGUF_KEY_GENERAL_ALIGNMENT);
    if (v && v->get_uint(&a) && is_power_of_two(a) && a <= (uint64_t(1) << 31)) return size_t(a);
    return GGUF_DEFAULT_ALIGNMENT;
}

gguf_result gguf_writer::add_tensor(std::string_view name, ggml_type type, std::span<const int64_t> ne, const void * data) {
    const std::string who = "tensor '" + std::string(name) + "'";
    if (stream_) return invalid(who + ": cannot add tensors while streaming");
    if (name.empty() || name.size() >= GGML_MAX_NAME) {
        return invalid(who + ": the name must be 1 to " + std::to_string(GGML_MAX_NAME - 1) + " bytes long");
    }
    if (tensor_index_.count(std::string(name))) return invalid(who + ": duplicate tensor name");
    if (ne.size() > GGML_MAX_DIMS) {
        return invalid(who + ": " + std::to_string(ne.size()) + " dimensions, at most " + std::to_string(GGML_MAX_DIMS));
    }
    if (!ggml_type_is_valid(type)) return invalid(who + ": invalid type id " + std::to_string(int(type)));
    gguf_tensor_info info;
    info.name = std::string(name);
    info.type = type;
    info.n_dims = uint32_t(ne.size());
    for (size_t d = 0; d < ne.size(); ++d) info.ne[d] = ne[d];
    if (gguf_result r = gguf_tensor_shape_check(type, info.n_dims, info.ne, &info.n_elements, &info.size); !r) {
        return invalid(who + " (type " + ggml_type_name(type) + "): " + r.message);
    }
    uint64_t offset = 0;
    if (!tensors_.empty()) {
        const gguf_tensor_info & prev = tensors_.back();
        if (!gguf_align_up(prev.offset + prev.size, alignment(), &offset)) return invalid(who + ": data offset overflows");
    }
    info.offset = offset;
    tensor_index_.emplace(info.name, tensors_.size());
    tensors_.push_back(std::move(info));
    tensor_data_.push_back(data);
    return gguf_result::ok();
}

gguf_result gguf_writer::add_tensor(const gguf_tensor_info & info, const void * data) {
    return add_tensor(info.name, info.type, std::span<const int64_t>(info.ne, info.n_dims), data);
}

size_t gguf_writer::n_tensors() const { return tensors_.size(); }
const gguf_tensor_info & gguf_writer::tensor(size_t i) const { return tensors_[i]; }

gguf_result gguf_writer::build_header(std::vector<uint8_t> * out) const {
    const gguf_value * av = metadata_.find(GGUF_KEY_GENERAL_ALIGNMENT);
    uint64_t a = 0;
    if (av && (!av->get_uint(&a) || !is_power_of_two(a) || a > (uint64_t(1) << 31))) {
        return invalid(std::string(GGUF_KEY_GENERAL_ALIGNMENT) + " = " + av->to_string(4) +
                       " is not a power of two between 1 and 2^31");
    }
    const size_t align = alignment();
    std::vector<uint8_t> h(4);
    std::memcpy(h.data(), GGUF_MAGIC, 4);
    gguf_append<uint32_t>(h, GGUF_VERSION);
    gguf_append<uint64_t>(h, tensors_.size());
    gguf_append<uint64_t>(h, metadata_.size());
    for (const gguf_kv & kv : metadata_.kvs()) {
        if (gguf_value_codec::depth(kv.value) > GGUF_MAX_ARRAY_DEPTH) {
            return invalid("key '" + kv.key + "': arrays nested deeper than " + std::to_string(GGUF_MAX_ARRAY_DEPTH) +
                           " levels cannot be read back");
        }
        gguf_append_string(h, kv.key);
        gguf_append<uint32_t>(h, uint32_t(kv.value.type()));
        gguf_value_codec::write(h, kv.value);
    }
    uint64_t offset = 0;
    for (const gguf_tensor_info & t : tensors_) {
        gguf_align_up(offset, align, &offset);  // the same layout as add_tensor / set_alignment
        gguf_append_string(h, t.name);
        gguf_append<uint32_t>(h, t.n_dims);
        for (uint32_t d = 0; d < t.n_dims; ++d) gguf_append<uint64_t>(h, uint64_t(t.ne[d]));
        gguf_append<uint32_t>(h, uint32_t(t.type));
        gguf_append<uint64_t>(h, offset);
        offset += t.size;
    }
    h.resize(h.size() + padding_after(h.size(), align), 0);
    *out = std::move(h);
    return gguf_result::ok();
}

gguf_result gguf_writer::write_to_buffer(std::vector<uint8_t> * out) const {
    std::vector<uint8_t> buf;
    if (gguf_result r = build_header(&buf); !r) return r;
    const size_t align = alignment();
    for (size_t i = 0; i < tensors_.size(); ++i) {
        const gguf_tensor_info & t = tensors_[i];
        if (t.size != 0 && !tensor_data_[i]) return invalid("tensor '" + t.name + "' has no data");
        const auto * p = static_cast<const uint8_t *>(tensor_data_[i]);
        if (t.size) buf.insert(buf.end(), p, p + t.size);
        buf.resize(buf.size() + padding_after(buf.size(), align), 0);
    }
    *out = std::move(buf);
    return gguf_result::ok();
}

gguf_result gguf_writer::write_file(const std::string & path) const {
    for (size_t i = 0; i < tensors_.size(); ++i) {
        if (tensors_[i].size != 0 && !tensor_data_[i]) return invalid("tensor '" + tensors_[i].name + "' has no data");
    }
    std::vector<uint8_t> header;
    if (gguf_result r = build_header(&header); !r) return r;
    std::FILE * fp = std::fopen(path.c_str(), "wb");
    if (!fp) return gguf_result::error(GGUF_ERROR_IO, "'" + path + "': cannot create: " + std::strerror(errno));
    const size_t align = alignment();
    gguf_result r = write_bytes(fp, header.data(), header.size(), path);
    for (size_t i = 0; r && i < tensors_.size(); ++i) {
        r = write_bytes(fp, tensor_data_[i], tensors_[i].size, path);
        if (r) r = write_padding(fp, padding_after(tensors_[i].offset + tensors_[i].size, align), path);
    }
    if (std::fclose(fp) != 0 && r) {
        r = gguf_result::error(GGUF_ERROR_IO, "'" + path + "': close failed: " + std::strerror(errno));
    }
    return r;
}

gguf_result gguf_writer::stream_begin(const std::string & path) {
    if (stream_) return invalid("a stream to '" + stream_->path + "' is already open");
    // Offsets as they will be written (general.alignment may have been set directly).
    const size_t align = alignment();
    uint64_t offset = 0;
    for (gguf_tensor_info & t : tensors_) {
        gguf_align_up(offset, align, &offset);
        t.offset = offset;
        offset += t.size;
    }
    std::vector<uint8_t> header;
    if (gguf_result r = build_header(&header); !r) return r;
    auto s = std::make_unique<stream_state>();
    s->path = path;
    s->alignment = align;
    s->fp = std::fopen(path.c_str(), "wb");
    if (!s->fp) return gguf_result::error(GGUF_ERROR_IO, "'" + path + "': cannot create: " + std::strerror(errno));
    if (gguf_result r = write_bytes(s->fp, header.data(), header.size(), path); !r) return r;
    stream_ = std::move(s);
    return gguf_result::ok();
}

gguf_result gguf_writer::stream_tensor_data(const void * data, size_t size) {
    if (!stream_) return invalid("stream_tensor_data without stream_begin");
    if (stream_->next >= tensors_.size()) {
        return invalid("all " + std::to_string(tensors_.size()) + " tensors were already written");
    }
    const gguf_tensor_info & t = tensors_[stream_->next];
    if (size != t.size) {
        return invalid("tensor '" + t.name + "' (" + ggml_type_name(t.type) + ") takes " + std::to_string(t.size) +
                       " bytes, got " + std::to_string(size));
    }
    if (size != 0 && !data) return invalid("tensor '" + t.name + "': null data");
    if (gguf_result r = write_bytes(stream_->fp, data, size, stream_->path); !r) return r;
    if (gguf_result r = write_padding(stream_->fp, padding_after(t.offset + t.size, stream_->alignment), stream_->path); !r) {
        return r;
    }
    stream_->next++;
    return gguf_result::ok();
}

gguf_result gguf_writer::stream_end() {
    if (!stream_) return invalid("stream_end without stream_begin");
    std::unique_ptr<stream_state> s = std::move(stream_);
    if (s->next != tensors_.size()) {
        return invalid("'" + s->path + "' is incomplete: " + std::to_string(s->next) + " of " +
                       std::to_string(tensors_.size()) + " tensors written, next expected '" + tensors_[s->next].name + "'");
    }
    std::FILE * fp = s->fp;
    s->fp = nullptr;
    if (std::fclose(fp) != 0) {
        return gguf_result::error(GGUF_ERROR_IO, "'" + s->path + "': close failed: " + std::strerror(errno));
    }
    return gguf_result::ok();
}

size_t gguf_writer::stream_next_tensor() const { return stream_ ? stream_->next : 0; }
