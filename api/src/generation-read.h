// api/src/generation-read.h — reading api_generation_options from a request body (private).
#pragma once

#include "api/request-common.h"
#include "json-read.h"

// Reads model, n, stream, stream_options, stop, user and every sampling field of `r`'s object
// into `out`; the first invalid one is left in r.error().
void api_read_generation_options(json_reader & r, api_generation_options & out);
