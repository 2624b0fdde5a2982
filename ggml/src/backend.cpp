// Backend base classes, the registry, and tensor data access through buffers (the registry of
// the backends compiled in, ggml_backend_registry_default, is in ggml/registry/).
#include "ggml/backend.h"

#include <cstring>
#include <vector>

size_t ggml_backend_buffer_type_i::alloc_size(const ggml_tensor * t) const { return ggml_nbytes(t); }

void ggml_backend_i::set_tensor_async(ggml_tensor * t, const void * data, size_t offset, size_t size) {
    ggml_backend_tensor_set(t, data, offset, size);
}

void ggml_backend_i::get_tensor_async(const ggml_tensor * t, void * data, size_t offset, size_t size) {
    ggml_backend_tensor_get(t, data, offset, size);
}

const char * ggml_backend_dev_type_name(ggml_backend_dev_type type) {
    switch (type) {
        case ggml_backend_dev_type::cpu: return "cpu";
        case ggml_backend_dev_type::gpu: return "gpu";
        case ggml_backend_dev_type::accel: return "accel";
    }
    return "unknown";
}

// ---- registry ----

void ggml_backend_registry::add(std::unique_ptr<ggml_backend_reg_i> reg) {
    GGML_ASSERT(reg != nullptr);
    regs_.push_back(std::move(reg));
}

size_t ggml_backend_registry::device_count() const {
    size_t n = 0;
    for (const auto & r : regs_) n += r->device_count();
    return n;
}

ggml_backend_device_i * ggml_backend_registry::device(size_t i) const {
    for (const auto & r : regs_) {
        if (i < r->device_count()) return r->device(i);
        i -= r->device_count();
    }
    return nullptr;
}

ggml_backend_device_i * ggml_backend_registry::device_by_name(const std::string & name) const {
    for (size_t i = 0; i < device_count(); ++i) {
        ggml_backend_device_i * d = device(i);
        if (name == d->name()) return d;
    }
    return nullptr;
}

ggml_backend_device_i * ggml_backend_registry::device_by_type(ggml_backend_dev_type type) const {
    for (size_t i = 0; i < device_count(); ++i) {
        ggml_backend_device_i * d = device(i);
        if (d->type() == type) return d;
    }
    return nullptr;
}

std::vector<ggml_backend_device_info> ggml_backend_registry::devices() const {
    std::vector<ggml_backend_device_info> out;
    for (size_t i = 0; i < device_count(); ++i) {
        ggml_backend_device_i * d = device(i);
        ggml_backend_device_info info;
        info.device = d;
        info.name = d->name();
        info.description = d->description();
        info.type = d->type();
        d->memory(&info.memory_free, &info.memory_total);
        out.push_back(std::move(info));
    }
    return out;
}

// ---- tensor data ----

namespace {

ggml_backend_buffer_i * buffer_of(const ggml_tensor * t) {
    ggml_backend_buffer_i * b = t->view_src ? t->view_src->buffer : t->buffer;
    GGML_ASSERT(b != nullptr && "tensor has no buffer");
    GGML_ASSERT(t->data != nullptr);
    return b;
}

}  // namespace

void ggml_backend_tensor_set(ggml_tensor * t, const void * data, size_t offset, size_t size) {
    if (size == 0) return;
    GGML_ASSERT(offset + size <= ggml_nbytes(t));
    buffer_of(t)->set_tensor(t, data, offset, size);
}

void ggml_backend_tensor_get(const ggml_tensor * t, void * data, size_t offset, size_t size) {
    if (size == 0) return;
    GGML_ASSERT(offset + size <= ggml_nbytes(t));
    buffer_of(t)->get_tensor(t, data, offset, size);
}

void ggml_backend_tensor_memset(ggml_tensor * t, uint8_t value, size_t offset, size_t size) {
    if (size == 0) return;
    GGML_ASSERT(offset + size <= ggml_nbytes(t));
    buffer_of(t)->memset_tensor(t, value, offset, size);
}

void ggml_backend_tensor_copy(const ggml_tensor * src, ggml_tensor * dst) {
    GGML_ASSERT(ggml_are_same_layout(src, dst));
    if (src == dst) return;
    ggml_backend_buffer_i * sb = buffer_of(src);
    ggml_backend_buffer_i * db = buffer_of(dst);
    const size_t n = ggml_nbytes(src);
    if (sb->is_host()) {
        db->set_tensor(dst, src->data, 0, n);
    } else if (db->is_host()) {
        sb->get_tensor(src, dst->data, 0, n);
    } else if (!db->cpy_tensor(src, dst)) {
        std::vector<uint8_t> staging(n);
        sb->get_tensor(src, staging.data(), 0, n);
        db->set_tensor(dst, staging.data(), 0, n);
    }
}

ggml_status ggml_backend_tensor_alloc(ggml_backend_buffer_i * buffer, ggml_tensor * t, void * addr) {
    GGML_ASSERT(t->buffer == nullptr && t->data == nullptr && t->view_src == nullptr);
    auto * base = static_cast<uint8_t *>(buffer->base());
    auto * p = static_cast<uint8_t *>(addr);
    GGML_ASSERT(p >= base && p + buffer->buffer_type()->alloc_size(t) <= base + buffer->size());
    t->buffer = buffer;
    t->data = addr;
    return buffer->init_tensor(t);
}

ggml_status ggml_backend_view_init(ggml_tensor * t) {
    GGML_ASSERT(t->view_src != nullptr && t->view_src->buffer != nullptr && t->view_src->data != nullptr);
    t->buffer = t->view_src->buffer;
    t->data = static_cast<uint8_t *>(t->view_src->data) + t->view_offs;
    return t->buffer->init_tensor(t);
}

ggml_backend_buffer_ptr ggml_backend_alloc_ctx_tensors(ggml_context * ctx, ggml_backend_buffer_type_i * buft) {
    const size_t align = buft->alignment();
    size_t total = 0;
    for (ggml_tensor * t = ggml_get_first_tensor(ctx); t; t = ggml_get_next_tensor(ctx, t)) {
        if (t->data || t->view_src) continue;
        total += (buft->alloc_size(t) + align - 1) / align * align;
    }
    if (total == 0) return nullptr;
    ggml_backend_buffer_ptr buf = buft->alloc_buffer(total);
    if (!buf) return nullptr;
    auto * base = static_cast<uint8_t *>(buf->base());
    size_t offs = 0;
    for (ggml_tensor * t = ggml_get_first_tensor(ctx); t; t = ggml_get_next_tensor(ctx, t)) {
        if (t->data || t->view_src) continue;
        if (ggml_backend_tensor_alloc(buf.get(), t, base + offs) != GGML_STATUS_SUCCESS) return nullptr;
        offs += (buft->alloc_size(t) + align - 1) / align * align;
    }
    for (ggml_tensor * t = ggml_get_first_tensor(ctx); t; t = ggml_get_next_tensor(ctx, t)) {
        if (t->view_src && !t->data && t->view_src->data) {
            if (ggml_backend_view_init(t) != GGML_STATUS_SUCCESS) return nullptr;
        }
    }
    return buf;
}
