// POST /v1/embeddings and POST /v1/rerank (also /rerank): parse, tokenize, check each input
// against the longest the embeddings context takes, one batch-loop embedding request, then the
// vectors normalized (and truncated to `dimensions`) or the scores sorted.
#include "api/embeddings.h"
#include "api/rerank.h"
#include "server-app-impl.h"

// The HTTP side of one embedding request: its response, and whether the client went away.
struct server_app::impl::embd_reply {
    std::shared_ptr<http_response> res;
    std::string path;
    std::chrono::steady_clock::time_point t0;
    std::atomic<bool> cancelled{false};
};

std::shared_ptr<server_app::impl::embd_reply> server_app::impl::embd_reply_for(const http_request & req,
                                                                               const std::shared_ptr<http_response> & res,
                                                                               std::chrono::steady_clock::time_point t0,
                                                                               embd_request & r) {
    auto reply = std::make_shared<embd_reply>();
    reply->res = res;
    reply->path = req.path;
    reply->t0 = t0;
    std::weak_ptr<embd_reply> weak = reply;  // the response keeps its callback: no cycle through it
    res->on_close([weak] {
        if (auto p = weak.lock()) p->cancelled = true;
    });
    r.cancelled = [reply] { return reply->cancelled.load(); };
    return reply;
}

// Ends the exchange when the client left or the request failed; false when the vectors came.
bool server_app::impl::embd_reply_failed(embd_reply & reply, const std::string & error) {
    if (reply.cancelled) {
        reply.res->end();
        metrics.request_done(reply.path, 499, server_seconds_since(reply.t0));
        return true;
    }
    if (error.empty()) return false;
    const api_error e = api_error_internal(error);
    reply.res->respond(e.status, "application/json", api_error_to_json(e));
    metrics.request_done(reply.path, e.status, server_seconds_since(reply.t0));
    return true;
}

void server_app::impl::embd_reply_ok(embd_reply & reply, std::string body) {
    reply.res->respond(200, "application/json", std::move(body));
    metrics.request_done(reply.path, 200, server_seconds_since(reply.t0));
}

void server_app::impl::submit_embd(const http_request & req, const std::shared_ptr<http_response> & res,
                                   embd_request r, const char * param, std::chrono::steady_clock::time_point t0) {
    int64_t n_tokens = 0;
    for (const auto & in : r.inputs) n_tokens += int64_t(in.size());
    std::string why;
    if (!loop->submit_embeddings(std::move(r), &why)) {
        if (why.find("queue is full") != std::string::npos) {
            return respond_error(req, res, api_error_unavailable("The server is busy (" + why + "); retry later.", 1, "queue_full"), t0);
        }
        return respond_error(req, res, api_error_invalid_request(why, param), t0);
    }
    metrics.add_prompt_tokens(uint64_t(n_tokens));
}

// The tokens of each input (text tokenized with the model's special tokens, never parsed for
// special-token names), or a 400 naming the input that has none or too many.
std::optional<api_error> server_app::impl::embedding_inputs(const std::vector<api_prompt> & prompts, const char * param,
                                                            std::vector<std::vector<int32_t>> * out) {
    const tokenizer & tok = mdl->get_tokenizer();
    const int64_t limit = loop->embd_max_tokens();
    for (size_t i = 0; i < prompts.size(); ++i) {
        const api_prompt & p = prompts[i];
        std::vector<int32_t> ids = p.is_tokens ? p.tokens : tok.tokenize(p.text, true, false);
        std::string msg = "'";
        msg += param;
        msg += "[";
        msg += std::to_string(i);
        msg += "]' has ";
        if (ids.empty()) return api_error_invalid_request(msg + "no tokens.", param);
        if (int64_t(ids.size()) > limit) {
            msg += std::to_string(ids.size());
            msg += " tokens; an input may have at most ";
            msg += std::to_string(limit);
            msg += ".";
            return api_error_invalid_request(msg, param, "context_length_exceeded");
        }
        out->push_back(std::move(ids));
    }
    return std::nullopt;
}

void server_app::impl::handle_embeddings(const http_request & req, std::shared_ptr<http_response> res) {
    const auto t0 = std::chrono::steady_clock::now();
    if (!require_ready(req, res, t0)) return;
    if (!loop->has_embeddings()) {
        return respond_error(req, res, api_error_invalid_request("This server computes no embeddings; start it with --embeddings."), t0);
    }
    if (loop->embd_pooling() == pooling_type::rank) {
        return respond_error(req, res, api_error_invalid_request("This model is a reranker: use POST /v1/rerank."), t0);
    }
    embeddings_request er;
    if (auto e = embeddings_request_parse(req.body, er)) return respond_error(req, res, *e, t0);
    if (auto e = embeddings_request_check_vocab(er, mdl->hparams().n_vocab)) return respond_error(req, res, *e, t0);
    if (refuses_model(er.model)) return respond_error(req, res, api_error_model_not_found(er.model), t0);
    const int32_t n_embd = loop->embd_size();
    if (er.dimensions && *er.dimensions > n_embd) {
        return respond_error(req, res, api_error_invalid_request("'dimensions' is " + std::to_string(*er.dimensions) +
                                                                     "; this model's embeddings have " +
                                                                     std::to_string(n_embd) + ".",
                                                                 "dimensions"),
                             t0);
    }
    embd_request r;
    if (auto e = embedding_inputs(er.inputs, "input", &r.inputs)) return respond_error(req, res, *e, t0);
    int64_t n_tokens = 0;
    for (const auto & in : r.inputs) n_tokens += int64_t(in.size());
    auto reply = embd_reply_for(req, res, t0, r);
    const bool normalize = cfg.embd_normalize;
    r.done = [this, reply, er, n_tokens, normalize](std::vector<std::vector<float>> vectors, const std::string & error) {
        if (embd_reply_failed(*reply, error)) return;
        embeddings_response out;
        out.model = model_id;
        out.base64 = er.base64;
        out.prompt_tokens = n_tokens;
        for (std::vector<float> & v : vectors) {
            if (er.dimensions) v.resize(size_t(*er.dimensions));  // Matryoshka: the leading dimensions
            if (normalize) embd_l2_normalize(v);
        }
        out.data = std::move(vectors);
        embd_reply_ok(*reply, embeddings_response_to_json(out));
    };
    submit_embd(req, res, std::move(r), "input", t0);
}

void server_app::impl::handle_rerank(const http_request & req, std::shared_ptr<http_response> res) {
    const auto t0 = std::chrono::steady_clock::now();
    if (!require_ready(req, res, t0)) return;
    if (!loop->has_embeddings() || loop->embd_pooling() != pooling_type::rank) {
        return respond_error(req, res, api_error_invalid_request("This model does not rerank: serve a reranking model "
                                                                 "(pooling rank) to use /v1/rerank."),
                             t0);
    }
    rerank_request rr;
    if (auto e = rerank_request_parse(req.body, rr)) return respond_error(req, res, *e, t0);
    if (refuses_model(rr.model)) return respond_error(req, res, api_error_model_not_found(rr.model), t0);
    const tokenizer & tok = mdl->get_tokenizer();
    const std::vector<int32_t> query = tok.tokenize(rr.query, false, false);  // once for every document
    embd_request r;
    std::vector<api_prompt> pairs;
    for (const std::string & d : rr.documents) {
        api_prompt p;
        p.is_tokens = true;
        p.tokens = tok.join_pair(query, tok.tokenize(d, false, false));
        pairs.push_back(std::move(p));
    }
    if (auto e = embedding_inputs(pairs, "documents", &r.inputs)) return respond_error(req, res, *e, t0);
    int64_t n_tokens = 0;
    for (const auto & in : r.inputs) n_tokens += int64_t(in.size());
    auto reply = embd_reply_for(req, res, t0, r);
    r.done = [this, reply, rr, n_tokens](std::vector<std::vector<float>> scores, const std::string & error) {
        if (embd_reply_failed(*reply, error)) return;
        rerank_response out;
        out.id = server_make_id("rerank-");
        out.model = model_id;
        out.prompt_tokens = n_tokens;
        out.return_documents = rr.return_documents;
        out.documents = rr.documents;
        for (size_t i = 0; i < scores.size(); ++i) {
            out.results.push_back({int32_t(i), scores[i].empty() ? 0.0 : double(scores[i][0])});
        }
        rerank_sort_and_cut(out.results, rr.top_n);
        embd_reply_ok(*reply, rerank_response_to_json(out));
    };
    submit_embd(req, res, std::move(r), "documents", t0);
}
