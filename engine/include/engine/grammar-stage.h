// engine/grammar-stage.h — a grammar as a stage of the sampler: tokens the grammar does not
// allow next get a logit of -infinity.
//
// Usage:
//   auto gv = grammar_vocab_from_model(m.get_vocab(), m.get_tokenizer());   // once per model
//   grammar_program_result p = grammar_program_build(g);                     // grammar/token-mask.h
//   smp.add_stage(grammar_stage_new(p.value, gv));
//   …  // sample / accept as usual: the stage masks before top-k and follows accepted tokens
#pragma once

#include "engine/sampling.h"
#include "grammar/token-mask.h"

#include <memory>

class vocab;
class tokenizer;

// The model's vocabulary for the grammar engine: each token's piece as the output shows it
// (tokenizer::token_to_piece), the model's end-of-generation tokens allowed where the grammar
// accepts. Control tokens are special (never allowed), unless control_as_text: then each one that
// does not end generation is its text ("<|channel|>", "<tool_call>"), for output read with
// control tokens rendered (tool-call formats whose markers are control tokens).
std::shared_ptr<const grammar_vocab> grammar_vocab_from_model(const vocab & v, const tokenizer & tok,
                                                              bool control_as_text = false);

// The stage (name "grammar"). apply() forbids every token the grammar does not allow next;
// accept() follows the grammar (false for a token it does not allow).
std::unique_ptr<sampler_stage_i> grammar_stage_new(std::shared_ptr<const grammar_program> program,
                                                   std::shared_ptr<const grammar_vocab> vocab);

// The stage's matcher (nullptr when stage is not a grammar stage), for callers that need to ask
// whether the output is complete.
const grammar_matcher * grammar_stage_matcher(const sampler_stage_i & stage);
