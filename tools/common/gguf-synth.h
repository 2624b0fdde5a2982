// tools/common/gguf-synth.h — `inferd-gguf synth`: a complete model of any shape with random
// weights (for benchmarks and tests where no real weights can be had).
//
// Usage:
//   synth_params p;
//   p.arch = "llama"; p.n_embd = 2048; p.n_layer = 22; p.n_head = 32; p.n_head_kv = 4;
//   p.n_ff = 5632; p.n_vocab = 32000; p.out_path = "tinyllama-synth-f16.gguf";
//   p.n_threads = 4; p.progress = stderr;                 // nullptr: silent
//   std::vector<std::string> warnings;
//   std::string err;
//   if (!synth_params_check(&p, &warnings, &err)) { usage error: err }   // fills defaults
//   synth_stats st;
//   if (!synth_model_write(p, &st, &err)) { I/O error: err }
//
//   // A mixture of experts in Qwen3-MoE's layout (head size independent of n_embd / n_head):
//   p.arch = "qwen3moe"; p.head_dim = 128; p.n_expert = 64; p.n_expert_used = 8; p.n_ff_exp = 768;
//
//   // A BERT-base encoder (WordPiece vocabulary, CLS pooling; p.pooling = "rank" adds a
//   // cross-encoder head):
//   p.arch = "bert"; p.n_embd = 768; p.n_layer = 12; p.n_head = 12; p.n_ff = 3072; p.n_vocab = 30522;
//   p.n_ctx = 512;
//
//   int rc = gguf_tool_main({"synth", "--arch", "qwen2", "--n-embd", "64", …, "out.gguf"}, stdout, stderr);
//
// The file carries general.architecture / name / file_type, the architecture's hyper-parameter
// keys and every tensor the architecture reads, with the key names, tensor names, shapes and
// types that established converters write (llama, qwen2 and gpt2 as they always were; the others
// also general.quantization_version, as such files carry):
//   llama     untied output; with n_expert > 0 the Mixtral layout (expert_count,
//             expert_used_count, vocab_size, rope.dimension_count; ffn_gate_inp and the 3-D
//             ffn_{gate,up,down}_exps, feed_forward_length being the width of one expert)
//   qwen2     tied output, Q/K/V biases
//   gpt2      learned positions, fused QKV with biases, LayerNorm biases, tied output
//   qwen3     attention.key_length / value_length (the head size), per-head RMS q/k norms
//             (attn_q_norm / attn_k_norm, head_dim weights), no biases, tied output
//   qwen3moe  qwen3 with experts: expert_count, expert_used_count, expert_feed_forward_length;
//             ffn_gate_inp [n_embd, n_expert] (F32), ffn_{gate,up}_exps [n_embd, n_ff_exp,
//             n_expert], ffn_down_exps [n_ff_exp, n_embd, n_expert]
//   gemma2    key_length / value_length, attention.sliding_window, attn_logit_softcapping and
//             final_logit_softcapping, post_attention_norm / post_ffw_norm, tied output (no RoPE
//             key unless rope_base is given: Gemma 2's base is the engines' default 10000)
//   gemma3    key_length / value_length, sliding_window, rope.freq_base (global layers) and
//             rope.freq_base_swa (local layers), q/k norms, post norms, tied output
//   phi3      fused attn_qkv (rows Q, K, V), fused ffn_up (rows gate, up), untied output,
//             rope.scaling.original_context_length, sliding_window
//   bert      an encoder as llama.cpp's converter writes BERT: attention.layer_norm_epsilon
//             (1e-12), attention.causal = false, pooling_type (--pooling: cls 2 by default, mean
//             1, rank 4), no head_count_kv; token_embd, position_embd [n_embd, n_ctx],
//             token_types [n_embd, 2] (tokenizer.ggml.token_type_count = 2), token_embd_norm
//             with bias; per layer attn_q/k/v/output with biases, attn_output_norm, ffn_up /
//             ffn_down with biases (no gate), layer_output_norm; rank adds the classification
//             head cls.weight [n_embd, n_embd], cls.bias, cls.output.weight [n_embd] (one
//             label), cls.output.bias [1]
// Matrices are F16 or F32 (--type), 1-D tensors and expert routers F32 (bert: position_embd,
// token_types and cls.output.weight too, as the converter's F16 files keep them).
//
// Weights: approximately normal (a sum of four uniform 16-bit draws) with standard deviation 0.02
// for matrices, 0.01 for biases, 1/sqrt(n_embd) for expert routers (router logits of standard
// deviation about 1 on normalized activations: tokens pick different experts); norm weights 1
// (Gemma's stored multipliers included). Every 64Ki-element block of a tensor has its own
// xoshiro256** generator seeded from (seed, tensor index, block index), so the file depends on
// the seed only, never on the thread count. Tensors are filled by n_threads threads while the
// previous one is written (two tensors in memory at most); the file is written as OUT.part and
// renamed at the end (removed on failure).
//
// confident (--confident; an untied output matrix and the built-in vocabulary with merged tokens
// required): each token predicts one particular next token with nearly all the probability, so
// that a quantized copy of the model agrees with it (a draft model for speculative decoding can
// be measured). Token t's embedding row e_t has approximately normal entries of standard
// deviation 1; next(t) = 256 + (u + s) mod M, M the number of merged tokens, u = t - 256 (t for
// byte tokens), s about 0.618 M and coprime with M (never a byte or special token; one cycle
// through the merged tokens); output row j = (16 / n_embd) * the sum of e_t over the tokens with
// next(t) = j; layer matrices have standard deviation 0.002 (so the residual stream stays near
// e_t of the current token). The logit of next(t) is then about 16, the others about
// 16 / sqrt(n_embd) times a standard normal draw. Shapes, types and cost are as without it.
//
// Tokenizer of bert (default): WordPiece (tokenizer.ggml.model "bert") with BERT's layout:
// [PAD] 0, [unused0..98] 1–99, [UNK] 100, [CLS] 101, [SEP] 102, [MASK] 103 (control tokens, named
// by the padding / unknown / cls / seperator / mask id keys), then every printable ASCII
// character except the capitals as a word-initial piece ("▁a", "▁,") and the letters and digits
// as continuation pieces, then strings of lowercase letters of length 2, 3, … (frequent letters
// first), each as a word-initial and a continuation piece: lowercase English words come out as
// a few pieces each, and only characters outside ASCII become [UNK]. No chat template.
// Tokenizer of the other archs (default): byte-level BPE ("gpt2", pre "gpt-2"): the 256 byte tokens of GPT-2's byte
// alphabet, merged tokens over lowercase letters (with and without the leading-space mark 'Ġ',
// ordered by English letter frequency) with a consistent tokenizer.ggml.merges, then the special
// tokens: <|endoftext|> (bos and eos) and the control tokens of the chat template (the
// architecture's family by default: ChatML, gemma for gemma2 / gemma3, phi3 for phi3, llama2 for
// llama with experts). tokenizer.chat_template holds a Jinja template of the family that
// chat_template_detect recognises. With vocab_path, every tokenizer.* key of that file is copied
// instead (n_vocab 0 takes its token count; otherwise they must agree).
#pragma once

#include "ggml/gguf.h"

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

struct synth_params {
    std::string arch;            // synth_arch_names(): "llama", "qwen2", "gpt2", "qwen3", …
    int n_embd = 0;
    int n_layer = 0;
    int n_head = 0;
    int n_head_kv = 0;           // 0: n_head
    int n_ff = 0;                // qwen3moe: 0 = n_ff_exp * n_expert_used (written, unused)
    int n_vocab = 0;             // 0: from vocab_path (required without it)
    int n_ctx = 0;               // 0: 4096 (gpt2: 1024, gemma2 / gemma3: 8192)
    int head_dim = 0;            // key/value length; 0: n_embd / n_head (qwen3*, gemma* only)
    int n_expert = 0;            // qwen3moe (required), llama (optional: Mixtral layout)
    int n_expert_used = 0;       // experts per token, 1..n_expert (required with n_expert)
    int n_ff_exp = 0;            // qwen3moe: the width of one expert (llama uses n_ff)
    int sliding_window = 0;      // gemma2 / gemma3 / phi3; 0: 4096, 512, 2047
    float rope_base = 0.0f;      // 0: the arch's (1e4 llama, gemma2, phi3; 1e6 qwen*, gemma3)
    float rope_base_swa = 0.0f;  // gemma3's local layers; 0: 1e4
    float attn_softcap = 0.0f;   // gemma2; 0: 50
    float final_softcap = 0.0f;  // gemma2; 0: 30
    bool untied_output = false;  // qwen2 / qwen3 / qwen3moe: an output.weight of its own
    std::string pooling;         // bert: "cls", "mean" or "rank" (cls.* head); "": cls
    bool confident = false;      // confident predictions instead of random ones (see below)
    uint64_t seed = 0;
    std::string vocab_path;      // "": the built-in byte-level BPE vocabulary
    ggml_type type = GGML_TYPE_F16;  // matrices: F16 or F32
    std::string chat_template;   // family name (synth_chat_template_names); "": the arch's family
    std::string out_path;
    int n_threads = 1;
    std::FILE * progress = nullptr;  // progress lines every few seconds; nullptr: silent
};

struct synth_stats {
    size_t n_tensors = 0;
    uint64_t n_params = 0;
    size_t bytes = 0;            // tensor data bytes
    double seconds = 0.0;
};

// Checks the shape and fills defaults (n_head_kv, n_ctx, head_dim, n_vocab from vocab_path, the
// arch's rope bases, sliding window, soft-caps and chat template). False with *error naming the
// flag: a missing or non-positive size, an unknown arch / type / template / pooling, n_embd not a
// multiple of n_head (without head_dim), n_head not a multiple of n_head_kv, an odd head size
// (RoPE), gpt2 or bert with n_head_kv != n_head, an option the arch does not have (head_dim,
// experts, sliding window, soft-caps, rope bases, untied output, pooling, a chat template for
// bert), experts without n_expert_used or n_expert_used
// above n_expert, a vocabulary too small for the byte tokens and the special tokens, an
// unreadable vocab file or one whose token count differs.
// *warnings: rows that are not multiples of 256 (K-quants will fall back to other types).
// *io_error (may be nullptr) is set true when the failure is a vocab file that cannot be read.
bool synth_params_check(synth_params * p, std::vector<std::string> * warnings, std::string * error,
                        bool * io_error = nullptr);

// Writes the model. False with *error on an I/O failure (nothing is left at out_path then).
bool synth_model_write(const synth_params & p, synth_stats * stats, std::string * error);

// The metadata without tensors (hyper-parameters and tokenizer), for a checked p.
bool synth_build_metadata(const synth_params & p, gguf_metadata * md, std::string * error);

// The architectures synth can write, in the order of the help text.
std::vector<std::string> synth_arch_names();

// The chat-template families synth can write ("chatml", "llama2", "llama3", "zephyr", "phi3",
// "gemma"), and the Jinja source and control tokens of one (false for another name).
std::vector<std::string> synth_chat_template_names();
bool synth_chat_template(const std::string & name, std::string * jinja, std::vector<std::string> * control_tokens);

// The smallest n_vocab the built-in vocabulary accepts with this template family.
int synth_min_vocab(const std::string & chat_template);

// The built-in tokenizer's tokenizer.* keys, n_vocab tokens (n_vocab >= synth_min_vocab).
void synth_vocab_metadata(int n_vocab, const std::string & chat_template, gguf_metadata * md);

// The built-in WordPiece vocabulary of bert (see above): its smallest n_vocab, and its
// tokenizer.* keys for n_vocab >= synth_wpm_min_vocab() tokens.
int synth_wpm_min_vocab();
void synth_wpm_vocab_metadata(int n_vocab, gguf_metadata * md);

// bert's pooling names ("cls", "mean", "rank") and the bert.pooling_type value of one (-1 for
// another name).
int synth_pooling_type(const std::string & name);

// The command, from gguf_tool_main's parsed arguments (positional: "synth", OUT.gguf). Prints a
// summary line on `out`; warnings, progress and errors on `err`. Exit codes: 0 success, 1 I/O
// failure (unwritable output), 2 usage (the message names the flag).
struct tool_args;
// The long names of synth's own options (other commands reject them).
const std::vector<std::string> & synth_option_names();
int synth_tool_main(const tool_args & args, int n_threads, std::FILE * out, std::FILE * err);
