// POST /v1/completions and POST /v1/chat/completions: parse, compile the output constraint,
// tokenize (or render the chat template), check the context, one batch-loop request per prompt
// and choice. A constraint or tool-call grammar that is not in the compile cache is compiled on a
// compile thread, which then finishes the request; everything else runs on the I/O thread.
#include "api/chat-request.h"
#include "api/completion-request.h"
#include "chat-prompt.h"
#include "engine/chat-render.h"
#include "server-app-impl.h"
#include "server-generation.h"

#include <spdlog/spdlog.h>

#include <ctime>
#include <random>

namespace {

// One prompt's tokens and what echo would prepend.
struct prepared_prompt {
    std::vector<int32_t> tokens;
    std::string echo_text;
};

sampling_params to_sampling(const api_sampling_params & a, int32_t n_probs, uint64_t seed) {
    sampling_params p;
    p.temperature = float(a.temperature);
    p.top_p = float(a.top_p);
    p.top_k = a.top_k;
    p.min_p = float(a.min_p);
    p.repeat_penalty = float(a.repeat_penalty);
    p.presence_penalty = float(a.presence_penalty);
    p.frequency_penalty = float(a.frequency_penalty);
    for (const api_logit_bias & b : a.logit_bias) p.logit_bias.emplace_back(b.token, b.bias);
    p.seed = seed;
    p.n_probs = std::max(0, n_probs);
    p.logprob = n_probs >= 0;
    return p;
}

uint64_t pick_seed(const api_sampling_params & a) {
    if (a.seed) return uint64_t(*a.seed);
    std::random_device rd;
    return (uint64_t(rd()) << 32) ^ rd();
}

struct submit_plan {
    std::shared_ptr<generation_state> st;
    std::vector<gen_request> requests;
};

// 503 queue_full: the batch loop's queue or the compile queue is full.
api_error server_busy(const std::string & why) {
    return api_error_unavailable("The server is busy (" + why + "); retry later.", 1, "queue_full");
}

// Queues every request at once (all or none).
std::optional<api_error> submit_all(batch_loop & loop, submit_plan & plan) {
    std::string why;
    if (loop.submit_all(plan.requests, &why)) return std::nullopt;
    if (why.find("queue is full") != std::string::npos) return server_busy(why);
    return api_error_invalid_request(why);
}

}  // namespace

std::string server_make_id(const char * prefix) {
    static thread_local std::mt19937_64 rng{std::random_device{}()};
    static const char * hex = "0123456789abcdef";
    std::string id = prefix;
    for (int i = 0; i < 24; ++i) id += hex[rng() & 15];
    return id;
}

namespace {

std::shared_ptr<generation_state> new_state(server_app::impl & s, generation_kind kind, bool stream, bool usage,
                                            const std::shared_ptr<http_response> & res, const http_request & req,
                                            std::chrono::steady_clock::time_point t0) {
    auto st = std::make_shared<generation_state>();
    st->kind = kind;
    st->stream = stream;
    st->include_usage = usage;
    st->meta.id = server_make_id(kind == generation_kind::chat ? "chatcmpl-" : "cmpl-");
    st->meta.created = int64_t(std::time(nullptr));
    st->meta.model = s.model_id;
    st->res = res;
    st->tok = &s.mdl->get_tokenizer();
    st->metrics = &s.metrics;
    st->t0 = t0;
    const std::string path = req.path;
    server_app::impl * sp = &s;
    st->on_done = [sp, path, t0](int status) {
        sp->metrics.request_done(path, status, server_seconds_since(t0));
    };
    std::weak_ptr<generation_state> weak = st;
    res->on_close([weak] {
        if (auto p = weak.lock()) p->cancelled = true;
    });
    return st;
}

// The rest of a completion once its constraint is compiled: tokenize, check, submit.
void completion_submit(server_app::impl & s, const http_request & req, const std::shared_ptr<http_response> & res,
                       std::chrono::steady_clock::time_point t0, const completion_request & cr,
                       const std::shared_ptr<const grammar_program> & program) {
    const tokenizer & tok = s.mdl->get_tokenizer();
    std::vector<prepared_prompt> prompts;
    for (const api_prompt & p : cr.prompts) {
        prepared_prompt pp;
        if (p.is_tokens) {
            pp.tokens = p.tokens;
            if (cr.echo) tok.detokenize(pp.tokens, &pp.echo_text, nullptr, false, false);
        } else {
            pp.tokens = tok.tokenize(p.text, true, true);
            pp.echo_text = cr.echo ? p.text : "";
        }
        if (pp.tokens.empty()) return s.respond_error(req, res, api_error_invalid_request("the prompt is empty", "prompt"), t0);
        if (int64_t(pp.tokens.size()) + cr.max_tokens > int64_t(s.loop->n_ctx())) {
            return s.respond_error(req, res, api_error_context_exceeded(int64_t(pp.tokens.size()), cr.max_tokens, s.loop->n_ctx(), "max_tokens"), t0);
        }
        prompts.push_back(std::move(pp));
    }
    submit_plan plan;
    plan.st = new_state(s, generation_kind::completion, cr.stream, cr.include_usage, res, req, t0);
    plan.st->n_logprobs = cr.logprobs ? *cr.logprobs : -1;
    plan.st->prompt_logprobs = cr.echo && cr.logprobs;
    const uint64_t seed = pick_seed(cr.sampling);
    int32_t index = 0;
    for (const prepared_prompt & pp : prompts) {
        for (int32_t c = 0; c < cr.n; ++c, ++index) {
            gen_request g;
            g.prompt = pp.tokens;
            g.max_tokens = cr.max_tokens;
            g.ignore_eos = cr.ignore_eos;
            g.prompt_logprobs = plan.st->prompt_logprobs ? plan.st->n_logprobs : -1;
            g.sampling = to_sampling(cr.sampling, plan.st->n_logprobs, seed + uint64_t(index));
            g.grammar = program;
            g.sink = std::make_shared<generation_sink>(plan.st, index, cr.stop, c == 0, pp.echo_text);
            plan.requests.push_back(std::move(g));
            completion_choice ch;
            ch.index = index;
            plan.st->completion_choices.push_back(ch);
        }
    }
    plan.st->n_choices = plan.requests.size();
    if (auto e = submit_all(*s.loop, plan)) return s.respond_error(req, res, *e, t0);
}

// The rest of a chat request once its grammars are compiled: tokenize, check, submit (the plan's
// output settings move into the request's state).
void chat_submit(server_app::impl & s, const http_request & req, const std::shared_ptr<http_response> & res,
                 std::chrono::steady_clock::time_point t0, const chat_request & cr, chat_plan & cp,
                 std::shared_ptr<const grammar_program> program) {
    if (cp.grammar) program = cp.grammar;
    const std::vector<int32_t> tokens = s.mdl->get_tokenizer().tokenize(cp.prompt, true, true);
    const int64_t n_ctx = s.loop->n_ctx();
    if (cr.max_tokens && int64_t(tokens.size()) + *cr.max_tokens > n_ctx) {
        return s.respond_error(req, res, api_error_context_exceeded(int64_t(tokens.size()), *cr.max_tokens, n_ctx, "max_tokens"), t0);
    }
    if (int64_t(tokens.size()) >= n_ctx) {
        return s.respond_error(req, res, api_error_context_exceeded(int64_t(tokens.size()), 0, n_ctx, "messages"), t0);
    }
    std::vector<std::string> stops = cr.stop;
    for (std::string_view st : s.chat->stop_texts()) stops.emplace_back(st);
    submit_plan plan;
    plan.st = new_state(s, generation_kind::chat, cr.stream, cr.include_usage, res, req, t0);
    plan.st->n_logprobs = cr.logprobs ? cr.top_logprobs : -1;
    plan.st->chat_output = std::move(cp.output);  // the plan's last use: its tools are not copied
    const uint64_t seed = pick_seed(cr.sampling);
    for (int32_t c = 0; c < cr.n; ++c) {
        gen_request g;
        g.prompt = tokens;
        g.max_tokens = cr.max_tokens ? *cr.max_tokens : -1;
        g.ignore_eos = cr.ignore_eos;
        g.sampling = to_sampling(cr.sampling, plan.st->n_logprobs, seed + uint64_t(c));
        g.grammar = program;
        g.grammar_control_text = cp.grammar != nullptr;
        g.sink = std::make_shared<generation_sink>(plan.st, c, stops, c == 0, "");
        plan.requests.push_back(std::move(g));
        chat_choice ch;
        ch.index = c;
        plan.st->chat_choices.push_back(ch);
    }
    plan.st->n_choices = plan.requests.size();
    if (auto e = submit_all(*s.loop, plan)) return s.respond_error(req, res, *e, t0);
}

}  // namespace

void server_app::impl::run_on_compile_thread(const http_request & req, const std::shared_ptr<http_response> & res,
                                             std::chrono::steady_clock::time_point t0,
                                             std::function<void(const http_request & meta)> prepare) {
    auto meta = std::make_shared<http_request>();
    meta->method = req.method;
    meta->target = req.target;
    meta->path = req.path;
    meta->remote = req.remote;
    auto run = [this, meta, res, t0, prepare = std::move(prepare)] {
        if (res->closed()) return metrics.request_done(meta->path, 499, server_seconds_since(t0));
        std::string what = "an exception that is not a std::exception";
        try {
            prepare(*meta);
            return;
        } catch (const std::exception & e) {
            what = e.what();
        } catch (...) {
        }
        log->error("{} {}: preparing the request failed: {}", meta->method, meta->path, what);
        metrics.compile_error();
        respond_error(*meta, res, api_error_internal("The request could not be prepared (" + what + ")."), t0);
    };
    auto refuse = [this, meta, res, t0] {
        respond_error(*meta, res, api_error_unavailable("The server is shutting down; retry later.", 1, "shutting_down"), t0);
    };
    switch (compiles->submit(std::move(run), refuse)) {
        case compile_pool::submit_status::queued: return;
        case compile_pool::submit_status::full: return respond_error(req, res, server_busy("the compile queue is full"), t0);
        case compile_pool::submit_status::stopped: return refuse();
    }
}

void server_app::impl::handle_completions(const http_request & req, std::shared_ptr<http_response> res) {
    const auto t0 = std::chrono::steady_clock::now();
    if (!require_ready(req, res, t0) || !require_generation(req, res, t0)) return;
    auto cr = std::make_shared<completion_request>();
    if (auto e = completion_request_parse(req.body, *cr)) return respond_error(req, res, *e, t0);
    const int32_t n_vocab = mdl->hparams().n_vocab;
    if (auto e = completion_request_check_vocab(*cr, n_vocab)) return respond_error(req, res, *e, t0);
    if (refuses_model(cr->model)) return respond_error(req, res, api_error_model_not_found(cr->model), t0);
    std::shared_ptr<const grammar_program> program;
    std::optional<api_error> refused;
    if (grammars.lookup(cr->constraint, &program, &refused)) {
        if (refused) {
            metrics.compile_error();
            return respond_error(req, res, *refused, t0);
        }
        return completion_submit(*this, req, res, t0, *cr, program);
    }
    const auto own = std::chrono::steady_clock::now() - t0;  // the compile's budget counts this, not the queue
    run_on_compile_thread(req, res, t0, [this, cr, res, t0, own](const http_request & meta) {
        std::shared_ptr<const grammar_program> compiled;
        if (auto e = grammars.compile(cr->constraint, &compiled, std::chrono::steady_clock::now() - own)) {
            metrics.compile_error();
            return respond_error(meta, res, *e, t0);
        }
        completion_submit(*this, meta, res, t0, *cr, compiled);
    });
}

void server_app::impl::handle_chat(const http_request & req, std::shared_ptr<http_response> res) {
    const auto t0 = std::chrono::steady_clock::now();
    if (!require_ready(req, res, t0) || !require_generation(req, res, t0)) return;
    auto cr = std::make_shared<chat_request>();
    if (auto e = chat_request_parse(req.body, *cr)) return respond_error(req, res, *e, t0);
    if (auto e = api_sampling_check_vocab(cr->sampling, mdl->hparams().n_vocab)) return respond_error(req, res, *e, t0);
    if (refuses_model(cr->model)) return respond_error(req, res, api_error_model_not_found(cr->model), t0);
    const chat_plan_inputs in{chat.get(), chat_tools.get(), template_kwargs, cfg.reasoning_split, &grammars};
    auto cp = std::make_shared<chat_plan>();
    if (auto e = chat_plan_prepare(in, *cr, cp.get())) return respond_error(req, res, *e, t0);
    std::shared_ptr<const grammar_program> program;
    std::optional<api_error> refused, tool_refused;
    if (grammars.lookup(cr->constraint, &program, &refused) && chat_plan_lookup(in, cp.get(), &tool_refused)) {
        if (refused || tool_refused) {
            metrics.compile_error();
            return respond_error(req, res, refused ? *refused : *tool_refused, t0);
        }
        return chat_submit(*this, req, res, t0, *cr, *cp, std::move(program));
    }
    // The compile's time budget counts the request's own work so far (reading, rendering), not the
    // time it waits for a compile thread.
    const auto own = std::chrono::steady_clock::now() - t0;
    run_on_compile_thread(req, res, t0, [this, in, cr, cp, res, t0, own](const http_request & meta) {
        std::shared_ptr<const grammar_program> compiled;
        const auto started = std::chrono::steady_clock::now() - own;
        std::optional<api_error> e = grammars.compile(cr->constraint, &compiled, started);
        if (!e) e = chat_plan_compile(in, cp.get(), started);
        if (e) {
            metrics.compile_error();
            return respond_error(meta, res, *e, t0);
        }
        chat_submit(*this, meta, res, t0, *cr, *cp, std::move(compiled));
    });
}
