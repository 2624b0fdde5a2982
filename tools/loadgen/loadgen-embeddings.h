// tools/loadgen/loadgen-embeddings.h — the embeddings mode of inferd-loadgen (--embeddings): the
// inputs of a request, its JSON body, and the check of the JSON response of POST /v1/embeddings.
//
// Usage:
//   std::vector<std::string> in = loadgen_embedding_inputs(gen, options, /*client=*/2, /*request=*/5);
//   std::string body = loadgen_embeddings_body(options, in);
//   loadgen_request_result r = client.embed(body, int(in.size()), t0);  // loadgen-client.h
//   // which, once the response is read, calls:
//   loadgen_check_embeddings(status, response_body, int(in.size()), &r);
//
// A response passes when its status is 200 and its body is a JSON object whose "data" is an
// array of as many entries as there were inputs, each an object with an integer "index" and an
// "embedding" that is a non-empty array of numbers; the indices are 0..N-1, each once (in any
// order); every embedding has the same length; and usage.prompt_tokens is a whole number >= 0.
// Other fields ("object", "model", usage.total_tokens) are not checked.
#pragma once

#include "loadgen/loadgen-options.h"
#include "loadgen/loadgen-prompt.h"
#include "loadgen/loadgen-stats.h"

#include <cstdint>
#include <string>
#include <vector>

// The o.inputs inputs of a client's n-th request: input k is
// gen.prompt(client, request * o.inputs + k, o.prompt_words), so that no two inputs of a run
// share their own words (each still starts with the generator's shared prefix, if any).
std::vector<std::string> loadgen_embedding_inputs(const loadgen_prompt_gen & gen, const loadgen_options & o,
                                                  int client, int64_t request);

// The JSON body: input (the array of inputs), encoding_format "float", and model when
// options.model is set.
std::string loadgen_embeddings_body(const loadgen_options & o, const std::vector<std::string> & inputs);

// Checks a whole response to a request of `inputs` inputs. Sets r->status. On success sets
// r->inputs and r->prompt_tokens (usage.prompt_tokens) and leaves r->error empty; otherwise sets
// r->error to "http_<status>" (status != 200) or "malformed_json", and r->detail to the body
// (for a non-200 status) or to what is wrong, with the start of the body (at most 300 bytes).
void loadgen_check_embeddings(int status, const std::string & body, int inputs, loadgen_request_result * r);
