// tools/cli/cli-common.h — pieces shared by the inferd-cli commands (internal).
#pragma once

#include "cli.h"
#include "engine/context.h"
#include "engine/model.h"
#include "engine/sampling.h"
#include "tool-args.h"

#include <memory>
#include <string>

struct cli_model_options {
    std::string path;
    int n_gpu_layers = 0;
    int n_threads = 0;
    int n_ctx = 0;
    int n_ubatch = 512;
    bool flash_attn = false;
};

struct cli_env {
    std::FILE * in;
    std::FILE * out;
    std::FILE * err;
};

int cli_usage_error(const cli_env & env, const std::string & message);
// Reads -m, --n-gpu-layers, --threads, --ctx-size, --ubatch, --flash-attn; false after printing a
// usage error.
bool cli_read_model_options(const tool_args & a, const cli_env & env, cli_model_options * o);
// Reads --temp, --seed, --top-k, --top-p, --min-p, --repeat-penalty; false after a usage error.
bool cli_read_sampling_options(const tool_args & a, const cli_env & env, sampling_params * p);
// The model parameters of the options: GPU layers, and the context for the device memory check.
model_params cli_model_params(const cli_model_options & o);
// Loads a model, printing its warnings; nullptr after printing the error.
std::unique_ptr<model> cli_load_model(const std::string & path, const model_params & mp, const cli_env & env);
// A file's bytes; false when it cannot be read.
bool cli_read_file(const std::string & path, std::string * out);
std::unique_ptr<context> cli_make_context(const model & m, const cli_model_options & o, const cli_env & env);
// Decodes tokens at positions start.. of sequence 0 in chunks of n_batch; logits for every
// token when all_logits, else for the last one. Returns the decode status (0 ok).
int cli_decode_tokens(context & ctx, const std::vector<int32_t> & tokens, int32_t start, bool all_logits,
                      std::vector<float> * logits_out);

void cli_print_usage(std::FILE * f);

int cli_generate_main(const std::vector<std::string> & args, const cli_env & env);
int cli_chat_main(const std::vector<std::string> & args, const cli_env & env);
int cli_tokenize_main(const std::vector<std::string> & args, const cli_env & env);
int cli_detokenize_main(const std::vector<std::string> & args, const cli_env & env);
int cli_devices_main(const std::vector<std::string> & args, const cli_env & env);
int cli_grammar_main(const std::vector<std::string> & args, const cli_env & env);
int cli_template_main(const std::vector<std::string> & args, const cli_env & env);
int cli_embed_main(const std::vector<std::string> & args, const cli_env & env);
