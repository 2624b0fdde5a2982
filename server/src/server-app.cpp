// The daemon assembled: model loading in the background, batch loop, routes, auth, shutdown.
#include "api/info-response.h"
#include "api/tokenize.h"
#include "engine/chat-render.h"
#include "debug-faults.h"
#include "server-app-impl.h"
#include "webui.h"
#include "spec-draft.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>

namespace {

ggml_type cache_type(config_cache_type t) {
    switch (t) {
        case config_cache_type::f32: return GGML_TYPE_F32;
        case config_cache_type::q8_0: return GGML_TYPE_Q8_0;
        case config_cache_type::f16: break;
    }
    return GGML_TYPE_F16;
}

}  // namespace

server_app::server_app(const server_config & cfg, std::shared_ptr<spdlog::logger> log)
    : impl_(std::make_unique<impl>()) {
    impl_->cfg = cfg;
    impl_->log = std::move(log);
    impl_->created = int64_t(std::time(nullptr));
    impl_->model_id = cfg.alias.empty() ? std::filesystem::path(cfg.model_path).filename().string() : cfg.alias;
}

server_app::~server_app() {
    shutdown();
    if (impl_->loader.joinable()) impl_->loader.join();
}

bool server_app::start(std::string * error) {
    impl & s = *impl_;
    s.add_routes();
    if (!s.add_webui(error)) return false;
    http_server_options o;
    o.host = s.cfg.host;
    o.port = uint16_t(s.cfg.port);
    o.n_io_threads = s.cfg.io_threads;
    o.max_body_size = s.cfg.max_body_size;
    o.header_timeout = s.cfg.header_timeout;
    o.idle_timeout = s.cfg.idle_timeout;
    o.body_timeout = s.cfg.body_timeout;
    o.write_timeout = s.cfg.write_timeout;
    o.cors_origins = s.cfg.cors_origins;
    o.log_json = s.cfg.log_format == config_log_format::json;
    o.max_connections = size_t(s.cfg.max_connections);
    o.tls_cert_file = s.cfg.ssl_cert_file;
    o.tls_key_file = s.cfg.ssl_key_file;
    o.on_refused = [&s] { s.metrics.connection_refused(); };
    s.compiles = std::make_unique<compile_pool>(size_t(s.cfg.compile_threads), size_t(s.cfg.max_queue));
    s.http = std::make_unique<http_server>(o, s.router, s.log);
    if (!s.http->start(error)) return false;
    s.log->info("listening on {}://{}:{} (model {} loading)", s.cfg.ssl_cert_file.empty() ? "http" : "https", s.cfg.host,
                s.http->port(), s.cfg.model_path);
    if (s.cfg.webui) {
        const std::string host = s.cfg.host.find(':') != std::string::npos ? "[" + s.cfg.host + "]" : s.cfg.host;
        s.log->info("chat page: {}://{}:{}/", s.cfg.ssl_cert_file.empty() ? "http" : "https",
                    host == "0.0.0.0" || host == "[::]" ? std::string("127.0.0.1") : host, s.http->port());
    }
    s.loader = std::thread([&s] { s.load_model(); });
    return true;
}

// The chat page at / (unless --no-webui): the built-in one, or the --webui-path folder's.
bool server_app::impl::add_webui(std::string * error) {
    if (!cfg.webui) return true;
    std::unique_ptr<webui_source> src;
    if (!cfg.webui_path.empty()) {
        src = webui_folder(cfg.webui_path, error);
        if (!src) return false;
    } else {
        src = webui_builtin();
        if (!src) {
            log->warn("this build has no chat page (webui/ was empty when it was compiled)");
            return true;
        }
    }
    webui_add_routes(router, std::move(src), [this](const std::string & path, int status) {
        metrics.request_done(path, status, 0.0);
    });
    return true;
}

// INFERD_DEBUG_LOAD_DELAY_MS=N holds the model load back N ms, so that health probes (and the
// tests) can see the "loading" state; a shutdown cuts it short.
void server_app::impl::debug_load_delay() {
    const char * v = std::getenv("INFERD_DEBUG_LOAD_DELAY_MS");
    if (!v || !*v) return;
    char * end = nullptr;
    const long ms = std::strtol(v, &end, 10);
    if (*end != '\0' || ms <= 0 || ms > 600000) {
        log->warn("INFERD_DEBUG_LOAD_DELAY_MS={} ignored (expected 1..600000)", v);
        return;
    }
    log->warn("holding the model load back {} ms (INFERD_DEBUG_LOAD_DELAY_MS)", ms);
    std::unique_lock<std::mutex> lk(mu);
    cv.wait_for(lk, std::chrono::milliseconds(ms), [this] { return shutting_down || stopped; });
}

// The model's tokenizer.chat_template.tool_use, for requests with tools (unless --chat-template
// chose a template); a variant the engine cannot parse is left out with a warning.
void server_app::impl::load_tool_template(const chat_special_texts & sp) {
    const std::string source = cfg.chat_template.empty() ? mdl->chat_template_named("tool_use") : "";
    if (source.empty()) return;
    std::string note, err;
    std::shared_ptr<const chat_renderer> r = chat_renderer::create("", source, sp, &note, &err);
    if (r && note.empty()) {
        chat_tools = std::move(r);
        log->info("requests with tools use the model's tool_use chat template");
    } else {
        log->warn("the model's tool_use chat template is not used: {}", note.empty() ? err : note);
    }
}

// Embeddings: on with --embeddings, and by themselves for encoder-only models (which have no
// generation context). Pooling: --pooling, else the model's, else last for decoders (as
// Qwen3-Embedding is used) and mean for encoders.
void server_app::impl::set_embedding_params(batch_loop_params & bp) const {
    const bool encoder = mdl->hparams().arch == llm_arch::bert;
    bp.generation = !encoder;
    bp.embeddings = cfg.embeddings || encoder;
    if (!bp.embeddings) return;
    pooling_type p = mdl->hparams().pooling;
    if (p == pooling_type::none || p == pooling_type::unspecified) p = encoder ? pooling_type::mean : pooling_type::last;
    for (pooling_type q : {pooling_type::none, pooling_type::mean, pooling_type::cls, pooling_type::last, pooling_type::rank}) {
        if (cfg.pooling == pooling_type_name(q)) p = q;
    }
    if (p == pooling_type::none) {
        throw std::runtime_error("pooling none gives a vector per token, not per input: the server needs mean, cls, "
                                 "last or rank (--pooling)");
    }
    bp.pooling = p;
}

// --model-draft: loaded like the model (same placement); refused unless it has the model's
// vocabulary.
void server_app::impl::load_draft_model(const model_params & mp) {
    try {
        draft_mdl = model::load(cfg.model_draft, mp);
    } catch (const std::exception & e) {
        throw std::runtime_error("the draft model: " + std::string(e.what()));
    }
    for (const std::string & w : draft_mdl->warnings()) log->warn("the draft model: {}", w);
    if (std::string why = spec_vocab_mismatch(*mdl, *draft_mdl); !why.empty()) {
        throw std::runtime_error("the draft model " + cfg.model_draft + " cannot draft for " + cfg.model_path +
                                 ": its vocabulary differs (" + why + ")");
    }
    log->info("draft model loaded: {}; drafts of {}..{} tokens, p-min {}", draft_mdl->description(), cfg.draft_min,
              cfg.draft_max, cfg.draft_p_min);
}

void server_app::impl::set_spec_params(batch_loop_params & bp) const {
    bp.spec.draft = draft_mdl.get();
    bp.spec.ngram = uint32_t(cfg.spec_ngram);
    bp.spec.n_max = cfg.draft_max;
    bp.spec.n_min = cfg.draft_min;
    bp.spec.p_min = cfg.draft_p_min;
    bp.spec.adaptive = cfg.spec_adaptive;
    if (!draft_mdl && cfg.spec_ngram > 0) {
        log->info("speculative decoding: n-gram lookup (suffixes of {}..1 tokens), drafts of {}..{} tokens",
                  cfg.spec_ngram, cfg.draft_min, cfg.draft_max);
    }
}

void server_app::impl::load_model() {
    debug_load_delay();
    try {
        model_params mp;
        mp.n_gpu_layers = cfg.n_gpu_layers;
        mp.repack = cfg.repack;
        mp.use_mmap = cfg.mmap;
        mp.use_mlock = cfg.mlock;
        // What the context will hold, so that a GPU placement that does not fit is refused
        // before the weights are copied (a context size of 0 becomes at most 4096 cells).
        mp.memory.n_ctx = cfg.ctx_size > 0 ? uint32_t(cfg.ctx_size) : 4096;
        mp.memory.n_ubatch = uint32_t(cfg.ubatch_size);
        mp.memory.n_seq_max = uint32_t(cfg.parallel);
        mp.memory.type_k = cache_type(cfg.cache_type_k);
        mp.memory.type_v = cache_type(cfg.cache_type_v);
        mp.memory.flash_attn = cfg.flash_attn;
        mdl = model::load(cfg.model_path, mp);
        for (const std::string & w : mdl->warnings()) log->warn("{}", w);
        if (!cfg.model_draft.empty()) load_draft_model(mp);
        for (const model_device_usage & u : mdl->device_usage()) {
            log->info("{}: {} layers{}, weights {:.2f} GiB, KV cache {:.2f} GiB, compute ~{:.2f} GiB ({:.2f} GiB free)",
                      u.device->name(), u.n_layers, u.output ? " and the output layer" : "",
                      double(u.weight_bytes) / (1 << 30), double(u.kv_bytes) / (1 << 30),
                      double(u.compute_bytes) / (1 << 30), double(u.free) / (1 << 30));
        }
        std::string note, err;
        const vocab & v = mdl->get_vocab();
        chat_special_texts sp;
        sp.bos = v.bos_id() >= 0 ? v.token_text(v.bos_id()) : "";
        sp.eos = v.eos_id() >= 0 ? v.token_text(v.eos_id()) : "";
        sp.add_bos = v.add_bos();
        chat = chat_renderer::create(cfg.chat_template, mdl->chat_template(), sp, &note, &err);
        if (!chat) throw std::runtime_error(err);
        template_kwargs = nlohmann::ordered_json::parse(cfg.chat_template_kwargs);  // checked by the flag
        if (!note.empty() && mdl->hparams().arch != llm_arch::bert) log->warn("{}", note);  // encoders do not chat
        load_tool_template(sp);
        batch_loop_params bp;
        bp.n_parallel = uint32_t(cfg.parallel);
        bp.max_queue = uint32_t(cfg.max_queue);
        bp.ctx.n_ctx = uint32_t(cfg.ctx_size);
        bp.ctx.n_batch = uint32_t(cfg.batch_size);
        bp.ctx.n_ubatch = uint32_t(cfg.ubatch_size);
        bp.ctx.n_threads = cfg.threads;
        bp.ctx.type_k = cache_type(cfg.cache_type_k);
        bp.ctx.type_v = cache_type(cfg.cache_type_v);
        bp.ctx.flash_attn = cfg.flash_attn;
        set_embedding_params(bp);
        set_spec_params(bp);
        bp.fault_hook = debug_fault_hook_from_env(*log);
        loop = std::make_unique<batch_loop>(*mdl, bp);
        loop->set_step_observer([this](int32_t n) { metrics.decode_step(size_t(n)); });
        loop->set_draft_observer([this](int32_t n, int32_t a) { metrics.add_draft_tokens(uint64_t(n), uint64_t(a)); });
        loop->set_spec_observer([this](const std::string & change) { log->info("{}", change); });
        loop->set_error_observer([this](uint64_t id, const std::string & what) {
            log->error("request {} failed: {}", id, what);
        });
        loop->start();
        server_model_info info;
        info.model = model_id;
        info.architecture = llm_arch_name(mdl->hparams().arch);
        info.quantization = mdl->file_type_name().empty() ? "unknown" : mdl->file_type_name();
        info.ctx_size = loop->n_ctx();
        info.parallel = cfg.parallel;
        metrics.set_model_info(info);
        if (loop->has_generation()) {
            log->info("model {} loaded: {}; context {} tokens, {} slots, chat template {}", model_id,
                      mdl->description(), loop->n_ctx(), cfg.parallel, chat->describe());
        }
        if (loop->has_embeddings()) {
            log->info("{}: {} pooling, {} floats per {}, inputs of at most {} tokens{}", loop->has_generation() ? "embeddings" : "embeddings only (an encoder)",
                      pooling_type_name(loop->embd_pooling()), loop->embd_size(),
                      loop->embd_pooling() == pooling_type::rank ? "pair (POST /v1/rerank)" : "input (POST /v1/embeddings)",
                      loop->embd_max_tokens(), cfg.embd_normalize || loop->embd_pooling() == pooling_type::rank ? "" : ", not normalized");
        }
        is_ready = true;
    } catch (const std::exception & e) {
        log->error("cannot load the model: {}", e.what());
        is_failed = true;
        std::lock_guard<std::mutex> lk(mu);
        stopped = true;
        cv.notify_all();
    }
}

uint16_t server_app::port() const { return impl_->http ? impl_->http->port() : 0; }
bool server_app::ready() const { return impl_->is_ready; }
bool server_app::failed() const { return impl_->is_failed; }

void server_app::shutdown() {
    impl & s = *impl_;
    {
        std::lock_guard<std::mutex> lk(s.mu);
        if (s.shutting_down) return;
        s.shutting_down = true;
        s.cv.notify_all();  // cuts a debugging load delay short
    }
    if (s.loader.joinable()) s.loader.join();  // a model being loaded finishes first
    if (s.http) {
        s.log->info("shutting down: finishing requests in flight (at most {} ms)", s.cfg.shutdown_timeout.count());
        s.http->shutdown(s.cfg.shutdown_timeout);
    }
    // After the drain (queued compiles were requests in flight): what has not started is refused
    // (503), what runs finishes and reaches the batch loop, which stops after it.
    if (s.compiles) s.compiles->stop();
    if (s.loop) s.loop->stop();
    std::lock_guard<std::mutex> lk(s.mu);
    s.stopped = true;
    s.cv.notify_all();
}

void server_app::wait_until_stopped() {
    std::unique_lock<std::mutex> lk(impl_->mu);
    impl_->cv.wait(lk, [&] { return impl_->stopped; });
}
