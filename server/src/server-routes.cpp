// Routes other than generation: health, models, metrics, tokenize, detokenize (and the
// embeddings routes' registration); the API-key filter and the response helpers.
#include "api/info-response.h"
#include "api/tokenize.h"
#include "server-app-impl.h"

#include <algorithm>
#include <cctype>

namespace {

// Constant-time comparison (the time does not depend on where the strings differ).
bool same_secret(std::string_view a, std::string_view b) {
    unsigned char diff = a.size() == b.size() ? 0 : 1;
    const size_t n = std::max(a.size(), b.size());
    for (size_t i = 0; i < n; ++i) {
        const unsigned char x = i < a.size() ? (unsigned char) a[i] : 0;
        const unsigned char y = i < b.size() ? (unsigned char) b[i] : 0;
        diff |= (unsigned char) (x ^ y);
    }
    return diff == 0;
}

std::string bearer_token(const http_request & req) {
    const std::string h = req.header("authorization");
    if (h.size() > 7 && std::equal(h.begin(), h.begin() + 7, "bearer ",
                                   [](char a, char b) { return std::tolower((unsigned char) a) == b; })) {
        return h.substr(7);
    }
    return "";
}

bool key_matches(const std::vector<std::string> & keys, const std::string & given) {
    bool ok = false;
    for (const std::string & k : keys) ok |= same_secret(k, given);  // no early exit
    return ok;
}

}  // namespace

void server_app::impl::respond_json(const http_request & req, const std::shared_ptr<http_response> & res, int status,
                                    std::string body, std::chrono::steady_clock::time_point t0) {
    res->respond(status, "application/json", std::move(body));
    metrics.request_done(req.path, status, server_seconds_since(t0));
}

void server_app::impl::respond_error(const http_request & req, const std::shared_ptr<http_response> & res,
                                     const api_error & e, std::chrono::steady_clock::time_point t0) {
    http_headers extra;
    if (e.status == 503) extra.emplace_back("Retry-After", std::to_string(std::max(1, e.retry_after_seconds)));
    if (e.status == 401) extra.emplace_back("WWW-Authenticate", "Bearer");
    res->respond(e.status, "application/json", api_error_to_json(e), extra);
    metrics.request_done(req.path, e.status, server_seconds_since(t0));
}

bool server_app::impl::require_ready(const http_request & req, const std::shared_ptr<http_response> & res,
                                     std::chrono::steady_clock::time_point t0) {
    if (is_ready) return true;
    respond_error(req, res, api_error_unavailable("The model is loading; retry shortly.", 5, "model_loading"), t0);
    return false;
}

bool server_app::impl::require_generation(const http_request & req, const std::shared_ptr<http_response> & res,
                                          std::chrono::steady_clock::time_point t0) {
    if (loop->has_generation()) return true;
    respond_error(req, res, api_error_invalid_request("This model computes embeddings only (an encoder): it does not "
                                                      "generate text. Use POST /v1/embeddings or /v1/rerank."),
                  t0);
    return false;
}

bool server_app::impl::check_auth(const http_request & req, const std::shared_ptr<http_response> & res) {
    const bool api_route =
        req.path.rfind("/v1/", 0) == 0 || req.path == "/tokenize" || req.path == "/detokenize" || req.path == "/rerank";
    const std::vector<std::string> * keys = nullptr;
    std::vector<std::string> metrics_keys;
    if (api_route && !cfg.api_keys.empty()) keys = &cfg.api_keys;
    if (req.path == "/metrics" && !cfg.metrics_key.empty()) {
        metrics_keys.push_back(cfg.metrics_key);
        keys = &metrics_keys;
    }
    if (!keys || req.method == "OPTIONS" || key_matches(*keys, bearer_token(req))) return true;
    respond_error(req, res, api_error_authentication(), std::chrono::steady_clock::now());
    return false;
}

void server_app::impl::refresh_gauges() {
    if (compiles) metrics.set_compile_jobs(compiles->waiting(), compiles->running());
    if (!loop) {
        metrics.set_requests_running(0);
        metrics.set_requests_waiting(0);
        metrics.set_kv_cache_usage(0.0);
        return;
    }
    const batch_loop_stats st = loop->stats();
    metrics.set_requests_running(st.running);
    metrics.set_requests_waiting(st.waiting);
    metrics.set_kv_cache_usage(st.kv_usage);
    metrics.set_spec_state(st.spec_active, st.spec_speedup, st.spec_turned_off);
}

void server_app::impl::add_routes() {
    router.set_filter([this](const http_request & req, const std::shared_ptr<http_response> & res) { return check_auth(req, res); });
    router.add("GET", "/health", [this](const http_request & req, std::shared_ptr<http_response> res) {
        const api_health h = is_ready ? api_health::ok : is_failed ? api_health::error : api_health::loading;
        http_headers extra;
        if (h != api_health::ok) extra.emplace_back("Retry-After", "5");
        const int status = api_health_status(h);
        res->respond(status, "application/json", health_to_json(h), extra);
        metrics.request_done(req.path, status, 0.0);
    });
    router.add("GET", "/metrics", [this](const http_request & req, std::shared_ptr<http_response> res) {
        refresh_gauges();
        res->respond(200, "text/plain; version=0.0.4; charset=utf-8", metrics.render());
        metrics.request_done(req.path, 200, 0.0);
    });
    router.add("GET", "/v1/models", [this](const http_request & req, std::shared_ptr<http_response> res) {
        const auto t0 = std::chrono::steady_clock::now();
        api_model_info info{model_id, created, "inferd"};
        if (is_ready) {
            info.n_ctx = loop->n_ctx();
            info.n_ctx_train = mdl->hparams().n_ctx_train;
            info.n_vocab = mdl->hparams().n_vocab;
        }
        respond_json(req, res, 200, models_list_to_json({info}), t0);
    });
    router.add("POST", "/tokenize", [this](const http_request & req, std::shared_ptr<http_response> res) {
        const auto t0 = std::chrono::steady_clock::now();
        if (!require_ready(req, res, t0)) return;
        tokenize_request tr;
        if (auto e = tokenize_request_parse(req.body, tr)) return respond_error(req, res, *e, t0);
        tokenize_response out;
        for (int32_t id : mdl->get_tokenizer().tokenize(tr.content, tr.add_special, true)) {
            out.tokens.push_back({id, tr.with_pieces ? mdl->get_tokenizer().token_to_piece(id, true) : ""});
        }
        respond_json(req, res, 200, tokenize_response_to_json(out, tr.with_pieces), t0);
    });
    router.add("POST", "/detokenize", [this](const http_request & req, std::shared_ptr<http_response> res) {
        const auto t0 = std::chrono::steady_clock::now();
        if (!require_ready(req, res, t0)) return;
        detokenize_request dr;
        if (auto e = detokenize_request_parse(req.body, dr)) return respond_error(req, res, *e, t0);
        if (auto e = api_check_token_ids(dr.tokens, mdl->hparams().n_vocab, "tokens")) return respond_error(req, res, *e, t0);
        std::string text, err;
        mdl->get_tokenizer().detokenize(dr.tokens, &text, &err, true, false);
        respond_json(req, res, 200, detokenize_response_to_json(text), t0);
    });
    router.add("POST", "/v1/completions", [this](const http_request & req, std::shared_ptr<http_response> res) {
        handle_completions(req, std::move(res));
    });
    router.add("POST", "/v1/chat/completions", [this](const http_request & req, std::shared_ptr<http_response> res) {
        handle_chat(req, std::move(res));
    });
    router.add("POST", "/v1/embeddings", [this](const http_request & req, std::shared_ptr<http_response> res) {
        handle_embeddings(req, std::move(res));
    });
    for (const char * path : {"/v1/rerank", "/rerank"}) {
        router.add("POST", path, [this](const http_request & req, std::shared_ptr<http_response> res) {
            handle_rerank(req, std::move(res));
        });
    }
}
