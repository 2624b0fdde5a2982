// Creating weight tensors on their devices and binding their bytes (model-loader.h).
#include "model-loader.h"

#include "ggml/cpu.h"

#include <cerrno>
#include <cstring>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>

namespace {

std::string shape_str(const int64_t * ne, int n) {
    std::string s = "[";
    for (int i = 0; i < n; ++i) s += (i ? ", " : "") + std::to_string(ne[i]);
    return s + "]";
}

ggml_context_ptr tensor_context(const gguf_file & f) {
    ggml_init_params ip;
    ip.mem_size = ggml_tensor_overhead() * (f.n_tensors() + 8);
    ip.no_alloc = true;
    return ggml_context_ptr(ggml_init(ip));
}

}  // namespace

model_loader::model_loader(model & m) : m_(m), measuring_(true) {
    scratch_ = tensor_context(*m.file_);
    bytes_.layer.assign(m.hparams_.n_layer, 0);
}

model_loader::model_loader(model & m, const layer_placement & pl, const std::vector<ggml_backend_device_i *> & gpus)
    : m_(m), measuring_(false), pl_(pl) {
    bytes_.layer.assign(m.hparams_.n_layer, 0);
    m_.ctx_cpu_ = tensor_context(*m.file_);
    m_.layer_dev_.assign(m.hparams_.n_layer, nullptr);
    // Only the GPUs that get something keep a context; indices in pl_ are remapped to them.
    std::vector<int> remap(gpus.size(), -1);
    auto use = [&](int d) {
        if (d < 0) return -1;
        if (remap[size_t(d)] < 0) {
            remap[size_t(d)] = int(m_.gpu_devs_.size());
            m_.gpu_devs_.push_back(gpus[size_t(d)]);
            m_.ctx_dev_.push_back(tensor_context(*m.file_));
        }
        return remap[size_t(d)];
    };
    for (uint32_t il = 0; il < pl_.layer_dev.size(); ++il) {
        pl_.layer_dev[il] = use(pl_.layer_dev[il]);
        if (pl_.layer_dev[il] >= 0) m_.layer_dev_[il] = m_.gpu_devs_[size_t(pl_.layer_dev[il])];
    }
    pl_.output_dev = use(pl_.output_dev);
    if (pl_.output_dev >= 0) m_.output_dev_ = m_.gpu_devs_[size_t(pl_.output_dev)];
}

const gguf_tensor_info * model_loader::find_checked(const std::string & name, std::initializer_list<int64_t> ne) const {
    const gguf_tensor_info * info = m_.file_->find_tensor(name);
    if (!info) return nullptr;
    int64_t want[GGML_MAX_DIMS] = {1, 1, 1, 1};
    int n = 0;
    for (int64_t v : ne) want[n++] = v;
    for (int i = 0; i < GGML_MAX_DIMS; ++i) {
        if (info->ne[i] != want[i]) {
            throw model_load_error("tensor '" + name + "' has shape " + shape_str(info->ne, int(info->n_dims)) +
                                   ", expected " + shape_str(want, n));
        }
    }
    if (!ggml_type_is_supported(info->type)) {
        throw model_load_error("tensor '" + name + "' has unsupported type " + ggml_type_name(info->type));
    }
    return info;
}

int model_loader::device_of(int il) const {
    if (measuring_) return -1;
    if (il >= 0) return pl_.layer_dev.at(size_t(il));
    return il == -2 ? pl_.output_dev : -1;
}

ggml_context * model_loader::context_for(int il) {
    if (measuring_) return scratch_.get();
    const int d = device_of(il);
    return d >= 0 ? m_.ctx_dev_[size_t(d)].get() : m_.ctx_cpu_.get();
}

void model_loader::count(int il, const gguf_tensor_info & info) {
    if (il >= 0 && size_t(il) < bytes_.layer.size()) bytes_.layer[size_t(il)] += info.size;
    if (il == -2) bytes_.output += info.size;
}

ggml_tensor * model_loader::create(const std::string & name, std::initializer_list<int64_t> ne, int il) {
    ggml_tensor * t = create_optional(name, ne, il);
    if (!t) throw model_load_error("missing tensor '" + name + "'");
    return t;
}

ggml_tensor * model_loader::create_optional(const std::string & name, std::initializer_list<int64_t> ne, int il) {
    const gguf_tensor_info * info = find_checked(name, ne);
    if (!info) return nullptr;
    ggml_tensor * t = ggml_new_tensor(context_for(il), info->type, int(ne.size()), ne.begin());
    ggml_set_name(t, name.c_str());
    count(il, *info);
    if (measuring_) return t;
    infos_.push_back({t, info});
    used_.insert(name);
    m_.n_params_ += uint64_t(info->n_elements);
    m_.n_weight_bytes_ += info->size;
    return t;
}

// The token embeddings serve as the output matrix: the same tensor while the output layer is
// on the CPU; on a GPU a copy of the file's bytes there (the embeddings themselves are read row
// by row on the CPU), counted once in the model's parameters.
ggml_tensor * model_loader::create_tied_output(ggml_tensor * tok_embd) {
    const gguf_tensor_info * info = m_.file_->find_tensor(ggml_get_name(tok_embd));
    GGML_ASSERT(info != nullptr);
    count(-2, *info);
    m_.output_tied_ = true;
    if (measuring_ || device_of(-2) < 0) return tok_embd;
    ggml_tensor * t = ggml_new_tensor(context_for(-2), tok_embd->type, ggml_n_dims(tok_embd), tok_embd->ne);
    ggml_format_name(t, "%s (output)", ggml_get_name(tok_embd));
    infos_.push_back({t, info});
    return t;
}

int64_t model_loader::file_ne(const std::string & name, int dim) const {
    const gguf_tensor_info * info = m_.file_->find_tensor(name);
    if (!info || dim < 0 || dim >= GGML_MAX_DIMS) return -1;
    return info->ne[dim];
}

// A CPU weight that only MUL_MAT reads as its first operand and that has a repacked layout:
// 2-D matrices named *.weight, not the embeddings that GET_ROWS reads (the token embeddings
// also when they serve as the tied output matrix).
bool model_loader::repack_wanted(const entry & e) const {
    if (e.t->buffer || !ggml_backend_cpu_repack_supported(e.t)) return false;
    const model_weights & w = m_.weights_;
    if (e.t == w.tok_embd || e.t == w.pos_embd || e.t == w.type_embd) return false;
    const std::string & name = e.info->name;
    const std::string suffix = ".weight";
    return name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The listed tensors in one buffer of the CPU's repack buffer type, repacked from the file's
// bytes; with a mapped file, the pages that only those tensors used are dropped from memory
// (unlocked first: locked pages cannot be dropped). With mlock the buffer is locked as well.
void model_loader::bind_repacked(const std::vector<const entry *> & list, const bind_options & opt) {
    ggml_backend_buffer_type_i * buft = ggml_backend_cpu_repack_buffer_type();
    const size_t align = buft->alignment();
    size_t total = 0;
    for (const entry * e : list) total += (buft->alloc_size(e->t) + align - 1) / align * align;
    ggml_backend_buffer_ptr buf = buft->alloc_buffer(total);
    if (!buf) throw model_load_error("out of memory for the repacked weights");
    buf->set_usage(ggml_backend_buffer_usage::weights);
    auto * base = static_cast<uint8_t *>(buf->base());
    size_t off = 0;
    const uintptr_t page = uintptr_t(sysconf(_SC_PAGESIZE));
    for (const entry * e : list) {
        if (ggml_backend_tensor_alloc(buf.get(), e->t, base + off) != GGML_STATUS_SUCCESS) {
            throw model_load_error("cannot place tensor '" + e->info->name + "'");
        }
        off += (buft->alloc_size(e->t) + align - 1) / align * align;
        const void * src = m_.file_->tensor_data(*e->info);
        ggml_backend_tensor_set(e->t, src, 0, e->info->size);
        if (!opt.mmap) continue;
        const uintptr_t begin = (reinterpret_cast<uintptr_t>(src) + page - 1) / page * page;
        const uintptr_t end = (reinterpret_cast<uintptr_t>(src) + e->info->size) / page * page;
        if (end <= begin) continue;
        if (opt.mlock) munlock(reinterpret_cast<void *>(begin), end - begin);
        madvise(reinterpret_cast<void *>(begin), end - begin, MADV_DONTNEED);
    }
    if (opt.mlock && mlock(base, total) == 0) {
        m_.locked_.emplace_back(base, total);
    } else if (opt.mlock) {
        m_.warnings_.push_back("mlock of the repacked weights (" + std::to_string(total >> 20) + " MiB) refused (" +
                               std::strerror(errno) + "): they may be paged out");
    }
    m_.buffers_.push_back(std::move(buf));
}

void model_loader::bind_data(const bind_options & opt) {
    const gguf_file & f = *m_.file_;
    if (!f.has_tensor_data()) throw model_load_error("the file's tensor data cannot be read");
    // The CPU buffer spans the file's whole data section: tensors point into it, no copy.
    const uint8_t * data_begin = nullptr;
    size_t data_size = 0;
    if (f.n_tensors() > 0) {
        data_begin = static_cast<const uint8_t *>(f.tensor_data(f.tensor(0))) - f.tensor(0).offset;
        data_size = f.file_size() - f.data_offset();
    }
    ggml_backend_buffer_ptr cpu_buf;
    if (data_begin) {
        cpu_buf = ggml_backend_cpu_buffer_from_ptr(const_cast<uint8_t *>(data_begin), data_size);
        cpu_buf->set_usage(ggml_backend_buffer_usage::weights);
    }
    for (size_t d = 0; d < m_.ctx_dev_.size(); ++d) {
        if (!ggml_get_first_tensor(m_.ctx_dev_[d].get())) continue;
        ggml_backend_buffer_ptr buf = ggml_backend_alloc_ctx_tensors(m_.ctx_dev_[d].get(), m_.gpu_devs_[d]->buffer_type());
        if (!buf) throw model_load_error(std::string("out of memory on ") + m_.gpu_devs_[d]->name() + " for the weights");
        buf->set_usage(ggml_backend_buffer_usage::weights);
        m_.buffers_.push_back(std::move(buf));
    }
    std::vector<const entry *> repacked;
    for (const entry & e : infos_) {
        if (opt.repack && repack_wanted(e)) {
            repacked.push_back(&e);
            continue;
        }
        const void * src = f.tensor_data(*e.info);
        if (e.t->buffer) {  // device tensor: allocated above, copy the bytes
            ggml_backend_tensor_set(e.t, src, 0, e.info->size);
        } else if (ggml_backend_tensor_alloc(cpu_buf.get(), e.t, const_cast<void *>(src)) != GGML_STATUS_SUCCESS) {
            throw model_load_error("cannot place tensor '" + e.info->name + "'");
        }
    }
    if (!repacked.empty()) bind_repacked(repacked, opt);
    if (cpu_buf) m_.buffers_.push_back(std::move(cpu_buf));
}

void model_loader::report_unused() {
    size_t n = 0;
    std::string first;
    for (const gguf_tensor_info & t : m_.file_->tensors()) {
        if (!used_.count(t.name)) {
            if (n++ == 0) first = t.name;
        }
    }
    if (n > 0) {
        m_.warnings_.push_back(std::to_string(n) + " tensor(s) of the file are not used by the " +
                               llm_arch_name(m_.hparams_.arch) + " graph (first: '" + first + "')");
    }
}
