// inferd-gguf's command line: info / dequant / synth, usage and exit codes.
#include "gguf-inspect.h"
#include "gguf-synth.h"
#include "tool-args.h"

#include <algorithm>
#include <cinttypes>
#include <thread>

namespace {

constexpr const char * k_usage =
    "usage: inferd-gguf info FILE\n"
    "       inferd-gguf dequant FILE TENSOR OUT.f32 [--threads N]\n"
    "       inferd-gguf synth --arch ARCH --n-embd N --n-layer N --n-head N [--n-head-kv N]\n"
    "                         --n-ff N --n-vocab N [--n-ctx N] [--seed S] [--vocab FILE.gguf]\n"
    "                         [--type f16|f32] [--chat-template NAME] [--threads N]\n"
    "                         [--head-dim N] [--n-expert N --n-expert-used N] [--n-ff-exp N]\n"
    "                         [--sliding-window N] [--rope-base F] [--rope-base-swa F]\n"
    "                         [--attn-softcap F] [--final-softcap F] [--untied-output]\n"
    "                         [--pooling cls|mean|rank] [--confident] OUT.gguf\n"
    "\n"
    "  info     version, alignment, every metadata key (type and value; long arrays abbreviated)\n"
    "           and the tensor table (name, type, shape, offset in the data section, bytes)\n"
    "  dequant  writes the tensor as little-endian float32, row-major (ne[0] the fastest)\n"
    "  synth    writes a model of that shape with random weights (seeded: same seed, same file):\n"
    "           matrices in --type (default f16), norms, biases and expert routers f32; --n-ctx\n"
    "           defaults to 4096 (gpt2: 1024, gemma2/gemma3: 8192), --n-head-kv to --n-head,\n"
    "           --seed to 0. Tokenizer: a byte-level BPE vocabulary of --n-vocab tokens with a\n"
    "           chat template of the arch's family (ChatML; gemma2/gemma3: gemma, phi3: phi3,\n"
    "           llama with experts: llama2; --chat-template chatml, llama2, llama3, zephyr, phi3\n"
    "           or gemma picks another), or every tokenizer.* key of --vocab FILE.gguf (--n-vocab\n"
    "           may then be omitted). Progress on stderr.\n"
    "           --confident: each token predicts one particular next token with nearly all the\n"
    "           probability (embedding rows random, output rows the embeddings of the tokens that\n"
    "           predict them, layer matrices 10x smaller), so that a quantized copy agrees with\n"
    "           the model, as a draft model for speculative decoding would; needs an untied output\n"
    "           (llama, phi3, --untied-output) and the built-in vocabulary\n"
    "           ARCH and what it takes besides the shape:\n"
    "             llama     untied output; --n-expert/--n-expert-used give Mixtral's layout\n"
    "                       (--n-ff is then the width of one expert); --rope-base (1e4)\n"
    "             qwen2     tied output (--untied-output), Q/K/V biases; --rope-base (1e6)\n"
    "             gpt2      learned positions (--n-ctx of them), fused QKV, LayerNorm, tied output\n"
    "             qwen3     --head-dim (default n_embd/n_head; Q is n_head*head_dim wide), q/k norms,\n"
    "                       tied output (--untied-output); --rope-base (1e6)\n"
    "             qwen3moe  qwen3 with experts: --n-expert, --n-expert-used, --n-ff-exp (one\n"
    "                       expert's width) required; --n-ff (recorded, unused) defaults to\n"
    "                       n_ff_exp * n_expert_used\n"
    "             gemma2    --head-dim, --sliding-window (4096; every 2nd layer global),\n"
    "                       --attn-softcap (50), --final-softcap (30), post norms, tied output;\n"
    "                       --rope-base (1e4, recorded only when given)\n"
    "             gemma3    --head-dim, --sliding-window (512; every 6th layer global),\n"
    "                       --rope-base (1e6, global layers), --rope-base-swa (1e4, local layers),\n"
    "                       q/k norms, post norms, tied output\n"
    "             phi3      fused QKV and gate/up, untied output, --sliding-window (2047),\n"
    "                       --rope-base (1e4)\n"
    "             bert      encoder: learned positions (--n-ctx, default 512), 2 token types,\n"
    "                       LayerNorm with biases, biased Q/K/V/O and FFN, no causal mask;\n"
    "                       --pooling cls (default), mean, or rank (adds the cls / cls.output\n"
    "                       classification head); a WordPiece vocabulary ([PAD] 0, [UNK] 100,\n"
    "                       [CLS] 101, [SEP] 102, [MASK] 103, characters, letter strings) of\n"
    "                       --n-vocab tokens (at least 208), no chat template\n"
    "\n"
"options:\n"
    "  -t, --threads N  threads for dequant and synth (default: the number of CPUs)\n"
    "  -h, --help       this text\n"
    "\n"
    "exit codes: 0 success, 1 bad file / missing tensor / unconvertible type / unwritable output,\n"
    "            2 usage error\n";

int usage_error(std::FILE * err, const std::string & message) {
    std::fprintf(err, "inferd-gguf: %s\n\n%s", message.c_str(), k_usage);
    return 2;
}

bool open_file(const std::string & path, std::unique_ptr<gguf_file> * f, std::FILE * err) {
    const gguf_result r = gguf_file::open(path, gguf_open_options{}, f);
    if (!r) {
        std::fprintf(err, "inferd-gguf: %s: %s\n", path.c_str(), r.message.c_str());
        return false;
    }
    for (const std::string & w : (*f)->warnings()) std::fprintf(err, "inferd-gguf: warning: %s\n", w.c_str());
    return true;
}

int run_info(const std::string & path, std::FILE * out, std::FILE * err) {
    std::unique_ptr<gguf_file> f;
    if (!open_file(path, &f, err)) return 1;
    std::fprintf(out, "file: %s\n", path.c_str());
    gguf_inspect_print_info(*f, out);
    return 0;
}

int run_dequant(const std::vector<std::string> & pos, int n_threads, std::FILE * out, std::FILE * err) {
    std::unique_ptr<gguf_file> f;
    if (!open_file(pos[0], &f, err)) return 1;
    std::string error;
    if (!gguf_inspect_dequant(*f, pos[1], pos[2], n_threads, &error)) {
        std::fprintf(err, "inferd-gguf: %s\n", error.c_str());
        return 1;
    }
    const gguf_tensor_info * t = f->find_tensor(pos[1]);
    std::fprintf(out, "%s: %s, %" PRId64 " elements -> %s\n", t->name.c_str(), ggml_type_name(t->type), t->n_elements,
                 pos[2].c_str());
    return 0;
}

}  // namespace

int gguf_tool_main(const std::vector<std::string> & args, std::FILE * out, std::FILE * err) {
    tool_args parsed;
    std::string error;
    const std::initializer_list<tool_option_spec> specs = {
        {"-t", "--threads"}, {nullptr, "--arch"},  {nullptr, "--n-embd"}, {nullptr, "--n-layer"},
        {nullptr, "--n-head"}, {nullptr, "--n-head-kv"}, {nullptr, "--n-ff"}, {nullptr, "--n-vocab"},
        {nullptr, "--n-ctx"}, {nullptr, "--seed"}, {nullptr, "--vocab"}, {nullptr, "--type"},
        {nullptr, "--chat-template"}, {nullptr, "--head-dim"}, {nullptr, "--n-expert"},
        {nullptr, "--n-expert-used"}, {nullptr, "--n-ff-exp"}, {nullptr, "--sliding-window"},
        {nullptr, "--rope-base"}, {nullptr, "--rope-base-swa"}, {nullptr, "--attn-softcap"},
        {nullptr, "--final-softcap"}, {nullptr, "--untied-output", true}, {nullptr, "--pooling"},
        {nullptr, "--confident", true}};
    if (!tool_args_parse(args, specs, &parsed, &error)) return usage_error(err, error);
    if (parsed.help) {
        std::fprintf(out, "%s", k_usage);
        return 0;
    }
    int n_threads = int(std::max(1u, std::thread::hardware_concurrency()));
    if (const std::string * v = parsed.option("--threads")) {
        if (!tool_args_parse_int(*v, 1, 1024, &n_threads)) return usage_error(err, "--threads wants a number in 1..1024");
    }
    if (parsed.positional.empty()) return usage_error(err, "no command given");
    const std::string cmd = parsed.positional[0];
    if (cmd == "synth") return synth_tool_main(parsed, n_threads, out, err);
    for (const std::string & name : synth_option_names()) {
        if (tool_args_has(parsed, name)) return usage_error(err, "option '" + name + "' is only for synth");
    }
    const std::vector<std::string> pos(parsed.positional.begin() + 1, parsed.positional.end());
    if (cmd == "info") {
        if (pos.size() != 1) return usage_error(err, "info wants one FILE");
        return run_info(pos[0], out, err);
    }
    if (cmd == "dequant") {
        if (pos.size() != 3) return usage_error(err, "dequant wants FILE TENSOR OUT.f32");
        return run_dequant(pos, n_threads, out, err);
    }
    return usage_error(err, "unknown command '" + cmd + "'");
}
