// Model loading: GGUF file, architecture, hyper-parameters, vocabulary, weight tensors and their
// placement (CPU: in place in the mapped file; GPU layers: copied to the device).
#include "engine/model.h"

#include "ggml/cpu.h"
#include "model-loader.h"
#include "model-placement.h"
#include "models/arch.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cinttypes>
#include <sstream>
#include <sys/mman.h>

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

// INFERD_NO_REPACK set to a true value (1, true, yes, on; any case), as the daemon's
// configuration reads the same variable.
bool repack_disabled_by_env() {
    const char * v = std::getenv("INFERD_NO_REPACK");
    if (!v) return false;
    std::string s(v);
    for (char & c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
    return s == "1" || s == "true" || s == "yes" || s == "on";
}

}  // namespace

model::~model() {
    for (const auto & [addr, size] : locked_) munlock(addr, size);
}

// Measures the weights per layer, places the layers on the GPUs, checks every device's memory
// (weights, and with params.memory the K/V cells and compute buffers) before anything is
// copied, then creates the tensors on their devices and binds their bytes.
void model::place_and_load(model & m, const llm_arch_def & def, const model_params & params) {
    model_loader measure(m);
    model_weights scratch;
    def.create_tensors(measure, m.hparams_, scratch);
    const std::vector<ggml_backend_device_i *> & gpus = m.avail_gpus_;
    if (params.n_gpu_layers != 0 && gpus.empty()) {
        m.warnings_.push_back("--n-gpu-layers " + std::to_string(params.n_gpu_layers) +
                              " asked for, but no GPU backend is available (this build has no GPU backend "
                              "or no GPU was found): running every layer on the CPU");
    }
    std::vector<size_t> free(gpus.size(), 0);
    for (size_t d = 0; d < gpus.size(); ++d) {
        size_t total = 0;
        gpus[d]->memory(&free[d], &total);
    }
    const layer_placement pl = placement_plan(m.hparams_.n_layer, params.n_gpu_layers, free);
    std::vector<model_device_usage> usage = placement_usage(pl, measure.bytes(), m.hparams_, params.memory, gpus);
    if (const std::string err = placement_check(usage); !err.empty()) {
        const int32_t fit = placement_max_fitting(measure.bytes(), m.hparams_, params.memory, gpus, free);
        throw model_load_error(err + "; at most " + std::to_string(fit) + " of the " +
                               std::to_string(m.hparams_.n_layer) + " layers fit" +
                               (fit > int32_t(m.hparams_.n_layer) ? " (with the output layer)" : "") +
                               ": lower --n-gpu-layers" + (params.memory.n_ctx > 0 ? " or --ctx-size" : ""));
    }
    for (const model_device_usage & u : usage) {
        if (u.n_layers > 0 || u.output) m.usage_.push_back(u);
    }
    model_loader loader(m, pl, gpus);
    def.create_tensors(loader, m.hparams_, m.weights_);
    if (m.weights_.cls_out) m.hparams_.n_cls_out = uint32_t(m.weights_.cls_out->ne[1]);
    loader.report_unused();
    model_loader::bind_options bo;
    bo.repack = params.repack && gpus.empty() && !repack_disabled_by_env();
    bo.mmap = params.use_mmap;
    bo.mlock = params.use_mlock;
    loader.bind_data(bo);
}

std::unique_ptr<model> model::load(const std::string & path, const model_params & params) {
    std::unique_ptr<model> m(new model());
    m->path_ = path;
    gguf_open_options oo;
    oo.mode = params.use_mmap ? gguf_load_mode::mmap : gguf_load_mode::read;
    oo.load_tensor_data = !params.vocab_only;
    oo.mlock = params.use_mlock && !params.vocab_only;
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
        const hparams_reader reader(m->file_->metadata(), arch_name);
        def->load_hparams(reader, m->hparams_);
        llm_load_embd_hparams(reader, m->hparams_);
        m->hparams_.n_vocab = m->vocab_.n_tokens();
        if (m->hparams_.n_vocab <= 0) throw model_load_error("the model has no vocabulary (tokenizer.ggml.tokens)");
        m->registry_ = std::make_unique<ggml_backend_registry>(ggml_backend_registry_default());
        m->avail_gpus_ = gpu_devices_of(params, *m->registry_);
        m->cpu_dev_ = m->registry_->device_by_type(ggml_backend_dev_type::cpu);
        place_and_load(*m, *def, params);
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

std::string model::chat_template_named(std::string_view name) const {
    std::string key = "tokenizer.chat_template.";
    key += name;
    std::string out;
    if (!file_ || !file_->metadata().get_string(key, &out)) return "";
    return out;
}

std::string model::description() const {
    std::ostringstream os;
    os << llm_arch_name(hparams_.arch) << " " << hparams_.n_embd << "x" << hparams_.n_layer << ", "
       << double(n_params_) / 1e6 << "M params, " << double(n_weight_bytes_) / (1024.0 * 1024.0) << " MiB";
    return os.str();
}
