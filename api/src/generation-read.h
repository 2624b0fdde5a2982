// api/src/generation-read.h — reading api_generation_options from a request body (private).
#pragma once

#include "api/request-common.h"
#include "json-read.h"

#include <string_view>

// Reads model, n, stream, stream_options, stop, user, every sampling field and the output
// constraint of `r`'s object into `out`; the first invalid one is left in r.error(). `body` is
// the text `r`'s object was parsed from (a schema is taken from it with its keys in order).
void api_read_generation_options(json_reader & r, std::string_view body, api_generation_options & out);

// Reads response_format, json_schema and grammar into `out` (see api_constraint): at most one
// of them may constrain the output.
void api_read_constraint(json_reader & r, std::string_view body, api_constraint & out);
