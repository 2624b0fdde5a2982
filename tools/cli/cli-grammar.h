// tools/cli/cli-grammar.h — pieces shared by inferd-cli grammar compile, check and bench
// (internal).
#pragma once

#include "cli-common.h"
#include "grammar/grammar.h"
#include "grammar/token-mask.h"

#include <chrono>
#include <memory>
#include <string>
#include <vector>

// A vocabulary-only GGUF (a whole model works too) for the grammar engine: the model, whose
// tokenizer turns texts into tokens, and the grammar vocabulary built from it.
struct cli_grammar_vocab {
    std::unique_ptr<model> md;
    std::shared_ptr<const grammar_vocab> gv;
};
// False after printing why (cannot load, no tokenizer).
bool cli_grammar_load_vocab(const std::string & path, const cli_env & env, cli_grammar_vocab * out);
// The text as tokens, as a model would produce it: no BOS, special tokens not parsed.
std::vector<int32_t> cli_grammar_tokenize(const cli_grammar_vocab & v, const std::string & text);

// How a text went through a matcher, token by token.
enum class cli_grammar_outcome {
    accepted,           // every token in its mask, and the end allowed
    token_not_allowed,  // token token_index is not in the mask (and accept_token refuses it)
    end_not_allowed,    // every token taken, but the output is no sentence of the grammar
    inconsistent,       // the mask and accept_token / can_end disagree (detail says how)
    timed_out,          // the deadline passed before the walk ended
};

struct cli_grammar_walk {
    cli_grammar_outcome outcome = cli_grammar_outcome::accepted;
    size_t token_index = 0;  // the token where the walk stopped (the number of tokens at the end)
    size_t byte_offset = 0;  // bytes of output before that token
    std::string detail;
};

// From m's current state: for each token fills the mask (the time of fill_mask alone, in µs,
// appended to *mask_us when given), checks the token is in it and accepts it; at the end fills
// the mask once more and checks the end is allowed (can_end(), and an end-of-generation token in
// the mask when the vocabulary has one). The deadline is checked between tokens.
cli_grammar_walk cli_grammar_walk_tokens(grammar_matcher & m, const std::vector<int32_t> & ids,
                                         std::vector<double> * mask_us,
                                         std::chrono::steady_clock::time_point deadline);

// Token bytes for a message: control characters and bytes that are no whole UTF-8 character as
// \xNN, quotes and backslashes escaped.
std::string cli_grammar_escape(const std::string & bytes);

int cli_grammar_check_main(const std::vector<std::string> & args, const cli_env & env);
int cli_grammar_bench_main(const std::vector<std::string> & args, const cli_env & env);
