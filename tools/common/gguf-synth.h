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
//   int rc = gguf_tool_main({"synth", "--arch", "qwen2", "--n-embd", "64", …, "out.gguf"}, stdout, stderr);
//
// The file carries general.architecture / name / file_type, the architecture's hyper-parameter
// keys (context_length, embedding_length, block_count, feed_forward_length, attention.head_count,
// head_count_kv, the norm epsilon, rope.freq_base and rope.dimension_count for llama / qwen2), a
// tokenizer, and every tensor the engine's architecture reads: llama has an untied output matrix;
// qwen2 ties it (no output.weight) and has Q/K/V biases; gpt2 has learned position embeddings,
// a fused QKV with biases, LayerNorm biases and a tied output. Matrices are F16 or F32 (--type),
// 1-D tensors F32.
//
// Weights: approximately normal (a sum of four uniform 16-bit draws) with standard deviation 0.02
// for matrices, 0.01 for biases; norm weights 1. Every 64Ki-element block of a tensor has its own
// xoshiro256** generator seeded from (seed, tensor index, block index), so the file depends on
// the seed only, never on the thread count. Tensors are filled by n_threads threads while the
// previous one is written (two tensors in memory at most); the file is written as OUT.part and
// renamed at the end (removed on failure).
//
// Tokenizer (default): byte-level BPE ("gpt2", pre "gpt-2"): the 256 byte tokens of GPT-2's byte
// alphabet, merged tokens over lowercase letters (with and without the leading-space mark 'Ġ',
// ordered by English letter frequency) with a consistent tokenizer.ggml.merges, then the special
// tokens: <|endoftext|> (bos and eos) and the control tokens of the chat template (ChatML's
// <|im_start|> / <|im_end|> by default). tokenizer.chat_template holds a Jinja template of the
// family that chat_template_detect recognises. With vocab_path, every tokenizer.* key of that
// file is copied instead (n_vocab 0 takes its token count; otherwise they must agree).
#pragma once

#include "ggml/gguf.h"

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

struct synth_params {
    std::string arch;            // "llama", "qwen2" or "gpt2"
    int n_embd = 0;
    int n_layer = 0;
    int n_head = 0;
    int n_head_kv = 0;           // 0: n_head
    int n_ff = 0;
    int n_vocab = 0;             // 0: from vocab_path (required without it)
    int n_ctx = 0;               // 0: 4096 (gpt2: 1024)
    uint64_t seed = 0;
    std::string vocab_path;      // "": the built-in byte-level BPE vocabulary
    ggml_type type = GGML_TYPE_F16;  // matrices: F16 or F32
    std::string chat_template;   // family name (synth_chat_template_names); "": chatml
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

// Checks the shape and fills defaults (n_head_kv, n_ctx, n_vocab from vocab_path). False with
// *error naming the flag: a missing or non-positive size, an unknown arch / type / template,
// n_embd not a multiple of n_head, n_head not a multiple of n_head_kv, an odd head size
// (llama / qwen2: RoPE), gpt2 with n_head_kv != n_head, a vocabulary too small for the byte
// tokens and the special tokens, an unreadable vocab file or one whose token count differs.
// *warnings: rows that are not multiples of 256 (K-quants will fall back to other types).
// *io_error (may be nullptr) is set true when the failure is a vocab file that cannot be read.
bool synth_params_check(synth_params * p, std::vector<std::string> * warnings, std::string * error,
                        bool * io_error = nullptr);

// Writes the model. False with *error on an I/O failure (nothing is left at out_path then).
bool synth_model_write(const synth_params & p, synth_stats * stats, std::string * error);

// The metadata without tensors (hyper-parameters and tokenizer), for a checked p.
bool synth_build_metadata(const synth_params & p, gguf_metadata * md, std::string * error);

// The chat-template families synth can write ("chatml", "llama2", "llama3", "zephyr", "phi3",
// "gemma"), and the Jinja source and control tokens of one (false for another name).
std::vector<std::string> synth_chat_template_names();
bool synth_chat_template(const std::string & name, std::string * jinja, std::vector<std::string> * control_tokens);

// The smallest n_vocab the built-in vocabulary accepts with this template family.
int synth_min_vocab(const std::string & chat_template);

// The built-in tokenizer's tokenizer.* keys, n_vocab tokens (n_vocab >= synth_min_vocab).
void synth_vocab_metadata(int n_vocab, const std::string & chat_template, gguf_metadata * md);

// The command, from gguf_tool_main's parsed arguments (positional: "synth", OUT.gguf). Prints a
// summary line on `out`; warnings, progress and errors on `err`. Exit codes: 0 success, 1 I/O
// failure (unwritable output), 2 usage (the message names the flag).
struct tool_args;
// The long names of synth's own options (other commands reject them).
const std::vector<std::string> & synth_option_names();
int synth_tool_main(const tool_args & args, int n_threads, std::FILE * out, std::FILE * err);
