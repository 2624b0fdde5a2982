// inferd-cli grammar check: a text walked through a grammar token by token, as constrained
// generation would produce it: the text tokenized with a model's vocabulary, every token checked
// against the grammar's mask and accepted, and the end checked. Prints accept, or reject with
// the token (index, id, bytes), its byte offset and the output before it.
#include "cli-grammar.h"
#include "cli-grammar-json.h"

#include "grammar/gbnf.h"
#include "grammar/json-schema.h"

namespace {

using clock_type = std::chrono::steady_clock;

// The length of the whole UTF-8 character starting at s[i], 0 when there is none.
size_t utf8_char_len(const std::string & s, size_t i) {
    const unsigned char c = (unsigned char) s[i];
    const size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
    if (n == 0 || i + n > s.size()) return 0;
    for (size_t k = 1; k < n; ++k) {
        if ((((unsigned char) s[i + k]) >> 6) != 0x2) return 0;
    }
    return n;
}

bool end_allowed_by_mask(const grammar_vocab & gv, const grammar_token_mask & mask) {
    for (const int32_t e : gv.eog_ids()) {
        if (grammar_mask_test(mask, e)) return true;
    }
    return false;
}

cli_grammar_walk walk_stop(cli_grammar_walk w, cli_grammar_outcome o, std::string detail = {}) {
    w.outcome = o;
    w.detail = std::move(detail);
    return w;
}

}  // namespace

std::string cli_grammar_escape(const std::string & bytes) {
    std::string out;
    char hex[8];
    for (size_t i = 0; i < bytes.size();) {
        const unsigned char c = (unsigned char) bytes[i];
        const size_t n = utf8_char_len(bytes, i);
        if (c == '"' || c == '\\') {
            out += '\\';
            out += char(c);
        } else if (n > 1) {
            out.append(bytes, i, n);
            i += n;
            continue;
        } else if (n == 1 && c >= 0x20 && c != 0x7f) {
            out += char(c);
        } else {
            std::snprintf(hex, sizeof hex, "\\x%02x", c);
            out += hex;
        }
        ++i;
    }
    return out;
}

cli_grammar_walk cli_grammar_walk_tokens(grammar_matcher & m, const std::vector<int32_t> & ids,
                                         std::vector<double> * mask_us, clock_type::time_point deadline) {
    const grammar_vocab & gv = m.vocab();
    grammar_token_mask mask(gv.mask_words());
    cli_grammar_walk w;
    for (size_t i = 0; i <= ids.size(); ++i) {
        w.token_index = i;
        const clock_type::time_point t0 = clock_type::now();
        if (t0 > deadline) return walk_stop(w, cli_grammar_outcome::timed_out);
        m.fill_mask(mask);
        if (mask_us) mask_us->push_back(std::chrono::duration<double, std::micro>(clock_type::now() - t0).count());
        if (i == ids.size()) break;
        const int32_t t = ids[i];
        const bool in_mask = grammar_mask_test(mask, t);
        const bool taken = m.accept_token(t);
        if (in_mask && !taken) return walk_stop(w, cli_grammar_outcome::inconsistent, "the mask allows the token, accept_token refuses it");
        if (!in_mask && taken) return walk_stop(w, cli_grammar_outcome::inconsistent, "the mask forbids the token, accept_token takes it");
        if (!in_mask) return walk_stop(w, cli_grammar_outcome::token_not_allowed, m.error());
        w.byte_offset += gv.token_bytes(t).size();
    }
    const bool can_end = m.can_end();
    if (!m.error().empty()) return walk_stop(w, cli_grammar_outcome::end_not_allowed, m.error());
    if (!gv.eog_ids().empty() && end_allowed_by_mask(gv, mask) != can_end) {
        return walk_stop(w, cli_grammar_outcome::inconsistent,
                         can_end ? "can_end() is true, the mask forbids every end-of-generation token"
                                 : "can_end() is false, the mask allows an end-of-generation token");
    }
    return walk_stop(w, can_end ? cli_grammar_outcome::accepted : cli_grammar_outcome::end_not_allowed);
}

namespace {

// The grammar of --gbnf FILE or --schema FILE, prepared for matching; false after printing why.
bool load_program(const std::string * gbnf, const std::string * schema, const cli_env & env,
                  std::shared_ptr<const grammar_program> * out) {
    const std::string & path = gbnf ? *gbnf : *schema;
    std::string text;
    if (!cli_read_file(path, &text)) {
        std::fprintf(env.err, "inferd-cli: cannot read %s\n", path.c_str());
        return false;
    }
    grammar g;
    if (gbnf) {
        grammar_parse_result r = grammar_parse_gbnf(text);
        if (!r.ok()) return std::fprintf(env.err, "inferd-cli: %s: %s\n", path.c_str(), r.error.to_string().c_str()), false;
        g = std::move(r.value);
    } else {
        json_schema_result r = json_schema_compile(text);
        if (!r.ok()) return std::fprintf(env.err, "inferd-cli: %s: %s\n", path.c_str(), r.error.c_str()), false;
        g = std::move(r.value);
    }
    grammar_program_result p = grammar_program_build(g);
    if (!p.ok()) return std::fprintf(env.err, "inferd-cli: %s: %s\n", path.c_str(), p.error.c_str()), false;
    *out = std::move(p.value);
    return true;
}

// --text FILE as it is, or --instance-json FILE serialized like Python's json.dumps (compact, or
// with --spaced the default separators); false after printing why.
bool load_text(const tool_args & a, const cli_env & env, std::string * out) {
    const std::string * text = a.option("--text");
    const std::string & path = text ? *text : *a.option("--instance-json");
    if (!cli_read_file(path, out)) return std::fprintf(env.err, "inferd-cli: cannot read %s\n", path.c_str()), false;
    if (text) return true;
    try {
        const nlohmann::ordered_json v = nlohmann::ordered_json::parse(*out);
        *out = tool_args_has(a, "--spaced") ? json_dumps_spaced(v) : json_dumps_compact(v);
        return true;
    } catch (const std::exception & e) {
        std::fprintf(env.err, "inferd-cli: %s: %s\n", path.c_str(), e.what());
        return false;
    }
}

void print_walk(const cli_grammar_walk & w, const std::vector<int32_t> & ids, const grammar_vocab & gv, const cli_env & env) {
    std::string so_far;
    for (size_t i = 0; i < w.token_index && i < ids.size(); ++i) so_far += gv.token_bytes(ids[i]);
    if (w.outcome == cli_grammar_outcome::accepted) {
        std::fprintf(env.out, "accept: %zu tokens, %zu bytes\n", ids.size(), so_far.size());
        return;
    }
    if (w.token_index == ids.size()) {
        std::fprintf(env.out, "reject: the end, after %zu tokens (%zu bytes), is not allowed%s%s\n", ids.size(),
                     w.byte_offset, w.detail.empty() ? "" : ": ", w.detail.c_str());
    } else {
        const int32_t t = ids[w.token_index];
        std::fprintf(env.out, "reject: token %zu (id %d, \"%s\") at byte %zu is not allowed%s%s\n", w.token_index, t,
                     cli_grammar_escape(gv.token_bytes(t)).c_str(), w.byte_offset, w.detail.empty() ? "" : ": ",
                     w.detail.c_str());
    }
    std::fprintf(env.out, "text so far: %s\n", so_far.c_str());
}

}  // namespace

int cli_grammar_check_main(const std::vector<std::string> & args, const cli_env & env) {
    tool_args a;
    std::string e;
    if (!tool_args_parse(args, {{nullptr, "--gbnf"}, {nullptr, "--schema"}, {nullptr, "--vocab"}, {nullptr, "--text"},
                                {nullptr, "--instance-json"}, {nullptr, "--spaced", true}},
                         &a, &e)) {
        return cli_usage_error(env, e);
    }
    if (a.help) return cli_print_usage(env.out), 0;
    if (!a.positional.empty()) return cli_usage_error(env, "unexpected argument '" + a.positional[0] + "'");
    const std::string * gbnf = a.option("--gbnf");
    const std::string * schema = a.option("--schema");
    const std::string * vocab_path = a.option("--vocab");
    if ((gbnf != nullptr) == (schema != nullptr)) return cli_usage_error(env, "grammar check needs one of --gbnf FILE or --schema FILE");
    if (!vocab_path) return cli_usage_error(env, "grammar check needs --vocab FILE.gguf");
    if (tool_args_has(a, "--text") == tool_args_has(a, "--instance-json")) {
        return cli_usage_error(env, "grammar check needs one of --text FILE or --instance-json FILE");
    }
    if (tool_args_has(a, "--spaced") && !tool_args_has(a, "--instance-json")) {
        return cli_usage_error(env, "--spaced goes with --instance-json");
    }
    std::shared_ptr<const grammar_program> program;
    std::string text;
    cli_grammar_vocab v;
    if (!load_program(gbnf, schema, env, &program) || !load_text(a, env, &text) ||
        !cli_grammar_load_vocab(*vocab_path, env, &v)) {
        return 2;
    }
    const std::vector<int32_t> ids = cli_grammar_tokenize(v, text);
    grammar_matcher m(program, v.gv);
    const cli_grammar_walk w = cli_grammar_walk_tokens(m, ids, nullptr, clock_type::time_point::max());
    print_walk(w, ids, *v.gv, env);
    return w.outcome == cli_grammar_outcome::accepted ? 0 : 1;
}
