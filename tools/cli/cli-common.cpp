// inferd-cli: dispatch, usage text, shared option parsing, model/context set-up, prompt decoding.
#include "cli-common.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <algorithm>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

namespace {

constexpr const char * k_usage =
    "usage: inferd-cli generate -m MODEL (-p TEXT | --tokens 1,2,3) [-n N] [--temp T] [--seed S]\n"
    "                           [--top-k K] [--top-p P] [--min-p P] [--repeat-penalty R]\n"
    "                           [--threads N] [--ctx-size N] [--ubatch N] [--n-gpu-layers N]\n"
    "                           [--flash-attn] [--parse-special] [--ids] [--dump-logits FILE]\n"
    "       inferd-cli tokenize -m MODEL -p TEXT [--no-bos] [--parse-special]\n"
    "       inferd-cli detokenize -m MODEL --tokens 1,2,3\n"
    "       inferd-cli chat -m MODEL [--chat-template NAME|FILE] [--system TEXT] [-n N]\n"
    "                       [generate's sampling and model options]\n"
    "       inferd-cli embed -m MODEL [--pooling none|mean|cls|last|rank] [--normalize l2|none]\n"
    "                        [--threads N] [--ctx-size N] [--flash-attn] TEXT...\n"
    "       inferd-cli devices\n"
    "       inferd-cli grammar compile (--gbnf FILE | --schema FILE)\n"
    "       inferd-cli grammar check (--gbnf FILE | --schema FILE) --vocab FILE.gguf\n"
    "                                (--text FILE | --instance-json FILE [--spaced])\n"
    "       inferd-cli grammar bench DIR --vocab FILE.gguf [--json] [--limit N] [--budget-s S]\n"
    "                                [--verbose]\n"
    "       inferd-cli template render (--model FILE.gguf | --template FILE.jinja) --messages FILE.json\n"
    "                                  [--tools FILE.json] [--no-generation-prompt] [--kwargs JSON]\n"
    "                                  [--bos TEXT] [--eos TEXT] [--date YYYY-MM-DD]\n"
    "       inferd-cli template parse (--model FILE.gguf | --template FILE.jinja | --family NAME)\n"
    "                                 [--tools FILE.json] [--reasoning-open] TEXT_FILE\n"
    "\n"
    "  generate    prints the prompt's continuation (the text; with --ids one JSON array of the\n"
    "              generated token ids instead); -n N tokens at most (default 128, -1: until an\n"
    "              end-of-generation token or a full context); --temp 0 is greedy;\n"
    "              --dump-logits FILE writes the logits of every prompt position (float32 rows of\n"
    "              n_vocab, little-endian) before generating; speed goes to stderr\n"
    "  tokenize    one JSON array of token ids (BOS added when the vocabulary says so, unless\n"
    "              --no-bos; special tokens parsed only with --parse-special)\n"
    "  detokenize  the text of the ids\n"
    "  chat        an interactive conversation on stdin/stdout with the model's chat template\n"
    "              run as written (or --chat-template NAME or FILE); -n caps each reply (default:\n"
    "              until an end-of-generation token); an empty line, end of input or a full\n"
    "              context ends it\n"
    "  embed       one JSON object {\"tokens\": [[...], ...], \"embeddings\": [[...], ...]}, one entry\n"
    "              per TEXT (tokenized with the model's special tokens): its pooled embedding\n"
    "              (--pooling: default the model's; none: every token's row), L2-normalized unless\n"
    "              --normalize none; rank (rerankers): TEXTs are query / document pairs, each\n"
    "              entry [CLS] query [SEP] document [SEP] with a one-element score list; a text\n"
    "              with no tokens exits 1; --ctx-size: the longest input (default the model's\n"
    "              training context, at most 8192)\n"
    "  devices     the compute devices of this build: name, type, description, free / total\n"
    "              memory (and why there is no GPU device when there is none)\n"
    "  grammar compile  a GBNF grammar or a JSON Schema as the grammar constrained output\n"
    "              follows, printed as GBNF (compile errors: line and column, or the schema\n"
    "              keyword and its place)\n"
    "  grammar check  a text token by token as constrained generation would produce it: tokenized\n"
    "              with the vocabulary of FILE.gguf (a vocabulary-only GGUF will do; no BOS), each\n"
    "              token checked against the grammar's mask and accepted, then the end checked;\n"
    "              --text FILE: the file's bytes exactly; --instance-json FILE: the JSON value as\n"
    "              Python's json.dumps writes it, compact or --spaced (\", \" and \": \"). Prints\n"
    "              accept, or reject with the token (index, id, text), its byte offset and the\n"
    "              text before it; exit 0 accepted, 1 rejected, 2 usage, file or compile error\n"
    "  grammar bench  every DIR/*.json ({\"schema\", \"tests\": [{\"valid\", \"data\"}]}, the format\n"
    "              of testdata/jsonschema): a schema passes when it compiles and every valid\n"
    "              instance is accepted and every invalid one rejected, token by token, compact\n"
    "              and spaced; prints schemas, compile errors, passing, mask time per token\n"
    "              (fill_mask, one thread: mean, p50, p99, p99.9 µs), compile time (p50, p99 µs);\n"
    "              --json: one JSON object; --limit N: the first N files in name order;\n"
    "              --budget-s S: a schema still running after S seconds (default 10) fails and\n"
    "              is named; --verbose: why each schema fails, and those that take 1 s or more\n"
    "  template render  prints the conversation (--messages: a JSON array of OpenAI messages, or\n"
    "              an object with \"messages\" and \"tools\") as the Jinja chat template renders it,\n"
    "              exactly (nothing added): the model's tokenizer.chat_template with its BOS / EOS\n"
    "              texts, or a template file (--bos / --eos set bos_token / eos_token);\n"
    "              add_generation_prompt is true unless --no-generation-prompt; --kwargs: more\n"
    "              variables ({\"enable_thinking\": false}); --date: the day strftime_now() sees\n"
    "              (default: today); a template error (with its line and column) exits 2\n"
    "  template parse  a model's raw output (TEXT_FILE) read as the tool-call format of the\n"
    "              model's tokenizer.chat_template, of a template file or of a family by name\n"
    "              (hermes, mistral, gpt-oss-harmony, ...): prints one JSON object {\"content\",\n"
    "              \"reasoning_content\", \"tool_calls\": [{\"name\", \"arguments\", \"id\" (only\n"
    "              where the format carries one)}]}; --tools: the request's tools (a JSON array,\n"
    "              OpenAI's shape) for the schemas of XML formats; --reasoning-open: the prompt\n"
    "              opened the reasoning block; exit 2 on a usage or file error\n"
    "  tokenize and detokenize also work on vocabulary-only GGUF files.\n"
    "\n"
    "defaults: --temp 0.8 --top-k 40 --top-p 0.95 --min-p 0.05 --repeat-penalty 1 --seed random\n"
    "          --threads all cores, --ctx-size the model's (at most 4096), --ubatch 512,\n"
    "          --n-gpu-layers 0 (says so and stays on the CPU when there is no GPU backend);\n"
    "          --flash-attn: the fused attention kernel (F32 throughout, faster at long context)\n"
    "          instead of the reference engine's plain attention arithmetic\n"
    "exit codes: 0 success, 1 model/input/decoding error, 2 usage error\n";

}  // namespace

int cli_usage_error(const cli_env & env, const std::string & message) {
    std::fprintf(env.err, "inferd-cli: %s\n\n%s", message.c_str(), k_usage);
    return 2;
}

bool cli_parse_token_list(const std::string & s, std::vector<int32_t> * out) {
    out->clear();
    size_t i = 0;
    while (i <= s.size()) {
        size_t j = s.find(',', i);
        if (j == std::string::npos) j = s.size();
        std::string item = s.substr(i, j - i);
        const size_t b = item.find_first_not_of(' '), e = item.find_last_not_of(' ');
        if (b == std::string::npos) return false;
        item = item.substr(b, e - b + 1);
        int v = 0;
        if (!tool_args_parse_int(item, INT32_MIN, INT32_MAX, &v)) return false;
        out->push_back(v);
        i = j + 1;
    }
    return !out->empty();
}

bool cli_parse_float(const std::string & s, float * out) {
    if (s.empty()) return false;
    char * end = nullptr;
    errno = 0;
    const double v = std::strtod(s.c_str(), &end);
    if (end != s.c_str() + s.size() || errno != 0 || !std::isfinite(v)) return false;
    *out = float(v);
    return true;
}

bool cli_parse_u64(const std::string & s, uint64_t * out) {
    if (s.empty() || s[0] == '-' || s[0] == '+') return false;
    char * end = nullptr;
    errno = 0;
    const unsigned long long v = std::strtoull(s.c_str(), &end, 10);
    if (end != s.c_str() + s.size() || errno != 0) return false;
    *out = uint64_t(v);
    return true;
}

bool cli_read_model_options(const tool_args & a, const cli_env & env, cli_model_options * o) {
    const std::string * m = a.option("--model");
    if (!m || m->empty()) return cli_usage_error(env, "-m MODEL is required"), false;
    o->path = *m;
    o->flash_attn = tool_args_has(a, "--flash-attn");
    struct int_opt {
        const char * name;
        int min, max;
        int * dst;
    };
    for (const int_opt & io : {int_opt{"--n-gpu-layers", -1, 100000, &o->n_gpu_layers},
                               int_opt{"--threads", 1, 1024, &o->n_threads}, int_opt{"--ctx-size", 0, 1 << 24, &o->n_ctx},
                               int_opt{"--ubatch", 1, 65536, &o->n_ubatch}}) {
        if (const std::string * v = a.option(io.name); v && !tool_args_parse_int(*v, io.min, io.max, io.dst)) {
            return cli_usage_error(env, std::string(io.name) + " wants an integer in [" + std::to_string(io.min) +
                                            ", " + std::to_string(io.max) + "], got '" + *v + "'"), false;
        }
    }
    return true;
}

bool cli_read_sampling_options(const tool_args & a, const cli_env & env, sampling_params * p) {
    p->logprob = false;  // the CLI prints no log-probabilities: skip that pass over the row
    struct float_opt {
        const char * name;
        float * dst;
    };
    for (const float_opt & fo : {float_opt{"--temp", &p->temperature}, float_opt{"--top-p", &p->top_p},
                                 float_opt{"--min-p", &p->min_p}, float_opt{"--repeat-penalty", &p->repeat_penalty}}) {
        if (const std::string * v = a.option(fo.name); v && !cli_parse_float(*v, fo.dst)) {
            return cli_usage_error(env, std::string(fo.name) + " wants a number, got '" + *v + "'"), false;
        }
    }
    if (const std::string * v = a.option("--top-k"); v && !tool_args_parse_int(*v, 0, INT32_MAX, &p->top_k)) {
        return cli_usage_error(env, "--top-k wants a non-negative integer, got '" + *v + "'"), false;
    }
    if (const std::string * v = a.option("--seed")) {
        if (!cli_parse_u64(*v, &p->seed)) return cli_usage_error(env, "--seed wants a non-negative integer, got '" + *v + "'"), false;
    } else {
        p->seed = (uint64_t(std::random_device{}()) << 32) ^ std::random_device{}();
    }
    return true;
}

model_params cli_model_params(const cli_model_options & o) {
    model_params mp;
    mp.n_gpu_layers = o.n_gpu_layers;
    mp.memory.n_ctx = o.n_ctx > 0 ? uint32_t(o.n_ctx) : 4096;
    mp.memory.n_ubatch = uint32_t(o.n_ubatch);
    mp.memory.flash_attn = o.flash_attn;
    return mp;
}

std::unique_ptr<model> cli_load_model(const std::string & path, const model_params & mp, const cli_env & env) {
    try {
        std::unique_ptr<model> m = model::load(path, mp);
        for (const std::string & w : m->warnings()) std::fprintf(env.err, "inferd-cli: warning: %s\n", w.c_str());
        return m;
    } catch (const std::exception & e) {
        std::fprintf(env.err, "inferd-cli: %s\n", e.what());
        return nullptr;
    }
}

std::unique_ptr<context> cli_make_context(const model & m, const cli_model_options & o, const cli_env & env) {
    context_params cp;
    cp.n_ctx = uint32_t(o.n_ctx);
    cp.n_ubatch = uint32_t(o.n_ubatch);
    cp.n_batch = std::max<uint32_t>(cp.n_batch, cp.n_ubatch);
    cp.n_threads = o.n_threads;
    cp.flash_attn = o.flash_attn;
    try {
        return std::make_unique<context>(m, cp);
    } catch (const std::exception & e) {
        std::fprintf(env.err, "inferd-cli: %s\n", e.what());
        return nullptr;
    }
}

int cli_decode_tokens(context & ctx, const std::vector<int32_t> & tokens, int32_t start, bool all_logits,
                      std::vector<float> * logits_out) {
    const size_t n_batch = ctx.params().n_batch;
    const size_t nv = size_t(ctx.n_vocab());
    llm_batch b;
    for (size_t begin = 0; begin < tokens.size(); begin += n_batch) {
        const size_t end = std::min(tokens.size(), begin + n_batch);
        b.clear();
        for (size_t i = begin; i < end; ++i) {
            b.add(tokens[i], start + int32_t(i), 0, all_logits || i + 1 == tokens.size());
        }
        if (const int st = ctx.decode(b); st != 0) return st;
        if (all_logits && logits_out) {
            for (size_t i = begin; i < end; ++i) {
                const float * row = ctx.logits(int32_t(i - begin));
                logits_out->insert(logits_out->end(), row, row + nv);
            }
        }
    }
    return 0;
}

int cli_tool_main(const std::vector<std::string> & args, std::FILE * in, std::FILE * out, std::FILE * err) {
    const cli_env env{in, out, err};
    if (args.empty()) return cli_usage_error(env, "a command is required (generate, tokenize, detokenize, chat, embed, devices, grammar, template)");
    const std::string & cmd = args[0];
    const std::vector<std::string> rest(args.begin() + 1, args.end());
    if (cmd == "-h" || cmd == "--help" || cmd == "help") {
        std::fputs(k_usage, out);
        return 0;
    }
    if (cmd == "generate") return cli_generate_main(rest, env);
    if (cmd == "chat") return cli_chat_main(rest, env);
    if (cmd == "tokenize") return cli_tokenize_main(rest, env);
    if (cmd == "detokenize") return cli_detokenize_main(rest, env);
    if (cmd == "devices") return cli_devices_main(rest, env);
    if (cmd == "grammar") return cli_grammar_main(rest, env);
    if (cmd == "template") return cli_template_main(rest, env);
    if (cmd == "embed") return cli_embed_main(rest, env);
    return cli_usage_error(env, "unknown command '" + cmd + "'");
}

void cli_print_usage(std::FILE * f) { std::fputs(k_usage, f); }

bool cli_read_file(const std::string & path, std::string * out) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return false;
    std::ostringstream ss;
    ss << in.rdbuf();
    *out = ss.str();
    return !in.bad();
}
