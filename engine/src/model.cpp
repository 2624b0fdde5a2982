// Model loading: GGUF file, architecture, hyper-parameters, vocabulary, weight tensors and their
// placement (CPU: in place in the mapped file; GPU layers: copied to the device).
#include "engine/model.h"

#include "ggml/cpu.h"
#include "models/arch.h"

#include <algorithm>
#include <cinttypes>
#include <set>
#include <sstream>

namespace {

std::string shape_str(const int64_t * ne, int n) {
    std::string s = "[";
    for (int i = 0; i < n; ++i) s += (i ? ", " : "") + std::to_string(ne[i]);
    return s + "]";
}

}  // namespace

// Creates weight tensors (metadata only) in the context of the device their layer lives on and
// remembers where their bytes are in the file.
class model_loader final : public tensor_creator {
public:
    model_loader(model & m, int n_gpu_layers) : m_(m) { plan_placement(n_gpu_layers); }

    ggml_tensor * create(const std::string & name, std::initializer_list<int64_t> ne, int il) override {
        ggml_tensor * t = create_optional(name, ne, il);
        if (!t) throw model_load_error("missing tensor '" + name + "'");
        return t;
    }

    ggml_tensor * create_optional(const std::string & name, std::initializer_list<int64_t> ne, int il) override {
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
        ggml_context * ctx = context_for(il);
        ggml_tensor * t = ggml_new_tensor(ctx, info->type, n, want);
        ggml_set_name(t, name.c_str());
        infos_.push_back({t, info});
        used_.insert(name);
        m_.n_params_ += uint64_t(info->n_elements);
        m_.n_weight_bytes_ += info->size;
        return t;
    }

    void bind_data();
    void report_unused();

private:
    struct entry {
        ggml_tensor * t;
        const gguf_tensor_info * info;
    };

    void plan_placement(int n_gpu_layers);
    ggml_context * context_for(int il);

    model & m_;
    std::vector<entry> infos_;
    std::set<std::string> used_;
};

void model_loader::plan_placement(int n_gpu_layers) {
    const uint32_t n_layer = m_.hparams_.n_layer;
    m_.layer_dev_.assign(n_layer, nullptr);
    ggml_init_params ip;
    ip.mem_size = ggml_tensor_overhead() * (m_.file_->n_tensors() + 8);
    ip.no_alloc = true;
    m_.ctx_cpu_.reset(ggml_init(ip));
    if (n_gpu_layers == 0) return;
    if (m_.gpu_devs_.empty()) {
        m_.warnings_.push_back("--n-gpu-layers " + std::to_string(n_gpu_layers) +
                               " asked for, but no GPU backend is available (this build has no GPU backend "
                               "or no GPU was found): running every layer on the CPU");
        return;
    }
    // One device for now: the first GPU. Layers [n_layer - n_gpu, n_layer) and, when every
    // layer is offloaded and more were asked for (or -1), the output layer.
    ggml_backend_device_i * dev = m_.gpu_devs_.front();
    m_.gpu_devs_.resize(1);
    const uint32_t n_gpu = n_gpu_layers < 0 ? n_layer : std::min<uint32_t>(uint32_t(n_gpu_layers), n_layer);
    for (uint32_t il = n_layer - n_gpu; il < n_layer; ++il) m_.layer_dev_[il] = dev;
    if (n_gpu_layers < 0 || uint32_t(n_gpu_layers) > n_layer) m_.output_dev_ = dev;
    m_.ctx_dev_.emplace_back(ggml_init(ip));
}

ggml_context * model_loader::context_for(int il) {
    ggml_backend_device_i * dev = nullptr;
    if (il >= 0) dev = m_.layer_dev_.at(size_t(il));
    if (il == -2) dev = m_.output_dev_;
    return dev ? m_.ctx_dev_.front().get() : m_.ctx_cpu_.get();
}

void model_loader::bind_data() {
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
    ggml_backend_buffer_ptr dev_buf;
    if (!m_.ctx_dev_.empty() && ggml_get_first_tensor(m_.ctx_dev_.front().get())) {
        dev_buf = ggml_backend_alloc_ctx_tensors(m_.ctx_dev_.front().get(), m_.gpu_devs_.front()->buffer_type());
        if (!dev_buf) throw model_load_error(std::string("out of memory on ") + m_.gpu_devs_.front()->name());
        dev_buf->set_usage(ggml_backend_buffer_usage::weights);
    }
    for (const entry & e : infos_) {
        const void * src = f.tensor_data(*e.info);
        if (e.t->buffer) {  // device tensor: allocated above, copy the bytes
            ggml_backend_tensor_set(e.t, src, 0, e.info->size);
        } else if (ggml_backend_tensor_alloc(cpu_buf.get(), e.t, const_cast<void *>(src)) != GGML_STATUS_SUCCESS) {
            throw model_load_error("cannot place tensor '" + e.info->name + "'");
        }
    }
    if (cpu_buf) m_.buffers_.push_back(std::move(cpu_buf));
    if (dev_buf) m_.buffers_.push_back(std::move(dev_buf));
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

namespace {

void load_vocab_and_template(vocab & v, tokenizer & tok, std::string & tmpl,
                             std::vector<std::string> & warnings, const gguf_file & f) {
    std::string err;
    if (!v.load(f.metadata(), &err)) throw model_load_error(err);
    if (v.type() != vocab_type::none) {
        if (!tok.init(v, &err)) throw model_load_error(err);
        for (const std::string & w : tok.warnings()) warnings.push_back(w);
    }
    if (f.metadata().contains("tokenizer.chat_template") &&
        !f.metadata().get_string("tokenizer.chat_template", &tmpl)) {
        throw model_load_error("tokenizer.chat_template is not a string");
    }
}

std::vector<ggml_backend_device_i *> gpu_devices_of(const model_params & p, ggml_backend_registry & reg) {
    if (!p.devices.empty()) return p.devices;
    std::vector<ggml_backend_device_i *> out;
    for (size_t i = 0; i < reg.device_count(); ++i) {
        if (reg.device(i)->type() == ggml_backend_dev_type::gpu) out.push_back(reg.device(i));
    }
    return out;
}

}  // namespace

model::~model() = default;

std::unique_ptr<model> model::load(const std::string & path, const model_params & params) {
    std::unique_ptr<model> m(new model());
    m->path_ = path;
    gguf_open_options oo;
    oo.mode = params.use_mmap ? gguf_load_mode::mmap : gguf_load_mode::read;
    oo.load_tensor_data = !params.vocab_only;
    const gguf_result r = gguf_file::open(path, oo, &m->file_);
    if (!r) throw model_load_error(path + ": " + r.message);
    for (const std::string & w : m->file_->warnings()) m->warnings_.push_back(w);
    try {
        load_vocab_and_template(m->vocab_, m->tokenizer_, m->chat_template_, m->warnings_, *m->file_);
        m->vocab_only_ = params.vocab_only;
        if (params.vocab_only) return m;
        std::string arch_name;
        if (!m->file_->metadata().get_string("general.architecture", &arch_name)) {
            throw model_load_error("missing key 'general.architecture'");
        }
        const llm_arch_def * def = llm_arch_find(arch_name);
        if (!def) {
            throw model_load_error("unknown architecture '" + arch_name + "' (supported: " + llm_arch_list() + ")");
        }
        m->hparams_.arch = def->arch;
        def->load_hparams(hparams_reader(m->file_->metadata(), arch_name), m->hparams_);
        m->hparams_.n_vocab = m->vocab_.n_tokens();
        if (m->hparams_.n_vocab <= 0) throw model_load_error("the model has no vocabulary (tokenizer.ggml.tokens)");
        m->registry_ = std::make_unique<ggml_backend_registry>(ggml_backend_registry_default());
        m->gpu_devs_ = gpu_devices_of(params, *m->registry_);
        model_loader loader(*m, params.n_gpu_layers);
        def->create_tensors(loader, m->hparams_, m->weights_);
        loader.report_unused();
        loader.bind_data();
    } catch (const model_load_error & e) {
        throw model_load_error(path + ": " + e.what());
    }
    return m;
}

std::string model::file_type_name() const {
    uint64_t fid = 0;
    if (!file_ || !file_->metadata().get_uint("general.file_type", &fid)) return "";
    // ids 4..6 are retired formats (Q4_1_F16, Q4_2, Q4_3) that no loader reads any more
    static const char * const names[] = {"F32",    "F16",    "Q4_0",   "Q4_1",   "",       "",     "",
                                         "Q8_0",   "Q5_0",   "Q5_1",   "Q2_K",   "Q3_K_S", "Q3_K_M", "Q3_K_L",
                                         "Q4_K_S", "Q4_K_M", "Q5_K_S", "Q5_K_M", "Q6_K"};
    if (fid < sizeof(names) / sizeof(names[0])) return names[fid];
    switch (fid) {
        case 25: return "IQ4_NL";
        case 30: return "IQ4_XS";
        case 32: return "BF16";
        case 38: return "MXFP4_MOE";
        default: return "";
    }
}

std::string model::description() const {
    std::ostringstream os;
    os << llm_arch_name(hparams_.arch) << " " << hparams_.n_embd << "x" << hparams_.n_layer << ", "
       << double(n_params_) / 1e6 << "M params, " << double(n_weight_bytes_) / (1024.0 * 1024.0) << " MiB";
    return os.str();
}
