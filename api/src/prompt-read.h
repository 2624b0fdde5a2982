// api/src/prompt-read.h — reading prompts in every form a completions `prompt` or an
// embeddings `input` takes, and checking their token ids (private).
#pragma once

#include "api/request-common.h"
#include "json-read.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

// Reads the required field `field` of `r`'s object: a string, an array of strings, an array of
// token ids, or an array of arrays of token ids (token ids are integers >= 0; no array may be
// empty; "" is a prompt). On success `out` holds one api_prompt per prompt; otherwise out is
// untouched and r.error() is a 400 naming `field`.
void api_read_prompts(json_reader & r, const char * field, std::vector<api_prompt> & out);

// nullopt when every token id of `prompts` is below n_vocab, else a 400 naming `param`.
std::optional<api_error> api_prompts_check_vocab(const std::vector<api_prompt> & prompts, int32_t n_vocab,
                                                 const std::string & param);
