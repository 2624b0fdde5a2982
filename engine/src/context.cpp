// Context construction (backends, scheduler, KV cache), accessors and sequence operations.
#include "context-impl.h"

#include "model-placement.h"

#include "ggml/cpu.h"

#include <algorithm>
#include <stdexcept>
#include <thread>

namespace {

void check_params(const model & m, context_params & p) {
    const model_hparams & hp = m.hparams();
    if (m.vocab_only()) throw std::runtime_error("context: the model was loaded vocabulary-only");
    if (p.n_ctx == 0) p.n_ctx = std::min<uint32_t>(hp.n_ctx_train, 4096);
    if (!hp.use_rope && p.n_ctx > hp.n_ctx_train && p.embeddings) p.n_ctx = hp.n_ctx_train;  // the longest sequence
    if (!hp.use_rope && p.n_ctx > hp.n_ctx_train) {
        throw std::runtime_error("context: n_ctx " + std::to_string(p.n_ctx) + " exceeds the " +
                                 std::to_string(hp.n_ctx_train) + " learned positions of this model");
    }
    if (p.n_ubatch == 0 || p.n_batch == 0) throw std::runtime_error("context: n_batch and n_ubatch must be positive");
    p.n_ubatch = std::min(p.n_ubatch, p.n_batch);
    if (p.n_seq_max == 0 || p.n_seq_max > kv_cache_max_seq) {
        throw std::runtime_error("context: n_seq_max must be 1.." + std::to_string(kv_cache_max_seq));
    }
    if (p.kv_pad == 0) p.kv_pad = 1;
    for (ggml_type t : {p.type_k, p.type_v}) {
        if (t != GGML_TYPE_F16 && t != GGML_TYPE_F32 && t != GGML_TYPE_Q8_0) {
            throw std::runtime_error(std::string("context: KV cache type ") + ggml_type_name(t) +
                                     " is not supported (f16, f32, q8_0)");
        }
    }
    if (p.type_v == GGML_TYPE_Q8_0 && !p.flash_attn) {
        throw std::runtime_error("context: a q8_0 V cache needs flash attention");
    }
    if (ggml_blck_size(p.type_k) > 1 && m.hparams().n_embd_head_k % ggml_blck_size(p.type_k) != 0) {
        throw std::runtime_error("context: the head size is not a multiple of the K cache type's block");
    }
    if (ggml_blck_size(p.type_v) > 1 && m.hparams().n_embd_head_v % ggml_blck_size(p.type_v) != 0) {
        throw std::runtime_error("context: the head size is not a multiple of the V cache type's block");
    }
    if (!p.embeddings && !m.weights().output) {
        throw std::runtime_error(std::string("context: this ") + llm_arch_name(hp.arch) +
                                 " model has no output layer for logits (create the context with embeddings = true)");
    }
    if (p.causal < -1 || p.causal > 1) throw std::runtime_error("context: causal must be -1, 0 or 1");
}

}  // namespace

context::context(const model & m, const context_params & params) : impl_(std::make_unique<impl>(m, params)) {
    impl & s = *impl_;
    check_params(m, s.params);
    s.arch = llm_arch_find(llm_arch_name(m.hparams().arch));
    s.start_backends();
    if (s.params.embeddings) {
        s.init_embd();
    } else {
        s.create_kv_caches();
    }

    const model_hparams & hp = m.hparams();
    // embeddings graphs gather and scatter around each attention
    s.graph_size = std::max<size_t>(GGML_DEFAULT_GRAPH_SIZE, size_t(hp.n_layer) * (s.params.embeddings ? 80 : 48) + 64);
    ggml_sched_params sp;
    for (auto & b : s.backends) sp.backends.push_back({b.get(), nullptr});
    sp.graph_size = s.graph_size;
    sp.op_offload = s.params.op_offload;
    s.sched = std::make_unique<ggml_scheduler>(sp);
    s.reserve_worst_case();
}

// The KV caches: one for the layers that attend to every cell, one for the sliding-window layers.
void context::impl::create_kv_caches() {
    const model_hparams & hp = m.hparams();
    kv_cache_params kp;
    kp.n_ctx = params.n_ctx;
    kp.n_layer = hp.n_layer;
    kp.n_embd_k_gqa = hp.n_embd_k_gqa();
    kp.n_embd_v_gqa = hp.n_embd_v_gqa();
    kp.type_k = params.type_k;
    kp.type_v = params.type_v;
    kp.n_seq_max = params.n_seq_max;
    // Each layer's K and V on the device of its weights.
    for (uint32_t il = 0; il < hp.n_layer; ++il) {
        ggml_backend_device_i * dev = m.layer_device(il);
        kp.layer_buft.push_back(dev ? dev->buffer_type() : nullptr);
    }
    for (uint32_t il = 0; il < hp.n_layer; ++il) (hp.is_swa(il) ? swa_layers : full_layers).push_back(il);
    if (!full_layers.empty()) {
        kp.layers = full_layers;
        kv = std::make_unique<kv_cache>(kp, cpu->device()->buffer_type());
    }
    if (!swa_layers.empty()) {
        // Each sequence keeps at most its window, plus the ubatch being computed.
        kp.layers = swa_layers;
        kp.n_swa = hp.n_swa;
        kp.n_ctx = kv_swa_cells(hp.n_swa, params.n_seq_max, params.n_ubatch, params.kv_pad, params.n_ctx);
        kv_swa = std::make_unique<kv_cache>(kp, cpu->device()->buffer_type());
    }
}

// The model's GPU devices first (every GPU found when large batches may be offloaded, else
// those holding weights), then the CPU, all from the devices the model was placed with.
void context::impl::start_backends() {
    const std::vector<ggml_backend_device_i *> & gpus = params.op_offload ? m.available_gpu_devices() : m.gpu_devices();
    for (ggml_backend_device_i * dev : gpus) {
        ggml_backend_ptr b = dev->init_backend();
        if (!b) throw std::runtime_error(std::string("context: cannot start a backend on ") + dev->name());
        backends.push_back(std::move(b));
    }
    ggml_backend_ptr c = m.cpu_device() ? m.cpu_device()->init_backend() : ggml_backend_cpu_init();
    if (!c) throw std::runtime_error("context: cannot start the CPU backend");
    ggml_backend_cpu_set_n_threads(c.get(), params.n_threads > 0 ? params.n_threads
                                                                  : int(std::max(1u, std::thread::hardware_concurrency())));
    backends.push_back(std::move(c));
    cpu = backends.back().get();
}

context::~context() = default;

const std::string & context::last_error() const { return impl_->error; }

const float * context::logits(int32_t i) const {
    const impl & s = *impl_;
    if (s.params.embeddings) return nullptr;
    if (i < 0 || size_t(i) >= s.output_row.size() || s.output_row[size_t(i)] < 0) return nullptr;
    return s.logits.data() + size_t(s.output_row[size_t(i)]) * size_t(n_vocab());
}

int32_t context::n_vocab() const { return impl_->m.hparams().n_vocab; }
uint32_t context::n_ctx() const { return impl_->params.n_ctx; }
const context_params & context::params() const { return impl_->params; }
const model & context::get_model() const { return impl_->m; }
const kv_cache & context::kv() const { return impl_->main_cache(); }
const kv_cache * context::kv_swa() const { return impl_->kv_swa.get(); }
uint64_t context::n_graph_builds() const { return impl_->n_builds; }
uint64_t context::n_graph_computes() const { return impl_->n_computes; }

bool context::seq_rm(int32_t seq, int32_t p0, int32_t p1) {
    bool ok = true;
    impl_->each_cache([&](kv_cache & c) { ok = c.seq_rm(seq, p0, p1) && ok; });
    return ok;
}
bool context::seq_cp(int32_t src, int32_t dst, int32_t p0, int32_t p1) {
    bool ok = true;
    impl_->each_cache([&](kv_cache & c) { ok = c.seq_cp(src, dst, p0, p1) && ok; });
    return ok;
}
bool context::seq_keep(int32_t seq) {
    bool ok = true;
    impl_->each_cache([&](kv_cache & c) { ok = c.seq_keep(seq) && ok; });
    return ok;
}
bool context::seq_add(int32_t seq, int32_t p0, int32_t p1, int32_t delta) {
    bool ok = true;
    impl_->each_cache([&](kv_cache & c) { ok = c.seq_add(seq, p0, p1, delta) && ok; });
    return ok;
}
int32_t context::seq_pos_max(int32_t seq) const { return impl_->main_cache().seq_pos_max(seq); }
bool context::seq_resumable(int32_t seq, int32_t p) const {
    return !impl_->kv_swa || impl_->kv_swa->seq_resumable(seq, p);
}
void context::clear() {
    impl_->each_cache([](kv_cache & c) { c.clear(); });
}

std::vector<std::string> context::backend_names() const {
    std::vector<std::string> out;
    for (const auto & b : impl_->backends) out.emplace_back(b->name());
    return out;
}

void context::set_eval_callback(std::function<bool(ggml_tensor *, bool)> cb) { impl_->sched->set_eval_callback(std::move(cb)); }
