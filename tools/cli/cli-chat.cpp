// inferd-cli chat: an interactive conversation. Each turn renders the whole conversation with
// the chat template, keeps the KV cache for the prefix that did not change, and decodes the rest.
#include "cli-common.h"
#include "engine/chat-render.h"
#include "engine/utf8-stream.h"

namespace {

bool read_line(std::FILE * in, std::string * line) {
    line->clear();
    int c;
    while ((c = std::fgetc(in)) != EOF && c != '\n') line->push_back(char(c));
    return c != EOF || !line->empty();
}

// Tokens of the rendered conversation; false after printing why.
bool render_tokens(const model & m, const chat_renderer & r, const nlohmann::ordered_json & msgs,
                   std::vector<int32_t> * out, const cli_env & env) {
    std::string text, err;
    if (!r.render(msgs, nlohmann::ordered_json(), true, nlohmann::ordered_json(), &text, &err)) {
        std::fprintf(env.err, "inferd-cli: %s\n", err.c_str());
        return false;
    }
    *out = m.get_tokenizer().tokenize(text, true, true);
    return true;
}

// Generates the assistant's reply after the prompt already decoded; returns its text.
enum class reply_end { done, context_full, failed };

// logits_idx: the batch index of the last decoded token's logits; n_max: most tokens (-1: no cap).
// Stops at an end-of-generation token or when the reply ends with one of the template's stop texts
// (which is then not part of the reply; it was printed already, as it came in pieces).
reply_end chat_reply(const model & m, context & ctx, sampler & smp, std::vector<int32_t> & cached, int32_t logits_idx,
                     int n_max, const std::vector<std::string_view> & stops, std::string * reply, const cli_env & env) {
    utf8_stream stream;
    reply->clear();
    for (int n = 0; n_max < 0 || n < n_max; ++n) {
        const int32_t id = smp.sample(ctx.logits(logits_idx)).id;
        logits_idx = 0;
        if (id < 0 || m.get_vocab().is_eog(id)) break;
        smp.accept(id);
        const std::string piece = stream.push(m.get_tokenizer().token_to_piece(id));
        std::fputs(piece.c_str(), env.out);
        std::fflush(env.out);
        *reply += piece;
        bool stopped = false;
        for (std::string_view st : stops) {
            if (reply->size() >= st.size() && reply->compare(reply->size() - st.size(), st.size(), st) == 0) {
                reply->resize(reply->size() - st.size());
                stopped = true;
            }
        }
        if (stopped) break;
        if (cached.size() + 1 >= ctx.n_ctx()) {
            std::fprintf(env.out, "\n");
            std::fprintf(env.err, "inferd-cli: the context is full: the conversation ends here\n");
            return reply_end::context_full;
        }
        llm_batch b;
        b.add(id, int32_t(cached.size()), 0, true);
        cached.push_back(id);
        if (ctx.decode(b) != 0) {
            std::fprintf(env.err, "\ninferd-cli: %s\n", ctx.last_error().c_str());
            return reply_end::failed;
        }
    }
    *reply += stream.flush();
    std::fputs("\n", env.out);
    return reply_end::done;
}

}  // namespace

int cli_chat_main(const std::vector<std::string> & args, const cli_env & env) {
    tool_args a;
    std::string e;
    if (!tool_args_parse(args,
                         {{"-m", "--model"}, {nullptr, "--chat-template"}, {nullptr, "--system"}, {nullptr, "--temp"},
                          {nullptr, "--seed"}, {nullptr, "--top-k"}, {nullptr, "--top-p"}, {nullptr, "--min-p"},
                          {nullptr, "--repeat-penalty"}, {"-t", "--threads"}, {"-c", "--ctx-size"}, {"-ub", "--ubatch"},
                          {"-ngl", "--n-gpu-layers"}, {"-fa", "--flash-attn", true}, {"-n", "--n-predict"}},
                         &a, &e)) {
        return cli_usage_error(env, e);
    }
    if (a.help) return cli_print_usage(env.out), 0;
    cli_model_options mo;
    sampling_params sp;
    if (!cli_read_model_options(a, env, &mo) || !cli_read_sampling_options(a, env, &sp)) return 2;
    int n_predict = -1;
    if (const std::string * v = a.option("--n-predict"); v && !tool_args_parse_int(*v, -1, 1 << 30, &n_predict)) {
        return cli_usage_error(env, "-n wants an integer >= -1, got '" + *v + "'");
    }
    std::unique_ptr<model> m = cli_load_model(mo.path, cli_model_params(mo), env);
    if (!m) return 1;
    const std::string * requested = a.option("--chat-template");
    std::string note;
    const vocab & v = m->get_vocab();
    const chat_special_texts sp_texts{v.bos_id() >= 0 ? v.token_text(v.bos_id()) : "",
                                      v.eos_id() >= 0 ? v.token_text(v.eos_id()) : "", v.add_bos()};
    const std::shared_ptr<const chat_renderer> renderer =
        chat_renderer::create(requested ? *requested : "", m->chat_template(), sp_texts, &note, &e);
    if (!renderer) return cli_usage_error(env, e);
    if (!note.empty()) std::fprintf(env.err, "inferd-cli: %s\n", note.c_str());
    std::unique_ptr<context> ctx = cli_make_context(*m, mo, env);
    if (!ctx) return 1;
    sampler smp(sp, m->hparams().n_vocab);
    nlohmann::ordered_json msgs = nlohmann::ordered_json::array();
    if (const std::string * s = a.option("--system")) msgs.push_back({{"role", "system"}, {"content", *s}});
    std::vector<int32_t> cached;  // tokens in the KV cache (sequence 0)
    std::string line;
    while (std::fputs("> ", env.out), std::fflush(env.out), read_line(env.in, &line) && !line.empty()) {
        msgs.push_back({{"role", "user"}, {"content", line}});
        std::vector<int32_t> toks;
        if (!render_tokens(*m, *renderer, msgs, &toks, env)) return 1;
        size_t common = 0;
        while (common < cached.size() && common < toks.size() && cached[common] == toks[common]) ++common;
        if (common == toks.size()) --common;  // decode at least one token for fresh logits
        if (!ctx->seq_resumable(0, int32_t(common))) common = 0;  // sliding-window cells already dropped
        ctx->seq_rm(0, int32_t(common), -1);
        cached.resize(common);
        const std::vector<int32_t> rest(toks.begin() + long(common), toks.end());
        if (toks.size() >= ctx->n_ctx()) return std::fprintf(env.err, "inferd-cli: the conversation no longer fits the context\n"), 1;
        if (cli_decode_tokens(*ctx, rest, int32_t(common), false, nullptr) != 0) {
            return std::fprintf(env.err, "inferd-cli: %s\n", ctx->last_error().c_str()), 1;
        }
        cached.insert(cached.end(), rest.begin(), rest.end());
        std::string reply;
        const int32_t last = int32_t((rest.size() - 1) % ctx->params().n_batch);
        const reply_end end = chat_reply(*m, *ctx, smp, cached, last, n_predict, renderer->stop_texts(), &reply, env);
        if (end == reply_end::failed) return 1;
        if (end == reply_end::context_full) return 0;
        msgs.push_back({{"role", "assistant"}, {"content", reply}});
    }
    return 0;
}
