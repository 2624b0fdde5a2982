// inferd-cli embed: texts → their tokens and embeddings (or reranking scores) as one JSON object.
#include "cli-common.h"

#include <nlohmann/json.hpp>

namespace {

using ojson = nlohmann::ordered_json;

bool parse_pooling(const std::string & s, pooling_type * out) {
    for (pooling_type p : {pooling_type::none, pooling_type::mean, pooling_type::cls, pooling_type::last, pooling_type::rank}) {
        if (s == pooling_type_name(p)) {
            *out = p;
            return true;
        }
    }
    return false;
}

// One sequence's result: its pooled vector, or (pooling none) every token's row.
ojson embed_one(context & ctx, const std::vector<int32_t> & ids, bool normalize) {
    llm_batch b;
    for (size_t i = 0; i < ids.size(); ++i) b.add(ids[i], int32_t(i), 0, true);
    if (ctx.decode(b) != decode_ok) return nullptr;
    const size_t n = size_t(ctx.n_embd_out());
    const auto vec = [&](const float * p) {
        std::vector<float> v(p, p + n);
        if (normalize) embd_l2_normalize(v);
        return ojson(v);
    };
    if (ctx.pooling() != pooling_type::none) {
        const float * p = ctx.embeddings_seq(0);
        return p ? vec(p) : ojson(nullptr);
    }
    ojson rows = ojson::array();
    for (size_t i = 0; i < ids.size(); ++i) {
        const float * p = ctx.embeddings(int32_t(i));
        if (!p) return nullptr;
        rows.push_back(vec(p));
    }
    return rows;
}

}  // namespace

int cli_embed_main(const std::vector<std::string> & args, const cli_env & env) {
    tool_args a;
    std::string e;
    if (!tool_args_parse(args, {{"-m", "--model"}, {nullptr, "--pooling"}, {nullptr, "--normalize"}, {nullptr, "--threads"},
                                {nullptr, "--ctx-size"}, {nullptr, "--ubatch"}, {nullptr, "--n-gpu-layers"},
                                {nullptr, "--flash-attn", true}},
                         &a, &e)) {
        return cli_usage_error(env, e);
    }
    if (a.help) return cli_print_usage(env.out), 0;
    cli_model_options o;
    if (!cli_read_model_options(a, env, &o)) return 2;
    pooling_type pooling = pooling_type::unspecified;
    if (const std::string * p = a.option("--pooling"); p && !parse_pooling(*p, &pooling)) {
        return cli_usage_error(env, "--pooling wants none, mean, cls, last or rank, got '" + *p + "'");
    }
    bool normalize = true;
    if (const std::string * n = a.option("--normalize")) {
        if (*n != "l2" && *n != "none") return cli_usage_error(env, "--normalize wants l2 or none, got '" + *n + "'");
        normalize = *n == "l2";
    }
    if (a.positional.empty()) return cli_usage_error(env, "at least one TEXT is required");
    std::unique_ptr<model> m = cli_load_model(o.path, cli_model_params(o), env);
    if (!m) return 1;
    context_params cp;
    cp.embeddings = true;
    cp.pooling = pooling;
    cp.n_threads = o.n_threads;
    cp.flash_attn = o.flash_attn;
    cp.n_ubatch = uint32_t(o.n_ctx > 0 ? o.n_ctx : std::max<int>(o.n_ubatch, int(std::min<uint32_t>(m->hparams().n_ctx_train, 8192))));
    cp.n_batch = cp.n_ubatch;
    cp.n_ctx = cp.n_ubatch;
    std::unique_ptr<context> ctx;
    try {
        ctx = std::make_unique<context>(*m, cp);
    } catch (const std::exception & ex) {
        std::fprintf(env.err, "inferd-cli: %s\n", ex.what());
        return 1;
    }
    const bool rank = ctx->pooling() == pooling_type::rank;
    if (rank && a.positional.size() % 2 != 0) {
        return cli_usage_error(env, "--pooling rank takes texts in query / document pairs (an even count)");
    }
    ojson out = {{"tokens", ojson::array()}, {"embeddings", ojson::array()}};
    const size_t step = rank ? 2 : 1;
    for (size_t i = 0; i < a.positional.size(); i += step) {
        const std::vector<int32_t> ids = rank ? m->get_tokenizer().tokenize_pair(a.positional[i], a.positional[i + 1])
                                              : m->get_tokenizer().tokenize(a.positional[i], true, false);
        if (ids.empty()) {
            std::fprintf(env.err, "inferd-cli: text %zu (\"%s\") has no tokens\n", i, a.positional[i].c_str());
            return 1;
        }
        if (ids.size() > cp.n_ubatch) {
            std::fprintf(env.err, "inferd-cli: text %zu has %zu tokens; at most %u fit (--ctx-size)\n", i, ids.size(), cp.n_ubatch);
            return 1;
        }
        ojson v = embed_one(*ctx, ids, normalize && !rank);
        if (v.is_null()) {
            std::fprintf(env.err, "inferd-cli: text %zu: %s\n", i, ctx->last_error().c_str());
            return 1;
        }
        out["tokens"].push_back(ids);
        out["embeddings"].push_back(std::move(v));
    }
    std::fprintf(env.out, "%s\n", out.dump().c_str());
    return 0;
}
